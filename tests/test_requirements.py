"""A fresh environment has everything the repository imports: each third-party module imported
by a tracked .py file (library, tests, tools, lesson and exercise sources) is installed by a
distribution that requirements.txt names."""

import ast
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def tracked_python_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / line for line in listed.stdout.split()]


def top_level_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def listed_requirements() -> set[str]:
    listed = set()
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line.split("#")[0])
        if match and not line.lstrip().startswith("-"):
            listed.add(normalise(match.group(1)))
    return listed


def unlisted_imports(files: list[Path], listed: set[str]) -> list[str]:
    """Each third-party module imported by ``files`` that no distribution in ``listed`` installs."""
    local = {"minilm", "course"} | {path.stem for path in tracked_python_files()}  # the package, tools/ scripts
    distributions = importlib.metadata.packages_distributions()
    missing = []
    for path in files:
        for module in sorted(top_level_imports(path)):
            if module in sys.stdlib_module_names or module in local or module == "__future__":
                continue
            provided_by = {normalise(d) for d in distributions.get(module, [module])}
            if not provided_by & listed:
                missing.append(f"{module} (imported by {path.name}; installed by {', '.join(sorted(provided_by))})")
    return missing


def test_every_third_party_import_is_in_requirements():
    files = tracked_python_files()
    assert len(files) > 20, "git ls-files found too few files: is this a checkout?"
    missing = unlisted_imports(files, listed_requirements())
    assert not missing, "imported but not in requirements.txt:\n" + "\n".join(missing)


def test_an_unlisted_import_is_caught(tmp_path):
    # The control: the same check on a file that imports what the list leaves out.
    sample = tmp_path / "sample.py"
    sample.write_text("import os\nimport jupytext\nfrom nbformat.v4 import new_notebook\nimport minilm\n")
    without = listed_requirements() - {"jupytext", "nbformat"}
    assert [m.split()[0] for m in unlisted_imports([sample], without)] == ["jupytext", "nbformat"]
    assert unlisted_imports([sample], listed_requirements()) == []
