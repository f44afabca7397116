"""Agents' strategies: how an agent answers the server.

A strategy transforms the truthful reports of the agents that follow it; it
sees what those agents see (their own reports, the round), never another
agent's data. Strategies act on row blocks, so applying them is a loop over
the few distinct strategies, not over agents.

Built-in kinds (``[[agents.strategy]]`` tables in a scenario):

- ``truthful``: report grad F_k as asked (the suggested protocol s^m_k);
- ``amplify``: multiply every gradient report by ``gamma`` (the paper's
  manipulated FedAvg, Sec. III-B, eq. MFL);
- ``opt-out``: leave the federation and learn locally (Sec. III-A): the
  mechanism runs without the agent and its model is its local model;
- ``noisy``: add N(0, ``noise_std``^2 I) to every gradient report.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from edgesim.arrays import as_slice
from edgesim.config import (
    NoOptions,
    attach_options,
    option,
    options_class,
    part_options,
    resolved_options,
)
from edgesim.device_view import Past
from edgesim.registry import register


class Strategy:
    """Base class: truthful reporting.

    A strategy answers a :class:`~edgesim.device_view.Request` (what the device
    knows: phase, round, the model sent, the Phase II problem, the kind of
    report, its own data and earlier reports) for a block of agents at once:

    - :meth:`report` returns the rows they send (default: :meth:`gradients` for
      a gradient report, :meth:`losses` for a loss or loss change, so a
      strategy written against those keeps working);
    - :meth:`withholds` may decline to answer: the server sees a missing reply,
      exactly as if the network had lost it (read only when ``may_withhold``);
    - :meth:`delay_s` may hold a reply back before sending it (events fidelity
      only; read only when ``may_delay``).

    Class flags: ``participates`` (False: the agent leaves the federation),
    ``remembers`` (its requests carry its earlier reports in ``history``),
    ``may_withhold``, ``may_delay``. A truthful agent costs nothing: no hook
    is called for it.
    """

    kind = "truthful"
    participates = True
    remembers = False
    may_withhold = False
    may_delay = False

    def report(self, request, rows: np.ndarray) -> np.ndarray:
        """Return the reports sent for truthful ``rows`` ((m, p) gradients or (m,) losses) of
        the agents of ``request`` (a :class:`~edgesim.device_view.Request`)."""
        if request.ask == "gradient":
            return self.gradients(rows, request.phase, request.rng)
        return self.losses(rows, request.phase, request.rng)

    def withholds(self, request) -> np.ndarray | None:
        """Return which of the request's agents withhold their reply, bool (m,), or None (none)."""
        return None

    def delay_s(self, request) -> np.ndarray | None:
        """Return how long each of the request's agents holds its reply back, seconds (m,),
        or None (no delay). Read in events fidelity only."""
        return None

    def gradients(self, rows: np.ndarray, phase: str, rng: np.random.Generator) -> np.ndarray:
        """Return the reported gradients for truthful ``rows`` (m, p) of this strategy's agents."""
        return rows

    def losses(self, values: np.ndarray, phase: str, rng: np.random.Generator) -> np.ndarray:
        """Return the reported loss values for truthful ``values`` (m,)."""
        return values

    def describe(self) -> str:
        """Return a short label, e.g. ``amplify(gamma=4)``."""
        return self.kind


class Truthful(Strategy):
    """Follow the protocol: report exactly what is asked."""


