"""Results a user would trust and should not: a diverged model cached, a bidirectional model
trained on the token it predicts, two cache entries for one config, a model measured with another
corpus's tokenizer, numbers from arguments that mean nothing. Each is an error now, where it happens.
"""

import math

import numpy as np
import pytest
import torch

import minilm
import minilm.training
from minilm import Config, Corpus, Recipe, default_corpus, pretrained
from minilm.cache import cache_key, cache_path
from minilm.measure import (evaluate, loss_by_length, needle_attention, ngram_baselines, position_probe_r2,
                            retrieval_accuracy)
from minilm.model import LM, RopeScaling
from minilm.sampling import generate
from minilm.scaling import train_head_scales, uniform_multiplier_search

VOCAB = default_corpus().tokenizer.vocab_size
TINY = Recipe(steps=3, batch_size=4, length=16, warmup=1)
# Another text, with fewer symbols than the default corpus: its ids are all in range of a model
# trained on the default corpus, so nothing but a vocabulary check tells them apart.
OTHER = Corpus("the quick brown fox 0123456789 @? jumps over the lazy dog.\n" * 60, name="fox.txt")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MINILM_CACHE", str(tmp_path / "cache"))


def small(**overrides):
    return Config(**{"vocab_size": VOCAB, "d_model": 16, "n_layer": 1, "n_head": 2, **overrides})


def cached_files():
    folder = minilm.cache.cache_dir()
    return sorted(p.name for p in folder.glob("*.pt")) if folder.exists() else []


# ---------------------------------------------------------------------------- 1. divergence


def test_a_diverged_run_stops_naming_the_step_and_lr_and_caches_nothing():
    # the case: the history was all nan from step 3, and the nan weights were cached
    with pytest.raises(FloatingPointError) as info:
        pretrained(small(), Recipe(steps=30, batch_size=4, length=16, lr=1e4), progress=False)
    message = str(info.value)
    for word in ("diverged at step", "lr=10000.0", "lower"):
        assert word in message, message
    assert cached_files() == []


def test_weights_that_end_non_finite_after_a_finite_last_loss_are_caught():
    model = LM(small())
    stream = minilm.data.batches(default_corpus(), task="causal", batch_size=2, length=16)

    def poison(m):
        m.embed.weight[0, 0] = float("inf")  # the last step's update: its loss was finite

    with pytest.raises(FloatingPointError, match=r"(?s)diverged.*embed\.weight"):
        minilm.training.train(model, stream, steps=1, after_step=poison, progress=False)


def test_evaluate_of_a_model_with_nan_weights_says_so_instead_of_blaming_the_targets():
    model = LM(small()).eval()
    with torch.no_grad():
        model.blocks[0].to_qkv.weight.fill_(float("nan"))
    with pytest.raises(ValueError) as info:
        evaluate(model, default_corpus(), task="causal", length=16)
    assert "not finite" in str(info.value) and "masked LM" not in str(info.value), str(info.value)


# ---------------------------------------------------------------------------- 2. target leakage


@pytest.mark.parametrize("recipe", [Recipe(steps=3, batch_size=4, length=16),
                                    Recipe(steps=3, batch_size=4, length=16, retrieval=0.5)],
                         ids=["causal task", "retrieval"])
