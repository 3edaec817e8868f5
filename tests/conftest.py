import sys
from pathlib import Path

# tools/notebooks.py (the lesson and exercise builder) is imported by the notebook tests.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
