"""The paper's bounds and parameter rules, as pure functions.

Every function here evaluates one formula of Zhang, Wei and Berry, "Faithful
Edge Federated Learning: Scalability and Privacy": floats in, floats (or ints)
out, no randomness, no state. One module on purpose: the bounds build on one
another (Theorem 1 on Lemmas 1-4, Proposition 9 on Theorem 3) and share their
constants, so each sits next to what it uses. Each docstring names the result it
implements, says what the number means and in which units, and records where
the printed statement and its proof disagree (see also docs/paper.md, "known
slips").

Units. Losses (F, E, payments P, the tolerance ``epsilon``) are in the units of
the per-sample loss l; model distances (``G``, ``delta_tol``) in the units of w;
``mu`` and ``L_g`` are curvatures (loss / w^2), ``L_f`` and ``L_ell`` gradient
norms (loss / w). Iteration counts are plain integers; step sizes have units
w^2 / loss (1 / curvature).

Notation: K agents with weights p_k (sum 1; the paper's Sec. IV-VI use
p_k = 1/K), n_k samples, d the model dimension, mu the strong convexity and
L_g the smoothness of the per-sample loss, L_ell the largest per-sample
gradient norm at w^o, L_f the gradient bound of Definition 2 (Def. "Gradient
Bound"), delta in (0, 1) a failure probability. Agents are numbered from 0.

Two different deltas appear in the paper and are kept apart here: ``delta``
is the failure probability of the risk bounds (Props. 1-3, 3.5, 5);
``delta_tol`` is the distance tolerance Delta of Theorem 1 and its proof
(App. "Proof of Theorem 1": T1 makes ||w* - w^o|| <= Delta / K). Neither is
the non-i.i.d. parameter Delta of Sec. VII.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from edgesim import arguments

__all__ = [
    "StepSizes",
    "amplified_weights",
    "corollary1_bound",
    "lemma1_gap",
    "lemma2_distance",
    "phase1_rounds",
    "phase2_rounds",
    "phase2_rounds_upper",
    "phi_bound",
    "prop1_bound",
    "prop2_bound",
    "prop3_bound",
    "prop4_bound",
    "prop5_epsilon_tilde",
    "prop9_A_rederived",
    "prop9_bound",
    "prop9_bound_closed_form",
    "prop9_constants",
    "prop9_objective",
    "prop9_rounds",
    "theorem1_K_T2_bound",
    "theorem1_K_T2_bound_corrected",
    "theorem1_feasible",
    "theorem1_step_sizes",
    "theorem3_clusters",
]

# ---------------------------------------------------------------------------
# validation: edgesim.arguments (a ValueError whose message starts with the name)


_real, _positive, _nonnegative = arguments.real, arguments.positive, arguments.nonnegative
_open_unit, _count = arguments.open_unit, arguments.integer


def _curvatures(mu: float, L_g: float) -> tuple[float, float]:
    mu = _positive("mu", mu)
    L_g = _positive("L_g", L_g)
    if mu > L_g:
        raise ValueError(
            f"mu must be <= L_g (strong convexity <= smoothness), got mu={mu}, L_g={L_g}"
        )
    return mu, L_g


def _log_contraction(mu: float, L_g: float) -> float:
    """ln(1 / (1 - mu/L_g)) = ln(L_g / (L_g - mu)) > 0; +inf when mu == L_g."""
    if mu == L_g:
        return math.inf
    return -math.log1p(-mu / L_g)


def _rounds(log_numerator: float, log_rate: float) -> int:
    """Smallest integer t >= 0 with t * log_rate >= log_numerator (log_rate > 0)."""
    if log_numerator <= 0.0:
        return 0
    if math.isinf(log_rate):
        return 1
    return math.ceil(log_numerator / log_rate)


def _weights(p: Sequence[float], n: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    p_arr = np.asarray(p, dtype=float)
    n_arr = np.asarray(n, dtype=float)
    if p_arr.ndim != 1 or p_arr.size == 0:
        raise ValueError(f"p must be a non-empty 1-D sequence of weights, got shape {p_arr.shape}")
    if n_arr.shape != p_arr.shape:
        raise ValueError(
            f"n must have the same length as p ({p_arr.size}), got shape {n_arr.shape}"
        )
    if not np.all(np.isfinite(p_arr)) or np.any(p_arr < 0.0):
        raise ValueError("p must hold finite weights >= 0")
    if not math.isclose(float(p_arr.sum()), 1.0, rel_tol=0.0, abs_tol=1e-9):
        raise ValueError(f"p must sum to 1, got sum {float(p_arr.sum())!r}")
    if not np.all(np.isfinite(n_arr)) or np.any(n_arr <= 0.0):
        raise ValueError("n must hold sample counts > 0")
    return p_arr, n_arr


def _estimation_factor(L_ell: float, d: int, delta: float, mu: float) -> float:
    """L_ell^2 d log(2d/delta) / mu: the common factor of Props. 1-3 and 3.5."""
    L_ell = _nonnegative("L_ell", L_ell)
    d = _count("d", d, 1)
    delta = _open_unit("delta", delta)
    mu = _positive("mu", mu)
    return L_ell**2 * d * math.log(2.0 * d / delta) / mu


# ---------------------------------------------------------------------------
# Section III: risk bounds (probability 1 - delta)


def prop1_bound(
    p: Sequence[float], n: Sequence[float], L_ell: float, d: int, delta: float, mu: float
) -> float:
    """Risk bound of the federated optimum w^o (Proposition 1, eq. (EqP1)).

    Returns ``sum_k p_k^2 / n_k * L_ell^2 d log(2d/delta) / (4 mu)``: with
    probability at least 1 - delta, E(w^o) - min_w E(w) is at most this value
    (loss units). ``p`` are the agents' weights (>= 0, summing to 1), ``n``
    their sample counts, ``L_ell`` the largest per-sample gradient norm at w^o,
    ``d`` the model dimension, ``delta`` in (0, 1), ``mu`` the strong convexity.
    With p_k = n_k / n the bound is L_ell^2 d log(2d/delta) / (4 mu n).
    """
    p_arr, n_arr = _weights(p, n)
    factor = _estimation_factor(L_ell, d, delta, mu)
    return float(np.sum(p_arr**2 / n_arr)) * factor / 4.0


def corollary1_bound(n_k: float, L_ell: float, d: int, delta: float, mu: float) -> float:
    """Risk bound of agent k's local-learning model w_k^L (Corollary 1, eq. (localbound)).

    Returns ``L_ell^2 d log(2d/delta) / (4 mu n_k)`` (loss units): with
    probability 1 - delta, E_k(w_k^L) - min_w E_k(w) is at most this. It is
    Proposition 1 with p_k = 1 and every other weight 0.
    """
    n_k = _positive("n_k", n_k)
    return _estimation_factor(L_ell, d, delta, mu) / (4.0 * n_k)


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
    dist_k = _nonnegative("dist_k", dist_k)
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
    _weights(p_arr, np.ones_like(p_arr))
    k = _count("k", k, 0)
    if k >= p_arr.size:
        raise ValueError(f"k must index an agent in 0..{p_arr.size - 1}, got {k}")
    gamma = _positive("gamma", gamma)
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
    p_arr, n_arr = _weights(p, n)
    p_tilde = amplified_weights(p_arr, k, gamma)
    dist = _nonnegative("dist_k_gamma", dist_k_gamma)
    factor = _estimation_factor(L_ell, d, delta, mu)
    return float(np.sum(p_tilde**2 / n_arr)) * factor / 4.0 + 2.0 * dist


# ---------------------------------------------------------------------------
# Section IV: FFL


def lemma1_gap(T1: int, mu: float, L_g: float, initial_gap: float) -> float:
    """Phase I optimality gap after T1 rounds (Lemma 1).

    Returns ``(1 - mu/L_g)^T1 * initial_gap`` where ``initial_gap`` =
    F(w[0]) - F(w^o) >= 0 (loss units): the bound on F(w[T1]) - F(w^o) for
    gradient descent with eta1 = 1/L_g on the mu-strongly convex, L_g-smooth
    global empirical risk F.
    """
    T1 = _count("T1", T1, 0)
    mu, L_g = _curvatures(mu, L_g)
    gap = _nonnegative("initial_gap", initial_gap)
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
    p_arr, n_arr = _weights(p, n)
    factor = _estimation_factor(L_ell, d, delta, mu)
    mu, L_g = _curvatures(mu, L_g)
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
    p_k = _open_unit("p_k", p_k)
    L_g = _positive("L_g", L_g)
    L_f = _nonnegative("L_f", L_f)
    T2 = _count("T2", T2, 0)
    eta2 = _positive("eta2", eta2)
    return (1.0 - p_k) / p_k * L_g * L_f**2 * (T2 + 1) * eta2**2


def lemma2_distance(L_f: float, mu: float, K: int) -> float:
    """Distance bound ||w_{-k}^o - w^o|| <= L_f / (mu K) (Lemma 2, "L5"), equal weights.

    Returns ``L_f / (mu K)`` in model units: how far removing one of K
    equally weighted agents can move the optimum.
    """
    L_f = _nonnegative("L_f", L_f)
    mu = _positive("mu", mu)
    K = _count("K", K, 1)
    return L_f / (mu * K)


def phase1_rounds(K: int, G: float, delta_tol: float, mu: float, L_g: float) -> int:
    """Theorem 1's Phase I length T1 (Theorem 1; App. "Proof of Theorem 1").

    Returns the smallest integer T1 >= 0 with
    T1 >= 2 ln(K G / Delta) / ln(1 / (1 - mu/L_g)), i.e. the smallest T1 with
    G sqrt((1 - mu/L_g)^T1) <= Delta / K, which (Lemma 4) guarantees
    ||w[T1] - w^o|| <= Delta / K for gradient descent with eta1 = 1/L_g.
    ``G`` = ||w[0] - w^o|| and ``delta_tol`` = Delta are distances in model
    units; T1 = 0 when G <= Delta / K. T1 grows as O(log K).
    """
    K = _count("K", K, 1)
    G = _nonnegative("G", G)
    delta_tol = _positive("delta_tol", delta_tol)
    mu, L_g = _curvatures(mu, L_g)
    if G == 0.0:
        return 0
    return _rounds(2.0 * math.log(K * G / delta_tol), _log_contraction(mu, L_g))


def _theorem1_c(L_f: float, delta_tol: float, mu: float, L_g: float, epsilon: float) -> float:
    """(L_f + Delta mu)^2 L_g / (mu^2 epsilon): Theorem 1's T2 rule is ln(c/K)/ln(...)."""
    L_f = _nonnegative("L_f", L_f)
    delta_tol = _nonnegative("delta_tol", delta_tol)
    epsilon = _positive("epsilon", epsilon)
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
    K = _count("K", K, 1)
    mu, L_g = _curvatures(mu, L_g)
    c = _theorem1_c(L_f, delta_tol, mu, L_g, epsilon)
    if c == 0.0:
        return 0
    return _rounds(math.log(c / K), _log_contraction(mu, L_g))


