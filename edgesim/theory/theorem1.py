"""Section IV, Theorem 1: how many rounds FFL runs and with which step sizes.

Phase I's length T1 and Phase II's T2 (and the interval T2 must lie in), the
paper's bound on the total Phase II work K T2 with a corrected one, and the
step sizes translated to the objective edgesim optimises. Units and notation:
:mod:`edgesim.theory`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from edgesim.arguments import integer, nonnegative, open_unit, positive
from edgesim.theory.common import curvatures, log_contraction, rounds_needed


def phase1_rounds(K: int, G: float, delta_tol: float, mu: float, L_g: float) -> int:
    """Theorem 1's Phase I length T1 (Theorem 1; App. "Proof of Theorem 1").

    Returns the smallest integer T1 >= 0 with
    T1 >= 2 ln(K G / Delta) / ln(1 / (1 - mu/L_g)), i.e. the smallest T1 with
    G sqrt((1 - mu/L_g)^T1) <= Delta / K, which (Lemma 4) guarantees
    ||w[T1] - w^o|| <= Delta / K for gradient descent with eta1 = 1/L_g.
    ``G`` = ||w[0] - w^o|| and ``delta_tol`` = Delta are distances in model
    units; T1 = 0 when G <= Delta / K. T1 grows as O(log K).
    """
    K = integer("K", K, 1)
    G = nonnegative("G", G)
    delta_tol = positive("delta_tol", delta_tol)
    mu, L_g = curvatures(mu, L_g)
    if G == 0.0:
        return 0
    return rounds_needed(2.0 * math.log(K * G / delta_tol), log_contraction(mu, L_g))


def _theorem1_c(L_f: float, delta_tol: float, mu: float, L_g: float, epsilon: float) -> float:
    """(L_f + Delta mu)^2 L_g / (mu^2 epsilon): Theorem 1's T2 rule is ln(c/K)/ln(...)."""
    L_f = nonnegative("L_f", L_f)
    delta_tol = nonnegative("delta_tol", delta_tol)
    epsilon = positive("epsilon", epsilon)
    return (L_f + delta_tol * mu) ** 2 * L_g / (mu**2 * epsilon)


def phase2_rounds(
    K: int, L_f: float, delta_tol: float, mu: float, L_g: float, epsilon: float
) -> int:
    """Theorem 1's Phase II length T2 per agent (Theorem 1).

    Returns ``max(0, ceil(ln((L_f + Delta mu)^2 L_g / (mu^2 K epsilon)) /
    ln(L_g / (L_g - mu))))``: the smallest integer t >= 0 with

        (1 - mu/L_g)^t (L_f + Delta mu)^2 L_g / (mu^2 K) <= epsilon,

    which is the proof's condition (L_g K / 2) (1 - mu/L_g)^t
    (L_f/(mu K) + Delta/K)^2 <= epsilon / 2 on the optimisation half of the
    payment error (App. "Proof of Theorem 1"). ``delta_tol`` = Delta is the
    Phase I distance tolerance (model units), ``epsilon`` the payment
    accuracy (loss units). When K >= (L_f + Delta mu)^2 L_g / (mu^2 epsilon)
    the logarithm is <= 0 and Phase II needs no iteration: T2 = 0. (The
    remark after Theorem 1 quotes K >= (L_f + Delta mu)^2 L_g / (2 mu^2
    epsilon): there the whole error budget epsilon goes to the T2 = 0 term,
    whereas the rule keeps epsilon / 2 for it.)
    """
    K = integer("K", K, 1)
    mu, L_g = curvatures(mu, L_g)
    c = _theorem1_c(L_f, delta_tol, mu, L_g, epsilon)
    if c == 0.0:
        return 0
    return rounds_needed(math.log(c / K), log_contraction(mu, L_g))


def phase2_rounds_upper(K: int, L_f: float, L_g: float, epsilon: float) -> float:
    """Upper end of Theorem 1's admissible T2 interval (eq. (Empty)).

    Returns ``L_g epsilon K / (2 L_f^2)`` (a real number of rounds): the
    largest T2 for which the paper's Riemann-sum term (K-1) L_g L_f^2 (T2+1)
    eta2^2 with eta2 = 1/(K L_g) stays within about epsilon / 2. Infinite
    when L_f = 0.
    """
    K = integer("K", K, 1)
    L_f = nonnegative("L_f", L_f)
    L_g = positive("L_g", L_g)
    epsilon = positive("epsilon", epsilon)
    if L_f == 0.0:
        return math.inf
    return L_g * epsilon * K / (2.0 * L_f**2)


def theorem1_feasible(
    K: int, L_f: float, delta_tol: float, mu: float, L_g: float, epsilon: float
) -> bool:
    """Whether Theorem 1 applies: its T2 interval contains the rule's T2 (eq. (Empty)).

    Returns True when ``phase2_rounds(K, ...) <= phase2_rounds_upper(K, ...)``,
    i.e. the interval [ln((L_f + Delta mu)^2 L_g / (mu^2 K epsilon)) /
    ln(L_g/(L_g - mu)), L_g epsilon K / (2 L_f^2)] contains a non-negative
    integer (the theorem needs an integer T2 in it; T2 = 0 when the lower end
    is negative). For fixed epsilon it holds for every large enough K.
    """
    T2 = phase2_rounds(K, L_f, delta_tol, mu, L_g, epsilon)
    return T2 <= phase2_rounds_upper(K, L_f, L_g, epsilon)


