"""How many rounds FFL's Phase II problems run under the stopping rule, predicted without running.

With ``mechanism.phase2_check = true`` problem k runs at least T2 rounds, then
until its gradient certifies the payment (Alg. 1, line 10):
|g_t|^2 / (2 mu_k) <= p_k epsilon, with g_t = sum_{j != k} p_j grad F_j(w_t) and
mu_k = (1 - p_k) mu. How long that takes depends on where Phase I ends (w*)
and on the objective's curvature, so :func:`phase2_rounds` predicts it from the
same quantities, linearised:

1. w* = w[T1]: Phase I's T1 steps w <- w - eta1 grad F(w) from w[0], with
   truthful reports (ridge: in the parameters' space, from the data's moments;
   otherwise T1 full gradients, as the run's own Phase I);
2. the shared round at w*: every agent's gradient, so g_0 of problem k is
   grad F(w*) - p_k grad F_k(w*) (as the mechanism forms it);
3. the Hessian H of F at w* (ridge: the moments; otherwise by central
   differences of grad F, up to :data:`HESSIAN_MAX_PARAMS` parameters), whose
   eigenpairs (lambda_i, v_i) give problem k's gradient after t steps of
   eta2 = 1 / ((1 - p_k) L_g) on its objective (Hessian about (1 - p_k) H):
   |g_t|^2 = sum_i (v_i . g_0)^2 (1 - lambda_i / L_g)^(2t), decreasing in t; the
   rounds are the least t >= T2 meeting the rule, at most ``phase2_max_rounds``;
4. a lost reply ends a problem early: a round whose replies are incomplete
   cannot certify the rule, and the mechanism stops there once t >= T2 (its
   payment then carries that round's truncation error). With independent loss
   every round is incomplete with probability pi = 1 - (1 - q_miss)^(K - 1), so
   the expected rounds are T2 + (1 - pi)(1 - (1 - pi)^M) / pi for M = N - T2
   rounds beyond T2 (a geometric stop, cut at N).

Strategic reports, clipping and restarts of a diverging problem are not
modelled (the plan says so). Above ``HESSIAN_MAX_PARAMS`` parameters of a
nonlinear model the curvature is taken at its lower end, mu (Theorem 1's rate
1 - mu / L_g): an upper bound.
"""

from __future__ import annotations

import math

import numpy as np

#: The largest number of parameters whose Hessian is formed by central differences
#: (2 P full gradients); above it the rate is Theorem 1's bound.
HESSIAN_MAX_PARAMS = 128
#: Problems handled at once (their first gradients are a block of rows).
BLOCK = 1 << 14


def phase1_end(model, design, p: np.ndarray, w0: np.ndarray, eta1: float, T1: int) -> np.ndarray:
    """Return w[T1], Phase I's end with truthful reports (Alg. 1, lines 2-6), shape (n_params,).

    Ridge from the data's moments (grad F(w) = S w - t + l2 w sum p: one pass); otherwise T1
    full gradients. Stops early once the step no longer moves w (a fixed point).
    """
    moments = model.gradient_moments(design, p) if model.kind == "ridge" else None
    w = np.array(w0, dtype=float)
    if moments is not None:
        A = moments.S + model.l2 * moments.weight * np.eye(w.size)
        for _ in range(int(T1)):
            w = w - eta1 * (A @ w - moments.t)
        return w
    for _ in range(int(T1)):
        step = eta1 * model.grad(w, design, p)
        if not np.all(np.isfinite(step)):
            return w
        w_next = w - step
        if np.array_equal(w_next, w):
            break
        w = w_next
    return w


def hessian(model, design, p: np.ndarray, w: np.ndarray) -> np.ndarray | None:
    """Return the Hessian of F = sum_k p_k F_k at ``w``, (n_params, n_params), symmetrised;
    None when a nonlinear model has more than :data:`HESSIAN_MAX_PARAMS` parameters.

    Ridge: S + l2 sum(p) I from the moments. Otherwise central differences of grad F with
    steps h_j = 1e-5 max(1, |w_j|) (2 n_params full gradients).
    """
    if model.kind == "ridge":
        m = model.gradient_moments(design, p)
        if m is not None:
            return m.S + model.l2 * m.weight * np.eye(w.size)
    if w.size > HESSIAN_MAX_PARAMS:
        return None
    H = np.empty((w.size, w.size))
    for j in range(w.size):
        h = 1e-5 * max(1.0, abs(float(w[j])))
        e = np.zeros(w.size)
        e[j] = h
        H[:, j] = (model.grad(w + e, design, p) - model.grad(w - e, design, p)) / (2.0 * h)
    return 0.5 * (H + H.T)


