"""edgesim plan / run --dry-run: the predicted rounds and messages against what runs count."""

from __future__ import annotations

import numpy as np
import pytest

from edgesim import plan as planner
from edgesim import scenario
from edgesim.cli import main
from edgesim.simulate import Simulation, run

SMALL = [
    "agents.count=6",
    "agents.strategy=[]",
    "data.samples=600",
    "mechanism.phase2_check=false",
    "output.local_baseline=false",
]
MEMORY = ["network.fidelity=none"]
CELL = ["network.fidelity=events", "network.radio.resource_blocks=3", "network.radio.loss_prob=0"]
LOSSY = [
    "network.fidelity=events",
    "network.radio.resource_blocks=3",
    "network.radio.loss_prob=0.2",
]


@pytest.mark.parametrize(
    "network", [[], CELL, LOSSY], ids=["memory", "lossless-cell", "lossy-cell"]
)
@pytest.mark.parametrize("rule", ["trapezoid", "paper"])
def test_ffl_messages_are_predicted_within_ten_percent(network, rule):
    sc = scenario.load(None, [*SMALL, *network, "mechanism.phase1_rounds=theory",
                              f"mechanism.payment_rule={rule}"])  # fmt: skip
    p = planner.plan(sc)
    result = run(sc)
    c = result["communication"]
    if network is not LOSSY:  # a lost first-round reply changes Theorem 1's G
        assert p["T1"] == result["iterations"]["phase1"]
    for key in ("messages_down", "messages_up", "bytes_down", "bytes_up"):
        assert p[key] == pytest.approx(c[key], rel=0.1), key
    if network is not LOSSY:  # nothing lost: exact
        assert (p["messages_down"], p["bytes_up"]) == (c["messages_down"], c["bytes_up"])
    if network is not MEMORY:
        assert p["transmissions_up_expected"] == pytest.approx(c["transmissions_up"], rel=0.1)
    if network is LOSSY:  # 20 % loss, 3 retransmissions: E[attempts] = (1 - 0.2^4) / 0.8
        assert p["transmissions_up_expected"] == pytest.approx(p["messages_up"] * 1.248)


@pytest.mark.parametrize("kind", ["fedavg", "dp-ffl", "vcg-federated", "vcg", "local"])
def test_other_mechanisms_messages_exact_in_memory(kind):
    sc = scenario.load(None, [*SMALL, *MEMORY, f"mechanism.kind={kind}", "mechanism.phase1_rounds=20",
                              "mechanism.phase2_rounds=3", "mechanism.clusters=3"])  # fmt: skip
    p = planner.plan(sc)
    c = run(sc)["communication"]
    assert (p["messages_down"], p["messages_up"]) == (c["messages_down"], c["messages_up"])
    assert (p["bytes_down"], p["bytes_up"]) == (c["bytes_down"], c["bytes_up"])


@pytest.mark.parametrize("kind", ["ffl", "dp-ffl", "vcg-federated"])
def test_parallel_phase2_messages_are_predicted_exactly(kind):
    sc = scenario.load(None, [*SMALL, *MEMORY, f"mechanism.kind={kind}", "mechanism.phase1_rounds=20",
                              "mechanism.phase2_rounds=3", "mechanism.clusters=3",
                              "mechanism.secure_aggregation=false",
                              "mechanism.phase2_schedule=parallel"])  # fmt: skip
    p = planner.plan(sc)
    c = run(sc)["communication"]
    assert (p["messages_down"], p["messages_up"]) == (c["messages_down"], c["messages_up"])
    assert (p["bytes_down"], p["bytes_up"]) == (c["bytes_down"], c["bytes_up"])
    assert p["exchanges"] == sum(c["rounds"].values())


