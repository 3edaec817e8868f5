"""Faults: a corrupted, malformed or unwritable cache, a killed save, an interrupted scaling run.

No silent corruption (a checkpoint loads only if it matches its checksum), no lost training
(an unwritable cache fails before training; a failed save returns the model), and a model
changed temporarily is restored on any exit.
"""

import errno
import os
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from contextlib import contextmanager
from types import SimpleNamespace

import pytest
import torch

import minilm.scaling
import minilm.cache
import minilm.training
from minilm.data import default_corpus
from minilm.model import LM, Config
from minilm.cache import TMP_SUFFIX, cache_key, cache_path, pretrained
from minilm.training import Recipe

TINY = Recipe(steps=3, batch_size=4, length=16, warmup=1)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MINILM_CACHE", str(tmp_path / "cache"))


def gau():
    return Config(vocab_size=default_corpus().tokenizer.vocab_size, block="gau", n_head=1, d_model=16,
                  n_layer=1, d_k=16, norm="relu2", n=16)


def cached_path():
    return cache_path(cache_key(gau(), TINY, default_corpus()))


def never_train(monkeypatch):
    monkeypatch.setattr(minilm.training, "train", lambda *a, **k: pytest.fail("trained"))


def same_weights(a, b):
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def flip_a_bit_in_the_tensor_data(path):
    """Flip one bit of an embedding float, on disk, inside the zip archive torch.save writes."""
    with zipfile.ZipFile(path) as archive:
        names = [i for i in archive.infolist() if "/data/" in i.filename]
        info = max(names, key=lambda i: i.file_size)  # the embedding, the largest tensor
    raw = bytearray(path.read_bytes())
    header = info.header_offset
    start = header + 30 + int.from_bytes(raw[header + 26: header + 28], "little") \
        + int.from_bytes(raw[header + 28: header + 30], "little")
    raw[start + 4 * 10 + 3] ^= 0x40  # the top exponent bit of float 10: ~1e-2 becomes ~1e36
    path.write_bytes(bytes(raw))


def test_a_flipped_bit_in_the_weights_is_caught_and_retrained():
    model, history = pretrained(gau(), TINY, progress=False)
    flip_a_bit_in_the_tensor_data(cached_path())
    assert torch.load(cached_path(), weights_only=True)["state"]["embed.weight"].abs().max() > 1e30  # loads fine
    with pytest.warns(UserWarning, match="does not match its checksum"):
        again, history_again = pretrained(gau(), TINY, progress=False)
    assert same_weights(model, again) and history_again == history  # retrained, deterministically
    assert again.embed.weight.abs().max() < 10


@pytest.mark.parametrize("damage,words", [
    (lambda p: p.pop("state"), "no state dict"),
    (lambda p: p.update(state={"embed.weight": "not a tensor"}), "no state dict"),
    (lambda p: p["state"].pop("ln_out.weight"), "other tensor names"),
    (lambda p: p["state"].update({"embed.weight": torch.zeros(3, 3)}), "embed.weight of shape (3, 3)"),
    (lambda p: p["state"].update({"multiplier": p["state"]["multiplier"].half()}), "dtype float16, not"),
    (lambda p: p.pop("history"), "no loss history"),
    (lambda p: p.pop("sha256", None), "checksum"),  # as an older minilm wrote it
    (lambda p: p["history"].__setitem__(0, 0.5), "checksum"),
], ids=["no state", "state of strings", "missing tensor", "mis-shaped tensor", "float16", "no history", "no checksum",
        "edited history"])
def test_a_malformed_payload_with_the_right_key_is_retrained(damage, words):
    model, history = pretrained(gau(), TINY, progress=False)
    path = cached_path()
    payload = torch.load(path, weights_only=True)
    damage(payload)
    torch.save(payload, path)
    with pytest.warns(UserWarning, match="retraining") as record:
        again, _ = pretrained(gau(), TINY, progress=False)
    assert any(words in str(w.message) for w in record), [str(w.message) for w in record]
    assert same_weights(model, again)
    pretrained(gau(), TINY, progress=False)  # and the file is whole again: no warning, no training


