"""Training: a short loop with a progress bar, a cache of trained models, and sampling.

``pretrained(config, recipe)`` is what lessons call: it trains once, stores the
weights under a key that covers everything that decides them, and later calls
(in this lesson or the next) load them instead of training again.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import multiprocessing
import os
import queue
import sys
import tempfile
import time
import traceback
import warnings
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from .data import IGNORE_INDEX, Corpus, batches, default_corpus
from .model import LM, Config
from .validation import boolean, finite_number, integer, one_of, positive_int, positive_ints


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
          progress=True, shard=None, resume=None, on_step=None) -> list[float]:
    """AdamW on the parameters that require grad, warmup + cosine, gradient clipping.

    ``after_step(model)`` runs after every optimiser step (head-based scaling clamps
    its temperatures there). Returns the training loss of every step.

    Three keywords serve ``python -m minilm.distributed`` (lessons never pass them):
    ``shard=(rank, world_size)``, with a torch.distributed process group set up: every
    process draws the same global batch of B from ``batch_stream`` and trains on rows
    ``rank*B/W`` to ``(rank+1)*B/W``, the model wrapped in DistributedDataParallel; see
    ``_shard_loss`` for why that equals one process on the whole batch.
    ``resume={"step", "optimizer", "history"}`` continues a run from a checkpoint (the
    caller has loaded the weights and fast-forwarded the stream by ``step`` batches).
    ``on_step(step, optimizer, history)`` runs after every step (``step``: steps done).
    """
    trainable = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    if not trainable:
        raise ValueError("the model has no parameter that requires grad; nothing to train")
    params = [p for _, p in trainable]
    # Temperatures are never decayed: decay would pull them toward 0, i.e. toward uniform attention.
    groups = [{"params": [p for name, p in trainable if name != "temperature"]},
              {"params": [p for name, p in trainable if name == "temperature"], "weight_decay": 0.0}]
    device = next(model.parameters()).device
    optimizer = adamw([g for g in groups if g["params"]], lr=lr, weight_decay=weight_decay)
    rank, world = shard or (0, 1)
    net = model  # runs forward; the groups above use the bare names ("temperature", not "module.temperature")
    if world > 1:
        net = DistributedDataParallel(model, device_ids=[device] if device.type == "cuda" else None)
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
        x, y = next(batch_stream)
        if world > 1:
            loss, logged = _shard_loss(net, x, y, rank, world, device)
        else:
            loss = logged = lm_loss(model(x.to(device)), y.to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, clip)
        optimizer.step()
        if after_step is not None:
            with torch.no_grad():
                after_step(model)
        history.append(logged.item())
        if step % 25 == 0 or step == steps - 1:
            bar.set_postfix(loss=f"{history[-1]:.3f}")
        if on_step is not None:
            on_step(step + 1, optimizer, history)
    model.eval()
    return history


def _shard_loss(net, x, y, rank: int, world: int, device):
    """This process's share of the global batch (x, y): (loss to backpropagate, global mean loss).

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
    retrieval: float = 0.0        # the fraction of batches that are retrieval batches (data.retrieval_batch)

    def __post_init__(self):
        one_of("Recipe.task", self.task, ("causal", "mlm"))
        if (self.length is None) == (self.lengths is None):
            raise ValueError("give a Recipe exactly one of length (one length) or lengths (mixed lengths, "
                             f"with length=None); got length={self.length!r}, lengths={self.lengths!r}")
        if self.length is not None:
            positive_int("Recipe.length", self.length)
        else:
            positive_ints("Recipe.lengths", self.lengths)
        positive_int("Recipe.steps", self.steps)  # 0 steps would cache an untrained model
        positive_int("Recipe.batch_size", self.batch_size)
        finite_number("Recipe.lr", self.lr, above=0)
        integer("Recipe.warmup", self.warmup, at_least=0)
        finite_number("Recipe.weight_decay", self.weight_decay, at_least=0)
        integer("Recipe.seed", self.seed)
        finite_number("Recipe.retrieval", self.retrieval, at_least=0, at_most=1)
        if self.retrieval and self.task != "causal":
            raise ValueError(f"Recipe.retrieval needs task='causal' (the answer comes last); got task={self.task!r}")

    def stream(self, corpus: Corpus):
        """The seeded stream of training batches this recipe draws from ``corpus``."""
        return batches(corpus, task=self.task, batch_size=self.batch_size, length=self.length,
                       lengths=self.lengths, seed=self.seed, retrieval=self.retrieval)


