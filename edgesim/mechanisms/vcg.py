"""Exact VCG and scalable (clustered) VCG by central solves: the reference.

Exact VCG (eq. VCG):
    P_k^VCG = (1/p_k) [ sum_{j != k} p_j F_j(w^o) - min_w sum_{j != k} p_j F_j(w) ].
Scalable VCG (Definition 2): agents split into L random balanced clusters;
for k in C_l, w_{-k}^o is replaced by w_l^o = argmin sum_{j not in C_l} p_j F_j:
    P_k^S = (1/p_k) sum_{j != k} p_j (F_j(w^o) - F_j(w_l^o)).
With L = K every cluster is one agent and P^S = P^VCG.

Ridge problems are solved in closed form (normal equations); logistic ones
with scipy's L-BFGS-B (gtol 1e-10), warm-started at w^o, and w^o itself then
polished by Newton steps (:func:`polish_optimum`): a payment's error is first
order in w^o's.
"""

from __future__ import annotations

import numpy as np

from edgesim.learning.models import Design, Model, Ridge, as_float64, segment_sum
from edgesim.mechanisms.base import Outcome, ServerContext, register_mechanism
from edgesim.mechanisms.protocol import Gather

SOLVER_GTOL = 1e-10


def solve_weighted(model: Model, design: Design, weights: np.ndarray, w0=None) -> np.ndarray:
    """Return argmin_w sum_k weights_k F_k(w) (weights need not sum to one).

    Closed form for ridge; L-BFGS-B for logistic (gtol 1e-10, from ``w0`` or zeros).
    """
    if isinstance(model, Ridge):
        return model.solve(design, weights)
    x0 = np.zeros(model.n_params(design.data.d)) if w0 is None else w0
    from threadpoolctl import threadpool_limits  # imported where used: every run imports vcg

    # Many small BLAS calls: threads cost far more than they save (about 40x here).
    with threadpool_limits(1):
        res = _lbfgs(model, design, weights, x0)
    return res.x


#: Newton steps after L-BFGS-B, conjugate gradients' relative residual in each, its most
#: iterations, and the forward-difference step (relative to max(1, |w|)) of a Hessian product.
POLISH_STEPS = 3
POLISH_CG_RTOL = 1e-6
POLISH_CG_MAXITER = 200
POLISH_FD_STEP = 1e-8


def solve_optimum(model: Model, design: Design, p: np.ndarray) -> np.ndarray:
    """Return w^o = argmin_w sum_k p_k F_k(w), shape (n_params,), to the gradient's rounding.

    Ridge in closed form; logistic by :func:`solve_weighted`, then :func:`polish_optimum`.
    """
    w = solve_weighted(model, design, p)
    if isinstance(model, Ridge):
        return w
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return polish_optimum(model, design, p, w)


