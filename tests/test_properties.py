"""Property tests over the public API (Hypothesis): random configs, recipes, lengths, depths and
dtypes, within the allowed ranges and just outside them.

Each test draws every argument either valid or invalid and knows which. With every argument
valid, the call must return finite results of the right shape; with one or more invalid, it
must raise ValueError or TypeError whose message names one of them. Never a torch-internal
error (anything else fails the test), never NaN from finite input. Valid values include numpy
numbers, numpy arrays and ``range``, which are accepted wherever a Python number or list is.

Deterministic (``derandomize``) and small (tiny models, a fixed number of examples), so CI runs
them in seconds.
"""

import json
import math
from dataclasses import asdict

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import minilm
from minilm import Config, Recipe, default_corpus
from minilm.cache import cache_key
from minilm.data import IGNORE_INDEX, RANDOM_FILLER, RETRIEVAL_DIGITS, batches, retrieval_rows
from minilm.measure import (bootstrap_interval, extension_ratio, growth_exponent, loss_by_length, needle_attention,
                            retrieval_accuracy, seed_interval)
from minilm.model import LM, RopeScaling, attend
from minilm.validation import BLOCKS
from minilm.scaling import LENGTH_RULES, fit_log_slope, length_rule, at_lambda

PROPERTY = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
FEWER = settings(PROPERTY, max_examples=20)  # the ones that run a model several times per example
NAN, INF = float("nan"), float("inf")
DTYPES = (torch.float32, torch.float64, torch.bfloat16)


def arg(valid, invalid, odds: int = 6):
    """(value, ok): an invalid value about one time in ``odds``, so that most examples have
    every argument valid and still most arguments are drawn invalid some of the time."""
    # The last of odds choices, not the first: Hypothesis draws the simplest value (index 0) far
    # more often than the others, and shrinks towards it, so a failure shrinks to valid arguments.
    return st.tuples(st.sampled_from(range(odds)), valid, invalid).map(
        lambda t: (t[2], False) if t[0] == odds - 1 else (t[1], True))


def as_numpy(strategy, kind):
    """The same values, sometimes as numpy scalars (np.int64, np.float32, ...)."""
    return st.tuples(strategy, st.sampled_from([None, *kind])).map(lambda t: t[0] if t[1] is None else t[1](t[0]))


def ints(low, high):
    return as_numpy(st.integers(low, high), (np.int64, np.int32))


def floats(low, high):
    return as_numpy(st.floats(low, high), (np.float64, np.float32)).filter(lambda v: low <= float(v) <= high)


def list_like(strategy, min_size=1, max_size=3):
    """A list, a tuple or a numpy array of the values (a range is drawn separately where it fits)."""
    return st.tuples(st.lists(strategy, min_size=min_size, max_size=max_size), st.sampled_from([list, tuple, np.array])
                     ).map(lambda t: t[1](t[0]))


def check(call, drawn: dict, words: dict | None = None):
    """Call ``call(**values)`` on the drawn {name: (value, ok)}. If some are not ok, it must raise
    ValueError or TypeError naming one of them (``words[name]``: what the message says for it,
    default the name itself); returns None then. Else returns what the call returns."""
    words = words or {}
    values = {name: value for name, (value, _) in drawn.items()}
    bad = [name for name, (_, ok) in drawn.items() if not ok]
    event("every argument valid" if not bad else "some argument invalid")
    if not bad:
        return call(**values)
    with pytest.raises((ValueError, TypeError)) as info:
        call(**values)
    message = str(info.value)
    assert any(word in message for name in bad for word in words.get(name, [name])), (bad, values, message)
    return None


def all_finite(tensor) -> bool:
    return bool(tensor.float().isfinite().all())


# ---------------------------------------------------------------------------- Config -> LM


