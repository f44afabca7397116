"""edgesim's LTE cell against ns-3: completion time of the last device, per configuration.

The ns-3 side is committed (``analysis/validation/ns3_lte.csv``: ns-3 3.44,
one eNB with EPC, TCP, RLC UM with a 1 MiB buffer, ``RrFfMacScheduler`` or
``PfFfMacScheduler``; see ``analysis/validation/README.md``, "One LTE cell");
this script evaluates edgesim on the same configurations and draws edgesim's
time over ns-3's mean (of the last device's completion over its runs), so it
runs without ns-3.

edgesim's side, per (resource blocks R, distance d, N devices, S bytes): one
FedAvg round through the scenario path (:func:`scenario`, ``edgesim.run``):

- the link model ``"lte"`` (TS 36.213's tables, HARQ, 5 ms down and 12 ms up:
  the defaults of ``[network.radio.lte]``), ``channel_mhz`` = R / 5 (50 blocks:
  10 MHz, 100: 20 MHz), ``downlink_last_rbg = "unused"`` (as ns-3's schedulers:
  48 of 50 blocks), ``access = "round-robin"``;
- the N devices on a circle of radius d around the access point
  (``placement = "file"``), no shadowing, and the powers set so that each
  direction's SINR per block is the one ns-3 measured there (the CSV's
  ``dl_sinr_db``, ``ul_sinr_db``): ns-3's Friis loss and its uplink power control
  are not edgesim's path-loss model, so the SINR is what is carried over;
- ``transport = "tcp"`` (1448-byte segments, initial window 10), ``model_bytes``
  = S - 64 (so a message is S bytes), no compute time, ``energy`` off;
- the wired path: one hop of 1 Gbit/s and 1 ms (ns-3's remote host to PGW),
  1500-byte packets (pipelined). ns-3's S1-U (PGW to eNB, 10 Gbit/s, no delay)
  is left out: 1.2 us per packet.

One round gives all three modes: every device is alike, so all downloads end
together and all uploads start together. ``downlink`` is the round's downlink
part (``sim_time_s.by_direction``), ``uplink`` its uplink part (N uploads
starting together, as ns-3's uplink mode), ``round`` its total
(:func:`edgesim_times` checks that the parts add up to the total).

Edgesim's round robin is compared with both of ns-3's schedulers. ns-3's RR
gives each of N backlogged UEs floor(G / N) of the downlink's G resource block
groups per TTI and leaves the rest idle (:func:`rr_downlink_share`): its rows
are edgesim with ``downlink_rbg_split = "floor"``, which models that (the
configurations where it leaves groups idle have ``rr_rbg_share`` < 1 in the
CSV, crossed in the figure). ns-3's PF without fading traces gives each TTI's
whole band to one UE: a full-band reference, compared with edgesim's default
``downlink_rbg_split = "whole"`` (every group in use). The CSV's ``rbg_split``
says which edgesim ran; "whole" is never compared with ns-3's RR.

A configuration in which some ns-3 run had a TCP retransmission timeout
(``tcp_rto`` > 0) is marked (``ns3_timeout``, hollow in the figure): edgesim models
no TCP losses. Nothing is fitted here; the LTE defaults (header overhead,
latency per direction) were read off ns-3 at N = 1, 100 blocks, 50 m (issue
30's sanity points), so those grid configurations are marked ``calibration``
(ringed) and every other one is held out.

    PYTHONPATH=. python -m analysis.lte_validation [--out DIR]
"""

from __future__ import annotations

import csv
import math
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from analysis import common
from edgesim.network.access.round_robin import RbgFloorEfficiency
from edgesim.network.lte.options import downlink_groups
from edgesim.scenario import from_dict
from edgesim.simulate import run

STEM = "lte_validation"
NS3_CSV = common.REPO / "analysis" / "validation" / "ns3_lte.csv"
MODES = ("downlink", "uplink", "round")
SCHEDULERS = ("rr", "pf")
#: One LTE resource block is 180 kHz; the channel of R blocks is R / 5 MHz (50: 10 MHz).
BLOCKS_PER_MHZ = 5
#: Thermal noise over one 180 kHz block (dBm): edgesim's SNR is per block, without a noise figure.
NOISE_PER_BLOCK_DBM = -174.0 + 10.0 * math.log10(180e3)
#: edgesim's path-loss model (its defaults); only the SINR it leads to matters here.
PATH_LOSS_DB_AT_1KM = 128.1
PATH_LOSS_EXPONENT_DB = 37.6
#: ns-3's wired path: the remote host behind the PGW over 1 Gbit/s and 1 ms.
WIRED_BPS = 1e9
WIRED_LATENCY_S = 0.001
#: edgesim's ``downlink_rbg_split`` for each ns-3 scheduler: its RR's idle groups, PF's full band.
RBG_SPLIT = {"rr": "floor", "pf": "whole"}
#: The configurations the LTE defaults were read from (issue 30's sanity points): N = 1, 100
#: blocks, 50 m (header overhead from the UDP goodput, latency per direction from the probes).
CALIBRATION_CELL = (100, 50.0, 1)


