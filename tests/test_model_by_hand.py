"""What a reader of model.py could break and no other test would notice (issue 46): each layer's
scores and each GAU's q and k recomputed by hand from the block's own weights, and RoPE's turn
written out for one pair. Each test names the mutation of model.py it fails for."""

import math

import pytest
import torch
from einops import rearrange

from minilm import LM, Config, RopeScaling, apply_rope, rope_angles

VOCAB, T = 20, 12


def tokens(B=2, seed=0):
    return torch.randint(0, VOCAB, (B, T), generator=torch.Generator().manual_seed(seed))


def per_layer_model(**extra):
    torch.manual_seed(0)
    config = Config(vocab_size=VOCAB, d_model=16, n_layer=2, n_head=2, pos=("nope", "rope"), **extra)
    return LM(config).eval()


def transformer_scores_by_hand(block, x, angles=None, factor=1.0):
    """S = factor * q . k / sqrt(d_k) of a Transformer block at input x, q and k rotated by
    ``angles`` (None: not rotated), the future masked with -inf."""
    q, k, _ = rearrange(block.to_qkv(block.ln_attn(x)), "b t (three h d) -> three b h t d",
                        three=3, h=block.n_head).unbind(0)
    if angles is not None:
        q, k = apply_rope(q, angles), apply_rope(k, angles)
    scores = factor * q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return scores.masked_fill(future, float("-inf"))


@pytest.mark.parametrize("scaling", [None, RopeScaling("yarn", 4.0, 8), RopeScaling("pi", 2.0, 8)],
                         ids=str)
def test_a_nope_layer_beside_a_rope_layer_scores_its_plain_q_and_k(scaling):
    """Fails if NoPE layers get RoPE's angles, or YaRN's logit factor, or the RoPE scaling."""
    model = per_layer_model()
    idx = tokens()
    with torch.no_grad():
        _, scores = model(idx, returns="scores", rope_scaling=scaling)
        nope = transformer_scores_by_hand(model.blocks[0], model.embed(idx))
    torch.testing.assert_close(scores[0], nope)


def test_the_rope_layer_of_a_per_layer_model_is_rotated_and_scaled_by_yarn():
    """The control of the test above: the RoPE layer does change under YaRN, by its angles and
    by (0.1 ln s + 1)^2 on its logits. Fails if the RoPE layer lost either."""
    model = per_layer_model()
    idx = tokens()
    yarn = RopeScaling("yarn", 4.0, 8)
    with torch.no_grad():
        _, scores = model(idx, returns="scores", rope_scaling=yarn)
        x = model.blocks[0](model.embed(idx), model.config, None, model.multiplier[0])[0]
        rotated = transformer_scores_by_hand(model.blocks[1], x, rope_angles(T, 8, scaling=yarn),
                                             factor=yarn.logit_factor)
    torch.testing.assert_close(scores[1], rotated)
    assert yarn.logit_factor > 1.05


def test_a_window_applies_to_the_rope_layers_only():
    """Fails if a NoPE layer is built with the window (its rows would lose their far keys)."""
    model = per_layer_model(window=3)
    with torch.no_grad():
        _, weights = model(tokens(), returns="weights")
    far = torch.ones(T, T, dtype=torch.bool).tril(-3)          # keys 3 or more behind the query
    assert (weights[0][..., far] > 0).all()                     # NoPE: every key it sees
    assert (weights[1][..., far] == 0).all()                    # RoPE: its last 3 keys only


def test_each_layer_multiplies_its_logits_by_its_own_lambda():
    """Fails if a layer reads another layer's lambda, or one head's lambda goes to another."""
    model = per_layer_model()
    idx = tokens()
    with torch.no_grad():
        for block in model.blocks:  # silence the attention outputs: each layer's input stays put
            block.to_out.weight.zero_()
            block.to_out.bias.zero_()
        _, plain = model(idx, returns="scores")
        model.multiplier.copy_(torch.tensor([[1.5, 0.5], [2.0, 3.0]]))
        _, scaled = model(idx, returns="scores")
    for layer, lams in enumerate(model.multiplier):
        finite = plain[layer].isfinite()
        expected = lams.view(1, -1, 1, 1) * plain[layer]
        torch.testing.assert_close(scaled[layer][finite], expected[finite])


