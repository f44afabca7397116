"""Devices' energy and batteries (edgesim/network/energy.py) against closed forms."""

from __future__ import annotations

import copy

import pytest

from edgesim.cli import main
from edgesim.network import NS_PER_S
from edgesim.scenario import from_dict
from edgesim.simulate import run
from tests.helpers import write

K, T, B, L, C = 4, 5, 1e6, 0.002, 0.01


def _raw(energy=None, fidelity="batched", rounds=T):
    return {
        "agents": {"count": K},
        "data": {"source": "synthetic", "samples": 40, "features": 5},
        "model": {"kind": "ridge", "l2": 1.0},
        "mechanism": {"kind": "fedavg", "phase1_rounds": rounds},
        "network": {
            "fidelity": fidelity,
            "radio": {"latency_s": L, "bandwidth_bps": B, "resource_blocks": "per-device"},
            "backhaul": {"hops": 0},
            "compute": {"seconds": C},
            "energy": energy or {},
        },
        "output": {"local_baseline": False},
    }


def _airtime_s(result) -> float:
    size = result["communication"]["model_message_bytes"]
    return round(8 * size * NS_PER_S / B) / NS_PER_S


def test_round_energy_is_power_times_simulated_times():
    energy = {"tx_power_w": 0.3, "rx_power_w": 0.12, "idle_power_w": 0.02}
    r = run(from_dict(_raw(energy)))
    air = _airtime_s(r)
    duration = 2 * (air + L) + C
    assert r["sim_time_s"]["total"] == pytest.approx(T * duration, abs=1e-9)
    compute = 1e-28 * 2e4 * 10 * 1e9**2  # kappa c n f^2: 10 samples per agent
    per_round = 0.3 * air + 0.12 * air + compute + 0.02 * (duration - 2 * air - C)
    for agent in r["agents"]:
        assert agent["network"]["energy_j"] == pytest.approx(T * per_round, rel=1e-12)
    e = r["network"]["energy"]
    assert e["tx_j"] == pytest.approx(K * T * 0.3 * air, rel=1e-12)
    assert e["compute_j"] == pytest.approx(K * T * compute, rel=1e-12)
    assert e["total_j"] == pytest.approx(K * T * per_round, rel=1e-12)
    assert e["by_phase_j"]["phase1"] == pytest.approx(e["total_j"], rel=1e-12)


def test_compute_energy_by_power_is_power_times_compute_time():
    r = run(from_dict(_raw({"compute": "power", "compute_power_w": 2.0})))
    assert r["network"]["energy"]["compute_j"] == pytest.approx(K * T * 2.0 * C, rel=1e-12)


def test_compute_energy_by_cycles_scales_with_samples_and_f_squared():
    a = run(from_dict(_raw({"cpu_hz": 1e9})))["network"]["energy"]["compute_j"]
    b = run(from_dict(_raw({"cpu_hz": 2e9})))["network"]["energy"]["compute_j"]
    assert b == pytest.approx(4 * a, rel=1e-12)
    assert a == pytest.approx(K * T * 1e-28 * 2e4 * 10 * 1e18, rel=1e-12)


@pytest.mark.parametrize("R", [1, 3])
def test_batteries_for_r_and_a_half_rounds_answer_r_rounds_then_never(R):
    per_round = run(from_dict(_raw()))["network"]["energy"]["total_j"] / (K * T)
    texts = []
    for fidelity in ("events", "batched"):
        raw = _raw({"battery_j": (R + 0.5) * per_round}, fidelity, rounds=R + 4)
        r = run(from_dict(raw))
        assert [a["network"]["messages_up"] for a in r["agents"]] == [R] * K
        assert r["network"]["energy"]["batteries_emptied"] == K
        # empty batteries are offline for good: every later message to them is lost
        assert r["network"]["lost"] == K * 3
        r["scenario"]["network"]["fidelity"] = r["network"]["fidelity"] = "(either)"
        texts.append(r)
    assert texts[0] == texts[1]


def test_energy_off_reports_nothing():
    r = run(from_dict(_raw({"model": "none"})))
    assert "energy" not in r["network"] and "energy_j" not in r["agents"][0]["network"]


@pytest.mark.parametrize(
    "line, key",
    [
        ("tx_power_w = -1.0", "network.energy.tx_power_w"),
        ("battery_j = 0", "network.energy.battery_j"),
        ("compute = 'dvfs'", "network.energy.compute"),
    ],
)
def test_bad_energy_input_exits_2(tmp_path, capsys, line, key):
    path = write(tmp_path, f"[network]\nfidelity = 'batched'\n[network.energy]\n{line}\n")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and key in err[0], err


def test_energy_in_the_trace_sums_to_the_total(tmp_path):
    from edgesim.simulate import Simulation

    sc = from_dict(copy.deepcopy(_raw()))
    sim = Simulation(sc)
    r = run(sc, sim)
    assert sum(sim.last_trace.rows["energy_j"]) == pytest.approx(
        r["network"]["energy"]["total_j"], rel=1e-12
    )
