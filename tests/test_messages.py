"""Round two of bad input: each message names the argument the user passed and what is allowed,
never torch's internals; and numpy numbers, numpy arrays and ``range`` are accepted wherever a
Python number or list is (bool still refused).

Two tables, as in test_bad_input.py: (the call, words its ValueError holds), and calls that
must now return finite results where they raised before.
"""

import math

import numpy as np
import pytest
import torch

from minilm import Config, Corpus, Recipe, default_corpus
from minilm.bench import step_time
from minilm.cache import cache_key
from minilm.data import batches, causal_batch, retrieval_batch
from minilm.measure import (attention_entropy, bootstrap_interval, bucket_means, entropy, eval_batches,
                            extension_ratio, growth_exponent, loss_by_length, needle_attention, position_probe_r2,
                            prefix_gap, retrieval_accuracy, retrieval_prompts, seed_interval, t_quantile)
from minilm.model import LM, RopeScaling, apply_rope, attend, logn_factor, rope_angles
from minilm.sampling import generate
from minilm.scaling import (fit_log_slope, fit_per_position, length_rule, at_lambda, train_head_scales,
                            uniform_multiplier_by_position, uniform_multiplier_search)
from minilm.training import train

NAN, INF = float("nan"), float("inf")
SMALL = Corpus("abc 0123456789@?\n" * 60, name="small.txt")  # a validation split of 102 tokens


def corpus():
    return default_corpus()


def model(corpus_=None):
    corpus_ = corpus_ or default_corpus()
    torch.manual_seed(0)
    return LM(Config(vocab_size=corpus_.tokenizer.vocab_size, d_model=16, n_layer=1, n_head=2)).eval()


def idx():
    return corpus().val[:32].view(2, 16)


def qkv(dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(1, 2, 5, 8, generator=g).to(dtype) for _ in range(3))


def stream():
    return batches(corpus(), task="causal", batch_size=2, length=8)


def enter(context):
    with context:
        pass


