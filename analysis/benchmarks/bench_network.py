"""Network driver speed: SimPy events per message, batched against events, one FFL run at K = 1e6.

One script on purpose: its three parts print one table of ratios measured in one run.

Run from the repository root (``edgesim`` installed)::

    python analysis/benchmarks/bench_network.py                  # full: K = 1e4, FFL at K = 1e6
    python analysis/benchmarks/bench_network.py --quick          # smoke: K = 1e3 / 1e4, FFL at 1e4
    python analysis/benchmarks/bench_network.py --skip-million   # parts 1 and 2 only

Parts 1 and 2 drive :class:`~edgesim.network.server.NetworkServer` with a
trivial mechanism: a generator yielding ``Gather(ask="loss")`` to all K
devices, ``rounds`` times, answered by a stub agent side that returns the
repliers and no values. No learning happens, so only the network's own cost
is timed: planning each exchange (the vectorised draws of
``plan_exchange``), turning it into SimPy time, and the per-round
bookkeeping. The network is the default ``[network]`` table (fixed-rate
links, no loss, OFDMA with a block per device, default compute times), K
devices with 10 samples each, the same seed in every run. Each timing is the
minimum of 3 repeats (fresh network and server each time, construction not
timed; the repeats interleave the measurements so that load from other
processes hits them alike).

Part 1, ``events`` against bare SimPy. The cost per delivered message of the
``events`` fidelity is set beside two bare SimPy baselines run in the same
process on the same number of messages:

(a) one process yielding ``env.timeout(1)`` once per message: the cheapest
    way to pay one event per message (the event heap holds one entry);
(b) K concurrent long-lived processes, each yielding one timeout per message
    with random delays (1 to 5 ms, integer ns), so the heap holds about K
    entries as it does in the network (K devices, K messages in flight):
    the same event count at the same concurrency, without the network.

Target (issue 3, "Speed"): events at most 3x the bare loop. It is checked
against (a), the strict reading; the ratio to (b) is printed to show how much
of the gap is heap depth (log K per push and pop) rather than the network's
own work. The number of rounds is chosen so that the ``events`` run does
about 4e5 messages (2-4 s; 1e5 with ``--quick``).

Part 1 runs on two networks. ``default``: every device has the same link
and compute time, so all messages of a round arrive at one instant, and
``events`` (which gives the messages of one instant one shared SimPy event)
pays one device resume per message and two SimPy events per round.
``stragglers`` (:func:`network_config`): Shannon rates that differ by
device (distance, shadowing) and shifted-exponential compute times, so no
two messages share an instant: one SimPy event per message, the worst case.

Part 2, ``batched`` against ``events``: the same mechanism on the same
network in both fidelities at K = 1e4 (the ``events`` time of part 1 when
the K agree), on both networks. Both fidelities must give the same
simulated time and counters (checked). Target: ``batched`` at least 100x
faster.

Part 3, one FFL run through the real scenario path
(``edgesim.scenario.from_dict`` then ``edgesim.simulate.run``), timed end to
end (data generation included) in a fresh subprocess: K = 1e6 agents, ridge
regression on the ``synthetic`` source with 10 samples per agent, d = 20,
Theorem 1's rounds (``phase1_rounds = phase2_rounds = "theory"``),
``network.fidelity = "batched"``, ``exact_vcg = false``, ``local_baseline =
false``. The parameters follow ``bench_learning.py``: ridge ``l2 = 10``
keeps T1 near 60-80 rounds, and ``epsilon = 0.1`` gives T2 = 0 once K is above
about 2e4 (``--quick`` runs K = 1e4 with ``epsilon = 1`` for the same reason;
with T2 > 0 every one of the K Phase II problems runs T2 rounds over K - 1
agents). Prints the wall time split into its parts (data, L_g, the network
driver, the agents' reports, the rest of the mechanism, output assembly), the
rounds, the messages, the simulated seconds and the peak RSS. It runs twice
(:data:`FFL_NETWORKS`): on one cell where every device has a channel of its
own and the backhaul is unshared (the benchmark as it stood before cells had
a resource budget), and on the default cell repeated every 100 devices (10^4
cells at K = 1e6) over a shared 10 Gbit/s aggregation hop. Targets: each under
120 s on a 2-core machine; the cells' run within 1.5x of the one-cell run.

Part 4 times two overheads, best of three fresh processes each, FFL with
epsilon = 1: the energy accounting (``network.energy``, on by default) at
K = 1e4 batched, and moving devices (random waypoint, 1 to 20 m/s, four
Shannon cells, stragglers: shifted-exponential compute, so that neither run
repeats a cached plan) at K = 1e3 in the events fidelity. Target: each at
most 1.3x. ``--profile`` runs it under cProfile instead and
prints the top functions (the wall time then includes the profiler's
overhead and is not checked).

The script always exits with status 0; it prints PASS/FAIL lines and a
summary table.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import gc
import io
import json
import os
import pstats
import resource
import sys
import time

import numpy as np
import simpy
from _common import peak_rss, run_child, verdict

from edgesim.mechanisms.protocol import Gather, Replies, model_bytes, payload_bytes
from edgesim.network.build import Network
from edgesim.network.compute import ComputeConfig
from edgesim.network.config import NetworkConfig
from edgesim.network.links import RadioConfig
from edgesim.network.server import NetworkServer
from edgesim.network.topology import BackhaulConfig

SAMPLES_PER_AGENT = 10
D = 20
N_PARAMS = D + 1  # ridge with intercept
REPEATS = 3
EVENTS_MESSAGES = 400_000  # messages per events run: about 3 s
EVENTS_MESSAGES_QUICK = 100_000
EVENTS_OVER_BARE_TARGET = 3.0
WIFI_DEVICES = 50  # part 1's Wi-Fi cell
BATCHED_SPEEDUP_TARGET = 100.0
FFL_WALL_TARGET_S = 120.0
BARE_DELAY_NS = (1_000_000, 5_000_000)  # baseline (b): timeouts of 1 to 5 ms
CHILD_TAG = "BENCH_NETWORK_JSON "
PROFILE_TAG = "BENCH_NETWORK_PROFILE"


# ------------------------------------------------------------------ parts 1 and 2


class StubSide:
    """The agent side of the trivial mechanism: fixed message sizes, empty replies."""

    def download_bytes(self, step: Gather) -> int:
        """Bytes of the server's message (a model of N_PARAMS floats)."""
        return model_bytes(N_PARAMS)

    def upload_bytes(self, step: Gather, agents: np.ndarray) -> np.ndarray:
        """Bytes of each reply (one loss value), shape (m,)."""
        return np.full(agents.size, payload_bytes("loss", N_PARAMS), dtype=np.int64)

    def answer(self, step: Gather, agents: np.ndarray) -> Replies:
        """The repliers, with no values: nothing is computed."""
        return Replies(agents)


