"""The best-response search over any family (edgesim.best_response.search), its bound, the
``edgesim deviate`` command, ``edgesim.deviate`` and a sweep of searches."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import edgesim
from edgesim import sweeps as sw
from edgesim.agents import Amplify, Population
from edgesim.best_response import Axis, configured, minimise, search, search_amplify
from edgesim.cli import main
from edgesim.output import clean, to_json
from edgesim.reference import optimum
from edgesim.scenario import load_sweep
from edgesim.simulate import Simulation, run
from tests.helpers import write

#: A small ridge federation: 4 agents, FFL, a short Phase I (the searches run many times).
TINY = """\
seed = 3
[data]
source = "synthetic"
samples = 160
features = 3
[model]
kind = "ridge"
l2 = 0.1
[agents]
count = 4
weights = "samples"
[mechanism]
kind = "ffl"
phase1_rounds = 30
phase2_rounds = 3
exact_vcg = false
[output]
local_baseline = false
"""


def tiny(tmp_path, extra: str = "", name: str = "tiny.toml"):
    return write(tmp_path, TINY + extra, name)


# ---------------------------------------------------------------------------- the optimiser


def test_minimise_finds_a_two_parameter_closed_form_minimum_with_a_signed_and_a_log_axis():
    # f = (log s - log 2)^2 + 2 (t + 0.7)^2: minimum at s = 2 (log axis), t = -0.7 (signed)
    axes = [Axis("s", 0.1, 10.0, True, False), Axis("t", -2.0, 1.0, False, False)]
    calls = []

    def f(values):
        calls.append(values)
        s, t = values
        return (math.log(s) - math.log(2.0)) ** 2 + 2.0 * (t + 0.7) ** 2

    found = minimise(f, axes, points=15, budget=200, xtol=1e-6)
    s, t = found["best"]
    assert abs(s - 2.0) < 1e-4 and abs(t + 0.7) < 1e-4
    assert found["objective"] == pytest.approx(0.0, abs=1e-8)
    assert found["method"] == "grid, then bounded Nelder-Mead"
    assert len(calls) == len(found["seen"]) <= 200  # every point evaluated once
    assert found["grid"][0][0] == 0.1 and found["grid"][0][-1] == 10.0  # 10 per axis: 10^2 <= 100
    assert len(found["grid"][0]) == 10


def test_minimise_keeps_to_its_budget_and_searches_signed_and_integer_axes():
    signed = minimise(
        lambda v: (v[0] + 1.3) ** 2, [Axis("x", -3.0, 2.0, False, False)], 7, 40, 1e-7
    )
    assert signed["best"][0] == pytest.approx(-1.3, abs=1e-5)
    integer = minimise(lambda v: (v[0] - 4.2) ** 2, [Axis("n", 2, 9, True, True)], 15, 40, 1e-3)
    assert integer["best"] == (4,) and all(isinstance(v[0], int) for v in integer["seen"])
    box = [Axis(n, -1.0, 1.0, False, False) for n in "abc"]
    capped = minimise(lambda v: sum(x * x for x in v), box, 15, 12, 1e-9)
    assert len(capped["seen"]) == 12  # 2^3 grid points, then 4 refinement steps: spent


# ---------------------------------------------------------------------------- FedAvg: the original search


def test_the_original_gamma_search_and_the_new_search_on_amplify_agree_under_fedavg():
    sc = edgesim.load_scenario(
        "paper-fig1",
        ["mechanism.phase1_rounds=1000", "best_response.points=6", "best_response.xtol=0.01"],
    )
    assert sc.mechanism.kind == "fedavg" and sc.best_response.objective == "test"
    sim = Simulation(sc)
    old = search_amplify(sim, sc.best_response)
    new_sc = configured(sc, parameters={"gamma": [0.25, 64.0]}, budget=40)
    new = search(sim, new_sc.best_response, optimum=optimum)
    assert old["gamma"] > 4.0 and new["regret"] > 0.5  # amplifying pays under FedAvg
    assert abs(math.log(new["gamma"] / old["gamma"])) <= sc.best_response.xtol
    assert new["parameters"] == {"gamma": new["gamma"]} and new["family"] == "amplify"
    assert new["bound"] is None and "FedAvg" in new["bound_reason"]
    # Without parameters, run() runs exactly the original search and adds keys to it.
    legacy = run(sc)["best_response"]
    for key in ("gamma", "objective", "truthful", "gain", "grid", "opt_out"):
        assert legacy[key] == old[key], key
    assert legacy["regret"] == old["gain"] and legacy["evaluations"] == len(old["grid"])


# ---------------------------------------------------------------------------- FFL: the bound


@pytest.fixture(scope="module")
def quickstart_search():
    """The quick start in memory with phase1_rounds = 20: agent 3's gamma search on 'overall'."""
    sc = edgesim.load_scenario(
        None,
        [
            "network.fidelity=none",
            "mechanism.phase1_rounds=20",
            "best_response.enabled=true",
            "best_response.agent=3",
            "best_response.objective=overall",
            "best_response.points=5",
            "best_response.xtol=0.05",
        ],
    )
    return sc, run(sc)


