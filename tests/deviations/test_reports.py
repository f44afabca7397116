"""Report deviations (edgesim.deviations.reports and the restricted amplify): each family's
rows against a closed form computed here from the agent's own data, their effect on the
mechanisms where it is known exactly, and bad options exiting 2 naming the key."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from edgesim.agents import Amplify, Population, StrategyConfig, make_strategy
from edgesim.cli import main
from edgesim.deviations.reports import FreeRide, LossMisreport, PretendData, Pull
from edgesim.device_view import OwnData, Request
from edgesim.scenario import from_dict, load
from edgesim.simulate import Simulation
from tests.helpers import write

K = 4


def small(mechanism: str = "ffl", model: str = "ridge", K: int = K, **mech) -> Simulation:
    """A small federation, in memory: ridge (regression) or logistic (3 classes)."""
    return Simulation(
        from_dict(
            {
                "seed": 5,
                "data": {"source": "synthetic", "samples": 240, "features": 3},
                "model": {"kind": model, "l2": 0.1},
                "agents": {"count": K},
                "mechanism": {"kind": mechanism, "phase1_rounds": 30, "phase2_rounds": 3, **mech},
            }
        )
    )


def run(sim: Simulation, agent: int, strategy):
    return sim.run_mechanism(Population(sim.data.K, {agent: strategy}))


#: A deviation that changes nothing, through the same (strategy) path as a real one.
NO_OP = Amplify(1.0)


def request(sim, agents, ask="gradient", phase="phase1", w=None, ref=None, own=None):
    agents = np.asarray(agents, dtype=np.int64)
    return Request(
        phase=phase,
        round=0,
        problem=-1 if phase == "phase1" else 0,
        ask=ask,
        model=w,
        reference=ref,
        agents=agents,
        rng=np.random.default_rng(0),
        own_problem=np.zeros(agents.size, bool) if own is None else np.asarray(own),
        own_data=OwnData(sim.model, sim.design, agents),
    )


def rows_of(sim, k):
    """Agent k's training rows with the intercept column, and its targets (float64)."""
    d = sim.data
    X = np.asarray(d.X[d.agent == k], dtype=np.float64)
    return np.hstack([X, np.ones((X.shape[0], 1))]), np.asarray(d.y[d.agent == k], np.float64)


def ridge_grad(sim, k, w, y=None):
    Xa, y0 = rows_of(sim, k)
    y = y0 if y is None else y
    return Xa.T @ (Xa @ w - y) / len(y) + sim.model.l2 * w


def ridge_loss(sim, k, w, y=None):
    Xa, y0 = rows_of(sim, k)
    y = y0 if y is None else y
    return 0.5 * np.mean((Xa @ w - y) ** 2) + 0.5 * sim.model.l2 * (w @ w)


# ---------------------------------------------------------------------------- amplify restricted


def test_amplify_defaults_are_todays_amplify():
    s = make_strategy(StrategyConfig(agent=0, kind="amplify", gamma=2.0))
    assert s == Amplify(2.0) and (s.phases, s.problems) == ("all", "all")
    assert s.describe() == "amplify(gamma=2)"
    sc = from_dict(
        {
            "agents": {
                "count": 3,
                "strategy": [
                    {
                        "agent": 1,
                        "kind": "amplify",
                        "gamma": 3,
                        "phases": "phase2",
                        "problems": "others",
                    }
                ],
            }
        }  # fmt: skip
    )
    s = make_strategy(sc.agents.strategy[0])
    assert s == Amplify(3.0, "phase2", "others")
    assert s.describe() == "amplify(gamma=3, phases=phase2, problems=others)"


def test_amplify_in_phase2_leaves_phase1_bit_identical():
    sim = small("ffl")
    base = run(sim, 1, NO_OP)
    late = run(sim, 1, Amplify(4.0, phases="phase2"))
    early = run(sim, 1, Amplify(4.0, phases="phase1"))
    np.testing.assert_array_equal(late.outcome.model, base.outcome.model)
    assert np.abs(early.outcome.model - base.outcome.model).max() > 1e-3
    # agent 1 answers problems 0, 2, 3 only: those payments move, its own does not
    moved = late.outcome.payments != base.outcome.payments
    assert moved.tolist() == [True, False, True, True]


