"""Round three of bad input (issue 26), in the weight code (model.py, data.py): multipliers that are
nan, inf or overflow, corpora that are empty or start with a byte-order mark, random filler on a
corpus without its letters, and a random-filler stream on a corpus too short for text windows."""

import pytest
import torch

from minilm import Config, Corpus, default_corpus
from minilm.data import RANDOM_FILLER, batches, retrieval_rows
from minilm.model import LM, position_rule

NAN, INF = float("nan"), float("inf")


def tiny():
    torch.manual_seed(0)
    return LM(Config(vocab_size=12, d_model=16, n_layer=1, n_head=2, pos="nope")).eval()


def test_a_position_slope_whose_multipliers_overflow_is_refused_not_nan():
    idx = torch.tensor([list(range(1, 12))])
    with pytest.raises(ValueError, match=r"slope c must be at most 3.4e\+38 .* \(float32\) can hold; got 1e\+39"):
        tiny()(idx, position_rule=(1e39, 8))  # a float32 c is inf, and inf x ln(n_i / L) inf or nan
    with pytest.raises(ValueError, match=r"slope c=3e\+38 multiplies the logits at length 32 by 4.16e\+38, more"):
        position_rule(32, 3e38, 8, True)  # 1 + c ln 4; at length 24, 1 + c ln 3 = 3.3e38 still fits
    assert position_rule(24, 3e38, 8, True).isfinite().all()
    assert tiny()(idx, position_rule=(0.5, 8)).isfinite().all()  # the control: a slope float32 holds


def test_an_empty_corpus_is_refused_where_it_is_made(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("")
    with pytest.raises(ValueError, match=r"corpus 'empty.txt' holds no text \(0 characters\)"):
        Corpus.from_file(path)
    with pytest.raises(ValueError, match="corpus 'x' holds no text"):
        Corpus("", name="x")


def test_a_byte_order_mark_is_not_a_symbol(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffhello world".encode("utf-8"))
    corpus = Corpus.from_file(path)
    assert corpus.text == "hello world" and "\ufeff" not in corpus.tokenizer.symbols


def test_random_filler_on_a_corpus_without_the_letters_names_what_it_needs():
    corpus = Corpus("@?0123456789 ABC abde " * 50, name="few letters")
    with pytest.raises(ValueError, match=r"needs random filler .* lacks 'cfghijklmnopqrstuvwxyz': use filler='text'"):
        retrieval_rows(corpus, None, 2, 16, filler="random")
    no_marker = Corpus("?0123456789 " + RANDOM_FILLER * 10, name="no marker")
    with pytest.raises(ValueError, match=r"needs the marker \('@'\), but corpus 'no marker' lacks '@'"):
        retrieval_rows(no_marker, None, 2, 16, filler="random")


def test_an_all_random_filler_stream_reads_no_text_so_a_short_corpus_serves_it():
    corpus = Corpus("@?0123456789" + RANDOM_FILLER, name="short")  # 34 characters, a train split of 30
    x, y = next(batches(corpus, task="causal", batch_size=2, length=64, retrieval=1.0, filler="random"))
    assert x.shape == y.shape == (2, 64)
    with pytest.raises(ValueError, match="too long for the train split"):  # the control: text windows are read
        batches(corpus, task="causal", batch_size=2, length=64, retrieval=0.5, filler="random")
    assert next(batches(default_corpus(), task="causal", batch_size=2, length=64, retrieval=1.0,
                        filler="random"))[0].shape == (2, 64)
