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
    "lossy_faithfulness",
    "strategic_deviations",
    "privacy_audit",
    "energy_mobility",
    "wifi_validation",
    "lte_validation",
]


def main(argv: list[str] | None = None) -> list[Path]:
    """Run the figure modules (all, or ``--only``); returns the paths written.

    Only ``--only`` is read here; every other argument (``--quick``,
    ``--out``, ``--workers``) goes to each module's ``common.parse_args``.
    """
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Other arguments (--quick, --out, --workers) go to every figure module.",
    )
    p.add_argument("--only", nargs="+", choices=FIGURES, default=None, metavar="FIGURE")
    args, passed = p.parse_known_args(argv)
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