def rounds_to_target(
    coef_sq: np.ndarray, factors_sq: np.ndarray, target: np.ndarray, cap: int
) -> np.ndarray:
    """Return, per row, the least t in [0, cap] with sum_i coef_sq[:, i] factors_sq[i]^t <=
    target (cap when none), shape (rows,) int64.

    ``coef_sq`` (rows, n): squared components of each start gradient on the eigenvectors;
    ``factors_sq`` (n,): squared contraction per step, in [0, 1); ``target`` (rows,). The sum
    is non-increasing in t, so a bisection per row (all rows at once) finds t.
    """
    rows = coef_sq.shape[0]
    lo = np.zeros(rows, dtype=np.int64)  # invariant: the answer is in [lo, hi]
    hi = np.full(rows, int(cap), dtype=np.int64)
    with np.errstate(under="ignore"):
        done = coef_sq.sum(axis=1) <= target
        hi[done] = 0
        while True:
            open_ = lo < hi
            if not open_.any():
                return hi
            mid = (lo + hi) // 2
            value = (coef_sq[open_] * factors_sq[None, :] ** mid[open_, None]).sum(axis=1)
            ok = value <= target[open_]
            idx = np.flatnonzero(open_)
            hi[idx[ok]] = mid[open_][ok]
            lo[idx[~ok]] = mid[open_][~ok] + 1


def expected_with_loss(N: np.ndarray, T2: int, incomplete: float) -> np.ndarray:
    """Return the expected rounds of problems that would run ``N`` (K,) rounds, when each round
    is incomplete with probability ``incomplete`` and the first incomplete round at or after
    round T2 ends the problem (module docstring, step 4), shape (K,) float."""
    N = np.asarray(N, dtype=float)
    if incomplete <= 0.0:
        return N
    beyond = np.maximum(N - T2, 0.0)
    keep = 1.0 - incomplete
    extra = keep * -np.expm1(beyond * math.log1p(-incomplete)) / incomplete if keep > 0 else 0.0
    return np.minimum(N, T2 + extra)


def incomplete_probability(network, recipients: int) -> float:
    """Return the probability that an exchange to ``recipients`` agents misses a reply, on the
    ``[network]`` table ``network``: each message (down, then up) is lost after R + 1
    independent tries with probability q^(R + 1) (Bernoulli loss, capped ARQ); 0 in memory
    and without loss (other loss models: 0, an underestimate the plan notes)."""
    if network.fidelity == "none" or network.radio.loss != "bernoulli":
        return 0.0
    q, R = network.radio.loss_prob, network.radio.arq_max_retries
    miss = 1.0 - (1.0 - q ** (R + 1)) ** 2
    return float(-np.expm1(recipients * np.log1p(-miss))) if miss < 1.0 else 1.0


def phase2_rounds(
    model,
    design,
    ctx,
    *,
    T1: int,
    eta1: float,
    T2: int,
    cap: int,
    incomplete: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Return (N, expected): per problem k the rounds the stopping rule needs (K,) int64 (0
    for a problem the mechanism does not run: converged at w* with T2 = 0), and the expected
    rounds when each round is incomplete with probability ``incomplete`` (K,) float.

    ``ctx``: the run's :class:`~edgesim.mechanisms.base.ServerContext` (p, mu, L_g, w[0],
    epsilon); ``T1``, ``eta1``: Phase I's rounds and step; ``T2``: the minimum rounds;
    ``cap``: ``phase2_max_rounds``. Module docstring: the model behind it.
    """
    p, K, mu, L_g = ctx.p, ctx.K, ctx.mu, ctx.L_g
    w_star = phase1_end(model, design, p, ctx.w0, eta1, T1)
    G0 = model.agent_grads(w_star, design)
    g_all = p @ G0
    H = hessian(model, design, p, w_star)
    if H is None:  # Theorem 1's rate: every direction contracts by 1 - mu / L_g
        lam, V = np.array([mu]), None
    else:
        lam, V = np.linalg.eigh(H)
    factors_sq = np.clip(1.0 - np.clip(lam, mu, L_g) / L_g, 0.0, 1.0) ** 2
    weights = 1.0 - p
    target = 2.0 * weights * mu * p * ctx.cfg.epsilon
    N = np.zeros(K, dtype=np.int64)
    for lo in range(0, K, BLOCK):
        k = np.arange(lo, min(lo + BLOCK, K))
        g0 = g_all[None, :] - p[k, None] * G0[k]
        coef_sq = (g0 @ V) ** 2 if V is not None else (g0 * g0).sum(axis=1, keepdims=True)
        t = rounds_to_target(coef_sq, factors_sq, target[k], cap)
        N[k] = np.where((t == 0) & (T2 == 0), 0, np.maximum(t, T2))
    N[weights <= 0] = 0
    N = np.minimum(N, cap)
    return N, expected_with_loss(N, T2, incomplete)
