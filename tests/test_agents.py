"""Strategies and the best-response search."""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgesim.agents import (
    STRATEGIES,
    Amplify,
    NoisyReport,
    OptOut,
    Population,
    StrategyConfig,
    make_strategy,
    register_strategy,
)
from edgesim.device_view import Request
from edgesim.scenario import from_dict
from edgesim.simulate import Simulation, best_response, run


def asked(ask: str, phase: str = "phase1"):
    """Return a ``request_of`` for Population.apply: a bare request of kind ``ask``."""

    def request(block):
        own = np.zeros(block.size, dtype=bool)
        return Request(phase, 0, -1, ask, None, None, block, np.random.default_rng(0), own)

    return request


GRADIENT = asked("gradient")


def test_population_transforms_only_its_members():
    pop = Population(5, {1: Amplify(3.0), 3: NoisyReport(0.0), 4: OptOut()})
    rows = np.arange(15, dtype=float).reshape(5, 3)
    agents = np.arange(5)
    out = pop.apply(agents, rows, GRADIENT)
    np.testing.assert_array_equal(out[1], 3.0 * rows[1])
    np.testing.assert_array_equal(out[[0, 2, 3, 4]], rows[[0, 2, 3, 4]])
    # a subset of agents in another order keeps the alignment
    out = pop.apply(np.array([3, 1]), rows[[3, 1]], asked("gradient", "phase2"))
    np.testing.assert_array_equal(out[1], 3.0 * rows[1])
    assert pop.participants().tolist() == [0, 1, 2, 3]
    # a loss report passes an amplifier unchanged: Amplify scales gradients only
    losses = np.arange(5, dtype=float)
    out = pop.apply(agents, losses, asked("loss"))
    np.testing.assert_array_equal(out, losses)


def test_restricted_renumbers_the_agents_it_keeps():
    strategies = {1: Amplify(3.0), 3: NoisyReport(0.0), 4: OptOut()}
    pop = Population(6, strategies)
    agents = pop.participants()
    assert agents.tolist() == [0, 1, 2, 3, 5]  # agent 4 opted out
    sub = pop.restricted(agents)
    assert sub.K == 5 and list(sub.assigned.items()) == [(1, strategies[1]), (3, strategies[3])]
    # any order of distinct agents: each keeps its strategy at its new number
    sub = pop.restricted(np.array([3, 0, 1]))
    assert sub.K == 3 and sub.assigned == {0: strategies[3], 2: strategies[1]}
    assert Population(4).restricted(np.array([2, 0])).assigned == {}


def test_noisy_report_has_the_configured_spread():
    s = NoisyReport(0.5)
    rows = np.zeros((20000, 2))
    out = s.gradients(rows, "phase1", np.random.default_rng(1))
    assert np.std(out) == pytest.approx(0.5, rel=0.02)


def test_registry_accepts_a_custom_strategy(monkeypatch):
    class Halve(Amplify):
        pass

    monkeypatch.setattr("edgesim.agents.STRATEGIES", dict(STRATEGIES))
    register_strategy("halve", lambda cfg: Halve(0.5))
    s = make_strategy(StrategyConfig(agent=0, kind="halve"))
    assert s.gamma == 0.5


def test_best_response_finds_the_minimiser_of_a_known_function():
    calls = []

    def f(g):
        calls.append(g)
        return (math.log(g) - math.log(5.0)) ** 2

    res = best_response(f, 0.25, 64, 9, 1e-4)
    assert res["gamma"] == pytest.approx(5.0, rel=1e-3)
    assert res["truthful"] == pytest.approx(math.log(5.0) ** 2)
    assert res["gain"] == pytest.approx(math.log(5.0) ** 2, rel=1e-5)


def test_opt_out_agent_keeps_its_local_model_and_pays_nothing():
    sc = from_dict(
        {
            "seed": 3,
            "data": {"source": "synthetic", "samples": 300, "features": 3},
            "model": {"kind": "ridge", "l2": 0.1},
            "agents": {"count": 4, "strategy": [{"agent": 2, "kind": "opt-out"}]},
            "mechanism": {"kind": "ffl", "phase1_rounds": 200, "phase2_rounds": 3},
        }
    )
    sim = Simulation(sc)
    result = run(sc, sim)
    a = result["agents"][2]
    assert a["participates"] is False and a["payment"] == 0.0
    assert a["test_loss"] == pytest.approx(a["local_loss"], rel=1e-12)
    assert result["participants"] == 3
    assert result["communication"]["messages_up"] == 3 * 200 + 3 + sum(
        2 * t for t in result["iterations"]["phase2_per_agent"]
    )


def test_equal_strategies_share_one_group():
    pop = Population(6, {1: Amplify(2.0), 2: Amplify(2.0), 4: Amplify(3.0)})
    assert len(pop._groups) == 2
    rows = np.ones((6, 2))
    out = pop.apply(np.arange(6), rows, GRADIENT)
    assert out[:, 0].tolist() == [1.0, 2.0, 2.0, 1.0, 3.0, 1.0]


def test_diverged_run_reports_the_rounds_it_ran():
    sc = from_dict(
        {
            "seed": 0,
            "data": {"source": "synthetic", "samples": 200, "features": 3},
            "model": {"kind": "ridge", "l2": 0.1},
            "agents": {"count": 3, "strategy": [{"agent": 0, "kind": "amplify", "gamma": 500.0}]},
            "mechanism": {"kind": "fedavg", "phase1_rounds": 400},
        }
    )
    result = run(sc)
    assert result["diverged"] is True
    assert result["iterations"]["phase1"] == result["communication"]["rounds"]["phase1"] < 400


def test_cluster_ids_are_scenario_agent_ids_when_an_agent_opts_out():
    sc = from_dict(
        {
            "seed": 2,
            "data": {"source": "synthetic", "samples": 300, "features": 3},
            "model": {"kind": "ridge", "l2": 0.1},
            "agents": {"count": 5, "strategy": [{"agent": 0, "kind": "opt-out"}]},
            "mechanism": {"kind": "dp-ffl", "phase1_rounds": 20, "phase2_rounds": 3, "clusters": 2},
        }
    )
    clusters = run(sc)["mechanism_info"]["cluster_of_agent"]
    assert len(clusters) == 5 and clusters[0] is None
    assert sorted(c for c in clusters if c is not None) == [0, 0, 1, 1]


def test_strategy_positions_are_kept_only_for_an_unchangeable_agents_array():
    """Population keeps the deviators' positions for a read-only array owning its data (what
    the in-memory driver asks every round), and finds them again in any other array."""
    pop = Population(6, {1: Amplify(2.0), 2: Amplify(2.0), 4: Amplify(3.0)})
    fixed = np.arange(6)
    fixed.flags.writeable = False
    assert pop._found_in(fixed) == [(0, slice(1, 3)), (1, slice(4, 5))]
    assert pop._found_in(fixed) is pop._found_in(fixed)  # kept
    loose = np.arange(6)
    first = pop._found_in(loose)
    loose[:] = [5, 4, 3, 2, 1, 0]  # a writeable array may change between calls
    again = pop._found_in(loose)
    assert again is not first and again[0][0] == 0
    assert np.array_equal(loose[again[0][1]], [2, 1]) and np.array_equal(loose[again[1][1]], [4])
    view = fixed[1:]
    assert pop._found_in(view) == [(0, slice(0, 2)), (1, slice(3, 4))]
    assert pop._last_found[0] is fixed  # a view is never kept
