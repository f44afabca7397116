"""Steady exchanges: the plans that repeat, planned once per pair of message sizes and kept.

Most rounds of a plain scenario send the same sizes to every agent over
lossless links with devices always on; nothing about such an exchange draws
but its compute times, so its plan is computed once and reused
(:meth:`SteadyPlans._steady_plan`). The plan is the one the general path
makes (:meth:`~edgesim.network.exchange_plan.ExchangePlanning._plan_of`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from edgesim.network.compute import ComputeModel
from edgesim.network.exchange_plan import Plan
from edgesim.network.links import FixedLink, NoLoss, ShannonLink
from edgesim.network.lte import LteLink


class SteadyPlans:
    """The server's cache of steady plans (a part of :class:`~edgesim.network.server.NetworkServer`).

    Reads the server's ``net``, ``cfg``, ``devices``, ``m``, ``everyone``,
    ``always_on``, ``deadline_ns`` and ``_steady`` (the cache, a dict);
    plans with its :class:`~edgesim.network.exchange_plan.ExchangePlanning`.
    """

    def _steady_allowed(self) -> bool:
        """Whether this server's exchanges to every agent can be steady (see :meth:`_steady_plan`)."""
        net = self.net
        return (
            self.always_on
            and self.deadline_ns is None
            and not net.cells.draws
            and not (net.cells.joint and not deterministic_compute(net.compute))
            and self.cfg.downlink != "broadcast"
            and self.cfg.energy.battery_j == "none"
            and net.mobility is None
            and all(deterministic_lossless(link) for link in (net.downlink, net.uplink))
        )

    def _steady_plan(self, down_bytes, up_bytes) -> Plan | None:
        """The plan of a steady exchange, or None when this one is not steady.

        Steady: to every agent, messages of one size each way, on built-in
        lossless links, devices always on, no deadline, no scheduler that
        draws. Then everything but the compute times is the same in every
        such exchange (nothing else draws), so it is planned once per pair
        of sizes and kept; the compute times are drawn as
        :meth:`plan_exchange` draws them, and the uplinks scheduled from
        them, unless the built-in model is deterministic (then the whole plan
        repeats). The plan equals the one the general path would make (a
        test compares them); its cached arrays are shared and read-only.
        """
        up = np.asarray(up_bytes)
        if np.ndim(down_bytes) != 0 or up.ndim != 1 or up.size != self.m:
            return None
        if self.m and not (up == up[0]).all():
            return None
        key = (int(down_bytes), int(up[0]) if self.m else 0)
        if self.net.cells.joint:  # Wi-Fi: the whole exchange repeats (deterministic compute)
            if key not in self._steady:
                plan = self._plan_joint(self.everyone, down_bytes, up, True)
                self._steady[key] = dataclasses.replace(
                    plan, steady=True, end_ns=int(plan.resolve_ns.max()) if self.m else 0
                )
            return self._steady[key]
        cached = self._steady.get(key)
        if cached is None:
            cached = self._steady[key] = self._steady_template(key)
        plan, up_sizes = cached
        if plan.end_ns is not None:  # deterministic compute times: the whole plan repeats
            return plan
        compute = self.net.compute.times_ns(self.devices, self.net.rng["compute"])
        resolve = self._resolve_ns(self.devices, up_sizes, plan.arrive_ns + compute, plan.up, None)
        return dataclasses.replace(plan, compute_ns=compute, resolve_ns=resolve)

    def _steady_template(self, key: tuple[int, int]) -> tuple[Plan, np.ndarray]:
        """Plan what every steady exchange with message sizes ``key`` shares (see above).

        Returns (the plan, read-only: complete when the compute times draw
        nothing, else with zero compute times for :meth:`_steady_plan` to
        replace; each reply's size, int64 bytes).
        """
        net, m, dev = self.net, self.m, self.devices
        down_sizes, up_sizes = (np.full(m, size, dtype=np.int64) for size in key)
        down = net.downlink.send(dev, down_sizes, None)
        arrive = self._arrive_ns(dev, down_sizes, down, None)
        up = net.uplink.send(dev, up_sizes, None)
        repeats = deterministic_compute(net.compute)
        compute = net.compute.times_ns(dev, None) if repeats else np.zeros(m, dtype=np.int64)
        resolved = self._resolve_ns(dev, up_sizes, arrive + compute, up, None)
        everyone = np.ones(m, dtype=bool)
        computing = (compute, np.ones(m, dtype=np.int64))
        masks = (everyone,) * 4  # every recipient receives, is ready, sends
        plan = self._plan_of(self.everyone, down, None, arrive, computing, masks, up, resolved)
        end = (int(resolved.max()) if m else 0) if repeats else None
        plan = dataclasses.replace(plan, steady=True, end_ns=end)
        for a in (*vars(plan).values(), up_sizes):
            if isinstance(a, np.ndarray):
                a.flags.writeable = False
        return plan, up_sizes


def deterministic_compute(compute) -> bool:
    """Whether ``compute`` is a built-in model whose times draw nothing (every exchange alike)."""
    return type(compute) is ComputeModel and compute.model != "shifted-exponential"


def deterministic_lossless(link) -> bool:
    """Whether ``link`` is a built-in link without losses: its sends draw nothing, and repeat."""
    return type(link) in (FixedLink, ShannonLink, LteLink) and isinstance(link.loss, NoLoss)
