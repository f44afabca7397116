"""TCP's start-up in closed form, and the broadcast downlink (edgesim/network/transport.py, server)."""

from __future__ import annotations

import numpy as np
import pytest

from edgesim.network import NS_PER_S
from edgesim.network.transport import tcp_extra_ns
from edgesim.scenario import from_dict
from edgesim.simulate import run

MS = 1_000_000


def test_slow_start_idles_until_a_window_fills_the_round_trip():
    # 100 segments at 0.1 ms each, RTT 5 ms: windows of 10, 20, 40 idle 4, 3 and 1 ms; the
    # 80-segment window finishes the message: handshake 5 + 8 = 13 ms
    size = np.array([100 * 1448])
    assert tcp_extra_ns(size, 100 * 0.1 * MS, 5 * MS).tolist() == [13 * MS]
    # a slow link fills the round trip with the first window: the handshake only
    assert tcp_extra_ns(size, 100 * 1.0 * MS, 5 * MS).tolist() == [5 * MS]
    # a message within the first window: the handshake only
    assert tcp_extra_ns(np.array([5000]), 0.1 * MS, 5 * MS).tolist() == [5 * MS]


def test_initial_window_and_segment_size_are_the_keys():
    size = np.array([40 * 1000])  # 40 segments of 1000 bytes at 0.1 ms: windows 4, 8, 16
    extra = tcp_extra_ns(size, 40 * 0.1 * MS, 5 * MS, initial_window=4, mss=1000)
    assert extra.tolist() == [round((5 + 4.6 + 4.2 + 3.4) * MS)]


def _fedavg(K, downlink, loss=0.0, cells=1, transport="ideal", latency=0.0):
    raw = {
        "agents": {"count": K},
        "data": {"samples": 10 * K},
        "mechanism": {"kind": "fedavg", "phase1_rounds": 4},
        "network": {
            "fidelity": "batched",
            "downlink": downlink,
            "transport": transport,
            "model_bytes": 100_000,
            "radio": {
                "latency_s": latency,
                "bandwidth_bps": 1e7,
                **({"loss": "bernoulli", "loss_prob": loss, "arq_max_retries": 0} if loss else {}),
            },
            "backhaul": {"hops": 0},
            "topology": {"access_points": cells},
            "compute": {"seconds": 0.0},
        },
        "output": {"local_baseline": False},
    }
    return run(from_dict(raw))


def test_broadcast_sends_one_copy_per_cell_in_one_airtime():
    K, cells, S = 30, 3, 100_064
    uni, bro = _fedavg(K, "unicast", cells=cells), _fedavg(K, "broadcast", cells=cells)
    assert uni["communication"]["messages_down"] == 4 * K
    assert bro["communication"]["messages_down"] == 4 * cells
    assert bro["communication"]["bytes_down"] == 4 * cells * S
    assert bro["communication"]["messages_up"] == uni["communication"]["messages_up"] == 4 * K
    air = round(8 * S * NS_PER_S / 1e7)
    per_cell = K // cells
    # unicast: the cell's downlink shared by its 10 devices, then their 10 uploads
    assert round(uni["sim_time_s"]["total"] * NS_PER_S) == 4 * 2 * per_cell * air
    assert round(bro["sim_time_s"]["total"] * NS_PER_S) == 4 * (air + per_cell * air)
    assert bro["model"] == uni["model"]  # lossless: the same learning


def test_broadcast_is_unacknowledged_each_receiver_loses_it_alone():
    q, K = 0.2, 200
    r = _fedavg(K, "broadcast", loss=q)
    # a device replies when it received the broadcast: with probability 1 - q, each on its own
    sent = r["communication"]["messages_up"] / (4 * K)
    assert abs(sent - (1 - q)) < 4 * (q * (1 - q) / (4 * K)) ** 0.5
    assert r["communication"]["messages_down"] == 4  # one copy per round, never resent
    per_agent = [a["network"]["messages_up"] for a in r["agents"]]
    assert min(per_agent) < 4 and max(per_agent) == 4  # losses fall on receivers separately


def test_tcp_adds_its_start_up_to_a_round():
    # 100 kB at 10 Mbit/s: 70 segments of 1.14 ms, so the first window (11.4 ms) fills the
    # 10 ms round trip (5 ms each way): TCP adds the handshake, 10 ms, to each direction
    ideal = _fedavg(5, "unicast", latency=0.005)
    tcp = _fedavg(5, "unicast", latency=0.005, transport="tcp")
    gained = tcp["sim_time_s"]["total"] - ideal["sim_time_s"]["total"]
    assert gained == pytest.approx(4 * 2 * 0.010, abs=1e-9)
    assert tcp["communication"] == ideal["communication"]


@pytest.mark.parametrize("fidelity", ["events", "batched"])
def test_broadcast_needs_a_simulated_network(fidelity, tmp_path, capsys):
    from edgesim.cli import main
    from tests.helpers import write

    path = write(tmp_path, "[network]\nfidelity = 'none'\ndownlink = 'broadcast'\n")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "network.downlink" in err[0], err
    ok = write(tmp_path, f"[network]\nfidelity = '{fidelity}'\ndownlink = 'broadcast'\n")
    assert main(["validate", str(ok)]) == 0
