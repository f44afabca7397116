"""The LTE link model (``network.radio.model = "lte"``): rates from the TS 36.213 tables.

:class:`LteLink` takes each device's mean SINR per resource block from the
Shannon model's path loss and shadowing (:class:`~edgesim.network.links.ShannonLink`,
the ``[network.radio]`` keys it reads) and turns it into a rate through CQI,
MCS, transport block size, HARQ and headers (:func:`edgesim.network.lte.rates.adapt`)
instead of B log2(1 + SNR). Latency is per direction (``downlink_latency_s``,
``uplink_latency_s`` of ``[network.radio.lte]``), plus HARQ's mean extra delay
of the message's last transport block. A message's airtime is what it takes
alone on all R blocks of the cell, as for the other link models, so the
access schemes share the channel as they do for Shannon (round robin: 1/n of
it each; OFDMA: one block each, R times the airtime).

No random draws beyond the Shannon model's (the shadowing, then the loss
model's): HARQ is counted at its expected cost, so the ``events`` and
``batched`` fidelities compute the same times.
"""

from __future__ import annotations

import numpy as np

from edgesim.config import resolved_options
from edgesim.network import to_ns
from edgesim.network.links import ShannonLink, Transfers, register_link, rto_ns_of
from edgesim.network.lte.options import LteOptions
from edgesim.network.lte.rates import adapt
from edgesim.network.lte.tables import MAX_PRB, rbg_size


class LteLink(ShannonLink):
    """An LTE hop: per-device MCS and rate from the SINR (TS 36.213 tables), HARQ, latency per direction.

    ``cfg`` is the ``[network.radio]`` table; ``cfg.numerology`` must be ``'lte'`` and
    the cell at most 110 blocks (the TBS table's). Attributes (N,): ``mcs`` (int8),
    ``rate_bps`` (payload bit/s of a lone sender on all R blocks), ``harq_tail_ns``
    (int64: HARQ's mean extra latency); ``latency_ns`` is the direction's one-way
    latency. Other arguments as :class:`ShannonLink`.
    """

    def __init__(
        self,
        cfg,
        distance_m: np.ndarray,
        direction: str,
        rng: np.random.Generator,
        *,
        loss_model=None,
        shadow_db: np.ndarray | None = None,
    ):
        if cfg.numerology != "lte":
            raise ValueError(
                f"network.radio.model = 'lte' needs numerology = 'lte', got {cfg.numerology!r}"
            )
        blocks = cfg.blocks()
        if blocks > MAX_PRB:
            raise ValueError(
                f"network.radio.model = 'lte': the TBS table covers 1..{MAX_PRB} resource blocks,"
                f" the cell has {blocks}"
            )
        super().__init__(
            cfg, distance_m, direction, rng, loss_model=loss_model, shadow_db=shadow_db
        )
        self.options = resolved_options(cfg, "link_options")
        self.blocks = blocks
        #: the blocks a lone device's transport blocks span (ns-3 leaves a partial RBG unused)
        self.data_blocks = blocks
        if direction == "down" and self.options.downlink_last_rbg == "unused":
            self.data_blocks = blocks // rbg_size(blocks) * rbg_size(blocks)
        mcs, self.rate_bps, tail_s = adapt(self.mean_snr, self.data_blocks, direction, self.options)
        self.mcs = mcs.astype(np.int8)
        self.harq_tail_ns = np.rint(tail_s * 1e9).astype(np.int64)
        one_way = (
            self.options.uplink_latency_s if direction == "up" else self.options.downlink_latency_s
        )
        self.latency_ns = to_ns(one_way)
        self.rto_ns = rto_ns_of(cfg.rto_s, self.latency_ns)

    @property
    def rate_per_block_bps(self) -> np.ndarray:
        """Return each device's payload rate per resource block, ``rate_bps`` / R (bit/s, (N,))."""
        return self.rate_bps / self.blocks

    def rate_at_bps(self, endpoints: np.ndarray, distance_m: np.ndarray) -> np.ndarray:
        """Return each endpoint's payload rate (bit/s) at ``distance_m`` (its own shadowing); the
        inherited :meth:`airtime_at_ns` (moving devices) sends at it."""
        sinr = self._snr(self.gain_at(endpoints, distance_m))
        return adapt(sinr, self.data_blocks, self.direction, self.options)[1]

    def send_from(
        self,
        e: np.ndarray,
        size_bytes: np.ndarray,
        rng: np.random.Generator,
        distance_m: np.ndarray | None = None,
    ) -> Transfers:
        """:meth:`Link.send_from <edgesim.network.links.Link.send_from>` (what
        :meth:`~edgesim.network.links.Link.send` calls), each message's latency being the
        direction's plus its device's HARQ tail (``harq_tail_ns``, from where it was placed)."""
        t = super().send_from(e, size_bytes, rng, distance_m)
        return Transfers(
            attempts=t.attempts,
            delivered=t.delivered,
            airtime_ns=t.airtime_ns,
            latency_ns=self.latency_ns + self.harq_tail_ns[e],
            rto_ns=t.rto_ns,
        )


def lte_link(cfg, direction: str, distance_m, rng) -> LteLink:
    """The ``"lte"`` link factory (:data:`edgesim.network.links.LinkFactory`): an :class:`LteLink`."""
    return LteLink(cfg, distance_m, direction, rng)


# LteLink extends ShannonLink, so this package sits above edgesim.network.links and registers
# itself there (importing edgesim.network.lte is enough).
register_link("lte", lte_link, options=LteOptions)
