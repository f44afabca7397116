"""TDMA: one sender at a time on the whole channel, first come, first served.

A message holds the cell's whole channel for its work (its lone airtime
times its attempts); simultaneous arrivals are served in the order given
(:func:`edgesim.network.medium.finish_ns`, ``"fifo"`` with one server).
"""

from __future__ import annotations

from edgesim.network.access.base import AccessScheme
from edgesim.network.medium import finish_ns


class Tdma(AccessScheme):
    """One sender at a time on the whole channel, first come."""

    def through_ns(
        self, direction, cell, devices, sizes, arrive_ns, transfers, rng, horizon_ns=None
    ):
        """Return when each message is through (int64 ns, (m,)): FIFO on one server per cell."""
        work = transfers.attempts * transfers.airtime_ns
        return finish_ns(arrive_ns, work, cell, "fifo")