@dataclass(frozen=True)
class Amplify(Strategy):
    """Multiply gradient reports by ``gamma`` (Sec. III-B), in every request or only some.

    ``phases``: ``"all"``, ``"phase1"`` or ``"phase2"``: the phases whose
    gradient reports are amplified. ``problems``: ``"all"``, or ``"own"`` /
    ``"others"``: only Phase II requests of the agent's own payment problem /
    of the other agents' (Phase I is no one's payment problem, so either
    restriction leaves Phase I truthful). FFL never asks an agent for a
    gradient in its own problem (Alg. 1, line 10), nor DP-FFL in its own
    cluster's (Alg. 2), so ``problems = "own"`` amplifies nothing there. Loss
    reports pass unchanged. The defaults amplify every gradient report.
    """

    gamma: float = 1.0
    phases: str = "all"
    problems: str = "all"
    kind = "amplify"

    def report(self, request, rows):
        """Return the rows sent: ``gamma * rows`` for the gradient rows selected, else ``rows``."""
        if request.ask != "gradient":
            return self.losses(rows, request.phase, request.rng)
        if self.phases == "all" and self.problems == "all":
            return self.gradients(rows, request.phase, request.rng)
        chosen = Amplify.selected_rows(request, self.phases, self.problems)
        if not chosen.any():
            return rows
        return np.where(chosen[:, None], self.gradients(rows, request.phase, request.rng), rows)

    @staticmethod
    def selected_rows(request, phases: str, problems: str) -> np.ndarray:
        """Return which rows of ``request`` a phase / payment-problem restriction selects, bool (m,).

        ``phases``: ``"all"`` or the phase's name; ``problems``: ``"all"``,
        ``"own"`` (Phase II rows whose problem computes the row's agent's own
        payment: :attr:`~edgesim.device_view.Request.own_problem`) or
        ``"others"`` (the other Phase II rows).
        """
        m = request.agents.size
        if phases != "all" and request.phase != phases:
            return np.zeros(m, dtype=bool)
        if problems == "all":
            return np.ones(m, dtype=bool)
        if request.phase != "phase2":
            return np.zeros(m, dtype=bool)
        own = np.asarray(request.own_problem, dtype=bool)
        return own.copy() if problems == "own" else ~own

    def gradients(self, rows, phase, rng):
        """Return ``gamma * rows``."""
        return self.gamma * rows

    def describe(self):
        """Return ``amplify(gamma=...)``, with its restrictions when it has any."""
        limits = "".join(
            f", {name}={value}"
            for name, value in (("phases", self.phases), ("problems", self.problems))
            if value != "all"
        )
        return f"amplify(gamma={self.gamma:g}{limits})"


@dataclass(frozen=True)
class NoisyReport(Strategy):
    """Add Gaussian noise of standard deviation ``noise_std`` to every gradient report."""

    noise_std: float = 0.0
    kind = "noisy"

    def gradients(self, rows, phase, rng):
        """Return ``rows`` plus N(0, noise_std^2) noise drawn from ``rng``."""
        return rows + self.noise_std * rng.standard_normal(rows.shape)

    def describe(self):
        """Return ``noisy(std=...)``."""
        return f"noisy(std={self.noise_std:g})"


class OptOut(Strategy):
    """Leave the federation: the agent learns locally and pays nothing."""

    kind = "opt-out"
    participates = False


@dataclass(frozen=True)
class AmplifyOptions:
    """The ``amplify`` strategy's option, written inline in its ``[[agents.strategy]]`` table."""

    gamma: float = option(1.0, "amplify: the factor multiplying every gradient report", gt=0.0)
    phases: str = option(
        "all", "amplify: the phases whose gradient reports it amplifies",
        choices=("all", "phase1", "phase2"),
    )  # fmt: skip
    problems: str = option(
        "all",
        "amplify: 'all' requests, or only the Phase II requests of the agent's 'own' payment "
        "problem, or of the 'others' problems (either leaves Phase I truthful)",
        choices=("all", "own", "others"),
    )


@dataclass(frozen=True)
class NoisyOptions:
    """The ``noisy`` strategy's option, written inline in its ``[[agents.strategy]]`` table."""

    noise_std: float = option(0.0, "noisy: std of the Gaussian noise added to reports", ge=0.0)


STRATEGIES: dict[str, type] = {}

#: StrategyConfig fields that mirror the built-in strategies' options of the same name.
SHORTCUTS = ("gamma", "noise_std")


@dataclass(frozen=True)
class StrategyConfig:
    """One ``[[agents.strategy]]`` table: which agent plays which strategy, and its options.

    ``options`` holds the chosen kind's declared options (``AmplifyOptions``
    for ``amplify``); in the table they are written inline (``gamma = 2``).
    ``gamma`` and ``noise_std`` mirror the built-ins' options of those names:
    ``StrategyConfig(agent=0, kind="amplify", gamma=2.0)`` sets
    ``options = AmplifyOptions(gamma=2.0)``, and either way ``cfg.gamma`` reads
    the value; a registered kind that declares no options reads them as before.
    """

    agent: int = option(0, "index of the agent (0-based) playing this strategy", ge=0)
    kind: str = option("truthful", "strategy kind (a registered name or 'module:Class')")
    gamma: float = option(
        1.0, "amplify's gamma (mirrors its option; read by kinds without options)", gt=0.0
    )
    noise_std: float = option(
        0.0, "noisy's noise_std (mirrors its option; read by kinds without options)", ge=0.0
    )
    options: Any = part_options(
        "kind",
        STRATEGIES,
        "the chosen kind's options (written inline in its table)",
        inline=True,
        shortcuts=SHORTCUTS,
    )

    def __post_init__(self):
        cls = options_class(STRATEGIES.get(self.kind))
        if cls is None:
            return
        names = {f.name for f in fields(cls)} & set(SHORTCUTS)
        if self.options is None:
            object.__setattr__(self, "options", cls(**{n: getattr(self, n) for n in names}))
            return
        defaults = StrategyConfig.__dataclass_fields__
        for n in names:
            if isinstance(self.options, cls) and getattr(self, n) == defaults[n].default:
                object.__setattr__(self, n, getattr(self.options, n))


