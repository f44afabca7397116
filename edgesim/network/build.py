"""Assemble one simulated network from the ``[network]`` table, and run a mechanism over it.

The table is trusted: it comes from a validated scenario (``Scenario.errors``
checked every key and every rule), so the parts are looked up in their
registries and built without checking the table again.
"""

from __future__ import annotations

import numpy as np

from edgesim.network import to_ns
from edgesim.network.availability import build_availability
from edgesim.network.cells import Cells
from edgesim.network.compute import COMPUTE_MODELS
from edgesim.network.config import NetworkConfig
from edgesim.network.links import LINKS
from edgesim.network.mobility import Mobility, area_of
from edgesim.network.topology import Topology

#: Independent random streams of the network, each spawned from the run's seed, so the
#: draws of one part never shift another's (and both fidelities draw identically).
NETWORK_STREAMS = (
    "topology",
    "radio-setup",
    "links",
    "compute",
    "availability",
    "secagg",
    "mobility",
)


class Network:
    """The devices' network for one run: topology, radio links, compute, availability.

    ``cfg``: the ``[network]`` table; ``n_k``: samples per device (K,);
    ``seed_seq``: a ``numpy.random.SeedSequence`` for the network's streams.
    Placement and shadowing are drawn at construction; the per-round streams
    (``links``, ``compute``, ``availability``, ``secagg``) are drawn as the run goes.
    """

    def __init__(self, cfg: NetworkConfig, n_k: np.ndarray, seed_seq: np.random.SeedSequence):
        self.cfg = cfg
        K = int(np.asarray(n_k).size)
        self.n_k = np.asarray(n_k)
        children = seed_seq.spawn(len(NETWORK_STREAMS))
        self.rng = {
            name: np.random.default_rng(s)
            for name, s in zip(NETWORK_STREAMS, children, strict=True)
        }
        self.topology = Topology(cfg.topology, cfg.backhaul, K, self.rng["topology"])
        d = np.asarray(self.topology.distance_m, dtype=np.float64)
        link = LINKS[cfg.radio.model]
        self.uplink = link(cfg.radio, "up", d, self.rng["radio-setup"])
        self.downlink = link(cfg.radio, "down", d, self.rng["radio-setup"])
        tcp = cfg.transport == "tcp"
        self.cells = Cells(
            cfg.radio, self.topology.ap_of, self.uplink, self.downlink, tcp, cfg.tcp_initial_window
        )
        #: A device's round trip to the server: radio and wired latencies, both ways (ns); a
        #: link with a latency per direction (LTE's) gives its own.
        wired = self.topology.edge_latency_ns[self.topology.path_edges[0]].sum()
        radio = to_ns(cfg.radio.latency_s)
        up, down = (getattr(x, "latency_ns", radio) for x in (self.uplink, self.downlink))
        self.rtt_ns = int(np.max(up)) + int(np.max(down)) + 2 * int(wired)
        self.mobility = None
        if cfg.mobility.model != "static":
            t = self.topology
            area = area_of(t.ap_xy, t.cfg.cell_radius_m)
            self.mobility = Mobility(cfg.mobility, t.xy_m, area, self.rng["mobility"])
        self.compute = COMPUTE_MODELS[cfg.compute.model](cfg.compute, self.n_k, self.rng["compute"])
        self.availability = build_availability(cfg.availability, K, self.rng["availability"])
