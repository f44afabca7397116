"""LTE link adaptation tables (3GPP TS 36.213) and the SINR -> CQI -> MCS -> TBS chain, in numpy.

The tables, as ns-3's LTE module embeds them (src/lte/model/lte-amc.cc, the
reference edgesim's LTE cell is compared with):

* :data:`CQI_EFFICIENCY`: spectral efficiency (bit/s/Hz) of CQI 0..15, TS 36.213
  Table 7.2.3-1 (4-bit CQI table: modulation x code rate / 1024), rounded to two
  decimals as in 3GPP R1-081483 (CQI 0 is "out of range").
* :data:`MCS_EFFICIENCY`: spectral efficiency of MCS 0..28 (R1-081483, ``TBS_support.xls``).
* :data:`MCS_TO_ITBS_DL` / :data:`MCS_TO_ITBS_UL`: TBS index of MCS 0..28, TS 36.213
  Table 7.1.7.1-1 (PDSCH) and Table 8.6.1-1 (PUSCH).
* :data:`TBS_BITS`: transport block size (bits) by N_PRB 1..110 and I_TBS 0..26,
  TS 36.213 Table 7.1.7.2.1-1 (:mod:`edgesim.network.lte.tbs_table`).

The SINR -> CQI mapping is ns-3's ``LteAmc`` PiroEW2010 model (Piro et al., "LTE-Sim",
IEEE Trans. Veh. Technol. 2011; the uplink schedulers of ns-3 use it whatever the AMC
model): spectral efficiency s = log2(1 + SINR / Gamma) with the SNR gap
Gamma = -ln(5 BER) / 1.5 (Goldsmith's M-QAM bound BER <= 0.2 exp(-1.5 SINR / (M - 1)),
solved for the target BER = 5e-5), then the highest CQI whose efficiency is below s
(:func:`cqi_of_sinr`), and the highest MCS whose efficiency does not exceed that CQI's
(:func:`mcs_of_cqi`, ns-3's ``GetMcsFromCqi``).
"""

from __future__ import annotations

import numpy as np

from edgesim.network.lte.tbs_table import TBS_BITS as _TBS_ROWS

#: TS 36.213 Table 7.2.3-1: spectral efficiency (bit/s/Hz) of CQI 0..15 (0: out of range).
CQI_EFFICIENCY = np.array(
    [0.0, 0.15, 0.23, 0.38, 0.6, 0.88, 1.18, 1.48, 1.91, 2.41, 2.73, 3.32, 3.9, 4.52, 5.12, 5.55]
)

#: Spectral efficiency (bit/s/Hz) of MCS 0..28 (3GPP R1-081483, as ns-3's LteAmc).
MCS_EFFICIENCY = np.array(
    [0.15, 0.19, 0.23, 0.31, 0.38, 0.49, 0.6, 0.74, 0.88, 1.03, 1.18, 1.33, 1.48, 1.7, 1.91,
     2.16, 2.41, 2.57, 2.73, 3.03, 3.32, 3.61, 3.9, 4.21, 4.52, 4.82, 5.12, 5.33, 5.55]
)  # fmt: skip

#: TS 36.213 Table 7.1.7.1-1 (PDSCH): TBS index I_TBS of MCS 0..28.
MCS_TO_ITBS_DL = np.array(
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 10, 11, 12, 13, 14, 15, 15, 16, 17, 18, 19, 20, 21, 22, 23,
     24, 25, 26]
)  # fmt: skip

#: TS 36.213 Table 8.6.1-1 (PUSCH): TBS index I_TBS of MCS 0..28.
MCS_TO_ITBS_UL = np.array(
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 23,
     24, 25, 26]
)  # fmt: skip

#: TS 36.213 Table 7.1.7.2.1-1: TBS (bits), shape (110, 27): [N_PRB - 1, I_TBS].
TBS_BITS = np.array(_TBS_ROWS, dtype=np.int64)

#: The highest MCS of the tables (TS 36.213: 29..31 are reserved for retransmissions).
MAX_MCS = 28

#: The most resource blocks the TBS table covers (N_PRB 1..110).
MAX_PRB = TBS_BITS.shape[0]

#: The MCS tables by ``[network.radio.lte] mcs_table`` name.
MCS_TABLES = ("36.213",)


def snr_gap(ber: float) -> float:
    """Return the PiroEW2010 SNR gap Gamma = -ln(5 BER) / 1.5 (linear; 5.53 = 7.43 dB at 5e-5)."""
    return -np.log(5.0 * ber) / 1.5


def spectral_efficiency(sinr: np.ndarray, ber: float) -> np.ndarray:
    """Return log2(1 + SINR / Gamma) (bit/s/Hz) for linear ``sinr`` (ns-3 PiroEW2010)."""
    return np.log2(1.0 + np.asarray(sinr, dtype=np.float64) / snr_gap(ber))


