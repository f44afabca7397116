"""What a device knows when it answers a request: the view a strategy is handed.

The paper's strategy space A_k is any message in any iteration (Faithful
Federated Learning, Sec. II, "Strategy space"), so a strategy sees what the
device itself would know when it answers, and nothing else:

- the request (:class:`Request`): the phase, the round, the model it was sent
  (and the reference model of a loss-change report), which Phase II problem
  the request belongs to and whether that is the agent's own, the kind of
  report asked (gradient, loss, loss change);
- its own data and what it can compute from it (:class:`OwnData`): its true
  reports at any model, on its own data or on a fabricated version of it, its
  local optimum, its sample counts;
- its own earlier reports (:attr:`Request.history`, kept only for strategies
  that ask for it: ``remembers = True``).

Never another agent's data or report. A request covers a block of agents that
play the same strategy (rows aligned with :attr:`Request.agents`), so
strategies stay vectorised; :class:`OwnData` is built only when a strategy
reads it, so a strategy that only rescales its rows costs nothing more.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the learning code is imported where used: validating a scenario needs none
    from edgesim.learning.data import FederatedDataset
    from edgesim.learning.models import Design, Model


class OwnData:
    """The data of a block of agents and what they can compute from it alone.

    ``agents``: the agents' indices in the mechanism's numbering (the rows of
    a request); everything here is in that order. ``design`` is the whole
    federation's design, read only for these agents' rows. ``clip_norm`` and
    ``loss_bound`` are the run's per-sample clipping, which a device applies
    to its own reports as the truthful protocol does.
    """

    def __init__(
        self,
        model: Model,
        design: Design,
        agents: np.ndarray,
        clip_norm: float | None = None,
        loss_bound: float | None = None,
        local_rounds: int = 5000,
    ):
        self.model = model
        self.agents = np.asarray(agents, dtype=np.int64)
        self.clip_norm = clip_norm
        self.loss_bound = loss_bound
        self.local_rounds = local_rounds
        self._federation = design

    @cached_property
    def data(self) -> FederatedDataset:
        """Return the agents' own dataset, agents renumbered 0..m-1 in :attr:`agents` order."""
        return self._federation.data.subset(self.agents)

    @property
    def n_k(self) -> np.ndarray:
        """Return each agent's number of training samples, shape (m,), int."""
        return self._federation.n_k[self.agents]

    @cached_property
    def design(self) -> Design:
        """Return the design of the agents' own data (:attr:`data`)."""
        return self.model.design(self.data)

    def fabricated(self, y: np.ndarray | None = None, X: np.ndarray | None = None) -> Design:
        """Return the design of the agents' own data with its labels ``y`` and/or features ``X``
        replaced (training rows, in :attr:`data`'s order): a dataset a device pretends to hold."""
        changes = {k: v for k, v in (("y", y), ("X", X)) if v is not None}
        return self.model.design(dataclasses.replace(self.data, **changes))

    def gradients(self, w: np.ndarray, design: Design | None = None) -> np.ndarray:
        """Return grad F_k(w) of each agent on its own data (or on ``design``, a
        :meth:`fabricated` version of it), (m, p), clipped as the protocol clips."""
        return self.model.agent_grads(w, design or self.design, self.clip_norm)

    def losses(self, w: np.ndarray, design: Design | None = None) -> np.ndarray:
        """Return F_k(w) of each agent on its own data (or on ``design``), (m,)."""
        return self.model.agent_losses(w, design or self.design, loss_bound=self.loss_bound)

    @cached_property
    def local_optima(self) -> np.ndarray:
        """Return each agent's local model argmin F_k on its own data, (m, p) (computed once)."""
        from edgesim.learning.local import local_models

        W, _ = local_models(self.model, self.design, self.local_rounds)
        return W


@dataclass(frozen=True, eq=False)
class Past:
    """One earlier request answered by a block of agents, and what they sent.

    ``rows`` is None for a request they withheld."""

    phase: str
    round: int
    problem: int
    ask: str
    agents: np.ndarray
    rows: np.ndarray | None


class _OnFirstRead:
    """A dataclass field that may be given as a function of no arguments: it is called on the
    field's first read and its value kept (a request's rows that no strategy reads cost
    nothing). Any other value is the field's value."""

    def __set_name__(self, owner, name: str):
        self.key = "_" + name

    def __get__(self, obj, owner=None):
        if obj is None:  # no default: the field is required
            raise AttributeError(self.key)
        value = obj.__dict__[self.key]
        if callable(value):
            value = obj.__dict__[self.key] = value()
        return value

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.key] = value


@dataclass(eq=False)
class Request:
    """One request as the devices answering it see it (a block of agents, one strategy).

    ``phase``: ``"phase1"`` or ``"phase2"``. ``round``: the index t of the
    iterate the report is taken at, in its phase (Phase I: w[t], t = 0..T1 - 1;
    FFL's extra round at w* = w[T1] is Phase I's round T1, and a Phase II
    problem's report at w_{-k}[t] is its round t >= 1; DP-FFL's loss change is
    round T2; -1 when the mechanism does not number it).
    ``problem``: the Phase II problem (FFL: the agent whose payment it
    computes; DP-FFL: the cluster), -1 in Phase I. ``own_problem``: (m,)
    whether the problem computes each row's agent's own payment (FFL never
    asks an agent in its own problem; DP-FFL asks every agent for loss
    changes); it may be given as a function returning it, called when first read.
    ``ask``: the kind of report, ``"gradient"``, ``"loss"`` or
    ``"loss_change"``. ``model``: the model sent; ``reference``: the
    reference model of a loss-change report (w*), else None. ``agents``: the
    rows' agents (mechanism numbering). ``rng``: the agents' random stream.
    ``history``: earlier :class:`Past` requests of this strategy's agents
    (empty unless the strategy ``remembers``). :attr:`own`: the agents' own
    data (:class:`OwnData`), built when first read.
    """

    phase: str
    round: int
    problem: int
    ask: str
    model: np.ndarray | None
    reference: np.ndarray | None
    agents: np.ndarray
    rng: np.random.Generator
    own_problem: np.ndarray = _OnFirstRead()  # noqa: RUF009 - a descriptor, not a default
    history: list = field(default_factory=list)
    own_data: object = None  # a callable returning OwnData (lazy), or OwnData

    @cached_property
    def own(self) -> OwnData:
        """Return the agents' own data (:class:`OwnData`), built on first use."""
        return self.own_data() if callable(self.own_data) else self.own_data
