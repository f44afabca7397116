"""The canary of a privacy audit: one sample made as visible as possible, and what reveals it.

An audit (:mod:`edgesim.audit`) runs a mechanism on a dataset D and on a
neighbour D' that differs from D in one sample: the first training sample of
the smallest agent (the agent whose sample weighs most in the sensitivity
2 C p_k / n_k) is replaced by a canary. The canary is built from D alone, so
every run of an audit builds the same one:

- its features light up the feature with the least variance in the training
  data (a corner pixel on MNIST), the direction in which the other samples
  pull the model least;
- its label is the rarest training label (classification); in regression its
  features have a typical norm and its target is extreme, so that the model
  cannot fit it quickly and it keeps pulling for the whole run;
- a *gradient* canary (``audit.canary = "gradient"``, the default): its scale
  (of the features in classification, of the target in regression) is chosen
  so that its per-sample data gradient at the initial model w[0] has norm
  ``ratio`` times the clipping norm: far above the bound, so that clipping
  (when on) bites, and an unclipped run leaks;
- a *smoothness* canary (``"smoothness"``): its features have ``ratio`` times
  the median feature norm, so that it raises its agent's curvature and with it
  any L_g estimated from the data (and so the step sizes 1/L_g): it tests that
  the server acts on no constant read off the data (docs/privacy.md).

The statistic an audit thresholds is the projection of the released model
w* on the direction in which the canary's gradient pushes it,
``<w*, -g_c / |g_c|>`` with g_c the canary's data gradient at w[0]: for
Gaussian noise a linear statistic along the mean shift is the most powerful
test (Neyman-Pearson). Pure numpy: no time, no network.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from edgesim.learning.data import FederatedDataset
from edgesim.learning.design import add_intercept
from edgesim.learning.models import Model


@dataclass(frozen=True, eq=False)
class Canary:
    """A canary sample and the direction of its influence.

    ``agent``: the smallest agent (its id); ``row``: the training row replaced in
    D'; ``x`` (d,) raw features and ``y`` its label or target; ``gradient_norm``:
    the norm of its per-sample data gradient at w[0] (gradient units);
    ``direction``: the unit vector -g_c / |g_c| in parameter space (n_params,).
    """

    agent: int
    row: int
    x: np.ndarray
    y: float | int
    gradient_norm: float
    direction: np.ndarray

    def statistic(self, w: np.ndarray) -> float:
        """Return <w, direction>: how far the model ``w`` moved the canary's way (parameter units)."""
        return float(w @ self.direction)

    def insert(self, data: FederatedDataset) -> FederatedDataset:
        """Return the neighbour D': ``data`` with training row ``row`` replaced by the canary."""
        X, y = data.X.copy(), data.y.copy()
        X[self.row] = self.x
        y[self.row] = self.y
        return dataclasses.replace(data, X=X, y=y)


def _gradient(model: Model, w0: np.ndarray, x: np.ndarray, y, intercept: bool) -> np.ndarray:
    """Return the per-sample data gradient of one sample at ``w0`` (n_params,)."""
    xa = add_intercept(x[None, :]) if intercept else x[None, :]
    return model.sample_data_grads(w0, xa, np.asarray([y]))[0]


def make_canary(
    data: FederatedDataset, model: Model, target_norm: float, kind: str = "gradient"
) -> Canary:
    """Return the :class:`Canary` of ``data`` of the given ``kind``.

    ``kind = "gradient"``: its gradient norm at w[0] is ``target_norm`` (gradient
    units; the audit passes ratio x clipping norm). ``kind = "smoothness"``: its
    feature norm is ``target_norm`` times the median training feature norm, so
    that it raises its agent's curvature, hence a data-derived L_g, by about
    ``c target_norm^2 median^2 / n_k``; its target is the median |y| (regression)
    or its label the rarest one. Raises ValueError when no gradient canary scale
    reaches ``target_norm`` (a degenerate model).
    """
    n_k = data.n_k
    agent = int(np.argmin(n_k))
    row = int(data.offsets[agent])
    feature = int(np.argmin(data.X.var(axis=0)))
    label = 0
    if data.n_classes:
        label = int(np.argmin(np.bincount(data.y, minlength=data.n_classes)))
    w0 = model.init(data.d)
    typical = float(np.median(np.linalg.norm(data.X, axis=1))) or 1.0

    def sample(scale: float):
        x = np.zeros(data.d)
        if data.n_classes:  # the gradient's size comes from the features: scale them
            x[feature] = scale
            return x, label
        x[feature] = typical  # a typical norm and an extreme target, hard to fit
        return x, scale

    if kind == "smoothness":
        x = np.zeros(data.d)
        x[feature] = target_norm * typical
        y = label if data.n_classes else float(np.median(np.abs(data.y))) or 1.0
    elif kind == "gradient":

        def excess(log_scale: float) -> float:
            x, y = sample(float(np.exp(log_scale)))
            return float(np.linalg.norm(_gradient(model, w0, x, y, model.intercept))) - target_norm

        lo, hi = -20.0, 20.0
        if excess(lo) >= 0 or excess(hi) <= 0:
            raise ValueError(f"audit: no canary scale gives a gradient norm of {target_norm:g}")
        x, y = sample(float(np.exp(brentq(excess, lo, hi, xtol=1e-12))))
    else:
        raise ValueError(f"audit.canary: must be 'gradient' or 'smoothness', got {kind!r}")
    g = _gradient(model, w0, x, y, model.intercept)
    norm = float(np.linalg.norm(g))
    return Canary(agent, row, x, y, norm, -g / norm)