def _refuses_before_training(monkeypatch, *words):
    never_train(monkeypatch)
    with pytest.raises(OSError) as info:
        pretrained(gau(), TINY, progress=False)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_a_cache_folder_that_is_a_file_fails_before_training(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MINILM_CACHE", str(blocker))
    _refuses_before_training(monkeypatch, str(blocker), "MINILM_CACHE", "use_cache=False")


def test_a_cache_folder_under_a_file_fails_before_training(tmp_path, monkeypatch):
    (tmp_path / "a_file").write_text("not a folder")
    monkeypatch.setenv("MINILM_CACHE", str(tmp_path / "a_file" / "cache"))
    _refuses_before_training(monkeypatch, "a_file", "MINILM_CACHE")


def test_a_read_only_cache_folder_fails_before_training(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    folder.mkdir()
    if os.geteuid() == 0:  # root writes anywhere: make the write fail the way a read-only folder does
        def refuse(*args, **kwargs):
            raise PermissionError(13, "Permission denied")
        monkeypatch.setattr(minilm.cache.tempfile, "mkstemp", refuse)
    else:
        folder.chmod(0o500)
    try:
        _refuses_before_training(monkeypatch, str(folder), "Permission denied", "use_cache=False")
    finally:
        folder.chmod(0o700)


def test_a_read_only_cache_still_loads_what_it_holds(monkeypatch):
    model, history = pretrained(gau(), TINY, progress=False)
    never_train(monkeypatch)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(minilm.cache.tempfile, "mkstemp", refuse)  # no file can be created there
    again, history_again = pretrained(gau(), TINY, progress=False)
    assert same_weights(model, again) and history_again == history


def test_a_directory_where_the_cache_file_goes_fails_before_training(monkeypatch):
    cached_path().mkdir(parents=True)
    _refuses_before_training(monkeypatch, cached_path().name, "directory")


def test_a_save_that_fails_after_training_returns_the_model(monkeypatch):
    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(minilm.cache.torch, "save", disk_full)
    with pytest.warns(UserWarning, match="No space left.*returned but not cached"):
        model, history = pretrained(gau(), TINY, progress=False)
    assert len(history) == TINY.steps and isinstance(model, LM)
    assert not cached_path().exists() and not list(cached_path().parent.glob("*" + TMP_SUFFIX))


@pytest.mark.parametrize("message", [
    "[enforce fail at inline_container.cc:672] . unexpected pos 1216 vs 1108",
    "basic_ios::clear: iostream error",
])
def test_a_full_disk_that_torch_save_reports_as_a_runtime_error_returns_the_model(monkeypatch, message):
    def disk_full(*args, **kwargs):  # what torch.save raises on a full disk: not an OSError
        raise RuntimeError(message)

    monkeypatch.setattr(minilm.cache.torch, "save", disk_full)
    with pytest.warns(UserWarning, match="disk of .*cache is probably full.*returned but not cached") as record:
        model, history = pretrained(gau(), TINY, progress=False)
    assert str(cached_path().parent) in str(record[0].message)
    assert len(history) == TINY.steps and isinstance(model, LM)
    assert not cached_path().exists() and not list(cached_path().parent.glob("*" + TMP_SUFFIX))


def test_another_runtime_error_of_the_save_is_its_own_text_not_a_full_disk(monkeypatch):
    def fails(*args, **kwargs):
        raise RuntimeError("serialization of this object kind is not supported")

    monkeypatch.setattr(minilm.cache.torch, "save", fails)
    with pytest.warns(UserWarning, match="RuntimeError: serialization of this object kind is not supported.*"
                                         "returned but not cached") as record:
        model, history = pretrained(gau(), TINY, progress=False)
    assert "full" not in str(record[0].message) and len(history) == TINY.steps  # was: 'probably full'


def test_a_runtime_error_of_the_save_on_a_disk_with_little_space_left_is_called_a_full_disk(monkeypatch):
    def fails(*args, **kwargs):
        raise RuntimeError("an error torch has no words for")

    monkeypatch.setattr(minilm.cache.torch, "save", fails)
    monkeypatch.setattr(minilm.cache.shutil, "disk_usage", lambda folder: SimpleNamespace(free=10 ** 6))  # 1 MB
    with pytest.warns(UserWarning, match="no words for: the disk of .*cache is probably full"):
        pretrained(gau(), TINY, progress=False)


FILE_SIZE_LIMIT = r'''
import resource, signal, warnings
import minilm
from minilm import Config, Recipe, default_corpus

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing us
resource.setrlimit(resource.RLIMIT_FSIZE, (8192, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
config = Config(vocab_size=default_corpus().tokenizer.vocab_size, d_model=64, n_layer=1, n_head=2)  # 30 kB of weights
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model, history = minilm.pretrained(config, Recipe(steps=2, batch_size=2, length=16, warmup=1), progress=False)
print(len(history), *[str(w.message) for w in caught], sep="\n")
'''


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="a file size limit needs POSIX")
def test_a_save_that_really_fails_on_the_disk_returns_the_model(tmp_path):
    """Not a stand-in for torch.save: a file size limit makes its writes fail as a full disk does."""
    script = tmp_path / "limited.py"
    script.write_text(FILE_SIZE_LIMIT)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "MINILM_CACHE": str(tmp_path / "cache"), "PYTHONDONTWRITEBYTECODE": "1"})
    assert run.returncode == 0, run.stderr[-3000:]
    steps, *messages = run.stdout.strip().splitlines()
    assert steps == "2" and any("could not save the trained model" in m and "returned but not cached" in m
                                and str(tmp_path / "cache") in m for m in messages), run.stdout