def test_a_bidirectional_model_is_not_trained_on_the_token_it_predicts(recipe, monkeypatch):
    monkeypatch.setattr(minilm.training, "train", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(ValueError) as info:
        pretrained(small(causal=False), recipe, progress=False)
    for word in ("causal=False", "task='causal'", "sees the token it predicts"):
        assert word in str(info.value), str(info.value)
    with pytest.raises(ValueError, match="sees the token it predicts"):
        minilm.pretrained_many({"leaky": (small(causal=False), recipe)}, progress=False)


def test_a_bidirectional_model_is_not_measured_on_the_token_it_predicts():
    model = LM(small(causal=False)).eval()
    corpus = default_corpus()
    for call in (lambda: evaluate(model, corpus, task="causal", length=16),
                 lambda: loss_by_length(model, corpus, [16], tokens=256),
                 lambda: retrieval_accuracy(model, corpus, [16], [0.5], trials=2),
                 lambda: needle_attention(model, corpus, 16, depths=[0.5], trials=2)):
        with pytest.raises(ValueError, match="sees the token it predicts"):
            call()
    assert 0 <= evaluate(model, corpus, task="mlm", length=16)["accuracy"] <= 1  # its own task


# ---------------------------------------------------------------------------- 3. one cache entry per config


@pytest.mark.parametrize("pair", [
    lambda: (small(logn_base=64), small(logn_base=64.0)),
    lambda: (small(rope_base=10000), small(rope_base=10000.0)),
    lambda: (small(rope_scaling=RopeScaling("pi", 2, 16)), small(rope_scaling=RopeScaling("pi", 2.0, 16))),
    lambda: (small(logn_base=np.float32(64)), small(logn_base=64.0)),
    lambda: (small(d_model=np.int64(16)), small()),
], ids=["logn_base", "rope_base", "rope_scaling factor", "numpy float", "numpy int"])
def test_equal_configs_give_one_cache_key(pair):
    a, b = pair()
    assert a == b
    # the file, not only the key: 64 == 64.0 in a dict, but they are written "64" and "64.0"
    assert cache_path(cache_key(a, TINY, default_corpus())) == cache_path(cache_key(b, TINY, default_corpus()))


@pytest.mark.parametrize("pair", [
    lambda: (Recipe(lr=1), Recipe(lr=1.0)),
    lambda: (Recipe(weight_decay=0), Recipe(weight_decay=0.0)),
    lambda: (Recipe(retrieval=1), Recipe(retrieval=1.0)),
    lambda: (Recipe(length=None, lengths=[16, 32]), Recipe(length=None, lengths=(16, 32))),
    lambda: (Recipe(length=None, lengths=range(16, 18)), Recipe(length=None, lengths=(16, 17))),
    lambda: (Recipe(steps=np.int64(500), lr=np.float32(0.5)), Recipe(steps=500, lr=0.5)),
], ids=["lr", "weight_decay", "retrieval", "lengths list", "lengths range", "numpy numbers"])
def test_equal_recipes_give_one_cache_key_and_are_usable_as_dict_keys(pair):
    a, b = pair()
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    assert cache_path(cache_key(small(), a, default_corpus())) == cache_path(cache_key(small(), b, default_corpus()))


def test_a_config_cannot_be_changed_after_its_checks():
    config = small()
    with pytest.raises(AttributeError):
        config.n_head = 3  # d_model 16 / 3 heads: it would have passed unchecked
    assert config.n_head == 2 and hash(config) == hash(small())


# ---------------------------------------------------------------------------- 4. a model knows its vocabulary


def test_a_pretrained_model_refuses_a_corpus_with_another_vocabulary():
    model, _ = pretrained(small(), TINY, progress=False)
    again, _ = pretrained(small(), TINY, progress=False)  # loaded from the cache: it knows it too
    corpus = default_corpus()
    assert OTHER.tokenizer.vocab_size < VOCAB  # every id in range: silent without the check
    calls = {
        "evaluate": lambda m: evaluate(m, OTHER, task="causal", length=16),
        "loss_by_length": lambda m: loss_by_length(m, OTHER, [16], tokens=256),
        "retrieval_accuracy": lambda m: retrieval_accuracy(m, OTHER, [16], [0.5], trials=2),
        "needle_attention": lambda m: needle_attention(m, OTHER, 16, depths=[0.5], trials=2),
        "uniform_multiplier_search": lambda m: uniform_multiplier_search(m, OTHER, 16, [1.0], seed=0),
        "train_head_scales": lambda m: train_head_scales(m, OTHER, length=16, start=1.0, steps=1, progress=False),
        "generate": lambda m: generate(m, OTHER.tokenizer, "the ", 2),
    }
    for name, call in calls.items():
        for m in (model, again):
            with pytest.raises(ValueError) as info:
                call(m)
            message = str(info.value)
            assert "vocabulary" in message and str(VOCAB) in message, (name, message)
            assert str(OTHER.tokenizer.vocab_size) in message, (name, message)
    assert math.isfinite(evaluate(model, corpus, task="causal", length=16)["loss"])  # its own corpus
    hand_made = LM(small()).eval()  # knows no vocabulary: not checked
    assert math.isfinite(evaluate(hand_made, OTHER, task="causal", length=16)["loss"])


def test_an_id_out_of_range_hints_at_another_corpus():
    model = LM(small(vocab_size=10))
    with pytest.raises(ValueError, match="token id 12 is out of range.*another corpus"):
        model(torch.tensor([[1, 12]]))


# ---------------------------------------------------------------------------- 5. numbers from meaningless arguments


@pytest.mark.parametrize("steps", [-5, 0, 2.5])
def test_head_scaling_with_no_steps_raises(steps):
    model = LM(small()).eval()
    with pytest.raises(ValueError, match=f"steps must be a positive int; got {steps}"):
        train_head_scales(model, default_corpus(), length=16, start=1.0, steps=steps, progress=False)


@pytest.mark.parametrize("hidden, n_train, words", [
    (torch.randn(4, 8, 5), 0, ["n_train", "got 0"]),
    (torch.randn(4, 8, 5), 4, ["n_train", "got 4", "sequences to score"]),
    (torch.randn(4, 1, 5), 2, ["hidden", "at least 2 positions"]),
    (torch.randn(8, 5), 2, ["hidden", "(N, T, d)", "(8, 5)"]),
])
def test_a_position_probe_without_data_to_fit_or_score_raises(hidden, n_train, words, raises_naming):
    raises_naming(lambda: position_probe_r2(hidden, n_train), words)


@pytest.mark.parametrize("text", ["ab", "abc"], ids=["2 characters", "3 characters"])
def test_ngram_baselines_of_a_corpus_too_short_to_count_raise(text):
    with pytest.raises(ValueError, match="ngram_baselines needs"):
        ngram_baselines(Corpus(text, name="short.txt"))
    with pytest.raises(ValueError, match="holds no text"):  # an empty one is refused where it is made
        Corpus("", name="short.txt")
