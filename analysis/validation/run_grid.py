"""Run the ns-3 Wi-Fi validation grid and append to analysis/validation/ns3_wifi.csv.

Run with the ns-3 virtual environment (see README.md):

    ~/.venvs/ns3/bin/python analysis/validation/run_grid.py --grid reduced
    ~/.venvs/ns3/bin/python analysis/validation/run_grid.py --grid full --budget-min 110

One process, one ns-3 simulation at a time (ns-3 is imported once). Rows are appended
after every run, and configurations whose runs are already in the CSV (same standard,
MCS, N, bytes, mode, run and script hash) are skipped, so an interrupted grid resumes
where it stopped. Configurations go cheapest first (the cost of a run grows roughly as
N^2 x bytes: every frame reaches all N+1 PHYs of the cell). ``--budget-min`` stops
before starting a configuration whose predicted cost would overrun the budget.
A sidecar ``<csv>.meta.json`` records the ns-3 version, script hash, grid and wall time.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ns3_wifi  # noqa: E402

GRIDS = {
    # The grid of issue 13, item 4: N from 1 to 50, tens of kB to a few MB, 802.11ac
    # MCS 3 and 7 and 802.11ax MCS 7, uplink, downlink and round; 3 MB only up to
    # N = 20 (``max_bytes_above``), as N = 40 and 50 at 3 MB alone would take about
    # 4.6 h of one process on a 2-core machine (every frame reaches all N + 1 PHYs).
    "full": dict(
        n=[1, 2, 5, 10, 20, 40, 50],
        bytes=[50_000, 200_000, 800_000, 3_000_000],
        phy=[("ac", 3), ("ac", 7), ("ax", 7)],
        mode=["uplink", "downlink", "round"],
        max_bytes_above=(20, 800_000),
    ),
    # What fits in about an hour on a shared 2-core machine.
    "reduced": dict(
        n=[1, 5, 10, 40],
        bytes=[50_000, 800_000],
        phy=[("ac", 7), ("ac", 3), ("ax", 7)],
        mode=["uplink", "downlink", "round"],
    ),
    # Sanity checks against the numbers quoted in issue 13.
    "sanity": dict(
        n=[1, 10, 40], bytes=[800_000], phy=[("ac", 7)], mode=["uplink", "downlink", "round"]
    ),
}

# Wall seconds per (N^2 x MB x mode factor) measured for ac MCS 7 (N = 40, 800 kB,
# round: about 53 s a run on the shared 2-core machine); used only for ordering and
# the budget check.
COST = 0.021
MODE_FACTOR = {"uplink": 1.0, "downlink": 1.0, "round": 2.0}


def runs_for(nbytes: int, runs: int, small_runs: int) -> int:
    return small_runs if nbytes < 100_000 else runs


def predicted(n, nbytes, mode, runs, phy):
    per = 0.3 + COST * max(n, 1) ** 2 * nbytes / 1e6 * MODE_FACTOR[mode]
    if phy == ("ac", 3):
        per *= 1.2  # lower rate: more contention rounds per byte (a guess)
    return per * runs


def done_keys(path):
    keys = set()
    if not os.path.exists(path):
        return keys
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            keys.add(
                (
                    r["standard"],
                    int(r["mcs"]),
                    int(r["n"]),
                    int(r["bytes"]),
                    r["mode"],
                    int(r["run"]),
                    r.get("arp", ""),
                    r.get("script", ""),
                )
            )
    return keys


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--grid", choices=list(GRIDS), default="reduced")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--small-runs", type=int, default=10, help="runs for messages < 100 kB")
    p.add_argument("--out", default=os.path.join(HERE, "ns3_wifi.csv"))
    p.add_argument("--budget-min", type=float, default=110.0)
    p.add_argument("--arp", choices=["warm", "cold"], default="warm")
    p.add_argument(
        "--shard",
        default="1/1",
        help="K/M: run only every M-th configuration starting at the K-th (by cost), so M"
        " processes on a machine with M free cores can share a grid; give each its own --out",
    )
    p.add_argument("--dry-run", action="store_true", help="print the plan and its cost")
    a = p.parse_args(argv)

    g = GRIDS[a.grid]
    configs = []
    n_cut, bytes_cut = g.get("max_bytes_above", (None, None))
    for phy, n, nbytes, mode in itertools.product(g["phy"], g["n"], g["bytes"], g["mode"]):
        if n_cut is not None and n > n_cut and nbytes > bytes_cut:
            continue
        r = runs_for(nbytes, a.runs, a.small_runs)
        configs.append((predicted(n, nbytes, mode, r, phy), phy, n, nbytes, mode, r))
    configs.sort(key=lambda c: c[0])
    k, m = (int(x) for x in a.shard.split("/"))
    configs = configs[k - 1 :: m]
    total = sum(c[0] for c in configs)
    nruns = sum(c[5] for c in configs)
    print(
        f"grid {a.grid}: {len(configs)} configurations, {nruns} runs,"
        f" predicted {total / 60:.0f} min",
        flush=True,
    )
    if a.dry_run:
        for c in configs:
            (std, mcs), n, nbytes, mode, r = c[1:]
            print(f"  {c[0]:6.0f} s  {std} mcs{mcs} n={n} bytes={nbytes} {mode} x{r}")
        return 0

    t0 = time.time()
    ns3_wifi.load()
    sid = ns3_wifi.script_id()
    have = done_keys(a.out)
    ran, skipped = 0, []
    for pred, (std, mcs), n, nbytes, mode, runs in configs:
        todo = [
            r for r in range(1, runs + 1) if (std, mcs, n, nbytes, mode, r, a.arp, sid) not in have
        ]
        if not todo:
            continue
        elapsed = time.time() - t0
        if elapsed + pred * len(todo) / runs > a.budget_min * 60:
            skipped.append((std, mcs, n, nbytes, mode))
            continue
        c0 = time.time()
        lasts = []
        for run in todo:
            row = ns3_wifi.run_one(std, mcs, n, nbytes, mode, run, arp=a.arp)
            ns3_wifi.append_rows(a.out, [row])
            lasts.append(row["last_s"])
            ran += 1
        shown = ",".join(f"{x:.3f}" if x != "" else "NA" for x in lasts)
        print(
            f"{std} mcs{mcs} n={n:2d} bytes={nbytes:8d} {mode:8s} runs={len(todo)}"
            f" last={shown}  ({time.time() - c0:.1f} s wall, predicted {pred:.1f})",
            flush=True,
        )

    wall = time.time() - t0
    meta_path = a.out + ".meta.json"
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {"invocations": []}
    meta["ns3_version"] = ns3_wifi.ns3_version()
    meta["script"] = sid
    meta["invocations"].append(
        {
            "grid": a.grid,
            "grid_spec": {k: v for k, v in g.items()},
            "runs": a.runs,
            "arp": a.arp,
            "shard": a.shard,
            "small_runs": a.small_runs,
            "runs_done": ran,
            "skipped_for_budget": skipped,
            "wall_s": round(wall, 1),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "host": f"{platform.platform()}, {os.cpu_count() or 0} CPUs",
        }
    )
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    print(
        f"done: {ran} runs in {wall / 60:.1f} min;"
        f" {len(skipped)} configurations skipped for the budget",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
