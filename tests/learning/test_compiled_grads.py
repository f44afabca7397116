"""The compiled ridge reports of a one-block design are numpy's, bit for bit."""

import dataclasses

import numpy as np
import pytest

from edgesim.learning import models
from edgesim.learning.models import Ridge
from tests.helpers import make_regression


def numpy_rows(model, w, design, agents=None):
    """Return Model.agent_grads' rows through numpy (the compiled path turned off)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Ridge, "_compiled_rows", lambda *a: None)
        return model.agent_grads(w, design, agents=agents)


@pytest.mark.parametrize(
    "K,d,seed", [(1, 1, 0), (2, 1, 1), (5, 3, 2), (40, 7, 3), (9, 2, 4), (3, 4, 5), (17, 1, 6)]
)
def test_compiled_rows_are_the_numpy_rows_bit_for_bit(monkeypatch, K, d, seed):
    """Every agent, subsets in any order, a given ``out``, models from 1e-3 to 1e3 in scale:
    the same bytes (an FMA or a reordered sum would change the last bits of some)."""
    monkeypatch.setattr(models, "COMPILED_REPORTS_FROM", 0)
    data = make_regression(K=K, d=d, seed=seed, sizes=(1, 80))
    model = Ridge(0.037)
    design = model.design(data)
    assert len(design.blocks) == 1
    if design.equal_blocks:  # numpy's batched product: not reproduced, so not compiled
        assert model._compiled_rows(np.ones(d + 1), design, None, None) is None
        return
    rng = np.random.default_rng(seed)
    for scale in (1e-3, 1.0, 1e3):
        w = rng.normal(size=model.n_params(d)) * scale
        got = model.agent_grads(w, design)
        assert models._ridge_rows is not None  # the compiled path ran
        assert got.tobytes() == numpy_rows(model, w, design).tobytes()
        some = rng.permutation(K)[: max(1, K // 2)]
        out = np.empty((some.size, w.size))
        assert model.agent_grads(w, design, out=out, agents=some) is out
        assert out.tobytes() == numpy_rows(model, w, design, agents=some).tobytes()


def test_compiled_rows_are_left_to_numpy_where_they_do_not_apply(monkeypatch):
    """A float32 design, a design of several row blocks and clipped reports take numpy's path."""
    monkeypatch.setattr(models, "COMPILED_REPORTS_FROM", 0)
    model = Ridge(0.1)
    design = model.design(make_regression(K=4, d=2))
    w = np.ones(3)
    assert model._compiled_rows(w, design, None, None) is not None
    f32 = dataclasses.replace(design, Xa=design.Xa.astype(np.float32))
    assert model._compiled_rows(w, f32, None, None) is None
    big = model.design(make_regression(K=4, d=2, sizes=(2100, 2101)))
    assert len(big.blocks) == 2 and model._compiled_rows(w, big, None, None) is None
    calls = []
    monkeypatch.setattr(Ridge, "_compiled_rows", lambda *a: calls.append(a))
    model.agent_grads(w, design, clip_norm=1.0)
    assert calls == []


def test_a_process_loads_the_kernel_only_after_many_reports(monkeypatch):
    """Below COMPILED_REPORTS_FROM one-block reports (a plain run) numba is not loaded."""
    monkeypatch.setattr(models, "_ridge_rows", None)
    monkeypatch.setattr(models, "_small_reports", 0)
    monkeypatch.setattr(models, "COMPILED_REPORTS_FROM", 3)
    monkeypatch.delitem(__import__("sys").modules, models._COMPILED_GRADS, raising=False)
    model = Ridge(0.1)
    design = model.design(make_regression(K=3, d=2))
    w = np.ones(3)
    for _ in range(2):
        model.agent_grads(w, design)
        assert models._ridge_rows is None
    model.agent_grads(w, design)
    assert models._ridge_rows is not None
