"""A number one lesson quotes from another is that lesson's stored output. Every markdown line
of a lesson or an exercise solution that names another lesson ("lesson 9", or a link to it) is
read; each decimal number on it must be printed by the outputs of the lesson that quotes it or of
a lesson it names. The numbers that are not quotes (a source's own number, cited beside it, or
arithmetic on printed numbers) are listed below, each with its reason. A lesson rebuilt with new
numbers while a quote of it keeps the old ones fails here; so does a new quote no output prints.
Its limit: a stale quote that happens to equal another number those lessons print (two decimals
in [0, 1] often do) passes; tests/test_scoreboard.py checks lesson 14's tables cell by cell, and
tools/prose_numbers.py lists every number for a reader after a rebuild."""

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from prose_numbers import NUMBER, outputs_text  # noqa: E402

LESSONS = {path.stem[:2]: path for path in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))}
SOLUTIONS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
CITED = re.compile(r"[Ll]essons? (\d{1,2})\b|\((\d\d)_\w+\.ipynb|[Ll]essons (\d{1,2})(?:-|, | and )(\d{1,2})")
ROW = re.compile(r"^\| ([\d, ]+) \|")   # a table row whose first column names lessons: "| 7, 10 |"

# (quoting notebook, number) -> why no output prints it
NOT_QUOTES = {
    ("lessons/08", "0.005"): "a bound: the largest difference between the printed losses it compares",
    ("lessons/14", "9.5"): "arithmetic: lesson 4's smallest lead of a fix over 'no fix' (its table's rows)",
    ("lessons/14", "0.02"): "a bound on lesson 2's printed differences after fine-tuning",
    ("lessons/14", "0.25"): "lesson 4's asserted margin (under 0.25 nats at L), not a measurement",
    ("lessons/14", "4.6"): "Su's number (his 2021 post), cited in the row",
    ("lessons/14", "11.0"): "Su's number (his 2021 post), cited in the row",
    ("lessons/14", "5.0"): "Su's number (his 2021 post), cited in the row",
    ("lessons/14", "0.035"): "arithmetic: head scaling's loss minus the best uniform lambda's (lesson 7)",
    ("lessons/14", "0.076"): "arithmetic: head scaling's loss minus the best uniform lambda's (lesson 7)",
    ("lessons/14", "0.006"): "arithmetic: the clamp's and the start's largest effect at 4x (lesson 7)",
    ("lessons/14", "0.041"): "arithmetic: the clamp's effect at 8x, seed 1 (lesson 7)",
    ("lessons/14", "0.005"): "a bound: lesson 8's largest difference between rules",
    ("lessons/14", "48.70"): "Su's HWFA number (kexue.fm/archives/9603), cited in the row",
    ("lessons/14", "48.15"): "Su's HWFA number (kexue.fm/archives/9603), cited in the row",
    ("lessons/14", "49.41"): "Su's HWFA number (kexue.fm/archives/9603), cited in the row",
    ("lessons/14", "23.16"): "Su's HWFA number (kexue.fm/archives/9603), cited in the row",
    ("lessons/14", "1.30"): "arithmetic: YaRN's factor (0.1 ln 4 + 1)^2, worked in the line",
    ("lessons/14", "5.40"): "StreamingLLM's number (Xiao et al., Table 1), cited in lesson 15's row",
    ("lessons/14", "46.7"): "Qiu et al.'s number (Fig. 2), cited in lesson 15's row",
    ("lessons/14", "4.8"): "Qiu et al.'s number (Fig. 2), cited in lesson 15's row",
    ("lessons/14", "3.247"): "Anson et al.'s number (Table 1), cited in lesson 15's row",
    ("lessons/14", "3.317"): "Anson et al.'s number (Table 1), cited in lesson 15's row",
}


def quotes(path: Path):
    """(number, the lessons its line names, the line) of every markdown line naming another lesson."""
    notebook = nbformat.read(path, as_version=4)
    own = path.stem[:2] if path.parent.name == "lessons" else None
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            named = {f"{int(n):02d}" for match in CITED.finditer(line) for n in match.groups() if n}
            row = ROW.match(line)
            named |= {f"{int(n):02d}" for n in row.group(1).split(",")} if row else set()
            named -= {own}
            for match in NUMBER.finditer(line) if named else ():
                yield match.group().lstrip("-"), sorted(named), line.strip()


def values(text: str) -> list[float]:
    """Every decimal number an output prints, without its sign."""
    return [abs(float(match.group())) for match in NUMBER.finditer(text)]


def printed(quote: str, numbers: list[float]) -> bool:
    """``quote`` is one of ``numbers`` as printed or rounded to the quote's decimals (2.85 quotes
    2.846 and 2.850; not 2.84)."""
    half = 0.5 * 10 ** -len(quote.split(".")[1]) + 1e-9
    return any(abs(value - float(quote)) <= half for value in numbers)


OUTPUTS = {number: values(outputs_text(nbformat.read(path, as_version=4)))
           for number, path in LESSONS.items()}
QUOTING = list(LESSONS.values()) + SOLUTIONS


@pytest.mark.parametrize("path", QUOTING, ids=[f"{p.parent.name}/{p.stem}" for p in QUOTING])
def test_every_number_quoted_from_another_lesson_is_its_output(path):
    own = values(outputs_text(nbformat.read(path, as_version=4)))
    name = f"{path.parent.name}/{path.stem[:2]}"
    stale = [(value, named, line[:100]) for value, named, line in quotes(path)
             if not printed(value, own) and not any(printed(value, OUTPUTS.get(n, [])) for n in named)
             and (name, value) not in NOT_QUOTES]
    assert not stale, (f"{path.name} quotes numbers that neither it nor the lessons named print: "
                       + "; ".join(f"{v} (lessons {', '.join(n)}): {line}" for v, n, line in stale))


def test_each_listed_exception_still_stands_in_its_notebook():
    """An exception whose number left the notebook (or is now printed) is dropped from the list."""
    found = {(f"{p.parent.name}/{p.stem[:2]}", value) for p in QUOTING for value, _, _ in quotes(p)}
    gone = sorted(set(NOT_QUOTES) - found)
    assert not gone, f"listed as not quotes, but no longer quoted there: {gone}"
