"""minilm: the small library under the course on attention and length generalization.

    from minilm import Config, LM, attend, pretrained, Recipe, default_corpus
"""

__version__ = "0.1.0"

from .checks import cmp  # noqa: E402
from .data import (  # noqa: E402
    CharTokenizer, Corpus, batches, causal_batch, default_corpus, mlm_batch, passkey_prompt,
)
from .measure import (  # noqa: E402
    attention_entropy, bucket_means, entropy, eval_batches, evaluate, growth_exponent,
    extension_ratio, log_normalisers, loss_by_length, loss_by_position, ngram_baselines, passkey_accuracy, token_losses,
)
from .model import (  # noqa: E402
    LM, Config, RopeScaling, apply_rope, attend, attention_scores, attention_weights, log_row_sums,
    logn_factor, rope_angles, rope_frequencies, yarn_logit_scale,
)
from .profiles import Profile, profile  # noqa: E402
from .training import Recipe, generate, lm_loss, pick_device, pretrained, train  # noqa: E402
