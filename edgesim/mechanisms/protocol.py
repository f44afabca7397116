"""The communication steps a mechanism can ask for, and what comes back.

A mechanism is a generator: it yields a :class:`Gather` (the server sends a
model to some agents and each replies with a report) and receives
:class:`Replies`. Drivers answer the steps: the in-memory driver at once
(``edgesim.mechanisms.driver``), the network driver over simulated links.

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

import numpy as np

HEADER_BYTES = 64
FLOAT_BYTES = 8

ASKS = ("gradient", "loss", "loss_change", "data", "local_model")


@dataclass(frozen=True, eq=False)
class Gather:
    """Send ``model`` to ``agents`` and collect one report from each.

    Built with keywords after the model: ``Gather(w, agents=others, ask="gradient",
    phase="phase2", problem=k)``.

    ``agents``: indices of the recipients (``None`` = every agent).
    ``ask``: what each agent reports: ``"gradient"`` (grad F_k(model)),
    ``"loss"`` (F_k(model)), ``"loss_change"`` (F_k(reference) - F_k(model),
    Alg. 2's payment report), ``"data"`` (its dataset: the central reference),
    ``"local_model"`` (its local-learning model; read for evaluation only, no
    message is counted: local learning sends nothing).
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
    ask: str = "gradient"
    phase: str = "phase1"
    problem: int = -1
    aggregate: np.ndarray | None = None
    reference: np.ndarray | None = None
    sum_weights: np.ndarray | None = None

    def __post_init__(self):
        if self.ask not in ASKS:
            raise ValueError(f"unknown ask {self.ask!r}; allowed: {ASKS}")


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
            if part.ask in ("data", "local_model") or part.aggregate is not None:
                raise ValueError("GatherMany parts ask for reports, openly (no secure aggregation)")

    def recipients(self, K: int) -> tuple[np.ndarray, list[np.ndarray]]:
        """Return (every recipient once, sorted; each part's recipients as an array)."""
        each = [np.arange(K) if g.agents is None else np.asarray(g.agents) for g in self.parts]
        union = np.unique(np.concatenate(each)) if each else np.zeros(0, dtype=np.int64)
        return union, each


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
    demand). The weighted sum then costs no (m, p) array of reports.
    """

    agents: np.ndarray
    values: np.ndarray | None = None
    total: np.ndarray | None = None
    data: object = None
    rounds: object = None
    missing: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    sum_of: Callable[[np.ndarray], np.ndarray] | None = None
    values_of: Callable[[np.ndarray], np.ndarray] | None = None

    def reports(self) -> np.ndarray | None:
        """Return the repliers' reports: ``values``, formed by ``values_of`` when only that is
        given (then kept in ``values``); None when only a sum is known."""
        if self.values is None and self.values_of is not None:
            self.values = self.values_of(self.agents)
        return self.values


def payload_bytes(ask: str, n_params: int) -> int:
    """Bytes of one upload answering ``ask`` (header included); data uploads are sized by the driver."""
    if ask == "gradient":
        return HEADER_BYTES + FLOAT_BYTES * n_params
    if ask in ("loss", "loss_change"):
        return HEADER_BYTES + FLOAT_BYTES
    raise ValueError(f"no fixed payload size for ask {ask!r}")


def model_bytes(n_params: int) -> int:
    """Bytes of one downlink message carrying a model of ``n_params`` float64 values."""
    return HEADER_BYTES + FLOAT_BYTES * n_params
