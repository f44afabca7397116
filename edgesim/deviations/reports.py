"""Report deviations: an agent sends other values than the ones asked for.

The paper's strategy space A_k is any message in any iteration (Faithful Edge
Federated Learning: Scalability and Privacy, Sec. II, "Strategy space"). The
families here change the values a device sends and nothing else (it answers
every request, on time); each is a frozen dataclass, so agents playing equal
parameters form one block (:class:`edgesim.agents.Population`):

- ``amplify`` (:class:`edgesim.agents.Amplify`, registered there): multiply
  gradient reports by gamma, optionally in one phase or in the agent's own /
  the others' payment problems only (``phases``, ``problems``);
- ``pretend-data`` (:class:`PretendData`): the truthful reports of a
  fabricated dataset, regression targets ``target_scale * y + target_shift``
  or classification labels flipped with probability ``flip_rate``;
- ``pull`` (:class:`Pull`): grad F_k(w) + lam (w - w_target), w_target the
  agent's local optimum (pulls the model toward itself) or zero;
- ``loss-misreport`` (:class:`LossMisreport`): loss and loss-change reports
  (the payment inputs of vcg-federated and DP-FFL) as ``loss_scale * v +
  loss_shift``;
- ``free-ride`` (:class:`FreeRide`): a zero gradient, or its first gradient
  again, in every gradient report; it keeps receiving the model.

Each family's options are written inline in its ``[[agents.strategy]]`` table
(``kind = "pull"``, ``lam = 0.5``); docs/strategies.md describes them.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from edgesim.agents import Amplify, Strategy, register_strategy
from edgesim.config import option, resolved_options

#: Fabricated designs of :class:`PretendData`, per run and block: OwnData -> {strategy: Design}.
_FABRICATED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

PHASES = ("all", "phase1", "phase2")
PROBLEMS = ("all", "own", "others")


# ---------------------------------------------------------------------------- pretend-data


@dataclass(frozen=True)
class PretendDataOptions:
    """The ``pretend-data`` strategy's options (inline in its ``[[agents.strategy]]`` table)."""

    target_scale: float = option(
        1.0, "pretend-data: regression targets are reported as target_scale * y + target_shift"
    )
    target_shift: float = option(
        0.0, "pretend-data: added to every regression target (after target_scale)"
    )
    flip_rate: float = option(
        0.0,
        "pretend-data: probability that a classification label is replaced by a uniformly "
        "drawn other class",
        ge=0.0,
        le=1.0,
    )
    seed: int = option(
        0, "pretend-data: seed of the label flips (agent k draws from the stream [seed, k])", ge=0
    )


@dataclass(frozen=True)
class PretendData(Strategy):
    """Report the truthful gradients and losses of a fabricated version of its own data.

    Regression: the targets become ``target_scale * y + target_shift``.
    Classification: each training label is replaced, with probability
    ``flip_rate``, by one of the other classes drawn uniformly; agent k draws
    from ``numpy.random.default_rng([seed, k])`` (not from the run's stream),
    so its pretend labels are the same in every request, every block and
    every run with that seed. The fabricated dataset is built once per run
    (per block of agents). A loss change is F'(reference) - F'(model) on it.
    Options of the other task must keep their defaults (ValueError otherwise).
    """

    target_scale: float = 1.0
    target_shift: float = 0.0
    flip_rate: float = 0.0
    seed: int = 0
    kind = "pretend-data"

    def report(self, request, rows):
        """Return the reports the fabricated data give: gradients (m, p) or losses (m,)."""
        own = request.own
        design = self.design_for(own)
        if request.ask == "gradient":
            return own.gradients(request.model, design)
        if request.ask == "loss_change":
            return own.losses(request.reference, design) - own.losses(request.model, design)
        return own.losses(request.model, design)

    def design_for(self, own):
        """Return the design of the fabricated dataset of ``own``'s agents (built once per run)."""
        per_run = _FABRICATED.setdefault(own, {})
        if self not in per_run:
            per_run[self] = own.fabricated(y=self.labels(own.data, own.agents))
        return per_run[self]

    def labels(self, data, agents: np.ndarray) -> np.ndarray:
        """Return the fabricated training targets of ``data`` (the agents ``agents``' own rows,
        agents numbered 0..m-1 in ``agents`` order): float targets or int class labels."""
        C = int(data.n_classes)
        if C == 0:
            if self.flip_rate != 0.0:
                raise ValueError("pretend-data: flip_rate applies to classification only")
            return self.target_scale * np.asarray(data.y, dtype=np.float64) + self.target_shift
        if (self.target_scale, self.target_shift) != (1.0, 0.0):
            raise ValueError("pretend-data: target_scale and target_shift apply to regression only")
        y = np.asarray(data.y, dtype=np.int64).copy()
        bounds = np.searchsorted(data.agent, np.arange(len(agents) + 1))
        for i, k in enumerate(np.asarray(agents).tolist()):
            rows = slice(bounds[i], bounds[i + 1])
            rng = np.random.default_rng([self.seed, int(k)])
            n = bounds[i + 1] - bounds[i]
            flip = rng.random(n) < self.flip_rate
            other = (y[rows] + rng.integers(1, C, size=n)) % C
            y[rows] = np.where(flip, other, y[rows])
        return y

    def describe(self):
        """Return e.g. ``pretend-data(scale=1, shift=0.5)`` or ``pretend-data(flip=0.2, seed=0)``."""
        if self.flip_rate:
            return f"pretend-data(flip={self.flip_rate:g}, seed={self.seed})"
        return f"pretend-data(scale={self.target_scale:g}, shift={self.target_shift:g})"


