"""The plan of an exchange: everything random about it, drawn at its start, and its schedule.

Each :class:`~edgesim.mechanisms.protocol.Gather` becomes an *exchange*: a
downlink message to every recipient (wired backhaul, then the radio), the
device's compute time, and an uplink reply (radio, then backhaul). At the
exchange's start the server draws, vectorised over the recipients and in a
fixed order, everything random about it (:meth:`ExchangePlanning.plan_exchange`):

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
Both fidelities then turn the same :class:`Plan` into time
(:mod:`edgesim.network.server`). Every Plan is assembled by
:meth:`ExchangePlanning._plan_of`, the steady exchanges' too
(:mod:`edgesim.network.steady_plan`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgesim.arrays import column, every, squeezed, take_rows
from edgesim.network.transport import tcp_extra_ns, tcp_shares


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


class ExchangePlanning:
    """The server's planning of exchanges (a part of :class:`~edgesim.network.server.NetworkServer`).

    Reads the server's ``net``, ``cfg``, ``devices``, ``env``,
    ``deadline_ns``, ``always_on`` and ``energy``; uses its steady-plan
    cache, moving devices and broadcasts.
    """

    def plan_exchange(
        self,
        agents: np.ndarray,
        down_bytes,
        up_bytes: np.ndarray,
        compute=True,
        silent: np.ndarray | None = None,
        delay_ns: np.ndarray | None = None,
    ) -> Plan:
        """Draw everything random about one exchange (see the module docstring for the order).

        Under a deadline, a downlink arriving after it, or a device that would
        only start sending after it, is *late*: availability is not asked
        about times past the deadline (the round is closed by then), and no
        uplink is drawn for it. ``silent`` (bool, (m,)): recipients that
        withhold their reply (their strategy's choice): they do not send, as
        a device gone offline before sending. ``delay_ns`` (int64, (m,)): how
        long each holds its reply back after computing it (counted as compute
        time: a device that holds a reply back stays awake).
        """
        deviating = silent is not None or delay_ns is not None
        if self.steady_ok and agents is self.everyone and compute is True and not deviating:
            plan = self._steady_plan(down_bytes, up_bytes)
            if plan is not None:
                return plan
        if self.net.cells.joint:
            if deviating:
                raise ValueError(
                    "withholding or delaying a reply on a Wi-Fi cell (one medium both ways) is"
                    " not modelled yet"
                )
            return self._plan_joint(agents, down_bytes, up_bytes, compute)
        net = self.net
        dev = self.devices[agents]
        m = agents.size
        t0 = self.env.now
        horizon = self.deadline_ns
        rng = net.rng["links"]
        down_sizes = column(down_bytes, m)
        copies = None
        here = self._attach(dev, t0)  # moving devices: their distance now, or None
        if self._broadcasts(down_bytes):
            down, at_ap, copies = self._broadcast(dev, int(down_bytes), rng, here)
            arrive = at_ap + down.airtime_ns + down.after_ns
        else:
            down = net.downlink.send_from(dev, down_sizes, rng, here)  # (dev: our devices)
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
        if delay_ns is not None:
            compute = compute + delay_ns
        send_at = arrive + compute
        ready = received if horizon is None else received & (send_at <= horizon)
        sending = ready.copy()
        if not self.always_on:
            ask = np.flatnonzero(ready)
            sending[ask] = net.availability.online(dev[ask], t0 + send_at[ask])
        if silent is not None:
            sending &= ~silent
        up_dev, up_at, up_sizes = dev, send_at, np.asarray(up_bytes, dtype=np.int64)
        if not every(sending):  # (when all send, the arrays as they are: no gather)
            senders = np.flatnonzero(sending)
            up_dev, up_at, up_sizes = dev[senders], send_at[senders], take_rows(up_sizes, senders)
        there = None if here is None else self._distance(up_dev, t0 + up_at)
        up = net.uplink.send_from(up_dev, up_sizes, rng, there)
        resolved = self._resolve_ns(up_dev, up_sizes, up_at, up, rng)
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
        down_air = down.attempts * down.airtime_ns
        if every(sending):  # every recipient received and sent (so none is late): no scatter
            resolve, late, reply_ok, lost_online = resolved, np.zeros(m, dtype=bool), None, 0
        else:
            # When the server knows each outcome (relative to t0); late ones only after the
            # deadline.
            resolve = np.where(received, arrive + compute, arrive)
            if horizon is not None:
                late = (down.delivered & ~delivered) | (received & ~ready)
                resolve[late] = horizon + 1
            else:
                late = np.zeros(m, dtype=bool)
            resolve[sending] = resolved
            reply_ok = np.zeros(m, dtype=bool)
            reply_ok[sending] = up.delivered
            offline = delivered & ~received  # delivered to a device gone offline
            lost_online = int(offline.sum())
            down_air = np.where(offline, 0, down_air)
        return Plan(
            agents=agents,
            received=received,
            arrive_ns=arrive,
            compute_ns=compute,
            sending=sending,
            up=up,
            resolve_ns=resolve,
            reply_ok=up.delivered.copy() if reply_ok is None else reply_ok,
            late=late,
            down_lost=down.dropped + lost_online,
            down_transmissions=down.transmissions if copies is None else copies,
            down_retransmissions=down.retransmissions,
            down_air_ns=down_air,
            reports=reports,
            down_copies=copies,
        )

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
        down_sizes = column(down_bytes, m)
        up_sizes = column(up_bytes, m)
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
            start = self._transport_ns(dev, down_sizes, down, np.zeros(m, dtype=np.int64), "down")
            aps = net.topology.ap_of[dev]
            at_ap, down_tail = net.topology.pipeline_ns(aps, down_sizes, start, start, "down")
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
        up_start[reached] = self._transport_ns(
            dev[reached], up_sizes[reached], up_all, (down.after_ns + compute)[reached], "up"
        )
        up_offset = down.after_ns + compute + up_start
        down_through, up_through = net.cells.joint_ns(
            dev, at_ap, down_work, up_offset, up_work, down.delivered
        )
        if copies is None:  # not before its last byte is in from the wired path (a reply after)
            held = self._after_tail(down_through, down_tail, down_sizes, down_work) - down_through
            down_through = down_through + held
            up_through = np.where(up_through >= 0, up_through + held, up_through)
        arrive = down_through + down.after_ns
        received = down.delivered if horizon is None else down.delivered & (arrive <= horizon)
        send_at = arrive + compute
        sending = received if horizon is None else received & (send_at <= horizon)
        senders = np.flatnonzero(sending)
        row = np.full(m, -1, dtype=np.int64)
        row[reached] = np.arange(reached.size)
        up = up_all.take(row[senders])
        begin = (down_through + up_offset)[senders]
        resolved = self._from_radio(dev[senders], up_sizes[senders], begin, up_through[senders], up)
        masks = (received, received, sending, sending)
        return self._plan_of(agents, down, copies, arrive, (compute, reports), masks, up, resolved)

    def _arrive_ns(self, dev: np.ndarray, sizes: np.ndarray, down, rng) -> np.ndarray:
        """Return when each downlink reaches its device, or its sender gives up (ns from the start).

        The server sends every message at once; each crosses the wired path
        to its access point (shared hops, pipelined), then the cell's downlink
        channel, which it reaches with its first packet and leaves no sooner
        than its last packet's airtime after its last byte reached the access
        point (:meth:`_after_tail`).
        """
        net = self.net
        start = self._transport_ns(dev, sizes, down, np.zeros(sizes.size, dtype=np.int64), "down")
        head, tail = net.topology.pipeline_ns(net.topology.aps_of(dev), sizes, start, start, "down")
        through = net.cells.through_ns("down", dev, sizes, head, down, rng, self.deadline_ns)
        return self._after_tail(through, tail, sizes, down.airtime_ns) + down.after_ns

    def _after_tail(self, through, tail, sizes: np.ndarray, airtime_ns) -> np.ndarray:
        """Return when each message is through the radio (int64 ns): ``through``, its time by the
        cell's schedule from its first packet's arrival, but not before its last packet
        (p bytes of S, :meth:`~edgesim.network.topology.BackhaulConfig.packet`) has crossed the
        radio, p / S of ``airtime_ns``, after its last byte arrived at ``tail``."""
        sizes, backhaul = squeezed(sizes), self.net.topology.backhaul
        packet = backhaul.packet(sizes)
        if backhaul.one_packet(sizes, packet):  # all of the airtime
            last_air = airtime_ns  # (p / S = 1: the same ns below 2^53 ns, about 104 days)
        else:
            last = backhaul.last_packet(sizes, packet)
            last_air = airtime_ns * (last / np.maximum(sizes, 1))
            last_air = np.rint(last_air, out=last_air).astype(np.int64)
        out = tail + last_air
        return np.maximum(out, through, out=out)

    def _first_packet_ns(self, begin, through, sizes: np.ndarray, attempts) -> np.ndarray | None:
        """Return when each message's first packet has left the radio (int64 ns): its last
        transmission took (through - begin) / attempts, and its first packet P / S of that
        (:meth:`~edgesim.network.topology.BackhaulConfig.packet`), before the rest. None when
        every message is one packet: its first packet leaves with its last, at ``through``."""
        sizes, backhaul = squeezed(sizes), self.net.topology.backhaul
        packet = backhaul.packet(sizes)
        if backhaul.one_packet(sizes, packet):
            return None
        rest = (sizes - packet) / np.maximum(sizes, 1)
        span = through - begin
        span //= attempts
        ahead = span * rest
        return through - np.rint(ahead, out=ahead).astype(np.int64)

    def _transport_ns(
        self, dev: np.ndarray, sizes: np.ndarray, transfers, start_ns, direction: str
    ) -> np.ndarray | int:
        """Return TCP's handshake and slow-start time of each message (int64 ns), or 0 when the
        transport is ideal (:mod:`edgesim.network.transport`).

        Slow start is timed at the share of its cell's channel each message
        gets (:func:`~edgesim.network.transport.tcp_shares`: processor sharing
        of the exchange's messages in ``direction`` on each cell, from
        ``start_ns``, when each would start), or alone on a channel that is
        not shared.
        """
        cfg = self.cfg
        if cfg.transport != "tcp":
            return 0
        share = 1.0
        if sizes.size > 1 and self.net.cells.shared(direction):
            work = transfers.attempts * transfers.airtime_ns
            share = tcp_shares(start_ns, work, self.net.topology.ap_of[dev])
        return tcp_extra_ns(
            sizes,
            transfers.airtime_ns,
            self.net.rtt_ns,
            cfg.tcp_initial_window,
            cfg.tcp_mss_bytes,
            share,
        )

    def _resolve_ns(self, dev: np.ndarray, sizes: np.ndarray, send_at, up, rng) -> np.ndarray:
        """Return when each reply reaches the server, or its sender gives up (ns from the start).

        A reply sent at ``send_at`` crosses the cell's uplink channel, then,
        if delivered, the wired path (shared hops), which its first packet
        enters as soon as it has left the radio (pipelined).
        """
        extra = self._transport_ns(dev, sizes, up, send_at, "up")
        begin = send_at if np.ndim(extra) == 0 and extra == 0 else send_at + extra
        through = self.net.cells.through_ns("up", dev, sizes, begin, up, rng, self.deadline_ns)
        return self._from_radio(dev, sizes, begin, through, up)

    def _from_radio(self, dev: np.ndarray, sizes: np.ndarray, begin, through, up) -> np.ndarray:
        """Return when each reply reaches the server (int64 ns), its last transmission on the
        radio begun at ``begin`` and through at ``through``: its first packet enters the wired
        path as soon as it has left the radio (:meth:`_first_packet_ns`), then
        :meth:`_wired_up`."""
        first = self._first_packet_ns(begin, through, sizes, up.attempts)
        after = up.after_ns
        at_ap = through + after
        return self._wired_up(dev, sizes, at_ap, up, at_ap if first is None else first + after)

    def _wired_up(
        self, dev: np.ndarray, sizes: np.ndarray, at_ap: np.ndarray, up, head_ns: np.ndarray
    ) -> np.ndarray:
        """Return when each reply reaches the server: the delivered ones cross the wired path,
        their first packets from ``head_ns``, their last bytes from ``at_ap``
        (:meth:`~edgesim.network.topology.Topology.pipeline_ns`); the others' senders give up
        at ``at_ap`` (ns from the start)."""
        topology = self.net.topology
        if every(up.delivered):  # the common case: no gather
            return topology.pipeline_ns(topology.aps_of(dev), sizes, head_ns, at_ap, "up")[1]
        out = at_ap.copy()
        ok = np.flatnonzero(up.delivered)
        if ok.size:
            aps = topology.aps_of(dev[ok])
            out[ok] = topology.pipeline_ns(aps, take_rows(sizes, ok), head_ns[ok], out[ok], "up")[1]
        return out

    def _end_of(self, plan: Plan) -> int:
        """Return the exchange's length (ns) under the round policy, from the plan alone."""
        if plan.end_ns is not None:
            return plan.end_ns
        end = int(plan.resolve_ns.max()) if plan.resolve_ns.size else 0
        return end if self.deadline_ns is None else min(end, self.deadline_ns)