CASES = {
    # retrieval and measurement
    "retrieval_prompts trials=0": (lambda: retrieval_prompts(corpus(), 16, 0.5, trials=0),
                                   ["trials must be a positive int; got 0"]),
    "retrieval longer than the validation split": (
        lambda: retrieval_accuracy(model(SMALL), SMALL, [200], [0.5], trials=2),
        ["length 200", "validation split", "'small.txt'", "102 tokens"]),
    "causal_batch longer than the ids": (lambda: causal_batch(SMALL.val, 2, 108),
                                         ["length 108", "needs 109 tokens", "108"]),
    "bootstrap_interval of no rows": (lambda: bootstrap_interval(torch.zeros(0, 4), torch.mean),
                                      ["rows", "at least one row", "(0, 4)"]),
    "bootstrap_interval statistic None": (lambda: bootstrap_interval(torch.ones(4), None),
                                          ["statistic", "callable", "None"]),
    "bootstrap_interval statistic of several numbers": (
        lambda: bootstrap_interval(torch.ones(4, 3), lambda rows: rows.mean(0)),
        ["statistic must return one number", "(3,)"]),
    "bootstrap_interval seed str": (lambda: bootstrap_interval(torch.ones(4), torch.mean, seed="a"),
                                    ["seed must be an int; got 'a'"]),
    "retrieval_accuracy seed str": (lambda: retrieval_accuracy(model(), corpus(), [16], [0.5], trials=2, seed="1"),
                                    ["seed must be an int; got '1'"]),
    "retrieval_accuracy depth 1.5, second cell": (
        lambda: retrieval_accuracy(model(), corpus(), [16], [0.5, 1.5], trials=2),
        ["each of depths", "[0, 1]", "got 1.5"]),
    "needle_attention seed 1.5": (lambda: needle_attention(model(), corpus(), 16, depths=[0.5], trials=2, seed=1.5),
                                  ["seed must be an int; got 1.5"]),
    "prefix_gap T=0": (lambda: prefix_gap(model(), idx(), 0), ["T must be", "got 0"]),
    "prefix_gap T past the sequence": (lambda: prefix_gap(model(), idx(), 99), ["T must be", "16", "got 99"]),
    "prefix_gap T=2.5": (lambda: prefix_gap(model(), idx(), 2.5), ["T must be", "got 2.5"]),
    "attention_entropy of a list": (lambda: attention_entropy(model(), [[1, 2]]), ["idx", "LongTensor", "list"]),
    "bucket_means of a list": (lambda: bucket_means([1.0, 2.0], 1), ["values must be a tensor", "list"]),
    "entropy of a list": (lambda: entropy([0.5, 0.5]), ["weights must be a tensor", "list"]),
    "growth_exponent of strings": (lambda: growth_exponent(["a", "b"], [1, 2]), ["ns", "numbers", "'a'"]),
    "eval_batches n_batches=0": (lambda: eval_batches(corpus(), task="causal", length=8, n_batches=0),
                                 ["n_batches must be a positive int; got 0"]),
    # scaling
    "uniform_multiplier_by_position sequences=0": (
        lambda: uniform_multiplier_by_position(model(), corpus(), 16, [1.0], sequences=0, seed=0),
        ["sequences must be a positive int; got 0"]),
    "uniform_multiplier_by_position sequences=3": (  # was silently read as 8
        lambda: uniform_multiplier_by_position(model(), corpus(), 16, [1.0], sequences=3, seed=0),
        ["sequences must be a multiple of 8", "got 3"]),
    "seed_interval of a table": (  # was flattened into one long list of "seeds"
        lambda: seed_interval([[0.5, 0.6, 0.7], [0.4, 0.6, 0.8]]), ["one number per seed", "shape (2, 3)"]),
    "t_quantile p=0.4": (lambda: t_quantile(0.4, 4), ["p must be a finite number > 0.5", "got 0.4"]),  # was 4e-19
    "t_quantile p=1": (lambda: t_quantile(1.0, 4), ["p must be below 1", "got 1.0"]),
    "t_quantile df=0": (lambda: t_quantile(0.95, 0), ["df must be a positive int; got 0"]),
    "fit_per_position table a list": (lambda: fit_per_position([[1.0] * 40], [1.0], 16, bucket=4),
                                      ["table must be a tensor", "list"]),
    "fit_log_slope ratio 0": (lambda: fit_log_slope([0, 2], [1.0, 1.2]), ["ratios", "> 0", "got 0"]),
    "fit_log_slope lambda nan": (lambda: fit_log_slope([2, 4], [1.0, NAN]), ["lambdas", "got nan"]),
    "fit_log_slope ratio str": (lambda: fit_log_slope(["2"], [1.0]), ["ratios", "got '2'"]),
    "length_rule su L=1": (lambda: length_rule("su", 8, 1), ["L", "> 1", "'su'", "got 1"]),
    "length_rule n=0": (lambda: length_rule("nope_fit", 0, 8), ["n must be", "> 0", "got 0"]),
    "length_rule n str": (lambda: length_rule("su", "8", 2), ["n must be", "got '8'"]),
    "length_rule n=inf": (lambda: length_rule("qwen", INF, 2), ["n must be", "finite", "got inf"]),
    "multiplier tensor of the wrong shape": (lambda: enter(at_lambda(model(), torch.ones(3))),
                                              ["multiplier", "(1, 2)", "(3,)"]),
    "multiplier tensor nan": (lambda: enter(at_lambda(model(), torch.tensor(NAN))),
                               ["multiplier", "finite", "nan"]),
    "train_head_scales lr=nan": (lambda: train_head_scales(model(), corpus(), length=8, start=1.0, steps=1,
                                                           lr=NAN, progress=False), ["lr", "got nan"]),
    # training
    "train steps=2.5": (lambda: train(model(), stream(), steps=2.5, progress=False),
                        ["steps must be a positive int; got 2.5"]),
    "train lr=0": (lambda: train(model(), stream(), steps=1, lr=0, progress=False), ["lr", "> 0", "got 0"]),
    "train warmup=-1": (lambda: train(model(), stream(), steps=1, warmup=-1, progress=False),
                        ["warmup must be an int >= 0; got -1"]),
    "train clip=0": (lambda: train(model(), stream(), steps=1, clip=0, progress=False), ["clip", "> 0", "got 0"]),
    "train on a list": (lambda: train(model(), [1, 2], steps=1, progress=False),
                        ["batch_stream", "iterator", "list"]),
    "Recipe lengths=16": (lambda: Recipe(lengths=16), ["Recipe.lengths must be a non-empty list", "got 16"]),
    "Recipe lengths='16'": (lambda: Recipe(length=None, lengths="16"),
                            ["Recipe.lengths must be a non-empty list", "got '16'"]),
    "step_time repeats=0": (lambda: step_time(model(), idx(), idx(), repeats=0),
                            ["repeats must be a positive int; got 0"]),
    # sampling and the model
    "generate tokenizer None": (lambda: generate(model(), None, "a", 2), ["tokenizer", "None"]),
    "rope_angles T=-1": (lambda: rope_angles(-1, 8), ["T must be an int >= 0; got -1"]),
    "apply_rope angles of another length": (lambda: apply_rope(torch.ones(1, 4, 8), torch.ones(3, 4)),
                                            ["angles", "(3, 4)", "(1, 4, 8)"]),
    "attend q a list": (lambda: attend([1.0], [1.0], [1.0]), ["q, k and v must be tensors", "list"]),
    "attend integer q": (lambda: attend(*[torch.ones(1, 1, 3, 4, dtype=torch.long)] * 3),
                         ["floating", "torch.int64"]),
    "attend mixed dtypes": (lambda: attend(torch.ones(1, 1, 3, 4), torch.ones(1, 1, 3, 4, dtype=torch.float64),
                                           torch.ones(1, 1, 3, 4)), ["one dtype", "torch.float32", "torch.float64"]),
    "attend causal None": (lambda: attend(*qkv(), causal=None), ["causal must be True or False; got None"]),
    "Config causal numpy bool": (lambda: Config(vocab_size=10, causal=np.True_),
                                 ["Config.causal must be True or False"]),
    "Recipe steps True": (lambda: Recipe(steps=True), ["Recipe.steps must be a positive int; got True"]),
}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_bad_value_names_the_argument_and_what_is_allowed(case, raises_naming):
    raises_naming(*CASES[case])


