"""Who an agent claims to be: claimed sample counts (claim-size) and Sybil identities (sybil).

The numbers are checked against exact VCG computed here, independently of the
harness (edgesim.mechanisms.vcg.vcg_payments on designs built in the test).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from edgesim import scenario
from edgesim.cli import main
from edgesim.deviations.identities import ClaimSize, Sybil, split_owner
from edgesim.errors import ScenarioError
from edgesim.learning.data import FederatedDataset
from edgesim.learning.models import make_model
from edgesim.mechanisms.vcg import vcg_payments
from edgesim.simulate import Simulation, run
from tests.helpers import make_regression, write


def atypical_data(seed: int = 1, sizes=(40, 100, 100), shift: float = 2.0) -> FederatedDataset:
    """K = 3 on the paper's Fig. 1 line, y = -2x + 1 + noise: agent 0's noise has mean ``shift``."""
    rng = np.random.default_rng(seed)
    parts = []
    for n in (sizes, (200, 200, 200)):  # training, then test samples
        agent = np.repeat(np.arange(3), n)
        x = rng.random(agent.size)
        y = -2.0 * x + 1.0 + np.where(agent == 0, shift, 0.0) + rng.normal(size=agent.size)
        parts += [x[:, None], y, agent]
    X, y, a, Xt, yt, at = parts
    return FederatedDataset.from_arrays(X, y, a, 3, 0, Xt, yt, at)


def ridge_scenario(K: int = 3, weights: str = "samples", strategy=(), kind: str = "vcg", **more):
    """A ridge scenario in memory (its data passed to Simulation by the test)."""
    raw = {
        "agents": {"count": K, "weights": weights, "strategy": list(strategy)},
        "model": {"kind": "ridge", "l2": 0.01},
        "mechanism": {"kind": kind, **more},
        "output": {"local_baseline": False},
    }
    return scenario.from_dict(raw)


def sybil(agent: int, m: int) -> dict:
    return {"agent": agent, "kind": "sybil", "identities": m}


def claim(agent: int, factor: float) -> dict:
    return {"agent": agent, "kind": "claim-size", "factor": factor}


def test_split_owner_cuts_near_equal_contiguous_parts_and_appends_the_identities():
    data = make_regression(K=4, seed=3, sizes=(20, 30))
    n0 = data.n_k.copy()
    out = split_owner(data, 1, 3)
    assert out.K == 6
    rows, rows_t = data.agent_rows(1), data.agent_rows(1, test=True)
    sizes = [len(p) for p in np.array_split(np.arange(n0[1]), 3)]  # the first n mod 3 longer
    assert out.n_k.tolist() == [n0[0], sizes[0], n0[2], n0[3], sizes[1], sizes[2]]
    assert out.n_k_test.tolist() == [30, 10, 30, 30, 10, 10]
    for j in (0, 2, 3):  # other agents keep their index and their rows
        np.testing.assert_array_equal(out.agent_rows(j)[0], data.agent_rows(j)[0])
    X_parts = np.concatenate([out.agent_rows(i)[0] for i in (1, 4, 5)])
    y_parts = np.concatenate([out.agent_rows(i, test=True)[1] for i in (1, 4, 5)])
    np.testing.assert_array_equal(X_parts, rows[0])  # contiguous, in the stored order
    np.testing.assert_array_equal(y_parts, rows_t[1])
    assert out.X.dtype == data.X.dtype and out.n == data.n


def relabelled(data: FederatedDataset, owner: int) -> FederatedDataset:
    """The same data with the owner's second half of training rows relabelled as agent K."""
    agent = data.agent.copy()
    rows = np.flatnonzero(agent == owner)
    agent[rows[rows.size // 2 :]] = data.K
    return FederatedDataset.from_arrays(
        data.X, data.y, agent, data.K + 1, 0, data.X_test, data.y_test, data.agent_test
    )


def test_sybil_gain_for_ridge_exact_vcg_equals_two_direct_exact_vcg_runs():
    """Acceptance: the harness's m = 2 Sybil gain equals the one from two exact-VCG runs (the
    original data, and the owner's samples relabelled as two agents), to 1e-9 relative."""
    data = atypical_data()
    sc = ridge_scenario(strategy=[sybil(0, 2)])
    rec = run(sc, Simulation(sc, data))["sybil"][0]

    model = make_model("ridge", 0.01, True, 0)
    d0 = model.design(data)
    p0 = data.n_k / data.n
    w0, P0 = vcg_payments(model, d0, p0)
    J_truthful = P0[0] + model.agent_losses(w0, d0)[0]
    split = relabelled(data, 0)
    d1 = model.design(split)
    p1 = split.n_k / split.n
    w1, P1 = vcg_payments(model, d1, p1)
    money = p1[0] * P1[0] + p1[3] * P1[3]
    J_sybil = money / p0[0] + model.agent_losses(w1, d0)[0]  # the owner's loss on all its data

    gain = J_truthful - J_sybil
    assert gain > 0.01  # VCG is not false-name-proof: splitting pays
    assert rec["gain"] == pytest.approx(gain, rel=1e-9)
    assert rec["J"] == pytest.approx(J_sybil, rel=1e-9)
    assert rec["truthful"]["J"] == pytest.approx(J_truthful, rel=1e-9)
    assert rec["money"] == pytest.approx(money, rel=1e-9)
    assert rec["truthful"]["money"] == pytest.approx(p0[0] * P0[0], rel=1e-9)
    assert rec["identities"] == [0, 3] and rec["samples"] == [20, 20]
    np.testing.assert_allclose(w1, w0, rtol=1e-9)  # p_k = n_k / n: the same objective, model
    assert rec["money"] < 0.6 * rec["truthful"]["money"]  # both identities pay less than one
    # the numbers docs/strategies.md quotes
    assert round(rec["truthful"]["money"], 4) == 0.0331 and round(rec["money"], 4) == 0.0154
    assert round(rec["gain"], 3) == 0.106


def test_objective_returns_the_sybil_owners_J_for_every_kind():
    data = atypical_data(seed=2)
    sc = ridge_scenario(strategy=[sybil(0, 3)], kind="ffl", phase1_rounds=300, phase2_rounds=20)
    sim = Simulation(sc, data)
    mrun = sim.run_mechanism()
    ids = [0, 3, 4]
    p = np.zeros(sim.data.K)
    p[mrun.participants] = mrun.p
    P = sim.payments_all(mrun)
    p_k = data.n_k[0] / data.n
    w = mrun.outcome.model
    model, d0 = sim.model, sim.model.design(data)
    pay = float(p[ids] @ P[ids]) / p_k
    F = model.agent_losses(w, d0)[0]
    E = model.agent_losses(w, d0, test=True)[0]
    assert sim.objective(mrun, 0, "overall") == pytest.approx(pay + F, rel=1e-12)
    assert sim.objective(mrun, 0, "overall-test") == pytest.approx(pay + E, rel=1e-12)
    assert sim.objective(mrun, 0, "test") == pytest.approx(E, rel=1e-12)
    # another agent is scored as before: its own P_j + F_j
    assert (
        sim.objective(mrun, 1, "overall")
        == P[1] + model.agent_losses_each(np.broadcast_to(w, (sim.data.K, w.size)), sim.design)[1]
    )


def test_sybil_under_equal_weights_counts_the_truthful_weight_as_one_over_K():
    """Equal weights: each identity weighs 1/(K + m - 1), the owner's truthful weight is 1/K."""
    data = atypical_data(seed=3)
    sc = ridge_scenario(weights="equal", strategy=[sybil(2, 2)])
    sim = Simulation(sc, data)
    rec = run(sc, sim)["sybil"][0]
    assert rec["identities"] == [2, 3]
    assert rec["weights"] == [0.25, 0.25] and rec["weight_truthful"] == pytest.approx(1 / 3)
    w = sim.run_mechanism().outcome.model
    F = sim.model.agent_losses(w, sim.model.design(data))[2]  # on the owner's data as built
    assert rec["J"] == pytest.approx(rec["money"] * 3 + F, rel=1e-12)


def learned(result: dict) -> tuple:
    """The run's model terms and its agents' losses (not the timing in exact_vcg's reason)."""
    m = result["model"]
    return m["global_loss"], m["optimality_gap"], [a["train_loss"] for a in result["agents"]]


@pytest.mark.parametrize("weights", ["samples", "equal"])
def test_a_claimed_size_changes_nothing_unless_the_server_reads_claims(weights):
    data = make_regression(K=4, seed=5)
    honest = ridge_scenario(K=4, weights=weights, kind="ffl", phase1_rounds=200)
    liar = ridge_scenario(
        K=4, weights=weights, strategy=[claim(1, 3.0)], kind="ffl", phase1_rounds=200
    )
    a = run(honest, Simulation(honest, data))
    b = run(liar, Simulation(liar, data))
    assert b["payments"] == a["payments"] and learned(b) == learned(a)
    assert b["claims"]["read"] is False
    (c,) = b["claims"]["agents"]
    assert c["claimed"] == 3.0 * data.n_k[1] and c["weight"] == c["weight_truthful"]
    assert c["J"] == a["agents"][1]["overall_loss"]


def test_claimed_weights_follow_the_claims_and_the_money_is_the_claimed_weight_times_P():
    """agents.weights = 'claimed': p_k = claimed n_k / sum of the claims; exact VCG at those
    weights (computed here) gives P_k; money p_k P_k; J = money / (n_k / n) + F_k(w^o)."""
    data = atypical_data(seed=4)
    sc = ridge_scenario(weights="claimed", strategy=[claim(0, 2.5)])
    sim = Simulation(sc, data)
    out = run(sc, sim)
    claimed = data.n_k.astype(float)
    claimed[0] *= 2.5
    p = claimed / claimed.sum()
    model = make_model("ridge", 0.01, True, 0)
    d = model.design(data)
    w_o, P = vcg_payments(model, d, p)
    (c,) = out["claims"]["agents"]
    assert out["claims"]["read"] is True
    assert c["weight"] == pytest.approx(p[0], rel=1e-15)
    assert c["payment"] == pytest.approx(P[0], rel=1e-9)
    assert c["money"] == pytest.approx(p[0] * P[0], rel=1e-9)
    J = p[0] * P[0] / (data.n_k[0] / data.n) + model.agent_losses(w_o, d)[0]
    assert c["J"] == pytest.approx(J, rel=1e-9)
    assert sim.objective(sim.run_mechanism(), 0, "overall") == c["J"]


def test_claiming_the_true_size_is_the_samples_run():
    data = make_regression(K=4, seed=6)
    a_sc = ridge_scenario(K=4, weights="samples", kind="ffl", phase1_rounds=100)
    b_sc = ridge_scenario(
        K=4, weights="claimed", strategy=[claim(2, 1.0)], kind="ffl", phase1_rounds=100
    )
    a, b = run(a_sc, Simulation(a_sc, data)), run(b_sc, Simulation(b_sc, data))
    assert b["payments"] == a["payments"] and learned(b) == learned(a)
    assert b["claims"]["read"] is True


def test_identity_strategies_report_truthfully_and_keep_the_fast_path():
    sc = ridge_scenario(K=4, weights="claimed", strategy=[claim(0, 2.0), sybil(1, 2)])
    sim = Simulation(sc, make_regression(K=4, seed=7))
    assert sim.data.K == 5 and sim.population.all_truthful
    assert isinstance(sim.population.strategy(0), ClaimSize)
    assert isinstance(sim.population.strategy(1), Sybil)
    assert sim.population.strategy(4).describe() == "sybil-identity(owner=1)"


def test_sybil_runs_are_deterministic_and_events_equal_batched():
    def one(fidelity):
        raw = {
            "agents": {"count": 4, "weights": "samples", "strategy": [sybil(1, 3)]},
            "data": {"source": "synthetic", "samples": 200, "features": 3},
            "model": {"kind": "ridge"},
            "mechanism": {"kind": "ffl", "phase1_rounds": 40, "phase2_rounds": 4},
            "network": {"fidelity": fidelity},
            "output": {"local_baseline": False},
        }
        return run(scenario.from_dict(raw))

    a, b = one("batched"), one("events")
    assert a["K"] == 6 and a["sybil"][0]["identities"] == [1, 4, 5]
    assert a["payments"] == b["payments"] and a["sybil"] == b["sybil"]
    assert json.dumps(one("batched")) == json.dumps(a)


def test_too_few_samples_for_the_identities_names_the_key():
    sc = ridge_scenario(strategy=[sybil(0, 41)])
    with pytest.raises(ScenarioError, match=r"agents\.strategy\[0\]\.identities: agent 0 holds 40"):
        Simulation(sc, atypical_data())


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ('kind = "sybil"\nidentities = 1', "agents.strategy[0].identities"),
        ('kind = "claim-size"\nfactor = 0', "agents.strategy[0].factor"),
        ('kind = "claim-size"\nfactor = -2', "agents.strategy[0].factor"),
    ],
)
def test_bad_identity_options_exit_2_naming_the_key(tmp_path, capsys, table, key):
    path = write(tmp_path, f"[agents]\ncount = 3\n[[agents.strategy]]\nagent = 0\n{table}\n")
    assert main(["run", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and key in err[0]


def test_claimed_is_an_allowed_weight():
    with pytest.raises(Exception, match="'claimed'"):
        scenario.from_dict({"agents": {"weights": "told"}})