def trivial_mechanism(rounds: int):
    """A mechanism generator asking every agent for a loss ``rounds`` times; returns None."""
    w = np.zeros(N_PARAMS)
    for _ in range(rounds):
        yield Gather(w, ask="loss")
    return None


def network_config(fidelity: str, network: str) -> NetworkConfig:
    """The benchmark's networks: ``default`` or ``stragglers``.

    Both give every device a channel of its own and an unshared backhaul
    (``resource_blocks = "per-device"``, ``backhaul.sharing = "dedicated"``:
    the network as it stood before cells had a resource budget), so that the
    benchmark times the fidelity's cost per message, not a shared medium's
    schedule. ``default`` is otherwise the default table.

    ``wifi``: one 802.11ac cell (``access = "wifi"``, MCS 7): every exchange's
    contention is walked in the plan.

    ``stragglers``: Shannon-rate radio with Rayleigh fading on every
    transmission and shifted-exponential compute times (Exp mean 50 ms), so
    every message arrives at an instant of its own: the events fidelity's
    worst case (no two messages share a SimPy event).
    """
    cfg = NetworkConfig(
        fidelity=fidelity,
        radio=RadioConfig(resource_blocks="per-device"),
        backhaul=BackhaulConfig(sharing="dedicated"),
    )
    if network == "stragglers":
        cfg = dataclasses.replace(
            cfg,
            radio=RadioConfig(model="shannon", resource_blocks="per-device"),
            compute=ComputeConfig(model="shifted-exponential", straggler_mean_s=0.05),
        )
    if network == "wifi":  # one 802.11ac cell: the access point contends with its devices
        cfg = dataclasses.replace(cfg, radio=RadioConfig(access="wifi"))
    return cfg


