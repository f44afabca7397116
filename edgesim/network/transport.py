"""TCP's start-up cost per message, in closed form (``network.transport = "tcp"``).

A message sent over a fresh TCP connection is not sent at the link rate from
its first byte: the connection's handshake costs one round trip (SYN,
SYN-ACK; the data leaves with the ACK), and slow start sends an initial
window of ``initial_window`` segments of ``mss`` bytes, then doubles the
window each round trip. While a window takes less than a round trip to send
at the message's lone rate, the sender idles for the rest of the round trip;
once a window fills the round trip (the bandwidth-delay product), the pipe
is full and the message goes at the link's rate. For a message of N
segments, airtime a alone and round trip RTT the extra time is

    RTT + sum over slow-start rounds k before the last (while w_k < N - sent
    and w_k a / N < RTT) of (RTT - w_k a / N),   w_k = initial_window 2^k.

edgesim adds it before the message reaches the network (the medium serves
others meanwhile). Left out: losses interacting with congestion control (a
loss halves the window: edgesim's ARQ models link-layer retransmissions
only), delayed ACKs, the receive window, and the rate a shared medium leaves
the message (slow start is timed at its lone rate: the cost is a lower
bound when the medium is shared).
"""

from __future__ import annotations

import numpy as np

#: TCP's initial window (RFC 6928) and the segment size of a 1500-byte MTU with timestamps.
INITIAL_WINDOW = 10
MSS_BYTES = 1448


def tcp_extra_ns(
    size_bytes: np.ndarray,
    airtime_ns: np.ndarray,
    rtt_ns: int,
    initial_window: int = INITIAL_WINDOW,
    mss: int = MSS_BYTES,
) -> np.ndarray:
    """Return the handshake and slow-start idle time of each message (int64 ns, shape (m,)).

    ``size_bytes`` (m,): the messages; ``airtime_ns`` (m,): each one's time
    alone on its link; ``rtt_ns``: the connection's round trip.
    """
    size = np.asarray(size_bytes, dtype=np.int64).reshape(-1)
    air = np.broadcast_to(np.asarray(airtime_ns, dtype=np.float64), size.shape)
    segments = np.maximum(1, -(-size // mss))
    per_segment = air / segments
    extra = np.full(size.shape, float(rtt_ns))
    sent = np.zeros(size.shape, dtype=np.int64)
    window = np.full(size.shape, initial_window, dtype=np.int64)
    going = np.ones(size.shape, dtype=bool)
    while going.any():
        burst = window * per_segment
        going &= (sent + window < segments) & (burst < rtt_ns)
        extra[going] += rtt_ns - burst[going]
        sent[going] += window[going]
        window[going] *= 2
    return np.rint(extra).astype(np.int64)