def register_strategy(name: str, factory, *, options: type | None = None, replace: bool = False):
    """Register a strategy factory under ``name``; returns nothing.

    ``factory(cfg: StrategyConfig) -> Strategy``; scenarios then accept
    ``kind = name``. ``options``: the strategy's options class (a frozen
    dataclass declared with :func:`edgesim.config.option`), unless the factory
    already carries one as its ``options`` attribute; its keys are then
    written inline in the ``[[agents.strategy]]`` table, validated like every
    scenario key, and read by the factory with
    ``edgesim.config.resolved_options(cfg, "options")``. A name already taken
    raises ValueError unless ``replace`` is true.
    """
    attach_options(factory, options)
    register(STRATEGIES, "strategy", name, factory, replace)


def _amplify(cfg: StrategyConfig) -> Amplify:
    opts = resolved_options(cfg, "options")
    return Amplify(opts.gamma, opts.phases, opts.problems)


def _noisy(cfg: StrategyConfig) -> NoisyReport:
    return NoisyReport(resolved_options(cfg, "options").noise_std)


register_strategy("truthful", lambda cfg: Truthful(), options=NoOptions)
register_strategy("amplify", _amplify, options=AmplifyOptions)
register_strategy("noisy", _noisy, options=NoisyOptions)
register_strategy("opt-out", lambda cfg: OptOut(), options=NoOptions)
#: The names edgesim itself registers (taken before any user registration can run).
BUILTIN_STRATEGIES = tuple(sorted(STRATEGIES))


def make_strategy(cfg: StrategyConfig) -> Strategy:
    """Return the strategy a :class:`StrategyConfig` names (KeyError if unknown)."""
    return STRATEGIES[cfg.kind](cfg)


