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
vectorised for every group whose messages arrive together, and otherwise
walks the group's distinct (arrival, work) pairs with a heap, O(c log c) for
c distinct pairs (equal messages arriving together are one pair), one busy
period at a time (with an ``efficiency``, the whole group: the medium no
longer empties when a first-come server would); ``fifo`` with R > 1 walks the
group's messages with a heap of R servers.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

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
    if m == 0 or discipline == "dedicated":
        return arrive + work
    g = np.zeros(m, dtype=np.int64) if group is None else np.asarray(group).reshape(-1)
    if g.shape != arrive.shape:
        raise ValueError(f"group {g.shape} and arrive_ns {arrive.shape} differ in shape")
    if discipline == "fifo":
        if servers == 1:
            return _fifo_one(arrive, work, g)
        return _fifo_many(arrive, work, g, servers)
    return _processor_sharing(arrive, work, g, efficiency)


def _segments(sorted_group: np.ndarray) -> np.ndarray:
    """Return the start index of each run of equal values in ``sorted_group``, then its length."""
    starts = np.flatnonzero(np.r_[True, sorted_group[1:] != sorted_group[:-1]])
    return np.r_[starts, sorted_group.size]


def _fifo_one(arrive: np.ndarray, work: np.ndarray, group: np.ndarray) -> np.ndarray:
    """One server per group, first come first served: f_k = max(a_k, f_(k-1)) + w_k.

    Unrolled: f_k = C_k + max over j <= k of (a_j - C_(j-1)), C the running
    sum of work; the running maximum restarts at each group.
    """
    order = np.lexsort((np.arange(arrive.size), arrive, group))
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
    order = np.lexsort((np.arange(arrive.size), arrive, group))
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
    n in service delivering ``efficiency(n)`` of its lone rate (None: all of it)."""
    order = np.lexsort((work, arrive, group))
    a, w, g = arrive[order], work[order], group[order]
    bounds = _segments(g)
    starts, ends = bounds[:-1], bounds[1:]
    together = a[starts] == a[ends - 1]  # sorted by arrival: first == last means all equal
    done = np.empty_like(a)
    if together.any():
        sel = np.repeat(together, ends - starts)
        done[sel] = _ps_together(a[sel], w[sel], g[sel], efficiency)
    for s, e in zip(starts[~together].tolist(), ends[~together].tolist(), strict=True):
        if efficiency is None:
            done[s:e] = _ps_busy_periods(a[s:e], w[s:e])
        else:
            done[s:e] = _ps_walk(a[s:e], w[s:e], efficiency)
    out = np.empty_like(arrive)
    out[order] = done
    return out


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


def _ps_busy_periods(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Processor sharing of one group sorted by arrival, walked one busy period at a time.

    Processor sharing is work-conserving, so its busy periods are those of one
    FIFO server: a message that arrives after the medium emptied starts a new
    one. A message alone in its period is through at arrival + work (no walk);
    only periods of several messages are walked (:func:`_ps_walk`).
    """
    c = np.cumsum(w)
    empty_at = c + np.maximum.accumulate(a - (c - w))  # when the medium empties after each
    new = np.r_[True, a[1:] >= empty_at[:-1]]
    done = a + w
    bounds = np.r_[np.flatnonzero(new), a.size]
    for s, e in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        if e - s > 1:
            done[s:e] = _ps_walk(a[s:e], w[s:e])
    return done


def _ps_walk(a: np.ndarray, w: np.ndarray, efficiency=None) -> np.ndarray:
    """Processor sharing of one group, sorted by (arrival, work): an event walk over its
    distinct (arrival, work) pairs.

    Every message in service has received the same service S (ns of its lone
    work); a message arriving when S = S0 leaves when S reaches S0 + w, so
    departures follow these tags. S grows at 1/n per ns with n in service
    (efficiency(n) / n with an ``efficiency``; the walk also crosses idle gaps).
    """
    new = np.r_[True, (a[1:] != a[:-1]) | (w[1:] != w[:-1])]  # sorted: a pair starts here
    starts = np.flatnonzero(new)
    index = np.cumsum(new) - 1
    arrivals, works = a[starts].tolist(), w[starts].tolist()
    counts = np.diff(np.r_[starts, a.size]).tolist()
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
    return np.rint(np.asarray(through)[index.reshape(-1)]).astype(np.int64)


