"""attend() against its formulas, written out directly with loops and plain ops. attend takes q
holding its multiplier: ``fold`` multiplies q by lambda (one, or one per head) and the log n factor,
as a block does."""

import math

import pytest
import torch

from minilm import attend
from minilm.model import attention_scores, logn_factor

B, H, T, D, E = 2, 3, 7, 8, 5


def qkv(seed=0, T=T):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(B, H, T, D, generator=g), torch.randn(B, H, T, D, generator=g),
            torch.randn(B, H, T, E, generator=g))


MULTIPLIERS = ("scale", "logn_base")


def fold(q, causal=True, scale=1.0, logn_base=None):
    """q x m, m_hi = lambda_h x log(n_i) / log(L): the multiplier a block folds into q."""
    lam = torch.as_tensor(scale, dtype=q.dtype).reshape(-1, 1, 1)
    rows = logn_factor(q.shape[2], logn_base, causal).view(-1, 1) if logn_base else 1
    return q * (lam * rows)


def split(setting):
    """(the multiplier's part of a setting, attend's part)."""
    return ({k: v for k, v in setting.items() if k in MULTIPLIERS},
            {k: v for k, v in setting.items() if k not in MULTIPLIERS})


def reference_weights(q, k, *, norm, causal, n=None, scale=1.0, logn_base=None):
    """The formulas of the lessons, one query row at a time."""
    Bq, Hq, Tq, d = q.shape
    weights = torch.zeros(Bq, Hq, Tq, Tq, dtype=torch.float64)
    q, k = q.double(), k.double()
    scale = scale if torch.is_tensor(scale) else torch.full((Hq,), float(scale))
    for b in range(Bq):
        for h in range(Hq):
            for i in range(Tq):
                visible = i + 1 if causal else Tq
                factor = math.log(visible) / math.log(logn_base) if logn_base else 1.0
                s = torch.stack([scale[h].double() * factor * (q[b, h, i] @ k[b, h, j]) / math.sqrt(d)
                                 for j in range(visible)])
                if norm == "softmax":
                    row = torch.exp(s) / torch.exp(s).sum()
                else:
                    r = torch.clamp(s, min=0) ** 2
                    if norm == "relu2_norm":
                        row = r / r.sum() if r.sum() > 0 else r
                    else:
                        divisor = {"length": Tq, "row": visible}.get(n, n)
                        row = r / divisor
                weights[b, h, i, :visible] = row
    return weights


