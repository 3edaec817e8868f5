"""Training: a short loop with a progress bar, a cache of trained models, and sampling.

``pretrained(config, recipe)`` is what lessons call: it trains once, stores the
weights under a key that covers everything that decides them, and later calls
(in this lesson or the next) load them instead of training again.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm import tqdm

from . import __version__
from .data import IGNORE_INDEX, Corpus, batches, default_corpus
from .model import LM, Config


def pick_device() -> torch.device:
    """CUDA if present, then Apple's MPS, else the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy in nats over the targets that count (IGNORE_INDEX is skipped)."""
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE_INDEX)


def lr_at(step: int, *, lr: float, warmup: int, steps: int, min_ratio: float = 0.1) -> float:
    """Linear warmup to lr over ``warmup`` steps, then cosine decay to min_ratio * lr at ``steps``."""
    if step < warmup:
        return lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return lr * (min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))


def train(model, batch_stream, *, steps: int, lr: float = 3e-3, warmup: int = 50,
          weight_decay: float = 0.01, clip: float = 1.0, after_step=None, desc="training",
          progress=True) -> list[float]:
    """AdamW on the parameters that require grad, warmup + cosine, gradient clipping.

    ``after_step(model)`` runs after every optimiser step (head-based scaling clamps
    its temperatures there). Returns the training loss of every step.
    """
    trainable = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    if not trainable:
        raise ValueError("the model has no parameter that requires grad; nothing to train")
    params = [p for _, p in trainable]
    # Temperatures are never decayed: decay would pull them toward 0, i.e. toward uniform attention.
    groups = [{"params": [p for name, p in trainable if name != "temperature"]},
              {"params": [p for name, p in trainable if name == "temperature"], "weight_decay": 0.0}]
    device = next(model.parameters()).device
    optimizer = torch.optim.AdamW([g for g in groups if g["params"]], lr=lr, weight_decay=weight_decay,
                                  betas=(0.9, 0.95))
    history = []
    model.train()
    bar = tqdm(range(steps), desc=desc, disable=not progress, mininterval=0.5)
    for step in bar:
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, lr=lr, warmup=min(warmup, steps), steps=steps)
        x, y = next(batch_stream)
        loss = lm_loss(model(x.to(device)), y.to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, clip)
        optimizer.step()
        if after_step is not None:
            with torch.no_grad():
                after_step(model)
        history.append(loss.item())
        if step % 25 == 0 or step == steps - 1:
            bar.set_postfix(loss=f"{history[-1]:.3f}")
    model.eval()
    return history


# ----------------------------------------------------------------------------
# Recipes and the cache
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Recipe:
    """How a model is trained: together with its Config and the corpus, this decides the weights."""

    task: str = "causal"          # "causal" or "mlm"
    length: int | None = 64       # one training length ...
    lengths: tuple | None = None  # ... or mixed lengths (then set length=None)
    steps: int = 500
    batch_size: int = 32
    lr: float = 3e-3
    warmup: int = 50
    weight_decay: float = 0.01
    seed: int = 0


def _state_fingerprint(model) -> str:
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


def _code_fingerprint() -> str:
    """A hash of the library files that decide trained weights: any edit to them retires old caches."""
    digest = hashlib.sha256()
    for name in ("model.py", "data.py", "training.py"):
        digest.update((Path(__file__).parent / name).read_bytes())
    return digest.hexdigest()[:16]


CODE_FINGERPRINT = _code_fingerprint()  # of the code this process imported, not of later edits


def cache_key(config: Config, recipe: Recipe, corpus: Corpus, init=None) -> dict:
    """Everything that decides the trained weights, as a JSON-able dict (exactly as stored:
    tuples become lists, so a key read back from a checkpoint compares equal)."""
    return json.loads(json.dumps({
        "config": config.to_dict(),
        "recipe": asdict(recipe),
        "corpus": corpus.fingerprint,
        "init": None if init is None else _state_fingerprint(init),
        "minilm": __version__,
        "code": CODE_FINGERPRINT,
        "torch": torch.__version__.split("+")[0],
    }))


