"""Round time by direction (edgesim/network/round_time.py): the JSON's sim_time_s.by_direction."""

from __future__ import annotations

import copy
import dataclasses
from collections import defaultdict

import numpy as np
import pytest

from edgesim.network import NS_PER_S
from edgesim.network.exchange_plan import Plan
from edgesim.network.round_time import PARTS, split_ns
from edgesim.scenario import from_dict
from edgesim.simulate import Simulation, run
from edgesim.summary import summary

BASE = {
    "seed": 5,
    "data": {"source": "synthetic", "samples": 240, "partition": {"kind": "quantity"}},
    "model": {"kind": "ridge", "l2": 0.1},
    "agents": {"count": 4},
    "mechanism": {"kind": "fedavg", "phase1_rounds": 3},
    "output": {"local_baseline": False},
}


def scenario(network: dict, **sections) -> object:
    """Return a validated scenario: BASE with ``sections`` merged one level deep."""
    raw = copy.deepcopy(BASE)
    for name, table in sections.items():
        raw[name] = {**raw[name], **table}
    raw["network"] = network
    return from_dict(raw)


def test_split_of_one_exchange_by_hand():
    """Three recipients of an exchange of E = 100 ns: one replies, one is cut while computing,
    one never receives its request."""
    plan = Plan(
        agents=np.arange(3),
        received=np.array([True, True, False]),
        arrive_ns=np.array([10, 30, 60]),
        compute_ns=np.array([20, 90, 0]),
        sending=np.array([True, False, False]),
        up=None,
        resolve_ns=np.array([50, 101, 60]),
        reply_ok=np.array([True, False, False]),
        late=np.array([False, True, False]),
        down_lost=1,
        down_transmissions=3,
        down_retransmissions=0,
    )
    # downlink 10 + 30; computation 20 + min(90, 100 - 30); uplink 50 - 30; waiting the rest
    assert split_ns(plan, 100) == (40, 90, 20, 300 - 40 - 90 - 20)


def test_steady_shortcut_gives_the_general_split():
    """A steady plan (everyone received and replied in time) is split by sums alone; the
    general masked and capped split of the same plan gives the same parts."""
    from edgesim.network.build import Network
    from edgesim.network.compute import ComputeConfig
    from edgesim.network.config import NetworkConfig
    from edgesim.network.radio import RadioConfig
    from edgesim.network.server import NetworkServer

    cfg = NetworkConfig(
        radio=RadioConfig(model="shannon"), compute=ComputeConfig(model="shifted-exponential")
    )
    K = 40
    srv = NetworkServer(
        Network(cfg, np.arange(1, K + 1), np.random.SeedSequence(3)), None, np.arange(K)
    )
    plan = srv.plan_exchange(srv.everyone, 5000, np.full(K, 700, dtype=np.int64))
    assert plan.steady
    end = srv._end_of(plan)
    parts = split_ns(plan, end)
    assert parts == split_ns(dataclasses.replace(plan, steady=False), end)
    assert min(parts) > 0 and sum(parts) == K * end


@pytest.mark.parametrize("fidelity", ["events", "batched"])
def test_split_is_closed_form_on_dedicated_links(fidelity):
    """Per-device links: every request and reply takes one_way; device k computes
    c + a n_k; a round lasts 2 one_way + max_k compute_k, the gap is waiting."""
    c, a = 0.004, 2e-4
    network = {
        "fidelity": fidelity,
        "radio": {"latency_s": 0.002, "bandwidth_bps": 1e6, "resource_blocks": "per-device"},
        "backhaul": {"hops": 0},
        "compute": {"model": "per-sample", "seconds": c, "per_sample_s": a},
    }
    result = run(scenario(network))
    size = result["communication"]["model_message_bytes"]
    one_way = round(8 * size * NS_PER_S / 1e6) + 2_000_000  # ns
    compute = np.array([round((c + a * agent["n"]) * NS_PER_S) for agent in result["agents"]])
    assert compute.min() < compute.max()  # devices differ, so some wait
    rounds = result["iterations"]["phase1"]
    expected = {
        "downlink": one_way,
        "computation": compute.mean(),
        "uplink": one_way,
        "waiting": compute.max() - compute.mean(),
    }
    split = result["sim_time_s"]["by_direction"]
    for part in PARTS:
        assert split["phase1"][part] == pytest.approx(rounds * expected[part] / NS_PER_S, abs=1e-12)
        assert split["phase2"][part] == 0.0
    assert sum(split["phase1"].values()) == pytest.approx(result["sim_time_s"]["phase1"], abs=1e-12)
    line = next(x for x in summary(result).splitlines() if x.startswith("  time split"))
    assert f"phase I {rounds * one_way / NS_PER_S:.3f} / " in line
    assert "phase II" not in line