def phase2_rounds_upper(K: int, L_f: float, L_g: float, epsilon: float) -> float:
    """Upper end of Theorem 1's admissible T2 interval (eq. (Empty)).

    Returns ``L_g epsilon K / (2 L_f^2)`` (a real number of rounds): the
    largest T2 for which the paper's Riemann-sum term (K-1) L_g L_f^2 (T2+1)
    eta2^2 with eta2 = 1/(K L_g) stays within about epsilon / 2. Infinite
    when L_f = 0.
    """
    K = _count("K", K, 1)
    L_f = _nonnegative("L_f", L_f)
    L_g = _positive("L_g", L_g)
    epsilon = _positive("epsilon", epsilon)
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
    mu, L_g = _curvatures(mu, L_g)
    c = _theorem1_c(L_f, delta_tol, mu, L_g, epsilon)
    return (1.0 + c / (2.0 * math.e)) / _log_contraction(mu, L_g)


def theorem1_K_T2_bound_corrected(
    L_f: float, delta_tol: float, mu: float, L_g: float, epsilon: float
) -> float:
    """A valid K-independent bound on K T2 for Theorem 1's T2 rule.

    Returns ``c / (e l) + c`` with c = (L_f + Delta mu)^2 L_g / (mu^2 epsilon)
    and l = ln(L_g / (L_g - mu)). Derivation: T2 = 0 when K >= c; otherwise
    K T2 <= K (ln(c/K)/l + 1) and max_K K ln(c/K) = c/e, while K < c. This
    backs the paper's O(1) claim (see :func:`theorem1_K_T2_bound`).
    """
    mu, L_g = _curvatures(mu, L_g)
    c = _theorem1_c(L_f, delta_tol, mu, L_g, epsilon)
    return c / (math.e * _log_contraction(mu, L_g)) + c


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
    K = _count("K", K, 2)
    L_g = _positive("L_g", L_g)
    p_k = 1.0 / K if p_k is None else _open_unit("p_k", p_k)
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


