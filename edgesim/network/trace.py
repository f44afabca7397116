"""The per-round trace of a network run, and per-agent totals; exportable as CSV.

One row per exchange the server runs (a mechanism round, or one stage of a
secure-aggregation round): what it cost in simulated seconds, messages,
transmissions and bytes, and who was lost or cut. Columns are kept as lists
(columnar), so a run of 10^5 rounds stays cheap.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from edgesim.network import NS_PER_S

#: Trace columns, in CSV order, with their meaning (units in the name).
COLUMNS = {
    "phase": "phase1 or phase2",
    "round": "index of the round within its phase (a secure round's stages share it)",
    "problem": "Phase II problem (excluded agent or cluster); -1 in Phase I",
    "stage": "'round' for a mechanism round, else the secure-aggregation stage",
    "start_s": "simulated time the server sent the round's first message",
    "end_s": "simulated time the server closed the round",
    "participants": "agents the server asked",
    "replies": "replies the server used",
    "bytes_down": "bytes of the messages sent to the agents (each once)",
    "bytes_up": "bytes of the messages the agents sent (each once)",
    "transmissions": "radio transmissions, both directions, retransmissions included",
    "retransmissions": "radio retransmissions, both directions",
    "lost": "messages lost (ARQ cap reached, or the device offline)",
    "cut": "agents whose reply had not arrived by the deadline",
    "secagg_messages": "messages of this row that belong to secure aggregation (both directions)",
    "secagg_bytes": "bytes of this row that belong to secure aggregation (both directions)",
    "energy_j": "energy every device spent during the row: transmit, receive, compute, idle (J)",
}


class Trace:
    """Rows of the per-round trace and the per-agent totals of one run.

    ``K``: number of agents the mechanism sees (the participants).
    """

    def __init__(self, K: int):
        self.rows: dict[str, list] = {name: [] for name in COLUMNS}
        self.agent_messages_down = np.zeros(K, dtype=np.int64)
        self.agent_messages_up = np.zeros(K, dtype=np.int64)
        self.agent_bytes_down = np.zeros(K, dtype=np.int64)
        self.agent_bytes_up = np.zeros(K, dtype=np.int64)
        self.agent_transmissions = np.zeros(K, dtype=np.int64)
        self.agent_lost = np.zeros(K, dtype=np.int64)
        self.agent_cut = np.zeros(K, dtype=np.int64)
        # Exchanges in which every agent got one message and replied once, on the first
        # transmission (steady exchanges): counted here, not per agent, to save K adds each.
        self.every_agent = {"messages": 0, "bytes_down": 0, "bytes_up": 0}

    def add_to_every_agent(self, bytes_down: int, bytes_up: int) -> None:
        """Count one message each way for every agent (one steady exchange); returns nothing."""
        e = self.every_agent
        e["messages"] += 1
        e["bytes_down"] += bytes_down
        e["bytes_up"] += bytes_up

    def add(self, **row) -> None:
        """Append one row (every column of :data:`COLUMNS`, times in ns as ``start_ns``/``end_ns``)."""
        row["start_s"] = row.pop("start_ns") / NS_PER_S
        row["end_s"] = row.pop("end_ns") / NS_PER_S
        for name in COLUMNS:
            self.rows[name].append(row[name])

    def __len__(self) -> int:
        return len(self.rows["phase"])

    def time_by_phase(self) -> dict[str, float]:
        """Return simulated seconds spent per phase and in total (rounds are sequential)."""
        start = np.asarray(self.rows["start_s"], dtype=float)
        end = np.asarray(self.rows["end_s"], dtype=float)
        phase = np.asarray(self.rows["phase"])
        out = {"total": float(end.max()) if end.size else 0.0}
        for name in ("phase1", "phase2"):
            sel = phase == name
            out[name] = float((end[sel] - start[sel]).sum()) if sel.any() else 0.0
        return out

    def totals(self) -> dict[str, int]:
        """Return the column sums of the count columns (for checks against the JSON)."""
        counts = [c for c in COLUMNS if c not in ("phase", "round", "problem", "stage")]
        return {c: sum(self.rows[c]) for c in counts if not c.endswith("_s")}

    def per_agent(self) -> dict[str, np.ndarray]:
        """Return per-agent totals (int64 arrays of K), for the JSON ``agents`` objects."""
        e = self.every_agent
        return {
            "messages_down": self.agent_messages_down + e["messages"],
            "messages_up": self.agent_messages_up + e["messages"],
            "bytes_down": self.agent_bytes_down + e["bytes_down"],
            "bytes_up": self.agent_bytes_up + e["bytes_up"],
            "transmissions": self.agent_transmissions + e["messages"],
            "lost": self.agent_lost.copy(),
            "cut": self.agent_cut.copy(),
        }

    def to_csv(self, path: str | Path | None = None) -> str:
        """Write the trace as CSV to ``path`` (if given); returns the CSV text."""
        return columns_csv(self.rows, COLUMNS, path)


def columns_csv(rows: dict[str, list], columns, path: str | Path | None = None) -> str:
    """Return columnar ``rows`` ({column: values}) as CSV text in ``columns`` order, and write it
    to ``path`` if given."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    w.writerows(zip(*(rows[c] for c in columns), strict=True))
    text = buf.getvalue()
    if path is not None:
        Path(path).write_text(text)
    return text
