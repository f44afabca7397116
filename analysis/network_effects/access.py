"""Study 3, a shared access point: lossy-wifi under four uplink access schemes."""

from __future__ import annotations

from .base import sweep_results

#: (access, resource_blocks): the uplink schemes compared; the downlink stays dedicated (each
#: message at the full rate), so that only the uplink's sharing differs between the runs.
ACCESS = [("ofdma", "per-device"), ("ofdma", "4"), ("tdma", "channel"), ("shared", "channel")]
ACCESS_LABEL = {
    ("ofdma", "per-device"): "OFDMA, block per device",
    ("ofdma", "4"): "OFDMA, 4 blocks",
    ("tdma", "channel"): "TDMA",
    ("shared", "channel"): "processor sharing",
}


def access_study(args, size) -> list[dict]:
    """lossy-wifi under four uplink access schemes at 54 and 1 Mbit/s; returns one record per run."""
    acc = ", ".join(f'"{a}"' for a, _ in ACCESS)
    rbs = ", ".join(b if b.isdigit() else f'"{b}"' for _, b in ACCESS)
    over = (
        ["mechanism.exact_vcg=true", 'network.radio.downlink_access="dedicated"']
        + size["wifi"]
        + [
            f'sweep.zip=[{{"network.radio.access" = [{acc}], "network.radio.resource_blocks" = [{rbs}]}}]',
            "sweep.network.radio.bandwidth_bps=[54e6, 1e6]",
        ]
    )
    recs = []
    for vals, r in sweep_results("lossy-wifi", args.out, over, args.workers, "ne_access"):
        c, n = r["communication"], r["network"]
        bw = vals["network.radio.bandwidth_bps"]
        airtime = 8 * (c["bytes_up"] / c["messages_up"]) / bw
        recs.append(
            {
                "access": vals["network.radio.access"],
                "blocks": str(vals["network.radio.resource_blocks"]),
                "bandwidth_bps": bw,
                "time_s": r["sim_time_s"]["total"],
                "payment_error": r["payment_error_max"],
                "serial_bound_s": (c["transmissions_up"] - n["exchanges"]) * airtime,
                "payments": tuple(a["payment"] for a in r["agents"]),
                "K": r["K"],
                "mechanism": r["mechanism"],
                "fidelity": r["scenario"]["network"]["fidelity"],
            }
        )
    return recs
