"""Every decimal number a lesson's markdown quotes, and whether a stored output prints it.

    python tools/prose_numbers.py                 # every lesson: the numbers no output prints
    python tools/prose_numbers.py 13 14 --all     # lessons 13 and 14, every number, found or not

A number in the prose is found when the same digits appear in an output of that lesson or of
any other stored lesson (a quote from lesson 9 in lesson 13 is found in lesson 9's outputs),
as printed: "0.13" matches "0.13" and "0.130", not "0.131". What it cannot find is either a
number of a source (a paper's, with its citation beside it), arithmetic on outputs (a ratio,
a difference), or a number the last rebuild changed: after a rebuild, read the list.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d+(?![\w.]*\d)")   # decimals only: 0.13, 3.27, 1.5


def outputs_text(notebook) -> str:
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if "text" in output:
                parts.append(output["text"])
            parts.append(output.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def printed(number: str, text: str) -> bool:
    """``number`` as printed in ``text``, or with trailing zeros ("0.13" in "0.130")."""
    return re.search(rf"(?<![\d.]){re.escape(number)}0*(?!\d)", text) is not None


def prose_numbers(notebook) -> list[tuple[str, str]]:
    """(number, the line it stands in) of every markdown cell."""
    found = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                found += [(match.group().lstrip("-"), line.strip()) for match in NUMBER.finditer(line)]
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lessons", nargs="*", help="lesson numbers (default: every lesson)")
    parser.add_argument("--all", action="store_true", help="list found numbers too")
    args = parser.parse_args(argv)
    paths = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
    notebooks = {path.stem[:2]: nbformat.read(path, as_version=4) for path in paths}
    everything = "\n".join(map(outputs_text, notebooks.values()))
    missing = 0
    for number, notebook in notebooks.items():
        if args.lessons and number not in {n.zfill(2) for n in args.lessons}:
            continue
        own = outputs_text(notebook)
        for value, line in prose_numbers(notebook):
            where = "here" if printed(value, own) else "elsewhere" if printed(value, everything) else None
            missing += where is None
            if where is None or args.all:
                print(f"{number}  {value:>8}  {where or 'NOT PRINTED':<11}  {line[:110]}")
    print(f"{missing} numbers printed by no stored output", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