def network_run(K: int, rounds: int, fidelity: str, seed: int = 1, network="default") -> dict:
    """Run the trivial mechanism over a fresh network; time ``NetworkServer.run`` only.

    ``network``: see :func:`network_config`. Returns the wall time (s), the
    delivered messages (down + up - dropped), the simulated end time (ns),
    the counters and how many SimPy events were scheduled in all.
    """
    net = Network(
        network_config(fidelity, network),
        np.full(K, SAMPLES_PER_AGENT),
        np.random.SeedSequence(seed),
    )
    srv = NetworkServer(net, StubSide(), np.arange(K))
    gen = trivial_mechanism(rounds)
    gc.collect()
    t0 = time.perf_counter()
    srv.run(gen)
    wall = time.perf_counter() - t0
    c = srv.counters
    return {
        "s": wall,
        "delivered": c.messages_down + c.messages_up - c.dropped,
        "dropped": c.dropped,
        "sim_ns": srv.env.now,
        "simpy_events": next(srv.env._eid),  # the queue's event counter, read after the run
        "counters": c.to_json(),
    }


def bare_loop(n: int) -> float:
    """Baseline (a): one process yielding ``env.timeout(1)`` n times; returns the wall time (s)."""
    env = simpy.Environment()

    def loop():
        for _ in range(n):
            yield env.timeout(1)

    env.process(loop())
    gc.collect()
    t0 = time.perf_counter()
    env.run()
    return time.perf_counter() - t0


def bare_processes(K: int, per_process: int, seed: int = 2) -> float:
    """Baseline (b): K processes, each yielding ``per_process`` timeouts of random delay.

    The delays (integer ns in ``BARE_DELAY_NS``) are drawn and the processes
    created before the clock starts; returns the wall time (s) of ``env.run()``.
    """
    env = simpy.Environment()
    rng = np.random.default_rng(seed)
    delays = rng.integers(*BARE_DELAY_NS, size=(K, per_process)).tolist()

    def proc(ds):
        for x in ds:
            yield env.timeout(x)

    for ds in delays:
        env.process(proc(ds))
    gc.collect()
    t0 = time.perf_counter()
    env.run()
    return time.perf_counter() - t0


def rounds_for(K: int, messages: int) -> int:
    """Rounds of the trivial mechanism giving about ``messages`` messages (2 K per round)."""
    return max(2, round(messages / (2 * K)))


