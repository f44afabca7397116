"""The JSON's ``economics`` section (the paper's E1-E4) against closed forms and the quick start."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pytest

from edgesim import economics, scenario
from edgesim.learning.data import FederatedDataset
from edgesim.scenario import from_dict
from edgesim.simulate import Simulation, run
from edgesim.summary import summary

REPO = Path(__file__).parents[1]
N_K = (6, 10, 15, 30, 200)  # agent 3 (30 samples) is atypical: its targets are shifted
L2 = 0.05


def _data(seed: int = 0, d: int = 2) -> FederatedDataset:
    """Ridge data: one true w for all, agent 3's targets shifted by 1.5, noise 1 (train and test)."""
    rng = np.random.default_rng(seed)
    K = len(N_K)
    w = rng.normal(size=d)
    offset = np.where(np.arange(K) == 3, 1.5, 0.0)
    agent, at = np.repeat(np.arange(K), N_K), np.repeat(np.arange(K), 200)
    X, Xt = rng.normal(size=(agent.size, d)), rng.normal(size=(at.size, d))
    y = X @ w + offset[agent] + rng.normal(size=agent.size)
    yt = Xt @ w + offset[at] + rng.normal(size=at.size)
    return FederatedDataset.from_arrays(X, y, agent, K, 0, Xt, yt, at)


def _run(mechanism: dict, output: dict | None = None) -> tuple[dict, FederatedDataset]:
    """Run ridge (l2 = L2, weights n_k / n) on :func:`_data` in memory; returns (JSON, data)."""
    raw = {
        "agents": {"count": len(N_K), "weights": "samples"},
        "data": {"source": "synthetic"},
        "model": {"kind": "ridge", "l2": L2},
        "mechanism": {"local_rounds": 20000, **mechanism},
        "network": {"fidelity": "none"},
        "output": {"model_weights": True, **(output or {})},
    }
    sc = from_dict(raw)
    data = _data()
    return run(sc, Simulation(sc, data=data)), data


class ClosedForm:
    """Ridge's quantities by hand: F_k, E_k (test), w^o, w_{-k}, w_k^L, exact VCG payments."""

    def __init__(self, data: FederatedDataset):
        ones = np.ones((data.X.shape[0], 1)), np.ones((data.X_test.shape[0], 1))
        self.Xa, self.Xt = np.hstack([data.X, ones[0]]), np.hstack([data.X_test, ones[1]])
        self.data, self.K = data, data.K
        n_k = np.bincount(data.agent, minlength=self.K)
        self.p = n_k / n_k.sum()
        self.A = [
            self.Xa[data.agent == k].T @ self.Xa[data.agent == k] / n_k[k] for k in range(self.K)
        ]
        self.b = [
            self.Xa[data.agent == k].T @ data.y[data.agent == k] / n_k[k] for k in range(self.K)
        ]
        self.I = np.eye(self.Xa.shape[1])

    def loss(self, k: int, w: np.ndarray, test: bool = False) -> float:
        X, y, a = (
            (self.Xt, self.data.y_test, self.data.agent_test)
            if test
            else (self.Xa, self.data.y, self.data.agent)
        )
        r = X[a == k] @ w - y[a == k]
        return float(np.mean(0.5 * r * r) + 0.5 * L2 * w @ w)

    def solve(self, weights: np.ndarray) -> np.ndarray:
        """argmin_w sum_k weights_k F_k(w)."""
        S = sum(c * A for c, A in zip(weights, self.A, strict=True))
        t = sum(c * b for c, b in zip(weights, self.b, strict=True))
        return np.linalg.solve(S + L2 * weights.sum() * self.I, t)

    def F(self, w: np.ndarray, weights: np.ndarray) -> float:
        return sum(c * self.loss(k, w) for k, c in enumerate(weights))

    def vcg(self) -> np.ndarray:
        """P_k = (1/p_k) [sum_{j!=k} p_j F_j(w^o) - min_w sum_{j!=k} p_j F_j(w)] (eq. VCG)."""
        w_o, out = self.solve(self.p), np.empty(self.K)
        for k in range(self.K):
            others = np.where(np.arange(self.K) == k, 0.0, self.p)
            out[k] = (self.F(w_o, others) - self.F(self.solve(others), others)) / self.p[k]
        return out

    def local(self, k: int) -> np.ndarray:
        return np.linalg.solve(self.A[k] + L2 * self.I, self.b[k])