def test_amplify_in_own_problems_changes_nothing_under_ffl():
    """FFL never asks an agent in its own payment problem (Alg. 1, line 10)."""
    sim = small("ffl")
    base = run(sim, 2, NO_OP)
    own = run(sim, 2, Amplify(4.0, problems="own"))
    others = run(sim, 2, Amplify(4.0, problems="others"))
    np.testing.assert_array_equal(own.outcome.model, base.outcome.model)
    np.testing.assert_array_equal(own.outcome.payments, base.outcome.payments)
    np.testing.assert_array_equal(others.outcome.model, base.outcome.model)  # Phase I truthful
    moved = others.outcome.payments != base.outcome.payments
    assert moved.tolist() == [True, True, False, True]


def test_amplify_by_problem_under_dpffl_moves_only_the_other_clusters():
    """DP-FFL asks an agent for gradients in the other clusters' problems only (Alg. 2), and
    for a loss change in every cluster's problem (own_problem true in its own cluster's):
    amplify scales gradients, so "own" changes nothing and "others" changes exactly the
    payments of the other clusters' members."""
    sim = small("dp-ffl", K=6, clusters=3)
    base = run(sim, 0, NO_OP)
    own = run(sim, 0, Amplify(4.0, problems="own"))
    others = run(sim, 0, Amplify(4.0, problems="others"))
    np.testing.assert_array_equal(own.outcome.payments, base.outcome.payments)
    np.testing.assert_array_equal(others.outcome.model, base.outcome.model)
    cluster = np.asarray(base.outcome.info["cluster_of_agent"])
    mine = cluster == cluster[0]
    assert 1 < mine.sum() < 6
    moved = others.outcome.payments != base.outcome.payments
    assert moved.tolist() == (~mine).tolist()


def test_selected_rows_by_phase_and_problem():
    sim = small()
    req = request(sim, [0, 1, 2], phase="phase2", own=[True, False, False])
    pick = Amplify.selected_rows
    assert pick(req, "all", "own").tolist() == [True, False, False]
    assert pick(req, "all", "others").tolist() == [False, True, True]
    assert pick(req, "phase1", "all").tolist() == [False] * 3
    assert pick(request(sim, [0, 1], phase="phase1"), "all", "others").tolist() == [False] * 2
    rows = np.arange(6.0).reshape(3, 2)
    req.ask = "gradient"
    sent = Amplify(3.0, problems="others").report(req, rows)
    np.testing.assert_array_equal(sent, [[0, 1], [6, 9], [12, 15]])


# ---------------------------------------------------------------------------- pretend-data


@pytest.mark.parametrize(("scale", "shift"), [(1.0, 0.7), (-0.5, 0.0), (2.0, -1.5)])
def test_pretend_data_reports_the_fabricated_targets_closed_form(scale, shift):
    sim = small()
    w = np.random.default_rng(1).standard_normal(sim.model.n_params(3))
    ref = np.random.default_rng(2).standard_normal(w.size)
    s = PretendData(scale, shift)
    grads = s.report(request(sim, [1, 3], w=w), None)
    for i, k in enumerate((1, 3)):
        y = rows_of(sim, k)[1]
        np.testing.assert_allclose(grads[i], ridge_grad(sim, k, w, scale * y + shift), rtol=1e-10)
        if scale == 1.0:  # the shift alone: truthful minus shift * mean(x_aug)
            truthful = ridge_grad(sim, k, w)
            mean_xa = rows_of(sim, k)[0].mean(axis=0)
            np.testing.assert_allclose(grads[i], truthful - shift * mean_xa, atol=1e-12)
    losses = s.report(request(sim, [1, 3], ask="loss", w=w), None)
    change = s.report(request(sim, [1, 3], ask="loss_change", w=w, ref=ref), None)
    for i, k in enumerate((1, 3)):
        yk = scale * rows_of(sim, k)[1] + shift
        np.testing.assert_allclose(losses[i], ridge_loss(sim, k, w, yk), rtol=1e-10)
        expect = ridge_loss(sim, k, ref, yk) - ridge_loss(sim, k, w, yk)
        np.testing.assert_allclose(change[i], expect, rtol=1e-9)