def test_dry_run_prints_the_plan_and_runs_nothing(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["run", "--dry-run", "--json", str(out), "--set", "agents.count=4"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("plan: ffl with K = 4 agents") and "wall time" in text
    assert not out.exists()
    assert main(["plan", "--set", "mechanism.kind=fedavg"]) == 0
    assert "plan: fedavg" in capsys.readouterr().out


def test_a_run_longer_than_an_hour_warns_before_it_starts(monkeypatch, capsys):
    monkeypatch.setattr(planner, "WARN_ABOVE_S", 0.0)
    assert (
        main(["run", "--set", "network.fidelity=none", "--set", "mechanism.phase1_rounds=5"]) == 0
    )
    err = capsys.readouterr().err
    assert "warning: this run should take about" in err


def test_theory_t1_counts_the_clipped_reports():
    over = [*SMALL, *MEMORY, "mechanism.kind=fedavg", "mechanism.phase1_rounds=theory"]
    sc = scenario.load(None, [*over, "mechanism.clip_norm=0.05"])
    assert planner.plan(sc)["T1"] == run(sc)["iterations"]["phase1"]


def test_vcg_federated_with_one_agent_trains_once():
    sc = scenario.load(None, [*MEMORY, "agents.count=1", "agents.strategy=[]",
                              "mechanism.kind=vcg-federated", "mechanism.phase1_rounds=5",
                              "output.local_baseline=false"])  # fmt: skip
    result = run(sc)
    assert planner.plan(sc)["exchanges"] == sum(result["communication"]["rounds"].values())


@pytest.mark.parametrize(
    "extra",
    [["model.kind=ridge"], ["model.kind=ridge", "mechanism.kind=fedavg"],
     ["model.kind=ridge", "mechanism.clip_norm=5"], ["model.kind=logistic"]],
    ids=["ridge-ffl", "ridge-fedavg", "ridge-clipped", "logistic-ffl"],
)  # fmt: skip
def test_the_plan_knows_which_rounds_form_reports(monkeypatch, extra):
    # Ridge's Phase I sums from the data's moments: only the shared round at w* and Phase II
    # form the agents' reports. Clipping or a nonlinear model form them every round.
    from edgesim.learning import models

    rounds = ["mechanism.phase1_rounds=12", "mechanism.phase2_rounds=2"]
    sc = scenario.load(None, [*SMALL, *MEMORY, *rounds, "mechanism.exact_vcg=false", *extra])
    p = planner.plan(sc)
    calls = []
    real = models.Model.agent_grads
    monkeypatch.setattr(
        models.Model, "agent_grads", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    run(sc)
    assert len(calls) == p["report_exchanges"]
    summed = "clip_norm=5" not in " ".join(extra) and "logistic" not in " ".join(extra)
    assert p["report_exchanges"] == p["exchanges"] - (12 if summed else 0)


@pytest.mark.parametrize(
    "extra, solves",
    [([], 7), (["mechanism.kind=fedavg"], 1), (["mechanism.exact_vcg=false"], 0),
     (["mechanism.kind=fedavg", "mechanism.exact_vcg=true"], 7)],
    ids=["ffl-auto", "fedavg-auto", "off", "fedavg-on"],
)  # fmt: skip
def test_the_plan_counts_the_reference_solves_a_run_makes(monkeypatch, extra, solves):
    # Logistic: every central solve of the references is one vcg.solve_weighted (L-BFGS-B).
    from edgesim.mechanisms import vcg

    sc = scenario.load(None, [*SMALL, *MEMORY, "mechanism.phase1_rounds=20",
                              "mechanism.phase2_rounds=2", *extra])  # fmt: skip
    p = planner.plan(sc)
    calls = []
    real = vcg.solve_weighted
    monkeypatch.setattr(vcg, "solve_weighted", lambda *a, **k: calls.append(1) or real(*a, **k))
    result = run(sc)
    assert p["reference_solves"] == len(calls) == solves
    assert p["exact_vcg"] == result["model"]["exact_vcg"]["computed"] == (solves > 1)
    assert p["exact_vcg_reason"] == result["model"]["exact_vcg"]["reason"]
    assert p["reference_s"] == (p["exact_vcg_s"] if solves > 1 else p["optimum_s"] * solves)


def test_the_plan_says_why_it_skips_and_what_the_local_baseline_costs(capsys):
    from edgesim.learning.local import local_models

    over = [*SMALL, *MEMORY, "mechanism.kind=fedavg", "output.local_baseline=true"]
    sc = scenario.load(None, over)
    sim = Simulation(sc)
    p = planner.plan(sc, sim)
    _, rounds = local_models(sim.model, sim.design, sc.mechanism.local_rounds)
    assert rounds <= p["local_baseline_rounds"] <= sc.mechanism.local_rounds
    assert p["local_baseline_s"] > 0
    assert main(["plan", *[a for o in over for a in ("--set", o)]]) == 0
    text = capsys.readouterr().out
    assert "  exact VCG     skipped: fedavg has no payments to compare (K + 1 = 7 solves" in text
    assert "; the optimum w^o: 1 solve, about" in text
    assert f"  local         baseline: at most {p['local_baseline_rounds']:,d} rounds" in text
    off = planner.plan(scenario.load(None, [*SMALL, *MEMORY]))
    assert off["local_baseline_rounds"] is None and off["local_baseline_s"] is None


# ----------------------------------------------------------------- the wall-time model (issue 32)


def _table_seconds(p: dict, sc) -> dict:
    """The network and in-memory seconds recomputed from edgesim.wall_costs and the plan's counts,
    independently of edgesim.plan_wall."""
    from edgesim import wall_costs
    from edgesim.plan_wall import link_class

    w = p["work"]
    mem = wall_costs.MEMORY[sc.mechanism.kind]
    memory = (
        mem["round"][0] * w["round_exchanges"]
        + mem["round"][1] * w["round_recipients"]
        + mem["problem"][0] * w["problem_exchanges"]
        + mem["problem"][1] * w["problem_recipients"]
    )
    if sc.network.fidelity == "none":
        return {"memory": memory, "network": 0.0}
    link = link_class(sc.network, Simulation(sc).data.n_k)
    costs = wall_costs.NETWORK[sc.network.fidelity][sc.network.radio.access][link]
    steady = sc.network.radio.loss == "none"

    def cost(kind, exchanges, recipients):
        ex, rec, cell = costs[kind]
        return ex * exchanges + rec * recipients + cell * w["cells"] * exchanges

    from edgesim.network import medium

    # the network's start, once per process, when exchanges are large enough to walk compiled
    compiled = sc.agents.count >= getattr(medium, "COMPILED_FROM", 0)
    network = wall_costs.START_S[sc.network.fidelity] if compiled else 0.0
    network += cost("steady" if steady else "general", w["round_exchanges"], w["round_recipients"])
    network += cost(
        "others" if steady else "general", w["problem_exchanges"], w["problem_recipients"]
    )
    return {"memory": memory, "network": network}


@pytest.mark.parametrize(
    "extra",
    [
        ["network.fidelity=batched", "network.radio.loss=none", "network.radio.loss_prob=0"],
        ["network.fidelity=events", "network.topology.devices_per_cell=2",
         "network.radio.access=ofdma"],
        ["network.fidelity=none", "mechanism.kind=dp-ffl", "mechanism.clusters=3"],
    ],
    ids=["batched-steady", "events-cells-lossy", "memory-dp-ffl"],
)  # fmt: skip
def test_the_wall_estimate_is_the_tables_costs_times_the_plans_counts(extra):
    sc = scenario.load(None, [*SMALL, "agents.count=7", "mechanism.phase1_rounds=9",
                              "mechanism.phase2_rounds=2", *extra])  # fmt: skip
    p = planner.plan(sc)
    w, parts = p["work"], p["wall_parts_s"]
    K, kind = 7, sc.mechanism.kind
    if kind == "ffl":  # 9 rounds and the shared one to all 7; 7 problems of 2 rounds to 6 others
        assert (w["round_exchanges"], w["round_recipients"]) == (10, 70)
        assert (w["problem_exchanges"], w["problem_recipients"]) == (14, 84)
    assert w["cells"] == (4 if "devices_per_cell=2" in " ".join(extra) else 1)  # ceil(7 / 2)
    expected = _table_seconds(p, sc)
    assert parts["memory"] == pytest.approx(expected["memory"], rel=1e-12)
    assert parts["network"] == pytest.approx(expected["network"], rel=1e-12, abs=1e-15)
    assert p["wall_time_s"] == pytest.approx(sum(parts.values()), rel=1e-12)
    assert parts["reports"] == pytest.approx(w["passes"] * p["seconds_per_gradient"], rel=1e-12)
    assert K == sc.agents.count


def test_lost_replies_end_phase2_problems_early():
    from edgesim import plan_phase2

    # pi = 0.1, 3 rounds minimum, 50 needed: 3 + sum_{j=1}^{47} 0.9^j
    expected = 3 + sum(0.9**j for j in range(1, 48))
    got = plan_phase2.expected_with_loss(np.array([50, 0, 3]), 3, 0.1)
    assert got[0] == pytest.approx(expected, rel=1e-12)
    assert got[1] == 0 and got[2] == 3  # a problem not run; one done at T2 whatever is lost
    # q = 0.2 per transmission, 3 retransmissions: a message lost with 0.2^4, a reply missing
    # when either direction is: 1 - (1 - 0.0016)^2; an exchange to 5 agents incomplete with
    # 1 - (1 - that)^5
    sc = scenario.load(None, [*SMALL, *LOSSY])
    miss = 1 - (1 - 0.2**4) ** 2
    got = plan_phase2.incomplete_probability(sc.network, 5)
    assert got == pytest.approx(1 - (1 - miss) ** 5)
    memory = scenario.load(None, [*SMALL, *MEMORY]).network
    assert plan_phase2.incomplete_probability(memory, 5) == 0.0


def test_rounds_to_target_is_the_least_round_meeting_the_rule():
    from edgesim.plan_phase2 import rounds_to_target

    rng = np.random.default_rng(3)
    coef = rng.exponential(size=(40, 5))
    factors = rng.uniform(0.5, 0.999, size=5)
    target = rng.uniform(1e-4, 1.0, size=40)
    got = rounds_to_target(coef, factors, target, cap=5000)
    for i in range(40):  # the first t whose sum is at most the target, found by walking
        t = 0
        while (coef[i] * factors**t).sum() > target[i] and t < 5000:
            t += 1
        assert got[i] == t


def test_phase2_rounds_under_the_stopping_rule_are_predicted():
    # Ridge is quadratic: the linearised model is exact but for the Hessian of each problem's
    # objective, taken as (1 - p_k) times the whole one's.
    over = ["data.samples=300", "data.heterogeneity=1.0", "agents.count=30",
            "mechanism.epsilon=1e-7", "mechanism.phase2_rounds=1"]  # fmt: skip
    sc = scenario.load("scenarios/comm-vs-k.toml", [*over, "network.fidelity=none"])
    p = planner.plan(sc)
    actual = np.array(run(sc)["iterations"]["phase2_per_agent"])
    predicted = p["phase2_rounds_expected"]
    assert actual.min() > 5  # the rule, not T2 = 1, decides
    assert np.abs(predicted - actual).max() <= 2
    assert predicted.sum() == pytest.approx(actual.sum(), rel=0.05)
    assert p["exchanges"] == pytest.approx(
        p["T1"] + 1 + actual.sum(), rel=0.05
    )  # Phase I, the shared round at w*, the problems


def test_a_search_is_planned_as_its_runs():
    from edgesim.plan_wall import search_runs

    sc = scenario.load("scenarios/paper-fig1.toml", ["mechanism.phase1_rounds=30"])
    br = sc.best_response
    # 7 log-spaced points and gamma = 1; Brent over two grid steps of ln(256)/6 to xtol 1e-3:
    # half of ln(2 ln(256)/6 / 1e-3) / ln(golden) golden-section steps, rounded up; the opt-out
    refine = int(np.ceil(0.5 * np.log(2 * np.log(256) / 6 / 1e-3) / np.log((1 + 5**0.5) / 2)))
    assert search_runs(br) == 7 + 1 + refine + 1
    result = run(sc)
    actual = result["best_response"]["evaluations"] + 1  # and the opt-out run
    assert abs(search_runs(br) - actual) <= 0.5 * actual


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("fidelity", ["batched", "events"])
def test_reports_computed_ahead_are_hidden_behind_the_network(monkeypatch, fidelity, threads):
    """Batched, with two gradient threads and four row blocks or more, the formed reports are
    computed while the network plans each exchange (AgentSide.reports_ahead), on one thread
    (the driver's joins in after): the plan counts min(reports, network / 2) of them hidden
    (the reports' time is timed on both threads). Not in events, nor with one thread."""
    from edgesim.learning.segments import BLOCK_ROWS, THREAD_MIN_BLOCKS

    monkeypatch.setenv("EDGESIM_THREADS", threads)
    samples = THREAD_MIN_BLOCKS * BLOCK_ROWS + 7
    sc = scenario.load(None, [*SMALL, "agents.count=7", f"data.samples={samples}",
                              "mechanism.phase1_rounds=3", "mechanism.phase2_rounds=2",
                              f"network.fidelity={fidelity}"])  # fmt: skip
    p = planner.plan(sc)
    parts = p["wall_parts_s"]
    formed = p["work"]["passes"] * p["seconds_per_gradient"]
    assert formed > 0
    if fidelity == "batched" and threads == "2":
        assert parts["reports"] == pytest.approx(formed - min(formed, parts["network"] / 2))
        assert any("hidden" in note for note in p["notes"])
    else:
        assert parts["reports"] == pytest.approx(formed, rel=1e-12)
    assert p["wall_time_s"] == pytest.approx(sum(parts.values()), rel=1e-12)
