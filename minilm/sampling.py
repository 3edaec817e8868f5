"""Sampling: characters from a trained causal model, one at a time."""

from __future__ import annotations

import torch

from .data import MASK, CharTokenizer, Corpus
from .model import LM
from .validation import finite_number, integer, positive_int, tokenizer_of


@torch.no_grad()
def generate(model: LM, tokenizer, prompt: str, max_new_tokens: int = 200, *, temperature: float = 0.8,
             top_k: int | None = None, context: int | None = None, seed: int = 0) -> str:
    """Sample characters one at a time from a causal model; returns the prompt and its continuation.

    ``tokenizer``: the corpus's (``corpus.tokenizer``, or the corpus itself); a model from
    ``pretrained`` refuses one of other symbols than it was trained with.

    ``temperature`` divides the output logits before sampling (the usual sampling temperature;
    < 1 is greedier).
    ``context``: how many of the last characters the model sees (default: max_len);
    set it to the training length to stay where the model was trained."""
    if not model.config.causal:
        raise ValueError("generate() needs a causal model; this one is bidirectional (a masked LM)")
    if not isinstance(prompt, str) or not prompt:
        raise ValueError(f"prompt must be a non-empty str (the model continues its last character); got {prompt!r}")
    if MASK in prompt:  # as Corpus refuses it: the model would read the mask symbol
        raise ValueError(f"prompt contains the NUL character (\\x00) at position {prompt.index(MASK)}; minilm reserves "
                         "it for the mask symbol: remove it")
    integer("max_new_tokens", max_new_tokens, at_least=0)
    finite_number("temperature", temperature, above=0)
    if top_k is not None:
        positive_int("top_k", top_k)
    if context is not None:
        positive_int("context", context)
        if context > model.config.max_len:
            raise ValueError(f"context must be at most the model's max_len={model.config.max_len}; got {context}")
    integer("seed", seed)
    if isinstance(tokenizer, Corpus):  # the corpus itself will do
        tokenizer = tokenizer.tokenizer
    tokenizer_of(model, tokenizer, CharTokenizer, "the tokenizer")
    # Sampling draws from a CPU generator, so a seed gives the same text on every device.
    generator = torch.Generator().manual_seed(int(seed))  # int: torch takes no numpy seed
    context = model.config.max_len if context is None else context
    idx = tokenizer.encode(prompt).to(model.device).unsqueeze(0)
    for _ in range(max_new_tokens):
        logits = model(idx[:, -context:])[0, -1] / temperature
        logits[tokenizer.mask_id] = float("-inf")  # first: the top k are of the symbols text may hold
        if top_k is not None:
            cutoff = logits.topk(min(top_k, logits.numel() - 1)).values[-1]
            logits = logits.masked_fill(logits < cutoff, float("-inf"))
        next_id = torch.multinomial(logits.softmax(-1).cpu(), 1, generator=generator)
        idx = torch.cat([idx, next_id.view(1, 1).to(model.device)], dim=1)
    return tokenizer.decode(idx[0])

