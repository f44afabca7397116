"""Shared media: when each message sharing a medium in one exchange is through it.

Pure numpy (no SimPy). A *medium* is anything several messages of one
exchange cross at the same time and must share: a cell's uplink or downlink
spectrum, a wired backhaul hop. The server knows, when it plans an exchange,
when every message reaches each medium (the plan draws losses, compute times
and availability up front, and a round's deadline cuts every unfinished
message at once, so a cut never frees capacity for a message that is not cut
too). The schedule of a medium within one exchange is therefore a function of
the messages' arrival instants and sizes alone: :func:`finish_ns` computes it,
and both fidelities use it (``events`` then walks the instants one by one,
``batched`` waits once), so they agree by construction.

A message's *work* is the time it would take alone on the medium, at the rate
one sender gets when nobody else sends (integer ns). Disciplines:

- ``"dedicated"``: nothing shared; a message is through at arrival + work.
- ``"fifo"`` with ``servers`` = R: first come, first served; a message holds
  one server for its whole work. R = 1 is one transmission at a time (TDMA; a
  FIFO wired hop); R > 1 is OFDMA's first-come waves, where the work is that
  of one resource block (N simultaneous equal messages finish in ceil(N / R)
  waves). Simultaneous arrivals are served in the order given.
- ``"ps"``: egalitarian processor sharing: the n messages in service each
  progress at 1/n of their lone rate (the fluid limit of round robin over a
  cell's resource blocks, slot by slot, and of TCP-fair flows on a wired
  hop). N messages of equal work w arriving together all finish at N w.
  With an ``efficiency``, a medium with n messages in service delivers
  ``efficiency(n)`` of its lone rate (a scheduler that leaves part of the
  channel idle: ns-3's LTE round robin,
  :class:`~edgesim.network.access.round_robin.RbgFloorEfficiency`), so each
  progresses at efficiency(n) / n and N equal messages arriving together all
  finish at N w / efficiency(N).

Groups: one call computes many media at once (one per cell, or per wired
hop); ``group[i]`` names the medium message i crosses, and messages of
different groups never interact.

Cost: ``dedicated`` and ``fifo`` with one server are vectorised; ``ps`` is
vectorised for every group whose messages arrive together, and otherwise walks
each busy period's distinct (arrival, work) pairs with a heap, O(c log c) for
c distinct pairs (equal messages arriving together are one pair; with an
``efficiency``, the whole group: the medium no longer empties when a
first-come server would); ``fifo`` with R > 1 walks the group's messages with
a heap of R servers. The walks of 32 messages or more run compiled
(:mod:`edgesim.network.compiled_walks`: the same operations in the same order,
so the same bits), every group of a call in one compiled call. A compiled
``ps`` call whose messages hold few distinct (group, arrival, work) triples (at
most one per :data:`MESSAGES_PER_TRIPLE` messages, as an exchange's cells and
its shared hop do: many devices send one size at the same instants) finds them
with a hash table and walks the triples, each with its count of messages
(equal messages arriving together finish together: the same bits, and no
message is sorted). Any other orders its messages itself: it counts them into
their groups and sorts each group alone (by counting, when the group holds few
distinct (arrival, work) pairs), rather than sorting every message of the call
by (group, arrival, work).
"""

from __future__ import annotations

import heapq
import math
import sys
import threading

import numpy as np

from edgesim.arrays import all_equal, squeezed

DISCIPLINES = ("dedicated", "fifo", "ps")


