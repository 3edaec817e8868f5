"""Argument checks shared by the library, so every bad value fails where it is given.

Each function returns nothing and raises ``ValueError("<name> must be ...; got <value!r>")``
(``one_of``: "unknown <name> <value!r>; allowed: ..."). Never a silent fallback: a value
that is not what the caller must have meant is an error where it is given, not NaN later.
This module imports nothing from minilm (torch only): any module may use it.

Numbers are accepted as the ``numbers`` module sees them, so numpy's count too (np.int64 is an
int, np.float32 a real number); bool never is, though Python calls it an int. A list of values may
be a list, a tuple, a range or a 1-D array (``is_sequence``).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import fields

import torch


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def plain(value):
    """A numpy number as the Python number it holds (np.int64(16) -> 16, np.float32(0.5) -> 0.5);
    anything else as it is. For what a dataclass stores: JSON (the cache key) cannot write numpy
    numbers, and a Config of np.int64 sizes should be the Config of ints it equals."""
    if isinstance(value, numbers.Number) and not isinstance(value, (bool, int, float)) and hasattr(value, "item"):
        return value.item()
    return value


def plain_fields(instance) -> None:
    """Replace the numpy numbers in the fields of a (frozen) dataclass by the Python numbers they
    hold (``plain``), before its checks: np.int64(16) is then stored, compared and keyed as 16."""
    for field in fields(instance):
        object.__setattr__(instance, field.name, plain(getattr(instance, field.name)))


def dtype_name(dtype) -> str:
    """A torch dtype as messages name it: 'float32' for torch.float32."""
    return str(dtype).removeprefix("torch.")


def is_sequence(values) -> bool:
    """A list, tuple, range or 1-D array (numpy or torch): what may stand for a list of values."""
    return isinstance(values, (list, tuple, range)) or getattr(values, "ndim", None) == 1


def integer(name: str, value, *, at_least: int | None = None) -> None:
    """An int (not a bool: True is an int to Python, never a length to us), >= at_least if given."""
    if not _is_int(value) or (at_least is not None and value < at_least):
        bound = "an int" if at_least is None else f"an int >= {at_least}"
        raise ValueError(f"{name} must be {bound}; got {value!r}")


def positive_int(name: str, value) -> None:
    """An int >= 1 (lengths, sizes, counts)."""
    if not _is_int(value) or value < 1:
        raise ValueError(f"{name} must be a positive int; got {value!r}")


def positive_ints(name: str, values) -> None:
    """A non-empty list of positive ints (the lengths of mixed-length training): see is_sequence."""
    if not is_sequence(values) or len(values) == 0:
        raise ValueError(f"{name} must be a non-empty list of positive ints; got {values!r}")
    for value in values:
        positive_int(f"each of {name}", value)


def finite_number(name: str, value, *, above: float | None = None, at_least: float | None = None,
                  at_most: float | None = None, why: str = "") -> None:
    """A finite int or float (not a bool, not inf or nan) within the bounds given.

    ``why`` is added to the message in parentheses, e.g. "the training length L"."""
    ok = (_is_real(value) and math.isfinite(value)
          and (above is None or value > above) and (at_least is None or value >= at_least)
          and (at_most is None or value <= at_most))
    if ok:
        return
    what = "a finite number" + _bounds(above, at_least, at_most)
    raise ValueError(f"{name} must be {what}{f' ({why})' if why else ''}; got {value!r}")


def storable_number(name: str, value, dtype, *, where: str, **bounds) -> None:
    """finite_number (with its bounds and ``why``), and no larger in size than a tensor of the
    floating ``dtype`` holds (``where``: which tensor, e.g. "model.temperature"): 1e39 is a finite
    float, but a float32 cannot hold it, and torch says "value cannot be converted to type float
    without overflow"."""
    finite_number(name, value, **bounds)
    largest = torch.finfo(dtype).max
    if abs(value) > largest:
        raise ValueError(f"{name} must be at most {largest:.3g} in size, what {where} ({dtype_name(dtype)}) can hold; "
                         f"got {value!r}")


def _bounds(above, at_least, at_most) -> str:
    """' in [0, 1]', ' > 0', ' >= 0 and <= 1' or ''."""
    if at_least is not None and at_most is not None:
        return f" in [{at_least}, {at_most}]"
    bounds = [f"{sign} {bound}" for sign, bound in ((">", above), (">=", at_least), ("<=", at_most))
              if bound is not None]
    return " " + " and ".join(bounds) if bounds else ""


def finite_numbers(name: str, values, *, above: float | None = None, at_least: float | None = None,
                   at_most: float | None = None) -> None:
    """A non-empty list of finite numbers within the bounds given (depths, ratios): see is_sequence."""
    if not is_sequence(values) or len(values) == 0:
        what = "a non-empty list of finite numbers" + _bounds(above, at_least, at_most)
        raise ValueError(f"{name} must be {what}; got {values!r}")
    for value in values:
        finite_number(f"each of {name}", value, above=above, at_least=at_least, at_most=at_most)


def one_of(name: str, value, allowed) -> None:
    """value is one of the strings ``allowed``: 'unknown <name> <value>; allowed: ...'."""
    if not (isinstance(value, str) and value in allowed):
        raise ValueError(f"unknown {name} {value!r}; allowed: {', '.join(map(repr, allowed))}")


def boolean(name: str, value) -> None:
    """True or False exactly: 'yes', 1 or None are refused, since each reads as a different intent."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False; got {value!r}")
