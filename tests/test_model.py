"""The LM: causality, RoPE, permutation equivariance, overrides, the multiplier, bad configs."""

import math

import pytest
import torch

from minilm import LM, Config, apply_rope, rope_angles

VOCAB = 20


def tiny(**overrides):
    settings = dict(vocab_size=VOCAB, block="transformer", d_model=16, n_layer=2, n_head=2)
    settings.update(overrides)
    if settings["block"] == "gau":
        settings["n_head"] = 1
        settings.setdefault("d_k", 8)  # a GAU setting: a transformer refuses it
    torch.manual_seed(0)
    return LM(Config(**settings)).eval()


def tokens(T=12, B=2, seed=0):
    return torch.randint(0, VOCAB, (B, T), generator=torch.Generator().manual_seed(seed))


MODELS = [
    dict(block="transformer", pos="rope"),
    dict(block="transformer", pos="nope"),
    dict(block="transformer", norm="relu2", n="row"),
    dict(block="gau", norm="relu2", n=16),
    dict(block="gau", norm="relu2_norm"),
    dict(block="gau", norm="softmax", logn_base=8),
]


@pytest.mark.parametrize("settings", MODELS, ids=str)
def test_causal_model_never_looks_ahead(settings):
    model = tiny(**settings)
    idx = tokens()
    t = 5
    changed = idx.clone()
    changed[:, t + 1:] = (changed[:, t + 1:] + 1) % VOCAB
    with torch.no_grad():
        before, after = model(idx), model(changed)
    torch.testing.assert_close(after[:, : t + 1], before[:, : t + 1])
    assert (after[:, t + 1:] - before[:, t + 1:]).abs().max() > 1e-4


def test_bidirectional_model_does_look_ahead():
    model = tiny(causal=False)
    idx = tokens()
    changed = idx.clone()
    changed[:, -1] = (changed[:, -1] + 1) % VOCAB
    with torch.no_grad():
        assert (model(idx)[:, 0] - model(changed)[:, 0]).abs().max() > 1e-5


def test_rope_scores_depend_only_on_relative_offset():
    g = torch.Generator().manual_seed(0)
    dim, T = 16, 40
    q, k = torch.randn(dim, generator=g), torch.randn(dim, generator=g)
    angles = rope_angles(T, dim)
    rq = apply_rope(q.expand(T, dim), angles)   # q placed at every position
    rk = apply_rope(k.expand(T, dim), angles)
    scores = rq @ rk.T                          # scores[m, n] = q at m . k at n
    for offset in (-7, 0, 3, 11):
        diagonal = torch.diagonal(scores, offset=offset)
        torch.testing.assert_close(diagonal, diagonal[0].expand_as(diagonal), rtol=1e-4, atol=1e-4)
    assert (scores[0, 3] - scores[0, 11]).abs() > 1e-3  # and it does depend on the offset


def test_rope_preserves_norms():
    x = torch.randn(3, 10, 8)
    torch.testing.assert_close(apply_rope(x, rope_angles(10, 8)).norm(dim=-1), x.norm(dim=-1))