def test_the_bounds_phase1_term_is_needed(quickstart_search):
    sc, result = quickstart_search
    br = result["best_response"]
    terms = br["bound_terms"]
    assert br["gamma"] > 60.0  # at the bracket's end, 64
    assert br["regret"] == pytest.approx(0.566, abs=0.002)
    assert result["payment_error_max"] < 0.45  # payments within 0.45 of exact VCG
    without_phase1 = (
        terms["epsilon"]
        + terms["payment_phase2_error_truthful"]
        + terms["payment_phase2_error_deviating"]
    )
    assert without_phase1 < 0.01 < br["regret"]  # an epsilon-sized bound is violated by far
    assert br["regret"] <= br["bound"] == pytest.approx(without_phase1 + terms["phase1_gap"])
    assert result["economics"]["E2"]["holds"] is True


def test_the_bound_terms_are_the_runs_own_numbers(quickstart_search):
    sc, result = quickstart_search
    br = result["best_response"]
    sim = Simulation(sc)

    def parts(gamma):
        r = sim.run_mechanism(Population(10, {3: Amplify(gamma)}))
        info = r.outcome.info
        phase2 = info["payment_truncation_error"][3] + info["payment_discretisation_error"][3]
        return r, phase2, info["payment_error_estimate"][3]

    truthful, e_t, est_t = parts(1.0)
    _, e_d, est_d = parts(br["gamma"])
    F = sim.model.loss(truthful.outcome.model, truthful.design, truthful.p)
    F_o = sim.model.loss(optimum(sim.model, sim.design, truthful.p), sim.design, truthful.p)
    t = br["bound_terms"]
    assert t["p_k"] == truthful.p[3] == 0.1  # equal weights over 10 agents
    assert t["epsilon"] == sc.mechanism.epsilon
    assert t["F_truthful"] == F and t["F_optimum"] == pytest.approx(F_o, rel=1e-12)
    assert t["phase1_gap"] == pytest.approx((F - F_o) / 0.1, rel=1e-9)
    assert (t["payment_phase2_error_truthful"], t["payment_phase2_error_deviating"]) == (e_t, e_d)
    assert (t["payment_error_estimate_truthful"], t["payment_error_estimate_deviating"]) == (
        est_t,
        est_d,
    )
    assert br["bound"] == t["epsilon"] + e_t + e_d + t["phase1_gap"]
    # F(w^o) is the optimum of the run's own objective: below every run's F(w*)
    assert F_o <= F and F_o <= result["model"]["optimum_loss"] + 1e-12


#: paper-fig1 under FFL with a short Phase I (its gap term is then what the bound is made of)
#: and Phase II problems capped (a deviation can make the other agent's problem oscillate).
FIG1_FFL = ["mechanism.kind=ffl", "mechanism.phase1_rounds=300", "mechanism.phase2_max_rounds=3000"]


