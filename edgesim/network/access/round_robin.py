"""Round robin (and ``shared``): processor sharing of a cell's channel.

Handing the resource blocks out slot by slot in turn has, in its fluid
limit, each of the n messages in service progress at 1/n of its lone rate
(egalitarian processor sharing, :func:`edgesim.network.medium.finish_ns`):
N >= R equal uploads of S bytes at per-block rate r finish together at
N S 8 / (R r). ``shared`` names the same closed form.
"""

from __future__ import annotations

from edgesim.network.access.base import AccessScheme
from edgesim.network.medium import finish_ns


class RoundRobin(AccessScheme):
    """Processor sharing: n senders each get 1/n of the channel (round robin's fluid limit)."""

    def through_ns(
        self, direction, cell, devices, sizes, arrive_ns, transfers, rng, horizon_ns=None
    ):
        """Return when each message is through (int64 ns, (m,)): processor sharing per cell."""
        work = transfers.attempts * transfers.airtime_ns
        return finish_ns(arrive_ns, work, cell, "ps")
