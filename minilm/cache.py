"""The cache of trained models: ``pretrained`` trains a model once, stores its weights under a
key that covers everything that decides them, and later calls (in this lesson or the next)
load them instead of training again; ``pretrained_many`` does it for several models, side by
side on a CPU.

The key holds the Config, the Recipe, the corpus, the initial weights of a fine-tune, the
torch version and a fingerprint of the code that decides weights: ``model.py``, ``data.py``
and ``training.py``, less their docstrings, messages and argument checks (``code_fingerprint``).
This module is not part of it: rewording a message anywhere, or editing the cache, sampling or
measurement, keeps every cached model.

Its public face, which ``minilm.distributed`` uses too: ``cache_key``, ``cache_path``,
``resume_path``, ``load_cached``, ``prepare_cache``, ``save_atomic`` and ``sweep``.
"""

from __future__ import annotations

import ast
import errno
import hashlib
import io
import json
import math
import multiprocessing
import os
import queue
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import fields, is_dataclass
from pathlib import Path

import torch
from tqdm import tqdm

from .data import Corpus, default_corpus
from .model import LM, Config
from .training import Recipe, initial_model, pick_device, train_by_recipe
from . import validation as check
from .validation import boolean, dtype_name


def _tensor_bytes(tensor: torch.Tensor) -> bytes:
    return tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def _state_digest(state: dict) -> str:
    """sha256 over the name and the bytes of every tensor of a state dict, in name order."""
    digest = hashlib.sha256()
    for name, tensor in sorted(state.items()):
        digest.update(name.encode())
        digest.update(_tensor_bytes(tensor))
    return digest.hexdigest()


def _tree_digest(tree) -> str:
    """sha256 of nested dicts and lists of tensors and plain values (an optimizer's state dict:
    the moments exp_avg and exp_avg_sq of every parameter, its step, the learning rates)."""
    digest = hashlib.sha256()

    def visit(node):
        if torch.is_tensor(node):
            digest.update(f"tensor {node.dtype} {tuple(node.shape)}".encode())
            digest.update(_tensor_bytes(node))
        elif isinstance(node, dict):
            for key in sorted(node, key=repr):
                digest.update(f"key {key!r}".encode())
                visit(node[key])
        elif isinstance(node, (list, tuple)):
            digest.update(f"list {len(node)}".encode())
            for item in node:
                visit(item)
        else:
            digest.update(f"value {node!r}".encode())

    visit(tree)
    return digest.hexdigest()


def _state_fingerprint(model) -> str:
    return _state_digest(model.state_dict())[:16]


def _checksum(payload: dict) -> str:
    """sha256 of a checkpoint's weights and loss history, and of a resume checkpoint's optimizer
    state and step too: stored beside them, checked on load, so a flipped bit on disk means
    retraining, never a silently corrupted model or a run resumed from corrupted moments."""
    text = _state_digest(payload["state"]) + json.dumps(payload["history"])
    if "optimizer" in payload:  # a resume checkpoint of minilm.distributed
        text += _tree_digest(payload["optimizer"]) + json.dumps(payload.get("step"))
    return hashlib.sha256(text.encode()).hexdigest()


WEIGHT_CODE = ("model.py", "data.py", "training.py")  # the modules whose code decides trained weights


def code_fingerprint(sources) -> str:
    """A hash of Python source code as the interpreter sees it, less what never decides a weight:
    the syntax tree without docstrings, without the messages of ``raise`` statements, and without
    the statements that only call an argument check (a function imported from ``validation``, or
    ``check.*``). Comments, docstrings, messages, checks, blank lines and line breaks do not change
    it; any change to what the code computes (a statement, a constant, a default, a name) does."""
    digest = hashlib.sha256()
    for source in sources:
        tree = ast.parse(source)
        checks = {"check"} | {alias.asname or alias.name for node in ast.walk(tree)
                              if isinstance(node, ast.ImportFrom) and node.module == "validation" and node.level == 1
                              for alias in node.names}
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                    and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
            if isinstance(node, ast.Raise):
                node.exc = node.cause = None
            for field in ("body", "orelse", "finalbody"):
                statements = getattr(node, field, None)
                if isinstance(statements, list) and any(_is_check(s, checks) for s in statements):
                    setattr(node, field, [s for s in statements if not _is_check(s, checks)] or [ast.Pass()])
        digest.update(ast.dump(tree).encode())
    return digest.hexdigest()[:16]


