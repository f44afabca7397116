"""Processor sharing's event walk, compiled: what :mod:`edgesim.network.medium` runs on large
exchanges.

The walk of a processor-sharing medium is sequential: each event (an arrival or a
departure) updates the time and the service every message in service has had from the
previous event's, so no numpy expression does it without changing the order of the
floating-point operations, and the results must be the same bits in every fidelity and on
every executor. In Python it costs about 1.5 us an event: 30 ms an exchange at K = 10^4,
most of an FFL run in cells of 100 devices. Here the same loop, with the same operations in
the same order (IEEE double, no fast-math, no fused multiply-add: numba's defaults), runs
compiled by numba, about 50x faster.

numba is imported only when a walk is large enough to pay for it
(:data:`~edgesim.network.medium.COMPILED_FROM`), so small runs never load it; the
compiled functions are cached on disk (``cache=True``) after their first use.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _push(tag, who, size, value, index):
    """Push (value, index) on the heap held in tag[:size], who[:size]; return the new size.
    Ordered by value, then index (as Python's heapq orders (value, index) tuples)."""
    pos = size
    tag[pos] = value
    who[pos] = index
    while pos > 0:
        parent = (pos - 1) >> 1
        if tag[parent] < value or (tag[parent] == value and who[parent] < index):
            break
        tag[pos] = tag[parent]
        who[pos] = who[parent]
        pos = parent
    tag[pos] = value
    who[pos] = index
    return size + 1


@njit(cache=True, nogil=True)
def _pop(tag, who, size):
    """Remove the least (value, index) of the heap in tag[:size], who[:size]; return the new size."""
    size -= 1
    value, index = tag[size], who[size]
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        right = child + 1
        if right < size and (
            tag[right] < tag[child] or (tag[right] == tag[child] and who[right] < who[child])
        ):
            child = right
        if value < tag[child] or (value == tag[child] and index < who[child]):
            break
        tag[pos] = tag[child]
        who[pos] = who[child]
        pos = child
    if size > 0:
        tag[pos] = value
        who[pos] = index
    return size


@njit(cache=True, nogil=True)
def ps_staggered(arrive, work, bounds, slowness, by_period):
    """Processor sharing of groups sorted by (group, arrival, work): group g is
    ``bounds[g] : bounds[g + 1]`` of ``arrive`` and ``work`` (int64 ns).

    ``by_period``: each group's busy periods (those of one FIFO server: a message arriving
    after its medium emptied starts one) are walked one by one, a message alone in its
    period through at arrival + work; else each group is walked whole.
    ``slowness[n]``: the ns per unit of service with n messages in service (n, or
    n / efficiency(n)). Returns when each message is through (float64 ns, to be rounded).
    The operations of :func:`edgesim.network.medium._ps_staggered` and
    :func:`edgesim.network.medium._ps_heap`, in their order.
    """
    m = arrive.size
    through = np.empty(m)
    tag = np.empty(m)
    who = np.empty(m, dtype=np.int64)
    pair_at = np.empty(m, dtype=np.int64)
    pair_count = np.empty(m, dtype=np.int64)
    pair_of = np.empty(m, dtype=np.int64)
    pair_done = np.empty(m)
    for g in range(bounds.size - 1):
        s, e = bounds[g], bounds[g + 1]
        start = s
        c = 0
        top = 0
        empty_at = 0
        for k in range(s, e + 1):
            if k < e:
                c += work[k]
                v = arrive[k] - (c - work[k])
                top = v if k == s else max(top, v)
                if k == s or not by_period or arrive[k] < empty_at:
                    empty_at = c + top
                    continue
            # a period start..k-1 ends here
            if k - start == 1 and by_period:
                through[start] = arrive[start] + work[start]
            else:
                _walk(
                    arrive,
                    work,
                    start,
                    k,
                    slowness,
                    through,
                    tag,
                    who,
                    pair_at,
                    pair_count,
                    pair_of,
                    pair_done,
                )
            start = k
            empty_at = c + top
    return through


@njit(cache=True, nogil=True)
def _walk(arrive, work, s, e, slowness, through, tag, who, at, count, pair_of, done):
    """Walk one period, messages s..e-1, over its distinct (arrival, work) pairs with a heap of
    tags: :func:`edgesim.network.medium._ps_heap`'s loop. Writes ``through[s:e]``."""
    pairs = 0
    for k in range(s, e):
        if k == s or arrive[k] != arrive[k - 1] or work[k] != work[k - 1]:
            at[pairs] = k
            count[pairs] = 0
            pairs += 1
        count[pairs - 1] += 1
        pair_of[k - s] = pairs - 1
    size = 0
    t = float(arrive[s])
    served = 0.0
    n = 0
    i = 0
    while i < pairs or size > 0:
        slow = slowness[n]
        leave = t + (tag[0] - served) * slow if size > 0 else np.inf
        if i < pairs and arrive[at[i]] <= leave:
            if n:
                served += (arrive[at[i]] - t) / slow
            t = float(arrive[at[i]])
            size = _push(tag, who, size, served + work[at[i]], i)
            n += count[i]
            i += 1
        else:
            served = tag[0]
            c = who[0]
            size = _pop(tag, who, size)
            t = leave
            done[c] = t
            n -= count[c]
    for k in range(s, e):
        through[k] = done[pair_of[k - s]]


@njit(cache=True, nogil=True)
def fifo_walks(arrive, work, bounds, servers):
    """First come, first served on ``servers`` R servers per group: group g is
    ``bounds[g] : bounds[g + 1]`` of ``arrive`` and ``work`` (int64 ns, sorted by arrival);
    each message takes the first free server. Returns when each is through (int64 ns),
    as :func:`edgesim.network.medium._fifo_many` computes it."""
    done = arrive + work
    free = np.empty(servers, dtype=np.int64)
    for g in range(bounds.size - 1):
        s, e = bounds[g], bounds[g + 1]
        if e - s <= servers:
            continue
        free[:] = arrive[s]  # the servers' next free instants (a min-heap)
        for k in range(s, e):
            start = max(arrive[k], free[0])
            done[k] = start + work[k]
            _replace_least(free, done[k])
    return done


@njit(cache=True, nogil=True)
def _replace_least(heap, value):
    """Replace the least of the min-heap ``heap`` with ``value`` (heapq.heapreplace)."""
    size = heap.size
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and heap[child + 1] < heap[child]:
            child += 1
        if value <= heap[child]:
            break
        heap[pos] = heap[child]
        pos = child
    heap[pos] = value


@njit(cache=True, nogil=True)
def contention(down_arrive, down_work, up_offset, up_work, sends, efficiency):
    """One contended medium carrying both directions of an exchange (a Wi-Fi cell): the walk
    of :func:`edgesim.network.medium.contention_ns`, its operations in its order.

    Int64 ns arrays aligned with the downlink messages; ``sends`` (bool): whether each
    device replies; ``efficiency[n]``: the medium's delivery with n contenders (n >= 1).
    Returns (downlink through, uplink through; -1 for no reply) in float64 ns.
    """
    m = down_arrive.size
    down_done = np.zeros(m)
    up_done = np.full(m, -1.0)
    # three heaps of (time or tag, tie): arrivals (tie: 0 = down, 1 = up, then the message,
    # as the tuple (time, class, i) orders), downlink tags and uplink tags (tie: the message)
    a_key, a_who = np.empty(2 * m), np.empty(2 * m, dtype=np.int64)
    d_key, d_who = np.empty(m), np.empty(m, dtype=np.int64)
    u_key, u_who = np.empty(m), np.empty(m, dtype=np.int64)
    a_n = d_n = u_n = 0
    for i in range(m):
        a_n = _push(a_key, a_who, a_n, float(down_arrive[i]), i)
    served_down = served_up = 0.0
    t = a_key[0] if a_n else 0.0
    while a_n or d_n or u_n:
        contenders = u_n + (1 if d_n > 0 else 0)
        share = efficiency[contenders] / contenders if contenders else 0.0
        rate_down = share / d_n if d_n else 0.0
        leave_down = t + (d_key[0] - served_down) / rate_down if d_n else np.inf
        leave_up = t + (u_key[0] - served_up) / share if u_n else np.inf
        leave = min(leave_down, leave_up)
        if a_n and a_key[0] <= leave:
            when, who = a_key[0], a_who[0]
            a_n = _pop(a_key, a_who, a_n)
            served_down += (when - t) * rate_down
            served_up += (when - t) * share
            t = when
            i = who % m
            if who < m:
                d_n = _push(d_key, d_who, d_n, served_down + down_work[i], i)
            else:
                u_n = _push(u_key, u_who, u_n, served_up + up_work[i], i)
            continue
        served_down += (leave - t) * rate_down
        served_up += (leave - t) * share
        t = leave
        if leave_down <= leave_up:
            served_down, i = d_key[0], d_who[0]
            d_n = _pop(d_key, d_who, d_n)
            down_done[i] = t
            if sends[i]:
                a_n = _push(a_key, a_who, a_n, t + up_offset[i], m + i)
        else:
            served_up, i = u_key[0], u_who[0]
            u_n = _pop(u_key, u_who, u_n)
            up_done[i] = t
    return down_done, up_done