@PROPERTY
@given(st.data())
def test_a_config_builds_a_model_with_finite_logits_or_names_the_field(data):
    draw = data.draw
    block = draw(st.sampled_from(BLOCKS))
    drawn = {"block": draw(arg(st.just(block), st.sampled_from(["mlp", "GAU", None]), odds=12))}
    drawn["vocab_size"] = draw(arg(ints(1, 40), st.sampled_from([0, -3, 2.5, True, "10", None])))
    drawn["n_layer"] = draw(arg(ints(1, 2), st.sampled_from([0, -1, 1.0])))
    if block == "gau":
        drawn["n_head"] = draw(arg(st.just(1), st.sampled_from([2, 0])))
        drawn["d_model"] = draw(arg(ints(1, 16), st.sampled_from([0, -8, 8.0])))
        drawn["d_k"] = draw(arg(st.sampled_from([2, 4, 8]), st.sampled_from([0, "8", 2.5])))
        drawn["expansion"] = draw(arg(ints(1, 3), st.sampled_from([0, 1.5])))
    else:
        heads = draw(st.sampled_from([1, 2, 4]))
        drawn["n_head"] = draw(arg(st.just(heads), st.sampled_from([0, "2"])))
        # head widths even (RoPE rotates pairs): d_model = heads * 2k
        drawn["d_model"] = draw(arg(st.sampled_from([2, 4, 8]).map(lambda w: heads * w), st.sampled_from([0, -4, 2.5])))
    norm, n = draw(st.sampled_from([("softmax", None), ("relu2_norm", None), ("relu2", "length"), ("relu2", "row"),
                                    ("relu2", 1), ("relu2", 64)]))
    drawn["norm"] = draw(arg(st.just(norm), st.sampled_from(["sofmax", "relu"]), odds=12))
    drawn["n"] = draw(arg(st.just(n), st.just("lenght" if norm == "relu2" else 8), odds=12))
    drawn["logn_base"] = draw(arg(st.none() | floats(1.01, 1e4) | ints(2, 512),
                                  st.sampled_from([1, 0.5, NAN, INF, "64", True])))
    pos = draw(st.sampled_from(["rope", "nope"]))
    drawn["pos"] = draw(arg(st.just(pos), st.just("alibi"), odds=12))
    if pos == "rope":
        drawn["rope_base"] = draw(arg(floats(1.5, 1e5) | ints(2, 100000), st.sampled_from([1, 0, -10.0, NAN, INF])))
        scaling = st.none() | st.builds(RopeScaling, st.sampled_from(["pi", "yarn"]), floats(1, 8), ints(1, 64))
        drawn["rope_scaling"] = draw(arg(scaling, st.sampled_from(["pi", 2.0])))
    else:
        drawn["rope_base"] = draw(arg(st.just(10000.0), st.just(500.0), odds=12))  # NoPE uses none
    drawn["causal"] = draw(arg(st.booleans(), st.sampled_from([None, 1, "yes", np.True_])))
    drawn["max_len"] = draw(arg(ints(16, 64), st.sampled_from([0, 2.5])))
    words = {"n": ["n="], "pos": ["pos", "rope_base"], "norm": ["norm"], "block": ["block"]}

    config = check(Config, drawn, words)
    if config is None:
        return
    assert Config.from_dict(config.to_dict()) == config
    key = cache_key(config, Recipe(), default_corpus())
    assert json.loads(json.dumps(key)) == key
    torch.manual_seed(0)
    dtype = draw(st.sampled_from(DTYPES))
    model = LM(config).to(dtype).eval()
    B, T = draw(st.integers(1, 2)), draw(st.integers(1, 16))
    idx = torch.randint(0, config.vocab_size, (B, T))
    with torch.no_grad():
        logits = model(idx)
    assert logits.shape == (B, T, config.vocab_size) and logits.dtype == dtype
    assert all_finite(logits)


# ---------------------------------------------------------------------------- attend