def ns3_configurations(path: Path = NS3_CSV) -> dict[tuple, list[dict]]:
    """Return {(rbs, distance_m, scheduler, n, bytes, mode): [one dict per ns-3 run]} from ns-3's CSV.

    Each run's dict: ``last_s`` (s), ``tcp_rto`` (count), ``dl_sinr_db`` and ``ul_sinr_db`` (dB).
    Runs without a ``last_s`` (some device unfinished) are left out.
    """
    out: dict[tuple, list[dict]] = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if not r["last_s"] or r["mode"] not in MODES:
                continue
            key = (
                int(r["rbs"]),
                float(r["distance_m"]),
                r["scheduler"],
                int(r["n"]),
                int(r["bytes"]),
                r["mode"],
            )
            out.setdefault(key, []).append(
                {
                    "last_s": float(r["last_s"]),
                    "tcp_rto": int(r["tcp_rto"]),
                    "dl_sinr_db": float(r["dl_sinr_db"]),
                    "ul_sinr_db": float(r["ul_sinr_db"]),
                }
            )
    return out


def write_circle(path: Path, n: int, distance_m: float) -> Path:
    """Write ``n`` device positions evenly on a circle of radius ``distance_m`` (m) around the
    access point at the origin, as a ``placement = "file"`` CSV (x_m, y_m); returns the path."""
    angle = 2.0 * np.pi * np.arange(n) / n
    with open(path, "w", newline="") as f:
        f.write("x_m,y_m\n")
        for a in angle:
            f.write(f"{distance_m * math.cos(a)!r},{distance_m * math.sin(a)!r}\n")
    return path


def scenario(
    rbs: int,
    distance_m: float,
    n: int,
    size: int,
    sinr_db: tuple[float, float],
    positions: Path,
    lte: dict | None = None,
) -> dict:
    """Return the scenario dict of one FedAvg round in an LTE cell of ``rbs`` blocks (module
    docstring): ``n`` devices at ``positions`` (``distance_m`` from the access point), messages of
    ``size`` bytes, SINR per block ``sinr_db`` = (downlink, uplink) in dB; ``lte`` overrides
    ``[network.radio.lte]`` options."""
    path_loss_db = PATH_LOSS_DB_AT_1KM + PATH_LOSS_EXPONENT_DB * math.log10(distance_m / 1000.0)
    down_db, up_db = sinr_db
    return {
        "agents": {"count": n},
        "data": {"source": "synthetic", "samples": 10 * n, "features": 5},
        "model": {"kind": "ridge", "l2": 1.0},
        "mechanism": {"kind": "fedavg", "phase1_rounds": 1, "exact_vcg": False},
        "network": {
            "fidelity": "batched",
            "transport": "tcp",
            "tcp_mss_bytes": 1448,
            "model_bytes": size - 64,
            "radio": {
                "model": "lte",
                "access": "round-robin",
                "numerology": "lte",
                "channel_mhz": rbs / BLOCKS_PER_MHZ,
                "shadowing_db": 0.0,
                "path_loss_db_at_1km": PATH_LOSS_DB_AT_1KM,
                "path_loss_exponent_db": PATH_LOSS_EXPONENT_DB,
                # the powers per block that give ns-3's SINR at this distance
                "ap_tx_power_dbm": down_db + NOISE_PER_BLOCK_DBM + path_loss_db,
                "tx_power_dbm": up_db + NOISE_PER_BLOCK_DBM + path_loss_db,
                "lte": {"downlink_last_rbg": "unused", **(lte or {})},
            },
            "backhaul": {
                "hops": 1,
                "bandwidth_bps": WIRED_BPS,
                "latency_s": WIRED_LATENCY_S,
                "packet_bytes": 1500,
            },
            "topology": {"placement": "file", "positions_path": str(positions)},
            "compute": {"seconds": 0.0},
            "energy": {"model": "none"},
        },
        "output": {"local_baseline": False},
    }


