"""One build, one set of numbers: every stored lesson and exercise solution records the build it
came from (tools/notebooks.py writes ``metadata.minilm_build``), and all of them record the same
one. A lesson rebuilt alone, on another machine or from other sources, fails here until the
whole course is rebuilt with ``python tools/notebooks.py build --all``: another machine's kernels
train other weights, and a number one lesson quotes from another would no longer be its output."""

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
STORED = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")) + sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
FIELDS = {"commit", "torch", "python", "cpu", "cpu_kernels", "gpu", "profile", "date"}


def record(path: Path) -> dict | None:
    return nbformat.read(path, as_version=4).metadata.get("minilm_build")


@pytest.mark.parametrize("path", STORED, ids=[f"{p.parent.name}/{p.stem}" for p in STORED])
def test_a_stored_notebook_records_its_build(path):
    found = record(path)
    assert found is not None, f"{path.name} records no build; rebuild the course: tools/notebooks.py build --all"
    assert set(found) == FIELDS, f"{path.name}: build record fields {sorted(found)}, expected {sorted(FIELDS)}"
    assert found["profile"] == "cpu"


def test_every_stored_notebook_comes_from_one_build():
    records = {path.relative_to(ROOT).as_posix(): record(path) for path in STORED}
    first = next(iter(records.values()))
    other = {name: found for name, found in records.items() if found != first}
    assert not other, (f"{len(other)} of {len(records)} notebooks come from another build than "
                       f"{next(iter(records))} ({first}): {sorted(other)[:4]}; rebuild the course at once: "
                       "python tools/notebooks.py build --all")


def test_a_student_notebook_records_no_build():
    """The exercises are the student's copies: no outputs, no run to record."""
    students = sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))
    assert students and all(record(path) is None for path in students)