def test_pretend_data_flips_labels_at_its_rate_deterministically():
    sim = small(model="logistic")
    data = sim.data
    agents = np.arange(K)
    own = data.subset(agents)
    y = np.asarray(own.y)
    flipped = PretendData(flip_rate=0.3, seed=4).labels(own, agents)
    changed = flipped != y
    assert 0.22 < changed.mean() < 0.38  # 240 labels at rate 0.3 (about 5 sigma)
    assert set(np.unique(flipped[changed] - y[changed]) % 3) == {1, 2}  # both other classes
    np.testing.assert_array_equal(flipped, PretendData(flip_rate=0.3, seed=4).labels(own, agents))
    assert (PretendData(flip_rate=0.3, seed=5).labels(own, agents) != flipped).any()
    assert (PretendData(flip_rate=1.0).labels(own, agents) != y).all()
    np.testing.assert_array_equal(PretendData(flip_rate=0.0).labels(own, agents), y)
    # agent 2's pretend labels are its own, whatever block it answers in
    alone = PretendData(flip_rate=0.3, seed=4).labels(data.subset(np.array([2])), np.array([2]))
    np.testing.assert_array_equal(alone, flipped[np.asarray(own.agent) == 2])


def test_pretend_data_without_flips_is_truthful_and_options_fit_the_task():
    sim = small(model="logistic")
    w = np.random.default_rng(3).standard_normal(sim.model.n_params(3))
    req = request(sim, [0, 2], w=w)
    np.testing.assert_allclose(
        PretendData().report(req, None), req.own.gradients(w), rtol=0, atol=0
    )
    with pytest.raises(ValueError, match="regression only"):
        PretendData(target_shift=1.0).report(request(sim, [0], w=w), None)
    with pytest.raises(ValueError, match="classification only"):
        PretendData(flip_rate=0.1).report(request(small(), [0], w=np.zeros(4)), None)


# ---------------------------------------------------------------------------- pull


def ridge_optimum(sim, k):
    Xa, y = rows_of(sim, k)
    n = len(y)
    return np.linalg.solve(Xa.T @ Xa / n + sim.model.l2 * np.eye(Xa.shape[1]), Xa.T @ y / n)


def test_pull_adds_lam_times_the_distance_to_the_local_optimum():
    sim = small()
    k = 3
    w_loc = ridge_optimum(sim, k)
    w = np.random.default_rng(6).standard_normal(w_loc.size)
    for lam in (0.5, -2.0):
        req = request(sim, [k], w=w)
        truthful = ridge_grad(sim, k, w)
        sent = Pull(lam).report(req, truthful[None, :].copy())
        np.testing.assert_allclose(sent[0], truthful + lam * (w - w_loc), atol=1e-8)
    at_target = request(sim, [k], w=w_loc)
    truthful = ridge_grad(sim, k, w_loc)
    np.testing.assert_allclose(
        Pull(3.0).report(at_target, truthful[None, :])[0], truthful, atol=1e-8
    )
    zero = Pull(0.25, "zero").report(request(sim, [k], w=w), truthful[None, :])
    np.testing.assert_array_equal(zero[0], truthful + 0.25 * w)
    losses = np.array([1.0])
    assert Pull(3.0).report(request(sim, [k], ask="loss", w=w), losses) is losses


# ---------------------------------------------------------------------------- loss-misreport


