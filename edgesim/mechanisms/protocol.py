"""The communication steps a mechanism can ask for, what each asks, and what comes back.

A mechanism is a generator: it yields a :class:`Gather` (the server sends a
model to some agents and each replies with a report) and receives
:class:`Replies`. What a step asks for is an :class:`Ask`, one class per kind
of request (:class:`GradientAsk`, :class:`LossAsk`, :class:`LossChangeAsk`,
:class:`DataAsk`, :class:`LocalModelAsk`); each owns its upload's size, its
truthful answer, how a strategy transforms it and whether a missing reply may
be repaired, so drivers call its methods instead of comparing names. Drivers
answer the steps: the in-memory driver at once (``edgesim.mechanisms.driver``),
the network driver over simulated links.

Message sizes (documented protocol, used by every driver): a message carrying
a model or a gradient of ``p`` float64 values is ``HEADER_BYTES + 8 p`` bytes;
a scalar report (a loss value) is ``HEADER_BYTES + 8`` bytes; an agent's data
upload (the central ``vcg`` reference) is ``HEADER_BYTES + 8 n_k (d + 1)``.
``HEADER_BYTES = 64``: IPv4 (20) + TCP (20) + edgesim frame (24: message kind,
phase, round, problem, agent id, payload length; 4 bytes each).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import ClassVar

import numpy as np

from edgesim.arrays import constant
from edgesim.learning.local import local_models

HEADER_BYTES = 64
FLOAT_BYTES = 8


class Ask:
    """What a :class:`Gather` asks each recipient for: one kind of request.

    A subclass owns everything about its kind: the size of an upload
    (:meth:`payload_bytes`, :meth:`upload_bytes`), the truthful report an agent
    computes from its data (:meth:`truthful`) and the :class:`Replies` the
    server gets (:meth:`answer`). A strategy transforms a report knowing the
    ask's ``name`` (:meth:`edgesim.agents.Strategy.report`).
    ``side`` in the methods is the agents' side of a run
    (:class:`edgesim.mechanisms.driver.AgentSide`: the model, the design, the
    strategies). Asks hold no state: two instances of one class are equal.

    Class flags: ``name`` (the string a mechanism may pass: ``ask="gradient"``);
    ``is_report`` (each recipient replies with one report at the step's model,
    a row or a scalar, which a strategy may transform; such asks may share an
    exchange, :class:`GatherMany`); ``repairable`` (a missing reply may be asked
    again or filled with a stale one, :mod:`edgesim.mechanisms.repair`);
    ``summable`` (an open weighted sum of the reports may be formed without the
    per-agent rows, from the model's moments); ``sends_messages`` (answering it
    exchanges messages; False for a read made for evaluation only).
    """

    name: ClassVar[str] = ""
    is_report: ClassVar[bool] = True
    repairable: ClassVar[bool] = True
    summable: ClassVar[bool] = False
    sends_messages: ClassVar[bool] = True

    def __eq__(self, other) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def payload_bytes(self, n_params: int) -> int:
        """Return the bytes of one upload answering this ask (header included), for a model of
        ``n_params`` float64 values; ValueError when the size is not fixed."""
        raise ValueError(f"no fixed payload size for ask {self.name!r}")

    def upload_bytes(self, side, agents: np.ndarray) -> np.ndarray:
        """Return the size in bytes of each of ``agents``' uploads, shape (m,), int64 (read-only:
        one number's view when every upload has the same size)."""
        n_params = side.model.n_params(side.design.data.d)
        return constant(agents.size, self.payload_bytes(n_params))

    def truthful(self, side, step: Gather, agents: np.ndarray) -> np.ndarray:
        """Return the true reports of ``agents`` for ``step``, (m, p) or (m,), computed from
        their data; ValueError for an ask that is not a per-agent report."""
        raise ValueError(f"no per-agent report for ask {self.name!r}")

    def answer(self, side, step: Gather, agents: np.ndarray) -> Replies:
        """Return the :class:`Replies` when every agent in ``agents`` replies.

        A report ask answers with its reports as sent (or only their sum, when
        the step asks for one): :meth:`AgentSide.report_replies
        <edgesim.mechanisms.driver.AgentSide.report_replies>`.
        """
        return side.report_replies(step, agents)


class GradientAsk(Ask):
    """Report grad F_k(model) (Alg. 1, lines 4 and 10): a row of p values, 8 p bytes.

    The model's bytes are ``network.model_bytes`` when set (the side's
    :meth:`~edgesim.mechanisms.driver.AgentSide.payload`). Strategies transform
    it with :meth:`~edgesim.agents.Strategy.report`; with truthful, unclipped
    reports of a ridge model its weighted sum comes from the data's moments.
    """

    name = "gradient"
    summable = True

    def payload_bytes(self, n_params: int) -> int:
        """Return ``HEADER_BYTES + 8 n_params`` (bytes)."""
        return HEADER_BYTES + FLOAT_BYTES * n_params

    def upload_bytes(self, side, agents: np.ndarray) -> np.ndarray:
        """Return ``HEADER_BYTES`` plus the side's model payload for each agent (bytes, (m,),
        read-only: one number's view)."""
        return constant(agents.size, HEADER_BYTES + side.payload())

    def truthful(self, side, step: Gather, agents: np.ndarray) -> np.ndarray:
        """Return grad F_k(step.model) of each of ``agents``, (m, p), per-sample gradients
        clipped to the side's ``clip_norm``."""
        return side.true_gradients(step.model, agents)


