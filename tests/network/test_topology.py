"""Cells on a grid (network.topology.devices_per_cell): load per cell fixed while K grows."""

from __future__ import annotations

import numpy as np
import pytest

from edgesim.cli import main
from edgesim.network.topology import BackhaulConfig, Topology, TopologyConfig
from edgesim.scenario import from_dict
from edgesim.simulate import run
from tests.helpers import write


def _topology(K, **keys) -> Topology:
    return Topology(TopologyConfig(**keys), BackhaulConfig(), K, np.random.default_rng(0))


@pytest.mark.parametrize("K, per_cell", [(1, 100), (100, 100), (101, 100), (1000, 7)])
def test_cells_are_ceil_k_over_devices_per_cell_and_none_is_overloaded(K, per_cell):
    t = _topology(K, devices_per_cell=per_cell)
    assert t.M == -(-K // per_cell)
    assert np.bincount(t.ap_of, minlength=t.M).max() <= per_cell
    assert np.all(t.distance_m <= t.cfg.cell_radius_m + 1e-9)


@pytest.mark.parametrize("grid", ["hexagonal", "square"])
def test_neighbouring_sites_are_one_inter_site_distance_apart(grid):
    t = _topology(3600, devices_per_cell=100, grid=grid, cell_radius_m=200.0)
    isd = 3**0.5 * 200.0 if grid == "hexagonal" else 400.0
    xy = t.ap_xy
    d = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(axis=2))
    np.fill_diagonal(d, np.inf)
    assert np.allclose(d.min(axis=1), isd)
    interior = (d <= isd * (1 + 1e-9)).sum(axis=1)  # neighbours at one site distance
    assert interior.max() == (6 if grid == "hexagonal" else 4)


def test_off_keeps_the_line_of_access_points():
    t = _topology(10, access_points=3, cell_radius_m=100.0)
    assert t.M == 3 and np.allclose(t.ap_xy[:, 0], [0.0, 200.0, 400.0])


def test_a_run_over_grid_cells_counts_per_cell_devices():
    sc = from_dict(
        {
            "agents": {"count": 250},
            "data": {"samples": 2500},
            "mechanism": {"kind": "fedavg", "phase1_rounds": 2},
            "network": {"fidelity": "batched", "topology": {"devices_per_cell": 100}},
        }
    )
    result = run(sc)
    assert result["communication"]["messages_down"] == 2 * 250


@pytest.mark.parametrize(
    "text",
    [
        "[network.topology]\ndevices_per_cell = 0\n",
        "[network.topology]\ndevices_per_cell = 10\naccess_points = 3\n",
        "[network.topology]\ndevices_per_cell = 'many'\n",
    ],
)
def test_bad_devices_per_cell_exits_2(tmp_path, capsys, text):
    path = write(tmp_path, "[network]\nfidelity = 'batched'\n" + text)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "network.topology.devices_per_cell" in err[0], err


# ----------------------------------------------------------------------------- shared backhaul

S = 80_064  # bytes: an 80 kB model and its header


def _backhaul(K, cells=1, **keys):
    bh = BackhaulConfig(**{"latency_s": 0.0, "bandwidth_bps": 1e9, **keys})
    return Topology(TopologyConfig(access_points=cells), bh, K, np.random.default_rng(0))


@pytest.mark.parametrize("direction", ["up", "down"])
def test_n_messages_arriving_together_at_a_hop_finish_n_s_8_over_c_later(direction):
    N, C = 25, 1e9
    t = _backhaul(N)
    done = t.wired_ns(t.ap_of, S, np.full(N, 1000), direction)
    assert done.tolist() == [1000 + N * round(S * 8 / C * 1e9)] * N


def test_fifo_hop_serves_one_at_a_time_and_dedicated_none():
    N, one, packet = 5, round(S * 8 / 1e9 * 1e9), round(1500 * 8 / 1e9 * 1e9)
    fifo = _backhaul(N, sharing="fifo")
    assert fifo.wired_ns(fifo.ap_of, S, 0, "up").tolist() == [one * (i + 1) for i in range(N)]
    # two unshared hops pipeline: the second sends each packet as it comes (one packet later)
    free = _backhaul(N, sharing="dedicated", hops=2, latency_s=0.001)
    assert free.wired_ns(free.ap_of, S, 0, "up").tolist() == [one + packet + 2_000_000] * N
    # store and forward: each hop the whole message
    whole = _backhaul(N, sharing="dedicated", hops=2, latency_s=0.001, packet_bytes="message")
    assert whole.wired_ns(whole.ap_of, S, 0, "up").tolist() == [2 * (one + 1_000_000)] * N


