"""Lesson 14's replication scoreboard and its decision table quote numbers that other lessons
print: each quoted number is read here from the stored outputs of the lesson that printed it, and
must stand in the row for its claim. A lesson rebuilt with new numbers and a table left as it was
fail here; so does a verdict count in the summary that no longer matches the table (the sources'
claims, the simulation and the course's own finding each counted apart), and a "Not at our size"
list that names other rows than the table's "not at this size" verdicts."""

import re
from collections import Counter
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
ANSWER = ROOT / "lessons" / "src" / "14_the_answer.py"
COLUMN = r"\s+\S+ \(\S+\)"          # one length's column of lessons 7 and 11: mean (seed/seed)
INTERVAL = r"\S+ \[\S+ \S+\s+"      # one length's column of lesson 13's: mean [low, high]
SCOREBOARD = ("## The replication scoreboard", "## Takeaways")
DECISION = ("## If you have a model to extend", "## The replication scoreboard")
NAME = {SCOREBOARD: "scoreboard", DECISION: "decision table"}

# words of rows, and parts of patterns, named so that each entry below fits on a line
ENTROPY, DISTRACTION = "entropy invariance helps", "failure goes with attention distraction"
HEADS, TEMPERATURE = "head scaling beats uniform", "a temperature restores it"
GAIN = r"accuracy gain \(points\) \{64: \S+ 128: (\S+),"    # lesson 5, at 2L
L_2L = r"loss over L\.\.2L [^\n]*"                         # lesson 6
HEADS_2L = r"minus the best uniform lambda: 2L "              # lesson 10
HEADS_4L = r"minus the best uniform lambda: [^\n]*;  4L "
UNIFORM = rf"NoPE, best uniform lambda(?:{COLUMN}){{3}}\s+"   # lesson 11, at 8L
PLAIN = rf"\nNoPE(?:{COLUMN}){{3}}\s+"

