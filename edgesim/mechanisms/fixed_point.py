"""Fixed-point sums in Z_{2^64}: how secure aggregation adds the agents' weighted vectors.

Each client encodes its weighted vector a_i x_i as ``round(a_i x_i 2^f)`` in
two's complement modulo 2^64 (numpy ``uint64`` arithmetic wraps mod 2^64),
with ``f`` frac bits chosen so that the sum of ``n`` encodings of values in
``[-B, B]`` cannot wrap: ``n B 2^f < 2^63``; entries beyond ``B =
value_bound`` are saturated to +-B (and counted). The in-memory driver sums
the encodings directly (:func:`aggregate_plain`); the network's masked
protocol (:mod:`edgesim.network.secagg`) adds masks that cancel exactly mod
2^64, so both decode the same integer and return bit-identical floats.
Quantisation: a sum of m rows is within ``m 2^-(f+1)`` per entry of the
float sum of the (saturated) products.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

#: Default bound B on each entry of a weighted vector a_i x_i: 2^20. With
#: n = 10^4 clients it leaves f = 29 frac bits (resolution 1.9e-9); gradients
#: and models of the simulated learners are far below it.
DEFAULT_VALUE_BOUND = float(2**20)

_HALF_RING = 2**63


@functools.lru_cache(maxsize=256)  # exact Fractions: called every aggregated round
def fixed_point_params(n_clients: int, value_bound: float = DEFAULT_VALUE_BOUND) -> int:
    """Return the frac bits f: the largest integer with ``n_clients * value_bound * 2^f < 2^63``.

    Computed exactly (rational arithmetic). Then the sum of ``n_clients``
    encodings of values in [-B, B] never wraps mod 2^64. Raises ValueError if
    ``n_clients < 1``, the bound is not a positive finite number, or f would
    be negative (``n_clients * value_bound >= 2^63``).
    """
    n = int(n_clients)
    if n < 1:
        raise ValueError(f"n_clients must be >= 1, got {n_clients}")
    b = float(value_bound)
    if not (math.isfinite(b) and b > 0):
        raise ValueError(f"value_bound must be a positive finite number, got {value_bound}")
    x = Fraction(n) * Fraction(b)
    f = 63 - (x.numerator.bit_length() - x.denominator.bit_length())
    while x * Fraction(2) ** f >= _HALF_RING:
        f -= 1
    while x * Fraction(2) ** (f + 1) < _HALF_RING:
        f += 1
    if f < 0:
        raise ValueError(
            f"value_bound * n_clients = {b} * {n} must be below 2^63 for a 64-bit fixed point"
        )
    return f


@functools.lru_cache(maxsize=256)
def _max_code(frac_bits: int, value_bound: float) -> int:
    """Return M = floor(value_bound * 2^frac_bits), the largest code magnitude (an int)."""
    x = Fraction(float(value_bound)) * Fraction(2) ** int(frac_bits)
    return x.numerator // x.denominator


def encode_with_saturation(
    values, weights, frac_bits: int, value_bound: float = DEFAULT_VALUE_BOUND
) -> tuple[np.ndarray, int]:
    """Encode each row's weighted vector: return (uint64 codes (m, p), number of saturated entries).

    ``values``: float (m, p); ``weights``: (m,). The code of entry (i, l) is
    ``round(a_i x_il 2^f)`` (nearest integer, ties to even), saturated to
    [-M, M] with M = floor(B 2^f), stored in two's complement. The product
    a_i x_il is formed in float64 first, so every driver encodes the same
    numbers. Raises ValueError on NaN or on shape mismatches.
    """
    x = np.asarray(values, dtype=np.float64)
    a = np.asarray(weights, dtype=np.float64)
    if x.ndim != 2 or a.ndim != 1 or a.shape[0] != x.shape[0]:
        raise ValueError(f"values must be (m, p) and weights (m,), got {x.shape} and {a.shape}")
    v = a[:, None] * x
    if np.isnan(v).any():
        raise ValueError("cannot encode NaN")
    m_code = float(_max_code(frac_bits, value_bound))  # exact: see module docs
    code = np.rint(np.ldexp(v, int(frac_bits)))
    saturated = int(np.count_nonzero(np.abs(code) > m_code))
    np.clip(code, -m_code, m_code, out=code)
    return code.astype(np.int64).view(np.uint64), saturated


def encode(values, weights, frac_bits: int, value_bound: float = DEFAULT_VALUE_BOUND) -> np.ndarray:
    """Return the uint64 codes (m, p) of ``weights[:, None] * values`` (see :func:`encode_with_saturation`)."""
    return encode_with_saturation(values, weights, frac_bits, value_bound)[0]


def decode(total, frac_bits: int) -> np.ndarray:
    """Return the float64 value of a uint64 sum of codes: int64 (two's complement) times 2^-f."""
    t = np.ascontiguousarray(np.asarray(total, dtype=np.uint64))
    return np.ldexp(t.view(np.int64).astype(np.float64), -int(frac_bits))


@dataclass(frozen=True)
class FixedPoint:
    """A fixed-point format of Z_{2^64}: ``frac_bits`` f and the saturation bound ``value_bound`` B."""

    frac_bits: int
    value_bound: float = DEFAULT_VALUE_BOUND

    @classmethod
    def for_clients(cls, n_clients: int, value_bound: float = DEFAULT_VALUE_BOUND) -> FixedPoint:
        """Return the format whose sums of ``n_clients`` codes never wrap (:func:`fixed_point_params`)."""
        return cls(fixed_point_params(n_clients, value_bound), float(value_bound))

    @property
    def max_code(self) -> int:
        """The largest code magnitude M = floor(B 2^f) (an integer)."""
        return _max_code(self.frac_bits, self.value_bound)

    @property
    def resolution(self) -> float:
        """The quantisation step 2^-f (value units)."""
        return math.ldexp(1.0, -self.frac_bits)

    def encode(self, values, weights) -> tuple[np.ndarray, int]:
        """Return (uint64 codes (m, p), saturated entries) of ``weights[:, None] * values``."""
        return encode_with_saturation(values, weights, self.frac_bits, self.value_bound)

    def decode(self, total) -> np.ndarray:
        """Return the float64 value of a uint64 sum of codes."""
        return decode(total, self.frac_bits)


def aggregate_plain(
    weights, values, n_clients: int, value_bound: float = DEFAULT_VALUE_BOUND
) -> tuple[np.ndarray, dict]:
    """Return (float64 sum (p,), info) of ``sum_i weights_i values_i`` through the fixed point, no masks.

    What the in-memory driver computes: ``decode(sum_i encode(a_i x_i) mod
    2^64)`` with the format of ``n_clients`` clients (the number asked, not
    the number that replied, so that every driver uses the same f). Bit for
    bit what :meth:`SecureAggregation.unmask` returns for the same rows.
    ``info``: ``frac_bits``, ``value_bound``, ``saturated`` (entries clipped to
    +-B) and ``quantisation_bound`` = m 2^-(f+1), the largest possible
    |decoded - float sum| per entry (without saturation).
    """
    fmt = FixedPoint.for_clients(n_clients, value_bound)
    codes, saturated = fmt.encode(values, weights)
    m = codes.shape[0]
    if m > n_clients:
        raise ValueError(f"{m} rows exceed n_clients={n_clients}: the sum could wrap")
    total = codes.sum(axis=0, dtype=np.uint64)
    info = {
        "frac_bits": fmt.frac_bits,
        "value_bound": fmt.value_bound,
        "saturated": saturated,
        "quantisation_bound": m * math.ldexp(1.0, -fmt.frac_bits - 1),
    }
    return fmt.decode(total), info
