"""A strategy of your own: amplify the gradient reports in Phase I only, truthful afterwards.

A strategic agent may hope to pull the model its way (amplified reports in
Phase I, as the paper's manipulated FedAvg, Sec. III-B) while staying
truthful in Phase II, where FFL computes the payments. The strategy is a
subclass of ``edgesim.agents.Strategy`` that transforms its agent's truthful
reports (it sees the phase), and it declares its option ``gamma`` with
``edgesim.config.option``: a scenario then writes ``gamma`` in the agent's
``[[agents.strategy]]`` table, checked like every key.

The agent's overall loss (its payment plus its training loss, Definition 1)
is compared with what it gets by telling the truth, under FedAvg and under
FFL: amplifying pays under FedAvg, which charges nothing, and does not under
FFL, which is faithful (Sec. V, Prop. 5): its payment rises by more than its loss
falls. It prints the agent's payment, training loss and overall loss in each
of the four runs.

    python examples/my_strategy.py
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import edgesim
from edgesim.agents import Strategy
from edgesim.config import option, resolved_options

NAME = "phase-one-amplifier"
AGENT = 1


@dataclass(frozen=True)
class PhaseOneAmplifierOptions:
    """The strategy's option, written inline in its ``[[agents.strategy]]`` table."""

    gamma: float = option(4.0, "the factor multiplying the agent's Phase I gradients", gt=0.0)


class PhaseOneAmplifier(Strategy):
    """Report gamma times the true gradient in Phase I, the true one in Phase II."""

    kind = NAME

    def __init__(self, cfg):  # cfg: the agent's StrategyConfig; its options are ours
        self.gamma = resolved_options(cfg, "options").gamma

    def gradients(self, rows, phase, rng):
        """Return the reports of this strategy's agents: ``rows`` (m, p) scaled in Phase I."""
        return self.gamma * rows if phase == "phase1" else rows

    def describe(self):
        """Return the label the output shows in ``agents[k].strategy``."""
        return f"{NAME}(gamma={self.gamma:g})"


def scenario(mechanism: str, strategy: dict | None) -> dict:
    """Return the example's scenario: 4 agents, label-skewed data, ``strategy`` played by agent 1."""
    return {
        "seed": 2,
        "data": {
            "source": "synthetic",
            "samples": 400,
            "features": 5,
            "partition": {"kind": "label-skew", "delta": 0.3},
        },
        "model": {"kind": "logistic", "l2": 0.1},
        "agents": {"count": 4, "strategy": [{"agent": AGENT, **strategy}] if strategy else []},
        "mechanism": {"kind": mechanism, "phase1_rounds": 200, "phase2_rounds": 10},
        "output": {"local_baseline": False},
    }


def main(argv: list[str] | None = None) -> dict[tuple[str, str], edgesim.RunResult]:
    """Run both mechanisms with the agent truthful and strategic; print and return the four results."""
    argv = sys.argv[1:] if argv is None else argv
    gamma = float(argv[0]) if argv else 4.0
    edgesim.register_strategy(NAME, PhaseOneAmplifier, options=PhaseOneAmplifierOptions)
    results = {}
    print(
        f"{f'agent {AGENT} plays':30s} {'':6s} {'payment':>8s}  {'train loss':>10s}  {'overall loss':>12s}"
    )
    for mechanism in ("fedavg", "ffl"):
        for label, strategy in (("truthful", None), (NAME, {"kind": NAME, "gamma": gamma})):
            res = edgesim.run(scenario(mechanism, strategy))
            results[mechanism, label] = res
            a = res.agents[AGENT]
            print(
                f"{a.strategy:30s} {mechanism:6s} {a.payment:8.5f}  {a.train_loss:10.5f}"
                f"  {a.overall_loss:12.5f}"
            )
    return results


if __name__ == "__main__":
    main()
