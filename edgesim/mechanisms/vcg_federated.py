"""Exact VCG by K + 1 separate federated runs: the naive mechanism FFL improves on.

The server trains w* on every agent (FedAvg's Phase I, T1 rounds), then, for
each agent k, trains w_{-k} on the others from the same start with the same
number of rounds (step eta2: 1/((1 - p_k) L_g) under "theory", slip 3 in docs/paper.md), and
asks every agent j != k for F_j(w*) and F_j(w_{-k}) (loss reports):

    P_k = (1/p_k) [ sum_{j != k} p_j F_j(w*) - sum_{j != k} p_j F_j(w_{-k}) ]       (eq. VCG)

Messages (each direction, lossless): K T1 + K + (K - 1) (T1 + 1) K, i.e.
O(K^2 T1), the quadratic cost the paper's incremental payments avoid.
Reported as phase1 (the run on everyone and its loss round) and phase2 (the
K runs without one agent). With secure aggregation (``mechanism.secure_aggregation``)
every training round of all K + 1 runs sends only the weighted sum, as
Phase I does; a run whose model stops being finite gets a NaN payment.
"""

from __future__ import annotations

import numpy as np

from edgesim.mechanisms.base import (
    Outcome,
    ServerContext,
    register_mechanism,
)
from edgesim.mechanisms.parallel import run_problems
from edgesim.mechanisms.protocol import Gather, LossAsk
from edgesim.mechanisms.steps import descend, run_phase1, step_size_phase1, step_size_phase2


def vcg_federated(ctx: ServerContext):
    """Run the K + 1 federated trainings; yields Gathers, returns an Outcome with VCG payments."""
    K, p = ctx.K, ctx.p
    eta1 = step_size_phase1(ctx)
    w_star, T1, diverged = yield from run_phase1(ctx, eta1)
    if diverged:
        return Outcome(w_star, np.full(K, np.nan), phase1_rounds=T1, info={"diverged": True})
    r = yield Gather(w_star, ask=LossAsk, phase="phase1", round=T1)
    at_star = np.zeros(K)
    at_star[r.agents] = r.values
    replied_star = np.zeros(K, dtype=bool)
    replied_star[r.agents] = True
    everyone = np.arange(K)

    def training(k: int):  # the federated training without agent k, then its payment
        others = np.delete(everyone, k)
        weight = float(p[others].sum())
        if weight == 0:
            return 0.0  # a single agent: nobody else, P_k = 0
        eta = step_size_phase2(ctx, weight)
        w, _, diverged_k = yield from descend(
            ctx, ctx.w0, agents=others, weight=weight, eta=eta, rounds=T1, phase="phase2", problem=k
        )
        if diverged_k:
            return None
        r = yield Gather(w, agents=others, ask=LossAsk, phase="phase2", problem=k, round=T1)
        # Sums over the agents that replied to both loss rounds (rescaled to weight 1 - p_k).
        a = r.agents[replied_star[r.agents]]
        v = r.values[replied_star[r.agents]]
        got = float(p[a].sum())
        diff = float(p[a] @ (at_star[a] - v))
        return diff * (weight / got) / p[k] if got > 0 else np.nan

    solved = yield from run_problems([training(k) for k in range(K)], ctx.cfg.phase2_schedule)
    diverged_runs = [k for k, P in enumerate(solved) if P is None]
    payments = np.array([np.nan if P is None else P for P in solved], dtype=float)
    info = {
        "eta1": eta1,
        "runs": K + 1,
        "diverged": bool(diverged_runs),
        "diverged_runs": diverged_runs,
    }
    return Outcome(
        w_star,
        payments,
        phase1_rounds=T1,
        phase2_rounds=[T1] * K,
        phase2_per_agent=[T1] * K,
        info=info,
    )


register_mechanism("vcg-federated", vcg_federated)
