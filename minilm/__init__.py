"""minilm: the small library under the course on attention and length generalization.

    from minilm import Config, LM, attend, pretrained, Recipe, default_corpus
"""

__version__ = "0.1.0"

from .data import (  # noqa: E402
    Corpus, CharTokenizer, batches, causal_batch, default_corpus, mlm_batch, passkey_prompt,
)
from .measure import (  # noqa: E402
    attention_entropy, bucket_means, entropy, eval_batches, evaluate, growth_exponent, loss_by_length, loss_by_position, ngram_baselines,
    log_normalisers,
    token_losses,
)
from .model import (  # noqa: E402
    LM, Config, apply_rope, attend, attention_scores, attention_weights, logn_factor, rope_angles,
    log_row_sums,
)
from .checks import cmp  # noqa: E402
from .profiles import Profile, profile  # noqa: E402
from .training import Recipe, generate, lm_loss, pick_device, pretrained, train  # noqa: E402
