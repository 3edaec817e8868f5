"""Lessons and exercises are written as jupytext percent scripts (one source of truth) and
built into notebooks:

    lessons/src/NN.py    -> lessons/NN.ipynb                 (executed, with outputs)
    solutions/src/NN.py  -> solutions/NN.ipynb               (executed: the instructor version)
                         -> exercises/NN.ipynb               (the student version: every
                            "### BEGIN SOLUTION ... ### END SOLUTION" block replaced by
                            "# YOUR CODE HERE / raise NotImplementedError()", no outputs)

    python tools/notebooks.py build lessons/src/01_gau.py   # build one
    python tools/notebooks.py build --all                   # every lesson, then every exercise
    python tools/notebooks.py check                         # every notebook agrees with its source
    python tools/notebooks.py prose lessons/src/01_gau.py   # copy edited markdown only, no re-execution

A notebook is built with MINILM_PROFILE=cpu on the profile's own seeds (any MINILM_SEED_OFFSET is
dropped), so that what is stored is the run its prose describes. Cell ids come from the cell's
text, and no timestamps are kept but one: each notebook records the build it came from
(``metadata.minilm_build``: the sources' commit, torch, Python, the CPU and its kernels or the GPU,
the profile, the date), one record for every notebook of one ``build`` command. Another
machine's kernels train other weights, so a number one lesson quotes from another holds only
within one build: tests/test_build_record.py fails until the whole course is rebuilt at once.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import datetime
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "lessons" / "src"
EXERCISE_SOURCES = ROOT / "solutions" / "src"  # out of exercises/, which holds the student's notebooks only
SOLUTION = re.compile(r"^([ \t]*)### BEGIN SOLUTION[^\n]*\n.*?^[ \t]*### END SOLUTION[^\n]*(\n|$)", re.S | re.M)


def is_exercise(source: Path) -> bool:
    return source.parent.resolve() == EXERCISE_SOURCES


def notebook_path(source: Path) -> Path:
    """Where the executed notebook of a source lives (for an exercise: its solution notebook)."""
    if is_exercise(source):
        return ROOT / "solutions" / f"{source.stem}.ipynb"
    return source.parent.parent / f"{source.stem}.ipynb"


def student_path(source: Path) -> Path:
    return ROOT / "exercises" / f"{source.stem}.ipynb"


def shown(path: Path) -> str:
    """A path as the messages show it: from the repository root, so two files of one name differ."""
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def read_source(source: Path):
    """The notebook of a jupytext source, with stable cell ids: a hash of the cell's own text
    (numbered when two cells are the same), so editing one cell changes only that cell."""
    notebook = jupytext.read(source)
    seen = {}
    for cell in notebook.cells:
        digest = hashlib.sha1(f"{cell.cell_type}\n{cell.source}".encode()).hexdigest()[:8]
        seen[digest] = seen.get(digest, -1) + 1
        cell.id = digest if seen[digest] == 0 else f"{digest}-{seen[digest]}"
    return notebook


def student_version(notebook):
    """The notebook a student gets: solutions replaced by a stub that raises, no outputs."""
    student = copy.deepcopy(notebook)
    student.metadata.pop("minilm_build", None)  # it ran nothing
    for cell in student.cells:
        if cell.cell_type == "code":
            cell.source = SOLUTION.sub(lambda m: f"{m[1]}# YOUR CODE HERE\n{m[1]}raise NotImplementedError()\n",
                                       cell.source).rstrip("\n")
            cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("execution", None)
    return student


def cells_of(notebook) -> list[tuple[str, str, str]]:
    return [(cell.cell_type, cell.get("id", ""), cell.source.strip()) for cell in notebook.cells]


def out_of_sync(source: Path) -> str | None:
    """Why the stored notebook does not match its source, or None when it does."""
    target = notebook_path(source)
    rebuild = f"rebuild it: python tools/notebooks.py build {shown(source)}"
    if not target.exists():
        return f"{shown(target)} is missing; {rebuild}"
    if cells_of(read_source(source)) != cells_of(nbformat.read(target, as_version=4)):
        return f"{shown(target)} differs from {shown(source)}; {rebuild}"
    if is_exercise(source):
        student = student_path(source)
        if not student.exists() or (cells_of(student_version(read_source(source)))
                                    != cells_of(nbformat.read(student, as_version=4))):
            return f"{shown(student)} is out of date with its solution {shown(source)}; {rebuild}"
    return None


PROGRESS_TIMING = re.compile(r" ?\[[\d:]+<[\d:?]+, *(\?|[\d.]+) ?(it/s|s/it)(, )?")


def final_state(line: str) -> str:
    """The last state of a progress-bar line (a bar redraws itself with carriage returns), without
    its elapsed time and rate, which differ from run to run: "… 600/600 [00:09<00:00, 64it/s, loss=1.2]"
    becomes "… 600/600 [loss=1.2]"."""
    line = line.rsplit("\r", 1)[-1]
    if not PROGRESS_TIMING.search(line):
        return line
    return PROGRESS_TIMING.sub(" [", line).replace(" []", "")


def tidy_outputs(notebook) -> None:
    """Merge consecutive stream outputs and keep only the final state of each progress bar,
    as a notebook front end shows it."""
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        merged = []
        for output in cell.outputs:
            if (output.output_type == "stream" and merged and merged[-1].output_type == "stream"
                    and merged[-1].name == output.name):
                merged[-1].text += output.text
            else:
                merged.append(output)
        for output in merged:
            if output.output_type == "stream":
                output.text = "\n".join(map(final_state, output.text.split("\n")))
        cell.outputs = [o for o in merged if o.output_type != "stream" or o.text.strip()]


def kernelspec() -> dict:
    """The kernel a notebook names, exactly as JupyterLab writes it when it saves one (display
    name "Python 3 (ipykernel)" from ipykernel's own spec): a stored notebook that says anything
    else is rewritten on open, and closing an untouched lesson would ask to save it."""
    from jupyter_client.kernelspec import get_kernel_spec

    spec = get_kernel_spec("python3")
    return {"name": "python3", "display_name": spec.display_name, "language": spec.language}


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def cpu_name() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo), else what the platform says."""
    info = Path("/proc/cpuinfo")
    names = [line.split(":", 1)[1].strip() for line in info.read_text().splitlines()
             if line.startswith("model name")] if info.exists() else []
    return names[0] if names else platform.processor() or platform.machine()


def build_record() -> dict:
    """What this build runs on, as the kernel will see it: the commit of the sources (refused if
    they hold uncommitted edits, which no commit would name), torch, Python, the CPU and the
    kernels PyTorch picked on it (ATEN_CPU_CAPABILITY chooses) or the GPU, the profile, the date."""
    import torch

    edited = git("status", "--porcelain", "--", "minilm", "course", "lessons/src", "solutions/src")
    if edited:
        raise SystemExit(f"commit the sources first, so that the build record names them:\n{edited}")
    return {"commit": git("rev-parse", "HEAD"), "torch": torch.__version__.split("+")[0],
            "python": platform.python_version(), "cpu": cpu_name(),
            "cpu_kernels": torch.backends.cpu.get_cpu_capability(),
            "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
            "profile": "cpu", "date": datetime.date.today().isoformat()}


def build(source: Path, record: dict) -> float:
    """Convert, execute top to bottom in the notebook's folder, save with outputs and ``record``
    (build_record). Returns seconds."""
    from nbclient import NotebookClient

    notebook = read_source(source)
    notebook.metadata["kernelspec"] = kernelspec()
    notebook.metadata["minilm_build"] = record
    notebook.metadata.pop("jupytext", None)
    target = notebook_path(source)
    # what is stored is the cpu profile on its own seeds (a CI run's MINILM_SEED_OFFSET is not)
    env = {name: value for name, value in os.environ.items() if name != "MINILM_SEED_OFFSET"}
    start = time.time()
    client = NotebookClient(notebook, timeout=1800, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(target.parent)}})
    client.execute(env={**env, "MINILM_PROFILE": "cpu"})
    seconds = time.time() - start
    tidy_outputs(notebook)
    nbformat.write(notebook, target)
    if is_exercise(source):
        nbformat.write(student_version(notebook), student_path(source))
    return seconds


