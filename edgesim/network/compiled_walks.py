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

:func:`ps_grouped` is the whole of a processor-sharing call (grouping, sorting, the closed
form of media whose messages arrive together, the walks) in one compiled call: at K = 10^4
in cells of 100 it takes a call from about 0.7 ms to about 0.3 ms, most of the saving in
not sorting 10^4 messages by three keys. :func:`find_pairs` and :func:`ps_pairs` go
further where the call's messages hold few distinct (group, arrival, work) triples (an
exchange's 10^4 uplinks in 100 cells hold a few hundred): the triples are found with a
hash table, walked once each with their message counts, and each message reads its
triple's answer: about 0.1 ms a call.

numba is imported only when a walk is large enough to pay for it
(:data:`~edgesim.network.medium.COMPILED_FROM`), so small runs never load it; the
compiled functions are cached on disk (``cache=True``) after their first use. The module is
one piece on purpose: numba's cache sees a change of a kernel's own file, not of a kernel it
calls in another file (which would then run stale), and the walks share their heap and
their walk over pairs.
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
def _walk_group(arrive, work, s, e, slowness, by_period, ints, floats):
    """Processor sharing of one group, messages s..e-1 sorted by (arrival, work): the
    operations of :func:`edgesim.network.medium._ps_staggered` and
    :func:`edgesim.network.medium._ps_heap`, in their order. ``by_period``: the group's busy
    periods (those of one FIFO server: a message arriving after its medium emptied starts
    one) are walked one by one, a message alone in its period through at arrival + work;
    else the group is walked whole (a medium with an efficiency). ``ints`` and ``floats``:
    :func:`ps_grouped`'s scratch (:func:`_walk` uses ints rows 4 to 7, floats rows 1 and 2).
    Writes ``floats[0, s:e]``, when each message is through (float64 ns, to be rounded)."""
    through = floats[0]
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
            _walk(arrive, work, start, k, slowness, ints, floats)
        start = k
        empty_at = c + top


@njit(cache=True, nogil=True)
def _walk(arrive, work, s, e, slowness, ints, floats):
    """Walk one period, messages s..e-1, over its distinct (arrival, work) pairs with a heap of
    tags: :func:`edgesim.network.medium._ps_heap`'s loop. Writes ``floats[0, s:e]``; its
    scratch is ``ints`` rows 4 to 7 (the heap's pair indices, each pair's first message and
    count, each message's pair) and ``floats`` rows 1 and 2 (the heap's tags, each pair's
    instant)."""
    through, tag, done = floats[0], floats[1], floats[2]
    who, at, count, pair_of = ints[4], ints[5], ints[6], ints[7]
    pairs = 0
    for k in range(s, e):
        if k == s or arrive[k] != arrive[k - 1] or work[k] != work[k - 1]:
            at[pairs] = k
            count[pairs] = 0
            pairs += 1
        count[pairs - 1] += 1
        pair_of[k - s] = pairs - 1
    _walk_pairs(arrive, work, at, count, pairs, slowness, tag, who, done)
    for k in range(s, e):
        through[k] = done[pair_of[k - s]]


@njit(cache=True, nogil=True)
def _walk_pairs(arrive, work, at, count, pairs, slowness, tag, who, done):
    """The heap walk of one period's ``pairs`` distinct (arrival, work) pairs, sorted: pair i
    arrives at ``arrive[at[i]]`` with work ``work[at[i]]``, ``count[i]`` messages.
    :func:`edgesim.network.medium._ps_heap`'s loop; writes ``done[i]``, when pair i is
    through (float64 ns). ``tag`` and ``who``: the heap's scratch."""
    size = 0
    t = float(arrive[at[0]])
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
    of :func:`edgesim.network.contention.contention_ns`, its operations in its order.

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


