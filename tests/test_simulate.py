"""The best-response search on the paper's Fig. 1 example, and how a deviation is scored."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from edgesim import scenario
from edgesim.agents import Amplify, Population
from edgesim.simulate import Simulation, run

FIG1 = Path(__file__).parents[1] / "scenarios" / "paper-fig1.toml"


def test_ffl_best_response_sees_gamma_up_to_64_and_finds_truthful_reports():
    """Under FFL, J_0 = P_0 + F_0(w*) is finite for every gamma up to 64 and lowest at 1.

    Above gamma = 2 agent 0's amplified reports make agent 1's Phase II problem
    diverge at eta2 = 1/((1-p_1) L_g); FFL restarts it at a smaller step, and
    J_0 itself never depended on that problem.
    """
    sc = scenario.load(FIG1, ["mechanism.kind=ffl", "best_response.objective=overall"])
    br = run(sc)["best_response"]
    grid = {g: v for g, v in br["grid"]}
    assert max(grid) == pytest.approx(64.0)
    assert all(v is not None and math.isfinite(v) for v in grid.values())
    assert grid[1.0] == br["truthful"]
    assert abs(math.log(br["gamma"])) <= sc.best_response.xtol
    assert br["gain"] == pytest.approx(0.0, abs=1e-9)
    big = [v for g, v in grid.items() if g > 2]
    assert len(big) >= 3 and min(big) > br["truthful"] + 0.5  # amplifying costs agent 0


def test_fedavg_best_response_still_amplifies():
    """FedAvg (objective: the test risk E_0) rewards amplification: gamma* far above 1."""
    sc = scenario.load(FIG1)
    assert sc.mechanism.kind == "fedavg" and sc.best_response.objective == "test"
    br = run(sc)["best_response"]
    assert br["gamma"] >= 16 and br["gain"] > 0.5


def test_objective_scores_only_the_deviators_own_terms():
    """Another agent's NaN payment leaves J_k finite; the agent's own NaN or a bad w* is inf."""
    sc = scenario.load(FIG1, ["mechanism.kind=ffl", "best_response.enabled=false"])
    sim = Simulation(sc)
    good = sim.run_mechanism(Population(2, {0: Amplify(4.0)}))
    J0 = sim.objective(good, 0, "overall")
    assert J0 == pytest.approx(2.41471, abs=1e-5)
    good.outcome.payments[1] = np.nan
    good.outcome.info["diverged"] = True
    assert sim.objective(good, 0, "overall") == J0
    assert math.isfinite(sim.objective(good, 0, "test"))
    assert sim.objective(good, 1, "overall") == math.inf
    assert sim.objective(good, 1, "overall-test") == math.inf
    good.outcome.model = np.full_like(good.outcome.model, np.nan)  # Phase I diverged
    assert sim.objective(good, 0, "overall") == math.inf
    assert sim.objective(good, 0, "test") == math.inf


def test_streamed_json_is_byte_for_byte_to_json(tmp_path):
    import io

    from edgesim.output import dump_json, to_json

    sc = scenario.load(None, ["agents.count=4", "network.fidelity=batched"])
    result = run(sc)
    buf = io.BytesIO()
    dump_json(result, buf)
    assert buf.getvalue() == to_json(result).encode()
    with pytest.raises(ValueError):  # NaN is refused, as by to_json
        dump_json({"x": math.nan}, io.BytesIO())
