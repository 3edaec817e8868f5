"""minilm: the small library under the course on attention and length generalization.

    import minilm
    model, history = minilm.pretrained(config, minilm.Recipe(length=64, steps=500))
    models = minilm.pretrained_many({seed: (config, minilm.Recipe(seed=seed)) for seed in (0, 1)})

Here are the names a reader and the lessons use most; the rest is one module away:
``minilm.measure`` and ``minilm.scaling`` (every measurement and multiplier tool),
``minilm.experiments`` (the models and experiments several lessons share, built from a profile),
``minilm.data`` (batches of every kind). ``distributed`` (the command line) is not loaded by
``import minilm``; the exercises' grader is no part of it (``course.grader``, beside it).

Layers, bottom to top (each imports only from those below it): ``validation`` and
``profiles`` (the sizes); ``data`` and ``model``; ``training`` (the loop and the recipe);
``cache`` (``pretrained``), ``sampling`` and ``measure``; ``bench`` (``step_time``); ``scaling``;
``experiments``.
"""

__version__ = "0.3.0"

from . import data, experiments, measure, scaling
from .cache import pretrained, pretrained_many
from .data import Corpus, default_corpus
from .measure import (
    attention_entropy, evaluate, loss_by_length, loss_by_position, over_seeds, retrieval_accuracy, seed_interval,
)
from .model import GAU, LM, Config, RopeScaling, TransformerBlock, apply_rope, attend, rope_angles
from .profiles import profile
from .sampling import generate
from .scaling import at_lambda, length_rule, train_head_scales, uniform_multiplier_search
from .training import Recipe, train
