"""Temperature scaling of a trained model (lessons 7-8): a uniform search and head-based scaling.

Both act on ``model.temperature`` (n_layer, n_head), every layer's attention ``scale``:
logits x lambda. Neither changes any other weight.
"""

from __future__ import annotations

import torch

from .data import Corpus, batches
from .measure import evaluate
from .training import train


def mean_loss(model, corpus: Corpus, length: int, **overrides) -> float:
    """Causal validation loss over all positions of length-``length`` sequences (about 16k tokens)."""
    return evaluate(model, corpus, task="causal", length=length, batch_size=max(4, 4096 // length),
                    n_batches=4, **overrides)["loss"]


@torch.no_grad()
def uniform_temperature_search(model, corpus: Corpus, length: int, grid) -> dict:
    """{lambda: loss at ``length``} with every temperature set to lambda; the model's
    temperatures are restored afterwards."""
    saved = model.temperature.detach().clone()
    losses = {}
    for lam in grid:
        model.temperature.fill_(lam)
        losses[lam] = mean_loss(model, corpus, length)
    model.temperature.copy_(saved)
    return losses


def train_head_scales(model, corpus: Corpus, *, length: int, start: float, steps: int = 200,
                      batch_size: int = 8, lr: float = 0.05, clamp: bool = True, seed: int = 0,
                      progress: bool = True) -> list[float]:
    """Head-based scaling (Wang et al. 2024): train only the per-head temperatures.

    Every other weight is frozen; the temperatures start at ``start`` (the best uniform
    lambda, in the paper) and, with ``clamp``, are clamped at lambda >= 1 after every step.
    AdamW with warmup and cosine decay, ``steps`` batches of target-length sequences.
    Returns the loss history; the model keeps its trained temperatures (frozen again)."""
    for p in model.parameters():
        p.requires_grad_(False)
    with torch.no_grad():
        model.temperature.fill_(start)
    model.temperature.requires_grad_(True)
    stream = batches(corpus, task="causal", batch_size=batch_size, length=length, seed=seed)
    after_step = (lambda m: m.temperature.clamp_(min=1.0)) if clamp else None
    history = train(model, stream, steps=steps, lr=lr, warmup=10, after_step=after_step, progress=progress,
                    desc=f"head scales from {start}, clamp {clamp}")
    model.temperature.requires_grad_(False)
    return history