def finish_ns(
    arrive_ns: np.ndarray,
    work_ns: np.ndarray,
    group: np.ndarray | None = None,
    discipline: str = "ps",
    servers: int = 1,
    efficiency=None,
) -> np.ndarray:
    """Return when each message is through its medium (int64 ns, same shape as ``arrive_ns``).

    ``arrive_ns``: when message i reaches the medium; ``work_ns``: its time
    alone there (>= 0); ``group``: which medium it crosses (default: all
    one); ``discipline``: ``"dedicated"``, ``"fifo"`` (``servers`` R >= 1)
    or ``"ps"`` (see the module docstring). ``efficiency`` (``"ps"`` only):
    None (every medium delivers its whole rate), or a function of the number
    n >= 1 of messages in service (an int, or an int64 array elementwise)
    returning the share (0, 1] of the lone rate the medium then delivers.
    """
    arrive = np.asarray(arrive_ns, dtype=np.int64).reshape(-1)
    work = np.asarray(work_ns, dtype=np.int64).reshape(-1)
    if arrive.shape != work.shape:
        raise ValueError(f"arrive_ns {arrive.shape} and work_ns {work.shape} differ in shape")
    if discipline not in DISCIPLINES:
        raise ValueError(f"unknown discipline {discipline!r}; allowed: {DISCIPLINES}")
    if servers < 1:
        raise ValueError(f"servers must be >= 1, got {servers}")
    if efficiency is not None and discipline != "ps":
        raise ValueError(f"an efficiency applies to discipline 'ps' only, not {discipline!r}")
    m = arrive.size
    if m == 0 or discipline == "dedicated" or (discipline == "fifo" and m <= servers):
        return arrive + work  # (no message waits: at most one per server, whatever the groups)
    if group is not None and np.ndim(group) == 0:
        group = None  # every message on one medium
    if discipline == "ps" and group is None and all_equal(arrive) and all_equal(work):
        return _ps_identical(arrive, work, efficiency)
    g = np.zeros(m, dtype=np.int64) if group is None else np.asarray(group).reshape(-1)
    if g.shape != arrive.shape:
        raise ValueError(f"group {g.shape} and arrive_ns {arrive.shape} differ in shape")
    if discipline == "fifo":
        if servers == 1:
            return _fifo_one(arrive, work, g)
        return _fifo_many(arrive, work, g, servers)
    return _processor_sharing(arrive, work, g, efficiency)


def first_packet_ns(
    arrive: np.ndarray, done: np.ndarray, work: np.ndarray, first: np.ndarray, discipline: str
) -> np.ndarray:
    """Return when each message's first packet is through a hop (int64 ns): one packet's
    serialisation ``first`` after it is served: ``dedicated``, at once; ``fifo``, once its
    wait is over (done - work); processor sharing, at its share, first / work of its time
    there (done - arrive)."""
    if discipline == "dedicated":
        return arrive + first
    if discipline == "fifo":
        return done - work + first
    # one work for every message (a constant view): its share computed once, the same numbers
    share = first / np.maximum(squeezed(work), 1)
    return arrive + np.rint((done - arrive) * share).astype(np.int64)


def _ps_identical(arrive: np.ndarray, work: np.ndarray, efficiency=None) -> np.ndarray:
    """Processor sharing of N equal messages arriving together on one medium: all through at
    a + N w, or a + rint(w N / efficiency(N)) (what :func:`_ps_together` gives them)."""
    N = arrive.size
    if efficiency is None:
        return arrive + N * work
    span = float(work[0]) * (N / np.float64(efficiency(np.int64(N))))
    return arrive + np.int64(np.rint(span))


def _order(*keys: np.ndarray, stable: bool = True) -> np.ndarray:
    """Return the order sorting by ``keys`` (int64 arrays of one shape), the first the most
    significant: ``np.lexsort(keys[::-1])``. Keys that are constant are left out, and the
    rest folded into one int64 key when their ranges allow (one sort, not one per key).
    ``stable = False``: messages equal in every key may come in any order (faster; for a
    discipline that gives equal messages the same answer)."""
    varying, spans = [], []
    for k in keys:
        low, high = int(k.min()), int(k.max())
        if high > low:
            varying.append((k, low))
            spans.append(high - low + 1)
    if not varying:
        return np.arange(keys[0].size)
    if math.prod(spans) >= 2**62:
        return np.lexsort(tuple(k for k, _ in reversed(varying)))
    folded = varying[0][0] - varying[0][1]
    for (k, low), span in zip(varying[1:], spans[1:], strict=True):
        folded = folded * span + (k - low)
    return np.argsort(folded, kind="stable" if stable else None)


def _segments(sorted_group: np.ndarray) -> np.ndarray:
    """Return the start index of each run of equal values in ``sorted_group``, then its length."""
    return np.append(np.flatnonzero(_starts(sorted_group)), sorted_group.size)


def _fifo_one(arrive: np.ndarray, work: np.ndarray, group: np.ndarray) -> np.ndarray:
    """One server per group, first come first served: f_k = max(a_k, f_(k-1)) + w_k.

    Unrolled: f_k = C_k + max over j <= k of (a_j - C_(j-1)), C the running
    sum of work; the running maximum restarts at each group.
    """
    order = _order(group, arrive)
    a, w, g = arrive[order], work[order], group[order]
    c = np.cumsum(w)
    v = a - (c - w)
    bounds = _segments(g)
    for s, e in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        v[s:e] = np.maximum.accumulate(v[s:e])
    out = np.empty_like(arrive)
    out[order] = c + v
    return out