@PROPERTY
@given(st.data())
def test_attend_gives_finite_outputs_of_the_right_shape_or_names_the_argument(data):
    draw = data.draw
    B, H, T = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 24))
    d, e = draw(st.sampled_from([2, 4, 8])), draw(st.sampled_from([1, 4]))
    dtype = draw(st.sampled_from(DTYPES))
    g = torch.Generator().manual_seed(draw(st.integers(0, 1000)))
    q, k, v = (torch.randn(B, H, T, width, generator=g).to(dtype) for width in (d, d, e))
    norm, n = draw(st.sampled_from([("softmax", None), ("relu2_norm", None), ("relu2", "length"), ("relu2", "row"),
                                    ("relu2", 1), ("relu2", 16)]))
    drawn = {
        "q": (q, True),
        "k": draw(arg(st.just(k), st.sampled_from([k[..., :1, :] if T > 1 else k[..., :0], k.double()
                                                   if dtype != torch.float64 else k.float(), k.tolist()]), odds=10)),
        "v": (v, True),
        "norm": draw(arg(st.just(norm), st.just("sofmax"), odds=12)),
        "n": draw(arg(st.just(n), st.just(0 if norm == "relu2" else 4), odds=12)),
        "returns": draw(arg(st.sampled_from([None, "weights", "scores"]), st.sampled_from(["weight", True]))),
        "causal": draw(arg(st.booleans(), st.sampled_from([None, 1, "no"]))),
    }
    words = {"k": ["attend expects", "one dtype", "must be tensors"], "n": ["n="], "norm": ["norm"]}
    result = check(attend, drawn, words)
    if result is not None:
        out, seen = result
        assert out.shape == (B, H, T, e) and out.dtype == dtype
        assert all_finite(out)
        assert (seen is None) == (drawn["returns"][0] is None)


# ---------------------------------------------------------------------------- Recipe and the cache key


def lengths_strategy():
    return st.lists(ints(1, 256), min_size=1, max_size=3).flatmap(
        lambda values: st.sampled_from([list(values), tuple(values), np.array(values, dtype=np.int64)]))


@PROPERTY
@given(st.data())
def test_a_recipe_is_hashable_and_keyed_as_its_json_or_names_the_field(data):
    draw = data.draw
    task = draw(st.sampled_from(["causal", "mlm"]))
    drawn = {"task": draw(arg(st.just(task), st.sampled_from(["lm", None]), odds=12))}
    if draw(st.booleans()):
        drawn["length"] = draw(arg(ints(1, 512), st.sampled_from([0, 2.5, "16", None])))
        drawn["lengths"] = (None, True)
    else:
        drawn["length"] = (None, True)
        drawn["lengths"] = draw(arg(lengths_strategy() | st.just(range(8, 12)),
                                    st.sampled_from([[], [0], 16, "16", [2.5]])))
    drawn["steps"] = draw(arg(ints(1, 5000), st.sampled_from([0, -1, 2.5, True])))
    drawn["batch_size"] = draw(arg(ints(1, 64), st.sampled_from([0, "32"])))
    drawn["lr"] = draw(arg(floats(1e-5, 1) | st.just(1), st.sampled_from([0, -1e-3, NAN, INF, "0.1"])))
    drawn["warmup"] = draw(arg(ints(0, 100), st.sampled_from([-1, 1.5])))
    drawn["weight_decay"] = draw(arg(floats(0, 1) | st.just(0), st.sampled_from([-0.1, NAN])))
    drawn["seed"] = draw(arg(ints(0, 10 ** 6), st.sampled_from(["1", 1.5, None])))
    drawn["retrieval"] = draw(arg((floats(0, 1) | st.just(0)) if task == "causal" else st.just(0.0),
                                  st.sampled_from([1.5, -0.1, NAN]) if task == "causal" else st.just(0.5)))
    recipe = check(Recipe, drawn, {"length": ["length"], "lengths": ["length"]})
    if recipe is None:
        return
    assert recipe.lengths is None or isinstance(recipe.lengths, tuple)
    again = Recipe(**json.loads(json.dumps(asdict(recipe))))  # as the command line reads it back
    assert again == recipe and hash(again) == hash(recipe) and {recipe: 1}[again] == 1
    corpus = default_corpus()
    config = Config(vocab_size=corpus.tokenizer.vocab_size)
    assert cache_key(config, again, corpus) == cache_key(config, recipe, corpus)


@PROPERTY
@given(logn_base=st.none() | st.integers(2, 4096), rope_base=st.integers(2, 10 ** 6), factor=st.integers(1, 8),
       lr=st.sampled_from([1, 2]), weight_decay=st.integers(0, 1), retrieval=st.integers(0, 1),
       lengths=st.lists(st.integers(1, 64), min_size=1, max_size=3))
