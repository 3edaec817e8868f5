"""Train from the command line, in one process or many (torchrun, DistributedDataParallel).

    python -m minilm.distributed --config '{"d_model": 128, "n_layer": 4}' --recipe '{"steps": 3000}'
    torchrun --standalone --nproc_per_node=8 -m minilm.distributed --config ... --recipe ...

It trains exactly what ``minilm.pretrained(config, recipe)`` trains (same seed, same
batches, same ``train`` loop) and writes the result into the same cache, under the same
key, so a lesson's ``pretrained`` call loads it instead of training. ``--config`` and
``--recipe`` take JSON (text or a file) with the fields of ``Config`` and ``Recipe``;
``vocab_size`` defaults to the corpus's.

Why "distributed" and not ``minilm/train.py``: ``minilm.train`` is already the training
*function* (``from minilm import train``); a submodule of that name would replace it
as an attribute of the package the moment it is imported.

Without torchrun's environment (RANK, WORLD_SIZE, ...) it is the single-process loop.
Under torchrun, nanoGPT-style: the process group comes from that environment (NCCL on
CUDA, one GPU per process, else gloo on the CPU); every process draws the same seeded
global batch and trains on its slice of it, in ``train(..., shard=(rank, world_size))``,
which wraps the model in DistributedDataParallel; only rank 0 prints, reads and writes
files (it broadcasts a resume checkpoint to the others, so nodes need no shared disk);
the process group is torn down at the end. The global batch stays ``recipe.batch_size``
(it must be divisible by the number of processes), so the weights match one process up
to floating-point rounding, and the cache key does not depend on the number of processes.

Resuming: every ``--checkpoint-every`` steps rank 0 writes model, optimizer, step and
loss history to ``<cache file>.resume.pt``; a rerun of the same command loads it and
fast-forwards the batch stream (it is deterministic from the seed) by drawing and
discarding ``step`` batches. ``--stop-after K`` ends the run cleanly after step K, with
a checkpoint: to split a long run into jobs, or to test resuming.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch
import torch.distributed as dist

from .data import Corpus, default_corpus
from .cache import cache_key, cache_path, load_cached, prepare_cache, save_atomic
from .model import Config
from .training import Recipe, initial_model, pick_device, train_by_recipe


class _Throughput:
    """Tokens per second of the global batch, timed from the end of the first step, so that
    one-off costs (setting up DDP, the first step's allocations) are left out."""

    def __init__(self):
        self.tokens, self.since = 0, None

    def count(self, stream):
        for x, y in stream:
            self.tokens += x.numel()
            yield x, y

    def tick(self):
        if self.since is None:
            self.since = (time.perf_counter(), self.tokens)

    def __str__(self):
        start, tokens = self.since or (None, self.tokens)
        if start is None or self.tokens == tokens:
            return ""
        return f"{(self.tokens - tokens) / (time.perf_counter() - start):,.0f} tokens/s"


def _cpu_state(model) -> dict:
    return {name: t.detach().cpu() for name, t in model.state_dict().items()}


class _Stop(Exception):
    """--stop-after reached: the checkpoint is written, end without finishing."""


def _json(text: str) -> dict:
    """A JSON object given inline or as the path of a file."""
    if not text.lstrip().startswith("{") and Path(text).is_file():
        text = Path(text).read_text()
    values = json.loads(text)
    if not isinstance(values, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object; got {text!r}")
    return values


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}")
    return int(text)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m minilm.distributed", description=__doc__.split("\n")[0])
    parser.add_argument("--config", type=_json, default={}, help="Config fields as JSON (text or file)")
    parser.add_argument("--recipe", type=_json, default={}, help="Recipe fields as JSON (text or file)")
    parser.add_argument("--corpus", help="a UTF-8 text file (default: the Python docs corpus)")
    parser.add_argument("--log-every", type=_positive, default=25, help="print the loss every N steps")
    parser.add_argument("--checkpoint-every", type=_positive, default=100,
                        help="write a resume checkpoint every N steps")
    parser.add_argument("--stop-after", type=_positive,
                        help="stop after step K (with a checkpoint); rerun the command to resume")
    return parser.parse_args(argv)


def setup():
    """(rank, world_size, device): from torchrun's environment if present, else one process."""
    if "RANK" not in os.environ:
        return 0, 1, pick_device()
    cuda = torch.cuda.is_available()
    dist.init_process_group(backend="nccl" if cuda else "gloo")
    device = torch.device("cpu")
    if cuda:
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)
    return dist.get_rank(), dist.get_world_size(), device


