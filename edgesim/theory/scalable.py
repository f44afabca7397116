"""Section V: scalable VCG (Theorem 3's clusters) and DP-FFL's rounds and bound (Prop. 9).

Theorem 3 sets how many clusters keep the clustered VCG payment within
epsilon; Proposition 9 sets DP-FFL's number of rounds T1 = T2 from the
constants A, B, C of its proof and bounds its payment error. Units and
notation: :mod:`edgesim.theory`.
"""

from __future__ import annotations

import math

from edgesim.arguments import integer, nonnegative, open_unit, positive, real


def theorem3_clusters(K: int, L_g: float, L_f: float, mu: float, epsilon: float) -> int:
    """Number of clusters L for the scalable VCG payment (Theorem 3, eq. (M)).

    Returns ``max(1, min(K, ceil(sqrt(L_g (K-1) / (2 epsilon)) L_f / mu)))``,
    the smallest integer meeting the theorem's condition, which keeps
    |P_k^S - P_k^VCG| <= (K-1) L_f^2 L_g / (2 mu^2 L^2) <= epsilon (when
    L < K; L = K is exact VCG). Grows as O(sqrt(K / epsilon)).
    """
    K = integer("K", K, 1)
    L_g = positive("L_g", L_g)
    L_f = nonnegative("L_f", L_f)
    mu = positive("mu", mu)
    epsilon = positive("epsilon", epsilon)
    needed = math.ceil(math.sqrt(L_g * (K - 1) / (2.0 * epsilon)) * L_f / mu)
    return max(1, min(K, int(needed)))


def _prop9_C(C: float) -> float:
    C = real("C", C)
    if not 0.0 < C < 1.0:
        raise ValueError(
            f"eta2 gives C = 1 - (K-1) mu eta2 = {C!r}, outside (0, 1): "
            "eta2 must satisfy 0 < eta2 < 1/((K-1) mu) (Prop. 9 asks eta2 <= 1/((K-1) L_g))"
        )
    return C


def prop9_constants(
    eta2: float,
    d: int,
    L_f: float,
    K: int,
    n_min: float,
    alpha: float,
    beta: float,
    mu: float,
) -> tuple[float, float, float]:
    """Constants A, B, C of Proposition 9 (eq. (Eq-ABC)), as printed.

    Returns ``(A, B, C)`` with

        A = 8 eta2 d L_f^2 (K+1) log(1/beta) / (mu K^2 (K-1) n_min^2 alpha^2),
        B = (K-1) L_f^2 / (2 mu),
        C = 1 - (K-1) mu eta2,

    so that the expected payment error after T1 = T2 = T rounds is at most
    A T + B C^T + epsilon (:func:`prop9_objective`). B is a loss, C a
    per-round contraction factor in (0, 1), A a loss per round. ``n_min`` is
    n_(1), the smallest local dataset; (alpha, beta) the DP target; ``eta2``
    the Phase II step as in the proof, i.e. applied to the unweighted sum
    J_{-k} = sum_{j!=k} F_j (for equal weights, edgesim's step on the
    p-weighted sum is K eta2). Raises ValueError naming eta2 unless C is in
    (0, 1).

    Slip: the proof's own inequalities give A without the factor eta2 (the
    eta2 of each noisy step cancels against the contraction (K-1) mu eta2 when
    the geometric series is summed); the descent lemma with J's smoothness
    (K-1) L_g gives (K-1) L_g eta2 times the printed A. See
    :func:`prop9_A_rederived`. The printed A is kept here because the paper's
    tradeoff discussion and Fig. 2 use it.
    """
    eta2 = positive("eta2", eta2)
    d = integer("d", d, 1)
    L_f = positive("L_f", L_f)
    K = integer("K", K, 2)
    n_min = positive("n_min", n_min)
    alpha = positive("alpha", alpha)
    beta = open_unit("beta", beta)
    mu = positive("mu", mu)
    A = 8.0 * eta2 * d * L_f**2 * (K + 1) * math.log(1.0 / beta)
    A /= mu * K**2 * (K - 1) * n_min**2 * alpha**2
    B = (K - 1) * L_f**2 / (2.0 * mu)
    C = _prop9_C(1.0 - (K - 1) * mu * eta2)
    return A, B, C


