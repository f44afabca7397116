"""The events fidelity's walk: an exchange's message instants as SimPy events, in time order.

Each delivered downlink wakes its device's long-lived process
(:mod:`edgesim.network.device`) at its instant; the replies (or their
senders giving up) land at the server at theirs, which no process waits on,
so the walk takes no event for them but the last; a deadline cuts what has
not landed. The instants come from the exchange's
:class:`~edgesim.network.exchange_plan.Plan`, so both fidelities give the
same replies and times.
"""

from __future__ import annotations

import numpy as np
from simpy.events import Timeout

from edgesim.network.device import Device
from edgesim.network.exchange_plan import Plan


class EventsWalk:
    """The server's events fidelity (a part of :class:`~edgesim.network.server.NetworkServer`).

    Reads the server's ``env``, ``m`` and ``deadline_ns``; keeps the
    devices' processes.
    """

    def _start_devices(self) -> None:
        """Start one long-lived process per device (:class:`~edgesim.network.device.Device`)."""
        self.devices_ = [Device(self.env, i) for i in range(self.m)]
        # The resume callbacks of devices waiting for a message (see Device).
        self.waiting = [d.inbox.callbacks for d in self.devices_]

    def _walk(self, plan: Plan, t0: int, at_ns: np.ndarray, wake: np.ndarray, land: np.ndarray):
        """Start walking the exchange's message instants in time order; returns the walk's process.

        ``at_ns`` (relative to ``t0``): when each message arrives; ``wake``:
        the device it wakes (a downlink) or -1; ``land``: the recipient slot
        whose reply lands then, or whose sender gives up, or -1. All
        messages of one instant share one SimPy event, fired in the order
        (time, downlinks before replies, device, slot); the devices it wakes
        resume before the walk goes on. A landing resumes no process, so an
        instant with only landings takes no event, except the last (the
        walk ends there); that halves the events of an exchange to every
        agent. The walk is its own process (one generator frame to resume
        per instant) and is alone on the event queue meanwhile: per walked
        instant one push and one pop, per downlink one resume.
        The process's value: the slots whose replies it reached, in order.
        """
        order = np.lexsort((land, wake, wake < 0, at_ns))
        at, wakes, lands = at_ns[order], wake[order], land[order]
        # A landing resumes no process: only the instants that wake a device, and the last
        # (the walk's end), need an event.
        walked = wakes >= 0
        walked[-1:] = True
        at, wakes = at[walked].tolist(), wakes[walked].tolist()
        return self.env.process(self._walking(plan, t0, at, wakes, lands))

    def _walking(self, plan: Plan, t0: int, at: list, wakes: list, lands: np.ndarray):
        env, waiting = self.env, self.waiting
        n, x = len(at), 0
        while x < n:
            when = at[x]
            event = Timeout(env, t0 + when - env._now, plan)  # fires after the wakes below
            callbacks = event.callbacks
            while True:
                i = wakes[x]
                if i >= 0:
                    callbacks.append(waiting[i].pop())
                x += 1
                if x == n or at[x] != when:
                    break
            yield event
        return lands[lands >= 0]

    def _run_events(self, plan: Plan, t0: int):
        """Turn ``plan`` into SimPy events (generator); returns the in-time mask (m,).

        The delivered downlinks wake their devices; the replies (or the
        senders giving up) land at their instants; under a deadline only
        those up to it count.
        """
        env = self.env
        slots = np.flatnonzero(plan.received)
        senders = np.flatnonzero(plan.sending)
        lands = plan.resolve_ns[senders]
        if self.deadline_ns is not None:
            senders, lands = (
                senders[lands <= self.deadline_ns],
                lands[lands <= self.deadline_ns],
            )
        none_r, none_s = np.full(senders.size, -1), np.full(slots.size, -1)
        landed = yield self._walk(
            plan,
            t0,
            np.concatenate([plan.arrive_ns[slots], lands]),
            np.concatenate([plan.agents[slots], none_r]),
            np.concatenate([none_s, senders]),
        )
        end = self._end_of(plan)
        if t0 + end > env.now:
            yield env.timeout(t0 + end - env.now)
        in_time = ~plan.sending
        in_time[landed] = True
        return in_time
