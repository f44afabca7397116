"""Faithful Federated Learning (Alg. 1): gradient descent, then VCG-like payments.

Phase I (lines 2-7) is FedAvg's gradient descent. One extra round then
collects every agent's gradient at w* (documented extra round): it gives the
first step of every Phase II problem at once, since w_{-k}[0] = w* for all k,
and the gradient bound L_f used by Theorem 1's T2.

Phase II (lines 8-15), for each agent k: gradient descent on
sum_{j != k} p_j F_j from w*, accumulating the payment as the path integral of
the others' gradients, with the sign that makes P_k >= 0 (DESIGN slip 1):

    P_k += (w[t] - w[t+1])^T sum_{j != k} (p_j / p_k) grad F_j(w[t])       (paper)
    P_k += (w[t] - w[t+1])^T sum_{j != k} (p_j / p_k) (g(w[t]) + g(w[t+1]))/2   (trapezoid)

The paper's rule is a left Riemann sum (error O(eta2), Prop. 4); the
trapezoid rule is exact for quadratic losses and needs no extra round: the
gradient at w[t+1] is the next round's report (slip 4). Each problem runs at
least T2 rounds and then until |sum_{j != k} p_j grad F_j|^2 / (2 (1 - p_k) mu)
<= p_k epsilon (slip 5), capped by ``phase2_max_rounds``. A round with missing
replies (lost on the network, or cut by a deadline) cannot certify that check:
its gradient is a reweighted estimate over a random subset of the others,
whose norm does not vanish at the optimum. After T2 rounds such a round ends
the problem, as Theorem 1's T2 alone would.

Messages (each direction, lossless): K T1 + K + sum_k (K - 1) T2_k (with the paper's
rule and no stopping check the last step needs no report: T2_k - 1 rounds per problem).
"""

from __future__ import annotations

import numpy as np

from edgesim import theory
from edgesim.mechanisms.base import Outcome, ServerContext, register_mechanism, weighted_total
from edgesim.mechanisms.protocol import Gather
from edgesim.mechanisms.steps import run_phase1, step_size_phase1, step_size_phase2


def _phase2_target(ctx: ServerContext, L_f: float) -> int:
    T2 = ctx.cfg.phase2_rounds
    if T2 == "theory":
        return theory.phase2_rounds(
            ctx.K, L_f, ctx.cfg.theory_delta, ctx.mu, ctx.L_g, ctx.cfg.epsilon
        )
    return int(T2)


def ffl(ctx: ServerContext):
    """Run Alg. 1; yields Gathers, returns an :class:`Outcome` with the payments P_k."""
    cfg = ctx.cfg
    K, p = ctx.K, ctx.p
    eta1 = step_size_phase1(ctx)
    w_star, T1, diverged = yield from run_phase1(ctx, eta1)
    if diverged:
        info = {"eta1": eta1, "diverged": True}
        return Outcome(w_star, np.full(K, np.nan), phase1_rounds=T1, info=info)

    # Extra round: every agent's gradient at w*, shared by all Phase II problems.
    r = yield Gather(w_star, None, "gradient", "phase1", problem=-1)
    G0 = np.zeros((K, w_star.size))
    G0[r.agents] = r.values
    L_f = float(np.max(np.linalg.norm(r.values, axis=1))) if r.values.size else 0.0
    g_all = p[r.agents] @ r.values
    complete0 = r.missing.size == 0
    T2 = _phase2_target(ctx, L_f)

    payments = np.zeros(K)
    rounds = np.zeros(K, dtype=np.int64)
    capped = []
    trapezoid = cfg.payment_rule == "trapezoid"
    need_final = cfg.phase2_check or trapezoid
    weights = 1.0 - p
    etas = np.array([step_size_phase2(ctx, 1.0)]) / np.where(weights > 0, weights, np.inf)
    if cfg.eta2 != "theory":
        etas = np.full(K, float(cfg.eta2))
    # sum_{j != k} p_j grad F_j(w*) for every k at once, from the shared round
    # (rescaled to weight 1 - p_k when some reports were lost).
    replied = np.zeros(K, dtype=bool)
    replied[r.agents] = True
    got = p[r.agents].sum() - np.where(replied, p, 0.0)
    scale = np.divide(weights, got, out=np.zeros(K), where=got > 0)
    G_minus = (g_all[None, :] - p[:, None] * G0) * scale[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        grad_sq = np.einsum("ij,ij->i", G_minus, G_minus)
        converged0 = (grad_sq / (2.0 * weights * ctx.mu) <= p * cfg.epsilon) | (not complete0)
    # With one agent the others' objective is empty: P_k = 0 (eq. VCG), no Phase II.
    active = np.flatnonzero(((T2 > 0) | (cfg.phase2_check & ~converged0)) & (weights > 0))
    everyone = np.arange(K)
    for k in active.tolist():
        pk, weight, eta2 = p[k], weights[k], etas[k]
        mu_k = weight * ctx.mu
        others = np.delete(everyone, k)
        w, g = w_star, G_minus[k]
        complete = complete0
        P = 0.0
        t = 0
        while True:
            converged = not complete or float(g @ g) / (2.0 * mu_k) <= pk * cfg.epsilon
            if t >= T2 and (not cfg.phase2_check or converged):
                break
            if t >= cfg.phase2_max_rounds or not np.isfinite(g).all():
                capped.append(k)
                break
            w_next = w - eta2 * g
            if t + 1 >= T2 and not need_final:
                # Last step of the paper's rule without the stopping check: no report needed.
                P += eta2 * float(g @ g) / pk
                t += 1
                break
            rep = yield Gather(w_next, others, "gradient", "phase2", problem=k)
            if rep.values is not None and rep.values.size:
                L_f = max(L_f, float(np.sqrt(np.einsum("ij,ij->i", rep.values, rep.values).max())))
            g_next = weighted_total(rep, p[rep.agents], weight)
            complete = rep.missing.size == 0
            # w[t] - w[t+1] = eta2 g exactly; computing it as a difference loses digits.
            if trapezoid:
                P += eta2 * float(g @ (g + g_next)) / (2.0 * pk)
            else:
                P += eta2 * float(g @ g) / pk
            w, g = w_next, g_next
            t += 1
        payments[k] = P
        rounds[k] = t
    info = {
        "eta1": eta1,
        "eta2": float(np.mean(etas)) if K else 0.0,
        "T2_target": T2,
        "gradient_bound_observed": L_f,  # max ||grad F_j|| reported at w* and in Phase II
        "payment_rule": cfg.payment_rule,
        "phase2_capped": capped,
        "extra_rounds": 1,
        "diverged": bool(capped) and not np.isfinite(payments).all(),
    }
    return Outcome(
        w_star,
        payments,
        phase1_rounds=T1,
        phase2_rounds=rounds.tolist(),
        phase2_per_agent=rounds.tolist(),
        info=info,
    )


register_mechanism("ffl", ffl)
