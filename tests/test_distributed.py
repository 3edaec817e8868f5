"""python -m minilm.distributed: under torchrun (2 CPU processes, gloo) it trains the weights one
process trains, into the cache pretrained() reads; an interrupted run resumes to the same weights."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import minilm
import minilm.distributed
from minilm import Config, Recipe, default_corpus, pretrained
from minilm.data import IGNORE_INDEX
from minilm.distributed import main
from minilm.cache import cache_key, cache_path
from minilm.training import _shard_loss, lm_loss

ROOT = Path(__file__).resolve().parent.parent
VOCAB = default_corpus().tokenizer.vocab_size
CONFIG = dict(d_model=16, n_layer=2, n_head=2)
RECIPE = dict(steps=5, batch_size=8, length=16, warmup=2)

pytestmark = pytest.mark.skipif(not torch.distributed.is_available(), reason="this torch build has no torch.distributed")


@pytest.fixture(autouse=True)
def private_cache_on_the_cpu(tmp_path, monkeypatch):
    # gloo on the CPU everywhere, also where CUDA is present: the comparisons are CPU against CPU
    monkeypatch.setenv("MINILM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    for module in (minilm.training, minilm.distributed):
        monkeypatch.setattr(module, "pick_device", lambda: torch.device("cpu"))


def cli_args(config=CONFIG, recipe=RECIPE, *extra):
    return ["--config", json.dumps(config), "--recipe", json.dumps(recipe), *extra]


def cached_file(config=CONFIG, recipe=RECIPE) -> Path:
    return cache_path(cache_key(Config(vocab_size=VOCAB, **config), Recipe(**recipe), default_corpus()))


def assert_same_weights(a, b, exact: bool):
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        assert torch.equal(x, y) if exact else torch.allclose(x, y, atol=1e-5, rtol=1e-4), name


def test_two_processes_under_torchrun_train_what_one_process_trains(monkeypatch):
    # about 8-15 s on 2 cores, almost all of it starting torchrun and two Pythons
    run = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                          "-m", "minilm.distributed", *cli_args(), "--log-every", "1"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 process(es) on cpu (gloo)" in run.stdout and "global batch 8 (4 per process)" in run.stdout
    assert run.stdout.count("step 5/5") == 1, run.stdout      # only rank 0 prints
    config, recipe = Config(vocab_size=VOCAB, **CONFIG), Recipe(**RECIPE)
    one, history = pretrained(config, recipe, use_cache=False, progress=False)
    # pretrained() finds the model torchrun wrote, and does not train
    monkeypatch.setattr(minilm.training, "train", lambda *a, **k: pytest.fail("trained again"))
    two, history_two = pretrained(config, recipe, progress=False)
    assert_same_weights(one, two, exact=False)
    assert history_two == pytest.approx(history, abs=1e-5)
    assert not cached_file().with_name(cached_file().stem + ".resume.pt").exists()


def test_one_process_writes_what_pretrained_trains_and_resumes_after_an_interruption(monkeypatch, capsys):
    config, recipe = Config(vocab_size=VOCAB, **CONFIG), Recipe(**RECIPE)
    main(cli_args() + ["--stop-after", "3"])              # interrupted after step 3 ...
    path = cached_file()
    assert not path.exists() and path.with_name(path.stem + ".resume.pt").exists()
    main(cli_args())                                       # ... and rerun: resumes at step 3
    assert "resuming at step 3 of 5" in capsys.readouterr().out
    assert path.exists() and not path.with_name(path.stem + ".resume.pt").exists()
    main(cli_args())
    assert "already trained" in capsys.readouterr().out
    reference, history = pretrained(config, recipe, use_cache=False, progress=False)
    monkeypatch.setattr(minilm.training, "train", lambda *a, **k: pytest.fail("trained again"))
    model, history_cli = pretrained(config, recipe, progress=False)
    assert history_cli == history                         # bit for bit: one process, same stream
    assert_same_weights(reference, model, exact=True)


def test_mixed_lengths_and_a_checkpoint_from_another_key(capsys):
    recipe = dict(RECIPE, length=None, lengths=[8, 16])
    main(cli_args(CONFIG, recipe, "--stop-after", "2"))
    main(cli_args(CONFIG, dict(recipe, seed=1)))          # another key: its own checkpoint, from step 0
    assert "from step 0" in capsys.readouterr().out
    main(cli_args(CONFIG, recipe))
    assert "resuming at step 2 of 5" in capsys.readouterr().out
    reference, history = pretrained(Config(vocab_size=VOCAB, **CONFIG), Recipe(**dict(recipe, lengths=(8, 16))),
                                    use_cache=False, progress=False)
    assert torch.load(cached_file(CONFIG, dict(recipe, lengths=(8, 16))))["history"] == history


def test_shard_losses_weighted_by_target_counts_give_the_masked_lm_gradient():
    # Masked-LM shards hold unequal numbers of targets: the mean of the shards' mean losses is not
    # the batch mean, but the mean of _shard_loss's gradients (what DDP computes) is its gradient.
    torch.distributed.init_process_group("gloo", store=torch.distributed.HashStore(), rank=0, world_size=1)
    try:
        torch.manual_seed(0)
        model = minilm.LM(Config(vocab_size=VOCAB, causal=False, **CONFIG))
        x, y = next(minilm.data.batches(default_corpus(), task="mlm", batch_size=8, length=16, seed=0))
        assert (y[:4] != IGNORE_INDEX).sum() != (y[4:] != IGNORE_INDEX).sum()
        lm_loss(model(x), y).backward()
        whole = [p.grad.clone() for p in model.parameters() if p.grad is not None]
        model.zero_grad()
        means = []
        for rank in range(2):
            loss, mean = _shard_loss(model, x, y, rank, 2, torch.device("cpu"))
            (loss / 2).backward()                          # grads accumulate: their mean over ranks
            means.append(mean)
        shards = [p.grad for p in model.parameters() if p.grad is not None]
        for a, b in zip(whole, shards):
            assert torch.allclose(a, b, atol=1e-6)
        assert float(sum(means)) == pytest.approx(lm_loss(model(x), y).item(), abs=1e-5)
    finally:
        torch.distributed.destroy_process_group()
    with pytest.raises(ValueError, match="not divisible"):
        _shard_loss(model, x[:7], y[:7], 0, 2, torch.device("cpu"))
