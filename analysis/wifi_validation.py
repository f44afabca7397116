"""edgesim's Wi-Fi cell against ns-3: completion time of the last device, per configuration.

The ns-3 side is committed (``analysis/validation/ns3_wifi.csv``: ns-3 3.44,
one 802.11 cell, TCP, default EDCA and A-MPDU; see
``analysis/validation/README.md``); this script evaluates edgesim's model on
the same configurations and draws edgesim's time over ns-3's mean (of the
last device's completion over its runs), so it runs without ns-3.

edgesim's side, per configuration (standard, MCS, N devices, S bytes, mode):

- ``round``: one FedAvg round through the scenario path (``access = "wifi"``,
  ``transport = "tcp"``, ``model_bytes`` = S - 64, no compute time, the access
  point co-located with the server), its simulated time;
- ``uplink`` / ``downlink``: the same cell's medium alone
  (:func:`edgesim.network.contention.contention_ns` with Bianchi's efficiency, the
  receivers' TCP ACKs contending too, slow start's small A-MPDUs
  (:meth:`edgesim.network.wifi.WifiMac.slow_start_factor`) and TCP's start-up,
  :func:`edgesim.network.transport.tcp_extra_ns`, slow start timed at 1/N of the
  medium): N replies (or N downlinks) starting together, the last one's time.

A configuration in which some ns-3 run waited out a TCP retransmission timer
(:func:`timed_out`) is marked (``ns3_timeout``, hollow in the figure): edgesim
models no TCP losses, so there ns-3's mean measures the timer.

At most ``tcp_backlog`` (``[network.radio.wifi]``) TCP senders contend at once
(:data:`edgesim.network.wifi.TCP_BACKLOG`): that default is the one number
fitted here, to the :data:`CALIBRATION` configurations (:func:`fit_tcp_backlog`;
``calibration`` in the CSV); every other configuration validates it.

The round trip TCP sees is 2 x ``LATENCY_S`` (the radio latency: channel
access and a frame). 802.11ax runs with ns-3's default 3.2 us guard interval
on both sides (73.1 Mbit/s at MCS 7).

    PYTHONPATH=. python -m analysis.wifi_validation [--out DIR]
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from analysis import common
from edgesim.network.access import Wifi, WifiOptions
from edgesim.network.contention import contention_ns
from edgesim.network.radio import RadioConfig
from edgesim.network.transport import tcp_extra_ns
from edgesim.network.wifi import TCP_BACKLOG
from edgesim.scenario import from_dict
from edgesim.simulate import run

STEM = "wifi_validation"
NS3_CSV = common.REPO / "analysis" / "validation" / "ns3_wifi.csv"
STANDARD = {"ac": "802.11ac", "ax": "802.11ax", "n": "802.11n"}
#: ns-3's default guard interval per standard (its HE default is 3.2 us), used on both sides.
GUARD_NS = {"ac": 800, "ax": 3200, "n": 800}
LATENCY_S = 0.0005
MODES = ("uplink", "downlink", "round")
#: A run of ns-3 that waited out a TCP retransmission timer (1 s at least; 3 s for a SYN)
#: finishes this much later than its configuration's median run (s).
TIMEOUT_S = 0.9
#: The configurations :func:`fit_tcp_backlog` fits: the issue's cell (802.11ac MCS 7) with
#: 800 kB uplinks from 40 and 50 stations, where TCP senders are far from saturated.
CALIBRATION = (("ac", 7, 40, 800_000, "uplink"), ("ac", 7, 50, 800_000, "uplink"))


def timed_out(times: Sequence[float]) -> bool:
    """Whether some ns-3 run of a configuration waited out a TCP retransmission timer: its
    last device finished more than :data:`TIMEOUT_S` after the median run's. edgesim models
    no TCP losses, so there ns-3's mean measures the timer."""
    return max(times) > float(np.median(times)) + TIMEOUT_S


