"""Simulated time against K in two regimes, and its closed-form expectation (used by comm_vs_k).

Not a figure itself: :mod:`analysis.comm_vs_k` draws its time panel from it.

Regimes. *One cell* is the shipped ``comm-vs-k`` network: every device in one
cell whose 20 Mbit/s channel the devices share (round robin: processor
sharing), behind one shared 1 Gbit/s backhaul hop. *Cells of 100* holds the
load per cell fixed (``network.topology.devices_per_cell = 100``: ceil(K /
100) cells), every cell's backhaul hop meeting at one shared 10 Gbit/s
aggregation hop (``network.backhaul.aggregation_bps``).

Expectation. Every exchange sends one message to each of its m recipients
and gets one back; on each shared medium (a cell's channel each way, each
wired hop) the messages of an exchange arrive nearly together and the medium
stays busy until all are through, so it adds its bytes over its rate. With
losses q and capped ARQ (R retransmissions) a message costs E[A] = (1 -
q^(R+1)) / (1 - q) airtimes on the radio, and the exchange ends (A_max - 1)
retransmission timeouts after the channel empties, A_max the largest number
of transmissions among its m messages: E[A_max - 1] = sum_(a=1..R) (1 - (1 -
q^a)^m). So a run of X exchanges, of which X_c compute (a local gradient of
c seconds), moving D bytes down and U up, takes about

    T = X (2 l_r + 2 h l_b + 2 rto E[A_max - 1]) + X_c c
        + 8 (D + U) (E[A] / (M B) + h / (M C) + 1 / C_agg)

with l_r, l_b the radio and backhaul latencies, h the AP's wired hops
(one more, the aggregation hop, in the second regime), B the cell's rate, C a
backhaul hop's, M the cells and C_agg the aggregation hop's rate (that term
only in the second regime). In one cell T grows like the bytes, K times the
rounds: the paper's O(K) messages are O(K) seconds per round. With cells of
100 only the aggregation term grows with K, 500 times more slowly here
(10 Gbit/s against 20 Mbit/s).
"""

from __future__ import annotations

import math

DEVICES_PER_CELL = 100
AGGREGATION_BPS = 10e9
#: The second regime's overrides of the ``comm-vs-k`` scenario.
GROWN = [
    f"network.topology.devices_per_cell={DEVICES_PER_CELL}",
    f"network.backhaul.aggregation_bps={AGGREGATION_BPS:g}",
]
REGIMES = ("one cell", "cells of 100")
#: Mechanisms timed in both regimes (the naive VCG stays in one cell: K + 1 trainings).
TIMED = ("fedavg", "ffl", "dp-ffl")
#: Runs left out of the second regime at full size: none since the walks of processor
#: sharing run compiled (FFL at K = 10^4 over 100 cells took over 20 minutes before).
GROWN_SKIP: set[tuple[str, int]] = set()
#: Runs of the second regime only (full size): DP-FFL at 10^5 in cells of 100, which the
#: one-cell sweep leaves out (hours in one 20 Mbit/s cell).
GROWN_EXTRA = {"dp-ffl": [100_000]}


def expected_time_s(row: dict, network: dict) -> float:
    """Return the closed-form expectation of a run's simulated seconds (see the module docstring).

    ``row``: the run's sweep-table row (its counts); ``network``: its
    ``scenario.network`` table (rates, latencies, losses, cells).
    """
    K = int(row["K"])
    radio, bh, topo = network["radio"], network["backhaul"], network["topology"]
    compute = network["compute"]
    q, R = float(radio["loss_prob"]), int(radio["arq_max_retries"])
    attempts = (1 - q ** (R + 1)) / (1 - q) if q > 0 else 1.0
    tail = sum(1 - (1 - q**a) ** K for a in range(1, R + 1)) if q > 0 else 0.0
    lat_r = float(radio["latency_s"])
    rto = 2 * lat_r if radio["rto_s"] == "auto" else float(radio["rto_s"])
    per_sample = int(row["data.n"]) / K
    c = float(compute["seconds"]) + float(compute["per_sample_s"]) * per_sample
    cells = 1 if topo["devices_per_cell"] == "off" else math.ceil(K / topo["devices_per_cell"])
    hops, lat_b, rate_b = int(bh["hops"]), float(bh["latency_s"]), float(bh["bandwidth_bps"])
    agg = bh["aggregation_bps"]
    wired_hops = hops + (agg != "none")
    exchanges = int(row["network.exchanges"])
    computing = sum(int(v) for k, v in row.items() if k.startswith("communication.rounds."))
    volume = 8 * (int(row["communication.bytes_down"]) + int(row["communication.bytes_up"]))
    per_bit = attempts / (cells * float(radio["bandwidth_bps"])) + hops / (cells * rate_b)
    per_bit += 0.0 if agg == "none" else 1 / float(agg)
    fixed = 2 * lat_r + 2 * wired_hops * lat_b + 2 * rto * tail
    return exchanges * fixed + computing * c + volume * per_bit


def time_rows(by_regime: dict[str, list[tuple[dict, dict]]]) -> list[dict]:
    """Return the CSV rows of the time panel: measured and expected seconds per regime and run.

    ``by_regime[regime]``: (sweep-table row, scenario.network) per run.
    """
    rows = []
    for regime, runs in by_regime.items():
        for row, network in runs:
            measured = float(row["sim_time_s.total"])
            expected = expected_time_s(row, network)
            rows.append(
                {
                    "panel": "time regimes",
                    "series": f"{row['mechanism']}, {regime}",
                    "mechanism": row["mechanism"],
                    "regime": regime,
                    "K": int(row["K"]),
                    "y": measured,
                    "y_plot": measured,
                    "expected_s": expected,
                    "ratio": measured / expected if expected > 0 else math.nan,
                }
            )
    return sorted(rows, key=lambda r: (r["regime"], r["mechanism"], r["K"]))


def draw_regimes(ax, rows: list[dict], colors: dict, markers: dict, labels: dict) -> None:
    """Draw simulated time against K for both regimes (measured) and the expectation (dotted)."""
    for mech in TIMED:
        for regime, ls in zip(REGIMES, ("-", "--"), strict=True):
            pts = sorted(
                (r for r in rows if r["mechanism"] == mech and r["regime"] == regime),
                key=lambda r: r["K"],
            )
            if not pts:
                continue
            K = [r["K"] for r in pts]
            ax.plot(
                K,
                [r["y"] for r in pts],
                ls=ls,
                marker=markers[mech],
                color=colors[mech],
                label=f"{labels[mech]}, {regime}",
            )
            ax.plot(K, [r["expected_s"] for r in pts], ls=":", color="k", lw=0.8)
    ax.plot([], [], ls=":", color="k", lw=0.8, label="closed-form expectation")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("agents K")
    ax.set_ylabel("simulated seconds, learning + payments (s)")
    ax.set_title(
        "(f) time: one 20 Mbit/s cell (solid) vs cells of 100 over a 10 Gbit/s hop (dashed)",
        fontsize=10,
    )
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