@pytest.mark.parametrize(
    ("family", "parameters", "fixed"),
    [
        ("amplify", {"gamma": [0.5, 1.8]}, {"phases": "phase1"}),
        ("amplify", {"gamma": [0.5, 1.8]}, {"problems": "others"}),
        ("pretend-data", {"target_scale": [0.5, 2.0], "target_shift": [-1.0, 1.0]}, None),
        ("pull", {"lam": [-0.2, 0.2]}, None),
        ("loss-misreport", {"loss_scale": [0.5, 2.0]}, None),
        ("free-ride", None, {"report": "first"}),
        ("withhold", {"probability": [0.0, 1.0]}, {"phases": "phase2"}),
    ],
)
def test_report_deviations_stay_within_the_bound_under_ffl(family, parameters, fixed):
    found = edgesim.deviate(
        "paper-fig1", agent=0, family=family, parameters=parameters, fixed=fixed,
        objective="overall", budget=6, overrides=FIG1_FFL,
    )  # fmt: skip
    assert found["bound_reason"] is None
    assert found["regret"] <= found["bound"]
    assert found["bound"] < 0.013  # the gap term, 0.0126, and Phase II errors of about 1e-8


def test_under_fedavg_pulling_the_model_pays():
    found = edgesim.deviate(
        "paper-fig1", agent=0, family="pull", parameters={"lam": [-0.5, 2.0]}, budget=8,
        objective="overall", overrides=["mechanism.phase1_rounds=1000"],
    )  # fmt: skip
    assert found["regret"] > 0.1 and found["parameters"]["lam"] > 1.0
    assert found["bound"] is None


# ---------------------------------------------------------------------------- coalitions, identities


def test_a_coalition_of_two_minimises_its_summed_objective(tmp_path):
    sc = edgesim.load_scenario(tiny(tmp_path))
    found = edgesim.deviate(sc, agent=[1, 2], parameters={"gamma": [0.5, 2.0]}, budget=5)
    assert found["agent"] == [1, 2] and found["evaluations"] == 5
    assert found["bound"] is None and "coalition" in found["bound_reason"]
    sim = Simulation(sc)

    def summed(strategies):
        r = sim.run_mechanism(Population(4, strategies))
        return sim.objective(r, 1, "overall") + sim.objective(r, 2, "overall")

    assert found["truthful"] == summed({})
    for point in found["curve"]:
        g = point["parameters"]["gamma"]
        assert point["objective"] == summed({1: Amplify(g), 2: Amplify(g)})
    assert found["objective"] == min(p["objective"] for p in found["curve"])
    assert found["regret"] == found["truthful"] - found["objective"]


def test_a_sybil_search_runs_each_split_on_a_simulation_of_its_own(tmp_path):
    sc = edgesim.load_scenario(tiny(tmp_path))
    found = edgesim.deviate(sc, agent=0, family="sybil", parameters={"identities": [2, 3]})
    assert [p["parameters"]["identities"] for p in found["curve"]] == [2, 3]
    strategy = '[[agents.strategy]]\nagent = 0\nkind = "sybil"\nidentities = 2\n'
    direct = run(edgesim.load_scenario(tiny(tmp_path, strategy, "sybil.toml")))
    assert found["curve"][0]["objective"] == direct["sybil"][0]["J"]
    assert found["truthful"] == direct["sybil"][0]["truthful"]["J"]
    assert found["bound"] is None and "agents or weights" in found["bound_reason"]


