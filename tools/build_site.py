"""Build the course as a static website, offline, from the stored notebooks (nothing is executed).

    pip install -r requirements-site.txt   # once: Jupyter Book 1 (Sphinx), apart from the course's
    python tools/build_site.py             # -> site/_build/html (about 10 s; npm ci the first time)
    python -m http.server -d site/_build/html      # then open http://localhost:8000

What it does:
1. MathJax 3 comes from the npm registry, pinned by site/package-lock.json: `npm ci` in site/ when
   site/node_modules has no MathJax yet (delete site/node_modules to reinstall it).
2. The pages are laid out under site/_build/source as in the repository: README.md (the front
   page), notation.md (the "## Notation" section of lessons/README.md), lessons/*.ipynb with
   lessons/checking.md and the figures in lessons/figures/, exercises/README.md and
   exercises/*.ipynb, with site/_config.yml, site/_toc.yml (the order
   of the pages) and site/_static/course.css and course.js. MathJax's tex-mml-chtml.js, its fonts and its TeX
   extensions go to _extra/mathjax, which Sphinx copies to the root of the site, outside
   _static/ (Jupyter Book adds every .js under _static/ to every page).
3. `jupyter-book build` with execution off writes site/_build/html. Every page loads its
   scripts, styles, fonts and MathJax from the site itself (tests/test_site.py checks it).

Every page is built anew each time (about 10 s): Sphinx's incremental build would keep a stale
style sheet or MathJax when no page changed. Option: --quiet.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
BUILD = SITE / "_build"
SOURCE = BUILD / "source"
HTML = BUILD / "html"
MATHJAX = SITE / "node_modules" / "mathjax" / "es5"
# What tex-mml-chtml.js loads: itself, its fonts, the TeX packages it autoloads on first use of
# one of their macros (\boldsymbol, \cancel, \color, ...), and the accessibility explorer with
# its speech rules, which its menu loads when a reader turns them on. About 6 MB of MathJax's 24.
MATHJAX_PARTS = ["tex-mml-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions",
                 "a11y", "sre"]
JUPYTER_BOOK = "import sys; from jupyter_book.cli.main import main; sys.exit(main())"


def notation(readme: str) -> str:
    """The "## Notation" section of lessons/README.md, as a page of its own."""
    lines = readme.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "## Notation"), None)
    if start is None:
        raise SystemExit("lessons/README.md has no '## Notation' section for the notation page")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(["# Notation", *lines[start + 1:end]]).rstrip() + "\n"


TITLE = re.compile(r"^# Lesson (\d+) — (.+)$", re.M)
TIME = re.compile(r"\*\*Time\.\*\* About (\d+) minutes to read; (?:about )?(\d+ minutes?|a few seconds)")


def front_page(template: str) -> str:
    """site/front.md with its lesson table made from each lesson's title and "Time." line."""
    rows = ["| lesson | to read | to run on 2 CPU cores |", "| --- | --- | --- |"]
    for notebook in sorted((ROOT / "lessons").glob("[0-9]*.ipynb")):
        first = json.loads(notebook.read_text(encoding="utf-8"))["cells"][0]["source"]
        first = "".join(first) if isinstance(first, list) else first
        title, time = TITLE.search(first), TIME.search(first)
        if not (title and time):
            raise SystemExit(f"{notebook.name}: its first cell needs '# Lesson N — title' and "
                             f"'**Time.** About N minutes to read; ...'")
        rows.append(f"| [Lesson {int(title.group(1))}: {title.group(2)}](lessons/{notebook.name}) | "
                    f"{time.group(1)} min | {time.group(2)} |")
    return template.replace("LESSON_TABLE", "\n".join(rows))


