"""Where devices are and which path each message takes: access points, backhaul, edge server.

The infrastructure is a networkx graph: the edge server, ``access_points``
access points, and between each access point and the server a chain of
``backhaul.hops`` wired edges (intermediate switch nodes), each edge carrying
its own :class:`~edgesim.network.links.WiredLink`. A message between a device
and the server crosses the device's radio hop (modelled in
:mod:`edgesim.network.links`) and then the wired path of its access point
(store and forward: the hops' times add up). Backhaul hops are provisioned,
lossless and not shared (a documented simplification: the radio is the
bottleneck of an edge network).

Devices are not graph nodes (a million of them would cost gigabytes); they
are arrays: ``ap_of[k]`` (the access point device k attaches to),
``distance_m[k]`` (to that access point) and ``xy_m[k]``.
:meth:`Topology.graph_with_devices` adds them for inspection when K is small.
Placement: device k belongs to cell ``k % access_points`` and sits uniformly
in the disc of radius ``cell_radius_m`` around its access point, or at the
coordinates of a CSV file (columns ``x_m,y_m``; each device attaches to the
nearest access point). Access points stand on a line, ``2 cell_radius_m``
apart; with ``devices_per_cell`` there are ceil(K / devices_per_cell) of them
on a hexagonal or square grid (:meth:`TopologyConfig.site_xy`), so the load per
cell stays fixed while K grows.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import numpy as np

from edgesim.config import option
from edgesim.errors import ScenarioError
from edgesim.network.links import WiredLink

SERVER = "server"


@dataclass(frozen=True)
class BackhaulConfig:
    """The ``[network.backhaul]`` table: the wired path between each access point and the server."""

    latency_s: float = option(0.001, "latency of one wired hop", unit="s", ge=0.0)
    bandwidth_bps: float = option(1e9, "bandwidth of one wired hop", unit="bit/s", gt=0.0)
    hops: int = option(
        1, "wired hops between an access point and the edge server (0: co-located)", ge=0
    )


@dataclass(frozen=True)
class TopologyConfig:
    """The ``[network.topology]`` table: cells and device placement."""

    access_points: int = option(1, "number of access points (cells)", ge=1)
    cell_radius_m: float = option(500.0, "cell radius", unit="m", gt=0.0)
    placement: str = option(
        "uniform-disc",
        "'uniform-disc' (device k uniform in the disc of cell k % access_points) or 'file'"
        " (coordinates from positions_path; nearest access point)",
        choices=("uniform-disc", "file"),
    )
    positions_path: str = option(
        "", "CSV with columns x_m,y_m, one row per device (placement = 'file')"
    )
    min_distance_m: float = option(
        10.0,
        "smallest device to access point distance (path-loss models need d > 0)",
        unit="m",
        ge=0.0,
    )
    devices_per_cell: int | str = option(
        "off",
        "an integer: ceil(K / devices_per_cell) access points on a grid (the load per cell held"
        " fixed while K grows; replaces access_points); 'off': access_points cells on a line",
        kinds=(int, str),
        choices=("off",),
        ge=1,
    )
    grid: str = option(
        "hexagonal",
        "devices_per_cell: the sites' layout, 'hexagonal' (rows offset by half a site) or 'square'",
        choices=("hexagonal", "square"),
    )
    inter_site_distance_m: float | str = option(
        "auto",
        "devices_per_cell: distance between neighbouring sites; 'auto' = sqrt(3) cell_radius_m"
        " (hexagonal cells of that radius tile the plane) or 2 cell_radius_m (square)",
        unit="m",
        kinds=(float, int, str),
        choices=("auto",),
        gt=0.0,
    )

    def cells(self, agents_count: int) -> int:
        """Return the number of access points for ``agents_count`` devices."""
        if self.devices_per_cell == "off":
            return self.access_points
        return -(-agents_count // int(self.devices_per_cell))

    def site_distance_m(self) -> float:
        """Return the distance between neighbouring sites (metres)."""
        if self.inter_site_distance_m != "auto":
            return float(self.inter_site_distance_m)
        return (3**0.5 if self.grid == "hexagonal" else 2.0) * self.cell_radius_m

    def site_xy(self, M: int) -> np.ndarray:
        """Return the (M, 2) coordinates of the access points, in metres.

        On a line 2 cell_radius_m apart, or with ``devices_per_cell`` on a grid
        of about sqrt(M) sites a side: square, or hexagonal (every other row
        shifted by half a site, rows sqrt(3)/2 sites apart, so that each site's
        six neighbours are one inter-site distance away).
        """
        if self.devices_per_cell == "off":
            return np.column_stack([2.0 * self.cell_radius_m * np.arange(M), np.zeros(M)])
        isd = self.site_distance_m()
        side = max(1, int(np.ceil(np.sqrt(M))))
        col, row = np.arange(M) % side, np.arange(M) // side
        if self.grid == "square":
            return np.column_stack([col * isd, row * isd])
        return np.column_stack([(col + 0.5 * (row % 2)) * isd, row * isd * 3**0.5 / 2])

    def cross_check(self, agents_count: int) -> list[ScenarioError]:
        """Return the errors of rules spanning keys: a positions file must exist and hold K rows,
        and devices_per_cell replaces access_points and the file placement."""
        if self.devices_per_cell != "off":
            if self.access_points != 1:
                return [
                    ScenarioError(
                        "network.topology.devices_per_cell",
                        f"sets the number of cells itself; leave access_points at 1 (got"
                        f" {self.access_points}), or set devices_per_cell = 'off'",
                    )
                ]
            if self.placement == "file":
                return [
                    ScenarioError(
                        "network.topology.devices_per_cell",
                        "places devices in grid cells; it does not combine with placement = 'file'",
                    )
                ]
        if self.placement != "file":
            return []
        key = "network.topology.positions_path"
        if not self.positions_path:
            return [ScenarioError(key, "placement = 'file' needs a CSV file with columns x_m,y_m")]
        try:
            xy = read_positions(self.positions_path)
        except (OSError, ValueError) as err:
            return [ScenarioError(key, f"cannot read {self.positions_path!r}: {err}")]
        if xy.shape[0] < agents_count:
            return [
                ScenarioError(key, f"has {xy.shape[0]} rows; needs one per agent ({agents_count})")
            ]
        return []


def read_positions(path: str | Path) -> np.ndarray:
    """Return device coordinates (n, 2) in metres from a CSV file with columns ``x_m,y_m``."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or not {"x_m", "y_m"} <= set(rows[0]):
        raise ValueError("expected a header with columns x_m,y_m")
    return np.array([[float(r["x_m"]), float(r["y_m"])] for r in rows])


