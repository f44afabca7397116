"""Wired hops that pipeline (network.backhaul.packet_bytes): packets, not whole messages.

Checked against the packet-level closed form of a message alone on a path,
and against a packet-by-packet simulation written here (each hop a FIFO of
packets; concurrent messages' packets interleaved in turn).
"""

from __future__ import annotations

import numpy as np
import pytest

from edgesim.network.topology import BackhaulConfig, Topology, TopologyConfig
from edgesim.scenario import from_dict
from edgesim.simulate import run
from tests.helpers import fedavg_round

P = 1500  # bytes: the default packet


def _path(K: int, first_bps: float, second_bps: float, latency_s: float = 0.0, **keys):
    """K devices in one cell whose path has two hops: its own (first_bps) and an
    aggregation hop (second_bps); 'up' crosses them in that order, 'down' the other way."""
    bh = BackhaulConfig(
        latency_s=latency_s, bandwidth_bps=first_bps, aggregation_bps=second_bps, **keys
    )
    return Topology(TopologyConfig(), bh, K, np.random.default_rng(0))


def _packet_level(sizes: list[int], rates: list[float], latency_ns: float, packet: int) -> list:
    """Return each message's completion (ns) over hops of ``rates`` (bit/s), packet by packet.

    Every message is at the first hop at 0; its packets (``packet`` bytes, the last one what
    remains) are sent in turn with the others' (packet j of every message, then j + 1);
    each hop serves its packets first come, first served (the order stays), and a packet
    leaves a hop after its serialisation 8 b / r, then waits the hop's latency.
    """
    pieces = []  # (message, bytes) in the order the first hop sends them
    counts = [max(1, -(-s // packet)) for s in sizes]
    for j in range(max(counts)):
        for i, s in enumerate(sizes):
            if j < counts[i]:
                pieces.append((i, min(packet, s - j * packet)))
    at = [0.0] * len(pieces)
    for r in rates:
        free = 0.0
        for x, (_, b) in enumerate(pieces):
            free = max(free, at[x]) + b * 8e9 / r
            at[x] = free + latency_ns
    done = [0.0] * len(sizes)
    for x, (i, _) in enumerate(pieces):
        done[i] = max(done[i], at[x])
    return done


@pytest.mark.parametrize("direction", ["up", "down"])
@pytest.mark.parametrize("rates", [(1e9, 1e9), (1e9, 1e8), (1e8, 1e9), (2.5e9, 4e8)])
def test_a_message_alone_over_two_hops_takes_the_packet_level_closed_form(rates, direction):
    t = _path(1, *rates, latency_s=0.001)
    order = list(rates) if direction == "up" else list(rates)[::-1]
    for packets in (1, 2, 53, 667):  # S a whole number of packets: S 8 / min r + P 8 / other
        S = packets * P
        closed = S * 8e9 / min(order) + P * 8e9 / max(order) + 2e6
        if order[0] == order[1]:
            closed = S * 8e9 / order[0] + P * 8e9 / order[1] + 2e6
        got = t.wired_ns(t.ap_of, S, 0, direction)[0]
        assert abs(got - closed) <= 2, (S, got, closed)
    for S in (64, 1499, 1501, 80_064, 800_064, 1_000_003):  # any S: the packet-by-packet walk
        reference = _packet_level([S], order, 1e6, P)[0]
        got = t.wired_ns(t.ap_of, S, 0, direction)[0]
        assert abs(got - reference) <= 2, (S, got, reference)


def test_store_and_forward_crosses_each_hop_whole():
    t = _path(1, 1e9, 1e8, latency_s=0.001, packet_bytes="message")
    S = 80_064
    assert (
        t.wired_ns(t.ap_of, S, 0, "up")[0]
        == round(S * 8 / 1e9 * 1e9) + round(S * 8 / 1e8 * 1e9) + 2_000_000
    )
    assert _packet_level([S], [1e9, 1e8], 1e6, S)[0] == pytest.approx(
        S * 8 / 1e9 * 1e9 + S * 8 / 1e8 * 1e9 + 2e6
    )


@pytest.mark.parametrize("rates", [(1e9, 1e9), (1e9, 4e8), (4e8, 1e9)])
def test_messages_sharing_the_hops_pipeline_within_a_packet_each_of_the_packet_level_walk(rates):
    # N messages leave together and share both hops (processor sharing, fluid): all finish
    # together, where packets sent in turn finish one bottleneck packet apart, the last at
    # about the same time; their first packets cross the first hop at its N-th share, so the
    # fluid model is late by at most N packets on the first hop. The shared hop no longer
    # serialises each whole message N S 8 / r after the first hop's N S 8 / r
    N = 20
    t = _path(N, *rates)
    for S in (80_064, 800_064):
        got = t.wired_ns(t.ap_of, S, 0, "up")
        reference = _packet_level([S] * N, list(rates), 0.0, P)
        assert np.all(got == got[0])
        assert max(reference) - 2 <= got[0] <= max(reference) + N * P * 8e9 / rates[0] + 2
        whole = sum(N * S * 8e9 / r for r in rates)
        assert got.max() < 0.75 * whole


def _round(N: int, fidelity: str, packet_bytes, transport: str = "ideal", compute=0.0) -> dict:
    """One FedAvg round: N devices in one 20 Mbit/s cell (round robin), a 1 Gbit/s hop, 800 kB."""
    return fedavg_round(
        N,
        {
            "fidelity": fidelity,
            "transport": transport,
            "model_bytes": 800_000,
            "radio": {"latency_s": 0.005, "bandwidth_bps": 2e7},
            "backhaul": {"hops": 1, "packet_bytes": packet_bytes},
            "compute": {"seconds": compute},
        },
    )


@pytest.mark.parametrize("fidelity", ["events", "batched"])
def test_a_round_no_longer_serialises_whole_messages_on_the_shared_hop(fidelity):
    N, S = 20, 800_064
    radio, wired = round(N * S * 8 / 2e7 * 1e9), round(N * S * 8 / 1e9 * 1e9)
    latencies = 2 * (5_000_000 + 1_000_000)
    packets = _round(N, fidelity, 1500)["sim_time_s"]["total"] * 1e9
    whole = _round(N, fidelity, "message")["sim_time_s"]["total"] * 1e9
    # store and forward: the downlinks cross the hop one after another (N S 8 / 1 Gbit/s),
    # then the cell; the replies the cell, then the hop
    assert abs(whole - (2 * radio + 2 * wired + latencies)) <= 4
    # pipelined: the cell starts on each message's first packet (N packets into the shared
    # hop, fluid), and the replies' last packets follow the cell's last by one packet
    first = round(N * P * 8 / 1e9 * 1e9)
    last_up = round((S - (S // P) * P) * 8 / 1e9 * 1e9)
    assert abs(packets - (2 * radio + first + last_up + latencies)) <= 4


@pytest.mark.parametrize("transport", ["ideal", "tcp"])
def test_pipelined_rounds_are_the_same_in_both_fidelities(transport):
    ev = _round(6, "events", 1500, transport, compute=0.01)
    ba = _round(6, "batched", 1500, transport, compute=0.01)
    assert ev["sim_time_s"] == ba["sim_time_s"]
    assert ev["communication"] == ba["communication"]


@pytest.mark.parametrize("policy", ["wait-all", "deadline"])
def test_lossy_tcp_rounds_over_pipelined_hops_are_the_same_in_both_fidelities(policy):
    # losses and ARQ, TCP's shared slow start, two cells meeting at an aggregation hop,
    # random compute times (uplinks start apart), and a deadline that cuts some replies
    def once(fidelity: str) -> dict:
        raw = {
            "agents": {"count": 12},
            "data": {"source": "synthetic", "samples": 120, "features": 5},
            "model": {"kind": "ridge", "l2": 1.0},
            "mechanism": {"kind": "fedavg", "phase1_rounds": 3, "exact_vcg": False},
            "network": {
                "fidelity": fidelity,
                "transport": "tcp",
                "model_bytes": 200_000,
                "round_policy": policy,
                "deadline_s": 0.5,
                "radio": {
                    "latency_s": 0.005,
                    "bandwidth_bps": 5e7,
                    "loss": "bernoulli",
                    "loss_prob": 0.2,
                    "arq_max_retries": 2,
                },
                "backhaul": {"hops": 2, "bandwidth_bps": 2e8, "aggregation_bps": 1e8},
                "topology": {"access_points": 2},
                "compute": {"model": "shifted-exponential", "seconds": 0.01},
            },
            "output": {"local_baseline": False},
        }
        if policy == "wait-all":
            del raw["network"]["deadline_s"]
        return run(from_dict(raw))

    ev, ba = once("events"), once("batched")
    assert ev["sim_time_s"] == ba["sim_time_s"]
    assert ev["communication"] == ba["communication"]
    assert {**ev["network"], "fidelity": "-"} == {**ba["network"], "fidelity": "-"}
    assert ev["model"] == ba["model"]
    assert ev["communication"]["retransmissions"] > 0
    assert (ev["network"]["cut"] > 0) == (policy == "deadline")


@pytest.mark.parametrize("sharing", ["processor-sharing", "fifo", "dedicated"])
def test_equal_messages_answers_kept_per_access_point_are_a_fresh_walks(sharing):
    # equal messages leaving together: under processor sharing (or none) each one's answer is
    # its access point's, kept by how many messages each access point has (an FFL Phase II
    # exchange leaves one device out); FIFO serves equal messages in turn, so there the
    # answers are kept by the devices' access points. Every answer, first or kept, is the
    # one a topology that keeps nothing computes.
    bh = BackhaulConfig(bandwidth_bps=1e8, aggregation_bps=4e8, latency_s=1e-4, sharing=sharing)
    cfg = TopologyConfig(access_points=7)
    K = 60
    kept = Topology(cfg, bh, K, np.random.default_rng(0))
    rng = np.random.default_rng(3)
    for trial in range(40):
        out = int(rng.integers(0, K))  # everyone but one device, or (one in 4) a subset
        agents = np.delete(np.arange(K), out)
        if trial % 4 == 3:
            agents = np.flatnonzero(rng.random(K) < 0.5)
        aps = kept.ap_of[agents]
        for direction in ("down", "up"):
            fresh = Topology(cfg, bh, K, np.random.default_rng(0))
            want = fresh._pipeline(aps, np.array([30_000]), np.zeros(aps.size, np.int64),
                                   np.zeros(aps.size, np.int64), direction)  # fmt: skip
            got = kept.pipeline_ns(aps, 30_000, np.zeros(aps.size, np.int64),
                                   np.zeros(aps.size, np.int64), direction)  # fmt: skip
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert len(kept._pipelines) > 0
