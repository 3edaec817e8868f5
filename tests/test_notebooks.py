"""Stored notebooks agree with their jupytext sources and hold a clean, real run."""

import json
import os
import re

import pytest

from notebooks import (  # tools/ is on the path (conftest.py)
    EXERCISE_SOURCES, all_sources, build, kernelspec, notebook_path, out_of_sync, read_source, student_path,
)

SOURCES = all_sources()  # lessons and exercise solutions
EXERCISES = sorted(EXERCISE_SOURCES.glob("*.py"))
MACHINE_PATH = re.compile(r"(/root/|/home/[^/\s]+/|/tmp/|site-packages/)")


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_notebook_agrees_with_its_source(source):
    assert out_of_sync(source) is None, out_of_sync(source)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_notebook_is_stored_with_a_clean_run_in_order(source):
    notebook = json.loads(notebook_path(source).read_text())
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    counts = [c["execution_count"] for c in code]
    assert None not in counts and counts == sorted(counts), "execute top to bottom before committing"
    for cell in code:
        for output in cell["outputs"]:
            assert output["output_type"] != "error", cell["source"]
            assert not MACHINE_PATH.search(json.dumps(output)), "an output shows a machine path"


STORED = [notebook_path(source) for source in SOURCES] + [student_path(source) for source in EXERCISES]


@pytest.mark.parametrize("stored", STORED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_notebook_names_its_kernel_as_jupyterlab_writes_it(stored):
    # else JupyterLab rewrites it on open, and an untouched lesson asks to be saved when closed
    assert json.loads(stored.read_text())["metadata"]["kernelspec"] == kernelspec()


SAMPLE = '''# %% [markdown]
# # A sample
# One line of prose.

# %%
from tqdm import tqdm
for _ in tqdm(range(3), file=__import__("sys").stdout):
    pass
print("same")

# %% [markdown]
# Another line.

# %%
print("same")
'''


RECORD = {"commit": "0" * 40, "torch": "2.13.0", "python": "3.11.7", "cpu": "a test CPU",
          "cpu_kernels": "AVX2", "gpu": None, "profile": "cpu", "date": "2026-12-05"}


def sample_source(tmp_path, text=SAMPLE):
    source = tmp_path / "src" / "sample.py"
    source.parent.mkdir(exist_ok=True)
    source.write_text(text)
    return source


def test_cell_ids_come_from_the_cells_so_a_one_line_edit_changes_one_id(tmp_path):
    before = [cell.id for cell in read_source(sample_source(tmp_path)).cells]
    assert before == [cell.id for cell in read_source(sample_source(tmp_path)).cells]
    assert len(set(before)) == len(before), "two identical cells still get distinct ids"
    after = [cell.id for cell in read_source(sample_source(tmp_path, SAMPLE.replace("Another", "A second"))).cells]
    assert sum(a != b for a, b in zip(before, after)) == 1


def test_a_rebuild_of_an_unchanged_source_changes_no_byte(tmp_path):
    source = sample_source(tmp_path)
    build(source, RECORD)
    first = notebook_path(source).read_bytes()
    build(source, RECORD)
    assert notebook_path(source).read_bytes() == first
    assert b'"execution"' not in first and b"iso8601" not in first  # no timestamps stored
    assert json.loads(first)["metadata"]["minilm_build"] == RECORD  # but the build's record


def test_a_notebook_is_built_on_the_profiles_own_seeds_whatever_the_environment_says(tmp_path, monkeypatch):
    monkeypatch.setenv("MINILM_SEED_OFFSET", "50")  # as in a CI run, which also builds notebooks here
    monkeypatch.setenv("MINILM_PROFILE", "gpu")
    source = sample_source(tmp_path, "# %%\nimport minilm\nprint(minilm.profile().name, minilm.profile().seeds)\n")
    build(source, RECORD)
    assert "cpu (0, 1)" in notebook_path(source).read_text()
    assert os.environ["MINILM_SEED_OFFSET"] == "50"  # this process keeps its own setting


@pytest.mark.parametrize("source", EXERCISES, ids=lambda p: p.stem)
def test_student_copies_carry_no_outputs_and_no_execution_metadata(source):
    notebook = json.loads(student_path(source).read_text())
    for cell in notebook["cells"]:
        assert "execution" not in cell["metadata"]
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


def test_messages_name_the_full_path_where_a_lesson_and_an_exercise_share_a_name(monkeypatch):
    import notebooks

    lesson, exercise = notebooks.SOURCES / "01_gau.py", notebooks.EXERCISE_SOURCES / "01_gau.py"
    monkeypatch.setattr(notebooks, "cells_of", lambda notebook: [id(notebook)])  # every pair differs
    assert out_of_sync(lesson).startswith("lessons/01_gau.ipynb differs from lessons/src/01_gau.py")
    assert out_of_sync(exercise).startswith("solutions/01_gau.ipynb differs from solutions/src/01_gau.py")


def test_a_prose_edit_is_copied_without_running_and_a_code_edit_is_refused(tmp_path):
    from notebooks import update_prose

    source = sample_source(tmp_path)
    build(source, RECORD)
    source.write_text(SAMPLE.replace("One line of prose.", "One better line of prose."))
    update_prose(source)
    assert out_of_sync(source) is None
    stored = json.loads(notebook_path(source).read_text())
    assert "One better line" in "".join(stored["cells"][0]["source"])
    assert "same" in json.dumps(stored["cells"][1]["outputs"])  # the outputs of the run are kept
    source.write_text(SAMPLE.replace('print("same")\n\n#', 'print("changed")\n\n#'))
    with pytest.raises(SystemExit, match="code cells changed"):
        update_prose(source)
