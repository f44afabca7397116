"""How the devices of one access point share its uplink: OFDMA, TDMA, processor sharing, round robin.

Each scheme is a SimPy object with one generator method, ``transmit(airtime_ns)``,
that a device process runs with ``yield from``; it returns when the
transmission has left the device. ``airtime_ns`` is the time the message
takes at the full rate of one transmission (one resource block for OFDMA).

- :class:`Ofdma`: ``R`` resource blocks (a ``simpy.Resource`` of capacity R);
  a transmission holds one block for its airtime, so N simultaneous uploads
  finish in ceil(N / R) waves. With one block per device (``"per-device"``)
  nothing is shared: :class:`Dedicated`.
- :class:`Tdma`: one transmission at a time, first come first served: the
  i-th of N simultaneous uploads finishes at i * airtime.
- :class:`ProcessorSharing`: the bandwidth is split equally among the
  concurrent senders (egalitarian processor sharing): N simultaneous uploads
  of equal size all finish at N * airtime. With R servers it is round robin
  over R resource blocks, slot by slot, in the fluid limit: each sender gets
  min(1, R / N) blocks, and N >= R uploads finish at N * airtime / R.
"""

from __future__ import annotations

import simpy


class Dedicated:
    """No contention: every device has its own channel (OFDMA with a block per device)."""

    def __init__(self, env: simpy.Environment):
        self.env = env

    def transmit(self, airtime_ns: int):
        """Hold the device's own channel for ``airtime_ns`` nanoseconds."""
        yield self.env.timeout(airtime_ns)


class Ofdma:
    """``blocks`` resource blocks; one transmission holds one block for its airtime."""

    def __init__(self, env: simpy.Environment, blocks: int):
        self.env = env
        self.blocks = simpy.Resource(env, capacity=blocks)

    def transmit(self, airtime_ns: int):
        """Wait for a free block (FIFO), hold it for ``airtime_ns`` nanoseconds."""
        with self.blocks.request() as req:
            yield req
            yield self.env.timeout(airtime_ns)


class Tdma(Ofdma):
    """One transmission at a time (a single slot), first come first served."""

    def __init__(self, env: simpy.Environment):
        super().__init__(env, 1)


class ProcessorSharing:
    """Egalitarian processor sharing of the uplink among the concurrent senders.

    With ``servers`` = 1 (``"shared"``) the n active senders split one
    transmission's rate; with ``servers`` = R (``"round-robin"``: R resource
    blocks handed out slot by slot, in the fluid limit) each sender gets
    min(1, R / n) blocks, so N >= R equal uploads of airtime a (one block)
    finish together at N a / R, within one slot of the slotted schedule.

    Virtual-time implementation: with n senders active, virtual time V runs
    at min(1, servers / n) of real time; a transmission of airtime a that
    starts at virtual time V0 ends when V reaches V0 + a. Only the earliest
    completion is scheduled; when a sender joins or leaves, it is rescheduled
    (a stale timer sees a changed generation and does nothing).
    """

    def __init__(self, env: simpy.Environment, servers: int = 1):
        self.env = env
        self.servers = servers
        self.active: dict[int, tuple[float, simpy.Event]] = {}  # job -> (finish V, done)
        self._v = 0.0
        self._t = 0
        self._generation = 0
        self._next_job = 0

    def _sharing(self) -> float:
        """Return how many senders share each server: max(1, n / servers) (its rate's inverse)."""
        n = len(self.active)
        return n if self.servers == 1 else max(1.0, n / self.servers)

    def _advance(self) -> None:
        if self.active:
            self._v += (self.env.now - self._t) / self._sharing()
        self._t = self.env.now

    def _reschedule(self) -> None:
        self._generation += 1
        if not self.active:
            return
        job, (finish, _) = min(self.active.items(), key=lambda item: item[1][0])
        delay = max(0, round((finish - self._v) * self._sharing()))
        timer = self.env.timeout(delay, value=self._generation)
        timer.callbacks.append(self._complete)

    def _complete(self, timer: simpy.Event) -> None:
        if timer.value != self._generation:
            return  # superseded by a later join or leave
        self._advance()
        # The job this timer was set for, and every other one due now (equal sizes finish
        # together); times are rounded to whole ns, so "due" allows half a ns per sender.
        first = min(self.active, key=lambda job: self.active[job][0])
        slack = 0.5 / self._sharing()
        due = max(self._v, self.active[first][0]) + slack
        done = [job for job, (finish, _) in self.active.items() if finish <= due]
        for job in done:
            _, event = self.active.pop(job)
            event.succeed()
        self._reschedule()

    def transmit(self, airtime_ns: int):
        """Send ``airtime_ns`` of full-rate work while sharing the uplink with the others."""
        self._advance()
        done = self.env.event()
        self.active[self._next_job] = (self._v + airtime_ns, done)
        self._next_job += 1
        self._reschedule()
        try:
            yield done
        finally:
            if not done.triggered:  # interrupted (cut by a deadline): leave the medium
                self._advance()
                self.active = {j: v for j, v in self.active.items() if v[1] is not done}
                self._reschedule()


ACCESS = ("ofdma", "tdma", "shared", "round-robin")


def make_access(env: simpy.Environment, access: str, blocks: int | None):
    """Return the uplink sharing scheme of one access point.

    ``access``: ``"ofdma"`` (``blocks`` resource blocks held whole per
    message; ``None`` = one per device, i.e. :class:`Dedicated`), ``"tdma"``,
    ``"shared"`` or ``"round-robin"`` (``blocks`` shared slot by slot).
    """
    if access == "ofdma":
        return Dedicated(env) if blocks is None else Ofdma(env, blocks)
    if access == "tdma":
        return Tdma(env)
    if access == "shared":
        return ProcessorSharing(env)
    if access == "round-robin":
        return Dedicated(env) if blocks is None else ProcessorSharing(env, blocks)
    raise ValueError(f"unknown access {access!r}; allowed: {ACCESS}")
