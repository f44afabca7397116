"""Network-aware deviations: withhold a reply, or answer late on purpose.

Deviations only a network allows (issue 29): a device that does not want to
answer a request can pretend the reply was lost, and one that wants to miss a
round can answer after the server's deadline. The paper's strategy space A_k is
any message in any iteration (Faithful Federated Learning, Sec. II, "Strategy
space"); sending nothing, or sending it late, is one of those messages.

- ``withhold``: decline to answer a selected request with probability
  ``probability``; the server sees a missing reply, exactly as if the network
  had lost it (:meth:`edgesim.agents.Strategy.withholds`).
- ``late``: hold the reply to a selected request back ``delay_s`` seconds with
  probability ``probability`` (:meth:`edgesim.agents.Strategy.delay_s`). It needs
  simulated time (``network.fidelity`` ``'batched'`` or ``'events'``: a scenario
  rule refuses ``'none'``); under ``network.round_policy = 'deadline'`` a reply
  held past ``network.deadline_s`` is cut, and so missing to the mechanism.

Both choose their requests with the same selectors (:class:`Selection`):
``phases`` (``'all'``, ``'phase1'``, ``'phase2'``), a round range
``round_min``..``round_max`` (inclusive, ``-1``: open at that end) on
:attr:`Request.round <edgesim.device_view.Request.round>`, and ``problems``
(``'all'``, ``'own'``: the Phase II problems that price the agent itself,
``'others'``: the other agents' problems). Under FFL Phase I's round T1 is the
extra round at w* that starts every Phase II problem, so ``phases = 'phase1'``,
``round_min = round_max = T1`` selects the reply to that round alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgesim.agents import Strategy, register_strategy
from edgesim.config import option, resolved_options

PHASES = ("all", "phase1", "phase2")
PROBLEMS = ("all", "own", "others")
OPEN = -1  # a round bound that does not bound


@dataclass(frozen=True)
class Selection:
    """Which requests a network-aware strategy acts on, and how often.

    ``probability`` in [0, 1]: each selected row acts with this probability,
    drawn from the request's random stream (one uniform per row of a selected
    request, ``rng.random(m) < probability``; nothing is drawn when the
    probability is 0 or 1, so those stay free of randomness). ``phases``,
    ``round_min``/``round_max`` and ``problems``: see the module docstring. A
    request whose round the mechanism does not number (``round = -1``) falls
    inside a range only when ``round_min`` is open. ``problems = 'own'`` or
    ``'others'`` selects Phase II rows only (Phase I prices nobody).
    """

    probability: float = 1.0
    phases: str = "all"
    round_min: int = OPEN
    round_max: int = OPEN
    problems: str = "all"

    def rows(self, request) -> np.ndarray | None:
        """Return which rows of ``request`` act (bool (m,)), or None when none does."""
        if self.probability <= 0.0 or not self._in_range(request):
            return None
        m = request.agents.size
        if self.problems == "all":
            chosen = np.ones(m, dtype=bool)
        else:
            pricing = np.asarray(request.own_problem, dtype=bool)
            in_problem = request.phase == "phase2" and request.problem >= 0
            chosen = (pricing if self.problems == "own" else ~pricing) & in_problem
        if not chosen.any():
            return None
        if self.probability < 1.0:
            chosen &= request.rng.random(m) < self.probability
        return chosen if chosen.any() else None

    def _in_range(self, request) -> bool:
        """Whether the request's phase and round are selected."""
        if self.phases != "all" and request.phase != self.phases:
            return False
        if self.round_min != OPEN and request.round < self.round_min:
            return False
        return self.round_max == OPEN or request.round <= self.round_max

    def label(self) -> str:
        """Return the selectors that are not their defaults, short: ``p=0.5,phase2,r3-,others``
        (``r3-``: rounds 3 on; ``r-7``: up to 7)."""
        parts = [] if self.probability >= 1.0 else [f"p={self.probability:g}"]
        if self.phases != "all":
            parts.append(self.phases)
        if (self.round_min, self.round_max) != (OPEN, OPEN):
            lo, hi = (str(r) if r != OPEN else "" for r in (self.round_min, self.round_max))
            parts.append(f"r{lo}" if lo == hi else f"r{lo}-{hi}")
        if self.problems != "all":
            parts.append(self.problems)
        return ",".join(parts)


