"""One-hop link models, vectorised over messages: airtime, latency, loss and capped ARQ.

A link is built once per simulation for ``N`` endpoints (devices) in one
direction (``"up"``: device to access point, ``"down"``: access point to
device) and answers, for all the messages of a round at once, how many
transmissions each message took, whether it got through and how long that
took (:meth:`Link.send` returns :class:`Transfers`). No SimPy here: the
server that schedules events calls ``send`` and turns durations into
timeouts. Times are integer nanoseconds (``edgesim.network.NS_PER_S``); each
component (one airtime, the latency, the retransmission timeout) is rounded
to the nearest ns once, then only integers are added.

Models (docs/network.md):

* :class:`FixedLink`: a constant rate and latency; :class:`WiredLink` is the
  lossless special case for backhaul hops.
* :class:`ShannonLink`: per-endpoint large-scale gain from the 3GPP macro path
  loss 128.1 + 37.6 log10(d_km) dB and log-normal shadowing; rate
  r = B log2(1 + P g / (I + B N0)) from the mean SNR; Rayleigh block fading
  redrawn per transmission decides packet errors with the ``"snr"`` loss
  model q = 1 - exp(-m (I + B N0) / (P g h)) (Chen et al., "A joint learning
  and communications framework for federated learning over wireless
  networks", IEEE TWC 20(1), 2021, eq. 4).
* Loss models per transmission attempt: :class:`NoLoss`,
  :class:`BernoulliLoss`, :class:`SNRLoss`, :class:`GilbertElliottLoss`
  (netem semantics).
* Capped ARQ: a message is sent up to R + 1 times; E[attempts] =
  (1 - q^(R+1)) / (1 - q) for independent losses of probability q.

Researchers add models with :func:`register_link` / :func:`register_loss`;
:func:`build_link` looks the scenario's ``network.radio.model`` and
``network.radio.loss`` up in :data:`LINKS` and :data:`LOSSES`.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from edgesim.config import option
from edgesim.errors import ScenarioError
from edgesim.network import NS_PER_S, to_ns
from edgesim.registry import register

DIRECTIONS = ("up", "down")

# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class RadioConfig:
    """The scenario's ``[network.radio]`` table: one wireless hop between devices and the AP.

    Defaults follow docs/network.md (3GPP macro path loss, 8 dB
    shadowing, -174 dBm/Hz noise, 1 MHz resource blocks, 10 dBm uplink,
    Chen et al. IEEE TWC 2021 packet-error model).
    """

    model: str = option(
        "fixed",
        "link model: 'fixed' (constant rate bandwidth_bps and latency) or 'shannon' (path loss,"
        " shadowing and Rayleigh fading; rate B log2(1 + SNR)), or a name registered with"
        " edgesim.network.links.register_link",
    )
    latency_s: float = option(
        0.005,
        "one-way propagation + processing latency added to each delivered transmission",
        unit="s",
        ge=0.0,
    )
    bandwidth_bps: float = option(
        20e6,
        "fixed model: rate of one transmission (of one resource block when the access"
        " scheme splits the medium)",
        unit="bit/s",
        gt=0.0,
    )
    loss: str = option(
        "none",
        "per-transmission loss: 'none', 'bernoulli' (probability loss_prob), 'snr' (Rayleigh"
        " fading packet error of Chen et al. 2021, needs model = 'shannon'), 'gilbert-elliott'"
        " (bursty, ge_p/ge_r/ge_h/ge_k as in netem), or a name registered with"
        " edgesim.network.links.register_loss",
    )
    loss_prob: float = option(
        0.0,
        "bernoulli: probability that one transmission is lost (independent)",
        ge=0.0,
        le=1.0,
    )
    arq_max_retries: int = option(
        3,
        "ARQ: retransmissions R after the first try; a message still lost after R + 1"
        " transmissions is dropped",
        ge=0,
    )
    rto_s: float | str = option(
        "auto",
        "ARQ retransmission timeout: time a failed transmission waits (after its airtime)"
        " before the next try; 'auto' = 2 * latency_s (one round trip)",
        unit="s",
        kinds=(float, int, str),
        choices=("auto",),
        ge=0.0,
    )
    access: str = option(
        "ofdma",
        "medium access: 'ofdma' (each sender its own resource blocks), 'tdma' (one sender at"
        " a time), 'shared' (processor sharing of the medium)",
        choices=("ofdma", "tdma", "shared"),
    )
    resource_blocks: int | str = option(
        "per-device",
        "resource blocks of the cell: an integer, or 'per-device' (every device has its own)",
        kinds=(int, str),
        choices=("per-device",),
        ge=1,
    )
    min_distance_m: float = option(
        35.0,
        "shannon: distances below this are raised to it before the path loss (minimum"
        " UE-cell distance of 3GPP TR 36.814, Table A.2.1.1-2)",
        unit="m",
        gt=0.0,
    )
    ge_p: float = option(
        0.01,
        "gilbert-elliott: P(good -> bad) per transmission (netem p); mean good run 1/p"
        " transmissions",
        ge=0.0,
        le=1.0,
    )
    ge_r: float = option(
        0.5,
        "gilbert-elliott: P(bad -> good) per transmission (netem r); mean burst 1/r transmissions",
        ge=0.0,
        le=1.0,
    )
    ge_h: float = option(
        0.0,
        "gilbert-elliott: probability that a transmission in the bad state gets through"
        " (netem gives 1-h; default 0: the bad state loses everything)",
        ge=0.0,
        le=1.0,
    )
    ge_k: float = option(
        1.0,
        "gilbert-elliott: probability that a transmission in the good state gets through"
        " (netem gives 1-k; default 1: the good state loses nothing)",
        ge=0.0,
        le=1.0,
    )
    tx_power_dbm: float = option(
        10.0, "shannon: device (uplink) transmit power P per resource block", unit="dBm"
    )
    ap_tx_power_dbm: float = option(
        23.0,
        "shannon: access point (downlink) transmit power per resource block; 23 dBm is a"
        " small-cell/edge AP (3GPP power class 3 maximum; a macro cell is ~36 dBm/MHz:"
        " 46 dBm over 10 MHz, TR 36.814), 13 dB above the uplink",
        unit="dBm",
    )
    rb_bandwidth_hz: float = option(
        1e6, "shannon: bandwidth B of one resource block", unit="Hz", gt=0.0
    )
    noise_dbm_per_hz: float = option(
        -174.0, "shannon: noise power spectral density N0 (thermal, 290 K)", unit="dBm/Hz"
    )
    interference_dbm: float | str = option(
        "none",
        "shannon: interference power I over one resource block, or 'none' (I = 0)",
        unit="dBm",
        kinds=(float, int, str),
        choices=("none",),
    )
    shadowing_db: float = option(
        8.0,
        "shannon: standard deviation of log-normal shadowing, drawn once per device",
        unit="dB",
        ge=0.0,
    )
    path_loss_db_at_1km: float = option(
        128.1, "shannon: path loss at 1 km (3GPP macro: 128.1 + 37.6 log10 d_km)", unit="dB"
    )
    path_loss_exponent_db: float = option(
        37.6,
        "shannon: path loss slope per decade of distance (10 x the exponent)",
        unit="dB/decade",
        ge=0.0,
    )
    snr_waterfall_m: float = option(
        0.023,
        "snr loss: waterfall threshold m of q = 1 - exp(-m (I + B N0) / (P h)) (Chen et al."
        " IEEE TWC 2021)",
        gt=0.0,
    )

    def cross_check(self, prefix: str = "network.radio") -> list[ScenarioError]:
        """Return the errors of this section (empty when consistent), keys ``prefix.<field>``.

        Checks every field against its declared type, choices and bounds (so
        a config built in code is held to the same rules as a scenario
        file), then the rules across fields: ``model`` and ``loss`` must be
        registered; ``loss = 'snr'`` needs ``model = 'shannon'``;
        ``loss_prob`` is only used by ``'bernoulli'``, the ``ge_*`` keys only
        by ``'gilbert-elliott'`` and the radio keys only by ``'shannon'``
        (a changed value that would be ignored is an error); a loss model
        that loses every transmission (long-run rate 1) and a Gilbert-Elliott
        chain that never moves (``ge_p = ge_r = 0``) are errors.
        """
        errs = _field_errors(self, prefix)
        if errs:
            return errs

        def err(key: str, message: str) -> None:
            errs.append(ScenarioError(f"{prefix}.{key}", message))

        for key, registry, what in (("model", LINKS, "link"), ("loss", LOSSES, "loss")):
            name = getattr(self, key)
            if name not in registry:
                close = difflib.get_close_matches(name, list(registry), n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                err(
                    key,
                    f"unknown {what} model {name!r}{hint}; use "
                    + ", ".join(repr(k) for k in registry),
                )
        if self.loss == "snr" and self.model != "shannon":
            err("loss", f"'snr' needs model = 'shannon' (it uses the SNR), got {self.model!r}")

        defaults = RadioConfig()
        unused: list[tuple[str, str]] = []
        if self.loss != "bernoulli":
            unused.append(("loss_prob", "loss = 'bernoulli'"))
        if self.loss != "gilbert-elliott":
            unused += [(k, "loss = 'gilbert-elliott'") for k in ("ge_p", "ge_r", "ge_h", "ge_k")]
        if self.model != "shannon":
            unused += [(k, "model = 'shannon'") for k in _SHANNON_KEYS]
        if self.model == "shannon":
            unused.append(("bandwidth_bps", "model = 'fixed'"))
        if self.loss != "snr":
            unused.append(("snr_waterfall_m", "loss = 'snr'"))
        for key, needs in unused:
            value = getattr(self, key)
            if value != getattr(defaults, key):
                err(key, f"{value!r} would be ignored: it is only used with {needs}")

        if self.loss == "bernoulli" and self.loss_prob == 1.0:
            err("loss_prob", "1 loses every transmission (no message is ever delivered); use < 1")
        if self.loss == "gilbert-elliott":
            if self.ge_p + self.ge_r == 0.0:
                err("ge_p", "ge_p = ge_r = 0: the chain never moves; give ge_p + ge_r > 0")
            elif _ge_mean_loss(self.ge_p, self.ge_r, self.ge_h, self.ge_k) >= 1.0:
                err(
                    "ge_k",
                    "the long-run loss rate is 1 (no message is ever delivered); raise ge_k"
                    " or ge_h, or lower ge_p",
                )
        return errs

    def rto_ns(self) -> int:
        """Return the ARQ retransmission timeout in integer ns (``'auto'`` = 2 x latency)."""
        return _rto_ns(self.rto_s, to_ns(self.latency_s))


_SHANNON_KEYS = (
    "min_distance_m",
    "tx_power_dbm",
    "ap_tx_power_dbm",
    "rb_bandwidth_hz",
    "noise_dbm_per_hz",
    "interference_dbm",
    "shadowing_db",
    "path_loss_db_at_1km",
    "path_loss_exponent_db",
)


def _field_errors(cfg, prefix: str) -> list[ScenarioError]:
    """Check each field of dataclass ``cfg`` against its ``option`` metadata; returns errors."""
    errs = []
    hints = typing.get_type_hints(type(cfg))
    for f in dataclasses.fields(cfg):
        value, meta = getattr(cfg, f.name), f.metadata
        kinds = meta.get("kinds") or tuple(
            a for a in typing.get_args(hints[f.name]) or (hints[f.name],) if isinstance(a, type)
        )
        numeric = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
            value, bool
        )
        integer = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
        ok_kind = (
            (numeric and float in kinds)
            or (integer and int in kinds)
            or (isinstance(value, str) and str in kinds)
        )
        key = f"{prefix}.{f.name}"
        if not ok_kind:
            errs.append(ScenarioError(key, f"wrong type: got {value!r}"))
            continue
        choices = meta.get("choices")
        if isinstance(value, str):
            if choices is not None and value not in choices:
                errs.append(
                    ScenarioError(key, f"{value!r} is not allowed; use one of {list(choices)}")
                )
            continue
        if not math.isfinite(float(value)):
            errs.append(ScenarioError(key, f"must be a finite number, got {value!r}"))
            continue
        for bound, test, sym in (
            ("ge", float.__ge__, ">="),
            ("gt", float.__gt__, ">"),
            ("le", float.__le__, "<="),
            ("lt", float.__lt__, "<"),
        ):
            b = meta.get(bound)
            if b is not None and not test(float(value), float(b)):
                errs.append(ScenarioError(key, f"must be {sym} {b:g}, got {value!r}"))
    return errs


# --------------------------------------------------------------------------- helpers


def _rto_ns(rto_s: float | str, latency_ns: int) -> int:
    """Return the ARQ timeout in ns: ``rto_s`` rounded, or 2 x ``latency_ns`` for ``'auto'``."""
    if isinstance(rto_s, str):
        if rto_s != "auto":
            raise ValueError(f"rto_s must be a number of seconds or 'auto', got {rto_s!r}")
        return 2 * latency_ns
    if not rto_s >= 0:
        raise ValueError(f"rto_s must be >= 0, got {rto_s!r}")
    return to_ns(rto_s)


def _airtime_ns(size_bytes: np.ndarray, rate_bps: np.ndarray | float) -> np.ndarray:
    """Return 8 * size / rate in integer ns (m,), each rounded once to the nearest ns."""
    with np.errstate(divide="ignore"):
        t = np.rint(size_bytes.astype(np.float64) * (8.0 * NS_PER_S) / rate_bps)
    if t.size and not (np.isfinite(t).all() and t.max() < 2.0**62):
        raise ValueError("airtime does not fit in int64 ns: the link rate is (almost) zero")
    return t.astype(np.int64)


def dbm_to_mw(dbm: float | np.ndarray) -> float | np.ndarray:
    """Return the power in milliwatts of ``dbm`` (dBm): 10^(dBm / 10)."""
    return 10.0 ** (np.asarray(dbm, dtype=np.float64) / 10.0)


# --------------------------------------------------------------------------- transfers


@dataclass(frozen=True, eq=False)
class Transfers:
    """What happened to each of m messages sent on one link; all arrays have shape (m,).

    ``attempts``: transmissions made (int64, 1..R+1); ``delivered``: whether
    the last one got through (bool); ``airtime_ns``: the airtime of one
    transmission (int64 ns); ``latency_ns``: the one-way latency added once
    on delivery (int64 ns); ``rto_ns``: the wait after each failed
    transmission (int64 ns).
    """

    attempts: np.ndarray
    delivered: np.ndarray
    airtime_ns: np.ndarray
    latency_ns: np.ndarray
    rto_ns: np.ndarray

    def __len__(self) -> int:
        """Return the number of messages m."""
        return int(self.attempts.size)

    @property
    def duration_ns(self) -> np.ndarray:
        """Time from the first send until delivery, or until the sender gives up (int64 ns, (m,)).

        attempts * airtime + (attempts - delivered) * rto + delivered * latency:
        each failed transmission costs its airtime plus the timeout, the
        successful one its airtime plus the latency.
        """
        d = self.delivered.astype(np.int64)
        return (
            self.attempts * self.airtime_ns
            + (self.attempts - d) * self.rto_ns
            + d * self.latency_ns
        )

    @property
    def transmissions(self) -> int:
        """Total transmissions over all messages (sum of attempts)."""
        return int(self.attempts.sum())

    @property
    def retransmissions(self) -> int:
        """Total retransmissions over all messages (sum of attempts - 1)."""
        return int(self.attempts.sum()) - len(self)

    @property
    def dropped(self) -> int:
        """Number of messages not delivered after R + 1 transmissions."""
        return len(self) - int(self.delivered.sum())


# --------------------------------------------------------------------------- loss models


class LossModel(Protocol):
    """Decides, per transmission attempt, which transmissions are lost.

    ``lost(endpoints, rng)`` gets the endpoint of each transmission of one
    ARQ attempt (int array (n,), in message order) and returns a bool array
    (n,), True where the transmission is lost. A stateful model (Gilbert-
    Elliott) treats the transmissions of one endpoint within a call as
    happening in array order. ``mean_loss`` is the long-run per-transmission
    loss probability (a float, or one per endpoint).
    """

    def lost(self, endpoints: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...


class NoLoss:
    """Every transmission gets through; ``lost`` draws nothing from the generator."""

    mean_loss = 0.0

    def lost(self, endpoints: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Return all-False (n,): nothing is lost."""
        return np.zeros(len(endpoints), dtype=bool)


