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

Always exits with status 0; prints PASS/FAIL lines.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import verdict

from edgesim import footprint
from edgesim import scenario as scn

#: The child: run the command line, then print its own peak RSS (VmHWM, kB) on stderr.
CHILD = (
    "import sys\n"
    "from edgesim.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    "hwm = [ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0]\n"
    "print('PEAK_RSS_KB', hwm, file=sys.stderr)\n"
    "sys.exit(rc)\n"
)


def scenario_text(K: int, logistic: bool) -> str:
    """Return the benchmark scenario as TOML."""
    model = "kind = 'logistic'\nl2 = 10.0\n" if logistic else "kind = 'ridge'\nl2 = 10.0\n"
    data = f"source = 'synthetic'\nsamples = {10 * K}\nfeatures = 20\n"
    if logistic:
        data += "classes = 10\n"
    return (
        f"seed = 0\n[data]\n{data}[agents]\ncount = {K}\n[model]\n{model}"
        "[mechanism]\nkind = 'ffl'\nphase1_rounds = 'theory'\nphase2_rounds = 'theory'\n"
        "exact_vcg = false\nepsilon = 0.1\n[network]\nfidelity = 'batched'\n"
        "[output]\nlocal_baseline = false\n"
    )


def measure(K: int, logistic: bool) -> dict | None:
    """Run the scenario at K in a child; return estimate and measured peak (bytes)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.toml"
        path.write_text(scenario_text(K, logistic))
        est = footprint.estimate(scn.load(str(path)))
        cmd = [sys.executable, "-c", CHILD, "run", str(path), "--json", str(Path(tmp) / "r.json")]
        done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0 or "PEAK_RSS_KB" not in done.stderr:
        print(f"K = {K} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        return None
    peak = int(done.stderr.split("PEAK_RSS_KB")[1].split()[0]) * 1024
    return {"K": K, "estimate": est, "peak": peak}


def main(argv=None) -> int:
    """Measure, print the table and the PASS/FAIL lines; always returns 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="K = 10^4 and 2 * 10^4")
    ap.add_argument("--agents", type=int, nargs="+", help="the values of K to measure")
    ap.add_argument("--logistic", action="store_true", help="10-class logistic, not ridge")
    args = ap.parse_args(argv)
    Ks = args.agents or ([10_000, 20_000] if args.quick else [100_000, 1_000_000])
    print(
        f"{'K':>10} {'estimate':>10} {'measured':>10} {'ratio':>6}  largest parts of the estimate"
    )
    rows = []
    for K in Ks:
        r = measure(K, args.logistic)
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
