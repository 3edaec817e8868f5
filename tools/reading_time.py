"""How long the course takes, by one rule, counted on the stored notebooks.

The rule (a lesson). Its reading time in minutes is

    (words on its main path + words of its answers) / 130
    + 1 per question + 0.5 per figure + 0.5 per printed table,

rounded to the nearest 5 minutes (halves up, at least 5), where

- the *main path* is its markdown outside folded `<details>` blocks, its words split on white
  space as tests/test_reading.py counts them;
- an *answer* is a `<details><summary>Answer</summary>` block, and each is one *question*;
- a *figure* is a code cell's output holding image/png or image/svg+xml, or a markdown image
  `![...](...)` on the main path or in an answer;
- a *printed table* is any other code cell output, printed (stdout) or a result's text/plain, of
  3 or more non-empty lines (stderr, progress bars and warnings, is not counted).

The other folded blocks ("How we check it", "Our numbers next to the paper's", ...) are a second
reading and are left out of a lesson's time; the course total says what reading them adds, by
the same rule (their words / 130, half a minute per image in them). One student who read every
lesson with all of its folded blocks took about 6.5 hours; the rule gives about as much for that
reading (the main paths and answers plus every folded block).

A section whose `## ` heading starts with "Optional" or "Appendix" (lesson 5's simplex section,
lesson 12's appendices), up to the next `#`/`##` heading, is timed apart by the same rule: a
first pass may skip it. The lesson's first cell says "**Time.** About N minutes to read; ..."
for the rest and "Optional section: M minutes more." (lesson 12: "Optional appendices: ...").

The rule (an exercise), an estimate: the same reading rule over the exercise's markdown, plus
5 minutes per task (a `## Task` heading) to write, run and grade one small function; its
"Going further" part (from a `## Going further` heading or a paragraph starting
"**Going further", to the next heading) is timed apart, as reading only (doing its questions
takes longer). Five minutes a task makes the thirteen exercises, going further included, about
the 3 hours the same student took.

Course totals are sums of the rounded times, in hours to the nearest half hour.

    python tools/reading_time.py            # the table
    python tools/reading_time.py --write    # and write the times where the course states them

`--write` rewrites every stated time (the list is `statements()`): each lesson's first cell
(lessons/src; then copy it into the stored notebook: `python tools/notebooks.py prose ...`),
each solution's "**Time.**" line (solutions/src, added after the title where missing), the lesson
tables and totals of README.md and lessons/README.md, the README's sentence on the rule,
site/front.md, and the exercise table of exercises/README.md. tests/test_times.py fails while
any of them differs from this rule on the stored notebooks.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
WORDS_PER_MINUTE = 130
PER_QUESTION, PER_FIGURE, PER_TABLE, PER_TASK = 1.0, 0.5, 0.5, 5.0
TABLE_LINES = 3
ROUND_TO = 5

DETAILS = re.compile(r"<details>\s*<summary>(.*?)</summary>(.*?)</details>", re.S)
FOLDED = re.compile(r"<details>.*?</details>", re.S)
IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
HEADING = re.compile(r"^#{1,2} ")
OPTIONAL_LESSON = re.compile(r"^## (Optional|Appendix)")
OPTIONAL_LESSONS = {"15_after_the_answer"}   # after the answer: timed as optional, as a whole
OPTIONAL_EXERCISE = re.compile(r"^(## Going further|\*\*Going further)")
TASK = re.compile(r"^## Task\b", re.M)
FIGURE_TYPES = ("image/png", "image/svg+xml")


@dataclass
class Tally:
    """What one part of a notebook holds, for the rule."""
    words: int = 0          # the main path: markdown outside <details>
    answer_words: int = 0   # inside <details><summary>Answer</summary>
    questions: int = 0
    figures: int = 0
    tables: int = 0
    tasks: int = 0
    folded_words: int = 0   # inside any other <details>: not in the time
    folded_figures: int = 0

    def raw_minutes(self) -> float:
        return ((self.words + self.answer_words) / WORDS_PER_MINUTE + PER_QUESTION * self.questions
                + PER_FIGURE * self.figures + PER_TABLE * self.tables + PER_TASK * self.tasks)

    def minutes(self) -> int:
        return rounded(self.raw_minutes())

    def folded_minutes(self) -> float:
        return self.folded_words / WORDS_PER_MINUTE + PER_FIGURE * self.folded_figures


def rounded(raw: float) -> int:
    """To the nearest 5 minutes (halves up), at least 5; 0 for nothing."""
    if raw <= 0:
        return 0
    return max(ROUND_TO, ROUND_TO * math.floor(raw / ROUND_TO + 0.5))


@dataclass
class Timing:
    name: str                      # "01_gau"
    main: Tally = field(default_factory=Tally)
    optional: Tally = field(default_factory=Tally)
    optional_heading: str = ""     # the first optional heading, "" if none


def count_markdown(text: str, tally: Tally, exercise: bool) -> None:
    outside = FOLDED.sub(" ", text)
    tally.words += len(outside.split())
    tally.figures += len(IMAGE.findall(outside))
    for summary, body in DETAILS.findall(text):
        if summary.strip() == "Answer":
            tally.questions += 1
            tally.answer_words += len(body.split())
            tally.figures += len(IMAGE.findall(body))
        else:
            tally.folded_words += len(body.split())
            tally.folded_figures += len(IMAGE.findall(body))
    if exercise:
        tally.tasks += len(TASK.findall(text))


def count_outputs(cell, tally: Tally) -> None:
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if any(kind in data for kind in FIGURE_TYPES):
            tally.figures += 1
            continue
        if output.output_type == "stream":
            text = output.text if output.name == "stdout" else ""
        else:
            text = data.get("text/plain", "")
        text = "".join(text) if isinstance(text, list) else text
        if sum(1 for line in text.splitlines() if line.strip()) >= TABLE_LINES:
            tally.tables += 1


def chunks(text: str, optional_start: re.Pattern):
    """One cell's markdown cut where a part may change: at each `#`/`##` heading and each line
    that starts an optional part. Yields (that line or None, chunk)."""
    start, lines = None, []
    for line in text.split("\n"):
        if (HEADING.match(line) or optional_start.match(line)) and lines:
            yield start, "\n".join(lines)
            start, lines = None, []
        if HEADING.match(line) or optional_start.match(line):
            start = line
        lines.append(line)
    if lines:
        yield start, "\n".join(lines)


def timing(notebook_path: Path, exercise: bool = False) -> Timing:
    """The rule's tally of a stored notebook: its main path and its optional part."""
    notebook = nbformat.read(notebook_path, as_version=4)
    optional_start = OPTIONAL_EXERCISE if exercise else OPTIONAL_LESSON
    result = Timing(notebook_path.stem)
    part = result.main
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for start, chunk in chunks(cell.source, optional_start):
                if start is not None:
                    if optional_start.match(start):
                        part = result.optional
                        result.optional_heading = result.optional_heading or start
                    else:
                        part = result.main
                count_markdown(chunk, part, exercise)
        elif cell.cell_type == "code":
            count_outputs(cell, part)
    return result


