"""Measuring a trained model: loss by length and position, MLM accuracy, attention entropy, Z_i,
retrieval (exact match, attention on the needle), bootstrap intervals.

Evaluation batches come from the validation split with a fixed seed, so two models
(or two attention settings of one model) are always compared on the same text.
Keyword overrides (``n=...``, ``logn_base=...``) are passed to ``model(idx, ...)``.
"""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn.functional as F

from .data import IGNORE_INDEX, RETRIEVAL_DIGITS, Corpus, batches, retrieval_rows
from .validation import (NORMS, boolean, finite_number, finite_numbers, integer, is_sequence,
                         measurable, one_of, positive_int, positive_ints)

EVAL_SEED = 1234
SEARCH_SEED = 4321  # the batches a setting (a multiplier) is chosen on: never the ones it is scored on


def _token_ids(model, idx) -> torch.Tensor:
    """idx, a (B, T) tensor of token ids, on the model's device (the model checks the ids)."""
    if not torch.is_tensor(idx) or idx.ndim != 2:
        got = f"shape {tuple(idx.shape)}" if torch.is_tensor(idx) else type(idx).__name__
        raise ValueError(f"idx must be a (B, T) LongTensor of token ids; got {got}")
    return idx.to(model.device)


def eval_batches(corpus: Corpus, *, task: str, length: int, batch_size: int = 16, n_batches: int = 4,
                 seed: int = EVAL_SEED, device=None):
    """A fixed list of (x, y) validation batches (the same for every model), on ``device``
    (pass ``model.device``; default the CPU)."""
    positive_int("n_batches", n_batches)
    stream = batches(corpus, task=task, batch_size=batch_size, length=length, split="val", seed=seed)
    return [(x.to(device), y.to(device)) for x, y in (next(stream) for _ in range(n_batches))]


@torch.no_grad()
def token_losses(model, corpus: Corpus, *, task: str, length: int, batch_size: int = 16,
                 n_batches: int = 4, seed: int = EVAL_SEED, **overrides):
    """Per-token cross-entropy (nats) and correctness on validation batches (eval_batches of
    ``seed``): two (N, T) tensors.

    For 'mlm', positions that are not targets hold NaN (loss) and False (correct).
    """
    measurable(model, corpus, Corpus, task)
    model.eval()
    losses, correct = [], []
    for x, y in eval_batches(corpus, task=task, length=length, batch_size=batch_size,
                             n_batches=n_batches, seed=seed, device=model.device):
        logits = model(x, **overrides)
        loss = F.cross_entropy(logits.transpose(1, 2), y, ignore_index=IGNORE_INDEX, reduction="none")
        counted = y != IGNORE_INDEX
        if not (loss.isfinite() | ~counted).all().item():  # else NaN, our mark of "no target", would hide it
            raise ValueError(f"the model's loss is not finite (inf or nan) at length {length}: its weights or "
                             "multipliers hold inf or nan (a diverged model?), or an override makes its logits "
                             "overflow")
        losses.append(torch.where(counted, loss, torch.nan).cpu())
        correct.append(((logits.argmax(-1) == y) & counted).cpu())
    return torch.cat(losses), torch.cat(correct)


def evaluate(model, corpus: Corpus, *, task: str, length: int, batch_size: int = 16, n_batches: int = 4,
             seed: int = EVAL_SEED, **overrides) -> dict:
    """Mean validation loss (nats) and accuracy over the targets, at one length."""
    loss, correct = token_losses(model, corpus, task=task, length=length, batch_size=batch_size,
                                 n_batches=n_batches, seed=seed, **overrides)
    counted = ~loss.isnan()
    if not counted.any():  # a mean over no targets: 0 / 0
        raise ValueError(f"no {task} targets to evaluate in {n_batches} batches of {batch_size} x {length} "
                         "(masked LM picks 15% of positions); use longer or more batches")
    return {"loss": loss[counted].mean().item(),
            "accuracy": correct.sum().item() / counted.sum().item()}