def test_a_full_disk_in_pretrained_many_returns_the_model(monkeypatch):
    def disk_full(*args, **kwargs):
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 1216 vs 1108")

    monkeypatch.setattr(minilm.cache.torch, "save", disk_full)
    with pytest.warns(UserWarning, match="probably full.*returned but not cached"):
        models = minilm.cache.pretrained_many({"one": (gau(), TINY)}, progress=False)
    model, history = models["one"]
    assert isinstance(model, LM) and len(history) == TINY.steps


def test_weights_that_are_not_finite_are_refused_on_load_though_their_checksum_holds():
    pretrained(gau(), TINY, progress=False)
    payload = torch.load(cached_path(), weights_only=True)
    payload["state"]["embed.weight"][0, 0] = float("nan")
    payload["sha256"] = minilm.cache._checksum(payload)  # written so by a tool, not by a flipped bit
    torch.save(payload, cached_path())
    with pytest.warns(UserWarning, match="not finite .*embed.weight.*retraining"):
        again, _ = pretrained(gau(), TINY, progress=False)
    assert again.embed.weight.isfinite().all()


def test_a_cache_folder_given_with_a_tilde_is_under_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MINILM_CACHE", "~/models")
    assert minilm.cache.cache_dir() == tmp_path / "home" / "models"


def test_a_directory_where_the_resume_checkpoint_goes_fails_before_training(monkeypatch):
    resume = minilm.cache.resume_path(cached_path())
    resume.mkdir(parents=True)
    _refuses_before_training(monkeypatch, resume.name, "directory")


def test_temporary_files_of_killed_saves_are_removed_and_fresh_ones_kept():
    folder = cached_path().parent
    folder.mkdir(parents=True)
    stale, fresh = folder / f"x.pt.killed{TMP_SUFFIX}", folder / f"y.pt.writing{TMP_SUFFIX}"
    foreign = folder / "notes.tmp"  # not ours: never touched
    for path in (stale, fresh, foreign):
        path.write_bytes(b"half a checkpoint")
    hour_ago = time.time() - 3600
    os.utime(stale, (hour_ago, hour_ago))
    os.utime(foreign, (hour_ago, hour_ago))
    with writing(fresh):  # a save in progress in another process holds its file's lock
        pretrained(gau(), TINY, progress=False)
    assert not stale.exists() and fresh.exists() and foreign.exists()


@contextmanager
def writing(path):
    """Hold the lock save_atomic holds on its temporary file while it writes (where there are file locks)."""
    with open(path, "rb") as handle:
        if minilm.cache.fcntl is not None:
            minilm.cache.fcntl.flock(handle, minilm.cache.fcntl.LOCK_EX)
        yield


@pytest.mark.skipif(minilm.cache.fcntl is None, reason="without file locks a killed save is told by its age")
def test_the_temporary_file_of_a_save_killed_a_moment_ago_is_removed_on_the_next_run():
    folder = cached_path().parent
    folder.mkdir(parents=True)
    killed = folder / f"{cached_path().name}.resume.pt.abcd1234{TMP_SUFFIX}"   # as SIGKILL leaves it
    killed.write_bytes(b"half a checkpoint")
    moment_ago = time.time() - 2 * minilm.cache.FRESH_TMP_SECONDS   # seconds, not STALE_TMP_SECONDS: unlocked
    os.utime(killed, (moment_ago, moment_ago))
    pretrained(gau(), TINY, progress=False)
    assert not killed.exists()


