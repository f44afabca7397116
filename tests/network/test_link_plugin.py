"""The custom link model of docs/extending.md (examples/bursty_link.py), named in TOML and run end to end."""

from __future__ import annotations

import copy

import pytest

import examples.bursty_link as bursty
from edgesim.network import NS_PER_S
from edgesim.scenario import from_dict
from edgesim.simulate import run

RAW = {
    "data": {"source": "synthetic", "samples": 200},
    "model": {"kind": "ridge"},
    "agents": {"count": 5},
    "mechanism": {"kind": "fedavg", "phase1_rounds": 20},
    "network": {
        "fidelity": "events",
        "radio": {"model": "examples.bursty_link:bursty_link", "latency_s": 0.0},
        "backhaul": {"hops": 0},
        "compute": {"seconds": 0.0},
    },
    "output": {"local_baseline": False},
}


def _run(raw):
    return run(from_dict(copy.deepcopy(raw)))


def test_custom_link_runs_and_slows_rounds(monkeypatch):
    fixed = copy.deepcopy(RAW)
    fixed["network"]["radio"]["model"] = "fixed"
    plain = _run(fixed)
    jammy = _run(RAW)
    assert jammy["communication"] == plain["communication"]
    assert jammy["sim_time_s"]["total"] > plain["sim_time_s"]["total"]
    # Always jammed: every round takes exactly SLOWDOWN times as long.
    monkeypatch.setattr(bursty, "P_JAM", 1.0)
    monkeypatch.setattr(bursty, "P_CLEAR", 0.0)
    always = _run(RAW)
    ns = round(always["sim_time_s"]["total"] * NS_PER_S)
    assert ns == round(bursty.SLOWDOWN * plain["sim_time_s"]["total"] * NS_PER_S)


def test_unknown_custom_link_is_a_scenario_error():
    from edgesim.errors import ScenarioErrors

    raw = copy.deepcopy(RAW)
    raw["network"]["radio"]["model"] = "examples.bursty_link:nothing_here"
    with pytest.raises(ScenarioErrors, match="network.radio.model"):
        from_dict(raw)
