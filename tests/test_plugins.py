"""Scripting your own parts: a researcher's strategy and mechanism from their own module."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

import edgesim
from edgesim import sweeps as sw
from edgesim.cli import main

#: The walkthrough module of docs/extending.md: a free-rider that saves compute and reports a scaled-down
#: gradient, and a custom mechanism.
MODULE = '''
import numpy as np

from edgesim.agents import Strategy


class FreeRider(Strategy):
    """Report gamma times the true gradient (gamma < 1: pretend to have less to add)."""

    kind = "free-rider"

    def __init__(self, cfg):
        self.scale = cfg.gamma

    def gradients(self, rows, phase, rng):
        return self.scale * rows

    def describe(self):
        return f"free-rider(scale={self.scale:g})"


def half_fedavg(ctx):
    """FedAvg with half the Phase I rounds: a custom mechanism from the same module."""
    from dataclasses import replace

    from edgesim.mechanisms.fedavg import fedavg

    rounds = ctx.cfg.phase1_rounds // 2
    ctx.cfg = replace(ctx.cfg, phase1_rounds=rounds)
    return (yield from fedavg(ctx))
'''

SCENARIO = """\
seed = 2
[data]
source = "synthetic"
samples = 150
[model]
kind = "ridge"
[agents]
count = 3
[[agents.strategy]]
agent = 1
kind = "my_freeride_mod:FreeRider"
gamma = 0.1
[mechanism]
kind = "ffl"
phase1_rounds = 30
phase2_rounds = 3
[output]
local_baseline = false
"""


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    (tmp_path / "my_freeride_mod.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    yield tmp_path
    sys.modules.pop("my_freeride_mod", None)


def test_custom_strategy_from_toml_end_to_end(plugin, capsys):
    p = plugin / "s.toml"
    p.write_text(SCENARIO)
    out = plugin / "r.json"
    assert main(["run", str(p), "--json", str(out), "--quiet"]) == 0
    result = json.loads(out.read_text())
    assert result["agents"][1]["strategy"] == "free-rider(scale=0.1)"
    truthful = edgesim.run(p, {"agents.strategy": []})
    assert result["payments"] != truthful["payments"]
    assert result["model"]["global_loss"] != truthful["model"]["global_loss"]


def test_custom_mechanism_module_function(plugin):
    res = edgesim.run(
        plugin / "s.toml" if (plugin / "s.toml").exists() else _write(plugin),
        {"mechanism.kind": "my_freeride_mod:half_fedavg"},
    )
    assert res["iterations"]["phase1"] == 15 and res["mechanism"] == "my_freeride_mod:half_fedavg"


def _write(folder):
    p = folder / "s.toml"
    p.write_text(SCENARIO)
    return p


def test_custom_parts_in_a_process_pool_sweep(plugin):
    p = _write(plugin)
    p.write_text(SCENARIO + '[sweep]\n"agents.strategy[0].gamma" = [0.1, 0.5]\nseed = [0, 1]\n')
    out = plugin / "runs"
    summary = sw.run_sweep(edgesim.load_sweep(p), out, workers=2)
    assert (summary.ok, summary.failed) == (4, 0)
    recs = sw.load_records(out)
    assert {r["result"]["agents"][1]["strategy"] for r in recs} == {
        "free-rider(scale=0.1)",
        "free-rider(scale=0.5)",
    }


def test_registered_by_name(plugin):
    import my_freeride_mod

    edgesim.register_strategy("test-free-rider", my_freeride_mod.FreeRider)
    edgesim.register_mechanism("test-half-fedavg", my_freeride_mod.half_fedavg)
    raw = {
        "data": {"source": "synthetic", "samples": 120},
        "model": {"kind": "ridge"},
        "agents": {"count": 3, "strategy": [{"agent": 0, "kind": "test-free-rider", "gamma": 0.5}]},
        "mechanism": {"kind": "test-half-fedavg", "phase1_rounds": 10},
        "output": {"local_baseline": False},
    }
    res = edgesim.run(raw)
    assert res["iterations"]["phase1"] == 5
    assert res["agents"][0]["strategy"] == "free-rider(scale=0.5)"


def test_a_missing_plugin_module_is_one_line_exit_2(tmp_path, capsys):
    p = tmp_path / "s.toml"
    p.write_text(SCENARIO.replace("my_freeride_mod", "not_installed_mod_xyz"))
    code = main(["run", str(p)])
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("edgesim: error: agents.strategy[0].kind (line 11): cannot import")
