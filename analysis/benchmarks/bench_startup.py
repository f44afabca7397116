"""Start-up and many small runs (issue 32, item 2): this tree against a base revision, one run.

Run from the repository root (``edgesim`` installed)::

    python analysis/benchmarks/bench_startup.py              # full, about 2 minutes on 2 cores
    python analysis/benchmarks/bench_startup.py --quick      # smoke, about 20 s
    python analysis/benchmarks/bench_startup.py --base 6ec6b86 --repeats 7

Every timing is a fresh ``python -m edgesim.cli`` process, this tree's and the base's
interleaved (the base runs from a git worktree at ``--base``, made under the system's temp
folder when missing, through ``PYTHONPATH``), with Python's bytecode cache on (a private
``PYTHONPYCACHEPREFIX``, warmed by one untimed run each: an installed package has its
``.pyc`` files; without them every run compiles every module it imports):

1. **One plain paper-fig1 FedAvg run from the CLI**: ``edgesim run scenarios/paper-fig1.toml
   --set best_response.enabled=false --quiet --json OUT``; the least wall and CPU time of
   ``--repeats`` runs each. Target: under 0.5 s, and the ratio. The modules a run does not
   need (scipy.stats, scipy.optimize, networkx, SimPy, matplotlib, cryptography, the sweep
   and plotting modules) are listed where either tree imports them.
2. **A 15-point best-response search on paper-fig1 under FFL, end to end from the CLI**:
   ``edgesim run scenarios/paper-fig1.toml --set mechanism.kind=ffl --set best_response.points=15
   --quiet --json OUT`` (the original search of agent 0's gamma: a 15-point log grid and
   gamma = 1, then bounded Brent: 24 runs, the opt-out and the main run). The least wall and
   CPU time of ``--search-repeats`` runs each (``--quick``: 300 Phase I rounds). Target: at least 3x
   faster; both JSON outputs are compared (identical but for the version).
3. **A sweep in one process reusing its data**: ``edgesim.sweep`` over
   ``mechanism.phase1_rounds`` (20, 40, ...: ``--sweep-runs`` values, default 6) of the
   quick start in memory under FedAvg, 50 agents, 20 000 samples, ``workers=0`` (every run in
   this process): this tree with its data cache (the data, L_g, the local models and w^o
   built once), then with ``EDGESIM_DATA_CACHE_MB=0`` (no cache), then the base. Prints the
   wall time per run and whether the three give the same records (against the base, but the
   exact-VCG reason, whose cost estimate counts w^o's Newton polish since session 21).

The verdicts read the CPU time (user + system) of the child processes, which other
work on a shared machine inflates far less than their wall time (both are printed; on
an idle machine they agree within a few per cent). Always exits with status 0; prints
PASS/FAIL lines.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from instrument import argument_parser, machine_line, met, verdict

ROOT = Path(__file__).resolve().parents[2]
FIG1 = str(ROOT / "scenarios" / "paper-fig1.toml")
PLAIN = ["--set", "best_response.enabled=false"]
SEARCH = ["--set", "mechanism.kind=ffl", "--set", "best_response.points=15"]
QUICK_SEARCH = [*SEARCH, "--set", "mechanism.phase1_rounds=300"]
#: Modules a plain in-memory run should not import (checked in part 1, for both trees).
UNNEEDED = (
    "scipy.stats",
    "scipy.optimize",
    "networkx",
    "simpy",
    "numba",
    "matplotlib",
    "cryptography",
    "threadpoolctl",
    "edgesim.sweeps.runner",
    "edgesim.sweeps.plots",
    "edgesim.canary",
    "edgesim.network.server",
)
PLAIN_TARGET_S = 0.5
SEARCH_TARGET = 3.0
CHILD_TAG = "BENCH_STARTUP_JSON "


def base_tree(rev: str) -> Path:
    """Return a git worktree of ``rev`` (made under the temp folder if missing)."""
    path = Path(tempfile.gettempdir()) / f"edgesim_base_{rev}"
    if not (path / "edgesim").is_dir():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), rev],
            check=True,
            capture_output=True,
        )
    return path


def child_env(tree: Path, cache: Path, extra: dict | None = None) -> dict:
    """Return the environment of a child running ``tree``'s edgesim with a bytecode cache."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    env.update(extra or {})
    return env


