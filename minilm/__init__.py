"""minilm: the small library under the course on attention and length generalization.

    import minilm
    model, history = minilm.pretrained(config, minilm.Recipe(length=64, steps=500))
    models = minilm.pretrained_many({seed: (config, minilm.Recipe(seed=seed)) for seed in (0, 1)})

Layers, bottom to top (each imports only from those below it): ``validation`` and
``profiles`` (the sizes); ``data`` and ``model``; ``training`` (the loop and the recipe);
``cache`` (``pretrained``), ``sampling`` and ``measure``; ``bench`` (``step_time``); ``scaling``;
``experiments`` (the models and experiments lessons share). ``checks`` (the exercise grader)
and ``distributed`` (the command line) are not loaded by ``import minilm``.
"""

__version__ = "0.2.0"

from .bench import step_time
from .cache import pretrained, pretrained_many
from .data import Corpus, batches, default_corpus
from .experiments import (
    best_uniform_for_retrieval, causal_gau, causal_recipe, causal_transformer, controlled_head_scaled,
    controlled_models, controlled_recipe, controlled_transformer, masked_lm_gau, masked_lm_recipe, nope_rope_models,
    nope_rope_recipe, nope_rope_transformer, retrieval_head_scaled, retrieval_models, retrieval_recipe,
)
from .measure import (
    attention_entropy, bootstrap_interval, bucket_means, entropy, eval_batches, evaluate, extension_ratio,
    growth_exponent, log_normalisers, loss_by_length, loss_by_position, needle_attention, ngram_baselines,
    over_seeds, position_probe_r2, prefix_gap, retrieval_accuracy, seed_interval,
)
from .model import LM, Config, RopeScaling, apply_rope, attend, logn_factor, rope_angles, yarn_logit_scale
from .profiles import profile
from .scaling import (
    NOPE_FIT_C, fit_log_slope, fit_per_position, length_rule, mean_loss, temperature, train_head_scales,
    uniform_temperature_by_position, uniform_temperature_search,
)
from .sampling import generate
from .training import Recipe, lm_loss, pick_device, train