def polish_optimum(model: Model, design: Design, weights: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Return ``w`` after up to POLISH_STEPS Newton steps on grad F(w) = 0 (F = sum_k weights_k
    F_k), each kept only if it shrinks |grad F|; shape (n_params,).

    Why: L-BFGS-B stops once F no longer falls in its last bits, at a gradient norm near 3e-10
    on paper-fig5-privacy, and where it stops in that flat region depends on the machine's
    rounding. A payment's first-order error is grad F_k(w^o) . dw^o (sum_j p_j grad F_j(w^o) =
    0, so F_{-k} has gradient -p_k grad F_k there): an error of 1e-8 in w^o moved exact VCG's
    payments by 6e-8 relative between two numpy/scipy builds. The problems without one agent
    need no polish: their minimisers' errors enter the payment at second order.

    A Newton step needs only gradients: Hessian-vector products by forward differences of the
    gradient (about 1e-8 relative), solved by conjugate gradients (the Hessian is positive
    definite, l2 > 0) to POLISH_CG_RTOL; two steps reach the gradient's rounding. It costs one
    gradient per CG iteration: 1.6 to 2.6 cold solves' evaluations on logistic problems with
    l2 from 0.1 to 1e-5 (56 to 218 gradients).
    """
    from scipy.sparse.linalg import LinearOperator, cg

    g = model.grad(w, design, weights)
    size = float(np.linalg.norm(g))
    n = w.size
    for _ in range(POLISH_STEPS):
        if size == 0.0:
            break
        reach = POLISH_FD_STEP * max(1.0, float(np.linalg.norm(w)))  # the step's length

        def hess_times(v, w=w, g=g, reach=reach):
            v = np.ravel(v)
            norm = float(np.linalg.norm(v))
            if norm == 0.0:
                return np.zeros(n)
            h = reach / norm
            return (model.grad(w + h * v, design, weights) - g) / h

        H = LinearOperator((n, n), matvec=hess_times, dtype=np.float64)
        step, _ = cg(H, -g, rtol=POLISH_CG_RTOL, maxiter=POLISH_CG_MAXITER)
        w_new = w + step
        g_new = model.grad(w_new, design, weights)
        size_new = float(np.linalg.norm(g_new))
        if not size_new < size:
            break
        w, g, size = w_new, g_new, size_new
    return w


def _lbfgs(model, design, weights, x0):
    from scipy.optimize import minimize

    return minimize(
        model.loss_and_grad,
        x0,
        args=(design, weights),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": SOLVER_GTOL, "ftol": 1e-16, "maxiter": 100000, "maxcor": 30},
    )


RIDGE_BATCH_MAX = 5 * 10**7  # floats in the K per-agent Gram matrices of the batched path


OUTER_MAX = 1 << 22  # floats of one block's per-row outer products (32 MiB)


def _agent_grams(design: Design) -> np.ndarray:
    """Return every agent's X_k^T X_k / n_k, shape (K, d', d'), block by block.

    A block's per-row outer products (rows, d'^2) are summed per agent while they
    fit in OUTER_MAX floats; past that (wide rows) each agent's Gram matrix is one
    product X_k^T X_k, and K d'^2 <= RIDGE_BATCH_MAX keeps those agents few.
    """
    K, dp = design.K, design.Xa.shape[1]
    G = np.empty((K, dp, dp))
    for a0, a1, r0, r1 in design.blocks:
        Xc = as_float64(design.Xa[r0:r1])
        starts, counts = design.starts[a0:a1] - r0, design.n_k[a0:a1]
        if (r1 - r0) * dp * dp > OUTER_MAX:
            for k, (s, c) in enumerate(zip(starts.tolist(), counts.tolist(), strict=True)):
                G[a0 + k] = Xc[s : s + c].T @ Xc[s : s + c]
            continue
        outer = (Xc[:, :, None] * Xc[:, None, :]).reshape(r1 - r0, dp * dp)
        G[a0:a1] = segment_sum(outer, starts, counts).reshape(a1 - a0, dp, dp)
    return G / design.n_k[:, None, None]


def _ridge_vcg(model: Ridge, design: Design, p: np.ndarray):
    """Exact ridge VCG for all K at once: (w^o, payments).

    With A = sum_j p_j (G_j + l2 I) and b = sum_j p_j X_j^T y_j / n_j, the
    problem without k has A_{-k} = A - p_k (G_k + l2 I), b_{-k} = b - p_k b_k
    (one batched solve), and because sum_{j != k} p_j F_j is quadratic with
    Hessian A_{-k} and minimiser w_{-k}:
        P_k = (1/p_k) (1/2) (w^o - w_{-k})^T A_{-k} (w^o - w_{-k}),
    which avoids subtracting two nearly equal losses.
    """
    dp = design.Xa.shape[1]
    H = _agent_grams(design) + model.l2 * np.eye(dp)
    b_k = np.empty((design.K, dp))
    y = design.data.y
    for a0, a1, r0, r1 in design.blocks:
        b_k[a0:a1] = segment_sum(
            as_float64(design.Xa[r0:r1]),
            design.starts[a0:a1] - r0,
            design.n_k[a0:a1],
            y[r0:r1].astype(np.float64, copy=False),
        )
    b_k /= design.n_k[:, None]
    A = np.einsum("k,kij->ij", p, H)
    b = p @ b_k
    w_o = np.linalg.solve(A, b)
    A_minus = A[None] - p[:, None, None] * H
    b_minus = b[None] - p[:, None] * b_k
    w_minus = np.linalg.solve(A_minus, b_minus[:, :, None])[:, :, 0]
    delta = w_o[None] - w_minus
    quad = np.einsum("ki,kij,kj->k", delta, A_minus, delta)
    return w_o, 0.5 * quad / p


def balanced_clusters(K: int, L: int, rng: np.random.Generator) -> np.ndarray:
    """Return a cluster index per agent (K,): L random clusters of ceil(K/L) or floor(K/L) agents.

    Definition 2: a random permutation dealt round-robin into L clusters.
    """
    if not 1 <= L <= K:
        raise ValueError(f"clusters must be in 1..K={K}, got {L}")
    labels = np.empty(K, dtype=np.int64)
    labels[rng.permutation(K)] = np.arange(K) % L
    return labels


def vcg_payments(
    model: Model,
    design: Design,
    p: np.ndarray,
    clusters: np.ndarray | None = None,
    w_opt: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Return (w^o, payments): exact VCG (``clusters=None``) or scalable VCG.

    ``clusters``: a cluster index per agent (Definition 2). Payments are in
    loss units divided by p_k (eq. VCG); one central solve per problem. ``w_opt``: w^o
    to use as given (None: :func:`solve_optimum`, polished; an unpolished one makes the
    payments as inexact as it is, see :func:`polish_optimum`).
    """
    K = design.K
    if (
        clusters is None
        and isinstance(model, Ridge)
        and K * design.Xa.shape[1] ** 2 <= RIDGE_BATCH_MAX
    ):
        return _ridge_vcg(model, design, p)
    w_o = solve_optimum(model, design, p) if w_opt is None else w_opt
    if clusters is None:
        clusters = np.arange(K)
    losses_o = model.agent_losses(w_o, design)
    payments = np.zeros(K)
    for l in np.unique(clusters):
        members = clusters == l
        weights = np.where(members, 0.0, p)
        if not weights.any():
            continue
        w_l = solve_weighted(model, design, weights, w_o)
        diff = p * (losses_o - model.agent_losses(w_l, design))  # p_j (F_j(w^o) - F_j(w_l))
        total = diff.sum()
        idx = np.flatnonzero(members)
        payments[idx] = (total - diff[idx]) / p[idx]
    return w_o, payments


