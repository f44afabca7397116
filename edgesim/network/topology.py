"""Where devices are and which path each message takes: access points, backhaul, edge server.

The infrastructure is a networkx graph: the edge server, ``access_points``
access points, and between each access point and the server a chain of
``backhaul.hops`` wired edges (intermediate switch nodes); with
``backhaul.aggregation_bps`` the chains end at an aggregation switch, joined
to the server by one hop that every cell's traffic crosses. Each edge is a
numbered wired hop (``edge`` attribute: its index in ``edge_bps`` and
``edge_latency_ns``). A message between a device and the server crosses the
device's radio hop (:mod:`edgesim.network.links`, :mod:`edgesim.network.cells`)
and then the wired path of its access point, in packets of
``backhaul.packet_bytes`` (a hop forwards a message's first packet after one
packet's serialisation, so the hops pipeline it: :meth:`Topology.pipeline_ns`;
``'message'``: store and forward); on each hop the messages of one exchange
share the hop's rate (``backhaul.sharing``: processor sharing by default, or
FIFO, or ``dedicated``: unshared, unlimited capacity), so the uploads of many
cells queue where their paths meet.

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
from typing import TYPE_CHECKING

import numpy as np

from edgesim.arrays import all_equal, column, constant, frozen_copy
from edgesim.config import option
from edgesim.errors import ScenarioError
from edgesim.network import NS_PER_S, to_ns
from edgesim.network.kept_answers import KeptAnswers
from edgesim.network.medium import finish_ns, first_packet_ns

if TYPE_CHECKING:  # networkx takes about 0.15 s to import: only where a graph is built
    import networkx as nx

SERVER = "server"
#: :meth:`Topology.pipeline_ns` keeps its answers for equal messages leaving together up to
#: this many int64 numbers in all (32 MB; one answer larger than that is kept alone).
PIPELINES_KEPT_WORDS = 1 << 22
AGGREGATION = "aggregation"


@dataclass(frozen=True)
class BackhaulConfig:
    """The ``[network.backhaul]`` table: the wired path between each access point and the server."""

    latency_s: float = option(0.001, "latency of one wired hop", unit="s", ge=0.0)
    bandwidth_bps: float = option(1e9, "bandwidth of one wired hop", unit="bit/s", gt=0.0)
    hops: int = option(
        1, "wired hops between an access point and the edge server (0: co-located)", ge=0
    )
    sharing: str = option(
        "processor-sharing",
        "how the messages crossing one wired hop in an exchange share it: 'processor-sharing'"
        " (equal shares, as TCP-fair flows), 'fifo' (one at a time, first come) or"
        " 'dedicated' (each at the full rate: an idealisation, unlimited capacity)",
        choices=("processor-sharing", "fifo", "dedicated"),
    )
    aggregation_bps: float | str = option(
        "none",
        "an aggregation switch between the access points and the edge server: every access"
        " point's path ends at the switch, and one hop of this rate (latency latency_s) that"
        " all cells share reaches the server; 'none': each path reaches the server itself",
        unit="bit/s",
        kinds=(float, int, str),
        choices=("none",),
        gt=0.0,
    )
    packet_bytes: int | str = option(
        1500,
        "the packets a message crosses the wired hops in (a 1500-byte MTU: a 1448-byte TCP"
        " segment and its headers): a hop forwards a message's first packet after one packet's"
        " serialisation, so the hops (and the radio) pipeline it; 'message': store and forward"
        " whole messages",
        unit="B",
        kinds=(int, str),
        choices=("message",),
        ge=1,
    )

    def packet(self, size_bytes: np.ndarray) -> np.ndarray:
        """Return the packet each message crosses the wired hops in (int64 bytes, shape of
        ``size_bytes``): ``packet_bytes``, or the whole message when it is smaller or
        ``packet_bytes = 'message'``."""
        size = np.asarray(size_bytes, dtype=np.int64)
        if self.packet_bytes == "message":
            return size
        return np.minimum(size, int(self.packet_bytes))

    @staticmethod
    def one_packet(size_bytes: np.ndarray, packet: np.ndarray) -> bool:
        """Whether the messages all have one size (``size_bytes`` of shape (1,), as
        :func:`~edgesim.arrays.squeezed` leaves it) of a single packet (``packet``, of
        :meth:`packet`): then the packet arithmetic has nothing to split."""
        return size_bytes.size == 1 and bool(packet[0] == size_bytes[0])

    def last_packet(self, size_bytes: np.ndarray, packet: np.ndarray) -> np.ndarray:
        """Return each message's last packet (int64 bytes): p = S - (ceil(S / P) - 1) P of its
        size S in packets P (:meth:`packet`); S itself when S <= P (one packet), 0 for S = 0."""
        size = np.asarray(size_bytes, dtype=np.int64)
        return size - (np.maximum(1, -(-size // np.maximum(packet, 1))) - 1) * packet

    def discipline(self) -> str:
        """Return the :mod:`edgesim.network.medium` discipline of a hop: 'ps', 'fifo' or 'dedicated'."""
        return {"processor-sharing": "ps"}.get(self.sharing, self.sharing)


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
        # pipeline_ns of equal messages leaving together, by inputs; _pipeline's numbers of one
        # message size (_packets, _hop), at most 64
        self._pipelines = KeptAnswers(PIPELINES_KEPT_WORDS)
        self._per_size = KeptAnswers(64)
        self._edges()
        self.graph = self._infrastructure()

    @staticmethod
    def ap_name(a: int) -> str:
        """Return the graph node name of access point ``a``."""
        return f"ap{a}"

    def _edges(self) -> None:
        """Number the wired hops: access point a's h-th hop (from the AP) is a * hops + h, the
        aggregation hop (if any) the last; ``path_edges`` (M, L) lists each path from the AP."""
        bh, M = self.backhaul, self.M
        own = np.arange(M * bh.hops, dtype=np.int64).reshape(M, bh.hops)
        rates = [float(bh.bandwidth_bps)] * (M * bh.hops)
        if bh.aggregation_bps != "none":
            own = np.column_stack([own, np.full(M, M * bh.hops, dtype=np.int64)])
            rates.append(float(bh.aggregation_bps))
        self.path_edges = own
        self.edge_bps = np.asarray(rates, dtype=np.float64)
        self.edge_latency_ns = np.full(self.edge_bps.size, to_ns(bh.latency_s), dtype=np.int64)
        # whether every access point's h-th hop is the same one (the aggregation hop), and
        # whether they all have the same rate and latency
        self._shared = [bool((own[:, h] == own[0, h]).all()) for h in range(own.shape[1])]
        self._alike = [
            bool(
                np.ptp(self.edge_bps[own[:, h]]) == 0
                and np.ptp(self.edge_latency_ns[own[:, h]]) == 0
            )
            for h in range(own.shape[1])
        ]

    def _infrastructure(self) -> nx.Graph:
        import networkx as nx

        g = nx.Graph()
        g.add_node(SERVER, kind="server")
        bh = self.backhaul
        top = SERVER
        if bh.aggregation_bps != "none":
            top = AGGREGATION
            g.add_node(AGGREGATION, kind="aggregation_switch")
            g.add_edge(AGGREGATION, SERVER, edge=int(self.M * bh.hops), kind="aggregation")
        for a in range(self.M):
            ap = self.ap_name(a)
            g.add_node(ap, kind="access_point", xy=tuple(self.ap_xy[a]))
            if bh.hops == 0:
                if top != SERVER:
                    g.add_edge(ap, top, kind="co-located")
                continue  # co-located with the edge server (or the switch): no wired hop
            chain = [ap] + [f"{ap}/switch{h}" for h in range(1, bh.hops)] + [top]
            for h, (u, v) in enumerate(nx.utils.pairwise(chain)):
                g.add_edge(u, v, edge=int(a * bh.hops + h), kind="backhaul")
        return g

    def aps_of(self, devices: np.ndarray) -> np.ndarray:
        """Return the access point of each of ``devices`` (int64, (m,)); with one access
        point a read-only view of 0 (no gather of K zeros)."""
        if self.M == 1:
            return constant(devices.size, 0)
        return self.ap_of[devices]

    def wired_ns(
        self, aps: np.ndarray, size_bytes: np.ndarray | int, start_ns: np.ndarray, direction: str
    ) -> np.ndarray:
        """Return when each message is through its wired path (int64 ns, shape (m,)).

        Message i is all at the path's start at ``start_ns[i]``, at access
        point ``aps[i]`` (``direction = 'up'``) or at the server towards it
        (``'down'``): :meth:`pipeline_ns`'s last byte. Zero hops: it is
        through at once.
        """
        return self.pipeline_ns(aps, size_bytes, start_ns, start_ns, direction)[1]

    def pipeline_ns(
        self,
        aps: np.ndarray,
        size_bytes: np.ndarray | int,
        head_ns: np.ndarray,
        tail_ns: np.ndarray,
        direction: str,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Return when each message's first packet and its last byte are through its wired
        path (two int64 ns arrays, shape (m,)).

        Message i's first packet reaches the path at ``head_ns[i]`` and its
        last byte at ``tail_ns[i]`` (equal for a message all there at once),
        from access point ``aps[i]`` (``'up'``) or the server (``'down'``).
        It crosses the hops in order, in packets of P bytes
        (:meth:`BackhaulConfig.packet`; the last one p = S - (ceil(S / P) - 1) P):
        on hop h of rate r_h its S bytes share the hop from its head's arrival
        with the call's other messages there (``sharing``,
        :mod:`edgesim.network.medium`), through at f_h, but not before its last
        byte arrived and crossed: tail_h = max(f_h, tail_(h-1) + 8 p / r_h);
        its first packet is through after P / S of its time on the hop (one
        packet's serialisation at its share; under FIFO after its wait), and
        both then wait the hop's latency. Alone, over hops of rates r_1..r_H,
        this is the packet-level closed form: the largest over the hops b of
        sum_(h<b) 8 P / r_h + 8 S / r_b + sum_(h>b) 8 p / r_h (at most
        8 S / min r + sum over the other hops of 8 P / r_h), plus the
        latencies. ``packet_bytes = 'message'``: store and forward (P = S).
        Zero hops: (head, tail) as given.
        """
        aps = np.asarray(aps, dtype=np.int64).reshape(-1)
        # views: every hop below makes new arrays (the caller's are never written)
        head = column(head_ns, aps.size)
        tail = column(tail_ns, aps.size)
        if self.path_edges.shape[1] == 0 or aps.size == 0:
            return head.copy(), tail.copy()
        sizes = column(size_bytes, aps.size)
        if not (all_equal(sizes) and all_equal(head) and all_equal(tail)):
            return self._pipeline(aps, sizes, head, tail, direction)
        # Equal messages leaving together (a round's downlink): the same answer every time.
        inputs = (direction, int(sizes[0]), int(head[0]), int(tail[0]))
        if self.M > 1 and self.backhaul.discipline() != "fifo":
            return self._pipeline_per_ap(aps, sizes, head, tail, inputs)
        key = (*inputs, aps.size if self.M == 1 else aps.tobytes())
        known = self._pipelines.get(key)
        if known is None:
            known = self._pipeline(aps, sizes, head, tail, direction)
            self._pipelines.keep(key, known, (2 if self.M == 1 else 3) * aps.size)  # (and key)
        return known[0].copy(), known[1].copy()

    def _pipeline_per_ap(self, aps, sizes, head, tail, inputs: tuple):
        """:meth:`pipeline_ns` of equal messages leaving together on hops that are not FIFO:
        under processor sharing (or no sharing) equal messages of one access point cross
        every hop together, so each message's answer is its access point's, which depends
        only on how many messages each access point has. Kept by those counts (an FFL
        Phase II exchange leaves one device out: one count set per access point, reused
        every round), as (M,) arrays; the same numbers as :meth:`_pipeline`'s."""
        counts = np.bincount(aps, minlength=self.M)
        key = (*inputs, counts.tobytes())
        known = self._pipelines.get(key)
        if known is None:
            head, tail = self._pipeline(aps, sizes, head, tail, inputs[0])
            known = (np.zeros(self.M, dtype=np.int64), np.zeros(self.M, dtype=np.int64))
            known[0][aps], known[1][aps] = head, tail
            self._pipelines.keep(key, known, 3 * self.M)
            return head, tail
        return known[0][aps], known[1][aps]

    def _pipeline(self, aps, sizes, head, tail, direction: str) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`pipeline_ns` on at least one hop and one message (int64 arrays).

        What is the same for every message (a size, a hop's rate and latency: every access
        point's h-th hop alike) is computed once, as a (1,) array broadcast against the
        messages': the same numbers as one per message.
        """
        m = aps.size
        if all_equal(sizes):
            sizes = sizes[:1]
        packet, last, one_packet = self._packets(sizes)
        ns_per_bit = 8.0 * NS_PER_S
        hops = range(self.path_edges.shape[1])
        discipline = self.backhaul.discipline()
        dedicated = discipline == "dedicated"  # (then no message waits for another)
        for h in hops if direction == "up" else reversed(hops):
            hop_edges = self.path_edges[:, h]
            shared = self._shared[h]
            if shared or self._alike[h]:
                edge = hop_edges[:1] if shared else hop_edges[aps[:1]]
                group = None if shared or dedicated else hop_edges[aps]
            else:
                edge = group = hop_edges[aps]
            rate, latency, work, idle = self._hop(edge, sizes)
            if idle:  # a hop too fast to take a ns (a 10^15 bit/s one): its latency only
                head, tail = head + latency, np.maximum(head, tail) + latency
                continue
            if one_packet and dedicated:
                # p = P = S: the first packet and the last are the message, through at once
                done = head + work
                through = tail + work
                np.maximum(through, done, out=through)
                head, tail = done, through
                head += latency
                tail += latency
                continue
            first = np.rint(packet * ns_per_bit / rate).astype(np.int64)
            work = column(work, m)
            done = finish_ns(head, work, group, discipline)
            through = np.maximum(done, tail + np.rint(last * ns_per_bit / rate).astype(np.int64))
            head = np.minimum(first_packet_ns(head, done, work, first, discipline), through)
            head, tail = head + latency, through + latency
        return head, tail

    def _packets(self, sizes: np.ndarray) -> tuple:
        """Return (packet, last packet, one packet?) of the message sizes ``sizes``
        (:meth:`BackhaulConfig.packet`, ``last_packet``, ``one_packet``); for one size (shape
        (1,): a round's messages) kept by size, as read-only copies: the same numbers."""
        size = int(sizes[0]) if sizes.size == 1 else None
        known = self._per_size.get(("packets", size)) if size is not None else None
        if known is None:
            packet = self.backhaul.packet(sizes)
            known = (packet, self.backhaul.last_packet(sizes, packet))
            known = (*known, self.backhaul.one_packet(sizes, packet))
            if size is not None:
                known = (frozen_copy(known[0]), frozen_copy(known[1]), known[2])
                self._per_size.keep(("packets", size), known)
        return known

    def _hop(self, edge: np.ndarray, sizes: np.ndarray) -> tuple:
        """Return the hop ``edge``'s (rate, latency, each message's work in ns, whether no work
        rounds to a ns) for the message sizes ``sizes``: every message's edge, or a (1,) edge
        alike for all. For one edge and one size kept (read-only), the same numbers."""
        key = ("hop", int(edge[0]), int(sizes[0])) if edge.size == 1 == sizes.size else None
        known = self._per_size.get(key) if key is not None else None
        if known is None:
            rate, latency = self.edge_bps[edge], self.edge_latency_ns[edge]
            work = np.rint(sizes * (8.0 * NS_PER_S) / rate).astype(np.int64)
            known = (rate, latency, work, not work.any())
            if key is not None:
                self._per_size.keep(key, (*(frozen_copy(a) for a in known[:3]), known[3]))
        return known

    def graph_with_devices(self) -> nx.Graph:
        """Return a copy of the graph with one node per device joined to its access point.

        Meant for inspection and plotting at small K (one node per device).
        """
        g = self.graph.copy()  # networkx is imported: the graph exists
        for k in range(self.K):
            g.add_node(f"dev{k}", kind="device", xy=tuple(self.xy_m[k]))
            ap = self.ap_name(int(self.ap_of[k]))
            g.add_edge(f"dev{k}", ap, kind="radio", distance_m=self.distance_m[k])
        return g
