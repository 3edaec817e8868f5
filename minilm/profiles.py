"""One place for the sizes of every lesson: a CPU profile (what CI runs) and a larger GPU one.

``MINILM_PROFILE=cpu|gpu`` picks one; without it, ``gpu`` when CUDA is present, else ``cpu``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Profile:
    name: str
    seeds: tuple           # every claim about training is measured on each of these
    d_model: int
    n_layer: int
    n_head: int            # transformer heads (a GAU has one)
    d_qk: int              # GAU's shared width s
    train_len: int         # the pretraining length; evaluation goes to multiples of it
    batch_size: int
    steps: int             # a standard pretraining run
    long_steps: int        # runs that need longer (NoPE comes close to RoPE only after ~2400 steps)
    nope_len: int          # training length of the NoPE / RoPE comparison (lessons 6-8)
    nope_layers: int       # NoPE needs depth: at 2 layers it stays far behind RoPE in range
    eval_batches: int
    mlm_len: int           # masked-LM pretraining length (bidirectional lessons)
    mlm_steps: int
    finetune_steps: tuple  # a small and a larger fine-tuning budget


PROFILES = {
    "cpu": Profile(name="cpu", seeds=(0, 1), d_model=64, n_layer=2, n_head=4, d_qk=64, train_len=64,
                   batch_size=32, steps=600, long_steps=2400, nope_len=32, nope_layers=4, eval_batches=4,
                   mlm_len=128, mlm_steps=1000, finetune_steps=(50, 300)),
    "gpu": Profile(name="gpu", seeds=(0, 1, 2), d_model=128, n_layer=4, n_head=4, d_qk=128,
                   train_len=128, batch_size=64, steps=3000, long_steps=8000, nope_len=128, nope_layers=4,
                   eval_batches=16,
                   mlm_len=256, mlm_steps=4000, finetune_steps=(100, 600)),
}


def profile(name: str | None = None) -> Profile:
    """The profile named here, or by $MINILM_PROFILE, or the default for this machine."""
    name = name or os.environ.get("MINILM_PROFILE") or ("gpu" if torch.cuda.is_available() else "cpu")
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}; allowed: {', '.join(map(repr, PROFILES))}")
    return PROFILES[name]


# The models several lessons share. Building them in one place keeps the configs identical,
# so a later lesson finds an earlier lesson's model in the cache instead of training again.

def mlm_gau(P: Profile, vocab_size: int, norm: str, n=None, **extra):
    """Lessons 2-4: the bidirectional GAU masked LM, trained at P.mlm_len."""
    from .model import Config

    return Config(vocab_size=vocab_size, block="gau", n_head=1, d_model=P.d_model, n_layer=P.n_layer,
                  d_qk=P.d_qk, norm=norm, n=n, causal=False, **extra)


def mlm_recipe(P: Profile, seed: int):
    from .training import Recipe

    return Recipe(task="mlm", length=P.mlm_len, steps=P.mlm_steps, batch_size=P.batch_size, seed=seed)


def long_transformer(P: Profile, vocab_size: int, pos: str, **extra):
    """Lessons 6-8: the causal Transformer of the NoPE / RoPE comparison, trained at P.nope_len."""
    from .model import Config

    return Config(vocab_size=vocab_size, block="transformer", n_head=P.n_head, d_model=P.d_model,
                  n_layer=P.nope_layers, pos=pos, **extra)


def long_recipe(P: Profile, seed: int):
    from .training import Recipe

    return Recipe(length=P.nope_len, steps=P.long_steps, batch_size=P.batch_size, seed=seed)
