"""Moving devices: each exchange attaches them to their nearest access point (handovers).

With a mobility model (:mod:`edgesim.network.mobility`) a device's position
changes with time: at each exchange's start it attaches to the access point
nearest to it (a handover when that changes) and the exchange's messages stay
on that cell; its distance there sets its radio rate.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree


class MovingDevices:
    """The server's moving devices (a part of :class:`~edgesim.network.server.NetworkServer`).

    Reads the server's ``net``, ``devices`` and ``events_log``; keeps
    ``sites`` (the access points' index for the nearest one, None when
    devices do not move) and ``handovers`` (how many so far).
    """

    def _start_moving(self) -> None:
        """Index the access points and attach the devices where they start (no handover)."""
        net = self.net
        self.sites = cKDTree(net.topology.ap_xy) if net.mobility is not None else None
        self.handovers = 0
        if self.sites is not None:  # where they start: an association, not a handover
            self._attach(self.devices, 0)
            self.handovers = 0

    def _attach(self, dev: np.ndarray, t_ns: int) -> np.ndarray | None:
        """Moving devices: attach each to its nearest access point at ``t_ns`` (a handover when
        that changes; the exchange's messages stay on that cell) and return its distance there
        (m); None when devices do not move."""
        if self.sites is None:
            return None
        xy = self.net.mobility.position(dev, t_ns)
        _, nearest = self.sites.query(xy)
        ap_of = self.net.topology.ap_of
        moved = ap_of[dev] != nearest
        self.handovers += int(moved.sum())
        if self.events_log is not None and moved.any():
            self.events_log.handovers(dev[moved], t_ns)
        ap_of[dev] = nearest
        return np.hypot(*(xy - self.net.topology.ap_xy[nearest]).T)

    def _distance(self, dev: np.ndarray, t_ns: np.ndarray) -> np.ndarray:
        """Return each moving device's distance (m) to its attached access point at ``t_ns``."""
        xy = self.net.mobility.position(dev, t_ns)
        return np.hypot(*(xy - self.net.topology.ap_xy[self.net.topology.ap_of[dev]]).T)