def test_equal_configs_and_recipes_give_equal_keys(logn_base, rope_base, factor, lr, weight_decay, retrieval, lengths):
    # the same numbers written as int, float or numpy, and lengths as list, tuple or array: one cache entry
    corpus = default_corpus()
    V = corpus.tokenizer.vocab_size
    as_float = None if logn_base is None else float(logn_base)
    configs = [Config(vocab_size=V, logn_base=logn_base, rope_base=rope_base,
                      rope_scaling=RopeScaling("pi", factor, 8)),
               Config(vocab_size=np.int64(V), logn_base=as_float, rope_base=float(rope_base),
                      rope_scaling=RopeScaling("pi", float(factor), np.int32(8))),
               Config(vocab_size=V, logn_base=None if logn_base is None else np.float32(logn_base),
                      rope_base=np.float64(rope_base), rope_scaling={"kind": "pi", "factor": factor, "train_len": 8})]
    recipes = [Recipe(length=None, lengths=lengths, lr=lr, weight_decay=weight_decay, retrieval=retrieval),
               Recipe(length=None, lengths=tuple(lengths), lr=float(lr), weight_decay=float(weight_decay),
                      retrieval=float(retrieval)),
               Recipe(length=None, lengths=np.array(lengths), lr=np.float32(lr), weight_decay=np.float64(weight_decay),
                      retrieval=np.int64(retrieval))]
    keys = {json.dumps(cache_key(c, r, corpus), sort_keys=True) for c in configs for r in recipes}
    assert len(keys) == 1 and len(set(configs)) == 1 and len(set(recipes)) == 1


# ---------------------------------------------------------------------------- batches and retrieval windows


@PROPERTY
@given(st.data())
def test_batches_have_the_shape_asked_and_ids_in_range_or_name_the_argument(data):
    draw = data.draw
    corpus = default_corpus()
    V = corpus.tokenizer.vocab_size
    task = draw(st.sampled_from(["causal", "mlm"]))
    retrieval = draw(st.sampled_from([0.0, 0.5, 1.0, np.float32(0.25)])) if task == "causal" else 0.0
    shortest = 2 * minilm.data.RETRIEVAL_DIGITS + 1 if retrieval else 1
    drawn = {
        "task": draw(arg(st.just(task), st.just("translate"), odds=12)),
        "batch_size": draw(arg(ints(1, 4), st.sampled_from([0, -2, 2.5, "2"]))),
        "length": draw(arg(ints(shortest, 48), st.sampled_from([0, 10 ** 6, "16", shortest - 1 or -1]))),
        "seed": draw(arg(ints(0, 100), st.sampled_from(["0", 0.5]))),
        "retrieval": draw(arg(st.just(retrieval), st.sampled_from([1.5, NAN]) if task == "causal" else st.just(0.5))),
        "split": draw(arg(st.sampled_from(["train", "val"]), st.just("test"), odds=12)),
    }
    stream = check(lambda **kw: batches(corpus, **kw), drawn)
    if stream is None:
        return
    B, T = int(drawn["batch_size"][0]), int(drawn["length"][0])
    for _ in range(2):
        x, y = next(stream)
        assert x.shape == y.shape == (B, T) and x.dtype == y.dtype == torch.long
        assert ((x >= 0) & (x < V)).all() and (((y >= 0) & (y < V)) | (y == IGNORE_INDEX)).all()


