"""Sliding windows and per-layer position encodings (Config.window, Config.pos as a tuple),
against references written out independently: a loop over (i, j) for which keys a query sees,
and the receptive field of a stack of windowed layers, probed by changing one input token."""

import math

import pytest
import torch

from minilm import attend
from minilm.data import RETRIEVAL_DIGITS
from minilm.measure import needle_mass
from minilm.model import LM, Config, RopeScaling, keys_seen, visible

V = 11


def reference_visible(T, causal, window):
    """Query i sees key j: j <= i when causal, and i - j < window with a window (loops)."""
    seen = torch.zeros(T, T, dtype=torch.bool)
    for i in range(T):
        for j in range(T):
            seen[i, j] = (not causal or j <= i) and (window is None or i - j < window)
    return seen


@pytest.mark.parametrize("T, window", [(1, 1), (5, 1), (9, 3), (9, 9), (9, 20), (16, 4)])
def test_visible_keys_match_the_loop(T, window):
    assert torch.equal(visible(T, True, window), reference_visible(T, True, window))
    assert torch.equal(visible(T, True, None), reference_visible(T, True, None))
    expected = torch.tensor([float(min(i + 1, window)) for i in range(T)])
    assert torch.equal(keys_seen(T, True, window), expected)


@pytest.mark.parametrize("norm, n", [("softmax", None), ("relu2", "row"), ("relu2", 16), ("relu2_norm", None)])
def test_windowed_attention_is_attention_over_the_window_alone(norm, n):
    """Row i of windowed attention equals full attention over keys i - w + 1 .. i only."""
    g = torch.Generator().manual_seed(0)
    B, H, T, w = 2, 3, 10, 4
    q, k, v = (torch.randn(B, H, T, 8, generator=g, dtype=torch.float64) for _ in range(3))
    out, weights = attend(q, k, v, norm=norm, n=n, window=w, returns="weights")
    assert torch.equal(weights == 0, ~reference_visible(T, True, w) | (weights == 0))  # nothing outside
    for i in range(T):
        lo = max(0, i - w + 1)
        sub_n = n if n != "row" else "length"   # the slice's last row sees all i - lo + 1 keys
        sub, _ = attend(q[:, :, lo:i + 1], k[:, :, lo:i + 1], v[:, :, lo:i + 1], norm=norm, n=sub_n)
        torch.testing.assert_close(out[:, :, i], sub[:, :, -1])


def test_fused_softmax_with_a_window_equals_the_explicit_path():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 2, 12, 8, generator=g) for _ in range(3))
    fused, _ = attend(q, k, v, window=5)
    explicit, _ = attend(q, k, v, window=5, returns="weights")
    torch.testing.assert_close(fused, explicit, atol=1e-6, rtol=1e-5)


def tiny(pos, window, n_layer=3, **extra):
    torch.manual_seed(0)
    config = Config(vocab_size=V, d_model=16, n_layer=n_layer, n_head=2, pos=pos, window=window, **extra)
    return LM(config).eval()


def changes_at(model, i, j, T=40):
    """Does the output at position i change when token j changes?"""
    idx = torch.randint(0, V, (1, T), generator=torch.Generator().manual_seed(2))
    other = idx.clone()
    other[0, j] = (idx[0, j] + 1) % V
    with torch.no_grad():
        return not torch.allclose(model(idx)[0, i], model(other)[0, i], atol=0, rtol=0)


@pytest.mark.parametrize("n_layer, window", [(1, 4), (3, 4), (2, 7)])
def test_every_layer_windowed_reads_no_further_back_than_its_reach(n_layer, window):
    """n_layer windows of w keys reach n_layer * (w - 1) positions back, and not one more."""
    model = tiny("rope", window, n_layer=n_layer)
    i, reach = 39, n_layer * (window - 1)
    assert changes_at(model, i, i - reach)
    for j in range(0, i - reach):
        assert not changes_at(model, i, j), j


