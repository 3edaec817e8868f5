import os
import sys
from pathlib import Path

import pytest

# tools/notebooks.py (the lesson and exercise builder) is imported by the notebook tests.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))

# Notebook kernels start as "python" from PATH (ipykernel's kernel spec): make that the Python
# running the tests, so a virtual environment works whether or not it is activated.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")


@pytest.fixture
def raises_naming():
    """Call a bad call and check its ValueError's message holds every word of the case: the
    argument the user passed and what is allowed (the bad-input tables of several test files)."""
    def check(call, words):
        with pytest.raises(ValueError) as info:
            call()
        for word in words:
            assert word in str(info.value), (word, str(info.value))
    return check


@pytest.fixture
def on_the_cpu():
    """Skip a test of training side by side where pick_device() is not the CPU: there
    pretrained_many's worker processes train the models; a GPU or Apple's MPS trains them one
    after another in the caller."""
    from minilm.training import pick_device
    if pick_device().type != "cpu":
        pytest.skip(f"models train side by side only on the CPU; here they train on {pick_device()}")