def loss_by_length(model, corpus: Corpus, lengths, *, task: str = "causal", tokens: int = 16384,
                   seed: int = EVAL_SEED, **overrides) -> dict:
    """{length: mean validation loss}, each length seeing about ``tokens`` tokens (the batches of ``seed``)."""
    positive_ints("lengths", list(lengths) if isinstance(lengths, range) else lengths)
    positive_int("tokens", tokens)
    return {L: evaluate(model, corpus, task=task, length=L, batch_size=max(1, tokens // L // 4),
                        n_batches=4, seed=seed, **overrides)["loss"]
            for L in lengths}


def loss_by_position(model, corpus: Corpus, length: int, *, batch_size: int = 8, n_batches: int = 4,
                     seed: int = EVAL_SEED, **overrides) -> torch.Tensor:
    """Mean causal-LM loss at each position 0..length-1, shape (length,)."""
    loss, _ = token_losses(model, corpus, task="causal", length=length, batch_size=batch_size,
                           n_batches=n_batches, seed=seed, **overrides)
    return loss.mean(dim=0)


@torch.no_grad()
def prefix_gap(model, idx: torch.Tensor, T: int, **overrides) -> float:
    """max |logits(x_{<T}) - logits(x)_{<T}|: how far the first T positions of a sequence, run
    alone, are from what they computed inside the longer sequence (0 for a causal model whose
    rows do not depend on the sequence length)."""
    idx = _token_ids(model, idx)
    integer("T", T, at_least=1)
    if T > idx.shape[1]:
        raise ValueError(f"T must be at most the length of idx ({idx.shape[1]}); got {T}")
    return (model(idx[:, :T], **overrides) - model(idx, **overrides)[:, :T]).abs().max().item()


def bucket_means(values: torch.Tensor, bucket: int) -> torch.Tensor:
    """Average the last dimension in consecutive buckets of ``bucket`` positions (a partial last bucket too)."""
    if not torch.is_tensor(values):
        raise ValueError(f"values must be a tensor; got {type(values).__name__}")
    positive_int("bucket", bucket)
    T = values.shape[-1]
    if T == 0:
        raise ValueError(f"bucket_means needs at least one value in the last dimension; got shape {tuple(values.shape)}")
    return torch.stack([values[..., s : s + bucket].mean(-1) for s in range(0, T, bucket)], dim=-1)


def entropy(weights: torch.Tensor) -> torch.Tensor:
    """H_i = -sum_j p_ij log p_ij of each row, with p the row normalised to sum 1 (nats).

    For softmax p = a; for relu^2 / n it is the shape of the row, whatever its total.
    A row of zeros has entropy 0.
    """
    if not torch.is_tensor(weights):
        raise ValueError(f"weights must be a tensor; got {type(weights).__name__}")
    total = weights.sum(-1, keepdim=True)
    p = weights / torch.where(total > 0, total, torch.ones_like(total))
    return -torch.special.xlogy(p, p).sum(-1)


@torch.no_grad()
def attention_entropy(model, idx: torch.Tensor, **overrides) -> torch.Tensor:
    """Attention entropy per layer, head and query position, averaged over the batch: (n_layer, H, T)."""
    model.eval()
    _, weights = model(_token_ids(model, idx), returns="weights", **overrides)
    return torch.stack([entropy(w).mean(0) for w in weights]).cpu()


def log_row_sums(scores: torch.Tensor, *, norm="softmax") -> torch.Tensor:
    """log Z_i, the log of the normaliser each row would need: Z_i = sum_j exp(S_ij) for softmax
    (computed as a logsumexp, so large logits do not overflow), Z_i = sum_j relu(S_ij)^2 for relu^2
    (-inf for a row of zeros), computed as 2 log m_i + log sum_j (relu(S_ij) / m_i)^2 with
    m_i = max_j relu(S_ij), so it does not overflow either. norm='relu2_norm' is the same Z_i."""
    one_of("attention norm", norm, NORMS)
    if norm == "softmax":
        return scores.logsumexp(dim=-1)
    relu = F.relu(scores)
    peak = relu.amax(dim=-1)
    r = relu / torch.where(peak > 0, peak, torch.ones_like(peak)).unsqueeze(-1)
    return 2 * peak.log() + r.square().sum(dim=-1).log()


@torch.no_grad()
def log_normalisers(model, idx: torch.Tensor, **overrides) -> torch.Tensor:
    """log Z_i per layer, head and query position, averaged over the batch: (n_layer, H, T).

    Z_i = sum_j exp(S_ij) for a softmax model, sum_j relu(S_ij)^2 for a relu^2 model
    (what relu2_norm divides by, and what relu2 replaces with n). Averaging log Z (not Z)
    keeps a few rows with huge logits from dominating."""
    model.eval()
    _, scores = model(_token_ids(model, idx), returns="scores", **overrides)
    norm = "softmax" if model.config.norm == "softmax" else "relu2"
    return torch.stack([log_row_sums(s, norm=norm).mean(0) for s in scores]).cpu()


def ngram_baselines(corpus: Corpus, smoothing: float = 0.01) -> dict:
    """Validation loss (nats) of a unigram and a bigram model counted on the training split.

    What a model must beat to have learned more than letter frequencies (unigram) or
    which letter follows which (bigram). Counts get ``smoothing`` added so no probability is 0.
    """
    V = corpus.tokenizer.vocab_size
    train, val = corpus.train, corpus.val
    if len(train) < 2 or len(val) < 2:  # no bigram to count or to score: the loss would be nan
        raise ValueError(f"ngram_baselines needs at least 2 tokens in each split of corpus {corpus.name!r}; its "
                         f"training split holds {len(train)}, its validation split {len(val)}")
    unigram = torch.bincount(train, minlength=V).double() + smoothing
    bigram = torch.zeros(V, V, dtype=torch.float64)
    bigram.index_put_((train[:-1], train[1:]), torch.ones(len(train) - 1, dtype=torch.float64),
                      accumulate=True)
    bigram += smoothing
    unigram_nll = -(unigram / unigram.sum()).log()[val].mean().item()
    bigram_nll = -(bigram / bigram.sum(1, keepdim=True)).log()[val[:-1], val[1:]].mean().item()
    return {"unigram": unigram_nll, "bigram": bigram_nll}


def _hidden_states_checked(hidden) -> torch.Tensor:
    """hidden, a (N, T, d) tensor of hidden states with T >= 2, as float32 on the CPU (a probe is
    a small fit, done on the CPU on every device)."""
    if not torch.is_tensor(hidden) or hidden.ndim != 3:
        got = f"shape {tuple(hidden.shape)}" if torch.is_tensor(hidden) else type(hidden).__name__
        raise ValueError(f"hidden must be a tensor (N, T, d) of hidden states; got {got}")
    if hidden.shape[1] < 2:  # one position: nothing to tell apart, and R^2 divides by zero
        raise ValueError(f"hidden must hold at least 2 positions per sequence; got shape {tuple(hidden.shape)}")
    return hidden.detach().cpu().float()


def fit_position_probe(hidden: torch.Tensor) -> torch.Tensor:
    """The linear probe from hidden states to positions: hidden (N, T, d), the target of h_{s,t}
    its position t; w = argmin_w sum_s sum_t ([h_{s,t}, 1] . w - t)^2 (least squares, with a
    bias), (d + 1,). w[:d] is the direction along which the state encodes position."""
    hidden = _hidden_states_checked(hidden)
    N, T, d = hidden.shape
    features = torch.cat([hidden, torch.ones(N, T, 1)], dim=-1).reshape(-1, d + 1)
    position = torch.arange(T, dtype=torch.float).expand(N, T).reshape(-1, 1)
    return torch.linalg.lstsq(features, position).solution[:, 0]


def position_probe_r2(hidden: torch.Tensor, n_train: int) -> float:
    """R^2 of a linear probe from hidden states to positions: how much position a layer holds.

    hidden (N, T, d) for N sequences: fit_position_probe on the first n_train sequences, then
    score it on the others: R^2 = 1 - sum (t_hat - t)^2 / sum (t - mean t)^2.
    1: the position can be read off linearly; 0 or less: no better than the mean position."""
    hidden = _hidden_states_checked(hidden)
    integer("n_train", n_train, at_least=1)
    if n_train >= hidden.shape[0]:
        raise ValueError(f"n_train must be in [1, {hidden.shape[0] - 1}]: of hidden's {hidden.shape[0]} sequences "
                         f"it fits on n_train and keeps the others as sequences to score; got {n_train}")
    w = fit_position_probe(hidden[:n_train])
    predicted = hidden[n_train:] @ w[:-1] + w[-1]
    truth = torch.arange(hidden.shape[1], dtype=torch.float).expand_as(predicted)
    return 1 - ((predicted - truth) ** 2).sum().item() / ((truth - truth.mean()) ** 2).sum().item()


def growth_exponent(ns, values) -> float:
    """b in value ~ a * n^b, by a least-squares line through (log n, log value).

    b = 1: grows like n (O(n)); b = 0: does not grow (O(1))."""
    try:
        ns, values = torch.as_tensor(ns, dtype=torch.float64), torch.as_tensor(values, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):  # torch's message would be about dimensions or 'str'
        raise ValueError(f"growth_exponent needs numbers: ns and values must be lists of numbers; got {ns!r} "
                         f"and {values!r}") from None
    if ns.ndim != 1 or ns.shape != values.shape or len(ns) < 2:
        raise ValueError(f"growth_exponent needs two or more (n, value) pairs, as many ns as values; "
                         f"got {ns.tolist()} and {values.tolist()}")
    for name, v in (("ns", ns), ("values", values)):
        if not (v.isfinite() & (v > 0)).all():  # a log of 0 or less is no line
            raise ValueError(f"growth_exponent fits logs: every one of {name} must be finite and > 0; got {v.tolist()}")
    if (ns == ns[0]).all():
        raise ValueError(f"growth_exponent needs at least two different ns; got {ns.tolist()}")
    x = torch.log(ns)
    y = torch.log(values)
    x, y = x - x.mean(), y - y.mean()
    return float((x * y).sum() / (x * x).sum())


def retrieval_prompts(corpus: Corpus, length: int, depth: float, *, trials: int, seed: int = EVAL_SEED,
                      filler: str = "text"):
    """``trials`` retrieval windows (data.retrieval_rows) of ``length`` at ``depth``, the filler
    from the validation split (or random letters, filler='random'): (x, y, needle), needle (trials,)
    the position of the "@" in each row. The same seed gives the same prompts, so every model and
    setting sees the same trials."""
    positive_int("trials", trials)  # named here: retrieval_rows would call it batch_size
    integer("seed", seed)
    return retrieval_rows(corpus, corpus.val if filler == "text" else None, trials, length,
                          torch.Generator().manual_seed(int(seed)), depth=depth, filler=filler)


def exact_match(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Which rows of a retrieval batch greedy decoding answers exactly: (B,) bool.

    correct_b = AND_k [argmax_v logits[b, T-D+k, v] == y[b, T-D+k]], k < D (the key's D digits;
    with the true digits as input, the argmax at each is what greedy decoding would write)."""
    answer = slice(-RETRIEVAL_DIGITS, None)
    return (logits[:, answer].argmax(-1) == y[:, answer].to(logits.device)).all(-1)


def needle_mass(rows: torch.Tensor, needle: torch.Tensor) -> torch.Tensor:
    """Attention mass on the needle: sum_{j = p_b}^{p_b + D} a_{b,j} for each row a_b (the "@" at
    p_b and the key's D digits, D = RETRIEVAL_DIGITS). rows (B, ..., T), needle (B,) -> (B, ...)."""
    span = torch.arange(rows.shape[-1], device=rows.device)
    start = needle.to(rows.device).view(-1, *[1] * (rows.ndim - 1))
    return (rows * ((span >= start) & (span <= start + RETRIEVAL_DIGITS))).sum(-1)


@torch.no_grad()
def retrieval_accuracy(model, corpus: Corpus, lengths, depths, *, trials: int = 100, seed: int = EVAL_SEED,
                       filler: str = "text", **overrides) -> torch.Tensor:
    """Exact-match retrieval, shape (len(lengths), len(depths)): the fraction of ``trials``
    prompts per cell whose key greedy decoding returns exactly.

    One forward pass per cell: greedy decoding returns the key exactly when the argmax is
    right at every answer position given the digits before it (see data.retrieval_batch)."""
    positive_ints("lengths", lengths)
    finite_numbers("depths", depths, at_least=0, at_most=1)  # all of them, before the first cell runs
    positive_int("trials", trials)
    integer("seed", seed)
    measurable(model, corpus, Corpus)
    model.eval()
    result = torch.zeros(len(lengths), len(depths))
    for a, length in enumerate(lengths):
        for b, depth in enumerate(depths):
            x, y, _ = retrieval_prompts(corpus, length, depth, trials=trials, seed=seed + 7919 * a + 104729 * b,
                                        filler=filler)
            result[a, b] = exact_match(model(x.to(model.device), **overrides), y).float().mean().cpu()
    return result


ATTENTION_ROWS = ("question", "answer")


@torch.no_grad()
def needle_attention(model, corpus: Corpus, length: int, *, depths=(0.0, 0.25, 0.5, 0.75, 1.0), trials: int = 32,
                     seed: int = EVAL_SEED, rows: str = "question", filler: str = "text", **overrides) -> dict:
    """Where the answer looks: attention rows of the queries that must find the needle, per layer
    and head, averaged over ``trials`` prompts at each depth.

    rows='question': the row of the "?", the query that predicts the key's first digit;
    rows='answer': the D rows that predict the key's D digits (the "?" and the answer's first
    D - 1 digits, D = RETRIEVAL_DIGITS), averaged.

    Returns {"mass": (n_layer, H), "entropy": (n_layer, H), "keys": int}:
    mass = sum of a row's weights on the needle ("@" and the key's digits);
    entropy = -sum_j a_j ln a_j of the row (nats); keys = how many positions the question's row
    sees. Uniform attention would put (D + 1) / keys on the needle, with entropy ln(keys)."""
    positive_int("length", length)
    positive_int("trials", trials)
    one_of("rows", rows, ATTENTION_ROWS)
    finite_numbers("depths", depths, at_least=0, at_most=1)
    integer("seed", seed)
    measurable(model, corpus, Corpus)
    model.eval()
    queries = slice(length - RETRIEVAL_DIGITS, length - RETRIEVAL_DIGITS + 1 if rows == "question" else length)
    masses, entropies = [], []
    for k, depth in enumerate(depths):
        x, _, needle = retrieval_prompts(corpus, length, depth, trials=trials, seed=seed + k, filler=filler)
        _, weights = model(x.to(model.device), returns="weights", **overrides)
        attention = torch.stack([w[:, :, queries].cpu() for w in weights], dim=1)  # (B, n_layer, H, rows, T)
        masses.append(needle_mass(attention, needle).mean((0, 3)))
        entropies.append(entropy(attention).mean((0, 3)))
    return {"mass": torch.stack(masses).mean(0), "entropy": torch.stack(entropies).mean(0),
            "keys": int(length) - RETRIEVAL_DIGITS + 1}


def seed_interval(values, *, level: float = 0.9) -> tuple:
    """(mean, low, high): the mean of one number per seed and its t interval,
    mean -+ t_{(1 + level)/2, n - 1} * sd / sqrt(n), sd the sample standard deviation over the
    n seeds. It says where the mean over all seeds (what the recipe gives on average) likely
    lies; the mean of n other seeds scatters about sqrt(2) times wider. With few seeds it is wide
    (t_{0.95, 4} = 2.13), which is the point.

    ``values``: a list, tuple or 1-D tensor or array of numbers (numbers, or tensors of one number)."""
    values = _numbers_per_seed(values)
    if values.dim() != 1:
        raise ValueError(f"seed_interval takes one number per seed (a 1-D list); got values of shape "
                         f"{tuple(values.shape)}: call it once per row of a table")
    if len(values) < 2 or not values.isfinite().all():
        raise ValueError(f"seed_interval needs two or more finite values, one per seed; got {values.tolist()}")
    finite_number("level", level, above=0, why="a probability below 1")
    if level >= 1:
        raise ValueError(f"level must be below 1 (a 100% interval is infinite); got {level!r}")
    n = len(values)
    mean = values.mean().item()
    half = t_quantile((1 + level) / 2, n - 1) * values.std().item() / math.sqrt(n)
    return mean, mean - half, mean + half


def _numbers_per_seed(values) -> torch.Tensor:
    """seed_interval's values as a float64 tensor; a sentence for what is not a list of numbers
    (strings, None, ragged lists, a generator: it would be used up before over_seeds prints it)."""
    said = f"seed_interval takes one number per seed, as a list of numbers; got {values!r}"
    array = hasattr(values, "ndim")  # a tensor or array of any shape: seed_interval names a shape that is not 1-D
    if not (is_sequence(values) or array):
        raise ValueError(said + (" (a generator is read once: make it a list)" if hasattr(values, "__next__") else ""))
    if not array and any(isinstance(v, (str, bytes)) for v in values):
        raise ValueError(said)  # torch's words would be "too many dimensions 'str'"
    try:
        return torch.as_tensor(values, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(said) from None


def over_seeds(values, *, level: float = 0.9, each: bool = True, proportion: bool = False) -> str:
    """One number per seed as a lesson prints it: "mean [low, high] (each seed's value)", the
    interval that of seed_interval; without the seeds' values if not ``each``. A ``proportion``
    (exact match, accuracy) lies in [0, 1], and so does its printed interval: an end the t
    interval puts outside is printed as the bound it was clipped to, "0" or "1", without decimals."""
    boolean("each", each)
    boolean("proportion", proportion)
    mean, low, high = seed_interval(values, level=level)
    seeds = f" ({' '.join(f'{float(v):.2f}' for v in values)})" if each else ""
    ends = [f"{end:.2f}" for end in (low, high)]
    if proportion:
        ends = ["0" if low < 0 else ends[0], "1" if high > 1 else ends[1]]
    return f"{mean:.2f} [{ends[0]}, {ends[1]}]{seeds}"


T_TAIL = 256  # t_quantile: where Simpson's rule over t gets too coarse (see there)


def t_quantile(p: float, df: int) -> float:
    """The p-quantile (p > 1/2) of Student's t with df degrees of freedom: bisection on its CDF,
    F(x) = 1/2 + integral_0^x f(t) dt, f(t) = c (1 + t^2/df)^(-(df+1)/2), by Simpson's rule.

    Far in a heavy tail (x > T_TAIL sqrt(df): p > 0.9988 for df = 1) 4000 steps over [0, x] are
    too coarse for f, and the integral is taken over u = atan(t / sqrt(df)) instead, where it is
    c sqrt(df) cos(u)^(df - 1) du, smooth on [0, pi/2): 1e-12 relative at p = 0.99995 (6366.2
    for df = 1), and as close as the rounding of p allows nearer 1. That form alone would do for
    every p; the first is kept where it is accurate, so the intervals lessons print stay what
    they were, to the last bit."""
    finite_number("p", p, above=0.5, why="an upper quantile; below 1")
    if p >= 1:
        raise ValueError(f"p must be below 1 (the 1-quantile is infinite); got {p!r}")
    positive_int("df", df)
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def simpson(f, x: float) -> float:
        weights = torch.ones(4001, dtype=torch.float64)
        weights[1:-1:2], weights[2:-1:2] = 4, 2
        return (x / 4000 / 3) * (weights * f(torch.linspace(0, x, 4001, dtype=torch.float64))).sum().item()

    def cdf(x: float) -> float:
        return 0.5 + simpson(lambda t: torch.exp(log_c - (df + 1) / 2 * torch.log1p(t * t / df)), x)

    def cdf_of_angle(u: float) -> float:  # F(sqrt(df) tan u)
        return 0.5 + simpson(lambda a: torch.exp(log_c + 0.5 * math.log(df) + (df - 1) * torch.log(torch.cos(a))), u)

    low, high = 0.0, 1.0
    while cdf(high) < p and high <= T_TAIL * math.sqrt(df):
        high *= 2
    if high > T_TAIL * math.sqrt(df):  # the heavy tail: bisect on the angle
        low, high, cdf, to_t = 0.0, math.pi / 2, cdf_of_angle, lambda u: math.sqrt(df) * math.tan(u)
    else:
        to_t = float
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if cdf(mid) < p else (low, mid)
    return to_t((low + high) / 2)


def bootstrap_interval(rows: torch.Tensor, statistic, *, resamples: int = 1000, level: float = 0.9,
                       seed: int = 0) -> tuple:
    """A percentile bootstrap interval for ``statistic(rows)``: resample the rows (sequences)
    with replacement ``resamples`` times and return the (1-level)/2 and (1+level)/2 quantiles
    of the statistic. Sequences, not tokens, are resampled: tokens of one sequence are not
    independent.

    ``rows``: a tensor (or a list) with one row per sequence. Bool or integer rows (the exact
    matches of retrieval_accuracy's prompts) are resampled as floats, so a mean is a fraction."""
    if not callable(statistic):
        raise ValueError(f"statistic must be callable (rows -> one number), e.g. torch.mean; got {statistic!r}")
    positive_int("resamples", resamples)
    finite_number("level", level, above=0, at_most=1)
    integer("seed", seed)
    if not torch.is_tensor(rows):
        try:
            rows = torch.as_tensor(rows)
        except (TypeError, ValueError, RuntimeError):
            raise ValueError(f"rows must be a tensor, or a list of numbers, one per sequence; got {rows!r}") from None
    if rows.ndim == 0 or len(rows) == 0:
        raise ValueError(f"rows must hold at least one row (sequence) to resample; got shape {tuple(rows.shape)}")
    if not rows.is_floating_point():
        rows = rows.float()
    generator = torch.Generator().manual_seed(int(seed))  # int: torch takes no numpy seed
    values = torch.tensor([_one_number(statistic(rows[torch.randint(0, len(rows), (len(rows),), generator=generator)]))
                           for _ in range(resamples)])
    if values.isnan().any():  # a quantile of them would be nan, with no word why
        held = f"rows hold nan at {int(rows.isnan().sum())} places" if rows.isnan().any() else "rows hold no nan"
        raise ValueError(f"statistic returned nan on {int(values.isnan().sum())} of {resamples} resamples ({held}; "
                         "masked-LM token losses mark the positions that are not targets so): use a statistic that "
                         "skips them, e.g. lambda rows: rows.nanmean()")
    low, high = torch.quantile(values, torch.tensor([(1 - level) / 2, (1 + level) / 2], dtype=values.dtype))
    return low.item(), high.item()


def _one_number(value) -> float:
    """A statistic's value as a float: one number, or a tensor that holds exactly one."""
    if torch.is_tensor(value) and value.numel() != 1:
        raise ValueError(f"statistic must return one number; got a tensor of shape {tuple(value.shape)}")
    if not (torch.is_tensor(value) or isinstance(value, numbers.Real)):
        raise ValueError(f"statistic must return one number; got {value!r} (a {type(value).__name__})")
    return float(value)


def extension_ratio(position_loss: torch.Tensor, train_len: int, *, margin: float = 0.1,
                    bucket: int | None = None) -> float:
    """How far past its training length a model goes before its loss rises by ``margin``.

    Reference: the mean loss over positions [L/2, L). Positions from L on are averaged in
    buckets (default L/8 wide); the ratio is where the first bucket above reference + margin
    starts, divided by L (1.0: it fails right past L). If no bucket rises, the evaluated
    length / L (a lower bound)."""
    positive_int("train_len", train_len)
    finite_number("margin", margin, at_least=0)
    if bucket is not None:
        positive_int("bucket", bucket)
    if not torch.is_tensor(position_loss) or position_loss.ndim != 1 or len(position_loss) <= train_len:
        got = tuple(position_loss.shape) if torch.is_tensor(position_loss) else type(position_loss).__name__
        raise ValueError(f"position_loss must be a 1-D tensor longer than train_len={train_len} (positions "
                         f"past L are what is measured); got {got}")
    L = train_len
    bucket = bucket or max(1, L // 8)
    reference = position_loss[L // 2 : L].mean()
    beyond = bucket_means(position_loss[L:], bucket)
    above = (beyond > reference + margin).nonzero()
    if len(above) == 0:
        return len(position_loss) / L
    return (L + int(above[0]) * bucket) / L


@torch.no_grad()
def hidden_states(model, idx: torch.Tensor, **overrides) -> torch.Tensor:
    """The residual stream x^(l) before the first block (l = 0) and after each of the n_layer
    blocks: (n_layer + 1, B, T, d), on the CPU. Lesson 6's position probe reads x^(l)."""
    model.eval()
    streams = []
    hooks = [block.register_forward_hook(lambda _m, args, out: streams.append((args[0], out[0])))
             for block in model.blocks]
    try:
        model(_token_ids(model, idx), **overrides)
    finally:
        for hook in hooks:
            hook.remove()
    return torch.stack([streams[0][0]] + [after for _, after in streams]).cpu()


@torch.no_grad()
def layer_writes(model, idx: torch.Tensor, *, part: str = "block", **overrides) -> torch.Tensor:
    """What each layer writes into the residual stream, by position, averaged over the batch:
    (n_layer, T). part="block": |x^(l) - x^(l-1)|_t / sqrt(d), attention and MLP together;
    part="attention": the attention sublayer's output alone (its output projection), / sqrt(d).
    A layer whose write at position t leaves the band it keeps within L is in a state training
    never saw."""
    one_of("part", part, ("block", "attention"))
    if part == "block":
        streams = hidden_states(model, idx, **overrides)
        return (streams[1:] - streams[:-1]).norm(dim=-1).mean(1) / streams.shape[-1] ** 0.5
    model.eval()
    writes = []
    hooks = [block.to_out.register_forward_hook(lambda _m, _args, out: writes.append(
        out.norm(dim=-1).mean(0) / out.shape[-1] ** 0.5)) for block in model.blocks]
    try:
        model(_token_ids(model, idx), **overrides)
    finally:
        for hook in hooks:
            hook.remove()
    return torch.stack(writes).cpu()