def lessons() -> list[Timing]:
    return [timing(path) for path in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))]


def exercises() -> list[Timing]:
    return [timing(path, exercise=True) for path in sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))]


def hours(minutes: float) -> str:
    """A total in hours, to the nearest half hour: 'about 6.5 hours'."""
    half_hours = max(1, math.floor(minutes / 30 + 0.5))
    value = f"{half_hours // 2}" if half_hours % 2 == 0 else f"{half_hours / 2:.1f}"
    return f"about {value} hour" + ("" if value == "1" else "s")


# ---- what the course states, and where ------------------------------------------------------

@dataclass
class Totals:
    lessons: int        # minutes, main parts
    optional: int       # minutes, the optional parts
    folded: float       # minutes, the folded blocks that are not answers (not rounded)
    exercises: int
    going_further: int
    shortest: int
    longest: int

    @classmethod
    def of(cls, lesson_times: list[Timing], exercise_times: list[Timing]) -> "Totals":
        core = [item for item in lesson_times if item.name not in OPTIONAL_LESSONS]
        mains = [item.main.minutes() for item in core]
        optional = sum(item.optional.minutes() if item in core else item.main.minutes() + item.optional.minutes()
                       for item in lesson_times)
        return cls(sum(mains), optional,
                   sum(item.main.folded_minutes() + item.optional.folded_minutes() for item in lesson_times),
                   sum(item.main.minutes() for item in exercise_times),
                   sum(item.optional.minutes() for item in exercise_times), min(mains), max(mains))


