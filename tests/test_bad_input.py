"""Every bad value raises ValueError at the call that receives it, naming the value and what is allowed.

One table: (the call, words its message must hold). Each call here was accepted before
(then wrong or crashing later, or with torch's bare message), or raised something else.
"""

import math

import pytest
import torch

from minilm.data import RETRIEVAL_DIGITS, Corpus, batches, default_corpus, mlm_batch, retrieval_batch
from minilm.measure import (bootstrap_interval, bucket_means, evaluate, extension_ratio, growth_exponent,
                            loss_by_length, needle_attention, retrieval_accuracy)
from minilm.measure import log_row_sums
from minilm.model import LM, Config, RopeScaling, attend, attention_weights, rope_angles
from minilm.scaling import (fit_per_position, at_lambda, train_head_scales, uniform_multiplier_by_position,
                            uniform_multiplier_search)
from minilm.cache import pretrained
from minilm.sampling import generate
from minilm.training import Recipe

VOCAB = 20
NAN, INF = float("nan"), float("inf")


def config(**overrides):
    return Config(**{"vocab_size": VOCAB, "d_model": 16, "n_layer": 1, "n_head": 2, **overrides})


def tiny(**overrides):
    torch.manual_seed(0)
    return LM(config(**overrides)).eval()


def corpus_model():
    corpus = default_corpus()
    torch.manual_seed(0)
    return corpus, LM(Config(vocab_size=corpus.tokenizer.vocab_size, d_model=16, n_layer=1, n_head=2)).eval()


def qkv(T=5):
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(1, 2, T, 8, generator=g) for _ in range(3))


def scores(T=5):
    q, k, _ = qkv(T)
    return q @ k.transpose(-1, -2)


def ids(*values):
    return torch.tensor([list(values)])


def with_nan_multiplier():
    model = tiny()
    with torch.no_grad():
        model.multiplier[0, 1] = NAN
    return model(ids(1, 2, 3))


def enter_nan_multiplier():
    with at_lambda(tiny(), NAN):
        pass


