"""How close each of a lesson's assertions came to failing: run lesson sources top to bottom,
record every `assert` instead of stopping at the first that fails, and list each one's worst case.

    python tools/margins.py lessons/src/09_fix_isolated.py [more sources] [--log margins.log]

Each lesson runs in its own process with this one's environment, so the settings that
lessons/checking.md lists are environment variables: MINILM_SEED_OFFSET=50 (other seeds),
ATEN_CPU_CAPABILITY=default (other CPU kernels), MINILM_CACHE=$(mktemp -d) (every model trained
anew; lessons given in course order then share it, as in a build). For an assert of one
comparison, ``a < b`` (or <=, >, >=), the margin is how far it holds, b - a (negative where it
fails), its smallest value over every time the assert ran (loops over seeds and lengths run it
many times); any other assert (``x < y < z``, ``and``, ``==``, a call) is only PASS or FAIL.
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The child process: the lesson's code with each assert rewritten into a call that records it.
RECORDER = r'''
import ast, math, operator, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.show = lambda *args, **kwargs: None
OPERATORS = {"Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt, "GtE": operator.ge,
             "Eq": operator.eq, "NotEq": operator.ne, "In": lambda a, b: a in b,
             "NotIn": lambda a, b: a not in b, "Is": operator.is_, "IsNot": operator.is_not}


def number(x):
    try:
        return float(x)
    except (TypeError, ValueError, RuntimeError):
        return None


def record(ok, line, text, margin=math.nan):
    print(f"@@ {line}\t{'PASS' if ok else 'FAIL'}\t{margin}\t{text}", flush=True)


def compared(a, b, op, line, text):
    x, y = number(a), number(b)
    # signed: how far the comparison holds (negative: how far it fails); only < <= > >= have one
    margin = math.nan if x is None or y is None else {"Lt": y - x, "LtE": y - x, "Gt": x - y,
                                                     "GtE": x - y}.get(op, math.nan)
    record(OPERATORS[op](a, b), line, text, margin)


class Recorder(ast.NodeTransformer):
    def visit_Assert(self, node):
        text, line = ast.Constant(" ".join(ast.get_source_segment(source, node.test).split())), \
            ast.Constant(node.lineno)
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            call = ast.Call(ast.Name("compared", ast.Load()), [
                test.left, test.comparators[0], ast.Constant(type(test.ops[0]).__name__), line, text], [])
        else:
            call = ast.Call(ast.Name("record", ast.Load()), [test, line, text], [])
        return ast.copy_location(ast.Expr(call), node)


path = sys.argv[1]
source = open(path, encoding="utf-8").read()
tree = ast.fix_missing_locations(Recorder().visit(ast.parse(source)))
if __name__ == "__main__":   # training workers re-import this file; only the parent runs the lesson
    exec(compile(tree, path, "exec"), {"__name__": "__main__", "record": record, "compared": compared})
'''


def run(lesson: Path, log) -> dict:
    """Run one lesson; {line: [text, failed?, worst margin]} over every time each assert ran."""
    process = subprocess.run([sys.executable, "-c", RECORDER, str(lesson)], cwd=ROOT, text=True,
                             capture_output=True)
    if log:
        log.write(f"== {lesson}\n{process.stdout}{process.stderr}")
    asserts = {}
    for row in process.stdout.splitlines():
        if not row.startswith("@@ "):
            continue
        line, verdict, margin, text = row[3:].split("\t", 3)
        seen = asserts.setdefault(int(line), [text, False, float("nan")])
        seen[1] |= verdict == "FAIL"
        if margin != "nan" and not float(margin) >= seen[2]:   # nan until the first number
            seen[2] = float(margin)
    if process.returncode:
        tail = process.stderr.strip().splitlines()[-1:] or ["(no message)"]
        asserts[0] = [f"the lesson stopped: {tail[0]}", True, float("nan")]
    return asserts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lessons", nargs="+", type=Path, help="lesson sources, lessons/src/NN_*.py")
    parser.add_argument("--log", type=Path, help="also write every lesson's whole output here")
    args = parser.parse_args()
    for lesson in args.lessons:
        if not lesson.is_file() or lesson.suffix != ".py":
            parser.error(f"lessons: {lesson} is not a lesson source (a .py file, lessons/src/NN_*.py)")
    failed = 0
    with open(args.log, "w", encoding="utf-8") if args.log else contextlib.nullcontext() as log:
        for lesson in args.lessons:
            asserts = run(lesson, log)
            failed += sum(seen[1] for seen in asserts.values())
            print(f"== {lesson}: {len(asserts)} asserts, "
                  f"{sum(seen[1] for seen in asserts.values())} failed")
            for line, (text, did_fail, margin) in sorted(asserts.items()):
                shown = "" if margin != margin else f"{margin:.4g}"   # nan: no single number
                print(f"{'FAIL' if did_fail else 'PASS'}  line {line:>4}  margin {shown:>8}  {text[:80]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
