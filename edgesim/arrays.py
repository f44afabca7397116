"""One number for every message or agent: read-only views of stride 0, and what reads them.

An exchange's messages often all have one size, and a link's latency and timeout are
the same for every message. Held as a :func:`constant` view (``numpy.broadcast_to`` of
one number), such a column costs no memory, and the network's arithmetic can work on
the number once (:func:`squeezed`) and skip gathers of it (:func:`take_rows`): the same
numbers as a full column, with fewer passes over K agents.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np


@functools.lru_cache(maxsize=256)
def constant(m: int, value: int) -> np.ndarray:
    """Return ``value`` for each of m messages as a read-only (m,) int64 view of one number.

    A link's latency and timeout are the same for every message: a full array of them
    would cost 8 bytes a message twice per exchange (160 MB at K = 10^7); this costs none.
    The views are kept (read-only, so shareable): ``numpy.broadcast_to`` costs about 4 us a
    call, a cached view 0.05 us, which counts in small exchanges (K = 2: a round is 25 us).
    """
    key = (m, value)
    view = _CONSTANTS.get(key)
    if view is None:
        if len(_CONSTANTS) >= CONSTANTS_KEPT:
            _CONSTANTS.clear()
        view = _CONSTANTS[key] = np.broadcast_to(np.int64(value), (m,))
    return view


#: :func:`constant` keeps at most this many views (a run asks for a few sizes).
CONSTANTS_KEPT = 256
_CONSTANTS: dict[tuple, np.ndarray] = {}


def frozen_copy(a: np.ndarray) -> np.ndarray:
    """Return a read-only copy of ``a``: what a cache keeps (no later write to ``a``, or to the
    array handed out, changes it)."""
    out = np.array(a)
    out.flags.writeable = False
    return out


def all_finite(a: np.ndarray) -> bool:
    """Whether every element of ``a`` is finite: ``np.isfinite(a).all()`` without the method's
    Python wrapper (a microsecond of each of a search's 80 000 rounds)."""
    return bool(np.logical_and.reduce(np.isfinite(a), axis=None))


def every(mask: np.ndarray) -> bool:
    """Whether every element of the bool array ``mask`` is True (True when empty):
    ``mask.all()`` by ``numpy.count_nonzero``, about a microsecond less a call (an exchange
    asks it of its masks some ten times)."""
    return np.count_nonzero(mask) == mask.size


def as_slice(positions: np.ndarray) -> slice | np.ndarray:
    """Return the sorted, distinct, non-empty int ``positions`` as a slice when they are
    consecutive (one deviator, or a run of them: a slice's view costs less than a gather),
    else as they are."""
    first, last = int(positions[0]), int(positions[-1])
    if last - first + 1 == positions.size:
        return slice(first, last + 1)
    return positions


def is_constant(a: np.ndarray) -> bool:
    """Whether ``a`` is a non-empty one-dimensional view of one number (:func:`constant`, or
    any :func:`numpy.broadcast_to` of a scalar): its elements are one value, read once."""
    return a.ndim == 1 and a.size > 0 and a.strides[0] == 0


def take_rows(a: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Return ``a[rows]`` (``rows`` an index array): a :func:`constant` view when ``a`` is an
    int64 one (no copy of one number m times), else numpy's gather."""
    if is_constant(a) and a.dtype == np.int64:
        return constant(rows.size, int(a[0]))
    return a[rows]


def total(a: np.ndarray) -> int:
    """Return the sum of the int64 array ``a``: one product for a view of one number."""
    if a.dtype != np.int64:
        raise TypeError(f"total() sums int64 arrays, got {a.dtype}")
    return int(a[0]) * a.size if is_constant(a) else int(a.sum())


def all_equal(a: np.ndarray) -> bool:
    """Whether every element of ``a`` is the same (True when empty); at once for a view of
    one number."""
    if a.size == 0 or is_constant(a):
        return True
    return bool((a == a.flat[0]).all())


def squeezed(a: np.ndarray) -> np.ndarray:
    """Return ``a[:1]`` when ``a`` is a :func:`constant` view (shape (1,): broadcast against
    the messages' arrays it gives the same numbers, computed once), else ``a``."""
    return a[:1] if is_constant(a) else a


def column(x, m: int) -> np.ndarray:
    """Return ``x`` (a number, a (1,) or an (m,) array) as an (m,) int64 column: itself when
    it is one, else a :func:`constant` view (faster than ``numpy.broadcast_to``, whose
    checks cost about 4 us a call)."""
    if type(x) is np.ndarray and x.dtype == np.int64:
        if x.shape == (m,):
            return x
        if x.shape == (1,):
            return constant(m, int(x[0]))
    if isinstance(x, (int, np.integer)) or np.ndim(x) == 0:
        return constant(m, int(x))
    return np.broadcast_to(np.asarray(x, dtype=np.int64), (m,))


def norm2(v: np.ndarray) -> float:
    """Return the Euclidean norm of the float64 vector ``v`` (a float): the operations of
    ``numpy.linalg.norm`` (the square root of the ravelled vector's dot product with itself,
    so the same bits) without its dispatch, about 3 us a call that FFL's Phase II makes
    three times an exchange."""
    x = v.ravel(order="K")
    return math.sqrt(float(x.dot(x)))


@dataclass(frozen=True)
class AllBut:
    """Every index 0..n-1 but ``skip``, in order, as an index of per-agent arrays: FFL's
    Phase II recipients (every agent but the payee). :func:`add_rows` adds through it by two
    slices, about a seventh of a fancy index's cost at n = 10^4 (4 us against 27 us)."""

    skip: int


#: The fewest recipients for which :func:`all_but` is tried: its check (two comparisons over
#: the recipients, about 12 us at 10^4) pays for itself only on large exchanges.
ALL_BUT_FROM = 1024


def all_but(agents: np.ndarray, everyone: np.ndarray) -> AllBut | None:
    """Return ``AllBut(j)`` when ``agents`` is ``everyone`` (0..n-1 in order) without j, else
    None (also below :data:`ALL_BUT_FROM` recipients)."""
    n = everyone.size
    if agents.size != n - 1 or agents.size < ALL_BUT_FROM:
        return None
    j = n * (n - 1) // 2 - int(agents.sum())  # the one left out, if any is
    if not 0 <= j < n:
        return None
    if np.array_equal(agents[:j], everyone[:j]) and np.array_equal(agents[j:], everyone[j + 1 :]):
        return AllBut(j)
    return None


def add_rows(target: np.ndarray, rows, values) -> None:
    """Add ``values`` into ``target[rows]`` in place: ``rows`` a slice, an array of distinct
    indices or an :class:`AllBut`; ``values`` a number or aligned with the rows. Returns
    nothing."""
    if type(rows) is not AllBut:
        target[rows] += values
        return
    j = rows.skip
    if np.ndim(values) == 0:
        target[:j] += values
        target[j + 1 :] += values
    else:
        target[:j] += values[:j]
        target[j + 1 :] += values[j:]


def select_rows(a: np.ndarray, rows) -> np.ndarray:
    """Return ``a[rows]``: ``rows`` a slice, an index array or an :class:`AllBut`."""
    if type(rows) is AllBut:
        return np.concatenate((a[: rows.skip], a[rows.skip + 1 :]))
    return a[rows]


#: Rows :func:`keep_rows` moves at a time (its temporary: at most this many rows).
KEEP_CHUNK_ROWS = 8192


def keep_rows(a: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Move the rows of ``a`` that ``keep`` (bool, one per row) selects to its front, in order,
    in place; returns the view ``a[:keep.sum()]``, whose rows equal ``a[keep]``. The gather
    goes by chunks of :data:`KEEP_CHUNK_ROWS` rows, so its temporary is a chunk, not a copy
    of ``a`` (a later chunk's rows lie after every row written before it)."""
    idx = np.flatnonzero(keep)
    for lo in range(0, idx.size, KEEP_CHUNK_ROWS):
        part = idx[lo : lo + KEEP_CHUNK_ROWS]
        a[lo : lo + part.size] = a[part]
    return a[: idx.size]
