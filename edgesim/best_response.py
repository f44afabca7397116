"""The best-response search of the ``[best_response]`` table: one agent's best amplification factor.

Every other agent keeps its strategy; the searched agent amplifies its
reports by gamma (:class:`~edgesim.agents.Amplify`) and the mechanism is rerun
for each gamma tried; its objective is read from the run (Definition 1's
overall loss, or a test-set variant).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize_scalar

from edgesim.agents import Amplify, OptOut, Population


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

    def evaluate(gamma: float) -> float:
        pop = Population(sim.data.K, {**base, br.agent: Amplify(gamma)})
        return sim.objective(sim.run_mechanism(pop), br.agent, br.objective)

    res = best_response(evaluate, br.gamma_min, br.gamma_max, br.points, br.xtol)

    pop = Population(sim.data.K, {**base, br.agent: OptOut()})
    res["opt_out"] = sim.objective(sim.run_mechanism(pop), br.agent, br.objective)
    res["agent"] = br.agent
    res["objective_kind"] = br.objective
    return res
