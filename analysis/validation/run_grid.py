"""Run the ns-3 validation grids: Wi-Fi into ns3_wifi.csv, LTE (``--cell lte``) into ns3_lte.csv.

Run with the ns-3 virtual environment (see README.md):

    ~/.venvs/ns3/bin/python analysis/validation/run_grid.py --grid reduced
    ~/.venvs/ns3/bin/python analysis/validation/run_grid.py --grid full --budget-min 110
    ~/.venvs/ns3/bin/python analysis/validation/run_grid.py --cell lte --grid full

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


LTE_GRIDS = {
    # Issue 30, item 4: two channel widths, two distances (MCS 28 at 50 m; a mid MCS at
    # ``LTE_FAR_M`` under Friis, the LTE helper's default path loss), both directions and
    # the round, N from 1 to 20, S of 100 kB and 1 MB, RR before PF.
    "full": dict(
        rbs=[100, 50],
        distance=[50.0, None],
        scheduler=["rr", "pf"],
        n=[1, 2, 5, 10, 20],
        bytes=[100_000, 1_000_000],
        mode=["downlink", "uplink", "round"],
    ),
    # Issue 30's sanity points: N = 1, 100 RBs, 50 m (goodput, RTT, one-way delays).
    "sanity": dict(
        rbs=[100],
        distance=[50.0],
        scheduler=["rr"],
        n=[1],
        bytes=[1_000_000],
        mode=["probe", "udp", "downlink", "uplink", "round"],
    ),
}
# The far distance (m): Friis at 2.12 GHz puts MCS ~10-16 on the downlink here (README).
LTE_FAR_M = 5000.0
# Wall seconds per simulated second (the 1 s before the start included) per (UE +
# LTE_COST_UE0), from N = 5-20 runs on the shared 2-core machine (README); used only for
# ordering and the budget check.
LTE_COST = 0.1
LTE_COST_UE0 = 10.0
# Rough aggregate TCP goodput (bit/s) down and up, by (RBs, far), for the plan only.
LTE_RATE_BPS = {
    (100, False): (70e6, 70e6),
    (50, False): (35e6, 35e6),
    (100, True): (25e6, 14e6),
    (50, True): (16e6, 10e6),
}


def lte_predicted(rbs, distance, n, nbytes, mode, runs):
    """Predicted wall seconds of one LTE configuration's ``runs`` runs."""
    down, up = LTE_RATE_BPS[(rbs, distance > 100)]
    bits = n * nbytes * 8
    transfer = {
        "downlink": bits / down,
        "uplink": bits / up,
        "round": bits / down + bits / up,
        "probe": 0.5,
        "udp": 2.5,
    }[mode]
    sim_s = 1.0 + transfer  # 1 s of attachment and RRC before the traffic start
    return runs * (0.3 + LTE_COST * sim_s * (n + LTE_COST_UE0))


def lte_done_keys(path):
    """Keys (rbs, distance, scheduler, n, bytes, mode, run, script) of rows in ``path``."""
    keys = set()
    if not os.path.exists(path):
        return keys
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            keys.add(
                (
                    int(r["rbs"]),
                    float(r["distance_m"]),
                    r["scheduler"],
                    int(r["n"]),
                    int(r["bytes"]),
                    r["mode"],
                    int(r["run"]),
                    r["script"],
                )
            )
    return keys


def lte_configs(grid, runs, far_m):
    """The grid's configurations, (cost, rbs, distance, scheduler, n, bytes, mode, runs),
    RR before PF and cheapest first within a scheduler."""
    g = LTE_GRIDS[grid]
    out = []
    for rbs, dist, sched, n, nbytes, mode in itertools.product(
        g["rbs"], g["distance"], g["scheduler"], g["n"], g["bytes"], g["mode"]
    ):
        dist = far_m if dist is None else dist
        cost = lte_predicted(rbs, dist, n, nbytes, mode, runs)
        out.append((cost, rbs, dist, sched, n, nbytes, mode, runs))
    rank = {s: i for i, s in enumerate(g["scheduler"])}
    out.sort(key=lambda c: (rank[c[3]], c[0]))
    return out


