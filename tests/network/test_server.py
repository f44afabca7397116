"""The edge server over the simulated network: conformance, timing, policies, fidelities."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from edgesim.mechanisms import BUILTIN_MECHANISMS
from edgesim.network import NS_PER_S
from edgesim.network.secagg import protocol_messages
from edgesim.network.server import NetworkServer
from edgesim.output import to_json
from edgesim.scenario import from_dict
from edgesim.simulate import run

BASE = {
    "seed": 3,
    "data": {"source": "synthetic", "samples": 300},
    "model": {"kind": "ridge", "l2": 0.1},
    "agents": {"count": 6},
    "mechanism": {
        "kind": "ffl",
        "phase1_rounds": 8,
        "phase2_rounds": 3,
        "phase2_check": False,
        "clusters": 2,
    },
    "output": {"local_baseline": False},
}
IDEAL = {  # lossless, zero latency, infinite-ish bandwidth, no compute time
    "radio": {"latency_s": 0.0, "bandwidth_bps": 1e30},
    "backhaul": {"hops": 0},
    "compute": {"seconds": 0.0},
}


def scenario(network=None, **sections):
    """Return a validated scenario: BASE with ``sections`` merged one level deep."""
    raw = copy.deepcopy(BASE)
    for name, table in sections.items():
        raw[name] = {**raw.get(name, {}), **table} if isinstance(table, dict) else table
    if network is not None:
        raw["network"] = network
    return from_dict(raw)


def without_network_keys(result: dict) -> dict:
    """Drop what legitimately differs between drivers: the echoed network table and its outputs,
    and the reference's predicted share of the run (a network run costs more)."""
    out = copy.deepcopy(result)
    out["scenario"].pop("network")
    out["model"]["exact_vcg"].pop("reason")
    for key in ("communication", "sim_time_s", "network"):
        out.pop(key, None)
    for agent in out["agents"]:
        agent.pop("network", None)
    return out


@pytest.mark.parametrize("fidelity", ["events", "batched"])
@pytest.mark.parametrize("kind", BUILTIN_MECHANISMS)
def test_ideal_network_matches_in_memory_bit_for_bit(kind, fidelity):
    mech = {"kind": kind}
    reference = run(scenario(mechanism=mech))
    networked = run(scenario({**IDEAL, "fidelity": fidelity}, mechanism=mech))
    assert without_network_keys(networked) == without_network_keys(reference)
    if kind not in ("local",):
        assert networked["network"]["exchanges"] > 0
    assert networked["sim_time_s"]["total"] == 0.0


def _bytes_per_message(p: int) -> int:
    return 64 + 8 * p


@pytest.mark.parametrize("hops", [0, 1, 2])
def test_fixed_links_time_is_closed_form(hops):
    T, latency, bandwidth, compute = 7, 0.01, 1e6, 0.005
    bh_latency, bh_bandwidth = 0.002, 1e7
    sc = scenario(
        {
            "fidelity": "events",
            "radio": {
                "latency_s": latency,
                "bandwidth_bps": bandwidth,
                "resource_blocks": "per-device",
            },
            "backhaul": {
                "hops": hops,
                "latency_s": bh_latency,
                "bandwidth_bps": bh_bandwidth,
                "sharing": "dedicated",
            },
            "compute": {"seconds": compute},
        },
        mechanism={"kind": "fedavg", "phase1_rounds": T},
    )
    result = run(sc)
    S = _bytes_per_message(result["data"]["d"] + 1)  # ridge with intercept: d + 1 parameters
    radio_ns = round(latency * NS_PER_S) + round(8 * S * NS_PER_S / bandwidth)
    hop_ns = round(bh_latency * NS_PER_S) + round(8 * S * NS_PER_S / bh_bandwidth)
    per_round = 2 * (radio_ns + hops * hop_ns) + round(compute * NS_PER_S)
    assert round(result["sim_time_s"]["total"] * NS_PER_S) == T * per_round
    assert round(result["sim_time_s"]["phase1"] * NS_PER_S) == T * per_round