SETTINGS = [
    dict(norm="softmax"),
    dict(norm="softmax", scale=1.7),
    dict(norm="softmax", logn_base=4),
    dict(norm="relu2", n=16),
    dict(norm="relu2", n="length"),
    dict(norm="relu2", n="row"),
    dict(norm="relu2", n="row", logn_base=3),
    dict(norm="relu2_norm"),
    dict(norm="relu2_norm", scale=0.5),
]


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()))
def test_weights_and_output_match_formula(setting, causal):
    q, k, v = qkv()
    multiplier, attention = split(setting)
    out, weights = attend(fold(q, causal, **multiplier), k, v, causal=causal, returns="weights", **attention)
    expected = reference_weights(q, k, causal=causal, **setting)
    torch.testing.assert_close(weights.double(), expected, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(out.double(), expected @ v.double(), rtol=1e-4, atol=1e-5)


def test_per_head_scale_matches_formula():
    q, k, v = qkv(1)
    scale = torch.tensor([0.5, 1.0, 2.5])
    _, weights = attend(fold(q, scale=scale), k, v, returns="weights")
    expected = reference_weights(q, k, norm="softmax", causal=True, scale=scale)
    torch.testing.assert_close(weights.double(), expected, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("setting", SETTINGS[:1] + SETTINGS[3:4] + SETTINGS[7:8])
def test_future_keys_get_exactly_zero_weight(setting):
    q, k, v = qkv(2)
    multiplier, attention = split(setting)
    _, weights = attend(fold(q, **multiplier), k, v, causal=True, returns="weights", **attention)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    assert (weights[..., future] == 0).all()


def test_relu2_norm_row_of_nonpositive_scores_is_zero_not_nan():
    q, _, v = qkv(3)
    q, k = q.abs(), -q.abs()  # every q_i . k_j <= 0
    _, weights = attend(q, k, v, norm="relu2_norm", returns="weights", causal=False)
    assert not weights.isnan().any()
    assert (weights == 0).all()


@pytest.mark.parametrize("scale", [0.1, 0.7, 3.0, torch.tensor([0.2, 5.0, 1.3])])
def test_relu2_norm_is_unchanged_by_any_positive_scale(scale):
    q, k, v = qkv(4)
    base, _ = attend(q, k, v, norm="relu2_norm")
    torch.testing.assert_close(attend(fold(q, scale=scale), k, v, norm="relu2_norm")[0], base)


def test_softmax_is_changed_by_scale():
    q, k, v = qkv(4)
    _, base = attend(q, k, v, returns="weights")
    _, sharper = attend(q * 2.0, k, v, returns="weights")
    assert (sharper - base).abs().max() > 1e-2
    # a higher temperature factor lowers the entropy of every row with more than one key
    ent = lambda w: -(torch.special.xlogy(w, w)).sum(-1)
    assert (ent(sharper)[..., 1:] < ent(base)[..., 1:]).all()


@pytest.mark.parametrize("norm,n", [("softmax", None), ("relu2", "length")])
def test_logn_factor_is_a_no_op_where_n_i_equals_L(norm, n):
    q, k, v = qkv(5)
    plain, _ = attend(q, k, v, norm=norm, n=n, causal=False)
    logn, _ = attend(fold(q, causal=False, logn_base=T), k, v, norm=norm, n=n, causal=False)
    torch.testing.assert_close(logn, plain)
    # causal: only row i = L - 1 sees L keys; the other rows must change
    L = 4
    _, w_plain = attend(q, k, v, norm=norm, n=n, returns="weights")
    _, w_logn = attend(fold(q, logn_base=L), k, v, norm=norm, n=n, returns="weights")
    torch.testing.assert_close(w_logn[..., L - 1, :], w_plain[..., L - 1, :])
    assert (w_logn[..., L, :] - w_plain[..., L, :]).abs().max() > 1e-4


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("extra", [{}, {"scale": 1.3}, {"logn_base": 5},
                                   {"scale": torch.tensor([0.5, 1.0, 2.0])}])
def test_fused_softmax_path_equals_explicit_path(causal, extra):
    q, k, v = qkv(6)
    q = fold(q, causal, **extra)
    fused, _ = attend(q, k, v, causal=causal)
    explicit, _ = attend(q, k, v, causal=causal, returns="weights")
    torch.testing.assert_close(fused, explicit, rtol=1e-5, atol=1e-6)


def test_scores_mask_the_future_with_minus_inf():
    q, k, _ = qkv(7)
    scores = attention_scores(q, k, causal=True)
    assert torch.isinf(scores[..., 0, 1:]).all() and torch.isfinite(scores[..., -1, :]).all()


@pytest.mark.parametrize("kwargs,words", [
    (dict(norm="sparsemax"), ["'sparsemax'", "'softmax'", "'relu2'", "'relu2_norm'"]),
    (dict(norm="relu2"), ["n=None", "positive int", "'length'", "'row'"]),
    (dict(norm="relu2", n=0), ["n=0", "positive int"]),
    (dict(norm="relu2", n=-3), ["n=-3"]),
    (dict(norm="relu2", n=2.5), ["n=2.5"]),
    (dict(norm="relu2", n=True), ["n=True"]),
    (dict(norm="relu2", n="sample"), ["n='sample'"]),
    (dict(norm="softmax", n=64), ["n=64", "relu2"]),
    (dict(norm="relu2_norm", n="length"), ["n='length'", "relu2"]),
    (dict(returns="probabilities"), ["returns", "'probabilities'", "'weights'", "'scores'"]),
])
def test_bad_settings_raise_clear_errors(kwargs, words, raises_naming):
    q, k, v = qkv()
    raises_naming(lambda: attend(q, k, v, **kwargs), words)


@pytest.mark.parametrize("L, words", [(1, ["logn_base", "> 1", "got 1"]), (0.5, ["logn_base", "got 0.5"])])
def test_a_log_n_factor_of_no_length_raises(L, words, raises_naming):
    raises_naming(lambda: logn_factor(T, L, causal=True), words)


def test_mismatched_shapes_raise():
    q, k, v = qkv()
    with pytest.raises(ValueError, match=r"q \(2, 3, 7, 8\), k \(2, 3, 6, 8\)"):
        attend(q, k[:, :, :6], v)
    with pytest.raises(ValueError, match="v of shape"):
        attend(q, k, v[:, :2])


def test_the_per_position_rule_is_one_within_L_and_one_plus_a_ln_past_it():
    from minilm.model import position_rule

    factor = position_rule(40, 0.4, 16, causal=True)
    assert torch.equal(factor[:16], torch.ones(16))             # rows that see at most L keys
    n = torch.arange(17, 41, dtype=torch.float)
    torch.testing.assert_close(factor[16:], 1 + 0.4 * torch.log(n / 16))
    assert torch.equal(position_rule(40, 0.4, 16, causal=False), torch.full((40,), 1 + 0.4 * math.log(40 / 16)))
    with pytest.raises(ValueError, match="position_rule slope c"):
        position_rule(40, -0.1, 16, causal=True)


def test_a_model_takes_the_per_position_rule_as_a_row_scale_on_every_layer():
    import minilm
    from minilm.model import position_rule

    torch.manual_seed(0)
    model = minilm.LM(minilm.Config(vocab_size=11, d_model=16, n_layer=2, n_head=2, pos="nope")).eval()
    idx = torch.randint(0, 11, (2, 24))
    _, ruled = model(idx, position_rule=(0.5, 8), returns="weights")
    _, plain = model(idx, returns="weights")
    assert torch.equal(ruled[0][..., :8, :], plain[0][..., :8, :])   # within L nothing changes
    assert not torch.allclose(ruled[0][..., 8:, :], plain[0][..., 8:, :])
    # Every layer multiplies row i's logits by lambda_i: with the attention outputs silenced, each
    # layer's input is the same in both runs, so each layer's scores must be exactly rows_i times
    # its plain scores (a layer that skipped the rule, or scaled by another lambda, would differ).
    rows = position_rule(24, 0.5, 8, causal=True)
    with torch.no_grad():
        for block in model.blocks:
            block.to_out.weight.zero_()
            block.to_out.bias.zero_()
    _, ruled = model(idx, position_rule=(0.5, 8), returns="scores")
    _, plain = model(idx, returns="scores")
    assert len(ruled) == 2
    for ruled_layer, plain_layer in zip(ruled, plain):
        finite = plain_layer.isfinite()   # the causal mask's -inf
        torch.testing.assert_close(ruled_layer[finite], (rows.view(-1, 1) * plain_layer)[finite])
    assert rows[:8].eq(1).all() and rows[8:].gt(1).all()
    with pytest.raises(ValueError, match=r"position_rule must be a pair \(c, L\)"):
        model(idx, position_rule=0.5)
