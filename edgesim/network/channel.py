"""A cell's channel: how many resource blocks a channel width holds, and how wide each is.

LTE (3GPP TS 36.101, Table 5.6-1): a resource block is 12 subcarriers of
15 kHz (180 kHz); 1.4, 3, 5, 10, 15 and 20 MHz channels hold 6, 15, 25, 50,
75 and 100 blocks. NR (TS 38.101-1, Table 5.3.2-1, frequency range 1): a
block is 12 subcarriers of the numerology's spacing (15, 30 or 60 kHz); the
table gives the maximum transmission bandwidth N_RB per channel width.
"""

from __future__ import annotations

#: ``network.radio.numerology`` -> subcarrier spacing (Hz).
SUBCARRIER_HZ = {"lte": 15e3, "nr-15": 15e3, "nr-30": 30e3, "nr-60": 60e3}

#: Subcarriers per resource block (LTE and NR alike).
SUBCARRIERS_PER_BLOCK = 12

#: ``network.radio.numerology`` -> {channel width (MHz): resource blocks}.
BLOCKS: dict[str, dict[float, int]] = {
    "lte": {1.4: 6, 3: 15, 5: 25, 10: 50, 15: 75, 20: 100},
    "nr-15": {5: 25, 10: 52, 15: 79, 20: 106, 25: 133, 30: 160, 35: 188, 40: 216, 45: 242,
              50: 270},
    "nr-30": {5: 11, 10: 24, 15: 38, 20: 51, 25: 65, 30: 78, 35: 92, 40: 106, 45: 119, 50: 133,
              60: 162, 70: 189, 80: 217, 90: 245, 100: 273},
    "nr-60": {10: 11, 15: 18, 20: 24, 25: 31, 30: 38, 35: 44, 40: 51, 45: 58, 50: 65, 60: 79,
              70: 93, 80: 107, 90: 121, 100: 135},
}  # fmt: skip

NUMEROLOGIES = tuple(BLOCKS)


def block_hz(numerology: str) -> float:
    """Return the bandwidth of one resource block of ``numerology`` (Hz): 12 subcarriers."""
    return SUBCARRIERS_PER_BLOCK * SUBCARRIER_HZ[numerology]


def channel_blocks(numerology: str, channel_mhz: float) -> int | None:
    """Return the resource blocks of a ``channel_mhz`` channel, or None if the numerology lacks it."""
    for width, blocks in BLOCKS[numerology].items():
        if abs(width - channel_mhz) < 1e-9:
            return blocks
    return None


def widths(numerology: str) -> str:
    """Return the channel widths ``numerology`` offers, for error messages ("5, 10, 15 MHz")."""
    return ", ".join(f"{w:g}" for w in BLOCKS[numerology]) + " MHz"