def _fifo_many(arrive: np.ndarray, work: np.ndarray, group: np.ndarray, R: int) -> np.ndarray:
    """R servers per group, first come first served: each message takes the first free server."""
    order = _order(group, arrive)
    if runs_compiled(arrive.size):
        from edgesim.network.compiled_walks import fifo_walks

        bounds = _segments(group[order])
        out = np.empty_like(arrive)
        out[order] = fifo_walks(arrive[order], work[order], bounds, R)
        return out
    a, w, g = arrive[order].tolist(), work[order].tolist(), group[order]
    done = np.empty(len(a), dtype=np.int64)
    bounds = _segments(g).tolist()
    for s, e in zip(bounds[:-1], bounds[1:], strict=True):
        if e - s <= R:
            done[s:e] = np.asarray(a[s:e], dtype=np.int64) + np.asarray(w[s:e], dtype=np.int64)
            continue
        free = [a[s]] * R  # the servers' next free instants (a heap)
        for k in range(s, e):
            start = max(a[k], free[0])
            done[k] = start + w[k]
            heapq.heapreplace(free, done[k].item())
    out = np.empty_like(arrive)
    out[order] = done
    return out


def _processor_sharing(
    arrive: np.ndarray, work: np.ndarray, group: np.ndarray, efficiency=None
) -> np.ndarray:
    """Egalitarian processor sharing per group (see the module docstring), each medium with
    n in service delivering ``efficiency(n)`` of its lone rate (None: all of it).
    A call of 32 messages or more with integer group names runs compiled
    (:func:`_ps_compiled`)."""
    if runs_compiled(arrive.size) and group.dtype.kind in "iu":
        return _ps_compiled(arrive, work, group, efficiency)
    order = _order(group, arrive, work, stable=False)  # equal messages finish together
    a, w, g = arrive[order], work[order], group[order]
    bounds = _segments(g)
    starts, ends = bounds[:-1], bounds[1:]
    together = a[starts] == a[ends - 1]  # sorted by arrival: first == last means all equal
    if together.all():
        done = _ps_together(a, w, g, efficiency)
    else:
        done = np.empty_like(a)
        sel = np.repeat(together, ends - starts)
        if together.any():
            done[sel] = _ps_together(a[sel], w[sel], g[sel], efficiency)
        rest = np.flatnonzero(~sel)
        done[rest] = _ps_staggered(a[rest], w[rest], g[rest], efficiency)
    out = np.empty_like(arrive)
    out[order] = done
    return out


