"""Device availability (churn): always on, Markov on/off, or a FedScale client behaviour trace.

One module on purpose: the three models answer the same two vectorised
queries and share the configuration table and its checks.

A model answers one vectorised query, ``online(agents, t_ns) -> bool (m,)``:
is each listed device online at the matching integer-nanosecond time? The
richer ``online_until(agents, t_ns) -> (online, until_ns)`` also says until
when that answer holds (the state is constant on ``[t, until)``;
:data:`NEVER_NS` when it never changes). The server samples these once per
round, vectorised over agents; nothing here imports SimPy.

Models (``network.availability.model``):

- ``always``: :class:`AlwaysOn`.
- ``markov``: :class:`MarkovOnOff`, an alternating renewal process with
  exponential on and off periods per device (a two-state continuous-time
  Markov chain), advanced lazily per query.
- ``trace``: :class:`TraceAvailability`, FedScale's ``client_behave_trace``
  (Lai et al., "FedScale", ICML 2022; the trace of Yang et al., "Characterizing
  impacts of heterogeneity in federated learning upon large-scale smartphone
  data", WWW 2021), read by :func:`load_trace`.

Other models plug in with :func:`register_availability`.
"""

from __future__ import annotations

import json
import numbers
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from edgesim.config import option
from edgesim.errors import ScenarioError
from edgesim.network import NS_PER_S, to_ns
from edgesim.registry import register

__all__ = [
    "AVAILABILITY_MODELS",
    "NEVER_NS",
    "AlwaysOn",
    "Availability",
    "AvailabilityConfig",
    "MarkovOnOff",
    "TraceAvailability",
    "TraceError",
    "build_availability",
    "load_trace",
    "register_availability",
]

#: "Never changes": the largest int64, returned as ``until_ns`` of a permanent state.
NEVER_NS = np.iinfo(np.int64).max
#: Largest |time| a trace may hold, in seconds (so ``t * NS_PER_S`` fits in int64 with room).
TRACE_MAX_S = 1.0e9
_TRACE_KEY = "network.availability.trace_path"


@dataclass(frozen=True)
class AvailabilityConfig:
    """The ``[network.availability]`` table: when devices are online."""

    model: str = option(
        "always",
        "availability model: 'always', 'markov' (exponential on/off periods per device) or"
        " 'trace' (a FedScale client behaviour trace) or a registered name",
    )
    mean_on_s: float = option(600.0, "markov: mean length of an online period", unit="s", gt=0)
    mean_off_s: float = option(60.0, "markov: mean length of an offline period", unit="s", gt=0)
    start: str = option(
        "stationary",
        "markov: state at t = 0: 'stationary' (online with probability"
        " mean_on_s/(mean_on_s + mean_off_s), exponential residual) or 'on' (all online)",
        choices=("stationary", "on"),
    )
    trace_path: str = option(
        "",
        "trace: FedScale-format client behaviour trace, .json (or .pkl/.pickle with"
        " trace_allow_pickle); agent k follows the (k mod n)-th of the trace's n clients in"
        " sorted id order",
    )
    trace_allow_pickle: bool = option(
        False,
        "trace: read a .pkl/.pickle trace_path (unpickling runs code from the file: trusted"
        " files only); false refuses it (convert it once: edgesim data convert-trace)",
    )
    trace_repeat: bool = option(
        True,
        "trace: wrap time around each client's finish_time (as FedScale does); false: offline"
        " after the trace ends",
    )

    def cross_check(self, agents_count: int) -> list[ScenarioError]:
        """Return the cross-field errors of this section; [] when consistent.

        Checks that the model is registered and, for ``trace``, that
        ``trace_path`` names a readable trace in the FedScale format (the file
        is loaded once here). A trace with fewer clients than ``agents_count``
        is not an error: agent k follows trace client k mod n.
        """
        if self.model not in AVAILABILITY_MODELS:
            allowed = ", ".join(repr(k) for k in sorted(AVAILABILITY_MODELS))
            return [
                ScenarioError(
                    "network.availability.model",
                    f"unknown availability model {self.model!r}; use {allowed}",
                )
            ]
        if self.model != "trace":
            return []
        if not self.trace_path:
            return [
                ScenarioError(
                    _TRACE_KEY,
                    "model = 'trace' needs trace_path, a FedScale client behaviour trace"
                    " (.pkl, .pickle or .json)",
                )
            ]
        try:
            load_trace(self.trace_path, allow_pickle=self.trace_allow_pickle)
        except TraceError as err:
            return [ScenarioError(_TRACE_KEY, str(err))]
        return []