def _all_equal(a: np.ndarray) -> bool:
    """Whether every element of ``a`` is the same (True when empty)."""
    return a.size == 0 or bool((a == a.flat[0]).all())


def contention_ns(
    down_arrive_ns: np.ndarray,
    down_work_ns: np.ndarray,
    up_offset_ns: np.ndarray,
    up_work_ns: np.ndarray,
    sends: np.ndarray,
    efficiency,
) -> tuple[np.ndarray, np.ndarray]:
    """One contended medium carrying both directions of an exchange (a Wi-Fi cell).

    The access point is one contender whose queue holds the downlink
    messages; each device with an uplink message is another. Contenders get
    equal shares of the medium; with n of them the medium delivers
    ``efficiency(n)`` of what one contender alone gets (Bianchi's saturation
    throughput over its value at n = 1), so an uplink message progresses at
    efficiency(n) / n of its lone rate and each of the k queued downlink
    messages at efficiency(n) / (n k). Downlink message i reaches the access
    point at ``down_arrive_ns[i]`` and needs ``down_work_ns[i]`` alone; when
    it is through, if ``sends[i]``, device i's reply joins the medium
    ``up_offset_ns[i]`` later (the radio latency and timeouts, then the
    compute time) and needs ``up_work_ns[i]``. Returns (downlink through,
    uplink through) in int64 ns; the uplink of a device that does not send is
    -1. An event walk: O(m log m) for m messages.
    """
    da = np.asarray(down_arrive_ns, dtype=np.int64)
    dw = np.asarray(down_work_ns, dtype=np.int64)
    uo = np.asarray(up_offset_ns, dtype=np.int64)
    uw = np.asarray(up_work_ns, dtype=np.int64)
    go = np.asarray(sends, dtype=bool)
    m = da.size
    if m and _all_equal(da) and _all_equal(dw) and _all_equal(uo[go]) and _all_equal(uw[go]):
        # the round of equal messages: the access point alone sends all m downlinks
        # (each at 1/m of its share), then the n repliers contend, all together
        down_end = float(da[0]) + m * float(dw[0]) / efficiency(1)
        up = np.full(m, -1, dtype=np.int64)
        n = int(go.sum())
        if n:
            up[go] = round(down_end + float(uo[go][0]) + n * float(uw[go][0]) / efficiency(n))
        return np.full(m, round(down_end), dtype=np.int64), up
    da, dw, uo, uw, go = da.tolist(), dw.tolist(), uo.tolist(), uw.tolist(), go.tolist()
    down_done = [0.0] * m
    up_done = [-1.0] * m
    arrivals = sorted((float(a), 0, i) for i, a in enumerate(da))  # (time, 0 = down / 1 = up, i)
    heapq.heapify(arrivals)
    down_tags: list[tuple[float, int]] = []
    up_tags: list[tuple[float, int]] = []
    served_down = served_up = 0.0  # the service every message of the class in service has had
    t = arrivals[0][0] if arrivals else 0.0
    inf = math.inf
    while arrivals or down_tags or up_tags:
        n_down, n_up = len(down_tags), len(up_tags)
        contenders = n_up + (n_down > 0)
        share = efficiency(contenders) / contenders if contenders else 0.0
        rate_down = share / n_down if n_down else 0.0
        leave_down = t + (down_tags[0][0] - served_down) / rate_down if n_down else inf
        leave_up = t + (up_tags[0][0] - served_up) / share if n_up else inf
        leave = min(leave_down, leave_up)
        if arrivals and arrivals[0][0] <= leave:
            when, c, i = heapq.heappop(arrivals)
            served_down += (when - t) * rate_down
            served_up += (when - t) * share
            t = when
            if c == 0:
                heapq.heappush(down_tags, (served_down + dw[i], i))
            else:
                heapq.heappush(up_tags, (served_up + uw[i], i))
            continue
        served_down += (leave - t) * rate_down
        served_up += (leave - t) * share
        t = leave
        if leave_down <= leave_up:
            served_down, i = heapq.heappop(down_tags)
            down_done[i] = t
            if go[i]:
                heapq.heappush(arrivals, (t + uo[i], 1, i))
        else:
            served_up, i = heapq.heappop(up_tags)
            up_done[i] = t
    return (
        np.rint(np.asarray(down_done)).astype(np.int64),
        np.rint(np.asarray(up_done)).astype(np.int64),
    )
