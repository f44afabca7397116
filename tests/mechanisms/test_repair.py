"""Repair policies for missing replies (``mechanism.missing``): reweight, retry, stale."""

from __future__ import annotations

import copy
import csv
import io
import json

import numpy as np
import pytest

from edgesim.cli import main
from edgesim.mechanisms.in_memory import drive
from edgesim.mechanisms.protocol import Gather, Replies
from edgesim.mechanisms.repair import Repair, with_repair
from edgesim.output import to_json
from edgesim.scenario import from_dict
from edgesim.simulate import run
from tests.helpers import write

BASE = {
    "seed": 3,
    "data": {"source": "synthetic", "samples": 300, "features": 4},
    "agents": {"count": 12},
    "model": {"kind": "ridge", "l2": 1.0},
    "mechanism": {"kind": "ffl", "phase1_rounds": 25, "phase2_rounds": 4, "phase2_check": False},
    "network": {"fidelity": "batched", "radio": {"model": "fixed"}},
    "output": {"local_baseline": False},
}


def _run(mechanism=None, radio=None, network=None) -> dict:
    raw = copy.deepcopy(BASE)
    raw["mechanism"].update(mechanism or {})
    raw["network"]["radio"].update(radio or {})
    raw["network"].update(network or {})
    return run(from_dict(raw))


def _without_scenario(result: dict) -> str:
    out = dict(result)
    out.pop("scenario")
    return to_json(out)


@pytest.mark.parametrize("kind", ["fedavg", "ffl", "dp-ffl", "vcg-federated"])
def test_a_lossless_run_is_the_same_under_every_policy(kind):
    texts = set()
    for policy in ("reweight", "retry", "stale"):
        mech = {"kind": kind, "missing": policy}
        if kind == "dp-ffl":  # stale needs open reports: all three aggregate openly here
            mech.update(phase2_rounds=2, secure_aggregation=False)
        texts.add(_without_scenario(_run(mech)))
    assert len(texts) == 1


LOSSY = {"loss": "bernoulli", "loss_prob": 0.3, "arq_max_retries": 0}


@pytest.mark.parametrize("fidelity", ["batched", "events"])
def test_retry_recovers_the_lossless_model_and_payments_exactly(fidelity):
    lossless = _run(network={"fidelity": fidelity})
    retried = _run({"missing": "retry", "retry_max": 50}, LOSSY, {"fidelity": fidelity})
    reweighted = _run({"missing": "reweight"}, LOSSY, {"fidelity": fidelity})
    assert retried["payments"] == lossless["payments"]
    assert retried["model"] == lossless["model"]
    assert reweighted["payments"] != lossless["payments"]  # the losses did matter
    info = retried["mechanism_info"]["repair"]
    assert info["given_up_replies"] == 0 and info["recovered_replies"] > 0
    # the retries are exchanges of their own: more messages and more simulated time
    assert retried["communication"]["messages_up"] > lossless["communication"]["messages_up"]
    assert retried["sim_time_s"]["total"] > lossless["sim_time_s"]["total"]


@pytest.mark.parametrize("phases", ["phase1", "phase2", "all"])
def test_a_recovered_deviators_reply_is_its_report_as_sent(phases):
    """A deviator (agent 0 amplifying by 3) whose lost reply a retry recovers counts with its
    amplified report, not its true gradient: every reply recovered, the run is the lossless
    deviating run bit for bit (ridge with one deviator sums from the data's moments, and
    the retry's replies carry their own deviation)."""
    amplify = [{"agent": 0, "kind": "amplify", "gamma": 3.0, "phases": phases}]
    raw = copy.deepcopy(BASE)
    raw["agents"]["strategy"] = amplify
    lossless = run(from_dict(raw))
    raw["mechanism"].update(missing="retry", retry_max=50)
    raw["network"]["radio"].update(LOSSY)
    retried = run(from_dict(raw))
    info = retried["mechanism_info"]["repair"]
    assert info["given_up_replies"] == 0 and info["recovered_replies"] > 0
    assert retried["payments"] == lossless["payments"]
    assert retried["model"] == lossless["model"]
    truthful = run(from_dict(copy.deepcopy(BASE)))
    assert truthful["payments"] != lossless["payments"]  # the deviation matters


def test_a_device_that_never_comes_back_is_given_up_on(tmp_path):
    trace = {str(k): {"active": [0], "inactive": [1e8]} for k in range(1, 12)}
    trace["0"] = {"active": [], "inactive": []}  # agent 0 is never online
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    availability = {"model": "trace", "trace_path": str(path), "trace_repeat": False}
    result = _run({"missing": "retry", "retry_max": 3}, network={"availability": availability})
    info = result["mechanism_info"]["repair"]
    rounds = result["iterations"]["phase1"] + 1  # Phase I and the shared round at w*
    assert info["retries"] >= 3 * rounds and info["given_up_replies"] >= rounds
    assert np.isfinite(result["payments"]).all()


def test_stale_fills_missing_replies_with_earlier_reports():
    result = _run({"missing": "stale"}, LOSSY)
    info = result["mechanism_info"]["repair"]
    assert info["stale_replies"] > 0
    # only agents that never replied before stay missing (a handful in the first round)
    assert info["given_up_replies"] < 0.1 * info["stale_replies"]


@pytest.mark.parametrize("policy", ["retry", "stale"])
def test_events_and_batched_agree_under_every_policy(policy):
    texts = []
    for fidelity in ("events", "batched"):
        result = _run({"missing": policy}, LOSSY, {"fidelity": fidelity})
        result["scenario"]["network"]["fidelity"] = result["network"]["fidelity"] = "(either)"
        texts.append(to_json(result))
    assert texts[0] == texts[1]


