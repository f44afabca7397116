"""Round robin (and ``shared``): processor sharing of a cell's channel.

Handing the resource blocks out slot by slot in turn has, in its fluid
limit, each of the n messages in service progress at 1/n of its lone rate
(egalitarian processor sharing, :func:`edgesim.network.medium.finish_ns`):
N >= R equal uploads of S bytes at per-block rate r finish together at
N S 8 / (R r). ``shared`` names the same closed form.

An LTE downlink with ``[network.radio.lte] downlink_rbg_split = "floor"`` is
shared as ns-3's ``RrFfMacScheduler`` shares it: each of the n devices served
in a TTI gets floor(G / n) of the downlink's G resource block groups and the
rest stay idle (n < G), so the cell delivers efficiency(n) = n floor(G / n) / G
of its rate (:class:`RbgFloorEfficiency`); N equal messages arriving together
finish at N S 8 / (rate efficiency(N)).
"""

from __future__ import annotations

import numpy as np

from edgesim.config import resolved_options
from edgesim.network.access.base import AccessScheme
from edgesim.network.lte.options import downlink_groups
from edgesim.network.medium import finish_ns


class RbgFloorEfficiency:
    """The share of a downlink's rate ns-3's round robin uses with n devices served: a callable.

    ``groups``: the downlink's resource block groups G (>= 1). Called with n (an int >= 1,
    or an int array elementwise), returns n floor(G / n) / G for n < G and 1 for n >= G
    (a float, or a float64 array).
    """

    def __init__(self, groups: int):
        if groups < 1:
            raise ValueError(f"groups must be >= 1, got {groups}")
        self.groups = int(groups)

    def __call__(self, n):
        """Return efficiency(n) = n floor(G / n) / G (1 for n >= G): float, or float64 array."""
        g = self.groups
        if isinstance(n, (int, np.integer)):
            return 1.0 if n >= g else n * (g // n) / g
        n = np.asarray(n, dtype=np.int64)
        return np.where(n >= g, 1.0, n * (g // np.maximum(n, 1)) / g)


class RoundRobin(AccessScheme):
    """Processor sharing: n senders each get 1/n of the channel (round robin's fluid limit)."""

    def __init__(self, radio, settings=None, **kwargs):
        super().__init__(radio, settings, **kwargs)
        #: the downlink's efficiency(n) (None: every group used): LTE's ``downlink_rbg_split``
        self.downlink_efficiency = None
        if radio.model == "lte":
            lte = resolved_options(radio, "link_options")
            if getattr(lte, "downlink_rbg_split", "whole") == "floor":
                groups = downlink_groups(self.blocks, lte.downlink_last_rbg)
                self.downlink_efficiency = RbgFloorEfficiency(groups)

    def through_ns(
        self, direction, cell, devices, sizes, arrive_ns, transfers, rng, horizon_ns=None
    ):
        """Return when each message is through (int64 ns, (m,)): processor sharing per cell
        (on an LTE downlink split 'floor', at efficiency(n) of the cell's rate)."""
        work = transfers.attempts * transfers.airtime_ns
        efficiency = self.downlink_efficiency if direction == "down" else None
        return finish_ns(arrive_ns, work, cell, "ps", efficiency=efficiency)
