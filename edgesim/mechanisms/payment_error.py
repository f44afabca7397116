"""FFL's payment error estimate: |P_k - P_k^VCG| from what the server has, in three parts.

With Phi_k = sum_{j != k} p_j F_j, w^o = argmin F and w^o_{-k} = argmin Phi_k, exact
VCG pays P_k^VCG = (Phi_k(w^o) - Phi_k(w^o_{-k})) / p_k, and FFL's Phase II path
integral from w* to its last iterate w[T] is (Phi_k(w*) - Phi_k(w[T])) / p_k up to
the payment rule's discretisation error d_k. So

    P_k - P_k^VCG = (Phi_k(w*) - Phi_k(w^o)) / p_k - (Phi_k(w[T]) - Phi_k(w^o_{-k})) / p_k + d_k

and the three terms are bounded from what the server has (payment units):

* Phase I's gap. Every F_j is mu-strongly convex (mu = l2), so F is and
  D = |w* - w^o| <= |grad F(w*)| / mu. Phi_k convex gives
  Phi_k(w*) - Phi_k(w^o) <= grad Phi_k(w*) . (w* - w^o) <= |grad Phi_k(w*)| D, and
  with Phi_k = F - p_k F_k, F(w*) >= F(w^o) and F_k convex,
  Phi_k(w*) - Phi_k(w^o) >= -p_k grad F_k(w*) . (w* - w^o) >= -p_k |grad F_k(w*)| D.
  Hence ``payment_phase1_error`` = max(|grad Phi_k(w*)|, p_k |grad F_k(w*)|)
  |grad F(w*)| / (mu p_k). The division by p_k is why a Phase I that stops short
  (F(w*) - F(w^o) <= |grad F(w*)|^2 / (2 mu)) costs every payment about K times
  its gap at equal weights. Every gradient in it is at w* itself: FFL's documented
  extra round at w* (:mod:`edgesim.mechanisms.ffl`) collects each agent's, so the server has grad F_k(w*), their sum
  and each problem's first gradient without a message more and without a bound
  carried over from w[T1 - 1]. It is loose by about the curvature of F along
  w* - w^o over mu (D <= |grad F(w*)| / mu is exact when that curvature is mu):
  after a short Phase I the gradient still has stiff components.
* Phase II's truncation. Phi_k is (1 - p_k) mu-strongly convex, so
  0 <= Phi_k(w[T]) - Phi_k(w^o_{-k}) <= |grad Phi_k(w[T])|^2 / (2 (1 - p_k) mu):
  ``payment_truncation_error`` is that over p_k, from the last gradient of the
  path (the stopping rule's own quantity, so <= epsilon when the rule ended the
  problem; after the paper rule's unreported last step, the gradient before it,
  which bounds it). A problem not run ends at w*: its first gradient.
* The payment rule's discretisation error, ``payment_discretisation_error``
  (:class:`PathError`).

``payment_error_estimate`` is their sum, per agent, each with its max. The first
two are bounds when every report of those rounds arrived; with lost replies
the gradients are the reweighted estimates the server steps with, so they are
estimates. All three are against VCG of the reports: a misreporting agent's
distortion is not an error the server can see.
"""

from __future__ import annotations

import numpy as np

from edgesim.arrays import norm2

ERROR_MARGIN = 2.0  # the discretisation estimate is this many times its leading-order term


