"""The scorecard (minilm.scorecard) on tiny models: a model that cannot retrieve scores 0, a model
that copies the key scores 1, seeds summarise to a mean and an interval, and bad input is named."""

import matplotlib
import pytest
import torch

from minilm import LM, Config, default_corpus
from minilm.data import RETRIEVAL_DIGITS
from minilm.plots import plot_scorecard
from minilm.scorecard import MULTIPLES, card_table, scorecard

matplotlib.use("Agg")
CORPUS = default_corpus()
L = 8


def tiny(seed=0):
    torch.manual_seed(seed)
    model = LM(Config(vocab_size=CORPUS.tokenizer.vocab_size, d_model=16, n_layer=2, n_head=2,
                      pos="nope")).eval()
    model.vocabulary = CORPUS.tokenizer.symbols
    return model


class KeyCopier(LM):
    """A causal reader that finds the last "@" and writes the key's digits after it: at answer
    position T - D + k it puts all its weight on x[@ + 1 + k], which it has already read."""

    def forward(self, idx, **setting):
        logits = torch.zeros(*idx.shape, self.config.vocab_size)
        at = CORPUS.tokenizer.encode("@")[0]
        T = idx.shape[1]
        for b, row in enumerate(idx):
            needle = (row == at).nonzero().max().item()
            for k in range(RETRIEVAL_DIGITS):
                logits[b, T - RETRIEVAL_DIGITS + k, row[needle + 1 + k]] = 10.0
        return logits


def copier():
    model = KeyCopier(tiny().config).eval()
    model.vocabulary = CORPUS.tokenizer.symbols
    return model


def test_a_model_that_cannot_retrieve_scores_0_and_one_that_copies_the_key_scores_1():
    card = scorecard({("untrained", 0): tiny(), ("copier", 0): copier()}, CORPUS, L,
                     measures=("retrieval", "text retrieval"), trials=8)
    for measure in ("retrieval", "text retrieval"):
        assert [card["untrained"][measure][m]["mean"] for m in MULTIPLES] == [0.0] * 5
        assert [card["copier"][measure][m]["mean"] for m in MULTIPLES] == [1.0] * 5


def test_seeds_of_a_name_give_a_mean_and_an_interval_one_seed_its_value():
    models = {("two", 0): tiny(0), ("two", 1): tiny(1), ("one", 0): tiny(2)}
    card = scorecard(models, CORPUS, L, measures=("text loss", "drift"))
    two, one = card["two"]["text loss"][2], card["one"]["text loss"][2]
    assert two["low"] < two["mean"] < two["high"] and len(two["seeds"]) == 2
    assert one["low"] is None and one["mean"] == one["seeds"][0]
    assert list(card["two"]["drift"]) == [16] and card["two"]["drift"][16]["mean"] > 0
    table = card_table(card)
    assert "two, text loss" in table and "one, drift" in table and "16L" in table
    fig = plot_scorecard(card)
    assert len(fig.axes) == 2


def test_the_scorecard_is_the_measurements_it_names():
    """Each cell is measure.py's own number: the text loss at 2L is loss_by_length's."""
    from minilm.measure import loss_by_length
    model = tiny()
    card = scorecard({("m", 0): model}, CORPUS, L, measures=("text loss",))
    assert card["m"]["text loss"][2]["mean"] == loss_by_length(model, CORPUS, [2 * L])[2 * L]


@pytest.mark.parametrize("models, measures, words", [
    ({}, ("text loss",), ["models", "non-empty dict", "(name, seed)"]),
    ({"NoPE": None}, ("text loss",), ["models", "(name, seed)"]),
    (None, ("speed",), ["unknown measure 'speed'", "'text loss'", "'drift'"]),
    (None, (), ["measures", "non-empty"]),
])
def test_bad_input_is_named(models, measures, words, raises_naming):
    models = {("m", 0): tiny()} if models is None else models
    raises_naming(lambda: scorecard(models, CORPUS, L, measures=measures), words)
