"""TCP's start-up cost per message, in closed form (``network.transport = "tcp"``).

A message sent over a fresh TCP connection is not sent at the link rate from
its first byte: the connection's handshake costs one round trip (SYN,
SYN-ACK; the data leaves with the ACK), and slow start sends an initial
window of ``initial_window`` segments of ``mss`` bytes, then doubles the
window each round trip. While a window takes less than a round trip to send
at the rate the message gets, the sender idles for the rest of the round
trip; once a window fills the round trip (the bandwidth-delay product), the
pipe is full and the message goes at the link's rate.

Slow start shared among concurrent senders. n flows that share a medium
(a cell's channel, round robin's processor sharing) each get 1/n of its
rate, so a window of w segments of lone time a / N takes w n a / N to send:
the idle part of each round trip shrinks, because the others' windows fill
it (the medium is idle only when all n flows idle at once). For a message of
N segments, airtime a alone, round trip RTT and ``share`` n the extra time is

    RTT + sum over slow-start rounds k before the last (while sent_k + w_k < N
    and w_k n a / N < RTT) of (RTT - w_k n a / N),   w_k = initial_window 2^k,

and the medium then serves the message (n a with the others, by processor
sharing). n = 1 is a message alone. For n equal flows starting together it is
exact in the fluid model in which each flow may send, by the end of round k,
its windows up to w_k, and the medium serves the flows with data at equal
rates: the medium idles RTT - n w_k a / N in each such round, and every flow
finishes at the same instant. :func:`tcp_shares` finds each message's n from
the exchange's schedule of its medium (processor sharing over each message's
lone time from when it would start): the mean number of messages it shares
with, (its time there) / (its lone time).

edgesim adds the extra before the message reaches the network (the medium
serves others meanwhile). Left out: losses interacting with congestion
control (a loss halves the window: edgesim's ARQ models link-layer
retransmissions only), delayed ACKs, the receive window, and a wired hop
slower than the radio (slow start is timed at the radio's rate).
"""

from __future__ import annotations

import numpy as np

from edgesim.network.medium import finish_ns

#: TCP's initial window (RFC 6928) and the segment size of a 1500-byte MTU with timestamps.
INITIAL_WINDOW = 10
MSS_BYTES = 1448


def tcp_extra_ns(
    size_bytes: np.ndarray,
    airtime_ns: np.ndarray,
    rtt_ns: int,
    initial_window: int = INITIAL_WINDOW,
    mss: int = MSS_BYTES,
    share: np.ndarray | float = 1.0,
) -> np.ndarray:
    """Return the handshake and slow-start idle time of each message (int64 ns, shape (m,)).

    ``size_bytes`` (m,): the messages; ``airtime_ns`` (m,): each one's time
    alone on its link; ``rtt_ns``: the connection's round trip; ``share``
    (m,) or a number >= 1: how many flows share the message's medium during
    its slow start (each sends at 1 / share of its lone rate; module
    docstring, :func:`tcp_shares`).
    """
    size = np.asarray(size_bytes, dtype=np.int64).reshape(-1)
    air = np.broadcast_to(np.asarray(airtime_ns, dtype=np.float64), size.shape)
    segments = np.maximum(1, -(-size // mss))
    per_segment = air * np.broadcast_to(np.asarray(share, dtype=np.float64), size.shape) / segments
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


def tcp_shares(
    start_ns: np.ndarray, work_ns: np.ndarray, medium: np.ndarray | None = None
) -> np.ndarray:
    """Return how many flows each message shares its medium with during slow start (float64, (m,)).

    ``start_ns`` (m,): when each message would start (before TCP's start-up);
    ``work_ns`` (m,): its time alone on the medium; ``medium`` (m,): which
    medium it crosses (messages of different media do not interact; default
    one). The share is the message's time on the medium under processor
    sharing over its time alone, (finish - start) / work, at least 1: n for
    n equal messages starting together. A message without work shares nothing (1).
    """
    start = np.asarray(start_ns, dtype=np.int64).reshape(-1)
    work = np.asarray(work_ns, dtype=np.int64).reshape(-1)
    if start.size == 0:
        return np.ones(0)
    done = finish_ns(start, work, medium, "ps")
    share = (done - start) / np.maximum(work, 1)
    return np.where(work > 0, np.maximum(share, 1.0), 1.0)
