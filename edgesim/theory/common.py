"""What the paper's formulas share: argument checks and small pieces of arithmetic.

Floats in, floats out; each check raises a ValueError whose message starts with
the argument's name (:mod:`edgesim.arguments`). Used by every module of
:mod:`edgesim.theory`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from edgesim.arguments import integer, nonnegative, open_unit, positive


def curvatures(mu: float, L_g: float) -> tuple[float, float]:
    """Return (mu, L_g) checked: both > 0 and mu <= L_g (curvatures, loss / w^2);
    ValueError naming the argument otherwise."""
    mu = positive("mu", mu)
    L_g = positive("L_g", L_g)
    if mu > L_g:
        raise ValueError(
            f"mu must be <= L_g (strong convexity <= smoothness), got mu={mu}, L_g={L_g}"
        )
    return mu, L_g


def log_contraction(mu: float, L_g: float) -> float:
    """Return ln(1 / (1 - mu/L_g)) = ln(L_g / (L_g - mu)) > 0; +inf when mu == L_g."""
    if mu == L_g:
        return math.inf
    return -math.log1p(-mu / L_g)


def rounds_needed(log_numerator: float, log_rate: float) -> int:
    """Return the smallest integer t >= 0 with t * log_rate >= log_numerator (log_rate > 0)."""
    if log_numerator <= 0.0:
        return 0
    if math.isinf(log_rate):
        return 1
    return math.ceil(log_numerator / log_rate)


def checked_weights(p: Sequence[float], n: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Return (p, n) as float arrays, checked: p non-empty 1-D weights >= 0 summing to 1,
    n sample counts > 0 of the same length; ValueError naming the argument otherwise."""
    p_arr = np.asarray(p, dtype=float)
    n_arr = np.asarray(n, dtype=float)
    if p_arr.ndim != 1 or p_arr.size == 0:
        raise ValueError(f"p must be a non-empty 1-D sequence of weights, got shape {p_arr.shape}")
    if n_arr.shape != p_arr.shape:
        raise ValueError(
            f"n must have the same length as p ({p_arr.size}), got shape {n_arr.shape}"
        )
    if not np.all(np.isfinite(p_arr)) or np.any(p_arr < 0.0):
        raise ValueError("p must hold finite weights >= 0")
    if not math.isclose(float(p_arr.sum()), 1.0, rel_tol=0.0, abs_tol=1e-9):
        raise ValueError(f"p must sum to 1, got sum {float(p_arr.sum())!r}")
    if not np.all(np.isfinite(n_arr)) or np.any(n_arr <= 0.0):
        raise ValueError("n must hold sample counts > 0")
    return p_arr, n_arr


def estimation_factor(L_ell: float, d: int, delta: float, mu: float) -> float:
    """Return L_ell^2 d log(2d/delta) / mu (loss units): the common factor of Props. 1-3 and 3.5."""
    L_ell = nonnegative("L_ell", L_ell)
    d = integer("d", d, 1)
    delta = open_unit("delta", delta)
    mu = positive("mu", mu)
    return L_ell**2 * d * math.log(2.0 * d / delta) / mu
