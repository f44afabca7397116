"""One-hop link models, vectorised over messages: airtime, latency and capped ARQ.

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
  redrawn per transmission decides packet errors with the ``"snr"`` loss model.
* Capped ARQ: a message is sent up to R + 1 times; E[attempts] =
  (1 - q^(R+1)) / (1 - q) for independent losses of probability q.

A link is built from the ``[network.radio]`` table
(:class:`~edgesim.network.radio.RadioConfig`, written ``cfg`` below), which
imports this module for :data:`LINKS` (so this module does not import it).
The loss models (with :data:`LOSSES`, :func:`register_loss` and
:func:`make_loss`) are in :mod:`edgesim.network.loss`, importable from here
too. Researchers add models with :func:`register_link` /
:func:`register_loss`; :func:`build_link` looks the scenario's
``network.radio.model`` up in :data:`LINKS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from edgesim.arrays import constant, is_constant
from edgesim.config import attach_options
from edgesim.network import to_ns
from edgesim.network.airtime import AirtimeTables
from edgesim.network.airtime import airtime_ns as _airtime_ns
from edgesim.network.loss import LOSSES as LOSSES
from edgesim.network.loss import BernoulliLoss as BernoulliLoss
from edgesim.network.loss import GilbertElliottLoss as GilbertElliottLoss
from edgesim.network.loss import LossFactory as LossFactory
from edgesim.network.loss import LossModel, NoLoss, make_loss
from edgesim.network.loss import SNRLoss as SNRLoss
from edgesim.network.loss import register_loss as register_loss
from edgesim.registry import register

DIRECTIONS = ("up", "down")


def rto_ns_of(rto_s: float | str, latency_ns: int) -> int:
    """Return the ARQ retransmission timeout in integer ns: ``rto_s`` rounded, or 2 x ``latency_ns``
    for ``'auto'`` (one round trip). Raises ValueError for another string or a negative time."""
    if isinstance(rto_s, str):
        if rto_s != "auto":
            raise ValueError(f"rto_s must be a number of seconds or 'auto', got {rto_s!r}")
        return 2 * latency_ns
    if not rto_s >= 0:
        raise ValueError(f"rto_s must be >= 0, got {rto_s!r}")
    return to_ns(rto_s)


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
        return self.attempts * self.airtime_ns + self.after_ns

    @property
    def after_ns(self) -> np.ndarray:
        """Time after the last transmission's airtime until delivery or giving up (int64 ns, (m,)).

        (attempts - delivered) * rto + delivered * latency.
        """
        rto, latency = self.rto_ns, self.latency_ns
        if is_constant(rto) and is_constant(latency):
            # attempts rto + delivered (latency - rto): the same integers, in two passes
            r = int(rto[0])
            out = self.attempts * r
            return np.add(out, int(latency[0]) - r, out=out, where=self.delivered)
        d = self.delivered.astype(np.int64)
        return (self.attempts - d) * rto + d * latency

    def take(self, rows: np.ndarray) -> Transfers:
        """Return the transfers of the messages at ``rows`` (an index array), in that order."""
        return Transfers(
            attempts=self.attempts[rows],
            delivered=self.delivered[rows],
            airtime_ns=self.airtime_ns[rows],
            latency_ns=self.latency_ns[rows],
            rto_ns=self.rto_ns[rows],
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
        return len(self) - int(np.count_nonzero(self.delivered))


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

    def airtime_at_ns(
        self, endpoints: np.ndarray, size_bytes: np.ndarray, distance_m: np.ndarray
    ) -> np.ndarray:
        """Return the airtime of each message when its endpoint is at ``distance_m`` (int64 ns).

        Distance-free links return :meth:`airtime_ns`; a link whose rate
        depends on distance overrides this (moving devices need it).
        """
        return self.airtime_ns(endpoints, size_bytes)

    def send(
        self,
        endpoints: np.ndarray,
        size_bytes: np.ndarray,
        rng: np.random.Generator,
        distance_m: np.ndarray | None = None,
    ) -> Transfers:
        """Send message i of ``size_bytes[i]`` bytes to/from ``endpoints[i]``; returns :class:`Transfers`.

        Capped ARQ: every message is transmitted, those lost are sent again,
        at most R + 1 transmissions in all. Draw order: for attempt a = 0..R,
        one call of the loss model for the messages still trying, in the
        order of ``endpoints`` (what each call draws is documented by the
        loss model; :class:`NoLoss` draws nothing). The link's own draws
        (shadowing, initial loss states) happen at construction, never here.
        ``distance_m`` (m,): where each endpoint is now (moving devices); None:
        where it was placed.
        """
        e = np.asarray(endpoints, dtype=np.int64).reshape(-1)
        if e.size and (
            e.min() < 0 or (self.n_endpoints is not None and e.max() >= self.n_endpoints)
        ):
            raise ValueError(
                f"endpoints must be in [0, {self.n_endpoints}), got {e.min()}..{e.max()}"
            )
        return self.send_from(e, size_bytes, rng, distance_m)

    def send_from(
        self,
        e: np.ndarray,
        size_bytes: np.ndarray,
        rng: np.random.Generator,
        distance_m: np.ndarray | None = None,
    ) -> Transfers:
        """:meth:`send` from endpoints already known to be this link's: ``e`` (m,) int64 (what
        the server's exchange plan passes: its own devices, every exchange, so their range is
        not checked again). The sizes are checked; the same draws and results."""
        s = np.asarray(size_bytes).reshape(-1)
        if e.shape != s.shape:
            raise ValueError(f"endpoints {e.shape} and size_bytes {s.shape} differ in shape")
        if s.dtype.kind not in "iu":
            raise ValueError(f"size_bytes must be integers, got dtype {s.dtype}")
        if e.size and (s[0] if is_constant(s) else s.min()) < 0:
            raise ValueError(f"size_bytes must be >= 0, got {s.min()}")
        m = e.size
        if distance_m is None:
            airtime = self.airtime_ns(e, s)
        else:
            airtime = self.airtime_at_ns(e, s, np.asarray(distance_m, dtype=np.float64))
        if isinstance(self.loss, NoLoss):  # draws nothing: one attempt each, all delivered
            return Transfers(
                attempts=np.ones(m, dtype=np.int64),
                delivered=np.ones(m, dtype=bool),
                airtime_ns=airtime,
                latency_ns=constant(m, self.latency_ns),
                rto_ns=constant(m, self.rto_ns),
            )
        # The first transmission of every message: the same draws as the loop's first pass,
        # without gathering all m endpoints through an index.
        lost = np.asarray(self.loss.lost(e, rng), dtype=bool)
        attempts = np.ones(m, dtype=np.int64)
        delivered = ~lost
        trying = lost.nonzero()[0]  # (lost is 1-D: flatnonzero's ravel is not needed)
        for _ in range(self.arq_max_retries):
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
            latency_ns=constant(m, self.latency_ns),
            rto_ns=constant(m, self.rto_ns),
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
        self.rto_ns = rto_ns_of(rto_s, self.latency_ns)
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
    (I + B N0) with P the sender's power per resource block (``tx_power_dbm``
    up, ``ap_tx_power_dbm`` down) and B one block's bandwidth
    (:meth:`RadioConfig.block_bandwidth_hz`). Rate r_i = R B log2(1 + SNR_i)
    bit/s: a sender alone in the cell uses its R blocks
    (:meth:`RadioConfig.blocks`) at the same power per block, as LTE's uplink
    power control P0 + 10 log10(M) + alpha PL does below the maximum power
    (the cap is not modelled).

    Decision: the rate follows the mean SNR (link adaptation to slow fading);
    the transmitter cannot adapt to the Rayleigh block fading h ~ Exp(1),
    redrawn per transmission, which instead decides each transmission's
    packet error (``loss = 'snr'``: q = 1 - exp(-m (I + B N0) / (P g h)),
    Chen et al. IEEE TWC 2021). Other loss models work too.

    Draw order at construction: N standard normals (shadowing, unless
    ``shadow_db`` is given), then the loss model's draws (Gilbert-Elliott: N
    uniforms for the initial states).

    Attributes (N,): ``distance_m``, ``shadow_db``, ``rate_bps`` (a lone sender's, all R
    blocks); properties (N,), computed when asked: ``gain`` (linear g), ``mean_snr``
    (linear, per block).
    """

    def __init__(
        self,
        cfg,
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
        self.min_distance_m = cfg.min_distance_m
        self.path_loss_db_at_1km = cfg.path_loss_db_at_1km
        self.path_loss_exponent_db = cfg.path_loss_exponent_db
        power_dbm = cfg.tx_power_dbm if direction == "up" else cfg.ap_tx_power_dbm
        self.power_mw = float(dbm_to_mw(power_dbm))
        self.block_hz = cfg.block_bandwidth_hz()
        self.bandwidth_hz = cfg.blocks() * self.block_hz
        noise_mw = float(dbm_to_mw(cfg.noise_dbm_per_hz)) * self.block_hz
        interference_mw = (
            0.0 if cfg.interference_dbm == "none" else float(dbm_to_mw(cfg.interference_dbm))
        )
        self.noise_plus_interference_mw = noise_mw + interference_mw
        self.rate_bps = self.bandwidth_hz * np.log2(1.0 + self.mean_snr)
        self._airtimes = AirtimeTables()  # (a subclass may set rate_bps anew: tables follow it)
        self.latency_ns = to_ns(cfg.latency_s)
        self.rto_ns = cfg.rto_ns()
        self.arq_max_retries = int(cfg.arq_max_retries)
        if loss_model is None:
            loss_model = make_loss(cfg, n, self.mean_snr, rng)
        self.loss = loss_model

    def airtime_ns(self, endpoints: np.ndarray, size_bytes: np.ndarray) -> np.ndarray:
        """Return 8 S / r_endpoint per message, rounded to int64 ns (m,): messages of one size
        read that size's table over the endpoints (:class:`~edgesim.network.airtime.AirtimeTables`,
        the same numbers)."""
        sizes = np.asarray(size_bytes)
        if is_constant(sizes) and sizes.dtype == np.int64:
            table = self._airtimes.of(int(sizes[0]), self.rate_bps)
            if table is not None:
                return table[endpoints]
        return _airtime_ns(sizes, self.rate_bps[endpoints])

    # gain and mean_snr are formed when asked, not kept: 16 bytes per endpoint and link
    # (320 MB for the two links of 10^7 devices) that only the rate needs, once.
    @property
    def gain(self) -> np.ndarray:
        """Return each endpoint's large-scale gain g (linear), shape (N,)."""
        return self.gain_at(slice(None), self.distance_m)

    @property
    def mean_snr(self) -> np.ndarray:
        """Return each endpoint's mean SNR per block P g / (I + B N0) (linear), shape (N,)."""
        return self.mean_snr_of(slice(None))

    def mean_snr_of(self, endpoints) -> np.ndarray:
        """Return the mean SNR per block (linear) of ``endpoints`` (an index array or slice)."""
        return self._snr(self.gain_at(endpoints, self.distance_m[endpoints]))

    def gain_at(self, endpoints, distance_m: np.ndarray) -> np.ndarray:
        """Return the gain (linear) of ``endpoints`` at ``distance_m`` (m, raised to
        ``min_distance_m``): the path loss of that distance and the endpoint's own shadowing."""
        d_km = np.maximum(distance_m, self.min_distance_m) / 1000.0
        path_loss_db = self.path_loss_db_at_1km + self.path_loss_exponent_db * np.log10(d_km)
        return dbm_to_mw(-(path_loss_db + self.shadow_db[endpoints]))

    def _snr(self, gain: np.ndarray) -> np.ndarray:
        return self.power_mw * gain / self.noise_plus_interference_mw

    def rate_at_bps(self, endpoints: np.ndarray, distance_m: np.ndarray) -> np.ndarray:
        """Return each endpoint's rate (bit/s) at ``distance_m``: its own shadowing, the path
        loss of that distance (raised to ``min_distance_m``)."""
        return self.bandwidth_hz * np.log2(1.0 + self._snr(self.gain_at(endpoints, distance_m)))

    def airtime_at_ns(
        self, endpoints: np.ndarray, size_bytes: np.ndarray, distance_m: np.ndarray
    ) -> np.ndarray:
        """Return 8 S / r per message at the endpoint's current distance (int64 ns, (m,))."""
        return _airtime_ns(np.asarray(size_bytes), self.rate_at_bps(endpoints, distance_m))


# --------------------------------------------------------------------------- registries

LinkFactory = Callable[[Any, str, np.ndarray, np.random.Generator], Link]
"""``factory(cfg, direction, distance_m, rng) -> Link``: ``cfg`` is the
``[network.radio]`` table (:class:`~edgesim.network.radio.RadioConfig`), ``direction`` is 'up'
or 'down', ``distance_m`` (N,) the endpoints' distances to the access point
(only their number matters to distance-free models), ``rng`` the generator for
construction-time draws. The link must offer ``send(endpoints, size_bytes,
rng) -> Transfers`` (subclass :class:`Link` to inherit capped ARQ)."""


def _fixed_link(cfg, direction: str, distance_m, rng) -> Link:
    n = int(np.asarray(distance_m).reshape(-1).size)
    return FixedLink(
        cfg.latency_s,
        cfg.lone_rate_bps(),
        make_loss(cfg, n, None, rng),
        cfg.arq_max_retries,
        cfg.rto_s,
        n_endpoints=n,
    )


def _shannon_link(cfg, direction: str, distance_m, rng) -> Link:
    return ShannonLink(cfg, distance_m, direction, rng)


LINKS: dict[str, LinkFactory] = {"fixed": _fixed_link, "shannon": _shannon_link}
"""Link models by ``network.radio.model`` name (see :data:`LinkFactory`); ``"lte"`` (the
TS 36.213 tables) registers itself when :mod:`edgesim.network.lte`, which extends
:class:`ShannonLink`, is imported."""


def register_link(
    name: str, factory: LinkFactory, *, options: type | None = None, replace: bool = False
) -> None:
    """Register a link model under ``name`` (usable as ``network.radio.model``); returns nothing.

    ``options``: the model's own options class (a frozen dataclass whose fields
    are declared with :func:`edgesim.config.option`), unless the factory
    already carries one as its ``options`` attribute; a scenario sets them in
    the ``[network.radio.<name>]`` sub-table and the factory reads them with
    ``edgesim.config.resolved_options(cfg, "link_options")``. A name already taken raises
    ValueError unless ``replace`` is true.
    """
    attach_options(factory, options)
    register(LINKS, "link model", name, factory, replace)


def build_link(cfg, direction: str, distance_m: np.ndarray, rng: np.random.Generator) -> Link:
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
