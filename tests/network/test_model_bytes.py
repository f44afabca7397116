"""network.model_bytes: messages the size of a real model on a small learning problem."""

from __future__ import annotations

import pytest

from edgesim import plan as planner
from edgesim.cli import main
from edgesim.scenario import from_dict
from edgesim.simulate import run
from tests.helpers import write

HEADER = 64


def _scenario(model_bytes="auto", fidelity="batched", kind="fedavg"):
    return from_dict(
        {
            "data": {"source": "synthetic", "samples": 200, "features": 20},
            "agents": {"count": 20},
            "model": {"kind": "ridge", "l2": 1.0},
            "mechanism": {
                "kind": kind,
                "phase1_rounds": 3,
                "phase2_rounds": 2,
                "phase2_check": False,
            },
            "network": {
                "fidelity": fidelity,
                "model_bytes": model_bytes,
                "radio": {"model": "fixed", "latency_s": 0.002, "bandwidth_bps": 1e7},
                "backhaul": {"latency_s": 0.001, "bandwidth_bps": 1e9, "hops": 1},
                "compute": {"model": "fixed", "seconds": 0.01},
            },
            "output": {"local_baseline": False},
        }
    )


@pytest.mark.parametrize("fidelity", ["batched", "events"])
def test_a_round_takes_the_time_of_the_configured_message_size(fidelity):
    size = 80_000
    result = run(_scenario(size, fidelity))
    c = result["communication"]
    assert c["model_message_bytes"] == size + HEADER
    assert c["learning_model_message_bytes"] == 8 * 21 + HEADER  # d = 20 plus the intercept
    assert c["bytes_down"] == c["messages_down"] * (size + HEADER)
    assert c["bytes_up"] == c["messages_up"] * (size + HEADER)
    # each way, the 20 devices share the cell's channel (processor sharing, the messages
    # arriving together): radio latency + 20 bits / radio rate, plus the backhaul hop's
    # latency; the hop pipelines the messages in 1500-byte packets (network.backhaul.
    # packet_bytes): down, the cell starts on their first packets, 20 packets through the
    # shared hop; up, the hop sends each reply's last packet (564 bytes) after the cell's last
    bits = 20 * 8 * (size + HEADER)
    last = (size + HEADER) - (size + HEADER) // 1500 * 1500
    down = 0.002 + bits / 1e7 + 0.001 + 20 * 1500 * 8 / 1e9
    up = 0.002 + bits / 1e7 + 0.001 + last * 8 / 1e9
    rounds = result["iterations"]["phase1"]
    assert result["sim_time_s"]["total"] == pytest.approx(rounds * (down + up + 0.01), rel=1e-6)


def test_auto_is_the_learning_model_and_changes_nothing_else():
    auto = run(_scenario())
    assert auto["communication"]["model_message_bytes"] == 8 * 21 + HEADER
    same = run(_scenario(8 * 21))
    auto["scenario"]["network"]["model_bytes"] = same["scenario"]["network"]["model_bytes"]
    assert auto == same


@pytest.mark.parametrize("kind", ["fedavg", "ffl", "dp-ffl", "vcg-federated"])
def test_the_plan_predicts_the_bytes_of_the_configured_size(kind):
    sc = _scenario(5_000, "batched", kind)
    p = planner.plan(sc)
    c = run(sc)["communication"]
    if kind == "dp-ffl":  # secure aggregation's key messages are not predicted
        assert p["bytes_down"] <= c["bytes_down"]
        return
    assert (p["bytes_down"], p["bytes_up"]) == (c["bytes_down"], c["bytes_up"])


@pytest.mark.parametrize("value", ["0", "-5", "'big'"])
def test_bad_model_bytes_exit_2(tmp_path, capsys, value):
    path = write(tmp_path, f"[network]\nfidelity = 'batched'\nmodel_bytes = {value}\n")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "network.model_bytes" in err[0], err