LOSSY = {
    "radio": {"access": "round-robin", "bandwidth_bps": 2e6, "loss": "bernoulli", "loss_prob": 0.2},
    "compute": {"model": "shifted-exponential"},
    "availability": {"model": "markov", "mean_on_s": 5.0, "mean_off_s": 1.0},
    "topology": {"access_points": 2},
    "round_policy": "deadline",
    "deadline_s": 0.08,
}
FFL = {"kind": "ffl", "phase1_rounds": 6, "phase2_rounds": 2, "phase2_check": False, "clusters": 2}


def ns(seconds: float) -> int:
    """Return the integer ns that a log's ``seconds`` (ns / 1e9) were written from."""
    return round(seconds * NS_PER_S)


def split_from_logs(trace_rows: dict, log_rows: dict) -> dict:
    """Return {phase: {part: seconds}} summed from the events log's rows and the trace's."""
    busy = defaultdict(lambda: [0, 0, 0])  # exchange -> device-ns down, compute, up
    column = {"downlink": 0, "compute": 1, "uplink": 2, "lost": 2}
    for e, kind, start, end in zip(
        log_rows["exchange"], log_rows["kind"], log_rows["start_s"], log_rows["end_s"], strict=True
    ):
        if kind in column:
            busy[e][column[kind]] += ns(end) - ns(start)
    out = {phase: [0.0] * 4 for phase in ("phase1", "phase2")}
    rows = zip(
        trace_rows["phase"],
        trace_rows["participants"],
        trace_rows["start_s"],
        trace_rows["end_s"],
        strict=True,
    )
    for e, (phase, m, start, end) in enumerate(rows, start=1):  # the log numbers from 1
        down, compute, up = busy[e]
        waiting = m * (ns(end) - ns(start)) - down - compute - up
        for i, part in enumerate((down, compute, up, waiting)):
            out[phase][i] += part / m
    return {p: {k: v / NS_PER_S for k, v in zip(PARTS, t, strict=True)} for p, t in out.items()}


def test_split_agrees_with_the_events_log_and_between_fidelities():
    results = {}
    for fidelity in ("events", "batched"):
        sc = scenario({**LOSSY, "fidelity": fidelity}, mechanism=FFL, agents={"count": 30})
        sim = Simulation(sc)
        sim.events_window = (0.0, 1e6)  # every exchange
        results[fidelity] = result = run(sc, sim)
        logged = split_from_logs(sim.last_trace.rows, sim.last_events.rows)
        assert result["sim_time_s"]["by_direction"] == logged
    events, batched = results["events"], results["batched"]
    assert events["sim_time_s"] == batched["sim_time_s"]
    assert events["network"]["lost"] > 0 and events["network"]["cut"] > 0  # both happened
    for phase in ("phase1", "phase2"):
        split = events["sim_time_s"]["by_direction"][phase]
        assert min(split.values()) > 0
        assert sum(split.values()) == pytest.approx(events["sim_time_s"][phase], rel=1e-12)


def test_without_a_network_every_part_is_zero():
    raw = copy.deepcopy(BASE)
    result = run(from_dict(raw))
    split = result["sim_time_s"]["by_direction"]
    assert split == {p: dict.fromkeys(PARTS, 0.0) for p in ("phase1", "phase2")}
