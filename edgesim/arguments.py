"""Checks of numeric function arguments, one set for the whole package (theory, privacy, ...).

Every failure is a ``ValueError`` whose message starts with the argument's
name and a colon (``"alpha: must be > 0, got -1"``), so a caller can say
which argument was wrong. Bools are not numbers here; NaN and infinities are
not finite reals.
"""

from __future__ import annotations

import math
import numbers


def real(name: str, value: object) -> float:
    """Return ``value`` as a finite float; ValueError unless it is a finite real number."""
    is_real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    x = float(value) if is_real else math.nan
    if not math.isfinite(x):
        raise ValueError(f"{name}: must be a finite real number, got {value!r}")
    return x


def positive(name: str, value: object) -> float:
    """Return ``value`` as a float > 0; ValueError otherwise."""
    x = real(name, value)
    if not x > 0.0:
        raise ValueError(f"{name}: must be > 0, got {value!r}")
    return x


def nonnegative(name: str, value: object) -> float:
    """Return ``value`` as a float >= 0; ValueError otherwise."""
    x = real(name, value)
    if not x >= 0.0:
        raise ValueError(f"{name}: must be >= 0, got {value!r}")
    return x


def open_unit(name: str, value: object) -> float:
    """Return ``value`` as a float in (0, 1); ValueError otherwise."""
    x = real(name, value)
    if not 0.0 < x < 1.0:
        raise ValueError(f"{name}: must be in (0, 1), got {value!r}")
    return x


def integer(name: str, value: object, minimum: int) -> int:
    """Return ``value`` as an int >= ``minimum``; integral floats (10.0) are accepted."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        n = int(value)
    else:
        x = real(name, value) if not isinstance(value, bool) else math.nan
        if not (math.isfinite(x) and x.is_integer()):
            raise ValueError(f"{name}: must be an integer >= {minimum}, got {value!r}")
        n = int(x)
    if n < minimum:
        raise ValueError(f"{name}: must be an integer >= {minimum}, got {value!r}")
    return n
