"""Parts 1 and 2 of ``bench_network.py``: the network driver's cost per message.

Both drive :class:`~edgesim.network.server.NetworkServer` with a trivial
mechanism: a generator yielding ``Gather(ask="loss")`` to all K devices,
``rounds`` times, answered by a stub agent side that returns the repliers and
no values. No learning happens, so only the network's own cost is timed:
planning each exchange (the vectorised draws of ``plan_exchange``), turning it
into SimPy time, and the per-round bookkeeping. K devices with 10 samples
each, the same seed in every run. Each timing is the minimum of 3 repeats
(fresh network and server each time, construction not timed; the repeats
interleave the measurements so that load from other processes hits them
alike).

Part 1 (:func:`bench_events`), ``events`` against bare SimPy. The cost per
delivered message of the ``events`` fidelity is set beside two bare SimPy
baselines run in the same process on the same number of messages:

(a) one process yielding ``env.timeout(1)`` once per message: the cheapest
    way to pay one event per message (the event heap holds one entry);
(b) K concurrent long-lived processes, each yielding one timeout per message
    with random delays (1 to 5 ms, integer ns), so the heap holds about K
    entries as it does in the network (K devices, K messages in flight):
    the same event count at the same concurrency, without the network.

Target (issue 3, "Speed"): events at most 3x the bare loop. It is checked
against (a), the strict reading; the ratio to (b) is printed to show how much
of the gap is heap depth (log K per push and pop) rather than the network's
own work.

Part 2 (:func:`bench_batched`), ``batched`` against ``events``: the same
mechanism on the same network in both fidelities. Both fidelities must give
the same simulated time and counters (checked). Target: ``batched`` at least
100x faster.

The networks are those of :func:`network_config`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import simpy
from instrument import met, timed_call
from scale_scenario import FEATURES, SAMPLES_PER_AGENT

from edgesim.mechanisms.protocol import Gather, Replies, model_bytes, payload_bytes
from edgesim.network.build import Network
from edgesim.network.compute import ComputeConfig
from edgesim.network.config import NetworkConfig
from edgesim.network.radio import RadioConfig
from edgesim.network.server import NetworkServer
from edgesim.network.topology import BackhaulConfig

N_PARAMS = FEATURES + 1  # ridge with intercept
REPEATS = 3
EVENTS_MESSAGES = 400_000  # messages per events run: about 3 s
EVENTS_MESSAGES_QUICK = 100_000
EVENTS_OVER_BARE_TARGET = 3.0
WIFI_DEVICES = 50  # part 1's Wi-Fi cell
BATCHED_SPEEDUP_TARGET = 100.0
BARE_DELAY_NS = (1_000_000, 5_000_000)  # baseline (b): timeouts of 1 to 5 ms


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

    def withheld(self, step: Gather, agents: np.ndarray) -> None:
        """No agent withholds a reply (every agent follows the protocol)."""
        return None

    def delays_ns(self, step: Gather, agents: np.ndarray) -> None:
        """No agent holds a reply back."""
        return None

    def reports_ahead(self, step: Gather, agents: np.ndarray) -> None:
        """Nothing is computed, so nothing runs ahead of the exchange."""
        return None


def trivial_mechanism(rounds: int):
    """A mechanism generator asking every agent for a loss ``rounds`` times; returns None."""
    w = np.zeros(N_PARAMS)
    for _ in range(rounds):
        yield Gather(w, ask="loss")
    return None


def network_config(fidelity: str, network: str) -> NetworkConfig:
    """Return one of the benchmark's networks: ``default``, ``stragglers`` or ``wifi``.

    All give every device a channel of its own and an unshared backhaul
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
    wall, _ = timed_call(lambda: srv.run(gen))
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
    return timed_call(env.run)[0]


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
    return timed_call(env.run)[0]


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
        f" (the strict reading): {met(ratio_a <= EVENTS_OVER_BARE_TARGET)}"
        f"; against (b) it would be {met(ratio_b <= EVENTS_OVER_BARE_TARGET)}"
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
        f" {met(ratio >= BATCHED_SPEEDUP_TARGET)}"
    )
    return {"K": K, "ratio": ratio, "same": same, "events_s": t_events, "batched_s": t_batched}
