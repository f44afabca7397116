"""Regenerate every figure of the paper's evaluation and of edgesim's own studies.

    python analysis/run_all.py            # the paper's sizes, into analysis/figures/
    python analysis/run_all.py --quick    # reduced sizes (what CI runs), into analysis/figures-quick/
    python analysis/run_all.py --only comm_vs_k --quick

Each figure is a module of ``analysis/`` with a ``main(argv)`` that writes
``<stem>.png`` and ``<stem>.csv`` (the plotted numbers) into ``--out``;
see ``analysis/REPRODUCTION.md`` for what each one tests.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``analysis`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: The figure modules, in the paper's order, then edgesim's own studies.
FIGURES = [
    "fig1_proposition3",
    "fig2_tradeoff",
    "fig3_samples",
    "fig4_heterogeneity",
    "fig5_payment_accuracy",
    "comm_vs_k",
    "faithfulness_map",
    "network_effects",
]


def main(argv: list[str] | None = None) -> list[Path]:
    """Run the figure modules (all, or ``--only``); returns the paths written."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="reduced sizes (CI)")
    p.add_argument("--out", type=Path, default=None, help="output folder")
    p.add_argument("--workers", type=int, default=None, help="processes for the sweeps")
    p.add_argument("--only", nargs="+", choices=FIGURES, default=None, metavar="FIGURE")
    args = p.parse_args(argv)
    passed = (["--quick"] if args.quick else []) + (["--out", str(args.out)] if args.out else [])
    if args.workers is not None:
        passed += ["--workers", str(args.workers)]
    written: list[Path] = []
    for name in args.only or FIGURES:
        start = time.perf_counter()
        module = importlib.import_module(f"analysis.{name}")
        paths = module.main(passed)
        written += paths
        names = ", ".join(p.name for p in paths)
        print(f"{name}: {names} ({time.perf_counter() - start:.0f} s)", flush=True)
    return written


if __name__ == "__main__":
    main()
