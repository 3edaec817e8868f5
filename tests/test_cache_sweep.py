"""A cache that cleans up after itself: once a model is stored (saved, or found in the cache), the
files its key's runs left are swept: the temporary files of saves that were killed (a real SIGKILL
of a run in the middle of writing here) and its resume checkpoint. Never a file that a live save is
writing, and never another key's resume checkpoint, which its own command can still resume."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch

import minilm.cache
import minilm.distributed
from minilm import Config, Recipe, default_corpus, pretrained
from minilm.cache import TMP_SUFFIX, cache_key, cache_path, resume_path
from minilm.distributed import main

ROOT = Path(__file__).resolve().parent.parent
# the command line's tiny job, and its private cache on the CPU, as tests/test_cli_faults.py runs it
from test_cli_faults import CONFIG, RECIPE, VOCAB, private_cache_on_the_cpu  # noqa: E402, F401


def args(recipe=RECIPE, *extra):
    return ["--config", json.dumps(CONFIG), "--recipe", json.dumps(recipe), *extra]


def model_file(recipe=RECIPE):
    key = cache_key(Config(vocab_size=VOCAB, **CONFIG), Recipe(**recipe), default_corpus())
    return cache_path(key)


def load_it():
    """pretrained() of the model of RECIPE: trained into the cache, or loaded from it."""
    return pretrained(Config(vocab_size=VOCAB, **CONFIG), Recipe(**RECIPE), progress=False)


def temporary_files():
    return sorted(p.name for p in model_file().parent.glob("*" + TMP_SUFFIX))


# python -m minilm.distributed whose torch.save writes 1000 bytes of the file, then hangs there
HANGS_MID_WRITE = """
import io, sys, time, torch
real_save = torch.save

def save_then_hang(payload, file, *args, **kwargs):
    whole = io.BytesIO()
    real_save(payload, whole, *args, **kwargs)
    with open(file, "wb") as out:
        out.write(whole.getvalue()[:1000])
        out.flush()
        time.sleep(600)

torch.save = save_then_hang
import minilm.distributed
minilm.distributed.main(sys.argv[1:])
"""


@contextmanager
def a_run_writing(checkpoint_every: str):
    """A command-line run of RECIPE in another process, caught in the middle of its first save:
    of its resume checkpoint at step 2 (checkpoint_every "2"), or of the trained model ("100").
    Yields (process, its temporary file); the process is SIGKILLed on leaving if still alive."""
    every = ["--checkpoint-every", checkpoint_every]
    command = [sys.executable, "-c", HANGS_MID_WRITE, *args(RECIPE, *every)]
    run = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not [p for p in model_file().parent.glob("*" + TMP_SUFFIX) if p.stat().st_size]:
            assert run.poll() is None and time.monotonic() < deadline, "no save began"
            time.sleep(0.05)
        (tmp,) = model_file().parent.glob("*" + TMP_SUFFIX)
        yield run, tmp
    finally:
        if run.poll() is None:
            os.kill(run.pid, signal.SIGKILL)
        run.wait()


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
@pytest.mark.parametrize("every, rerun", [("2", "the command"), ("100", "pretrained")])
def test_a_run_killed_mid_write_leaves_no_temporary_file_once_a_rerun_stores_it(every, rerun):
    with a_run_writing(every) as (run, tmp):
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
    of = ".resume.pt." if every == "2" else ".pt."  # of its resume checkpoint, or of the model
    assert tmp.is_file() and tmp.name.startswith(model_file().stem + of)  # what SIGKILL leaves
    main(args()) if rerun == "the command" else load_it()   # a moment later: was kept for good
    assert model_file().is_file() and temporary_files() == []


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
def test_the_file_of_a_save_in_progress_is_never_swept(capsys):
    with a_run_writing("2") as (run, tmp):
        main(args())    # stores the model of the same key, and sweeps
        load_it()       # a cache hit sweeps
        main(args())    # "already trained" sweeps
        assert "already trained" in capsys.readouterr().out
        assert run.poll() is None and temporary_files() == [tmp.name]  # its writer is still at it
        os.kill(run.pid, signal.SIGKILL)
    load_it()  # its writer gone, the next cache hit sweeps it
    assert temporary_files() == []


@pytest.mark.skipif(minilm.cache.fcntl is None, reason="without locks: told by age")
def test_an_empty_temporary_file_of_a_moment_ago_is_kept_until_it_is_old_enough():
    folder = model_file().parent
    folder.mkdir(parents=True)
    just_made = folder / f"{model_file().name}.abcd1234{TMP_SUFFIX}"  # mkstemp's, not yet locked
    just_made.touch()
    load_it()  # trains, stores, sweeps
    assert temporary_files() == [just_made.name]
    moment_ago = time.time() - 2 * minilm.cache.FRESH_TMP_SECONDS
    os.utime(just_made, (moment_ago, moment_ago))
    load_it()  # a cache hit
    assert temporary_files() == []


def test_a_resume_checkpoint_left_beside_its_stored_model_is_removed_by_a_cache_hit(tmp_path):
    main(args(RECIPE, "--stop-after", "3"))
    shutil.copy(resume_path(model_file()), tmp_path / "old.resume.pt")
    main(args())
    shutil.copy(tmp_path / "old.resume.pt", resume_path(model_file()))  # an interrupted rerun's
    load_it()  # loads the stored model, and sweeps
    assert model_file().is_file() and not resume_path(model_file()).exists()


def test_another_recipes_resume_checkpoint_stays_beside_a_stored_model_and_resumes(capsys):
    other = dict(RECIPE, steps=6)
    main(args(other, "--stop-after", "3"))
    main(args())
    load_it()
    assert model_file().is_file() and resume_path(model_file(other)).is_file()  # not this key's
    capsys.readouterr()
    main(args(other))
    assert "resuming at step 3" in capsys.readouterr().out
    assert model_file(other).is_file() and not resume_path(model_file(other)).exists()