def cqi_of_sinr(sinr: np.ndarray, ber: float = 5e-5) -> np.ndarray:
    """Return the CQI (int64, 0..15) of each linear ``sinr``: the number of CQIs 1..15 whose
    efficiency is below log2(1 + SINR / Gamma) (ns-3's ``GetCqiFromSpectralEfficiency``)."""
    s = spectral_efficiency(sinr, ber)
    return np.searchsorted(CQI_EFFICIENCY[1:], s, side="left").astype(np.int64)


#: ns-3's MiErrorModel ("Vienna") AMC, ns-3's default for the downlink CQI, on a channel without
#: fading: the lowest SINR (dB, on a 0.1 dB grid) at which a UE reports CQI 1..15, by resource
#: block group size (TS 36.213 Table 7.1.6.1-1: 1 up to 10 blocks, 2 up to 26, 3 up to 63, 4
#: above). Measured with ns-3 3.44's ``LteAmc::CreateCqiFeedbacks`` (PyPI wheel) on a flat SINR
#: swept from -10 to 30 dB: the highest MCS whose transport block error rate is <= 10%,
#: reported as the CQI of that MCS's efficiency.
MI_CQI_THRESHOLD_DB: dict[int, np.ndarray] = {
    4: np.array([-4.4, -3.4, -1.6, 0.5, 2.1, 4.4, 6.1, 7.8, 10.3, 11.5, 13.6, 15.5, 17.0, 18.9,
                 19.9]),
    3: np.array([-4.4, -3.4, -1.3, 0.5, 2.1, 4.4, 6.1, 7.8, 10.3, 11.5, 13.6, 15.5, 17.0, 18.9,
                 19.9]),
    2: np.array([-4.4, -3.0, -1.3, 0.5, 2.1, 4.4, 6.1, 7.8, 10.3, 11.5, 13.6, 15.5, 17.0, 18.9,
                 19.9]),
    1: np.array([-4.4, -3.0, -1.3, 0.5, 2.1, 4.4, 6.1, 7.8, 10.3, 11.5, 13.6, 15.5, 17.0, 18.9,
                 19.9]),
}  # fmt: skip

#: The SINR -> CQI mappings by ``[network.radio.lte]`` ``*_cqi_mapping`` name.
CQI_MAPPINGS = ("piro-ew2010", "mi-error-model")


def rbg_size(prbs: int) -> int:
    """Return the resource block group size of a ``prbs``-block channel (TS 36.213 Table 7.1.6.1-1)."""
    return 1 if prbs <= 10 else 2 if prbs <= 26 else 3 if prbs <= 63 else 4


def cqi_of_sinr_mi(sinr: np.ndarray, prbs: int) -> np.ndarray:
    """Return the CQI (int64, 0..15) ns-3's MiErrorModel AMC reports at each linear ``sinr`` on a
    ``prbs``-block channel without fading (:data:`MI_CQI_THRESHOLD_DB` at its RBG size)."""
    thresholds = MI_CQI_THRESHOLD_DB[rbg_size(prbs)]
    sinr_db = 10.0 * np.log10(np.maximum(np.asarray(sinr, dtype=np.float64), 1e-300))
    return np.searchsorted(thresholds, sinr_db, side="right").astype(np.int64)


def mcs_of_cqi(cqi: np.ndarray) -> np.ndarray:
    """Return the MCS (int64, 0..28) of each CQI: the highest MCS whose efficiency does not exceed
    the CQI's (ns-3's ``GetMcsFromCqi``; CQI 0 gives MCS 0)."""
    e = CQI_EFFICIENCY[np.asarray(cqi, dtype=np.int64)]
    mcs = np.searchsorted(MCS_EFFICIENCY, e, side="right") - 1
    return np.maximum(mcs, 0).astype(np.int64)


def tbs_bits(mcs: np.ndarray, prbs: int, direction: str = "down") -> np.ndarray:
    """Return the transport block size (bits, int64) of each MCS on ``prbs`` resource blocks.

    TS 36.213 Table 7.1.7.2.1-1 at I_TBS from Table 7.1.7.1-1 (``direction = 'down'``) or
    Table 8.6.1-1 (``'up'``). Raises ValueError for an MCS outside 0..28 or ``prbs`` outside
    1..110.
    """
    m = np.asarray(mcs, dtype=np.int64)
    if m.size and (m.min() < 0 or m.max() > MAX_MCS):
        raise ValueError(f"MCS must be in 0..{MAX_MCS}, got {m.min()}..{m.max()}")
    if not 1 <= prbs <= MAX_PRB:
        raise ValueError(f"the TBS table covers 1..{MAX_PRB} resource blocks, got {prbs}")
    itbs = (MCS_TO_ITBS_UL if direction == "up" else MCS_TO_ITBS_DL)[m]
    return TBS_BITS[prbs - 1, itbs]