def cache_dir() -> Path:
    """``$MINILM_CACHE`` if set, else ``~/.cache/minilm``."""
    return Path(os.environ.get("MINILM_CACHE") or Path.home() / ".cache" / "minilm")


def _cache_path(key: dict) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    return cache_dir() / f"{digest}.pt"


def _save_atomic(payload: dict, path: Path) -> None:
    """Write to a temporary file in the same folder, then rename: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(fd)
    try:
        torch.save(payload, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _load_cached(path: Path, key: dict):
    """The stored payload if the file is whole and was made for exactly this key, else None."""
    if not path.exists():
        return None
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # a truncated or foreign file: never use it
        warnings.warn(f"ignoring unreadable cache file {path.name} ({type(error).__name__}); retraining")
        return None
    if not isinstance(payload, dict) or payload.get("key") != key:
        warnings.warn(f"cache file {path.name} was made for another key; retraining")
        return None
    return payload


def pretrained(config: Config, recipe: Recipe = Recipe(), *, corpus: Corpus | None = None,
               init: LM | None = None, use_cache: bool = True, progress: bool = True):
    """Train ``LM(config)`` by ``recipe`` (or load it from the cache). Returns (model, history).

    ``init``: start from these weights instead of a fresh model (fine-tuning); they are
    part of the key. The model comes back in eval mode on pick_device().
    """
    corpus = corpus or default_corpus()
    if config.vocab_size != corpus.tokenizer.vocab_size:
        raise ValueError(f"config.vocab_size={config.vocab_size} but the corpus has "
                         f"{corpus.tokenizer.vocab_size} symbols")
    key = cache_key(config, recipe, corpus, init)
    path = _cache_path(key)
    device = pick_device()
    payload = _load_cached(path, key) if use_cache else None

    torch.manual_seed(recipe.seed)
    model = LM(config)
    if init is not None:
        model.load_state_dict(init.state_dict())
    model.to(device)
    if payload is not None:
        model.load_state_dict(payload["state"])
        model.eval()
        return model, payload["history"]

    stream = batches(corpus, task=recipe.task, batch_size=recipe.batch_size, length=recipe.length,
                     lengths=recipe.lengths, seed=recipe.seed)
    history = train(model, stream, steps=recipe.steps, lr=recipe.lr, warmup=recipe.warmup,
                    weight_decay=recipe.weight_decay, progress=progress,
                    desc=f"{config.block} {config.norm} seed {recipe.seed}")
    if use_cache:
        state = {name: t.detach().cpu() for name, t in model.state_dict().items()}
        _save_atomic({"key": key, "state": state, "history": history}, path)
    return model, history


# ----------------------------------------------------------------------------
# Sampling
# ----------------------------------------------------------------------------


@torch.no_grad()
def generate(model: LM, tokenizer, prompt: str, max_new_tokens: int = 200, *, temperature: float = 0.8,
             top_k: int | None = None, context: int | None = None, seed: int = 0) -> str:
    """Sample characters one at a time from a causal model; returns the prompt and its continuation.

    ``context``: how many of the last characters the model sees (default: max_len);
    set it to the training length to stay where the model was trained."""
    if not model.config.causal:
        raise ValueError("generate() needs a causal model; this one is bidirectional (a masked LM)")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0; got {temperature!r}")
    device = next(model.parameters()).device
    generator = torch.Generator(device=device).manual_seed(seed)
    context = context or model.config.max_len
    idx = tokenizer.encode(prompt).to(device).unsqueeze(0)
    for _ in range(max_new_tokens):
        logits = model(idx[:, -context:])[0, -1] / temperature
        if top_k is not None:
            cutoff = logits.topk(min(top_k, logits.numel())).values[-1]
            logits = logits.masked_fill(logits < cutoff, float("-inf"))
        logits[tokenizer.mask_id] = float("-inf")
        next_id = torch.multinomial(logits.softmax(-1), 1, generator=generator)
        idx = torch.cat([idx, next_id.view(1, 1)], dim=1)
    return tokenizer.decode(idx[0])
