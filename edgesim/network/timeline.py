"""A per-device event log over a window of simulated time, and its Gantt chart.

``edgesim run --events-log FILE`` records, for the exchanges that overlap
``--events-window START:END`` (seconds; default the first 10), what each
device did and when, from the exchange's plan (both fidelities log the same):

- ``downlink``: from the server's send to the message's arrival (wired hops,
  the cell's channel, latency; ``transmissions`` counts its radio tries);
- ``compute``: the local work;
- ``uplink``: from the reply's send to its arrival at the server, or to the
  sender giving up (``lost``), with its transmissions (more than one:
  retransmissions);
- ``offline``: the device was offline when the message arrived, or its
  battery was empty;
- ``cut``: the deadline closed the round before the device's reply arrived;
- ``handover``: the device changed cell at the exchange's start.

The per-round trace (``--trace``) has one row per exchange; this log has one
row per device and event, so it is kept to a window. ``edgesim
plot-timeline FILE -o PNG`` draws it, one row per device.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from edgesim.network import NS_PER_S
from edgesim.network.trace import columns_csv

COLUMNS = ("device", "phase", "round", "exchange", "kind", "start_s", "end_s", "transmissions")
KINDS = ("downlink", "compute", "uplink", "lost", "offline", "cut", "handover")
COLORS = {
    "downlink": "tab:blue",
    "compute": "tab:green",
    "uplink": "tab:orange",
    "lost": "tab:red",
    "offline": "0.75",
    "cut": "black",
    "handover": "tab:purple",
}


class EventLog:
    """Device events of the exchanges overlapping ``window`` = (start, end) in seconds."""

    def __init__(self, window: tuple[float, float]):
        self.start_ns, self.end_ns = (round(w * NS_PER_S) for w in window)
        self.rows: dict[str, list] = {c: [] for c in COLUMNS}
        self.exchanges = 0

    def covers(self, t0_ns: int, t1_ns: int) -> bool:
        """Whether an exchange from ``t0_ns`` to ``t1_ns`` overlaps the window."""
        return t0_ns <= self.end_ns and t1_ns >= self.start_ns

    def _add(self, devices, phase, rnd, kind, start_ns, end_ns, transmissions) -> None:
        n = len(devices)
        if n == 0:
            return
        r = self.rows
        r["device"] += np.asarray(devices).tolist()
        r["phase"] += [phase] * n
        r["round"] += [rnd] * n
        r["exchange"] += [self.exchanges] * n
        r["kind"] += [kind] * n
        r["start_s"] += (np.asarray(start_ns) / NS_PER_S).tolist()
        r["end_s"] += (np.asarray(end_ns) / NS_PER_S).tolist()
        r["transmissions"] += np.broadcast_to(np.asarray(transmissions), (n,)).tolist()

    def record(self, plan, devices, t0: int, end: int, phase: str, rnd: int, cut) -> None:
        """Log one exchange's plan: ``devices`` (the recipients' device ids), ``t0`` its start,
        ``end`` its length (ns), ``cut`` (m,) the recipients the deadline cut."""
        self.exchanges += 1
        arrive = t0 + plan.arrive_ns
        got = plan.received
        self._add(devices[got], phase, rnd, "downlink", np.full(got.sum(), t0), arrive[got], 1)
        off = ~got & ~plan.late
        self._add(devices[off], phase, rnd, "offline", arrive[off], arrive[off], 0)
        computed = got & (plan.compute_ns > 0)
        start = arrive[computed]
        stop = np.minimum(start + plan.compute_ns[computed], t0 + end)  # a cut abandons it
        self._add(devices[computed], phase, rnd, "compute", start, stop, 0)
        senders = np.flatnonzero(plan.sending)
        send_at = arrive[senders] + plan.compute_ns[senders]
        land = np.minimum(t0 + plan.resolve_ns[senders], t0 + end)
        ok = plan.up.delivered
        for kind, sel in (("uplink", ok), ("lost", ~ok)):
            self._add(devices[senders[sel]], phase, rnd, kind, send_at[sel], land[sel],
                      plan.up.attempts[sel])  # fmt: skip
        cut = np.asarray(cut, dtype=bool)
        self._add(devices[cut], phase, rnd, "cut", np.full(cut.sum(), t0 + end),
                  np.full(cut.sum(), t0 + end), 0)  # fmt: skip

    def handovers(self, devices: np.ndarray, t_ns: int, phase: str = "", rnd: int = -1) -> None:
        """Log the listed devices' handovers at ``t_ns`` (when inside the window)."""
        if self.start_ns <= t_ns <= self.end_ns:
            self._add(devices, phase, rnd, "handover", np.full(len(devices), t_ns),
                      np.full(len(devices), t_ns), 0)  # fmt: skip

    def to_csv(self, path: str | Path | None = None) -> str:
        """Return the log as CSV text (and write it to ``path`` if given)."""
        return columns_csv(self.rows, COLUMNS, path)


def read_log(path: str | Path) -> list[dict]:
    """Read an events log CSV; returns its rows (times as floats, counts as ints).

    Raises ValueError naming the file when its header is not the log's.
    """
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path}: not an edgesim events log (header {reader.fieldnames})")
        rows = list(reader)
    for r in rows:
        r["device"], r["transmissions"] = int(r["device"]), int(r["transmissions"])
        r["start_s"], r["end_s"] = float(r["start_s"]), float(r["end_s"])
    return rows


def draw_timeline(rows: list[dict], window: tuple[float, float] | None = None, devices=40):
    """Draw the log as a Gantt chart, one row per device (the first ``devices``); returns the figure."""
    import matplotlib.pyplot as plt

    if window is not None:
        rows = [r for r in rows if r["end_s"] >= window[0] and r["start_s"] <= window[1]]
    shown = sorted({r["device"] for r in rows})[:devices]
    row_of = {d: i for i, d in enumerate(shown)}
    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.28 * max(len(shown), 1)))
    for kind in KINDS:
        mine = [r for r in rows if r["kind"] == kind and r["device"] in row_of]
        if not mine:
            continue
        if kind in ("offline", "cut", "handover"):
            ax.scatter([r["start_s"] for r in mine], [row_of[r["device"]] for r in mine],
                       marker={"offline": "o", "cut": "x", "handover": "d"}[kind],
                       color=COLORS[kind], zorder=3, label=kind)  # fmt: skip
            continue
        for j, r in enumerate(mine):
            ax.broken_barh([(r["start_s"], max(r["end_s"] - r["start_s"], 1e-9))],
                           (row_of[r["device"]] - 0.35, 0.7), color=COLORS[kind],
                           label=kind if j == 0 else None)  # fmt: skip
            if r["transmissions"] > 1:
                ax.text(r["end_s"], row_of[r["device"]], f" x{r['transmissions']}",
                        va="center", fontsize=6)  # fmt: skip
    ax.set_yticks(range(len(shown)), [f"device {d}" for d in shown], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("simulated time (s)")
    if window is not None:
        ax.set_xlim(*window)
    ax.set_title("per-device timeline (x n: transmissions of a message, retransmissions included)")
    ax.legend(fontsize=7, loc="upper right", ncol=len(KINDS))
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return fig
