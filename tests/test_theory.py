"""Tests for edgesim.theory: each number is recomputed independently (by hand,
from the defining inequality in the paper's proofs, or by running the
algorithm the bound is about on small quadratics)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from edgesim import theory as th

# Paper-like constants used across tests (Theorem 1 remark, the paper's Sec. VII).
LF, MU, LG, EPS, DELTA = 1.0, 0.1, 5.0, 1e-2, 1.0


# ---------------------------------------------------------------------------
# helpers: random strongly convex quadratics F_j(w) = 0.5 (w - c_j)^T H_j (w - c_j)


def _spd(rng, d, lo, hi):
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    eig = rng.uniform(lo, hi, size=d)
    eig[0], eig[-1] = lo, hi
    return q @ np.diag(eig) @ q.T


def _quadratics(rng, K, d, mu, L_g):
    H = np.stack([_spd(rng, d, mu, L_g) for _ in range(K)])
    c = rng.standard_normal((K, d)) * 3.0
    return H, c


def _minimiser(H, c, weights):
    Hs = np.einsum("k,kij->ij", weights, H)
    b = np.einsum("k,kij,kj->i", weights, H, c)
    return np.linalg.solve(Hs, b)


def _F(H, c, j, w):
    r = w - c[j]
    return 0.5 * r @ H[j] @ r


def _grad(H, c, j, w):
    return H[j] @ (w - c[j])


# ---------------------------------------------------------------------------
# Lemma 1


def test_lemma1_gap_value():
    assert th.lemma1_gap(3, 1.0, 4.0, 2.0) == pytest.approx(0.75**3 * 2.0)
    assert th.lemma1_gap(0, 1.0, 4.0, 2.0) == 2.0


def test_lemma1_gap_bounds_gradient_descent():
    rng = np.random.default_rng(0)
    d = 6
    H = _spd(rng, d, 0.3, 7.0)
    b = rng.standard_normal(d)
    mu, L = np.linalg.eigvalsh(H)[[0, -1]]
    w_opt = np.linalg.solve(H, b)

    def f(w):
        return 0.5 * w @ H @ w - b @ w

    w = rng.standard_normal(d) * 5
    gap0 = f(w) - f(w_opt)
    for t in range(1, 60):
        w = w - (H @ w - b) / L
        gap = f(w) - f(w_opt)
        assert gap <= th.lemma1_gap(t, mu, L, gap0) * (1 + 1e-9) + 1e-14
    # the rate is not vacuous: the bound after 60 steps is < 1% of the start
    assert th.lemma1_gap(60, mu, L, gap0) < 0.1 * gap0


# ---------------------------------------------------------------------------
# Theorem 1: T1


@pytest.mark.parametrize("K", [1, 2, 10, 1000, 10**6])
@pytest.mark.parametrize("G", [0.3, 5.0, 200.0])
@pytest.mark.parametrize("mu,L_g", [(0.1, 5.0), (1.0, 4.0), (0.5, 0.5 + 1e-3)])
def test_phase1_rounds_is_smallest_meeting_distance(K, G, mu, L_g):
    T1 = th.phase1_rounds(K, G, DELTA, mu, L_g)
    r = 1 - mu / L_g

    def ok(t):
        return G * math.sqrt(r**t) <= DELTA / K

    assert T1 >= 0
    assert ok(T1)
    if T1 > 0:
        assert not ok(T1 - 1)


def test_phase1_rounds_hand_value_and_zero():
    # 2 ln(10*5/0.5) / ln(4/3) = 32.01... -> 33
    assert th.phase1_rounds(10, 5.0, 0.5, 1.0, 4.0) == 33
    assert th.phase1_rounds(2, 0.2, 0.5, 1.0, 4.0) == 0  # K G <= Delta
    assert th.phase1_rounds(3, 0.0, 0.5, 1.0, 4.0) == 0
    assert th.phase1_rounds(3, 2.0, 0.5, 1.0, 1.0) == 1  # mu = L_g: one step is exact


def test_phase1_rounds_reaches_tolerance_in_gradient_descent():
    rng = np.random.default_rng(1)
    K, d, mu, L_g = 20, 4, 0.2, 3.0
    H, c = _quadratics(rng, K, d, mu, L_g)
    p = np.full(K, 1 / K)
    w_opt = _minimiser(H, c, p)
    w = w_opt + rng.standard_normal(d) * 4
    G = np.linalg.norm(w - w_opt)
    T1 = th.phase1_rounds(K, G, DELTA, mu, L_g)
    for _ in range(T1):
        w = w - (1 / L_g) * sum(p[j] * _grad(H, c, j, w) for j in range(K))
    assert np.linalg.norm(w - w_opt) <= DELTA / K


# ---------------------------------------------------------------------------
# Theorem 1: T2


def _t2_brute(K, L_f, D, mu, L_g, eps):
    """Smallest t >= 0 with (L_g K/2) r^t (L_f/(mu K) + D/K)^2 <= eps/2 (App. proof of T1)."""
    r = 1 - mu / L_g
    dist2 = (L_f / (mu * K) + D / K) ** 2
    t = 0
    while L_g * K / 2 * r**t * dist2 > eps / 2 * (1 + 1e-12):
        t += 1
    return t


@pytest.mark.parametrize("K", [1, 2, 7, 50, 1000, 30000, 10**5])
@pytest.mark.parametrize(
    "L_f,D,mu,L_g,eps",
    [(LF, DELTA, MU, LG, EPS), (2.0, 0.1, 1.0, 3.0, 1e-3), (0.5, 0.0, 0.3, 0.9, 0.1)],
)
def test_phase2_rounds_matches_defining_inequality(K, L_f, D, mu, L_g, eps):
    assert th.phase2_rounds(K, L_f, D, mu, L_g, eps) == _t2_brute(K, L_f, D, mu, L_g, eps)


def test_phase2_rounds_zero_for_large_K():
    # (L_f + D mu)^2 L_g / (mu^2 K eps) = 1.21 * 5 / (0.01 * 1e5 * 0.01) = 0.605 < 1
    assert (LF + DELTA * MU) ** 2 * LG / (MU**2 * 1e5 * EPS) == pytest.approx(0.605)
    assert th.phase2_rounds(10**5, LF, DELTA, MU, LG, EPS) == 0
    # and positive for moderate K: ceil(ln(6050) / ln(5/4.9)) = ceil(431.03)
    assert th.phase2_rounds(10, LF, DELTA, MU, LG, EPS) == math.ceil(
        math.log(6050.0) / math.log(5 / 4.9)
    )


def test_phase2_rounds_nonincreasing_in_K():
    Ts = [th.phase2_rounds(K, LF, DELTA, MU, LG, EPS) for K in range(1, 3000, 7)]
    assert all(a >= b for a, b in itertools.pairwise(Ts))


def test_phase2_upper_and_feasibility():
    assert th.phase2_rounds_upper(10, LF, LG, EPS) == pytest.approx(5 * 0.01 * 10 / 2)
    assert th.phase2_rounds_upper(10, 0.0, LG, EPS) == math.inf
    # K = 10: T2 = 431 > 0.25 -> the interval holds no integer
    assert not th.theorem1_feasible(10, LF, DELTA, MU, LG, EPS)
    # K = 1e5: T2 = 0 <= 250
    assert th.theorem1_feasible(10**5, LF, DELTA, MU, LG, EPS)
    # K = 22256 (about c/e): T2 = ceil(ln(60500/22256) / ln(5/4.9)) = ceil(49.49) = 50 <= 556.4
    assert th.phase2_rounds(22256, LF, DELTA, MU, LG, EPS) == 50
    assert th.theorem1_feasible(22256, LF, DELTA, MU, LG, EPS)
    # feasibility agrees with the interval definition across K
    for K in [1, 30, 300, 3000, 30000]:
        lower = math.log((LF + DELTA * MU) ** 2 * LG / (MU**2 * K * EPS)) / math.log(LG / (LG - MU))
        upper = LG * EPS * K / (2 * LF**2)
        expected = math.ceil(max(lower, 0.0)) <= upper
        assert th.theorem1_feasible(K, LF, DELTA, MU, LG, EPS) == expected


def test_theorem1_K_T2_bound_value():
    c = (LF + DELTA * MU) ** 2 * LG / (MU**2 * EPS)
    ell = math.log(LG / (LG - MU))
    assert th.theorem1_K_T2_bound(LF, DELTA, MU, LG, EPS) == pytest.approx(
        (1 + c / (2 * math.e)) / ell
    )
    assert th.theorem1_K_T2_bound_corrected(LF, DELTA, MU, LG, EPS) == pytest.approx(
        c / (math.e * ell) + c
    )


def test_theorem1_K_T2_is_O1_and_paper_bound_slip():
    paper = th.theorem1_K_T2_bound(LF, DELTA, MU, LG, EPS)
    corrected = th.theorem1_K_T2_bound_corrected(LF, DELTA, MU, LG, EPS)
    c = (LF + DELTA * MU) ** 2 * LG / (MU**2 * EPS)
    work = {K: K * th.phase2_rounds(K, LF, DELTA, MU, LG, EPS) for K in range(1, int(c) + 3)}
    # O(1): the corrected bound holds for every K (and K T2 = 0 beyond c)
    assert max(work.values()) <= corrected
    assert all(v == 0 for K, v in work.items() if K > c)
    # the printed bound holds for small K and for K >= c ...
    assert all(work[K] <= paper for K in range(1, 1001))
    assert all(work[K] <= paper for K in work if K >= c)
    # ... but not near K = c/e, where K T2 is about twice the printed bound
    assert work[22256] == 22256 * 50 > paper
    assert max(work.values()) > 1.9 * paper


# ---------------------------------------------------------------------------
# Step sizes (slip 3, docs/paper.md)


def test_step_sizes_values():
    s = th.theorem1_step_sizes(10, 4.0)
    assert s.eta1 == pytest.approx(0.25)
    assert s.eta2 == pytest.approx(10 / (9 * 4.0))
    assert s.eta2_paper == pytest.approx(1 / 40)
    assert "p-weighted" in s.note
    s = th.theorem1_step_sizes(10, 4.0, p_k=0.5)
    assert s.eta2 == pytest.approx(0.5)


def test_paper_eta2_on_unweighted_sum_equals_one_over_Lg_on_weighted_sum():
    rng = np.random.default_rng(2)
    K, d, k = 6, 3, 2
    H, c = _quadratics(rng, K, d, 0.5, 4.0)
    p = np.full(K, 1 / K)
    s = th.theorem1_step_sizes(K, 4.0)
    w_u = w_p = rng.standard_normal(d)
    for _ in range(25):
        w_u = w_u - s.eta2_paper * sum(_grad(H, c, j, w_u) for j in range(K) if j != k)
        w_p = w_p - (1 / 4.0) * sum(p[j] * _grad(H, c, j, w_p) for j in range(K) if j != k)
    np.testing.assert_allclose(w_u, w_p, rtol=1e-12, atol=1e-12)


def test_eta2_gives_theorem1_contraction():
    rng = np.random.default_rng(3)
    K, d, k, mu, L_g = 5, 4, 0, 0.4, 3.0
    H, c = _quadratics(rng, K, d, mu, L_g)
    p = np.full(K, 1 / K)
    wk = p.copy()
    wk[k] = 0.0
    target = _minimiser(H, c, wk)
    eta2 = th.theorem1_step_sizes(K, L_g).eta2
    w = rng.standard_normal(d) * 3
    for _ in range(40):
        new = w - eta2 * sum(p[j] * _grad(H, c, j, w) for j in range(K) if j != k)
        ratio = np.linalg.norm(new - target) / np.linalg.norm(w - target)
        assert ratio <= (1 - mu / L_g) + 1e-9
        w = new
    # with Hessians all equal to mu I the literal step 1/L_g contracts only by
    # 1 - (1 - p_k) mu / L_g, slower than Theorem 1's 1 - mu / L_g
    Hs = np.stack([mu * np.eye(d)] * K)
    target = _minimiser(Hs, c, wk)
    w = target + 1.0
    lit = w - (1 / L_g) * sum(p[j] * _grad(Hs, c, j, w) for j in range(K) if j != k)
    ratio = np.linalg.norm(lit - target) / np.linalg.norm(w - target)
    assert ratio == pytest.approx(1 - (1 - 1 / K) * mu / L_g)
    assert ratio > 1 - mu / L_g


# ---------------------------------------------------------------------------
# Proposition 4 and Lemma 2


def test_prop4_value():
    # (1 - 0.1)/0.1 * 2 * 3^2 * (4 + 1) * 0.05^2
    assert th.prop4_bound(0.1, 2.0, 3.0, 4, 0.05) == pytest.approx(9 * 2 * 9 * 5 * 0.0025)


@pytest.mark.parametrize("eta_scale", [1.0, 0.1])
def test_prop4_bounds_left_riemann_payment_error(eta_scale):
    rng = np.random.default_rng(4)
    K, d, mu, L_g = 8, 3, 0.3, 2.0
    H, c = _quadratics(rng, K, d, mu, L_g)
    p = rng.uniform(0.5, 1.5, K)
    p /= p.sum()
    w0 = _minimiser(H, c, p)
    for k in range(K):
        eta2 = eta_scale * th.theorem1_step_sizes(K, L_g, p_k=p[k]).eta2
        others = [j for j in range(K) if j != k]

        def J(w, others=others):
            return sum(p[j] * _F(H, c, j, w) for j in others)

        w, P, T2 = w0.copy(), 0.0, 30
        L_f = 0.0
        for _ in range(T2):
            grads = [_grad(H, c, j, w) for j in others]
            L_f = max(L_f, max(np.linalg.norm(g) for g in grads))
            g = sum(p[j] * gj for j, gj in zip(others, grads, strict=True))
            new = w - eta2 * g
            P += (w - new) @ (g / p[k])  # slip 1 in docs/paper.md sign
            w = new
        L_f = max(L_f, max(np.linalg.norm(_grad(H, c, j, w)) for j in others))
        riemann_error = abs(P - (J(w0) - J(w)) / p[k])
        assert riemann_error > 0
        assert riemann_error <= th.prop4_bound(p[k], L_g, L_f, T2, eta2)


def test_lemma2_distance_on_quadratics():
    assert th.lemma2_distance(2.0, 0.5, 8) == pytest.approx(0.5)
    rng = np.random.default_rng(5)
    for K in [2, 5, 40]:
        mu = 0.2
        H, c = _quadratics(rng, K, 3, mu, 5.0)
        p = np.full(K, 1 / K)
        w_opt = _minimiser(H, c, p)
        for k in range(K):
            wk = p.copy()
            wk[k] = 0.0
            w_minus = _minimiser(H, c, wk)
            # w_{-k}^o is in W*, so L_f >= ||grad F_k(w_{-k}^o)||
            L_f = np.linalg.norm(_grad(H, c, k, w_minus))
            assert np.linalg.norm(w_minus - w_opt) <= th.lemma2_distance(L_f, mu, K) * (1 + 1e-9)


# ---------------------------------------------------------------------------
# Theorem 3


def test_theorem3_clusters():
    # sqrt(5 * 4 / 0.02) * 1 / 0.1 = 316.2 > K = 5
    assert th.theorem3_clusters(5, LG, LF, MU, EPS) == 5
    assert th.theorem3_clusters(1, LG, LF, MU, EPS) == 1
    K = 10**6
    L = th.theorem3_clusters(K, LG, LF, MU, EPS)
    assert L == math.ceil(math.sqrt(LG * (K - 1) / (2 * EPS)) * LF / MU) == 158114
    # minimal: L meets the proof's error bound and L - 1 does not
    err = (K - 1) * LF**2 * LG / (2 * MU**2)
    assert err / L**2 <= EPS < err / (L - 1) ** 2
    # sqrt growth
    for K in [10**6, 10**8]:
        ratio = th.theorem3_clusters(4 * K, LG, LF, MU, EPS) / th.theorem3_clusters(
            K, LG, LF, MU, EPS
        )
        assert ratio == pytest.approx(2.0, abs=1e-3)


# ---------------------------------------------------------------------------
# Proposition 9


P9 = {"d": 10, "L_f": 1.0, "K": 10, "n_min": 100, "beta": 1e-5, "mu": 0.1}


def _p9(alpha, eta2=None):
    if eta2 is None:
        eta2 = 1 / ((P9["K"] - 1) * LG)
    return th.prop9_constants(eta2=eta2, alpha=alpha, **P9)


def test_prop9_constants_values():
    eta2 = 1e-3
    A, B, C = _p9(0.5, eta2)
    A_hand = 8 * 1e-3 * 10 * 1 * 11 * math.log(1e5) / (0.1 * 100 * 9 * 100**2 * 0.25)
    assert A == pytest.approx(A_hand)
    assert B == pytest.approx(9 / 0.2)
    assert C == pytest.approx(1 - 9 * 0.1 * 1e-3)
    assert th.prop9_A_rederived(eta2=eta2, alpha=0.5, L_g=LG, **P9) == pytest.approx(9 * LG * A)
    # at the largest allowed step it is the printed A without its eta2 factor
    eta_max = 1 / (9 * LG)
    A_max = _p9(0.5, eta_max)[0]
    assert th.prop9_A_rederived(eta2=eta_max, alpha=0.5, L_g=LG, **P9) == pytest.approx(
        A_max / eta_max
    )


def test_prop9_rounds_is_ceiling_of_real_minimiser():
    for alpha in [0.05, 0.5, 5.0]:
        A, B, C = _p9(alpha)

        def objective(t, A=A, B=B, C=C):
            return A * t + B * C**t

        res = minimize_scalar(
            objective, bounds=(-50, 1e6), method="bounded", options={"xatol": 1e-9}
        )
        assert th.prop9_rounds(A, B, C) == max(1, math.ceil(res.x - 1e-6))
        assert th.prop9_bound_closed_form(A, B, C, 0.0) == pytest.approx(res.fun, rel=1e-6)


def test_prop9_tradeoff_alpha():
    alphas = [1e3, 1e2, 10.0, 1.0, 0.1, 1e-2, 1e-3, 1e-4]  # decreasing privacy budget
    rounds = [th.prop9_rounds(*_p9(a)) for a in alphas]
    bounds = [th.prop9_bound(*_p9(a), EPS) for a in alphas]
    # tradeoff 1: smaller alpha -> fewer rounds, larger bound
    assert all(a >= b for a, b in itertools.pairwise(rounds))
    assert rounds[0] > rounds[-1] == 1
    assert all(a < b for a, b in itertools.pairwise(bounds))
    # tradeoff 3: alpha -> inf needs ever more rounds
    assert th.prop9_rounds(*_p9(1e6)) > th.prop9_rounds(*_p9(1e3))


def test_prop9_bound_vs_closed_form():
    for alpha in [0.3, 3.0, 30.0]:
        A, B, C = _p9(alpha)
        T = th.prop9_rounds(A, B, C)
        assert B * math.log(1 / C) / A >= 1  # T* >= 0: the closed form is meaningful
        bound = th.prop9_bound(A, B, C, EPS)
        assert bound == pytest.approx(A * T + B * C**T + EPS)
        closed = th.prop9_bound_closed_form(A, B, C, EPS)
        assert closed <= bound <= closed + A
    # tiny alpha: the printed closed form goes negative, the proof's bound does not
    A, B, C = _p9(1e-5)
    assert th.prop9_bound_closed_form(A, B, C, 0.0) < 0
    assert th.prop9_bound(A, B, C, 0.0) == pytest.approx(A + B * C)


def test_prop9_bad_eta2_named():
    with pytest.raises(ValueError, match="eta2"):
        _p9(1.0, eta2=1 / (9 * 0.1))  # C = 0
    with pytest.raises(ValueError, match="eta2"):
        _p9(1.0, eta2=2.0)  # C < 0
    with pytest.raises(ValueError, match="eta2"):
        th.prop9_rounds(1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="eta2"):
        th.prop9_rounds(1.0, 1.0, -0.5)
    with pytest.raises(ValueError, match="eta2"):
        th.prop9_A_rederived(eta2=1.0 / (9 * LG) * 1.5, alpha=1.0, L_g=LG, **P9)


# ---------------------------------------------------------------------------
# Risk bounds (Section III) and Propositions 3.5, 5


def test_prop1_and_corollary1_values():
    p, n = [0.5, 0.3, 0.2], [10, 20, 40]
    s = 0.25 / 10 + 0.09 / 20 + 0.04 / 40
    factor = 2.0**2 * 4 * math.log(8 / 0.05) / (4 * 0.5)
    assert th.prop1_bound(p, n, 2.0, 4, 0.05, 0.5) == pytest.approx(s * factor)
    # FedAvg weights p_k = n_k / n: the bound is L^2 d log(2d/delta) / (4 mu n)
    n = np.array([10, 20, 70])
    assert th.prop1_bound(n / 100, n, 2.0, 4, 0.05, 0.5) == pytest.approx(factor / 100)
    assert th.corollary1_bound(10, 2.0, 4, 0.05, 0.5) == pytest.approx(factor / 10)
    assert th.corollary1_bound(10, 2.0, 4, 0.05, 0.5) == pytest.approx(
        th.prop1_bound([1.0, 0.0], [10, 99], 2.0, 4, 0.05, 0.5)
    )


def test_prop2_and_prop3():
    p, n, args = [0.5, 0.3, 0.2], [10, 20, 40], (2.0, 4, 0.05, 0.5)
    base = th.prop1_bound(p, n, *args)
    assert th.prop2_bound(p, n, *args, 0.3) == pytest.approx(base + 0.6)
    # gamma = 1: Proposition 3 is Proposition 2
    assert th.prop3_bound(p, n, 1, 1.0, *args, 0.3) == pytest.approx(base + 0.6)
    # explicit formula for gamma = 3, k = 1
    g, pk = 3.0, 0.3
    first = (0.25 / 10 + 0.04 / 40 + g**2 * pk**2 / 20) / (1 + (g - 1) * pk) ** 2
    factor = 2.0**2 * 4 * math.log(8 / 0.05) / (4 * 0.5)
    assert th.prop3_bound(p, n, 1, g, *args, 0.1) == pytest.approx(first * factor + 0.2)
    pt = th.amplified_weights(p, 1, g)
    assert pt.sum() == pytest.approx(1.0)
    assert pt[1] == pytest.approx(0.9 / 1.6)
    # gamma -> inf: the estimation term tends to local learning (Corollary 1)
    big = th.prop3_bound(p, n, 1, 1e9, *args, 0.0)
    assert big == pytest.approx(th.corollary1_bound(20, *args), rel=1e-6)


def test_phi_and_prop5():
    p, n = [0.5, 0.5], [10, 30]
    phi = th.phi_bound(p, n, 1.0, 2, 0.1, 0.2, 2.0, 5, 3.0)
    expected = 2 * th.prop1_bound(p, n, 1.0, 2, 0.1, 0.2) + (2 * 2.0 / 0.2) * 0.9**5 * 3.0
    assert phi == pytest.approx(expected)
    assert th.prop5_epsilon_tilde(0.01, 10, phi) == pytest.approx(0.02 + 10 * phi)


# ---------------------------------------------------------------------------
# validation


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: th.lemma1_gap(-1, 0.1, 1.0, 1.0), "T1"),
        (lambda: th.lemma1_gap(1, 0.0, 1.0, 1.0), "mu"),
        (lambda: th.lemma1_gap(1, 2.0, 1.0, 1.0), "mu"),
        (lambda: th.lemma1_gap(1, 0.1, 1.0, -1.0), "initial_gap"),
        (lambda: th.phase1_rounds(0, 1.0, 1.0, 0.1, 1.0), "K"),
        (lambda: th.phase1_rounds(2.5, 1.0, 1.0, 0.1, 1.0), "K"),
        (lambda: th.phase1_rounds(2, -1.0, 1.0, 0.1, 1.0), "G"),
        (lambda: th.phase1_rounds(2, 1.0, 0.0, 0.1, 1.0), "delta_tol"),
        (lambda: th.phase1_rounds(2, 1.0, 1.0, 0.1, -1.0), "L_g"),
        (lambda: th.phase2_rounds(2, 1.0, 1.0, 0.1, 1.0, 0.0), "epsilon"),
        (lambda: th.phase2_rounds(2, -1.0, 1.0, 0.1, 1.0, 0.1), "L_f"),
        (lambda: th.phase2_rounds(2, 1.0, float("nan"), 0.1, 1.0, 0.1), "delta_tol"),
        (lambda: th.phase2_rounds_upper(2, 1.0, 1.0, -0.1), "epsilon"),
        (lambda: th.theorem1_K_T2_bound(1.0, 1.0, 0.0, 1.0, 0.1), "mu"),
        (lambda: th.theorem1_step_sizes(1, 1.0), "K"),
        (lambda: th.theorem1_step_sizes(3, 1.0, p_k=1.0), "p_k"),
        (lambda: th.theorem1_step_sizes(3, 0.0), "L_g"),
        (lambda: th.prop4_bound(0.0, 1.0, 1.0, 1, 0.1), "p_k"),
        (lambda: th.prop4_bound(0.5, 1.0, 1.0, 1, 0.0), "eta2"),
        (lambda: th.prop4_bound(0.5, 1.0, 1.0, -2, 0.1), "T2"),
        (lambda: th.lemma2_distance(1.0, 0.0, 3), "mu"),
        (lambda: th.theorem3_clusters(0, 1.0, 1.0, 0.1, 0.1), "K"),
        (lambda: th.theorem3_clusters(3, 1.0, 1.0, 0.1, 0.0), "epsilon"),
        (lambda: th.prop9_constants(0.01, 0, 1.0, 10, 5, 1.0, 0.1, 0.1), "d"),
        (lambda: th.prop9_constants(0.01, 1, 1.0, 1, 5, 1.0, 0.1, 0.1), "K"),
        (lambda: th.prop9_constants(0.01, 1, 1.0, 10, 5, 0.0, 0.1, 0.1), "alpha"),
        (lambda: th.prop9_constants(0.01, 1, 1.0, 10, 5, 1.0, 1.0, 0.1), "beta"),
        (lambda: th.prop9_constants(0.01, 1, 1.0, 10, 0, 1.0, 0.1, 0.1), "n_min"),
        (lambda: th.prop9_constants(-0.01, 1, 1.0, 10, 5, 1.0, 0.1, 0.1), "eta2"),
        (lambda: th.prop9_rounds(0.0, 1.0, 0.5), "A"),
        (lambda: th.prop9_bound(1.0, 1.0, 0.5, -1.0), "epsilon"),
        (lambda: th.prop1_bound([0.5, 0.6], [1, 1], 1.0, 1, 0.1, 1.0), "p"),
        (lambda: th.prop1_bound([0.5, 0.5], [1, 0], 1.0, 1, 0.1, 1.0), "n"),
        (lambda: th.prop1_bound([0.5, 0.5], [1], 1.0, 1, 0.1, 1.0), "n"),
        (lambda: th.prop1_bound([1.0], [1], 1.0, 1, 1.0, 1.0), "delta"),
        (lambda: th.prop1_bound([1.0], [1], -1.0, 1, 0.1, 1.0), "L_ell"),
        (lambda: th.corollary1_bound(0, 1.0, 1, 0.1, 1.0), "n_k"),
        (lambda: th.prop2_bound([1.0], [1], 1.0, 1, 0.1, 1.0, -0.1), "dist_k"),
        (lambda: th.prop3_bound([1.0], [1], 1, 2.0, 1.0, 1, 0.1, 1.0, 0.0), "k"),
        (lambda: th.prop3_bound([1.0], [1], 0, 0.0, 1.0, 1, 0.1, 1.0, 0.0), "gamma"),
        (lambda: th.prop3_bound([1.0], [1], 0, 2.0, 1.0, 1, 0.1, 1.0, -1.0), "dist_k_gamma"),
        (lambda: th.phi_bound([1.0], [1], 1.0, 1, 0.1, 1.0, 2.0, -1, 1.0), "T1"),
        (lambda: th.prop5_epsilon_tilde(0.1, 2, -1.0), "phi"),
    ],
)
def test_value_errors_name_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()