@pytest.mark.parametrize("fidelity", ["events", "batched"])
@pytest.mark.parametrize("hops", [0, 2])
def test_default_shared_cell_and_backhaul_time_is_closed_form(hops, fidelity):
    # K devices share the cell's channel both ways (round robin: processor sharing) and
    # every wired hop (processor sharing): K equal messages arriving together finish
    # together, K times their lone time after arriving.
    T, K, latency, bandwidth, compute = 4, 6, 0.01, 1e6, 0.005
    bh_latency, bh_bandwidth = 0.002, 1e7
    sc = scenario(
        {
            "fidelity": fidelity,
            "radio": {"latency_s": latency, "bandwidth_bps": bandwidth},
            "backhaul": {"hops": hops, "latency_s": bh_latency, "bandwidth_bps": bh_bandwidth},
            "compute": {"seconds": compute},
        },
        mechanism={"kind": "fedavg", "phase1_rounds": T},
        agents={"count": K},
    )
    result = run(sc)
    S = _bytes_per_message(result["data"]["d"] + 1)
    radio_ns = round(latency * NS_PER_S) + K * round(8 * S * NS_PER_S / bandwidth)
    hop_ns = round(bh_latency * NS_PER_S) + K * round(8 * S * NS_PER_S / bh_bandwidth)
    per_round = 2 * (radio_ns + hops * hop_ns) + round(compute * NS_PER_S)
    assert round(result["sim_time_s"]["total"] * NS_PER_S) == T * per_round


def test_shared_uplink_round_time_end_to_end():
    # K devices, zero latency, no compute: one TDMA cell serialises the K uploads.
    K, T, B = 6, 3, 1e6
    sc = scenario(
        {
            "fidelity": "events",
            "radio": {"latency_s": 0.0, "bandwidth_bps": B, "access": "tdma"},
            "backhaul": {"hops": 0},
            "compute": {"seconds": 0.0},
        },
        mechanism={"kind": "fedavg", "phase1_rounds": T},
    )
    result = run(sc)
    S = _bytes_per_message(result["data"]["d"] + 1)
    air = round(8 * S * NS_PER_S / B)
    assert round(result["sim_time_s"]["total"] * NS_PER_S) == T * (air + K * air)


def test_ffl_message_counts_follow_the_formula_and_the_trace():
    sc = scenario({"fidelity": "events"}, mechanism={"kind": "ffl"})
    result = run(sc)
    K, T1 = result["K"], result["iterations"]["phase1"]
    T2 = result["iterations"]["phase2_per_agent"]
    # Alg. 1 lossless: K T1 + K (extra round at w*) + sum_k (K - 1) T2_k in each direction.
    expected = K * T1 + K + sum((K - 1) * t for t in T2)
    com = result["communication"]
    assert com["messages_down"] == com["messages_up"] == expected
    per_agent = [a["network"]["messages_down"] for a in result["agents"]]
    assert sum(per_agent) == expected


def test_trace_totals_agree_with_json(tmp_path):
    from edgesim.simulate import Simulation

    sc = scenario(
        {
            "fidelity": "batched",
            "radio": {"loss": "bernoulli", "loss_prob": 0.2, "arq_max_retries": 1},
        },
        mechanism={"kind": "fedavg"},
    )
    sim = Simulation(sc)
    result = run(sc, sim)
    rows = sim.last_trace.rows
    com = result["communication"]
    assert sum(rows["participants"]) == com["messages_down"]
    assert sum(rows["bytes_down"]) == com["bytes_down"]
    assert sum(rows["bytes_up"]) == com["bytes_up"]
    assert sum(rows["retransmissions"]) == com["retransmissions"]
    assert sum(rows["lost"]) + sum(rows["cut"]) == com["dropped"] > 0
    text = sim.last_trace.to_csv(tmp_path / "trace.csv")
    lines = (tmp_path / "trace.csv").read_text().splitlines()
    assert lines[0].startswith("phase,round,problem,stage,start_s,end_s")
    assert len(lines) == 1 + len(rows["phase"]) and text.count("\n") == len(lines)


def test_secure_aggregation_overhead_matches_protocol_messages():
    sc = scenario(
        {**IDEAL, "fidelity": "events", "secagg": {"masking": "skip"}},
        mechanism={"kind": "dp-ffl", "phase1_rounds": 2, "phase2_rounds": 1, "clusters": 2},
    )
    from edgesim.simulate import Simulation

    sim = Simulation(sc)
    run(sc, sim)
    rows = sim.last_trace.rows
    p = sim.design.data.d + 1
    # Every secure round: recompute its overhead from the protocol's message list.
    expected_messages = expected_bytes = 0
    for stage, n in zip(rows["stage"], rows["participants"], strict=True):
        if stage != "keys":
            continue
        for rec in protocol_messages(n, p, rekey_this_round=True):
            if not rec["replaces_upload"]:
                expected_messages += rec["messages"]
                expected_bytes += rec["bytes"]
    assert sum(rows["secagg_messages"]) == expected_messages
    assert sum(rows["secagg_bytes"]) == expected_bytes


