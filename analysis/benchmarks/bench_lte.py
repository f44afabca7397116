"""The LTE cell's cost against the default cell, per message: FedAvg and FFL (issue 30).

Run from the repository root (``edgesim`` installed)::

    python analysis/benchmarks/bench_lte.py            # K = 1e4 batched, K = 50 events
    python analysis/benchmarks/bench_lte.py --quick    # K = 1e3 batched, K = 20 events

Each case (:data:`CASES`) runs one scenario on two networks
(:data:`NETWORKS`): the default cell with the fixed link model
(``network.radio.model = "fixed"``, ``bandwidth_bps = "auto"``) and the same
cell with ``model = "lte"`` (the TS 36.213 tables; devices placed by the
default topology). The scenario is the benchmarks' synthetic ridge (10
samples of d = 20 per agent, ``l2 = 10``, ``scale_scenario.py``), without
exact VCG or the local baseline: FedAvg with its default 200 rounds at
K = 1e4 in the ``batched`` fidelity and at K = 50 in ``events``, and FFL
with Theorem 1's rounds (``epsilon = 0.1``) at K = 50 in ``events``.

What is timed is the simulation, ``Simulation.run_mechanism`` (the
mechanism over the network, the agents' reports included), not the data
and design built before it nor the JSON assembled after it. Each network
runs three times, interleaved with the other, on one Simulation built
once (the mechanism restarts its random streams, so the runs are the
same); the least time counts. The messages are the result JSON's
``communication.messages_down + messages_up``, which must be equal on both
networks. The network driver's own time (``NetworkServer.exchange``) is
printed beside it for information.

Target (issue 30): the LTE cell's time per message at most 1.5x the
default cell's, in each case. The script always exits with status 0.
"""

from __future__ import annotations

import gc
import math
import sys
import time

from instrument import accumulate, argument_parser, machine_line, met, verdict
from scale_scenario import FEATURES, SAMPLES_PER_AGENT

from edgesim import scenario
from edgesim.network.server import NetworkServer
from edgesim.simulate import Simulation, run

LTE_OVER_DEFAULT_TARGET = 1.5
REPEATS = 3

#: The two networks compared: the default cell (fixed link model) and the LTE link model.
NETWORKS = {
    "default": {"radio": {"model": "fixed"}},
    "lte": {"radio": {"model": "lte"}},
}

#: (mechanism, K, fidelity) of each case; :data:`CASES_QUICK` with ``--quick``.
CASES = [("fedavg", 10_000, "batched"), ("fedavg", 50, "events"), ("ffl", 50, "events")]
CASES_QUICK = [("fedavg", 1_000, "batched"), ("fedavg", 20, "events"), ("ffl", 20, "events")]


def lte_scenario(mechanism: str, K: int, fidelity: str, network: str) -> dict:
    """Return the scenario tables (for ``edgesim.scenario.from_dict``) of one case on one network.

    ``mechanism`` is "fedavg" (200 rounds, the default) or "ffl" (Theorem 1's rounds,
    ``epsilon = 0.1``); ``network`` a key of :data:`NETWORKS`.
    """
    mech = {"kind": mechanism, "exact_vcg": False}
    if mechanism == "ffl":
        mech |= {"phase1_rounds": "theory", "phase2_rounds": "theory", "epsilon": 0.1}
    return {
        "seed": 0,
        "data": {"source": "synthetic", "samples": SAMPLES_PER_AGENT * K, "features": FEATURES},
        "agents": {"count": K},
        "model": {"kind": "ridge", "l2": 10.0},
        "mechanism": mech,
        "output": {"local_baseline": False},
        "network": {"fidelity": fidelity, **NETWORKS[network]},
    }