class Population:
    """The strategies of K agents, grouped so reports are transformed per group.

    ``strategies[k]`` is agent k's strategy (truthful unless configured).
    """

    def __init__(self, K: int, assigned: dict[int, Strategy] | None = None):
        self.K = K
        self.assigned = dict(assigned or {})
        # Group equal strategies (frozen dataclasses compare by value) under one label.
        self._groups: list[Strategy] = []
        self._history: dict[int, list[Past]] = {}
        self._label = np.full(K, -1, dtype=np.int64)
        index: dict = {}
        for k, s in sorted(self.assigned.items()):
            if isinstance(s, Truthful) or type(s) is Strategy:
                continue
            try:
                key = s if hash(s) is not None else id(s)
            except TypeError:
                key = id(s)
            if key not in index:
                index[key] = len(self._groups)
                self._groups.append(s)
            self._label[k] = index[key]
        self._deviators = np.flatnonzero(self._label >= 0)  # asked every exchange: once here
        self._last_found: tuple | None = None  # (agents, _found_in(agents)) when kept
        self._may_withhold = any(s.may_withhold for s in self._groups)  # the same: once here
        self._may_delay = any(s.may_delay for s in self._groups)

    def deviators(self) -> np.ndarray:
        """Return the agents whose strategy may change what they report or send, sorted (int64)."""
        return self._deviators

    @property
    def may_withhold(self) -> bool:
        """Whether some agent's strategy may withhold a reply (else :meth:`withheld` is None)."""
        return self._may_withhold

    @property
    def may_delay(self) -> bool:
        """Whether some agent's strategy may hold a reply back (else :meth:`delays_s` is None)."""
        return self._may_delay

    @property
    def all_truthful(self) -> bool:
        """Whether every agent reports its true values (no strategy transforms a report)."""
        return not self._groups

    def strategy(self, k: int) -> Strategy:
        """Return agent ``k``'s strategy."""
        return self.assigned.get(k, TRUTHFUL)

    def participants(self) -> np.ndarray:
        """Return the indices of agents that join the federation (not opting out)."""
        inside = np.ones(self.K, dtype=bool)
        for k, strategy in self.assigned.items():  # the others are truthful: they participate
            inside[k] = strategy.participates
        return np.flatnonzero(inside)

    def restricted(self, agents: np.ndarray) -> Population:
        """Return the population of ``agents`` (distinct) renumbered 0..len-1 (strategy objects
        shared)."""
        agents = np.asarray(agents, dtype=np.int64)
        if not self.assigned:
            return Population(agents.size, {})
        where = np.full(self.K, -1, dtype=np.int64)  # each agent's new number, -1 outside
        where[agents] = np.arange(agents.size)
        at = {int(where[k]): s for k, s in self.assigned.items() if where[k] >= 0}
        return Population(agents.size, dict(sorted(at.items())))

    def apply(self, agents: np.ndarray, reports: np.ndarray, request_of) -> np.ndarray:
        """Return the reports as sent by ``agents`` (rows aligned), given truthful ``reports``.

        ``request_of(block)`` returns the :class:`~edgesim.device_view.Request` that the
        agents ``block`` (a sub-array of ``agents``) answer; each strategy group's
        :meth:`Strategy.report` transforms its rows. Loops over strategy groups only.
        """
        if not self._groups:
            return reports
        out = reports
        for g, pos, req in self._requests(agents, request_of):
            if out is reports:
                out = reports.copy()
            # a slice of the copy holds the same rows as the gather of ``reports`` would,
            # without the gather (``reports`` itself is never handed to a strategy)
            rows = out[pos] if type(pos) is slice else reports[pos]
            out[pos] = self._groups[g].report(req, rows)
            if self._groups[g].remembers:
                self._remember(g, req, out[pos])
        return out

    def withheld(self, agents: np.ndarray, request_of) -> np.ndarray | None:
        """Return which of ``agents`` withhold their reply (bool, aligned), or None when none
        may (no strategy with ``may_withhold``)."""
        if not self._may_withhold:
            return None
        out = np.zeros(agents.size, dtype=bool)
        for g, pos, req in self._requests(agents, request_of, "may_withhold"):
            mask = self._groups[g].withholds(req)
            if mask is not None:
                out[pos] = mask
                if self._groups[g].remembers and np.any(mask):
                    self._remember(g, req, None, np.asarray(mask, dtype=bool))
        return out if out.any() else None

    def delays_s(self, agents: np.ndarray, request_of) -> np.ndarray | None:
        """Return how long each of ``agents`` holds its reply back (seconds, aligned), or None
        when none does (no strategy with ``may_delay``)."""
        if not self._may_delay:
            return None
        out = np.zeros(agents.size)
        for g, pos, req in self._requests(agents, request_of, "may_delay"):
            delay = self._groups[g].delay_s(req)
            if delay is not None:
                out[pos] = delay
        return out if out.any() else None

    def _requests(self, agents: np.ndarray, request_of, flag: str | None = None):
        """Yield (group, positions in ``agents``, its Request) for each strategy group among
        ``agents`` (only groups whose strategy has ``flag`` set, when given)."""
        for g, pos in self._found_in(agents):
            if flag is not None and not getattr(self._groups[g], flag):
                continue
            req = request_of(agents[pos])
            if self._groups[g].remembers:
                req.history = self._history.setdefault(g, [])
            yield g, pos, req

    def _found_in(self, agents: np.ndarray) -> list[tuple[int, slice | np.ndarray]]:
        """Return (group, its positions in ``agents``) for each strategy group among ``agents``
        (the positions as a slice where consecutive). Kept for the last ``agents`` array that
        is read-only and owns its data (it cannot change: a driver's "every agent", asked
        every round)."""
        if self._last_found is not None and self._last_found[0] is agents:
            return self._last_found[1]
        labels = self._label[agents]
        if len(self._groups) == 1:  # the common case (one deviator, a search): no np.unique
            pos = (labels == 0).nonzero()[0]
            found = [(0, as_slice(pos))] if pos.size else []
        else:
            found = [
                (g, as_slice(np.flatnonzero(labels == g)))
                for g in np.unique(labels[labels >= 0]).tolist()
            ]
        if agents.flags.owndata and not agents.flags.writeable:
            self._last_found = (agents, found)
        return found

    def _remember(self, g: int, req, rows, withheld: np.ndarray | None = None) -> None:
        """Append what group ``g``'s agents sent for ``req`` to its history (rows copied)."""
        agents = req.agents if withheld is None else req.agents[withheld]
        self._history.setdefault(g, []).append(
            Past(
                req.phase,
                req.round,
                req.problem,
                req.ask,
                agents,
                None if rows is None else rows.copy(),
            )
        )


TRUTHFUL = Truthful()
