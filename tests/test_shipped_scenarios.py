"""Every shipped scenario validates; each runs at a reduced size."""

from pathlib import Path

import pytest

from edgesim import scenario
from edgesim.simulate import run

SHIPPED = sorted((Path(__file__).parents[1] / "scenarios").glob("*.toml"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_scenario_runs_reduced(path):
    smaller = [o for o in REDUCED.get(path.stem, []) if not o.startswith("sweep.")]
    smaller += SINGLE_REDUCED.get(path.stem, [])
    sc = scenario.load(
        path, ["mechanism.phase1_rounds=300", "best_response.enabled=false", *smaller]
    )
    result = run(sc)
    assert result["K"] == sc.agents.count and not result["diverged"]


#: Extra reductions of single runs (network scenarios simulate every message).
SINGLE_REDUCED = {
    "hierarchical-edge": ["mechanism.phase1_rounds=20", "mechanism.phase2_rounds=2"],
    "lossy-wifi": ["mechanism.phase1_rounds=60"],
}


def test_there_are_shipped_scenarios():
    assert SHIPPED


# ---------------------------------------------------------------------------- sweeps

#: How CI runs each shipped sweep at a reduced size (every run of the full sweep is validated).
REDUCED = {
    "paper-fig3-samples": ["sweep.data.samples=[300]", "sweep.seed=[0]"],
    "paper-fig4-noniid": [
        "data.samples=300",
        "sweep.data.partition.delta=[0.5]",
        "sweep.seed=[0]",
    ],
    "paper-fig5-privacy": [
        "data.samples=300",
        "sweep.mechanism.alpha=[0.1, 1.0]",
        "sweep.seed=[0]",
    ],
    "dp-ffl-privacy": [
        "data.samples=500",
        "sweep.mechanism.alpha=[0.1]",
        "sweep.mechanism.clusters=[2, 50]",
        "sweep.seed=[0]",
    ],
    "churn-deadline": ["agents.count=20", "data.samples=1000", 'sweep.mechanism.kind=["ffl"]'],
    "comm-vs-k": [
        'sweep.zip=[{"mechanism.kind" = ["fedavg", "ffl", "dp-ffl", "vcg-federated"],'
        ' "agents.count" = [10, 20, 30, 40], "data.samples" = [100, 200, 300, 400]}]'
    ],
}
SMALLER = ["mechanism.phase1_rounds=20", "mechanism.phase2_rounds=2", "mechanism.local_rounds=200"]
SWEEPS = [p for p in SHIPPED if scenario.load_sweep(p).axes]


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_run_of_every_shipped_scenario_validates(path):
    plan = scenario.load_sweep(path)
    assert plan.runs
    assert scenario.describe(path), "the header comment's first line is the listing's line"


def test_reduced_sizes_name_shipped_sweeps():
    assert set(REDUCED) <= {p.stem for p in SWEEPS}


def _first_points(path) -> list:
    """Overrides keeping only the first point of every axis (for sweeps not in REDUCED)."""
    plan = scenario.load_sweep(path)
    plain = [(f"sweep.{a.keys[0]}", [a.points[0][0]]) for a in plan.axes if not a.zip]
    zips = [{k: [v] for k, v in zip(a.keys, a.points[0], strict=True)} for a in plan.axes if a.zip]
    return plain + ([("sweep.zip", zips)] if zips else [])


@pytest.mark.slow
@pytest.mark.parametrize("path", SWEEPS, ids=[p.stem for p in SWEEPS])
def test_shipped_sweep_runs_reduced(path):
    from edgesim import sweeps as sweep

    overrides = REDUCED.get(path.stem) or _first_points(path)
    plan = scenario.load_sweep(path, overrides + SMALLER)
    assert 1 <= len(plan.runs) <= 8
    summary = sweep.run_sweep(plan, None, workers=0, keep=True)
    assert summary.failed == 0, [r["error"] for r in summary.records if r["status"] != "ok"]
    assert summary.ok == len(plan.runs)
    for rec in summary.records:
        assert not rec["result"]["diverged"]
