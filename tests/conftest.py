import os
import sys
from pathlib import Path

# tools/notebooks.py (the lesson and exercise builder) is imported by the notebook tests.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))

# Notebook kernels start as "python" from PATH (ipykernel's kernel spec): make that the Python
# running the tests, so a virtual environment works whether or not it is activated.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