def rival_prepares_the_cache_after_each_mkstemp(monkeypatch) -> list:
    """Another process's prepare_cache runs right after each file this one creates in the cache folder
    (side-by-side workers prepare the cache together): returns, for each such file, whether it survived."""
    original, survived = tempfile.mkstemp, []

    def mkstemp(*args, **kwargs):
        fd, name = original(*args, **kwargs)
        if not survived or survived[-1] is not None:  # not within the rival's own call
            survived.append(None)
            minilm.cache.prepare_cache(cached_path().with_name("rival.pt"))
            survived[-1] = os.path.exists(name)
        return fd, name

    monkeypatch.setattr(minilm.cache.tempfile, "mkstemp", mkstemp)
    return survived


def test_side_by_side_preparing_of_the_cache_keeps_each_others_files(monkeypatch):
    survived = rival_prepares_the_cache_after_each_mkstemp(monkeypatch)
    pretrained(gau(), TINY, progress=False)  # was: 'cannot write to the cache folder (No such file ...)'
    assert survived == [True, True], survived  # the probe, and the save before it holds its lock
    assert cached_path().is_file()


class NoLocks:
    """fcntl on a file system without locks (NFS without lockd, CIFS, some FUSE): flock fails."""
    LOCK_EX, LOCK_NB = 2, 4

    @staticmethod
    def flock(fd, operation):
        raise OSError(errno.ENOLCK, "No locks available")


def test_a_file_system_without_locks_still_saves(monkeypatch):
    monkeypatch.setattr(minilm.cache, "fcntl", NoLocks)
    model, history = pretrained(gau(), TINY, progress=False)   # was: 'could not save ... No locks available'
    assert cached_path().is_file() and not list(cached_path().parent.glob("*" + TMP_SUFFIX))
    never_train(monkeypatch)
    again, _ = pretrained(gau(), TINY, progress=False)
    assert same_weights(model, again)


def test_without_locks_a_killed_save_is_told_by_its_age(monkeypatch):
    folder = cached_path().parent
    folder.mkdir(parents=True)
    stale, fresh = folder / f"x.pt.killed{TMP_SUFFIX}", folder / f"y.pt.writing{TMP_SUFFIX}"
    for path in (stale, fresh):
        path.write_bytes(b"half a checkpoint")
    hour_ago = time.time() - 3600
    os.utime(stale, (hour_ago, hour_ago))
    monkeypatch.setattr(minilm.cache, "fcntl", NoLocks)
    minilm.cache.prepare_cache(cached_path())
    assert not stale.exists() and fresh.exists()


def test_an_interrupted_uniform_search_restores_the_temperatures(monkeypatch):
    model = LM(gau())
    with torch.no_grad():
        model.multiplier.fill_(1.3)
    calls = []

    def stop_on_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # a notebook's stop button
        return 2.0

    monkeypatch.setattr(minilm.scaling, "mean_loss", stop_on_second)
    with pytest.raises(KeyboardInterrupt):
        minilm.scaling.uniform_multiplier_search(model, default_corpus(), 16, [1.0, 2.0, 3.0], seed=0)
    assert (model.multiplier == 1.3).all()


def _interrupt_after_one_step(monkeypatch):
    original = minilm.scaling.train

    def interrupted(model, stream, **kwargs):
        def stop(m):
            raise KeyboardInterrupt

        return original(model, stream, **{**kwargs, "after_step": stop})

    monkeypatch.setattr(minilm.scaling, "train", interrupted)


@pytest.mark.parametrize("learn_multiplier", [False, True])
def test_an_interrupted_head_scale_run_leaves_the_model_as_it_was(monkeypatch, learn_multiplier):
    model = LM(Config(**{**gau().to_dict(), "learn_multiplier": learn_multiplier}))
    flags = {name: p.requires_grad for name, p in model.named_parameters()}
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    _interrupt_after_one_step(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        minilm.scaling.train_head_scales(model, default_corpus(), length=16, start=1.5, steps=5, progress=False)
    assert {name: p.requires_grad for name, p in model.named_parameters()} == flags
    for name, p in model.named_parameters():
        assert torch.equal(p, before[name]), name


def test_a_finished_head_scale_run_keeps_its_temperatures_and_restores_the_flags():
    model = LM(gau())
    flags = {name: p.requires_grad for name, p in model.named_parameters()}
    minilm.scaling.train_head_scales(model, default_corpus(), length=16, start=1.5, steps=3, progress=False)
    assert {name: p.requires_grad for name, p in model.named_parameters()} == flags
    assert not (model.multiplier == 1.0).all()  # trained from 1.5, clamped at >= 1