def cli_seconds(tree: Path, cache: Path, args: list[str], out: Path) -> tuple[float, float]:
    """Run ``python -m edgesim.cli run FIG1 ARGS --quiet --json OUT`` with ``tree``'s code;
    returns (its wall time, its CPU time: user + system) in seconds (raises when it fails).

    The CPU time is what other work on a shared machine disturbs least."""
    cmd = [sys.executable, "-m", "edgesim.cli", "run", FIG1, *args, "--quiet", "--json", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        cmd, env=child_env(tree, cache), capture_output=True, text=True, cwd=out.parent
    )
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def imported(tree: Path, cache: Path, out: Path) -> list[str]:
    """Return which of :data:`UNNEEDED` a plain run of ``tree``'s code imports."""
    code = (
        "import sys\nfrom edgesim.cli import main\n"
        f"main(['run', {FIG1!r}, *{PLAIN!r}, '--quiet', '--json', {str(out)!r}])\n"
        "import edgesim, json\n"
        f"print(json.dumps([edgesim.__file__, [m for m in {UNNEEDED!r} if m in sys.modules]]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=child_env(tree, cache),
        capture_output=True,
        text=True,
        cwd=out.parent,
    )
    where, mods = json.loads(proc.stdout.strip().splitlines()[-1])
    if not Path(where).is_relative_to(tree):
        raise RuntimeError(f"the child imported {where}, not the tree {tree}")
    return mods


def same_json(a: Path, b: Path) -> bool:
    """Whether two ``--json`` outputs are equal but for ``edgesim_version``."""
    x, y = json.loads(a.read_text()), json.loads(b.read_text())
    x.pop("edgesim_version"), y.pop("edgesim_version")
    return x == y


def interleaved(trees: dict, cache: Path, args: list[str], repeats: int, work: Path) -> dict:
    """Time the CLI run ``args`` ``repeats`` times per tree, alternating trees (after one
    untimed run each when ``warm``); returns {label: [(wall s, CPU s), ...] sorted by wall}."""
    times: dict = {label: [] for label in trees}
    for _ in range(repeats):
        for label, tree in trees.items():
            out = work / f"{label}.json"
            times[label].append(cli_seconds(tree, cache / label, args, out))
    return {label: sorted(t) for label, t in times.items()}


def least(runs: list[tuple[float, float]]) -> tuple[float, float]:
    """Return (the least wall time, the least CPU time) of ``runs``, seconds."""
    return min(w for w, _ in runs), min(c for _, c in runs)