def finite(result) -> bool:
    if isinstance(result, dict):
        return all(finite(v) for v in result.values())
    if isinstance(result, (tuple, list)):
        return all(finite(v) for v in result)
    if torch.is_tensor(result):
        return bool(result.float().isfinite().all())
    return math.isfinite(result)


ACCEPTED = {
    "retrieval_accuracy, numpy lengths and depths": (
        lambda: retrieval_accuracy(model(), corpus(), [np.int64(16)], [np.float32(0.5)], trials=2), (1, 1)),
    "retrieval_accuracy, a range and an array": (
        lambda: retrieval_accuracy(model(), corpus(), range(16, 18), np.array([0.0, 1.0]), trials=2), (2, 2)),
    "loss_by_length, an array of lengths": (lambda: loss_by_length(model(), corpus(), np.array([16, 32]), tokens=256),
                                            None),
    "uniform_multiplier_search, a numpy grid": (
        lambda: uniform_multiplier_search(model(), corpus(), 16, np.linspace(1.0, 2.0, 2, dtype=np.float32), seed=0), None),
    "needle_attention, numpy length and depths": (
        lambda: needle_attention(model(), corpus(), np.int64(16), depths=np.array([0.5]), trials=2)["mass"], (1, 2)),
    "extension_ratio, numpy train_len": (lambda: extension_ratio(torch.ones(64), np.int64(16)), None),
    "batches, numpy sizes and rate": (
        lambda: next(batches(corpus(), task="causal", batch_size=np.int64(2), length=np.int64(16),
                             retrieval=np.float32(0.5)))[0], (2, 16)),
    "batches, a range of lengths": (lambda: next(batches(corpus(), task="causal", batch_size=2,
                                                         lengths=range(8, 9)))[0], (2, 8)),
    "retrieval_batch, numpy depth": (lambda: retrieval_batch(corpus(), corpus().val, 2, 16, depth=np.float32(0.5))[0],
                                     (2, 16)),
    "attend, numpy n and window": (lambda: attend(*qkv(), norm="relu2", n=np.int64(4), window=np.int64(3))[0],
                                   (1, 2, 5, 8)),
    "logn_factor, numpy L": (lambda: logn_factor(5, np.int64(16), True), (5,)),
    "the model, a numpy logn_base": (lambda: model()(idx(), logn_base=np.float32(16)),
                                     (2, 16, default_corpus().tokenizer.vocab_size)),
    "multiplier, a numpy number": (lambda: enter(at_lambda(model(), np.float32(1.2))) or 1.0, None),
    "multiplier, one per head": (lambda: enter(at_lambda(model(), torch.tensor([1.0, 2.0]))) or 1.0, None),
    "generate, numpy numbers": (lambda: len(generate(model(), corpus().tokenizer, "a", np.int64(2),
                                                     temperature=np.float32(0.5))), None),
    "length_rule, numpy n and L = 1 (lesson 8)": (lambda: length_rule("nope_fit", np.float32(2.0), 1), None),
    "fit_log_slope, arrays": (lambda: fit_log_slope(np.array([2.0, 4.0]), np.array([1.2, 1.4])), None),
    "bootstrap_interval of a list": (lambda: bootstrap_interval([1.0, 2.0, 3.0], lambda rows: rows.mean()), None),
    "bootstrap_interval of exact-match rows (bool)": (
        lambda: bootstrap_interval(torch.tensor([True, False, True, True]), torch.mean), None),
    "position_probe_r2": (lambda: position_probe_r2(torch.randn(6, 8, 4), 4), None),
    "Config and RopeScaling of numpy numbers, keyed": (
        lambda: cache_key(Config(vocab_size=np.int64(104), max_len=np.int64(64),
                                 rope_scaling=RopeScaling("pi", np.float32(2.0), np.int64(16))),
                          Recipe(lengths=None, length=np.int64(16)), corpus()) and 1.0, None),
}


@pytest.mark.parametrize("case", ACCEPTED, ids=str)
def test_numpy_numbers_arrays_and_ranges_are_accepted(case):
    call, shape = ACCEPTED[case]
    result = call()
    assert finite(result), result
    if shape is not None:
        assert tuple(result.shape) == shape, result.shape


def test_a_bool_statistic_row_gives_the_fraction():
    low, high = bootstrap_interval(torch.tensor([True] * 9 + [False]), torch.mean, resamples=200)
    assert 0.5 <= low <= 0.9 <= high <= 1.0
