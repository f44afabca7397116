"""Per-transmission loss models of a link, and their registry.

:class:`NoLoss`, :class:`BernoulliLoss`, :class:`SNRLoss` (Rayleigh block
fading, Chen et al., IEEE TWC 20(1), 2021, eq. 4) and
:class:`GilbertElliottLoss` (netem semantics) implement :class:`LossModel`.
:func:`make_loss` builds the scenario's ``network.radio.loss`` from
:data:`LOSSES`, where :func:`register_loss` adds models. A link
(:mod:`edgesim.network.links`) asks its loss model once per ARQ attempt.
The factories read the ``[network.radio]`` table
(:class:`~edgesim.network.radio.RadioConfig`), which imports this module for
:data:`LOSSES` and :func:`ge_mean_loss` (so this module does not import it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from edgesim.config import attach_options
from edgesim.errors import ScenarioError
from edgesim.registry import register


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


def ge_mean_loss(p: float, r: float, h: float, k: float) -> float:
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
        return ge_mean_loss(self.p, self.r, self.h, self.k)

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


LossFactory = Callable[[Any, int, "np.ndarray | None", np.random.Generator], LossModel]
"""``factory(cfg, n_endpoints, mean_snr, rng) -> LossModel``: ``mean_snr`` is the
link's linear mean SNR per endpoint (N,), or None for links without one
(fixed); ``rng`` is the link's construction generator (draw initial states
from it, nothing else)."""


def _snr_loss(cfg, n: int, mean_snr, rng) -> LossModel:
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


def register_loss(
    name: str, factory: LossFactory, *, options: type | None = None, replace: bool = False
) -> None:
    """Register a loss model under ``name`` (usable as ``network.radio.loss``); returns nothing.

    ``options`` and ``replace`` as for :func:`edgesim.network.links.register_link`
    (the factory reads its options with ``resolved_options(cfg, "loss_options")``).
    """
    attach_options(factory, options)
    register(LOSSES, "loss model", name, factory, replace)


def make_loss(
    cfg, n_endpoints: int, mean_snr: np.ndarray | None, rng: np.random.Generator
) -> LossModel:
    """Return the loss model ``cfg.loss`` for ``n_endpoints`` endpoints (looked up in :data:`LOSSES`)."""
    if cfg.loss not in LOSSES:
        raise ScenarioError("network.radio.loss", f"unknown loss model {cfg.loss!r}")
    return LOSSES[cfg.loss](cfg, n_endpoints, mean_snr, rng)