@njit(cache=True, nogil=True)
def ps_grouped(arrive, work, group, counts, slowness, with_efficiency, order, ints, floats):
    """Egalitarian processor sharing of every group of one call, from the messages in any order:
    :func:`edgesim.network.medium._processor_sharing`'s answer, the same bits.

    ``group`` (int64, 0 .. G - 1) names each message's medium and ``counts`` (G,) how many
    messages each has; ``slowness[n]``: the ns per unit of service with n in service (n,
    or n / efficiency(n)); ``with_efficiency``: whether an efficiency was given;
    ``order``: the messages sorted by (group, arrival, work), or empty; ``ints`` and
    ``floats``: scratch space, int64 (8, >= m) and float64 (3, >= m), reused from call to
    call (fresh pages cost a large call about a third of its time). Without ``order`` the
    messages are counted into their groups, each group sorted by (arrival, work) (equal
    messages finish together, so ties may come in any order); a group whose messages all
    arrive together takes the closed form of :func:`edgesim.network.medium._ps_together`
    (with an efficiency, its float running sum carried across those groups in group
    order, as that function's one ``cumsum`` does), the others :func:`_walk_group`. Returns
    when each message is through (int64 ns), in the messages' order.
    """
    m = arrive.size
    G = counts.size
    start = np.zeros(G + 1, dtype=np.int64)
    for g in range(G):
        start[g + 1] = start[g] + counts[g]
    if order.size == m:
        where = order
    else:
        fill = start[:G].copy()
        where = ints[0, :m]  # message indices, grouped, ascending in a group
        for i in range(m):
            g = group[i]
            where[fill[g]] = i
            fill[g] += 1
    a = ints[1, :m]
    w = ints[2, :m]
    few = np.empty((6, FEW_PAIRS), dtype=np.int64)  # _sort_few's scratch
    for g in range(G):
        s, e = start[g], start[g + 1]
        if e - s == 0:
            continue
        ordered = True
        for k in range(s, e):
            a[k] = arrive[where[k]]
            w[k] = work[where[k]]
            if k > s and (a[k] < a[k - 1] or (a[k] == a[k - 1] and w[k] < w[k - 1])):
                ordered = False
        if not ordered and not _sort_few(a, w, where, s, e, ints[3], ints[4], few):
            a_low, a_high = a[s:e].min(), a[s:e].max()
            w_low, w_high = w[s:e].min(), w[s:e].max()
            w_span = w_high - w_low + 1
            if (a_high - a_low + 1) < (2**62) // w_span:
                by_both = np.argsort((a[s:e] - a_low) * w_span + (w[s:e] - w_low))
            else:
                by_work = np.argsort(w[s:e])
                by_both = by_work[np.argsort(a[s:e][by_work], kind="mergesort")]
            moved = where[s:e][by_both]
            where[s:e] = moved
            for k in range(s, e):
                a[k] = arrive[where[k]]
                w[k] = work[where[k]]
    done = ints[3, :m]
    through = floats[0, :m]  # (written by _walk_group, which also uses ints rows 4 to 7)
    running = 0.0  # the together groups' float running sum (with an efficiency)
    for g in range(G):
        s, e = start[g], start[g + 1]
        if e - s == 0:
            continue
        if a[s] == a[e - 1]:  # all arrive together: the closed form
            N = e - s
            if with_efficiency:
                before = 0.0
                for k in range(s, e):
                    step = w[k] - w[k - 1] if k > s else w[k]
                    span = step * slowness[N - (k - s)]
                    running += span
                    if k == s:
                        before = running - span
                    done[k] = a[k] + np.int64(np.rint(running - before))
            else:
                c = 0
                for k in range(s, e):
                    step = w[k] - w[k - 1] if k > s else w[k]
                    c += step * (N - (k - s))
                    done[k] = a[k] + c
            continue
        _walk_group(a, w, s, e, slowness, not with_efficiency, ints, floats)
        for k in range(s, e):
            done[k] = np.int64(np.rint(through[k]))
    out = np.empty(m, dtype=np.int64)
    for k in range(m):
        out[where[k]] = done[k]
    return out


#: A group with at most this many distinct (arrival, work) pairs is sorted by counting
#: (:func:`_sort_few`); one with more by ``np.argsort``.
FEW_PAIRS = 16