@PROPERTY
@given(st.data())
def test_retrieval_windows_hold_their_needle_or_name_the_argument(data):
    draw = data.draw
    corpus = default_corpus()
    drawn = {
        "batch_size": draw(arg(ints(1, 4), st.sampled_from([0, 1.5]))),
        "length": draw(arg(ints(7, 64), st.sampled_from([6, 0, "16"]))),
        "depth": draw(arg(st.none() | floats(0, 1), st.sampled_from([-0.1, 1.5, NAN, "0.5"]))),
        "filler": draw(arg(st.sampled_from(["text", "random"]), st.sampled_from(["noise", None, 1]))),
    }

    def windows(filler, **kw):
        ids = None if filler == "random" else corpus.val   # the text the filler is cut from, if any
        return retrieval_rows(corpus, ids, generator=torch.Generator().manual_seed(0), filler=filler, **kw)

    rows = check(windows, drawn)
    if rows is None:
        return
    x, y, needle = rows
    B, T = int(drawn["batch_size"][0]), int(drawn["length"][0])
    assert x.shape == y.shape == (B, T) and needle.shape == (B,)
    if drawn["filler"][0] == "random":   # letters around the needle, and nothing else
        filler = torch.cat([torch.cat([r[:n], r[n + 1 + RETRIEVAL_DIGITS:T - RETRIEVAL_DIGITS]]) for r, n in zip(x, needle)])
        assert set(corpus.tokenizer.decode(filler)) <= set(RANDOM_FILLER)
    assert ((needle >= 0) & (needle < T)).all()
    assert (x[torch.arange(B), needle] == corpus.tokenizer.encode("@")).all()


# ---------------------------------------------------------------------------- measurement, on a tiny untrained model


_MODEL = {}


def tiny_model():
    if not _MODEL:
        torch.manual_seed(0)
        config = Config(vocab_size=default_corpus().tokenizer.vocab_size, d_model=8, n_layer=1, n_head=2, max_len=64)
        _MODEL["model"] = LM(config).eval()
    return _MODEL["model"]


def depths_strategy():
    return list_like(floats(0, 1), max_size=2)


@FEWER
@given(st.data())
def test_loss_by_length_gives_a_finite_loss_per_length_or_names_the_argument(data):
    draw = data.draw
    drawn = {
        "lengths": draw(arg(list_like(ints(1, 32), max_size=2) | st.just(range(8, 10)),
                            st.sampled_from([[], [0], "16", [2.5], 16, [128]]))),
        "tokens": draw(arg(ints(16, 256), st.sampled_from([0, 2.5]))),
    }
    words = {"lengths": ["length"]}
    result = check(lambda **kw: loss_by_length(tiny_model(), default_corpus(), **kw), drawn, words)
    if result is not None:
        assert sorted(result) == sorted(int(L) for L in drawn["lengths"][0])
        assert all(math.isfinite(v) and v > 0 for v in result.values())


@FEWER
@given(st.data())
def test_retrieval_accuracy_is_a_table_of_fractions_or_names_the_argument(data):
    draw = data.draw
    drawn = {
        "lengths": draw(arg(list_like(ints(7, 32), max_size=2), st.sampled_from([[], [6], "16", [0]]))),
        "depths": draw(arg(depths_strategy(), st.sampled_from([[], [1.5], "0.5", [NAN], 0.5]))),
        "trials": draw(arg(ints(1, 3), st.sampled_from([0, 1.5]))),
        "seed": draw(arg(ints(0, 100), st.sampled_from(["1", 2.5]))),
    }
    words = {"lengths": ["length"], "depths": ["depth"]}
    result = check(lambda **kw: retrieval_accuracy(tiny_model(), default_corpus(), **kw), drawn, words)
    if result is not None:
        assert result.shape == (len(drawn["lengths"][0]), len(drawn["depths"][0]))
        assert ((result >= 0) & (result <= 1)).all()


@FEWER
@given(st.data())
def test_needle_attention_gives_a_mass_and_entropy_per_head_or_names_the_argument(data):
    draw = data.draw
    drawn = {
        "length": draw(arg(ints(7, 32), st.sampled_from([6, 0, 2.5]))),
        "depths": draw(arg(depths_strategy(), st.sampled_from([[], [-0.5], (1.5,), "0.5"]))),
        "trials": draw(arg(ints(1, 3), st.sampled_from([0, -1]))),
        "rows": draw(arg(st.sampled_from(["question", "answer"]), st.sampled_from(["all", None]))),
        "filler": draw(arg(st.sampled_from(["text", "random"]), st.sampled_from(["noise", 0]))),
    }
    words = {"depths": ["depth"]}
    result = check(lambda **kw: needle_attention(tiny_model(), default_corpus(), **kw), drawn, words)
    if result is not None:
        assert result["mass"].shape == result["entropy"].shape == (1, 2)
        assert all_finite(result["mass"]) and all_finite(result["entropy"])
        assert ((result["mass"] >= 0) & (result["mass"] <= 1 + 1e-5)).all() and (result["entropy"] >= -1e-6).all()


