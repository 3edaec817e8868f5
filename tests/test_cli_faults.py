"""python -m minilm.distributed under faults: JSON that is missing, empty or malformed, values of
the wrong kind, a diverged run, a resume checkpoint that is corrupted, abandoned or behind --stop-after."""

import json
import shutil

import pytest
import torch

import minilm
import minilm.distributed
import minilm.training
from minilm import Config, Recipe, default_corpus, pretrained
from minilm.cache import cache_key, cache_path
from minilm.distributed import main

VOCAB = default_corpus().tokenizer.vocab_size
CONFIG = dict(d_model=16, n_layer=1, n_head=2)
RECIPE = dict(steps=5, batch_size=4, length=16, warmup=2)


@pytest.fixture(autouse=True)
def private_cache_on_the_cpu(tmp_path, monkeypatch):
    monkeypatch.setenv("MINILM_CACHE", str(tmp_path / "cache"))
    for module in (minilm.cache, minilm.distributed):
        monkeypatch.setattr(module, "pick_device", lambda: torch.device("cpu"))


def args(config=CONFIG, recipe=RECIPE, *extra):
    return ["--config", config if isinstance(config, str) else json.dumps(config),
            "--recipe", recipe if isinstance(recipe, str) else json.dumps(recipe), *extra]


def model_file(config=CONFIG, recipe=RECIPE):
    return cache_path(cache_key(Config(vocab_size=VOCAB, **config), Recipe(**recipe), default_corpus()))


def resume_file(config=CONFIG, recipe=RECIPE):
    path = model_file(config, recipe)
    return path.with_name(path.stem + ".resume.pt")


def usage_error(capsys, argv) -> str:
    """What argparse prints when it refuses ``argv`` (it exits with status 2)."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    return capsys.readouterr().err


def refusal(argv) -> str:
    """The message main() exits with when it refuses a value (SystemExit with a message)."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert isinstance(info.value.code, str), info.value.code
    return info.value.code


# ---------------------------------------------------------------------------- the JSON arguments


def test_a_json_file_that_is_missing_is_named(capsys, tmp_path):
    err = usage_error(capsys, args(str(tmp_path / "config.json")))
    assert "--config" in err and "config.json" in err and "no such file" in err, err


def test_an_empty_json_file_is_named(capsys, tmp_path):
    (tmp_path / "recipe.json").write_text("  \n")
    err = usage_error(capsys, args(CONFIG, str(tmp_path / "recipe.json")))
    assert "--recipe" in err and "recipe.json" in err and "is empty" in err, err


def test_a_directory_given_as_json_is_named(capsys, tmp_path):
    err = usage_error(capsys, args(str(tmp_path)))
    assert "--config" in err and "is a directory" in err, err


@pytest.mark.parametrize("in_a_file", [False, True])
def test_malformed_json_says_where(capsys, tmp_path, in_a_file):
    text = '{"d_model": 16,\n "n_layer": 1,}'
    if in_a_file:
        (tmp_path / "c.json").write_text(text)
        text = str(tmp_path / "c.json")
    err = usage_error(capsys, args(text))
    assert "--config" in err and "not valid JSON" in err and "line 2 column" in err, err
    assert ("c.json" in err) == in_a_file, err


@pytest.mark.parametrize("lengths, got", [(16, "got 16"), ("16", "got '16'")])
def test_lengths_that_are_not_a_list_are_named(lengths, got):
    message = refusal(args(CONFIG, dict(RECIPE, length=None, lengths=lengths)))
    assert "--recipe" in message and "Recipe.lengths must be a non-empty list" in message and got in message, message


@pytest.mark.parametrize("config, recipe, words", [
    (dict(CONFIG, n_layers=2), RECIPE, ["--config", "unknown key(s) 'n_layers'", "n_layer"]),
    (CONFIG, dict(RECIPE, stepz=3), ["--recipe", "unknown key(s) 'stepz'", "steps"]),
    (dict(CONFIG, d_model=0), RECIPE, ["--config", "Config.d_model must be a positive int; got 0"]),
    (CONFIG, dict(RECIPE, steps=2.5), ["--recipe", "Recipe.steps must be a positive int; got 2.5"]),
], ids=["config key", "recipe key", "config value", "recipe value"])
def test_unknown_keys_and_bad_values_are_named(config, recipe, words):
    message = refusal(args(config, recipe))
    for word in words:
        assert word in message, message