@dataclass(frozen=True)
class Withhold(Strategy):
    """Withhold the reply to a selected request (the server sees it missing, as lost)."""

    selection: Selection = Selection()
    kind = "withhold"
    may_withhold = True

    def report(self, request, rows):
        """Return ``rows`` unchanged: what is sent, when something is, is truthful."""
        return rows

    def withholds(self, request) -> np.ndarray | None:
        """Return which rows of ``request`` withhold their reply (bool (m,)), or None."""
        return self.selection.rows(request)

    def describe(self) -> str:
        """Return ``withhold(...)`` with the selectors."""
        return f"withhold({self.selection.label()})"


@dataclass(frozen=True)
class Late(Strategy):
    """Hold the reply to a selected request back ``seconds`` (simulated time) before sending it."""

    seconds: float = 0.0
    selection: Selection = Selection()
    kind = "late"
    may_delay = True

    def report(self, request, rows):
        """Return ``rows`` unchanged: the reply is truthful, only its timing deviates."""
        return rows

    def delay_s(self, request) -> np.ndarray | None:
        """Return each row's hold-back in seconds (``seconds`` or 0, (m,)), or None (no delay)."""
        chosen = self.selection.rows(request)
        if chosen is None or self.seconds <= 0.0:
            return None
        return np.where(chosen, self.seconds, 0.0)

    def describe(self) -> str:
        """Return ``late(0.5s,...)``: the hold-back and the selectors."""
        more = self.selection.label()
        return f"late({self.seconds:g}s{',' if more else ''}{more})"


@dataclass(frozen=True)
class WithholdOptions:
    """The ``withhold`` strategy's options, written inline in its ``[[agents.strategy]]`` table."""

    probability: float = option(
        1.0,
        "withhold/late: probability that the agent deviates on each selected request (drawn"
        " per request from the agents' random stream; 0 and 1 draw nothing)",
        ge=0.0,
        le=1.0,
    )
    phases: str = option(
        "all",
        "withhold/late: the phase of the requests selected ('phase1' includes FFL's extra"
        " round at w*, Phase I's round T1)",
        choices=PHASES,
    )
    round_min: int = option(
        OPEN,
        "withhold/late: first round selected (the request's round index in its phase; -1 = open)",
        ge=OPEN,
    )
    round_max: int = option(
        OPEN,
        "withhold/late: last round selected, inclusive (-1 = open; else >= round_min)",
        ge=OPEN,
    )
    problems: str = option(
        "all",
        "withhold/late: 'all' requests, or only Phase II problems that price the agent"
        " itself ('own') or another agent ('others')",
        choices=PROBLEMS,
    )

    def selection(self) -> Selection:
        """Return the :class:`Selection` these options describe."""
        return Selection(
            float(self.probability),
            self.phases,
            int(self.round_min),
            int(self.round_max),
            self.problems,
        )


@dataclass(frozen=True)
class LateOptions(WithholdOptions):
    """The ``late`` strategy's options: the selectors of ``withhold`` and the hold-back."""

    delay_s: float = option(
        1.0,
        "late: how long the reply to a selected request is held back after it is computed"
        " (needs network.fidelity 'batched' or 'events'; past network.deadline_s it is cut)",
        unit="s",
        ge=0.0,
    )


def round_range_problem(options) -> str | None:
    """Return why a strategy's ``round_max`` is bad (below ``round_min``, both set), or None.

    For the scenario rules: ``options`` is any strategy's options object; only
    those with both round bounds are checked.
    """
    lo, hi = getattr(options, "round_min", OPEN), getattr(options, "round_max", OPEN)
    if not isinstance(lo, int) or not isinstance(hi, int):
        return None
    if lo != OPEN and hi != OPEN and hi < lo:
        return f"must be >= round_min = {lo} (or -1: open), got {hi}"
    return None


def _withhold(cfg) -> Withhold:
    return Withhold(resolved_options(cfg, "options").selection())


def _late(cfg) -> Late:
    opts = resolved_options(cfg, "options")
    return Late(float(opts.delay_s), opts.selection())


register_strategy("withhold", _withhold, options=WithholdOptions)
register_strategy("late", _late, options=LateOptions)

__all__ = ["Late", "LateOptions", "Selection", "Withhold", "WithholdOptions"]