def stage(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` unless it already holds it (unchanged files keep their times)."""
    if not target.exists() or target.read_bytes() != data:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def install_mathjax() -> None:
    if (MATHJAX / "tex-mml-chtml.js").exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("MathJax is not installed and npm is not on PATH: install Node.js (npm), "
                         "then rerun, or run `npm ci` in site/ yourself")
    print("installing MathJax from site/package-lock.json: npm ci", flush=True)
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=SITE, check=True)


def built_from() -> str:
    """The commit of the checkout and its date, with "+ changes" when files differ from it;
    "unknown" outside git."""
    try:
        commit = subprocess.run(["git", "log", "-1", "--format=%h of %cs"], cwd=ROOT, check=True,
                                capture_output=True, text=True).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                 check=True, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + (" (with uncommitted changes)" if changed else "")


def lay_out_pages() -> None:
    """Copy the pages into SOURCE, mirroring the repository, so the README's links resolve."""
    wanted = {SOURCE / "_config.yml": SITE / "_config.yml", SOURCE / "_toc.yml": SITE / "_toc.yml",
              SOURCE / "_static" / "course.css": SITE / "_static" / "course.css",
              SOURCE / "_static" / "course.js": SITE / "_static" / "course.js",
              SOURCE / "_static" / "favicon.svg": SITE / "_static" / "favicon.svg",
              SOURCE / "README.md": ROOT / "README.md",
              SOURCE / "exercises" / "README.md": ROOT / "exercises" / "README.md"}
    for folder in ("lessons", "exercises"):
        for notebook in sorted((ROOT / folder).glob("[0-9]*.ipynb")):
            wanted[SOURCE / folder / notebook.name] = notebook
    for page in ("README.md", "checking.md"):   # the course map and lesson list; how it checks
        wanted[SOURCE / "lessons" / page] = ROOT / "lessons" / page
    for figure in sorted((ROOT / "lessons" / "figures").glob("*.svg")):  # the lessons' idea figures
        wanted[SOURCE / "lessons" / "figures" / figure.name] = figure
    for part in MATHJAX_PARTS:
        found = MATHJAX / part
        for path in [found] if found.is_file() else sorted(p for p in found.rglob("*") if p.is_file()):
            wanted[SOURCE / "_extra" / "mathjax" / path.relative_to(MATHJAX)] = path
    for target, source in wanted.items():
        data = source.read_bytes()
        if target.name == "_config.yml":   # the footer names the commit the site was built from
            data = data.replace(b"COMMIT", built_from().encode())
        stage(target, data)
    front = SOURCE / "index.md"
    stage(front, front_page((SITE / "front.md").read_text(encoding="utf-8")).encode("utf-8"))
    notation_page = SOURCE / "notation.md"
    lessons_readme = (ROOT / "lessons" / "README.md").read_text(encoding="utf-8")
    stage(notation_page, notation(lessons_readme).encode("utf-8"))
    # a page removed from the repository leaves the site too
    keep = set(wanted) | {notation_page, front}
    for path in sorted(SOURCE.rglob("*"), reverse=True):
        if path.is_file() and path not in keep:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def build(quiet: bool = False) -> Path:
    start = time.monotonic()
    if importlib.util.find_spec("jupyter_book") is None:
        raise SystemExit("Jupyter Book is not installed in this Python: "
                         "pip install -r requirements-site.txt")
    install_mathjax()
    lay_out_pages()
    command = [sys.executable, "-c", JUPYTER_BOOK, "build", str(SOURCE), "--path-output", str(SITE),
               "--builder", "html", "--warningiserror", "--keep-going", "--all"]
    if quiet:
        command.append("--quiet")
    try:
        subprocess.run(command, cwd=ROOT, check=True)
    except subprocess.CalledProcessError:
        raise SystemExit("the site did not build: see above (Sphinx's warnings count as errors, "
                         "so that a broken page or link stops the build)") from None
    print(f"site built in {time.monotonic() - start:.0f} s: {HTML / 'index.html'}\n"
          f"serve it: python -m http.server -d {HTML.relative_to(ROOT)}")
    return HTML


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quiet", action="store_true", help="print only warnings and errors")
    args = parser.parse_args()
    build(quiet=args.quiet)


if __name__ == "__main__":
    main()