def part_plain(trees: dict, cache: Path, repeats: int, work: Path) -> bool:
    """Part 1: the plain FedAvg run; prints its lines, returns whether the target is met."""
    print("\n1. plain paper-fig1 FedAvg run from the CLI (fresh processes, bytecode cached)")
    for label, tree in trees.items():  # warm the bytecode cache
        cli_seconds(tree, cache / label, PLAIN, work / f"{label}.json")
    times = interleaved(trees, cache, PLAIN, repeats, work)
    for label, runs in times.items():
        wall, cpu = least(runs)
        median = runs[len(runs) // 2][0]
        unneeded = imported(trees[label], cache / label, work / "imports.json")
        print(f"   {label:5s}: least {wall:.3f} s wall (median {median:.3f} s), {cpu:.3f} s CPU;"
              f" {len(runs)} runs")  # fmt: skip
        print(f"          imports it does not need: {', '.join(unneeded) or 'none'}")
    (new, new_cpu), (base, base_cpu) = least(times["new"]), least(times["base"])
    same = same_json(work / "new.json", work / "base.json")
    ok = new_cpu < PLAIN_TARGET_S  # CPU: what other work on the machine disturbs least
    print(f"   ratio base/new {base / new:.2f}x wall, {base_cpu / new_cpu:.2f}x CPU;"
          f" outputs identical: {same}")  # fmt: skip
    print(
        f"   {verdict(ok and same)}: plain run {new_cpu:.3f} s CPU < {PLAIN_TARGET_S} s: {met(ok)}"
    )
    return ok and same


def part_search(trees: dict, cache: Path, repeats: int, quick: bool, work: Path) -> bool:
    """Part 2: the 15-point search; prints its lines, returns whether the target is met."""
    args = QUICK_SEARCH if quick else SEARCH
    print(f"\n2. 15-point best-response search from the CLI ({', '.join(args[1::2])})")
    times: dict = {label: [] for label in trees}
    for _ in range(repeats):  # the bytecode cache is warm from part 1
        for label, tree in trees.items():
            out = work / f"search-{label}.json"
            times[label].append(cli_seconds(tree, cache / label, args, out))
    (new, new_cpu), (base, base_cpu) = least(times["new"]), least(times["base"])
    same = same_json(work / "search-new.json", work / "search-base.json")
    found = json.loads((work / "search-new.json").read_text())["best_response"]
    print(f"   base {base:.2f} s wall, {base_cpu:.2f} s CPU; new {new:.2f} s wall,"
          f" {new_cpu:.2f} s CPU ({found['evaluations']} points, then the opt-out run)")  # fmt: skip
    ratio, cpu_ratio = base / new, base_cpu / new_cpu
    ok = cpu_ratio >= SEARCH_TARGET
    print(f"   ratio base/new {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU; outputs identical: {same}")
    print(
        f"   {verdict(ok and same)}: search {cpu_ratio:.2f}x less CPU >= {SEARCH_TARGET}x: {met(ok)}"
    )
    return ok and same


SWEEP_CHILD = """
import json, sys, time
import edgesim
runs = int(sys.argv[1])
over = ["agents.count=50", "data.samples=20000", "network.fidelity=none", "mechanism.kind=fedavg",
        "agents.strategy=[]"]
spec = edgesim.load_scenario("quickstart", over).to_dict()
spec["sweep"] = {"mechanism.phase1_rounds": [20 * (i + 1) for i in range(runs)]}
t0 = time.perf_counter()
out = edgesim.sweep(spec, None, workers=0)
seconds = time.perf_counter() - t0
texts = [json.dumps({**r["result"], "edgesim_version": "-"}, sort_keys=True) for r in out.records]
print(TAG + json.dumps({"seconds": seconds, "ok": len(out.ok), "texts": texts}))
"""


def part_sweep(trees: dict, cache: Path, runs: int) -> None:
    """Part 3: a sweep in one process, with and without the data cache; prints its lines."""
    print(f"\n3. sweep of {runs} runs in one process (workers = 0): quick start, FedAvg, K = 50")
    cases = [
        ("new, data cache", trees["new"], "new", {}),
        ("new, no cache", trees["new"], "new", {"EDGESIM_DATA_CACHE_MB": "0"}),
        ("base", trees["base"], "base", {}),
    ]
    texts = []
    for label, tree, key, extra in cases:
        code = SWEEP_CHILD.replace("TAG", repr(CHILD_TAG))
        proc = subprocess.run(
            [sys.executable, "-c", code, str(runs)],
            env=child_env(tree, cache / key, extra),
            capture_output=True,
            text=True,
            cwd=cache.parent,
        )
        lines = [x for x in proc.stdout.splitlines() if x.startswith(CHILD_TAG)]
        if not lines:
            print(f"   {label}: failed: {proc.stderr[-1500:]}")
            continue
        got = json.loads(lines[0][len(CHILD_TAG) :])
        texts.append(got["texts"])
        per_run = got["seconds"] / runs * 1e3
        print(f"   {label:16s}: {got['seconds']:.2f} s, {per_run:.0f} ms a run ({got['ok']} ok)")
    if len(texts) < 3:
        return
    print(f"   records identical with and without the cache: {texts[0] == texts[1]}")

    def unplanned(run_texts):  # the exact-VCG reason states the plan's cost estimate
        out = []
        for text in run_texts:
            record = json.loads(text)
            record.get("model", {}).get("exact_vcg", {}).pop("reason", None)
            out.append(record)
        return out

    same = unplanned(texts[0]) == unplanned(texts[2])
    print(f"   records identical to the base's (but the exact-VCG reason's estimate): {same}")


def main() -> None:
    """Parse the arguments, run the three parts, print the verdicts; returns None."""
    ap = argument_parser(__doc__)
    ap.add_argument("--base", default="6ec6b86", help="the base revision (default 6ec6b86)")
    ap.add_argument("--repeats", type=int, default=7, help="plain runs per tree (default 7)")
    ap.add_argument("--search-repeats", type=int, default=2, help="searches per tree (default 2)")
    ap.add_argument("--sweep-runs", type=int, default=6, help="runs of part 3's sweep")
    ap.add_argument(
        "--quick", action="store_true", help="3 plain runs, a short search, 3 sweep runs"
    )
    ap.add_argument("--skip-search", action="store_true")
    ap.add_argument("--skip-sweep", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.repeats, args.search_repeats, args.sweep_runs = 3, 1, 3
    print(machine_line())
    trees = {"new": ROOT, "base": base_tree(args.base)}
    print(f"new: {ROOT}; base: {trees['base']} ({args.base})")
    with tempfile.TemporaryDirectory(prefix="bench_startup_") as tmp:
        work = Path(tmp)
        cache = work / "pycache"
        part_plain(trees, cache, args.repeats, work)
        if not args.skip_search:
            part_search(trees, cache, args.search_repeats, args.quick, work)
        if not args.skip_sweep:
            part_sweep(trees, cache, args.sweep_runs)


if __name__ == "__main__":
    main()
