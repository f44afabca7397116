"""Local compute time of one gradient request: fixed, per-sample, straggler and device-speed models.

The server samples these once per round, vectorised over the agents it asks,
so nothing here knows about SimPy. Every time is returned in integer
nanoseconds (``edgesim.network.NS_PER_S``): the compute time of one request is
one component, rounded once with ``np.rint`` so later sums of integers are
exact.

Models (``network.compute.model``), with ``n_k`` agent k's local samples and
``c = seconds``, ``a = per_sample_s``:

- ``fixed``: t = c for every agent.
- ``per-sample``: t = c + a n_k (one full-batch gradient costs a per sample).
- ``shifted-exponential``: t = c + a n_k + Exp(straggler_mean_s), the
  straggler model of Lee et al., "Speeding up distributed machine learning
  using codes", IEEE Trans. Inf. Theory 64(3), 2018 (Sec. III: a shift plus an
  exponential tail), redrawn at every request.
- ``lognormal``: t = (c + a n_k) s_k with one speed factor per device,
  s_k ~ LogNormal(0, speed_sigma) drawn once when the model is built (a fixed
  device profile, as FedScale's device capacity traces: Lai et al., "FedScale",
  ICML 2022). The median factor is 1, the mean exp(speed_sigma^2 / 2).

Other models plug in with :func:`register_compute_model`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from edgesim.config import option
from edgesim.errors import ScenarioError
from edgesim.network import to_ns
from edgesim.registry import register

__all__ = [
    "COMPUTE_MODELS",
    "ComputeConfig",
    "ComputeModel",
    "ComputeTimes",
    "build_compute_model",
    "register_compute_model",
]

BUILTIN_COMPUTE_MODELS = ("fixed", "per-sample", "shifted-exponential", "lognormal")


@dataclass(frozen=True)
class ComputeConfig:
    """The ``[network.compute]`` table: how long a device computes one reply."""

    model: str = option(
        "fixed",
        "compute-time model: 'fixed' (seconds), 'per-sample' (seconds + per_sample_s n_k),"
        " 'shifted-exponential' (that shift + Exp(straggler_mean_s) per request, Lee et al."
        " 2018), 'lognormal' ((seconds + per_sample_s n_k) s_k, s_k ~ LogNormal(0, speed_sigma)"
        " once per device) or a registered name",
    )
    seconds: float = option(
        0.01, "fixed part of one local gradient computation (all of it for 'fixed')", unit="s", ge=0
    )
    per_sample_s: float = option(
        1e-4,
        "time per local sample of one full-batch gradient (per-sample, shifted-exponential,"
        " lognormal)",
        unit="s/sample",
        ge=0,
    )
    straggler_mean_s: float = option(
        0.01,
        "shifted-exponential: mean of the exponential tail added to the shift at every request",
        unit="s",
        ge=0,
    )
    speed_sigma: float = option(
        0.5,
        "lognormal: sigma of each device's speed factor s_k ~ LogNormal(0, sigma), drawn once"
        " per device (median 1)",
        ge=0,
    )

    def cross_check(self, agents_count: int) -> list[ScenarioError]:
        """Return the cross-field errors of this section (an unknown model); [] when consistent.

        ``agents_count`` is accepted for a uniform interface; no rule here depends on it.
        """
        if self.model in COMPUTE_MODELS:
            return []
        allowed = ", ".join(repr(k) for k in sorted(COMPUTE_MODELS))
        return [
            ScenarioError(
                "network.compute.model", f"unknown compute model {self.model!r}; use {allowed}"
            )
        ]


class ComputeTimes(Protocol):
    """What the server needs from a compute model."""

    def times_ns(self, agents: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Return the compute time of one request by each listed agent, int64 ns, shape (m,)."""
        ...


def _as_agents(agents, K: int) -> np.ndarray:
    """Return ``agents`` as a 1-D int64 array, ValueError if an index is outside 0..K-1."""
    a = np.asarray(agents)
    if a.ndim != 1 or (a.size and not np.issubdtype(a.dtype, np.integer)):
        raise ValueError(f"agents must be a 1-D integer array, got shape {a.shape} {a.dtype}")
    a = a.astype(np.int64, copy=False)
    if a.size and (a.min() < 0 or a.max() >= K):
        raise ValueError(f"agent indices must lie in 0..{K - 1}, got {a.min()}..{a.max()}")
    return a