def _state_digest(state: dict) -> str:
    """sha256 over the name and the bytes of every tensor of a state dict, in name order."""
    digest = hashlib.sha256()
    for name, tensor in sorted(state.items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def _state_fingerprint(model) -> str:
    return _state_digest(model.state_dict())[:16]


def _checksum(state: dict, history: list) -> str:
    """sha256 of a checkpoint's weights and loss history: stored beside them, checked on load,
    so a flipped bit on disk means retraining, never a silently corrupted model."""
    return hashlib.sha256((_state_digest(state) + json.dumps(history)).encode()).hexdigest()


WEIGHT_CODE = ("model.py", "data.py", "training.py")  # the modules whose code decides trained weights


def code_fingerprint(sources) -> str:
    """A hash of Python source code as the interpreter sees it: the syntax tree without
    docstrings. Comments, docstrings, blank lines and line breaks do not change it; any change
    to what the code does (a statement, a constant, a default, a name) does."""
    digest = hashlib.sha256()
    for source in sources:
        tree = ast.parse(source)
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                    and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
        digest.update(ast.dump(tree).encode())
    return digest.hexdigest()[:16]


# Of the code this process imported, not of later edits. Editing model.py, data.py or
# training.py in a way that changes what they do retires every cached model; improving
# their comments or docstrings does not.
CODE_FINGERPRINT = code_fingerprint((Path(__file__).parent / name).read_text(encoding="utf-8")
                                    for name in WEIGHT_CODE)


def cache_key(config: Config, recipe: Recipe, corpus: Corpus, init=None) -> dict:
    """Everything that decides the trained weights, as a JSON-able dict (exactly as stored:
    tuples become lists, so a key read back from a checkpoint compares equal)."""
    return json.loads(json.dumps({
        "config": config.to_dict(),
        "recipe": asdict(recipe),
        "corpus": corpus.fingerprint,
        "init": None if init is None else _state_fingerprint(init),
        "code": CODE_FINGERPRINT,
        "torch": torch.__version__.split("+")[0],
    }))


def cache_dir() -> Path:
    """``$MINILM_CACHE`` if set, else ``~/.cache/minilm``."""
    return Path(os.environ.get("MINILM_CACHE") or Path.home() / ".cache" / "minilm")


def _cache_path(key: dict) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    return cache_dir() / f"{digest}.pt"


TMP_SUFFIX = ".minilm.tmp"  # only files named so are ever removed from the cache folder
STALE_TMP_SECONDS = 600     # a temporary file this old is a save that was killed, not one in progress


def _save_atomic(payload: dict, path: Path) -> None:
    """Write ``payload`` (with "state" and "history") and their checksum to a temporary file in
    the same folder, then rename: a reader never sees half a file, and can tell a corrupted one."""
    payload = {**payload, "sha256": _checksum(payload["state"], payload["history"])}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=TMP_SUFFIX)
    os.close(fd)
    try:
        torch.save(payload, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _prepare_cache(path: Path) -> None:
    """Before training: make sure ``path`` can be written (else the trained model would be lost
    at the end), and remove the temporary files of saves that were killed."""
    folder = path.parent
    fix = "set MINILM_CACHE to a writable folder, or pass use_cache=False"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix="probe.", suffix=TMP_SUFFIX)
        os.close(fd)
        os.remove(probe)
    except OSError as error:
        raise OSError(f"cannot write to the cache folder {folder} ({error.strerror or error}); {fix}") from error
    if path.exists() and not path.is_file():
        raise OSError(f"cannot write the cache file {path}: a directory is in the way; remove it, or {fix}")
    now = time.time()
    for tmp in folder.glob("*" + TMP_SUFFIX):
        try:
            if now - tmp.stat().st_mtime > STALE_TMP_SECONDS:
                tmp.unlink()
        except OSError:  # another process removed or renamed it first
            pass