def main(argv=None) -> None:
    args = parse_args(argv)
    corpus = Corpus.from_file(args.corpus) if args.corpus else default_corpus()
    config = Config(**{"vocab_size": corpus.tokenizer.vocab_size, **args.config})
    if config.vocab_size != corpus.tokenizer.vocab_size:
        raise SystemExit(f"config vocab_size={config.vocab_size} but the corpus has "
                         f"{corpus.tokenizer.vocab_size} symbols")
    recipe_fields = dict(args.recipe)
    if recipe_fields.get("lengths") is not None:
        recipe_fields["lengths"] = tuple(recipe_fields["lengths"])
    recipe = Recipe(**recipe_fields)
    key = cache_key(config, recipe, corpus)
    path = cache_path(key)
    resume_path = path.with_name(path.stem + ".resume.pt")

    rank, world, device = setup()
    log = print if rank == 0 else (lambda *a, **k: None)
    try:
        if recipe.batch_size % world:
            raise SystemExit(f"batch_size {recipe.batch_size} is not divisible by {world} processes")
        # Rank 0 alone reads the disk; the others get what it found.
        found = [None, None]
        if rank == 0:
            done = load_cached(path, key) is not None
            found = [done, None if done else load_cached(resume_path, key)]
        if world > 1:
            dist.broadcast_object_list(found, src=0)
        done, checkpoint = found
        if done:
            log(f"already trained, nothing to do: {path}")
            return
        if rank == 0:
            prepare_cache(path)  # an unwritable cache fails now, not after training

        model = initial_model(config, recipe).to(device)  # as pretrained() starts
        stream = recipe.stream(corpus)
        resume = None
        if checkpoint is not None:
            model.load_state_dict(checkpoint["state"])
            resume = {name: checkpoint[name] for name in ("step", "optimizer", "history")}
            for _ in range(resume["step"]):  # fast-forward the deterministic stream
                next(stream)
        start = resume["step"] if resume else 0
        log(f"minilm.distributed: {world} process(es) on {device}"
            f"{f' ({dist.get_backend()})' if world > 1 else ''}, {model.num_parameters():,} parameters, "
            f"global batch {recipe.batch_size} ({recipe.batch_size // world} per process), "
            f"{'resuming at step ' + str(start) if start else 'from step 0'} of {recipe.steps}")
        log(f"cache file: {path}")

        speed = _Throughput()

        def on_step(step, optimizer, history):
            speed.tick()
            if step % args.log_every == 0 or step == recipe.steps:
                log(f"step {step}/{recipe.steps}  loss {history[-1]:.4f}  {speed}".rstrip(), flush=True)
            stop = step == args.stop_after and step < recipe.steps
            if rank == 0 and step < recipe.steps and (step % args.checkpoint_every == 0 or stop):
                save_atomic({"key": key, "state": _cpu_state(model), "optimizer": optimizer.state_dict(),
                              "step": step, "history": list(history)}, resume_path)
            if stop:
                raise _Stop

        started = time.perf_counter()
        try:
            # as pretrained() trains: the same weights, bit for bit
            history = train_by_recipe(model, recipe, speed.count(stream), progress=False, shard=(rank, world),
                                      resume=resume, on_step=on_step)
        except _Stop:
            log(f"stopped after step {args.stop_after}; checkpoint {resume_path.name}; rerun to resume")
            return
        log(f"done: {recipe.steps - start} steps in {time.perf_counter() - started:.1f} s  {speed}".rstrip())
        if rank == 0:  # exactly what pretrained() stores
            save_atomic({"key": key, "state": _cpu_state(model), "history": history}, path)
            resume_path.unlink(missing_ok=True)
            log(f"written: {path}")
    finally:
        if world > 1:
            dist.destroy_process_group()


if __name__ == "__main__":
    main()