def test_deadline_cuts_exactly_the_late_agents(monkeypatch):
    plans = []
    original = NetworkServer.plan_exchange

    def recording(self, *args, **kwargs):
        plan = original(self, *args, **kwargs)
        plans.append(plan)
        return plan

    monkeypatch.setattr(NetworkServer, "plan_exchange", recording)
    deadline = 0.03
    sc = scenario(
        {
            "fidelity": "events",
            "round_policy": "deadline",
            "deadline_s": deadline,
            "compute": {
                "model": "shifted-exponential",
                "seconds": 0.005,
                "straggler_mean_s": 0.01,
            },
        },
        mechanism={"kind": "fedavg", "phase1_rounds": 12},
    )
    from edgesim.simulate import Simulation

    sim = Simulation(sc)
    run(sc, sim)
    cut_rows = sim.last_trace.rows["cut"]
    replies = sim.last_trace.rows["replies"]
    limit = round(deadline * NS_PER_S)
    assert len(plans) == len(cut_rows)
    total_cut = 0
    for plan, cut, got in zip(plans, cut_rows, replies, strict=True):
        late = plan.resolve_ns > limit  # reply time, from the plan's draws
        assert cut == int(late.sum())
        assert got == int((~late).sum())
        total_cut += cut
    assert total_cut > 0  # the test exercises the deadline


def test_offline_devices_neither_receive_nor_reply():
    sc = scenario(
        {
            "fidelity": "batched",
            "availability": {"model": "markov", "mean_on_s": 0.05, "mean_off_s": 0.05},
        },
        mechanism={"kind": "fedavg", "phase1_rounds": 30},
    )
    result = run(sc)
    lost = result["network"]["lost"]
    down = result["communication"]["messages_down"]
    # About half the messages meet an offline device (P(on) = 1/2 at arrival and at send).
    assert 0.4 * down < lost < 0.95 * down


LOSSY = {"loss": "gilbert-elliott", "arq_max_retries": 2}
STEADY = {"model": "shannon"}  # lossless: every exchange to all agents is steady


@pytest.mark.parametrize("radio", [LOSSY, STEADY], ids=["lossy", "steady"])
@pytest.mark.parametrize("kind", ["fedavg", "ffl"])
def test_events_and_batched_give_identical_json(kind, radio):
    network = {
        "radio": radio,
        "compute": {"model": "shifted-exponential"},
        "topology": {"access_points": 3},
    }
    mech = {"kind": kind, "phase1_rounds": 5, "phase2_rounds": 1}
    agents = {"count": 200}
    data = {"source": "synthetic", "samples": 2000}
    texts = []
    for fidelity in ("events", "batched"):
        sc = scenario({**network, "fidelity": fidelity}, mechanism=mech, agents=agents, data=data)
        result = run(sc)
        result["scenario"]["network"]["fidelity"] = "(either)"
        result["network"]["fidelity"] = "(either)"
        texts.append(to_json(result))
    assert texts[0] == texts[1]
    assert ('"retransmissions": 0,' not in texts[0]) == (radio is LOSSY)  # losses happened


@pytest.mark.parametrize(
    "radio",
    [
        {"access": "round-robin", "loss": "bernoulli", "loss_prob": 0.2},
        {"access": "ofdma", "resource_blocks": 4, "loss": "bernoulli", "loss_prob": 0.2},
        {"access": "tdma", "downlink_access": "dedicated"},
    ],
    ids=["round-robin", "ofdma-waves", "tdma"],
)
def test_events_and_batched_agree_on_shared_media_with_churn_and_deadline(radio):
    network = {
        "radio": {"bandwidth_bps": 2e6, **radio},
        "backhaul": {"sharing": "fifo", "aggregation_bps": 5e6},
        "compute": {"model": "shifted-exponential"},
        "availability": {"model": "markov", "mean_on_s": 5.0, "mean_off_s": 1.0},
        "topology": {"access_points": 3},
        "round_policy": "deadline",
        "deadline_s": 0.08,
    }
    mech = {"kind": "ffl", "phase1_rounds": 6, "phase2_rounds": 1}
    texts = []
    for fidelity in ("events", "batched"):
        sc = scenario({**network, "fidelity": fidelity}, mechanism=mech, agents={"count": 60})
        result = run(sc)
        result["scenario"]["network"]["fidelity"] = "(either)"
        result["network"]["fidelity"] = "(either)"
        texts.append(to_json(result))
    assert texts[0] == texts[1]
    assert result["network"]["cut"] > 0 and result["network"]["lost"] > 0  # both happened