class LossAsk(Ask):
    """Report F_k(model) (vcg-federated's payments): a scalar, ``HEADER_BYTES + 8`` bytes."""

    name = "loss"

    def payload_bytes(self, n_params: int) -> int:
        """Return ``HEADER_BYTES + 8`` (bytes): one float64 whatever the model's size."""
        return HEADER_BYTES + FLOAT_BYTES

    def truthful(self, side, step: Gather, agents: np.ndarray) -> np.ndarray:
        """Return F_k(step.model) of each of ``agents``, (m,), per-sample losses clipped to
        the side's ``loss_bound``."""
        return side.true_losses(step.model, agents)[agents]


class LossChangeAsk(LossAsk):
    """Report F_k(reference) - F_k(model) (Alg. 2's payment report): a scalar, like a loss."""

    name = "loss_change"

    def truthful(self, side, step: Gather, agents: np.ndarray) -> np.ndarray:
        """Return F_k(step.reference) - F_k(step.model) of each of ``agents``, (m,)."""
        change = side.true_losses(step.reference, agents) - side.true_losses(step.model, agents)
        return change[agents]


class DataAsk(Ask):
    """Upload the agent's dataset (the central ``vcg`` reference): ``HEADER_BYTES + 8 n_k (d+1)``
    bytes (the raw features plus the label), not a report: no strategy, no repair."""

    name = "data"
    is_report = False
    repairable = False

    def upload_bytes(self, side, agents: np.ndarray) -> np.ndarray:
        """Return ``HEADER_BYTES + 8 n_k (d + 1)`` for each of ``agents`` (bytes, (m,))."""
        d1 = side.design.data.d + 1  # the raw features plus the label
        return HEADER_BYTES + FLOAT_BYTES * side.design.n_k[agents] * d1

    def answer(self, side, step: Gather, agents: np.ndarray) -> Replies:
        """Return Replies whose ``data`` is the central design."""
        return Replies(agents, data=side.design)


class LocalModelAsk(Ask):
    """Read each agent's local-learning model (evaluation only: local learning sends
    nothing, so no message is counted and no time passes)."""

    name = "local_model"
    is_report = False
    repairable = False
    sends_messages = False

    def answer(self, side, step: Gather, agents: np.ndarray) -> Replies:
        """Return Replies with the local models of ``agents`` (m, p) and, in ``rounds``, the
        gradient steps of each agent's local learning."""
        W, rounds = local_models(side.model, side.design, side.local_rounds)
        return Replies(agents, values=W[agents], rounds=rounds)


#: The built-in asks by name: what ``Gather(..., ask="name")`` looks up.
ASK_TYPES: dict[str, type[Ask]] = {
    cls.name: cls for cls in (GradientAsk, LossAsk, LossChangeAsk, DataAsk, LocalModelAsk)
}
ASKS = tuple(ASK_TYPES)


def as_ask(ask: Ask | type[Ask] | str) -> Ask:
    """Return the :class:`Ask` that ``ask`` names: an instance as is, a subclass instantiated,
    a name looked up in :data:`ASK_TYPES`; ValueError listing the names otherwise."""
    if isinstance(ask, Ask):
        return ask
    if isinstance(ask, type) and issubclass(ask, Ask):
        return ask()
    if isinstance(ask, str) and ask in ASK_TYPES:
        return ASK_TYPES[ask]()
    raise ValueError(f"unknown ask {ask!r}; allowed: {ASKS} or an Ask subclass")


