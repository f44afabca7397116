"""Per-agent results as columns: the sidecar file of ``output.per_agent = "npz" | "parquet"``.

At K = 10^7 the JSON's ``agents`` array (one object per agent) would be gigabytes
of text and minutes of Python objects. With a sidecar, :func:`edgesim.simulate.run`
keeps each per-agent field as one numpy column (:func:`columns`), the JSON keeps
their quantiles and totals (:func:`summary`, the ``per_agent`` field), and the
writer puts the columns in ``FILE.agents.npz`` or ``FILE.agents.parquet`` beside
``FILE.json`` (:func:`sidecar_path`, :func:`write`). :func:`read` reads either back;
``edgesim results --per-agent`` reads the JSON's ``agents`` array or the sidecar.

Column names are the agent object's field names; the network counters are
``network.<name>`` (the nested ``network`` object of the JSON's agents),
``strategy`` is a code into the JSON's ``per_agent.strategy_labels``, and the
mechanism's per-agent lists (``phase2_rounds``, ``phase2_restarts``,
``phase2_eta2_final``, ``payment_discretisation_error``, ``cluster_of_agent``,
``vcg_payment``) are columns too. Row k is agent k. Missing values (an agent
outside the federation, a payment that diverged) are NaN.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

#: The quantiles of each column kept in the JSON's ``per_agent.summary``.
QUANTILES = {
    "q01": 0.01,
    "q05": 0.05,
    "q25": 0.25,
    "median": 0.5,
    "q75": 0.75,
    "q95": 0.95,
    "q99": 0.99,
}
SUFFIX = {"npz": ".agents.npz", "parquet": ".agents.parquet"}


def parquet_problem() -> str | None:
    """Return why ``output.per_agent = "parquet"`` cannot be written here, or None when it can."""
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return "'parquet' needs pyarrow (pip install pyarrow, or edgesim[parquet]); or use 'npz'"
    return None


def sidecar_path(json_path: str | Path, fmt: str) -> Path:
    """Return the sidecar's path for the JSON file ``json_path``: ``FILE.agents.npz`` (or
    ``.parquet``) beside ``FILE.json`` (a name without ``.json`` gets the suffix appended)."""
    p = Path(json_path)
    stem = p.name[: -len(".json")] if p.name.endswith(".json") else p.name
    return p.with_name(stem + SUFFIX[fmt])


def summary(cols: dict[str, np.ndarray]) -> dict:
    """Return each numeric column's count of finite values, sum, mean, min, quantiles and max.

    Computed over the finite values only (NaN marks a missing value); a column without
    any gives count 0 and nulls. Returns ``{column: {count, sum, mean, min, q01, ...,
    max}}`` in plain floats.
    """
    out = {}
    for name, col in cols.items():
        if name == "id":
            continue
        v = np.asarray(col, dtype=np.float64)
        v = v[np.isfinite(v)]
        entry: dict = {"count": int(v.size)}
        if v.size:
            q = np.quantile(v, list(QUANTILES.values()))
            entry.update(sum=float(v.sum()), mean=float(v.mean()), min=float(v.min()))
            entry.update({k: float(x) for k, x in zip(QUANTILES, q, strict=True)})
            entry["max"] = float(v.max())
        else:
            entry.update({k: None for k in ("sum", "mean", "min", *QUANTILES, "max")})
        out[name] = entry
    return out


def writer(cols: dict[str, np.ndarray], fmt: str):
    """Return a function that writes the sidecar holding ``cols`` in format ``fmt`` to an open
    binary file (for :func:`edgesim.sweeps.write_atomic`: streamed, never held whole).

    npz: one array per column, uncompressed (``np.load`` reads it back column by column);
    parquet: one column each (pyarrow). Raises ValueError for another format.
    """
    if fmt == "npz":
        return lambda fh: np.savez(fh, **cols)
    if fmt == "parquet":

        def parquet(fh) -> None:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.table({k: np.asarray(v) for k, v in cols.items()}), fh)

        return parquet
    raise ValueError(f"unknown sidecar format {fmt!r}; allowed: npz, parquet")


def read(path: str | Path) -> dict[str, np.ndarray]:
    """Return the columns of a sidecar file (``.npz`` or ``.parquet``) as numpy arrays."""
    p = Path(path)
    if p.suffix == ".npz":
        with np.load(p, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    if p.suffix == ".parquet":
        import pyarrow.parquet as pq

        tbl = pq.read_table(p)
        return {k: tbl.column(k).to_numpy() for k in tbl.column_names}
    raise ValueError(f"{p}: not a per-agent sidecar (.npz or .parquet)")


def rows(cols: dict[str, np.ndarray], labels: list[str]) -> list[dict]:
    """Return one dict per agent from sidecar columns, like the JSON's agent objects.

    ``strategy`` is its label, ``network.<name>`` columns form the nested ``network``
    object, NaN is None; the mechanism's columns (``phase2_rounds``, ...) are extra keys.
    """
    lists = {k: np.asarray(v).tolist() for k, v in cols.items()}
    n = len(next(iter(lists.values()))) if lists else 0
    out = []
    for i in range(n):
        row: dict = {}
        for k, col in lists.items():
            v = col[i]
            if k == "strategy":
                v = labels[v]
            elif isinstance(v, float) and not math.isfinite(v):
                v = None
            if k.startswith("network."):
                row.setdefault("network", {})[k[len("network.") :]] = v
            else:
                row[k] = v
        out.append(row)
    return out