# lesson notebook -> (words of the scoreboard row, pattern whose group 1 is the number quoted)
QUOTED = {
    "05_entropy_invariance": [
        (ENTROPY, r"seed 0: [^\n]*" + GAIN),
        (ENTROPY, r"seed 1: [^\n]*" + GAIN),
    ],
    "06_nope": [
        ("NoPE extends further", r"seed 0: " + L_2L + r"RoPE \+(\d\.\d\d)"),
        ("NoPE extends further", r"seed 1: " + L_2L + r"RoPE \+(\d\.\d\d)"),
        ("NoPE extends further", r"seed 0: " + L_2L + r"NoPE \+(\d\.\d\d)"),
        ("NoPE extends further", r"seed 1: " + L_2L + r"NoPE \+(\d\.\d\d)"),
        (DISTRACTION, r"uniform attention: entropy rise [^\n]*\+(\d\.\d\d)"),
        (DISTRACTION, r"NoPE seed 0: entropy rise [^\n]*mean \+(\d\.\d\d)"),
        (DISTRACTION, r"NoPE seed 1: entropy rise [^\n]*mean \+(\d\.\d\d)"),
        (DISTRACTION, r"NoPE seed 0: [^\n]*entropy (\d\.\d\d), log"),
        (DISTRACTION, r"NoPE seed 1: [^\n]*entropy (\d\.\d\d), log"),
        (DISTRACTION, r"NoPE seed 0: [^\n]*log\(position\) (\d\.\d\d)"),
        (DISTRACTION, r"NoPE seed 1: [^\n]*log\(position\) (\d\.\d\d)"),
    ],
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
    "10_why_it_works": [
        (HEADS, HEADS_2L + r"(\S+)"),
        (HEADS, HEADS_2L + r"\S+ \[(\S+),"),
        (HEADS, HEADS_2L + r"\S+ \[\S+ (\S+)\]"),
        (HEADS, HEADS_4L + r"(\S+)"),
        (HEADS, HEADS_4L + r"\S+ \[(\S+),"),
        (HEADS, HEADS_4L + r"\S+ \[\S+ (\S+)\]"),
    ],
    "11_retrieval": [
        (TEMPERATURE, PLAIN + r"(\d\.\d\d)"),
        (TEMPERATURE, PLAIN + r"\S+ \((\d\.\d\d)/"),
        (TEMPERATURE, PLAIN + r"\S+ \(\S+/(\d\.\d\d)\)"),
        (TEMPERATURE, UNIFORM + r"(\d\.\d\d)"),
        (TEMPERATURE, UNIFORM + r"\S+ \((\d\.\d\d)/"),
        (TEMPERATURE, UNIFORM + r"\S+ \(\S+/(\d\.\d\d)\)"),
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
# the same, for the decision table's "what to expect" list
DECISION_QUOTED = {
    "07_temperature": [
        ("softmax, RoPE", rf"RoPE YARN zero-shot(?:{COLUMN}){{2}}\s+(\d\.\d{{3}})"),
        ("softmax, RoPE", rf"\nRoPE(?:{COLUMN}){{2}}\s+(\d\.\d{{3}})"),
        ("softmax, RoPE", rf"RoPE YARN fine-tuned at 4L(?:{COLUMN}){{2}}\s+(\d\.\d{{3}})"),
    ],
    "09_fix_isolated": [("softmax, NoPE", r"8L   nope (\d\.\d\d)")],
    "10_why_it_works": [
        ("softmax, NoPE", r"head scaling \(trained at 4L\)\s+4L  (\d\.\d\d)"),
        ("softmax, NoPE", r"best uniform lambda\s+4L  (\d\.\d\d)"),
    ],
    "11_retrieval": [
        ("softmax, RoPE", rf"RoPE, YaRN zero-shot(?:{COLUMN}){{2}}\s+(\d\.\d\d)"),
        ("softmax, RoPE", rf"\nRoPE(?:{COLUMN}){{2}}\s+(\d\.\d\d)"),
    ],
    "14_the_answer": [   # its own sweep of retrieval in text, lesson 11's task
        ("still to be pretrained", r"\nhybrid\s+(?:\S+ \(\S+\)\s+){4}(\d\.\d\d)"),
        ("still to be pretrained", r"\nNoPE \+ log_L n\s+(?:\S+ \(\S+\)\s+){4}(\d\.\d\d)"),
    ],
    "13_design_that_holds": [
        ("still to be pretrained", rf"\nhybrid\s+(?:{INTERVAL}){{4}}(\d\.\d\d)"),
        ("still to be pretrained", rf"\nhybrid \+ log_L n\s+(?:{INTERVAL}){{4}}(\d\.\d\d)"),
    ],
}
# (section, lesson notebook, words of the row, pattern found at every seed and length):
# quoted as min-max%
TAKEN_BACK = r"taken back best lambda (?:\(\S+\) )?(\d+)%"
RANGES = [(SCOREBOARD, "13_design_that_holds", "does not fix all of NoPE", TAKEN_BACK),
          (DECISION, "13_design_that_holds", "softmax, NoPE", TAKEN_BACK)]
CASES = ([(SCOREBOARD, lesson, words, pattern)
          for lesson, quoted in QUOTED.items() for words, pattern in quoted]
         + [(DECISION, lesson, words, pattern)
            for lesson, quoted in DECISION_QUOTED.items() for words, pattern in quoted])
VERDICTS = ("reproduced", "partly", "not at this size")
NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
# rows counted apart from the sources' claims: (name, plural, how a row is known)
APART = [("simulation", "simulations", lambda cells: "(a simulation)" in cells[-1]),
         ("finding of the course's own", "findings of the course's own",
          lambda cells: "the course's finding" in cells[1]),
         ("design after the sources", "designs after the sources", lambda cells: cells[0] == "15")]


def stored_output(lesson: str) -> str:
    notebook = nbformat.read(ROOT / "lessons" / f"{lesson}.ipynb", as_version=4)
    return "\n".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                     for output in cell.get("outputs", []) if output.get("output_type") == "stream")


def section(where: tuple[str, str]) -> str:
    text = ANSWER.read_text(encoding="utf-8")
    return text[text.index(where[0]):text.index(where[1])]


def table_rows(where: tuple[str, str]) -> list[str]:
    """The scoreboard's rows; for the decision table, its folded "what to expect" list, one
    bullet per row of the table, named by the row's first cell."""
    if where == DECISION:
        return re.findall(r"- \*\*.*?(?= - \*\*| </details>)", prose(where))
    return [line for line in section(where).splitlines()
            if line.startswith("# | ") and not line.startswith("# | lesson")]


def cells(row: str) -> list[str]:
    inner = row.removeprefix("# |").rstrip().removesuffix("|")
    return [cell.strip() for cell in inner.split(" | ")]


def verdict(row: str) -> str:
    text = cells(row)[-1]
    matches = [v for v in VERDICTS if text.startswith(v)]
    assert len(matches) == 1, f"a verdict must start with one of {VERDICTS}; got {text!r}"
    return matches[0]


def prose(where: tuple[str, str]) -> str:
    """The section's markdown as running text: line breaks and comment marks removed."""
    return re.sub(r"\s*\n#\s*", " ", section(where))


@pytest.mark.parametrize("where, lesson, row_words, pattern", CASES,
                         ids=[f"{NAME[where]}, {lesson}: {pattern[:30]}"
                              for where, lesson, _, pattern in CASES])
def test_each_quoted_number_is_the_stored_one(where, lesson, row_words, pattern):
    found = re.search(pattern, "\n" + stored_output(lesson))
    assert found, f"lessons/{lesson}.ipynb no longer prints what {pattern!r} reads"
    rows = [row for row in table_rows(where) if row_words in row]
    assert len(rows) == 1, (
        f"one row of the {NAME[where]} must hold {row_words!r}; found {len(rows)}")
    assert re.search(rf"(?<![\d.]){re.escape(found.group(1))}(?![\d])", rows[0]), (
        f"lessons/{lesson}.ipynb prints {found.group(1)}, "
        f"which the {NAME[where]} row {row_words!r} does not quote")


@pytest.mark.parametrize("where, lesson, row_words, pattern", RANGES,
                         ids=[f"{NAME[where]}: {words}" for where, _, words, _ in RANGES])
def test_each_quoted_range_spans_the_stored_numbers(where, lesson, row_words, pattern):
    numbers = [int(n) for n in re.findall(pattern, stored_output(lesson))]
    assert numbers, f"lessons/{lesson}.ipynb no longer prints what {pattern!r} reads"
    quoted = f"{min(numbers)}-{max(numbers)}%"
    rows = [row for row in table_rows(where) if row_words in row]
    assert len(rows) == 1 and quoted in rows[0], (
        f"lessons/{lesson}.ipynb prints {quoted}, "
        f"which the {NAME[where]} row {row_words!r} must quote")


def test_the_summary_counts_the_verdicts_of_the_table():
    sources, apart = Counter(), {name: [] for name, _, _ in APART}
    for row in table_rows(SCOREBOARD):
        groups = [name for name, _, belongs in APART if belongs(cells(row))]
        assert len(groups) <= 1, f"a row counted apart twice: {row[:80]!r}"
        if groups:
            apart[groups[0]].append(verdict(row))
        else:
            sources[verdict(row)] += 1
    groups = [f"{NUMBER_WORDS[len(found)]} {name if len(found) == 1 else plural} ({', '.join(found)})"
              for (name, plural, _), found in zip(APART, apart.values())]
    extras = ", ".join(groups[:-1]) + " and " + groups[-1]
    summary = (f"Of the {sum(sources.values())} claims of the sources: "
               f"**{sources['reproduced']} reproduced, {sources['partly']} partly, "
               f"{sources['not at this size']} not at this size**; plus {extras}")
    assert summary in prose(SCOREBOARD), f"the scoreboard's summary must read {summary}"


def test_not_at_our_size_names_the_rows_of_that_verdict():
    listed = re.search(r"Not at our size:(.*?)\.(?:\s|$)", prose(SCOREBOARD))
    assert listed, "the summary must list what did not reproduce after 'Not at our size:'"
    named = sorted(re.findall(r"\(\[?lessons? ([\d, ]+)\]?(?:\([^)]*\))?\)", listed.group(1)))
    rows = sorted(cells(row)[0] for row in table_rows(SCOREBOARD)   # the sources' claims only
                  if verdict(row) == "not at this size"
                  and not any(belongs(cells(row)) for _, _, belongs in APART))
    assert named == rows, (
        f"'Not at our size' names the rows of lessons {named}; the table's 'not at this size' "
        f"rows are those of lessons {rows} (each named once, with its lesson in brackets)")
