"""A two-parameter best-response search on paper-fig1 under FFL, on one core.

Run from the repository root (``edgesim`` installed)::

    python analysis/benchmarks/bench_deviate.py            # full, about 1 minute on one core
    python analysis/benchmarks/bench_deviate.py --quick    # smoke, a few seconds

The search of issue 29 (``edgesim.best_response.search``): agent 0 of the paper's
Fig. 1 example (``scenarios/paper-fig1.toml``, ``mechanism.kind = "ffl"``, its
3000 Phase I rounds and epsilon = 1e-8) reports the gradients and losses of a
pretend dataset whose targets are ``target_scale * y + target_shift``, searched over
target_scale in [0.5, 2] (log) and target_shift in [-1, 1], objective
``overall``, a budget of 40 mechanism runs (a 4 x 4 grid, then Nelder-Mead), the
Simulation built once and reused for every run. One fresh child process, pinned to
one CPU with one BLAS thread, times it from the scenario to the search's result
(the data, the runs, the bound's central solve). Prints the wall time, the runs and
the time per run, the regret and the bound. Target: under 120 s. ``--quick``: 300
Phase I rounds and a budget of 9 (a 2 x 2 grid, then Nelder-Mead).

Always exits with status 0; prints PASS/FAIL lines.
"""

from __future__ import annotations

import os
import sys
import time

from instrument import argument_parser, machine_line, report_to_parent, run_child, verdict

CHILD_TAG = "BENCH_DEVIATE_JSON "
TARGET_S = 120.0
FAMILY = "pretend-data"
PARAMETERS = {"target_scale": [0.5, 2.0], "target_shift": [-1.0, 1.0]}
#: (overrides, budget) of the full and the quick run.
SIZES = {
    "full": (["mechanism.kind=ffl", "best_response.enabled=false"], 40),
    "quick": (
        ["mechanism.kind=ffl", "best_response.enabled=false", "mechanism.phase1_rounds=300"],
        9,
    ),
}


def child(size: str) -> None:
    """Run the search once on one CPU and report its timing to the parent; returns None."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from threadpoolctl import threadpool_limits

    import edgesim

    overrides, budget = SIZES[size]
    with threadpool_limits(1):
        t0 = time.perf_counter()
        found = edgesim.deviate(
            "paper-fig1",
            agent=0,
            family=FAMILY,
            parameters=PARAMETERS,
            objective="overall",
            budget=budget,
            overrides=overrides,
        )
        wall = time.perf_counter() - t0
    keys = ("regret", "bound", "parameters", "evaluations", "truthful", "objective")
    report_to_parent(CHILD_TAG, {"wall_s": wall, **{k: found[k] for k in keys}})


def main() -> None:
    """Run the child, print its measurements and the verdict; returns None."""
    ap = argument_parser(__doc__)
    ap.add_argument("--quick", action="store_true", help="300 Phase I rounds, a budget of 9")
    ap.add_argument("--child", choices=tuple(SIZES), help=argparse_hidden())
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    size = "quick" if args.quick else "full"
    print(machine_line())
    env = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    os.environ.update(env)
    r, _ = run_child([sys.executable, __file__, "--child", size], CHILD_TAG, "search")
    if r is None:
        print("FAIL: the search did not finish")
        return
    best = ", ".join(f"{k} = {v:.4g}" for k, v in r["parameters"].items())
    print(
        f"paper-fig1, ffl, agent 0, {FAMILY} over {', '.join(PARAMETERS)} ({size}):"
        f" {r['evaluations']} runs in {r['wall_s']:.1f} s ({r['wall_s'] / r['evaluations']:.2f} s"
        " per run, the data built once)"
    )
    bound = "none" if r["bound"] is None else f"{r['bound']:.3g}"
    print(
        f"best found: {best}; J {r['objective']:.10g} against {r['truthful']:.10g} truthful:"
        f" regret {r['regret']:.3g}, bound {bound}"
    )
    print(
        f"{verdict(r['wall_s'] < TARGET_S)}: two-parameter search under {TARGET_S:.0f} s on one core"
    )


def argparse_hidden() -> str:
    """Return argparse's marker that hides an option from --help."""
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