# ---------------------------------------------------------------------------- what it trains


def test_a_json_config_with_an_int_rope_base_is_found_by_pretrained(monkeypatch):
    main(args(dict(CONFIG, rope_base=10000), dict(RECIPE, lr=1)))
    monkeypatch.setattr(minilm.training, "train", lambda *a, **k: pytest.fail("trained again"))
    pretrained(Config(vocab_size=VOCAB, rope_base=10000.0, **CONFIG), Recipe(**dict(RECIPE, lr=1.0)),
               progress=False)


def test_a_bidirectional_model_on_the_causal_task_is_refused():
    message = refusal(args(dict(CONFIG, causal=False)))
    assert "causal=False" in message and "sees the token it predicts" in message, message


def test_a_diverged_run_stops_and_leaves_nothing_behind():
    recipe = dict(RECIPE, steps=30, lr=1e4)
    message = refusal(args(CONFIG, recipe, "--checkpoint-every", "1"))
    assert "diverged at step" in message and "lr" in message and "nothing was cached" in message, message
    assert not model_file(CONFIG, recipe).exists() and not resume_file(CONFIG, recipe).exists()


# ---------------------------------------------------------------------------- resume checkpoints


def flip_a_bit(tensor):
    tensor.view(torch.int32).view(-1)[0] ^= 1 << 20


@pytest.mark.parametrize("damage", [
    lambda p: flip_a_bit(p["optimizer"]["state"][0]["exp_avg"]),
    lambda p: p.update(step=4),
], ids=["exp_avg", "step"])
def test_a_resume_checkpoint_whose_optimizer_state_or_step_changed_is_not_resumed(capsys, damage):
    main(args(CONFIG, RECIPE, "--stop-after", "3"))
    payload = torch.load(resume_file(), weights_only=True)
    damage(payload)
    torch.save(payload, resume_file())
    capsys.readouterr()
    with pytest.warns(UserWarning, match="does not match its checksum"):
        main(args())
    out = capsys.readouterr().out
    assert "from step 0" in out and "resuming" not in out, out


def test_a_resume_checkpoint_made_for_another_key_is_removed_with_a_message(capsys):
    main(args(CONFIG, RECIPE, "--stop-after", "3"))
    payload = torch.load(resume_file(), weights_only=True)
    payload["key"]["recipe"]["seed"] = 7  # no run can resume it: its name is this key's
    torch.save(payload, resume_file())
    capsys.readouterr()
    with pytest.warns(UserWarning, match="another key"):
        main(args(CONFIG, RECIPE, "--stop-after", "2"))
    out = capsys.readouterr().out
    assert f"removed {resume_file().name}" in out and "from step 0" in out, out
    assert torch.load(resume_file(), weights_only=True)["step"] == 2  # this run's own checkpoint


def test_a_leftover_resume_checkpoint_of_a_finished_model_is_removed(capsys, tmp_path):
    main(args(CONFIG, RECIPE, "--stop-after", "3"))
    shutil.copy(resume_file(), tmp_path / "old.resume.pt")
    main(args())
    shutil.copy(tmp_path / "old.resume.pt", resume_file())  # as if left by an interrupted second run
    capsys.readouterr()
    main(args())
    out = capsys.readouterr().out
    assert "already trained" in out and f"removed {resume_file().name}" in out, out
    assert not resume_file().exists()


def test_pretrained_removes_the_command_lines_checkpoint_of_the_model_it_trained():
    main(args(CONFIG, RECIPE, "--stop-after", "3"))
    assert resume_file().exists()
    pretrained(Config(vocab_size=VOCAB, **CONFIG), Recipe(**RECIPE), progress=False)
    assert model_file().exists() and not resume_file().exists()