@PROPERTY
@given(st.data())
def test_bootstrap_interval_is_an_ordered_finite_pair_or_names_the_argument(data):
    draw = data.draw
    N = draw(st.integers(1, 8))
    kind = draw(st.sampled_from(["float", "bool", "list", "2-D"]))
    g = torch.Generator().manual_seed(N)
    rows = {"float": torch.randn(N, generator=g), "bool": torch.rand(N, generator=g) < 0.5,
            "list": torch.randn(N, generator=g).tolist(), "2-D": torch.randn(N, 3, generator=g)}[kind]
    drawn = {
        "rows": draw(arg(st.just(rows), st.sampled_from([torch.zeros(0), [], torch.zeros(0, 3)]))),
        "resamples": draw(arg(ints(1, 50), st.sampled_from([0, 2.5]))),
        "level": draw(arg(floats(0.05, 1), st.sampled_from([0, 1.5, NAN]))),
        "seed": draw(arg(ints(0, 100), st.sampled_from(["0", None]))),
    }
    result = check(lambda **kw: bootstrap_interval(statistic=lambda r: r.float().mean(), **kw), drawn)
    if result is not None:
        low, high = result
        assert math.isfinite(low) and math.isfinite(high) and low <= high


@PROPERTY
@given(st.data())
def test_extension_ratio_and_growth_exponent_are_finite_or_name_the_argument(data):
    draw = data.draw
    L = draw(st.integers(1, 16))
    T = draw(st.integers(L + 1, 4 * L + 1))
    loss = torch.rand(T, generator=torch.Generator().manual_seed(T)) + 1
    drawn = {
        "position_loss": draw(arg(st.just(loss), st.sampled_from([loss[:L], loss.tolist(), loss.view(1, -1)]))),
        "train_len": draw(arg(as_numpy(st.just(L), (np.int64,)), st.sampled_from([0, 2.5, "8"]))),
        "margin": draw(arg(floats(0, 2), st.sampled_from([-1.0, NAN, INF]))),
        "bucket": draw(arg(st.none() | ints(1, 8), st.sampled_from([0, 1.5]))),
    }
    ratio = check(extension_ratio, drawn, {"position_loss": ["position_loss", "train_len"]})
    if ratio is not None:
        assert math.isfinite(ratio) and 1 <= ratio <= T / L

    k = draw(st.integers(2, 5))
    ns = draw(st.lists(st.integers(1, 10 ** 4), min_size=k, max_size=k, unique=True))
    values = draw(st.lists(st.floats(1e-3, 1e6), min_size=k, max_size=k))
    drawn = {"ns": draw(arg(st.just(ns) | st.just(np.array(ns)), st.sampled_from([[8], [0, 8], [8, 8], ["a", "b"]]))),
             "values": draw(arg(st.just(values), st.sampled_from([[0.0] * k, [-1.0] * k, [NAN] * k])))}
    b = check(growth_exponent, drawn, {"ns": ["ns", "pairs"], "values": ["values"]})
    if b is not None:
        assert math.isfinite(b)


# ---------------------------------------------------------------------------- scaling


