"""Shared plumbing for the figure scripts: sweep a shipped scenario, write the CSV, save the PNG.

Every figure script in ``analysis/`` has a ``main(argv=None) -> list[Path]``
that takes the arguments of :func:`parse_args` (``--quick``, ``--out``,
``--workers``), runs what it needs, and writes ``<out>/<stem>.png`` beside
``<out>/<stem>.csv`` holding exactly the numbers plotted. Sweeps are kept
under ``<out>/runs/<name>/`` and resume from there, so a second call only
redraws.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import edgesim  # noqa: E402
from edgesim import sweeps as edgesim_sweep  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "scenarios"
#: Where ``run_all.py`` (without ``--quick``) writes the committed figures.
FIGURES = REPO / "analysis" / "figures"


def parse_args(argv: Sequence[str] | None, description: str) -> argparse.Namespace:
    """Parse a figure script's arguments; returns a Namespace (quick, out as a Path, workers)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument(
        "--quick", action="store_true", help="reduced size (seconds to minutes; what CI runs)"
    )
    p.add_argument(
        "--out", type=Path, default=None, help="folder for PNG + CSV (default analysis/figures)"
    )
    p.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="processes for the sweeps (0 = this process)",
    )
    args = p.parse_args(argv)
    if args.out is None:
        args.out = FIGURES if not args.quick else REPO / "analysis" / "figures-quick"
    args.out.mkdir(parents=True, exist_ok=True)
    return args


def scenario_path(name: str) -> Path:
    """Return the path of a shipped scenario by name (``"comm-vs-k"``)."""
    return SCENARIOS / f"{name}.toml"


def sweep(
    name: str,
    out: Path,
    overrides: Sequence[str] | dict = (),
    *,
    workers: int,
    tag: str | None = None,
) -> edgesim.SweepResult:
    """Sweep a shipped scenario, resuming under ``out/runs/<tag or name>``; returns the SweepResult.

    ``.ok`` holds every run's record (its whole output contract under
    ``"result"``, its swept values under ``"values"``), ordered by run index;
    ``.table()`` the tidy rows as ``edgesim results`` writes them. A failed
    run raises RuntimeError naming the first failure, and so does a sweep
    stopped early (an interrupt, a SIGTERM), since a figure drawn from a
    partial sweep would mislead.
    """
    runs = out / "runs" / (tag or name)
    res = edgesim.sweep(scenario_path(name), runs, overrides=_overrides(overrides), workers=workers)
    if res.summary.interrupted or len(res.ok) + len(res.failed) < len(res.plan.runs):
        raise RuntimeError(
            f"{name}: the sweep stopped early ({len(res.ok)} of {len(res.plan.runs)} runs done);"
            f" run the figure again to resume it"
        )
    if res.failed:
        first = res.failed[0]
        raise RuntimeError(f"{name}: {len(res.failed)} run(s) failed; first: {first.get('error')}")
    return res


def run_one(name: str, overrides: Sequence[str] | dict = ()) -> dict:
    """Run a shipped scenario once (no sweep); returns the output-contract dict."""
    return edgesim.run(scenario_path(name), overrides=_overrides(overrides)).to_dict()


def _overrides(overrides: Sequence[str] | dict) -> list[str] | dict | None:
    """Return overrides as the API takes them: a dict, a list of ``key=value``, or None."""
    if isinstance(overrides, dict):
        return dict(overrides) or None
    return list(overrides) or None


def write_csv(path: Path, rows: Iterable[dict], columns: Sequence[str] | None = None) -> Path:
    """Write rows (dicts) as CSV with ``edgesim.sweeps.write_csv`` (floats exact); returns the path.

    ``columns``: the column order (default: every key, first seen first).
    """
    edgesim_sweep.write_csv(path, list(rows), None if columns is None else list(columns))
    return path


def read_csv(path: Path) -> list[dict]:
    """Read a CSV written by :func:`write_csv`; returns dicts with numbers parsed as float."""
    with open(path, newline="") as f:
        return [{k: _parse(v) for k, v in row.items()} for row in csv.DictReader(f)]


