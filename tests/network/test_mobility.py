"""Moving devices and handover (edgesim/network/mobility.py) against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from edgesim.cli import main
from edgesim.network import NS_PER_S
from edgesim.network.build import Network
from edgesim.network.links import ShannonLink
from edgesim.network.mobility import Mobility, MobilityConfig
from edgesim.network.radio import RadioConfig
from edgesim.network.server import NetworkServer
from edgesim.scenario import from_dict
from edgesim.simulate import run
from tests.helpers import write


def _trace(tmp_path, text: str):
    path = tmp_path / "moves.ns_movements"
    path.write_text(text)
    return str(path)


def test_a_device_moving_away_sees_the_shannon_rate_of_each_distance(tmp_path):
    # one device at 50 m from the access point (at the origin), leaving at 10 m/s along x
    trace = _trace(tmp_path, '$node_(0) set X_ 50.0\n$node_(0) set Y_ 0.0\n'
                             '$ns_ at 0.0 "$node_(0) setdest 450.0 0.0 10.0"\n')  # fmt: skip
    cfg = RadioConfig(model="shannon", shadowing_db=0.0)
    m = Mobility(MobilityConfig(model="trace", trace_path=trace), np.zeros((1, 2)),
                 ((-500, -500), (500, 500)), np.random.default_rng(0))  # fmt: skip
    link = ShannonLink(cfg, np.array([50.0]), "up", np.random.default_rng(0))
    for t in (0.0, 3.0, 12.5, 39.9, 45.0):
        x = m.position(np.array([0]), round(t * NS_PER_S))[0]
        expected_x = min(50 + 10 * t, 450.0)
        assert x == pytest.approx([expected_x, 0.0])
        static = ShannonLink(cfg, np.array([expected_x]), "up", np.random.default_rng(0))
        sent = link.send(np.array([0]), np.array([10_000]), None, distance_m=np.array([x[0]]))
        assert sent.airtime_ns[0] == round(80_000 * NS_PER_S / static.rate_bps[0])


def test_a_run_on_a_moving_device_follows_the_distance_round_by_round(tmp_path):
    # each round: downlink at the distance when it starts, uplink at the distance when it starts
    trace = _trace(tmp_path, '$node_(0) set X_ 40.0\n$node_(0) set Y_ 0.0\n'
                             '$ns_ at 0.0 "$node_(0) setdest 490.0 0.0 20.0"\n')  # fmt: skip
    S = 200_064
    raw = {
        "agents": {"count": 1},
        "data": {"samples": 20},
        "mechanism": {"kind": "fedavg", "phase1_rounds": 6},
        "network": {
            "fidelity": "batched",
            "model_bytes": S - 64,
            "radio": {"model": "shannon", "shadowing_db": 0.0, "latency_s": 0.0},
            "backhaul": {"hops": 0},
            "compute": {"seconds": 0.5},
            "mobility": {"model": "trace", "trace_path": trace},
        },
    }
    result = run(from_dict(raw))
    cfg = RadioConfig(model="shannon", shadowing_db=0.0)

    def air(direction, x):
        link = ShannonLink(cfg, np.array([x]), direction, np.random.default_rng(0))
        return round(8 * S * NS_PER_S / link.rate_bps[0])

    t = 0
    for _ in range(6):
        down = air("down", 40 + 20 * t / NS_PER_S)
        t_up = t + down + round(0.5 * NS_PER_S)
        t = t_up + air("up", 40 + 20 * t_up / NS_PER_S)
    assert round(result["sim_time_s"]["total"] * NS_PER_S) == t


def test_random_waypoint_stays_in_the_area_with_uniform_leg_speeds():
    lo, hi, vmin, vmax = np.array([0.0, -50.0]), np.array([300.0, 250.0]), 0.5, 4.0
    cfg = MobilityConfig(model="random-waypoint", speed_min_mps=vmin, speed_max_mps=vmax)
    K = 200
    start = np.random.default_rng(1).uniform(lo, hi, (K, 2))
    m = Mobility(cfg, start, (lo, hi), np.random.default_rng(2))
    step, horizon = 5, 20_000
    prev = m.position(np.arange(K), 0)
    path, legs = 0.0, {}
    for t in range(step, horizon + 1, step):
        xy = m.position(np.arange(K), t * NS_PER_S)
        assert (xy >= lo - 1e-9).all() and (xy <= hi + 1e-9).all()
        path += np.hypot(*(xy - prev).T).sum()
        prev = xy
        # each device's current leg: its speed is its length over its duration
        speed = np.hypot(*(m.dst - m.src).T) / (m.t_arrive - m.t_start)
        legs.update(zip(zip(range(K), m.t_start.tolist(), strict=True), speed, strict=True))
    speeds = np.array(list(legs.values()))
    assert speeds.size > 5 * K
    assert speeds.min() >= vmin and speeds.max() <= vmax
    assert stats.kstest(speeds, stats.uniform(vmin, vmax - vmin).cdf).pvalue > 0.01
    # the time-averaged speed tends to (v_max - v_min) / ln(v_max / v_min), not the mean speed
    # (sampling every 5 s cuts corners at the waypoints: a slight underestimate)
    expected = (vmax - vmin) / math.log(vmax / vmin)
    assert path / (K * horizon) == pytest.approx(expected, rel=0.03)
    assert abs(path / (K * horizon) - (vmin + vmax) / 2) > 0.2  # and is not the mean speed


def _two_cells(tmp_path, fidelity="batched"):
    # access points at x = 0 and x = 200 (cells of radius 100); a device walks from x = 20 to
    # x = 180 at 2 m/s: the nearest access point changes at x = 100, t = 40 s
    trace = _trace(tmp_path, '$node_(0) set X_ 20.0\n$node_(0) set Y_ 0.0\n'
                             '$ns_ at 0.0 "$node_(0) setdest 180.0 0.0 2.0"\n'
                             '$node_(1) set X_ 10.0\n$node_(1) set Y_ 5.0\n')  # fmt: skip
    return {
        "agents": {"count": 2},
        "data": {"samples": 20},
        "mechanism": {"kind": "fedavg", "phase1_rounds": 25},
        "network": {
            "fidelity": fidelity,
            "radio": {"model": "shannon", "shadowing_db": 0.0},
            "topology": {"access_points": 2, "cell_radius_m": 100.0},
            "compute": {"seconds": 3.0},
            "mobility": {"model": "trace", "trace_path": trace},
        },
    }


def test_handover_at_the_boundary_and_in_flight_messages_finish_on_the_old_cell(tmp_path):
    sc = from_dict(_two_cells(tmp_path))
    net = Network(sc.network, np.array([10, 10]), np.random.SeedSequence(0))
    server = NetworkServer(net, None, np.arange(2))
    for t_s, cell in ((0.0, 0), (39.9, 0), (40.1, 1), (80.0, 1)):
        server._attach(np.array([0, 1]), round(t_s * NS_PER_S))
        assert net.topology.ap_of.tolist() == [cell, 0], t_s
    assert server.handovers == 1
    # the cell a message uses is the one at its exchange's start: a distance measured later
    # (the uplink after crossing) is still to that cell's access point
    server2 = NetworkServer(Network(sc.network, np.array([10, 10]), np.random.SeedSequence(0)),
                            None, np.arange(2))  # fmt: skip
    server2._attach(np.array([0]), round(39.0 * NS_PER_S))
    later = server2._distance(np.array([0]), np.array([round(41.0 * NS_PER_S)]))
    assert later[0] == pytest.approx(20 + 2 * 41.0)  # to the old access point at x = 0
    result = run(sc)
    assert result["network"]["handovers"] == 1


def test_events_and_batched_agree_with_moving_devices(tmp_path):
    texts = []
    for fidelity in ("events", "batched"):
        raw = {
            "agents": {"count": 30},
            "mechanism": {
                "kind": "ffl",
                "phase1_rounds": 4,
                "phase2_rounds": 2,
                "phase2_check": False,
            },
            "network": {
                "fidelity": fidelity,
                "radio": {"model": "shannon", "loss": "bernoulli", "loss_prob": 0.1},
                "topology": {"access_points": 3, "cell_radius_m": 100.0},
                "compute": {"model": "shifted-exponential"},
                "mobility": {"model": "random-waypoint", "speed_min_mps": 5, "speed_max_mps": 20},
            },
        }
        r = run(from_dict(raw))
        r["scenario"]["network"]["fidelity"] = r["network"]["fidelity"] = "(either)"
        texts.append(r)
    assert texts[0] == texts[1]


@pytest.mark.parametrize(
    "text, where",
    [
        ('$node_(0) set X_ 1.0\n$node_(0) set Y_ 1.0\n$node_(5) set X_ 1.0\n', ":3: node 5"),
        ('$node_(0) set X_ 1.0\n$node_(0) set Y_ 1.0\n$node_(0) jump 3\n', ":3: not an ns-2"),
        ('$node_(0) set X_ 1.0\n$node_(0) set Y_ abc\n', ":2: not a number"),
        ('$node_(0) set X_ 1.0\n$node_(0) set Y_ 1.0\n'
         '$ns_ at 1.0 "$node_(0) setdest 9000.0 1.0 3.0"\n', "outside the area"),
    ],
)  # fmt: skip
def test_bad_traces_exit_2_naming_the_file_and_line(tmp_path, capsys, text, where):
    trace = _trace(tmp_path, text)
    path = write(tmp_path, "[agents]\ncount = 1\n[network]\nfidelity = 'events'\n"
                           "[network.mobility]\nmodel = 'trace'\n"
                           f"trace_path = '{trace}'\n")  # fmt: skip
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "network.mobility.trace_path" in err[0] and where in err[0], err


def test_bad_speeds_exit_2(tmp_path, capsys):
    path = write(tmp_path, "[network]\nfidelity = 'events'\n[network.mobility]\n"
                           "model = 'random-waypoint'\nspeed_min_mps = 3.0\nspeed_max_mps = 1.0\n")  # fmt: skip
    assert main(["validate", str(path)]) == 2
    assert "network.mobility.speed_max_mps" in capsys.readouterr().err
