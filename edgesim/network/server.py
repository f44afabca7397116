"""The edge server: drives any mechanism generator over the simulated network.

One module on purpose: the plan of an exchange, its two fidelities (events,
batched) and the round policies share the same Plan arrays and must draw the
same random numbers in the same order, which is easiest to keep true side by side.

Each :class:`~edgesim.mechanisms.protocol.Gather` becomes an *exchange*: a
downlink message to every recipient (wired backhaul, then the radio), the
device's compute time, and an uplink reply (radio, then backhaul). At the
exchange's start the server draws, vectorised over the recipients and in a
fixed order, everything random about it (:meth:`NetworkServer.plan_exchange`):

1. downlink radio transfers (``links`` stream: losses, attempts), then the
   downlink scheduler's fading if it draws any (proportional fair);
2. whether each device is online when the message arrives (``availability``);
3. compute times (``compute``);
4. whether each device is still online when it would send (``availability``);
5. uplink radio transfers of the devices that send (``links``), then the
   uplink scheduler's fading, if any.

Shared media (a cell's channel, a wired hop) are scheduled in the plan too:
when each message reaches each medium is known from these draws, so its
schedule is computed there (:mod:`edgesim.network.cells`,
:mod:`edgesim.network.medium`), and so is every message's arrival instant.
Fidelities differ only in how that plan becomes time:

- ``events``: each delivered message is handled at its own instant, in time
  order: the downlinks wake their devices' long-lived processes
  (:mod:`edgesim.network.device`), the replies land at the server, and a
  deadline cuts what has not landed.
- ``batched``: the server computes the round's end from the plan and waits
  on one timeout.

Both give the same replies, times and counts, so the same JSON: times are
integer nanoseconds, and sums of integers are exact.

Round policies: ``wait-all`` closes the exchange when every recipient's
outcome is known (reply arrived, sender gave up after the ARQ cap, or the
device went offline: the server is told at once, as a dropped connection
would); ``deadline`` closes it at ``deadline_s`` at the latest, and the
agents whose replies had not arrived are *cut* (their work is abandoned).
Either way the mechanism receives the replies that arrived, in agent order,
and reweights (:func:`edgesim.mechanisms.base.weighted_total`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import simpy
from scipy.spatial import cKDTree
from simpy.events import NORMAL, Timeout

from edgesim import progress
from edgesim.mechanisms.driver import AgentSide, Counters
from edgesim.mechanisms.protocol import Gather, GatherMany
from edgesim.network import to_ns
from edgesim.network.availability import AlwaysOn
from edgesim.network.compute import ComputeModel
from edgesim.network.device import Device
from edgesim.network.energy import EnergyMeter
from edgesim.network.links import FixedLink, NoLoss, ShannonLink, Transfers, constant
from edgesim.network.secure_round import SecureRounds
from edgesim.network.timeline import EventLog
from edgesim.network.trace import Trace
from edgesim.network.transport import tcp_extra_ns

#: Deadline timers fire after every other event scheduled for the same instant,
#: so a reply arriving exactly at the deadline counts.
DEADLINE_PRIORITY = NORMAL + 1


def _fire_at(env: simpy.Environment, event: simpy.Event, value, delay_ns: int, priority=NORMAL):
    """Trigger ``event`` with ``value`` ``delay_ns`` from now: one scheduled event, no extra timer.

    The same initialisation as ``simpy.Timeout`` performs, applied to an event
    a process already waits on (the device's inbox).
    """
    event._ok = True
    event._value = value
    env.schedule(event, priority, delay_ns)


@dataclass(eq=False)
class Plan:
    """Everything drawn at the start of one exchange; times relative to its start, in ns.

    Arrays of shape (m,) are aligned with ``agents`` (the recipients);
    ``up`` holds the uplinks of the senders only.
    """

    agents: np.ndarray
    received: np.ndarray  # the downlink arrived and the device was online
    arrive_ns: np.ndarray
    compute_ns: np.ndarray
    sending: np.ndarray  # online when it would send: an uplink message is sent
    up: object  # links.Transfers of the senders
    resolve_ns: np.ndarray  # when the server knows this recipient's outcome
    reply_ok: np.ndarray  # the reply reaches the server (before any deadline)
    late: np.ndarray  # under a deadline: would only reach or leave the device after it
    down_lost: int
    down_transmissions: int
    down_retransmissions: int
    down_air_ns: np.ndarray | None = None  # each recipient's time receiving (0 if offline)
    reports: np.ndarray | None = None  # local gradients each recipient computes
    down_copies: int | None = None  # a broadcast: the copies sent (one per cell), else None
    steady: bool = False  # from the steady-exchange cache: every recipient received and replied
    end_ns: int | None = None  # the exchange's length, when the cache knows it


class NetworkServer:
    """Runs mechanism generators over one simulated network.

    ``net``: the assembled network (:class:`~edgesim.network.build.Network`:
    topology, links, compute and availability models, random streams);
    ``agent_side``: computes the agents' reports; ``devices``: for each of
    the mechanism's agents (0..m-1) the device (scenario agent id) it runs on;
    ``events_window``: (start, end) seconds in which to log device events
    (:class:`~edgesim.network.timeline.EventLog`), or None.
    """

    def __init__(self, net, agent_side: AgentSide, devices: np.ndarray, events_window=None):
        self.net = net
        self.cfg = net.cfg
        self.side = agent_side
        self.devices = np.asarray(devices)
        self.m = self.devices.size
        self.env = simpy.Environment()
        self.counters = Counters()
        self.trace = Trace(self.m)
        self.events = self.cfg.fidelity == "events"
        self.deadline_ns = (
            to_ns(self.cfg.deadline_s) if self.cfg.round_policy == "deadline" else None
        )
        self.plan: Plan | None = None
        self.always_on = isinstance(net.availability, AlwaysOn)
        self.secure = SecureRounds(net.cfg.secagg, net.rng["secagg"])
        self.round_index: dict[str, int] = {}
        #: every agent, in order: the recipients of a Gather to all (see _steady_plan)
        self.everyone = np.arange(self.m)
        self.steady_ok = (
            self.always_on
            and self.deadline_ns is None
            and not net.cells.draws
            and not (net.cells.joint and not _deterministic_compute(net.compute))
            and self.cfg.downlink != "broadcast"
            and self.cfg.energy.battery_j == "none"
            and net.mobility is None
            and all(_deterministic_lossless(link) for link in (net.downlink, net.uplink))
        )
        self._steady: dict[tuple[int, int], dict] = {}
        self.events_log = None if events_window is None else EventLog(events_window)
        #: moving devices: the access points' index for the nearest one, and handovers so far
        self.sites = cKDTree(net.topology.ap_xy) if net.mobility is not None else None
        self.handovers = 0
        if self.sites is not None:  # where they start: an association, not a handover
            self._attach(self.devices, 0)
            self.handovers = 0
        self.energy = (
            None
            if net.cfg.energy.model == "none"
            else EnergyMeter(net.cfg.energy, net.n_k[self.devices])
        )
        if self.events:
            self._start_devices()

    # ------------------------------------------------------------------ events fidelity
    def _start_devices(self) -> None:
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
        resume before the walk goes on. The walk is its own process (one
        generator frame to resume per instant) and is alone on the event
        queue meanwhile: per instant one push and one pop, per message one
        resume.
        The process's value: the slots whose replies it reached, in order.
        """
        order = np.lexsort((land, wake, wake < 0, at_ns))
        at, wakes, lands = at_ns[order], wake[order], land[order]
        return self.env.process(self._walking(plan, t0, at.tolist(), wakes.tolist(), lands))

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

    # ------------------------------------------------------------------ planning
    def plan_exchange(
        self, agents: np.ndarray, down_bytes, up_bytes: np.ndarray, compute=True
    ) -> Plan:
        """Draw everything random about one exchange (see the module docstring for the order).

        Under a deadline, a downlink arriving after it, or a device that would
        only start sending after it, is *late*: availability is not asked
        about times past the deadline (the round is closed by then), and no
        uplink is drawn for it.
        """
        if self.steady_ok and agents is self.everyone and compute is True:
            plan = self._steady_plan(down_bytes, up_bytes)
            if plan is not None:
                return plan
        if self.net.cells.joint:
            return self._plan_joint(agents, down_bytes, up_bytes, compute)
        net = self.net
        dev = self.devices[agents]
        m = agents.size
        t0 = self.env.now
        horizon = self.deadline_ns
        rng = net.rng["links"]
        down_sizes = np.broadcast_to(np.asarray(down_bytes, dtype=np.int64), (m,))
        copies = None
        here = self._attach(dev, t0)  # moving devices: their distance now, or None
        if self._broadcasts(down_bytes):
            down, at_ap, copies = self._broadcast(dev, int(down_bytes), rng, here)
            arrive = at_ap + down.airtime_ns + down.after_ns
        else:
            down = net.downlink.send(dev, down_sizes, rng, here)
            arrive = self._arrive_ns(dev, down_sizes, down, rng)
        delivered = down.delivered if horizon is None else down.delivered & (arrive <= horizon)
        received = delivered.copy()
        if not self.always_on:
            ask = np.flatnonzero(delivered)
            received[ask] = net.availability.online(dev[ask], t0 + arrive[ask])
        if self.energy is not None and self.energy.battery is not None:
            received &= ~self.energy.dead[agents]  # an empty battery: offline for good
        reports = self._reports(m, compute)
        compute = self._compute_ns(dev, compute)
        send_at = arrive + compute
        ready = received if horizon is None else received & (send_at <= horizon)
        sending = ready.copy()
        if not self.always_on:
            ask = np.flatnonzero(ready)
            sending[ask] = net.availability.online(dev[ask], t0 + send_at[ask])
        senders = np.flatnonzero(sending)
        up_sizes = np.asarray(up_bytes, dtype=np.int64)[senders]
        there = None if here is None else self._distance(dev[senders], t0 + send_at[senders])
        up = net.uplink.send(dev[senders], up_sizes, rng, there)
        resolved = self._resolve_ns(dev[senders], up_sizes, send_at[senders], up, rng)
        masks = (delivered, received, ready, sending)
        return self._plan_of(agents, down, copies, arrive, (compute, reports), masks, up, resolved)

    def _plan_of(self, agents, down, copies, arrive, computing, masks, up, resolved) -> Plan:
        """Assemble an exchange's Plan from its draws and schedule.

        ``masks``: (delivered before any deadline, received: delivered and
        online, ready: received and able to send before the deadline,
        sending: ready and online); ``computing``: (compute times, local
        gradients) of each recipient; ``resolved``: when each sender's reply
        reaches the server or its sender gives up.
        """
        delivered, received, ready, sending = masks
        compute, reports = computing
        m = agents.size
        horizon = self.deadline_ns
        # When the server knows each outcome (relative to t0); late ones only after the deadline.
        resolve = np.where(received, arrive + compute, arrive)
        if horizon is not None:
            late = (down.delivered & ~delivered) | (received & ~ready)
            resolve[late] = horizon + 1
        else:
            late = np.zeros(m, dtype=bool)
        resolve[sending] = resolved
        reply_ok = np.zeros(m, dtype=bool)
        reply_ok[sending] = up.delivered
        return Plan(
            agents=agents,
            received=received,
            arrive_ns=arrive,
            compute_ns=compute,
            sending=sending,
            up=up,
            resolve_ns=resolve,
            reply_ok=reply_ok,
            late=late,
            down_lost=int((~down.delivered).sum() + (delivered & ~received).sum()),
            down_transmissions=down.transmissions if copies is None else copies,
            down_retransmissions=down.retransmissions,
            down_air_ns=np.where(delivered & ~received, 0, down.attempts * down.airtime_ns),
            reports=reports,
            down_copies=copies,
        )

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

    @staticmethod
    def _reports(m: int, compute) -> np.ndarray:
        """Return the local gradients each of ``m`` recipients computes (int64): 0, 1, or its reports."""
        if compute is False or compute is True:
            return np.full(m, int(compute), dtype=np.int64)
        return np.asarray(compute, dtype=np.int64)

    def _compute_ns(self, dev: np.ndarray, compute) -> np.ndarray:
        """Return each device's compute time (int64 ns): none (``False``), one draw (``True``),
        or one draw times its number of reports (a GatherMany's array)."""
        if compute is False:
            return np.zeros(dev.size, dtype=np.int64)
        times = self.net.compute.times_ns(dev, self.net.rng["compute"])
        return times if compute is True else times * np.asarray(compute)

    def _plan_joint(self, agents: np.ndarray, down_bytes, up_bytes, compute) -> Plan:
        """The plan of an exchange on Wi-Fi cells: both directions share one medium.

        Draw order: downlink transfers, compute times, then the uplink
        transfers of every device its downlink reaches (``links``); then the
        cells' contention is walked (:meth:`Cells.joint_ns`), which decides
        when each downlink arrives and each reply leaves. Devices are always
        on (the scenario check refuses churn with ``wifi``); under a deadline
        what would arrive or start after it is late, as on other cells.
        """
        net = self.net
        dev = self.devices[agents]
        m = agents.size
        horizon = self.deadline_ns
        rng = net.rng["links"]
        down_sizes = np.broadcast_to(np.asarray(down_bytes, dtype=np.int64), (m,))
        up_sizes = np.broadcast_to(np.asarray(up_bytes, dtype=np.int64), (m,))
        copies = None
        self._attach(dev, self.env.now)  # moving devices: handover (Wi-Fi rates are fixed)
        if self._broadcasts(down_bytes):
            down, at_ap, copies = self._broadcast(dev, int(down_bytes), rng)
            # the cell's receivers share the one broadcast in equal parts, so all of them
            # have it when the whole is through (rounded up: within a ns per receiver)
            _, where = np.unique(net.topology.ap_of[dev], return_inverse=True)
            receivers = np.bincount(where)[where]
            down_work = -(-down.airtime_ns // receivers)
        else:
            down = net.downlink.send(dev, down_sizes, rng)
            start = self._transport_ns(down_sizes, down)
            at_ap = net.topology.wired_ns(net.topology.ap_of[dev], down_sizes, start, "down")
            down_work = net.cells.medium_work_ns(down_sizes, down.attempts * down.airtime_ns)
        if self.energy is not None and self.energy.battery is not None:
            down = down.take(np.arange(m))  # a copy: the empty batteries' devices lose it
            down.delivered[self.energy.dead[agents]] = False
        reports = self._reports(m, compute)
        compute = self._compute_ns(dev, compute)
        reached = np.flatnonzero(down.delivered)
        up_all = net.uplink.send(dev[reached], up_sizes[reached], rng)
        up_work = np.zeros(m, dtype=np.int64)
        up_work[reached] = net.cells.medium_work_ns(
            up_sizes[reached], up_all.attempts * up_all.airtime_ns
        )
        up_start = np.zeros(m, dtype=np.int64)
        up_start[reached] = self._transport_ns(up_sizes[reached], up_all)
        down_through, up_through = net.cells.joint_ns(
            dev, at_ap, down_work, down.after_ns + compute + up_start, up_work, down.delivered
        )
        arrive = down_through + down.after_ns
        received = down.delivered if horizon is None else down.delivered & (arrive <= horizon)
        send_at = arrive + compute
        sending = received if horizon is None else received & (send_at <= horizon)
        senders = np.flatnonzero(sending)
        row = np.full(m, -1, dtype=np.int64)
        row[reached] = np.arange(reached.size)
        up = up_all.take(row[senders])
        resolved = self._wired_up(
            dev[senders], up_sizes[senders], up_through[senders] + up.after_ns, up
        )
        masks = (received, received, sending, sending)
        return self._plan_of(agents, down, copies, arrive, (compute, reports), masks, up, resolved)

    def _arrive_ns(self, dev: np.ndarray, sizes: np.ndarray, down, rng) -> np.ndarray:
        """Return when each downlink reaches its device, or its sender gives up (ns from the start).

        The server sends every message at once; each crosses the wired path
        to its access point (shared hops), then the cell's downlink channel.
        """
        net = self.net
        start = self._transport_ns(sizes, down)
        at_ap = net.topology.wired_ns(net.topology.ap_of[dev], sizes, start, "down")
        through = net.cells.through_ns("down", dev, sizes, at_ap, down, rng, self.deadline_ns)
        return through + down.after_ns

    def _transport_ns(self, sizes: np.ndarray, transfers) -> np.ndarray | int:
        """Return TCP's handshake and slow-start time of each message (int64 ns), or 0 when the
        transport is ideal (:mod:`edgesim.network.transport`)."""
        cfg = self.cfg
        if cfg.transport != "tcp":
            return 0
        return tcp_extra_ns(
            sizes, transfers.airtime_ns, self.net.rtt_ns, cfg.tcp_initial_window, cfg.tcp_mss_bytes
        )

    def _resolve_ns(self, dev: np.ndarray, sizes: np.ndarray, send_at, up, rng) -> np.ndarray:
        """Return when each reply reaches the server, or its sender gives up (ns from the start).

        A reply sent at ``send_at`` crosses the cell's uplink channel, then,
        if delivered, the wired path (shared hops).
        """
        send_at = send_at + self._transport_ns(sizes, up)
        through = self.net.cells.through_ns("up", dev, sizes, send_at, up, rng, self.deadline_ns)
        return self._wired_up(dev, sizes, through + up.after_ns, up)

    def _wired_up(self, dev: np.ndarray, sizes: np.ndarray, at_ap: np.ndarray, up) -> np.ndarray:
        """Return when each reply reaches the server: the delivered ones cross the wired path
        from ``at_ap``; the others' senders give up at ``at_ap`` (ns from the start)."""
        out = at_ap.copy()
        ok = np.flatnonzero(up.delivered)
        if ok.size:
            aps = self.net.topology.ap_of[dev[ok]]
            out[ok] = self.net.topology.wired_ns(aps, sizes[ok], out[ok], "up")
        return out

    def _steady_plan(self, down_bytes, up_bytes) -> Plan | None:
        """The plan of a steady exchange, or None when this one is not steady.

        Steady: to every agent, messages of one size each way, on built-in
        lossless links, devices always on, no deadline, no scheduler that
        draws. Then everything but the compute times is the same in every
        such exchange (nothing else draws), so it is computed once per pair
        of sizes and kept; the compute times are drawn as
        :meth:`plan_exchange` draws them, and the uplinks scheduled from
        them, unless the built-in model is deterministic (then the whole plan
        repeats). The plan equals the one the general path would make (a
        test compares them); its cached arrays are shared and read-only.
        """
        up = np.asarray(up_bytes)
        if np.ndim(down_bytes) != 0 or up.ndim != 1 or up.size != self.m:
            return None
        if self.m and not (up == up[0]).all():
            return None
        key = (int(down_bytes), int(up[0]) if self.m else 0)
        if self.net.cells.joint:  # Wi-Fi: the whole exchange repeats (deterministic compute)
            if key not in self._steady:
                plan = self._plan_joint(self.everyone, down_bytes, up, True)
                self._steady[key] = dataclasses.replace(
                    plan, steady=True, end_ns=int(plan.resolve_ns.max()) if self.m else 0
                )
            return self._steady[key]
        c = self._steady.get(key)
        if c is None:
            c = self._steady[key] = self._steady_parts(key)
        if "resolve" in c:  # deterministic compute times: the whole plan repeats
            compute, resolve = c["compute"], c["resolve"]
        else:
            compute = self.net.compute.times_ns(self.devices, self.net.rng["compute"])
            resolve = self._resolve_ns(
                self.devices, c["up_sizes"], c["arrive"] + compute, c["up"], None
            )
        return Plan(
            agents=self.everyone,
            received=c["yes"],
            arrive_ns=c["arrive"],
            compute_ns=compute,
            sending=c["yes"],
            up=c["up"],
            resolve_ns=resolve,
            reply_ok=c["yes"],
            late=c["no"],
            down_lost=0,
            down_transmissions=self.m,
            down_retransmissions=0,
            down_air_ns=c["down_air"],
            reports=c["ones"],
            steady=True,
            end_ns=c.get("end"),
        )

    def _steady_parts(self, key: tuple[int, int]) -> dict:
        """Compute what every steady exchange with message sizes ``key`` shares (see above)."""
        net, m = self.net, self.m
        down_sizes, up_sizes = (np.full(m, size, dtype=np.int64) for size in key)
        down = net.downlink.send(self.devices, down_sizes, None)
        parts = {
            "arrive": self._arrive_ns(self.devices, down_sizes, down, None),
            "down_air": down.attempts * down.airtime_ns,
            "ones": np.ones(m, dtype=np.int64),
            "up": net.uplink.send(self.devices, up_sizes, None),
            "up_sizes": up_sizes,
            "yes": np.ones(m, dtype=bool),
            "no": np.zeros(m, dtype=bool),
        }
        if _deterministic_compute(net.compute):
            parts["compute"] = net.compute.times_ns(self.devices, None)  # draws nothing
            send_at = parts["arrive"] + parts["compute"]
            parts["resolve"] = self._resolve_ns(self.devices, up_sizes, send_at, parts["up"], None)
            parts["end"] = int(parts["resolve"].max()) if m else 0
        for a in parts.values():
            if isinstance(a, np.ndarray):
                a.flags.writeable = False
        return parts

    def _end_of(self, plan: Plan) -> int:
        """Return the exchange's length (ns) under the round policy, from the plan alone."""
        if plan.end_ns is not None:
            return plan.end_ns
        end = int(plan.resolve_ns.max()) if plan.resolve_ns.size else 0
        return end if self.deadline_ns is None else min(end, self.deadline_ns)

    # ------------------------------------------------------------------ exchanges
    def exchange(
        self,
        agents,
        down_bytes,
        up_bytes,
        phase,
        problem,
        stage="round",
        compute=True,
        overhead=None,
    ):
        """Run one exchange (SimPy generator); returns the agents whose replies arrived in time.

        ``down_bytes``: size of the message to each recipient (scalar or (m,));
        ``up_bytes``: size of each reply (m,); ``stage``: the trace label
        (``"round"``, or a secure-aggregation stage); ``compute``: whether
        the devices compute before replying; ``overhead``: (down, up) flags
        saying which direction counts as secure-aggregation overhead.
        """
        t0 = self.env.now
        plan = self.plan_exchange(agents, down_bytes, up_bytes, compute)
        if self.events:
            in_time = yield from self._run_events(plan, t0)
            end = self.env.now - t0
        else:
            end = self._end_of(plan)
            yield self.env.timeout(end)
            in_time = None if plan.steady else plan.resolve_ns <= end
        energy_j = 0.0
        if self.energy is not None:
            plan, energy_j = self._spend(plan, agents, phase, end)
        m = agents.size
        c = self.counters
        tr = self.trace
        if plan.steady:  # every message delivered once, every reply in time (wait-all)
            replied = plan.reply_ok
            cut = plan.late
            bytes_down = m * int(down_bytes)
            bytes_up = m * int(up_bytes[0]) if m else 0
            up_transmissions = m
            retrans = lost = 0
            tr.add_to_every_agent(int(down_bytes), int(up_bytes[0]) if m else 0)
        else:
            replied = plan.reply_ok & in_time
            cut = (plan.sending & ~in_time) | plan.late
            up = plan.up
            senders = np.flatnonzero(plan.sending)
            bytes_down = int(np.broadcast_to(np.asarray(down_bytes, dtype=np.int64), (m,)).sum())
            if plan.down_copies is not None:  # a broadcast: one copy per cell
                bytes_down = plan.down_copies * int(down_bytes)
            sent_up = np.asarray(up_bytes, dtype=np.int64)[senders]
            bytes_up = int(sent_up.sum())
            up_transmissions = up.transmissions
            retrans = plan.down_retransmissions + up_transmissions - senders.size
            lost = plan.down_lost + up.dropped
            # To everyone (agents 0..K-1 in order): an agent's index is its position.
            who = slice(None) if agents is self.everyone else agents
            sent_by = senders if agents is self.everyone else agents[senders]
            tr.agent_messages_down[who] += 1
            tr.agent_messages_up[sent_by] += 1
            tr.agent_bytes_down[who] += np.asarray(down_bytes, dtype=np.int64)
            tr.agent_bytes_up[sent_by] += sent_up
            tr.agent_transmissions[sent_by] += up.attempts
            tr.agent_lost[agents[~plan.received]] += 1
            tr.agent_lost[sent_by[~up.delivered]] += 1
            tr.agent_cut[agents[cut]] += 1
        n_cut = 0 if plan.steady else int(cut.sum())
        senders_n = int(plan.sending.sum()) if not plan.steady else m
        c.messages_down += m if plan.down_copies is None else plan.down_copies
        c.messages_up += senders_n
        c.bytes_down += bytes_down
        c.bytes_up += bytes_up
        c.transmissions_up += up_transmissions
        c.retransmissions += retrans
        c.dropped += lost + n_cut
        counted = stage in ("round", "masked_input")
        c.rounds[phase] = c.rounds.get(phase, 0) + counted
        key = (phase, problem)
        index = self.round_index.get(key, 0)
        if counted:
            self.round_index[key] = index + 1
        down_over, up_over = overhead or (False, False)
        sec_messages = m * down_over + senders_n * up_over
        sec_bytes = bytes_down * down_over + bytes_up * up_over
        tr.add(
            phase=phase,
            round=index,
            problem=problem,
            stage=stage,
            start_ns=t0,
            end_ns=t0 + end,
            participants=m,
            replies=int(replied.sum()),
            bytes_down=bytes_down,
            bytes_up=bytes_up,
            transmissions=plan.down_transmissions + up_transmissions,
            retransmissions=retrans,
            lost=lost,
            cut=n_cut,
            secagg_messages=sec_messages,
            secagg_bytes=sec_bytes,
            energy_j=energy_j,
        )
        if self.events_log is not None and self.events_log.covers(t0, t0 + end):
            cuts = np.zeros(m, dtype=bool) if plan.steady else cut
            self.events_log.record(plan, self.devices[agents], t0, end, phase, index, cuts)
        return agents if plan.steady else agents[replied]

    def _spend(self, plan: Plan, agents, phase: str, end_ns: int) -> tuple[Plan, float]:
        """Count the exchange's energy (:class:`EnergyMeter`); returns (the plan, the energy all
        devices spent in it, J). A device whose battery empties during the exchange sends
        nothing (as a device offline when it would reply); the plan returned says so."""
        m = agents.size
        tx = np.zeros(m, dtype=np.int64)
        tx[plan.sending] = plan.up.attempts * plan.up.airtime_ns
        on = plan.received
        dying, spent = self.energy.exchange(
            phase,
            agents,
            end_ns,
            plan.down_air_ns,
            tx,
            np.where(on, plan.compute_ns, 0),
            np.where(on, plan.reports, 0),
        )
        if not (dying & plan.sending).any():
            return plan, spent
        keep = ~dying[plan.sending]  # among the senders, in order
        plan = dataclasses.replace(
            plan,
            sending=plan.sending & ~dying,
            reply_ok=plan.reply_ok & ~dying,
            up=plan.up.take(np.flatnonzero(keep)),
        )
        return plan, spent

    def gather(self, step: Gather | GatherMany):
        """Answer one mechanism step over the network (SimPy generator returning Replies).

        A :class:`GatherMany` is one exchange: each recipient gets one message with
        its parts' models, computes one report per part (its compute time times
        the number of reports) and sends them in one reply; returns a list of Replies.
        """
        if isinstance(step, GatherMany):
            agents, each = step.recipients(self.everyone.size)
            down, up, reports = self.side.many_bytes(step, agents, each)
            replied = yield from self.exchange(
                agents, down, up, step.phase, step.problem, compute=reports
            )
            progress.update(phase=step.phase, round=self.counters.rounds.get(step.phase, 0))
            return self.side.answer_many(step, replied, each)
        agents = self.everyone if step.agents is None else np.asarray(step.agents)
        if step.ask == "local_model":
            return self.side.answer(step, agents)  # evaluation only: no message
        if step.aggregate is not None:
            replies = yield from self.secure.gather(self, step, agents)  # sets ``missing``
        else:
            down = self.side.download_bytes(step)
            up = self.side.upload_bytes(step, agents)
            replied = yield from self.exchange(agents, down, up, step.phase, step.problem)
            replies = self.side.answer(step, replied)
            if replied.size < agents.size:  # (a steady exchange returns ``agents`` itself)
                replies.missing = agents[~np.isin(agents, replied)]
        progress.update(
            phase=step.phase,
            round=self.counters.rounds.get(step.phase, 0),
            problem=step.problem if step.problem >= 0 else None,
        )
        return replies

    def run(self, mechanism_gen):
        """Run ``mechanism_gen`` to completion; returns the mechanism's Outcome."""
        result = {}

        def serve():
            try:
                step = next(mechanism_gen)
                while True:
                    replies = yield from self.gather(step)
                    step = mechanism_gen.send(replies)
                    replies = None  # not held while the next step is answered (K x p)
            except StopIteration as stop:
                result["outcome"] = stop.value

        self.env.process(serve())
        self.env.run()
        return result["outcome"]

    def time_by_phase(self) -> dict[str, float]:
        """Return the simulated seconds per phase and in total (the JSON ``sim_time_s``)."""
        return self.trace.time_by_phase()


def _deterministic_compute(compute) -> bool:
    """Whether ``compute`` is a built-in model whose times draw nothing (every exchange alike)."""
    return type(compute) is ComputeModel and compute.model != "shifted-exponential"


def _deterministic_lossless(link) -> bool:
    """Whether ``link`` is a built-in link without losses: its sends draw nothing, and repeat."""
    return type(link) in (FixedLink, ShannonLink) and isinstance(link.loss, NoLoss)
