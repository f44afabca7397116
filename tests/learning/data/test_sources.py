"""The synthetic source drawn block by block, and its float32 storage (``data.precision``)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from edgesim import scenario as scenario_mod
from edgesim.learning.data import DataConfig, FederatedDataset, build_dataset, sources
from edgesim.learning.data.sources import PRECISION_AUTO_BYTES, storage_dtype
from edgesim.learning.models import Ridge, add_intercept
from edgesim.simulate import Simulation, run


def _scale_scenario(K: int, precision: str) -> dict:
    """The scale benchmark's configuration (lossy Shannon cell, batched) at K agents, with
    epsilon = 1 so that T2 = 0 already at K = 10^4 (every payment still computed)."""
    return {
        "seed": 3,
        "data": {"source": "synthetic", "samples": 10 * K, "features": 20, "precision": precision},
        "agents": {"count": K},
        "model": {"kind": "ridge", "l2": 10.0},
        "mechanism": {
            "kind": "ffl",
            "phase1_rounds": "theory",
            "phase2_rounds": "theory",
            "exact_vcg": False,
            "epsilon": 1.0,
        },
        "network": {
            "fidelity": "batched",
            "radio": {
                "model": "shannon",
                "resource_blocks": "per-device",
                "loss": "bernoulli",
                "loss_prob": 0.02,
            },
        },
        "output": {"local_baseline": False},
    }


def test_blocks_draw_the_numbers_of_one_materialised_draw(monkeypatch):
    """Drawing block by block (any block size) gives the very numbers of one big draw:
    the numpy generator draws each value in turn, so the block path changed no result."""
    c = dataclasses.replace(DataConfig(), samples=5000, features=7, test_samples=3)
    one = build_dataset(c, 50, "regression", np.random.default_rng(4))
    monkeypatch.setattr(sources, "DRAW_BLOCK_ROWS", 37)
    blocks = build_dataset(c, 50, "regression", np.random.default_rng(4))
    for name in ("X", "y", "agent", "X_test", "y_test", "agent_test"):
        assert np.array_equal(getattr(one, name), getattr(blocks, name)), name
    # The same draws by hand, in the source's order: features of every row, then the noise.
    r = np.random.default_rng(4)
    w0, b0 = r.standard_normal(7), r.standard_normal()
    W = w0 + 1.0 * r.standard_normal((50, 7))
    M = 0.5 * r.standard_normal((50, 7))
    sizes = np.full(50, 100)
    sizes[r.permutation(50)[:0]] += 1
    agent = np.repeat(np.arange(50), sizes)
    X = r.standard_normal((5000, 7)) + M[agent]
    y = np.einsum("ij,ij->i", X, W[agent]) + b0 + 0.5 * r.standard_normal(5000)
    assert np.array_equal(one.X, X) and np.array_equal(one.y, y)


def test_the_design_is_the_sources_array_not_a_copy():
    c = dataclasses.replace(DataConfig(), samples=600, features=4)
    data = build_dataset(c, 6, "regression", np.random.default_rng(0))
    Xa = add_intercept(data.X)
    assert Xa is data.X.base and np.array_equal(Xa[:, -1], np.ones(600))
    assert np.array_equal(Xa[:, :4], data.X)
    other = np.ones((5, 3))  # any other array is copied
    assert add_intercept(other).base is None and add_intercept(other).shape == (5, 4)


def test_auto_precision_switches_to_float32_past_its_threshold():
    c = DataConfig()
    d = 20
    n_at = PRECISION_AUTO_BYTES // (8 * (d + 1))
    assert storage_dtype(c, n_at, d) is np.float64
    assert storage_dtype(c, n_at + 1, d) is np.float32
    assert storage_dtype(dataclasses.replace(c, precision="float32"), 10, d) is np.float32
    assert storage_dtype(dataclasses.replace(c, precision="float64"), 10**9, d) is np.float64


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_float32_storage_holds_the_float64_draws_rounded(task):
    c = dataclasses.replace(DataConfig(), samples=3000, features=5, test_samples=4)
    d64 = build_dataset(c, 30, task, np.random.default_rng(9))
    d32 = build_dataset(
        dataclasses.replace(c, precision="float32"), 30, task, np.random.default_rng(9)
    )
    assert d32.X.dtype == np.float32 and d32.X_test.dtype == np.float32
    assert np.array_equal(d32.X, d64.X.astype(np.float32))
    assert np.array_equal(d32.X_test, d64.X_test.astype(np.float32))
    assert np.array_equal(d32.agent, d64.agent)
    if task == "regression":  # labels from the unrounded features, then rounded
        assert np.array_equal(d32.y, d64.y.astype(np.float32))
    else:
        assert np.array_equal(d32.y, d64.y)
    assert d32.X.nbytes == d64.X.nbytes // 2


def test_float32_storage_gives_the_json_of_the_same_samples_held_in_float64():
    """The compact path loses nothing but the rounding of the samples: every computation
    converts row blocks to float64, so the same values held in float64 give the same
    JSON, byte for byte (the issue's K = 10^4, lossy batched cell, payments for all)."""
    K = 10**4
    sc = scenario_mod.from_dict(_scale_scenario(K, "float32"))
    sim = Simulation(sc)
    assert sim.data.X.dtype == np.float32 and sim.design.Xa.dtype == np.float32
    compact = run(sc, sim)
    D = sim.data
    wide = FederatedDataset(
        D.X.astype(np.float64),
        D.y.astype(np.float64),
        D.agent,
        D.X_test.astype(np.float64),
        D.y_test.astype(np.float64),
        D.agent_test,
        D.K,
        D.n_classes,
        D.description,
    )
    materialised = run(sc, Simulation(sc, data=wide))
    assert compact["communication"]["retransmissions"] > 0  # the lossy path ran
    assert json.dumps(compact, sort_keys=True) == json.dumps(materialised, sort_keys=True)


#: The stated bound: float32 samples move w*, the losses and the payments by at most this
#: much relative to the float64 run of the same draws (float32 rounds by 6e-8 relative).
FLOAT32_RELATIVE_BOUND = 1e-6


def test_float32_samples_move_the_results_within_the_stated_bound():
    K = 400
    res = {}
    for p in ("float32", "float64"):
        raw = _scale_scenario(K, p)
        raw["mechanism"].update(phase1_rounds=200, phase2_rounds=3, exact_vcg=True)
        res[p] = run(scenario_mod.from_dict(raw))
    a, b = res["float32"], res["float64"]
    assert a["iterations"] == b["iterations"] and a["communication"] == b["communication"]
    bound = FLOAT32_RELATIVE_BOUND
    assert a["model"]["global_loss"] == pytest.approx(b["model"]["global_loss"], rel=bound)
    assert a["constants"]["L_g"] == pytest.approx(b["constants"]["L_g"], rel=bound)
    for key in ("payments", "vcg_payments"):
        pa, pb = np.array(a[key]), np.array(b[key])
        assert 0 < np.max(np.abs(pa - pb)) <= bound * np.max(np.abs(pb))  # moved, within it
    losses = [np.array([ag["train_loss"] for ag in r["agents"]]) for r in (a, b)]
    assert np.max(np.abs(losses[0] - losses[1]) / np.abs(losses[1])) <= bound


def test_float32_ridge_solution_matches_scipy_on_the_stored_values():
    """Exactness is kept on the stored values: the closed form on float32 samples equals an
    independent float64 solve of the same (rounded) numbers."""
    from scipy.linalg import solve

    c = dataclasses.replace(DataConfig(), samples=800, features=6, precision="float32")
    data = build_dataset(c, 8, "regression", np.random.default_rng(2))
    model = Ridge(0.5)
    design = model.design(data)
    p = np.full(8, 1 / 8)
    w = model.solve(design, p)
    X = np.c_[data.X.astype(np.float64), np.ones(800)]
    s = p[data.agent] / design.n_k[data.agent]
    A = (X * s[:, None]).T @ X + 0.5 * np.eye(7)
    ref = solve(A, (X * s[:, None]).T @ data.y.astype(np.float64))
    assert np.allclose(w, ref, rtol=1e-12, atol=1e-12)
