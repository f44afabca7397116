"""Local learning (eq. Eq-P1): every agent minimises its own F_k, all agents at once."""

from __future__ import annotations

import numpy as np

from edgesim.learning.models import Design, Model


def local_models(model: Model, design: Design, max_rounds: int = 5000, tol: float = 1e-9):
    """Return (W, rounds): W[k] = argmin F_k (K, n_params) and the steps taken.

    All agents run Nesterov's accelerated gradient descent for strongly convex
    functions together (step 1/L, momentum (sqrt L - sqrt mu)/(sqrt L + sqrt mu),
    L the largest smoothness constant over agents, mu = l2), vectorised over
    agents, until every gradient norm is below ``tol`` or ``max_rounds`` steps.
    """
    K = design.K
    L = model.smoothness(design)
    mu = model.strong_convexity()
    momentum = (np.sqrt(L) - np.sqrt(mu)) / (np.sqrt(L) + np.sqrt(mu))
    W = np.zeros((K, model.n_params(design.data.d)))
    Y = W.copy()
    t = 0
    for t in range(1, max_rounds + 1):
        G = model.agent_grads_each(Y, design)
        W_next = Y - G / L
        Y = W_next + momentum * (W_next - W)
        W = W_next
        if t % 10 == 0:
            g = model.agent_grads_each(W, design)
            if np.max(np.einsum("ij,ij->i", g, g)) <= tol * tol:
                break
    return W, t
