"""Step sizes and Phase I, shared by the gradient-based mechanisms (FedAvg, FFL)."""

from __future__ import annotations

import numpy as np

from edgesim import theory
from edgesim.mechanisms.base import ServerContext, secure_aggregation, weighted_total
from edgesim.mechanisms.protocol import Gather


def step_size_phase1(ctx: ServerContext) -> float:
    """Return eta1: the configured value, or 1/L_g under 'theory' (Lemma 1, Theorem 1)."""
    eta = ctx.cfg.eta1
    return 1.0 / ctx.L_g if eta == "theory" else float(eta)


def step_size_phase2(ctx: ServerContext, weight_others: float) -> float:
    """Return eta2 for a Phase II problem whose objective has total weight ``weight_others``.

    The objective sum_{j != k} p_j F_j is (1 - p_k) L_g-smooth and
    (1 - p_k) mu-strongly convex (slip 3, docs/paper.md), so 'theory' gives
    eta2 = 1/((1 - p_k) L_g): the same contraction (1 - mu/L_g) per step that
    Theorem 1's T2 rule assumes.
    """
    eta = ctx.cfg.eta2
    return 1.0 / (weight_others * ctx.L_g) if eta == "theory" else float(eta)


def run_phase1(ctx: ServerContext, eta1: float, phase: str = "phase1"):
    """Alg. 1, lines 2-6: T1 rounds of w <- w - eta1 sum_k p_k grad F_k(w).

    A sub-generator (``yield from``) returning ``(w*, T1, diverged)``; it stops
    early, with ``diverged`` true, when the model stops being finite (a step
    too large for the reports, e.g. under strong gradient amplification). With
    ``phase1_rounds = "theory"`` the first round's gradient bounds
    G = ||w[0] - w^o|| <= ||grad F(w[0])|| / mu and T1 follows Theorem 1.
    """
    w = ctx.w0
    T1 = ctx.cfg.phase1_rounds
    done = 0
    weights = ctx.p if secure_aggregation(ctx.cfg) else None  # the server sees only the sum
    if T1 == "theory":
        r = yield Gather(w, None, "gradient", phase, aggregate=weights)
        g = weighted_total(r, ctx.p[r.agents], 1.0)
        G = float(np.linalg.norm(g)) / ctx.mu
        T1 = max(1, theory.phase1_rounds(ctx.K, G, ctx.cfg.theory_delta, ctx.mu, ctx.L_g))
        w = w - eta1 * g
        done = 1
    for t in range(done, int(T1)):
        r = yield Gather(w, None, "gradient", phase, aggregate=weights)
        w = w - eta1 * weighted_total(r, ctx.p[r.agents], 1.0)
        if not np.all(np.isfinite(w)):
            return w, t + 1, True  # the rounds actually run
    return w, int(T1), False
