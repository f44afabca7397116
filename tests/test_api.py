"""The Python API: load_scenario, run, sweep, register_*."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import edgesim
from edgesim.errors import ScenarioErrors
from edgesim.output import to_json
from edgesim.scenario import Scenario
from edgesim.simulate import run as simulate_run

REPO = Path(__file__).parents[1]

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


# ---------------------------------------------------------------------------- the typed API


def test_import_edgesim_is_cheap():
    """``import edgesim`` loads no other edgesim module and no numpy: the rest is lazy."""
    import subprocess
    import sys

    code = "import sys, edgesim; print(sorted(m for m in sys.modules if m.startswith(('edgesim', 'numpy'))))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "['edgesim', 'edgesim.version']"


def test_every_table_has_its_class_exported_from_edgesim():
    from edgesim.api_reference import config_tables

    tables = config_tables()
    assert len(tables) >= 18  # the Scenario, 17 tables and the strategy entries
    for cls, table in tables:
        assert getattr(edgesim, cls.__name__) is cls, table
        assert cls.__name__ in edgesim.__all__
    for name in edgesim.__all__:
        assert getattr(edgesim, name) is not None
        assert name in dir(edgesim)
    with pytest.raises(AttributeError, match="no attribute 'NoSuchConfig'"):
        edgesim.NoSuchConfig  # noqa: B018


def test_typed_objects_build_the_scenario_a_dict_does():
    typed = edgesim.Scenario(
        seed=3,
        data=edgesim.DataConfig(source="synthetic", samples=120),
        model=edgesim.ModelConfig(kind="ridge"),
        agents=edgesim.AgentsConfig(count=3),
        mechanism=edgesim.MechanismConfig(
            kind="ffl", phase1_rounds=20, phase2_rounds=2, exact_vcg=False
        ),
        output=edgesim.OutputConfig(local_baseline=False),
    )
    assert typed == edgesim.load_scenario(TINY)
    assert edgesim.run(typed).to_json() == edgesim.run(TINY).to_json()


NETWORKED = dict(
    TINY, network={"fidelity": "events", "radio": {"loss": "bernoulli", "loss_prob": 0.1}}
)


def test_run_result_attributes_are_the_dicts_sections():
    from edgesim.output import RunRecord
    from edgesim.result import Section

    res = edgesim.run(NETWORKED)
    data = res.to_dict()
    names = [f.name for f in dataclasses.fields(RunRecord)]
    assert len(names) >= 25
    for name in names:
        value = getattr(res, name)
        assert value == data.get(name), name
        if isinstance(data.get(name), dict):
            assert isinstance(value, Section) and value.to_dict() is data[name]
    # present here: a network; absent: DP-FFL's privacy (None, as the JSON leaves it out)
    assert res.network.fidelity == "events" and res.network.transmissions > 0
    assert res.privacy is None and "privacy" not in res
    assert res.sim_time_s.total == data["sim_time_s"]["total"] > 0
    assert res.agents[1].payment == data["payments"][1] == data["agents"][1]["payment"]
    assert res.agents[1].network.messages_up == data["agents"][1]["network"]["messages_up"]
    assert res.model.exact_vcg == data["model"]["exact_vcg"]
    assert dict(res.iterations) == data["iterations"]


def test_a_result_section_is_read_only_and_names_its_fields():
    res = edgesim.run(TINY)
    with pytest.raises(AttributeError, match="no field 'global_los' here .*global_loss"):
        res.model.global_los  # noqa: B018
    with pytest.raises(AttributeError, match="read-only"):
        res.model.global_loss = 0.0
    with pytest.raises(TypeError):
        res.model["global_loss"] = 0.0
    assert "global_loss" in dir(res.model)
    assert res.to_dict()["model"]["global_loss"] == res["model"]["global_loss"]


def test_api_reference_is_current():
    from edgesim.api_reference import api_markdown

    text = (REPO / "docs" / "api.md").read_text()
    assert text == api_markdown(), "run: python -m edgesim.api_reference > docs/api.md"
    for name in ("edgesim.run", "edgesim.RunResult", "edgesim.RadioConfig", "register_access"):
        assert f"`{name}" in text or name in text
