"""Section IV: the bounds of the FFL mechanism (Algorithm 1).

Lemma 1 (Phase I's optimality gap), Proposition 3.5 (the risk of Phase I's
output), Proposition 4 (Phase II's payment error), Lemma 2 (how far one agent
moves the optimum) and Proposition 5 (FFL's faithfulness). The rounds and
step sizes Theorem 1 picks are :mod:`edgesim.theory.theorem1`. Units and
notation: :mod:`edgesim.theory`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from edgesim.arguments import integer, nonnegative, open_unit, positive
from edgesim.theory.common import checked_weights, curvatures, estimation_factor


def lemma1_gap(T1: int, mu: float, L_g: float, initial_gap: float) -> float:
    """Phase I optimality gap after T1 rounds (Lemma 1).

    Returns ``(1 - mu/L_g)^T1 * initial_gap`` where ``initial_gap`` =
    F(w[0]) - F(w^o) >= 0 (loss units): the bound on F(w[T1]) - F(w^o) for
    gradient descent with eta1 = 1/L_g on the mu-strongly convex, L_g-smooth
    global empirical risk F.
    """
    T1 = integer("T1", T1, 0)
    mu, L_g = curvatures(mu, L_g)
    gap = nonnegative("initial_gap", initial_gap)
    return (1.0 - mu / L_g) ** T1 * gap


def phi_bound(
    p: Sequence[float],
    n: Sequence[float],
    L_ell: float,
    d: int,
    delta: float,
    mu: float,
    L_g: float,
    T1: int,
    initial_gap: float,
) -> float:
    """Risk bound of the Phase I output w* = w[T1] (Proposition 3.5, eq. (Phi)).

    Returns Phi(delta), in loss units:

        sum_k p_k^2/n_k * L_ell^2 d log(2d/delta) / (2 mu)
            + (2 L_g / mu) (1 - mu/L_g)^T1 (F(w[0]) - F(w^o)),

    so that E(w*) - min_w E(w) <= Phi(delta) with probability 1 - delta when
    eta1 <= 1/L_g. ``initial_gap`` = F(w[0]) - F(w^o). Note the first term is
    twice Proposition 1's (the proof splits ||grad E(w*)||^2 into two parts).
    """
    p_arr, n_arr = checked_weights(p, n)
    factor = estimation_factor(L_ell, d, delta, mu)
    mu, L_g = curvatures(mu, L_g)
    optimisation = 2.0 * L_g / mu * lemma1_gap(T1, mu, L_g, initial_gap)
    return float(np.sum(p_arr**2 / n_arr)) * factor / 2.0 + optimisation


def prop4_bound(p_k: float, L_g: float, L_f: float, T2: int, eta2: float) -> float:
    """Bound on Phase II's payment error (Proposition 4).

    Returns ``(1 - p_k)/p_k * L_g * L_f^2 * (T2 + 1) * eta2^2`` (loss units):
    the paper's bound on |P_k* - P_k^VCG| coming from the left Riemann sum
    that accumulates the payment (eq. (payment-2)) along T2 (+1) steps.

    ``eta2`` is the step applied to the p-weighted sum sum_{j!=k} p_j grad F_j
    (edgesim's convention, eq. (payment-1)). That is the reading under which
    the proof is right: it bounds each step by ||Delta w|| = eta2 ||sum_{j!=k}
    p_j grad F_j|| <= eta2 L_f. (With the proof's own unweighted sum the step
    norm would be up to (K-1) eta2 L_f.) The bound is loose by a factor >= 2
    (the proof drops the 1/2 of int_0^1 x dx and a factor (1-p_k)^2 in the
    step norm), and the statement's T2 + 1 is the proof's T2 plus one spare.
    What it does not cover: the error of stopping before w_{-k}^o is reached.
    """
    p_k = open_unit("p_k", p_k)
    L_g = positive("L_g", L_g)
    L_f = nonnegative("L_f", L_f)
    T2 = integer("T2", T2, 0)
    eta2 = positive("eta2", eta2)
    return (1.0 - p_k) / p_k * L_g * L_f**2 * (T2 + 1) * eta2**2


def lemma2_distance(L_f: float, mu: float, K: int) -> float:
    """Distance bound ||w_{-k}^o - w^o|| <= L_f / (mu K) (Lemma 2, "L5"), equal weights.

    Returns ``L_f / (mu K)`` in model units: how far removing one of K
    equally weighted agents can move the optimum.
    """
    L_f = nonnegative("L_f", L_f)
    mu = positive("mu", mu)
    K = integer("K", K, 1)
    return L_f / (mu * K)


def prop5_epsilon_tilde(epsilon: float, K: int, phi: float) -> float:
    """Faithfulness level of the FFL mechanism (Proposition 5, eq. (faith)).

    Returns ``2 epsilon + K Phi`` (loss units): FFL is (epsilon~, delta~)-faithful,
    where ``phi`` = Phi(delta~) from :func:`phi_bound` and ``epsilon`` is
    Theorem 1's payment accuracy.
    """
    epsilon = nonnegative("epsilon", epsilon)
    K = integer("K", K, 1)
    phi = nonnegative("phi", phi)
    return 2.0 * epsilon + K * phi