def _payload_problem(payload: dict, expected: dict | None) -> str | None:
    """Why a payload made for the right key cannot be used, or None. ``expected``: the state
    dict of a fresh model, whose names, shapes and dtypes the stored state must have."""
    state, history = payload.get("state"), payload.get("history")
    if not isinstance(state, dict) or not all(torch.is_tensor(t) for t in state.values()):
        return "holds no state dict"
    if not isinstance(history, list) or not all(isinstance(x, (int, float)) for x in history):
        return "holds no loss history"
    if expected is not None:
        if state.keys() != expected.keys():
            return "holds the weights of another model (other tensor names)"
        for name, tensor in expected.items():
            if state[name].shape != tensor.shape or state[name].dtype != tensor.dtype:
                return f"holds {name} of shape {tuple(state[name].shape)}, not {tuple(tensor.shape)}"
    if payload.get("sha256") != _checksum(state, history):
        return "does not match its checksum (corrupted or written by an older minilm)"
    return None


def _load_cached(path: Path, key: dict, expected: dict | None = None):
    """The stored payload if the file is whole, was made for exactly this key and holds weights
    (of the names and shapes of ``expected``, if given) that match their checksum; else None."""
    if not path.is_file():  # absent, or something else in the way (pretrained says what)
        return None
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # a truncated or foreign file: never use it
        warnings.warn(f"ignoring unreadable cache file {path.name} ({type(error).__name__}); retraining")
        return None
    if not isinstance(payload, dict) or payload.get("key") != key:
        warnings.warn(f"cache file {path.name} was made for another key; retraining")
        return None
    problem = _payload_problem(payload, expected)
    if problem is not None:
        warnings.warn(f"ignoring cache file {path.name}: it {problem}; retraining")
        return None
    return payload


def _checked_job(config, recipe, corpus, init) -> Corpus:
    """Validate one model to train; returns the corpus it trains on."""
    if not isinstance(config, Config) or not isinstance(recipe, Recipe):
        raise ValueError(f"pretrained needs a Config and a Recipe; got {type(config).__name__} "
                         f"and {type(recipe).__name__}")
    if corpus is not None and not isinstance(corpus, Corpus):
        raise ValueError(f"corpus must be a minilm.Corpus or None; got {type(corpus).__name__}")
    if init is not None and not isinstance(init, LM):
        raise ValueError(f"init must be a minilm.LM or None; got {type(init).__name__}")
    corpus = corpus or default_corpus()
    if config.vocab_size != corpus.tokenizer.vocab_size:
        raise ValueError(f"config.vocab_size={config.vocab_size} but the corpus has "
                         f"{corpus.tokenizer.vocab_size} symbols")
    return corpus


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


def pretrained(config: Config, recipe: Recipe = Recipe(), *, corpus: Corpus | None = None,
               init: LM | None = None, use_cache: bool = True, progress: bool = True):
    """Train ``LM(config)`` by ``recipe`` (or load it from the cache). Returns (model, history).

    ``init``: start from these weights instead of a fresh model (fine-tuning); they are
    part of the key. The model comes back in eval mode on pick_device(). On the CPU it
    trains on one thread (see one_thread_on_cpu); pretrained_many trains several side by side.

    With ``use_cache``: a cache file that is unreadable, made for another key, malformed or
    does not match its checksum is retrained (with a warning); a cache folder that cannot be
    written fails before training, not after (a read-only cache still loads what it holds);
    a save that fails after training returns the model anyway (with a warning).
    """
    corpus = _checked_job(config, recipe, corpus, init)
    boolean("use_cache", use_cache)
    boolean("progress", progress)
    return _pretrained(config, recipe, corpus, init, use_cache, progress)


def _pretrained(config, recipe, corpus, init, use_cache, progress, on_step=None):
    """pretrained() on checked arguments; ``on_step(step, optimizer, history)`` as in train()."""
    key = cache_key(config, recipe, corpus, init)
    path = _cache_path(key)
    device = pick_device()

    torch.manual_seed(recipe.seed)
    model = LM(config)
    if init is not None:
        model.load_state_dict(init.state_dict())
    payload = _load_cached(path, key, expected=model.state_dict()) if use_cache else None
    model.to(device)
    if payload is not None:  # a read-only cache is fine for loading
        model.load_state_dict(payload["state"])
        model.eval()
        return model, payload["history"]
    if use_cache:
        _prepare_cache(path)  # now, not after training, if the result could not be stored

    with one_thread_on_cpu(device):
        history = train(model, recipe.stream(corpus), steps=recipe.steps, lr=recipe.lr, warmup=recipe.warmup,
                        weight_decay=recipe.weight_decay, progress=progress, on_step=on_step,
                        desc=f"{config.block} {config.norm} seed {recipe.seed}")
    if use_cache:
        state = {name: t.detach().cpu() for name, t in model.state_dict().items()}
        try:
            _save_atomic({"key": key, "state": state, "history": history}, path)
        except OSError as error:  # disk full, folder removed since: keep the model all the same
            warnings.warn(f"could not save the trained model to {path} ({error}); it is returned but not cached")
    return model, history


