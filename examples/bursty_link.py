"""A researcher's own link model: a fixed-rate radio hit by bursts of interference.

Each device's channel alternates between quiet and jammed (a two-state
Markov chain advanced once per message sent): jammed, the rate drops by
``SLOWDOWN`` (the interference lowers the SINR, so the transmitter falls back
to a slower modulation). Losses, ARQ and latency are those of the scenario's
``[network.radio]`` table. Use it from a scenario:

    [network.radio]
    model = "examples.bursty_link:bursty_link"

or register it (``edgesim.network.links.register_link``), as :func:`main`
does. Run as a script, it times one device's FedAvg rounds over the fixed
link and over the bursty one, with no latency or compute time, so the ratio
of the two is the mean airtime factor: the chain is jammed a fraction
P_JAM / (P_JAM + P_CLEAR) = 1/6 of the messages, so about
1 + (SLOWDOWN - 1) / 6 = 1.5. It prints both times and their ratio.

    python examples/bursty_link.py [rounds]      # default 1000 rounds
"""

from __future__ import annotations

import sys

import numpy as np

import edgesim
from edgesim.network.links import FixedLink, make_loss, register_link

P_JAM = 0.1  # P(quiet -> jammed) per message
P_CLEAR = 0.5  # P(jammed -> quiet) per message
SLOWDOWN = 4.0  # rate divisor while jammed


class BurstyInterferenceLink(FixedLink):
    """FixedLink whose per-device rate is divided by ``slowdown`` while its channel is jammed."""

    def __init__(self, cfg, n_endpoints: int, rng: np.random.Generator):
        super().__init__(
            cfg.latency_s,
            cfg.channel_rate_bps(),
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


def scenario(link: str, rounds: int) -> dict:
    """Return the example's scenario: one device, ``rounds`` FedAvg rounds over the link ``link``."""
    return {
        "data": {"source": "synthetic", "samples": 50},
        "model": {"kind": "ridge"},
        "agents": {"count": 1},
        "mechanism": {"kind": "fedavg", "phase1_rounds": rounds},
        "network": {
            "fidelity": "events",
            "radio": {"model": link, "latency_s": 0.0},
            "backhaul": {"hops": 0},
            "compute": {"seconds": 0.0},
        },
        "output": {"local_baseline": False},
    }


def main(argv: list[str] | None = None) -> float:
    """Time the rounds over both links (``argv``: optionally the rounds); print and return the ratio."""
    argv = sys.argv[1:] if argv is None else argv
    rounds = int(argv[0]) if argv else 1000
    register_link("bursty-interference", bursty_link, replace=True)
    times = {}
    for link in ("fixed", "bursty-interference"):
        times[link] = edgesim.run(scenario(link, rounds)).sim_time_s.total
        print(f"{link:20s} {rounds} rounds: {times[link]:.6f} s")
    ratio = times["bursty-interference"] / times["fixed"]
    print(
        f"ratio {ratio:.3f} (mean airtime factor expected: {1 + (SLOWDOWN - 1) * P_JAM / (P_JAM + P_CLEAR):.3f})"
    )
    return ratio


if __name__ == "__main__":
    main()