class Topology:
    """The infrastructure graph and every device's cell, position and distance.

    ``rng`` draws the placement (two uniforms per device: radius then angle,
    in device order).
    """

    def __init__(self, cfg: TopologyConfig, backhaul: BackhaulConfig, K: int, rng):
        M = cfg.cells(K)
        self.cfg, self.backhaul, self.K, self.M = cfg, backhaul, K, M
        self.ap_xy = cfg.site_xy(M)
        if cfg.placement == "file":
            xy = read_positions(cfg.positions_path)[:K]
            d2 = ((xy[:, None, :] - self.ap_xy[None, :, :]) ** 2).sum(axis=2)
            self.ap_of = np.argmin(d2, axis=1)
        else:
            self.ap_of = np.arange(K) % M
            # Uniform in a disc: radius R sqrt(U), angle 2 pi U'.
            u = rng.random((2, K))
            r = cfg.cell_radius_m * np.sqrt(u[0])
            xy = self.ap_xy[self.ap_of] + np.column_stack(
                [r * np.cos(2 * np.pi * u[1]), r * np.sin(2 * np.pi * u[1])]
            )
        self.xy_m = xy
        d = np.sqrt(((xy - self.ap_xy[self.ap_of]) ** 2).sum(axis=1))
        self.distance_m = np.maximum(d, cfg.min_distance_m)
        self.graph = self._infrastructure()
        self.paths = [self._path_links(a) for a in range(M)]
        self._path_cache: dict[int, np.ndarray] = {}

    @staticmethod
    def ap_name(a: int) -> str:
        """Return the graph node name of access point ``a``."""
        return f"ap{a}"

    def _path_links(self, a: int) -> list:
        """Return the wired links from access point ``a`` to the server, in order."""
        if self.backhaul.hops == 0:
            return []
        path = nx.shortest_path(self.graph, self.ap_name(a), SERVER)
        return [self.graph.edges[u, v]["link"] for u, v in nx.utils.pairwise(path)]

    def _infrastructure(self) -> nx.Graph:
        g = nx.Graph()
        g.add_node(SERVER, kind="server")
        bh = self.backhaul
        for a in range(self.M):
            ap = self.ap_name(a)
            g.add_node(ap, kind="access_point", xy=tuple(self.ap_xy[a]))
            if bh.hops == 0:
                continue  # co-located with the edge server: no wired hop
            chain = [ap] + [f"{ap}/switch{h}" for h in range(1, bh.hops)] + [SERVER]
            for u, v in nx.utils.pairwise(chain):
                g.add_edge(u, v, link=WiredLink(bh.latency_s, bh.bandwidth_bps), kind="backhaul")
        return g

    def path_ns(self, size_bytes: int) -> np.ndarray:
        """Return the wired time (ns) of one message of ``size_bytes`` from each access point, (M,).

        The sum over the path's hops of each hop's latency plus transmission
        time (store and forward); zero when the access point is co-located.
        Memoised per size (a run sends few distinct sizes).
        """
        size = int(size_bytes)
        if size not in self._path_cache:
            one = np.zeros(1, dtype=np.int64)
            sizes = np.array([size], dtype=np.int64)
            self._path_cache[size] = np.array(
                [
                    sum(int(link.send(one, sizes, None).duration_ns[0]) for link in path)
                    for path in self.paths
                ],
                dtype=np.int64,
            )
        return self._path_cache[size]

    def backhaul_ns(self, aps: np.ndarray, size_bytes: np.ndarray | int) -> np.ndarray:
        """Return the wired time (ns, int64, shape (m,)) of messages of ``size_bytes`` via ``aps``."""
        aps = np.asarray(aps)
        sizes = np.asarray(size_bytes, dtype=np.int64)
        if sizes.ndim == 0 or (sizes.size and (sizes == sizes.flat[0]).all()):
            per_ap = self.path_ns(int(sizes.flat[0]) if sizes.size else 0)
            return np.full(aps.shape, per_ap[0]) if self.M == 1 else per_ap[aps]
        out = np.empty(aps.shape, dtype=np.int64)
        for size in np.unique(sizes).tolist():
            sel = sizes == size
            out[sel] = self.path_ns(size)[aps[sel]]
        return out

    def graph_with_devices(self) -> nx.Graph:
        """Return a copy of the graph with one node per device joined to its access point.

        Meant for inspection and plotting at small K (one node per device).
        """
        g = self.graph.copy()
        for k in range(self.K):
            g.add_node(f"dev{k}", kind="device", xy=tuple(self.xy_m[k]))
            ap = self.ap_name(int(self.ap_of[k]))
            g.add_edge(f"dev{k}", ap, kind="radio", distance_m=self.distance_m[k])
        return g