class BernoulliLoss:
    """Independent loss of each transmission with probability ``q``.

    ``lost`` draws n uniforms (one per transmission, in order) even when q is 0 or 1.
    """

    def __init__(self, q: float):
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"Bernoulli loss probability must be in [0, 1], got {q!r}")
        self.q = float(q)
        self.mean_loss = self.q

    def lost(self, endpoints: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Return a bool array (n,): True where uniform < q."""
        return rng.random(len(endpoints)) < self.q


class SNRLoss:
    """Rayleigh-fading packet error of Chen et al. (IEEE TWC 2021, eq. 4).

    ``mean_snr`` (N,) is the linear mean SNR P g / (I + B N0) of each
    endpoint and ``m`` the waterfall threshold. Each transmission draws its
    own block-fading power gain h ~ Exp(1) and is lost with probability
    q = 1 - exp(-m / (snr h)). ``lost`` draws n standard exponentials (h)
    and then n uniforms, both in transmission order.
    """

    def __init__(self, m: float, mean_snr: np.ndarray):
        self.m = float(m)
        self.mean_snr = np.asarray(mean_snr, dtype=np.float64)
        if self.m <= 0 or not (self.mean_snr > 0).all():
            raise ValueError("SNRLoss needs m > 0 and positive mean SNRs")
        self.c = self.m / self.mean_snr  # q = 1 - exp(-c / h)

    @property
    def n_endpoints(self) -> int:
        """Number of endpoints N."""
        return int(self.c.size)

    @property
    def mean_loss(self) -> np.ndarray:
        """Per-endpoint loss probability (N,): E_h[1 - exp(-c/h)] = 1 - 2 sqrt(c) K_1(2 sqrt(c)).

        For h ~ Exp(1), E[exp(-c/h)] = int_0^inf exp(-c/h - h) dh = 2 sqrt(c) K_1(2 sqrt(c))
        (Gradshteyn & Ryzhik 3.471.9), K_1 the modified Bessel function of the second kind.
        """
        from scipy.special import kv

        s = 2.0 * np.sqrt(self.c)
        return 1.0 - s * kv(1, s)

    def lost(self, endpoints: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Return a bool array (n,): True where a uniform falls below q(h) of a fresh fade h."""
        n = len(endpoints)
        h = rng.standard_exponential(n)
        u = rng.random(n)
        with np.errstate(divide="ignore"):
            q = -np.expm1(-self.c[endpoints] / h)
        return u < q


def _ge_mean_loss(p: float, r: float, h: float, k: float) -> float:
    """Long-run loss rate pi_G (1 - k) + pi_B (1 - h) of a Gilbert-Elliott chain, pi_B = p/(p+r)."""
    pi_b = p / (p + r)
    return (1.0 - pi_b) * (1.0 - k) + pi_b * (1.0 - h)


class GilbertElliottLoss:
    """Bursty loss: one two-state (good/bad) Markov chain per endpoint, netem semantics.

    ``p`` = P(good -> bad), ``r`` = P(bad -> good) per transmission of that
    endpoint; a transmission in the good state gets through with probability
    ``k``, in the bad state with probability ``h`` (netem's ``gemodel p r 1-h
    1-k``; Gilbert 1960, Elliott 1963). As in Linux netem's
    ``loss_gilb_ell``, each transmission is lost or not according to the
    endpoint's current state and the chain then moves one step. States
    persist across ``lost`` calls (``self.bad``, bool (N,)). The initial
    states are drawn from the stationary law pi_B = p / (p + r) with N
    uniforms from ``rng`` (unless ``initial_bad`` is given). Long-run loss
    rate: pi_G (1 - k) + pi_B (1 - h).

    ``lost`` draws 2n uniforms as ``rng.random((n, 2))``: for transmission i,
    column 0 moves the chain and column 1 decides the loss.
    """

    def __init__(
        self,
        p: float,
        r: float,
        h: float,
        k: float,
        n_endpoints: int,
        rng: np.random.Generator | None = None,
        *,
        initial_bad: np.ndarray | None = None,
    ):
        for name, v in (("p", p), ("r", r), ("h", h), ("k", k)):
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"Gilbert-Elliott {name} must be in [0, 1], got {v!r}")
        self.p, self.r, self.h, self.k = float(p), float(r), float(h), float(k)
        if initial_bad is not None:
            self.bad = np.array(initial_bad, dtype=bool).reshape(n_endpoints)
        else:
            if p + r == 0:
                raise ValueError("Gilbert-Elliott with p = r = 0 has no stationary law")
            if rng is None:
                raise ValueError("GilbertElliottLoss needs rng (or initial_bad)")
            self.bad = rng.random(n_endpoints) < p / (p + r)

    @property
    def n_endpoints(self) -> int:
        """Number of endpoints N."""
        return int(self.bad.size)

    @property
    def mean_loss(self) -> float:
        """Long-run per-transmission loss probability pi_G (1 - k) + pi_B (1 - h)."""
        return _ge_mean_loss(self.p, self.r, self.h, self.k)

    def lost(self, endpoints: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Return a bool array (n,) of losses and advance each endpoint's chain once per transmission."""
        e = np.asarray(endpoints, dtype=np.int64)
        n = e.size
        u = rng.random((n, 2))
        if n == 0:
            return np.zeros(0, dtype=bool)
        p, r = self.p, self.r
        ut = u[:, 0]
        if np.bincount(e, minlength=self.bad.size).max() <= 1:
            before = self.bad[e]
            lost = u[:, 1] < np.where(before, 1.0 - self.h, 1.0 - self.k)
            self.bad[e] = np.where(before, ut >= r, ut < p)
            return lost

        # Several transmissions of one endpoint: compose the chain's one-step maps in
        # array order, vectorised. With one uniform per step the map on {G, B} is the
        # identity (u >= max(p, r)), a swap (u < min(p, r)), "to good" (p <= u < r) or
        # "to bad" (r <= u < p); the state after a step is the value of the last
        # constant map (or the stored state) flipped by the parity of swaps since.
        order = np.argsort(e, kind="stable")
        es, ut = e[order], ut[order]
        swap = ut < min(p, r)
        to_bad = (ut < p) & (ut >= r)
        reset = to_bad | ((ut >= p) & (ut < r))
        idx = np.arange(n)
        first = np.r_[True, es[1:] != es[:-1]]
        starts = np.flatnonzero(first)
        gstart = starts[np.cumsum(first) - 1]
        last_reset = np.maximum.accumulate(np.where(reset, idx, -1))
        has_reset = last_reset >= gstart
        cs = np.cumsum(swap)
        anchor = np.where(has_reset, last_reset, gstart)
        # swaps after the last reset, or since the group's start (inclusive) without one
        parity = (cs - cs[anchor] + (swap[anchor] & ~has_reset)) & 1
        base = np.where(has_reset, to_bad[np.maximum(last_reset, 0)], self.bad[es])
        after = base ^ parity.astype(bool)
        before = np.empty(n, dtype=bool)
        before[1:] = after[:-1]
        before[first] = self.bad[es[first]]
        lost_sorted = u[order, 1] < np.where(before, 1.0 - self.h, 1.0 - self.k)
        ends = np.r_[starts[1:] - 1, n - 1]
        self.bad[es[ends]] = after[ends]
        lost = np.empty(n, dtype=bool)
        lost[order] = lost_sorted
        return lost


# --------------------------------------------------------------------------- links


class Link:
    """A one-hop link with capped ARQ; subclasses set the rate, latency, timeout and loss.

    Attributes: ``latency_ns`` (int, one-way latency added on delivery),
    ``rto_ns`` (int, wait after a failed transmission), ``loss`` (a
    :class:`LossModel`), ``arq_max_retries`` (R). Subclasses implement
    :meth:`airtime_ns`.
    """

    latency_ns: int
    rto_ns: int
    loss: LossModel
    arq_max_retries: int
    n_endpoints: int | None = None

    def airtime_ns(self, endpoints: np.ndarray, size_bytes: np.ndarray) -> np.ndarray:
        """Return the airtime of one transmission of each message (int64 ns, (m,))."""
        raise NotImplementedError

    def send(
        self, endpoints: np.ndarray, size_bytes: np.ndarray, rng: np.random.Generator
    ) -> Transfers:
        """Send message i of ``size_bytes[i]`` bytes to/from ``endpoints[i]``; returns :class:`Transfers`.

        Capped ARQ: every message is transmitted, those lost are sent again,
        at most R + 1 transmissions in all. Draw order: for attempt a = 0..R,
        one call of the loss model for the messages still trying, in the
        order of ``endpoints`` (what each call draws is documented by the
        loss model; :class:`NoLoss` draws nothing). The link's own draws
        (shadowing, initial loss states) happen at construction, never here.
        """
        e = np.asarray(endpoints, dtype=np.int64).reshape(-1)
        s = np.asarray(size_bytes).reshape(-1)
        if e.shape != s.shape:
            raise ValueError(f"endpoints {e.shape} and size_bytes {s.shape} differ in shape")
        if not np.issubdtype(s.dtype, np.integer):
            raise ValueError(f"size_bytes must be integers, got dtype {s.dtype}")
        if e.size:
            if e.min() < 0 or (self.n_endpoints is not None and e.max() >= self.n_endpoints):
                raise ValueError(
                    f"endpoints must be in [0, {self.n_endpoints}), got {e.min()}..{e.max()}"
                )
            if s.min() < 0:
                raise ValueError(f"size_bytes must be >= 0, got {s.min()}")
        m = e.size
        airtime = self.airtime_ns(e, s)
        if isinstance(self.loss, NoLoss):  # draws nothing: one attempt each, all delivered
            return Transfers(
                attempts=np.ones(m, dtype=np.int64),
                delivered=np.ones(m, dtype=bool),
                airtime_ns=airtime,
                latency_ns=np.full(m, self.latency_ns, dtype=np.int64),
                rto_ns=np.full(m, self.rto_ns, dtype=np.int64),
            )
        attempts = np.zeros(m, dtype=np.int64)
        delivered = np.zeros(m, dtype=bool)
        trying = np.arange(m)
        for _ in range(self.arq_max_retries + 1):
            if trying.size == 0:
                break
            attempts[trying] += 1
            lost = np.asarray(self.loss.lost(e[trying], rng), dtype=bool)
            delivered[trying[~lost]] = True
            trying = trying[lost]
        return Transfers(
            attempts=attempts,
            delivered=delivered,
            airtime_ns=airtime,
            latency_ns=np.full(m, self.latency_ns, dtype=np.int64),
            rto_ns=np.full(m, self.rto_ns, dtype=np.int64),
        )


class FixedLink(Link):
    """Constant rate ``bandwidth_bps`` (bit/s) and one-way latency ``latency_s`` (s).

    A message of S bytes has airtime 8 S / bandwidth per transmission; a
    failed transmission costs airtime + rto, the successful one airtime +
    latency. ``loss_model`` defaults to :class:`NoLoss`; ``rto_s`` is seconds
    or ``'auto'`` (2 x latency). ``n_endpoints`` (optional) bounds the
    endpoint indices ``send`` accepts. ``bandwidth_bps`` may be ``inf``
    (zero airtime).
    """

    def __init__(
        self,
        latency_s: float,
        bandwidth_bps: float,
        loss_model: LossModel | None = None,
        arq_max_retries: int = 0,
        rto_s: float | str = "auto",
        *,
        n_endpoints: int | None = None,
    ):
        if not latency_s >= 0:
            raise ValueError(f"latency_s must be >= 0, got {latency_s!r}")
        if not bandwidth_bps > 0:
            raise ValueError(f"bandwidth_bps must be > 0, got {bandwidth_bps!r}")
        if arq_max_retries < 0:
            raise ValueError(f"arq_max_retries must be >= 0, got {arq_max_retries!r}")
        self.bandwidth_bps = float(bandwidth_bps)
        self.latency_ns = to_ns(latency_s)
        self.rto_ns = _rto_ns(rto_s, self.latency_ns)
        self.loss = loss_model if loss_model is not None else NoLoss()
        self.arq_max_retries = int(arq_max_retries)
        self.n_endpoints = n_endpoints

    def airtime_ns(self, endpoints: np.ndarray, size_bytes: np.ndarray) -> np.ndarray:
        """Return 8 S / bandwidth per message, rounded to int64 ns (m,)."""
        return _airtime_ns(np.asarray(size_bytes), self.bandwidth_bps)


class WiredLink(FixedLink):
    """A lossless fixed hop (backhaul): latency ``latency_s`` (s), rate ``bandwidth_bps`` (bit/s).

    ``send`` returns one transmission per message, all delivered; it draws nothing.
    """

    def __init__(self, latency_s: float, bandwidth_bps: float):
        super().__init__(latency_s, bandwidth_bps, NoLoss(), 0, 0.0)


class ShannonLink(Link):
    """A cellular hop with path loss, shadowing, Rayleigh fading and rate adaptation.

    For endpoint i at distance d_i (m, raised to ``cfg.min_distance_m``):
    large-scale gain g_i (linear) from path loss PL = ``path_loss_db_at_1km``
    + ``path_loss_exponent_db`` log10(d_km) (3GPP TR 36.814 macro: 128.1 +
    37.6 log10 d_km) plus log-normal shadowing X_i ~ N(0, ``shadowing_db``^2)
    dB, drawn once per endpoint at construction (reciprocal: pass the up
    link's ``shadow_db`` to the down link to share it). Mean SNR_i = P g_i /
    (I + B N0) with P the sender's power (``tx_power_dbm`` up,
    ``ap_tx_power_dbm`` down), B = ``rb_bandwidth_hz``. Rate r_i = B log2(1 +
    SNR_i) bit/s (one resource block).

    Decision: the rate follows the mean SNR (link adaptation to slow fading);
    the transmitter cannot adapt to the Rayleigh block fading h ~ Exp(1),
    redrawn per transmission, which instead decides each transmission's
    packet error (``loss = 'snr'``: q = 1 - exp(-m (I + B N0) / (P g h)),
    Chen et al. IEEE TWC 2021). Other loss models work too.

    Draw order at construction: N standard normals (shadowing, unless
    ``shadow_db`` is given), then the loss model's draws (Gilbert-Elliott: N
    uniforms for the initial states).

    Attributes (N,): ``distance_m``, ``shadow_db``, ``gain`` (linear g),
    ``mean_snr`` (linear), ``rate_bps``.
    """

    def __init__(
        self,
        cfg: RadioConfig,
        distance_m: np.ndarray,
        direction: str,
        rng: np.random.Generator,
        *,
        loss_model: LossModel | None = None,
        shadow_db: np.ndarray | None = None,
    ):
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be 'up' or 'down', got {direction!r}")
        d = np.asarray(distance_m, dtype=np.float64).reshape(-1)
        if d.size and not (np.isfinite(d).all() and d.min() >= 0):
            raise ValueError("distance_m must be finite and >= 0")
        n = d.size
        self.direction = direction
        self.n_endpoints = n
        self.distance_m = d
        if shadow_db is None:
            shadow_db = rng.standard_normal(n) * cfg.shadowing_db
        self.shadow_db = np.asarray(shadow_db, dtype=np.float64).reshape(n)
        d_km = np.maximum(d, cfg.min_distance_m) / 1000.0
        path_loss_db = cfg.path_loss_db_at_1km + cfg.path_loss_exponent_db * np.log10(d_km)
        self.gain = dbm_to_mw(-(path_loss_db + self.shadow_db))
        power_dbm = cfg.tx_power_dbm if direction == "up" else cfg.ap_tx_power_dbm
        self.power_mw = float(dbm_to_mw(power_dbm))
        self.bandwidth_hz = float(cfg.rb_bandwidth_hz)
        noise_mw = float(dbm_to_mw(cfg.noise_dbm_per_hz)) * self.bandwidth_hz
        interference_mw = (
            0.0 if cfg.interference_dbm == "none" else float(dbm_to_mw(cfg.interference_dbm))
        )
        self.noise_plus_interference_mw = noise_mw + interference_mw
        self.mean_snr = self.power_mw * self.gain / self.noise_plus_interference_mw
        self.rate_bps = self.bandwidth_hz * np.log2(1.0 + self.mean_snr)
        self.latency_ns = to_ns(cfg.latency_s)
        self.rto_ns = cfg.rto_ns()
        self.arq_max_retries = int(cfg.arq_max_retries)
        if loss_model is None:
            loss_model = make_loss(cfg, n, self.mean_snr, rng)
        self.loss = loss_model

    def airtime_ns(self, endpoints: np.ndarray, size_bytes: np.ndarray) -> np.ndarray:
        """Return 8 S / r_endpoint per message, rounded to int64 ns (m,)."""
        return _airtime_ns(np.asarray(size_bytes), self.rate_bps[endpoints])


# --------------------------------------------------------------------------- registries

LossFactory = Callable[[RadioConfig, int, "np.ndarray | None", np.random.Generator], LossModel]
"""``factory(cfg, n_endpoints, mean_snr, rng) -> LossModel``: ``mean_snr`` is the
link's linear mean SNR per endpoint (N,), or None for links without one
(fixed); ``rng`` is the link's construction generator (draw initial states
from it, nothing else)."""

LinkFactory = Callable[[RadioConfig, str, np.ndarray, np.random.Generator], Link]
"""``factory(cfg, direction, distance_m, rng) -> Link``: ``direction`` is 'up'
or 'down', ``distance_m`` (N,) the endpoints' distances to the access point
(only their number matters to distance-free models), ``rng`` the generator for
construction-time draws. The link must offer ``send(endpoints, size_bytes,
rng) -> Transfers`` (subclass :class:`Link` to inherit capped ARQ)."""


def _snr_loss(cfg: RadioConfig, n: int, mean_snr, rng) -> LossModel:
    if mean_snr is None:
        raise ScenarioError("network.radio.loss", "'snr' needs model = 'shannon'")
    return SNRLoss(cfg.snr_waterfall_m, mean_snr)


LOSSES: dict[str, LossFactory] = {
    "none": lambda cfg, n, mean_snr, rng: NoLoss(),
    "bernoulli": lambda cfg, n, mean_snr, rng: BernoulliLoss(cfg.loss_prob),
    "snr": _snr_loss,
    "gilbert-elliott": lambda cfg, n, mean_snr, rng: GilbertElliottLoss(
        cfg.ge_p, cfg.ge_r, cfg.ge_h, cfg.ge_k, n, rng
    ),
}
"""Loss models by ``network.radio.loss`` name (see :data:`LossFactory`)."""


def _fixed_link(cfg: RadioConfig, direction: str, distance_m, rng) -> Link:
    n = int(np.asarray(distance_m).reshape(-1).size)
    return FixedLink(
        cfg.latency_s,
        cfg.bandwidth_bps,
        make_loss(cfg, n, None, rng),
        cfg.arq_max_retries,
        cfg.rto_s,
        n_endpoints=n,
    )


def _shannon_link(cfg: RadioConfig, direction: str, distance_m, rng) -> Link:
    return ShannonLink(cfg, distance_m, direction, rng)


LINKS: dict[str, LinkFactory] = {"fixed": _fixed_link, "shannon": _shannon_link}
"""Link models by ``network.radio.model`` name (see :data:`LinkFactory`)."""


def register_link(name: str, factory: LinkFactory, *, replace: bool = False) -> None:
    """Register a link model under ``name`` (usable as ``network.radio.model``); returns nothing.

    A name already taken raises ValueError unless ``replace`` is true.
    """
    register(LINKS, "link model", name, factory, replace)


def register_loss(name: str, factory: LossFactory, *, replace: bool = False) -> None:
    """Register a loss model under ``name`` (usable as ``network.radio.loss``); returns nothing.

    A name already taken raises ValueError unless ``replace`` is true.
    """
    register(LOSSES, "loss model", name, factory, replace)


def make_loss(
    cfg: RadioConfig, n_endpoints: int, mean_snr: np.ndarray | None, rng: np.random.Generator
) -> LossModel:
    """Return the loss model ``cfg.loss`` for ``n_endpoints`` endpoints (looked up in :data:`LOSSES`)."""
    if cfg.loss not in LOSSES:
        raise ScenarioError("network.radio.loss", f"unknown loss model {cfg.loss!r}")
    return LOSSES[cfg.loss](cfg, n_endpoints, mean_snr, rng)


def build_link(
    cfg: RadioConfig, direction: str, distance_m: np.ndarray, rng: np.random.Generator
) -> Link:
    """Return the link ``cfg.model`` for the endpoints at ``distance_m`` (m, (N,)) in ``direction``.

    Validates ``cfg`` first (raises the first :class:`ScenarioError` of
    ``cfg.cross_check()``), then calls ``LINKS[cfg.model](cfg, direction,
    distance_m, rng)``. ``rng`` is used for construction-time draws only
    (shadowing, initial loss states); ``send`` takes its own generator.
    """
    errs = cfg.cross_check()
    if errs:
        raise errs[0]
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'up' or 'down', got {direction!r}")
    return LINKS[cfg.model](cfg, direction, np.asarray(distance_m, dtype=np.float64), rng)
