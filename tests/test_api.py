"""The Python API: load_scenario, run, sweep, register_*."""

from __future__ import annotations

import json

import pytest

import edgesim
from edgesim.errors import ScenarioErrors
from edgesim.output import to_json
from edgesim.scenario import Scenario
from edgesim.simulate import run as simulate_run

TINY = {
    "seed": 3,
    "data": {"source": "synthetic", "samples": 120},
    "model": {"kind": "ridge"},
    "agents": {"count": 3},
    "mechanism": {"kind": "ffl", "phase1_rounds": 20, "phase2_rounds": 2, "exact_vcg": False},
    "output": {"local_baseline": False},
}


def test_load_scenario_from_dict_with_overrides():
    sc = edgesim.load_scenario(TINY, overrides={"agents.count": 4, "model.l2": 0.5})
    assert isinstance(sc, Scenario)
    assert (sc.agents.count, sc.model.l2, sc.seed) == (4, 0.5, 3)
    assert edgesim.load_scenario(TINY, ["agents.count=5"], seed=9).agents.count == 5
    assert TINY["agents"]["count"] == 3  # the caller's dict is left alone
    with pytest.raises(ScenarioErrors) as info:
        edgesim.load_scenario(TINY, {"agents.count": 0, "model.l2": -1})
    assert {e.key for e in info.value.errors} == {"agents.count", "model.l2"}


def test_load_scenario_by_path_and_name():
    assert edgesim.load_scenario().name == "quickstart"
    assert edgesim.load_scenario("quickstart").name == "quickstart"


def test_run_returns_a_result_with_the_cli_json():
    sc = edgesim.load_scenario(TINY)
    res = edgesim.run(sc)
    assert isinstance(res, edgesim.RunResult)
    assert res["K"] == 3 and "payments" in res and res.to_dict()["seed"] == 3
    assert res.to_json() == to_json(simulate_run(sc))
    assert json.loads(res.to_json()) == res.to_dict()
    assert edgesim.run(TINY, {"agents.count": 4})["K"] == 4
    with pytest.raises(TypeError):
        edgesim.run(sc, {"agents.count": 4})


def test_sweep_in_memory_and_on_disk(tmp_path):
    raw = dict(TINY, sweep={"seed": [0, 1], "agents.count": [3, 4]})
    res = edgesim.sweep(raw, workers=0)
    assert res.summary.ok == 4 and len(res.ok) == 4 and not res.failed
    rows = res.table()
    assert [(r["seed"], r["agents.count"]) for r in rows] == [(0, 3), (0, 4), (1, 3), (1, 4)]
    on_disk = edgesim.sweep(raw, tmp_path / "out", workers=0)
    assert [r["run_id"] for r in on_disk.records] == [r["run_id"] for r in res.records]
    assert [r["result"] for r in on_disk.records] == [r["result"] for r in res.records]
    again = edgesim.sweep(raw, tmp_path / "out", workers=0)
    assert again.summary.skipped == 4 and len(again.records) == 4
    assert "SweepResult(4 ok, 0 failed of 4)" == repr(again)


def test_sweep_records_are_this_plans_only(tmp_path):
    """A folder holding an earlier, larger grid gives back only the runs asked for now."""
    edgesim.sweep(dict(TINY, sweep={"seed": [0, 1, 2]}), tmp_path, workers=0)
    res = edgesim.sweep(dict(TINY, sweep={"seed": [2, 0]}), tmp_path, workers=0)
    assert res.summary.skipped == 2
    assert [(r["index"], r["result"]["seed"]) for r in res.records] == [(0, 2), (1, 0)]


def test_sweep_is_a_plain_function_beside_the_sweeps_module():
    import inspect

    import edgesim.sweeps as module

    assert inspect.isfunction(edgesim.sweep) and edgesim.sweep.__module__ == "edgesim"
    assert module.RESULTS == "results.jsonl"
