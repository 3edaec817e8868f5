"""Measuring a trained model: loss by length and position, MLM accuracy, attention entropy, Z_i.

Evaluation batches come from the validation split with a fixed seed, so two models
(or two attention settings of one model) are always compared on the same text.
Keyword overrides (``n=...``, ``logn_base=...``) are passed to ``model(idx, ...)``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .data import IGNORE_INDEX, Corpus, batches
from .model import log_row_sums

EVAL_SEED = 1234


def eval_batches(corpus: Corpus, *, task: str, length: int, batch_size: int = 16, n_batches: int = 4,
                 seed: int = EVAL_SEED):
    """A fixed list of validation batches (the same for every model)."""
    stream = batches(corpus, task=task, batch_size=batch_size, length=length, split="val", seed=seed)
    return [next(stream) for _ in range(n_batches)]


def _device(model):
    return next(model.parameters()).device


@torch.no_grad()
def token_losses(model, corpus: Corpus, *, task: str, length: int, batch_size: int = 16,
                 n_batches: int = 4, **overrides):
    """Per-token cross-entropy (nats) and correctness on validation batches: two (N, T) tensors.

    For 'mlm', positions that are not targets hold NaN (loss) and False (correct).
    """
    model.eval()
    losses, correct = [], []
    for x, y in eval_batches(corpus, task=task, length=length, batch_size=batch_size,
                             n_batches=n_batches):
        x, y = x.to(_device(model)), y.to(_device(model))
        logits = model(x, **overrides)
        loss = F.cross_entropy(logits.transpose(1, 2), y, ignore_index=IGNORE_INDEX, reduction="none")
        counted = y != IGNORE_INDEX
        losses.append(torch.where(counted, loss, torch.nan).cpu())
        correct.append(((logits.argmax(-1) == y) & counted).cpu())
    return torch.cat(losses), torch.cat(correct)


def evaluate(model, corpus: Corpus, *, task: str, length: int, batch_size: int = 16, n_batches: int = 4,
             **overrides) -> dict:
    """Mean validation loss (nats) and accuracy over the targets, at one length."""
    loss, correct = token_losses(model, corpus, task=task, length=length, batch_size=batch_size,
                                 n_batches=n_batches, **overrides)
    counted = ~loss.isnan()
    return {"loss": loss[counted].mean().item(),
            "accuracy": correct.sum().item() / counted.sum().item()}


def loss_by_length(model, corpus: Corpus, lengths, *, task: str = "causal", tokens: int = 16384,
                   **overrides) -> dict:
    """{length: mean validation loss}, each length seeing about ``tokens`` tokens."""
    return {L: evaluate(model, corpus, task=task, length=L, batch_size=max(1, tokens // L // 4),
                        n_batches=4, **overrides)["loss"]
            for L in lengths}


def loss_by_position(model, corpus: Corpus, length: int, *, batch_size: int = 8, n_batches: int = 4,
                     **overrides) -> torch.Tensor:
    """Mean causal-LM loss at each position 0..length-1, shape (length,)."""
    loss, _ = token_losses(model, corpus, task="causal", length=length, batch_size=batch_size,
                           n_batches=n_batches, **overrides)
    return loss.mean(dim=0)


def bucket_means(values: torch.Tensor, bucket: int) -> torch.Tensor:
    """Average the last dimension in consecutive buckets of ``bucket`` positions (a partial last bucket too)."""
    T = values.shape[-1]
    return torch.stack([values[..., s : s + bucket].mean(-1) for s in range(0, T, bucket)], dim=-1)


def entropy(weights: torch.Tensor) -> torch.Tensor:
    """H_i = -sum_j p_ij log p_ij of each row, with p the row normalised to sum 1 (nats).

    For softmax p = a; for relu^2 / n it is the shape of the row, whatever its total.
    A row of zeros has entropy 0.
    """
    total = weights.sum(-1, keepdim=True)
    p = weights / torch.where(total > 0, total, torch.ones_like(total))
    return -torch.special.xlogy(p, p).sum(-1)


@torch.no_grad()
def attention_entropy(model, idx: torch.Tensor, **overrides) -> torch.Tensor:
    """Attention entropy per layer, head and query position, averaged over the batch: (n_layer, H, T)."""
    model.eval()
    _, weights = model(idx.to(_device(model)), return_weights=True, **overrides)
    return torch.stack([entropy(w).mean(0) for w in weights]).cpu()


@torch.no_grad()
def log_normalisers(model, idx: torch.Tensor, **overrides) -> torch.Tensor:
    """log Z_i per layer, head and query position, averaged over the batch: (n_layer, H, T).

    Z_i = sum_j exp(S_ij) for a softmax model, sum_j relu(S_ij)^2 for a relu^2 model
    (what relu2_norm divides by, and what relu2 replaces with n). Averaging log Z (not Z)
    keeps a few rows with huge logits from dominating."""
    model.eval()
    _, scores = model(idx.to(_device(model)), return_scores=True, **overrides)
    norm = "softmax" if model.config.norm == "softmax" else "relu2"
    return torch.stack([log_row_sums(s, norm=norm).mean(0) for s in scores]).cpu()


def ngram_baselines(corpus: Corpus, smoothing: float = 0.01) -> dict:
    """Validation loss (nats) of a unigram and a bigram model counted on the training split.

    What a model must beat to have learned more than letter frequencies (unigram) or
    which letter follows which (bigram). Counts get ``smoothing`` added so no probability is 0.
    """
    V = corpus.tokenizer.vocab_size
    train, val = corpus.train, corpus.val
    unigram = torch.bincount(train, minlength=V).double() + smoothing
    bigram = torch.zeros(V, V, dtype=torch.float64)
    bigram.index_put_((train[:-1], train[1:]), torch.ones(len(train) - 1, dtype=torch.float64),
                      accumulate=True)
    bigram += smoothing
    unigram_nll = -(unigram / unigram.sum()).log()[val].mean().item()
    bigram_nll = -(bigram / bigram.sum(1, keepdim=True)).log()[val[:-1], val[1:]].mean().item()
    return {"unigram": unigram_nll, "bigram": bigram_nll}


def growth_exponent(ns, values) -> float:
    """b in value ~ a * n^b, by a least-squares line through (log n, log value).

    b = 1: grows like n (O(n)); b = 0: does not grow (O(1))."""
    x = torch.log(torch.as_tensor(ns, dtype=torch.float64))
    y = torch.log(torch.as_tensor(values, dtype=torch.float64))
    x, y = x - x.mean(), y - y.mean()
    return float((x * y).sum() / (x * x).sum())


@torch.no_grad()
def passkey_accuracy(model, tokenizer, lengths, depths, *, trials: int = 8, seed: int = 0,
                     **overrides) -> torch.Tensor:
    """Exact-match passkey retrieval, shape (len(lengths), len(depths)).

    For each (length, depth): ``trials`` prompts with random 5-digit keys (see
    data.passkey_prompt); the model decodes greedily as many characters as the key has,
    and a trial counts when they are exactly the key."""
    from .data import passkey_prompt

    model.eval()
    generator = torch.Generator().manual_seed(seed)
    result = torch.zeros(len(lengths), len(depths))
    for a, length in enumerate(lengths):
        for b, depth in enumerate(depths):
            keys = torch.randint(10000, 100000, (trials,), generator=generator).tolist()
            prompts = [passkey_prompt(length, depth, key) for key in keys]
            idx = torch.stack([tokenizer.encode(text) for text, _ in prompts]).to(_device(model))
            for _ in range(5):
                next_ids = model(idx, **overrides)[:, -1].argmax(-1, keepdim=True)
                idx = torch.cat([idx, next_ids], dim=1)
            answers = [tokenizer.decode(row[-5:]) for row in idx.cpu()]
            result[a, b] = sum(ans == key for ans, (_, key) in zip(answers, prompts)) / trials
    return result


def extension_ratio(position_loss: torch.Tensor, train_len: int, *, margin: float = 0.1,
                    bucket: int | None = None) -> float:
    """How far past its training length a model goes before its loss rises by ``margin``.

    Reference: the mean loss over positions [L/2, L). Positions from L on are averaged in
    buckets (default L/8 wide); the ratio is where the first bucket above reference + margin
    starts, divided by L (1.0: it fails right past L). If no bucket rises, the evaluated
    length / L (a lower bound)."""
    L = train_len
    bucket = bucket or max(1, L // 8)
    reference = position_loss[L // 2 : L].mean()
    beyond = bucket_means(position_loss[L:], bucket)
    above = (beyond > reference + margin).nonzero()
    if len(above) == 0:
        return len(position_loss) / L
    return (L + int(above[0]) * bucket) / L
