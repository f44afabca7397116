"""Writing the result at large K: lossy FFL at K = 10^6 with the default output settings.

Run from the repository root (``edgesim`` installed)::

    python analysis/benchmarks/bench_output.py                   # K = 1e6, about 2 minutes
    python analysis/benchmarks/bench_output.py --quick           # K = 1e5 (smoke), about 20 s
    python analysis/benchmarks/bench_output.py --base /tmp/base  # and the same run of the code
                                                                 # at /tmp/base, after this one

The run is ``bench_scale.py``'s (FFL on ``synthetic`` ridge, 10 samples of d = 20 per
agent, Theorem 1's rounds, batched fidelity on one Shannon cell with 2 % loss and ARQ)
with ``output.per_agent`` left at its default, ``"auto"``, written as ``edgesim run
--json`` writes it: from K = 10^5 (``edgesim.scenario.AUTO_SIDECAR_FROM_K``) the
per-agent results go to the npz sidecar beside the JSON, the JSON keeping their
summaries. The same run with ``per_agent = "json"`` puts them in the JSON (an
``agents`` array of K objects, ``payments`` and FFL's per-agent lists), about 680 MB
at K = 10^6 (``write_atomic(path, dump_json)``).

Each run is a fresh subprocess. Printed:

1. **End to end**, the default output and ``"json"``: the wall time from the scenario to
   the written files, split into setup (scenario and data), the run (mechanism, network,
   and forming the result's dict, of which ``RunRecord.to_json_dict`` is shown on its
   own) and the write.
2. **Old against new writer on the same result** (the ``"json"`` run's), in the same
   process: the stdlib ``json.dump(result, indent=1, allow_nan=False)`` (what
   ``dump_json`` ran before issue 32) against ``edgesim.output.dump_json`` (timed twice:
   in the end-to-end run, and again after the stdlib one), and whether the two files are
   the same bytes.
3. With ``--base DIR`` (a git worktree of another commit, e.g. ``git worktree add
   /tmp/base 6ec6b86``): the same end-to-end run of that code with its default output
   (``PYTHONPATH=DIR``; before ``"auto"`` that is ``"json"``), and whether its JSON is the
   same bytes (SHA-256) as this code's ``"json"`` run.

Target (issue 32): K = 10^6 end to end under 50 s with the default output settings. The
script always exits with status 0; it prints PASS/FAIL lines.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import sys
import tempfile
import time

from bench_scale import scale_scenario
from instrument import argument_parser, machine_line, report_to_parent, run_child, verdict

CHILD_TAG = "BENCH_OUTPUT_JSON "
TARGET_S = 50.0


def default_output_scenario(K: int, per_agent: str | None = None) -> dict:
    """``bench_scale.py``'s scenario at K agents with ``output.per_agent`` at its default
    (or ``per_agent``, e.g. "npz")."""
    tables = scale_scenario(K)
    del tables["output"]["per_agent"]
    if per_agent is not None:
        tables["output"]["per_agent"] = per_agent
    return tables


def stdlib_dump(result: dict, fh) -> None:
    """Write ``result`` to the binary file ``fh`` with the stdlib encoder, as ``dump_json``
    did before issue 32 (``json.dump`` with ``indent=1``, then a newline)."""
    out = io.TextIOWrapper(fh, encoding="utf-8", newline="\n", write_through=False)
    try:
        json.dump(result, out, indent=1, allow_nan=False)
        out.write("\n")
        out.flush()
    finally:
        out.detach()


def sha256(path: str) -> str:
    """Return the SHA-256 of the file at ``path`` (hex)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 24):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def timer(out: dict, part: str):
    """Add ``{part}_wall`` and ``{part}_cpu`` (this process's CPU seconds, all its threads)
    to ``out`` for the block it wraps."""
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    out[f"{part}_wall"] = time.perf_counter() - wall
    out[f"{part}_cpu"] = time.process_time() - cpu