def test_stop_after_below_the_checkpoint_says_so_and_does_nothing(capsys):
    main(args(CONFIG, RECIPE, "--stop-after", "3"))
    capsys.readouterr()
    main(args(CONFIG, RECIPE, "--stop-after", "2"))
    out = capsys.readouterr().out
    assert "already at step 3" in out and "--stop-after 2" in out and "nothing to do" in out, out
    assert not model_file().exists() and torch.load(resume_file(), weights_only=True)["step"] == 3


# ---------------------------------------------------------------------------- one line, no traceback


@pytest.mark.parametrize("content, words", [
    (None, ["--corpus", "does not exist"]),
    ("a directory", ["--corpus", "is a directory"]),
    (b"", ["--corpus", "holds no text"]),
    (b"\n \n", ["--corpus", "holds no text"]),
    (b"\x89PNG\r\n\x1a\n\xff\xfe\x00\x00", ["--corpus", "is not UTF-8 text"]),
    (b"text\x00with a NUL", ["--corpus", "NUL character"]),
], ids=["missing", "directory", "empty", "blank", "binary", "NUL"])
def test_a_corpus_that_is_missing_empty_or_not_text_is_one_line(tmp_path, content, words):
    path = tmp_path / "corpus.txt"
    if content == "a directory":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    message = refusal(args(CONFIG, RECIPE, "--corpus", str(path)))
    for word in words:
        assert word in message, message


def test_a_cache_path_that_is_a_file_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "a_file").write_text("not a folder")
    monkeypatch.setenv("MINILM_CACHE", str(tmp_path / "a_file"))
    message = refusal(args())
    assert "cannot write to the cache folder" in message and "MINILM_CACHE" in message, message
    assert "use_cache" not in message, message  # pretrained's fix, not the command line's


def test_a_stray_rank_variable_without_torchrun_is_one_line(monkeypatch):
    monkeypatch.setenv("RANK", "0")
    for name in ("WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    message = refusal(args())
    assert "RANK='0' is set but not WORLD_SIZE" in message and "torchrun" in message, message


def test_a_directory_where_the_checkpoint_goes_is_found_before_training(monkeypatch):
    resume_file().mkdir(parents=True)
    monkeypatch.setattr(minilm.distributed, "train_by_recipe", lambda *a, **k: pytest.fail("trained"))
    message = refusal(args())
    assert resume_file().name in message and "a directory is in the way" in message, message


def fail_saves_from(monkeypatch, call: int):
    """torch.save as on a disk that fills up: the ``call``-th save and every later one fail."""
    original, calls = minilm.cache.torch.save, []

    def save(*args, **kwargs):
        calls.append(1)
        if len(calls) >= call:
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 1216 vs 1108")
        return original(*args, **kwargs)

    monkeypatch.setattr(minilm.cache.torch, "save", save)
    return original


def test_a_full_disk_at_a_checkpoint_stops_there_and_keeps_the_last_one(monkeypatch, capsys):
    save = fail_saves_from(monkeypatch, 2)  # the checkpoint of step 2 is written, that of step 4 is not
    message = refusal(args(CONFIG, RECIPE, "--checkpoint-every", "2"))
    assert "could not write the checkpoint of step 4" in message and "probably full" in message, message
    assert "checkpoint of step 2 is kept" in message and "\n" not in message, message
    assert torch.load(resume_file(), weights_only=True)["step"] == 2
    monkeypatch.setattr(minilm.cache.torch, "save", save)  # space freed
    capsys.readouterr()
    main(args(CONFIG, RECIPE, "--checkpoint-every", "2"))
    assert "resuming at step 2" in capsys.readouterr().out and model_file().exists()


def test_a_full_disk_at_the_end_says_so_in_one_line(monkeypatch):
    fail_saves_from(monkeypatch, 1)
    message = refusal(args(CONFIG, RECIPE))  # 5 steps: no checkpoint before the model is written
    assert "could not write the trained model (5 steps)" in message and "probably full" in message, message
    assert "no checkpoint is kept" in message and "\n" not in message, message
    assert not model_file().exists()


def test_stopping_says_where_the_checkpoint_is_and_how_to_discard_it(capsys):
    main(args(CONFIG, RECIPE, "--stop-after", "3"))
    out = capsys.readouterr().out
    assert str(resume_file()) in out and "delete it to discard" in out, out
