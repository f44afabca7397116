"""Devices' energy: transmit, receive, idle and compute, and optional batteries.

Pure numpy (no SimPy). The server hands each exchange's per-device times to
:class:`EnergyMeter` (from the plan, so both fidelities count the same):

- transmit: ``tx_power_w`` x the airtime of every transmission the device made
  (retransmissions included; on a shared channel the airtime a device would
  take alone: its power per block is fixed, so the energy of a message does
  not depend on how many blocks it got at a time);
- receive: ``rx_power_w`` x the airtime of every transmission sent to it
  while it was online;
- compute, per local gradient: kappa x cycles_per_sample x n_k x f^2 (the CMOS
  model of Yang et al., "Energy efficient federated learning over wireless
  communication networks", IEEE TWC 2021), or ``compute_power_w`` x the
  compute time;
- idle: ``idle_power_w`` x the rest of the simulated time, while the battery lasts.

Batteries (``battery_j``): a device whose energy runs out during an exchange
is cut from it (its reply never arrives; the exchange's schedule is not
redrawn) and stays offline for good, as churn that never comes back: the
mechanisms reweight or repair as they do for churn.

Defaults: 0.2 W transmit (23 dBm, an LTE UE's maximum), 0.1 W receive, 0.01
W idle; kappa = 1e-28, 2 x 10^4 cycles per sample and 1 GHz (the middle of
Yang et al.'s ranges).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgesim.arrays import add_rows, select_rows
from edgesim.config import option


@dataclass(frozen=True)
class EnergyConfig:
    """The ``[network.energy]`` table: powers, the compute energy model and batteries."""

    model: str = option(
        "powers",
        "'powers' (energy from the powers below and the simulated times) or 'none' (not counted)",
        choices=("powers", "none"),
    )
    tx_power_w: float = option(0.2, "power while transmitting", unit="W", ge=0.0)
    rx_power_w: float = option(0.1, "power while receiving", unit="W", ge=0.0)
    idle_power_w: float = option(0.01, "power the rest of the time", unit="W", ge=0.0)
    compute: str = option(
        "cycles",
        "compute energy: 'cycles' (kappa cycles_per_sample n_k cpu_hz^2 per local gradient) or"
        " 'power' (compute_power_w times the compute time)",
        choices=("cycles", "power"),
    )
    kappa: float = option(1e-28, "cycles: effective switched capacitance of the CPU", ge=0.0)
    cycles_per_sample: float = option(2e4, "cycles: CPU cycles per sample of a gradient", ge=0.0)
    cpu_hz: float = option(1e9, "cycles: CPU frequency f", unit="Hz", gt=0.0)
    compute_power_w: float = option(1.0, "power: power while computing", unit="W", ge=0.0)
    battery_j: float | str = option(
        "none",
        "each device's battery, or 'none' (unlimited); an empty device goes offline for good",
        unit="J",
        kinds=(float, int, str),
        choices=("none",),
        gt=0.0,
    )


class EnergyMeter:
    """Per-device energy of one run (joules), and the batteries' state.

    ``cfg``: the table; ``n_k`` (m,): samples of each of the mechanism's
    agents (for the compute energy). Idle energy is derived, not accumulated:
    a device idles whenever it is alive and not busy, so its idle energy is
    ``idle_power_w`` x (its time alive - its busy time); an exchange costs
    O(its recipients) without batteries (O(all devices) with them: each
    battery is checked).
    """

    def __init__(self, cfg: EnergyConfig, n_k: np.ndarray):
        self.cfg = cfg
        m = int(np.asarray(n_k).size)
        self.per_gradient_j = cfg.kappa * cfg.cycles_per_sample * np.asarray(n_k) * cfg.cpu_hz**2
        self.parts = {name: np.zeros(m) for name in ("tx", "rx", "compute")}
        self.busy_ns = np.zeros(m)  # time transmitting, receiving or computing while alive
        self.elapsed_ns = 0  # the run's simulated time so far
        self.died_at_ns = np.full(m, -1.0)  # when each empty battery ran out (end of exchange)
        self.by_phase: dict[str, float] = {}
        self.battery = None if cfg.battery_j == "none" else float(cfg.battery_j)
        self.dead = np.zeros(m, dtype=bool)
        self.emptied = 0

    def exchange(self, phase: str, agents: np.ndarray, duration_ns: int, *times) -> tuple:
        """Count one exchange (:meth:`exchange_parts` of ``times``, then :meth:`add`); returns
        (which of ``agents`` ran out of energy during it, bool (m,); the energy all devices
        spent in it, J)."""
        return self.add(
            phase, agents, duration_ns, self.exchange_parts(agents, duration_ns, *times)
        )

    def exchange_parts(
        self,
        agents: np.ndarray,
        duration_ns: int,
        rx_ns: np.ndarray,
        tx_ns: np.ndarray,
        compute_ns: np.ndarray,
        reports: np.ndarray,
    ) -> tuple:
        """Return one exchange's parts: the receive, transmit and compute energies (J) and
        busy times (ns) of ``agents``, then the three energies' sum and the busy times' sum.

        ``agents`` (m,): the recipients (or ``slice(None)``: every agent, in order; or an
        :class:`~edgesim.arrays.AllBut`: every agent but one);
        ``rx_ns``, ``tx_ns``, ``compute_ns`` (m,): their receiving, transmitting and
        computing time in it;
        ``reports`` (m,): local gradients each computed; ``duration_ns``: the
        exchange's length. Every device still alive idles for the rest.
        """
        cfg = self.cfg
        rx = float(cfg.rx_power_w) * rx_ns
        rx /= 1e9
        tx = float(cfg.tx_power_w) * tx_ns
        tx /= 1e9
        if cfg.compute == "cycles":
            comp = select_rows(self.per_gradient_j, agents) * reports
        else:
            comp = float(cfg.compute_power_w) * compute_ns
            comp /= 1e9
        busy = rx_ns + tx_ns
        busy += compute_ns
        np.minimum(busy, duration_ns, out=busy)
        if self.battery is not None:  # (without batteries nobody dies: x * True is x)
            on = ~select_rows(self.dead, agents)
            rx, tx, comp, busy = rx * on, tx * on, comp * on, busy * on
        add = np.add.reduce  # ndarray.sum's reduction without its Python wrapper: the same bits
        return rx, tx, comp, busy, float(add(rx) + add(tx) + add(comp)), float(add(busy))

    def add(self, phase: str, agents: np.ndarray, duration_ns: int, parts: tuple):
        """Count one exchange from its :meth:`exchange_parts`; returns what :meth:`exchange` returns.

        Without batteries no device ever dies, so an exchange repeated exactly (a steady
        round: the same plan and length) has the same parts: the server keeps them and calls
        this alone.
        """
        cfg, p = self.cfg, self.parts
        rx, tx, comp, busy, spent, busy_total = parts
        add_rows(p["rx"], agents, rx)
        add_rows(p["tx"], agents, tx)
        add_rows(p["compute"], agents, comp)
        add_rows(self.busy_ns, agents, busy)
        alive = self.dead.size - self.emptied  # (each device empties once, and stays dead)
        idle = cfg.idle_power_w * (duration_ns * alive - busy_total) / 1e9
        total = spent + idle
        self.by_phase[phase] = self.by_phase.get(phase, 0.0) + total
        self.elapsed_ns += duration_ns
        if self.battery is None:
            return np.zeros(rx.size, dtype=bool), total
        empty = ~self.dead & (self.per_agent_j() >= self.battery)
        self.died_at_ns[empty] = self.elapsed_ns
        self.dead |= empty
        self.emptied += int(empty.sum())
        return select_rows(empty, agents), total

    def idle_j(self) -> np.ndarray:
        """Return each agent's idle energy (J, (m,)): idle power x (time alive - busy time)."""
        alive_ns = np.where(self.dead, self.died_at_ns, self.elapsed_ns)
        return self.cfg.idle_power_w * (alive_ns - self.busy_ns) / 1e9

    def per_agent_j(self) -> np.ndarray:
        """Return each agent's energy over the run (J, (m,)): transmit + receive + compute + idle."""
        p = self.parts
        return p["tx"] + p["rx"] + p["compute"] + self.idle_j()

    def summary(self) -> dict:
        """Return the JSON ``network.energy`` object: totals by part and by phase (J), batteries."""
        total = {f"{k}_j": float(v.sum()) for k, v in {**self.parts, "idle": self.idle_j()}.items()}
        return {
            "total_j": float(sum(total.values())),
            **total,
            "by_phase_j": dict(self.by_phase),
            "batteries_emptied": self.emptied,
        }
