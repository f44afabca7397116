"""Tests of edgesim.learning.data.cache: a process builds a dataset once for every run that
asks for the same data, within a bounded memory, without changing any result."""

from __future__ import annotations

import json

import numpy as np
import pytest

from edgesim import scenario
from edgesim.learning.data import cache
from edgesim.learning.models import Ridge
from edgesim.simulate import Simulation, run
from edgesim.sweeps import execute

SMALL = ["mechanism.phase1_rounds=20", "mechanism.local_rounds=60", "best_response.enabled=false"]


@pytest.fixture(autouse=True)
def empty_cache(monkeypatch):
    """Every test starts with an empty cache of the default size."""
    monkeypatch.delenv("EDGESIM_DATA_CACHE_MB", raising=False)
    cache.clear()
    yield
    cache.clear()


def fig1(*changes: str):
    return scenario.load("paper-fig1", [*SMALL, "data.test_samples=200", *changes])


def text(result: dict) -> str:
    return json.dumps({**result, "edgesim_version": "-"}, sort_keys=True)


def test_same_data_is_built_once_and_gives_the_same_results(monkeypatch):
    first = Simulation(fig1())
    again = Simulation(fig1("mechanism.kind=ffl"))  # another mechanism, the same data
    assert again.data is first.data and cache.kept()[0] == 1
    assert not first.data.X.flags.writeable and not first.data.y_test.flags.writeable
    other_seed = Simulation(fig1("seed=5"))
    assert other_seed.data is not first.data and cache.kept()[0] == 2
    assert not np.array_equal(other_seed.data.y, first.data.y)
    cached = [text(run(sc)) for sc in (fig1(), fig1("mechanism.kind=ffl"))]
    monkeypatch.setenv("EDGESIM_DATA_CACHE_MB", "0")  # no cache: every run builds its data
    cache.clear()
    assert text(run(fig1())) == cached[0]
    assert text(run(fig1("mechanism.kind=ffl"))) == cached[1]
    assert cache.kept() == (0, 0)


def test_l_g_and_local_models_are_computed_once_per_model(monkeypatch):
    calls = []
    smoothness = Ridge.smoothness

    def counted(self, *args, **kwargs):
        calls.append(args)
        return smoothness(self, *args, **kwargs)

    monkeypatch.setattr(Ridge, "smoothness", counted)
    one = Simulation(fig1())
    out = run(fig1(), one)
    n = len(calls)  # L_g, and the local models' own constant
    assert n >= 1 and one.local().flags.writeable is False
    two = Simulation(fig1("mechanism.kind=ffl"))
    assert text(run(fig1("mechanism.kind=ffl"), two)) != text(out)
    assert len(calls) == n and two.local() is one.local()
    Simulation(fig1("model.l2=0.02")).local()  # another model: computed again
    assert len(calls) > n


def test_reference_solves_are_computed_once_per_weights(monkeypatch):
    import edgesim.simulate as simulate

    calls = []
    solve = simulate.vcg_payments

    def counted(model, design, p):
        calls.append(p.copy())
        return solve(model, design, p)

    monkeypatch.setattr(simulate, "vcg_payments", counted)
    vcg = ("mechanism.kind=ffl", "mechanism.exact_vcg=true")
    first = run(fig1(*vcg, "mechanism.epsilon=0.01"))
    second = run(fig1(*vcg, "mechanism.epsilon=0.001"))  # another run, the same solves
    assert len(calls) == 1 and second["vcg_payments"] == first["vcg_payments"]
    run(fig1(*vcg, "agents.weights=equal"))  # other weights: solved again
    assert len(calls) == 2 and not np.array_equal(calls[0], calls[1])
    monkeypatch.setenv("EDGESIM_DATA_CACHE_MB", "0")
    assert text(run(fig1(*vcg, "mechanism.epsilon=0.001"))) == text(second)


def test_budget_and_least_recently_used_eviction(monkeypatch):
    monkeypatch.setattr(cache, "MAX_ENTRIES", 2)
    a, b = Simulation(fig1("seed=1")), Simulation(fig1("seed=2"))
    assert Simulation(fig1("seed=1")).data is a.data  # seed 1 used last: seed 2 goes first
    Simulation(fig1("seed=3"))
    assert cache.kept()[0] == 2
    assert Simulation(fig1("seed=1")).data is a.data
    assert Simulation(fig1("seed=2")).data is not b.data
    size = a.data.X.nbytes + a.data.y.nbytes + a.data.agent.nbytes
    size += a.data.X_test.nbytes + a.data.y_test.nbytes + a.data.agent_test.nbytes
    monkeypatch.setenv("EDGESIM_DATA_CACHE_MB", str(0.9 * size / 2**20))  # smaller than one
    cache.clear()
    big = Simulation(fig1())
    assert cache.kept() == (0, 0) and big.data.X.flags.writeable
    monkeypatch.setenv("EDGESIM_DATA_CACHE_MB", str(1.5 * size / 2**20))  # room for one
    Simulation(fig1("seed=1")), Simulation(fig1("seed=2"))
    assert cache.kept() == (1, size)


def test_a_run_that_clips_features_leaves_the_cached_data_alone():
    plain = Simulation(fig1("mechanism.kind=ffl"))
    before = plain.data.X.copy()
    clipped = Simulation(fig1("mechanism.kind=ffl", "mechanism.feature_bound=0.5"))
    assert clipped.data is not plain.data and np.abs(clipped.data.X).max() <= 0.5
    assert np.array_equal(plain.data.X, before) and before.max() > 0.5
    assert clipped._entry is None  # its L_g is its own


def test_an_edited_npz_file_is_read_again(tmp_path):
    path = tmp_path / "d.npz"
    agent = np.repeat(np.arange(2), 5)
    np.savez(path, X=np.ones((10, 2)), y=np.zeros(10), agent=agent)
    spec = {"data": {"source": "npz", "path": str(path)}, "model": {"kind": "ridge"}}
    spec |= {"agents": {"count": 2}, "mechanism": {"kind": "fedavg", "phase1_rounds": 3}}
    first = Simulation(scenario.from_dict(spec))
    assert Simulation(scenario.from_dict(spec)).data is first.data
    np.savez(path, X=2 * np.ones((10, 2)), y=np.zeros(10), agent=agent, extra=np.zeros(3))
    second = Simulation(scenario.from_dict(spec))
    assert second.data is not first.data and second.data.X.max() == 2.0


def test_a_sweep_worker_reuses_its_data():
    runs = [fig1(f"mechanism.epsilon={e}", "mechanism.kind=ffl") for e in (1e-2, 1e-3)]
    done = [execute(sc) for sc in runs]
    assert [d["status"] for d in done] == ["ok", "ok"] and cache.kept()[0] == 1
    cache.clear()
    assert execute(runs[1])["result"] == done[1]["result"]