def ns3_configurations(path: Path = NS3_CSV) -> dict[tuple, list[float]]:
    """Return {(standard, mcs, n, bytes, mode): [last device's time per run (s)]} from ns-3's CSV."""
    out: dict[tuple, list[float]] = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["last_s"]:
                key = (r["standard"], int(r["mcs"]), int(r["n"]), int(r["bytes"]), r["mode"])
                out.setdefault(key, []).append(float(r["last_s"]))
    return out


def fit_tcp_backlog(configs: dict[tuple, list[float]], candidates: range = range(1, 61)) -> int:
    """Return the Wi-Fi ``tcp_backlog`` (senders) that best fits ns-3 on :data:`CALIBRATION`:
    the least sum of squared log ratios of edgesim's time to ns-3's mean."""

    def misfit(backlog: int) -> float:
        return sum(
            math.log(edgesim_s(*key, tcp_backlog=backlog) / float(np.mean(configs[key]))) ** 2
            for key in CALIBRATION
        )

    return min(candidates, key=misfit)


def edgesim_s(
    standard: str, mcs: int, n: int, size: int, mode: str, tcp_backlog: int = TCP_BACKLOG
) -> float:
    """Return edgesim's completion time of the last device (s) for one configuration, with at
    most ``tcp_backlog`` TCP senders contending at once."""
    if mode == "round":
        raw = {
            "agents": {"count": n},
            "data": {"source": "synthetic", "samples": 10 * n, "features": 5},
            "model": {"kind": "ridge", "l2": 1.0},
            "mechanism": {"kind": "fedavg", "phase1_rounds": 1, "exact_vcg": False},
            "network": {
                "fidelity": "batched",
                "transport": "tcp",
                "model_bytes": size - 64,
                "radio": {
                    "access": "wifi",
                    "wifi": {
                        "standard": STANDARD[standard],
                        "mcs": mcs,
                        "guard_interval_ns": GUARD_NS[standard],
                        "tcp_backlog": tcp_backlog,
                    },
                    "latency_s": LATENCY_S,
                },
                "backhaul": {"hops": 0},
                "compute": {"seconds": 0.0},
                "energy": {"model": "none"},
            },
            "output": {"local_baseline": False},
        }
        return run(from_dict(raw))["sim_time_s"]["total"]
    options = WifiOptions(
        standard=STANDARD[standard],
        mcs=mcs,
        guard_interval_ns=GUARD_NS[standard],
        tcp_backlog=tcp_backlog,
    )
    cfg = RadioConfig(access="wifi", access_options=options)
    alone = round(size * 8 / cfg.lone_rate_bps() * 1e9)
    # the n transfers start together: each one's slow start at 1/n of the medium
    rtt = round(2 * LATENCY_S * 1e9)
    start = int(tcp_extra_ns(np.array([size]), alone, rtt, share=n)[0])
    cell = Wifi(cfg, options, tcp=True)
    work = int(cell.medium_work_ns(np.array([size]), np.array([alone]))[0])
    zeros = np.zeros(n, dtype=np.int64)
    full = np.full(n, work, dtype=np.int64)
    late = np.full(n, start, dtype=np.int64)
    if mode == "uplink":
        _, up = contention_ns(zeros, zeros, late, full, np.ones(n, bool), cell.efficiency)
        return (up.max() + round(LATENCY_S * 1e9)) / 1e9
    down, _ = contention_ns(late, full, zeros, zeros, np.zeros(n, bool), cell.efficiency)
    return (down.max() + round(LATENCY_S * 1e9)) / 1e9


def rows_for(configs: dict[tuple, list[float]]) -> list[dict]:
    """Return one CSV row per configuration: ns-3's mean, spread and runs, edgesim's time, ratio."""
    rows = []
    for (std, mcs, n, size, mode), times in sorted(configs.items()):
        ours = edgesim_s(std, mcs, n, size, mode)
        mean = float(np.mean(times))
        rows.append(
            {
                "standard": std,
                "mcs": mcs,
                "n": n,
                "bytes": size,
                "mode": mode,
                "ns3_mean_s": mean,
                "ns3_median_s": float(np.median(times)),
                "ns3_std_s": float(np.std(times)),
                "ns3_runs": len(times),
                "ns3_timeout": timed_out(times),
                "calibration": (std, mcs, n, size, mode) in CALIBRATION,
                "edgesim_s": ours,
                "ratio": ours / mean,
            }
        )
    return rows