def resolve_clusters(setting, K: int, theory_L: int | None = None) -> int:
    """Return the number of clusters L for a ``mechanism.clusters`` setting.

    An integer is used as given (capped at K); ``"sqrt"`` gives ceil(sqrt K);
    ``"all"`` gives K; ``"theory"`` gives ``theory_L`` (Theorem 3).
    """
    if setting == "sqrt":
        return int(np.ceil(np.sqrt(K)))
    if setting == "all":
        return K
    if setting == "theory":
        return min(K, int(theory_L))
    return min(K, int(setting))


def vcg(ctx: ServerContext):
    """The central reference: collect every agent's data once, solve the K + 1 problems.

    With ``mechanism.clusters`` below K it computes the scalable VCG payment
    (Definition 2) with L + 1 solves. Returns an :class:`Outcome`.
    """
    r = yield Gather(None, ask="data", phase="phase1")
    design = r.data
    setting = ctx.cfg.clusters
    L = ctx.K if setting in ("sqrt", "theory") else resolve_clusters(setting, ctx.K)
    clusters = None if L == ctx.K else balanced_clusters(ctx.K, L, ctx.rng)
    w_o, payments = vcg_payments(ctx.model, design, ctx.p, clusters)
    return Outcome(w_o, payments, phase1_rounds=0, info={"clusters": L, "solver": "central"})


register_mechanism("vcg", vcg)
