"""The compiled reports of a one-block design are numpy's, bit for bit."""

import dataclasses

import numpy as np
import pytest

from edgesim.learning import compiled_reports as policy
from edgesim.learning.models import Logistic, Ridge
from tests.helpers import make_classification, make_regression


def numpy_rows(model, w, design, agents=None):
    """Return Model.agent_grads' rows through numpy (the compiled path turned off)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(type(model), "compiled_reports", False)
        return model.agent_grads(w, design, agents=agents)


def cases():
    """(model, design) pairs of one row block: ridge and logistic, 1 to 40 agents."""
    for K, d, seed in [(1, 1, 0), (2, 1, 1), (5, 3, 2), (40, 7, 3), (9, 2, 4), (17, 1, 6)]:
        yield Ridge(0.037), make_regression(K=K, d=d, seed=seed, sizes=(1, 80))
    for K, d, C, seed in [(3, 2, 2, 0), (7, 3, 3, 1), (30, 5, 4, 2), (12, 1, 3, 3)]:
        yield Logistic(0.05, n_classes=C), make_classification(K=K, d=d, C=C, seed=seed, n=40 * K)


@pytest.mark.parametrize("model,data", list(cases()))
def test_compiled_rows_are_the_numpy_rows_bit_for_bit(monkeypatch, model, data):
    """Every agent, subsets in any order, a given ``out``, models from 1e-3 to 1e3 in scale:
    the same bytes (an FMA or a reordered sum would change the last bits of some)."""
    monkeypatch.setattr(policy, "NUMBA_IMPORT_US", 0.0)
    design = model.design(data)
    assert len(design.blocks) == 1
    p = model.n_params(data.d)
    if design.equal_blocks:  # numpy's batched product: not reproduced, so not compiled
        assert model._compiled_rows(np.ones(p), design, None, None) is None
        return
    rng = np.random.default_rng(data.K)
    for scale in (1e-3, 1.0, 1e3):
        w = rng.normal(size=p) * scale
        got = model.agent_grads(w, design)
        assert policy._kernels is not None  # the compiled path ran
        assert got.tobytes() == numpy_rows(model, w, design).tobytes()
        some = rng.permutation(data.K)[: max(1, data.K // 2)]
        out = np.empty((some.size, p))
        assert model.agent_grads(w, design, out=out, agents=some) is out
        assert out.tobytes() == numpy_rows(model, w, design, agents=some).tobytes()


def test_compiled_rows_are_left_to_numpy_where_they_do_not_apply(monkeypatch):
    """A float32 design, a design of several row blocks and clipped reports take numpy's path."""
    monkeypatch.setattr(policy, "NUMBA_IMPORT_US", 0.0)
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


def test_a_process_loads_the_kernels_only_where_they_pay(monkeypatch):
    """Until the estimated saving reaches numba's import (a plain run), without numba loaded
    and without expect_many_runs (a search), the kernels are not loaded; with either, at once."""
    monkeypatch.setattr(policy, "_kernels", None)
    monkeypatch.setattr(policy, "_saved_us", 0.0)
    monkeypatch.setattr(policy, "_many_runs", False)
    monkeypatch.setattr(policy, "SAVED_PER_CALL_US", 10.0)
    monkeypatch.setattr(policy, "SAVED_PER_VALUE_US", 0.0)
    monkeypatch.setattr(policy, "NUMBA_IMPORT_US", 25.0)
    monkeypatch.setattr(policy, "_numba_loaded", lambda: False)
    model = Ridge(0.1)
    design = model.design(make_regression(K=3, d=2))
    w = np.ones(3)
    for _ in range(2):
        model.agent_grads(w, design)
        assert policy._kernels is None
    model.agent_grads(w, design)
    assert policy._kernels is not None
    for hint in ("many runs", "numba"):
        monkeypatch.setattr(policy, "_kernels", None)
        monkeypatch.setattr(policy, "_saved_us", 0.0)
        if hint == "many runs":
            policy.expect_many_runs()
        else:
            monkeypatch.setattr(policy, "_many_runs", False)
            monkeypatch.setattr(policy, "_numba_loaded", lambda: True)
        model.agent_grads(w, design)
        assert policy._kernels is not None
