"""minilm: the small library under the course on attention and length generalization.

    import minilm
    model, history = minilm.pretrained(config, minilm.Recipe(length=64, steps=500))
    models = minilm.pretrained_many({seed: (config, minilm.Recipe(seed=seed)) for seed in (0, 1)})

Layers, bottom to top (each imports only from those below it): ``validation``; ``data`` and
``model``; ``training``; ``measure``; ``scaling``; ``profiles``; then ``checks`` (the exercise
grader) and ``bench`` (a command-line benchmark), which ``import minilm`` does not load.
"""

__version__ = "0.2.0"

from .data import Corpus, batches, default_corpus
from .measure import (
    attention_entropy, bootstrap_interval, bucket_means, entropy, eval_batches, evaluate, extension_ratio,
    growth_exponent, log_normalisers, loss_by_length, loss_by_position, needle_attention, ngram_baselines,
    position_probe_r2, prefix_gap, retrieval_accuracy, step_time,
)
from .model import LM, Config, RopeScaling, apply_rope, attend, logn_factor, rope_angles, yarn_logit_scale
from .profiles import (
    best_uniform_for_retrieval, causal_gau, causal_recipe, causal_transformer, masked_lm_gau, masked_lm_recipe,
    nope_rope_recipe, nope_rope_transformer, profile, retrieval_head_scaled, retrieval_recipe,
)
from .scaling import (
    NOPE_FIT_C, fit_log_slope, fit_per_position, length_rule, mean_loss, temperature, train_head_scales,
    uniform_temperature_by_position, uniform_temperature_search,
)
from .training import Recipe, generate, lm_loss, pick_device, pretrained, pretrained_many, train