def main_lte(argv):
    """``--cell lte``: run an LTE grid through ns3_lte.py; returns the exit status."""
    import ns3_lte

    p = argparse.ArgumentParser(description="Run the ns-3 LTE validation grid")
    p.add_argument("--grid", choices=list(LTE_GRIDS), default="full")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--far-m", type=float, default=LTE_FAR_M, help="the far distance (m)")
    p.add_argument("--out", default=os.path.join(HERE, "ns3_lte.csv"))
    p.add_argument("--budget-min", type=float, default=600.0)
    p.add_argument("--shard", default="1/1", help="K/M: every M-th configuration from the K-th")
    p.add_argument("--dry-run", action="store_true", help="print the plan and its cost")
    a = p.parse_args(argv)

    configs = lte_configs(a.grid, a.runs, a.far_m)
    k, m = (int(x) for x in a.shard.split("/"))
    configs = configs[k - 1 :: m]
    total = sum(c[0] for c in configs)
    print(
        f"lte grid {a.grid}: {len(configs)} configurations,"
        f" {sum(c[7] for c in configs)} runs, predicted {total / 60:.0f} min",
        flush=True,
    )
    if a.dry_run:
        for c in configs:
            print(f"  {c[0]:7.0f} s  {c[1]}RB d={c[2]:g} {c[3]} n={c[4]} bytes={c[5]} {c[6]}")
        return 0

    t0 = time.time()
    ns3_lte.load()
    sid = ns3_lte.script_id()
    have = lte_done_keys(a.out)
    ran, skipped = 0, []
    for pred, rbs, dist, sched, n, nbytes, mode, runs in configs:
        key = (rbs, dist, sched, n, nbytes, mode)
        todo = [r for r in range(1, runs + 1) if (*key, r, sid) not in have]
        if not todo:
            continue
        if time.time() - t0 + pred * len(todo) / runs > a.budget_min * 60:
            skipped.append(key)
            continue
        c0 = time.time()
        lasts = []
        for run in todo:
            row = ns3_lte.run_one(rbs, dist, sched, n, nbytes, mode, run)
            ns3_lte.append_rows(a.out, [row])
            lasts.append(row["last_s"])
            ran += 1
        shown = ",".join(f"{x:.4f}" if x != "" else "NA" for x in lasts)
        print(
            f"{rbs}RB d={dist:g} {sched} n={n:2d} bytes={nbytes:8d} {mode:8s} runs={len(todo)}"
            f" last={shown} rto={row['tcp_rto']} mcs={row['dl_mcs']}/{row['ul_mcs']}"
            f" ({time.time() - c0:.1f} s wall, predicted {pred:.1f})",
            flush=True,
        )

    return record_invocation(
        a.out,
        ns3_lte.ns3_version(),
        sid,
        {
            "grid": a.grid,
            "grid_spec": LTE_GRIDS[a.grid],
            "far_m": a.far_m,
            "runs": a.runs,
            "shard": a.shard,
        },
        ran,
        skipped,
        time.time() - t0,
    )


def record_invocation(
    out: str, version: str, script: str, invocation: dict, ran: int, skipped: list, wall: float
) -> int:
    """Append one invocation (its settings, runs done, configurations skipped for the budget,
    wall seconds, date and host) to ``out``'s ``.meta.json``, say so; returns the exit code 0."""
    meta_path = out + ".meta.json"
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {"invocations": []}
    meta["ns3_version"] = version
    meta["script"] = script
    meta["invocations"].append(
        {
            **invocation,
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


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    cell = argparse.ArgumentParser(add_help=False)
    cell.add_argument("--cell", choices=["wifi", "lte"], default="wifi")
    known, argv = cell.parse_known_args(argv)
    if known.cell == "lte":
        return main_lte(argv)
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

    return record_invocation(
        a.out,
        ns3_wifi.ns3_version(),
        sid,
        {
            "grid": a.grid,
            "grid_spec": dict(g),
            "runs": a.runs,
            "arp": a.arp,
            "shard": a.shard,
            "small_runs": a.small_runs,
        },
        ran,
        skipped,
        time.time() - t0,
    )


if __name__ == "__main__":
    sys.exit(main())