class TraceError(ValueError):
    """A trace file that cannot be read or is not in FedScale's client behaviour format."""


class Availability(Protocol):
    """What the server needs from an availability model."""

    def online(self, agents: np.ndarray, t_ns: np.ndarray) -> np.ndarray:
        """Return whether each listed agent is online at the matching time, bool (m,)."""
        ...


def _query(agents, t_ns, K: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (agents, t_ns) as int64 arrays of one shape (m,); ValueError on a bad index."""
    a = np.asarray(agents)
    t = np.asarray(t_ns)
    if a.ndim != 1 or (a.size and not np.issubdtype(a.dtype, np.integer)):
        raise ValueError(f"agents must be a 1-D integer array, got shape {a.shape} {a.dtype}")
    if t.size and not np.issubdtype(t.dtype, np.integer):
        raise ValueError(f"t_ns must be integer nanoseconds, got dtype {t.dtype}")
    a = a.astype(np.int64, copy=False)
    t = np.broadcast_to(t.astype(np.int64, copy=False), a.shape)
    if a.size and (a.min() < 0 or a.max() >= K):
        raise ValueError(f"agent indices must lie in 0..{K - 1}, got {a.min()}..{a.max()}")
    return a, t


class AlwaysOn:
    """Every device online at every time; draws nothing."""

    def __init__(self, K: int):
        self.K = int(K)

    def online_until(self, agents, t_ns) -> tuple[np.ndarray, np.ndarray]:
        """Return (all True bool (m,), :data:`NEVER_NS` int64 (m,))."""
        a, _ = _query(agents, t_ns, self.K)
        return np.ones(a.size, dtype=bool), np.full(a.size, NEVER_NS, dtype=np.int64)

    def online(self, agents, t_ns) -> np.ndarray:
        """Return True for every listed agent, bool (m,)."""
        return self.online_until(agents, t_ns)[0]


class MarkovOnOff:
    """Per device, exponential on and off periods in alternation (two-state CTMC).

    On -> off at rate a = 1/mean_on_s, off -> on at rate b = 1/mean_off_s; the
    long-run fraction online is p = mean_on_s/(mean_on_s + mean_off_s).

    State per device: whether it is online, the integer ns time of its next
    switch, and the time of its last query. Queries must be non-decreasing in
    time per device (ValueError otherwise, raised before any state changes);
    the process starts at t = 0, so times are >= 0. A query at t past a
    device's next switch s does not walk the switches in between: by the
    strong Markov property the state at s is the flipped one, the state at t
    is drawn from the transition probabilities of the two-state chain
    (Ross, *Introduction to Probability Models*, Sec. 6.4, the two-state
    example):

        P(on at t | on at s)  = p + (1 - p) exp(-(a + b)(t - s))
        P(on at t | off at s) = p (1 - exp(-(a + b)(t - s)))

    and, the holding times being memoryless, the residual time of the state
    at t is a fresh exponential of that state's mean. The answers to any
    sequence of queries thus have the law of one sample path of the chain;
    querying a device exactly at its switch times (``until_ns``) walks every
    period of its path. Durations are rounded to whole ns, at least 1 ns.

    Draws (``rng`` is kept and used at every query; give the model a stream
    of its own so the number of queries does not shift other streams):

    - construction, ``start = 'stationary'``: ``rng.random(K)`` (device k online
      iff u_k < p), then ``rng.standard_exponential(K)`` scaled by the mean of
      each device's initial state; ``start = 'on'``: only
      ``rng.standard_exponential(K)`` scaled by mean_on_s.
    - each query pass: let the n queries of the pass whose device has reached
      its next switch (next switch <= t), in ``agents`` order, advance:
      ``rng.random(n)`` (the state at t), then ``rng.standard_exponential(n)``
      (the residual). A call in which each agent appears once is one pass;
      an agent listed r times (times non-decreasing in list order) makes r
      passes, the i-th pass holding the i-th occurrence of every agent.
    """

    def __init__(
        self,
        K: int,
        mean_on_s: float,
        mean_off_s: float,
        start: str = "stationary",
        rng: np.random.Generator | None = None,
    ):
        if not (mean_on_s > 0 and mean_off_s > 0):
            raise ValueError(
                f"mean_on_s and mean_off_s must be > 0, got {mean_on_s} and {mean_off_s}"
            )
        if start not in ("stationary", "on"):
            raise ValueError(f"start must be 'stationary' or 'on', got {start!r}")
        if rng is None:
            raise ValueError("MarkovOnOff needs a numpy.random.Generator (rng)")
        self.K = int(K)
        self.mean_on_s = float(mean_on_s)
        self.mean_off_s = float(mean_off_s)
        #: long-run fraction of time online, p = mean_on/(mean_on + mean_off)
        self.p_on = self.mean_on_s / (self.mean_on_s + self.mean_off_s)
        self._rate = 1.0 / self.mean_on_s + 1.0 / self.mean_off_s  # a + b, per second
        self.rng = rng
        if start == "stationary":
            on = rng.random(self.K) < self.p_on
        else:
            on = np.ones(self.K, dtype=bool)
        self._on = on
        self._next = self._durations_ns(on, rng.standard_exponential(self.K), 0)
        self._last = np.zeros(self.K, dtype=np.int64)

    def _durations_ns(self, on: np.ndarray, e: np.ndarray, t: np.ndarray | int) -> np.ndarray:
        """Return t + the period residual in ns (>= 1 ns, saturating at NEVER_NS)."""
        d = e * np.where(on, self.mean_on_s, self.mean_off_s) * NS_PER_S
        d = np.maximum(np.rint(np.minimum(d, 9.0e18)).astype(np.int64), 1)
        t = np.asarray(t, dtype=np.int64)
        return np.where(d > NEVER_NS - t, NEVER_NS, t + d)

    def _pass(self, a: np.ndarray, t: np.ndarray) -> None:
        """Advance the devices in ``a`` (unique) to the times ``t``."""
        nxt = self._next[a]
        adv = nxt <= t
        if adv.any():
            idx, s, tt = a[adv], nxt[adv], t[adv]
            was_on = ~self._on[idx]  # the state entered at the switch s
            mix = -np.expm1(-self._rate * ((tt - s) / NS_PER_S))  # 1 - exp(-(a+b)(t-s))
            p_t = np.where(was_on, 1.0 - (1.0 - self.p_on) * mix, self.p_on * mix)
            on_t = self.rng.random(idx.size) < p_t
            self._on[idx] = on_t
            self._next[idx] = self._durations_ns(on_t, self.rng.standard_exponential(idx.size), tt)
        self._last[a] = t

    def online_until(self, agents, t_ns) -> tuple[np.ndarray, np.ndarray]:
        """Return (online bool (m,), next switch time int64 ns (m,)) at the query times.

        ``agents``: int array (m,); ``t_ns``: int64 times (m,) or a scalar,
        non-decreasing per device across and within calls. The device keeps
        the returned state on ``[t, until)``. Raises ValueError (nothing
        changed) when a time is earlier than that device's previous query.
        """
        a, t = _query(agents, t_ns, self.K)
        if a.size == 0:
            return np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64)
        order = np.argsort(a, kind="stable")
        sa, st = a[order], t[order]
        first = np.ones(a.size, dtype=bool)
        first[1:] = sa[1:] != sa[:-1]
        prev = np.where(first, self._last[sa], np.roll(st, 1))
        bad = np.flatnonzero(st < prev)
        if bad.size:
            j = int(bad[0])
            raise ValueError(
                f"MarkovOnOff queries must be non-decreasing in time per device: agent"
                f" {int(sa[j])} asked at t_ns = {int(st[j])} after t_ns = {int(prev[j])}"
            )
        if first.all():
            self._pass(a, t)
        else:
            # occurrence rank of each query among its agent's queries, in list order
            starts = np.flatnonzero(first)
            rank_sorted = np.arange(a.size) - np.repeat(starts, np.diff(np.append(starts, a.size)))
            rank = np.empty(a.size, dtype=np.int64)
            rank[order] = rank_sorted
            on = np.empty(a.size, dtype=bool)
            until = np.empty(a.size, dtype=np.int64)
            for r in range(int(rank.max()) + 1):
                q = np.flatnonzero(rank == r)
                self._pass(a[q], t[q])
                on[q], until[q] = self._on[a[q]], self._next[a[q]]
            return on, until
        return self._on[a].copy(), self._next[a].copy()

    def online(self, agents, t_ns) -> np.ndarray:
        """Return whether each listed agent is online at its time, bool (m,); see :meth:`online_until`."""
        return self.online_until(agents, t_ns)[0]


# ---------------------------------------------------------------------------- traces


def _sorted_ids(ids: list) -> list:
    """Return trace client ids sorted numerically when all are integers (or integer strings)."""
    try:
        return sorted(ids, key=lambda k: (int(k), str(k)))
    except (TypeError, ValueError):
        return sorted(ids, key=str)


def _array(value, what: str) -> np.ndarray:
    """Return ``value`` as a 1-D float64 array, TraceError naming ``what`` otherwise."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.ndim != 1:
        raise TraceError(f"{what} must be a list of numbers (seconds)")
    return arr


def _flatten(trace, where: str = "trace"):
    """Check a FedScale behaviour trace and return its intervals flattened.

    Returns (ids, starts_ns, ends_ns, offsets, period_ns): client c's
    intervals are ``[starts_ns[i], ends_ns[i])`` for ``offsets[c] <= i <
    offsets[c+1]``, sorted and disjoint; ``period_ns[c]`` is its
    ``finish_time`` (else its last ``inactive`` time; 1 ns when it has no
    interval). A loop over trace clients converts their lists once, when a
    trace is loaded; the numeric checks run on the flattened arrays.
    """
    if not isinstance(trace, dict) or not trace:
        raise TraceError(
            f"{where}: expected a non-empty mapping client id -> {{'active': [...],"
            f" 'inactive': [...], 'finish_time': T}}, got {type(trace).__name__}"
        )
    ids = _sorted_ids(list(trace))
    starts, ends, counts, fins = [], [], [], []
    for cid in ids:
        rec = trace[cid]
        who = f"{where}: client {cid!r}"
        if not isinstance(rec, dict) or "active" not in rec or "inactive" not in rec:
            raise TraceError(f"{who}: expected a table with lists 'active' and 'inactive'")
        s = _array(rec["active"], f"{who}: 'active'")
        e = _array(rec["inactive"], f"{who}: 'inactive'")
        if s.size != e.size:
            raise TraceError(
                f"{who}: 'active' has {s.size} entries but 'inactive' has {e.size};"
                " interval i is [active[i], inactive[i])"
            )
        fin = rec.get("finish_time")
        if fin is not None and (isinstance(fin, bool) or not isinstance(fin, numbers.Real)):
            raise TraceError(f"{who}: 'finish_time' must be a number of seconds, got {fin!r}")
        starts.append(s)
        ends.append(e)
        counts.append(s.size)
        fins.append(np.nan if fin is None else float(fin))
    s, e, fin = np.concatenate(starts), np.concatenate(ends), np.array(fins)
    counts = np.array(counts, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    def locate(i: int) -> tuple[str, int]:
        """Return (the message prefix naming i's client, i's index within that client)."""
        c = int(np.searchsorted(offsets, i, side="right") - 1)
        return f"{where}: client {ids[c]!r}", i - int(offsets[c])

    for arr, name in ((s, "active"), (e, "inactive")):
        bad = np.flatnonzero(~(np.abs(arr) <= TRACE_MAX_S))  # also catches nan
        if bad.size:
            i = int(bad[0])
            who, j = locate(i)
            raise TraceError(
                f"{who}: '{name}'[{j}] = {arr[i]:g} is not a finite number of seconds"
                f" below {TRACE_MAX_S:g}"
            )
    bad = np.flatnonzero(e < s)
    if bad.size:
        i = int(bad[0])
        who, j = locate(i)
        raise TraceError(f"{who}: interval {j} ends before it starts ({s[i]:g} > {e[i]:g})")
    same = np.ones(s.size, dtype=bool)  # same[i]: interval i + 1 belongs to i's client
    ends_at = offsets[1:] - 1
    same[ends_at[ends_at >= 0]] = False
    bad = np.flatnonzero(same[:-1] & (s[1:] < e[:-1]))
    if bad.size:
        i = int(bad[0])
        who, j = locate(i)
        raise TraceError(
            f"{who}: intervals {j} and {j + 1} overlap or are out of order"
            f" (inactive[{j}] = {e[i]:g} > active[{j + 1}] = {s[i + 1]:g})"
        )
    has = ~np.isnan(fin)
    bad = np.flatnonzero(has & ~((fin > 0) & (fin <= TRACE_MAX_S)))
    if bad.size:
        c = int(bad[0])
        raise TraceError(
            f"{where}: client {ids[c]!r}: 'finish_time' must be in (0, {TRACE_MAX_S:g}],"
            f" got {fin[c]:g}"
        )
    last_end = np.zeros(len(ids))
    nonempty = counts > 0
    last_end[nonempty] = e[offsets[1:][nonempty] - 1]
    period = np.where(has, fin, last_end)
    return ids, to_ns(s), to_ns(e), offsets, np.maximum(to_ns(period), 1)


def load_trace(path, *, allow_pickle: bool = False) -> dict:
    """Load a FedScale client behaviour trace; return the dict client id -> record.

    A record holds ``active`` and ``inactive`` lists of seconds (online on
    ``[active[i], inactive[i])``), optionally ``finish_time`` (seconds) and
    other keys (ignored). ``.json`` files hold this structure (ids are
    strings). ``.pkl``/``.pickle`` files (FedScale ships its trace as the
    pickle ``client_behave_trace``) are refused unless ``allow_pickle``, as
    numpy's ``allow_pickle=False``: unpickling runs code from the file.
    Raises :class:`TraceError` naming the file and the problem when the file
    is missing, refused, unreadable or malformed.
    """
    p = Path(path).expanduser()
    if not p.is_file():
        raise TraceError(f"trace file {str(p)!r} not found")
    suffix = p.suffix.lower()
    if suffix in (".pkl", ".pickle") and not allow_pickle:
        raise TraceError(
            f"trace file {str(p)!r} is a pickle, and unpickling runs code from the file:"
            f" convert it once with `edgesim data convert-trace {p} {p.with_suffix('.json')}`,"
            " or, for a file you trust, set network.availability.trace_allow_pickle = true"
        )
    try:
        if suffix in (".pkl", ".pickle"):
            with p.open("rb") as f:
                trace = pickle.load(f)  # noqa: S301 - the caller opted in (allow_pickle)
        elif suffix == ".json":
            trace = json.loads(p.read_text(encoding="utf-8"))
        else:
            raise TraceError(
                f"trace file {str(p)!r}: unknown format {suffix or '(no suffix)'!r};"
                " use .pkl, .pickle or .json"
            )
    except TraceError:
        raise
    except Exception as err:  # OSError, UnpicklingError, JSONDecodeError, ...
        detail = " ".join(f"{type(err).__name__}: {err}".split())
        raise TraceError(f"cannot read trace file {str(p)!r} ({detail})") from None
    _flatten(trace, f"trace file {str(p)!r}")
    return trace


class TraceAvailability:
    """Availability replayed from a FedScale client behaviour trace; draws nothing.

    ``trace``: the dict of :func:`load_trace` (checked again here); ``K``:
    number of devices; ``repeat``: wrap time modulo each client's
    ``finish_time`` (its last ``inactive`` time when absent), as FedScale's
    ``is_active`` does; without it a device is offline after its last
    interval. Simulated time 0 is trace time 0.

    Mapping: the trace's n clients are sorted by id (numerically when every id
    is an integer or an integer string, else as strings) and agent k follows
    the (k mod n)-th of them, so a trace with fewer clients than K is reused
    (FedScale likewise maps client ids modulo the trace size). Intervals are
    half-open, ``[active[i], inactive[i])``, rounded to whole ns.
    """

    def __init__(self, trace: dict, K: int, repeat: bool = True):
        self.K = int(K)
        self.repeat = bool(repeat)
        ids, self.starts_ns, self.ends_ns, self.offsets, self.period_ns = _flatten(trace)
        #: trace client ids in the sorted order the mapping uses
        self.client_ids = ids
        self.n_clients = len(ids)
        self._max_len = int(np.diff(self.offsets).max())

    def client_of(self, agents) -> np.ndarray:
        """Return the index (into ``client_ids``) of the trace client each agent follows, int64 (m,)."""
        a, _ = _query(agents, 0, self.K)
        return a % self.n_clients

    def online_until(self, agents, t_ns) -> tuple[np.ndarray, np.ndarray]:
        """Return (online bool (m,), until int64 ns (m,)) at the query times.

        The state is constant on ``[t, until)``; ``until`` is the end of the
        current interval or the start of the next one, capped at the end of
        the current trace period under ``repeat`` (where the state may or may
        not change), :data:`NEVER_NS` when nothing follows. Times may come in
        any order.
        """
        a, t = _query(agents, t_ns, self.K)
        c = a % self.n_clients
        if self.repeat:
            period = self.period_ns[c]
            tr = np.mod(t, period)
            base = t - tr
        else:
            tr = t
            base = np.zeros_like(t)
        lo, end = self.offsets[c], self.offsets[c + 1]
        # vectorised bisection per device segment: lo -> number of starts <= tr
        hi = end.copy()
        last = max(self.starts_ns.size - 1, 0)
        for _ in range(self._max_len.bit_length() + 1):
            live = lo < hi
            if not live.any():
                break
            mid = (lo + hi) // 2
            le = self.starts_ns[np.minimum(mid, last)] <= tr  # live implies intervals exist
            lo = np.where(live & le, mid + 1, lo)
            hi = np.where(live & ~le, mid, hi)
        cur = lo - 1
        has = cur >= self.offsets[c]
        curc = np.maximum(cur, 0)
        if self.ends_ns.size:
            on = has & (tr < self.ends_ns[np.minimum(curc, last)])
            nxt_start = self.starts_ns[np.minimum(lo, last)]
            cur_end = self.ends_ns[np.minimum(curc, last)]
        else:
            on = np.zeros(a.size, dtype=bool)
            nxt_start = cur_end = np.zeros(a.size, dtype=np.int64)
        rel = np.where(on, cur_end, np.where(lo < end, nxt_start, NEVER_NS))
        if self.repeat:
            rel = np.minimum(rel, period)
        until = np.where(rel == NEVER_NS, NEVER_NS, base + rel)
        return on, until

    def online(self, agents, t_ns) -> np.ndarray:
        """Return whether each listed agent is online at its time, bool (m,); see :meth:`online_until`."""
        return self.online_until(agents, t_ns)[0]


# ---------------------------------------------------------------------------- registry

AvailabilityFactory = Callable[[AvailabilityConfig, int, np.random.Generator], Availability]
AVAILABILITY_MODELS: dict[str, AvailabilityFactory] = {}


def register_availability(
    name: str, factory: AvailabilityFactory, *, replace: bool = False
) -> None:
    """Register ``factory(cfg, K, rng) -> Availability`` under ``name``; returns nothing.

    Scenarios then accept ``network.availability.model = name``; a name
    already taken raises ValueError unless ``replace`` is true.
    """
    register(AVAILABILITY_MODELS, "availability model", name, factory, replace)


register_availability("always", lambda cfg, K, rng: AlwaysOn(K))
register_availability(
    "markov", lambda cfg, K, rng: MarkovOnOff(K, cfg.mean_on_s, cfg.mean_off_s, cfg.start, rng)
)
register_availability(
    "trace",
    lambda cfg, K, rng: TraceAvailability(
        load_trace(cfg.trace_path, allow_pickle=cfg.trace_allow_pickle), K, cfg.trace_repeat
    ),
)


def build_availability(cfg: AvailabilityConfig, K: int, rng: np.random.Generator) -> Availability:
    """Return the availability model ``cfg.model`` names for K devices.

    Only ``markov`` draws from ``rng`` (and keeps it for its queries). Raises
    :class:`ScenarioError` for an unknown model name and, for ``trace``, with
    key ``network.availability.trace_path`` when the trace cannot be loaded.
    """
    if cfg.model not in AVAILABILITY_MODELS:
        raise cfg.cross_check(K)[0]
    try:
        return AVAILABILITY_MODELS[cfg.model](cfg, K, rng)
    except TraceError as err:
        raise ScenarioError(_TRACE_KEY, str(err)) from None