class ComputeModel:
    """The built-in compute-time models for K devices (see the module docstring).

    ``cfg``: the ``[network.compute]`` section; ``n_k``: local sample counts,
    int array (K,); ``rng``: used only by ``lognormal``, which draws the K
    speed factors here, once, as ``rng.lognormal(0, speed_sigma, K)`` (device
    0 first). The other models draw nothing when built.
    """

    def __init__(self, cfg: ComputeConfig, n_k, rng: np.random.Generator):
        n_k = np.asarray(n_k)
        if n_k.ndim != 1 or (n_k.size and not np.issubdtype(n_k.dtype, np.integer)):
            raise ValueError(f"n_k must be a 1-D integer array, got shape {n_k.shape} {n_k.dtype}")
        if n_k.size and n_k.min() < 0:
            raise ValueError(f"n_k must be >= 0, got min {n_k.min()}")
        if cfg.model not in BUILTIN_COMPUTE_MODELS:
            raise ValueError(
                f"ComputeModel implements {', '.join(BUILTIN_COMPUTE_MODELS)}; got {cfg.model!r}"
            )
        self.cfg = cfg
        self.K = int(n_k.size)
        self.model = cfg.model
        #: seconds: the deterministic part c (+ a n_k) per device, float64 (K,)
        self.base_s = np.full(self.K, float(cfg.seconds))
        if cfg.model != "fixed":
            self.base_s = self.base_s + float(cfg.per_sample_s) * n_k.astype(np.float64)
        #: speed factor s_k per device (K,); ones unless the model is lognormal
        self.speed = np.ones(self.K)
        if cfg.model == "lognormal":
            self.speed = rng.lognormal(0.0, float(cfg.speed_sigma), self.K)
        # every model but shifted-exponential is deterministic after construction
        self._ns = to_ns(self.base_s * self.speed)

    def times_ns(self, agents, rng: np.random.Generator) -> np.ndarray:
        """Return one compute time per entry of ``agents`` (int array (m,)), int64 ns (m,).

        Draw order: ``fixed``, ``per-sample`` and ``lognormal`` draw nothing
        (an agent asked twice gets the same time); ``shifted-exponential``
        draws ``rng.standard_exponential(m)``, one per entry in ``agents``
        order, scaled by ``straggler_mean_s``. The whole time (shift plus
        tail) is rounded to the nearest ns once.
        """
        a = _as_agents(agents, self.K)
        if self.model != "shifted-exponential":
            return self._ns[a]
        tail = rng.standard_exponential(a.size) * float(self.cfg.straggler_mean_s)
        return to_ns(self.base_s[a] + tail)

    def shift_ns(self, agents) -> np.ndarray:
        """Return the deterministic part of each listed agent's time, int64 ns (m,).

        ``seconds + per_sample_s n_k`` (times ``s_k`` for lognormal); for
        ``shifted-exponential`` this is the shift, a lower bound of every draw.
        """
        return self._ns[_as_agents(agents, self.K)]


ComputeFactory = Callable[[ComputeConfig, np.ndarray, np.random.Generator], ComputeTimes]
COMPUTE_MODELS: dict[str, ComputeFactory] = {}


def register_compute_model(name: str, factory: ComputeFactory, *, replace: bool = False) -> None:
    """Register ``factory(cfg, n_k, rng) -> ComputeTimes`` under ``name``; returns nothing.

    Scenarios then accept ``network.compute.model = name``; a name already
    taken raises ValueError unless ``replace`` is true.
    """
    register(COMPUTE_MODELS, "compute model", name, factory, replace)


for _name in BUILTIN_COMPUTE_MODELS:
    register_compute_model(_name, ComputeModel)


def build_compute_model(cfg: ComputeConfig, n_k, rng: np.random.Generator) -> ComputeTimes:
    """Return the compute model ``cfg.model`` names for devices with ``n_k`` samples.

    Raises :class:`ScenarioError` (key ``network.compute.model``) for an unknown name.
    """
    errs = cfg.cross_check(int(np.asarray(n_k).size))
    if errs:
        raise errs[0]
    return COMPUTE_MODELS[cfg.model](cfg, np.asarray(n_k), rng)
