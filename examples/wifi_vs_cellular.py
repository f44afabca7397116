"""A Wi-Fi cell against a cellular cell: the same FedAvg rounds, timed on each.

Both cells carry 65 Mbit/s on the air: the Wi-Fi cell is 802.11ac, MCS 7, one
stream on 20 MHz (the defaults of ``access = "wifi"``), and the cellular cell a
fixed-rate 65 Mbit/s channel whose resource blocks the devices share by round
robin. The difference is the access: the cellular cell is FDD (downlink and
uplink have channels of their own) and schedules without contention, while the
Wi-Fi access point and its devices contend for one medium (EDCA, Bianchi's
model; docs/network.md). Every round sends each device a 1 MB model and
receives a 1 MB gradient, so the transfers dominate; the access point sits at
the edge server (no backhaul) and a local gradient takes 10 ms.

It prints each cell's time per round and their ratio.

    python examples/wifi_vs_cellular.py [devices]      # default 10 devices
"""

from __future__ import annotations

import sys

import edgesim

ROUNDS = 5
MODEL_BYTES = 1_000_000  # each message's payload: a 1 MB model or gradient
LATENCY_S = 0.002  # one way, on the radio hop
COMPUTE_S = 0.01  # one local gradient
CELLULAR_BPS = 65e6  # = the Wi-Fi PHY rate of 802.11ac MCS 7, 1 stream, 20 MHz


def cell(access: str, devices: int) -> dict:
    """Return the scenario (a dict shaped like the TOML) of FedAvg over one cell of ``access``."""
    radio = {"access": access, "latency_s": LATENCY_S}
    if access != "wifi":
        radio["bandwidth_bps"] = CELLULAR_BPS
    return {
        "name": f"fedavg-over-{access}",
        "seed": 1,
        "data": {"source": "synthetic", "samples": 40 * devices, "features": 5},
        "model": {"kind": "ridge"},
        "agents": {"count": devices},
        "mechanism": {"kind": "fedavg", "phase1_rounds": ROUNDS},
        "network": {
            "fidelity": "batched",
            "model_bytes": MODEL_BYTES,
            "radio": radio,
            "backhaul": {"hops": 0},
            "compute": {"model": "fixed", "seconds": COMPUTE_S},
        },
        "output": {"local_baseline": False},
    }


def main(argv: list[str] | None = None) -> dict[str, edgesim.RunResult]:
    """Run both cells (``argv``: optionally the number of devices); print and return their results."""
    argv = sys.argv[1:] if argv is None else argv
    devices = int(argv[0]) if argv else 10
    results = {}
    for label, access in (("cellular", "round-robin"), ("wi-fi", "wifi")):
        res = edgesim.run(cell(access, devices))
        results[label] = res
        per_round = res.sim_time_s.total / res.iterations.phase1
        print(f"{label:9s} {devices} devices: {per_round:.4f} s per round")
    ratio = results["wi-fi"].sim_time_s.total / results["cellular"].sim_time_s.total
    print(f"Wi-Fi takes {ratio:.3f} times as long as the cellular cell")
    return results


if __name__ == "__main__":
    main()