def test_the_events_walk_takes_an_event_per_instant_that_wakes_a_device_and_its_last(
    monkeypatch,
):
    """Landings resume no process, so the walk fires one SimPy event per instant at which a
    delivered downlink wakes a device, plus its last instant (its end), and no other."""
    from edgesim.network import events_walk

    fired, expected, instants = [], [], []
    real_walk, real_timeout = events_walk.EventsWalk._walk, events_walk.Timeout

    def walk(self, plan, t0, at_ns, wake, land):
        waking = set(at_ns[wake >= 0].tolist())
        expected.append(len(waking | {int(at_ns.max())}) if at_ns.size else 0)
        instants.append(np.unique(at_ns).size)
        return real_walk(self, plan, t0, at_ns, wake, land)

    def timeout(env, delay, value=None):
        fired.append(delay)
        return real_timeout(env, delay, value)

    monkeypatch.setattr(events_walk.EventsWalk, "_walk", walk)
    monkeypatch.setattr(events_walk, "Timeout", timeout)
    network = {"radio": LOSSY, "compute": {"model": "shifted-exponential"}, "fidelity": "events"}
    run(scenario(network, mechanism={"kind": "ffl", "phase1_rounds": 3, "phase2_rounds": 1}))
    assert len(fired) == sum(expected) > 0
    assert sum(expected) < sum(instants)  # the landings' instants were not walked


@pytest.mark.parametrize("compute", ["shifted-exponential", "per-sample"])
def test_steady_plan_equals_the_general_plan(compute):
    """The steady-exchange cache builds exactly the plan the general path draws."""
    from edgesim.network.build import Network
    from edgesim.network.compute import ComputeConfig
    from edgesim.network.config import NetworkConfig
    from edgesim.network.radio import RadioConfig
    from edgesim.network.topology import TopologyConfig

    cfg = NetworkConfig(
        radio=RadioConfig(model="shannon"),
        compute=ComputeConfig(model=compute),
        topology=TopologyConfig(access_points=3),
    )
    K = 50
    plans = []
    for general in (False, True):
        net = Network(cfg, np.arange(1, K + 1), np.random.SeedSequence(7))
        srv = NetworkServer(net, None, np.arange(K))
        assert srv.steady_ok
        agents = np.arange(K) if general else srv.everyone
        up = np.full(K, 333, dtype=np.int64)
        plans.append([srv.plan_exchange(agents, 1234, up) for _ in range(3)])
    for steady, general in zip(*plans, strict=True):
        assert steady.steady and not general.steady
        for field in (
            "received",
            "arrive_ns",
            "compute_ns",
            "sending",
            "resolve_ns",
            "reply_ok",
            "late",
        ):
            np.testing.assert_array_equal(getattr(steady, field), getattr(general, field), field)
        for field in ("attempts", "delivered", "airtime_ns", "latency_ns", "rto_ns"):
            np.testing.assert_array_equal(getattr(steady.up, field), getattr(general.up, field))
        assert (steady.down_lost, steady.down_transmissions, steady.down_retransmissions) == (
            general.down_lost,
            general.down_transmissions,
            general.down_retransmissions,
        )
    drawn = len({p.resolve_ns.tobytes() for p in plans[0]})
    assert drawn == (3 if compute == "shifted-exponential" else 1)  # drawn anew, or repeated


def test_batched_refuses_proportional_fair_naming_the_key():
    from edgesim.errors import ScenarioErrors

    radio = {"model": "shannon", "access": "proportional-fair"}
    with pytest.raises(ScenarioErrors, match="network.radio.access"):
        scenario({"fidelity": "batched", "radio": radio})
    assert np.isfinite(scenario({"fidelity": "events", "radio": radio}).seed)
    assert np.isfinite(scenario({"fidelity": "batched", "radio": {"access": "tdma"}}).seed)