# ---------------------------------------------------------------------------- bad input, CLI, API


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (["--family", "no-such"], "best_response.family"),
        (["--agent", "1", "--agent", "1"], "best_response.agents"),
        (["--agent", "1", "--agent", "9"], "best_response.agents"),
        (["--param", "gamma=-1:2"], "best_response.parameters.gamma"),
        (["--param", "gamma=2:1"], "best_response.parameters.gamma"),
        (["--family", "pull", "--param", "nope=0:1"], "best_response.parameters.nope"),
        (["--family", "pull", "--param", "target=0:1"], "best_response.parameters.target"),
        (["--family", "pull"], "best_response.parameters"),
        (
            ["--family", "pull", "--param", "lam=0:1", "--fix", "target=far"],
            "best_response.fixed.target",
        ),
        (["--param", "gamma"], "--param"),
    ],
)
def test_deviate_exits_2_naming_the_key(tmp_path, capsys, args, key):
    code = main(["deviate", str(tiny(tmp_path)), "-o", str(tmp_path / "out"), *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith(f"edgesim: error: {key}: "), err
    assert not (tmp_path / "out").exists()


def test_run_exits_2_naming_the_table_key_of_a_bad_search(tmp_path, capsys):
    extra = '[best_response]\nenabled = true\nfamily = "pul"\n'
    assert main(["run", str(tiny(tmp_path, extra)), "--quiet"]) == 2
    err = capsys.readouterr().err
    # refused when the scenario loads (the cross-table rules), with the table's line
    assert "best_response.family (line 21): 'pul' is not a registered strategy" in err
    assert "did you mean 'pull'?" in err


def test_deviate_writes_the_json_plot_and_summary_and_is_deterministic(tmp_path, capsys):
    args = ["--agent", "2", "--family", "pull", "--param", "lam=-1:1"]
    args = ["deviate", str(tiny(tmp_path)), *args, "--fix", "target=zero", "--budget", "6"]
    assert main([*args, "-o", str(tmp_path / "a"), "--quiet"]) == 0
    assert main([*args, "-o", str(tmp_path / "b")]) == 0
    printed = capsys.readouterr().out
    a, b = ((tmp_path / d / "deviate.json").read_bytes() for d in "ab")
    assert a == b  # determinism: the same JSON twice
    found = json.loads(a)["best_response"]
    for key in ("regret", "bound", "parameters", "family", "agent", "objective_kind", "truthful"):
        assert key in found  # what the economics' E2 reads
    assert (
        found["agent"] == 2
        and found["family"] == "pull"
        and found["search"]["fixed"] == {"target": "zero"}
    )
    assert found["search"]["parameters"] == {"lam": [-1.0, 1.0, "linear"]}
    assert (tmp_path / "a" / "deviate.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (tmp_path / "a" / "deviate.txt").read_text()
    assert text.startswith("best deviation of agent 2: pull (overall)") and text in printed
    api = edgesim.deviate(
        tiny(tmp_path), agent=2, family="pull", parameters={"lam": [-1, 1]},
        fixed={"target": "zero"}, budget=6,
    )  # fmt: skip
    assert to_json(clean(api)) == to_json(found)


def test_two_parameter_search_through_the_api_is_deterministic(tmp_path):
    def once():
        return edgesim.deviate(
            tiny(tmp_path),
            agent=1,
            family="loss-misreport",
            parameters={"loss_scale": [0.5, 2.0], "loss_shift": [-0.1, 0.1]},
            budget=9,
        )

    first, second = once(), once()
    assert to_json(clean(first)) == to_json(clean(second))
    assert first["evaluations"] == 9 and len(first["curve"]) == 9
    assert set(first["search"]["grid"]) == {"loss_scale", "loss_shift"}


# ---------------------------------------------------------------------------- a sweep of searches


def test_a_sweep_with_a_best_response_table_records_one_search_per_point_and_resumes(tmp_path):
    extra = (
        "[best_response]\nenabled = true\nagent = 1\nbudget = 4\nparameters = {gamma = [0.5, 2.0]}\n"
        "[sweep]\nseed = [0, 1]\n"
    )
    path = tiny(tmp_path, extra)
    out = tmp_path / "out"
    first = sw.run_sweep(load_sweep(path), out, workers=0)
    assert (first.ok, first.failed) == (2, 0)
    records = sw.load_records(out)
    assert len(records) == 2
    for rec in records:
        result = json.loads(sw.result_json(rec))
        br = result["best_response"]
        assert br["evaluations"] == 4 and br["agent"] == 1 and br["family"] == "amplify"
        assert result["economics"]["E2"]["regret"] == br["regret"]
        assert sw.result_json(rec) == to_json(
            run(edgesim.load_scenario(path, [f"seed={rec['values']['seed']}"]))
        )
    again = sw.run_sweep(load_sweep(path), out, workers=0)
    assert (again.skipped, again.ok) == (2, 0)
    assert np.isfinite(
        [json.loads(sw.result_json(r))["best_response"]["regret"] for r in records]
    ).all()
