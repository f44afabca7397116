"""FedAvg (McMahan et al.), the paper's benchmark: Phase I of Alg. 1 without payments."""

from __future__ import annotations

import numpy as np

from edgesim.mechanisms.base import Outcome, ServerContext, register_mechanism
from edgesim.mechanisms.steps import run_phase1, step_size_phase1


def fedavg(ctx: ServerContext):
    """Gradient-descent FedAvg: T1 rounds of w <- w - eta1 sum_k p_k grad F_k(w) (Alg. 1, line 6).

    Yields one Gather per round; returns an :class:`Outcome` with zero payments.
    """
    eta1 = step_size_phase1(ctx)
    w, T1, diverged = yield from run_phase1(ctx, eta1)
    return Outcome(w, np.zeros(ctx.K), phase1_rounds=T1, info={"eta1": eta1, "diverged": diverged})


register_mechanism("fedavg", fedavg)