@njit(cache=True, nogil=True)
def _sort_few(a, w, where, s, e, pair, moved, few):
    """Sort messages s..e-1 (``a``, ``w`` and ``where`` together) by (arrival, work) if they
    hold at most :data:`FEW_PAIRS` distinct pairs: the pairs found by a scan, sorted, then
    the messages counted into place (O(messages x pairs), no allocation). ``pair`` and
    ``moved``: scratch of the messages' size; ``few``: int64 (6, :data:`FEW_PAIRS`) scratch.
    Returns whether it sorted (False: too many pairs)."""
    pa, pw, pc, rank, at, of_rank = few[0], few[1], few[2], few[3], few[4], few[5]
    pc[:] = 0
    P = 0
    for k in range(s, e):
        j = 0
        while j < P and (pa[j] != a[k] or pw[j] != w[k]):
            j += 1
        if j == P:
            if P == FEW_PAIRS:
                return False
            pa[P] = a[k]
            pw[P] = w[k]
            P += 1
        pc[j] += 1
        pair[k] = j
    # rank[j]: where pair j comes in (arrival, work) order
    for j in range(P):
        r = 0
        for i in range(P):
            if pa[i] < pa[j] or (pa[i] == pa[j] and pw[i] < pw[j]):
                r += 1
        rank[j] = r
    for j in range(P):
        of_rank[rank[j]] = j
    total = s
    for r in range(P):  # at[r]: the first place of rank r's messages
        at[r] = total
        total += pc[of_rank[r]]
    for k in range(s, e):
        r = rank[pair[k]]
        moved[at[r]] = where[k]
        at[r] += 1
    k = s
    for r in range(P):
        j = of_rank[r]
        for _ in range(pc[j]):
            where[k] = moved[k]
            a[k] = pa[j]
            w[k] = pw[j]
            k += 1
    return True


@njit(cache=True, nogil=True)
def find_pairs(arrive, work, group, limit, ints):
    """Find the distinct (group, arrival, work) triples of a processor-sharing call, if there
    are at most ``limit`` of them, with a hash table (no sort of the messages).

    ``ints``: int64 scratch (8, >= m) for the m messages; row 0 holds the hash table (the
    least power of two >= 2 ``limit`` + 2 slots: when that is more than a row, the call
    returns (-1, 0)). Writes ``ints[1, :m]``, each message's triple (in the order found),
    ``ints[6, :P]``, each found triple's rank in (group, arrival, work) order, and rows 2
    to 5 ``[:P]``, the P triples in that order: group, arrival, work and how many messages
    share it.
    Returns (P, the most messages of one group), or (-1, 0) when there are more than
    ``limit`` triples (the walk by messages then does better).
    """
    m = arrive.size
    cap = 1
    while cap < 2 * limit + 2:
        cap *= 2
    if cap > ints.shape[1]:
        return -1, 0
    mask = cap - 1
    table = ints[0, :cap]
    table[:] = -1
    pair_of = ints[1, :m]
    pg, pa, pw, pc = ints[2], ints[3], ints[4], ints[5]
    P = 0
    for i in range(m):
        g, a, w = group[i], arrive[i], work[i]
        h = g * 0x2545F4914F6CDD1D + a * 0x1F3D5B79A2E0C5B3 + w * 0x5851F42D4C957F2D
        h ^= h >> 29
        slot = h & mask
        while True:
            j = table[slot]
            if j < 0:
                if P == limit:
                    return -1, 0
                table[slot] = j = P
                pg[P], pa[P], pw[P], pc[P] = g, a, w, 0
                P += 1
                break
            if pa[j] == a and pw[j] == w and pg[j] == g:
                break
            slot = (slot + 1) & mask
        pc[j] += 1
        pair_of[i] = j
    # the triples in (group, arrival, work) order: stable sorts from the least key
    order = np.argsort(pw[:P], kind="mergesort")
    order = order[np.argsort(pa[:P][order], kind="mergesort")]
    order = order[np.argsort(pg[:P][order], kind="mergesort")]
    rank = ints[6]
    for r in range(P):
        rank[order[r]] = r
    moved = np.empty((4, P), dtype=np.int64)
    for r in range(P):
        j = order[r]
        moved[0, r], moved[1, r], moved[2, r], moved[3, r] = pg[j], pa[j], pw[j], pc[j]
    busiest = 0
    total = 0
    for r in range(P):
        pg[r], pa[r], pw[r], pc[r] = moved[0, r], moved[1, r], moved[2, r], moved[3, r]
        total = pc[r] if r == 0 or pg[r] != pg[r - 1] else total + pc[r]
        busiest = max(busiest, total)
    return P, busiest