PHY_STYLE = {("ac", 3): ("C0", "802.11ac MCS 3"), ("ac", 7): ("C2", "802.11ac MCS 7")}
SIZE_MARKER = {50_000: "o", 200_000: "s", 800_000: "^", 3_000_000: "D"}


def draw(rows: list[dict]) -> plt.Figure:
    """Draw edgesim's time over ns-3's against N, one panel per mode; returns the figure.

    Colour: standard and MCS; marker: message size; bands: within 10 % and 20 %.
    """
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2), sharey=True)
    ns = sorted({r["n"] for r in rows})
    sizes = sorted({r["bytes"] for r in rows})
    for ax, mode in zip(axes, MODES, strict=True):
        pts = [r for r in rows if r["mode"] == mode]
        for r in pts:
            color, _ = PHY_STYLE.get((r["standard"], r["mcs"]), ("C3", ""))
            # spread the sizes around each N so the markers do not hide each other
            shift = 1.06 ** (sizes.index(r["bytes"]) - (len(sizes) - 1) / 2)
            marker = SIZE_MARKER.get(r["bytes"], "x")
            face = "none" if r["ns3_timeout"] else color
            ax.scatter(
                r["n"] * shift, r["ratio"], edgecolors=color, facecolors=face, marker=marker, s=28
            )
            if r["calibration"]:
                ax.scatter(r["n"] * shift, r["ratio"], edgecolors="k", facecolors="none", s=110)
        ax.axhspan(0.9, 1.1, color="C2", alpha=0.15)
        ax.axhspan(0.8, 1.2, color="C2", alpha=0.08)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xscale("log")
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.minorticks_off()
        ax.set_xlabel("devices N")
        worst = max(pts, key=lambda r: abs(r["ratio"] - 1)) if pts else None
        ax.set_title(
            f"{mode}: median |ratio - 1| {_median_dev(pts):.1%}"
            + (f", worst {worst['ratio']:.2f}" if worst else ""),
            fontsize=10,
        )
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("edgesim / ns-3 (last device's completion time)")
    handles = [
        plt.Line2D([], [], color=c, marker="o", ls="", label=label)
        for c, label in [*PHY_STYLE.values(), ("C3", "802.11ax MCS 7 (3.2 us GI)")]
    ] + [
        plt.Line2D([], [], color="0.4", marker=m, ls="", label=f"{b // 1000:,} kB")
        for b, m in SIZE_MARKER.items()
        if b in sizes
    ]
    handles.append(
        plt.Line2D(
            [], [], color="0.4", marker="o", mfc="none", ls="", label="hollow: an ns-3 TCP timeout"
        )
    )
    handles.append(
        plt.Line2D(
            [], [], color="k", marker="o", mfc="none", ms=10, ls="",
            label=f"ringed: fits tcp_backlog ({TCP_BACKLOG})",
        )
    )  # fmt: skip
    axes[1].legend(handles=handles, fontsize=7, loc="lower left")
    return common.titled(
        fig,
        f"edgesim's Wi-Fi cell against ns-3 3.44 (TCP, default EDCA and A-MPDU), {len(rows)}"
        f" configurations: median |ratio - 1| {_median_dev(rows):.1%}; bands: within 10 % and"
        " 20 %",
    )


def _median_dev(rows: list[dict]) -> float:
    """Return the median of |ratio - 1| over ``rows`` (NaN when empty)."""
    return float(np.median([abs(r["ratio"] - 1) for r in rows])) if rows else math.nan


def main(argv: Sequence[str] | None = None) -> list[Path]:
    """Evaluate edgesim on ns-3's configurations; writes ``wifi_validation.png`` and ``.csv``."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    rows = rows_for(ns3_configurations())
    csv_path = common.write_csv(args.out / f"{STEM}.csv", rows)
    png = common.save(draw(rows), args.out, STEM)
    return [png, csv_path]


if __name__ == "__main__":
    main()
