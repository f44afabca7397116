"""edgesim plan / run --dry-run: the predicted rounds and messages against what runs count."""

from __future__ import annotations

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
