"""Where an exchange's simulated time goes: downlink, computation, uplink, waiting.

The JSON's ``sim_time_s.by_direction`` splits each phase's simulated time
into four parts: the mean recipient's time. Per exchange (one row of the
trace; a secure-aggregation stage is one), of length E from its start to its
close, each recipient's E is split into:

- ``downlink``: from the start until its request arrived (0 when it did not
  receive it: lost after the ARQ cap, offline, or after a deadline);
- ``computation``: its compute time (cut short by a deadline);
- ``uplink``: from sending its reply until the reply lands at the server or
  the sender gives up (cut short by a deadline);
- ``waiting``: the rest of E: idle, waiting for a request that never came,
  for the other devices, or for a deadline.

Each part is the mean over the exchange's recipients; a phase's part is the
sum over its exchanges. So the four parts sum to the phase's time, and
``waiting`` is what stragglers cost the others. A recipient's ``downlink``
includes its wait for a shared channel, and its ``uplink`` the reply's. The
events log (:mod:`edgesim.network.timeline`) gives the same numbers: per
exchange, the durations of its ``downlink``, ``compute`` and ``uplink`` /
``lost`` rows, summed and divided by the exchange's participants.
"""

from __future__ import annotations

import numpy as np

from edgesim.arrays import every
from edgesim.network import NS_PER_S

#: The parts of a recipient's time in an exchange, in the order it goes through them.
PARTS = ("downlink", "computation", "uplink", "waiting")
#: The phases whose time is split (the JSON ``sim_time_s`` keys).
PHASES = ("phase1", "phase2")


def split_ns(plan, end_ns: int) -> tuple[int, int, int, int]:
    """Return the exchange's (downlink, computation, uplink, waiting), each summed over its
    recipients, in integer device-nanoseconds; they sum to m * ``end_ns``.

    ``plan``: the exchange's :class:`~edgesim.network.exchange_plan.Plan`
    (as run: after any battery emptied); ``end_ns``: its length, E (see the
    module docstring for the parts).
    """
    m = plan.agents.size
    if plan.steady:  # everyone received and replied in time: nothing to select or cap
        down, computing = int(plan.arrive_ns.sum()), int(plan.compute_ns.sum())
        up = int(plan.resolve_ns.sum()) - down - computing
        return down, computing, up, m * end_ns - down - computing - up
    got = plan.received  # the request arrived, before any deadline, at a device online
    arrive, compute = _those(got, plan.arrive_ns, plan.compute_ns)
    down = int(arrive.sum())
    computing = int(np.minimum(compute, end_ns - arrive).sum())
    arrive, compute, resolve = _those(
        plan.sending, plan.arrive_ns, plan.compute_ns, plan.resolve_ns
    )
    up = int((np.minimum(resolve, end_ns) - (arrive + compute)).sum())
    return down, computing, up, m * end_ns - down - computing - up


def _those(mask: np.ndarray, *arrays: np.ndarray) -> tuple:
    """Return each of ``arrays`` at ``mask``'s true rows (the arrays themselves when all are)."""
    if every(mask):
        return arrays
    return tuple(a[mask] for a in arrays)


class RoundTimes:
    """Sums each phase's exchanges' mean :func:`split_ns` (ns, as floats) for the JSON."""

    def __init__(self):
        self.ns = {phase: [0.0] * len(PARTS) for phase in PHASES}
        self._last = (None, None, None)  # (plan, end, split): a steady plan repeats as is

    def add(self, phase: str, plan, end_ns: int) -> None:
        """Count one exchange of ``phase`` (its plan and its length E, ns); returns nothing."""
        m = plan.agents.size
        if phase not in self.ns or m == 0:
            return
        last_plan, last_end, parts = self._last
        if plan is not last_plan or end_ns != last_end:
            parts = split_ns(plan, end_ns)
            if plan.steady:  # a cached plan, read-only: the next exchange may reuse it
                self._last = (plan, end_ns, parts)
        total = self.ns[phase]
        for i, part in enumerate(parts):
            total[i] += part / m

    def seconds(self) -> dict[str, dict[str, float]]:
        """Return {phase: {part: simulated seconds}} (the JSON ``sim_time_s.by_direction``)."""
        return {
            phase: {part: ns / NS_PER_S for part, ns in zip(PARTS, parts, strict=True)}
            for phase, parts in self.ns.items()
        }
