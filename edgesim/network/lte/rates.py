"""An LTE device's rate from its SINR: link adaptation, transport blocks, HARQ and headers.

For a device whose mean SINR per resource block is SINR (linear), on R blocks
(:func:`adapt`):

1. CQI and MCS from the SINR (:func:`link_adaptation`): ns-3's PiroEW2010 mapping
   (:func:`~edgesim.network.lte.tables.cqi_of_sinr`; ns-3's uplink) or its MiErrorModel
   AMC on a channel without fading (:func:`~edgesim.network.lte.tables.cqi_of_sinr_mi`;
   ns-3's default downlink), then :func:`~edgesim.network.lte.tables.mcs_of_cqi`, the
   MCS capped at ``max_mcs``.
2. One transport block of TBS(MCS, R) bits (TS 36.213 Table 7.1.7.2.1-1) per 1 ms TTI.
3. HARQ: a transport block's transmission fails with probability q (its BLER) and
   is sent again one HARQ round trip later, at most ``harq_max_retransmissions``
   times, so it takes E = (1 - q^(H+1)) / (1 - q) TTIs on average. The eight HARQ
   processes keep the channel busy meanwhile, so the rate is divided by E, and
   the message's last block adds the mean (E - 1) x ``harq_rtt_s`` to its latency.
4. Headers: (1 - ``header_overhead``) of each block is payload.

So rate = TBS(MCS, R) / 1 ms x (1 - header_overhead) / E (bit/s of payload).

BLER from the SINR (decision): the link adaptation picks the MCS whose
switching SINR_thr the SINR reaches (PiroEW2010: Gamma (2^e - 1), e the MCS's
efficiency and Gamma the gap; MiErrorModel: the measured SINR of its CQI); a
block at the threshold fails with
``bler_target``, and above it its BLER falls as the bit error rate of the
bound the mapping inverts (Goldsmith: BER = 0.2 exp(-1.5 SINR / (2^e - 1))):
q = bler_target x exp(-1.5 (SINR - SINR_thr) / (2^e - 1)), at most
``bler_target`` (a device below CQI 1 is sent MCS 0 at the target, as ns-3 sends
MCS 0). Between two MCS thresholds the BLER falls from the target towards 0
as with any discrete link adaptation on a channel without fast fading (ns-3
without fading traces); this is the expected cost of HARQ, no random draws.
"""

from __future__ import annotations

import numpy as np

from edgesim.network.lte.options import HEADER_OVERHEAD
from edgesim.network.lte.tables import (
    MAX_MCS,
    MCS_EFFICIENCY,
    MI_CQI_THRESHOLD_DB,
    cqi_of_sinr,
    cqi_of_sinr_mi,
    mcs_of_cqi,
    rbg_size,
    snr_gap,
    tbs_bits,
)

#: LTE's transmission time interval: one transport block per direction and device per subframe.
TTI_S = 1e-3


def peak_rate_bps(
    rbs: int,
    mcs: int = MAX_MCS,
    header_overhead: float = HEADER_OVERHEAD,
    direction: str = "down",
) -> float:
    """Return the payload rate (bit/s) of one device alone on ``rbs`` blocks at ``mcs``, no errors.

    TBS(mcs, rbs) / 1 ms x (1 - header_overhead): at MCS 28 the LTE channel widths 1.4, 3,
    5, 10, 15 and 20 MHz (6, 15, 25, 50, 75, 100 blocks) carry 4.30, 10.83, 17.95, 35.93,
    53.90 and 73.79 Mbit/s of payload. What ``bandwidth_bps = "auto"`` of the fixed model
    can use for a channel width.
    """
    tbs = int(tbs_bits(np.array([mcs]), rbs, direction)[0])
    return tbs / TTI_S * (1.0 - header_overhead)


def bler_of(
    sinr: np.ndarray, mcs: np.ndarray, threshold: np.ndarray, bler_target: float
) -> np.ndarray:
    """Return the BLER (0..``bler_target``) of a transport block at MCS ``mcs`` and linear ``sinr``.

    q = bler_target x exp(-1.5 (SINR - SINR_thr) / (2^e - 1)), e the MCS's efficiency and
    ``threshold`` SINR_thr (linear) the SINR at which the mapping switches to it (module
    docstring), clipped to [0, bler_target].
    """
    room = np.exp2(MCS_EFFICIENCY[mcs]) - 1.0
    margin = (np.asarray(sinr, dtype=np.float64) - threshold) / room
    return bler_target * np.exp(-1.5 * np.maximum(margin, 0.0))


def link_adaptation(
    sinr: np.ndarray, rbs: int, mapping: str, opts
) -> tuple[np.ndarray, np.ndarray]:
    """Return (MCS (int64, capped at ``opts.max_mcs``), its switching SINR (linear)) per device.

    ``mapping``: 'piro-ew2010' (threshold Gamma (2^e - 1), e the MCS's efficiency) or
    'mi-error-model' (the CQI's SINR in :data:`~edgesim.network.lte.tables.MI_CQI_THRESHOLD_DB`).
    """
    if mapping == "mi-error-model":
        cqi = cqi_of_sinr_mi(sinr, rbs)
        mcs = np.minimum(mcs_of_cqi(cqi), opts.max_mcs)
        table = np.concatenate(([-np.inf], MI_CQI_THRESHOLD_DB[rbg_size(rbs)]))
        return mcs, 10.0 ** (table[cqi] / 10.0)
    mcs = np.minimum(mcs_of_cqi(cqi_of_sinr(sinr, opts.ber)), opts.max_mcs)
    return mcs, snr_gap(opts.ber) * (np.exp2(MCS_EFFICIENCY[mcs]) - 1.0)


def expected_transmissions(bler: np.ndarray, max_retransmissions: int) -> np.ndarray:
    """Return E = (1 - q^(H+1)) / (1 - q): a transport block's mean transmissions (>= 1)."""
    q = np.asarray(bler, dtype=np.float64)
    return (1.0 - q ** (max_retransmissions + 1)) / (1.0 - q)


def adapt(
    sinr: np.ndarray, rbs: int, direction: str, opts
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (MCS (int64), payload rate (bit/s), HARQ's mean extra latency (s)) per device.

    ``sinr`` (N,): each device's mean SINR per block (linear); ``rbs``: the blocks it
    sends on; ``direction``: 'up' (PUSCH's MCS table) or 'down'; ``opts``:
    :class:`~edgesim.network.lte.options.LteOptions`. Vectorised over devices.
    """
    mapping = opts.uplink_cqi_mapping if direction == "up" else opts.downlink_cqi_mapping
    mcs, threshold = link_adaptation(sinr, rbs, mapping, opts)
    tbs = tbs_bits(mcs, rbs, direction)
    q = bler_of(sinr, mcs, threshold, opts.bler_target)
    tries = expected_transmissions(q, opts.harq_max_retransmissions)
    rate = tbs / TTI_S * (1.0 - opts.header_overhead) / tries
    return mcs, rate, (tries - 1.0) * opts.harq_rtt_s