@dataclass(frozen=True, eq=False)
class Gather:
    """Send ``model`` to ``agents`` and collect one report from each.

    Built with keywords after the model: ``Gather(w, agents=others, ask="gradient",
    phase="phase2", problem=k)``.

    ``agents``: indices of the recipients (``None`` = every agent).
    ``ask``: what each agent reports, an :class:`Ask` (a subclass or its name
    may be given; the step holds the instance): ``"gradient"`` (grad
    F_k(model)), ``"loss"`` (F_k(model)), ``"loss_change"`` (F_k(reference) -
    F_k(model), Alg. 2's payment report), ``"data"`` (its dataset: the central
    reference), ``"local_model"`` (its local-learning model; read for
    evaluation only, no message is counted: local learning sends nothing).
    ``round``: the step's round in its phase (Phase I: t; Phase II: the round of
    the problem's own descent), -1 when not numbered; what a strategy sees as
    :attr:`edgesim.device_view.Request.round`. ``payees``: the agents whose
    payments the Phase II problem computes (None: the agent ``problem``, as in
    FFL; DP-FFL names its cluster's members).
    ``aggregate``: weights, one per recipient; when given, the server receives
    only ``sum_i aggregate_i report_i`` (secure aggregation: no individual
    report is revealed). ``phase`` (``"phase1"``/``"phase2"``) and ``problem``
    (which Phase II problem, e.g. the excluded agent or cluster) label the
    step for the trace. ``sum_weights``: weights indexed by agent id, (K,);
    when given, the mechanism reads only ``sum_i sum_weights[agent_i] report_i``
    over the repliers (openly: the server may see the reports), so a driver
    may answer with that sum (:attr:`Replies.sum_of`) and form the per-agent
    reports only when something asks for them (:meth:`Replies.reports`).
    """

    model: np.ndarray | None
    _: KW_ONLY
    agents: np.ndarray | None = None
    ask: Ask | type[Ask] | str = "gradient"
    phase: str = "phase1"
    problem: int = -1
    aggregate: np.ndarray | None = None
    reference: np.ndarray | None = None
    sum_weights: np.ndarray | None = None
    round: int = -1
    payees: np.ndarray | None = None

    def __post_init__(self):
        object.__setattr__(self, "ask", as_ask(self.ask))


@dataclass(frozen=True, eq=False)
class GatherMany:
    """Several :class:`Gather` steps served in one exchange (Phase II in parallel).

    Each agent receives one message carrying the models of every part it is a
    recipient of and replies with one message carrying that many reports: the
    concatenation of the per-part messages it replaces, so its size is the sum
    of theirs (headers included), while the round trips fall to one. A lost
    message loses all the reports it carries. The mechanism receives a list of
    :class:`Replies`, one per part, in the parts' order. ``phase`` labels the
    exchange; parts may not ask for ``data`` or ``local_model`` nor aggregate
    securely (one secure aggregation session per exchange).
    """

    parts: tuple[Gather, ...]
    phase: str = "phase2"
    problem: int = -1

    def __post_init__(self):
        for part in self.parts:
            if not part.ask.is_report or part.aggregate is not None:
                raise ValueError("GatherMany parts ask for reports, openly (no secure aggregation)")

    def recipients(self, K: int) -> tuple[np.ndarray, list[np.ndarray]]:
        """Return (every recipient once, sorted; each part's recipients as an array)."""
        each = [np.arange(K) if g.agents is None else np.asarray(g.agents) for g in self.parts]
        union = np.unique(np.concatenate(each)) if each else np.zeros(0, dtype=np.int64)
        return union, each


#: :attr:`Replies.missing` when every recipient replied: one read-only empty array, shared.
NONE_MISSING = np.zeros(0, dtype=np.int64)
NONE_MISSING.flags.writeable = False


@dataclass(eq=False)
class Replies:
    """What the server received for one :class:`Gather`.

    ``agents``: who replied, in the order asked (a subset when a network loses
    messages or a deadline cuts agents). ``values``: their reports, (m, p) for
    gradients or (m,) for losses; ``None`` under secure aggregation, where only
    ``total`` (the weighted sum over the repliers) is known. ``data``: the
    central design for ``ask="data"``. ``rounds``: for ``ask="local_model"``,
    the gradient steps of each agent's local learning. ``missing``: the
    recipients whose replies did not arrive.

    For a step with ``sum_weights``, a driver may leave ``values`` None and
    give ``sum_of`` (``sum_of(a)`` returns sum_i sum_weights[a_i] report_i
    over the agents ``a``: the repliers, or after a retry the merged repliers)
    and ``values_of`` (``values_of(a)``: the reports of ``a``, formed on
    demand). The weighted sum then costs no (m, p) array of reports. When
    ``sum_of`` is a bound method of an object with ``merged(other)`` (the
    driver's sums with a few deviators), a retry's replies merge through it, so
    that the merged sum carries both sets' deviations.
    """

    agents: np.ndarray
    values: np.ndarray | None = None
    total: np.ndarray | None = None
    data: object = None
    rounds: object = None
    missing: np.ndarray = field(default_factory=lambda: NONE_MISSING)
    sum_of: Callable[[np.ndarray], np.ndarray] | None = None
    values_of: Callable[[np.ndarray], np.ndarray] | None = None

    def reports(self) -> np.ndarray | None:
        """Return the repliers' reports: ``values``, formed by ``values_of`` when only that is
        given (then kept in ``values``); None when only a sum is known."""
        if self.values is None and self.values_of is not None:
            self.values = self.values_of(self.agents)
        return self.values


def payload_bytes(ask: Ask | type[Ask] | str, n_params: int) -> int:
    """Bytes of one upload answering ``ask`` (header included): :meth:`Ask.payload_bytes`;
    data uploads are sized by :meth:`DataAsk.upload_bytes`."""
    return as_ask(ask).payload_bytes(n_params)


def model_bytes(n_params: int) -> int:
    """Bytes of one downlink message carrying a model of ``n_params`` float64 values."""
    return HEADER_BYTES + FLOAT_BYTES * n_params
