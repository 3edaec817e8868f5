"""Step time: ``step_time`` (what lesson 4 measures with), and the benchmark
``python -m minilm.bench`` (not run by CI):

1. minilm's Transformer against a plain PyTorch reference of the same shapes
   (``nn.TransformerEncoder`` pre-norm layers with a causal mask), one training
   step each (forward, backward, AdamW). Target: minilm no slower than 1.1x.
2. GAU with relu^2 against GAU with softmax.
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn

from .data import batches, default_corpus
from .model import LM, Config
from .training import adamw, lm_loss, pick_device
from .validation import positive_int


def _synchronize(device: torch.device) -> None:
    """Wait for the accelerator: its kernels run asynchronously, so a clock read alone measures nothing."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def step_time(model, x, y, repeats: int = 5) -> float:
    """Median seconds of one training step (forward, backward, AdamW) on the batch (x, y), after
    two warm-up steps. x and y are moved to the model's device."""
    positive_int("repeats", repeats)
    device = next(model.parameters()).device  # any nn.Module: the benchmark times torch's own model too
    x, y = x.to(device), y.to(device)
    optimizer = adamw(model.parameters(), lr=1e-3)  # as train() steps
    times = []
    for i in range(repeats + 2):
        _synchronize(device)
        start = time.perf_counter()
        loss = lm_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        _synchronize(device)
        if i >= 2:
            times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


class ReferenceLM(nn.Module):
    """Embedding, torch.nn.TransformerEncoder (pre-norm, GELU, no dropout), LayerNorm, tied head."""

    def __init__(self, vocab_size, d_model, n_layer, n_head):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_head, 4 * d_model, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layer, enable_nested_tensor=False)
        self.ln_out = nn.LayerNorm(d_model)

    def forward(self, idx):
        T = idx.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=idx.device)
        x = self.encoder(self.embed(idx), mask=mask, is_causal=True)
        return self.ln_out(x) @ self.embed.weight.T


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--n-layer", type=int, default=4)
    parser.add_argument("--n-head", type=int, default=4)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)

    device = pick_device()
    corpus = default_corpus()
    vocab = corpus.tokenizer.vocab_size
    x, y = next(batches(corpus, task="causal", batch_size=args.batch_size, length=args.length))
    x, y = x.to(device), y.to(device)
    print(f"device {device}, {torch.get_num_threads()} threads, batch {args.batch_size} x length {args.length}")

    torch.manual_seed(0)
    shape = dict(d_model=args.d_model, n_layer=args.n_layer)
    reference = step_time(ReferenceLM(vocab, n_head=args.n_head, **shape).to(device), x, y, args.repeats)
    print(f"torch.nn.TransformerEncoder      {1000 * reference:7.1f} ms/step")
    for pos in ("nope", "rope"):
        config = Config(vocab_size=vocab, block="transformer", n_head=args.n_head, pos=pos, **shape)
        ours = step_time(LM(config).to(device), x, y, args.repeats)
        print(f"minilm transformer ({pos})       {1000 * ours:7.1f} ms/step   ratio {ours / reference:.2f}x")

    gau = {}
    for norm, n in (("softmax", None), ("relu2", args.length), ("relu2_norm", None)):
        config = Config(vocab_size=vocab, block="gau", n_head=1, d_k=args.d_model, norm=norm, n=n,
                        d_model=args.d_model, n_layer=2 * args.n_layer)
        gau[norm] = step_time(LM(config).to(device), x, y, args.repeats)
        print(f"minilm GAU x{2 * args.n_layer} {norm:<12}      {1000 * gau[norm]:7.1f} ms/step   "
              f"vs softmax {gau[norm] / gau['softmax']:.2f}x")


if __name__ == "__main__":
    main()
