"""Every shipped scenario validates; each runs at a reduced size."""

from pathlib import Path

import pytest

from edgesim import scenario
from edgesim.simulate import run

SHIPPED = sorted((Path(__file__).parents[1] / "scenarios").glob("*.toml"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_scenario_runs_reduced(path):
    sc = scenario.load(path, ["mechanism.phase1_rounds=300", "best_response.enabled=false"])
    result = run(sc)
    assert result["K"] == sc.agents.count and not result["diverged"]


def test_there_are_shipped_scenarios():
    assert SHIPPED
