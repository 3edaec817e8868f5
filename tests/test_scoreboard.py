"""Lesson 14's replication scoreboard quotes numbers that other lessons print: each quoted number
is read here from the stored outputs of the lesson that printed it, and must stand in the
scoreboard's row for its claim. A lesson rebuilt with new numbers and a scoreboard left as it was
fail here; so does a verdict count in the summary that no longer matches the table."""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
ANSWER = ROOT / "lessons" / "src" / "14_the_answer.py"
COLUMN = r"\s+\S+ \(\S+\)"          # one length's column of lesson 7's table: mean (seed/seed)
INTERVAL = r"\S+ \[\S+ \S+\s+"      # one length's column of lesson 13's: mean [low, high]

# lesson notebook -> (words of the scoreboard row, pattern whose group 1 is the number quoted)
QUOTED = {
    "07_temperature": [
        ("head-scaled NoPE competes", rf"NoPE \+ head scaling \(trained at 4L\)(?:{COLUMN}){{2}}"
                                      r"\s+(\d\.\d{3})"),
        ("head-scaled NoPE competes", rf"RoPE PI fine-tuned at 4L(?:{COLUMN}){{2}}\s+(\d\.\d{{3}})"),
        ("head-scaled NoPE competes", rf"RoPE YARN fine-tuned at 4L(?:{COLUMN}){{2}}\s+(\d\.\d{{3}})"),
        ("model language without position encoding", r"\nNoPE\s+(\d\.\d{3})"),
        ("model language without position encoding", r"\nRoPE\s+(\d\.\d{3})"),
    ],
    "09_fix_isolated": [
        ("a temperature restores NoPE's retrieval", r"1L   nope (\d\.\d\d)"),
        ("a temperature restores NoPE's retrieval", r"8L   nope (\d\.\d\d)"),
    ],
    "13_design_that_holds": [
        ("hold past $L$", r"\nhybrid\s+(\d\.\d{3})"),
        ("hold past $L$", r"\nhybrid\s+(?:\d\.\d{3}\s+){4}(\d\.\d{3})"),
        ("hold past $L$", rf"\nhybrid\s+(?:{INTERVAL}){{4}}(\d\.\d\d)"),
        ("hold past $L$", rf"\nhybrid \+ log_L n\s+(?:{INTERVAL}){{4}}(\d\.\d\d)"),
        ("hold past $L$", rf"\nNoPE \+ log_L n\s+(?:{INTERVAL}){{4}}(\d\.\d\d)"),
        ("does not fix all of NoPE", r"largest drift, each seed: NoPE (\d\.\d\d)"),
        ("does not fix all of NoPE", r"largest drift, each seed: NoPE \S+ / (\d\.\d\d)"),
        ("does not fix all of NoPE", r"\| hybrid (\d\.\d\d)"),
        ("does not fix all of NoPE", r"\| hybrid \S+ / (\d\.\d\d)"),
    ],
}
# (lesson notebook, words of the row, pattern found at every seed and length): quoted as min-max%
RANGES = [("13_design_that_holds", "does not fix all of NoPE", r"taken back best lambda (\d+)%")]
CASES = [(lesson, words, pattern) for lesson, quoted in QUOTED.items() for words, pattern in quoted]
VERDICTS = ("reproduced", "partly", "not at this size")


def stored_output(lesson: str) -> str:
    notebook = nbformat.read(ROOT / "lessons" / f"{lesson}.ipynb", as_version=4)
    return "\n".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                     for output in cell.get("outputs", []) if output.get("output_type") == "stream")


def scoreboard_rows() -> list[str]:
    text = ANSWER.read_text(encoding="utf-8")
    table = text[text.index("## The replication scoreboard"):text.index("## Takeaways")]
    return [line for line in table.splitlines()
            if line.startswith("# | ") and not line.startswith("# | lesson")]


@pytest.mark.parametrize("lesson, row_words, pattern", CASES,
                         ids=[f"{lesson}: {pattern[:30]}" for lesson, _, pattern in CASES])
def test_each_quoted_number_is_the_stored_one(lesson, row_words, pattern):
    found = re.search(pattern, "\n" + stored_output(lesson))
    assert found, f"lessons/{lesson}.ipynb no longer prints what {pattern!r} reads"
    rows = [row for row in scoreboard_rows() if row_words in row]
    assert len(rows) == 1, f"one scoreboard row must hold {row_words!r}; found {len(rows)}"
    assert re.search(rf"(?<![\d.]){re.escape(found.group(1))}(?![\d])", rows[0]), (
        f"lessons/{lesson}.ipynb prints {found.group(1)}, "
        f"which the scoreboard row {row_words!r} does not quote")


@pytest.mark.parametrize("lesson, row_words, pattern", RANGES)
def test_each_quoted_range_spans_the_stored_numbers(lesson, row_words, pattern):
    numbers = [int(n) for n in re.findall(pattern, stored_output(lesson))]
    assert numbers, f"lessons/{lesson}.ipynb no longer prints what {pattern!r} reads"
    quoted = f"{min(numbers)}-{max(numbers)}%"
    rows = [row for row in scoreboard_rows() if row_words in row]
    assert len(rows) == 1 and quoted in rows[0], (
        f"lessons/{lesson}.ipynb prints {quoted}, which the scoreboard row {row_words!r} must quote")


def test_the_summary_counts_the_verdicts_of_the_table():
    counts = {verdict: 0 for verdict in VERDICTS}
    for row in scoreboard_rows():
        verdict = row.rstrip(" |").rsplit("|", 1)[1].strip()
        matches = [v for v in VERDICTS if verdict.startswith(v)]
        assert len(matches) == 1, f"a verdict must start with one of {VERDICTS}; got {verdict!r}"
        counts[matches[0]] += 1
    summary = (f"**{counts['reproduced']} reproduced, {counts['partly']} partly, "
               f"{counts['not at this size']} not at this size** (of {sum(counts.values())})")
    assert summary in ANSWER.read_text(encoding="utf-8"), (
        f"the scoreboard's summary must read {summary}")
