"""pretrained_many when a job fails or the notebook's stop button is pressed: what finished stays
cached, the error names the job by its key, and no worker process or semaphore is left behind."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import minilm
from minilm import Config, Recipe, default_corpus, pretrained
from minilm.model import LM

ROOT = Path(__file__).resolve().parent.parent
VOCAB = default_corpus().tokenizer.vocab_size

SCRIPT = r'''
import json, os, sys, time, multiprocessing
import minilm, minilm.cache
from minilm import Config, Recipe, default_corpus
from minilm.cache import cache_key, cache_path


def zombies():
    """Child processes of this one that exited and were never waited for (<defunct>)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] == "Z":
            found.append(int(pid))
    return found


class StopButton:
    """A progress bar whose first update raises KeyboardInterrupt, as the stop button does."""
    def __init__(self, *args, **kwargs):
        pass
    def update(self, n):
        raise KeyboardInterrupt
    def close(self):
        pass


if __name__ == "__main__":
    V = default_corpus().tokenizer.vocab_size
    ok = Config(vocab_size=V, d_model=16, n_layer=1, n_head=2)
    short = Config(vocab_size=V, d_model=16, n_layer=1, n_head=2, max_len=8)  # fails at its first step
    recipe = lambda seed, steps=3: Recipe(steps=steps, batch_size=2, length=16, warmup=1, seed=seed)
    report = {}
    jobs = {"good": (ok, recipe(0)), "bad": (short, recipe(1, 300)), "later": (ok, recipe(2))}
    try:
        minilm.pretrained_many(jobs, progress=False)
        report["failed"] = None
    except RuntimeError as error:
        report["failed"] = str(error)
    time.sleep(0.5)  # a terminated worker has exited by now: unless someone waits for it, it is a zombie
    report["zombies after the error"] = zombies()
    report["active after the error"] = len(multiprocessing.active_children())
    report["good cached"] = cache_path(cache_key(ok, recipe(0), default_corpus())).is_file()

    minilm.cache.tqdm = StopButton
    try:
        minilm.pretrained_many({seed: (ok, recipe(seed, 400)) for seed in (10, 11)})
        report["interrupted"] = False
    except KeyboardInterrupt:
        report["interrupted"] = True
    time.sleep(0.5)
    report["zombies after the interrupt"] = zombies()
    report["active after the interrupt"] = len(multiprocessing.active_children())
    print(json.dumps(report))
'''


@pytest.mark.skipif(minilm.cache.cpu_cores() < 2, reason="worker processes need two cores")
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds zombies in /proc (Linux)")
def test_a_failed_or_interrupted_pretrained_many_keeps_what_finished_and_leaves_nothing_behind(tmp_path, on_the_cpu):
    script = tmp_path / "many.py"
    script.write_text(SCRIPT)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=ROOT,
                         env={**__import__("os").environ, "MINILM_CACHE": str(tmp_path / "cache")})
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["failed"] and "job 'bad'" in report["failed"], report["failed"]
    assert "exceeds this model's max_len=8" in report["failed"]
    assert report["good cached"], "a job that finished before the failure was lost"
    assert report["interrupted"]
    for when in ("after the error", "after the interrupt"):
        assert report[f"zombies {when}"] == [] and report[f"active {when}"] == 0, report
    assert "leaked semaphore" not in run.stderr and "resource_tracker" not in run.stderr, run.stderr[-3000:]


def test_init_of_another_shape_is_named_before_training(monkeypatch, tmp_path):
    monkeypatch.setenv("MINILM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(minilm.training, "train", lambda *a, **k: pytest.fail("trained"))
    config = Config(vocab_size=VOCAB, d_model=16, n_layer=1, n_head=2)
    other = LM(Config(vocab_size=VOCAB, d_model=32, n_layer=1, n_head=2))
    recipe = Recipe(steps=2, batch_size=2, length=16)
    for call in (lambda: pretrained(config, recipe, init=other, progress=False),
                 lambda: minilm.pretrained_many({"tuned": (config, recipe, other)}, progress=False)):
        with pytest.raises(ValueError) as info:
            call()
        message = str(info.value)
        assert message.startswith("init has the weights of another model"), message
        assert "embed.weight" in message and f"({VOCAB}, 32)" in message, message


FULL_DISK = r'''
import json, sys, warnings
import minilm, minilm.cache
from minilm import Config, Recipe, default_corpus


def disk_full(payload, path):  # what torch.save raises on a full disk; here in every worker process too
    raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 1216 vs 1108")


minilm.cache.save_atomic = disk_full

if __name__ == "__main__":
    minilm.cache.cpu_cores = lambda: 2  # side by side, even on one core
    V = default_corpus().tokenizer.vocab_size
    config = Config(vocab_size=V, d_model=16, n_layer=1, n_head=2)
    jobs = {seed: (config, Recipe(steps=3, batch_size=2, length=16, warmup=1, seed=seed)) for seed in (0, 1)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        models = minilm.pretrained_many(jobs, progress=False)
    reference = {seed: minilm.pretrained(*jobs[seed], use_cache=False, progress=False) for seed in jobs}
    print(json.dumps({
        "warnings": [str(w.message) for w in caught],
        "same": [all(a.equal(b) for a, b in zip(models[s][0].state_dict().values(),
                                                reference[s][0].state_dict().values()))
                 and models[s][1] == reference[s][1] for s in jobs],
    }))
'''


def test_a_full_disk_while_training_side_by_side_returns_every_model_with_a_warning(tmp_path, on_the_cpu):
    script = tmp_path / "full.py"
    script.write_text(FULL_DISK)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=ROOT,
                         env={**__import__("os").environ, "MINILM_CACHE": str(tmp_path / "cache")})
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["same"] == [True, True], report  # the workers' weights, not retrained, not lost
    unsaved = [w for w in report["warnings"] if "returned but not cached" in w]
    assert len(unsaved) == 2 and all("probably full" in w and str(tmp_path / "cache") in w for w in unsaved), report
    assert {w.split(":")[0] for w in unsaved} == {"job 0", "job 1"}, report
