"""edgesim plan's wall-time estimate against measured runs; --write measures its cost table.

Two parts:

1. ``--write``: measure the unit costs of ``edgesim/wall_costs.py`` (what the
   simulated network adds per exchange, recipient and cell, by fidelity, access
   scheme, link class and kind of exchange; the in-memory driver and mechanisms per
   exchange and recipient; the output per agent) on this machine and write the
   table (``plan_calibration.py`` says how). One command, about 4 minutes on two
   cores (``--quick``: fewer points, about 1 minute, for a smoke test only).
2. (default) every shipped scenario (``scenarios/*.toml`` and
   ``edgesim/quickstart.toml``, each without its ``[sweep]``, as ``edgesim run``
   runs it) and issue 32's runs: FFL at K = 200 (logistic, T1 = 20, T2 = 3, a
   Shannon cell of 200 OFDMA blocks, 5 % loss with ARQ) in ``batched`` and in
   ``events``, and ``comm-vs-k`` at K = 10^4 in cells of 100 devices behind a
   10 Gbit/s aggregation hop, FFL and DP-FFL. Each case runs in a fresh child
   process: the plan first (on its own Simulation, so that the run computes L_g
   again), then the run timed from loading the scenario to its JSON (and sidecar)
   written, as ``edgesim run --json`` does. Prints the estimate, the measured wall
   time and CPU seconds, the ratios estimate / wall and estimate / CPU, and the
   parts of the estimate. PASS when the estimate is within a factor of 2 of the
   measured wall time. The table holds CPU seconds (the wall time of an idle
   machine): on a loaded machine the wall time grows and estimate / CPU shows
   the model's own error. ``--quick``: the shipped scenarios
   only. ``--max-seconds S`` skips a case whose estimate exceeds S (SKIP, with the
   estimate); ``--agents K`` runs the comm-vs-k cases at another K; ``--cases``
   picks cases by name.

Always exits 0. Timings on a shared machine carry its load: the script prints the
load average before each case, and each child reports its CPU seconds beside
its wall seconds.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from instrument import argument_parser, machine_line, report_to_parent, verdict
from scale_scenario import FFL_K200

ROOT = Path(__file__).resolve().parents[2]
TAG = "BENCH_PLAN "
FACTOR = 2.0  # target: estimate / measured within [1/2, 2]
#: Issue 32's FFL at K = 200.
K200 = FFL_K200


def comm_vs_k(kind: str, K: int) -> list[str]:
    """Return the ``--set`` overrides of issue 32's comm-vs-k run: ``kind`` at K agents, 10
    samples each, cells of 100 devices behind a 10 Gbit/s aggregation hop."""
    return [
        f"mechanism.kind={kind}",
        f"agents.count={K}",
        f"data.samples={10 * K}",
        "network.topology.devices_per_cell=100",
        "network.backhaul.aggregation_bps=10e9",
    ]


def cases(agents: int) -> list[dict]:
    """Return every case: name, and a scenario ``path`` with ``sets``, or a ``table`` (dict)."""
    shipped = sorted(glob.glob(str(ROOT / "scenarios" / "*.toml")))
    out = [{"name": Path(p).stem, "path": p, "sets": []} for p in shipped]
    out.append({"name": "edgesim-quickstart", "path": str(ROOT / "edgesim/quickstart.toml")})
    for fidelity in ("batched", "events"):
        out.append({"name": f"ffl-k200-{fidelity}", "table": K200, "sets":
                    [f"network.fidelity={fidelity}"]})  # fmt: skip
    comm = str(ROOT / "scenarios" / "comm-vs-k.toml")
    for kind in ("ffl", "dp-ffl"):
        out.append({"name": f"comm-vs-k-{kind}-K{agents}", "path": comm,
                    "sets": comm_vs_k(kind, agents), "issue": True})  # fmt: skip
    for case in out:
        case.setdefault("sets", [])
        case.setdefault("issue", case["name"].startswith("ffl-k200"))
    return out


def _load(case: dict):
    """Return the case's Scenario: its file or table, with its ``--set`` overrides, as
    ``edgesim run --json`` runs it (``output.per_agent = "auto"`` resolved for a JSON file)."""
    from edgesim import scenario

    prep = scenario.prepare(case.get("table", case.get("path")), case["sets"])
    return scenario.for_json_file(scenario.load_prepared(prep), prep.raw)


def write_run_files(result: dict, sim, path: str) -> None:
    """Write ``result`` to ``path`` as ``edgesim run --json`` does: the per-agent sidecar first
    (when the run has one), then the streamed JSON; returns None."""
    from edgesim import per_agent
    from edgesim.output import dump_json
    from edgesim.sweeps.store import write_atomic

    if sim.last_per_agent is not None:
        fmt = result["per_agent"]["format"]
        write_atomic(per_agent.sidecar_path(path, fmt), per_agent.writer(sim.last_per_agent, fmt))
    write_atomic(path, lambda fh: dump_json(result, fh))


def child(case: dict) -> None:
    """Child mode: the plan, then the run timed to its written JSON; reports one JSON line."""
    from edgesim.plan import plan
    from edgesim.simulate import Simulation, run

    t0 = time.perf_counter()
    p = plan(_load(case))
    plan_s = time.perf_counter() - t0
    if case.get("plan_only"):
        report_to_parent(TAG, {"estimate": p["wall_time_s"], "parts": p["wall_parts_s"],
                               "plan_s": plan_s})  # fmt: skip
        return
    with tempfile.TemporaryDirectory() as tmp:
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        sc = _load(case)
        sim = Simulation(sc)
        result = run(sc, sim)
        write_run_files(result, sim, os.path.join(tmp, "run.json"))
        wall = time.perf_counter() - t0
        cpu = time.process_time() - cpu0
    report_to_parent(
        TAG,
        {
            "estimate": p["wall_time_s"],
            "parts": p["wall_parts_s"],
            "plan_s": plan_s,
            "wall": wall,
            "cpu": cpu,
            "exchanges": p["exchanges"],
            "measured_exchanges": sum(result["communication"]["rounds"].values()),
        },
    )


def run_case(case: dict, timeout: float, plan_only: bool = False) -> dict | None:
    """Run ``case`` in a fresh child process; returns its report, or None (printed why)."""
    payload = json.dumps({**case, "plan_only": plan_only})
    cmd = [sys.executable, __file__, "--child", payload]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        print(f"  {case['name']}: over the {timeout:.0f} s timeout")
        return None
    for line in proc.stdout.splitlines():
        if line.startswith(TAG):
            return json.loads(line[len(TAG) :])
    print(f"  {case['name']} failed (exit {proc.returncode}):")
    print((proc.stdout + proc.stderr)[-2000:])
    return None


def _parts_text(parts: dict) -> str:
    big = sorted(parts.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{k} {v:.3g}" for k, v in big if v >= 0.005 * sum(parts.values()))


def compare(selected: list[dict], timeout: float, max_seconds: float) -> None:
    """Part 2: each case's estimate against its measured wall time; prints PASS/FAIL lines."""
    print(f"{'case':34s} {'estimate s':>10s} {'measured s':>10s} {'cpu s':>8s} {'ratio':>6s}"
          f" {'/cpu':>6s}")  # fmt: skip
    verdicts = []
    for case in selected:
        print(f"  ({case['name']}: {machine_line()})", flush=True)
        guess = run_case(case, timeout, plan_only=True)
        if guess is None:
            verdicts.append((case["name"], None, None, None))
            continue
        if guess["estimate"] > max_seconds:
            print(f"{case['name']:34s} {guess['estimate']:10.3g} {'SKIP':>10s}"
                  f"  (estimate above --max-seconds {max_seconds:g})")  # fmt: skip
            continue
        r = run_case(case, timeout)
        if r is None:
            verdicts.append((case["name"], None, None, None))
            continue
        ratio = r["estimate"] / r["wall"]
        ok = 1.0 / FACTOR <= ratio <= FACTOR
        ok_cpu = 1.0 / FACTOR <= r["estimate"] / r["cpu"] <= FACTOR
        verdicts.append((case["name"], ok, ratio, ok_cpu))
        print(f"{case['name']:34s} {r['estimate']:10.3g} {r['wall']:10.3g} {r['cpu']:8.3g}"
              f" {ratio:6.2f} {r['estimate'] / r['cpu']:6.2f}  {verdict(ok)}", flush=True)  # fmt: skip
        print(f"{'':36s}estimate: {_parts_text(r['parts'])}; exchanges {r['exchanges']:,}"
              f" planned, {r['measured_exchanges']:,} run; plan took {r['plan_s']:.2f} s")  # fmt: skip
    print()
    for name, ok, *more in verdicts:
        if ok is None:
            print(f"ERROR: {name}: no measurement")
            continue
        ratio, ok_cpu = more
        print(f"{verdict(ok)}: {name}: estimate within {FACTOR:g}x of the measured wall time"
              f" ({ratio:.2f}x); of its CPU seconds: {verdict(ok_cpu)}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments and run part 1 (``--write``) or part 2; returns 0."""
    ap = argument_parser(__doc__)
    ap.add_argument("--write", action="store_true", help="measure the cost table and write it")
    ap.add_argument("--quick", action="store_true", help="a subset (smoke test)")
    ap.add_argument("--agents", type=int, default=10_000, help="K of the comm-vs-k cases")
    ap.add_argument("--cases", nargs="*", default=None, help="run only these cases (names)")
    ap.add_argument("--max-seconds", type=float, default=3600.0,
                    help="skip a case whose estimate exceeds this (seconds)")  # fmt: skip
    ap.add_argument("--timeout", type=float, default=3600.0, help="per child process (s)")
    ap.add_argument("--table", default=str(ROOT / "edgesim" / "wall_costs.py"),
                    help="the table --write writes")  # fmt: skip
    ap.add_argument("--child", default=None, help=argparse_hidden())
    args = ap.parse_args(argv)
    if args.child:
        child(json.loads(args.child))
        return 0
    print(machine_line())
    if args.write:
        from plan_table import write_table

        write_table(args.table, quick=args.quick)
        return 0
    selected = cases(args.agents)
    if args.cases:
        selected = [c for c in selected if c["name"] in args.cases]
    elif args.quick:
        selected = [c for c in selected if not c["issue"]]
    compare(selected, args.timeout, args.max_seconds)
    return 0


def argparse_hidden() -> str:
    """The help text of the child mode's argument (argparse.SUPPRESS: not shown)."""
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    sys.exit(main())
