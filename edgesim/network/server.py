"""The edge server: drives any mechanism generator over the simulated network.

Each :class:`~edgesim.mechanisms.protocol.Gather` becomes an *exchange*: a
downlink message to every recipient, the device's compute time, and an
uplink reply. At the exchange's start the server draws everything random
about it, in a fixed order, and schedules the shared media: the exchange's
:class:`~edgesim.network.exchange_plan.Plan` (:mod:`edgesim.network.exchange_plan`;
steady exchanges reuse theirs, :mod:`edgesim.network.steady_plan`).
Fidelities differ only in how that plan becomes time:

- ``events``: each delivered message is handled at its own instant, in time
  order: the downlinks wake their devices' long-lived processes
  (:mod:`edgesim.network.device`), the replies land at the server, and a
  deadline cuts what has not landed (:mod:`edgesim.network.events_walk`).
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

import numpy as np
import simpy
from simpy.events import NORMAL

from edgesim import progress
from edgesim.arrays import add_rows, all_but, column, every, take_rows, total
from edgesim.mechanisms.driver import AgentSide, Counters
from edgesim.mechanisms.protocol import Gather, GatherMany
from edgesim.network import to_ns
from edgesim.network.availability import AlwaysOn
from edgesim.network.broadcast import Broadcasting
from edgesim.network.energy import EnergyMeter
from edgesim.network.events_walk import EventsWalk
from edgesim.network.exchange_plan import ExchangePlanning, Plan
from edgesim.network.moving_devices import MovingDevices
from edgesim.network.round_time import RoundTimes
from edgesim.network.secure_round import SecureRounds
from edgesim.network.steady_plan import SteadyPlans
from edgesim.network.timeline import EventLog
from edgesim.network.trace import Trace

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


class NetworkServer(ExchangePlanning, SteadyPlans, MovingDevices, Broadcasting, EventsWalk):
    """Runs mechanism generators over one simulated network.

    ``net``: the assembled network (:class:`~edgesim.network.build.Network`:
    topology, links, compute and availability models, random streams);
    ``agent_side``: computes the agents' reports; ``devices``: for each of
    the mechanism's agents (0..m-1) the device (scenario agent id) it runs on;
    ``events_window``: (start, end) seconds in which to log device events
    (:class:`~edgesim.network.timeline.EventLog`), or None.

    Its parts, one module each: planning an exchange
    (:class:`~edgesim.network.exchange_plan.ExchangePlanning`), the steady
    plans' cache (:class:`~edgesim.network.steady_plan.SteadyPlans`), moving
    devices (:class:`~edgesim.network.moving_devices.MovingDevices`),
    broadcast downlinks (:class:`~edgesim.network.broadcast.Broadcasting`)
    and the events fidelity's walk (:class:`~edgesim.network.events_walk.EventsWalk`).
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
        self.round_times = RoundTimes()
        self.events = self.cfg.fidelity == "events"
        self.deadline_ns = (
            to_ns(self.cfg.deadline_s) if self.cfg.round_policy == "deadline" else None
        )
        self.always_on = isinstance(net.availability, AlwaysOn)
        self.secure = SecureRounds(net.cfg.secagg, net.rng["secagg"])
        self.round_index: dict[str, int] = {}
        #: every agent, in order: the recipients of a Gather to all (see _steady_plan)
        self.everyone = np.arange(self.m)
        self.steady_ok = self._steady_allowed()
        self._steady: dict[tuple[int, int], object] = {}
        self.events_log = None if events_window is None else EventLog(events_window)
        self._start_moving()  # sets ``sites`` and ``handovers``
        self.energy = (
            None
            if net.cfg.energy.model == "none"
            else EnergyMeter(net.cfg.energy, net.n_k[self.devices])
        )
        self._energy_parts: dict = {}  # a steady exchange's energy parts, by (plan, length)
        if self.events:
            self._start_devices()

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
        silent=None,
        delay_ns=None,
    ):
        """Run one exchange (SimPy generator); returns the agents whose replies arrived in time.

        ``down_bytes``: size of the message to each recipient (scalar or (m,));
        ``up_bytes``: size of each reply (m,); ``stage``: the trace label
        (``"round"``, or a secure-aggregation stage); ``compute``: whether
        the devices compute before replying; ``overhead``: (down, up) flags
        saying which direction counts as secure-aggregation overhead;
        ``silent``: (m,) bool, the recipients whose strategy withholds the reply
        (they receive and send nothing back, as a device gone offline);
        ``delay_ns``: (m,) int64, how long each holds its reply back.
        """
        t0 = self.env.now
        plan = self.plan_exchange(agents, down_bytes, up_bytes, compute, silent, delay_ns)
        if self.events:
            in_time = yield from self._run_events(plan, t0)
            end = self.env.now - t0
        else:
            end = self._end_of(plan)
            yield self.env.timeout(end)
            in_time = None if plan.steady else plan.resolve_ns <= end
        energy_j = 0.0
        who = self._rows(agents)  # an index of the per-agent arrays
        if self.energy is not None:
            plan, energy_j = self._spend(plan, agents, who, phase, end)
        self.round_times.add(phase, plan, end)
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
            everyone = every(plan.sending)  # every recipient sent (the common case)
            senders = None if everyone else np.flatnonzero(plan.sending)
            bytes_down = total(column(down_bytes, m))
            if plan.down_copies is not None:  # a broadcast: one copy per cell
                bytes_down = plan.down_copies * int(down_bytes)
            sent_up = np.asarray(up_bytes, dtype=np.int64)
            if not everyone:
                sent_up = take_rows(sent_up, senders)
            bytes_up = total(sent_up)
            up_transmissions = up.transmissions
            retrans = plan.down_retransmissions + up_transmissions - len(up)
            lost = plan.down_lost + up.dropped
            # To everyone (agents 0..K-1 in order): an agent's index is its position.
            sender_ids = agents if everyone else agents[senders]
            sent_by = who if everyone else sender_ids  # an index: a slice when it can be
            add_rows(tr.agent_messages_down, who, 1)
            add_rows(tr.agent_messages_up, sent_by, 1)
            add_rows(tr.agent_bytes_down, who, np.asarray(down_bytes, dtype=np.int64))
            add_rows(tr.agent_bytes_up, sent_by, sent_up)
            add_rows(tr.agent_transmissions, sent_by, up.attempts)
            tr.agent_lost[agents[~plan.received]] += 1
            tr.agent_lost[sender_ids[~up.delivered]] += 1
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

    def _rows(self, agents: np.ndarray):
        """Return the index of ``agents`` into per-agent arrays: ``slice(None)`` (no gather)
        when they are every agent in order (:attr:`everyone`), an
        :class:`~edgesim.arrays.AllBut` when they are every agent but one in order (FFL's
        Phase II: two slices, :func:`~edgesim.arrays.add_rows`), else ``agents``."""
        if agents is self.everyone:
            return slice(None)
        but = all_but(agents, self.everyone)
        return agents if but is None else but

    def _spend(self, plan: Plan, agents, who, phase: str, end_ns: int) -> tuple[Plan, float]:
        """Count the exchange's energy (:class:`EnergyMeter`); returns (the plan, the energy all
        devices spent in it, J). A device whose battery empties during the exchange sends
        nothing (as a device offline when it would reply); the plan returned says so."""
        # a whole plan that repeats (deterministic compute), without batteries: the same
        # parts every time (kept per plan object and length: a handful)
        repeat = plan.steady and plan.end_ns is not None and self.energy.battery is None
        key = (id(plan), end_ns)
        known = self._energy_parts.get(key) if repeat else None
        if known is not None and known[0] is plan:
            return plan, self.energy.add(phase, who, end_ns, known[1])[1]
        m = agents.size
        if every(plan.sending):  # every recipient sent (the common case): no scatter
            tx = plan.up.attempts * plan.up.airtime_ns
        else:
            tx = np.zeros(m, dtype=np.int64)
            tx[plan.sending] = plan.up.attempts * plan.up.airtime_ns
        on = plan.received
        if every(on):
            times = (plan.down_air_ns, tx, plan.compute_ns, plan.reports)
        else:
            times = (
                plan.down_air_ns,
                tx,
                np.where(on, plan.compute_ns, 0),
                np.where(on, plan.reports, 0),
            )
        parts = self.energy.exchange_parts(who, end_ns, *times)
        if repeat:
            self._energy_parts[key] = (plan, parts)
        dying, spent = self.energy.add(phase, who, end_ns, parts)
        if self.energy.battery is None or not (dying & plan.sending).any():
            return plan, spent  # (without batteries nobody dies)
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
        if not step.ask.sends_messages:
            return self.side.answer(step, agents)  # evaluation only: no message
        silent = self.side.withheld(step, agents)
        delays = self.side.delays_ns(step, agents)
        if step.aggregate is not None:  # a withheld masked input: a dropout of the session
            replies = yield from self.secure.gather(self, step, agents, silent, delays)
        else:
            down = self.side.download_bytes(step)
            up = self.side.upload_bytes(step, agents)
            # batched: the reports are computed while the exchange is planned (the events walk
            # is Python that holds the GIL the whole exchange: there they would wait on it)
            ahead = None if self.events else self.side.reports_ahead(step, agents)
            replied = yield from self.exchange(
                agents, down, up, step.phase, step.problem, silent=silent, delay_ns=delays
            )
            # which recipients replied (a steady exchange returns ``agents`` itself: all did)
            got = None if replied.size == agents.size else np.isin(agents, replied)
            if ahead is None:
                replies = self.side.answer(step, replied)
            else:
                replies = self.side.answer_ahead(ahead, replied, got)
            if got is not None:
                replies.missing = agents[~got]
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

    def time_by_phase(self) -> dict:
        """Return the simulated seconds per phase and in total, and each phase's split into
        downlink, computation, uplink and waiting (the JSON ``sim_time_s``;
        :mod:`edgesim.network.round_time`)."""
        return {**self.trace.time_by_phase(), "by_direction": self.round_times.seconds()}