def test_loss_misreport_moves_vcg_federated_payments_by_its_closed_form():
    """vcg-federated: P_k = (1/p_k) sum_{j != k} p_j (F_j(w*) - F_j(w_{-k})), every F_j
    reported. Agent j shifting its Phase II reports by c moves every other P_k by
    -(p_j / p_k) c; scaling every loss report by s multiplies its term by s."""
    sim = small("vcg-federated")
    j, c, s = 1, 0.3, 2.5
    base = run(sim, j, NO_OP)
    shifted = run(sim, j, LossMisreport(loss_shift=c))
    scaled = run(sim, j, LossMisreport(loss_scale=s, phases="all"))
    p = base.p
    np.testing.assert_array_equal(shifted.outcome.model, base.outcome.model)
    others = np.delete(np.arange(K), j)
    delta = shifted.outcome.payments - base.outcome.payments
    np.testing.assert_allclose(delta[others], -(p[j] / p[others]) * c, rtol=1e-9)
    assert delta[j] == 0.0  # never asked in its own problem
    # the term agent j adds to P_k, recomputed from its own data: (p_j/p_k)(F_j(w*) - F_j(w_-k))
    w_star = base.outcome.model
    for k in others:
        w_minus = sim_model_without(sim, k)
        term = p[j] / p[k] * (ridge_loss(sim, j, w_star) - ridge_loss(sim, j, w_minus))
        got = scaled.outcome.payments[k] - base.outcome.payments[k]
        np.testing.assert_allclose(got, (s - 1.0) * term, rtol=1e-6, atol=1e-12)


def sim_model_without(sim, k):
    """w_{-k} of vcg-federated, read back through a loss-misreport that records its models."""
    seen = {}

    @dataclass(frozen=True)
    class Spy(LossMisreport):
        def report(self, request, rows):
            if request.phase == "phase2" and request.ask == "loss":
                seen[request.problem] = request.model.copy()
            return rows

    run(sim, 0 if k != 0 else 1, Spy())
    return seen[k]


def test_loss_misreport_selects_requests_and_leaves_gradients():
    sim = small()
    v = np.array([1.0, 2.0, 3.0])
    req = request(sim, [0, 1, 2], ask="loss_change", phase="phase2", own=[False, True, False])
    np.testing.assert_array_equal(LossMisreport(2.0, 1.0).report(req, v), [3.0, 5.0, 7.0])
    mine = LossMisreport(2.0, 1.0, problems="own").report(req, v)
    np.testing.assert_array_equal(mine, [1.0, 5.0, 3.0])
    phase1 = request(sim, [0, 1, 2], ask="loss", phase="phase1")
    np.testing.assert_array_equal(LossMisreport(2.0, 1.0).report(phase1, v), v)
    grads = np.ones((3, 2))
    gradient = request(sim, [0, 1, 2], phase="phase2")
    assert LossMisreport(2.0, 1.0).report(gradient, grads) is grads


# ---------------------------------------------------------------------------- free-ride


def test_free_riding_with_zero_gradients_under_fedavg_converges_to_the_others_optimum():
    """FedAvg's w* solves sum_{k != j} p_k grad F_k(w) = 0 when agent j sends zeros:
    sum_{k != j} p_k ((Xa_k' Xa_k / n_k + l2 I) w - Xa_k' y_k / n_k) = 0."""
    sim = small("fedavg", phase1_rounds=4000)
    j = 2
    ran = run(sim, j, FreeRide("zero"))
    p = ran.p
    A = np.zeros((4, 4))
    b = np.zeros(4)
    for k in range(K):
        if k == j:
            continue
        Xa, y = rows_of(sim, k)
        A += p[k] * (Xa.T @ Xa / len(y) + sim.model.l2 * np.eye(4))
        b += p[k] * Xa.T @ y / len(y)
    np.testing.assert_allclose(ran.outcome.model, np.linalg.solve(A, b), atol=1e-8)


