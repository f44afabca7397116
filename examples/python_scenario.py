"""A scenario built entirely in Python, from the typed configuration classes.

No TOML: each table of a scenario file is a frozen dataclass exported by
``edgesim`` (``Scenario``, ``DataConfig``, ``MechanismConfig``,
``NetworkConfig``, ``RadioConfig`` ...; docs/api.md lists their fields). A field
left out takes its default, and ``edgesim.run`` validates the scenario as the
loader would. This one runs FFL (Alg. 1) for 8 agents over one LTE cell whose
devices share 4 resource blocks by OFDMA, with agent 2 amplifying its gradient
reports four-fold, and reads the result through ``RunResult``'s attributes.

It prints the simulated time per phase, the model's optimality gap, and the
amplifying agent's payment and overall loss beside a truthful agent's.

    python examples/python_scenario.py
"""

from __future__ import annotations

import sys

import edgesim


def scenario(K: int = 8) -> edgesim.Scenario:
    """Return the example's scenario: FFL, K agents, one OFDMA cell, agent 2 amplifying."""
    return edgesim.Scenario(
        name="python-scenario",
        seed=4,
        data=edgesim.DataConfig(source="synthetic", samples=80 * K, features=5, classes=3),
        model=edgesim.ModelConfig(kind="logistic", l2=0.1),
        agents=edgesim.AgentsConfig(
            count=K, strategy=[edgesim.StrategyConfig(agent=2, kind="amplify", gamma=4.0)]
        ),
        mechanism=edgesim.MechanismConfig(kind="ffl", phase1_rounds=150, phase2_rounds=5),
        network=edgesim.NetworkConfig(
            fidelity="batched",
            radio=edgesim.RadioConfig(
                bandwidth_bps=20e6, latency_s=0.004, access="ofdma", resource_blocks=4
            ),
        ),
        output=edgesim.OutputConfig(local_baseline=False),
    )


def main(argv: list[str] | None = None) -> edgesim.RunResult:
    """Run the scenario (``argv``: optionally the number of agents); print and return its result."""
    argv = sys.argv[1:] if argv is None else argv
    res = edgesim.run(scenario(int(argv[0]) if argv else 8))
    t = res.sim_time_s
    print(f"{res.name}: {res.mechanism} with K = {res.K}, {res.communication.messages_up} uplinks")
    print(f"simulated time  {t.total:.4f} s (phase I {t.phase1:.4f} s, phase II {t.phase2:.4f} s)")
    print(f"optimality gap  {res.model.optimality_gap:.3e}")
    for agent in (res.agents[0], res.agents[2]):
        print(
            f"agent {agent.id} ({agent.strategy}): payment {agent.payment:.5f},"
            f" overall loss {agent.overall_loss:.5f}"
        )
    return res


if __name__ == "__main__":
    main()
