"""One place for the sizes of every lesson. The models and experiments several lessons share,
built from these sizes, are in ``minilm.experiments``.

Two profiles: ``cpu`` (what CI runs end to end, and the default on every device: a GPU simply
runs it faster) and ``gpu`` (bigger models trained longer; opt-in with ``MINILM_PROFILE=gpu``,
and not yet run end to end, so its lessons' assertions are unverified at that size).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from .validation import integer, is_sequence, plain_fields, positive_int, positive_ints

DEFAULT_PROFILE = "cpu"

# The fields of a Profile that are one positive int each (the others: name, the seeds, finetune_steps).
SIZES = ("d_model", "n_layer", "n_head", "d_k", "train_len", "batch_size", "steps", "nope_rope_steps", "nope_rope_len",
         "nope_rope_layers", "retrieval_steps", "eval_batches", "mlm_len", "mlm_steps", "controlled_d_model",
         "controlled_layers", "controlled_len", "controlled_steps", "hybrid_window")


@dataclass(frozen=True)
class Profile:
    name: str
    seeds: tuple           # every claim about training is measured on each of these
    d_model: int
    n_layer: int
    n_head: int            # transformer heads (a GAU has one)
    d_k: int              # GAU's shared width s
    train_len: int         # the pretraining length; evaluation goes to multiples of it
    batch_size: int
    steps: int             # a standard pretraining run
    nope_rope_steps: int   # NoPE comes close to RoPE only after ~2400 steps (lessons 6-8)
    nope_rope_len: int     # training length of the NoPE / RoPE comparison (lessons 6-8)
    nope_rope_layers: int  # NoPE needs depth: at 2 layers it stays far behind RoPE in range
    retrieval_steps: int   # lesson 11: continued pretraining on text plus retrieval (NoPE: ~90% in range at 1000)
    eval_batches: int
    mlm_len: int           # masked-LM pretraining length (bidirectional lessons)
    mlm_steps: int
    finetune_steps: tuple  # a small and a larger fine-tuning budget
    controlled_seeds: tuple    # lesson 9's controlled retrieval: small models, so more seeds
    controlled_d_model: int
    controlled_layers: int
    controlled_len: int        # its training length
    controlled_steps: int      # retrieval of random-letter filler only (NoPE: about 0.95 in range at 1000)
    hybrid_window: int         # lesson 13: the keys a windowed RoPE layer of the hybrid sees

    def __post_init__(self):
        """Every size (SIZES) a positive int, the seeds a non-empty tuple of distinct ints and
        finetune_steps a non-empty tuple of positive ints (a list is made a tuple, numpy ints
        ints), so a bad profile fails here, naming its field, not inside pretrained_many."""
        plain_fields(self)
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Profile.name must be a non-empty str; got {self.name!r}")
        for name in ("seeds", "controlled_seeds"):
            value = getattr(self, name)
            if not is_sequence(value) or len(value) == 0:
                raise ValueError(f"Profile.{name} must be a non-empty tuple of int seeds; got {value!r}")
            for seed in value:
                integer(f"each of Profile.{name}", seed)
            if len(set(value)) != len(value):  # one model under two names: a mean over seeds counted twice
                raise ValueError(f"Profile.{name} must hold distinct seeds; got {value!r}")
            object.__setattr__(self, name, tuple(int(seed) for seed in value))
        positive_ints("Profile.finetune_steps", self.finetune_steps)
        object.__setattr__(self, "finetune_steps", tuple(int(steps) for steps in self.finetune_steps))
        for name in SIZES:
            positive_int(f"Profile.{name}", getattr(self, name))


PROFILES = {
    "cpu": Profile(name="cpu", seeds=(0, 1), d_model=64, n_layer=2, n_head=4, d_k=64, train_len=64,
                   batch_size=32, steps=600, nope_rope_steps=2400, nope_rope_len=32, nope_rope_layers=4, retrieval_steps=1000,
                   eval_batches=4,
                   mlm_len=128, mlm_steps=1000, finetune_steps=(50, 300),
                   controlled_seeds=(0, 1, 2, 3, 4), controlled_d_model=32, controlled_layers=4, controlled_len=32,
                   controlled_steps=1000, hybrid_window=8),
    "gpu": Profile(name="gpu", seeds=(0, 1, 2), d_model=128, n_layer=4, n_head=4, d_k=128,
                   train_len=128, batch_size=64, steps=3000, nope_rope_steps=8000, nope_rope_len=128, nope_rope_layers=4,
                   retrieval_steps=3000, eval_batches=16,
                   mlm_len=256, mlm_steps=4000, finetune_steps=(100, 600),
                   controlled_seeds=(0, 1, 2, 3, 4, 5, 6, 7), controlled_d_model=64, controlled_layers=4,
                   controlled_len=64, controlled_steps=2000, hybrid_window=16),
}


def profile(name: str | None = None) -> Profile:
    """The profile named here, or by $MINILM_PROFILE, or ``cpu`` (the one CI has verified).

    $MINILM_SEED_OFFSET (a whole number, e.g. 50) is added to every seed of the profile: the
    lessons then train other models than the stored ones, and their claims must still hold."""
    from_environment = not name and bool(os.environ.get("MINILM_PROFILE"))
    source = " (from the environment variable MINILM_PROFILE)" if from_environment else ""
    name = name or os.environ.get("MINILM_PROFILE") or DEFAULT_PROFILE
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}{source}; allowed: {', '.join(map(repr, PROFILES))}")
    offset = os.environ.get("MINILM_SEED_OFFSET", "").strip()
    if not offset:
        return PROFILES[name]
    if not offset.isdigit():
        raise ValueError(f"MINILM_SEED_OFFSET (an environment variable) must be a whole number of 0 or more, "
                         f"added to every seed of the profile; got {offset!r}")
    chosen = PROFILES[name]
    return replace(chosen, seeds=tuple(seed + int(offset) for seed in chosen.seeds),
                   controlled_seeds=tuple(seed + int(offset) for seed in chosen.controlled_seeds))