def _ps_compiled(
    arrive: np.ndarray, work: np.ndarray, group: np.ndarray, efficiency=None
) -> np.ndarray:
    """:func:`_processor_sharing` compiled (the same bits). Signed group names holding at most
    one distinct (group, arrival, work) triple per :data:`MESSAGES_PER_TRIPLE` messages go by
    :func:`~edgesim.network.compiled_walks.find_pairs` and
    :func:`~edgesim.network.compiled_walks.ps_pairs` (each triple walked once); the others by
    :func:`~edgesim.network.compiled_walks.ps_grouped`: group names spanning at most a few
    times the messages are counted into place (each group then sorted alone, in the compiled
    call); names farther apart are sorted once and numbered in their order. Returns int64
    ns."""
    from edgesim.network.compiled_walks import find_pairs, ps_grouped, ps_pairs

    m = arrive.size
    ints, floats = _scratch(m)
    if group.dtype.kind == "i":  # (unsigned names: int64 could reorder them)
        names = group.astype(np.int64, copy=False)
        pairs, busiest = find_pairs(arrive, work, names, m // MESSAGES_PER_TRIPLE, ints)
        if pairs >= 0:
            out = np.empty(m, dtype=np.int64)
            ps_pairs(
                pairs, _slowness(busiest, efficiency), efficiency is not None, ints, floats, out
            )
            return out
    low, high = int(group.min()), int(group.max())
    order = None
    if high - low <= 4 * m:
        dense = np.asarray(group - low, dtype=np.int64)
    else:
        order = _order(group, arrive, work, stable=False)
        dense = np.empty(m, dtype=np.int64)
        dense[order] = np.cumsum(_starts(group[order])) - 1
    counts = np.bincount(dense)
    if efficiency is None and all_equal(arrive) and all_equal(work):
        return arrive + counts[dense] * work  # N equal messages together: all through at a + N w
    busiest = int(counts.max())
    if order is None and busiest > 256:  # numba sorts a few hundred messages faster, numpy more
        order = _order(dense, arrive, work, stable=False)
    return ps_grouped(
        arrive,
        work,
        dense,
        counts,
        _slowness(busiest, efficiency),
        efficiency is not None,
        np.empty(0, np.int64) if order is None else order,
        ints,
        floats,
    )


#: A compiled processor-sharing call whose messages hold at most one distinct (medium,
#: arrival, work) triple per this many messages is walked by triples
#: (:func:`~edgesim.network.compiled_walks.find_pairs`): equal messages arriving together
#: finish together, so each triple is computed once and no message is sorted.
MESSAGES_PER_TRIPLE = 4


def _slowness(busiest: int, efficiency=None) -> np.ndarray:
    """Return the compiled walks' table of ns per unit of service with n = 0 .. ``busiest``
    messages in service (float64): n, or n / efficiency(n) (0 for n = 0)."""
    n = np.arange(busiest + 1)
    if efficiency is None:
        return n.astype(np.float64)
    slowness = np.zeros(busiest + 1)
    slowness[1:] = n[1:] / np.asarray(efficiency(n[1:]), dtype=np.float64)
    return slowness


_SCRATCH = threading.local()
#: The compiled walk's scratch is kept (per thread) for calls of at most this many messages:
#: at most about 6 MB a thread (88 bytes a message). A larger call allocates its own and
#: frees it, so memory held between exchanges does not grow with K.
SCRATCH_KEPT_MESSAGES = 1 << 16


def _scratch(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the compiled walk's scratch arrays for ``m`` messages, int64 (8, >= m) and
    float64 (3, >= m): for a call of up to :data:`SCRATCH_KEPT_MESSAGES` messages, kept from
    call to call (one set per thread), so an exchange does not fault in fresh pages on
    every call; else fresh ones."""
    if m > SCRATCH_KEPT_MESSAGES:
        return np.empty((8, m), dtype=np.int64), np.empty((3, m))
    held = getattr(_SCRATCH, "arrays", None)
    if held is None or held[0].shape[1] < m:
        held = _SCRATCH.arrays = (np.empty((8, m), dtype=np.int64), np.empty((3, m)))
    return held


def _ps_together(a: np.ndarray, w: np.ndarray, g: np.ndarray, efficiency=None) -> np.ndarray:
    """Processor sharing of groups whose messages all arrive together, sorted by (group, work).

    With N messages and works w_(1) <= ... <= w_(N), the k-th is through at
    a + sum over j <= k of (w_(j) - w_(j-1)) (N - j + 1): while N - j + 1
    messages remain, each progresses at 1 / (N - j + 1). Integer arithmetic:
    exact. With an ``efficiency``, each step takes (w_(j) - w_(j-1)) n / efficiency(n),
    n = N - j + 1, summed in float64 and rounded to the ns.
    """
    bounds = _segments(g)
    starts, sizes = bounds[:-1], np.diff(bounds)
    first = np.repeat(starts, sizes)
    rank = np.arange(a.size) - first
    remaining = np.repeat(sizes, sizes) - rank
    step = np.diff(w, prepend=0)
    step[starts] = w[starts]
    if efficiency is not None:
        span = step * (remaining / np.asarray(efficiency(remaining), dtype=np.float64))
        c = np.cumsum(span)
        before = np.repeat(c[starts] - span[starts], sizes)
        return a + np.rint(c - before).astype(np.int64)
    c = np.cumsum(step * remaining)
    before = np.repeat(c[starts] - step[starts] * remaining[starts], sizes)
    return a + c - before


def _ps_staggered(a: np.ndarray, w: np.ndarray, g: np.ndarray, efficiency=None) -> np.ndarray:
    """Processor sharing of groups of at least two messages not all arriving together, sorted by
    (group, arrival, work): every group's walk at once.

    Processor sharing is work-conserving, so its busy periods are those of one
    FIFO server (found for every group at once, as :func:`_fifo_one` does): a
    message that arrives after its medium emptied starts a new one, and a
    message alone in its period is through at arrival + work. The periods of
    several messages are walked (:func:`_ps_walks`). With an ``efficiency``
    the medium's rate depends on its load, so each group is walked whole.
    """
    first = _starts(g)
    if efficiency is None:
        c = np.cumsum(w)
        gi = np.cumsum(first) - 1
        c -= (c - w)[first][gi]  # the work of the group up to and including each message
        empty_at = c + _running_max(a - (c - w), gi)  # when the medium empties after each
        new = first.copy()
        new[1:] |= a[1:] >= empty_at[:-1]
    else:
        new = first
    period = np.cumsum(new) - 1
    several = np.bincount(period)[period] > 1
    done = a + w
    if several.any():
        walk = np.flatnonzero(several)
        done[walk] = _ps_walks(a[walk], w[walk], period[walk], efficiency)
    return done


def _starts(sorted_group: np.ndarray) -> np.ndarray:
    """Return whether each element of ``sorted_group`` starts a run of equal values (bool)."""
    new = np.empty(sorted_group.size, dtype=bool)
    new[:1] = True
    np.not_equal(sorted_group[1:], sorted_group[:-1], out=new[1:])
    return new


def _running_max(v: np.ndarray, run: np.ndarray) -> np.ndarray:
    """Return the running maximum of the int64 ``v`` restarted at each new value of the
    nondecreasing ``run`` (0, 1, ...): one ``maximum.accumulate`` over ``v`` lifted run by
    run above everything before it, exact in int64 (a loop over runs if the lift would
    overflow)."""
    if run[-1] == 0:
        return np.maximum.accumulate(v)
    low = int(v.min())
    span = int(v.max()) - low + 1
    if span * (int(run[-1]) + 1) < 2**62:
        lift = run * span
        return np.maximum.accumulate(v - low + lift) - lift + low
    out = np.empty_like(v)
    bounds = np.flatnonzero(_starts(run)).tolist() + [v.size]
    for s, e in zip(bounds[:-1], bounds[1:], strict=True):
        out[s:e] = np.maximum.accumulate(v[s:e])
    return out


#: Walks of at least this many messages run compiled (:mod:`edgesim.network.compiled_walks`,
#: numba: about 100 ns an event against 1.5 us in Python, and none of numpy's per-call
#: cost); smaller ones run in Python, so that small runs never import numba, unless it is
#: loaded already.
COMPILED_FROM = 32


def runs_compiled(messages: int) -> bool:
    """Whether a walk of ``messages`` runs compiled (:data:`COMPILED_FROM`)."""
    return messages >= COMPILED_FROM or "edgesim.network.compiled_walks" in sys.modules


def _ps_walks(a: np.ndarray, w: np.ndarray, period: np.ndarray, efficiency=None) -> np.ndarray:
    """Processor sharing of periods of at least two messages, sorted by (period, arrival,
    work): each period walked over its distinct (arrival, work) pairs (equal messages
    arriving together are one pair) with a heap of tags (:func:`_ps_heap`). Returns the
    int64 ns each message is through.
    """
    new = _starts(period)
    new[1:] |= (a[1:] != a[:-1]) | (w[1:] != w[:-1])
    pstart = np.flatnonzero(new)
    pair = np.cumsum(new) - 1
    counts = np.diff(np.append(pstart, a.size))
    first = np.flatnonzero(_starts(period[pstart]))
    length = np.diff(np.append(first, pstart.size))
    pa, pw, pc = a[pstart].tolist(), w[pstart].tolist(), counts.tolist()
    through = np.empty(pstart.size)
    for f, e in zip(first.tolist(), (first + length).tolist(), strict=True):
        through[f:e] = _ps_heap(pa[f:e], pw[f:e], pc[f:e], efficiency)
    return np.rint(through[pair]).astype(np.int64)


def _ps_heap(arrivals: list, works: list, counts: list, efficiency=None) -> list:
    """Processor sharing of one period's distinct (arrival, work) pairs, sorted, with their
    message ``counts``: an event walk with a heap of tags. Returns each pair's departure
    (float ns).

    Every message in service has received the same service S (ns of its lone
    work); a message arriving when S = S0 leaves when S reaches S0 + w, so
    departures follow these tags. S grows at 1/n per ns with n in service
    (efficiency(n) / n with an ``efficiency``; the walk also crosses idle gaps).
    """
    through = [0.0] * len(arrivals)
    tags: list[tuple[float, int]] = []
    t, served, n, i = float(arrivals[0]), 0.0, 0, 0
    while i < len(arrivals) or tags:
        # ns per unit of service: n, or n / efficiency(n) (n = 0: nothing in service)
        slowness = n if efficiency is None or not n else n / float(efficiency(n))
        leave = t + (tags[0][0] - served) * slowness if tags else float("inf")
        if i < len(arrivals) and arrivals[i] <= leave:
            if n:
                served += (arrivals[i] - t) / slowness
            t = float(arrivals[i])
            heapq.heappush(tags, (served + works[i], i))
            n += counts[i]
            i += 1
        else:
            served, c = heapq.heappop(tags)
            t = leave
            through[c] = t
            n -= counts[c]
    return through
