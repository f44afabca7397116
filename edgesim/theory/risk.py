"""Section III: the risk bounds of federated and local learning (probability 1 - delta).

Propositions 1-3 and Corollary 1 of the paper: how far a model's expected risk
is from the best one, with federated learning, with local learning, and when
an agent amplifies its gradients. Units and notation: :mod:`edgesim.theory`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from edgesim.arguments import integer, nonnegative, positive
from edgesim.theory.common import checked_weights, estimation_factor


def prop1_bound(
    p: Sequence[float],
    n: Sequence[float],
    L_ell: float,
    d: int,
    delta: float,
    mu: float,
) -> float:
    """Risk bound of the federated optimum w^o (Proposition 1, eq. (EqP1)).

    Returns ``sum_k p_k^2 / n_k * L_ell^2 d log(2d/delta) / (4 mu)``: with
    probability at least 1 - delta, E(w^o) - min_w E(w) is at most this value
    (loss units). ``p`` are the agents' weights (>= 0, summing to 1), ``n``
    their sample counts, ``L_ell`` the largest per-sample gradient norm at w^o,
    ``d`` the model dimension, ``delta`` in (0, 1), ``mu`` the strong convexity.
    With p_k = n_k / n the bound is L_ell^2 d log(2d/delta) / (4 mu n).
    """
    p_arr, n_arr = checked_weights(p, n)
    factor = estimation_factor(L_ell, d, delta, mu)
    return float(np.sum(p_arr**2 / n_arr)) * factor / 4.0


def corollary1_bound(n_k: float, L_ell: float, d: int, delta: float, mu: float) -> float:
    """Risk bound of agent k's local-learning model w_k^L (Corollary 1, eq. (localbound)).

    Returns ``L_ell^2 d log(2d/delta) / (4 mu n_k)`` (loss units): with
    probability 1 - delta, E_k(w_k^L) - min_w E_k(w) is at most this. It is
    Proposition 1 with p_k = 1 and every other weight 0.
    """
    n_k = positive("n_k", n_k)
    return estimation_factor(L_ell, d, delta, mu) / (4.0 * n_k)


def prop2_bound(
    p: Sequence[float],
    n: Sequence[float],
    L_ell: float,
    d: int,
    delta: float,
    mu: float,
    dist_k: float,
) -> float:
    """Agent k's risk bound under federated learning (Proposition 2, eq. (FLbound)).

    Returns ``prop1_bound(p, n, L_ell, d, delta, mu) + 2 * dist_k`` (loss
    units): with probability 1 - delta, E_k(w^o) - min_w E_k(w) is at most
    this. ``dist_k`` = ||P_k - sum_j p_j P_j||, the L1 distance (integral of
    the absolute difference, in [0, 2]) between agent k's data distribution
    and the weighted mixture; the caller supplies it (the data distributions
    are not known to this module). The paper's bound takes the loss as
    bounded by 1 on the support when it bounds |int l (dP_k - dP)| by the L1
    distance; for losses on another scale multiply ``dist_k`` accordingly.
    """
    dist_k = nonnegative("dist_k", dist_k)
    return prop1_bound(p, n, L_ell, d, delta, mu) + 2.0 * dist_k


def amplified_weights(p: Sequence[float], k: int, gamma: float) -> np.ndarray:
    """Effective weights when agent k amplifies its gradients by gamma (App. of Prop. 3).

    Amplifying agent k's reports by gamma makes FedAvg solve eq. (MFL),
    i.e. minimise sum_j p~_j F_j with p~_k = gamma p_k / (1 + (gamma-1) p_k) and
    p~_j = p_j / (1 + (gamma-1) p_k) for j != k. Returns p~ (a new array,
    summing to 1). Use it to compute Proposition 3's distance
    ||P_k - sum_j p~_j P_j||.
    """
    p_arr = np.asarray(p, dtype=float)
    checked_weights(p_arr, np.ones_like(p_arr))
    k = integer("k", k, 0)
    if k >= p_arr.size:
        raise ValueError(f"k must index an agent in 0..{p_arr.size - 1}, got {k}")
    gamma = positive("gamma", gamma)
    scale = 1.0 + (gamma - 1.0) * p_arr[k]
    out = p_arr / scale
    out[k] = gamma * p_arr[k] / scale
    return out


def prop3_bound(
    p: Sequence[float],
    n: Sequence[float],
    k: int,
    gamma: float,
    L_ell: float,
    d: int,
    delta: float,
    mu: float,
    dist_k_gamma: float,
) -> float:
    """Agent k's risk bound when it amplifies its gradients by gamma (Proposition 3).

    Returns, in loss units (holds with probability 1 - delta),

        1 / (1 + (gamma-1) p_k)^2 * (sum_{j != k} p_j^2/n_j + gamma^2 p_k^2/n_k)
            * L_ell^2 d log(2d/delta) / (4 mu)  +  2 * dist_k_gamma,

    a bound on E_k(w_{k,gamma}) - min_w E_k(w), where w_{k,gamma} solves eq.
    (MFL). ``k`` is agent k's index (from 0); ``gamma`` > 0 the amplification
    (gamma = 1 is Proposition 2; gamma -> inf tends to Corollary 1's first
    term); ``dist_k_gamma`` = ||P_k - (sum_{j!=k} p_j P_j + gamma p_k P_k) /
    (1 + (gamma-1) p_k)||, the L1 distance to the manipulated mixture,
    supplied by the caller (see :func:`amplified_weights`). The first term is
    Proposition 1 evaluated at the weights of :func:`amplified_weights`.
    """
    p_arr, n_arr = checked_weights(p, n)
    p_tilde = amplified_weights(p_arr, k, gamma)
    dist = nonnegative("dist_k_gamma", dist_k_gamma)
    factor = estimation_factor(L_ell, d, delta, mu)
    return float(np.sum(p_tilde**2 / n_arr)) * factor / 4.0 + 2.0 * dist
