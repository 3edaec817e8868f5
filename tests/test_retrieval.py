"""The retrieval task (data.retrieval_batch, mixed into batches and recipes) and what measures it:
exact match, attention on the needle, bootstrap intervals, the per-position temperature table."""

import math

import pytest
import torch

import minilm
from minilm import Recipe, default_corpus
from minilm.data import batches
from minilm.data import IGNORE_INDEX, RETRIEVAL_DIGITS, retrieval_batch
from minilm.measure import bootstrap_interval, needle_attention, retrieval_accuracy, retrieval_prompts
from minilm.scaling import uniform_multiplier_by_position


def corpus():
    return default_corpus()


@pytest.mark.parametrize("depth", [0.0, 0.5, 1.0])
def test_a_retrieval_row_is_filler_needle_filler_question_key(depth):
    c = corpus()
    x, y = retrieval_batch(c, c.val, 4, 40, torch.Generator().manual_seed(1), depth=depth)
    assert x.shape == y.shape == (4, 40)
    D = RETRIEVAL_DIGITS
    filler_len = 41 - (2 * D + 2)
    for row, target in zip(x, y):
        text = c.tokenizer.decode(row)
        key = c.tokenizer.decode(target[-D:])
        assert key.isdigit() and len(key) == D and key[0] != "0"
        assert (target[:-D] == IGNORE_INDEX).all()  # the loss is on the answer only
        cut = round(depth * filler_len)
        assert text[cut] == "@" and text[cut + 1 : cut + 1 + D] == key
        assert text[-D:] == "?" + key[:-1]  # the input stops before the last digit
        assert len(text) - (2 * D + 2) + 1 == filler_len


def test_the_shortest_window_holds_only_the_structure_and_a_shorter_one_is_refused():
    c = corpus()
    shortest = 2 * RETRIEVAL_DIGITS + 1
    x, _ = retrieval_batch(c, c.val, 2, shortest, torch.Generator().manual_seed(0))
    assert c.tokenizer.decode(x[0])[0] == "@" and c.tokenizer.decode(x[0])[RETRIEVAL_DIGITS + 1] == "?"
    with pytest.raises(ValueError, match=f"at least {shortest}"):
        retrieval_batch(c, c.val, 2, shortest - 1)


def test_retrieval_zero_leaves_the_text_stream_exactly_as_it_was():
    plain = batches(corpus(), task="causal", batch_size=4, lengths=[16, 32], seed=3)
    mixed = batches(corpus(), task="causal", batch_size=4, lengths=[16, 32], seed=3, retrieval=0.0)
    for _ in range(10):
        (xa, ya), (xb, yb) = next(plain), next(mixed)
        assert torch.equal(xa, xb) and torch.equal(ya, yb)


def test_retrieval_mixes_answer_only_batches_into_text_batches_at_the_rate_asked():
    stream = batches(corpus(), task="causal", batch_size=2, length=32, seed=0, retrieval=0.25)
    kinds = [bool((y == IGNORE_INDEX).any()) for _, y in (next(stream) for _ in range(400))]
    assert 0.18 < sum(kinds) / len(kinds) < 0.32
    everything = batches(corpus(), task="causal", batch_size=2, length=32, seed=0, retrieval=1.0)
    assert all((y[:, :-RETRIEVAL_DIGITS] == IGNORE_INDEX).all() for _, y in (next(everything) for _ in range(20)))


@pytest.mark.parametrize("make, words", [
    (lambda: batches(corpus(), task="mlm", batch_size=2, length=32, retrieval=0.5), ["causal", "mlm"]),
    (lambda: batches(corpus(), task="causal", batch_size=2, length=2 * RETRIEVAL_DIGITS, retrieval=0.5),
     [f"at least {2 * RETRIEVAL_DIGITS + 1}"]),
    (lambda: batches(corpus(), task="causal", batch_size=2, length=32, retrieval=1.5), ["retrieval", "[0, 1]"]),
    (lambda: Recipe(retrieval=-0.1), ["Recipe.retrieval", "[0, 1]"]),
    (lambda: Recipe(task="mlm", retrieval=0.5), ["Recipe.retrieval", "causal"]),
])
def test_bad_retrieval_settings_are_refused_at_the_call(make, words, raises_naming):
    raises_naming(make, words)


