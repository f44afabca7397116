"""Proportional fair: slot by slot under per-slot Rayleigh fading (events fidelity only).

Each slot (``slot_s``, an LTE subframe by default) every device with data
draws its fading on every resource block, and each block goes to the best
rate over average throughput (moving average over ``window_slots`` slots):
:func:`edgesim.network.proportional_fair.proportional_fair_ns`. It needs the
Shannon link model (it schedules on each device's faded SNR), and draws
random numbers (the ``links`` stream), which the ``batched`` fidelity does
not compute.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from edgesim.config import option
from edgesim.errors import ScenarioError
from edgesim.network.access.base import AccessScheme
from edgesim.network.proportional_fair import proportional_fair_ns

#: A message the scheduler has not served by the round's deadline: an instant after it.
NOT_THROUGH_NS = np.iinfo(np.int64).max // 4


@dataclass(frozen=True)
class ProportionalFairOptions:
    """``[network.radio.proportional-fair]``: the scheduler's slot and averaging window."""

    flat_aliases: ClassVar[dict[str, str]] = {"slot_s": "slot_s", "pf_window_slots": "window_slots"}

    slot_s: float = option(
        0.001,
        "scheduling slot (a 1 ms LTE subframe); fading is redrawn per block and slot",
        unit="s",
        gt=0.0,
    )
    window_slots: float = option(
        100.0,
        "time constant t_c of each device's average throughput (moving average over about"
        " t_c slots)",
        ge=1.0,
    )


class ProportionalFair(AccessScheme):
    """Each block, each slot, to the best faded rate over average throughput (Shannon links)."""

    options = ProportionalFairOptions
    flat_aliases = ProportionalFairOptions.flat_aliases
    batched = False
    draws = True
    not_batched = (
        "'proportional-fair' schedules slot by slot under per-slot fading, which"
        " 'batched' does not compute; use network.fidelity = 'events', or"
        " access = 'round-robin' (its closed form)"
    )

    @classmethod
    def cross_check(cls, radio, settings, prefix: str) -> list[ScenarioError]:
        """Return the scheme's errors on ``[network.radio]``: it needs ``model = 'shannon'``."""
        if radio.model != "shannon":
            return [
                ScenarioError(
                    f"{prefix}.access",
                    "'proportional-fair' needs model = 'shannon' (it schedules on each device's"
                    f" faded SNR), got {radio.model!r}",
                )
            ]
        return []

    def through_ns(
        self, direction, cell, devices, sizes, arrive_ns, transfers, rng, horizon_ns=None
    ):
        """Return when each message is through (int64 ns, (m,)); one not served by
        ``horizon_ns`` gets :data:`NOT_THROUGH_NS`."""
        link = self.links[direction]
        done, _ = proportional_fair_ns(
            arrive_ns,
            transfers.attempts * np.asarray(sizes, dtype=np.int64) * 8,
            link.mean_snr_of(devices),
            cell,
            blocks=self.blocks,
            block_hz=link.block_hz,
            slot_ns=round(self.settings.slot_s * 1e9),
            window_slots=self.settings.window_slots,
            rng=rng,
            horizon_ns=horizon_ns,
        )
        return np.where(done < 0, NOT_THROUGH_NS, done)
