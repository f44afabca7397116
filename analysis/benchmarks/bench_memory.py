"""The memory estimate against the measured peak RSS of ``edgesim run``.

Each run is ``edgesim run SCENARIO --json OUT`` (the plan, the run and the
streamed JSON, as a user runs it) in a fresh child process, which reports its
own peak RSS (VmHWM) at exit. The scenario is the FFL scale scenario of the
other benchmarks (synthetic ridge, 10 samples of d = 20 per agent, Theorem 1's
rounds, ``batched`` fidelity, no exact VCG or local baseline). Target:
measured <= estimate <= 1.5 x measured at K = 10^5 and 10^6.

    python analysis/benchmarks/bench_memory.py           # K = 10^5 and 10^6, about 5 minutes
    python analysis/benchmarks/bench_memory.py --quick   # K = 10^4 and 2 * 10^4, about 20 s
    python analysis/benchmarks/bench_memory.py --agents 100000 --logistic
    python analysis/benchmarks/bench_memory.py --grid    # the 30 shapes of GRID, about 15 minutes
    python analysis/benchmarks/bench_memory.py --grid --points wide-fedavg ridge-d3000-vcg

``--grid`` measures the named shapes of :data:`GRID` (ridge and logistic, 2 to 10
classes, d from 20 to 10^4, K from 10 to 10^6, both fidelities, exact VCG and the
local baseline on and off). A grid point compares what lies above a measured
baseline: a child that imports every module a small run imports and exits
(the interpreter and its imports). Target on every point: measured <= estimate
<= 1.5 x measured, for (peak RSS - baseline) and (estimate - its interpreter
part), each side allowed the baseline's own uncertainty of 32 MiB. ``--where``
also samples the run's RSS every 2 ms and prints the stack at its largest: for
finding which part a failing point misses, never for the band (the sampler itself
adds memory, up to 130 MiB at K = 10^5).

Always exits with status 0; prints PASS/FAIL lines.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from instrument import argument_parser, verdict
from scale_scenario import ffl_scale_scenario

from edgesim import footprint
from edgesim import scenario as scn

MiB = 2**20

#: The child: run the command line, then print its own peak RSS (VmHWM, kB) on stderr.
CHILD = (
    "import sys\n"
    "from edgesim.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    "hwm = [ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0]\n"
    "print('PEAK_RSS_KB', hwm, file=sys.stderr)\n"
    "sys.exit(rc)\n"
)


def scale_tables(K: int, logistic: bool) -> dict:
    """Return the scenario of the plain mode at K: the FFL scale scenario (``scale_scenario.py``),
    batched, with 10-class logistic regression in place of ridge when ``logistic``."""
    tables = ffl_scale_scenario(
        K, network={"fidelity": "batched"}, data={"classes": 10} if logistic else None
    )
    if logistic:
        tables["model"]["kind"] = "logistic"
    return tables


#: The child of ``--where``: as CHILD, and a thread that samples RSS every 2 ms and keeps the
#: main thread's stack at the largest sample (printed after WHERE).
WHERE_CHILD = (
    "import sys, threading, time, traceback\n"
    "from edgesim.cli import main\n"
    "best, me, done = [0, ''], threading.get_ident(), []\n"
    "def sample():\n"
    "    while not done:\n"
    "        rss = int(open('/proc/self/statm').read().split()[1])\n"
    "        if rss > best[0]:\n"
    "            frame = sys._current_frames().get(me)\n"
    "            stack = traceback.extract_stack(frame)[-4:] if frame else []\n"
    "            best[:] = [rss, ' < '.join(f'{f.name}:{f.lineno}' for f in reversed(stack))]\n"
    "        time.sleep(0.002)\n"
    "threading.Thread(target=sample, daemon=True).start()\n"
    "rc = main(sys.argv[1:])\n"
    "done.append(1)\n"
    "hwm = [ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0]\n"
    "print('PEAK_RSS_KB', hwm, file=sys.stderr)\n"
    "print('WHERE', best[1], file=sys.stderr)\n"
    "sys.exit(rc)\n"
)

#: The baseline child: import what a small run imported (module names on stdin), report VmHWM.
BASELINE_CHILD = (
    "import importlib, sys\n"
    "for name in sys.stdin.read().split():\n"
    "    try:\n"
    "        importlib.import_module(name)\n"
    "    except Exception:\n"
    "        pass\n"
    "hwm = [ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0]\n"
    "print('PEAK_RSS_KB', hwm, file=sys.stderr)\n"
)

#: A small run that prints the modules it imported (for the baseline).
MODULES_CHILD = (
    "import sys\n"
    "from edgesim.cli import main\n"
    "main(sys.argv[1:])\n"
    "print(' '.join(sorted(m for m in sys.modules if not m.startswith('__'))))\n"
)

#: The baseline's own uncertainty (run to run, and what a run imports besides): both sides of
#: the band are allowed this much.
SLACK = 32 * 2**20


def _point(name, model, classes, d, K, n, mech, fidelity, vcg, local, **extra):
    """Return one grid point: its name and scenario tables (``extra``: "table.key" = value)."""
    tables = {
        "data": {"source": "synthetic", "samples": n, "features": d},
        "agents": {"count": K},
        "model": {"kind": model, "l2": 10.0 if model == "ridge" else 1.0},
        "mechanism": {"kind": mech, "exact_vcg": vcg, "local_rounds": 20},
        "network": {"fidelity": fidelity},
        "output": {"local_baseline": local},
    }
    if model == "logistic":
        tables["data"]["classes"] = classes
    if mech == "ffl":
        if K > 1000:  # Phase I, the shared round at w*, and every problem stops there (T2 = 0,
            # and a stopping target no problem misses): K problems would take too long
            tables["mechanism"].update(phase1_rounds=10, phase2_rounds=0, epsilon=1e6)
        else:  # a few rounds of each of the K problems: memory does not depend on their number
            tables["mechanism"].update(phase1_rounds=10, phase2_rounds=2, phase2_check=False)
    else:
        tables["mechanism"]["phase1_rounds"] = 10
    for key, value in extra.items():
        table, _, field = key.partition("__")
        tables.setdefault(table, {})[field] = value
    return name, tables


#: The named grid of ``--grid``: (name, scenario tables). Each point is under 8 GB and a few
#: minutes on 2 cores; exact VCG is set explicitly (not "auto") so that what it costs is
#: measured whatever "auto" decides.
# fmt: off
GRID = [
    # name, model, classes, d, K, n (training rows), mechanism, fidelity, exact VCG, local
    _point("ridge-tiny", "ridge", 0, 20, 10, 100, "ffl", "events", True, True),
    _point("ridge-k1e3", "ridge", 0, 20, 1000, 10_000, "ffl", "batched", True, True),
    _point("ridge-k2e4-events-vcg", "ridge", 0, 20, 2 * 10**4, 2 * 10**5, "ffl", "events", True, False),
    _point("ridge-k1e5", "ridge", 0, 20, 10**5, 10**6, "ffl", "batched", False, False),
    _point("ridge-k1e5-events", "ridge", 0, 20, 10**5, 10**6, "fedavg", "events", False, False),
    _point("ridge-k1e5-vcg", "ridge", 0, 20, 10**5, 10**6, "ffl", "batched", True, False),
    _point("ridge-k1e5-local", "ridge", 0, 20, 10**5, 10**6, "ffl", "batched", False, True),
    _point("ridge-k1e6", "ridge", 0, 20, 10**6, 10**7, "ffl", "batched", False, False),
    _point("ridge-d100-vcg-local", "ridge", 0, 100, 300, 30_000, "ffl", "batched", True, True),
    _point("ridge-d1000-vcg", "ridge", 0, 1000, 60, 6000, "ffl", "events", True, True),
    _point("ridge-d3000-vcg", "ridge", 0, 3000, 10, 600, "fedavg", "batched", True, True),
    _point("ridge-d1e4", "ridge", 0, 10**4, 10, 200, "fedavg", "batched", False, False),
    _point("ridge-d200-float32", "ridge", 0, 200, 7 * 10**4, 14 * 10**5, "fedavg", "batched", False, False),
    _point("ridge-k1e4-none-npz", "ridge", 0, 20, 10**4, 10**5, "fedavg", "none", False, False,
           output__per_agent="npz"),
    _point("logistic-tiny", "logistic", 2, 20, 10, 200, "ffl", "events", True, True),
    _point("logistic-c3-k300-vcg", "logistic", 3, 20, 300, 6000, "ffl", "batched", True, True),
    _point("logistic-c10-k1e4", "logistic", 10, 20, 10**4, 10**5, "fedavg", "batched", False, False),
    _point("logistic-c10-k2e4-local", "logistic", 10, 20, 2 * 10**4, 2 * 10**5, "ffl", "batched", False, True),
    _point("logistic-c5-d100-k1e5", "logistic", 5, 100, 10**5, 10**6, "fedavg", "batched", False, False),
    _point("logistic-c10-k1e5-events", "logistic", 10, 20, 10**5, 10**6, "ffl", "events", False, False),
    _point("logistic-c3-k1e5-local", "logistic", 3, 20, 10**5, 10**6, "ffl", "batched", False, True),
    _point("logistic-c2-k1e6-npz", "logistic", 2, 20, 10**6, 10**7, "fedavg", "batched", False, False,
           output__per_agent="npz"),
    _point("logistic-c10-d784-vcg", "logistic", 10, 784, 20, 4000, "ffl", "events", True, True),
    _point("logistic-c2-d1000-local", "logistic", 2, 1000, 1000, 20_000, "fedavg", "events", False, True),
    _point("logistic-c10-d100-k1e4-local", "logistic", 10, 100, 10**4, 10**5, "fedavg", "batched", False, True),
    _point("logistic-c10-d1e4-vcg", "logistic", 10, 10**4, 10, 100, "fedavg", "batched", True, False),
    # The wide logistic of issue 27: K = 40, 400 samples, 12 498 features, 8 classes, one round.
    _point("wide-fedavg", "logistic", 8, 12_498, 40, 400, "fedavg", "events", False, False,
           mechanism__phase1_rounds=1),
    _point("wide-fedavg-local", "logistic", 8, 12_498, 40, 400, "fedavg", "events", False, True,
           mechanism__phase1_rounds=1),
    _point("wide-batched", "logistic", 8, 12_498, 40, 400, "fedavg", "batched", False, False,
           mechanism__phase1_rounds=1),
    _point("wide-ffl", "logistic", 8, 12_498, 40, 400, "ffl", "batched", False, False),
]
# fmt: on


def toml_text(tables: dict) -> str:
    """Return a scenario (top-level keys, and {table: {key: value}}) as TOML; seed 0 unless given."""

    def show(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        return repr(v) if isinstance(v, str) else str(v)

    top = {"seed": 0} | {k: v for k, v in tables.items() if not isinstance(v, dict)}
    lines = [f"{k} = {show(v)}" for k, v in top.items()]
    for table, keys in tables.items():
        if isinstance(keys, dict):
            lines.append(f"[{table}]")
            lines += [f"{k} = {show(v)}" for k, v in keys.items()]
    return "\n".join(lines) + "\n"


def run_peak_child(child: str, args: list[str], stdin: str | None = None):
    """Run ``python -c child args``; return (peak RSS bytes or None, where or "", the process)."""
    done = subprocess.run(
        [sys.executable, "-c", child, *args], capture_output=True, text=True, input=stdin
    )
    if "PEAK_RSS_KB" not in done.stderr:
        return None, "", done
    peak = int(done.stderr.split("PEAK_RSS_KB")[1].split()[0]) * 1024
    where = done.stderr.split("WHERE", 1)[1].strip() if "WHERE" in done.stderr else ""
    return peak, where, done


def baseline() -> int:
    """Return the measured baseline (bytes): the peak RSS of importing what a small run imports."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.toml"
        path.write_text(toml_text(GRID[0][1]))
        small = subprocess.run(
            [sys.executable, "-c", MODULES_CHILD, "run", str(path), "--quiet"],
            capture_output=True,
            text=True,
            check=True,
        )
    peak, _, done = run_peak_child(BASELINE_CHILD, [], stdin=small.stdout)
    if peak is None:
        raise RuntimeError(f"baseline child failed:\n{done.stderr[-2000:]}")
    return peak


