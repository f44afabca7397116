"""A dataset prepared for a model (:class:`Design`: features with the intercept column, the
agents' row blocks) and the row-block helpers every model uses on it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from edgesim.learning.data import FederatedDataset
from edgesim.learning.segments import BLOCK_ROWS, row_blocks, segment_sum


def add_intercept(X: np.ndarray) -> np.ndarray:
    """Return ``X`` with a column of ones appended, shape (n, d + 1), in ``X``'s float dtype.

    When ``X`` is already the first d columns of an (n, d + 1) array whose last column is
    ones (how the synthetic source stores its samples), that array is returned, not a copy.
    """
    base = X.base
    if (
        base is not None
        and base.ndim == 2
        and base.shape == (X.shape[0], X.shape[1] + 1)
        and base.dtype == X.dtype
        and base.strides == X.strides
        and X.__array_interface__["data"][0] == base.__array_interface__["data"][0]
        and bool(np.all(base[:, -1] == 1.0))
    ):
        return base
    dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
    out = np.empty((X.shape[0], X.shape[1] + 1), dtype=dtype)
    out[:, :-1] = X
    out[:, -1] = 1.0
    return out


def as_float64(rows: np.ndarray) -> np.ndarray:
    """Return ``rows`` as float64: the array itself when it is float64, else a converted copy.

    Samples stored in float32 (``data.precision``) are converted block by block before
    any arithmetic, so every sum accumulates in float64 exactly as for float64 storage.
    """
    return rows if rows.dtype == np.float64 else rows.astype(np.float64)


@dataclass(frozen=True, eq=False)
class Design:
    """A dataset prepared for a model: features with the intercept column.

    ``Xa`` (n, d') and ``Xa_test`` are the design matrices; ``starts`` the
    first row of each agent's block (K,); ``n_k`` the block sizes (K,).
    """

    data: FederatedDataset
    Xa: np.ndarray
    Xa_test: np.ndarray
    starts: np.ndarray
    n_k: np.ndarray
    starts_test: np.ndarray
    n_k_test: np.ndarray
    blocks: tuple = ()

    @classmethod
    def of(cls, data: FederatedDataset, intercept: bool) -> Design:
        """Build the design of ``data``; every agent needs at least one training sample."""
        n_k = data.n_k
        if np.any(n_k == 0):
            k = int(np.flatnonzero(n_k == 0)[0])
            raise ValueError(f"agent {k} has no training samples")
        Xa = add_intercept(data.X) if intercept else data.X
        Xa_test = add_intercept(data.X_test) if intercept else data.X_test
        off = data.offsets
        n_kt = data.n_k_test
        off_t = np.concatenate([[0], np.cumsum(n_kt)])
        return cls(data, Xa, Xa_test, off[:-1], n_k, off_t[:-1], n_kt, row_blocks(off))

    def split(self, test: bool):
        """Return (Xa, y, agent, starts, n_k) of the training or the test samples."""
        if test:
            d = self.data
            return self.Xa_test, d.y_test, d.agent_test, self.starts_test, self.n_k_test
        return self.Xa, self.data.y, self.data.agent, self.starts, self.n_k

    def agent_means(self, values: np.ndarray, test: bool) -> np.ndarray:
        """Return each agent's mean of per-sample ``values`` (K,); NaN for an agent without samples."""
        _, _, _, starts, n_k = self.split(test)
        sums = segment_sum(values, starts, n_k)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n_k > 0, sums / np.maximum(n_k, 1), np.nan)

    @property
    def K(self) -> int:
        """Number of agents."""
        return self.data.K

    @cached_property
    def n_k_float(self) -> np.ndarray:
        """Return ``n_k`` as float64 (K,): a divisor of every round's reports, cast once (an
        int64 divisor is cast to float64 by the division itself: the same quotients)."""
        return self.n_k.astype(np.float64)

    def block_part(self, i: int) -> tuple:
        """Return what every round's reports take of row block ``i``: (its ``y``, its agents'
        first rows relative to the block (int64), their ``n_k``, and ``n_k_float`` as a
        column)."""
        a0, a1, r0, r1 = self.blocks[i]
        return (
            self.data.y[r0:r1],
            self.starts[a0:a1] - r0,
            self.n_k[a0:a1],
            self.n_k_float[a0:a1, None],
        )

    @cached_property
    def equal_blocks(self) -> bool:
        """Whether every agent has as many training rows as the others (then the segment sums
        of :func:`~edgesim.learning.segments.segment_sum` are batched products, not sparse)."""
        return bool(self.n_k.size) and int(self.n_k.min()) == int(self.n_k.max())

    @cached_property
    def everyone(self) -> np.ndarray:
        """Return 0..K-1 (int64): every agent, made once."""
        return np.arange(self.K, dtype=np.int64)

    @cached_property
    def block_parts(self) -> tuple | None:
        """Return :meth:`block_part` of every block of a small design (at most
        :data:`KEPT_BLOCKS` blocks), made once (a K = 2 search takes 80 000 rounds); None for
        a larger design, whose blocks are sliced per round (no K-sized copy kept)."""
        if len(self.blocks) > KEPT_BLOCKS:
            return None
        return tuple(self.block_part(i) for i in range(len(self.blocks)))

    @cached_property
    def row_norms(self) -> np.ndarray:
        """Return ||x_i|| of every training row of ``Xa`` (intercept included), shape (n,).

        Per-sample gradient norms factorise through it (see :meth:`Model.agent_grads`),
        so clipping needs this one (n,) array, never an (n, n_params) one.
        """
        Xa = self.Xa
        return by_row_blocks(
            Xa.shape[0], lambda sl: np.sqrt(np.einsum("ij,ij->i", *[as_float64(Xa[sl])] * 2))
        )


#: :attr:`Design.block_parts` keeps the slices of designs of at most this many row blocks.
KEPT_BLOCKS = 8


def by_row_blocks(n: int, per_block) -> np.ndarray:
    """Return ``per_block(rows)`` for consecutive slices of BLOCK_ROWS rows, joined, shape (n,).

    A model per agent gathered per row (``W[agent]``) is (rows, n_params): built for
    all n rows at once it would outweigh the data; by blocks it stays cache-sized.
    """
    out = np.empty(n)
    for lo in range(0, n, BLOCK_ROWS):
        sl = slice(lo, lo + BLOCK_ROWS)
        out[sl] = per_block(sl)
    return out