@pytest.mark.parametrize("block", ["transformer", "gau"])
def test_bidirectional_nope_model_is_permutation_equivariant(block):
    model = tiny(block=block, pos="nope", causal=False)
    idx = tokens(T=10)
    perm = torch.randperm(10, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        torch.testing.assert_close(model(idx[:, perm]), model(idx)[:, perm], rtol=1e-4, atol=1e-5)


def test_bidirectional_rope_model_is_not_permutation_equivariant():
    model = tiny(pos="rope", causal=False)
    idx = tokens(T=10)
    perm = torch.randperm(10, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert (model(idx[:, perm]) - model(idx)[:, perm]).abs().max() > 1e-4


def test_n_override_takes_effect_and_leaves_the_model_unchanged():
    model = tiny(block="gau", norm="relu2", n=16)
    idx = tokens(T=8)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    with torch.no_grad():
        default = model(idx)
        torch.testing.assert_close(model(idx, n=16), default)
        by_length = model(idx, n="length")
        by_row = model(idx, n="row")
        fixed_128 = model(idx, n=128)
    assert (by_length - default).abs().max() > 1e-3
    assert (by_row - by_length).abs().max() > 1e-3
    assert (fixed_128 - default).abs().max() > 1e-3
    assert model.config.n == 16
    for name, value in model.state_dict().items():
        assert torch.equal(value, state[name]), name
    torch.testing.assert_close(model(idx), default)


def test_logn_override_takes_effect_and_can_be_turned_off():
    model = tiny(norm="softmax", logn_base=8)
    idx = tokens(T=12)
    with torch.no_grad():
        default = model(idx)
        torch.testing.assert_close(model(idx, logn_base=8), default)
        off = model(idx, logn_base=None)
        other = model(idx, logn_base=64)
    assert (off - default).abs().max() > 1e-4 and (other - default).abs().max() > 1e-4
    assert model.config.logn_base == 8


def test_override_with_an_invalid_value_raises():
    with pytest.raises(ValueError, match="n=64 only applies to norm='relu2'"):
        tiny()(tokens(), n=64)
    with pytest.raises(ValueError, match="n=0"):
        tiny(block="gau", norm="relu2", n=16)(tokens(), n=0)


def test_the_multiplier_is_a_frozen_per_layer_per_head_lambda():
    model = tiny(n_layer=3, n_head=2)
    assert model.multiplier.shape == (3, 2)
    assert not model.multiplier.requires_grad
    assert torch.equal(model.multiplier, torch.ones(3, 2))
    assert "multiplier" in model.state_dict()
    idx = tokens()
    with torch.no_grad():
        before = model(idx)
        model.multiplier.fill_(1.5)
        assert (model(idx) - before).abs().max() > 1e-4


def test_temperature_does_nothing_to_normalised_relu2():
    model = tiny(block="gau", norm="relu2_norm")
    idx = tokens()
    with torch.no_grad():
        before = model(idx)
        model.multiplier.fill_(3.0)
        torch.testing.assert_close(model(idx), before)


@pytest.mark.parametrize("block", ["transformer", "gau"])
def test_attention_weights_and_scores_of_every_layer(block):
    model = tiny(block=block, n_layer=3)
    idx = tokens(T=9)
    H = 1 if block == "gau" else 2
    with torch.no_grad():
        logits, weights = model(idx, returns="weights")
        _, scores = model(idx, returns="scores")
        torch.testing.assert_close(logits, model(idx))
    assert len(weights) == len(scores) == 3
    for w, s in zip(weights, scores):
        assert w.shape == s.shape == (2, H, 9, 9)
        torch.testing.assert_close(w.sum(-1), torch.ones(2, H, 9))
        torch.testing.assert_close(s.softmax(-1), w)


def test_logits_shape():
    assert tiny(block="gau", norm="relu2", n=16)(tokens(T=5, B=3)).shape == (3, 5, VOCAB)


def test_sequence_longer_than_max_len_raises():
    model = tiny(max_len=10)
    model(tokens(T=10))
    with pytest.raises(ValueError, match="sequence length 11 exceeds this model's max_len=10"):
        model(tokens(T=11))


@pytest.mark.parametrize("settings,message", [
    (dict(block="mamba"), "unknown block 'mamba'"),
    (dict(pos="alibi"), "unknown pos 'alibi'"),
    (dict(block="gau", n_head=4), "single head"),
    (dict(d_model=15, n_head=2), "not divisible"),
    (dict(norm="relu"), "unknown attention norm 'relu'"),
    (dict(norm="relu2"), "n=None"),
    (dict(norm="relu2", n=0), "n=0"),
    (dict(norm="softmax", n="length"), "only applies to norm='relu2'"),
    (dict(logn_base=1), "logn_base"),
    (dict(d_model=0), "d_model must be a positive int; got 0"),
    (dict(vocab_size=2.5), "vocab_size must be a positive int; got 2.5"),
    (dict(block="gau", n_head=1, d_k=7), "must be even"),
])
def test_invalid_config_fails_at_construction(settings, message):
    values = dict(vocab_size=VOCAB, d_model=16, n_head=2)
    values.update(settings)
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        Config(**values)


def test_config_round_trips_through_a_dict():
    config = Config(vocab_size=VOCAB, block="gau", n_head=1, norm="relu2", n="length")
    assert Config.from_dict(config.to_dict()) == config


# --- RoPE scaling: PI, NTK-aware and YaRN against their formulas ---------------------------

from minilm.model import RopeScaling  # noqa: E402


def rope_frequencies(dim, base=10000.0, scaling=None):
    """theta_i: the angles at position 1."""
    return rope_angles(2, dim, base, scaling)[1]


def yarn_logit_scale(s):
    return RopeScaling("yarn", s, 1).logit_factor


def test_pi_divides_every_frequency_by_the_factor():
    plain = rope_frequencies(16)
    torch.testing.assert_close(rope_frequencies(16, scaling=RopeScaling("pi", 4.0, 64)), plain / 4)
    torch.testing.assert_close(rope_angles(10, 16, scaling=RopeScaling("pi", 4.0, 64)),
                               torch.outer(torch.arange(10.0) / 4, plain))


def test_ntk_changes_the_base_keeping_the_fastest_and_dividing_the_slowest_by_s():
    dim, s = 16, 4.0
    ntk = rope_frequencies(dim, scaling=RopeScaling("ntk", s, 64))
    plain = rope_frequencies(dim)
    torch.testing.assert_close(ntk, rope_frequencies(dim, base=10000.0 * s ** (dim / (dim - 2))))
    assert ntk[0] == plain[0]
    torch.testing.assert_close(ntk[-1], plain[-1] / s)


# theta'_i / theta_i of YaRN as its authors' code (and Hugging Face's _compute_yarn_parameters)
# computes it, worked out by hand from c(r) = dim ln(L / (2 pi r)) / (2 ln base), base 10^4:
# dim 16, L 32: c(32) = -1.60 -> floor, clamp: 0; c(1) = 1.41 -> ceil: 2; ramp i / 2.
# dim 16, L 512: c(32) = 0.81 -> 0; c(1) = 3.82 -> 4; ramp i / 4.
# The ratio is (1 - ramp_i) + ramp_i / s. (The YaRN paper's ramp in r gives 0.349, 0.265, ... at L 32.)
YARN_BY_HAND = {
    (16, 32, 4.0): [1.0, 0.625, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25],
    (16, 512, 4.0): [1.0, 0.8125, 0.625, 0.4375, 0.25, 0.25, 0.25, 0.25],
    (16, 512, 2.0): [1.0, 0.875, 0.75, 0.625, 0.5, 0.5, 0.5, 0.5],
}


@pytest.mark.parametrize("dim, L, s", list(YARN_BY_HAND))
def test_yarn_ramps_in_the_pair_index_as_its_reference_code(dim, L, s):
    ratio = rope_frequencies(dim, scaling=RopeScaling("yarn", s, L)) / rope_frequencies(dim)
    torch.testing.assert_close(ratio, torch.tensor(YARN_BY_HAND[dim, L, s]), rtol=1e-6, atol=0)


def test_yarn_at_a_long_training_length_keeps_fast_pairs_interpolates_slow_ones_and_ramps_between():
    dim, s, L = 64, 4.0, 2048  # long enough that all three regions are several pairs wide
    theta = 10000.0 ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    c = lambda r: dim * math.log(L / (2 * math.pi * r)) / (2 * math.log(10000.0))  # noqa: E731
    low, high = math.floor(c(32)), math.ceil(c(1))  # 11 and 26: inside [0, dim - 1]
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    expected = theta * (1 - ramp) + theta / s * ramp
    yarn = rope_frequencies(dim, scaling=RopeScaling("yarn", s, L)).double()
    torch.testing.assert_close(yarn, expected, rtol=1e-6, atol=0)
    assert (yarn[: low + 1] == rope_frequencies(dim)[: low + 1].double()).all()  # kept exactly
    assert yarn_logit_scale(4.0) == pytest.approx((0.1 * math.log(4.0) + 1) ** 2)
    assert yarn_logit_scale(1.0) == 1.0
    assert RopeScaling("pi", 4.0, 64).logit_factor == RopeScaling("ntk", 4.0, 64).logit_factor == 1.0


@pytest.mark.parametrize("kind", ["pi", "ntk", "yarn"])
def test_factor_one_is_plain_rope(kind):
    torch.testing.assert_close(rope_frequencies(16, scaling=RopeScaling(kind, 1.0, 64)), rope_frequencies(16))


def test_rope_scaling_override_takes_effect_and_yarn_scales_the_logits():
    model = tiny()
    idx = tokens(T=12)
    yarn = RopeScaling("yarn", 4.0, 8)
    with torch.no_grad():
        default = model(idx)
        assert (model(idx, rope_scaling=RopeScaling("pi", 2.0, 8)) - default).abs().max() > 1e-4
        _, scores = model(idx, rope_scaling=yarn, returns="scores")
        # layer 0 by hand: YaRN's angles on q and k, and logits x (0.1 ln s + 1)^2
        block = model.blocks[0]
        q, k, _ = block.to_qkv(block.ln_attn(model.embed(idx))).view(2, 12, 3, 2, 8).permute(2, 0, 3, 1, 4)
        angles = rope_angles(12, 8, scaling=yarn)
        expected = yarn_logit_scale(4.0) * apply_rope(q, angles) @ apply_rope(k, angles).transpose(-1, -2) / math.sqrt(8)
    future = torch.ones(12, 12, dtype=torch.bool).triu(1)
    torch.testing.assert_close(scores[0][..., ~future], expected[..., ~future], rtol=1e-4, atol=1e-5)
    assert model.config.rope_scaling is None


def test_rope_scaling_in_the_config_round_trips_and_is_checked():
    config = Config(vocab_size=VOCAB, d_model=16, n_head=2, rope_scaling=RopeScaling("yarn", 2.0, 32))
    assert Config.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="unknown RoPE scaling 'linear'"):
        RopeScaling("linear", 2.0, 32)
    with pytest.raises(ValueError, match="factor must be a finite number >= 1.*got 0.5"):
        RopeScaling("pi", 0.5, 32)
    with pytest.raises(ValueError, match="needs pos='rope'"):
        Config(vocab_size=VOCAB, d_model=16, n_head=2, pos="nope", rope_scaling=RopeScaling("pi", 2.0, 32))
    with pytest.raises(ValueError, match="needs a RoPE model"):
        tiny(pos="nope")(tokens(), rope_scaling=RopeScaling("pi", 2.0, 8))


def test_learn_multiplier_makes_the_multiplier_trainable():
    assert tiny(learn_multiplier=True).multiplier.requires_grad
    assert not tiny().multiplier.requires_grad


def test_logn_base_of_the_wrong_type_is_refused():
    with pytest.raises(ValueError, match="logn_base must be a finite number > 1.*got '64'"):
        Config(vocab_size=VOCAB, d_model=16, n_head=2, logn_base="64")
