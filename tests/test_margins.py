"""tools/margins.py: every assert of a lesson recorded, none stopping it, each with its worst case."""

import margins   # tools/ is on sys.path (conftest.py)

LESSON = """
import math
for seed in range(3):
    assert 0.1 * seed < 0.15, seed        # holds by 0.15 and 0.05, fails by 0.05
assert math.pi > 3                       # holds by 0.1416
assert 0 < 1 < 2                         # no single margin
raise RuntimeError("a broken cell")
"""


def test_every_assert_is_recorded_with_its_worst_signed_margin_and_a_crash_named(tmp_path):
    lesson = tmp_path / "lesson.py"
    lesson.write_text(LESSON)
    asserts = margins.run(lesson, log=None)
    assert asserts[4][1] and abs(asserts[4][2] + 0.05) < 1e-9, asserts[4]   # failed, by 0.05
    assert not asserts[5][1] and abs(asserts[5][2] - (3.14159265 - 3)) < 1e-6, asserts[5]
    assert not asserts[6][1] and asserts[6][2] != asserts[6][2], asserts[6]   # nan: no number
    assert asserts[0][1] and "a broken cell" in asserts[0][0], asserts[0]
