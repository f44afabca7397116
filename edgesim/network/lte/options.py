"""``[network.radio.lte]``: the options of the LTE link model (``network.radio.model = "lte"``).

Defaults follow ns-3's LTE module and the measurements of issue 30 (one eNB,
20 MHz FDD): ns-3's MiErrorModel CQI on the downlink and PiroEW2010 (target BER
5e-5) on the uplink, MCS capped at 28, a 10% BLER
target, up to 3 HARQ retransmissions 8 ms apart, 5 ms one way on the downlink
and 12 ms on the uplink, and 2.1% of the transport blocks spent on headers
(73.8 Mbit/s of payload at MCS 28 and 100 blocks against 75.376 Mbit/s of
transport blocks). One default is not ns-3's: ``downlink_rbg_split = "whole"``
uses every resource block group of a round-robin downlink; ``"floor"`` is ns-3's
``RrFfMacScheduler`` (:func:`rbg_split_errors` says where it applies,
:class:`edgesim.network.access.round_robin.RbgFloorEfficiency` what it costs).
"""

from __future__ import annotations

from dataclasses import dataclass

from edgesim.config import option
from edgesim.errors import ScenarioError
from edgesim.network.lte.tables import CQI_MAPPINGS, MAX_MCS, MCS_TABLES, rbg_size

#: ``downlink_rbg_split``: every group in use, or ns-3's round robin (floor(G / n) groups each).
RBG_SPLITS = ("whole", "floor")
#: The access schemes that read ``downlink_rbg_split`` (round robin's processor sharing).
RBG_SPLIT_ACCESS = ("round-robin", "shared")

#: 1 - 73.8 / 75.376: the share of the transport blocks that PDCP/RLC/MAC and IP/UDP headers
#: take in ns-3 at MCS 28 and 100 resource blocks (issue 30), rounded.
HEADER_OVERHEAD = 0.021


