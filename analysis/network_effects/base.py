"""What the four studies share: their sizes (quick and full) and the sweep helper."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from analysis import common

SIZES = {
    True: {
        "q": [0.0, 0.1, 0.3, 0.5],
        "R": [0, 1, 3],
        "seeds": [0],
        "deadlines": [0.05, 0.07, 0.1, 0.15, 0.3],
        "wifi": ["mechanism.phase1_rounds=40"],
    },
    False: {
        "q": [0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5],
        "R": [0, 1, 2, 3],
        "seeds": [0, 1, 2],
        "deadlines": [0.045, 0.05, 0.06, 0.07, 0.08, 0.1, 0.12, 0.15, 0.2, 0.3],
        "wifi": [],
    },
}


def sweep_results(name: str, out: Path, overrides: Sequence[str], workers: int, tag: str):
    """Sweep a shipped scenario under ``out/runs/<tag>``; returns [(swept values, result dict)].

    The whole output of each run is kept (per-agent objects and
    ``vcg_payments``), which the per-agent panel needs.
    """
    res = common.sweep(name, out, overrides, workers=workers, tag=tag)
    return [(rec.get("values") or {}, rec["result"]) for rec in res.ok]
