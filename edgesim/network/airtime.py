"""A message's airtime in integer nanoseconds, and the per-size tables a Shannon link keeps."""

from __future__ import annotations

import numpy as np

from edgesim.arrays import squeezed
from edgesim.network import NS_PER_S

#: A link keeps the airtimes of at most this many message sizes (a run has a few).
AIRTIME_TABLES_KEPT = 16
#: Only a link of at most this many endpoints keeps tables (at most 32 KiB a table, 512 KiB a
#: link: nothing the memory estimate need count). A larger one computes the asked airtimes
#: each time, where the arithmetic outweighs the calls' cost anyway.
AIRTIME_TABLE_MAX_ENDPOINTS = 4096


def airtime_ns(size_bytes: np.ndarray, rate_bps: np.ndarray | float) -> np.ndarray:
    """Return 8 * size / rate in integer ns (m,), each rounded once to the nearest ns; raises
    ValueError when one does not fit in int64 ns (a rate of about 0)."""
    if np.shape(rate_bps) == size_bytes.shape:  # one size for all: its bits once
        size_bytes = squeezed(size_bytes)
    if np.logical_and.reduce(rate_bps, axis=None):  # no rate is 0: nothing to silence
        t = size_bytes * (8.0 * NS_PER_S) / rate_bps
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            t = size_bytes * (8.0 * NS_PER_S) / rate_bps
    np.rint(t, out=t)
    if t.size and not (t.max() < 2.0**62 and t.min() > -(2.0**62)):  # (false for a NaN too)
        raise ValueError("airtime does not fit in int64 ns: the link rate is (almost) zero")
    return t.astype(np.int64)


class AirtimeTables:
    """A link's airtimes of one message size at every endpoint, kept by size.

    A round's messages (the model down, the gradient up) have one size; their airtimes at
    the asked endpoints are then a gather from the table of that size (each element is
    the same division and rounding as :func:`airtime_ns` of the asked ones alone).
    """

    def __init__(self):
        self.rates: np.ndarray | None = None
        self.tables: dict[int, np.ndarray | None] = {}

    def of(self, size: int, rate_bps: np.ndarray) -> np.ndarray | None:
        """Return the airtime of ``size`` bytes at each rate of ``rate_bps`` (int64 ns, (N,),
        read-only), or None when one does not fit in int64 ns (then the caller computes the
        asked ones, which raise only if they are among them) or the link has more than
        :data:`AIRTIME_TABLE_MAX_ENDPOINTS` endpoints. A new rates array starts the tables
        anew; the rates are made read-only (changed in place, a table would be stale)."""
        if rate_bps.size > AIRTIME_TABLE_MAX_ENDPOINTS:
            return None
        if self.rates is not rate_bps:
            self.rates, self.tables = rate_bps, {}
            rate_bps.flags.writeable = False
        if size not in self.tables:
            if len(self.tables) >= AIRTIME_TABLES_KEPT:
                self.tables = {}
            try:
                table = airtime_ns(np.full(1, size, dtype=np.int64), rate_bps)
            except ValueError:
                table = None
            else:
                table.flags.writeable = False
            self.tables[size] = table
        return self.tables[size]