def _pretend_data(cfg) -> PretendData:
    o = resolved_options(cfg, "options")
    return PretendData(o.target_scale, o.target_shift, o.flip_rate, o.seed)


# ---------------------------------------------------------------------------- pull


@dataclass(frozen=True)
class PullOptions:
    """The ``pull`` strategy's options (inline in its ``[[agents.strategy]]`` table)."""

    lam: float = option(
        0.0,
        "pull: lam in grad F_k(w) + lam (w - w_target); any real (lam < 0 pushes the model "
        "away from w_target)",
    )
    target: str = option(
        "local",
        "pull: w_target, the agent's 'local' optimum argmin F_k or 'zero'",
        choices=("local", "zero"),
    )


@dataclass(frozen=True)
class Pull(Strategy):
    """Report grad F_k(w) + lam (w - w_target) for every gradient asked at the model w.

    A proximal term the agent adds to its own objective: with ``target =
    "local"`` (its local optimum, :attr:`edgesim.device_view.OwnData.local_optima`)
    and lam > 0 it pulls the model toward the one its own data prefer, with
    lam < 0 it pushes the model away; ``"zero"`` pulls toward w = 0 (a
    shrinkage). At w = w_target the report is the truthful one. Losses pass
    unchanged.
    """

    lam: float = 0.0
    target: str = "local"
    kind = "pull"

    def report(self, request, rows):
        """Return ``rows + lam (model - w_target)`` for gradients, (m, p); losses unchanged."""
        if request.ask != "gradient" or self.lam == 0.0:
            return rows
        w = np.asarray(request.model, dtype=np.float64)
        if self.target == "zero":
            return rows + self.lam * w[None, :]
        return rows + self.lam * (w[None, :] - request.own.local_optima)

    def describe(self):
        """Return ``pull(lam=..., target=...)``."""
        return f"pull(lam={self.lam:g}, target={self.target})"


def _pull(cfg) -> Pull:
    o = resolved_options(cfg, "options")
    return Pull(o.lam, o.target)


# ---------------------------------------------------------------------------- loss-misreport


@dataclass(frozen=True)
class LossMisreportOptions:
    """The ``loss-misreport`` strategy's options (inline in its ``[[agents.strategy]]`` table)."""

    loss_scale: float = option(
        1.0, "loss-misreport: loss reports are sent as loss_scale * v + loss_shift (any real)"
    )
    loss_shift: float = option(0.0, "loss-misreport: added to every loss report it misreports")
    phases: str = option(
        "phase2",
        "loss-misreport: the phases whose loss reports it misreports ('phase1': vcg-federated's "
        "losses at w*)",
        choices=PHASES,
    )
    problems: str = option(
        "all",
        "loss-misreport: 'all', or only the Phase II requests of the agent's 'own' payment "
        "problem, or of the 'others' problems",
        choices=PROBLEMS,
    )