def test_free_riding_on_its_first_report_repeats_it_everywhere():
    sent = []

    @dataclass(frozen=True)
    class Logged(FreeRide):
        def report(self, request, rows):
            out = super().report(request, rows)
            if request.ask == "gradient":
                sent.append((request.model.copy(), out.copy()))
            return out

    sim = small("ffl")
    run(sim, 1, Logged("first"))
    assert len(sent) > 30 + 1  # Phase I, FFL's extra round at w*, and Phase II
    first_model, first = sent[0]
    np.testing.assert_array_equal(first_model, np.zeros_like(first_model))  # w[0] = 0
    np.testing.assert_allclose(first[0], ridge_grad(sim, 1, first_model), rtol=1e-10)
    for _, rows in sent[1:]:
        np.testing.assert_array_equal(rows, first)
    assert FreeRide("first").remembers and not FreeRide("zero").remembers


# ---------------------------------------------------------------------------- gains under FedAvg


def paper_fig1_fedavg() -> Simulation:
    return Simulation(
        from_dict(
            {
                "seed": 0,
                "data": {"source": "paper-linear", "mean_shift": 2.0, "test_samples": 2000},
                "model": {"kind": "ridge", "l2": 0.01},
                "agents": {"count": 2, "weights": "samples"},
                "mechanism": {"kind": "fedavg", "phase1_rounds": 3000, "eta1": 0.1},
            }
        )
    )


@pytest.mark.parametrize("strategy", [Pull(2.0), Amplify(4.0)], ids=["pull", "amplify"])
def test_under_fedavg_pull_and_amplify_pay_the_atypical_agent(strategy):
    """Paper Fig. 1 (Sec. III-B): FedAvg's model moves toward agent 0's data, so its own
    training loss F_0(w*) (its `overall`: FedAvg pays nothing) falls."""
    sim = paper_fig1_fedavg()
    truthful = sim.objective(sim.run_mechanism(Population(2)), 0, "overall")
    deviated = sim.objective(run(sim, 0, strategy), 0, "overall")
    assert truthful - deviated > 1e-3


# ---------------------------------------------------------------------------- bad input

BASE = """
seed = 1
[data]
samples = 60
features = 2
[model]
kind = "ridge"
l2 = 0.1
[agents]
count = 3
[mechanism]
kind = "fedavg"
phase1_rounds = 2
[[agents.strategy]]
agent = 1
"""


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ('kind = "amplify"\nphases = "phase3"', "phases"),
        ('kind = "amplify"\nproblems = "mine"', "problems"),
        ('kind = "pretend-data"\nflip_rate = 1.5', "flip_rate"),
        ('kind = "pretend-data"\nseed = -1', "seed"),
        ('kind = "pretend-data"\ntarget_shift = "up"', "target_shift"),
        ('kind = "pull"\ntarget = "origin"', "target"),
        ('kind = "loss-misreport"\nphases = "both"', "phases"),
        ('kind = "loss-misreport"\nloss_scale = true', "loss_scale"),
        ('kind = "free-ride"\nreport = "last"', "report"),
        ('kind = "free-ride"\nlam = 1.0', "lam"),
    ],
)
def test_bad_options_exit_2_naming_the_key(tmp_path, capsys, table, key):
    path = write(tmp_path, BASE + table + "\n")
    code = main(["run", str(path), "--json", str(tmp_path / "out.json")])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2
    assert len(err) == 1 and err[0].startswith(f"edgesim: error: agents.strategy[0].{key}"), err
    assert not (tmp_path / "out.json").exists()


def test_signed_parameters_load(tmp_path):
    path = write(
        tmp_path, BASE + 'kind = "pull"\nlam = -0.5\ntarget = "zero"\n'
        "[[agents.strategy]]\nagent = 2\nkind = \"loss-misreport\"\nloss_scale = -1.0\n"
        "loss_shift = -0.25\n",
    )  # fmt: skip
    sc = load(path)
    assert make_strategy(sc.agents.strategy[0]) == Pull(-0.5, "zero")
    assert make_strategy(sc.agents.strategy[1]) == LossMisreport(-1.0, -0.25)