def time_case(mechanism: str, K: int, fidelity: str, repeats: int = REPEATS) -> dict:
    """Run one case on both networks, ``repeats`` times each, interleaved.

    Returns, per network name, a dict: ``sim_s`` (the least seconds of
    ``run_mechanism``), ``runs_s`` (all of them), ``net_s`` (the network driver's
    seconds in that least run), ``messages`` (down + up, from the result JSON),
    ``sim_time_s`` (simulated seconds), ``per_message_s`` (``sim_s`` / messages).
    """
    sims = {}
    for network in NETWORKS:
        sc = scenario.from_dict(lte_scenario(mechanism, K, fidelity, network))
        sims[network] = (sc, Simulation(sc))
    out = {n: {"runs_s": [], "sim_s": math.inf} for n in NETWORKS}
    calls: dict = {}
    original = NetworkServer.exchange
    accumulate(NetworkServer, "exchange", calls, generator=True)
    try:
        for network, (_, sim) in sims.items():
            accumulate(sim, "run_mechanism", calls.setdefault(network, {}))
        for _ in range(repeats):
            for network, (sc, sim) in sims.items():
                acc = calls[network]["run_mechanism"]
                gc.collect()
                sim_before, net_before = acc[1], calls["exchange"][1]
                result = run(sc, sim)
                sim_s, net_s = acc[1] - sim_before, calls["exchange"][1] - net_before
                r = out[network]
                r["runs_s"].append(sim_s)
                if sim_s < r["sim_s"]:
                    r["sim_s"], r["net_s"] = sim_s, net_s
                comm = result["communication"]
                r["messages"] = comm["messages_down"] + comm["messages_up"]
                r["sim_time_s"] = result["sim_time_s"]["total"]
    finally:
        NetworkServer.exchange = original
    for r in out.values():
        r["per_message_s"] = r["sim_s"] / r["messages"]
    return out


def report_case(mechanism: str, K: int, fidelity: str, repeats: int) -> tuple[str, float, bool]:
    """Time one case (:func:`time_case`) and print its lines; returns (its label, the ratio
    LTE / default of the time per message, whether the message counts are equal)."""
    label = f"{'FedAvg' if mechanism == 'fedavg' else 'FFL'}, K = {K}, {fidelity}"
    print(f"== {label}: default cell (fixed) against model = 'lte', best of {repeats} ==")
    res = time_case(mechanism, K, fidelity, repeats)
    for network, r in res.items():
        runs = ", ".join(f"{s:.3f}" for s in r["runs_s"])
        print(
            f"  {network:>7}: {r['messages']:,} messages, simulation {r['sim_s']:.3f} s"
            f" (runs {runs}), {r['per_message_s'] * 1e6:.3f} us per message;"
            f" network driver {r['net_s']:.3f} s; simulated {r['sim_time_s']:.3f} s"
        )
    d, lte = res["default"], res["lte"]
    same = d["messages"] == lte["messages"]
    print(f"  messages: default {d['messages']:,}, lte {lte['messages']:,} (equal: {same})")
    ratio = lte["per_message_s"] / d["per_message_s"]
    net_ratio = lte["net_s"] / d["net_s"] if d["net_s"] > 0 else math.nan
    ok = ratio <= LTE_OVER_DEFAULT_TARGET
    print(
        f"  ratio lte / default per message: {ratio:.2f}x (network driver alone {net_ratio:.2f}x);"
        f" target <= {LTE_OVER_DEFAULT_TARGET}x: {met(ok)}"
    )
    print()
    return label, ratio, same


def main(argv=None) -> int:
    """Run every case, print the measurements and the PASS/FAIL lines; returns 0."""
    ap = argument_parser(__doc__)
    ap.add_argument("--quick", action="store_true", help="smoke run: K = 1e3 batched, 20 events")
    ap.add_argument("--repeats", type=int, default=REPEATS, help="runs per network (least counts)")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    print(machine_line())
    verdicts = []
    for mechanism, K, fidelity in CASES_QUICK if args.quick else CASES:
        verdicts.append(report_case(mechanism, K, fidelity, args.repeats))
    note = " (quick mode: the target is set for the full K)" if args.quick else ""
    print(f"== Verdicts{note} ==")
    for label, ratio, same in verdicts:
        ok = ratio <= LTE_OVER_DEFAULT_TARGET
        print(
            f"{verdict(ok)}: {label}, lte / default per message {ratio:.2f}x"
            f" (target <= {LTE_OVER_DEFAULT_TARGET}x)"
        )
        print(f"{verdict(same)}: {label}, the same messages on both networks")
    print(f"total benchmark time {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