def test_cells_queue_where_their_paths_meet():
    # 4 cells of 10 devices, each cell's own 1 Gbit/s hop, then one 2 Gbit/s aggregation hop
    t = _backhaul(40, cells=4, aggregation_bps=2e9)
    assert t.path_edges.tolist() == [[0, 4], [1, 4], [2, 4], [3, 4]]
    assert t.graph.number_of_edges() == 5
    own, shared = 10 * round(S * 8 / 1e9 * 1e9), 40 * round(S * 8 / 2e9 * 1e9)
    # pipelined, the 2 Gbit/s hop is the bottleneck both ways (4 cells would feed it at 4
    # Gbit/s, and it feeds each cell's hop at 0.5): up, each message reaches it with its
    # first packet, which crossed the own hop at a tenth of 1 Gbit/s (fluid); down, each
    # is through its own hop one last packet (564 of its 80 064 bytes) after the shared one
    first_own, last_own = 10 * 12_000, 564 * 8
    assert t.wired_ns(t.ap_of, S, 0, "up").tolist() == [first_own + shared] * 40
    assert t.wired_ns(t.ap_of, S, 0, "down").tolist() == [shared + last_own] * 40
    whole = _backhaul(40, cells=4, aggregation_bps=2e9, packet_bytes="message")
    assert whole.wired_ns(whole.ap_of, S, 0, "up").tolist() == [own + shared] * 40
    assert whole.wired_ns(whole.ap_of, S, 0, "down").tolist() == [shared + own] * 40
    alone = _backhaul(40, cells=4)
    assert alone.wired_ns(alone.ap_of, S, 0, "up").tolist() == [own] * 40


def _round_s(K: int, per_cell: int | str = "off") -> float:
    """Simulated seconds of one FedAvg round: 80 kB models, the default cell, 10 Gbit/s backhaul."""
    raw = {
        "agents": {"count": K},
        "data": {"source": "synthetic", "samples": 10 * K, "features": 20},
        "model": {"kind": "ridge", "l2": 1.0},
        "mechanism": {"kind": "fedavg", "phase1_rounds": 1},
        "network": {
            "fidelity": "batched",
            "model_bytes": 80_000,
            "backhaul": {"bandwidth_bps": 10e9, "aggregation_bps": 10e9},
            "topology": {"devices_per_cell": per_cell},
        },
        "output": {"local_baseline": False},
    }
    return run(from_dict(raw))["sim_time_s"]["total"]


def test_one_cell_slows_with_k_and_cells_growing_with_k_do_not():
    # the default cell (LTE 20 MHz, round robin) carries K models each way: K = 10^4 takes
    # about 100 times K = 10^2; with 100 devices per cell only the shared backhaul grows
    small, large = _round_s(100), _round_s(10_000)
    assert large >= 50 * small
    grown = _round_s(10_000, per_cell=100)
    assert grown < 3 * _round_s(100, per_cell=100)


def test_a_messages_packets_split_its_size():
    # S bytes in packets of P = 1500: the last is S - (ceil(S / P) - 1) P; a message of at
    # most one packet is that packet (and the packet arithmetic has nothing to split)
    bh = BackhaulConfig()
    sizes = np.array([0, 100, 1500, 1501, 3000, 3001])
    packet = bh.packet(sizes)
    assert packet.tolist() == [0, 100, 1500, 1500, 1500, 1500]
    assert bh.last_packet(sizes, packet).tolist() == [0, 100, 1500, 1, 1500, 1]
    assert BackhaulConfig.one_packet(sizes[1:2], packet[1:2])
    assert not BackhaulConfig.one_packet(sizes[3:4], packet[3:4])
    assert not BackhaulConfig.one_packet(sizes[1:3], packet[1:3])  # not one size for all
    whole = BackhaulConfig(packet_bytes="message")
    assert whole.last_packet(sizes, whole.packet(sizes)).tolist() == sizes.tolist()
