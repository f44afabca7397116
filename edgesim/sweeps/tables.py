"""Tidy tables of sweep records: rows of scalars, CSV text, CSV and Parquet files."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path

from edgesim.sweeps.errors import SweepError
from edgesim.sweeps.store import write_atomic

#: Result fields left out of the run table: the resolved scenario (its swept keys have their
#: own columns) and the per-agent list (see ``per_agent``).
_SKIP = ("scenario", "agents")


def _scalar(value):
    return value is None or isinstance(value, (bool, int, float, str))


def _flatten(obj: dict, prefix: str, out: dict) -> None:
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            _flatten(value, f"{name}.", out)
        elif _scalar(value):
            out[name] = value


def _cell(value):
    return value if _scalar(value) else json.dumps(value, sort_keys=True)


def table(records: Iterable[dict], per_agent: bool = False) -> list[dict]:
    """Flatten sweep records into tidy rows (dicts of scalars), one per run or per agent.

    A run's row: ``run_id``, ``index``, ``status``, ``error``, then the swept
    keys under their dotted names (``agents.count``; a list or table value as
    JSON text), then every scalar of the result under its dotted path
    (``communication.messages_up``, ``model.global_loss``,
    ``privacy.epsilon_accounted``; lists and the resolved scenario left out).
    With ``per_agent``, one row per agent of each successful run: the run's
    ``run_id``, ``index``, swept keys and ``seed``, then ``agent.<field>``
    (``agent.id``, ``agent.payment``, ...).
    """
    rows = []
    for rec in records:
        swept = {k: _cell(v) for k, v in (rec.get("values") or {}).items()}
        head = {"run_id": rec["run_id"], "index": rec.get("index")}
        result = rec.get("result")
        if per_agent:
            if rec.get("status") != "ok" or not result:
                continue
            common = {**head, **swept, "seed": result.get("seed")}
            for agent in _agents(rec, result):
                rows.append({**common, **{f"agent.{k}": _cell(v) for k, v in agent.items()}})
            continue
        row = {**head, "status": rec.get("status"), "error": rec.get("error"), **swept}
        if result:
            flat: dict = {}
            _flatten({k: v for k, v in result.items() if k not in _SKIP}, "", flat)
            for k, v in flat.items():
                row.setdefault(k, v)
        rows.append(row)
    return rows


def _agents(rec: dict, result: dict) -> list[dict]:
    """Return a run's agent objects: its JSON ``agents`` array, or its per-agent sidecar
    (``per_agent.file``, beside the run's JSON in ``rec["folder"]``) when it wrote one."""
    if result.get("agents"):
        return result["agents"]
    meta = result.get("per_agent") or {}
    if not meta.get("file") or not rec.get("folder"):
        return []
    from edgesim import per_agent

    path = Path(rec["folder"]) / meta["file"]
    try:
        cols = per_agent.read(path)
    except (OSError, ValueError) as err:
        raise SweepError("results", f"cannot read the per-agent sidecar {path}: {err}") from None
    return per_agent.rows(cols, meta.get("strategy_labels") or ["truthful"])


def columns_of(rows: list[dict]) -> list[str]:
    """Return the union of the rows' keys in order of first appearance."""
    seen: dict[str, None] = {}
    for row in rows:
        for k in row:
            seen.setdefault(k, None)
    return list(seen)


def cell_text(value) -> str:
    """Return one cell of a CSV table: "" for None, true/false, a float's repr, else str."""
    if type(value).__module__ == "numpy":
        value = value.item()  # a numpy scalar's repr names its type (np.float64(1.5))
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def csv_text(rows: list[dict], columns: list[str] | None = None) -> str:
    """Return rows as CSV text: a header of ``columns`` (default every column, first seen
    first), then one line per row with empty cells for missing values; floats exact (repr)."""
    cols = columns_of(rows) if columns is None else list(columns)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in rows:
        w.writerow([cell_text(row.get(c)) for c in cols])
    return buf.getvalue()


def write_csv(path: str | Path, rows: list[dict], columns: list[str] | None = None) -> None:
    """Write :func:`csv_text` of the rows to ``path``, atomically."""
    write_atomic(path, csv_text(rows, columns))


def write_parquet(path: str | Path, rows: list[dict]) -> None:
    """Write rows as a Parquet file (needs pyarrow), atomically; SweepError without pyarrow."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise SweepError(
            "--parquet", "needs pyarrow: pip install pyarrow (or write --csv)"
        ) from None
    cols = columns_of(rows)
    data = {}
    for c in cols:
        values = [row.get(c) for row in rows]
        kinds = {type(v) for v in values if v is not None}
        if kinds == {int, float}:
            values = [None if v is None else float(v) for v in values]
        elif len(kinds) > 1:
            values = [None if v is None else cell_text(v) for v in values]
        data[c] = values
    tbl = pa.table(data)
    buf = pa.BufferOutputStream()
    pq.write_table(tbl, buf)
    write_atomic(path, buf.getvalue().to_pybytes())