def test_a_gau_computes_q_and_k_as_gamma_z_plus_beta():
    """q = gamma_q * z + beta_q and k = gamma_k * z + beta_k, z = silu(X W_z): fails if gamma and
    beta are swapped, or q's row of them is used for k."""
    torch.manual_seed(0)
    model = LM(Config(vocab_size=VOCAB, block="gau", n_head=1, d_model=16, d_k=8, pos="nope",
                      norm="softmax")).eval()
    block = model.blocks[0]
    with torch.no_grad():
        block.gamma.copy_(torch.tensor([[1.5] * 8, [0.5] * 8]) + 0.1 * torch.randn(2, 8))
        block.beta.copy_(torch.tensor([[0.3] * 8, [-0.7] * 8]))
        x = model.embed(tokens())
        z = torch.nn.functional.silu(block.to_z(block.ln(x)))
        q, k = block.gamma[0] * z + block.beta[0], block.gamma[1] * z + block.beta[1]
        expected = (q @ k.transpose(-1, -2) / math.sqrt(8)).unsqueeze(1)
        _, scores = model(tokens(), returns="scores")
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    torch.testing.assert_close(scores[0][..., ~future], expected[..., ~future])


def test_rope_turns_each_pair_counterclockwise_by_t_theta():
    """(x_0, x_1) at position t turns by t * theta_0 = t radians: (x_0 cos - x_1 sin,
    x_0 sin + x_1 cos). Fails if the rotation runs the other way, or pairs (i, i + d/2) are
    turned instead of neighbours (2i, 2i + 1), or positions start at 1."""
    x = torch.zeros(1, 4, 4)
    x[..., 0], x[..., 2] = 1.0, 2.0                          # pairs (1, 0) and (2, 0)
    rotated = apply_rope(x, rope_angles(4, 4))
    for t in range(4):
        theta1 = t * 10000.0 ** -0.5                         # the second pair turns slower
        expected = torch.tensor([math.cos(t), math.sin(t), 2 * math.cos(theta1),
                                 2 * math.sin(theta1)])
        torch.testing.assert_close(rotated[0, t], expected)


def test_a_transformer_block_and_the_head_by_hand():
    """x + MHA(LN(x)), then x + MLP(LN(x)); logits LN(x) E^T: fails if the MLP reads x instead of
    LN(x), a residual is dropped, or the final LayerNorm is skipped."""
    model = per_layer_model()
    idx = tokens()
    with torch.no_grad():
        x = model.embed(idx)
        for block in model.blocks:
            q, k, v = rearrange(block.to_qkv(block.ln_attn(x)), "b t (three h d) -> three b h t d",
                                three=3, h=block.n_head).unbind(0)
            if block.pos == "rope":
                angles = rope_angles(T, 8)
                q, k = apply_rope(q, angles), apply_rope(k, angles)
            weights = transformer_scores_by_hand(block, x, angles if block.pos == "rope" else None)
            heads = weights.softmax(-1) @ v
            x = x + block.to_out(rearrange(heads, "b h t d -> b t (h d)"))
            x = x + block.mlp(block.ln_mlp(x))
        torch.testing.assert_close(model(idx), model.ln_out(x) @ model.embed.weight.T)


def test_a_gau_block_gates_its_attention_output_by_u():
    """O = (u * A v) W_o + x with u, v = silu(X W_u), silu(X W_v): fails if the gate u is dropped
    or u and v are swapped."""
    torch.manual_seed(0)
    model = LM(Config(vocab_size=VOCAB, block="gau", n_head=1, d_model=16, d_k=8, pos="nope",
                      norm="relu2", n=16)).eval()
    block = model.blocks[0]
    with torch.no_grad():
        x = model.embed(tokens())
        h = block.ln(x)
        u, v = torch.nn.functional.silu(block.to_uv(h)).chunk(2, dim=-1)
        z = torch.nn.functional.silu(block.to_z(h))
        q, k = block.gamma[0] * z + block.beta[0], block.gamma[1] * z + block.beta[1]
        scores = (q @ k.transpose(-1, -2) / math.sqrt(8)).masked_fill(
            torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        weights = torch.relu(scores) ** 2 / 16
        expected = x + block.to_out(u * (weights @ v))
        torch.testing.assert_close(block(x, model.config, None, model.multiplier[0])[0], expected)