@dataclass(frozen=True)
class LossMisreport(Strategy):
    """Send ``loss_scale * v + loss_shift`` for a loss or loss-change report v.

    Loss reports are what payments are computed from (vcg-federated's F_j(w*)
    in Phase I and F_j(w_{-k}) in Phase II; DP-FFL's F_j(w*) - F_j(w_l) in
    Phase II, Alg. 2); FFL asks for none, so there it is truthful. ``phases``
    and ``problems`` select the requests as for ``amplify``
    (:meth:`edgesim.agents.Amplify.selected_rows`); gradients pass unchanged.
    """

    loss_scale: float = 1.0
    loss_shift: float = 0.0
    phases: str = "phase2"
    problems: str = "all"
    kind = "loss-misreport"

    def report(self, request, rows):
        """Return the loss rows misreported where selected, (m,); gradients unchanged."""
        if request.ask == "gradient":
            return rows
        chosen = Amplify.selected_rows(request, self.phases, self.problems)
        return np.where(chosen, self.loss_scale * rows + self.loss_shift, rows)

    def describe(self):
        """Return ``loss-misreport(scale=..., shift=...)`` with its restrictions."""
        limits = "".join(
            f", {n}={v}"
            for n, v, d in (("phases", self.phases, "phase2"), ("problems", self.problems, "all"))
            if v != d
        )
        return f"loss-misreport(scale={self.loss_scale:g}, shift={self.loss_shift:g}{limits})"


def _loss_misreport(cfg) -> LossMisreport:
    o = resolved_options(cfg, "options")
    return LossMisreport(o.loss_scale, o.loss_shift, o.phases, o.problems)


# ---------------------------------------------------------------------------- free-ride


@dataclass(frozen=True)
class FreeRideOptions:
    """The ``free-ride`` strategy's options (inline in its ``[[agents.strategy]]`` table)."""

    report: str = option(
        "zero",
        "free-ride: the gradient it sends every time: 'zero', or its 'first' report (the "
        "truthful gradient at the first model it was sent)",
        choices=("zero", "first"),
    )


@dataclass(frozen=True)
class FreeRide(Strategy):
    """Send a zero gradient (``sends = "zero"``) or its first gradient report again
    (``"first"``) in every gradient request, and keep receiving the model.

    With ``"first"`` the first gradient it is asked for (Phase I's round 0 at
    w[0]) is sent truthfully and then repeated, read back from its own
    history (``remembers``). Losses pass unchanged.
    """

    sends: str = "zero"
    kind = "free-ride"

    @property
    def remembers(self) -> bool:
        """Whether its requests carry its earlier reports: only when it repeats its first."""
        return self.sends == "first"

    def report(self, request, rows):
        """Return zeros, or each agent's first gradient report, (m, p); losses unchanged."""
        if request.ask != "gradient":
            return rows
        if self.sends == "zero":
            return np.zeros_like(rows)
        out = np.array(rows, dtype=np.float64, copy=True)
        missing = np.ones(request.agents.size, dtype=bool)
        for past in request.history:
            if past.ask != "gradient" or past.rows is None:
                continue
            _, here, there = np.intersect1d(request.agents, past.agents, return_indices=True)
            keep = missing[here]
            out[here[keep]] = past.rows[there[keep]]
            missing[here[keep]] = False
            if not missing.any():
                break
        return out

    def describe(self):
        """Return ``free-ride(zero)`` or ``free-ride(first)``."""
        return f"free-ride({self.sends})"


def _free_ride(cfg) -> FreeRide:
    return FreeRide(resolved_options(cfg, "options").report)


register_strategy("pretend-data", _pretend_data, options=PretendDataOptions)
register_strategy("pull", _pull, options=PullOptions)
register_strategy("loss-misreport", _loss_misreport, options=LossMisreportOptions)
register_strategy("free-ride", _free_ride, options=FreeRideOptions)

__all__ = [
    "FreeRide",
    "FreeRideOptions",
    "LossMisreport",
    "LossMisreportOptions",
    "PretendData",
    "PretendDataOptions",
    "Pull",
    "PullOptions",
]