@dataclass(frozen=True)
class LteOptions:
    """The LTE link's own options: link adaptation, HARQ, latency per direction, headers."""

    mcs_table: str = option(
        "36.213",
        "the MCS and transport block size tables: '36.213' (3GPP TS 36.213 Tables 7.1.7.1-1,"
        " 8.6.1-1 and 7.2.3-1, the CQI table, and 7.1.7.2.1-1, the TBS table, as ns-3's LTE"
        " module holds them)",
        choices=MCS_TABLES,
    )
    downlink_cqi_mapping: str = option(
        "mi-error-model",
        "SINR -> CQI of the downlink: 'mi-error-model' (ns-3's default AMC, MiErrorModel: the"
        " highest MCS with a transport block error rate <= 10%, measured on a channel without"
        " fading) or 'piro-ew2010' (log2(1 + SINR / Gamma), Gamma from ber)",
        choices=CQI_MAPPINGS,
    )
    uplink_cqi_mapping: str = option(
        "piro-ew2010",
        "SINR -> CQI of the uplink: 'piro-ew2010' (what ns-3's uplink schedulers use) or"
        " 'mi-error-model'",
        choices=CQI_MAPPINGS,
    )
    ber: float = option(
        5e-5,
        "target bit error rate of the SINR -> CQI mapping (ns-3's PiroEW2010: efficiency"
        " log2(1 + SINR / Gamma), Gamma = -ln(5 BER) / 1.5)",
        gt=0.0,
        lt=0.2,
    )
    max_mcs: int = option(
        MAX_MCS,
        "the highest MCS the link adaptation may choose (TS 36.213: 0..28; 29..31 are reserved)",
        ge=0,
        le=MAX_MCS,
    )
    bler_target: float = option(
        0.1,
        "block error rate of a transport block whose SINR sits at its MCS's switching"
        " threshold; above it the BLER falls as the bit error rate does",
        gt=0.0,
        lt=1.0,
    )
    harq_max_retransmissions: int = option(
        3,
        "HARQ: retransmissions of a failed transport block after the first try (0: no HARQ"
        " retransmissions, a failed block costs nothing here: RLC or TCP would resend it)",
        ge=0,
    )
    harq_rtt_s: float = option(
        0.008,
        "HARQ round trip: from a transport block's transmission to its retransmission (LTE FDD:"
        " 8 subframes)",
        unit="s",
        ge=0.0,
    )
    downlink_latency_s: float = option(
        0.005,
        "one-way latency of the downlink (eNB to device: scheduling, processing, 1 ms TTI);"
        " replaces latency_s",
        unit="s",
        ge=0.0,
    )
    uplink_latency_s: float = option(
        0.012,
        "one-way latency of the uplink (scheduling request or buffer status report, grant,"
        " transmission 4 ms after the grant); replaces latency_s",
        unit="s",
        ge=0.0,
    )
    downlink_last_rbg: str = option(
        "used",
        "the downlink's last resource block group when the cell's blocks are not a whole number"
        " of groups (TS 36.213 Table 7.1.6.1-1: groups of 3 at 50 blocks, so 16 groups and one"
        " of 2): 'used' (the standard: all blocks carry data) or 'unused' (as ns-3's schedulers"
        " do: 48 of 50 blocks)",
        choices=("used", "unused"),
    )
    downlink_rbg_split: str = option(
        "whole",
        "how a round-robin downlink splits its G resource block groups among the n devices it"
        " serves in a TTI: 'whole' (every group used: a scheduler that hands out the leftover"
        " groups; processor sharing of the whole band) or 'floor' (ns-3's RrFfMacScheduler:"
        " floor(G / n) groups each and the rest idle for n < G, so the cell delivers"
        " n floor(G / n) / G of its rate; all G, one group per device in turn, for n >= G);"
        " needs access = 'round-robin' or 'shared' and a shared downlink",
        choices=RBG_SPLITS,
    )
    header_overhead: float = option(
        HEADER_OVERHEAD,
        "share of each transport block taken by PDCP/RLC/MAC and IP headers (1 - 73.8 / 75.376"
        " in ns-3 at MCS 28 and 100 blocks)",
        ge=0.0,
        lt=1.0,
    )


def downlink_groups(blocks: int, last_rbg: str) -> int:
    """Return the downlink's resource block groups G of a ``blocks``-block cell (a count).

    Groups of :func:`~edgesim.network.lte.tables.rbg_size` blocks (TS 36.213 Table
    7.1.6.1-1); a last, partial group counts when ``last_rbg`` is ``'used'`` and not when
    it is ``'unused'`` (ns-3: 25 groups at 100 blocks, 16 at 50).
    """
    size = rbg_size(blocks)
    return blocks // size if last_rbg == "unused" else -(-blocks // size)


def rbg_split_errors(radio, prefix: str = "network.radio") -> list[ScenarioError]:
    """Return the errors of ``downlink_rbg_split = 'floor'`` on the ``[network.radio]`` table
    ``radio`` (empty when it applies): it needs ``model = 'lte'`` and a downlink shared by
    round robin (``access`` in :data:`RBG_SPLIT_ACCESS`, ``downlink_access = 'shared'``,
    resource blocks not per device). The key named is ``prefix.lte.downlink_rbg_split``."""
    if radio.model != "lte":
        return []  # [network.radio.lte] is not read: the scenario's own checks refuse the table
    opts = radio.link_options
    if opts is None or getattr(opts, "downlink_rbg_split", "whole") == "whole":
        return []
    if radio.access not in RBG_SPLIT_ACCESS:
        needs = f"access = 'round-robin' or 'shared', got access = {radio.access!r}"
    elif radio.downlink_access != "shared" or radio.resource_blocks == "per-device":
        needs = "a shared downlink (downlink_access = 'shared', resource_blocks not 'per-device')"
    else:
        return []
    key = f"{prefix}.lte.downlink_rbg_split"
    return [ScenarioError(key, f"'floor' splits a round-robin downlink's groups: it needs {needs}")]