def _scripted(drops: list[set]):
    """A driver that drops the given agents on each successive step; records what was asked."""
    asked = []

    def answer(step: Gather) -> Replies:
        agents = np.arange(5) if step.agents is None else np.asarray(step.agents)
        asked.append(agents.tolist())
        drop = drops[len(asked) - 1] if len(asked) <= len(drops) else set()
        keep = np.array([a for a in agents if a not in drop], dtype=np.int64)
        gone = np.array([a for a in agents if a in drop], dtype=np.int64)
        values = step.model[None, :] + 10.0 * keep[:, None]  # agent a reports w + 10 a
        return Replies(keep, values=values, missing=gone)

    return answer, asked


def _mechanism(rounds: int):
    out = []
    w = np.zeros(2)
    for t in range(rounds):
        r = yield Gather(w + t, ask="gradient")
        out.append((r.agents.tolist(), r.values.copy(), r.missing.tolist()))
    return out


def test_retry_asks_only_the_missing_agents_and_merges_in_the_order_asked():
    answer, asked = _scripted([{1, 3}, {3}, set()])
    got = drive(with_repair(_mechanism(1), Repair("retry", 5, 5)), answer)
    assert asked == [[0, 1, 2, 3, 4], [1, 3], [3]]
    agents, values, missing = got[0]
    assert agents == [0, 1, 2, 3, 4] and missing == []
    assert np.array_equal(values[:, 0], 10.0 * np.arange(5))


def test_retry_max_zero_is_reweight_and_a_complete_round_is_untouched():
    answer, asked = _scripted([{2}, set()])
    got = drive(with_repair(_mechanism(2), Repair("retry", 0, 5)), answer)
    assert asked == [[0, 1, 2, 3, 4], [0, 1, 2, 3, 4]]
    assert got[0][0] == [0, 1, 3, 4] and got[0][2] == [2]
    assert got[1][0] == [0, 1, 2, 3, 4]


def test_stale_uses_the_latest_earlier_report():
    answer, _ = _scripted([{4}, set(), {1, 4}])
    got = drive(with_repair(_mechanism(3), Repair("stale", 0, 5)), answer)
    assert got[0][0] == [0, 1, 2, 3] and got[0][2] == [4]  # no earlier report of agent 4
    agents, values, missing = got[2]
    assert agents == [0, 1, 2, 3, 4] and missing == []
    # round 2's model is w + 2; agents 1 and 4 report their round-1 values (w + 1)
    assert values[1, 0] == 1.0 + 10.0 and values[4, 0] == 1.0 + 40.0
    assert values[0, 0] == 2.0


@pytest.mark.parametrize(
    "text, key",
    [
        ("[mechanism]\nmissing = 'resend'\n", "mechanism.missing"),
        ("[mechanism]\nmissing = 'retry'\nretry_max = -1\n", "mechanism.retry_max"),
        ("[mechanism]\nmissing = 'retry'\nretry_max = 1.5\n", "mechanism.retry_max"),
    ],
)
def test_bad_repair_settings_exit_2_naming_the_key(tmp_path, capsys, text, key):
    assert main(["validate", str(write(tmp_path, text))]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and key in err[0], err


def test_securely_aggregated_steps_are_never_retried():
    # dp-ffl aggregates Phase I securely: a retry's sum over a few agents would reveal them
    radio = {"loss": "bernoulli", "loss_prob": 0.3, "arq_max_retries": 0}
    mech = {"kind": "dp-ffl", "missing": "retry", "retry_max": 5, "phase2_rounds": 2}
    raw = copy.deepcopy(BASE)
    raw["mechanism"].update(mech)
    raw["network"]["radio"].update(radio)
    sc = from_dict(raw)
    from edgesim.simulate import Simulation

    sim = Simulation(sc)
    result = run(sc, sim)
    rows = list(csv.DictReader(io.StringIO(sim.last_trace.to_csv())))
    secure_rounds = [r for r in rows if r["stage"] == "masked_input"]
    it = result["iterations"]
    assert len(secure_rounds) == it["phase1"] + it["phase2_total"]  # no secure retry
    assert any(int(r["replies"]) < int(r["participants"]) for r in secure_rounds)  # lost some
    # the open loss reports of Phase II are retried
    assert result["mechanism_info"]["repair"]["retries"] > 0


def test_stale_in_parallel_uses_the_same_problems_earlier_report():
    from edgesim.mechanisms.protocol import GatherMany

    others = {0: np.array([1, 2]), 1: np.array([0, 2])}  # problem k asks everyone but k
    step = GatherMany(
        tuple(Gather(np.zeros(1), agents=others[k], problem=k, phase="phase2") for k in (0, 1))
    )
    policy = Repair("stale", 0, 3)

    def exchange(values, lost):
        gen = policy.gather(step)
        next(gen)
        replies = []
        for k in (0, 1):
            keep = np.array([a not in lost.get(k, ()) for a in others[k]])
            v = values[k][keep][:, None]
            replies.append(Replies(others[k][keep], values=v, missing=others[k][~keep]))
        try:
            gen.send(replies)
        except StopIteration as stop:
            return stop.value

    exchange({0: np.array([1.0, 10.0]), 1: np.array([0.0, 99.0])}, {})
    out = exchange({0: np.array([1.0, 11.0]), 1: np.array([0.0, 98.0])}, {0: (2,)})
    # agent 2's lost reply to problem 0 is its report at problem 0's previous iterate
    assert out[0].values[out[0].agents == 2, 0].tolist() == [10.0]