class Oracle(torch.nn.Module):
    """Reads the key after the "@" and predicts it after the "?": the model that retrieves perfectly.
    ``wrong_digit`` makes it get one digit wrong."""

    def __init__(self, tokenizer, wrong_digit=None):
        super().__init__()
        self.tok, self.wrong_digit = tokenizer, wrong_digit
        self.anchor = torch.nn.Parameter(torch.zeros(1))

    @property
    def device(self):
        return self.anchor.device

    def forward(self, idx):
        B, T = idx.shape
        logits = torch.zeros(B, T, self.tok.vocab_size)
        for b in range(B):
            text = self.tok.decode(idx[b])
            key = text[text.index("@") + 1 : text.index("@") + 1 + RETRIEVAL_DIGITS]
            for k in range(RETRIEVAL_DIGITS):
                digit = key[k]
                if k == self.wrong_digit:
                    digit = str((int(digit) + 1) % 10)
                logits[b, T - RETRIEVAL_DIGITS + k, self.tok.index[digit]] = 1.0
        return logits


def test_exact_match_is_one_for_a_perfect_retriever_and_zero_when_one_digit_is_wrong():
    tok = corpus().tokenizer
    perfect = retrieval_accuracy(Oracle(tok), corpus(), [16, 40], [0.0, 1.0], trials=20)
    assert torch.equal(perfect, torch.ones(2, 2))
    for k in range(RETRIEVAL_DIGITS):
        assert retrieval_accuracy(Oracle(tok, wrong_digit=k), corpus(), [40], [0.5], trials=20).item() == 0


def test_the_same_seed_gives_every_model_the_same_prompts():
    a = retrieval_prompts(corpus(), 48, 0.5, trials=8)
    b = retrieval_prompts(corpus(), 48, 0.5, trials=8)
    assert all(torch.equal(u, v) for u, v in zip(a, b))
    x, _, needle = a
    assert (x[torch.arange(8), needle] == corpus().tokenizer.index["@"]).all()


def _nope(seed=0):
    torch.manual_seed(seed)
    config = minilm.Config(vocab_size=corpus().tokenizer.vocab_size, d_model=16, n_layer=2, n_head=2, pos="nope")
    return minilm.LM(config).eval()


def test_needle_attention_of_uniform_attention_is_needle_over_keys_with_entropy_log_keys():
    model = _nope()
    with torch.no_grad():
        model.multiplier.fill_(0.0)  # every logit 0: each query attends uniformly to the keys it sees
    result = needle_attention(model, corpus(), 40, trials=4)
    keys = 40 - RETRIEVAL_DIGITS + 1  # the "?" sits at position 40 - D and sees every position up to it
    assert result["keys"] == keys
    torch.testing.assert_close(result["mass"], torch.full((2, 2), (RETRIEVAL_DIGITS + 1) / keys))
    torch.testing.assert_close(result["entropy"], torch.full((2, 2), math.log(keys)))


def test_needle_attention_sees_a_head_that_looks_at_the_needle():
    model = _nope()
    result = needle_attention(model, corpus(), 40, trials=4)
    assert result["mass"].shape == result["entropy"].shape == (2, 2)
    assert ((result["mass"] > 0) & (result["mass"] < 1)).all()
    with torch.no_grad():
        model.multiplier.fill_(50.0)  # sharp attention: mass concentrates somewhere, entropy falls
    assert needle_attention(model, corpus(), 40, trials=4)["entropy"].max() < result["entropy"].min()


def test_bootstrap_interval_brackets_the_mean_and_narrows_with_more_rows():
    rows = torch.randn(400, generator=torch.Generator().manual_seed(0))
    low, high = bootstrap_interval(rows, lambda r: r.mean(), resamples=300)
    assert low < rows.mean().item() < high
    assert high - low == pytest.approx(2 * 1.645 / 20, rel=0.25)  # the normal 90% interval of a mean of 400
    low4, high4 = bootstrap_interval(rows[:100], lambda r: r.mean(), resamples=300)
    assert high4 - low4 > 1.5 * (high - low)
    assert bootstrap_interval(rows, lambda r: r.mean(), resamples=50) == bootstrap_interval(
        rows, lambda r: r.mean(), resamples=50)  # seeded
    with pytest.raises(ValueError, match="level"):
        bootstrap_interval(rows, lambda r: r.mean(), level=1.5)


def test_temperature_by_position_is_the_loss_by_position_at_each_lambda_and_restores_the_model():
    model = _nope()
    before = model.multiplier.detach().clone()
    table = uniform_multiplier_by_position(model, corpus(), 24, [1.0, 2.0], sequences=8, seed=minilm.measure.EVAL_SEED)
    assert table.shape == (2, 24)
    assert torch.equal(model.multiplier, before)
    with torch.no_grad():
        model.multiplier.fill_(2.0)
    torch.testing.assert_close(table[1], minilm.loss_by_position(model, corpus(), 24, batch_size=8, n_batches=1))