def test_a_hybrids_global_nope_layer_reads_every_key():
    """Three windowed RoPE layers (reach 3 x 3 = 9) and a global NoPE layer: the output at 39
    changes with the first token, 39 positions back, which no window reaches."""
    hybrid = tiny(("rope", "rope", "rope", "nope"), 4, n_layer=4)
    assert hybrid.config.layers == (("rope", 4), ("rope", 4), ("rope", 4), ("nope", None))
    assert all(changes_at(hybrid, 39, j) for j in (0, 10, 29))
    idx = torch.randint(0, V, (2, 40), generator=torch.Generator().manual_seed(3))
    _, weights = hybrid(idx, returns="weights")
    assert (weights[3][..., torch.tril(torch.ones(40, 40, dtype=torch.bool))] > 0).all()  # every key j <= i
    assert (weights[0][..., ~reference_visible(40, True, 4)] == 0).all()


def test_row_rules_count_the_keys_each_layer_sees():
    """logn_base multiplies row i of a windowed layer by log(min(i + 1, w)) / log L and of a
    global layer by log(i + 1) / log L: the first layer's logits say so (a later layer's input
    changes with the rule too)."""
    idx = torch.randint(0, V, (1, 12), generator=torch.Generator().manual_seed(4))
    for pos, window in ((("rope", "nope"), 4), (("nope", "rope"), None)):
        model = tiny(pos, 4, n_layer=2)
        (_, plain), (_, scaled) = (model(idx, returns="scores", **s) for s in ({}, dict(logn_base=8)))
        n_i = torch.tensor([float(i + 1 if window is None else min(i + 1, window)) for i in range(12)])
        ratio = scaled[0][0, 0] / plain[0][0, 0]
        kept = torch.isfinite(ratio) & (plain[0][0, 0].abs() > 1e-3)
        expected = (n_i.log() / math.log(8)).view(-1, 1).expand(12, 12)
        torch.testing.assert_close(ratio[kept], expected[kept], rtol=1e-4, atol=1e-5)


def test_a_window_and_a_layer_layout_survive_the_cache_key_round_trip():
    config = Config(vocab_size=V, n_layer=4, pos=("rope", "rope", "rope", "nope"), window=8)
    again = Config.from_dict({**config.to_dict(), "pos": list(config.pos)})   # JSON writes a list
    assert again == config and isinstance(again.pos, tuple)


@pytest.mark.parametrize("settings, words", [
    (dict(window=0), ["Config.window", "positive int", "0"]),
    (dict(window=2.5), ["Config.window", "2.5"]),
    (dict(window=4, causal=False), ["window=4", "causal=True"]),
    (dict(pos="nope", window=4), ["Config.window=4", "no effect", "RoPE layers"]),
    (dict(pos=("rope", "nope", "rope")), ["tuple of one of them per layer", "2 layers"]),
    (dict(pos=("rope", "nop")), ["unknown pos of a layer 'nop'", "'nope'"]),
    (dict(window=4, rope_scaling=RopeScaling("yarn", 2.0, 32)), ["window=4", "no effect"]),
])
def test_bad_window_or_layout_is_refused_naming_it(settings, words, raises_naming):
    raises_naming(lambda: Config(vocab_size=V, n_layer=2, **settings), words)


def test_attend_refuses_a_bad_window(raises_naming):
    q = torch.randn(1, 1, 4, 8)
    raises_naming(lambda: attend(q, q, q, window=0), ["window", "positive int", "0"])
    raises_naming(lambda: attend(q, q, q, window=2, causal=False), ["window=2", "causal=True"])


def test_needle_mass_sums_the_marker_and_the_digits_and_nothing_else():
    """The needle is "@" at p and its RETRIEVAL_DIGITS digits: mass on positions p .. p + D."""
    T, D = 12, RETRIEVAL_DIGITS
    rows = torch.arange(1.0, T + 1).expand(2, 3, T)       # row value j + 1 at key j
    needle = torch.tensor([2, 5])
    expected = torch.tensor([sum(range(3, 3 + D + 1)), sum(range(6, 6 + D + 1))], dtype=torch.float32)
    torch.testing.assert_close(needle_mass(rows, needle), expected.view(2, 1).expand(2, 3))
