"""A researcher's own link model: a fixed-rate radio hit by bursts of interference.

Each device's channel alternates between quiet and jammed (a two-state
Markov chain advanced once per message sent): jammed, the rate drops by
``SLOWDOWN`` (the interference lowers the SINR, so the transmitter falls back
to a slower modulation). Losses, ARQ and latency are those of the scenario's
``[network.radio]`` table. Use it from a scenario:

    [network.radio]
    model = "examples.bursty_link:bursty_link"
"""

from __future__ import annotations

import numpy as np

from edgesim.network.links import FixedLink, make_loss

P_JAM = 0.1  # P(quiet -> jammed) per message
P_CLEAR = 0.5  # P(jammed -> quiet) per message
SLOWDOWN = 4.0  # rate divisor while jammed


class BurstyInterferenceLink(FixedLink):
    """FixedLink whose per-device rate is divided by ``slowdown`` while its channel is jammed."""

    def __init__(self, cfg, n_endpoints: int, rng: np.random.Generator):
        super().__init__(
            cfg.latency_s,
            cfg.bandwidth_bps,
            make_loss(cfg, n_endpoints, None, rng),
            cfg.arq_max_retries,
            cfg.rto_s,
        )
        self.jammed = rng.random(n_endpoints) < P_JAM / (P_JAM + P_CLEAR)  # stationary start
        self.rng = rng

    def airtime_ns(self, endpoints, size_bytes):
        """Return each message's airtime (ns): 8 S / rate, ``SLOWDOWN`` times longer when jammed."""
        u = self.rng.random(endpoints.size)
        jam = self.jammed[endpoints]
        self.jammed[endpoints] = np.where(jam, u >= P_CLEAR, u < P_JAM)
        base = super().airtime_ns(endpoints, size_bytes)
        return np.where(jam, np.rint(base * SLOWDOWN).astype(np.int64), base)


def bursty_link(cfg, direction, distance_m, rng):
    """Link factory (the signature of ``edgesim.network.links.LinkFactory``)."""
    return BurstyInterferenceLink(cfg, len(distance_m), rng)
