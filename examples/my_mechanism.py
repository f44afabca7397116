"""A mechanism of your own: Nesterov's accelerated gradient, checked, registered and run.

A mechanism is the server's algorithm written as a generator: it yields a
``Gather`` (send this model to the agents, collect their gradients) and
receives the replies. This one runs Nesterov's method for a mu-strongly
convex, L-smooth objective: a gradient step of 1/L from the extrapolated point
y, then y = w + beta (w - w_prev), with beta = (sqrt(kappa) - 1) /
(sqrt(kappa) + 1), kappa = L / mu (Nesterov 2004, scheme 2.2.19). It charges
nothing (``has_payments = False``), so ``exact_vcg = "auto"`` computes only
the optimum w^o to compare with. Its option ``momentum`` ("auto" or a number
in [0, 1)) is declared with ``edgesim.config.option`` in a frozen dataclass
that the function carries as its ``options`` attribute; a scenario sets it
in the ``[mechanism.nesterov]`` sub-table.

``edgesim.check_mechanism`` first runs it on a small problem in memory and on
a lossless network (it must yield only Gather steps, return an Outcome with
one payment per agent, and be deterministic). Then the same T rounds of
FedAvg (plain gradient descent, Alg. 1's Phase I) and of Nesterov run on one
problem; with the same number of rounds the accelerated method ends closer to
the optimum. It prints the check's report and each mechanism's optimality
gap F(w*) - F(w^o).

    python examples/my_mechanism.py [rounds]      # default 30 rounds
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np

import edgesim
from edgesim.config import option, resolved_options
from edgesim.mechanisms.base import Outcome
from edgesim.mechanisms.protocol import Gather


@dataclass(frozen=True)
class NesterovOptions:
    """The mechanism's own option: the ``[mechanism.nesterov]`` sub-table."""

    momentum: float | str = option(
        "auto",
        "extrapolation weight beta: 'auto' = (sqrt(kappa) - 1) / (sqrt(kappa) + 1), or a number",
        kinds=(float, str),
        choices=("auto",),
        ge=0.0,
        lt=1.0,
    )


def nesterov(ctx):
    """Nesterov's accelerated gradient: T1 rounds, one Gather of every agent's gradient each.

    ``ctx`` is an ``edgesim.mechanisms.base.ServerContext`` (K, weights p, L_g,
    mu, w0, cfg); returns an ``Outcome`` with zero payments.
    """
    momentum = resolved_options(ctx.cfg, "options").momentum
    if momentum == "auto":
        root = math.sqrt(ctx.L_g / ctx.mu)
        momentum = (root - 1) / (root + 1)
    T = ctx.cfg.phase1_rounds
    w = y = ctx.w0
    for _ in range(T):
        replies = yield Gather(y, ask="gradient")  # every agent's gradient at y
        w_next = y - (1 / ctx.L_g) * (ctx.p[replies.agents] @ replies.values)
        y, w = w_next + momentum * (w_next - w), w_next
    return Outcome(w, payments=np.zeros(ctx.K), phase1_rounds=T, info={"momentum": momentum})


nesterov.options = NesterovOptions  # its options: the [mechanism.nesterov] sub-table
nesterov.has_payments = False  # exact_vcg = "auto" then computes only the optimum


def scenario(mechanism: str, rounds: int) -> dict:
    """Return the example's problem: ridge regression over 6 agents, ``rounds`` rounds of ``mechanism``."""
    return {
        "seed": 5,
        "data": {"source": "synthetic", "samples": 600, "features": 8},
        "model": {"kind": "ridge", "l2": 0.05},
        "agents": {"count": 6},
        "mechanism": {"kind": mechanism, "phase1_rounds": rounds},
        "output": {"local_baseline": False},
    }


def main(argv: list[str] | None = None) -> dict:
    """Check, register and run the mechanism beside FedAvg; print and return the check and the results."""
    argv = sys.argv[1:] if argv is None else argv
    rounds = int(argv[0]) if argv else 30
    report = edgesim.check_mechanism(nesterov)
    print(f"check_mechanism: {report['steps']} steps, {len(report['payments'])} payments: passed")
    edgesim.register_mechanism("nesterov", nesterov)  # or register_mechanism(..., options=...)
    out = {"check": report}
    for mechanism in ("fedavg", "nesterov"):
        res = edgesim.run(scenario(mechanism, rounds))
        out[mechanism] = res
        print(f"{mechanism:8s} {rounds} rounds: optimality gap {res.model.optimality_gap:.3e}")
    return out


if __name__ == "__main__":
    main()
