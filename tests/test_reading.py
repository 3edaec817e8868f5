"""The course fits the day a student gives it: each lesson's main path (its markdown outside
folded `<details>` blocks) is at most 1,600 words, the core lessons (1-14) together at most 15,000
(lesson 15, after the answer, is optional and counted apart), and each
lesson opens by saying its model and length, how long it takes to read and to run, and which
failure or fix it is about. Only the sources are read, so this takes a second.

    python -m pytest tests/test_reading.py -q -s     # -s also prints each lesson's count
"""

import re
from pathlib import Path

import jupytext
import pytest
from reading_time import OPTIONAL_LESSONS  # tools/ is on the path (conftest.py)

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons" / "src").glob("[0-9][0-9]_*.py"))
PER_LESSON, COURSE = 1600, 15000
FOLDED = re.compile(r"<details>.*?</details>", re.S)
OPENING = ("**Model and length.**", "**Time.**", "**Which failure, which fix.**")
TIME = re.compile(r"\*\*Time\.\*\* About \d+ minutes to read; ")


def markdown_cells(source: Path) -> list[str]:
    notebook = jupytext.reads(source.read_text(encoding="utf-8"), fmt="py:percent")
    return [cell.source for cell in notebook.cells if cell.cell_type == "markdown"]


def main_path_words(source: Path) -> int:
    return sum(len(FOLDED.sub(" ", text).split()) for text in markdown_cells(source))


@pytest.mark.parametrize("source", LESSONS, ids=[s.stem for s in LESSONS])
def test_a_lesson_reads_in_about_twenty_minutes(source):
    words = main_path_words(source)
    print(f"{source.stem}: {words} words on the main path")
    assert words <= PER_LESSON, f"{source.stem}: {words} words outside folded blocks (most {PER_LESSON})"


def test_the_course_reads_in_a_day():
    words = sum(main_path_words(source) for source in LESSONS if source.stem not in OPTIONAL_LESSONS)
    assert words <= COURSE, f"lessons 1-14 hold {words} words outside folded blocks (most {COURSE})"


@pytest.mark.parametrize("source", LESSONS, ids=[s.stem for s in LESSONS])
def test_a_lesson_opens_with_its_model_time_and_failure(source):
    first = markdown_cells(source)[0]
    missing = [part for part in OPENING if part not in first]
    assert not missing, f"{source.stem}: its first cell lacks {missing}"
    assert TIME.search(first), f"{source.stem}: '**Time.** About N minutes to read; ...' expected"


@pytest.mark.parametrize("source", LESSONS, ids=[s.stem for s in LESSONS])
def test_a_lesson_opens_with_links_on_and_links_the_lessons_it_cites(source):
    """The first cell links to the notation, the sources and the lesson's exercise (where it has
    one); every other lesson named as "lesson N" outside folded blocks is linked somewhere."""
    cells = markdown_cells(source)
    wanted = ["(README.md#notation)", "(README.md#sources)"]
    if (ROOT / "exercises" / f"{source.stem}.ipynb").exists():
        wanted.append(f"(../exercises/{source.stem}.ipynb)")
    missing = [link for link in wanted if link not in cells[0]]
    assert not missing, f"{source.stem}: its first cell does not link {missing}"
    text = FOLDED.sub(" ", "\n".join(cells))
    own = int(source.name[:2])
    cited = {int(n) for n in re.findall(r"\b[Ll]esson (\d{1,2})\b(?!\]?\()", text)} - {own}
    linked = {int(n) for n in re.findall(r"\]\((\d\d)_\w+\.ipynb", text)}
    unlinked = sorted(n for n in cited - linked if n <= len(LESSONS))
    assert not unlinked, f"{source.stem}: lessons {unlinked} are cited but never linked"


def test_the_lessons_readme_holds_the_pages_the_lessons_link():
    sections = re.findall(r"^## (\w+)", (ROOT / "lessons" / "README.md").read_text(), re.M)
    assert "Notation" in sections and "Sources" in sections, sections