@PROPERTY
@given(st.data())
def test_length_rules_and_the_log_fit_are_finite_or_name_the_argument(data):
    draw = data.draw
    rule = draw(st.sampled_from(LENGTH_RULES))
    logs_of_L = rule in ("su", "qwen")  # log_L n: L = 1 has no log base
    drawn = {
        "rule": draw(arg(st.just(rule), st.sampled_from(["logn", None]), odds=12)),
        "n": draw(arg(floats(0.01, 1e5) | ints(1, 10 ** 5), st.sampled_from([0, -8, NAN, INF, "8"]))),
        "L": draw(arg(floats(1.01, 1e4) | ints(2, 4096) | (st.just(1) if not logs_of_L else st.just(2)),
                      st.sampled_from([0, -1, NAN, "64"] + ([1] if logs_of_L else [])))),
    }
    multiplier = check(length_rule, drawn, {"n": ["n must"], "L": ["L must"]})
    if multiplier is not None:
        assert math.isfinite(multiplier)

    k = draw(st.integers(1, 4))
    ratios = draw(st.lists(floats(0.05, 64), min_size=k, max_size=k).filter(lambda r: any(float(s) != 1 for s in r)))
    lambdas = draw(st.lists(floats(-4, 4), min_size=k, max_size=k))
    drawn = {"ratios": draw(arg(st.just(ratios) | st.just(np.array(ratios, dtype=np.float64)),
                                st.sampled_from([[0] * k, [-1.0] * k, [1.0] * k, [NAN] * k, "2"]))),
             "lambdas": draw(arg(st.just(lambdas), st.sampled_from([[NAN] * k, [1.0] * (k + 1), ["1"] * k])))}
    c = check(fit_log_slope, drawn, {"ratios": ["ratio"], "lambdas": ["lambda"]})
    if c is not None:
        assert math.isfinite(c)


@PROPERTY
@given(st.data())
def test_the_temperature_context_sets_and_restores_or_names_the_value(data):
    draw = data.draw
    model = tiny_model()
    before = model.multiplier.detach().clone()
    valid = (st.none() | floats(-3, 3) | st.builds(lambda s: torch.full((1, 2), s), st.floats(0, 3))
             | st.builds(lambda a, b: torch.tensor([a, b]), st.floats(0, 3), st.floats(0, 3))
             | st.just(torch.tensor(1.5)))
    value, ok = draw(arg(valid, st.sampled_from([NAN, INF, "1", True, torch.ones(3), torch.full((2,), NAN),
                                                 torch.ones(2, 2)])))

    def enter(value):
        with at_lambda(model, value):
            inside = model.multiplier.detach().clone()
        return inside

    inside = check(enter, {"value": (value, ok)}, {"value": ["multiplier"]})
    assert torch.equal(model.multiplier, before)  # restored on every exit, an error too
    if inside is not None:
        expected = before if value is None else torch.as_tensor(value, dtype=before.dtype).expand_as(before)
        assert torch.equal(inside, expected)


@PROPERTY
@given(st.data())
def test_the_per_position_rule_gives_finite_logits_unchanged_within_L_or_names_the_argument(data):
    draw = data.draw
    drawn = {"position_rule": draw(arg(st.tuples(floats(0, 2), ints(1, 16)),
                                        st.sampled_from([(-0.5, 8), (0.4, 0), (NAN, 8), 0.4, (0.4, 8, 1)])))}
    words = {"position_rule": ["position_rule"]}
    vocab = tiny_model().config.vocab_size
    idx = torch.randint(0, vocab, (2, 24), generator=torch.Generator().manual_seed(1))
    logits = check(lambda **kw: tiny_model()(idx, **kw), drawn, words)
    if logits is not None:
        assert logits.shape == (2, 24, vocab) and all_finite(logits)
        L = int(drawn["position_rule"][0][1])
        torch.testing.assert_close(logits[:, :L], tiny_model()(idx)[:, :L])   # within L the rule is 1


@PROPERTY
@given(st.data())
def test_seed_interval_is_an_ordered_triple_around_the_mean_or_names_the_values(data):
    draw = data.draw
    drawn = {"values": draw(arg(list_like(floats(-1, 1), min_size=2, max_size=6), st.sampled_from([[0.5], [], [0.1, NAN]]))),
             "level": draw(arg(floats(0.5, 0.99), st.sampled_from([0, 1, 1.5, NAN])))}
    words = {"values": ["value"], "level": ["level"]}
    result = check(seed_interval, drawn, words)
    if result is not None:
        mean, low, high = result
        values = [float(v) for v in drawn["values"][0]]
        assert low <= mean <= high and math.isclose(mean, sum(values) / len(values), abs_tol=1e-6)