def read_cell(item: Timing) -> str:
    """A lesson table's "to read" column: '25 min', or '25 min + 5 optional'."""
    text = f"{item.main.minutes()} min"
    if item.name in OPTIONAL_LESSONS:
        return text + ", optional"
    if item.optional.minutes():
        text += f" + {item.optional.minutes()} optional"
    return text


def solution_time(item: Timing) -> str:
    text = f"About {item.main.minutes()} minutes"
    if item.optional.minutes():
        text += f"; going further: {item.optional.minutes()} more"
    return text


@dataclass
class Statement:
    """One time the course states: in ``path``, ``pattern``'s group "value" must read ``expected``
    (``expected`` None: the pattern must not occur). ``insert`` says how --write adds it where it
    is missing (None: by hand)."""
    path: Path
    what: str
    pattern: re.Pattern
    expected: str | None
    insert: tuple[re.Pattern, str] | None = None

    def stated(self) -> list[str]:
        """What the file states, white space made single (a stated time may wrap)."""
        return [" ".join(m["value"].split()) for m in self.pattern.finditer(self.path.read_text(encoding="utf-8"))]

    def problem(self) -> str | None:
        """Why what is stated differs from the rule, or None when it agrees."""
        found, where = self.stated(), self.path.relative_to(ROOT)
        if self.expected is None:
            return f"{where}: {self.what} is stated ({found}) but there is none" if found else None
        if found != [self.expected]:
            return (f"{where}: {self.what} should read '{self.expected}' by tools/reading_time.py, "
                    f"found {found or 'nothing'}; run python tools/reading_time.py --write")
        return None


def statements(lesson_times: list[Timing] | None = None,
               exercise_times: list[Timing] | None = None) -> list[Statement]:
    lesson_times = lessons() if lesson_times is None else lesson_times
    exercise_times = exercises() if exercise_times is None else exercise_times
    t = Totals.of(lesson_times, exercise_times)
    readme, lessons_readme = ROOT / "README.md", ROOT / "lessons" / "README.md"
    out = []
    for item in lesson_times:
        source = ROOT / "lessons" / "src" / f"{item.name}.py"
        out.append(Statement(source, "the first cell's time to read", re.compile(
            r"\*\*Time\.\*\* About (?P<value>\d+) minutes to read; "), str(item.main.minutes())))
        out.append(Statement(source, "the first cell's time for the optional part", re.compile(
            r"Optional (?:section|appendices): (?P<value>\d+) minutes more\."),
            str(item.optional.minutes()) if item.optional.minutes() else None))
        number = item.name[:2]
        out.append(Statement(readme, f"lesson {int(number)}'s time to read", re.compile(
            rf"^\| {number} \| \[`{item.name}`\][^|\n]*\|[^|\n]*\| (?P<value>[^|\n]+?) \|", re.M), read_cell(item)))
        out.append(Statement(lessons_readme, f"lesson {int(number)}'s time to read", re.compile(
            rf"^\| `{item.name}` \|[^|\n]*\| (?P<value>[^|\n]+?) \|", re.M), read_cell(item)))
    total = f"{hours(t.lessons)} + {t.optional} min optional"
    out.append(Statement(readme, "the course's time to read", re.compile(
        r"^\| \| \| all fifteen[^|\n]*\| (?P<value>[^|\n]+?) \|", re.M), total))
    out.append(Statement(lessons_readme, "the course's time to read", re.compile(
        r"^\| all \| \| (?P<value>[^|\n]+?) \|", re.M), total))
    out.append(Statement(readme, "what the folded blocks add", re.compile(
        r"Reading\s+every\s+other\s+folded\s+block\s+adds\s+(?P<value>about\s+[\d.]+\s+hours?)"), hours(t.folded)))
    out.append(Statement(readme, "the exercises' time", re.compile(
        r"the\s+exercises\s+take\s+(?P<value>about\s+[\d.]+\s+hours?,\s+going\s+further\s+\d+\s+minutes\s+more)"),
        f"{hours(t.exercises)}, going further {t.going_further} minutes more"))
    front = ROOT / "site" / "front.md"
    in_all = r"\(about\s+[\d.]+\s+hours?\s+in\s+all\)"
    out.append(Statement(front, "the lessons' times", re.compile(
        rf"Fourteen\s+lessons\s+of\s+(?P<value>\d+-\d+\s+minutes'\s+reading\s+each\s+{in_all})"),
        f"{t.shortest}-{t.longest} minutes' reading each ({hours(t.lessons)} in all)"))
    out.append(Statement(front, "the exercises' time", re.compile(
        rf"an\s+exercise\s+for\s+each\s+(?P<value>{in_all})"), f"({hours(t.exercises)} in all)"))
    exercises_readme = ROOT / "exercises" / "README.md"
    for item in exercise_times:
        out.append(Statement(exercises_readme, f"exercise {int(item.name[:2])}'s time", re.compile(
            rf"^\| \[`{item.name}`\]\({item.name}\.ipynb\) \| (?P<value>[^\n]+?) \|$", re.M),
            f"{item.main.tasks} | {item.main.minutes()} min | {item.optional.minutes()} min"))
        out.append(Statement(ROOT / "solutions" / "src" / f"{item.name}.py", "the first cell's time", re.compile(
            r"\*\*Time\.\*\* (?P<value>About \d+ minutes(?:; going further: \d+ more)?)\."), solution_time(item),
            insert=(re.compile(r"\A(# %% \[markdown\][^\n]*\n# # [^\n]*\n)"), r"\1#\n# **Time.** {value}.\n")))
    out.append(Statement(exercises_readme, "the exercises' total", re.compile(
        r"^\| all \| (?P<value>[^\n]+?) \|$", re.M),
        f"{sum(item.main.tasks for item in exercise_times)} | {hours(t.exercises)} | {t.going_further} min"))
    return out


