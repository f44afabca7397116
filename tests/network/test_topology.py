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
