"""The four designs of lesson 15 (issue 44), each checked against its definition: a sink logit at
-inf is softmax without a sink; an open output gate is the block without one; scale-invariant
attention's logits are Anson et al.'s equations; DroPE's model is NoPE's forward with RoPE's
weights. And none of them lets a position see its future."""

import math

import pytest
import torch

from minilm import LM, Config, attend, profile
from minilm.experiments import DESIGNS, design_models, drop_rope
from minilm.model import attention_scores, attention_weights, scale_invariant_logits
from minilm.scorecard import designed

VOCAB, T = 20, 12


def tokens(B=2, seed=0):
    return torch.randint(0, VOCAB, (B, T), generator=torch.Generator().manual_seed(seed))


def model(seed=0, **extra):
    torch.manual_seed(seed)
    return LM(Config(vocab_size=VOCAB, d_model=16, n_layer=2, n_head=2, **extra)).eval()


def twin(source: LM, **config) -> LM:
    """A model of another config with ``source``'s weights (those both have)."""
    other = LM(Config(**{**source.config.to_dict(), **config})).eval()
    other.load_state_dict(source.state_dict(), strict=False)
    return other


def qkv(H=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(1, H, T, 8, generator=g) for _ in range(3))


# --- the sink ------------------------------------------------------------------------------------
def test_a_sink_logit_is_one_more_softmax_column_dropped():
    q, k, v = qkv()
    sink = torch.tensor([0.5, -1.0])
    out, weights = attend(q, k, v, sink=sink, returns="weights")
    scores = attention_scores(q, k)
    by_hand = scores.exp() / (sink.exp().view(1, 2, 1, 1) + scores.exp().sum(-1, keepdim=True))
    torch.testing.assert_close(weights, by_hand)
    torch.testing.assert_close(out, by_hand @ v)
    assert (weights.sum(-1) < 1).all()  # a row may give part of its weight to no key


def test_a_sink_at_minus_infinity_is_the_model_without_one():
    with_sink = model(pos="nope", sink=True)
    with torch.no_grad():
        for block in with_sink.blocks:
            block.sink.fill_(float("-inf"))
    without = twin(with_sink, sink=False)
    torch.testing.assert_close(with_sink(tokens()), without(tokens()), rtol=0, atol=1e-6)
    with torch.no_grad():
        for block in with_sink.blocks:
            block.sink.fill_(0.0)   # control: a finite sink changes the output
    assert not torch.allclose(with_sink(tokens()), without(tokens()), atol=1e-3)


# --- the output gate -----------------------------------------------------------------------------
def test_an_open_gate_is_the_block_without_one_and_a_shut_gate_removes_attention():
    gated = model(gate=True)
    without = twin(gated, gate=False)
    with torch.no_grad():
        for block in gated.blocks:
            block.to_gate.weight.zero_()
            block.to_gate.bias.fill_(100.0)  # sigmoid(100) = 1 in float32
    torch.testing.assert_close(gated(tokens()), without(tokens()), rtol=0, atol=1e-6)
    with torch.no_grad():
        for block in gated.blocks:
            block.to_gate.bias.fill_(-100.0)
            block.to_qkv.weight.normal_()  # what attention reads no longer matters
    shut = gated(tokens())
    with torch.no_grad():
        for block in gated.blocks:
            block.to_qkv.weight.normal_()
    torch.testing.assert_close(gated(tokens()), shut, rtol=0, atol=1e-6)


def test_the_gate_multiplies_each_channel_by_sigmoid_of_the_normed_input():
    gated = model(pos="nope", gate=True)
    block, x = gated.blocks[0], gated.embed(tokens())
    h = block.ln_attn(x)
    q, k, v = block.to_qkv(h).view(2, T, 3, 2, 8).permute(2, 0, 3, 1, 4)   # (three, B, H, T, d)
    out, _ = attend(q, k, v)
    heads = out.transpose(1, 2).reshape(2, T, 16) * torch.sigmoid(block.to_gate(h))
    x = x + block.to_out(heads)
    by_hand = x + block.mlp(block.ln_mlp(x))
    torch.testing.assert_close(block(gated.embed(tokens()), gated.config, None, gated.multiplier[0])[0],
                               by_hand)


# --- scale-invariant attention -------------------------------------------------------------------
def test_scale_invariant_logits_follow_anson_et_al():
    tau = 10.0
    a, m = scale_invariant_logits(T, tau)
    alpha = beta = math.exp(0.5)  # their a_0 = 1, m_0 = 0
    for i, j in [(0, 0), (5, 0), (11, 3), (11, 11)]:
        t = i - j
        a_t = math.sqrt(2 * (math.log(t / tau + 1) - math.log(alpha) + beta / alpha))   # eq. 16a
        assert a[i, j].item() == pytest.approx(a_t, rel=1e-6)
        assert m[i, j].item() == pytest.approx(-a_t ** 2 + beta / alpha, abs=1e-6)   # eq. 16b
    # their point: with logits N(0, 1), E exp(a_t S + m_t) = exp(a_t^2 / 2 + m_t) = e^0.5 / (1 + t/tau),
    # so each range of distances [t, 2t] gets the same total weight, however far
    t = torch.arange(T, dtype=torch.float32)
    diag = torch.arange(T)
    expected = (a[diag, 0].square() / 2 + m[diag, 0]).exp() * (1 + t / tau)
    torch.testing.assert_close(expected, torch.full((T,), math.exp(0.5)))