def _is_check(statement, checks) -> bool:
    """``check.something(...)`` or ``one_of(...)`` (a name in ``checks``) as a statement of its own."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    func = statement.value.func
    return ((isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in checks)
            or (isinstance(func, ast.Name) and func.id in checks))


# Of the code this process imported, not of later edits. Editing model.py, data.py or
# training.py in a way that changes what they compute retires every cached model; improving
# their comments, docstrings, messages or argument checks does not.
CODE_FINGERPRINT = code_fingerprint((Path(__file__).parent / name).read_text(encoding="utf-8")
                                    for name in WEIGHT_CODE)


def _key_fields(instance) -> dict:
    """The fields of a Config, Recipe or RopeScaling as the key holds them: equal dataclasses give
    equal keys. A float field holds a float (logn_base=64 equals 64.0, but JSON would write "64"
    and "64.0", two cache files); tuples become lists, as JSON writes them."""
    values = {}
    for field in fields(instance):
        value = getattr(instance, field.name)
        if is_dataclass(value):
            value = _key_fields(value)
        elif "float" in str(field.type) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        values[field.name] = value
    return values


def cache_key(config: Config, recipe: Recipe, corpus: Corpus, init=None) -> dict:
    """Everything that decides the trained weights, as a JSON-able dict (exactly as stored:
    tuples become lists, so a key read back from a checkpoint compares equal)."""
    return json.loads(json.dumps({
        "config": _key_fields(config),
        "recipe": _key_fields(recipe),
        "corpus": corpus.fingerprint,
        "init": None if init is None else _state_fingerprint(init),
        "code": CODE_FINGERPRINT,
        "torch": torch.__version__.split("+")[0],
    }))


def cache_dir() -> Path:
    """``$MINILM_CACHE`` if set (a leading ``~`` is the home folder, as a shell would read it),
    else ``~/.cache/minilm``."""
    return Path(os.environ.get("MINILM_CACHE") or Path.home() / ".cache" / "minilm").expanduser()


def cache_path(key: dict) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    return cache_dir() / f"{digest}.pt"


def resume_path(path: Path) -> Path:
    """Where ``python -m minilm.distributed`` keeps its resume checkpoint of the model cached at
    ``path``: named by the same key, so only a run of that key can resume it."""
    return path.with_name(path.stem + ".resume.pt")


TMP_SUFFIX = ".minilm.tmp"      # a save's temporary file: only these (and old probes) are ever removed
PROBE_SUFFIX = ".minilm.probe"  # prepare_cache's test of the folder, never locked: not a save's
STALE_TMP_SECONDS = 600         # without file locks: a temporary file this old is a save that was killed
FRESH_TMP_SECONDS = 5           # never removed younger: a save may not hold its lock yet (mkstemp, then flock)

try:
    import fcntl  # POSIX: a save holds a lock on its temporary file, so a killed save is told apart at once
except ImportError:  # Windows: by age alone
    fcntl = None


def save_atomic(payload: dict, path: Path) -> None:
    """Write ``payload`` (with "state" and "history") and their checksum to a temporary file in
    the same folder, then rename: a reader never sees half a file, and can tell a corrupted one.
    While it writes, it holds a lock on the temporary file (where the system and the file system
    have file locks): a temporary file that no process holds is a save that was killed
    (prepare_cache removes it); one that cannot be locked is told by its age (_is_killed_save).

    A disk that fills up raises OSError, or torch.save's RuntimeError ("unexpected pos",
    "basic_ios::clear"): see save_problem."""
    payload = {**payload, "sha256": _checksum(payload)}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=TMP_SUFFIX)
    try:
        if fcntl is None:  # and Windows renames no file that is open
            os.close(fd)
            fd = None
        else:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:  # a file system without locks (NFS without lockd, CIFS, some FUSE): by age there
                pass
        torch.save(payload, tmp)
        os.replace(tmp, path)
    finally:
        try:  # removed before the lock is released: an unlocked file with data is a killed save's
            Path(tmp).unlink(missing_ok=True)
        finally:
            if fd is not None:
                os.close(fd)  # releases the lock


SAVE_ERRORS = (OSError, RuntimeError)  # torch.save reports a full disk as a RuntimeError of its C++ writer
WRITER_FAILURES = ("unexpected pos", "basic_ios", "write", "pytorchstreamwriter")  # its words for a failed write
LOW_SPACE_BYTES = 64 * 2 ** 20  # less free space than this: a failed save most likely ran out of it


def save_problem(path: Path, error: BaseException) -> str:
    """Why saving to ``path`` failed, in words: a full disk is called one, naming its folder, when
    it came as OSError (ENOSPC), or as a RuntimeError of torch.save's writer (WRITER_FAILURES) or
    with little space left on that disk; any other error is its own text."""
    text = str(error).strip().splitlines()
    said = text[0] if text else type(error).__name__
    if isinstance(error, OSError):
        return f"{said}: the disk of {path.parent} is full" if error.errno == errno.ENOSPC else said
    if any(words in str(error).lower() for words in WRITER_FAILURES) or _free_bytes(path.parent) < LOW_SPACE_BYTES:
        return f"{said}: the disk of {path.parent} is probably full"
    return f"{type(error).__name__}: {said}"


def _free_bytes(folder: Path) -> float:
    try:
        return shutil.disk_usage(folder).free
    except OSError:  # the folder is gone: no word on its disk
        return math.inf


def _is_killed_save(tmp: Path, now: float) -> bool:
    """A temporary file of save_atomic whose writer is gone: no process holds its lock (POSIX) and
    it holds data or is older than FRESH_TMP_SECONDS, or, without file locks (Windows, or a file
    system that has none), it is older than STALE_TMP_SECONDS."""
    info = tmp.stat()
    age = now - info.st_mtime
    stale = age > STALE_TMP_SECONDS
    if fcntl is None:
        return stale
    if age <= FRESH_TMP_SECONDS and info.st_size == 0:
        return False  # maybe a save that has not yet locked the file it just made (it writes after)
    with open(tmp, "rb") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # a save in progress
            return False
        except OSError:  # this file system has no locks (NFS without lockd, CIFS, some FUSE)
            return stale
        return True


def prepare_cache(path: Path, fix: str = "set MINILM_CACHE to a writable folder, or pass use_cache=False") -> None:
    """Before training: make sure ``path`` and its resume checkpoint's path (resume_path) can be
    written (else the trained model would be lost at the end), and remove the temporary files of
    saves that were killed. ``fix``: what the error message tells the user to do."""
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix="probe.", suffix=PROBE_SUFFIX)
        os.close(fd)
        os.remove(probe)
    except OSError as error:
        raise OSError(f"cannot write to the cache folder {folder} ({error.strerror or error}); {fix}") from error
    for target in (path, resume_path(path)):
        if target.exists() and not target.is_file():
            raise OSError(f"cannot write the cache file {target}: a directory is in the way; remove it, or {fix}")
    now = time.time()
    _remove_killed_saves(folder.glob("*" + TMP_SUFFIX), now)
    for probe in folder.glob("probe.*" + PROBE_SUFFIX):  # a probe lives a moment: an old one was killed
        try:
            if now - probe.stat().st_mtime > STALE_TMP_SECONDS:
                probe.unlink()
        except OSError:
            pass


def _remove_killed_saves(tmps, now: float) -> list:
    """Remove the temporary files among ``tmps`` whose save was killed (_is_killed_save)."""
    removed = []
    for tmp in tmps:
        try:
            if _is_killed_save(tmp, now):
                tmp.unlink()
                removed.append(tmp)
        except OSError:  # another process removed or renamed it first, or a read-only cache
            pass
    return removed


def sweep(path: Path) -> list:
    """Once the model cached at ``path`` is stored (just saved, or found in the cache), remove
    what the runs of its key left behind; returns the paths removed.

    Swept: the key's resume checkpoint (resume_path: named by the key, so only a run of this
    key could resume it, and its model is trained) and the key's temporary files
    (``<key>.pt.*`` and ``<key>.resume.pt.*``, ending in TMP_SUFFIX) of saves that were killed.
    Never swept: a temporary file that a live save holds (_is_killed_save), and anything of
    another key. Another key's resume checkpoint (a --stop-after run of another recipe) is no
    orphan: its own command resumes it, and it is swept when that key's model is stored. What
    cannot be removed (a read-only cache) stays."""
    removed = _remove_killed_saves(path.parent.glob(f"{path.stem}.*{TMP_SUFFIX}"), time.time())
    try:
        resume_path(path).unlink()
        removed.append(resume_path(path))
    except OSError:  # none (the usual case), or a read-only cache
        pass
    return removed


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
                return (f"holds {name} of shape {tuple(state[name].shape)} and dtype {dtype_name(state[name].dtype)}, "
                        f"not {tuple(tensor.shape)} and {dtype_name(tensor.dtype)}")
    if payload.get("sha256") != _checksum(payload):
        return "does not match its checksum (corrupted or written by an older minilm)"
    ruined = [name for name, tensor in state.items() if tensor.is_floating_point() and not tensor.isfinite().all()]
    if ruined or not all(math.isfinite(x) for x in history):  # never saved so: written by hand, or another tool
        return f"holds weights or losses that are not finite (inf or nan){': ' + ', '.join(ruined[:3]) if ruined else ''}"
    return None


def load_cached(path: Path, key: dict, expected: dict | None = None):
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

    The arguments are checked here, once (_job: validation.job, and init against the model built);
    the cache, the training loop and the recipe's stream below take them as checked.
    """
    boolean("use_cache", use_cache)
    boolean("progress", progress)
    corpus = default_corpus() if corpus is None else corpus
    model, key = _job(config, recipe, corpus, init)
    return _pretrained(model, key, recipe, corpus, use_cache, progress)


