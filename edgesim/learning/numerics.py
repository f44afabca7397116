"""The models' elementwise helpers: clipping factors, scipy's log-softmax without scipy, kept
vectors of ones."""

from __future__ import annotations

import functools

import numpy as np


@functools.cache
def ones(n: int) -> np.ndarray:
    """Return n ones (float64, read-only), made once per n."""
    out = np.ones(n)
    out.flags.writeable = False
    return out


def clip_scale(norms: np.ndarray, bound: float) -> np.ndarray:
    """Return the per-sample factors min(1, bound / norm) that clip ``norms`` to ``bound``."""
    with np.errstate(divide="ignore"):
        return np.minimum(1.0, bound / norms)


def log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """Return log softmax of ``x`` along ``axis`` (float64, the shape of ``x``).

    The operations of ``scipy.special.log_softmax`` (scipy 1.17) on a numpy array, in the
    same order, so the bits are the same (tests/learning/test_models.py compares them);
    written here because importing ``scipy.special`` costs a small run about a quarter
    of a second.
    """
    x_max = np.max(x, axis=axis, keepdims=True)
    x_max[~np.isfinite(x_max)] = 0
    tmp = x - x_max
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(tmp), axis=axis, keepdims=True))
    return tmp - out
