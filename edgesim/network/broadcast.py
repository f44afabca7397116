"""A broadcast downlink: one copy of the message per cell, one unacknowledged transmission.

With ``downlink = 'broadcast'`` a message that is the same for every recipient
crosses the backhaul once per cell and is sent once on each cell's channel
(:meth:`~edgesim.network.cells.Cells.broadcast_ns`); each receiver may lose it.
"""

from __future__ import annotations

import numpy as np

from edgesim.network.links import Transfers, constant


class Broadcasting:
    """The server's broadcast downlinks (a part of :class:`~edgesim.network.server.NetworkServer`).

    Reads the server's ``net`` and ``cfg``.
    """

    def _broadcasts(self, down_bytes) -> bool:
        """Whether this exchange's downlink is one broadcast per cell: ``downlink = 'broadcast'``
        and one message for every recipient (a scalar size; a GatherMany's differ)."""
        return self.cfg.downlink == "broadcast" and np.ndim(down_bytes) == 0

    def _broadcast(self, dev: np.ndarray, size: int, rng, distance_m=None):
        """Draw a broadcast downlink: one copy per cell, one unacknowledged transmission.

        Returns (the recipients' Transfers: one attempt each, delivered unless
        the receiver lost it (one loss draw per recipient, ``links``), the
        airtime its cell's broadcast takes; when each copy reaches the
        recipient's access point (ns); the copies sent).
        """
        net = self.net
        sizes = np.full(dev.size, size, dtype=np.int64)
        if distance_m is None:
            lone = net.downlink.airtime_ns(dev, sizes)
        else:
            lone = net.downlink.airtime_at_ns(dev, sizes, distance_m)
        per_cell, cells, where = net.cells.broadcast_ns(dev, size, lone)
        at_cell = net.topology.wired_ns(cells, size, 0, "down")
        lost = np.asarray(net.downlink.loss.lost(dev, rng), dtype=bool)
        down = Transfers(
            attempts=np.ones(dev.size, dtype=np.int64),
            delivered=~lost,
            airtime_ns=per_cell[where],
            latency_ns=constant(dev.size, net.downlink.latency_ns),
            rto_ns=constant(dev.size, net.downlink.rto_ns),
        )
        return down, at_cell[where], int(cells.size)