def test_the_per_position_fit_recovers_a_planted_slope():
    L, T, c = 16, 128, 0.4
    grid = [round(1 + 0.05 * k, 2) for k in range(30)]
    positions = torch.arange(1, T + 1, dtype=torch.float)
    planted = 1 + c * torch.log(positions / L)
    table = (torch.tensor(grid)[:, None] - planted[None]) ** 2  # each position's loss is lowest at its planted lambda
    fit = minilm.scaling.fit_per_position(table, grid, L, bucket=4)
    assert len(fit["ratios"]) == (T - L) // 4 and fit["ratios"][0] == pytest.approx(18.5 / 16)
    assert fit["c"] == pytest.approx(c, abs=0.02)
    flat = minilm.scaling.fit_per_position(table * 0 + torch.tensor(grid)[:, None], grid, L, bucket=4)  # lambda = 1 is best everywhere
    assert flat["c"] == 0 and set(flat["best"]) == {1.0}
    with pytest.raises(ValueError, match="one row per lambda"):
        minilm.scaling.fit_per_position(table[:3], grid, L, bucket=4)


def test_the_temperature_context_sets_every_head_and_restores_on_an_error():
    model = _nope()
    with minilm.at_lambda(model, 1.5):
        assert (model.multiplier == 1.5).all()
    assert (model.multiplier == 1.0).all()
    per_head = torch.tensor([[1.1, 1.2], [1.3, 1.4]])
    with pytest.raises(RuntimeError, match="inside"):
        with minilm.at_lambda(model, per_head):
            assert torch.equal(model.multiplier.detach(), per_head)
            raise RuntimeError("inside")
    assert (model.multiplier == 1.0).all()
    with pytest.raises(ValueError, match="multiplier"):
        with minilm.at_lambda(model, float("nan")):
            pass


def tiny_nope():
    return minilm.LM(minilm.Config(vocab_size=corpus().tokenizer.vocab_size, block="transformer", n_head=2,
                                   d_model=16, n_layer=1, pos="nope"))


def test_the_retrieval_search_picks_the_best_lambda_and_leaves_the_model_as_it_was(monkeypatch):
    # A stand-in score that peaks at lambda = 1.6, read off the temperature the search has set.
    def score(model, corpus, lengths, depths, *, trials, seed, filler):
        assert (lengths, list(depths), trials, seed, filler) == ([96], [0.0, 0.5, 1.0], 50, 2024, "text")  # search prompts
        return torch.full((1, len(depths)), 1 - abs(model.multiplier.mean().item() - 1.6))

    monkeypatch.setattr(minilm.experiments, "retrieval_accuracy", score)
    model = tiny_nope()
    assert minilm.experiments.best_uniform_for_retrieval(model, corpus(), 96) == 1.6
    assert torch.equal(model.multiplier, torch.ones_like(model.multiplier))


def test_the_retrieval_search_of_a_subset_sets_lambda_on_its_heads_alone(monkeypatch):
    # The stand-in score peaks when the marked head's lambda is 3.0 and the other stays at 1.
    def score(model, corpus, lengths, depths, *, trials, seed, filler):
        marked, other = model.multiplier[0].tolist()
        return torch.full((1, len(depths)), 1 - abs(marked - 3.0) - abs(other - 1.0))

    monkeypatch.setattr(minilm.experiments, "retrieval_accuracy", score)
    model = tiny_nope()
    heads = torch.tensor([[True, False]])
    grid = (1.0, 2.0, 3.0, 4.0)
    assert minilm.experiments.best_uniform_for_retrieval(model, corpus(), 96, heads=heads, grid=grid) == 3.0
    # on every head the score ties over [1, 3] (the smallest wins): the mask is what finds 3.0
    assert minilm.experiments.best_uniform_for_retrieval(model, corpus(), 96, grid=grid) == 1.0
    assert torch.equal(model.multiplier, torch.ones_like(model.multiplier))
    with pytest.raises(ValueError, match="grid"):
        minilm.experiments.best_uniform_for_retrieval(model, corpus(), 96, grid=[])


def test_the_retrieval_search_takes_the_smallest_lambda_on_a_tie():
    # An untrained model retrieves nothing at any temperature: every lambda ties at 0.
    assert minilm.experiments.best_uniform_for_retrieval(tiny_nope(), corpus(), 64) == minilm.experiments.RETRIEVAL_LAMBDAS[0]