def edgesim_times(
    rbs: int,
    distance_m: float,
    n: int,
    size: int,
    sinr_db: tuple[float, float],
    lte: dict | None = None,
) -> dict[str, float]:
    """Return edgesim's {mode: last device's completion time (s)} for one cell, N and S: the
    round's downlink part, its uplink part and its total (module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        positions = write_circle(Path(tmp) / "circle.csv", n, distance_m)
        raw = scenario(rbs, distance_m, n, size, sinr_db, positions, lte)
        sim = run(from_dict(raw))["sim_time_s"]
    parts = sim["by_direction"]["phase1"]
    down, up, total = parts["downlink"], parts["uplink"], sim["total"]
    # the parts are means over the devices; alike devices finish together, so they add up
    if abs(down + up - total) > 1e-6:
        raise AssertionError(f"devices not alike: {down} + {up} != {total}")
    return {"downlink": down, "uplink": up, "round": total}


def rr_downlink_share(rbs: int, n: int) -> float:
    """Return the share of the downlink's resource block groups ns-3's ``RrFfMacScheduler`` uses
    per TTI with ``n`` backlogged UEs (0..1): n floor(G / n) of G groups for n < G, all for
    n >= G (one group per UE in turn). G counts the whole groups (TS 36.213 Table 7.1.6.1-1:
    25 of 4 blocks at 100, 16 of 3 at 50; ns-3 leaves the last partial one unused). edgesim's
    ``downlink_rbg_split = "floor"`` with ``downlink_last_rbg = "unused"`` (this script's)."""
    return float(RbgFloorEfficiency(downlink_groups(rbs, "unused"))(n))


def timed_out(runs: Sequence[dict]) -> bool:
    """Whether some ns-3 run of a configuration had a TCP retransmission timeout."""
    return any(r["tcp_rto"] > 0 for r in runs)


def rows_for(configs: dict[tuple, list[dict]], lte: dict | None = None) -> list[dict]:
    """Return one CSV row per ns-3 configuration: ns-3's mean, spread and runs, edgesim's time
    (its round robin, ``downlink_rbg_split`` from :data:`RBG_SPLIT` for the scheduler, then
    the ``lte`` options), ratio, and the marks (timeout, calibration, RR's RBGs)."""
    cache: dict[tuple, dict[str, float]] = {}
    rows = []
    for key, runs in sorted(configs.items()):
        rbs, dist, sched, n, size, mode = key
        split = RBG_SPLIT[sched]
        cell = (rbs, dist, n, size, split)
        if cell not in cache:
            sinr = (
                float(np.mean([r["dl_sinr_db"] for r in runs])),
                float(np.mean([r["ul_sinr_db"] for r in runs])),
            )
            options = {"downlink_rbg_split": split, **(lte or {})}
            cache[cell] = edgesim_times(rbs, dist, n, size, sinr, options)
        ours = cache[cell][mode]
        times = [r["last_s"] for r in runs]
        mean = float(np.mean(times))
        share = rr_downlink_share(rbs, n) if sched == "rr" and mode != "uplink" else 1.0
        rows.append(
            {
                "rbs": rbs,
                "distance_m": dist,
                "scheduler": sched,
                "n": n,
                "bytes": size,
                "mode": mode,
                "ns3_mean_s": mean,
                "ns3_median_s": float(np.median(times)),
                "ns3_std_s": float(np.std(times)),
                "ns3_runs": len(times),
                "ns3_tcp_rto": sum(r["tcp_rto"] for r in runs),
                "ns3_timeout": timed_out(runs),
                "calibration": (rbs, dist, n) == CALIBRATION_CELL,
                "rr_rbg_share": share,
                "rbg_split": split,
                "edgesim_s": ours,
                "ratio": ours / mean,
            }
        )
    return rows


def bound(row: dict) -> float:
    """Return issue 30's acceptance bound on |ratio - 1| for a configuration: 20 % for N >= 2;
    for N = 1, 10 % at 1 MB and more, 30 % below."""
    if row["n"] >= 2:
        return 0.2
    return 0.1 if row["bytes"] >= 1_000_000 else 0.3


def summary(rows: Iterable[dict]) -> dict:
    """Return the acceptance figures of ``rows``: ``median`` |ratio - 1|, ``within`` / ``count``
    (configurations within :func:`bound`), and ``worst`` (the row farthest from 1, or None)."""
    rows = list(rows)
    dev = [abs(r["ratio"] - 1) for r in rows]
    return {
        "median": float(np.median(dev)) if rows else math.nan,
        "within": sum(d <= bound(r) for d, r in zip(dev, rows, strict=True)),
        "count": len(rows),
        "worst": max(rows, key=lambda r: abs(r["ratio"] - 1)) if rows else None,
    }


CELL_STYLE = {
    (100, 50.0): ("C0", "20 MHz, 50 m (MCS 28)"),
    (100, 5000.0): ("C1", "20 MHz, 5 km (MCS 14 / 8)"),
    (50, 50.0): ("C2", "10 MHz, 50 m (MCS 28)"),
    (50, 5000.0): ("C3", "10 MHz, 5 km (MCS 18 / 12)"),
}
SIZE_MARKER = {100_000: "o", 1_000_000: "s"}
SCHEDULER_TITLE = {"rr": "ns-3 RR", "pf": "ns-3 PF (no fading: one UE per TTI)"}


def draw(rows: list[dict]) -> plt.Figure:
    """Draw edgesim's time over ns-3's against N: a row of panels per ns-3 scheduler, a column
    per mode; returns the figure. Colour: channel and distance; marker: message size; hollow: an
    ns-3 TCP timeout; ringed: calibration; crossed: ns-3's RR leaves downlink RBGs idle (which
    edgesim's 'floor' models)."""
    fig, axes = plt.subplots(2, 3, figsize=(16, 9), sharey=True)
    ns = sorted({r["n"] for r in rows}) or [1]
    for i, sched in enumerate(SCHEDULERS):
        for ax, mode in zip(axes[i], MODES, strict=True):
            pts = [r for r in rows if r["scheduler"] == sched and r["mode"] == mode]
            for r in pts:
                cells = list(CELL_STYLE)
                color, _ = CELL_STYLE.get((r["rbs"], r["distance_m"]), ("C7", ""))
                k = cells.index((r["rbs"], r["distance_m"])) if color != "C7" else 0
                shift = 1.05 ** (2 * k + (r["bytes"] >= 1_000_000) - 3.5)
                face = "none" if r["ns3_timeout"] else color
                x, y = r["n"] * shift, r["ratio"]
                marker = SIZE_MARKER.get(r["bytes"], "D")
                ax.scatter(x, y, edgecolors=color, facecolors=face, marker=marker, s=30)
                if r["calibration"]:
                    ax.scatter(x, y, edgecolors="k", facecolors="none", s=120)
                if r["rr_rbg_share"] < 1:
                    ax.scatter(x, y, c="k", marker="x", s=18, lw=0.8)
            ax.axhspan(0.9, 1.1, color="C2", alpha=0.15)
            ax.axhspan(0.8, 1.2, color="C2", alpha=0.08)
            ax.axhline(1.0, color="k", lw=0.8)
            ax.set_xscale("log")
            ax.set_xticks(ns, [str(n) for n in ns])
            ax.minorticks_off()
            ax.grid(True, alpha=0.3)
            held = summary(r for r in pts if not r["calibration"])
            title = f"{SCHEDULER_TITLE[sched]}, {mode}"
            if held["count"]:
                title += (
                    f"\nheld out: median |ratio - 1| {held['median']:.1%},"
                    f" {held['within']}/{held['count']} within bounds"
                )
            ax.set_title(title, fontsize=9)
        axes[i][0].set_ylabel("edgesim / ns-3 (last device's completion)")
    for ax in axes[1]:
        ax.set_xlabel("devices N")
    handles = [
        plt.Line2D([], [], color=c, marker="o", ls="", label=label)
        for c, label in CELL_STYLE.values()
    ] + [
        plt.Line2D([], [], color="0.4", marker=m, ls="", label=f"{b // 1000:,} kB")
        for b, m in SIZE_MARKER.items()
    ]
    handles += [
        plt.Line2D([], [], color="0.4", marker="o", mfc="none", ls="", label="hollow: ns-3 TCP RTO"),
        plt.Line2D(
            [], [], color="k", marker="o", mfc="none", ms=10, ls="",
            label="ringed: calibration (N = 1, 20 MHz, 50 m)",
        ),
        plt.Line2D(
            [], [], color="k", marker="x", ls="",
            label="crossed: ns-3 RR leaves downlink RBGs idle (edgesim: 'floor')",
        ),
    ]  # fmt: skip
    axes[0][0].legend(handles=handles, fontsize=7, loc="lower left")
    held = summary(r for r in rows if not r["calibration"])
    return common.titled(
        fig,
        f"edgesim's LTE cell (model 'lte', round robin; downlink_rbg_split 'floor' against ns-3's"
        f" RR, 'whole' against its PF) against ns-3 3.44's LTE (TCP, RLC UM 1 MiB),"
        f" {len(rows)} configurations; held out: median |ratio - 1|"
        f" {held['median']:.1%}; bands: within 10 % and 20 %",
    )


def main(argv: Sequence[str] | None = None) -> list[Path]:
    """Evaluate edgesim on ns-3's LTE configurations; writes ``lte_validation.png`` and ``.csv``."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    rows = rows_for(ns3_configurations())
    csv_path = common.write_csv(args.out / f"{STEM}.csv", rows)
    png = common.save(draw(rows), args.out, STEM)
    return [png, csv_path]


if __name__ == "__main__":
    main()