def prop9_A_rederived(
    eta2: float,
    d: int,
    L_f: float,
    K: int,
    n_min: float,
    alpha: float,
    beta: float,
    mu: float,
    L_g: float,
) -> float:
    """Proposition 9's noise coefficient A re-derived from its proof (not the printed one).

    Returns ``(K-1) L_g * A_printed`` = 8 L_g eta2 d L_f^2 (K+1) log(1/beta) /
    (mu K^2 n_min^2 alpha^2) (loss per round). Derivation: a noisy step
    w+ = w - eta2 (grad J + z), E||z||^2 = d sigma^2, on J = sum_{j!=k} F_j
    ((K-1) L_g-smooth, (K-1) mu-strongly convex) satisfies
    E[J(w+) - J*] <= (1 - (K-1) mu eta2)(J(w) - J*) + (K-1) L_g eta2^2 d sigma^2 / 2
    for eta2 <= 1/((K-1) L_g); summing the geometric series leaves a floor
    L_g eta2 d sigma^2 / (2 mu), and Algorithm 2's sigma^2 with T1 = T2 = T
    makes it A T. At the largest allowed step eta2 = 1/((K-1) L_g) this equals
    A_printed / eta2, the value the proof's own last inequality gives.
    """
    L_g = positive("L_g", L_g)
    K_int = integer("K", K, 2)
    eta2 = positive("eta2", eta2)
    if eta2 * (K_int - 1) * L_g > 1.0 + 1e-12:
        raise ValueError(
            f"eta2 must be <= 1/((K-1) L_g) = {1.0 / ((K_int - 1) * L_g)!r}, got {eta2!r}"
        )
    A, _, _ = prop9_constants(eta2, d, L_f, K_int, n_min, alpha, beta, mu)
    return (K_int - 1) * L_g * A


def _prop9_checked(A: float, B: float, C: float) -> tuple[float, float, float]:
    return positive("A", A), positive("B", B), _prop9_C(C)


def prop9_rounds(A: float, B: float, C: float) -> int:
    """DP-FFL's iteration rule T1 = T2 (Proposition 9, eq. (Convergence11)).

    Returns ``max(1, ceil(log(B log(1/C) / A) / log(1/C)))``: the ceiling of
    the real minimiser T* of A T + B C^T (rounds). T decreases as A grows
    (smaller alpha, the paper's tradeoff 1) and grows without bound as
    A -> 0 (alpha -> inf, tradeoff 3). Raises ValueError naming eta2 unless
    C is in (0, 1).

    (The paper's sentence after Fig. 2, "T1 and T2 decrease in alpha", has the
    direction reversed: A is proportional to 1/alpha^2, so T increases in alpha.)
    """
    A, B, C = _prop9_checked(A, B, C)
    log_inv_c = -math.log(C)
    t_star = math.log(B * log_inv_c / A) / log_inv_c
    return max(1, math.ceil(t_star))


def prop9_objective(A: float, B: float, C: float, T: int) -> float:
    """The bound A T + B C^T from the proof of Proposition 9 (eq. (ABC)).

    Returns the expected-payment error bound (loss units, excluding Theorem 3's
    epsilon) after T1 = T2 = T rounds.
    """
    A, B, C = _prop9_checked(A, B, C)
    T = integer("T", T, 0)
    return A * T + B * C**T


def prop9_bound(A: float, B: float, C: float, epsilon: float) -> float:
    """Proposition 9's payment-error bound at the rule's T (proof's eq. (ABC)).

    Returns ``A T + B C^T + epsilon`` with T = :func:`prop9_rounds` (loss
    units): the bound on |E[P_k*] - P_k^VCG| that the proof establishes for
    the number of rounds the rule actually picks; epsilon is Theorem 3's
    clustering error.

    It differs from the printed closed form (:func:`prop9_bound_closed_form`,
    eq. (ZXC)), which is A T + B C^T at the real minimiser T*: the two agree
    up to A (closed <= this <= closed + A) when T* >= 0. For T* < 0 (large A:
    tiny alpha) the closed form falls below B and even below 0 (it tends to
    -inf as alpha -> 0), contradicting the paper's tradeoff 1 ("the payment
    accuracy loss diverges to infinity"); this function does grow without
    bound as alpha -> 0.
    """
    epsilon = nonnegative("epsilon", epsilon)
    T = prop9_rounds(A, B, C)
    return prop9_objective(A, B, C, T) + epsilon


def prop9_bound_closed_form(A: float, B: float, C: float, epsilon: float) -> float:
    """Proposition 9's printed bound (eq. (ZXC)), as written.

    Returns ``A (1 + log(B log(1/C) / A)) / log(1/C) + epsilon`` (loss units),
    i.e. min over real T of A T + B C^T, plus epsilon. A valid bound only
    when B log(1/C) / A >= 1; prefer :func:`prop9_bound`.
    """
    A, B, C = _prop9_checked(A, B, C)
    epsilon = nonnegative("epsilon", epsilon)
    log_inv_c = -math.log(C)
    return A * (1.0 + math.log(B * log_inv_c / A)) / log_inv_c + epsilon
