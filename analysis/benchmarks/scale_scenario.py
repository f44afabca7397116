"""The FFL scale scenario the benchmarks share: synthetic ridge, 10 samples of d = 20 per agent.

``bench_learning.py``, ``bench_network.py``, ``bench_scale.py`` and
``bench_memory.py`` each run it with their own network and output tables.
Imported as ``from scale_scenario import ...`` (the scripts' folder is on
``sys.path``).
"""

from __future__ import annotations

SAMPLES_PER_AGENT = 10
FEATURES = 20


def ffl_scale_scenario(
    K: int,
    *,
    l2: float = 10.0,
    epsilon: float = 0.1,
    network: dict | None = None,
    data: dict | None = None,
    output: dict | None = None,
) -> dict:
    """Return the scenario tables (a dict for ``edgesim.scenario.from_dict``) at K agents.

    FFL on the ``synthetic`` regression source, :data:`SAMPLES_PER_AGENT`
    samples of :data:`FEATURES` features per agent, ridge ``l2``, Theorem 1's
    rounds (``phase1_rounds = phase2_rounds = "theory"``), payment accuracy
    ``epsilon``, ``exact_vcg = false``, ``local_baseline = false``, seed 0.
    With ridge ``l2 = 10`` T1 is about 60-80 rounds and ``epsilon = 0.1`` gives
    T2 = 0 from K of about 2e4 on (``bench_learning.py`` explains both).
    ``network`` is the ``[network]`` table (absent: the default);
    ``data`` and ``output`` add to theirs.
    """
    tables = {
        "seed": 0,
        "data": {
            "source": "synthetic",
            "samples": SAMPLES_PER_AGENT * K,
            "features": FEATURES,
            **(data or {}),
        },
        "agents": {"count": K},
        "model": {"kind": "ridge", "l2": l2},
        "mechanism": {
            "kind": "ffl",
            "phase1_rounds": "theory",
            "phase2_rounds": "theory",
            "exact_vcg": False,
            "epsilon": epsilon,
        },
        "output": {"local_baseline": False, **(output or {})},
    }
    if network is not None:
        tables["network"] = network
    return tables


#: Issue 32's FFL at K = 200: logistic regression on 2 000 synthetic samples, T1 = 20, T2 = 3
#: (with the stopping rule), a Shannon cell of 200 OFDMA blocks, 5 % Bernoulli loss with ARQ,
#: batched (bench_plan.py and bench_exchange.py).
FFL_K200 = {
    "name": "ffl-k200",
    "seed": 0,
    "data": {"source": "synthetic", "samples": 2000},
    "model": {"kind": "logistic"},
    "agents": {"count": 200},
    "mechanism": {"kind": "ffl", "phase1_rounds": 20, "phase2_rounds": 3},
    "network": {
        "fidelity": "batched",
        "radio": {
            "model": "shannon",
            "access": "ofdma",
            "resource_blocks": 200,
            "loss": "bernoulli",
            "loss_prob": 0.05,
        },
    },
}