def write(all_statements: list[Statement]) -> list[str]:
    """Write every stated time; returns the files changed."""
    changed = []
    for statement in all_statements:
        text = statement.path.read_text(encoding="utf-8")
        where = statement.path.relative_to(ROOT)
        matches = list(statement.pattern.finditer(text))
        if statement.expected is None:
            if matches:
                raise SystemExit(f"{where}: {statement.what} is stated but there is none; delete it by hand")
            continue
        if not matches and statement.insert:
            where_to, template = statement.insert
            new, found = where_to.subn(template.replace("{value}", statement.expected), text, count=1)
            if not found:
                raise SystemExit(f"{where}: found no place for {statement.what}")
        elif len(matches) != 1:
            raise SystemExit(f"{where}: {statement.what} is stated {len(matches)} times, not once; "
                             f"write it once by hand ('{statement.expected}'), then rerun")
        elif " ".join(matches[0]["value"].split()) == statement.expected:
            continue
        else:
            match = matches[0]
            new = text[:match.start("value")] + statement.expected + text[match.end("value"):]
        if new != text:
            statement.path.write_text(new, encoding="utf-8")
            changed.append(str(where))
    return sorted(set(changed), key=changed.index)


def show(lesson_times: list[Timing], exercise_times: list[Timing]) -> str:
    lines = [f"{'notebook':<24}{'words':>6}{'answers':>8}{'quest':>6}{'figs':>5}{'tables':>7}{'tasks':>6}"
             f"{'raw':>7}{'min':>5}  optional (raw)"]
    for title, items in (("lessons", lesson_times), ("exercises", exercise_times)):
        lines.append(f"-- {title}")
        for item in items:
            m, o = item.main, item.optional
            extra = (f"{o.minutes()} ({o.raw_minutes():.1f}: {o.words}+{o.answer_words} words, {o.questions} q, "
                     f"{o.figures} fig, {o.tables} tab)") if o.minutes() else "-"
            lines.append(f"{item.name:<24}{m.words:>6}{m.answer_words:>8}{m.questions:>6}{m.figures:>5}"
                         f"{m.tables:>7}{m.tasks:>6}{m.raw_minutes():>7.1f}{m.minutes():>5}  {extra}")
    t = Totals.of(lesson_times, exercise_times)
    lines.append(f"lessons: {t.lessons} min ({hours(t.lessons)}), {t.shortest}-{t.longest} each; optional parts "
                 f"{t.optional} min more; the other folded blocks {t.folded:.0f} min more ({hours(t.folded)})")
    lines.append(f"exercises: {t.exercises} min ({hours(t.exercises)}); going further {t.going_further} min more")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="write the times where the course states them")
    args = parser.parse_args(argv)
    lesson_times, exercise_times = lessons(), exercises()
    print(show(lesson_times, exercise_times))
    if args.write:
        changed = write(statements(lesson_times, exercise_times))
        print("changed: " + (", ".join(changed) if changed else "nothing"))
    problems = [p for p in map(Statement.problem, statements(lesson_times, exercise_times)) if p]
    if problems:
        print("\n".join(["", "stated times that differ from the rule:", *problems]))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
