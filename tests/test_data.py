"""Corpus, tokenizer and batches (retrieval windows are tested in test_retrieval.py)."""

import pytest
import torch

from minilm import Corpus, default_corpus
from minilm.data import batches
from minilm.data import IGNORE_INDEX, MASK


def test_default_corpus_ships_with_python_and_splits_90_10():
    corpus = default_corpus()
    assert corpus.name == "pydoc_data.topics"
    assert len(corpus.text) > 300_000
    assert len(corpus.train) == int(0.9 * len(corpus.text))
    assert len(corpus.train) + len(corpus.val) == len(corpus.text)
    assert corpus.tokenizer.vocab_size == len(set(corpus.text)) + 1  # + the mask symbol
    assert corpus.tokenizer.chars[corpus.tokenizer.mask_id] == MASK
    assert Corpus.python_docs().fingerprint == corpus.fingerprint  # deterministic


def test_tokenizer_round_trips_and_rejects_unknown_characters():
    tok = default_corpus().tokenizer
    text = "def f(x):\n    return x ** 2"
    assert tok.decode(tok.encode(text)) == text
    with pytest.raises(ValueError, match="not in the vocabulary: '☃'"):
        tok.encode("snow ☃")


def test_any_text_file_can_be_the_corpus(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text("abcabcabd" * 20, encoding="utf-8")
    corpus = Corpus.from_file(path)
    assert corpus.tokenizer.vocab_size == 5 and corpus.name == "tiny.txt"
    x, y = next(batches(corpus, task="causal", batch_size=2, length=8))
    assert x.shape == (2, 8)


def test_causal_batch_targets_are_inputs_shifted_by_one():
    x, y = next(batches(default_corpus(), task="causal", batch_size=4, length=32, seed=3))
    assert x.shape == y.shape == (4, 32)
    assert torch.equal(x[:, 1:], y[:, :-1])


def test_batches_are_seeded():
    corpus = default_corpus()
    a = next(batches(corpus, task="causal", batch_size=4, length=16, seed=5))
    b = next(batches(corpus, task="causal", batch_size=4, length=16, seed=5))
    c = next(batches(corpus, task="causal", batch_size=4, length=16, seed=6))
    assert torch.equal(a[0], b[0]) and not torch.equal(a[0], c[0])


def test_mlm_batch_masks_15_percent_bert_style():
    corpus = default_corpus()
    tok = corpus.tokenizer
    x, y = next(batches(corpus, task="mlm", batch_size=64, length=128, seed=0))
    targets = y != IGNORE_INDEX
    assert 0.13 < targets.float().mean() < 0.17
    masked = x == tok.mask_id
    assert not (masked & ~targets).any()                 # only targets are masked
    assert 0.75 < masked[targets].float().mean() < 0.85  # 80% of targets
    kept = (x == y) & targets
    assert 0.06 < kept.float().sum() / targets.sum() < 0.16  # 10% kept (+ random hits)


def test_mixed_length_batches_use_every_length():
    stream = batches(default_corpus(), task="causal", batch_size=2, lengths=[16, 32, 64], seed=0)
    seen = {next(stream)[0].shape[1] for _ in range(30)}
    assert seen == {16, 32, 64}


@pytest.mark.parametrize("kwargs,message", [
    (dict(task="causal", length=16, lengths=[8]), "exactly one of length"),
    (dict(task="causal"), "exactly one of length"),
    (dict(task="translate", length=16), "unknown task 'translate'"),
    (dict(task="causal", length=0), "length must be a positive int; got 0"),
])
def test_bad_batch_arguments_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        next(batches(default_corpus(), batch_size=2, **kwargs))