def test_a_scale_invariant_model_runs_its_logits_through_the_affine_map():
    q, k, v = qkv()
    a, m = scale_invariant_logits(T, 10.0)
    _, scores = attend(q, k, v, affine=(a, m), returns="scores")
    plain = attention_scores(q, k)
    visible = torch.ones(T, T, dtype=torch.bool).tril()
    torch.testing.assert_close(scores[..., visible], (plain * a + m)[..., visible])
    _, weights = attend(q, k, v, affine=(a, m), returns="weights")
    torch.testing.assert_close(weights, attention_weights(plain * a + m))


def test_a_scale_invariant_model_maps_every_layers_logits():
    m = model(pos="nope", scale_invariant=5.0)
    _, maps = m(tokens(), returns="scores")
    plain = model(pos="nope")   # the same weights: scale_invariant adds none
    _, plain_maps = plain(tokens(), returns="scores")
    a, b = scale_invariant_logits(T, 5.0)
    seen = torch.ones(T, T, dtype=torch.bool).tril()
    torch.testing.assert_close(maps[0][..., seen], (plain_maps[0] * a + b)[..., seen])  # layer 0:
    # the same input; later layers' inputs differ


def test_designed_runs_a_logit_map_and_then_restores_the_model():
    m = model(pos="nope")
    before = m(tokens())
    shift = lambda T, device, dtype: (2 * torch.ones(T, T), torch.zeros(T, T))   # noqa: E731
    with designed({("a", 0): m, ("b", 0): m}, shift):   # one model twice: restored once
        torch.testing.assert_close(m(tokens()), twin_sharpened(m)(tokens()))
    torch.testing.assert_close(m(tokens()), before, rtol=0, atol=0)
    assert all(block.logit_map is None for block in m.blocks)


def twin_sharpened(m):
    """m with every logit doubled: lambda = 2 on every head."""
    other = twin(m)
    with torch.no_grad():
        other.multiplier.fill_(2.0)
    return other


# --- DroPE ---------------------------------------------------------------------------------------
def test_drope_is_nope_forward_with_rope_weights():
    rope = model(pos="rope")
    dropped = drop_rope(rope)
    nope = twin(rope, pos="nope")
    assert dropped.config.pos == "nope" and dropped is not rope
    torch.testing.assert_close(dropped(tokens()), nope(tokens()), rtol=0, atol=0)
    assert not torch.allclose(dropped(tokens()), rope(tokens()), atol=1e-3)  # RoPE did something
    with pytest.raises(ValueError, match="RoPE on every layer"):
        drop_rope(model(pos=("rope", "nope")))


# --- every design stays causal -------------------------------------------------------------------
@pytest.mark.parametrize("design", list(DESIGNS))
def test_no_design_sees_the_future(design):
    m = model(pos="nope", **DESIGNS[design])
    x = tokens()
    y = x.clone()
    y[:, 7:] = (y[:, 7:] + 1) % VOCAB
    torch.testing.assert_close(m(x)[:, :7], m(y)[:, :7], rtol=0, atol=1e-6)


# --- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("fields, message", [
    (dict(sink=True, norm="relu2", n=8), "sink=True.*norm='softmax'"),
    (dict(sink=1), "Config.sink"),
    (dict(gate=True, block="gau", n_head=1, norm="relu2", n=8), "Config.gate=True has no effect"),
    (dict(scale_invariant=0.0), "Config.scale_invariant must be a finite number > 0"),
    (dict(scale_invariant=float("inf")), "Config.scale_invariant"),
    (dict(scale_invariant=10.0, causal=False), "scale_invariant=10.0 .*needs causal=True"),
])
def test_bad_design_fields_are_named(fields, message):
    with pytest.raises(ValueError, match=message):
        Config(vocab_size=VOCAB, **fields)


def test_attend_names_a_bad_sink_or_affine():
    q, k, v = qkv()
    with pytest.raises(ValueError, match="one logit per head"):
        attend(q, k, v, sink=torch.zeros(3))
    with pytest.raises(ValueError, match="sink.*norm='softmax'"):
        attend(q, k, v, sink=torch.zeros(2), norm="relu2", n=4)
    with pytest.raises(ValueError, match="affine must be a pair"):
        attend(q, k, v, affine=(torch.ones(T, T),))


def test_design_models_names_an_unknown_design():
    with pytest.raises(ValueError, match="design"):
        design_models(profile(), None, designs=("alibi",))