def read_figure(folder: Path, stem: str) -> list[dict]:
    """Read ``<folder>/<stem>.csv`` as :func:`read_csv` does, after checking ``<stem>.png`` beside it.

    Raises AssertionError when the PNG is missing or implausibly small.
    """
    png = folder / f"{stem}.png"
    assert png.exists() and png.stat().st_size > 10_000, f"{png} missing or empty"
    return read_csv(folder / f"{stem}.csv")


def by_series(rows: Iterable[dict], x: str = "x", y: str = "mean") -> dict:
    """Group tidy CSV rows as {(panel, series): {x: y}}; returns that dict."""
    out: dict = {}
    for r in rows:
        out.setdefault((r["panel"], r["series"]), {})[r[x]] = r[y]
    return out


def _parse(v: str):
    if v == "":
        return None
    try:
        return float(v)
    except ValueError:
        return v


def titled(fig: plt.Figure, title: str, fontsize: float = 10) -> plt.Figure:
    """Give ``fig`` its overall title (``suptitle``) and lay it out (``tight_layout``); returns ``fig``."""
    fig.suptitle(title, fontsize=fontsize)
    fig.tight_layout()
    return fig


def save(fig: plt.Figure, out: Path, stem: str) -> Path:
    """Lay out and save a figure as ``out/<stem>.png`` (150 dpi), close it; returns the path."""
    path = out / f"{stem}.png"
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return path


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least-squares fit of log10 y = slope log10 x + c; returns (slope, c)."""
    lx, ly = np.log10(np.asarray(x, float)), np.log10(np.asarray(y, float))
    slope, c = np.polyfit(lx, ly, 1)
    return float(slope), float(c)


def loglog_fit(
    records: list[dict], key: str, where=lambda r: True
) -> tuple[float, float, int, int]:
    """Log-log slope of ``key`` against ``K`` over the records kept by ``where``.

    Returns (slope, intercept, K_min, K_max); NaNs when fewer than two points with a
    positive ``key`` remain.
    """
    pts = [r for r in records if where(r) and r[key] > 0]
    if len(pts) < 2:
        return math.nan, math.nan, 0, 0
    s, c = loglog_slope([r["K"] for r in pts], [r[key] for r in pts])
    return s, c, min(r["K"] for r in pts), max(r["K"] for r in pts)


def mean_std(values: Iterable[float]) -> tuple[float, float]:
    """Return the mean and the sample standard deviation (0 for a single value) of finite values."""
    v = np.asarray([x for x in values if x is not None and math.isfinite(x)], float)
    if v.size == 0:
        return math.nan, math.nan
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0


def mean_std_count(values: Iterable[float]) -> tuple[float, float, int]:
    """Return :func:`mean_std` of the finite values and how many there were (the seeds counted)."""
    finite = [x for x in values if x is not None and math.isfinite(x)]
    return (*mean_std(finite), len(finite))


def group_stats(pairs: Iterable[tuple[Hashable, float]]) -> dict:
    """Group (key, value) pairs by key; returns {key: :func:`mean_std_count` of its values}.

    Keys keep the order in which they were first seen; non-finite values are
    left out of the mean, the sample std and the count.
    """
    groups: dict = defaultdict(list)
    for key, value in pairs:
        groups[key].append(value)
    return {key: mean_std_count(values) for key, values in groups.items()}


def setting(result: dict, keys: Sequence[str]) -> str:
    """Return "name = value" pairs of a run's mechanism keys (e.g. alpha, phase1_rounds), joined.

    Read from the run's resolved scenario, so a caption states what ran.
    """
    short = {"phase1_rounds": "T1", "phase2_rounds": "T2", "clusters": "L"}
    mech = result["scenario"]["mechanism"]
    return ", ".join(
        f"{short.get(k, k)} = {mech[k]:g}"
        if isinstance(mech[k], float)
        else f"{short.get(k, k)} = {mech[k]}"
        for k in keys
    )
