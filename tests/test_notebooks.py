"""Stored notebooks agree with their jupytext sources and hold a clean, real run."""

import json
import re

import pytest

from notebooks import all_sources, notebook_path, out_of_sync  # tools/ is on the path (conftest.py)

SOURCES = all_sources()  # lessons and exercise solutions
MACHINE_PATH = re.compile(r"(/root/|/home/[^/\s]+/|/tmp/|site-packages/)")


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_notebook_agrees_with_its_source(source):
    assert out_of_sync(source) is None, out_of_sync(source)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_notebook_is_stored_with_a_clean_run_in_order(source):
    notebook = json.loads(notebook_path(source).read_text())
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    counts = [c["execution_count"] for c in code]
    assert None not in counts and counts == sorted(counts), "execute top to bottom before committing"
    for cell in code:
        for output in cell["outputs"]:
            assert output["output_type"] != "error", cell["source"]
            assert not MACHINE_PATH.search(json.dumps(output)), "an output shows a machine path"
