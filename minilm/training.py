"""Training: the loop, and the recipe that, with a Config and a corpus, decides the weights.

Everything here decides trained weights, and so does every line of ``model.py`` and
``data.py``: the cache (``minilm.cache``) fingerprints the code of these three modules, and
a change to what it does retires every cached model. What does not decide weights lives
elsewhere: the cache itself, sampling (``minilm.sampling``), measurement.
"""

from __future__ import annotations

import math
import sys
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from .data import FILLERS, IGNORE_INDEX, Corpus, batches
from .model import LM, Config
from . import validation as check
from .validation import plain_fields


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


FUSED_ADAMW_DEVICES = ("cpu", "cuda", "mps")  # torch has a one-kernel AdamW for these


def adamw(params, *, lr: float, weight_decay: float = 0.01) -> torch.optim.AdamW:
    """AdamW with betas (0.9, 0.95), as one fused kernel where torch has it for the parameters'
    device (the same update, several times faster than a loop over a tiny model's tensors)."""
    groups = list(params)
    tensors = [p for group in groups for p in (group["params"] if isinstance(group, dict) else [group])]
    fused = all(p.device.type in FUSED_ADAMW_DEVICES for p in tensors)
    return torch.optim.AdamW(groups, lr=lr, weight_decay=weight_decay, betas=(0.9, 0.95), fused=fused)


def train(model, batch_stream, *, steps: int, lr: float = 3e-3, warmup: int = 50,
          weight_decay: float = 0.01, clip: float = 1.0, after_step=None, desc="training",
          progress=True, loss_of=None, resume=None, on_step=None) -> list[float]:
    """AdamW on the parameters that require grad, warmup + cosine, gradient clipping.

    ``after_step(model)`` runs after every optimiser step (head-based scaling clamps
    its multipliers there). Returns the training loss of every step.

    Three keywords serve ``python -m minilm.distributed`` (lessons never pass them):
    ``loss_of(x, y)`` -> (the loss to backpropagate, the batch's mean loss), by default
    lm_loss of the model on the whole batch (under DDP: ``shard_loss``);
    ``resume={"step", "optimizer", "history"}`` continues a run from a checkpoint (the
    caller has loaded the weights and fast-forwarded the stream by ``step`` batches);
    ``on_step(step, optimizer, history)`` runs after every step (``step``: steps done).

    A run that diverges (a loss, or at the end a weight, that is inf or nan) raises
    FloatingPointError naming the step: its weights are ruined, and returned they would be cached.
    """
    check.train_args(model, batch_stream, steps=steps, lr=lr, warmup=warmup, weight_decay=weight_decay, clip=clip)
    trainable = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    params = [p for _, p in trainable]
    # Multipliers are never decayed: decay would pull them toward 0, i.e. toward uniform attention.
    groups = [{"params": [p for name, p in trainable if name != "multiplier"]},
              {"params": [p for name, p in trainable if name == "multiplier"], "weight_decay": 0.0}]
    optimizer = adamw([g for g in groups if g["params"]], lr=lr, weight_decay=weight_decay)
    device = next(model.parameters()).device
    loss_of = loss_of or (lambda x, y: (lm_loss(model(x.to(device)), y.to(device)),) * 2)
    history, start = [], 0
    if resume is not None:
        optimizer.load_state_dict(resume["optimizer"])
        history, start = list(resume["history"]), resume["step"]
    model.train()
    # stdout, not tqdm's default stderr: a notebook shows stderr as if it were an error
    bar = tqdm(range(start, steps), desc=desc, disable=not progress, mininterval=0.5, initial=start, total=steps,
               file=sys.stdout)
    for step in bar:
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, lr=lr, warmup=min(warmup, steps), steps=steps)
        loss, logged = loss_of(*next(batch_stream))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, clip)
        optimizer.step()
        if after_step is not None:
            with torch.no_grad():
                after_step(model)
        history.append(logged.item())
        if not math.isfinite(history[-1]):  # the value just synced: checking it costs nothing
            raise FloatingPointError(f"training diverged at step {step + 1} of {steps}: the loss is {history[-1]}; "
                                     f"try a lower learning rate than lr={lr}")
        if step % 25 == 0 or step == steps - 1:
            bar.set_postfix(loss=f"{history[-1]:.3f}")
        if on_step is not None:
            on_step(step + 1, optimizer, history)
    fail_if_diverged(model, steps, lr)  # the last update comes after the last loss
    model.eval()
    return history