def test_exact_vcg_ridge_e1_e3_e4_equal_their_closed_forms():
    result, data = _run({"kind": "vcg"})
    cf = ClosedForm(data)
    w_o, P = cf.solve(cf.p), cf.vcg()
    econ = result["economics"]
    # E1: the central exact VCG mechanism's model is w^o itself: no gap, within the default
    e1 = econ["E1"]
    assert e1["gap"] == pytest.approx(0.0, abs=1e-10) and e1["holds"] is True
    assert (e1["tolerance"], e1["tolerance_source"]) == (economics.DEFAULT_TOLERANCE, "default")
    # E4: the exact VCG payments are each >= 0 (Clarke pivot), so is their sum
    assert (P >= 0).all()
    assert econ["E4"]["budget_total"] == pytest.approx(P.sum(), rel=1e-9)
    assert econ["E4"]["holds"] is True
    # E3: P_k + E_k(w^o) against E_k(w_k^L), every agent's by hand
    excess = np.array(
        [P[k] + cf.loss(k, w_o, True) - cf.loss(k, cf.local(k), True) for k in range(len(N_K))]
    )
    e3 = econ["E3"]
    failing = np.flatnonzero(excess > economics.DEFAULT_TOLERANCE).tolist()
    assert failing == [3, 4]  # the atypical agent, and the large one whose payment outweighs
    assert e3["failing_agents"] == failing and e3["failing_count"] == 2 and e3["holds"] is False
    assert e3["above_local_count"] == int((excess > 0).sum()) == 2
    assert e3["excess_max_agent"] == 3
    assert e3["excess_max"] == pytest.approx(excess.max(), rel=1e-6)
    assert e3["undetermined_count"] == 0
    assert econ["E2"]["holds"] is None and "no best-response search" in econ["E2"]["reason"]


@pytest.mark.parametrize("T1, holds", [(3, False), (3000, True)])
def test_ffl_e1_gap_is_f_at_w_star_minus_f_at_w_o_against_epsilon(T1, holds):
    mech = {"kind": "ffl", "phase1_rounds": T1, "phase2_rounds": 2, "epsilon": 1e-4}
    result, data = _run(mech)
    cf = ClosedForm(data)
    w_star = np.asarray(result["model"]["weights"])
    gap = cf.F(w_star, cf.p) - cf.F(cf.solve(cf.p), cf.p)
    e1 = result["economics"]["E1"]
    assert e1["gap"] == pytest.approx(gap, rel=1e-7, abs=1e-12)
    assert (e1["tolerance"], e1["tolerance_source"]) == (1e-4, "mechanism.epsilon")
    assert e1["holds"] is holds and (gap > 1e-4) is not holds
    assert result["economics"]["E3"]["tolerance"] == 1e-4


def test_the_section_is_the_same_when_per_agent_results_go_to_a_sidecar():
    json_mode, _ = _run({"kind": "vcg"})
    columns, _ = _run({"kind": "vcg"}, {"per_agent": "none"})
    assert columns["agents"] == [] and columns["economics"] == json_mode["economics"]


def test_e1_and_e3_say_why_they_are_not_checked():
    result, _ = _run({"kind": "ffl", "phase1_rounds": 5, "exact_vcg": False})
    e1 = result["economics"]["E1"]
    assert e1["holds"] is None and e1["gap"] is None
    assert e1["reason"] == "w^o was not computed (skipped: mechanism.exact_vcg = false)"
    result, _ = _run({"kind": "local"}, {"local_baseline": False})
    assert "no federated model" in result["economics"]["E1"]["reason"]
    e3 = result["economics"]["E3"]
    assert e3["holds"] is None and e3["failing_count"] is None
    assert e3["reason"] == "output.local_baseline = false"
    assert result["economics"]["E4"] == {
        "property": "weak budget balance",
        "holds": True,
        "budget_total": 0.0,
        "tolerance": 0.0,
        "reason": None,
    }


def test_budget_balance_allows_rounding_only():
    assert economics.budget_balance(np.array([1.0, -1.0 - 1e-12]))["holds"] is True
    fails = economics.budget_balance(np.array([1.0, -1.0 - 1e-6]))
    assert fails["holds"] is False and fails["budget_total"] == pytest.approx(-1e-6)
    assert fails["tolerance"] == pytest.approx(2e-9)
    undefined = economics.budget_balance(np.array([1.0, math.nan]))
    assert undefined["holds"] is None and "undefined" in undefined["reason"]


def test_voluntary_participation_counts_participants_and_lists_at_most_20():
    K = 30
    overall, local = np.full(K, 1.0), np.full(K, 0.5)  # every agent 0.5 above local learning
    local[0] = 2.0  # agent 0 gains
    overall[1] = math.nan  # agent 1: no test sample
    participants = np.arange(K - 2)  # agents 28 and 29 left: not counted
    e3 = economics.voluntary_participation(overall, local, participants, 0.1, "default")
    assert e3["failing_count"] == 26 and e3["failing_agents"] == list(range(2, 22))
    assert e3["undetermined_count"] == 1 and e3["above_local_count"] == 26
    assert e3["excess_max"] == 0.5 and e3["excess_max_agent"] == 2 and e3["holds"] is False
    within = economics.voluntary_participation(overall, local, participants, 0.5, "default")
    assert within["holds"] is True and within["failing_count"] == 0