@njit(cache=True, nogil=True)
def ps_pairs(P, slowness, with_efficiency, ints, floats, out):
    """Processor sharing of a call whose messages :func:`find_pairs` gathered into its ``P``
    triples (in ``ints``): :func:`ps_grouped`'s answer, the same bits, computed once per
    triple (equal messages finish together) and written to ``out`` (int64 ns, each
    message's). Per group, as :func:`ps_grouped` per message: the closed form when all
    arrive together (with an efficiency, the float running sum carried across those
    groups), else the busy periods of :func:`_walk_group` (a period of one message through
    at arrival + work), each walked over its triples (:func:`_walk_pairs`). Reads ``ints``
    rows 1 to 6 as :func:`find_pairs` left them; writes rows 0 and 7 (the heap's triple
    indices, a period's triples) and ``floats`` rows 1 and 2 (the heap's tags, each triple's
    float instant)."""
    pair_of = ints[1, : out.size]
    pg, pa, pw, pc, rank = ints[2], ints[3], ints[4], ints[5], ints[6]
    who, at = ints[0], ints[7]
    done = np.empty(P, dtype=np.int64)
    tag, through = floats[1], floats[2]
    running = 0.0
    s = 0
    while s < P:
        e = s + 1
        while e < P and pg[e] == pg[s]:
            e += 1
        N = 0
        for r in range(s, e):
            N += pc[r]
        if pa[s] == pa[e - 1]:  # all arrive together: the closed form
            before = 0.0
            c = 0
            k = 0  # messages before this triple in the group
            for r in range(s, e):
                step = pw[r] - pw[r - 1] if r > s else pw[r]
                if with_efficiency:
                    span = step * slowness[N - k]
                    running += span
                    if r == s:
                        before = running - span
                    done[r] = pa[r] + np.int64(np.rint(running - before))
                else:
                    c += step * (N - k)
                    done[r] = pa[r] + c
                k += pc[r]
        else:
            _walk_triples(pa, pw, pc, s, e, slowness, not with_efficiency, at, who, tag, through)
            for r in range(s, e):
                done[r] = np.int64(np.rint(through[r]))
        s = e
    for i in range(out.size):
        out[i] = done[rank[pair_of[i]]]


@njit(cache=True, nogil=True)
def _walk_triples(pa, pw, pc, s, e, slowness, by_period, at, who, tag, through):
    """:func:`_walk_group` over one group's triples s..e-1 (``pc`` messages each): its busy
    periods found from the triples' summed work (equal messages arriving together never
    start a period between them that changes their answer), each period of more than one
    message walked by :func:`_walk_pairs`. (:func:`_walk_group` itself cannot serve: it
    walks messages, merging equal neighbours into pairs as it goes.) Writes
    ``through[s:e]`` (float64 ns)."""
    start = s
    c = 0
    top = 0
    empty_at = 0
    for r in range(s, e + 1):
        if r < e:
            v = pa[r] - c
            c += pw[r] * pc[r]
            top = v if r == s else max(top, v)
            if r == s or not by_period or pa[r] < empty_at:
                empty_at = c + top
                continue
        # a period start..r-1 ends here
        if r - start == 1 and pc[start] == 1 and by_period:
            through[start] = pa[start] + pw[start]
        else:
            for i in range(r - start):
                at[i] = start + i
            _walk_pairs(pa, pw, at, pc[start:r], r - start, slowness, tag, who, through[start:r])
        start = r
        empty_at = c + top
