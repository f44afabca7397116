"""The custom link model of docs/extending.md (examples/bursty_link.py), named in TOML and run end to end."""

from __future__ import annotations

import copy
import dataclasses

import pytest

import examples.bursty_link as bursty
from edgesim.config import option, resolved_options
from edgesim.errors import ScenarioErrors
from edgesim.network import NS_PER_S
from edgesim.network.links import LINKS, register_link
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
    raw = copy.deepcopy(RAW)
    raw["network"]["radio"]["model"] = "examples.bursty_link:nothing_here"
    with pytest.raises(ScenarioErrors, match="network.radio.model"):
        from_dict(raw)


@dataclasses.dataclass(frozen=True)
class SlowOptions:
    """A toy link's own option: how many times slower than the fixed link it sends."""

    factor: float = option(2.0, "slowdown of every transmission", gt=0.0)


def _slow_link(cfg, direction, distance_m, rng):
    factor = resolved_options(cfg, "link_options").factor
    slower = dataclasses.replace(cfg, model="fixed", bandwidth_bps=cfg.bandwidth_bps / factor)
    return LINKS["fixed"](slower, direction, distance_m, rng)


def test_a_link_declares_its_own_options():
    register_link("slow-toy", _slow_link, options=SlowOptions, replace=True)
    fixed = copy.deepcopy(RAW)
    fixed["network"]["radio"] = {"model": "fixed", "latency_s": 0.0, "bandwidth_bps": 1e6}
    slow = copy.deepcopy(fixed)
    slow["network"]["radio"].update(model="slow-toy", **{"slow-toy": {"factor": 4.0}})
    sc = from_dict(slow)
    assert sc.network.radio.link_options == SlowOptions(4.0)
    assert sc.to_dict()["network"]["radio"]["slow-toy"] == {"factor": 4.0}
    t_fixed = _run(fixed)["sim_time_s"]["total"]
    t_slow = _run(slow)["sim_time_s"]["total"]
    # No latency, no compute, dedicated transfers: every transfer takes 4 x as long.
    assert t_slow == pytest.approx(4.0 * t_fixed, rel=1e-9)
    bad = copy.deepcopy(slow)
    bad["network"]["radio"]["slow-toy"] = {"factr": 4.0}
    with pytest.raises(ScenarioErrors, match=r"network\.radio\.slow-toy\.factr.*factor"):
        from_dict(bad)
    bad["network"]["radio"]["slow-toy"] = {"factor": -1.0}
    with pytest.raises(ScenarioErrors, match=r"network\.radio\.slow-toy\.factor: must be > 0"):
        from_dict(bad)
    bad["network"]["radio"]["model"] = "fixed"
    with pytest.raises(ScenarioErrors, match=r"network\.radio\.slow-toy"):
        from_dict(bad)
