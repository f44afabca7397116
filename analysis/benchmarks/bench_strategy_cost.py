"""What the strategy machinery costs: an all-truthful run against the code before it, and one deviator.

Run from the repository root (a git checkout: the baseline is built from its history)::

    python analysis/benchmarks/bench_strategy_cost.py            # K = 1e5 and 1e6, best of 5
    python analysis/benchmarks/bench_strategy_cost.py --quick    # K = 2e3 and 2e4, best of 2

Issue 29 gave strategies a view of each request (``edgesim.device_view``) and
the right to withhold or delay a reply; the drivers now ask the population
about both on every exchange. Two questions, on the benchmarks' synthetic
ridge (``scale_scenario.py``: 10 samples of d = 20 per agent) under FedAvg
with 30 rounds, ``exact_vcg = false``, no local baseline:

1. **An all-truthful run** in the ``batched`` fidelity at K = 1e5: the time
   of ``Simulation.run_mechanism`` with this tree against the same on the
   commit before the strategy view (``--base``, default ``4f4280d``, checked
   out as a git worktree in a temporary folder), each in a fresh process,
   best of 5. Target: at most 1.10x.
2. **One deviating agent** (``amplify``, gamma = 2) in memory
   (``fidelity = "none"``) at K = 1e6 (1e5 with ``--skip-million``): ridge
   sums Phase I from the data's moments when every agent is truthful; with
   one deviator this tree subtracts the deviator's own rows from the moments'
   sum and adds its report, where the code before it formed all K reports
   every round. Printed: the deviator's time over the all-truthful run's, on
   this tree and on the base (information; "near" the truthful run is the
   aim, 1.5x the line drawn).

The script always exits with status 0.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from instrument import argument_parser, machine_line, met, report_to_parent, verdict
from scale_scenario import FEATURES, SAMPLES_PER_AGENT

TAG = "STRATEGY-COST "
TRUTHFUL_OVERHEAD_TARGET = 1.10
DEVIATOR_NEAR = 1.5
ROUNDS = 30
ROOT = Path(__file__).resolve().parents[2]


def scenario_tables(K: int, fidelity: str, deviator: bool) -> dict:
    """Return the scenario (a dict for ``from_dict``): FedAvg on the synthetic ridge at K."""
    strategy = [{"agent": 1, "kind": "amplify", "gamma": 2.0}] if deviator else []
    return {
        "seed": 0,
        "data": {"source": "synthetic", "samples": SAMPLES_PER_AGENT * K, "features": FEATURES},
        "model": {"kind": "ridge", "l2": 10.0},
        "agents": {"count": K, "strategy": strategy},
        "mechanism": {"kind": "fedavg", "phase1_rounds": ROUNDS, "exact_vcg": False},
        "network": {"fidelity": fidelity},
        "output": {"local_baseline": False},
    }


def child(K: int, fidelity: str, deviator: bool, repeats: int) -> None:
    """Build the Simulation once, run its mechanism ``repeats`` times; report the least time."""
    from edgesim.scenario import from_dict
    from edgesim.simulate import Simulation

    sim = Simulation(from_dict(scenario_tables(K, fidelity, deviator)))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        sim.run_mechanism()
        best = min(best, time.perf_counter() - t0)
    report_to_parent(TAG, {"seconds": best})


def measure(tree: Path, K: int, fidelity: str, deviator: bool, repeats: int) -> float | None:
    """Run :func:`child` in a fresh process importing edgesim from ``tree``; returns seconds."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, __file__, "--child", str(K), fidelity, str(int(deviator)), str(repeats)]
    label = f"{tree.name} K={K} {fidelity} deviator={deviator}"
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tree)
    for line in proc.stdout.splitlines():
        if line.startswith(TAG):
            return float(json.loads(line[len(TAG) :])["seconds"])
    print(f"{label} failed (exit {proc.returncode}):\n{(proc.stdout + proc.stderr)[-3000:]}")
    return None


def main() -> None:
    """Print the machine, both measurements and their verdicts."""
    ap = argument_parser(__doc__)
    ap.add_argument("--quick", action="store_true", help="K = 2e3 and 2e4, best of 2")
    ap.add_argument("--base", default="4f4280d", help="the commit before the strategy view")
    ap.add_argument("--skip-million", action="store_true", help="the deviator case at K = 1e5")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        K, fidelity, deviator, repeats = args.child
        child(int(K), fidelity, deviator == "1", int(repeats))
        return
    print(machine_line())
    K1, K2, repeats = (2_000, 20_000, 2) if args.quick else (100_000, 1_000_000, 5)
    if args.skip_million and not args.quick:
        K2 = 100_000
    base = Path(tempfile.mkdtemp(prefix="edgesim-base-")) / "base"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.base],
        check=True,
        capture_output=True,
    )
    try:
        now = measure(ROOT, K1, "batched", False, repeats)
        before = measure(base, K1, "batched", False, repeats)
        if now is not None and before is not None:
            ratio = now / before
            print(
                f"all truthful, K = {K1}, batched, best of {repeats}: {now:.3f} s here,"
                f" {before:.3f} s at {args.base}: {ratio:.2f}x (target <= "
                f"{TRUTHFUL_OVERHEAD_TARGET}x, {met(ratio <= TRUTHFUL_OVERHEAD_TARGET)})"
                f" {verdict(ratio <= TRUTHFUL_OVERHEAD_TARGET)}"
            )
        for tree, name in ((ROOT, "here"), (base, args.base)):
            truthful = measure(tree, K2, "none", False, repeats)
            deviating = measure(tree, K2, "none", True, repeats)
            if truthful is not None and deviating is not None:
                ratio = deviating / truthful
                print(
                    f"one deviator, K = {K2}, in memory, {name}: {deviating:.3f} s against"
                    f" {truthful:.3f} s all truthful: {ratio:.2f}x (near: <= {DEVIATOR_NEAR}x,"
                    f" {met(ratio <= DEVIATOR_NEAR)})"
                )
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
            capture_output=True,
        )
        shutil.rmtree(base.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
