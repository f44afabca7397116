"""The agents' side of the protocol and the in-memory driver.

:class:`AgentSide` computes what the agents report for a :class:`Gather`
(their true values, transformed by their strategies); any driver uses it. What
depends on the kind of request is the step's :class:`~edgesim.mechanisms.protocol.Ask`
(``step.ask``): the side calls its methods and offers it the agents' data,
model and strategies (:meth:`AgentSide.true_gradients`, :meth:`AgentSide.true_losses`).
:func:`run_in_memory` answers every step at once, counting the messages and
bytes the protocol would send (``network.fidelity = "none"``).
"""

from __future__ import annotations

import sys
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from edgesim.agents import Population
from edgesim.arrays import keep_rows
from edgesim.device_view import OwnData, Request
from edgesim.learning.models import Design, Model
from edgesim.learning.segments import (
    THREAD_MIN_BLOCKS,
    SharedBlocks,
    gradient_threads,
    helper_thread,
)
from edgesim.mechanisms.fixed_point import DEFAULT_VALUE_BOUND, aggregate_plain
from edgesim.mechanisms.mostly_true import MostlyTrueSums
from edgesim.mechanisms.protocol import (
    FLOAT_BYTES,
    HEADER_BYTES,
    Gather,
    GatherMany,
    GradientAsk,
    Replies,
)


@dataclass
class ClipCount:
    """How many per-sample values the agents' reports clipped, out of how many (a running tally)."""

    clipped: int = 0
    total: int = 0

    @property
    def fraction(self) -> float | None:
        """Share of the per-sample values that were clipped (None before any was counted)."""
        return self.clipped / self.total if self.total else None


@dataclass
class Counters:
    """Communication totals (the JSON ``communication`` object) and rounds per phase."""

    messages_down: int = 0
    messages_up: int = 0
    bytes_down: int = 0
    bytes_up: int = 0
    transmissions_up: int = 0
    retransmissions: int = 0
    dropped: int = 0
    rounds: dict = field(default_factory=lambda: {"phase1": 0, "phase2": 0})

    def to_json(self) -> dict:
        """Return the ``communication`` object of the output contract."""
        return {
            "messages_down": self.messages_down,
            "messages_up": self.messages_up,
            "bytes_down": self.bytes_down,
            "bytes_up": self.bytes_up,
            "transmissions_up": self.transmissions_up,
            "retransmissions": self.retransmissions,
            "dropped": self.dropped,
            "rounds": dict(self.rounds),
        }


def true_unclipped(clip_norm: float | None, population: Population) -> bool:
    """Whether the gradient reports are the agents' true, unclipped gradients (every agent
    truthful, no ``clip_norm``): then an open step's weighted sum may come from the model's
    gradient moments (:meth:`AgentSide.answer`; :mod:`edgesim.plan` predicts with it)."""
    return clip_norm is None and population.all_truthful


def reports_may_run_ahead(clip_norm: float | None, population: Population, n_blocks: int) -> bool:
    """Whether a batched exchange's open gradient reports may be computed on a helper thread
    while the exchange is planned (:meth:`AgentSide.reports_ahead`; :mod:`edgesim.plan` counts
    them hidden behind the network): the reports are the agents' true, unclipped gradients,
    the design has at least :data:`~edgesim.learning.segments.THREAD_MIN_BLOCKS` row blocks and
    there are at least two gradient threads."""
    return (
        true_unclipped(clip_norm, population)
        and n_blocks >= THREAD_MIN_BLOCKS
        and gradient_threads() >= 2
    )


def mostly_true_unclipped(clip_norm: float | None, population: Population) -> bool:
    """Whether all but a few agents (at most 1/8 of them) report their true, unclipped
    gradients: then an open step's weighted sum comes from the moments, less the deviators'
    true gradients, plus what they send (:meth:`AgentSide.report_replies`)."""
    return clip_norm is None and population.deviators().size * 8 <= population.K


#: Reports of at most this many values take a fresh array, not a kept buffer (page faults
#: do not count at that size; the buffers' bookkeeping does, in a K = 2 search).
SMALL_REPORTS = 4096