def prop5_epsilon_tilde(epsilon: float, K: int, phi: float) -> float:
    """Faithfulness level of the FFL mechanism (Proposition 5, eq. (faith)).

    Returns ``2 epsilon + K Phi`` (loss units): FFL is (epsilon~, delta~)-faithful,
    where ``phi`` = Phi(delta~) from :func:`phi_bound` and ``epsilon`` is
    Theorem 1's payment accuracy.
    """
    epsilon = _nonnegative("epsilon", epsilon)
    K = _count("K", K, 1)
    phi = _nonnegative("phi", phi)
    return 2.0 * epsilon + K * phi


# ---------------------------------------------------------------------------
# Section V: scalable VCG and DP-FFL


def theorem3_clusters(K: int, L_g: float, L_f: float, mu: float, epsilon: float) -> int:
    """Number of clusters L for the scalable VCG payment (Theorem 3, eq. (M)).

    Returns ``max(1, min(K, ceil(sqrt(L_g (K-1) / (2 epsilon)) L_f / mu)))``,
    the smallest integer meeting the theorem's condition, which keeps
    |P_k^S - P_k^VCG| <= (K-1) L_f^2 L_g / (2 mu^2 L^2) <= epsilon (when
    L < K; L = K is exact VCG). Grows as O(sqrt(K / epsilon)).
    """
    K = _count("K", K, 1)
    L_g = _positive("L_g", L_g)
    L_f = _nonnegative("L_f", L_f)
    mu = _positive("mu", mu)
    epsilon = _positive("epsilon", epsilon)
    needed = math.ceil(math.sqrt(L_g * (K - 1) / (2.0 * epsilon)) * L_f / mu)
    return max(1, min(K, int(needed)))


