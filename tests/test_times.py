"""Times a student can plan by: every time the course states (each lesson's first cell, the lesson
tables and totals of README.md and lessons/README.md, the README's sentence on the rule,
site/front.md, the exercise table of exercises/README.md, each solution's first cell) is what
one rule, tools/reading_time.py, computes on the stored notebooks. Files are only read, so this
takes a second. After a rebuild or a prose edit:

    python tools/reading_time.py --write     # then copy edited first cells: tools/notebooks.py prose
"""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import reading_time  # noqa: E402

LESSONS, EXERCISES = reading_time.lessons(), reading_time.exercises()
STATEMENTS = reading_time.statements(LESSONS, EXERCISES)


def test_there_is_a_lesson_and_an_exercise_to_time():
    assert len(LESSONS) == 15 and len(EXERCISES) == 14, ([t.name for t in LESSONS], [t.name for t in EXERCISES])


@pytest.mark.parametrize("statement", STATEMENTS,
                         ids=[f"{s.path.relative_to(ROOT)}: {s.what}" for s in STATEMENTS])
def test_a_stated_time_follows_the_rule(statement):
    problem = statement.problem()
    assert problem is None, problem


def test_every_file_that_states_a_time_is_checked():
    checked = {s.path.relative_to(ROOT).as_posix() for s in STATEMENTS}
    wanted = {"README.md", "lessons/README.md", "site/front.md", "exercises/README.md",
              *(f"lessons/src/{t.name}.py" for t in LESSONS), *(f"solutions/src/{t.name}.py" for t in EXERCISES)}
    assert wanted <= checked, sorted(wanted - checked)


def test_the_optional_parts_are_the_ones_a_first_pass_may_skip():
    """Lesson 5's simplex section and lesson 12's appendices are timed apart, nothing else."""
    optional = {t.name: t.optional_heading for t in LESSONS if t.optional.minutes()}
    assert set(optional) == {"05_entropy_invariance", "12_distraction"}, optional
    assert optional["05_entropy_invariance"].startswith("## Optional")
    assert optional["12_distraction"].startswith("## Appendix")


def test_the_rule_counts_what_it_says(tmp_path):
    """A made-up notebook: 264 words on the main path (its headings and the image's alt text
    included, as tests/test_reading.py counts them) and 130 in one answer (about 3 minutes), one
    question (1), a figure and a markdown image (1), a printed table of 3 lines (0.5), a two-line
    print and a stderr progress bar (0), a folded block (not counted): 5.5 minutes, rounded to 5;
    an optional section between them, timed apart: 1300 words, 10 minutes."""
    import nbformat

    words = lambda n: " ".join(["word"] * n)  # noqa: E731
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# Lesson\n{words(255)} ![a figure](f.svg)\n"
                                      f"<details><summary>Answer</summary>\n{words(130)}\n</details>\n"
                                      f"<details><summary>How we check it</summary>\n{words(500)}\n</details>"),
        nbformat.v4.new_code_cell("x", outputs=[
            nbformat.v4.new_output("display_data", data={"image/png": "", "text/plain": "<Figure>"}),
            nbformat.v4.new_output("stream", name="stdout", text="a\nb\nc\n"),
            nbformat.v4.new_output("stream", name="stdout", text="a\nb\n"),
            nbformat.v4.new_output("stream", name="stderr", text="1\n2\n3\n4\n")]),
        nbformat.v4.new_markdown_cell(f"## Optional: more\n{words(1297)}\n## Takeaways\nthree words here"),
    ]
    path = tmp_path / "99_made_up.ipynb"
    nbformat.write(nb, path)
    timing = reading_time.timing(path)
    main, optional = timing.main, timing.optional
    assert (main.words, main.answer_words, main.questions, main.figures, main.tables) == (264, 130, 1, 2, 1)
    assert main.folded_words == 500
    assert main.raw_minutes() == pytest.approx(394 / 130 + 1 + 1 + 0.5)
    assert main.minutes() == 5
    assert (optional.words, optional.minutes()) == (1300, 10)
    assert timing.optional_heading == "## Optional: more"
