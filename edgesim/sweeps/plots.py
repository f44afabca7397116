"""Plots of sweep tables: the mean of a column against another over the seeds, with a band."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable
from pathlib import Path

from edgesim.config import suggest
from edgesim.sweeps.errors import SweepError
from edgesim.sweeps.store import write_atomic
from edgesim.sweeps.tables import cell_text, columns_of


def _number(value):
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    return None


def _check_column(rows: list[dict], key: str, what: str) -> None:
    cols = columns_of(rows)
    if key not in cols:
        raise SweepError(what, f"no column {key!r} in the results{suggest(key, cols)}")


def plot(
    rows: list[dict],
    x: str,
    y: str,
    hue: str | None = None,
    logx: bool = False,
    logy: bool = False,
    spread: str = "std",
    where: dict | None = None,
    swept: Iterable[str] = (),
):
    """Plot the mean of ``y`` against ``x`` over the runs that differ only by seed.

    ``rows``: :func:`table` rows (successful runs are used). ``hue``: one
    line per value of this column. ``spread``: ``"std"`` (a band of +-1
    sample standard deviation), ``"minmax"`` (min to max) or ``"none"``.
    ``where``: ``{column: value}`` keeps only matching rows. ``swept``: the
    swept keys; if one other than x, hue and seed still varies, the means
    would mix settings, so that raises :class:`SweepError` (name it with
    ``hue`` or fix it with ``where``). Returns the ``matplotlib.figure.Figure``
    (Agg canvas; axis labels are the keys, the legend's title is ``hue``).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if spread not in ("std", "minmax", "none"):
        raise SweepError("--spread", f"use 'std', 'minmax' or 'none', got {spread!r}")
    rows = [r for r in rows if r.get("status", "ok") == "ok"]
    if not rows:
        raise SweepError("results", "no successful runs to plot")
    for key, what in ((x, "--x"), (y, "--y"), (hue, "--hue")):
        if key is not None:
            _check_column(rows, key, what)
    for key, value in (where or {}).items():
        _check_column(rows, key, "--where")
        rows = [r for r in rows if r.get(key) == value or cell_text(r.get(key)) == str(value)]
        if not rows:
            raise SweepError("--where", f"no run has {key} = {value!r}")
    for key in swept:
        if key in (x, hue, "seed") or key in (where or {}):
            continue
        # A key zipped with x or hue is fixed by them; only one that varies within a point mixes.
        within: dict = {}
        for r in rows:
            point = (json.dumps(r.get(x), sort_keys=True), json.dumps(r.get(hue) if hue else None))
            within.setdefault(point, set()).add(json.dumps(r.get(key), sort_keys=True))
        if any(len(v) > 1 for v in within.values()):
            n = len({v for vs in within.values() for v in vs})
            raise SweepError(
                key,
                f"also varies ({n} values) and would be averaged over: "
                f"plot it with --hue {key}, or keep one value with --where {key}=VALUE",
            )
    groups: dict = {}
    for r in rows:
        xv, yv = r.get(x), _number(r.get(y))
        if xv is None or yv is None:
            continue
        groups.setdefault(r.get(hue) if hue else None, {}).setdefault(xv, []).append(yv)
    if not groups:
        raise SweepError("--y", f"{y} has no numeric values to plot")
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    numeric_x = all(_number(v) is not None for g in groups.values() for v in g)
    categories = sorted({str(v) for g in groups.values() for v in g}) if not numeric_x else None
    most = 1
    for label in sorted(groups, key=_order):
        pts = groups[label]
        xs = sorted(pts, key=lambda v: _number(v) if numeric_x else str(v))
        xpos = [float(v) if numeric_x else categories.index(str(v)) for v in xs]
        ys = [pts[v] for v in xs]
        mean = [sum(v) / len(v) for v in ys]
        most = max(most, *(len(v) for v in ys))
        line = ax.plot(xpos, mean, marker="o", label=str(label) if hue else None)[0]
        if spread != "none":
            if spread == "std":
                sd = [
                    math.sqrt(sum((a - m) ** 2 for a in v) / (len(v) - 1)) if len(v) > 1 else 0.0
                    for v, m in zip(ys, mean, strict=True)
                ]
                lo = [m - s for m, s in zip(mean, sd, strict=True)]
                hi = [m + s for m, s in zip(mean, sd, strict=True)]
            else:
                lo, hi = [min(v) for v in ys], [max(v) for v in ys]
            if any(h > l for l, h in zip(lo, hi, strict=True)):
                ax.fill_between(xpos, lo, hi, alpha=0.2, color=line.get_color(), linewidth=0)
    if categories is not None:
        ax.set_xticks(range(len(categories)), categories)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    if hue:
        ax.legend(title=hue)
    band = {"std": "mean +- 1 std", "minmax": "mean, min-max band", "none": "mean"}[spread]
    ax.set_title(f"{band} over up to {most} runs per point", fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig


def _order(value):
    """Sort key putting numbers in numeric order before strings."""
    num = _number(value)
    return (0, num, "") if num is not None else (1, 0.0, str(value))


def save_figure(fig, path: str | Path) -> None:
    """Save a figure as PNG (or the format its suffix names) atomically."""
    buf = io.BytesIO()
    suffix = Path(path).suffix.lstrip(".").lower() or "png"
    fig.savefig(buf, format=suffix, dpi=120)
    write_atomic(path, buf.getvalue())
