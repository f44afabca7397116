"""Phase II in parallel (``mechanism.phase2_schedule``): same numbers, fewer round trips."""

from __future__ import annotations

import copy
import csv
import io

import numpy as np
import pytest

from edgesim.cli import main
from edgesim.mechanisms.protocol import model_bytes
from edgesim.output import to_json
from edgesim.scenario import from_dict
from edgesim.simulate import Simulation, run
from tests.helpers import write

BASE = {
    "seed": 3,
    "data": {"source": "synthetic", "samples": 500, "features": 4},
    "agents": {"count": 50},
    "model": {"kind": "ridge", "l2": 1.0},
    "mechanism": {"kind": "ffl", "phase1_rounds": 25, "phase2_rounds": 4, "phase2_check": False},
    "network": {"fidelity": "batched", "radio": {"model": "fixed"}},
    "output": {"local_baseline": False},
}


def _sim(schedule: str, mechanism=None, network=None, agents=None) -> tuple[dict, Simulation]:
    raw = copy.deepcopy(BASE)
    raw["mechanism"].update(phase2_schedule=schedule, **(mechanism or {}))
    raw["network"].update(network or {})
    raw["agents"].update(agents or {})
    sc = from_dict(raw)
    sim = Simulation(sc)
    return run(sc, sim), sim


@pytest.mark.parametrize("fidelity", ["none", "batched", "events"])
def test_ffl_parallel_gives_the_sequential_payments_and_model_at_k_50(fidelity):
    seq, _ = _sim("sequential", network={"fidelity": fidelity})
    par, _ = _sim("parallel", network={"fidelity": fidelity})
    assert par["payments"] == seq["payments"] and par["model"] == seq["model"]
    assert par["mechanism_info"] == seq["mechanism_info"]


def test_ffl_parallel_with_the_stopping_check_and_the_trapezoid_rule():
    mech = {"phase2_check": True, "payment_rule": "trapezoid", "phase2_rounds": 2}
    seq, _ = _sim("sequential", mech, agents={"count": 20})
    par, _ = _sim("parallel", mech, agents={"count": 20})
    assert par["payments"] == seq["payments"]
    assert par["iterations"] == seq["iterations"]


def test_parallel_messages_and_bytes_follow_the_formula():
    seq, _ = _sim("sequential")
    par, _ = _sim("parallel")
    K, n_params = 50, 5
    T1 = seq["iterations"]["phase1"]
    rounds2 = par["communication"]["rounds"]["phase2"]
    problem_rounds = seq["iterations"]["phase2_per_agent"]
    assert rounds2 == max(problem_rounds)  # one exchange per Phase II round
    # Phase I and the shared round at w*: K messages each; each parallel round: one per agent
    assert par["communication"]["messages_down"] == K * (T1 + 1) + K * rounds2
    # a parallel message is the concatenation of the per-problem messages it replaces
    assert par["communication"]["bytes_down"] == seq["communication"]["bytes_down"]
    assert seq["communication"]["bytes_down"] == model_bytes(n_params) * (
        K * (T1 + 1) + (K - 1) * sum(problem_rounds)
    )
    assert par["communication"]["bytes_up"] == seq["communication"]["bytes_up"]


def test_parallel_phase2_time_is_at_most_rounds_plus_one_parallel_exchanges():
    par, sim = _sim("parallel")
    seq, _ = _sim("sequential")
    rows = list(csv.DictReader(io.StringIO(sim.last_trace.to_csv())))
    phase2 = [float(r["end_s"]) - float(r["start_s"]) for r in rows if r["phase"] == "phase2"]
    one = max(phase2)  # a parallel exchange: up to K - 1 iterates each way per agent
    # fixed link, same size for every agent: the exchange takes the analytic time of its bytes
    T2_max = max(seq["iterations"]["phase2_per_agent"])
    assert par["sim_time_s"]["phase2"] <= (T2_max + 1) * one + 1e-12
    assert par["sim_time_s"]["phase2"] < seq["sim_time_s"]["phase2"]
    assert par["sim_time_s"]["phase1"] == seq["sim_time_s"]["phase1"]


def test_vcg_federated_parallel_equals_sequential():
    mech = {"kind": "vcg-federated", "phase1_rounds": 10}
    seq, _ = _sim("sequential", mech, agents={"count": 12})
    par, _ = _sim("parallel", mech, agents={"count": 12})
    assert par["payments"] == seq["payments"] and par["model"] == seq["model"]
    assert par["communication"]["rounds"]["phase2"] == 10 + 1  # T1 trainings' rounds + losses


def test_dp_ffl_parallel_runs_with_open_aggregation():
    mech = {"kind": "dp-ffl", "secure_aggregation": False, "phase2_rounds": 3}
    seq, _ = _sim("sequential", mech, agents={"count": 16})
    par, _ = _sim("parallel", mech, agents={"count": 16})
    assert np.isfinite(par["payments"]).all()
    assert par["model"] == seq["model"]  # Phase I is not scheduled: same draws
    assert par["communication"]["rounds"]["phase2"] < seq["communication"]["rounds"]["phase2"]


def test_parallel_with_retry_recovers_the_lossless_run():
    lossless, _ = _sim("parallel", agents={"count": 12})
    radio = {"model": "fixed", "loss": "bernoulli", "loss_prob": 0.3, "arq_max_retries": 0}
    mech = {"missing": "retry", "retry_max": 50}
    lossy, _ = _sim("parallel", mech, network={"radio": radio}, agents={"count": 12})
    assert lossy["payments"] == lossless["payments"] and lossy["model"] == lossless["model"]


def test_events_and_batched_agree_in_parallel():
    radio = {"model": "fixed", "loss": "bernoulli", "loss_prob": 0.1, "arq_max_retries": 1}
    texts = []
    for fidelity in ("events", "batched"):
        res, _ = _sim("parallel", network={"fidelity": fidelity, "radio": radio})
        res["scenario"]["network"]["fidelity"] = res["network"]["fidelity"] = "(either)"
        texts.append(to_json(res))
    assert texts[0] == texts[1]


@pytest.mark.parametrize(
    "text",
    [
        "[mechanism]\nkind = 'fedavg'\nphase2_schedule = 'parallel'\n",
        "[mechanism]\nkind = 'dp-ffl'\nphase2_schedule = 'parallel'\n",
        "[mechanism]\nphase2_schedule = 'both'\n",
    ],
)
def test_parallel_where_it_does_not_apply_exits_2(tmp_path, capsys, text):
    assert main(["validate", str(write(tmp_path, text))]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "mechanism.phase2_schedule" in err[0], err
