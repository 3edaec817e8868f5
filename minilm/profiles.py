"""One place for the sizes of every lesson, and for the models several lessons share.

Two profiles: ``cpu`` (what CI runs end to end, and the default on every device: a GPU simply
runs it faster) and ``gpu`` (bigger models trained longer; opt-in with ``MINILM_PROFILE=gpu``,
and not yet run end to end, so its lessons' assertions are unverified at that size).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .data import Corpus
from .measure import retrieval_accuracy
from .model import LM, Config
from .scaling import temperature, train_head_scales
from .training import Recipe, pretrained

DEFAULT_PROFILE = "cpu"


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
    nope_rope_steps: int   # NoPE comes close to RoPE only after ~2400 steps (lessons 6-8)
    nope_rope_len: int     # training length of the NoPE / RoPE comparison (lessons 6-8)
    nope_rope_layers: int  # NoPE needs depth: at 2 layers it stays far behind RoPE in range
    retrieval_steps: int   # lesson 9: continued pretraining on text plus retrieval (NoPE: ~90% in range at 1000)
    eval_batches: int
    mlm_len: int           # masked-LM pretraining length (bidirectional lessons)
    mlm_steps: int
    finetune_steps: tuple  # a small and a larger fine-tuning budget


PROFILES = {
    "cpu": Profile(name="cpu", seeds=(0, 1), d_model=64, n_layer=2, n_head=4, d_qk=64, train_len=64,
                   batch_size=32, steps=600, nope_rope_steps=2400, nope_rope_len=32, nope_rope_layers=4, retrieval_steps=1000,
                   eval_batches=4,
                   mlm_len=128, mlm_steps=1000, finetune_steps=(50, 300)),
    "gpu": Profile(name="gpu", seeds=(0, 1, 2), d_model=128, n_layer=4, n_head=4, d_qk=128,
                   train_len=128, batch_size=64, steps=3000, nope_rope_steps=8000, nope_rope_len=128, nope_rope_layers=4,
                   retrieval_steps=3000, eval_batches=16,
                   mlm_len=256, mlm_steps=4000, finetune_steps=(100, 600)),
}


def profile(name: str | None = None) -> Profile:
    """The profile named here, or by $MINILM_PROFILE, or ``cpu`` (the one CI has verified)."""
    name = name or os.environ.get("MINILM_PROFILE") or DEFAULT_PROFILE
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}; allowed: {', '.join(map(repr, PROFILES))}")
    return PROFILES[name]


# The models several lessons share. Building them in one place keeps the configs identical,
# so a later lesson finds an earlier lesson's model in the cache instead of training again.

def causal_gau(P: Profile, vocab_size: int, **extra) -> Config:
    """Lessons 1-2: the causal relu^2 GAU LM, n fixed at the training length; two GAU layers
    per Transformer layer (about the same parameter count)."""
    settings = dict(block="gau", n_head=1, d_model=P.d_model, n_layer=2 * P.n_layer, d_qk=P.d_qk,
                    norm="relu2", n=P.train_len)
    return Config(vocab_size=vocab_size, **{**settings, **extra})


def causal_transformer(P: Profile, vocab_size: int, **extra) -> Config:
    """Lessons 1, 3 and 5: the causal softmax Transformer LM with RoPE."""
    return Config(vocab_size=vocab_size, block="transformer", n_head=P.n_head, d_model=P.d_model,
                  n_layer=P.n_layer, **extra)


def causal_recipe(P: Profile, seed: int) -> Recipe:
    """Pretraining of the causal models of lessons 1-5, at P.train_len."""
    return Recipe(length=P.train_len, steps=P.steps, batch_size=P.batch_size, seed=seed)


def masked_lm_gau(P: Profile, vocab_size: int, norm: str, n=None, **extra) -> Config:
    """Lessons 2-4: the bidirectional GAU masked LM, trained at P.mlm_len."""
    return Config(vocab_size=vocab_size, block="gau", n_head=1, d_model=P.d_model, n_layer=P.n_layer,
                  d_qk=P.d_qk, norm=norm, n=n, causal=False, **extra)


def masked_lm_recipe(P: Profile, seed: int) -> Recipe:
    """Masked-LM pretraining at P.mlm_len (lessons 2-4)."""
    return Recipe(task="mlm", length=P.mlm_len, steps=P.mlm_steps, batch_size=P.batch_size, seed=seed)


def nope_rope_transformer(P: Profile, vocab_size: int, pos: str, **extra) -> Config:
    """Lessons 6-8: the causal Transformer of the NoPE / RoPE comparison (pos='nope' or 'rope')."""
    return Config(vocab_size=vocab_size, block="transformer", n_head=P.n_head, d_model=P.d_model,
                  n_layer=P.nope_rope_layers, pos=pos, **extra)


def nope_rope_recipe(P: Profile, seed: int) -> Recipe:
    """Pretraining of the NoPE / RoPE comparison: P.nope_rope_steps at P.nope_rope_len."""
    return Recipe(length=P.nope_rope_len, steps=P.nope_rope_steps, batch_size=P.batch_size, seed=seed)


def retrieval_recipe(P: Profile, seed: int) -> Recipe:
    """Lesson 9: lesson 6's models continue pretraining at P.nope_rope_len on a mixture, three
    batches in four of retrieval windows (answer-only loss, data.retrieval_batch), one of text."""
    return Recipe(length=P.nope_rope_len, steps=P.retrieval_steps, batch_size=P.batch_size, lr=3e-3, warmup=20,
                  seed=seed, retrieval=0.75)


# Lessons 9 and 10 share the retrieval-trained NoPE model's temperature search and its head
# scaling: the same calls give the same numbers in both.

RETRIEVAL_LAMBDAS = (1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.4)
RETRIEVAL_SEARCH = dict(depths=[0.0, 0.5, 1.0], trials=50, seed=2024)   # not the prompts the lessons report


def best_uniform_for_retrieval(model, corpus: Corpus, length: int) -> float:
    """The uniform lambda of RETRIEVAL_LAMBDAS with the best exact match at ``length`` on the
    search prompts (RETRIEVAL_SEARCH: 50 per depth, another seed than the reported ones); the
    smallest lambda on a tie."""
    scores = {}
    for lam in RETRIEVAL_LAMBDAS:
        with temperature(model, lam):
            scores[lam] = retrieval_accuracy(model, corpus, [length], RETRIEVAL_SEARCH["depths"],
                                             trials=RETRIEVAL_SEARCH["trials"], seed=RETRIEVAL_SEARCH["seed"]).mean().item()
    return max(scores, key=scores.get)


def retrieval_head_scaled(P: Profile, corpus: Corpus, seed: int, *, start: float, clamp: bool = True,
                          steps: int = 200) -> LM:
    """Lessons 9-10: a fresh copy of the retrieval-trained NoPE model (lesson 6's, then
    retrieval_recipe) whose per-head temperatures alone train at 4L on its own mixture, as in
    the paper's code: batch 8, learning rate 0.05, from ``start``, clamped at 1 if ``clamp``."""
    config = nope_rope_transformer(P, corpus.tokenizer.vocab_size, "nope")
    text_model = pretrained(config, nope_rope_recipe(P, seed), corpus=corpus, progress=False)[0]
    model = pretrained(config, retrieval_recipe(P, seed), corpus=corpus, init=text_model, progress=False)[0]
    train_head_scales(model, corpus, length=4 * P.nope_rope_len, start=start, clamp=clamp, steps=steps,
                      batch_size=8, retrieval=0.75, seed=100 + seed, progress=False)
    return model
