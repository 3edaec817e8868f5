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
global batch and trains on its slice of it, in ``train(..., loss_of=shard_loss(model, rank, world_size))``,
which wraps the model in DistributedDataParallel; only rank 0 prints, reads and writes
files (it broadcasts a resume checkpoint to the others, so nodes need no shared disk);
the process group is torn down at the end. The global batch stays ``recipe.batch_size``
(it must be divisible by the number of processes), so the weights match one process up
to floating-point rounding, and the cache key does not depend on the number of processes.

Resuming: every ``--checkpoint-every`` steps rank 0 writes model, optimizer, step and
loss history to ``<cache file>.resume.pt``; a rerun of the same command loads it and
fast-forwards the batch stream (it is deterministic from the seed) by drawing and
discarding ``step`` batches. ``--stop-after K`` ends the run cleanly after step K, with
a checkpoint: to split a long run into jobs, or to test resuming (a checkpoint already at K
or past it: nothing to do). A checkpoint is named by its run's key, so no other run could
resume it: one that cannot be resumed (corrupted, or made for another key) is removed, and
so is one whose model is trained (with the temporary files of this key's killed saves:
``minilm.cache.sweep``). A run that diverges stops with the step, and caches nothing.
A checkpoint of a run that is never resumed stays (``<cache folder>/<key>.resume.pt``, its path
printed when the run stops), beside the models of other keys, whose runs leave it (its own command
can still resume it): delete it to discard the run.

What goes wrong is said in one line, without a traceback: a bad option, a corpus that is missing,
empty or not text, a cache that cannot be written, a ``RANK`` variable without torchrun's others,
a save that fails (a full disk: the run stops at that checkpoint, and the last checkpoint written
is kept, so a rerun after freeing space resumes from it).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import fields
from pathlib import Path

import torch
import torch.distributed as dist

from .data import Corpus, default_corpus
from .cache import (SAVE_ERRORS, cache_key, cache_path, load_cached, prepare_cache, resume_path,
                    save_atomic, save_problem, sweep)
from .model import Config
from .training import (Recipe, fail_if_diverged, initial_model, pick_device, shard_loss,
                       train_by_recipe)
from .validation import no_target_leakage


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
    """A JSON object given inline or as the path of a file. What is wrong with it, argparse
    reports under the option's name: no such file, a directory, an empty file, where the JSON breaks."""
    source = "the JSON"
    if not text.lstrip().startswith("{"):  # the path of a file, or JSON that is not an object
        path = Path(text)
        if path.is_dir():
            raise argparse.ArgumentTypeError(f"{text} is a directory, not a JSON file")
        if path.is_file():
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise argparse.ArgumentTypeError(f"cannot read {path}: {error}") from None
            if not text.strip():
                raise argparse.ArgumentTypeError(f"file {path} is empty; it must hold a JSON object such as "
                                                 '{"steps": 100}')
            source = f"file {path}"
        else:
            try:
                json.loads(text)
            except json.JSONDecodeError:
                raise argparse.ArgumentTypeError(f"{text!r} is neither a JSON object nor a file (no such file)"
                                                 ) from None
    try:
        values = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"{source} is not valid JSON: {error.msg} at line {error.lineno} "
                                         f"column {error.colno}") from None
    if not isinstance(values, dict):
        raise argparse.ArgumentTypeError(f'expected a JSON object such as {{"steps": 100}}; got {text!r}')
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


TORCHRUN_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")  # torchrun sets them all


def setup():
    """(rank, world_size, device): from torchrun's environment if present, else one process."""
    if "RANK" not in os.environ:
        return 0, 1, pick_device()
    missing = [name for name in TORCHRUN_VARIABLES if name not in os.environ]
    if missing:
        raise SystemExit(f"minilm.distributed: RANK={os.environ['RANK']!r} is set but not {', '.join(missing)}: "
                         "run it under torchrun, or unset RANK to train in one process")
    cuda = torch.cuda.is_available()
    dist.init_process_group(backend="nccl" if cuda else "gloo")
    device = torch.device("cpu")
    if cuda:
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)
    return dist.get_rank(), dist.get_world_size(), device


def _config_and_recipe(args, corpus):
    """The Config and Recipe of --config and --recipe; a bad one exits naming its option."""
    try:
        config = Config.from_dict({"vocab_size": corpus.tokenizer.vocab_size, **args.config})
    except (ValueError, TypeError) as error:
        raise SystemExit(f"--config: {error}") from None
    if config.vocab_size != corpus.tokenizer.vocab_size:
        raise SystemExit(f"config vocab_size={config.vocab_size} but the corpus has "
                         f"{corpus.tokenizer.vocab_size} symbols")
    known = [f.name for f in fields(Recipe)]
    unknown = [key for key in args.recipe if key not in known]
    if unknown:
        raise SystemExit(f"--recipe: unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(known)}")
    try:
        recipe = Recipe(**args.recipe)  # lengths as JSON gives them, a list: Recipe makes it a tuple
    except (ValueError, TypeError) as error:
        raise SystemExit(f"--recipe: {error}") from None
    try:
        no_target_leakage(config.causal, recipe.task)
    except ValueError as error:
        raise SystemExit(f"--config and --recipe: {error}") from None
    return config, recipe