def child(K: int, per_agent: str | None) -> None:
    """Run the scenario once in this fresh process and write its JSON (and sidecar) as
    ``edgesim run --json`` does; with the default output, write the same result again with
    the stdlib writer and with ``dump_json``. Print the measurements as one JSON line."""
    from edgesim import output
    from edgesim import per_agent as sidecar
    from edgesim import scenario as scenario_mod
    from edgesim.simulate import Simulation, run
    from edgesim.sweeps import write_atomic

    marks = {"to_json_dict": 0.0}
    to_json_dict = output.RunRecord.to_json_dict

    def timed_to_json_dict(self):
        t = time.process_time()
        out = to_json_dict(self)
        marks["to_json_dict"] += time.process_time() - t
        return out

    output.RunRecord.to_json_dict = timed_to_json_dict
    out = {"K": K}
    with timer(out, "setup"):
        tables = default_output_scenario(K, per_agent)
        # as `edgesim run --json` runs it: per_agent "auto" is the npz sidecar from K = 10^5
        sc = scenario_mod.from_dict(tables)
        for_json_file = getattr(scenario_mod, "for_json_file", None)  # (a base before "auto")
        sc = sc if for_json_file is None else for_json_file(sc, tables)
        sim = Simulation(sc)
    with timer(out, "run"):
        result = run(sc, sim)
    out["per_agent"] = sc.output.per_agent
    with tempfile.TemporaryDirectory() as tmp:
        new_path, old_path = os.path.join(tmp, "new.json"), os.path.join(tmp, "old.json")
        with timer(out, "write"):
            if sim.last_per_agent is not None:  # the sidecar first, as edgesim run --json
                side = sidecar.sidecar_path(new_path, sc.output.per_agent)
                result["per_agent"]["file"] = side.name
                write_atomic(side, sidecar.writer(sim.last_per_agent, sc.output.per_agent))
            write_atomic(new_path, lambda fh: output.dump_json(result, fh))
        for unit in ("wall", "cpu"):
            out[f"total_{unit}"] = sum(out[f"{part}_{unit}"] for part in ("setup", "run", "write"))
        out["json_bytes"] = os.path.getsize(new_path)
        if sim.last_per_agent is None:
            with timer(out, "stdlib_write"):
                write_atomic(old_path, lambda fh: stdlib_dump(result, fh))
            with timer(out, "write_again"):
                write_atomic(new_path, lambda fh: output.dump_json(result, fh))
            out["sha256"] = sha256(new_path)
            out["same_bytes"] = out["sha256"] == sha256(old_path)
    out["to_json_dict_cpu"] = marks["to_json_dict"]
    report_to_parent(CHILD_TAG, out)


def describe(label: str, r: dict) -> None:
    """Print one run's measurements: wall seconds, then CPU seconds."""
    for unit in ("wall", "cpu"):
        to_json_dict = f"{r['to_json_dict_cpu']:.1f}" if unit == "cpu" else "-"  # CPU only
        print(
            f"{label if unit == 'wall' else '':<18} {unit:>4} {r[f'total_{unit}']:>7.1f}"
            f" {r[f'setup_{unit}']:>7.1f} {r[f'run_{unit}']:>7.1f}"
            f" {to_json_dict:>13}"
            f" {r[f'write_{unit}']:>7.1f}"
            + (f" {r['json_bytes'] / 1e6:>8.0f}" if unit == "wall" else ""),
            flush=True,
        )


def main(argv=None) -> int:
    ap = argument_parser(__doc__)
    ap.add_argument("--quick", action="store_true", help="K = 1e5 only")
    ap.add_argument("--size", type=float, help="the K to run (overrides the above)")
    ap.add_argument("--base", help="also run the code at this directory (a git worktree)")
    ap.add_argument("--child", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--child-per-agent", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(int(args.child), args.child_per_agent)
        return 0
    K = int(args.size or (1e5 if args.quick else 1e6))
    print(machine_line())
    print(f"== lossy FFL at K = {K:.0e}: the default output (per_agent = 'auto') ==")
    print(
        f"{'code, per_agent':<18} {'':>4} {'total':>7} {'setup':>7} {'run':>7}"
        f" {'(to_json_dict)':>13} {'write':>7} {'JSON MB':>8}"
    )
    cmd = [sys.executable, __file__, "--child", str(K)]
    runs = {}
    for label, prefix, extra in (
        ("this code, default", [], []),
        ("this code, json", [], ["--child-per-agent", "json"]),
        ("base, default", ["env", f"PYTHONPATH={args.base}"] if args.base else None, []),
    ):
        if prefix is None:
            continue
        runs[label], _ = run_child([*prefix, *cmd, *extra], CHILD_TAG, label)
        if runs[label] is not None:
            describe(label, runs[label])
    default, new, base = (
        runs.get(k) for k in ("this code, default", "this code, json", "base, default")
    )
    if new is None or default is None:
        return 0
    print("\nwriters on the same result (one process, this code's result), wall and CPU seconds:")
    for unit in ("wall", "cpu"):
        mean_new = (new[f"write_{unit}"] + new[f"write_again_{unit}"]) / 2
        print(
            f"  {unit}: stdlib json.dump(indent=1) {new[f'stdlib_write_{unit}']:.2f};"
            f" dump_json {new[f'write_{unit}']:.2f}, again {new[f'write_again_{unit}']:.2f}:"
            f" {new[f'stdlib_write_{unit}'] / mean_new:.1f}x faster"
        )
    for unit in ("wall", "cpu"):
        ratio = new[f"total_{unit}"] / default[f"total_{unit}"]
        print(f"{unit}: per_agent = 'json' over the default, end to end: {ratio:.2f}x")
        if base is not None:
            ratio = base[f"total_{unit}"] / default[f"total_{unit}"]
            print(f"{unit}: the default output, end to end, {ratio:.2f}x faster than the base's")
    print()
    print(f"{verdict(new['same_bytes'])}: dump_json wrote the stdlib's bytes")
    if base is not None and "sha256" in base:  # the base's default wrote the JSON array
        same = base["sha256"] == new["sha256"]
        print(f"{verdict(same)}: per_agent = 'json' wrote the base code's JSON bytes")
    if K == 10**6:
        ok = default["total_wall"] < TARGET_S
        print(
            f"{verdict(ok)}: K = 1e6 with the default output ({default['per_agent']}) in"
            f" {default['total_wall']:.1f} s (target < {TARGET_S:.0f} s)"
        )
        print(f"  (per_agent = 'json': {new['total_wall']:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
