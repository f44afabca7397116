"""A sweep read into a table and a plot: FedAvg's and FFL's uplink messages as K grows.

``edgesim.sweep`` runs every point of a ``[sweep]`` grid (here mechanism x
agent count, in memory: ``network.fidelity = "none"`` counts messages without
simulating time) and ``SweepResult.table()`` flattens each run's JSON into one
row of dotted columns (``communication.messages_up``). The rows go to a CSV
file and a log-log plot (matplotlib, Agg backend: no display needed).

FedAvg sends one gradient per agent and round: T1 K uplink messages. FFL
(Alg. 1) adds one shared round at w* (K more) and, for each agent's Phase II
problem, rounds among the K - 1 others: K (T1 + 1) + (K - 1) phase2_total.

It prints the table (mechanism, K, uplink messages, Phase II rounds, global
loss) and the paths of the CSV and the PNG it wrote.

    python examples/sweep_table_plot.py [out_dir]      # default: out/sweep_table_plot
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after choosing the backend)

import edgesim  # noqa: E402

COLUMNS = (
    "mechanism.kind",
    "agents.count",
    "communication.messages_up",
    "iterations.phase2_total",
    "model.global_loss",
)

SCENARIO = {
    "name": "messages-vs-k",
    "seed": 1,
    "data": {"source": "synthetic", "samples": 240, "features": 5},
    "model": {"kind": "ridge"},
    "agents": {"count": 2},
    "mechanism": {"kind": "fedavg", "phase1_rounds": 30, "phase2_rounds": 5, "exact_vcg": False},
    "output": {"local_baseline": False},
    "sweep": {"mechanism.kind": ["fedavg", "ffl"], "agents.count": [2, 4, 8]},
}


def main(argv: list[str] | None = None) -> list[dict]:
    """Run the sweep, write ``messages.csv`` and ``messages.png`` to the folder ``argv[0]``; return the rows."""
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else Path.cwd() / "out" / "sweep_table_plot"
    out.mkdir(parents=True, exist_ok=True)

    res = edgesim.sweep(SCENARIO, workers=0)  # None: keep the records in memory
    rows = [{c: row[c] for c in COLUMNS} for row in res.table()]

    with open(out / "messages.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for mechanism in ("fedavg", "ffl"):
        mine = [r for r in rows if r["mechanism.kind"] == mechanism]
        ax.plot(
            [r["agents.count"] for r in mine],
            [r["communication.messages_up"] for r in mine],
            marker="o",
            label=mechanism,
        )
    ax.set(xscale="log", yscale="log", xlabel="agents K", ylabel="uplink messages")
    ks = SCENARIO["sweep"]["agents.count"]
    ax.set_xticks(ks, labels=[str(k) for k in ks])
    ax.set_xticks([], minor=True)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "messages.png", dpi=100)
    plt.close(fig)

    print(f"{'mechanism':10s} {'K':>3s} {'uplinks':>8s} {'phase II':>8s} {'global loss':>12s}")
    for r in rows:
        print(
            f"{r['mechanism.kind']:10s} {r['agents.count']:3d} {r['communication.messages_up']:8d}"
            f" {r['iterations.phase2_total']:8d} {r['model.global_loss']:12.6f}"
        )
    print(f"wrote {out / 'messages.csv'} and {out / 'messages.png'}")
    return rows


if __name__ == "__main__":
    main()