class ReportsAhead(NamedTuple):
    """Reports computed on a helper thread (:meth:`AgentSide.reports_ahead`): the Future of
    their rows, and their row blocks, which the driver's thread joins once it is free."""

    rows: Future
    blocks: SharedBlocks


class AgentSide:
    """Every agent's computation: true reports from its own data, then its strategy.

    ``rng`` is the agents' random stream (noisy strategies draw from it).
    Secure-aggregation steps (``Gather.aggregate``) are summed in the fixed
    point of :mod:`edgesim.network.secagg` (``value_bound``), exactly as the
    masked protocol sums them, so every driver returns the same bits.

    ``clip_norm`` (C) and ``loss_bound`` (B), when not None, are enforced on
    the agents' side before a report leaves the device: each per-sample data
    gradient is clipped to norm C and each per-sample loss to [0, B] (see
    :meth:`~edgesim.learning.models.Model.agent_grads`). ``gradient_clips`` and
    ``loss_clips`` tally what was clipped over every report computed. A
    strategy then transforms the clipped report: clipping bounds what a
    truthful agent's data can reveal, not what a deviating agent sends.
    """

    def __init__(
        self,
        model: Model,
        design: Design,
        population: Population,
        rng: np.random.Generator,
        local_rounds: int = 5000,
        value_bound: float = DEFAULT_VALUE_BOUND,
        clip_norm: float | None = None,
        loss_bound: float | None = None,
        model_payload_bytes: int | None = None,
    ):
        self.model_payload_bytes = model_payload_bytes
        self.value_bound = value_bound
        self.clip_norm = clip_norm
        self.loss_bound = loss_bound
        self.gradient_clips = ClipCount()
        self.loss_clips = ClipCount()
        self.model = model
        self.design = design
        self.population = population
        self.rng = rng
        self.local_rounds = local_rounds
        self._buffers: list[np.ndarray] = []  # (K, p) report buffers, reused (see _buffer)
        self._moments = None  # the model's gradient moments for one sum_weights (see _sums)
        self._own: dict[bytes, OwnData] = {}  # deviating agents' own data views (own_data)

    def _buffer(self, m: int, n_params: int) -> np.ndarray:
        """Return an (m, n_params) float64 array for one round's gradient reports.

        A round's reports are the largest array a run makes (K x p: 1.7 GB at K = 10^7,
        d = 20), and a fresh one every round costs its page faults. Up to two (K, p)
        buffers are kept and handed out again once nothing refers to the reports they
        hold any more (a mechanism still reading last round's replies, or keeping
        them, holds a reference: then the other buffer, or a fresh array, is used).
        """
        if m * n_params <= SMALL_REPORTS:
            return np.empty((m, n_params))
        for i in range(len(self._buffers)):
            # References: the list's and getrefcount's own argument; a view adds one.
            if sys.getrefcount(self._buffers[i]) == 2 and self._buffers[i].shape[1] == n_params:
                return self._buffers[i][:m]
        buf = np.empty((self.design.K, n_params))
        if len(self._buffers) < 2:
            self._buffers.append(buf)
        return buf[:m]

    def release(self) -> None:
        """Drop the report buffers (after the mechanism: the run's output needs the memory)."""
        self._buffers = []
        self._moments = None
        self._own = {}

    def _sums(self, step: Gather):
        """Return the model's gradient moments for ``step.sum_weights`` when the step's weighted
        sum can be formed from them, else None.

        They can when the step asks openly for gradients that are the agents' true ones,
        unclipped (every agent truthful, no ``clip_norm``), of a model whose gradients are
        affine in w (ridge): then sum_k c_k grad F_k(w) = S w - t + l2 w sum_k c_k, with S
        and t one pass over the data, once per run (the weights are the run's p), instead of
        K reports every round. It is the same sum up to rounding (about 1e-15 relative).
        """
        if (
            step.sum_weights is None
            or not step.ask.summable
            or step.aggregate is not None
            or not mostly_true_unclipped(self.clip_norm, self.population)
        ):
            return None
        if self._moments is None or self._moments[0] is not step.sum_weights:
            found = self.model.gradient_moments(self.design, step.sum_weights)
            self._moments = (step.sum_weights, found)
        return self._moments[1]

    def reports(self, step: Gather, agents: np.ndarray) -> np.ndarray:
        """Return the reports of ``agents`` for ``step`` as sent: (m, p) gradients or (m,)
        losses, the ask's truthful reports transformed by the agents' strategies."""
        true = step.ask.truthful(self, step, agents)
        return self.population.apply(agents, true, self.request_of(step))

    def withheld(self, step: Gather, agents: np.ndarray) -> np.ndarray | None:
        """Return which of ``agents`` (the recipients of ``step``) withhold their reply, bool
        aligned with ``agents``, or None when none does (no strategy may withhold, or the
        step asks for no report)."""
        if not step.ask.is_report or not self.population.may_withhold:
            return None
        return self.population.withheld(agents, self.request_of(step))

    def delays_ns(self, step: Gather, agents: np.ndarray) -> np.ndarray | None:
        """Return how long each of ``agents`` holds its reply to ``step`` back (int64 ns,
        aligned with ``agents``), or None when none does."""
        if not step.ask.is_report or not self.population.may_delay:
            return None
        delays = self.population.delays_s(agents, self.request_of(step))
        return None if delays is None else np.rint(delays * 1e9).astype(np.int64)

    def request_of(self, step: Gather):
        """Return a function mapping a block of recipients of ``step`` to the
        :class:`~edgesim.device_view.Request` they answer (what each device knows)."""

        def payees() -> np.ndarray:
            if step.phase == "phase2" and step.problem >= 0:
                return np.atleast_1d(step.problem if step.payees is None else step.payees)
            return np.zeros(0, dtype=np.int64)

        def request(block: np.ndarray) -> Request:
            return Request(
                phase=step.phase,
                round=step.round,
                problem=step.problem,
                ask=step.ask.name,
                model=step.model,
                reference=step.reference,
                agents=block,
                rng=self.rng,
                own_problem=lambda: np.isin(block, payees()),
                own_data=lambda: self.own_data(block),
            )

        return request

    def own_data(self, agents: np.ndarray) -> OwnData:
        """Return the :class:`~edgesim.device_view.OwnData` of ``agents`` (kept for the run, so
        what a strategy computes once from its data, a local optimum, is computed once)."""
        key = np.ascontiguousarray(agents, dtype=np.int64).tobytes()
        if key not in self._own:
            self._own[key] = OwnData(
                self.model,
                self.design,
                agents,
                self.clip_norm,
                self.loss_bound,
                self.local_rounds,
            )
        return self._own[key]

    def true_gradients(self, w: np.ndarray, agents: np.ndarray) -> np.ndarray:
        """Return grad F_k(w) of each of ``agents``, (m, p), per-sample data gradients clipped
        to norm ``clip_norm`` (in a reused buffer: :meth:`_buffer`)."""
        out = self._buffer(agents.size, w.size)
        if self.clip_norm is None:
            return self.model.agent_grads(w, self.design, out=out, agents=agents)
        over = self._clipped(self.clip_norm)
        true = self.model.agent_grads(w, self.design, self.clip_norm, over, out=out, agents=agents)
        self._tally(self.gradient_clips, over, agents)
        return true

    def true_losses(self, w: np.ndarray, agents: np.ndarray) -> np.ndarray:
        """Return F_k(w) of every agent (K,), per-sample losses clipped to [0, loss_bound];
        the clips of ``agents`` (the senders) are tallied."""
        over = self._clipped(self.loss_bound)
        losses = self.model.agent_losses(w, self.design, loss_bound=self.loss_bound, clipped=over)
        self._tally(self.loss_clips, over, agents)
        return losses

    def _clipped(self, bound: float | None) -> np.ndarray | None:
        """Return a (K,) array for per-agent clip counts when ``bound`` is set, else None."""
        return None if bound is None else np.zeros(self.design.K)

    def _tally(self, count: ClipCount, over: np.ndarray | None, agents: np.ndarray) -> None:
        """Add the reporting ``agents``' clipped and total sample counts to ``count``."""
        if over is not None:  # reports are computed for all agents; count the senders' only
            count.clipped += int(over[agents].sum())
            count.total += int(self.design.n_k[agents].sum())

    def answer(self, step: Gather, agents: np.ndarray) -> Replies:
        """Return the :class:`Replies` when every agent in ``agents`` replies
        (:meth:`Ask.answer <edgesim.mechanisms.protocol.Ask.answer>`)."""
        return step.ask.answer(self, step, agents)

    def reports_ahead(self, step: Gather, agents: np.ndarray) -> ReportsAhead | None:
        """Start the reports of every recipient of ``step`` on a helper thread, while a network
        driver plans the exchange; returns their :class:`ReportsAhead` ((m, p) rows, aligned
        with ``agents``), or None where this does not apply (then :meth:`answer` computes
        them).

        It applies where a report is a pure function of the model and the agent's data,
        so computing it early, and for recipients whose reply is then lost, changes
        nothing: a plain gradient ask, answered openly (no secure aggregation, no sum from
        the moments), every agent truthful (no strategy, so no random draw and no
        history) and nothing clipped (no tally). It pays where the plan takes about as long
        as the reports: a design of at least
        :data:`~edgesim.learning.segments.THREAD_MIN_BLOCKS` row blocks (a smaller one costs
        less than the hand-over) and at least half of the agents asked (a retry of a few
        plans in less time than their blocks' reports take). With
        :func:`~edgesim.learning.segments.gradient_threads` n >= 2, the reports take n - 1
        threads and the driver's thread the last, which, once the exchange is planned, takes
        the row blocks still left (:meth:`answer_ahead`); with n = 1 nothing runs ahead. The rows
        are computed exactly as :meth:`answer` computes them (:meth:`Model.agent_grads
        <edgesim.learning.models.Model.agent_grads>`), so the results are the same bits.
        """
        if (
            type(step.ask) is not GradientAsk
            or step.aggregate is not None
            or 2 * agents.size < self.design.K
            or not reports_may_run_ahead(self.clip_norm, self.population, len(self.design.blocks))
            or self._sums(step) is not None
        ):
            return None
        out = self._buffer(agents.size, step.model.size)  # (taken here, on the driver's thread)
        model, w, design = self.model, step.model, self.design
        # one thread fewer than the gradients' own: the driver's thread plans the exchange,
        # then joins in on the blocks still left (answer_ahead)
        threads = gradient_threads() - 1
        shared = SharedBlocks()

        def rows() -> np.ndarray:
            try:
                return model.agent_grads(
                    w, design, out=out, agents=agents, threads=threads, shared=shared
                )
            finally:
                shared.close()

        return ReportsAhead(helper_thread().submit(rows), shared)

    def answer_ahead(
        self, ahead: ReportsAhead, replied: np.ndarray, got: np.ndarray | None
    ) -> Replies:
        """Return the :class:`Replies` of ``replied`` from the rows :meth:`reports_ahead`
        computed for every recipient: ``got`` (bool, aligned with the recipients) says whose
        replies arrived, in the order asked; None when all did. The repliers' rows are moved
        to the front of the rows' buffer (:func:`~edgesim.arrays.keep_rows`), not copied: no
        second (K, p) array, as the memory estimate counts."""
        try:
            ahead.blocks.join()  # the blocks the helper has not taken yet, on this thread
        finally:
            rows = ahead.rows.result()
        return Replies(replied, values=rows if got is None else keep_rows(rows, got))

    def report_replies(self, step: Gather, agents: np.ndarray) -> Replies:
        """Return the :class:`Replies` to a report ask: the reports as sent, or only their
        weighted sum (``sum_of``) when the step reads that alone, or under secure
        aggregation only their fixed-point ``total``."""
        moments = self._sums(step)
        if moments is not None:  # the mechanism reads the weighted sum only
            deviating = self.population.deviators()
            if deviating.size:
                return self._mostly_true_replies(step, agents, moments, deviating)
            return Replies(
                agents,
                sum_of=lambda a: self.model.weighted_gradient_sum(
                    step.model, self.design, moments, a
                ),
                values_of=lambda a: self.reports(step, a),
            )
        values = self.reports(step, agents)
        if step.aggregate is not None:
            total, _ = aggregate_plain(
                self.aggregate_weights(step, agents),
                values,
                n_clients=_count(step, self.design),
                value_bound=self.value_bound,
            )
            return Replies(agents, total=total)
        return Replies(agents, values=values)

    def _mostly_true_replies(
        self, step: Gather, agents: np.ndarray, moments, deviating: np.ndarray
    ) -> Replies:
        """Return the Replies of a step whose weighted sum comes from the moments although a few
        of ``agents`` deviate: sum_of(a) is the moments' sum over a as if all were truthful
        (:meth:`Model.weighted_gradient_sum`), less the deviators' true gradients, plus their
        reports as sent. Both are formed now, once (the true rows in the order the full reports
        would form them, so a strategy's random draws are the same), and cost m_dev x p, not
        m x p: a single deviator at K = 10^6 costs about what a truthful run does."""
        dev = np.sort(agents[np.isin(agents, deviating)])
        true = step.ask.truthful(self, step, dev).copy()  # the buffer is reused by reports()
        sent = self.population.apply(dev, true, self.request_of(step))
        sums = MostlyTrueSums(self.model, self.design, step, moments, dev, true, sent)
        return Replies(agents, sum_of=sums.sum_of, values_of=sums.values_of)

    def many_bytes(self, step: GatherMany, agents: np.ndarray, each: list) -> tuple:
        """Return (download bytes, upload bytes, reports) per agent of ``agents``, each (m,).

        ``agents``: every recipient once, sorted; ``each``: each part's recipients. An
        agent's message is the concatenation of the part messages it replaces.
        """
        down = np.zeros(agents.size, dtype=np.int64)
        up = np.zeros(agents.size, dtype=np.int64)
        reports = np.zeros(agents.size, dtype=np.int64)
        for part, recipients in zip(step.parts, each, strict=True):
            pos = np.searchsorted(agents, recipients)
            down[pos] += self.download_bytes(part)
            up[pos] += self.upload_bytes(part, recipients)
            reports[pos] += 1
        return down, up, reports

    def answer_many(self, step: GatherMany, replied: np.ndarray, each: list) -> list[Replies]:
        """Return one :class:`Replies` per part: those of its recipients in ``replied``, less
        the reports they withhold (an agent's one reply then carries only the reports it
        answers; its size is counted as planned)."""
        out = []
        for part, recipients in zip(step.parts, each, strict=True):
            arrived = np.isin(recipients, replied)
            silent = self.withheld(part, recipients)
            if silent is not None:  # the reply is sent without these reports
                arrived &= ~silent
            r = self.answer(part, recipients[arrived])
            r.missing = recipients[~arrived]
            out.append(r)
        return out

    @staticmethod
    def aggregate_weights(step: Gather, agents: np.ndarray) -> np.ndarray:
        """Return the secure-aggregation weights of ``agents`` (a subset of the step's recipients)."""
        if step.agents is None:
            return step.aggregate[agents]
        pos = np.searchsorted(step.agents, agents)
        if not np.array_equal(np.asarray(step.agents)[pos], agents):
            raise ValueError("repliers must be recipients of the step (recipients sorted)")
        return step.aggregate[pos]

    def upload_bytes(self, step: Gather, agents: np.ndarray) -> np.ndarray:
        """Return the size in bytes of each agent's reply to ``step``, shape (m,)
        (:meth:`Ask.upload_bytes <edgesim.mechanisms.protocol.Ask.upload_bytes>`)."""
        return step.ask.upload_bytes(self, agents)

    def payload(self) -> int:
        """Return the bytes of model a model or gradient message carries, header excluded.

        ``network.model_bytes`` when set, else the learning model's own 8 n_params.
        """
        if self.model_payload_bytes is not None:
            return self.model_payload_bytes
        return FLOAT_BYTES * self.model.n_params(self.design.data.d)

    def download_bytes(self, step: Gather) -> int:
        """Return the size in bytes of the server's message to each recipient."""
        if step.model is None:
            return HEADER_BYTES
        extra = 0 if step.reference is None else self.payload()  # the reference model w*
        return HEADER_BYTES + self.payload() + extra


def _count(step: Gather, design: Design) -> int:
    """Return the number of recipients of ``step`` (the secure aggregation's n)."""
    return design.K if step.agents is None else int(np.asarray(step.agents).size)