def fail_if_diverged(model, step: int, lr: float) -> None:
    """Raise FloatingPointError if a weight of ``model`` is inf or nan after ``step`` steps at
    learning rate ``lr`` (one host-device sync for all of them)."""
    if torch.stack([p.detach().isfinite().all() for p in model.parameters()]).all().item():
        return
    bad = [name for name, p in model.named_parameters() if not p.detach().isfinite().all()]
    named = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
    raise FloatingPointError(f"training diverged at step {step}: after it the weights {named} hold inf or nan; "
                             f"try a lower learning rate than lr={lr}")


def shard_loss(model, rank: int, world: int):
    """train()'s ``loss_of`` for process ``rank`` of ``world`` under torch.distributed (a process
    group set up): the model wrapped in DistributedDataParallel, on its share of every global
    batch (every process draws the same one; see _shard_loss)."""
    device = next(model.parameters()).device
    net = DistributedDataParallel(model, device_ids=[device] if device.type == "cuda" else None)
    return lambda x, y: _shard_loss(net, x, y, rank, world, device)


def _shard_loss(net, x, y, rank: int, world: int, device):
    """This process's share of the global batch (x, y), rows ``rank*B/W`` to ``(rank+1)*B/W``:
    (loss to backpropagate, global mean loss).

    The loss is (sum of this shard's token losses) x W / (targets in the whole batch).
    DistributedDataParallel averages gradients over the W processes, so their mean is the
    gradient of the global batch's mean loss, exactly as one process computes it, for
    masked-LM batches too (where the shards hold unequal numbers of targets).
    """
    if x.shape[0] % world:
        raise ValueError(f"batch size {x.shape[0]} is not divisible by {world} processes")
    part = slice(rank * x.shape[0] // world, (rank + 1) * x.shape[0] // world)
    logits = net(x[part].to(device))
    total = F.cross_entropy(logits.flatten(0, 1), y[part].to(device).flatten(), ignore_index=IGNORE_INDEX,
                            reduction="sum")
    count = int((y != IGNORE_INDEX).sum())
    mean = total.detach() / count
    torch.distributed.all_reduce(mean)  # the sum over processes: the global batch's mean loss
    return total * (world / count), mean


@contextmanager
def one_thread_on_cpu(device: torch.device):
    """Train on one CPU thread. A tiny model gains little from more (2 threads: about 1.4x one),
    and the weights then do not depend on the machine's core count, nor on whether
    pretrained_many trained the model beside others (threads split sums differently, and the
    rounding differences grow over thousands of steps)."""
    if device.type != "cpu":
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


# ----------------------------------------------------------------------------
# Recipes
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
    retrieval: float = 0.0        # the fraction of batches that are retrieval batches (data.retrieval_batch)
    filler: str = "text"          # what fills a retrieval window: "text" or "random" letters (data.FILLERS)

    def __post_init__(self):
        plain_fields(self)
        check.recipe(self, FILLERS)
        if self.lengths is not None:  # a tuple of ints whatever was given (a list from JSON, a range, an
            # array): the recipe stays hashable, and equal recipes make one cache key
            object.__setattr__(self, "lengths", tuple(int(length) for length in self.lengths))

    def stream(self, corpus: Corpus):
        """The seeded stream of training batches this recipe draws from ``corpus``."""
        return batches(corpus, task=self.task, batch_size=self.batch_size, length=self.length,
                       lengths=self.lengths, seed=self.seed, retrieval=self.retrieval, filler=self.filler)


def initial_model(config: Config, recipe: Recipe, init: LM | None = None) -> LM:
    """The weights training starts from: LM(config) drawn with ``recipe.seed``, or a copy of
    ``init``'s weights (fine-tuning), checked to fit the model built here (validation.init_weights):
    the one build of the model. On the CPU; the caller moves it."""
    torch.manual_seed(recipe.seed)
    model = LM(config)
    if init is not None:
        check.init_weights(init, model)
        model.load_state_dict(init.state_dict())
    return model


def train_by_recipe(model, recipe: Recipe, stream, *, progress: bool = True, desc: str = "training",
                    loss_of=None, resume=None, on_step=None) -> list[float]:
    """train() with the recipe's steps, learning rate, warmup and weight decay, on one CPU
    thread (see one_thread_on_cpu). ``stream`` is ``recipe.stream(corpus)``: the caller may
    wrap it (to count tokens) or fast-forward it (to resume). Returns the loss history."""
    with one_thread_on_cpu(model.device):
        return train(model, stream, steps=recipe.steps, lr=recipe.lr, warmup=recipe.warmup,
                     weight_decay=recipe.weight_decay, progress=progress, desc=desc, loss_of=loss_of,
                     resume=resume, on_step=on_step)
