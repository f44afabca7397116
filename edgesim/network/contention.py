"""A Wi-Fi cell's medium: one contended channel carrying both directions of an exchange.

The access point is one contender (its queue holds the downlink messages) and each device
with a reply is another; :func:`contention_ns` walks the exchange's events. Pure numpy
and Python; a walk of 32 messages or more runs compiled
(:func:`edgesim.network.compiled_walks.contention`: the same operations in the same order).
The other media of an exchange (cells' uplinks and downlinks shared by one discipline,
wired hops) are :mod:`edgesim.network.medium`'s.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from edgesim.arrays import all_equal
from edgesim.network import medium

_TABLES: dict = {}


def _efficiency_table(efficiency, n: int) -> np.ndarray:
    """Return [0, efficiency(1), ..., efficiency(n)] (float64), each value what the scalar call
    returns, kept per function (a bound method: per object) and grown as needed."""
    key = (getattr(efficiency, "__self__", None), getattr(efficiency, "__func__", efficiency))
    table = _TABLES.get(key)
    if table is None or table.size <= n:
        if len(_TABLES) >= 8:
            _TABLES.clear()
        table = np.array([0.0] + [float(efficiency(k)) for k in range(1, 2 * n + 2)])
        _TABLES[key] = table
    return table


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
    if m and all_equal(da) and all_equal(dw) and all_equal(uo[go]) and all_equal(uw[go]):
        # the round of equal messages: the access point alone sends all m downlinks
        # (each at 1/m of its share), then the n repliers contend, all together
        down_end = float(da[0]) + m * float(dw[0]) / efficiency(1)
        up = np.full(m, -1, dtype=np.int64)
        n = int(go.sum())
        if n:
            up[go] = round(down_end + float(uo[go][0]) + n * float(uw[go][0]) / efficiency(n))
        return np.full(m, round(down_end), dtype=np.int64), up
    if medium.runs_compiled(m):
        from edgesim.network.compiled_walks import contention

        down, up = contention(da, dw, uo, uw, go, _efficiency_table(efficiency, m + 1))
        return np.rint(down).astype(np.int64), np.rint(up).astype(np.int64)
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
