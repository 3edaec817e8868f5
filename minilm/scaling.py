"""The multiplier lambda of a trained model (lessons 7, 8 and 11): a uniform search (per length or per
position, and its fit), head-based scaling, and the length rules.

All act on ``model.multiplier`` (n_layer, n_head), every layer's multiplier lambda:
logits x lambda. None changes any other weight.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import torch

from .data import Corpus, batches
from .measure import SEARCH_SEED, bucket_means, loss_by_length, loss_by_position
from .model import RopeScaling
from .training import train
from .validation import (boolean, finite_number, finite_numbers, is_sequence, measurable,
                         positive_int, storable_number)


def mean_loss(model, corpus: Corpus, length: int, **overrides) -> float:
    """Causal validation loss over all positions of length-``length`` sequences: one entry of
    measure.loss_by_length (about 16k tokens)."""
    return loss_by_length(model, corpus, [length], **overrides)[length]


def _checked_grid(grid, dtype: torch.dtype = torch.float32) -> list:
    """A non-empty list of finite multipliers that a tensor of ``dtype`` (model.multiplier's) can hold."""
    if not is_sequence(grid) or len(grid) == 0:
        raise ValueError(f"grid must be a non-empty list of multipliers; got {grid!r}")
    for lam in grid:
        storable_number("each lambda of grid", lam, dtype, where="model.multiplier")
    return list(grid)


@contextmanager
def at_lambda(model, value=None):
    """``with at_lambda(model, 1.4): ...`` runs the block with every logit multiplier lambda set to
    ``value`` (a number, or a (n_layer, n_head) tensor; None keeps them as they are), and puts
    ``model.multiplier`` back as it was on any exit: on return, on an error, and when a
    notebook's stop button interrupts the block."""
    saved = model.multiplier.detach().clone()
    try:
        if value is not None:
            if not torch.is_tensor(value):
                finite_number("multiplier", value)
            elif not _broadcasts_to(value.shape, saved.shape):
                raise ValueError(f"the multiplier must be a number or a tensor that broadcasts to model.multiplier's "
                                 f"shape {tuple(saved.shape)} (n_layer, n_head); got shape {tuple(value.shape)}")
            elif not torch.isfinite(value).all():
                raise ValueError(f"the multiplier must be finite; got {value.tolist()}")
            with torch.no_grad():
                model.multiplier.copy_(torch.as_tensor(value, dtype=saved.dtype).expand_as(saved))
        yield model
    finally:
        with torch.no_grad():
            model.multiplier.copy_(saved)


def _broadcasts_to(shape, target) -> bool:
    try:
        return torch.broadcast_shapes(shape, target) == target
    except RuntimeError:
        return False


@torch.no_grad()
def uniform_multiplier_search(model, corpus: Corpus, length: int, grid, *, seed: int = SEARCH_SEED) -> dict:
    """{lambda: loss at ``length``} with every multiplier set to lambda, on the validation
    batches of ``seed``: by default SEARCH_SEED's, so that the chosen lambda, scored on EVAL_SEED's
    (every measurement's default: ``with at_lambda(model, lam): mean_loss(...)``), is not scored by
    the minimum of its own search.

    Changes ``model.multiplier`` while it runs, and restores it on any exit."""
    losses = {}
    with at_lambda(model):
        for lam in _checked_grid(grid, model.multiplier.dtype):
            model.multiplier.fill_(lam)
            losses[lam] = mean_loss(model, corpus, length, seed=seed)
    return losses


@torch.no_grad()
def uniform_multiplier_by_position(model, corpus: Corpus, length: int, grid, *, sequences: int = 64,
                                    seed: int = SEARCH_SEED) -> torch.Tensor:
    """Loss at every position of length-``length`` sequences with every multiplier set to each
    lambda of ``grid``: shape (len(grid), length), over ``sequences`` validation sequences (those
    of ``seed``, by default SEARCH_SEED's). The per-position fit of Wang et al.'s code reads the best lambda at each position
    off this table. Restores ``model.multiplier`` on any exit."""
    positive_int("sequences", sequences)
    if sequences % 8:
        raise ValueError(f"sequences must be a multiple of 8 (they are read in batches of 8); got {sequences!r}")
    rows = []
    with at_lambda(model):
        for lam in _checked_grid(grid, model.multiplier.dtype):
            model.multiplier.fill_(lam)
            rows.append(loss_by_position(model, corpus, length, batch_size=8, n_batches=sequences // 8,
                                         seed=seed))
    return torch.stack(rows)


def train_head_scales(model, corpus: Corpus, *, length: int, start: float, steps: int = 200,
                      batch_size: int = 8, lr: float = 0.05, clamp: bool = True, seed: int = 0,
                      retrieval: float = 0.0, filler: str = "text", progress: bool = True) -> list[float]:
    """Head-based scaling (Wang et al. 2024): train only the per-head multipliers.

    Every other weight is frozen; the multipliers start at ``start`` (the best uniform
    lambda, in the paper) and, with ``clamp``, are clamped at lambda >= 1 after every step (so
    ``start`` must be >= 1 with the clamp: its first step would train below it).
    AdamW with warmup and cosine decay, ``steps`` batches of target-length sequences: text, and
    with ``retrieval`` > 0 that fraction of retrieval batches of ``filler`` (the model's
    pretraining mixture; data.batches).
    Returns the loss history.

    What it changes: while it runs, every requires_grad flag (only the multipliers train).
    On any exit the flags are put back as they were. On return the model keeps its trained
    multipliers; on an error, or a notebook's stop button, it gets its old multipliers back
    too, so an interrupted run leaves the model exactly as it found it. Multipliers that become
    inf or nan stop it with FloatingPointError naming the step (and the model as it was)."""
    boolean("clamp", clamp)
    storable_number("start", start, model.multiplier.dtype, where="model.multiplier", at_least=1 if clamp else None,
                    why="the clamp keeps lambda >= 1, and the first step trains at start; pass clamp=False to start "
                        "below 1" if clamp else "")
    measurable(model, corpus, Corpus)  # trained on this corpus's text, next token: as measured
    stream = batches(corpus, task="causal", batch_size=batch_size, length=length, seed=seed, retrieval=retrieval,
                     filler=filler)
    done = 0

    def after_step(m):
        nonlocal done
        done += 1
        if clamp:
            m.multiplier.clamp_(min=1.0)
        if not m.multiplier.isfinite().all().item():  # a sync, beside the one train() makes for the loss
            raise FloatingPointError(f"head-scale training diverged at step {done} of {steps}: the multipliers are "
                                     f"{m.multiplier.tolist()}; try a lower lr than {lr}, or a start nearer 1 "
                                     f"than {start}")
    flags = {name: p.requires_grad for name, p in model.named_parameters()}
    saved = model.multiplier.detach().clone()
    finished = False
    try:
        for p in model.parameters():
            p.requires_grad_(False)
        with torch.no_grad():
            model.multiplier.fill_(start)
        model.multiplier.requires_grad_(True)
        history = train(model, stream, steps=steps, lr=lr, warmup=10, after_step=after_step, progress=progress,
                        desc=f"head scales from {start}, clamp {clamp}")
        finished = True
    finally:
        if not finished:
            with torch.no_grad():
                model.multiplier.copy_(saved)
        for name, p in model.named_parameters():
            p.requires_grad_(flags[name])
    return history


# ----------------------------------------------------------------------------
# Length rules: every rule multiplies the logits by about 1 + c ln s, s = n / L
# ----------------------------------------------------------------------------

# Wang et al. 2024 (NoPE length generalization): the slope c of lambda_i = 1 + c ln(i / L), fitted
# in their code (fig/fig_fit.ipynb) to the best uniform scale at each position i past L. The course
# applies it per length (length_rule "nope_fit": 1 + c ln s) and per row (model.position_rule).
NOPE_FIT_C = 0.397
LENGTH_RULES = ("su", "nope_fit", "qwen", "yarn")


def length_rule(rule: str, n: float, L: float) -> float:
    """The multiplier on the logits at n keys for a model trained at length L, s = n / L:

    'su'        log_L n                    (Su 2021, entropy invariance; 1 + ln s / ln L)
    'nope_fit'  1 + 0.397 ln s             (Wang et al. 2024's fitted slope, NOPE_FIT_C, per length)
    'qwen'      max(1, log_L n)            (Qwen's logn attention: only past its training length)
    'yarn'      (0.1 ln s + 1)^2           (YaRN, see model.RopeScaling.logit_factor)

    'nope_fit' and 'yarn' are rules for extension, s >= 1: within the training length (s < 1) they
    are 1, as YaRN's code and the per-position rule (model.position_rule) have it; their
    formulas there would fall below 1, and YaRN's would rise again (3.14 at s = 2^-40).
    """
    if rule not in LENGTH_RULES:
        raise ValueError(f"unknown length rule {rule!r}; allowed: {', '.join(map(repr, LENGTH_RULES))}")
    finite_number("n", n, above=0, why="the number of keys")
    log_base = rule in ("su", "qwen")  # log_L n: L = 1 is no base
    finite_number("L", L, above=1 if log_base else 0,
                  why=f"the training length; rule {rule!r} takes logs to base L" if log_base else "the training length")
    s = n / L
    if rule == "su":
        return math.log(n) / math.log(L)
    if rule == "qwen":
        return max(1.0, math.log(n) / math.log(L))
    if s < 1:  # within the training length
        return 1.0
    if rule == "nope_fit":
        return 1 + NOPE_FIT_C * math.log(s)
    return RopeScaling("yarn", s, train_len=1).logit_factor  # a function of s alone


def fit_log_slope(ratios, lambdas) -> float:
    """c of the least-squares fit lambda = 1 + c ln s (no intercept: lambda = 1 at s = 1).

    c = sum_k ln(s_k) (lambda_k - 1) / sum_k ln(s_k)^2."""
    finite_numbers("ratios", ratios, above=0)
    finite_numbers("lambdas", lambdas)
    x = [math.log(s) for s in ratios]
    if len(x) != len(lambdas) or not any(x):
        raise ValueError(f"fit_log_slope needs as many lambdas as ratios and some ratio != 1; "
                         f"got ratios={list(ratios)!r}, lambdas={list(lambdas)!r}")
    return float(sum(a * (lam - 1) for a, lam in zip(x, lambdas)) / sum(a * a for a in x))


def fit_per_position(table: torch.Tensor, grid, L: int, *, bucket: int) -> dict:
    """The per-position fit of Wang et al.'s code: lambda(i) = 1 + c ln(i / L).

    ``table`` (len(grid), T) is the loss at each position under each uniform lambda
    (uniform_multiplier_by_position). Past L, positions are averaged in buckets of
    ``bucket``; each bucket's best lambda is the grid value with the lowest loss there, and
    i is the bucket's mean position counted from 1. Returns {"ratios": i / L of each bucket,
    "best": its best lambda, "c": fit_log_slope(ratios, best)}. The table must be finite (a
    lambda with a nan or inf loss somewhere would otherwise be picked there as the best); a table
    of integers is read as numbers."""
    grid = _checked_grid(grid)
    positive_int("L", L)
    positive_int("bucket", bucket)
    if not torch.is_tensor(table):
        raise ValueError(f"table must be a tensor (len(grid), T), as uniform_multiplier_by_position returns; "
                         f"got {type(table).__name__}")
    if table.ndim != 2 or table.shape[0] != len(grid) or table.shape[1] <= L:
        raise ValueError(f"table must have one row per lambda of grid ({len(grid)}) and more than L={L} "
                         f"positions; got shape {tuple(table.shape)}")
    if table.dtype == torch.bool or table.is_complex():
        raise ValueError(f"table must hold losses (real numbers); got a table of {table.dtype}")
    if not table.is_floating_point():
        table = table.double()
    bad = ~table.isfinite()
    if bad.any():
        rows = bad.any(1).nonzero().flatten().tolist()
        raise ValueError(f"table must be finite: the rows of lambda {', '.join(repr(grid[r]) for r in rows[:4])} hold "
                         f"nan or inf at {int(bad.sum())} positions; a lambda's loss is needed at every position")
    buckets = bucket_means(table[:, L:], bucket)                       # (len(grid), buckets)
    positions = bucket_means(torch.arange(L + 1, table.shape[1] + 1, dtype=torch.float), bucket)
    ratios = (positions / L).tolist()
    best = [grid[int(k)] for k in buckets.argmin(0)]
    return {"ratios": ratios, "best": best, "c": fit_log_slope(ratios, best)}
