"""IEEE 802.11 (Wi-Fi) arithmetic: PHY rates, frame times and Bianchi's saturation throughput.

Pure Python (no SimPy); the ``wifi`` access scheme (:mod:`edgesim.network.access.wifi`)
uses it to share a Wi-Fi cell among its contenders (the devices with data and
the access point).

PHY rate (IEEE 802.11-2020, clauses 19, 21 and 27): N_SD data subcarriers x
N_BPSCS coded bits per subcarrier x code rate R x N_SS spatial streams, per
OFDM symbol of T_sym (HT and VHT: 4 us with the 0.8 us guard interval; HE:
12.8 + 0.8 = 13.6 us). 802.11ac, 20 MHz, one stream, MCS 7: 52 x 6 x 5/6 / 4
us = 65 Mbit/s; 802.11ax, same: 234 x 6 x 5/6 / 13.6 us = 86.0 Mbit/s. HE
rounds the data bits per symbol and stream down; in VHT an MCS whose data
bits per symbol are not a whole number does not exist (MCS 9 at 20 MHz with
one stream).

MAC (EDCA, best effort, the defaults of 802.11ac/ax and ns-3): AIFSN 3,
CWmin 15, CWmax 1023, slot 9 us, SIFS 16 us. A transmission opportunity
carries one A-MPDU of up to ``max_mpdus`` MPDUs (64: the block-ack window),
``max_ampdu_bytes`` bytes and the 5.484 ms PPDU limit (aPPDUMaxTime), then a
block acknowledgement at a basic rate. Each MPDU carries one TCP segment of
MSS bytes with TCP/IP (40), LLC/SNAP (8), QoS MAC header and FCS (30) and an
A-MPDU delimiter with padding (4 to 7).

Contention (Bianchi, "Performance analysis of the IEEE 802.11 distributed
coordination function", IEEE JSAC 18(3), 2000): n saturated stations, each
transmitting in a slot with probability tau, colliding with probability p =
1 - (1 - tau)^(n-1), where tau = 2 (1 - 2p) / ((1 - 2p)(W + 1) + p W (1 -
(2p)^m)) with W = CWmin + 1 and m = log2((CWmax + 1) / (CWmin + 1)) backoff
stages. The fraction of time spent delivering payload is
S = P_s P_tr E[P] / ((1 - P_tr) sigma + P_tr P_s T_s + P_tr (1 - P_s) T_c),
the classic form with EDCA's AIFS in place of DIFS and an A-MPDU as the
frame (as the literature extends it, e.g. Lin and Wong, IEEE TWC 2006).

TCP's acknowledgements (``network.transport = "tcp"``) travel the other way on
the same medium: the stations' while the access point sends, the access
point's while stations send. :meth:`WifiMac.efficiency_tcp` counts them as one
more contender, with the same backoff and a short frame: an A-MPDU of the TCP
ACKs (one per two segments, delayed ACK) of one data A-MPDU. Bianchi's slot
then has four outcomes (idle, a data frame, an ACK frame, a collision, which
lasts as long as the data frame it involves), the two-frame-length form of
the model (e.g. Bianchi and Tinnirello, IEEE INFOCOM 2003, on unequal
payloads). With one data sender this is the alternation TCP imposes: each
data A-MPDU answered by one ACK A-MPDU. It costs about 15 % of a lone
sender's goodput; against ns-3 it took the 800 kB transfers from 12 to 15 %
too fast to within 1 to 11 % (docs/network.md).

TCP senders are not saturated: a sender waits for its window's ACKs, which
the access point returns as one contender among all. ns-3's TCP uplink
goodput therefore levels off from about 10 to 20 stations (40-43 Mbit/s at
802.11ac MCS 7, 20 MHz; about 0.63 of the PHY rate at MCS 3 and 7 and in
802.11ax alike), while Bianchi's saturated model keeps falling with n (0.58
at n = 40). :meth:`WifiMac.efficiency_tcp` caps the data senders Bianchi's
model sees at ``tcp_backlog`` (:data:`TCP_BACKLOG`, 18; the observation that
few TCP stations are backlogged at a time, whatever their number, is Bruno,
Conti and Gregori's, IEEE TMC 7(2), 2008). The cap is an effective count,
fitted once to ns-3 (docs/network.md): it matches ns-3's efficiency, not its
collision rate (at N = 40 a quarter of ns-3's data A-MPDUs are retries,
Bianchi's rate for about 5 contenders, but they are smaller: 18 MPDUs on
average, not 28).

Slow start keeps a TCP message's A-MPDUs small: a sender aggregates only what
its window lets it queue (10, 20, 40, ... segments), so a 50 kB message at
MCS 7 takes three transmission opportunities of 10, 20 and 5 segments where
full A-MPDUs would take 1.25, and the handshake's SYN and SYN-ACK take two
more. :meth:`WifiMac.slow_start_factor` is the ratio of the two medium times
(1.15 at 50 kB, 1.01 at 800 kB); the ``wifi`` access scheme
lengthens a TCP message's work on the medium by it. Against ns-3 it took the
50 kB downlinks to 10-50 stations at MCS 7 from 20-27 % too fast to within 13 %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

#: Modulation and coding: MCS -> (coded bits per subcarrier, code rate).
MODULATION = [
    (1, 1 / 2),
    (2, 1 / 2),
    (2, 3 / 4),
    (4, 1 / 2),
    (4, 3 / 4),
    (6, 2 / 3),
    (6, 3 / 4),
    (6, 5 / 6),
    (8, 3 / 4),
    (8, 5 / 6),
    (10, 3 / 4),
    (10, 5 / 6),
]

#: standard -> (data subcarriers per channel width in MHz, symbol time in s with the 0.8 us
#: guard interval, highest MCS, preamble time in s for one stream, extra preamble per
#: additional stream in s).
STANDARDS = {
    "802.11n": ({20: 52, 40: 108}, 4e-6, 7, 36e-6, 4e-6),
    "802.11ac": ({20: 52, 40: 108, 80: 234, 160: 468}, 4e-6, 9, 40e-6, 4e-6),
    "802.11ax": ({20: 234, 40: 468, 80: 980, 160: 1960}, 13.6e-6, 11, 44e-6, 8e-6),
}
#: Guard intervals each standard offers (ns): HT and VHT 0.8 us or the short 0.4 us; HE 0.8,
#: 1.6 or 3.2 us (ns-3's HE default).
GUARD_INTERVALS_NS = {"802.11n": (800, 400), "802.11ac": (800, 400), "802.11ax": (800, 1600, 3200)}

SLOT_S = 9e-6
SIFS_S = 16e-6
PPDU_MAX_S = 5.484e-3
#: The block ack: a legacy preamble (20 us) and 32 bytes at the 24 Mbit/s basic rate.
BLOCK_ACK_S = 20e-6 + 32 * 8 / 24e6
#: Bytes an MPDU adds to a TCP segment: TCP/IP headers (40), LLC/SNAP (8), QoS MAC header
#: and FCS (30); then the A-MPDU delimiter (4), padded to a multiple of 4.
SEGMENT_OVERHEAD_BYTES = 78
#: Bytes of one TCP ACK's MPDU in an A-MPDU: TCP/IP with timestamps (52), LLC/SNAP (8),
#: QoS MAC header and FCS (30), the delimiter (4), padded to a multiple of 4.
TCP_ACK_MPDU_BYTES = 96
#: Bytes of a SYN's (or SYN-ACK's) MPDU: TCP/IP with its options (60), LLC/SNAP (8), QoS MAC
#: header and FCS (30), the delimiter (4).
SYN_MPDU_BYTES = 102
#: The most TCP data senders that contend at once (:meth:`WifiMac.efficiency_tcp`): the integer
#: that best fits ns-3's 800 kB uplinks from 40 and 50 stations at 802.11ac MCS 7
#: (``analysis.wifi_validation.fit_tcp_backlog``); the other 232 configurations validate it.
TCP_BACKLOG = 18


def phy_rate_bps(
    standard: str, mcs: int, channel_mhz: int, streams: int, guard_interval_ns: int = 800
) -> float:
    """Return the PHY data rate (bit/s) of ``standard`` at ``mcs``, ``channel_mhz``, ``streams``
    and ``guard_interval_ns`` (the symbol is 3.2 us, HE 12.8 us, plus the guard interval).

    Raises ValueError naming what the standard lacks (an MCS, a width, a
    stream count or an MCS that does not exist for this width and streams).
    """
    if standard not in STANDARDS:
        raise ValueError(f"unknown standard {standard!r}; use one of {', '.join(STANDARDS)}")
    subcarriers, t_sym, top, _, _ = STANDARDS[standard]
    if channel_mhz not in subcarriers:
        widths = ", ".join(str(w) for w in subcarriers)
        raise ValueError(f"{standard} has no {channel_mhz} MHz channel; use {widths}")
    if not 0 <= mcs <= top:
        raise ValueError(f"{standard} has MCS 0 to {top}, got {mcs}")
    if not 1 <= streams <= 8 or (standard == "802.11n" and streams > 4):
        raise ValueError(f"{standard} has 1 to {4 if standard == '802.11n' else 8} streams")
    if guard_interval_ns not in GUARD_INTERVALS_NS[standard]:
        allowed = ", ".join(str(g) for g in GUARD_INTERVALS_NS[standard])
        raise ValueError(f"{standard} has guard intervals {allowed} ns, got {guard_interval_ns}")
    t_sym += (guard_interval_ns - 800) * 1e-9
    bits, rate = MODULATION[mcs]
    per_symbol = subcarriers[channel_mhz] * bits * rate * streams
    if standard == "802.11ax":  # HE rounds the data bits per symbol down (N_DBPS)
        return math.floor(per_symbol / streams + 1e-9) * streams / t_sym
    if abs(per_symbol - round(per_symbol)) > 1e-9:
        raise ValueError(
            f"{standard} MCS {mcs} does not exist at {channel_mhz} MHz with {streams} stream(s)"
        )
    return round(per_symbol) / t_sym


@dataclass(frozen=True)
class WifiMac:
    """One Wi-Fi cell's MAC: its PHY rate and the A-MPDU a transmission opportunity carries.

    ``phy_bps``: the data rate; ``preamble_s``: the PPDU's preamble; ``mss``:
    TCP's segment size (bytes); ``max_mpdus``, ``max_ampdu_bytes``: the
    A-MPDU's limits; ``cw_min``, ``cw_max``, ``aifsn``: EDCA's best-effort
    parameters; ``tcp_backlog``: the most TCP data senders that contend at once.
    """

    phy_bps: float
    preamble_s: float = 40e-6
    mss: int = 1448
    max_mpdus: int = 64
    max_ampdu_bytes: int = 6_500_631
    cw_min: int = 15
    cw_max: int = 1023
    aifsn: int = 3
    tcp_backlog: int = TCP_BACKLOG

    @property
    def aifs_s(self) -> float:
        """Return AIFS = SIFS + AIFSN slots (s)."""
        return SIFS_S + self.aifsn * SLOT_S

    @property
    def mpdu_bytes(self) -> int:
        """Return the bytes of one MPDU in an A-MPDU (a full TCP segment, delimiter, padding)."""
        raw = self.mss + SEGMENT_OVERHEAD_BYTES
        return 4 * math.ceil((raw + 4) / 4)

    @property
    def mpdus(self) -> int:
        """Return the MPDUs one A-MPDU carries: the least of the window, the bytes and 5.484 ms."""
        by_time = int((PPDU_MAX_S - self.preamble_s) * self.phy_bps / (8 * self.mpdu_bytes))
        by_bytes = self.max_ampdu_bytes // self.mpdu_bytes
        return max(1, min(self.max_mpdus, by_bytes, by_time))

    @property
    def payload_bits(self) -> float:
        """Return the TCP payload bits one A-MPDU delivers: mpdus x MSS x 8."""
        return self.mpdus * self.mss * 8.0

    def frame_s(self, nbytes: int) -> float:
        """Return the time (s) of one PPDU of ``nbytes`` at the PHY rate, then SIFS, the block
        ack (or ack) and AIFS."""
        return self.preamble_s + nbytes * 8 / self.phy_bps + SIFS_S + BLOCK_ACK_S + self.aifs_s

    @property
    def success_s(self) -> float:
        """Return T_s: the PPDU, SIFS, the block ack and AIFS (s)."""
        return self.frame_s(self.mpdus * self.mpdu_bytes)

    @property
    def collision_s(self) -> float:
        """Return T_c: the colliding PPDU, then EIFS = SIFS + a block ack's time + AIFS (s), which
        every station waits after a frame it could not decode: the same as T_s."""
        return self.success_s

    @property
    def tcp_ack_s(self) -> float:
        """Return the time (s) of one A-MPDU of TCP ACKs answering a data A-MPDU: the ACKs of
        its segments (one per two: delayed ACK), SIFS, the block ack and AIFS."""
        return self.frame_s(math.ceil(self.mpdus / 2) * TCP_ACK_MPDU_BYTES)

    def txop_s(self, mpdus: int) -> float:
        """Return the medium time (s) of one TCP transmission opportunity of ``mpdus`` segments
        with nobody else contending: the data A-MPDU (its PPDU, SIFS, block ack, AIFS), the
        receiver's A-MPDU of TCP ACKs (one per two segments) and a mean backoff of CWmin / 2
        slots before each."""
        data = self.frame_s(mpdus * self.mpdu_bytes)
        acks = self.frame_s(math.ceil(mpdus / 2) * TCP_ACK_MPDU_BYTES)
        return data + acks + 2 * self.mean_backoff_s

    @property
    def mean_backoff_s(self) -> float:
        """Return a lone sender's mean backoff before a frame: CWmin / 2 slots (s)."""
        return self.cw_min / 2 * SLOT_S

    def slow_start_factor(self, size_bytes: int, initial_window: int = 10) -> float:
        """Return how much more medium time a TCP message of ``size_bytes`` takes than the same
        segments in full A-MPDUs: a ratio >= 1 (an opportunity's cost is affine in its segments),
        close to 1 for large messages.

        A sender aggregates only what its congestion window lets it queue: in slow
        start the windows are ``initial_window`` x 2^k segments, each sent in A-MPDUs
        of at most :attr:`mpdus`, and each A-MPDU costs a whole transmission
        opportunity, its receiver's TCP ACKs included (:meth:`txop_s`). The
        connection's SYN and SYN-ACK take two more, of one short frame each.
        Memoised per (MAC, size, window).
        """
        return _slow_start_factor(self, int(size_bytes), int(initial_window))

    def multicast_s(self, size_bytes: int, rate_bps: float) -> float:
        """Return the time (s) to broadcast ``size_bytes`` in group-addressed frames at ``rate_bps``.

        One segment per frame (no aggregation, no acknowledgement), each after
        AIFS and a mean backoff of CWmin / 2 slots, with a legacy preamble (20 us).
        """
        frames = max(1, -(-size_bytes // self.mss))
        frame = 20e-6 + (self.mss + SEGMENT_OVERHEAD_BYTES) * 8 / rate_bps
        return frames * (frame + self.aifs_s + self.mean_backoff_s)

    def efficiency(self, n: int) -> float:
        """Return the goodput of n saturated contenders over the PHY rate (Bianchi; see above).

        ``efficiency(1)``: one sender alone, backing off CWmin / 2 slots on
        average before each A-MPDU. Memoised per (MAC, n).
        """
        return _efficiency(self, n)

    def efficiency_tcp(self, n: int) -> float:
        """Return the goodput of n TCP senders over the PHY rate: at most :attr:`tcp_backlog` of
        them contend at once, and their receivers' TCP ACKs contend too (one more contender
        with :attr:`tcp_ack_s` frames; see above).

        Memoised per (MAC, n).
        """
        return _efficiency(self, min(n, self.tcp_backlog), True)

    def goodput_bps(self, n: int) -> float:
        """Return the aggregate TCP goodput of n saturated contenders (bit/s), ACKs aside."""
        return self.efficiency(n) * self.phy_bps


def bianchi_tau(n: int, W: int, m: int) -> tuple[float, float]:
    """Solve Bianchi's fixed point for n stations; returns (tau, p).

    tau = 2 (1 - 2p) / ((1 - 2p)(W + 1) + p W (1 - (2p)^m)) and
    p = 1 - (1 - tau)^(n - 1), by bisection on p in [0, 1) (the right side
    minus p is decreasing in p).
    """
    if n == 1:
        return 2 / (W + 1), 0.0

    def tau_of(p: float) -> float:
        if abs(1 - 2 * p) < 1e-12:  # the limit at p = 1/2
            return 2 / (W + 1 + p * W * m)
        return 2 * (1 - 2 * p) / ((1 - 2 * p) * (W + 1) + p * W * (1 - (2 * p) ** m))

    lo, hi = 0.0, 1.0 - 1e-12
    for _ in range(200):
        mid = (lo + hi) / 2
        if 1 - (1 - tau_of(mid)) ** (n - 1) > mid:
            lo = mid
        else:
            hi = mid
    p = (lo + hi) / 2
    return tau_of(p), p


@lru_cache(maxsize=4096)
def _efficiency(mac: WifiMac, n: int, tcp_acks: bool = False) -> float:
    """Bianchi's slot for n saturated data senders, plus (``tcp_acks``) the side sending their
    TCP ACKs as one more contender with :attr:`WifiMac.tcp_ack_s` frames."""
    W = mac.cw_min + 1
    m = round(math.log2((mac.cw_max + 1) / W))
    contenders = n + tcp_acks
    tau, _ = bianchi_tau(contenders, W, m)
    idle = (1 - tau) ** contenders
    alone = tau * (1 - tau) ** (contenders - 1)  # one given contender transmits, no other
    data, ack = n * alone, alone * tcp_acks
    collision = 1 - idle - data - ack  # two or more, at least one of them a data sender
    busy = idle * SLOT_S + data * mac.success_s + ack * mac.tcp_ack_s + collision * mac.collision_s
    return data * mac.payload_bits / busy / mac.phy_bps


@lru_cache(maxsize=4096)
def _slow_start_factor(mac: WifiMac, size_bytes: int, initial_window: int) -> float:
    """:meth:`WifiMac.slow_start_factor`: the opportunities of the slow-start windows against
    ceil-free full A-MPDUs (segments / mpdus of them)."""
    segments = max(1, -(-size_bytes // mac.mss))
    full = mac.mpdus
    spent, sent, window = 0.0, 0, initial_window
    while sent < segments:
        burst = min(window, segments - sent)
        sent += burst
        window *= 2
        whole, rest = divmod(burst, full)
        spent += whole * mac.txop_s(full) + (mac.txop_s(rest) if rest else 0.0)
    spent += 2 * (mac.frame_s(SYN_MPDU_BYTES) + mac.mean_backoff_s)
    return spent / (segments / full * mac.txop_s(full))