def theorem1_K_T2_bound(
    L_f: float, delta_tol: float, mu: float, L_g: float, epsilon: float
) -> float:
    """Theorem 1's printed bound on the total Phase II work K T2, as written.

    Returns ``(1 + (L_f + Delta mu)^2 L_g / (2 mu^2 e epsilon)) /
    ln(L_g / (L_g - mu))`` (rounds x agents), independent of K.

    Slip: this is NOT a valid bound for the T2 rule of :func:`phase2_rounds`.
    With c = (L_f + Delta mu)^2 L_g / (mu^2 epsilon) and l = ln(L_g/(L_g-mu)),
    K T2 ~ K ln(c/K) / l peaks at K = c/e with value c / (e l), twice the
    printed c / (2 e l): e.g. L_f=1, mu=0.1, L_g=5, epsilon=1e-2, Delta=1 and
    K = 22256 give T2 = 50 and K T2 = 1.11e6 > 5.51e5 (Theorem 1 is feasible
    there: 50 <= L_g epsilon K / (2 L_f^2) = 556). The printed value matches a rule
    with c / 2 in the logarithm. K T2 is still O(1) in K: see
    :func:`theorem1_K_T2_bound_corrected`.
    """
    mu, L_g = curvatures(mu, L_g)
    c = _theorem1_c(L_f, delta_tol, mu, L_g, epsilon)
    return (1.0 + c / (2.0 * math.e)) / log_contraction(mu, L_g)


def theorem1_K_T2_bound_corrected(
    L_f: float, delta_tol: float, mu: float, L_g: float, epsilon: float
) -> float:
    """A valid K-independent bound on K T2 for Theorem 1's T2 rule.

    Returns ``c / (e l) + c`` with c = (L_f + Delta mu)^2 L_g / (mu^2 epsilon)
    and l = ln(L_g / (L_g - mu)). Derivation: T2 = 0 when K >= c; otherwise
    K T2 <= K (ln(c/K)/l + 1) and max_K K ln(c/K) = c/e, while K < c. This
    backs the paper's O(1) claim (see :func:`theorem1_K_T2_bound`).
    """
    mu, L_g = curvatures(mu, L_g)
    c = _theorem1_c(L_f, delta_tol, mu, L_g, epsilon)
    return c / (math.e * log_contraction(mu, L_g)) + c


@dataclass(frozen=True)
class StepSizes:
    """Step sizes for Algorithm 1 in edgesim's convention (see :func:`theorem1_step_sizes`).

    ``eta1``: Phase I step on sum_k p_k grad F_k. ``eta2``: Phase II step on the
    p-weighted sum sum_{j!=k} p_j grad F_j. ``eta2_paper``: Theorem 1's printed
    1/(K L_g), which the paper's proofs apply to the unweighted sum
    sum_{j!=k} grad F_j. ``note``: a one-paragraph explanation for reports.
    """

    eta1: float
    eta2: float
    eta2_paper: float
    note: str


def theorem1_step_sizes(K: int, L_g: float, p_k: float | None = None) -> StepSizes:
    """Theorem 1's step sizes, translated to the objective edgesim optimises (slip 3, docs/paper.md).

    Returns :class:`StepSizes` with ``eta1 = 1/L_g`` (Theorem 1, Lemma 1) and
    ``eta2 = 1/((1 - p_k) L_g)`` (units 1/curvature); ``p_k`` defaults to
    1/K (the paper's equal weights), giving eta2 = K / ((K-1) L_g).

    Why not the printed eta2 = 1/(K L_g): the paper's proofs (App. of Prop. 4,
    Theorem 1) apply eta2 to the unweighted sum sum_{j!=k} grad F_j, whose
    smoothness is (K-1) L_g. With p_j = 1/K, 1/(K L_g) times the unweighted
    sum equals exactly (1/L_g) times the p-weighted sum sum_{j!=k} p_j grad
    F_j, so the paper's literal step, in edgesim's convention (eq.
    (payment-1), which uses the p-weighted sum), is 1/L_g. The objective
    actually optimised, sum_{j!=k} p_j F_j, is (1-p_k) L_g-smooth and
    (1-p_k) mu-strongly convex; its 1/L step, 1/((1-p_k) L_g) (K/(K-1) times
    the literal one for p_k = 1/K), gives the contraction 1 - mu/L_g per step
    that the proof of Theorem 1 uses (the literal step gives 1 - (1-p_k)
    mu/L_g, marginally slower). Caution: :func:`prop4_bound` evaluated at
    this eta2 is about K L_f^2 (T2+1) / L_g, not the O(1/K) the proof of
    Theorem 1 obtains by inserting 1/(K L_g) into Proposition 4 (whose proof
    measures the step on the p-weighted sum); the left-Riemann payment
    therefore needs smaller steps or the trapezoid rule (slip 4, docs/paper.md).
    """
    K = integer("K", K, 2)
    L_g = positive("L_g", L_g)
    p_k = 1.0 / K if p_k is None else open_unit("p_k", p_k)
    eta1 = 1.0 / L_g
    eta2 = 1.0 / ((1.0 - p_k) * L_g)
    eta2_paper = 1.0 / (K * L_g)
    note = (
        f"eta2 = 1/((1-p_k) L_g) = {eta2:.6g} is applied to the p-weighted sum "
        f"sum_{{j!=k}} p_j grad F_j (smoothness (1-p_k) L_g, p_k = {p_k:.6g}); the paper's "
        f"eta2 = 1/(K L_g) = {eta2_paper:.6g} is applied to the unweighted sum "
        f"sum_{{j!=k}} grad F_j, which for p_j = 1/K equals a step 1/L_g = {1.0 / L_g:.6g} "
        "on the p-weighted sum."
    )
    return StepSizes(eta1=eta1, eta2=eta2, eta2_paper=eta2_paper, note=note)