def from_file_latin1(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("café au lait ".encode("latin-1") * 10)
    return Corpus.from_file(path)


TINY_RECIPE = dict(steps=2, batch_size=2, length=8, warmup=1)

CASES = {
    # Config: each value used to be accepted and fail (or do nothing) later
    "Config rope_base=0": (lambda: config(rope_base=0), ["rope_base", "> 1", "got 0"]),
    "Config rope_base<0": (lambda: config(rope_base=-10.0), ["rope_base", "got -10.0"]),
    "Config rope_base=nan": (lambda: config(rope_base=NAN), ["rope_base", "finite", "got nan"]),
    "Config rope_base str": (lambda: config(rope_base="10000"), ["rope_base", "got '10000'"]),
    "Config causal=None": (lambda: config(causal=None), ["Config.causal", "True or False", "got None"]),
    "Config learn_multiplier='yes'": (lambda: config(learn_multiplier="yes"),
                                       ["Config.learn_multiplier", "True or False", "got 'yes'"]),
    "Config rope_scaling='pi'": (lambda: config(rope_scaling="pi"), ["rope_scaling", "RopeScaling", "got 'pi'"]),
    "Config rope_scaling dict, bad keys": (lambda: config(rope_scaling={"kind": "pi", "factr": 2.0, "train_len": 8}),
                                           ["rope_scaling", "'factor'", "'factr'"]),
    "Config transformer d_k": (lambda: config(d_k=32), ["Config.d_k=32", "block='transformer'", "default 64"]),
    "Config transformer expansion": (lambda: config(expansion=4),
                                     ["Config.expansion=4", "block='transformer'", "default 2"]),
    "Config NoPE rope_base": (lambda: config(pos="nope", rope_base=500.0),
                              ["Config.rope_base=500.0", "pos='nope'", "default 10000.0"]),
    "Config logn_base=inf": (lambda: config(logn_base=INF), ["logn_base", "finite number > 1", "got inf"]),
    "Config NTK, head width 2": (lambda: config(d_model=4, rope_scaling=RopeScaling("ntk", 2.0, 16)),
                                 ["NTK", "query width > 2", "got 2"]),
    "Config.from_dict misspelled key": (lambda: Config.from_dict({"vocab_size": VOCAB, "n_layers": 3}),
                                        ["unknown key(s) 'n_layers'", "allowed:", "n_layer"]),
    "Config.from_dict of a list": (lambda: Config.from_dict([("vocab_size", VOCAB)]), ["needs a dict", "list"]),
    "Config.from_dict no vocab_size": (lambda: Config.from_dict({"d_model": 16}), ["'vocab_size'", "required"]),
    # RoPE
    "RopeScaling factor=inf": (lambda: RopeScaling("pi", INF, 16), ["factor", "finite number >= 1", "got inf"]),
    "RopeScaling factor=nan": (lambda: RopeScaling("yarn", NAN, 16), ["factor", "finite", "got nan"]),
    "rope_angles NTK dim 2": (lambda: rope_angles(4, 2, scaling=RopeScaling("ntk", 2.0, 16)),
                              ["NTK", "query width > 2"]),
    "rope_angles odd dim": (lambda: rope_angles(4, 7), ["query width 7", "even"]),
    "rope_angles base=1": (lambda: rope_angles(4, 8, base=1.0), ["rope_base", "> 1", "got 1.0"]),
    # attention
    "attention_weights norm typo": (lambda: attention_weights(scores(), norm="sofmax"),
                                    ["unknown attention norm 'sofmax'", "'relu2_norm'"]),
    "attention_weights relu2 without n": (lambda: attention_weights(scores(), norm="relu2"),
                                          ["n=None", "positive int", "'length'"]),
    "log_row_sums norm typo": (lambda: log_row_sums(scores(), norm="sofmax"), ["unknown attention norm 'sofmax'"]),
    "attend returns a typo": (lambda: attend(*qkv(), returns="weight"),
                              ["returns", "'weight'", "'weights'", "'scores'"]),
    "LM returns True": (lambda: tiny()(ids(1, 2), returns=True), ["returns", "True", "'weights'"]),
    # the model
    "LM id >= vocab": (lambda: tiny()(ids(1, VOCAB, 3)), ["token id 20", "[0, 20)", "vocab_size=20"]),
    "LM id < 0": (lambda: tiny()(ids(-1, 2)), ["token id -1", "[0, 20)"]),
    "LM float ids": (lambda: tiny()(torch.ones(1, 3)), ["LongTensor", "torch.float32"]),
    "LM ids as a list": (lambda: tiny()([[1, 2]]), ["LongTensor", "list"]),
    "LM nan temperature": (with_nan_multiplier, ["multiplier must be finite", "nan"]),
    "LM rope_scaling='pi'": (lambda: tiny()(ids(1, 2), rope_scaling="pi"), ["rope_scaling", "RopeScaling", "'pi'"]),
    # batches: checked at the call, before any next()
    "batches batch_size=0": (lambda: batches(default_corpus(), task="causal", batch_size=0, length=8),
                             ["batch_size must be a positive int; got 0"]),
    "batches lengths=[]": (lambda: batches(default_corpus(), task="causal", batch_size=2, lengths=[]),
                           ["lengths must be a non-empty list", "got []"]),
    "batches lengths with 0": (lambda: batches(default_corpus(), task="causal", batch_size=2, lengths=[8, 0]),
                               ["each of lengths must be a positive int; got 0"]),
    "batches bad task, no next()": (lambda: batches(default_corpus(), task="translate", batch_size=2, length=8),
                                    ["unknown task 'translate'"]),
    "batches bad split, no next()": (lambda: batches(default_corpus(), task="causal", batch_size=2, length=8,
                                                     split="test"), ["unknown split 'test'", "'val'"]),
    "batches seed str": (lambda: batches(default_corpus(), task="causal", batch_size=2, length=8, seed="1"),
                         ["seed must be an int", "got '1'"]),
    "batches longer than the split": (lambda: batches(default_corpus(), task="causal", batch_size=2,
                                                      length=10 ** 6, split="val"), ["length 1000000", "val split"]),
    "batches mlm with retrieval": (lambda: batches(default_corpus(), task="mlm", batch_size=2, length=8,
                                                   retrieval=0.5), ["retrieval", "causal", "task='mlm'"]),
    "mlm_batch mask_prob=1.5": (lambda: mlm_batch(default_corpus().train, 2, 8, 0, 10, mask_prob=1.5),
                                ["mask_prob", "[0, 1]", "got 1.5"]),
    # Recipe: checked at construction
    "Recipe batch_size=0": (lambda: Recipe(batch_size=0), ["Recipe.batch_size must be a positive int; got 0"]),
    "Recipe steps=-1": (lambda: Recipe(steps=-1), ["Recipe.steps must be a positive int; got -1"]),
    "Recipe steps=0": (lambda: Recipe(steps=0), ["Recipe.steps", "got 0"]),
    "Recipe lr=0": (lambda: Recipe(lr=0.0), ["Recipe.lr", "> 0", "got 0.0"]),
    "Recipe lr=nan": (lambda: Recipe(lr=NAN), ["Recipe.lr", "got nan"]),
    "Recipe task": (lambda: Recipe(task="lm"), ["unknown Recipe.task 'lm'", "'mlm'"]),
    "Recipe length and lengths": (lambda: Recipe(lengths=(8, 16)), ["exactly one of length", "length=64"]),
    "Recipe lengths=()": (lambda: Recipe(length=None, lengths=()), ["Recipe.lengths", "non-empty", "got ()"]),
    "Recipe warmup=-1": (lambda: Recipe(warmup=-1), ["Recipe.warmup must be an int >= 0; got -1"]),
    "Recipe weight_decay<0": (lambda: Recipe(weight_decay=-0.1), ["Recipe.weight_decay", ">= 0", "got -0.1"]),
    "Recipe length=2.5": (lambda: Recipe(length=2.5), ["Recipe.length must be a positive int; got 2.5"]),
    "Recipe retrieval=1.5": (lambda: Recipe(retrieval=1.5), ["Recipe.retrieval", "[0, 1]", "got 1.5"]),
    "pretrained recipe not a Recipe": (lambda: pretrained(config(), "fast"), ["a Config and a Recipe", "str"]),
    "pretrained use_cache='no'": (lambda: pretrained(config(vocab_size=default_corpus().tokenizer.vocab_size),
                                                     Recipe(**TINY_RECIPE), use_cache="no", progress=False),
                                  ["use_cache must be True or False", "'no'"]),
    # generate
    "generate top_k=0": (lambda: generate(*corpus_model()[::-1], "def ", 3, top_k=0), ["top_k", "got 0"]),
    "generate top_k=-1": (lambda: generate(*corpus_model()[::-1], "def ", 3, top_k=-1), ["top_k", "got -1"]),
    "generate temperature=nan": (lambda: generate(*corpus_model()[::-1], "def ", 3, temperature=NAN),
                                 ["temperature", "finite", "got nan"]),
    "generate temperature str": (lambda: generate(*corpus_model()[::-1], "def ", 3, temperature="1"),
                                 ["temperature", "got '1'"]),
    "generate empty prompt": (lambda: generate(*corpus_model()[::-1], "", 3), ["prompt", "non-empty", "got ''"]),
    "generate context=-3": (lambda: generate(*corpus_model()[::-1], "def ", 3, context=-3),
                            ["context must be a positive int; got -3"]),
    "generate context=0": (lambda: generate(*corpus_model()[::-1], "def ", 3, context=0),
                           ["context must be a positive int; got 0"]),
    "generate context > max_len": (lambda: generate(*corpus_model()[::-1], "def ", 3, context=10 ** 5),
                                   ["context", "max_len=8192", "got 100000"]),
    "generate max_new_tokens=-1": (lambda: generate(*corpus_model()[::-1], "def ", -1),
                                   ["max_new_tokens must be an int >= 0; got -1"]),
    # measurement
    "evaluate mlm, no targets": (lambda: evaluate(corpus_model()[1], default_corpus(), task="mlm", length=1,
                                                  batch_size=1, n_batches=1), ["no mlm targets", "1 batches of 1 x 1"]),
    "evaluate n_batches=0": (lambda: evaluate(corpus_model()[1], default_corpus(), task="causal", length=8,
                                              n_batches=0), ["n_batches must be a positive int; got 0"]),
    "extension_ratio, curve of length L": (lambda: extension_ratio(torch.ones(16), 16),
                                           ["longer than train_len=16", "(16,)"]),
    "extension_ratio bucket=0": (lambda: extension_ratio(torch.ones(64), 16, bucket=0), ["bucket", "got 0"]),
    "growth_exponent, one point": (lambda: growth_exponent([8], [3.0]), ["two or more", "[8.0]"]),
    "growth_exponent, value 0": (lambda: growth_exponent([8, 16], [0.0, 1.0]), ["values", "> 0", "[0.0, 1.0]"]),
    "growth_exponent, lengths differ": (lambda: growth_exponent([8, 16, 32], [1.0, 2.0]), ["as many ns as values"]),
    "growth_exponent, equal ns": (lambda: growth_exponent([8, 8], [1.0, 2.0]), ["two different ns"]),
    "bucket_means bucket=0": (lambda: bucket_means(torch.ones(8), 0), ["bucket must be a positive int; got 0"]),
    "loss_by_length lengths=[]": (lambda: loss_by_length(corpus_model()[1], default_corpus(), []),
                                  ["lengths must be a non-empty list", "got []"]),
    "retrieval_accuracy trials=0": (lambda: retrieval_accuracy(corpus_model()[1], default_corpus(), [16], [0.5],
                                                               trials=0), ["trials must be a positive int; got 0"]),
    "retrieval_accuracy lengths=[]": (lambda: retrieval_accuracy(corpus_model()[1], default_corpus(), [], [0.5]),
                                      ["lengths must be a non-empty list", "got []"]),
    "retrieval_accuracy depths=[]": (lambda: retrieval_accuracy(corpus_model()[1], default_corpus(), [16], []),
                                     ["depths must be a non-empty list", "got []"]),
    "needle_attention length=0": (lambda: needle_attention(corpus_model()[1], default_corpus(), 0),
                                  ["length must be a positive int; got 0"]),
    "bootstrap_interval resamples=0": (lambda: bootstrap_interval(torch.ones(4), torch.mean, resamples=0),
                                       ["resamples must be a positive int; got 0"]),
    "bootstrap_interval level=0": (lambda: bootstrap_interval(torch.ones(4), torch.mean, level=0),
                                   ["level", "> 0", "got 0"]),
    # data
    "Corpus with NUL": (lambda: Corpus("ab\x00cd" * 10, name="nul.txt"), ["'nul.txt'", "NUL", "position 2"]),
    "retrieval_batch too short": (lambda: retrieval_batch(default_corpus(), default_corpus().train, 2,
                                                          2 * RETRIEVAL_DIGITS),
                                  [f"length {2 * RETRIEVAL_DIGITS} is too short", "at least"]),
    "retrieval_batch depth=1.5": (lambda: retrieval_batch(default_corpus(), default_corpus().train, 2, 16, depth=1.5),
                                  ["depth", "[0, 1]", "got 1.5"]),
    # temperature scaling
    "uniform search, empty grid": (lambda: uniform_multiplier_search(corpus_model()[1], default_corpus(), 16, [], seed=0),
                                   ["grid must be a non-empty list", "got []"]),
    "uniform search, nan in grid": (lambda: uniform_multiplier_search(corpus_model()[1], default_corpus(), 16,
                                                                       [1.0, NAN], seed=0), ["lambda of grid", "got nan"]),
    "uniform by position, empty grid": (lambda: uniform_multiplier_by_position(corpus_model()[1], default_corpus(),
                                                                                16, [], seed=0),
                                        ["grid must be a non-empty list", "got []"]),
    "fit_per_position, table of the wrong shape": (lambda: fit_per_position(torch.ones(3, 32), [1.0, 1.5], 16,
                                                                            bucket=4),
                                                   ["one row per lambda of grid (2)", "L=16", "(3, 32)"]),
    "fit_per_position bucket=0": (lambda: fit_per_position(torch.ones(2, 32), [1.0, 1.5], 16, bucket=0),
                                  ["bucket must be a positive int; got 0"]),
    "temperature context nan": (enter_nan_multiplier, ["multiplier must be a finite number", "got nan"]),
    "head scales start=nan": (lambda: train_head_scales(corpus_model()[1], default_corpus(), length=8, start=NAN,
                                                        steps=1, progress=False), ["start", "finite", "got nan"]),
}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_bad_value_raises_a_clear_error_at_the_call(case, raises_naming):
    raises_naming(*CASES[case])


def test_a_non_utf8_file_is_named(tmp_path):
    with pytest.raises(ValueError) as info:
        from_file_latin1(tmp_path)
    assert "latin1.txt" in str(info.value) and "not UTF-8" in str(info.value)


def test_defaults_and_lesson_configs_still_pass():
    # what the checks must not refuse: defaults, a GAU's own fields, values read back from to_dict()
    config(d_k=64, expansion=2)
    Config(vocab_size=VOCAB, block="gau", n_head=1, d_k=16, expansion=3, norm="relu2", n=24)
    Config(vocab_size=VOCAB, pos="nope", rope_base=10000.0)
    scaled = config(rope_scaling=RopeScaling("ntk", 2.0, 16), logn_base=64)
    assert Config.from_dict(scaled.to_dict()) == scaled
    Recipe(length=None, lengths=(8, 16))
    assert math.isfinite(growth_exponent([8, 16], [1.0, 2.0]))
