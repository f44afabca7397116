"""Measure both FFL payment rules against exact VCG (slip 4, docs/paper.md) on a ridge problem.

Prints, for eta2 = c / L_g, the largest relative payment error and the Phase II
rounds it took (K = 5, heterogeneous data, Phase I converged, stopping rule at
epsilon = 1e-12). The table in docs/paper.md comes from this script:

    python analysis/payment_rules.py
"""

from __future__ import annotations

import numpy as np

from edgesim.agents import Population
from edgesim.learning.data import FederatedDataset
from edgesim.learning.models import Ridge
from edgesim.mechanisms import make_mechanism
from edgesim.mechanisms.base import MechanismConfig, ServerContext
from edgesim.mechanisms.driver import AgentSide
from edgesim.mechanisms.in_memory import run_in_memory
from edgesim.mechanisms.vcg import vcg_payments


def dataset(K: int = 5, d: int = 3, seed: int = 0) -> FederatedDataset:
    """Heterogeneous ridge data: each agent its own feature shift and true weights."""
    rng = np.random.default_rng(seed)
    n_k = rng.integers(20, 60, K)
    agent = np.repeat(np.arange(K), n_k)
    X = rng.normal(size=(agent.size, d)) + agent[:, None] * 0.3
    w = rng.normal(size=(K, d)) * 2
    y = np.einsum("ij,ij->i", X, w[agent]) + 0.1 * rng.normal(size=agent.size)
    return FederatedDataset.from_arrays(X, y, agent, K, 0)


def main() -> None:
    """Print the error/rounds table of both rules."""
    data = dataset()
    model = Ridge(0.1)
    design = model.design(data)
    K = data.K
    p = np.full(K, 1 / K)
    L_g = model.smoothness(design)
    _, vcg = vcg_payments(model, design, p)
    print(f"{'rule':10s} {'eta2 * L_g':>10s} {'max rel. error':>15s} {'phase II rounds':>16s}")
    for rule, factors in (("paper", (1.0, 0.1, 0.01)), ("trapezoid", (1.0, 0.1))):
        for c in factors:
            cfg = MechanismConfig(
                kind="ffl",
                phase1_rounds=3000,
                phase2_rounds=1,
                epsilon=1e-12,
                payment_rule=rule,
                eta2=c / L_g,
            )
            ctx = ServerContext(
                model,
                cfg,
                p,
                design.n_k,
                data.d,
                model.strong_convexity(),
                L_g,
                model.init(data.d),
                np.random.default_rng(1),
            )
            side = AgentSide(model, design, Population(K), np.random.default_rng(2))
            out, _ = run_in_memory(make_mechanism("ffl")(ctx), side, K)
            err = np.max(np.abs(out.payments - vcg) / np.abs(vcg))
            print(f"{rule:10s} {c:10g} {err:15.2e} {sum(out.phase2_rounds):16d}")


if __name__ == "__main__":
    main()