def _corpus(path: str | None) -> Corpus:
    """--corpus as a Corpus (default: the Python docs); a file that is missing, empty or not UTF-8
    text exits naming the option."""
    if path is None:
        return default_corpus()
    file = Path(path)
    if not file.is_file():
        raise SystemExit(f"--corpus: {path} {'is a directory' if file.is_dir() else 'does not exist'}; "
                         "give a UTF-8 text file")
    try:
        corpus = Corpus.from_file(file)
    except (OSError, ValueError) as error:
        raise SystemExit(f"--corpus: {error}") from None
    if not corpus.text.strip():
        raise SystemExit(f"--corpus: {path} holds no text ({len(corpus.text)} characters); give a UTF-8 text file")
    return corpus


def _save_or_exit(payload: dict, path: Path, what: str, kept: str) -> None:
    """save_atomic, or exit in one line saying what could not be written and what is kept."""
    try:
        save_atomic(payload, path)
    except SAVE_ERRORS as error:
        raise SystemExit(f"minilm.distributed: could not write {what} to {path} ({save_problem(path, error)}); "
                         f"{kept}") from None


def _resumable(path: Path, key: dict, log):
    """The resume checkpoint at ``path`` if it can be resumed, else None. One that cannot
    (corrupted, made for another key: load_cached warns which) is removed: it is named by this
    key, so no other run would ever resume it."""
    checkpoint = load_cached(path, key)
    if checkpoint is None and path.is_file():
        path.unlink(missing_ok=True)
        log(f"removed {path.name}: it cannot be resumed (see the warning above); starting afresh")
    return checkpoint


def main(argv=None) -> None:
    args = parse_args(argv)
    corpus = _corpus(args.corpus)
    config, recipe = _config_and_recipe(args, corpus)
    key = cache_key(config, recipe, corpus)
    path = cache_path(key)
    checkpoint_path = resume_path(path)

    rank, world, device = setup()
    log = print if rank == 0 else (lambda *a, **k: None)
    try:
        if recipe.batch_size % world:
            raise SystemExit(f"batch_size {recipe.batch_size} is not divisible by {world} processes")
        # Rank 0 alone reads the disk; the others get what it found.
        found = [None, None]
        if rank == 0:
            done = load_cached(path, key) is not None
            found = [done, None if done else _resumable(checkpoint_path, key, log)]
            # a checkpoint of a run interrupted after the model was trained, killed saves' files
            if done and checkpoint_path in sweep(path):
                log(f"removed {checkpoint_path.name}: its model is trained, so it is of no use")
        if world > 1:
            dist.broadcast_object_list(found, src=0)
        done, checkpoint = found
        if done:
            log(f"already trained, nothing to do: {path}")
            return
        if checkpoint is not None and args.stop_after is not None and checkpoint["step"] >= args.stop_after:
            log(f"the checkpoint is already at step {checkpoint['step']}, at or past --stop-after {args.stop_after}: "
                "nothing to do (rerun without --stop-after, or with a later step, to continue)")
            return
        if rank == 0:  # an unwritable cache fails now, not after training
            try:
                prepare_cache(path, fix="set MINILM_CACHE to a writable folder")
            except OSError as error:
                raise SystemExit(f"minilm.distributed: {error}") from None

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
        written = start if checkpoint is not None else None  # the step of the checkpoint on disk

        def kept():
            if written is None:
                return "no checkpoint is kept: free space (or set MINILM_CACHE) and rerun"
            return (f"its checkpoint of step {written} is kept ({checkpoint_path}): free space and rerun to "
                    "resume from it")

        def on_step(step, optimizer, history):
            nonlocal written
            speed.tick()
            if step % args.log_every == 0 or step == recipe.steps:
                log(f"step {step}/{recipe.steps}  loss {history[-1]:.4f}  {speed}".rstrip(), flush=True)
            stop = step == args.stop_after and step < recipe.steps
            if step < recipe.steps and (step % args.checkpoint_every == 0 or stop):
                # never a checkpoint of ruined weights; every rank checks (they hold the same weights)
                fail_if_diverged(model, step, recipe.lr)
                if rank == 0:
                    _save_or_exit({"key": key, "state": _cpu_state(model), "optimizer": optimizer.state_dict(),
                                   "step": step, "history": list(history)}, checkpoint_path,
                                  f"the checkpoint of step {step}", kept())
                    written = step
            if stop:
                raise _Stop

        started = time.perf_counter()
        try:
            # as pretrained() trains: the same weights, bit for bit
            history = train_by_recipe(model, recipe, speed.count(stream), progress=False, resume=resume,
                                      loss_of=shard_loss(model, rank, world) if world > 1 else None, on_step=on_step)
        except _Stop:
            log(f"stopped after step {args.stop_after}; checkpoint {checkpoint_path}; rerun to resume (or delete "
                "it to discard the run)")
            return
        except FloatingPointError as error:  # diverged: a rerun would diverge again, from its checkpoint too
            if rank == 0:
                checkpoint_path.unlink(missing_ok=True)
            raise SystemExit(f"minilm.distributed: {error}; nothing was cached, and no checkpoint is kept") from None
        log(f"done: {recipe.steps - start} steps in {time.perf_counter() - started:.1f} s  {speed}".rstrip())
        if rank == 0:  # exactly what pretrained() stores
            _save_or_exit({"key": key, "state": _cpu_state(model), "history": history}, path,
                          f"the trained model ({recipe.steps} steps)", kept())
            sweep(path)  # its checkpoint, and the files of saves of this key that were killed
            log(f"written: {path}")
    finally:
        if world > 1:
            dist.destroy_process_group()


if __name__ == "__main__":
    main()
