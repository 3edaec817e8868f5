"""The figures of ideas in lessons/figures/ are what tools/figures.py draws: a figure edited by
hand, or code changed without redrawing, fails here. SVG bytes depend on matplotlib's version,
so the comparison runs only where the installed matplotlib is the one that drew them (each SVG
names it); elsewhere it skips, saying why."""

import re
import sys
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import figures  # noqa: E402


@pytest.mark.parametrize("name", list(figures.DRAWINGS))
def test_each_figure_is_what_its_code_draws(name):
    path = figures.FIGURES / f"{name}.svg"
    assert path.exists(), f"{path} is missing: python tools/figures.py"
    drawn_with = re.search(rb"Matplotlib v([\d.]+)", path.read_bytes())
    if drawn_with is None or drawn_with.group(1).decode() != matplotlib.__version__:
        pytest.skip(f"{name}.svg was drawn with another matplotlib than {matplotlib.__version__}")
    assert path.read_bytes() == figures.svg(figures.DRAWINGS[name]), (
        f"lessons/figures/{name}.svg differs from what tools/figures.py draws: redraw it")


def test_every_figure_file_has_its_code():
    drawn = {f"{name}.svg" for name in figures.DRAWINGS}
    stored = {path.name for path in figures.FIGURES.glob("*.svg")}
    assert stored <= drawn, f"figures with no code in tools/figures.py: {sorted(stored - drawn)}"
