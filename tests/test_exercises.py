"""Exercises: student notebooks are generated from their solutions, and every grade cell (a call
of course.grader) rejects the unsolved student version (so no grade can pass vacuously)."""

import nbformat
import pytest

from notebooks import EXERCISE_SOURCES, student_path  # tools/ is on the path (conftest.py)

EXERCISES = sorted(EXERCISE_SOURCES.glob("*.py"))


@pytest.mark.parametrize("source", EXERCISES, ids=lambda p: p.stem)
def test_every_grade_cell_rejects_the_unsolved_student_notebook(source):
    from nbclient import NotebookClient

    notebook = nbformat.read(student_path(source), as_version=4)
    assert "### BEGIN SOLUTION" not in "".join(c.source for c in notebook.cells)
    NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(student_path(source).parent)}}).execute()
    grades = [c for c in notebook.cells
              if c.cell_type == "code" and "grade_" in c.source and "import" not in c.source]
    assert grades, "an exercise without grade cells"
    for cell in grades:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert errors and errors[0].ename == "GradeFailed", cell.source
        # what the student sees: the one ✗ line, no traceback into the grader, no reference code
        assert len(errors[0].traceback) == 1 and errors[0].traceback[0].startswith("\u2717"), errors[0].traceback
        assert "replace the stub" in errors[0].traceback[0], cell.source