def update_prose(source: Path) -> None:
    """Copy the source's markdown cells into the stored notebook, keeping every code cell and
    its outputs: for a prose-only edit, the stored outputs are still those of a real run of
    exactly this code, so nothing needs to run again. Markdown cells may be added, removed or
    split; the code cells, in order, must be the stored ones, or the edit is refused."""
    target = notebook_path(source)
    stored, fresh = nbformat.read(target, as_version=4), read_source(source)
    stored_code = [c for c in stored.cells if c.cell_type == "code"]
    fresh_code = [c for c in fresh.cells if c.cell_type == "code"]
    if [c.source.strip() for c in stored_code] != [c.source.strip() for c in fresh_code]:
        raise SystemExit(f"{shown(source)}: code cells changed, so the outputs are stale; "
                         f"rebuild it: python tools/notebooks.py build {shown(source)}")
    ran = iter(stored_code)
    stored.cells = [next(ran) if cell.cell_type == "code" else cell for cell in fresh.cells]
    nbformat.write(stored, target)
    if is_exercise(source):
        nbformat.write(student_version(stored), student_path(source))


def all_sources() -> list[Path]:
    return sorted(SOURCES.glob("*.py")) + sorted(EXERCISE_SOURCES.glob("*.py"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    build_parser = sub.add_parser("build")
    build_parser.add_argument("sources", nargs="*", type=Path)
    build_parser.add_argument("--all", action="store_true")
    sub.add_parser("check")
    prose_parser = sub.add_parser("prose")
    prose_parser.add_argument("sources", nargs="+", type=Path)
    args = parser.parse_args(argv)

    if args.command == "check":
        problems = [p for p in map(out_of_sync, all_sources()) if p]
        print("\n".join(problems) or "every notebook agrees with its source")
        return 1 if problems else 0
    if args.command == "prose":
        for source in args.sources:
            update_prose(source.resolve())
            print(f"{shown(source)}: markdown copied into {shown(notebook_path(source.resolve()))}")
        return 0
    sources = all_sources() if args.all else args.sources
    record = build_record()
    print(f"build record: {record}", flush=True)
    for source in sources:
        print(f"{shown(source)}: executed in {build(source.resolve(), record):.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
