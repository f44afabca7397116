"""Energy per agent against K, and what moving devices do to payments and rounds (edgesim's own study).

Panel (a): the energy each agent spends (``network.energy``: transmit,
receive, compute, idle; J) against the number of agents K for FedAvg, FFL
and DP-FFL on the ``comm-vs-k`` scenario (ridge, 10 samples per agent, 5 %
Bernoulli loss with ARQ), in its default cellular cell (LTE 20 MHz, round
robin, 20 Mbit/s) and in an 802.11ac Wi-Fi cell (MCS 7, 20 MHz: the access
point contends with its devices). An agent's energy grows with the rounds it
takes part in and with the time it idles while the others use the shared
cell: FFL's Phase II asks every agent K - 1 times per round, so its energy
per agent grows like K where FedAvg's grows like log K (T1).

Panels (b) and (c): FFL on K = 30 devices in three Shannon cells of 200 m
(100 kB model messages, a 0.11 s round deadline) against the devices' speed
(random waypoint with speed_min = speed_max = v; 0: static): the payment
error max_k |P_k - P_k^VCG| and the mean round time. Moving devices change
cells (handovers) and distances, so which replies make the deadline.

Sizes. Full: K in {10, 30, 100, 300} (DP-FFL and FFL to 300), speeds {0, 1,
5, 20, 50} m/s, 3 seeds. ``--quick``: K in {10, 30, 100}, speeds {0, 5,
50}, one seed.

    PYTHONPATH=. python -m analysis.energy_mobility [--quick] [--out DIR] [--workers N]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt

from analysis import common
from analysis.comm_vs_k import sweep_overrides

STEM = "energy_mobility"
SCENARIO = "comm-vs-k"
MECHANISMS = ("fedavg", "ffl", "dp-ffl")
# The scenario fixes the cellular channel's rate; a Wi-Fi cell takes its PHY rate from its MCS.
CELLS = {
    "cellular": [],
    "wifi": ["network.radio.access=wifi", 'network.radio.bandwidth_bps="auto"'],
}
COLORS = {"fedavg": "C0", "ffl": "C1", "dp-ffl": "C2"}
SPEED_NETWORK = sweep_overrides({"ffl": [30]}) + [
    "mechanism.exact_vcg=true",
    "network.model_bytes=100000",
    "network.radio.model=shannon",
    'network.radio.bandwidth_bps="auto"',  # the scenario's fixed rate; Shannon computes its own
    "network.topology.access_points=3",
    "network.topology.cell_radius_m=200.0",
    "network.round_policy=deadline",
    "network.deadline_s=0.11",
]


def sizes(quick: bool) -> tuple[list[int], list[float], list[int]]:
    """Return (K values, speeds in m/s, seeds)."""
    if quick:
        return [10, 30, 100], [0.0, 5.0, 50.0], [0]
    return [10, 30, 100, 300], [0.0, 1.0, 5.0, 20.0, 50.0], [0, 1, 2]


def energy_rows(args, Ks: list[int]) -> list[dict]:
    """Sweep FedAvg, FFL and DP-FFL over K in both cells; returns one CSV row per run."""
    rows = []
    plan = {m: Ks for m in MECHANISMS}
    for cell, extra in CELLS.items():
        over = sweep_overrides(plan) + extra
        res = common.sweep(SCENARIO, args.out, over, workers=args.workers, tag=f"{STEM}-{cell}")
        for rec in res.ok:
            r = rec["result"]
            e = r["network"]["energy"]
            rows.append(
                {
                    "panel": "energy",
                    "cell": cell,
                    "mechanism": r["mechanism"],
                    "K": r["K"],
                    "x": r["K"],
                    "y": e["total_j"] / r["K"],
                    "tx_j": e["tx_j"] / r["K"],
                    "rx_j": e["rx_j"] / r["K"],
                    "compute_j": e["compute_j"] / r["K"],
                    "idle_j": e["idle_j"] / r["K"],
                    "sim_time_s": r["sim_time_s"]["total"],
                }
            )
    return rows


def speed_rows(args, speeds: list[float], seeds: list[int]) -> list[dict]:
    """Sweep FFL over the devices' speed; returns one CSV row per (speed, series) with the mean
    and standard deviation over seeds."""
    samples: dict[tuple[float, str], list[float]] = {}
    for v in speeds:
        moving = (
            []
            if v == 0
            else [
                "network.mobility.model=random-waypoint",
                f"network.mobility.speed_min_mps={v}",
                f"network.mobility.speed_max_mps={v}",
            ]
        )
        over = SPEED_NETWORK + moving + [f"sweep.seed={seeds}"]
        res = common.sweep(SCENARIO, args.out, over, workers=args.workers, tag=f"{STEM}-v{v:g}")
        for rec in res.ok:
            r = rec["result"]
            rounds = sum(r["communication"]["rounds"].values())
            for series, value in (
                ("payment error", r["payment_error_max"]),
                ("round time", r["sim_time_s"]["total"] / rounds),
                ("handovers per device", r["network"].get("handovers", 0) / r["K"]),
                ("cut per round", r["network"]["cut"] / rounds),
            ):
                samples.setdefault((v, series), []).append(value)
    rows = []
    for (v, series), values in sorted(samples.items()):
        mean, std, n = common.mean_std_count(values)
        rows.append({"panel": "speed", "series": series, "x": v, "y": mean, "std": std, "seeds": n})
    return rows


def draw(rows: list[dict]) -> plt.Figure:
    """Draw the three panels from the CSV rows; returns the figure."""
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.2))
    ax = axes[0]
    for cell, ls in (("cellular", "-"), ("wifi", "--")):
        for mech in MECHANISMS:
            pts = sorted(
                (r for r in rows if r["panel"] == "energy" and r["cell"] == cell
                 and r["mechanism"] == mech),
                key=lambda r: r["x"],
            )  # fmt: skip
            if pts:
                ax.plot([r["x"] for r in pts], [r["y"] for r in pts], ls=ls, marker="o",
                        color=COLORS[mech], label=f"{mech}, {cell}")  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("agents K")
    ax.set_ylabel("energy per agent (J)")
    ax.set_title("(a) energy per agent: transmit + receive + compute + idle", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    for ax, series, label in (
        (axes[1], "payment error", "max_k |P_k - P_k^VCG|"),
        (axes[2], "round time", "mean round time (s)"),
    ):
        pts = sorted((r for r in rows if r["panel"] == "speed" and r["series"] == series),
                     key=lambda r: r["x"])  # fmt: skip
        ax.errorbar([r["x"] for r in pts], [r["y"] for r in pts], yerr=[r["std"] for r in pts],
                    marker="o", capsize=3, color="C1")  # fmt: skip
        ax.set_xlabel("device speed (m/s; 0: static)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    hand = {
        r["x"]: r["y"]
        for r in rows
        if r["panel"] == "speed" and r["series"] == "handovers per device"
    }
    axes[1].set_title("(b) FFL payment error against speed (0.11 s deadline)", fontsize=10)
    axes[2].set_title(
        "(c) round time against speed; handovers per device: "
        + ", ".join(f"{v:g} m/s: {h:.1f}" for v, h in sorted(hand.items())),
        fontsize=9,
    )
    return common.titled(
        fig,
        "Energy and mobility (edgesim's own study): comm-vs-k scenario, FFL, FedAvg, DP-FFL",
        fontsize=11,
    )


def main(argv: Sequence[str] | None = None) -> list[Path]:
    """Sweep, draw and write ``energy_mobility.png`` and ``.csv``; returns both paths."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    Ks, speeds, seeds = sizes(args.quick)
    rows = energy_rows(args, Ks) + speed_rows(args, speeds, seeds)
    csv = common.write_csv(args.out / f"{STEM}.csv", rows)
    png = common.save(draw(rows), args.out, STEM)
    return [png, csv]


if __name__ == "__main__":
    main()