def cpu_cores() -> int:
    """The CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def pretrained_many(jobs: dict, *, corpus: Corpus | None = None, progress: bool = True) -> dict:
    """pretrained() for several models: ``{name: (config, recipe)}`` or ``{name: (config, recipe,
    init)}`` -> ``{name: (model, history)}``, the same weights pretrained() gives, bit for bit.

    On the CPU the models not yet in the cache train side by side, one process per core, each
    on one thread (as pretrained() trains), and are then loaded from the cache: on 2 cores
    about 1.4x the throughput of training them one after another with 2 threads. On a GPU, or with a single
    model to train, they train one after another in this process.
    """
    if not isinstance(jobs, dict) or not jobs:
        raise ValueError(f"pretrained_many needs a non-empty dict {{name: (config, recipe[, init])}}; got {jobs!r}")
    boolean("progress", progress)
    specs = {}
    for name, job in jobs.items():
        if not isinstance(job, tuple) or len(job) not in (2, 3):
            raise ValueError(f"job {name!r} must be a tuple (config, recipe) or (config, recipe, init); got {job!r}")
        config, recipe, init = (*job, None)[:3]
        corpus = _checked_job(config, recipe, corpus, init)
        specs[name] = (config, recipe, init)
    missing = {}  # by cache file: a model asked for under two names trains once
    for config, recipe, init in specs.values():
        path = _cache_path(cache_key(config, recipe, corpus, init))
        if not path.is_file():
            missing[path] = (config, recipe, init)
    for path in missing:
        _prepare_cache(path)  # an unwritable cache fails here, with pretrained()'s message
    missing = list(missing.values())
    workers = min(len(missing), cpu_cores())
    if pick_device().type == "cpu" and workers > 1:
        _train_side_by_side(missing, corpus, workers, progress)
    return {name: _pretrained(config, recipe, corpus, init, True, progress)
            for name, (config, recipe, init) in specs.items()}


def _train_side_by_side(specs: list, corpus: Corpus, workers: int, progress: bool) -> None:
    """Train each (config, recipe, init) of ``specs`` into the cache, in ``workers`` processes.

    Processes are started with "spawn" (a fresh interpreter: forking a process that already
    runs torch's threads can hang); a script that calls this must guard its top level with
    ``if __name__ == "__main__":``, as multiprocessing asks. A worker's error is raised here.

    An unguarded script must end in that error, not hang: each worker imports the script,
    whose call of this function then fails at ``start()``. So the workers start before
    anything is queued (a worker that queued data would wait at its exit for a reader), the
    corpus travels by queue (a large process argument is written to the new process inside
    ``start()``, which never returns if that process dies first), and the caller does not
    wait at its exit to flush queues that a dead worker will never read."""
    context = multiprocessing.get_context("spawn")
    tasks, messages, corpora = context.Queue(), context.Queue(), context.Queue()
    processes = [context.Process(target=_train_worker, args=(tasks, messages, corpora), daemon=True)
                 for _ in range(workers)]
    for process in processes:
        process.start()
    for queue_to_workers in (tasks, corpora):
        queue_to_workers.cancel_join_thread()
    for index, (config, recipe, init) in enumerate(specs):
        init_weights = None if init is None else (init.config, {k: t.cpu() for k, t in init.state_dict().items()})
        tasks.put((index, config, recipe, init_weights))
    for _ in processes:
        tasks.put(None)  # one stop sign per worker
        corpora.put(corpus)
    bar = tqdm(total=sum(recipe.steps for _, recipe, _ in specs), desc=f"training {len(specs)} models, "
               f"{workers} at a time", disable=not progress, mininterval=0.5, file=sys.stdout)
    final_loss = {}
    try:
        while len(final_loss) < len(specs):
            try:
                kind, index, value = messages.get(timeout=1)
            except queue.Empty:  # a worker killed from outside (out of memory, a signal) sends nothing
                dead = [p.exitcode for p in processes if p.exitcode not in (None, 0)]
                if dead:
                    raise RuntimeError(
                        f"a training worker process died (exit code {dead[0]}); its error, if any, is printed "
                        "above. A script that calls pretrained_many must guard its top level with "
                        "`if __name__ == \"__main__\":` (each worker process imports the script)") from None
                continue
            if kind == "error":
                config, recipe, _ = specs[index]
                raise RuntimeError(f"training {config.block} {config.norm} seed {recipe.seed} failed in its "
                                   f"worker process:\n{value}")
            if kind == "steps":
                bar.update(value)
            else:
                final_loss[index] = value
    finally:
        bar.close()
        for process in processes:
            if final_loss.keys() == set(range(len(specs))):
                process.join()
            else:  # an error or an interrupt: stop the rest now
                process.terminate()
    if progress:
        for index, (config, recipe, _) in enumerate(specs):
            print(f"{config.block} {config.norm} seed {recipe.seed}: {recipe.steps} steps, "
                  f"final loss {final_loss[index]:.3f}")


def _train_worker(tasks, messages, corpora) -> None:
    """A process of _train_side_by_side: train models from ``tasks`` into the cache until a None."""
    corpus = corpora.get()
    for index, config, recipe, init_weights in iter(tasks.get, None):
        try:
            init = None
            if init_weights is not None:
                init = LM(init_weights[0])
                init.load_state_dict(init_weights[1])
            reported = 0

            def report(step, optimizer, history):
                nonlocal reported
                if step % 25 == 0 or step == recipe.steps:
                    messages.put(("steps", index, step - reported))
                    reported = step

            _, history = _pretrained(config, recipe, corpus, init, True, False, on_step=report)
            messages.put(("done", index, history[-1]))
        except BaseException:  # whatever it was, the parent must hear of it
            messages.put(("error", index, traceback.format_exc()))
            return


# ----------------------------------------------------------------------------
# Sampling
# ----------------------------------------------------------------------------


@torch.no_grad()
def generate(model: LM, tokenizer, prompt: str, max_new_tokens: int = 200, *, temperature: float = 0.8,
             top_k: int | None = None, context: int | None = None, seed: int = 0) -> str:
    """Sample characters one at a time from a causal model; returns the prompt and its continuation.

    ``temperature`` divides the output logits before sampling (the usual sampling temperature;
    < 1 is greedier). It is not ``model.temperature``, which multiplies attention logits.
    ``context``: how many of the last characters the model sees (default: max_len);
    set it to the training length to stay where the model was trained."""
    if not model.config.causal:
        raise ValueError("generate() needs a causal model; this one is bidirectional (a masked LM)")
    if not isinstance(prompt, str) or not prompt:
        raise ValueError(f"prompt must be a non-empty str (the model continues its last character); got {prompt!r}")
    integer("max_new_tokens", max_new_tokens, at_least=0)
    finite_number("temperature", temperature, above=0)
    if top_k is not None:
        positive_int("top_k", top_k)
    if context is not None:
        positive_int("context", context)
        if context > model.config.max_len:
            raise ValueError(f"context must be at most the model's max_len={model.config.max_len}; got {context}")
    integer("seed", seed)
    # Sampling draws from a CPU generator, so a seed gives the same text on every device.
    generator = torch.Generator().manual_seed(seed)
    context = model.config.max_len if context is None else context
    idx = tokenizer.encode(prompt).to(model.device).unsqueeze(0)
    for _ in range(max_new_tokens):
        logits = model(idx[:, -context:])[0, -1] / temperature
        if top_k is not None:
            cutoff = logits.topk(min(top_k, logits.numel())).values[-1]
            logits = logits.masked_fill(logits < cutoff, float("-inf"))
        logits[tokenizer.mask_id] = float("-inf")
        next_id = torch.multinomial(logits.softmax(-1).cpu(), 1, generator=generator)
        idx = torch.cat([idx, next_id.view(1, 1).to(model.device)], dim=1)
    return tokenizer.decode(idx[0])