def test_each_rows_needle_position_points_at_its_marker_whatever_the_depth():
    c = corpus()
    x, _, needle = minilm.data.retrieval_rows(c, c.val, 16, 48, torch.Generator().manual_seed(3))  # random depths
    marker = c.tokenizer.encode(minilm.data.RETRIEVAL_MARK)[0]
    assert needle.unique().numel() > 1   # the depths differ by row
    assert (x[torch.arange(16), needle] == marker).all()


def test_a_random_filler_holds_only_letters_and_the_needle_is_the_only_structure():
    c = corpus()
    x, y, needle = minilm.data.retrieval_rows(c, None, 16, 40, torch.Generator().manual_seed(2), filler="random")
    letters = set(minilm.data.RANDOM_FILLER)
    for row, target, at in zip(x, y, needle.tolist()):
        text = c.tokenizer.decode(row)
        key = c.tokenizer.decode(target[-RETRIEVAL_DIGITS:])
        filler = text[:at] + text[at + 1 + RETRIEVAL_DIGITS : -RETRIEVAL_DIGITS]
        assert set(filler) <= letters and len(filler) == 41 - (2 * RETRIEVAL_DIGITS + 2)
        assert text[at] == "@" and text[at + 1 : at + 1 + RETRIEVAL_DIGITS] == key
        assert text[-RETRIEVAL_DIGITS:] == "?" + key[:-1]
    with pytest.raises(ValueError, match="ids=None with filler='random'"):
        minilm.data.retrieval_rows(c, c.val, 2, 40, filler="random")
    with pytest.raises(ValueError, match="unknown filler 'noise'"):
        minilm.data.retrieval_rows(c, None, 2, 40, filler="noise")


def test_a_recipe_of_random_filler_streams_retrieval_batches_and_text_is_refused_without_retrieval():
    stream = Recipe(length=24, batch_size=4, retrieval=1.0, filler="random").stream(corpus())
    letters = set(minilm.data.RANDOM_FILLER) | set("@?0123456789")
    for _ in range(3):
        x, y = next(stream)
        assert set(corpus().tokenizer.decode(x.flatten())) <= letters
        assert (y[:, :-RETRIEVAL_DIGITS] == IGNORE_INDEX).all()
    with pytest.raises(ValueError, match="filler='random' fills retrieval windows, and retrieval=0"):
        Recipe(filler="random")
    with pytest.raises(ValueError, match="filler='random' fills retrieval windows, and retrieval=0"):
        batches(corpus(), task="causal", batch_size=2, length=24, filler="random")


def test_needle_attention_of_the_answer_rows_averages_the_rows_that_predict_the_key():
    model = _nope()
    with torch.no_grad():
        model.multiplier.fill_(0.0)  # uniform rows: row i of the answer sees one key more than row i - 1
    result = needle_attention(model, corpus(), 40, trials=4, rows="answer", filler="random")
    seen = [40 - RETRIEVAL_DIGITS + 1 + k for k in range(RETRIEVAL_DIGITS)]
    torch.testing.assert_close(result["mass"], torch.full((2, 2), sum((RETRIEVAL_DIGITS + 1) / n for n in seen) / len(seen)))
    torch.testing.assert_close(result["entropy"], torch.full((2, 2), sum(math.log(n) for n in seen) / len(seen)))
    with pytest.raises(ValueError, match="unknown rows 'all'"):
        needle_attention(model, corpus(), 40, trials=4, rows="all")


def test_seed_interval_is_the_t_interval_of_the_mean():
    from minilm.measure import seed_interval

    mean, low, high = seed_interval([0.5, 0.6, 0.7, 0.55, 0.65], level=0.9)
    sd = torch.tensor([0.5, 0.6, 0.7, 0.55, 0.65], dtype=torch.float64).std().item()
    assert mean == pytest.approx(0.6)
    assert high - mean == pytest.approx(mean - low) == pytest.approx(2.1318 * sd / math.sqrt(5), rel=1e-4)
    assert seed_interval([1.0, 3.0], level=0.95)[2] == pytest.approx(2 + 12.7062, rel=1e-4)  # t_{0.975, 1}
    for bad in ([0.5], [0.5, float("nan")]):
        with pytest.raises(ValueError, match="two or more finite values"):
            seed_interval(bad)


def test_over_seeds_prints_the_mean_its_interval_and_each_seed():
    from minilm.measure import over_seeds, seed_interval

    values = [0.5, 0.6, 0.7, 0.55, 0.65]
    mean, low, high = seed_interval(values)
    assert over_seeds(values) == f"{mean:.2f} [{low:.2f}, {high:.2f}] (0.50 0.60 0.70 0.55 0.65)"