def bench_events(K: int, rounds: int, network: str = "default") -> dict:
    """Part 1: events fidelity against baselines (a) and (b); minimum of REPEATS each."""
    print(
        f"== Part 1: events fidelity against bare SimPy, {network} network, K = {K},"
        f" {rounds} rounds =="
    )
    best = {"events": np.inf, "a": np.inf, "b": np.inf}
    run = None
    for _ in range(REPEATS):
        run = network_run(K, rounds, "events", network=network)
        best["events"] = min(best["events"], run["s"])
        n = run["delivered"]
        best["a"] = min(best["a"], bare_loop(n))
        best["b"] = min(best["b"], bare_processes(K, n // K))
    n = run["delivered"]
    n_b = (n // K) * K
    per = {
        "events": best["events"] / n,
        "a": best["a"] / n,
        "b": best["b"] / n_b,
    }
    print(
        f"  messages: {n:,} delivered ({run['dropped']} dropped), simulated time"
        f" {run['sim_ns'] / 1e9:.4f} s, {run['simpy_events']:,} SimPy events scheduled;"
        f" minimum of {REPEATS} repeats"
    )
    rows = [
        ("events fidelity (NetworkServer.run)", best["events"], n, per["events"]),
        ("(a) 1 process, env.timeout(1) per message", best["a"], n, per["a"]),
        (f"(b) {K} processes, 1 timeout per message", best["b"], n_b, per["b"]),
    ]
    print(f"  {'':<44} {'wall':>9} {'events':>10} {'us/event':>9}")
    for name, s, m, p in rows:
        print(f"  {name:<44} {s:>8.3f}s {m:>10,} {p * 1e6:>9.3f}")
    ratio_a = per["events"] / per["a"]
    ratio_b = per["events"] / per["b"]
    print(f"  events / (a) = {ratio_a:.2f}x   events / (b) = {ratio_b:.2f}x")
    print(
        f"  target: events <= {EVENTS_OVER_BARE_TARGET:.0f}x the bare loop, checked against (a)"
        f" (the strict reading): {'met' if ratio_a <= EVENTS_OVER_BARE_TARGET else 'not met'}"
        f"; against (b) it would be {'met' if ratio_b <= EVENTS_OVER_BARE_TARGET else 'not met'}"
    )
    return {
        "K": K,
        "rounds": rounds,
        "run": run,
        "best": best,
        "ratio_a": ratio_a,
        "ratio_b": ratio_b,
    }


def bench_batched(K: int, rounds: int, events: dict | None, network: str = "default") -> dict:
    """Part 2: batched against events on the same mechanism and network; minimum of REPEATS."""
    print(f"== Part 2: batched against events, {network} network, K = {K}, {rounds} rounds ==")
    t_events = events["best"]["events"] if events is not None else np.inf
    ev_run = events["run"] if events is not None else None
    t_batched = np.inf
    for _ in range(REPEATS):
        if events is None:
            ev_run = network_run(K, rounds, "events", network=network)
            t_events = min(t_events, ev_run["s"])
        b_run = network_run(K, rounds, "batched", network=network)
        t_batched = min(t_batched, b_run["s"])
    same = b_run["sim_ns"] == ev_run["sim_ns"] and b_run["counters"] == ev_run["counters"]
    n = b_run["delivered"]
    ratio = t_events / t_batched
    print(
        f"  events {t_events:.3f} s ({t_events / n * 1e6:.3f} us/message), batched"
        f" {t_batched * 1e3:.1f} ms ({t_batched / n * 1e9:.1f} ns/message), {n:,} messages"
    )
    print(
        f"  same simulated time and counters in both: {same}"
        f" ({b_run['sim_ns'] / 1e9:.4f} s vs {ev_run['sim_ns'] / 1e9:.4f} s)"
    )
    print(
        f"  batched speedup {ratio:.0f}x (target >= {BATCHED_SPEEDUP_TARGET:.0f}x):"
        f" {'met' if ratio >= BATCHED_SPEEDUP_TARGET else 'not met'}"
    )
    return {"K": K, "ratio": ratio, "same": same, "events_s": t_events, "batched_s": t_batched}


# ------------------------------------------------------------------ part 3: FFL at K = 1e6


#: Part 3's networks: one cell in which every device has a channel of its own and the
#: backhaul is unshared (the benchmark as it stood before cells had a resource budget),
#: and the default cell (LTE 20 MHz, round robin) repeated every CELL_DEVICES devices,
#: their backhaul meeting at a shared 10 Gbit/s aggregation hop.
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
    """The FFL scale scenario: synthetic ridge, 10 samples per agent, Theorem 1, batched,
    over one of :data:`FFL_NETWORKS`."""
    return {
        "seed": 0,
        "data": {"source": "synthetic", "samples": SAMPLES_PER_AGENT * K, "features": D},
        "agents": {"count": K},
        "model": {"kind": "ridge", "l2": 10.0},
        "mechanism": {
            "kind": "ffl",
            "phase1_rounds": "theory",
            "phase2_rounds": "theory",
            "exact_vcg": False,
            "epsilon": epsilon,
        },
        "network": FFL_NETWORKS[network],
        "output": {"local_baseline": False},
    }


def _accumulate(owner, name: str, acc: dict, generator: bool = False) -> None:
    """Replace ``owner.name`` (a function or generator function) by a timed wrapper.

    ``acc[name]`` accumulates [calls, seconds]. For a generator (a SimPy
    process step) only the time spent inside it counts, not the simulated
    waits it yields (the batched path throws nothing into these generators).
    """
    fn = getattr(owner, name)
    acc[name] = [0, 0.0]
    clock = time.perf_counter

    def wrapper(*args, **kwargs):
        t0 = clock()
        try:
            return fn(*args, **kwargs)
        finally:
            acc[name][0] += 1
            acc[name][1] += clock() - t0

    def gen_wrapper(*args, **kwargs):
        acc[name][0] += 1
        g = fn(*args, **kwargs)
        value = None
        while True:
            t0 = clock()
            try:
                event = g.send(value)
            except StopIteration as stop:
                acc[name][1] += clock() - t0
                return stop.value
            acc[name][1] += clock() - t0
            value = yield event

    setattr(owner, name, gen_wrapper if generator else wrapper)


def ffl_child(K: int, epsilon: float, profile: bool, network: str) -> None:
    """Run the FFL scenario once in this (fresh) process; print its measurements as JSON.

    The clock runs from ``from_dict`` to the return of ``simulate.run``. Library
    functions are wrapped here (this process only) to split the time.
    """
    from edgesim import scenario as scenario_mod
    from edgesim.mechanisms.driver import AgentSide
    from edgesim.simulate import Simulation, run

    calls: dict = {}
    _accumulate(NetworkServer, "exchange", calls, generator=True)
    _accumulate(NetworkServer, "plan_exchange", calls)
    _accumulate(AgentSide, "answer", calls)
    prof = cProfile.Profile() if profile else None
    if prof is not None:
        prof.enable()
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    sc = scenario_mod.from_dict(ffl_scenario(K, epsilon, network))
    sim = Simulation(sc)
    t_build = time.perf_counter() - t0
    _accumulate(sim.model, "smoothness", calls)
    _accumulate(sim.model, "agent_grads", calls)
    _accumulate(sim, "run_mechanism", calls)
    result = run(sc, sim)
    wall = time.perf_counter() - t0
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
    print(CHILD_TAG + json.dumps(out), flush=True)
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
    cmd = [sys.executable, __file__, "--child", str(K), "--epsilon", repr(epsilon)]
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


# ------------------------------------------------------------------ main


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick", action="store_true", help="smoke run: K = 1e3 (part 1), 1e4 (parts 2 and 3)"
    )
    ap.add_argument("--skip-million", action="store_true", help="skip the FFL run (part 3)")
    ap.add_argument("--skip-events", action="store_true", help="skip parts 1 and 2")
    ap.add_argument(
        "--skip-energy", action="store_true", help="skip part 4 (energy and mobility overheads)"
    )
    ap.add_argument(
        "--profile", action="store_true", help="run the FFL run under cProfile, print the top"
    )
    ap.add_argument("--ffl-agents", type=int, default=0, help="K of the FFL run (default 1e6)")
    ap.add_argument(
        "--epsilon",
        type=float,
        default=None,
        help="FFL payment accuracy (default 0.1; 1.0 with --quick, so T2 = 0 at K = 1e4)",
    )
    ap.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--network", default="one cell, per-device", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.epsilon is None:
        args.epsilon = 1.0 if args.quick else 0.1
    if args.child:
        ffl_child(args.child, args.epsilon, args.profile, args.network)
        return 0

    K1, K2, K3 = (1_000, 10_000, 10_000) if args.quick else (10_000, 10_000, 1_000_000)
    K3 = args.ffl_agents or K3
    messages = EVENTS_MESSAGES_QUICK if args.quick else EVENTS_MESSAGES
    note = " (quick mode: the targets are set for the full K)" if args.quick else ""
    t_start = time.perf_counter()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} CPUs, load average {load} (other work skews timings)")
    rows = []  # (check, measured, target, verdict)
    if not args.skip_events:
        by_network = {}
        for network in ("default", "stragglers"):
            res = by_network[network] = bench_events(K1, rounds_for(K1, messages), network)
            rows.append(
                (
                    f"events / bare loop (a), {network}, K = {K1}",
                    f"{res['ratio_a']:.2f}x",
                    "<= 3x",
                    verdict(res["ratio_a"] <= EVENTS_OVER_BARE_TARGET),
                )
            )
            rows.append(
                (
                    f"events / K processes (b), {network}, K = {K1}",
                    f"{res['ratio_b']:.2f}x",
                    "(info)",
                    "-",
                )
            )
            print()
        wifi = bench_events(WIFI_DEVICES, rounds_for(WIFI_DEVICES, messages), "wifi")
        rows.append(
            (
                f"events / bare loop (a), wifi, K = {WIFI_DEVICES}",
                f"{wifi['ratio_a']:.2f}x",
                "<= 3x",
                verdict(wifi["ratio_a"] <= EVENTS_OVER_BARE_TARGET),
            )
        )
        print()
        for network, ev in by_network.items():
            r2 = rounds_for(K2, messages) if K2 != K1 else ev["rounds"]
            ba = bench_batched(K2, r2, ev if K2 == K1 else None, network)
            rows.append(
                (
                    f"batched speedup over events, {network}, K = {K2}",
                    f"{ba['ratio']:.0f}x",
                    ">= 100x",
                    verdict(ba["ratio"] >= BATCHED_SPEEDUP_TARGET),
                )
            )
            rows.append(
                (
                    f"events and batched agree, {network}",
                    str(ba["same"]),
                    "True",
                    verdict(ba["same"]),
                )
            )
            print()
    if not args.skip_million:
        walls = {}
        for network in ("one cell, per-device", "cells of 100"):
            print(
                f"== Part 3: one FFL run, K = {K3}, {SAMPLES_PER_AGENT} samples/agent, d = {D},"
                f" Theorem 1 rounds, batched, epsilon = {args.epsilon:g}, {network}"
                " (fresh process) =="
            )
            r = run_ffl(K3, args.epsilon, args.profile, network)
            check = f"FFL run, K = {K3}, {network}"
            if r is None:
                rows.append((check, "failed", "< 120 s", "FAIL"))
            elif r["profiled"]:
                rows.append((check + " (cProfile)", f"{r['wall_s']:.1f} s", "< 120 s", "-"))
            else:
                walls[network] = r["wall_s"]
                ok = r["wall_s"] < FFL_WALL_TARGET_S
                rows.append((check, f"{r['wall_s']:.1f} s", "< 120 s", verdict(ok)))
            print()
        if len(walls) == 2:
            ratio = walls["cells of 100"] / walls["one cell, per-device"]
            rows.append(
                (
                    f"cells of 100 / one cell, K = {K3}",
                    f"{ratio:.2f}x",
                    f"<= {CELLS_OVER_ONE_TARGET}x",
                    verdict(ratio <= CELLS_OVER_ONE_TARGET),
                )
            )
    if not args.skip_energy:
        for what, K, without, with_it in OVERHEADS:
            print(f"== Part 4: {what}, FFL at K = {K}, best of 3 fresh processes each ==")
            best = {}
            for network in (without, with_it):
                walls = []
                for _ in range(3):
                    r = run_ffl(K, 1.0, False, network, quiet=True)
                    walls.append(r["wall_s"] if r else float("nan"))
                best[network] = min(walls)
                runs = ", ".join(f"{w:.2f}" for w in walls)
                print(f"  {network}: {best[network]:.2f} s (runs {runs})")
            ratio = best[with_it] / best[without]
            rows.append(
                (
                    f"{what} on / off, FFL K = {K}",
                    f"{ratio:.2f}x",
                    f"<= {OVERHEAD_TARGET}x",
                    verdict(ratio <= OVERHEAD_TARGET),
                )
            )
            print()
    print(f"== Summary{note} ==")
    width = max((len(row[0]) for row in rows), default=10)
    print(f"{'check':<{width}}  {'measured':>10}  {'target':>8}  verdict")
    for check, measured, target, v in rows:
        print(f"{check:<{width}}  {measured:>10}  {target:>8}  {v}")
    print(f"total benchmark time {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
