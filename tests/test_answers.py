"""Every question of the course has its answer, folded under it, and every lesson its takeaways.

Each lesson source (lessons/src/NN_*.py) ends with "## Check your understanding": a numbered
list whose every item must be followed, before the next item, by a folded answer
(`<details><summary>Answer</summary>` ... `</details>`, which JupyterLab renders closed).
Before the questions, "## Takeaways" holds exactly three plain bullets. Each exercise's
"Going further" prompts (solutions/src/NN_*.py) have a folded answer too, under each prompt.

Only the sources are read (no notebook runs), so this test takes a second.
"""

import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons" / "src").glob("[0-9][0-9]_*.py"))
SOLUTIONS = sorted((ROOT / "solutions" / "src").glob("[0-9][0-9]_*.py"))

OPEN = "<details><summary>Answer</summary>"
CLOSE = "</details>"
QUESTION = re.compile(r"^(\d+)\. ", re.M)
BULLET = re.compile(r"^- ", re.M)


def markdown(text: str) -> str:
    """The markdown cells of a jupytext percent script, joined."""
    notebook = jupytext.reads(text, fmt="py:percent")
    return "\n\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")


def folded_answer_problems(segment: str) -> list[str]:
    """What is wrong with the folded answer in one question's text (empty when it is fine)."""
    problems = []
    if segment.count(OPEN) != 1 or segment.count(CLOSE) != 1:
        return [f"{segment.count(OPEN)} answer blocks ({segment.count(CLOSE)} closed), not one"]
    lines = [line.strip() for line in segment.splitlines()]
    opening = next(i for i, line in enumerate(lines) if line.startswith(OPEN))
    closing = next(i for i, line in enumerate(lines) if line == CLOSE)
    body = [line for line in lines[opening + 1:closing] if line]
    if closing < opening or not body:
        problems.append("the answer block is empty or closes before it opens")
    elif lines[opening + 1] or lines[closing - 1]:
        problems.append("no blank line after <summary> or before </details> (its markdown would not render)")
    return problems


def question_problems(text: str) -> list[str]:
    """Every numbered question under "## Check your understanding" without its own answer."""
    md = markdown(text)
    if "## Check your understanding" not in md:
        return ["no '## Check your understanding'"]
    section = md.split("## Check your understanding", 1)[1]
    starts = list(QUESTION.finditer(section))
    if not starts:
        return ["no numbered question"]
    numbers = [int(m[1]) for m in starts]
    problems = [] if numbers == list(range(1, len(numbers) + 1)) else [f"questions numbered {numbers}"]
    for k, match in enumerate(starts):
        end = starts[k + 1].start() if k + 1 < len(starts) else len(section)
        problems += [f"question {match[1]}: {p}" for p in folded_answer_problems(section[match.start():end])]
    return problems


def takeaway_problems(text: str) -> list[str]:
    md = markdown(text)
    if "## Takeaways" not in md:
        return ["no '## Takeaways'"]
    if md.index("## Takeaways") > md.index("## Check your understanding"):
        return ["'## Takeaways' comes after the questions"]
    section = md.split("## Takeaways", 1)[1].split("\n## ", 1)[0]
    bullets = BULLET.findall(section)
    problems = [] if len(bullets) == 3 else [f"{len(bullets)} takeaway bullets, not 3"]
    stray = [line for line in section.splitlines() if line.strip() and not line.startswith(("- ", "  "))]
    return problems + [f"a takeaway line that is not a bullet: {line!r}" for line in stray]


def going_further_problems(text: str) -> list[str]:
    """Each "Going further" prompt of an exercise (a paragraph, or each of its bullets) answered."""
    cells = [cell.source for cell in jupytext.reads(text, fmt="py:percent").cells
             if cell.cell_type == "markdown" and "Going further" in cell.source]
    problems = []
    for cell in cells:
        after = cell.split("Going further", 1)[1]
        prompts = list(BULLET.finditer(after))
        if not prompts:
            problems += [f"the prompt: {p}" for p in folded_answer_problems(after)]
        for k, match in enumerate(prompts):
            end = prompts[k + 1].start() if k + 1 < len(prompts) else len(after)
            problems += [f"prompt {k + 1}: {p}" for p in folded_answer_problems(after[match.start():end])]
    return problems


@pytest.mark.parametrize("source", LESSONS, ids=lambda p: p.stem)
def test_every_question_has_a_folded_answer(source):
    assert not question_problems(source.read_text()), question_problems(source.read_text())


@pytest.mark.parametrize("source", LESSONS, ids=lambda p: p.stem)
def test_three_takeaways_before_the_questions(source):
    assert not takeaway_problems(source.read_text()), takeaway_problems(source.read_text())


@pytest.mark.parametrize("source", [p for p in SOLUTIONS if "Going further" in p.read_text()],
                         ids=lambda p: p.stem)
def test_every_going_further_prompt_has_a_folded_answer(source):
    assert not going_further_problems(source.read_text()), going_further_problems(source.read_text())


def test_the_checks_bite():
    """The controls: the same checks on a lesson with one answer removed, one left open, one
    takeaway more, and on an exercise with its answer removed, each report the problem."""
    lesson = LESSONS[0].read_text()
    assert not question_problems(lesson) and not takeaway_problems(lesson)
    first = lesson.index("#    " + OPEN)
    last = lesson.index("#    " + CLOSE, first) + len("#    " + CLOSE)
    removed = lesson[:first] + "#" + lesson[last:]
    assert any(p.startswith("question 1:") for p in question_problems(removed)), question_problems(removed)
    left_open = lesson.replace("#    " + CLOSE, "#", 1)
    assert any(p.startswith("question 1:") for p in question_problems(left_open))
    extra = lesson.replace("# ## Takeaways\n#\n", "# ## Takeaways\n#\n# - one more\n", 1)
    assert takeaway_problems(extra) == ["4 takeaway bullets, not 3"]
    exercise = SOLUTIONS[0].read_text()
    assert not going_further_problems(exercise)
    assert going_further_problems(exercise.replace(OPEN, "", 1))
