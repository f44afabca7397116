"""Parts 3 and 4 of ``bench_network.py``: FFL runs over the network, each in a fresh process.

Part 3, one FFL run through the real scenario path
(``edgesim.scenario.from_dict`` then ``edgesim.simulate.run``), timed end to
end (data generation included): the scale scenario of ``scale_scenario.py``
(K = 1e6 agents, ridge on the ``synthetic`` source with 10 samples per agent,
d = 20, ``l2 = 10``, Theorem 1's rounds, ``exact_vcg = false``,
``local_baseline = false``) with ``network.fidelity = "batched"``;
``epsilon = 0.1`` gives T2 = 0 once K is above about 2e4 (``--quick`` runs
K = 1e4 with ``epsilon = 1`` for the same reason; with T2 > 0 every one of
the K Phase II problems runs T2 rounds over K - 1 agents). :func:`run_ffl`
prints the wall time split into its parts (data, L_g, the network driver,
the agents' reports, the rest of the mechanism, output assembly), the rounds,
the messages, the simulated seconds and the peak RSS. It runs twice
(:data:`FFL_NETWORKS`): on one cell where every device has a channel of its
own and the backhaul is unshared (the benchmark as it stood before cells had
a resource budget), and on the default cell repeated every 100 devices (10^4
cells at K = 1e6) over a shared 10 Gbit/s aggregation hop. Targets: each
under 120 s on a 2-core machine; the cells' run within 1.5x of the one-cell
run.

Part 4 times two overheads (:data:`OVERHEADS`), best of three fresh processes
each, FFL with epsilon = 1: the energy accounting (``network.energy``, on by
default) at K = 1e4 batched, and moving devices (random waypoint, 1 to
20 m/s, four Shannon cells, stragglers: shifted-exponential compute, so that
neither run repeats a cached plan) at K = 1e3 in the events fidelity.
Target: each at most 1.3x.

The child (this file run as a script, ``K --epsilon E --network NAME
[--profile]``) runs one scenario and prints its measurements as one JSON
line; ``--profile`` runs it under cProfile and prints the top functions (the
wall time then includes the profiler's overhead and is not checked).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import resource
import sys

from instrument import accumulate, peak_rss, report_to_parent, run_child, timed_simulation
from scale_scenario import ffl_scale_scenario

from edgesim.network.server import NetworkServer

CHILD_TAG = "BENCH_NETWORK_JSON "
PROFILE_TAG = "BENCH_NETWORK_PROFILE"
FFL_WALL_TARGET_S = 120.0

#: Part 3's networks: one cell in which every device has a channel of its own and the
#: backhaul is unshared (the benchmark as it stood before cells had a resource budget),
#: and the default cell (LTE 20 MHz, round robin) repeated every 100 devices, their
#: backhaul meeting at a shared 10 Gbit/s aggregation hop; then part 4's pairs (below).
FFL_NETWORKS = {
    "one cell, per-device": {
        "fidelity": "batched",
        "radio": {"resource_blocks": "per-device"},
        "backhaul": {"sharing": "dedicated"},
    },
    "cells of 100": {
        "fidelity": "batched",
        "topology": {"devices_per_cell": 100},
        "backhaul": {"aggregation_bps": 10e9},
    },
}
FFL_NETWORKS["one cell, per-device, no energy"] = {
    **FFL_NETWORKS["one cell, per-device"],
    "energy": {"model": "none"},
}
FFL_NETWORKS["events, Shannon, static"] = {
    "fidelity": "events",
    "radio": {"model": "shannon", "resource_blocks": "per-device"},
    "topology": {"access_points": 4, "cell_radius_m": 200.0},
    "compute": {"model": "shifted-exponential"},
}
FFL_NETWORKS["events, Shannon, random waypoint"] = {
    **FFL_NETWORKS["events, Shannon, static"],
    "mobility": {"model": "random-waypoint", "speed_min_mps": 1.0, "speed_max_mps": 20.0},
}
CELLS_OVER_ONE_TARGET = 1.5
#: Part 4: (what is timed, K, the network without it, the network with it); target 1.3x.
OVERHEADS = [
    ("energy accounting", 10_000, "one cell, per-device, no energy", "one cell, per-device"),
    ("mobility", 1_000, "events, Shannon, static", "events, Shannon, random waypoint"),
]
OVERHEAD_TARGET = 1.3


def ffl_scenario(K: int, epsilon: float, network: str = "one cell, per-device") -> dict:
    """Return the FFL scale scenario (``scale_scenario.py``) over one of :data:`FFL_NETWORKS`."""
    return ffl_scale_scenario(K, epsilon=epsilon, network=FFL_NETWORKS[network])


def ffl_child(K: int, epsilon: float, profile: bool, network: str) -> None:
    """Run the FFL scenario once in this (fresh) process; print its measurements as JSON.

    The clock runs from ``from_dict`` to the return of ``simulate.run``. Library
    functions are wrapped here (this process only) to split the time.
    """
    from edgesim import scenario as scenario_mod
    from edgesim.mechanisms.driver import AgentSide

    calls: dict = {}
    accumulate(NetworkServer, "exchange", calls, generator=True)
    accumulate(NetworkServer, "plan_exchange", calls)
    accumulate(AgentSide, "answer", calls)
    prof = cProfile.Profile() if profile else None
    if prof is not None:
        prof.enable()
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    result, _, t_build, wall = timed_simulation(
        lambda: scenario_mod.from_dict(ffl_scenario(K, epsilon, network)), calls
    )
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    if prof is not None:
        prof.disable()
    out = {
        "K": K,
        "n": result["data"]["n"],
        "wall_s": wall,
        "build_s": t_build,
        "calls": calls,
        "phase1": result["iterations"]["phase1"],
        "phase2_total": result["iterations"]["phase2_total"],
        "T2_target": result["mechanism_info"].get("T2_target"),
        "comm": result["communication"],
        "sim_time_s": result["sim_time_s"],
        "rss_peak": peak_rss(),
        "cpu_user_s": ru1.ru_utime - ru0.ru_utime,
        "cpu_sys_s": ru1.ru_stime - ru0.ru_stime,
        "minor_faults": ru1.ru_minflt - ru0.ru_minflt,
        "diverged": result["diverged"],
        "profiled": profile,
    }
    report_to_parent(CHILD_TAG, out)
    if prof is not None:
        for key in ("tottime", "cumulative"):
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats(key).print_stats(25)
            print(f"{PROFILE_TAG} top 25 by {key}\n{s.getvalue()}", flush=True)


def run_ffl(
    K: int, epsilon: float, profile: bool, network: str, quiet: bool = False
) -> dict | None:
    """Run :func:`ffl_child` in a subprocess and print its report (unless ``quiet``); returns
    its measurements."""
    cmd = [sys.executable, __file__, str(K), "--epsilon", repr(epsilon)]
    cmd += ["--network", network]
    cmd += ["--profile"] if profile else []
    r, proc = run_child(cmd, CHILD_TAG, f"FFL run at K = {K}")
    if r is None or quiet:
        return r
    c = r["calls"]
    mech, ans, net = c["run_mechanism"][1], c["answer"][1], c["exchange"][1]
    smooth = c["smoothness"][1]
    comm, sim_t = r["comm"], r["sim_time_s"]
    rounds = comm["rounds"]
    print(
        f"  rounds: phase I T1 = {r['phase1']} (+1 extra round at w*), T2 target ="
        f" {r['T2_target']}, phase II rounds (all problems) = {r['phase2_total']};"
        f" network rounds {rounds}"
    )
    print(
        f"  messages: down {comm['messages_down']:,}  up {comm['messages_up']:,}  bytes down"
        f" {comm['bytes_down']:,}  up {comm['bytes_up']:,}  dropped {comm['dropped']:,}"
    )
    print(
        f"  simulated time: {sim_t['total']:.4f} s (phase I {sim_t['phase1']:.4f} s,"
        f" phase II {sim_t['phase2']:.4f} s)"
    )
    note = " (under cProfile: includes its overhead)" if r["profiled"] else ""
    print(
        f"  wall {r['wall_s']:.1f} s{note} = data+design {r['build_s']:.1f} s"
        f" + L_g {smooth:.1f} s + network driver {net:.1f} s"
        f" ({c['exchange'][0]} exchanges, of which plan_exchange {c['plan_exchange'][1]:.1f} s)"
        f" + agents' reports {ans:.1f} s (agent_grads {c['agent_grads'][1]:.1f} s)"
        f" + rest of the mechanism {mech - smooth - net - ans:.1f} s"
        f" + output assembly {r['wall_s'] - r['build_s'] - mech:.1f} s"
    )
    cpu = r["cpu_user_s"] + r["cpu_sys_s"]
    print(
        f"  CPU time {cpu:.1f} s = user {r['cpu_user_s']:.1f} s + system {r['cpu_sys_s']:.1f} s"
        f" ({r['minor_faults']:,} minor page faults), {cpu / r['wall_s']:.0%} of the wall time"
        f" (under 100%: it waited for the CPU; over: BLAS threads)"
    )
    print(f"  peak RSS {r['rss_peak'] / 2**30:.2f} GiB, diverged: {r['diverged']}")
    if r["profiled"]:
        print(proc.stdout[proc.stdout.index(PROFILE_TAG) :].replace(PROFILE_TAG, "  cProfile"))
    return r


def child_main(argv=None) -> int:
    """The child's command line (``K --epsilon E --network NAME [--profile]``); returns 0."""
    ap = argparse.ArgumentParser(description="one FFL run of bench_network.py (parts 3 and 4)")
    ap.add_argument("K", type=int)
    ap.add_argument("--epsilon", type=float, required=True)
    ap.add_argument("--network", choices=sorted(FFL_NETWORKS), required=True)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)
    ffl_child(args.K, args.epsilon, args.profile, args.network)
    return 0


if __name__ == "__main__":
    sys.exit(child_main())