def _prop9_C(C: float) -> float:
    C = _real("C", C)
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
    eta2 = _positive("eta2", eta2)
    d = _count("d", d, 1)
    L_f = _positive("L_f", L_f)
    K = _count("K", K, 2)
    n_min = _positive("n_min", n_min)
    alpha = _positive("alpha", alpha)
    beta = _open_unit("beta", beta)
    mu = _positive("mu", mu)
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
    L_g = _positive("L_g", L_g)
    K_int = _count("K", K, 2)
    eta2 = _positive("eta2", eta2)
    if eta2 * (K_int - 1) * L_g > 1.0 + 1e-12:
        raise ValueError(
            f"eta2 must be <= 1/((K-1) L_g) = {1.0 / ((K_int - 1) * L_g)!r}, got {eta2!r}"
        )
    A, _, _ = prop9_constants(eta2, d, L_f, K_int, n_min, alpha, beta, mu)
    return (K_int - 1) * L_g * A


def _prop9_checked(A: float, B: float, C: float) -> tuple[float, float, float]:
    return _positive("A", A), _positive("B", B), _prop9_C(C)


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
    T = _count("T", T, 0)
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
    epsilon = _nonnegative("epsilon", epsilon)
    T = prop9_rounds(A, B, C)
    return prop9_objective(A, B, C, T) + epsilon


def prop9_bound_closed_form(A: float, B: float, C: float, epsilon: float) -> float:
    """Proposition 9's printed bound (eq. (ZXC)), as written.

    Returns ``A (1 + log(B log(1/C) / A)) / log(1/C) + epsilon`` (loss units),
    i.e. min over real T of A T + B C^T, plus epsilon. A valid bound only
    when B log(1/C) / A >= 1; prefer :func:`prop9_bound`.
    """
    A, B, C = _prop9_checked(A, B, C)
    epsilon = _nonnegative("epsilon", epsilon)
    log_inv_c = -math.log(C)
    return A * (1.0 + math.log(B * log_inv_c / A)) / log_inv_c + epsilon