JOB_KINDS = (Config, Recipe, Corpus, LM)  # what validation.job checks the arguments of a job to be


def _job(config, recipe, corpus, init) -> tuple[LM, dict]:
    """One model to train, where it enters (pretrained, pretrained_many), and the only place it is
    checked: its arguments (validation.job), then the model built once (_untrained; a fine-tune's
    init is checked against it there). Returns (the untrained model, its cache key)."""
    check.job(config, recipe, corpus, init, JOB_KINDS)
    return _untrained(config, recipe, corpus, init), cache_key(config, recipe, corpus, init)


def _pretrained(model, key, recipe, corpus, use_cache, progress, on_step=None, unsaved=None):
    """pretrained() of the untrained ``model`` of a checked job (_job) and its cache ``key``;
    ``on_step(step, optimizer, history)`` as in train(). ``unsaved(message)``: called instead of
    warning when the trained model cannot be saved."""
    path = cache_path(key)
    payload = load_cached(path, key, expected=model.state_dict()) if use_cache else None
    if payload is not None:  # a read-only cache is fine for loading
        sweep(path)  # what a killed run of this model left, even if it was stored by another run
        return _trained(model, payload["state"]), payload["history"]
    if use_cache:
        prepare_cache(path)  # now, not after training, if the result could not be stored

    config = model.config
    history = train_by_recipe(model, recipe, recipe.stream(corpus), progress=progress, on_step=on_step,
                              desc=f"{config.block} {config.norm} seed {recipe.seed}")
    if use_cache:
        state = {name: t.detach().cpu() for name, t in model.state_dict().items()}
        try:
            save_atomic({"key": key, "state": state, "history": history}, path)
        except SAVE_ERRORS as error:  # disk full, folder removed since: keep the model all the same
            (unsaved or warnings.warn)(f"could not save the trained model to {path} ({save_problem(path, error)}); "
                                       "it is returned but not cached")
            return model, history
        # a command-line run of this model, interrupted or killed mid-save, would otherwise keep
        # its checkpoint or temporary file forever
        sweep(path)
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

    Every job is checked, and its model built, before any trains (_job, as in pretrained()): a
    bad job fails before the others spend time training.
    """
    if not isinstance(jobs, dict) or not jobs:
        raise ValueError(f"pretrained_many needs a non-empty dict {{name: (config, recipe[, init])}}; got {jobs!r}")
    boolean("progress", progress)
    corpus = default_corpus() if corpus is None else corpus
    specs = {}  # {name: (config, recipe, init, untrained model, cache key)}: all checked first
    for name, job in jobs.items():
        if not isinstance(job, tuple) or len(job) not in (2, 3):
            raise ValueError(f"job {name!r} must be a tuple (config, recipe) or (config, recipe, init); got {job!r}")
        config, recipe, init = (*job, None)[:3]
        specs[name] = (config, recipe, init, *_job(config, recipe, corpus, init))
    paths = {name: cache_path(key) for name, (*_, key) in specs.items()}
    missing = {}  # by cache file: a model asked for under two names trains once
    for name, path in paths.items():
        if not path.is_file():
            missing.setdefault(path, (name, *specs[name]))
    for path in missing:
        prepare_cache(path)  # an unwritable cache fails here, with pretrained()'s message
    workers = min(len(missing), cpu_cores())
    unsaved = {}  # {path: (state, history)} of the models a worker trained but could not save
    if pick_device().type == "cpu" and workers > 1:
        unsaved = _train_side_by_side(missing, corpus, workers, progress)
    models = {}
    for name, (config, recipe, _, model, key) in specs.items():
        try:  # the models trained before a failure stay cached: each is saved as it finishes
            kept = unsaved.get(paths[name])
            models[name] = (_pretrained(model, key, recipe, corpus, True, progress) if kept is None
                            else (_trained(model, kept[0]), kept[1]))
        except Exception as error:
            raise RuntimeError(f"job {name!r}: {_describe(config, recipe)} failed: "
                               f"{type(error).__name__}: {error}") from error
    return models


def _describe(config, recipe) -> str:
    return f"training {config.block} {config.norm} seed {recipe.seed}"


def _untrained(config, recipe, corpus, init=None) -> LM:
    """The model _pretrained trains: initial_model, on pick_device(), knowing the corpus's symbols
    (measurement refuses a corpus of other symbols)."""
    model = initial_model(config, recipe, init)
    model.vocabulary = corpus.tokenizer.symbols
    return model.to(pick_device())


def _trained(model: LM, state: dict) -> LM:
    """``model`` (of _untrained) with trained weights ``state``, of a cache file or of a worker that
    could not save them, in eval mode: what _pretrained returns."""
    model.load_state_dict(state)
    return model.eval()


def _train_side_by_side(jobs: dict, corpus: Corpus, workers: int, progress: bool) -> dict:
    """Train each {cache path: (name, config, recipe, init, model, key)} of ``jobs`` (checked by
    pretrained_many) into the cache, in ``workers`` processes. Returns {cache path: (state,
    history)} of the models that could not be saved (a full disk: each is warned about here, and
    returned, not lost).

    Processes are started with "spawn" (a fresh interpreter: forking a process that already
    runs torch's threads can hang); a script that calls this must guard its top level with
    ``if __name__ == "__main__":``, as multiprocessing asks. A worker's error is raised here,
    naming the job by its ``name`` (the caller's key), once the other workers have finished the
    jobs they hold (each is cached as it finishes; no new one starts). An interrupt (the notebook's
    stop button) or a worker killed from outside stops every worker at once. Either way every
    worker is waited for (none is left a zombie) and every queue closed.

    An unguarded script must end in that error, not hang: each worker imports the script,
    whose call of this function then fails at ``start()``. So the workers start before
    anything is queued (a worker that queued data would wait at its exit for a reader), the
    corpus travels by queue (a large process argument is written to the new process inside
    ``start()``, which never returns if that process dies first), and the caller does not
    wait at its exit to flush queues that a dead worker will never read."""
    paths, specs = list(jobs), list(jobs.values())
    context = multiprocessing.get_context("spawn")
    tasks, messages, corpora = context.Queue(), context.Queue(), context.Queue()
    stop = context.Event()  # set when a job fails: the workers take no new job
    processes = [context.Process(target=_train_worker, args=(tasks, messages, corpora, stop), daemon=True)
                 for _ in range(workers)]
    for process in processes:
        process.start()
    for queue_to_workers in (tasks, corpora):
        queue_to_workers.cancel_join_thread()
    for index, (_, config, recipe, init, _, key) in enumerate(specs):
        init_state = None if init is None else {k: t.cpu() for k, t in init.state_dict().items()}
        tasks.put((index, config, recipe, key, init_state))
    for _ in processes:
        tasks.put(None)  # one stop sign per worker
        corpora.put(corpus)
    bar = tqdm(total=sum(spec[2].steps for spec in specs), desc=f"training {len(specs)} models, "
               f"{workers} at a time", disable=not progress, mininterval=0.5, file=sys.stdout)
    final_loss, failed, unsaved = {}, [], {}  # failed: (index, the worker's traceback)
    finished = False
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
                if all(p.exitcode is not None for p in processes) and messages.empty():
                    if not failed:  # they stopped without a word: interrupted from outside
                        raise RuntimeError("the training worker processes stopped before their jobs were done "
                                           "(interrupted from outside?); the jobs that finished are cached")
                    break  # after a failure: every worker has stopped, and all it sent is read
                continue
            if kind == "error":
                if not failed and progress and any(p.is_alive() for p in processes):
                    print(f"job {specs[index][0]!r} failed; the jobs in progress finish (and are cached) first")
                failed.append((index, value))
                stop.set()
            elif kind == "steps":
                bar.update(value)
            elif kind == "unsaved":  # trained, but the save failed: the weights come here instead
                message, weights, history = value
                warnings.warn(f"job {specs[index][0]!r}: {message}")
                unsaved[paths[index]] = (torch.load(io.BytesIO(weights), weights_only=True), history)
                final_loss[index] = history[-1]
            else:
                final_loss[index] = value
        finished = True
    finally:
        bar.close()
        if not finished:  # an interrupt or a killed worker: stop the rest now
            _interrupt(processes)
        for process in processes:
            process.join()  # reaped: no <defunct> process left behind
        for open_queue in (tasks, messages, corpora):
            open_queue.close()
    if failed:
        index, error = failed[0]
        name, config, recipe, *_ = specs[index]
        others = ", ".join(repr(specs[i][0]) for i, _ in failed[1:])
        raise RuntimeError(f"job {name!r}: {_describe(config, recipe)} failed in its worker process"
                           f"{f' (and job(s) {others})' if others else ''}; the {len(final_loss)} job(s) that "
                           f"finished are cached:\n{error}")
    if progress:
        for index, (_, config, recipe, *_) in enumerate(specs):
            print(f"{config.block} {config.norm} seed {recipe.seed}: {recipe.steps} steps, "
                  f"final loss {final_loss[index]:.3f}")
    return unsaved


def _interrupt(processes, grace: float = 10.0) -> None:
    """Stop worker processes in the middle of their jobs: a KeyboardInterrupt first (SIGINT, as
    the stop button gives the caller), on which a worker exits cleanly, so that what it holds is
    released (terminated, it would leave semaphores that Python reports leaked at shutdown);
    whatever is still running ``grace`` seconds later is terminated."""
    for process in processes:
        if process.is_alive():
            if os.name == "posix":
                os.kill(process.pid, signal.SIGINT)
            else:  # no SIGINT to another process on Windows
                process.terminate()
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.terminate()


def _train_worker(tasks, messages, corpora, stop) -> None:
    """A process of _train_side_by_side: train models from ``tasks`` into the cache until a None,
    or until ``stop`` is set (another job failed). A KeyboardInterrupt is the caller stopping it."""
    try:
        _train_jobs(tasks, messages, corpora, stop)
    except KeyboardInterrupt:  # exit cleanly and quietly: the caller knows why
        pass


def _train_jobs(tasks, messages, corpora, stop) -> None:
    corpus = corpora.get()
    for index, config, recipe, key, init_state in iter(tasks.get, None):
        if stop.is_set():
            return
        try:
            model = _untrained(config, recipe, corpus)
            if init_state is not None:  # a fine-tune: init's weights, checked by the caller
                model.load_state_dict(init_state)
            reported = 0

            def report(step, optimizer, history):
                nonlocal reported
                if step % 25 == 0 or step == recipe.steps:
                    messages.put(("steps", index, step - reported))
                    reported = step

            problems = []
            model, history = _pretrained(model, key, recipe, corpus, True, False, on_step=report,
                                         unsaved=problems.append)
            if problems:  # bytes, not tensors: a tensor sent by queue needs its sender alive when it is read
                weights = io.BytesIO()
                torch.save({name: t.detach().cpu() for name, t in model.state_dict().items()}, weights)
                messages.put(("unsaved", index, (problems[0], weights.getvalue(), history)))
            else:
                messages.put(("done", index, history[-1]))
        except KeyboardInterrupt:
            raise
        except BaseException:  # whatever else it was, the parent must hear of it
            messages.put(("error", index, traceback.format_exc()))
            return