def measure_point(tables: dict, where: bool) -> dict | None:
    """Run one grid point in a child; return its estimate, peak (bytes), time (s), where."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.toml"
        path.write_text(toml_text(tables))
        est = footprint.estimate(scn.load(str(path)))
        args = ["run", str(path), "--json", str(Path(tmp) / "r.json"), "--force"]
        start = time.perf_counter()
        peak, at, done = run_peak_child(WHERE_CHILD if where else CHILD, args)
        seconds = time.perf_counter() - start
    if peak is None or done.returncode != 0:
        print(f"  failed (exit {done.returncode}):\n{done.stderr[-2000:]}", flush=True)
        return None
    return {"estimate": est, "peak": peak, "seconds": seconds, "where": at}


def in_band(measured: float, estimated: float) -> bool:
    """True when measured <= estimated <= 1.5 measured, each side allowed :data:`SLACK`."""
    return estimated + SLACK >= measured and estimated - SLACK <= 1.5 * measured


def run_grid(names: list[str] | None, where: bool) -> None:
    """Measure the grid (or the points ``names``); print the table and PASS/FAIL per point."""
    points = [(n, t) for n, t in GRID if not names or n in names]
    unknown = set(names or ()) - {n for n, _ in GRID}
    if unknown:
        print(
            f"unknown points: {', '.join(sorted(unknown))}; known: {', '.join(n for n, _ in GRID)}"
        )
        return
    base = baseline()
    interp = footprint.INTERPRETER_BYTES
    ok_base = abs(interp - base) <= SLACK
    print(
        f"baseline (interpreter and imports): {base / MiB:.0f} MiB measured,"
        f" {interp / MiB:.0f} MiB in the estimate"
    )
    print(
        f"{'point':<30} {'K':>9} {'d':>6} {'C':>3} {'measured':>9} {'estimate':>9}"
        f" {'ratio':>6} {'time':>6}  largest parts of the estimate"
    )
    rows = []
    for name, tables in points:
        r = measure_point(tables, where)
        if r is None:
            rows.append((name, None, None))
            continue
        est = r["estimate"]
        measured = r["peak"] - base
        estimated = est.total - est.parts["interpreter"]
        ratio = estimated / measured if measured > 0 else float("inf")
        top = sorted(
            ((k, v) for k, v in est.parts.items() if k != "interpreter"), key=lambda kv: -kv[1]
        )[:3]
        parts = ", ".join(f"{k} {footprint.human(v)}" for k, v in top if v > 0)
        data = tables["data"]
        print(
            f"{name:<30} {tables['agents']['count']:>9,} {data['features']:>6}"
            f" {data.get('classes', 0) if tables['model']['kind'] == 'logistic' else '-':>3}"
            f" {measured / MiB:>9.0f} {estimated / MiB:>9.0f} {ratio:>6.2f}"
            f" {r['seconds']:>5.0f}s  {parts}",
            flush=True,
        )
        if r["where"]:
            print(f"{'':<30} peak at {r['where']}", flush=True)
        rows.append((name, measured, estimated))
    print("(measured: peak RSS - baseline; estimate: the estimate - its interpreter part; MiB)")
    print(
        f"{verdict(ok_base)}: baseline {base / MiB:.0f} MiB within 32 MiB of {interp / MiB:.0f} MiB"
    )
    for name, measured, estimated in rows:
        if measured is None:
            print(f"FAIL: {name}: the run failed")
            continue
        print(
            f"{verdict(in_band(measured, estimated))}: {name}: measured {measured / MiB:.0f} MiB"
            f" <= estimate {estimated / MiB:.0f} MiB <= 1.5 x measured (+- 32 MiB)"
        )
    ok = [in_band(m, e) for _, m, e in rows if m is not None]
    print(f"{sum(ok)} of {len(rows)} points within the band")


def main(argv=None) -> int:
    """Measure, print the table and the PASS/FAIL lines; always returns 0."""
    ap = argument_parser(__doc__)
    ap.add_argument("--quick", action="store_true", help="K = 10^4 and 2 * 10^4")
    ap.add_argument("--agents", type=int, nargs="+", help="the values of K to measure")
    ap.add_argument("--logistic", action="store_true", help="10-class logistic, not ridge")
    ap.add_argument("--grid", action="store_true", help="measure the named grid of shapes")
    ap.add_argument("--points", nargs="+", help="with --grid: only these points")
    ap.add_argument("--where", action="store_true", help="with --grid: where each peak is")
    args = ap.parse_args(argv)
    if args.grid:
        run_grid(args.points, args.where)
        return 0
    Ks = args.agents or ([10_000, 20_000] if args.quick else [100_000, 1_000_000])
    print(
        f"{'K':>10} {'estimate':>10} {'measured':>10} {'ratio':>6}  largest parts of the estimate"
    )
    rows = []
    for K in Ks:
        r = measure_point(scale_tables(K, args.logistic), where=False)
        if r is None:
            continue
        est = r["estimate"]
        ratio = est.total / r["peak"]
        top = sorted(est.parts.items(), key=lambda kv: -kv[1])[:3]
        parts = ", ".join(f"{k} {footprint.human(v)}" for k, v in top)
        print(
            f"{K:>10,} {footprint.human(est.total):>10} {footprint.human(r['peak']):>10}"
            f" {ratio:6.2f}  {parts}",
            flush=True,
        )
        rows.append((K, ratio))
    for K, ratio in rows:
        ok = 1.0 <= ratio <= 1.5
        print(
            f"{verdict(ok)}: K = {K:,}: measured <= estimate <= 1.5 x measured (ratio {ratio:.2f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
