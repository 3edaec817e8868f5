"""Argument checks shared by the library, so every bad value fails where it is given.

Each function returns nothing and raises ``ValueError("<name> must be ...; got <value!r>")``
(``one_of``: "unknown <name> <value!r>; allowed: ..."). Never a silent fallback: a value
that is not what the caller must have meant is an error where it is given, not NaN later.
This module imports nothing from minilm: any module may use it.
"""

from __future__ import annotations

import math


def integer(name: str, value, *, at_least: int | None = None) -> None:
    """An int (not a bool: True is an int to Python, never a length to us), >= at_least if given."""
    if not isinstance(value, int) or isinstance(value, bool) or (at_least is not None and value < at_least):
        bound = "an int" if at_least is None else f"an int >= {at_least}"
        raise ValueError(f"{name} must be {bound}; got {value!r}")


def positive_int(name: str, value) -> None:
    """An int >= 1 (lengths, sizes, counts)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int; got {value!r}")


def positive_ints(name: str, values) -> None:
    """A non-empty list or tuple of positive ints (the lengths of mixed-length training)."""
    if not isinstance(values, (list, tuple)) or not values:
        raise ValueError(f"{name} must be a non-empty list of positive ints; got {values!r}")
    for value in values:
        positive_int(f"each of {name}", value)


def finite_number(name: str, value, *, above: float | None = None, at_least: float | None = None,
                  at_most: float | None = None, why: str = "") -> None:
    """A finite int or float (not a bool, not inf or nan) within the bounds given.

    ``why`` is added to the message in parentheses, e.g. "the training length L"."""
    ok = (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
          and (above is None or value > above) and (at_least is None or value >= at_least)
          and (at_most is None or value <= at_most))
    if ok:
        return
    if at_least is not None and at_most is not None:
        bounds = [f"in [{at_least}, {at_most}]"]
    else:
        bounds = [f"{sign} {bound}" for sign, bound in ((">", above), (">=", at_least), ("<=", at_most))
                  if bound is not None]
    what = " ".join(["a finite number", " and ".join(bounds)]).strip()
    raise ValueError(f"{name} must be {what}{f' ({why})' if why else ''}; got {value!r}")


def one_of(name: str, value, allowed) -> None:
    """value is one of the strings ``allowed``: 'unknown <name> <value>; allowed: ...'."""
    if not (isinstance(value, str) and value in allowed):
        raise ValueError(f"unknown {name} {value!r}; allowed: {', '.join(map(repr, allowed))}")


def boolean(name: str, value) -> None:
    """True or False exactly: 'yes', 1 or None are refused, since each reads as a different intent."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False; got {value!r}")
