"""The best-response search of the ``[best_response]`` table: an agent's, or a coalition's, best
deviation within a family of strategies.

Every other agent keeps its strategy; the searched agent (or each agent of a
coalition, all with the same parameters) plays the family ``br.family`` (any
registered strategy: :data:`edgesim.agents.STRATEGIES`) at the parameter values
tried, and the mechanism is rerun on the same :class:`~edgesim.simulate.Simulation`
(data built once) for each; the objective is read from the run (Definition 1's
overall loss, or a test-set variant), summed over a coalition.

- :func:`best_response` and :func:`search_amplify`: the original search, one agent's
  amplification factor gamma (a log grid, then a bounded Brent refinement in log gamma).
  With ``parameters`` empty and the family ``amplify``, :func:`search` runs exactly it.
- :func:`search`: 1 to 4 of the family's numeric options (none for a family without any) (:class:`Axis`: their brackets,
  searched in log(value) when the bracket's lower end is > 0, else in the value, so
  signed options are searched as they are), by :func:`minimise`: a grid, then a bounded
  Brent (one option) or Nelder-Mead (several) refinement, deterministic, within a budget
  of mechanism runs. It reports the regret J(truthful) - J(best found), the best
  parameters, every evaluated point, and the theory's bound (:func:`faithfulness_bound`).

The paper is Faithful Federated Learning (Proposition 5 bounds a unilateral deviation's
gain under FFL).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from edgesim.agents import STRATEGIES, Amplify, OptOut, Population, StrategyConfig, make_strategy
from edgesim.config import kinds_of, options_class, type_hints
from edgesim.deviations.identities import Sybil
from edgesim.errors import ScenarioErrors
from edgesim.learning.compiled_reports import expect_many_runs

#: Strategies the Simulation applies to the data before a run (a Sybil owner's split):
#: a run with one of them needs a Simulation of its own (built on the same data).
REBUILDS = (Sybil,)
#: Why a mechanism has no faithfulness bound here (any other kind: "no bound is known").
NO_BOUND = {
    "fedavg": "FedAvg has no payments and no faithfulness bound (Proposition 3: amplifying pays)",
    "local": "local learning federates nothing: no faithfulness bound",
    "dp-ffl": "DP-FFL's faithful-implementation corollary holds in expectation and its"
    " privacy term has an unspecified constant D: no number can be computed",
    "vcg-federated": "vcg-federated is VCG on reported losses after K + 1 trainings: truthful"
    " reporting is dominant up to the trainings' optimisation errors, which no estimate bounds",
}


def best_response(evaluate, gamma_min: float, gamma_max: float, points: int, xtol: float) -> dict:
    """Search the gamma in [gamma_min, gamma_max] minimising ``evaluate(gamma)``.

    A log-spaced grid of ``points`` values (plus gamma = 1 when inside the
    bracket), then a bounded Brent refinement in log(gamma) around the best
    grid point. Returns a dict with ``gamma``, ``objective``, ``truthful``
    (the objective at gamma = 1), ``gain`` (truthful - best, >= 0 when
    deviating helps) and the evaluated ``grid``.
    """
    grid = np.exp(np.linspace(math.log(gamma_min), math.log(gamma_max), points))
    if gamma_min <= 1.0 <= gamma_max:
        grid = np.unique(np.append(grid, 1.0))
    seen: dict[float, float] = {}

    def f(log_g: float) -> float:
        g = float(math.exp(log_g))
        if g not in seen:
            seen[g] = float(evaluate(g))
        return seen[g]

    values = [f(math.log(g)) for g in grid]  # inf where the run diverged
    i = int(np.argmin(values))
    lo = math.log(grid[max(i - 1, 0)])
    hi = math.log(grid[min(i + 1, grid.size - 1)])
    if hi > lo:
        from scipy.optimize import minimize_scalar  # here: a run without a search never loads it

        minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": xtol})
    best = min(seen, key=seen.get)
    truthful = seen[1.0] if 1.0 in seen else float(evaluate(1.0))
    return {
        "gamma": best,
        "objective": seen[best],
        "truthful": truthful,
        "gain": truthful - seen[best],
        "grid": [[g, seen[g]] for g in sorted(seen)],
    }


def search_amplify(sim, br) -> dict:
    """Search agent ``br.agent``'s best amplification factor gamma, and its opt-out (the
    ``[best_response]`` table ``br``), on the run ``sim`` (an :class:`edgesim.simulate.Simulation`).

    Returns :func:`best_response`'s dict with ``opt_out`` (the agent's
    objective when it leaves), ``agent`` and ``objective_kind`` added; the
    objectives are in the loss's units (``br.objective``: overall, overall-test, test).
    """
    base = dict(sim.population.assigned)
    expect_many_runs()

    def evaluate(gamma: float) -> float:
        pop = Population(sim.data.K, {**base, br.agent: Amplify(gamma)})
        return sim.objective(sim.run_mechanism(pop), br.agent, br.objective)

    res = best_response(evaluate, br.gamma_min, br.gamma_max, br.points, br.xtol)

    pop = Population(sim.data.K, {**base, br.agent: OptOut()})
    res["opt_out"] = sim.objective(sim.run_mechanism(pop), br.agent, br.objective)
    res["agent"] = br.agent
    res["objective_kind"] = br.objective
    return res


# ---------------------------------------------------------------------------- the search space


@dataclass(frozen=True)
class Axis:
    """One searched option: its name, bracket [lo, hi], scale and whether it is an integer.

    The search moves in the coordinate u = log(value) when ``log`` (lo > 0), else u = value.
    """

    name: str
    lo: float
    hi: float
    log: bool
    integer: bool

    def coord(self, value: float) -> float:
        """Return the search coordinate of ``value``."""
        return math.log(value) if self.log else float(value)

    def value(self, u: float) -> float | int:
        """Return the option's value at coordinate ``u``, kept inside [lo, hi] (rounded for an
        integer option)."""
        x = min(max(math.exp(u) if self.log else float(u), self.lo), self.hi)
        return int(round(x)) if self.integer else x

    def grid(self, n: int) -> list:
        """Return ``n`` values evenly spaced in the coordinate from lo to hi (distinct ones)."""
        us = np.linspace(self.coord(self.lo), self.coord(self.hi), n)
        values = [self.value(float(u)) for u in us]
        ends = (int(round(self.lo)), int(round(self.hi))) if self.integer else (self.lo, self.hi)
        values[0], values[-1] = ends  # exactly the bracket's ends
        return list(dict.fromkeys(values))


def axes_of(br) -> list[Axis]:
    """Return the searched options of the ``[best_response]`` table ``br``, in its order: its
    ``parameters``, or gamma in [gamma_min, gamma_max] for ``amplify`` without them."""
    default = {"gamma": [br.gamma_min, br.gamma_max]} if br.family == "amplify" else {}
    brackets = br.parameters or default
    hints = type_hints(options_class(STRATEGIES[br.family])) if brackets else {}
    out = []
    for name, (lo, hi) in brackets.items():
        integer = float not in kinds_of(hints[name])
        out.append(Axis(name, float(lo), float(hi), lo > 0, integer))
    return out


# ---------------------------------------------------------------------------- the optimiser


class BudgetSpent(Exception):
    """Raised inside the optimiser when the budget of evaluations is spent."""


def minimise(
    f: Callable[[tuple], float], axes: list[Axis], points: int, budget: int, xtol: float
) -> dict:
    """Minimise ``f(values)`` (a tuple, one value per axis) over the box of ``axes``.

    A grid first: ``points`` values on one axis; with d > 1 axes, n per axis with n^d at most
    half the budget (n from 2 to ``points``). Then from the best grid point a bounded
    refinement in the axes' coordinates: Brent's method between the best point's grid
    neighbours (one axis; tolerance ``xtol``), or Nelder-Mead within the box (several; its
    first simplex one grid step along each axis, stopping when the simplex is within ``xtol``;
    restarted from the best point with half the steps until they are within ``xtol``). No
    axes: f(()) once. Deterministic. At most ``budget`` distinct points are evaluated. Returns ``best`` (the
    values), ``objective`` (f there), ``seen`` ({values: f}, in evaluation order), ``grid``
    (the grid's values per axis) and ``method``.
    """
    seen: dict[tuple, float] = {}

    def at(values: tuple) -> float:
        if values not in seen:
            if len(seen) >= budget:
                raise BudgetSpent
            seen[values] = float(f(values))
        return seen[values]

    def at_coords(u) -> float:
        return at(tuple(ax.value(float(x)) for ax, x in zip(axes, np.atleast_1d(u), strict=True)))

    from scipy.optimize import minimize, minimize_scalar  # here: see best_response

    d = len(axes)
    n = min(points, budget) if d <= 1 else max(2, min(points, int((budget / 2) ** (1 / d))))
    grids = [ax.grid(n) for ax in axes]
    method = (
        ("one run", "grid, then bounded Brent")[d] if d < 2 else "grid, then bounded Nelder-Mead"
    )
    try:
        for values in itertools.product(*grids):
            at(values)
        best = min(seen, key=seen.get)
        if d == 1:
            g, i = grids[0], grids[0].index(best[0])
            lo, hi = axes[0].coord(g[max(i - 1, 0)]), axes[0].coord(g[min(i + 1, len(g) - 1)])
            if hi > lo:
                minimize_scalar(
                    at_coords, bounds=(lo, hi), method="bounded", options={"xatol": xtol}
                )
        elif d > 1:
            box = [(ax.coord(ax.lo), ax.coord(ax.hi)) for ax in axes]
            steps = [(hi - lo) / max(len(g) - 1, 1) for (lo, hi), g in zip(box, grids, strict=True)]
            # Restarted from the best point with half the steps each time: a simplex flattened
            # against the box's side (its reflections clipped onto it) stops early.
            while max(steps) > xtol:
                best = min(seen, key=seen.get)
                x0 = np.array([ax.coord(v) for ax, v in zip(axes, best, strict=True)])
                simplex = [x0]
                for i, ((_, hi), step) in enumerate(zip(box, steps, strict=True)):
                    vertex = x0.copy()
                    vertex[i] += step if x0[i] + step <= hi else -step
                    simplex.append(vertex)
                options = {"xatol": xtol, "fatol": math.inf, "initial_simplex": np.array(simplex)}
                minimize(at_coords, x0, method="Nelder-Mead", bounds=box, options=options)
                steps = [s / 2 for s in steps]
    except BudgetSpent:
        pass
    best = min(seen, key=seen.get)
    return {"best": best, "objective": seen[best], "seen": seen, "grid": grids, "method": method}


# ---------------------------------------------------------------------------- runs of the family


@dataclass
class RunFacts:
    """What one evaluated run leaves for the bound: the agent's weight p_k (None outside the
    federation), the agent count, F(w*) (NaN unless asked) and the agent's payment error
    estimates (``mechanism_info``: Phase II's truncation + discretisation, and the whole)."""

    p_k: float | None
    K: int
    participants: int
    F: float = math.nan
    phase2_error: float = math.nan
    estimate: float = math.nan
    design: object = None
    p: np.ndarray | None = None


class FamilyRuns:
    """Runs of one Simulation with a coalition playing a family at given parameter values.

    ``sim``: an :class:`edgesim.simulate.Simulation` (passed in: this layer does not import
    it). Its other agents keep their strategies. A run whose strategies the Simulation must
    apply to the data first (:data:`REBUILDS`) gets a Simulation of its own on the same data.
    ``facts`` keeps each run's :class:`RunFacts` when ``keep_facts``.
    """

    def __init__(self, sim, br, coalition: list[int], names: list[str], keep_facts: bool):
        self.br, self.coalition, self.names = br, coalition, names
        self.keep_facts = keep_facts
        entries = [s for s in sim.scenario.agents.strategy if s.agent not in coalition]
        own = [make_strategy(s) for s in sim.scenario.agents.strategy if s.agent in coalition]
        self.sim = _rebuilt(sim, entries) if any(isinstance(s, REBUILDS) for s in own) else sim
        self.entries = entries
        self.base = {k: s for k, s in self.sim.population.assigned.items() if k not in coalition}
        self.facts: dict = {}

    def at(self, values: tuple) -> float:
        """Return the coalition's objective with the family at ``values`` (one per option)."""
        cls = options_class(STRATEGIES[self.br.family])
        given = {**self.br.fixed, **dict(zip(self.names, values, strict=True))}
        opts = cls(**given) if cls is not None else None
        configs = [StrategyConfig(a, self.br.family, options=opts) for a in self.coalition]
        return self.objective(values, {c.agent: make_strategy(c) for c in configs}, configs)

    def objective(self, key, assigned: dict, configs: list | None = None) -> float:
        """Return the coalition's summed objective (loss units) with ``assigned`` strategies for
        its agents (none: truthful; ``configs``: their StrategyConfigs), recording the run's
        facts under ``key``."""
        sim = self.sim
        if any(isinstance(s, REBUILDS) for s in assigned.values()):
            sim = _rebuilt(self.sim, [*self.entries, *configs])
            run = sim.run_mechanism()
        else:
            run = sim.run_mechanism(Population(sim.data.K, {**self.base, **assigned}))
        if self.keep_facts:
            self.facts[key] = _facts(sim, run, self.coalition[0])
        return float(sum(sim.objective(run, a, self.br.objective) for a in self.coalition))

    def truthful(self) -> float:
        """Return the coalition's objective when its agents follow the protocol."""
        return self.objective("truthful", {})

    def opt_out(self) -> float | None:
        """Return the coalition's objective when its agents leave (None: nobody would be left)."""
        if len(self.coalition) >= self.sim.data.K:
            return None
        return self.objective("opt-out", {a: OptOut() for a in self.coalition})


def _rebuilt(sim, entries: list):
    """Return a Simulation of ``sim``'s scenario with the ``[[agents.strategy]]`` ``entries``,
    on the same data (before any Sybil split)."""
    sc = sim.scenario
    scenario = dataclasses.replace(sc, agents=dataclasses.replace(sc.agents, strategy=entries))
    return type(sim)(scenario, data=getattr(sim, "original_data", sim.data))


def _facts(sim, run, agent: int) -> RunFacts:
    """Return the :class:`RunFacts` of ``run`` for ``agent`` (F(w*) over the participants)."""
    pos = int(np.searchsorted(run.participants, agent))
    inside = pos < run.participants.size and run.participants[pos] == agent
    facts = RunFacts(float(run.p[pos]) if inside else None, sim.data.K, run.participants.size)
    info = run.outcome.info
    if inside and "payment_error_estimate" in info:
        facts.phase2_error = float(
            info["payment_truncation_error"][pos] + info["payment_discretisation_error"][pos]
        )
        facts.estimate = float(info["payment_error_estimate"][pos])
    if np.isfinite(run.outcome.model).all():
        facts.F = sim.model.loss(run.outcome.model, run.design, run.p)
    facts.design, facts.p = run.design, run.p
    return facts


# ---------------------------------------------------------------------------- the bound


def faithfulness_bound(sc, br, coalition, runs: FamilyRuns, best_key, optimum) -> dict:
    """Return the theory's bound on the regret of the best deviation found, with its terms.

    For FFL, one agent k, objective 'overall', every other agent truthful: k is never asked in
    its own payment problem, so its deviation moves only w*, and
    p_k J_k = F(w*) - min Phi_k + p_k (discretisation error) - (truncation error), Phi_k =
    sum_{j!=k} p_j F_j. Hence

        regret <= epsilon + e_truthful + e_deviating + (F(w*) - F(w^o)) / p_k,

    with e the Phase II parts of each run's payment error estimate (truncation +
    discretisation, ``mechanism_info``) and F(w*) the truthful run's (Phase I's gap term;
    w^o from ``optimum(model, design, p)``, one central solve). The estimate's Phase I part
    (``payment_phase1_error``) is left out: the gap term takes its place exactly. Returns
    ``{"bound", "bound_reason", "bound_terms"}``, the bound null with the reason elsewhere
    (another mechanism, a coalition, another objective, other agents deviating, a deviation
    that changes the server's agents or weights). Loss units.
    """
    out: dict = {"bound": None, "bound_reason": None, "bound_terms": None}
    kind = sc.mechanism.kind
    if kind != "ffl":
        return out | {"bound_reason": NO_BOUND.get(kind, f"no bound is known for {kind!r}")}
    if len(coalition) > 1:
        reason = "a coalition: Proposition 5 bounds unilateral deviations (VCG is not group-strategyproof)"
        return out | {"bound_reason": reason}
    t, d = runs.facts.get("truthful"), runs.facts.get(best_key)
    if t is None or d is None or t.p_k is None or not math.isfinite(t.F):
        return out | {"bound_reason": "the truthful run has no finite model or weight"}
    w_o = optimum(runs.sim.model, t.design, t.p)
    F_o = runs.sim.model.loss(w_o, t.design, t.p)
    terms = {
        "epsilon": sc.mechanism.epsilon,
        "p_k": t.p_k,
        "F_truthful": t.F,
        "F_optimum": F_o,
        "phase1_gap": (t.F - F_o) / t.p_k,
        "payment_phase2_error_truthful": t.phase2_error,
        "payment_phase2_error_deviating": d.phase2_error,
        "payment_error_estimate_truthful": t.estimate,
        "payment_error_estimate_deviating": d.estimate,
    }
    out["bound_terms"] = terms
    if br.objective != "overall":
        reason = "the bound is on 'overall' (the empirical objective): on expected risk"
        return out | {"bound_reason": reason + " Proposition 5 adds a statistical term"}
    if not Population(runs.sim.data.K, runs.base).all_truthful:
        return out | {"bound_reason": "other agents deviate in the scenario: the bound assumes"
                      " they follow the protocol"}  # fmt: skip
    if (d.K, d.participants, d.p_k) != (t.K, t.participants, t.p_k):
        reason = "the deviation changes the server's agents or weights: not a report deviation"
        return out | {"bound_reason": reason}
    bound = float(sum((terms["epsilon"], t.phase2_error, d.phase2_error, terms["phase1_gap"])))
    if not math.isfinite(bound):
        return out | {"bound_reason": "a payment error estimate is not finite (a problem diverged)"}
    return out | {"bound": bound}


# ---------------------------------------------------------------------------- the search


def configured(sc, agent=None, **changes):
    """Return the Scenario ``sc`` with its ``[best_response]`` table enabled and changed, validated.

    ``agent``: an agent index, or a list of them (a coalition; one index: that agent
    alone); ``changes``: other keys of the table (family, parameters, fixed, objective,
    budget, points, xtol, ...), None meaning unchanged. Raises
    :class:`~edgesim.errors.ScenarioErrors` naming every bad key (``best_response.*``).
    """
    changes = {k: v for k, v in changes.items() if v is not None}
    if isinstance(agent, (list, tuple)):
        agents = [int(a) if isinstance(a, np.integer) else a for a in agent]
        changes |= {"agent": agents[0], "agents": []} if len(agents) == 1 else {"agents": agents}
    elif agent is not None:
        changes |= {"agent": agent, "agents": []}
    br = dataclasses.replace(sc.best_response, enabled=True, **changes)
    sc = dataclasses.replace(sc, best_response=br)
    errs = sc.errors()
    errs += [] if errs else br.cross_check(sc.agents.count)
    if errs:
        raise ScenarioErrors(errs)
    return sc


def search(sim, br, *, optimum) -> dict:
    """Search the best deviation the ``[best_response]`` table ``br`` asks for, on ``sim`` (an
    :class:`edgesim.simulate.Simulation`); ``optimum(model, design, p)`` returns w^o (for the bound).

    Raises :class:`~edgesim.errors.ScenarioErrors` naming the bad keys of ``br``. Returns the
    JSON's ``best_response`` (loss units): family, agent (an int, or the coalition's list),
    objective_kind, parameters (the best values found), objective (J there, summed over a
    coalition), truthful (J when following the protocol), regret (= gain: truthful - objective),
    gamma (the best gamma when gamma is searched), opt_out, bound, bound_reason, bound_terms
    (:func:`faithfulness_bound`), curve (every evaluated point: parameters, objective, in
    order of the parameters), evaluations and search (brackets, fixed options, grid, method).
    Without ``parameters``, ``amplify`` runs the original search (:func:`best_response`:
    truthful is its gamma = 1 run) and keeps its ``grid``.
    """
    errs = br.cross_check(sim.scenario.agents.count)
    if errs:
        raise ScenarioErrors(errs)
    coalition = list(br.agents) or [br.agent]
    expect_many_runs()  # tens of runs: the compiled reports pay from the first
    axes = axes_of(br)
    names = [ax.name for ax in axes]
    bound_wanted = len(coalition) == 1 and sim.scenario.mechanism.kind == "ffl"
    runs = FamilyRuns(sim, br, coalition, names, keep_facts=bound_wanted)
    original = br.family == "amplify" and not (br.parameters or br.agents or br.fixed)
    if original:
        res = best_response(lambda g: runs.at((g,)), br.gamma_min, br.gamma_max, br.points, br.xtol)
        best, seen = (res["gamma"],), {(g,): v for g, v in res["grid"]}
        runs.facts["truthful"] = runs.facts.get((1.0,))
        truthful, method = res["truthful"], "log grid and gamma = 1, then bounded Brent (original)"
        logs = np.linspace(math.log(br.gamma_min), math.log(br.gamma_max), br.points)
        grid = [sorted({*np.exp(logs).tolist(), *([1.0] if (1.0,) in seen else [])})]
    else:
        res = {}
        found = minimise(runs.at, axes, br.points, br.budget, br.xtol)
        best, seen, grid, method = found["best"], found["seen"], found["grid"], found["method"]
        truthful = runs.truthful()
    params = dict(zip(names, best, strict=True))
    objective = seen[best]
    res |= {
        "family": br.family,
        "agent": coalition[0] if len(coalition) == 1 else coalition,
        "objective_kind": br.objective,
        "parameters": params,
        "objective": objective,
        "truthful": truthful,
        "regret": truthful - objective,
        "gain": truthful - objective,
        "gamma": params.get("gamma"),
        "opt_out": runs.opt_out(),
        **faithfulness_bound(sim.scenario, br, coalition, runs, best, optimum),
        "curve": [
            {"parameters": dict(zip(names, v, strict=True)), "objective": seen[v]}
            for v in sorted(seen)
        ],
        "evaluations": len(seen),
        "search": {
            "parameters": {ax.name: [ax.lo, ax.hi, "log" if ax.log else "linear"] for ax in axes},
            "fixed": dict(br.fixed),
            "grid": dict(zip(names, grid, strict=True)),
            "method": method,
            "budget": None if original else br.budget,
        },
    }
    return res
