"""Step sizes and Phase I, shared by the gradient-based mechanisms (FedAvg, FFL)."""

from __future__ import annotations

import numpy as np

from edgesim import theory
from edgesim.arrays import all_finite
from edgesim.mechanisms.base import ServerContext, secure_aggregation, weighted_total
from edgesim.mechanisms.protocol import Gather, GradientAsk


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


def descend(
    ctx: ServerContext,
    w: np.ndarray,
    *,
    agents: np.ndarray | None,
    weight: float,
    eta: float,
    rounds: int,
    phase: str,
    problem: int = -1,
    noise=None,
    first_round: int = 0,
):
    """Gradient descent on sum_{j in agents} p_j F_j: ``rounds`` steps w <- w - eta g.

    The one descent loop of the gradient mechanisms (FedAvg and FFL's Phase I,
    vcg-federated's K + 1 trainings, DP-FFL's noisy rounds). A sub-generator
    (``yield from``): each round is one ``Gather`` of the agents' gradients
    (``agents`` None: everyone), summed securely when the mechanism aggregates
    securely; ``weight`` is the objective's total weight (missing replies are
    reweighted to it, :func:`~edgesim.mechanisms.base.weighted_total`) and
    ``noise`` the optional hook applied to each aggregated sum (DP-FFL).
    Returns ``(w, rounds run, diverged)``: it stops early, ``diverged`` true,
    when the model stops being finite (a step too large for the reports).
    Round t's step is numbered ``first_round + t`` (:attr:`Gather.round`).
    """
    p = ctx.p
    secure = secure_aggregation(ctx.cfg)
    weights = (p if agents is None else p[agents]) if secure else None
    only_sum = None if secure else p  # the loop reads the weighted sum of the reports only
    for t in range(rounds):
        r = yield Gather(
            w,
            agents=agents,
            ask=GradientAsk,
            phase=phase,
            problem=problem,
            aggregate=weights,
            sum_weights=only_sum,
            round=first_round + t,
        )
        w = w - eta * weighted_total(r, p[r.agents], weight, noise)
        del r  # the replies can be large (K x p): not held while the next round is answered
        if not all_finite(w):
            return w, t + 1, True
    return w, rounds, False


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
    if T1 == "theory":  # Alg. 1, line 2 with Theorem 1: the first round also sets T1
        secure = secure_aggregation(ctx.cfg)
        weights = ctx.p if secure else None  # the server sees only the sum
        only_sum = None if secure else ctx.p
        r = yield Gather(
            w, ask=GradientAsk, phase=phase, aggregate=weights, sum_weights=only_sum, round=0
        )
        g = weighted_total(r, ctx.p[r.agents], 1.0)
        G = float(np.linalg.norm(g)) / ctx.mu
        T1 = max(1, theory.phase1_rounds(ctx.K, G, ctx.cfg.theory_delta, ctx.mu, ctx.L_g))
        w = w - eta1 * g
        del r  # not held through the rest of Phase I
        done = 1
    # Alg. 1, lines 3-6: w[t+1] = w[t] - eta1 sum_k p_k grad F_k(w[t])
    w, ran, diverged = yield from descend(
        ctx,
        w,
        agents=None,
        weight=1.0,
        eta=eta1,
        rounds=int(T1) - done,
        phase=phase,
        first_round=done,
    )
    return w, done + ran, diverged
