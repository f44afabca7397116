"""OFDMA: first-come waves; a message holds one resource block until it is sent.

On one block (rate r = the channel's rate / R) a message's work is R times
its lone airtime; the R blocks serve the messages first come, first served
(:func:`edgesim.network.medium.finish_ns`, ``"fifo"`` with R servers), so N
equal uploads of S bytes finish in ceil(N / R) waves of S 8 / r.
"""

from __future__ import annotations

from edgesim.network.access.base import AccessScheme
from edgesim.network.medium import finish_ns


class Ofdma(AccessScheme):
    """First-come waves: each message on one of the cell's R blocks until it is sent."""

    def through_ns(
        self, direction, cell, devices, sizes, arrive_ns, transfers, rng, horizon_ns=None
    ):
        """Return when each message is through (int64 ns, (m,)): FIFO on R one-block servers."""
        work = transfers.attempts * transfers.airtime_ns
        return finish_ns(arrive_ns, work * self.blocks, cell, "fifo", self.blocks)