class PathError:
    """Discretisation error of one Phase II path, from the reports it already has.

    Notation for problem k: Phi = sum_{j != k} p_j F_j (the others' objective, as
    reported), g_t its gradient at w[t], delta_t = w[t] - w[t+1] = eta2 g_t,
    y_t = g_{t+1} - g_t. Along step t let h(s) = delta_t . grad Phi(w[t] - s delta_t),
    s in [0, 1]; the step's exact share of p_k P_k^VCG is Phi(w[t]) - Phi(w[t+1])
    = int_0^1 h(s) ds. The paper's rule (Alg. 1, line 12) takes h(0), the trapezoid
    rule (h(0) + h(1)) / 2; both h(0) = delta_t . g_t and h(1) = delta_t . g_{t+1}
    are reports the server has, so both sums cost no message.

    * h'(s) = -delta_t^T H(w[t] - s delta_t) delta_t <= 0 for a convex Phi, so the
      exact step lies in [h(1), h(0)]. With c_t = |delta_t . y_t| = h(0) - h(1):
      0 <= paper_t - exact_t <= c_t and |trapezoid_t - exact_t| <= c_t / 2.
    * Taylor about s = 1/2: exact_t - trapezoid_t = -h''(xi) / 12, with
      h''(s) = D^3 Phi[delta_t, delta_t, delta_t]: zero for quadratic losses.
    * The third derivative is read off the secant Hessians Hb_t (the mean Hessian
      on step t; Hb_t delta_t = -y_t exactly) of two consecutive steps:
      Q_t = delta_t . y_{t+1} - delta_{t+1} . y_t = -delta_t^T (Hb_{t+1} - Hb_t) delta_{t+1}
      (Hessians are symmetric), and Hb_{t+1} - Hb_t ~ D^3 Phi[m_{t+1} - m_t] with
      |m_{t+1} - m_t| = |delta_t + delta_{t+1}| / 2 between the steps' midpoints.
      Relative to the curvature between the same two directions,
      delta_{t+1}^T Hb_t delta_t = -delta_{t+1} . y_t, the Hessian changes at the rate
      nu_t = |Q_t| / (|m_{t+1} - m_t| |delta_{t+1} . y_t|) per unit length, so
      |h''| ~ nu |delta_t| delta_t^T H delta_t ~ nu |delta_t| c_t. When the steps are
      parallel, nu_t |delta_t| c_t / 12 is exactly |h''| / 12 to leading order, and
      Q_t = 0 for quadratics. The first steps are not parallel (gradient descent
      removes the stiff directions first) and the higher derivatives add their
      share: on the logistic problems we measured, a problem's actual error was up
      to 1.5 times the sum of these leading-order terms (and far below it where
      the steps' errors cancel). The estimate of step t is therefore twice it (ERROR_MARGIN),
      within the convexity bound: e_t = min(2 nu_t^ |delta_t| / 12, 1/2) c_t, with
      nu_t^ = max(nu_{t-1}, nu_t) (the neighbouring pairs).

    Estimates (payment units, i.e. divided by p_k), summing absolute values:
    trapezoid sum_t e_t / p_k; paper |sum_t delta_t . y_t| / (2 p_k) + sum_t e_t / p_k
    (the difference of the two rules, which is the paper rule's O(eta2) error to
    leading order, plus the trapezoid's own). A path of one step has no nu: its
    e_0 is the convexity bound c_0 / 2. The paper rule's last step without a report
    (``phase2_check = false``) bounds c_t by eta2^2 (1 - p_k) L_g |g_t|^2.
    They cover discretisation only; the truncation and Phase I's gap are the
    module docstring's other two terms.
    """

    def __init__(self, eta2: float, smoothness: float):
        self.eta = eta2
        self.smoothness = smoothness  # (1 - p_k) L_g, bounds delta^T H delta / |delta|^2
        self.gap = 0.0  # sum_t delta_t . y_t (= 2 p_k (trapezoid - paper), <= 0 if convex)
        self.third = 0.0  # sum_t e_t
        self.pending = None  # (g_t, y_t, |delta_t|, c_t, nu_{t-1}) until nu_t is known
        self.curvature = 0.0  # max_t delta_t^T Hb_t delta_t / |delta_t|^2 (secant, per unit^2)

    def step(self, g: np.ndarray, g_next: np.ndarray) -> None:
        """Add step t, whose ends' gradients ``g`` and ``g_next`` were reported; returns nothing."""
        eta = self.eta
        y = g_next - g
        dy = eta * float(g @ y)
        self.gap += dy
        nu = None
        if self.pending is not None:
            g0, y0, n0, c0, nu0 = self.pending
            q = eta * abs(float(g0 @ y) - float(g @ y0))
            denom = eta * norm2(g0 + g) / 2.0 * eta * abs(float(g @ y0))
            nu = q / denom if denom > 0 else 0.0
            self._close(n0, c0, nu if nu0 is None else max(nu0, nu))
        n = eta * norm2(g)
        if n > 0:
            self.curvature = max(self.curvature, -dy / (n * n))
        self.pending = (g, y, n, abs(dy), nu)

    def unreported(self, g: np.ndarray) -> None:
        """Add a last step of the paper's rule that had no report at its end; returns nothing."""
        n = self.eta * norm2(g)
        c = self.smoothness * n * n  # delta^T Hb delta <= (1 - p_k) L_g |delta|^2
        self.gap -= c
        nu = None if self.pending is None else self.pending[4]
        self.finish()
        self._close(n, c, nu)

    def _close(self, n: float, c: float, nu: float | None) -> None:
        self.third += c / 2.0 if nu is None else min(ERROR_MARGIN * nu * n / 12.0, 0.5) * c

    def finish(self) -> None:
        """Close the last reported step (its nu is the previous step's); returns nothing."""
        if self.pending is not None:
            _, _, n, c, nu = self.pending
            self._close(n, c, nu)
            self.pending = None

    def estimate(self, pk: float, rule: str) -> float:
        """Return the estimated |P_k - P_k^exact path integral| of ``rule``, in payment units."""
        self.finish()
        trapezoid = self.third / pk
        return trapezoid if rule == "trapezoid" else abs(self.gap) / (2.0 * pk) + trapezoid


def phase1_error(
    grad_norm: float, others_norm: np.ndarray, own_norm: np.ndarray, p: np.ndarray, mu: float
) -> np.ndarray:
    """Return, per agent, the bound on |Phi_k(w*) - Phi_k(w^o)| / p_k (payment units).

    With Phi_k = sum_{j != k} p_j F_j = F - p_k F_k, F mu-strongly convex and every
    F_j convex (module docstring):
    -p_k |grad F_k(w*)| D <= Phi_k(w*) - Phi_k(w^o) <= |grad Phi_k(w*)| D, where
    D = |w* - w^o| <= |grad F(w*)| / mu. Arguments are the norms at w* (gradient
    units): ``grad_norm`` |grad F|, ``others_norm`` (K,) |grad Phi_k|, ``own_norm``
    (K,) |grad F_k|. 0 for an agent alone (p_k = 1: nobody else's loss to move).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.maximum(others_norm, p * own_norm) * (grad_norm / mu) / p
    return np.where(p < 1.0, bound, 0.0)


def truncation_error(grad_sq, p, mu: float):
    """Return (Phi_k(w[T]) - min Phi_k) / p_k's bound |grad Phi_k(w[T])|^2 / (2 (1 - p_k) mu p_k).

    ``grad_sq``: |sum_{j != k} p_j grad F_j|^2 at the end of problem k's path (a
    scalar with a scalar ``p`` = p_k, or arrays over agents). Payment units; 0 for
    an agent alone (p_k = 1). Phi_k is (1 - p_k) mu-strongly convex.
    """
    weight = 1.0 - np.asarray(p, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.asarray(grad_sq, dtype=float) / (2.0 * weight * mu * p)
    out = np.where(weight > 0, bound, 0.0)
    return float(out) if out.ndim == 0 else out


def finite_max(values: np.ndarray) -> float:
    """Return the largest finite entry of ``values`` (0.0 when none is)."""
    return float(np.max(values, initial=0.0, where=np.isfinite(values)))