def test_ffl_phase2_stops_after_T2_when_replies_go_missing():
    """A lossy round cannot certify the stopping check: problems end at T2, not at the cap."""
    network = {
        "fidelity": "batched",
        "radio": {"loss": "bernoulli", "loss_prob": 0.2, "arq_max_retries": 0},
    }
    mech = {
        "kind": "ffl",
        "phase1_rounds": 30,
        "phase2_rounds": 4,
        "phase2_check": True,
        "phase2_max_rounds": 300,
        "epsilon": 1e-6,  # a check that a lossless run would keep iterating for
    }
    sc = scenario(network, mechanism=mech, agents={"count": 30})
    result = run(sc)
    per_agent = result["iterations"]["phase2_per_agent"]
    # P(all 29 replies of a round arrive) = 0.8^29 < 0.2%: essentially every round is lossy.
    assert min(per_agent) == 4 and max(per_agent) <= 6
    assert result["mechanism_info"]["phase2_capped"] == []
    assert result["communication"]["dropped"] > 0
    network["radio"]["loss_prob"] = 0.0
    lossless = run(scenario(network, mechanism=mech, agents={"count": 30}))
    assert max(lossless["iterations"]["phase2_per_agent"]) > 6  # there the check keeps going


@pytest.mark.parametrize("policy", [{}, {"round_policy": "deadline", "deadline_s": 5.0}])
def test_cells_with_and_without_shared_uplinks_mix(policy):
    """3 blocks: the 4-device cell shares its uplink, the 3-device cell has one each; all reply."""
    network = {
        "fidelity": "events",
        "radio": {"resource_blocks": 3},
        "topology": {"access_points": 2},
        **policy,
    }
    result = run(scenario(network, agents={"count": 7}))
    c = result["communication"]
    assert c["dropped"] == 0 and c["messages_up"] == c["messages_down"] > 0
    assert result["network"]["cut"] == 0


def test_reports_computed_ahead_of_a_batched_exchange_are_the_same_bits(monkeypatch):
    """With two gradient threads a batched exchange's reports are computed on a helper thread
    while the exchange is planned (AgentSide.reports_ahead), for every recipient, and the
    repliers' rows taken after; with one thread nothing runs ahead. The JSON is the same,
    lost replies (the repliers a subset of those asked) included."""
    from edgesim.learning.segments import BLOCK_ROWS, THREAD_MIN_BLOCKS
    from edgesim.mechanisms.driver import AgentSide

    K = 16
    samples = THREAD_MIN_BLOCKS * BLOCK_ROWS + K  # a design of THREAD_MIN_BLOCKS row blocks
    sc = scenario(
        {
            "fidelity": "batched",
            "radio": {"loss": "bernoulli", "loss_prob": 0.3, "arq_max_retries": 0},
        },
        data={"samples": samples, "features": 4},
        agents={"count": K},
        mechanism={"phase1_rounds": 3, "phase2_rounds": 1},
    )
    ahead = []
    original = AgentSide.answer_ahead

    def counted(self, future, replied, got):
        ahead.append((replied.size if got is None else got.size, replied.size))
        return original(self, future, replied, got)

    monkeypatch.setattr(AgentSide, "answer_ahead", counted)
    monkeypatch.setenv("EDGESIM_THREADS", "2")
    with_helper = to_json(run(sc))
    assert ahead and any(got < asked for asked, got in ahead)  # it ran, and replies were lost
    ahead.clear()
    monkeypatch.setenv("EDGESIM_THREADS", "1")
    alone = to_json(run(sc))
    assert not ahead
    assert with_helper == alone


def test_no_reports_run_ahead_in_events_fidelity_or_with_a_strategy(monkeypatch):
    """Reports run ahead only where they are a pure function of the model (every agent
    truthful) and only in batched fidelity (the events walk holds the GIL)."""
    from edgesim.learning.segments import BLOCK_ROWS, THREAD_MIN_BLOCKS
    from edgesim.mechanisms.driver import AgentSide

    monkeypatch.setenv("EDGESIM_THREADS", "2")
    started = []
    original = AgentSide.reports_ahead

    def counted(self, step, agents):
        future = original(self, step, agents)
        started.append(future is not None)
        return future

    monkeypatch.setattr(AgentSide, "reports_ahead", counted)
    big = {"samples": THREAD_MIN_BLOCKS * BLOCK_ROWS + 8, "features": 3}
    few = {"phase1_rounds": 2, "phase2_rounds": 1}
    run(scenario({"fidelity": "events"}, data=big, agents={"count": 8}, mechanism=few))
    assert not started  # not even asked
    strategy = [{"agent": 0, "kind": "amplify", "gamma": 2.0}]
    run(
        scenario(
            {"fidelity": "batched"},
            data=big,
            agents={"count": 8, "strategy": strategy},
            mechanism=few,
        )
    )
    assert started and not any(started)
    started.clear()
    run(scenario({"fidelity": "batched"}, data=big, agents={"count": 8}, mechanism=few))
    assert any(started)