@pytest.mark.parametrize(
    "bound, holds, line",
    [
        (None, None, "not known: agent 3's best amplify(gamma=2) gains 0.01 (overall);"),
        (0.02, True, "holds: agent 3's best amplify(gamma=2) gains 0.01 (overall) <= bound 0.02"),
        (0.005, False, "FAILS: agent 3's best amplify(gamma=2) gains 0.01 (overall) > bound 0.005"),
    ],
)
def test_e2_compares_the_search_regret_with_its_bound(quickstart, bound, holds, line):
    search = {"agent": 3, "objective_kind": "overall", "gamma": 2.0, "gain": 0.01}
    search |= {"truthful": 0.5, "opt_out": 0.45, "objective": 0.49}
    if bound is not None:
        search["bound"] = bound
    e2 = economics.faithfulness(search)
    assert e2["holds"] is holds and e2["regret"] == 0.01 and e2["parameters"] == {"gamma": 2.0}
    assert e2["opt_out_gain"] == pytest.approx(0.05)
    result = copy.deepcopy(quickstart)
    result["economics"]["E2"] = e2
    assert f"  E2 faithful   {line}" in summary(result)


def test_e2_reads_a_best_response_search_that_ran():
    sc = scenario.load(
        REPO / "scenarios" / "paper-fig1.toml",
        ["mechanism.phase1_rounds=300", "best_response.points=3", "best_response.xtol=0.1"],
    )
    result = run(sc)
    br, e2 = result["best_response"], result["economics"]["E2"]
    assert e2["regret"] == br["gain"] > 0 and e2["parameters"] == {"gamma": br["gamma"]}
    assert e2["agent"] == 0 and e2["family"] == "amplify" and e2["objective_kind"] == "test"
    assert e2["opt_out_gain"] == pytest.approx(br["truthful"] - br["opt_out"])
    assert e2["holds"] is None  # FedAvg: the search states no bound
    # no exact VCG for a mechanism without payments, but w^o all the same: E1 is checked
    assert result["model"]["exact_vcg"]["computed"] is False
    assert result["economics"]["E1"]["gap"] == result["model"]["optimality_gap"] > 0


@pytest.fixture(scope="module")
def quickstart() -> dict:
    """The quick start's JSON, as shipped (FFL, K = 10, events fidelity)."""
    return run(scenario.load(REPO / "edgesim" / "quickstart.toml", []))


def test_quick_start_three_largest_agents_fail_voluntary_participation(quickstart):
    agents = quickstart["agents"]
    largest = sorted(range(10), key=lambda k: -agents[k]["n"])[:3]
    e3 = quickstart["economics"]["E3"]
    assert e3["failing_agents"] == sorted(largest) == [0, 1, 2] and e3["failing_count"] == 3
    for k in largest:  # overall test loss 0.125-0.138 against local learning's 0.113-0.120
        assert 0.124 < agents[k]["overall_test_loss"] < 0.139
        assert 0.113 < agents[k]["local_loss"] < 0.121
    # agent 5 is above local learning too, by less than epsilon: within the tolerance
    assert e3["above_local_count"] == 4 and e3["tolerance"] == 1e-3
    assert 0 < agents[5]["overall_test_loss"] - agents[5]["local_loss"] < 1e-3
    assert e3["excess_max_agent"] == 1
    assert e3["excess_max"] == agents[1]["overall_test_loss"] - agents[1]["local_loss"]
    econ = quickstart["economics"]
    assert (
        econ["E1"]["holds"] is True and econ["E1"]["gap"] == quickstart["model"]["optimality_gap"]
    )
    assert econ["E4"]["holds"] is True and econ["E4"]["budget_total"] == quickstart["budget_total"]


def test_summary_says_whether_each_property_holds(quickstart):
    lines = summary(quickstart).splitlines()[-4:]
    gap = quickstart["model"]["optimality_gap"]
    assert (
        lines[0]
        == f"  E1 efficiency holds: F(w*) - F(w^o) = {gap:.2e} <= 1e-03 (mechanism.epsilon)"
    )
    assert lines[1] == (
        "  E2 faithful   not checked: no best-response search ran ([best_response] enabled = false)"
    )
    assert lines[2].startswith("  E3 voluntary  FAILS for 3 of 10 agents (0, 1, 2): ")
    assert "by up to 0.0182 > 1e-03 (mechanism.epsilon)" in lines[2]
    total = quickstart["budget_total"]
    assert lines[3] == f"  E4 budget     holds: the payments sum to {total:.4g} >= 0"
    broken = copy.deepcopy(quickstart)
    broken["economics"]["E1"] |= {"holds": False, "gap": 0.5}
    broken["economics"]["E4"] |= {"holds": False, "budget_total": -0.25}
    text = summary(broken)
    assert "  E1 efficiency FAILS: F(w*) - F(w^o) = 5.00e-01 > 1e-03 (mechanism.epsilon)" in text
    assert "  E4 budget     FAILS: the payments sum to -0.25 < 0 (the server pays out)" in text
    del broken["economics"]  # a result written before the section existed
    assert "E1 efficiency" not in summary(broken)
