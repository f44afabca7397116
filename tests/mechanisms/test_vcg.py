"""Exact VCG against an independent least-squares computation; scalable VCG (Definition 2)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from edgesim.learning.models import Logistic, Ridge
from edgesim.mechanisms.vcg import balanced_clusters, solve_weighted, vcg_payments
from tests.helpers import make_classification, make_regression


def _ridge_by_lstsq(data, weights, l2):
    """argmin sum_k weights_k F_k by an augmented least-squares system (no normal equations)."""
    rows, rhs = [], []
    for k in np.flatnonzero(weights):
        X, y = data.agent_rows(k)
        x1 = np.hstack([X, np.ones((len(X), 1))])
        s = np.sqrt(weights[k] / len(X))
        rows.append(s * x1)
        rhs.append(s * y)
    dprime = data.d + 1
    rows.append(np.sqrt(l2 * weights.sum()) * np.eye(dprime))
    rhs.append(np.zeros(dprime))
    return np.linalg.lstsq(np.vstack(rows), np.concatenate(rhs), rcond=None)[0]


def _F(data, k, w, l2):
    X, y = data.agent_rows(k)
    x1 = np.hstack([X, np.ones((len(X), 1))])
    return np.mean(0.5 * (x1 @ w - y) ** 2) + 0.5 * l2 * w @ w


def test_ridge_vcg_equals_independent_closed_form():
    data = make_regression(K=5, seed=3)
    l2 = 0.1
    p = np.full(5, 0.2)
    m = Ridge(l2)
    _, P = vcg_payments(m, m.design(data), p)
    w_o = _ridge_by_lstsq(data, p, l2)
    for k in range(5):
        others = p.copy()
        others[k] = 0
        w_k = _ridge_by_lstsq(data, others, l2)
        H = lambda w, k=k: sum(p[j] * _F(data, j, w, l2) for j in range(5) if j != k)  # noqa: E731
        expect = (H(w_o) - H(w_k)) / p[k]
        assert P[k] == pytest.approx(expect, rel=1e-9)
        assert P[k] >= 0


def test_logistic_solver_reaches_the_optimum():
    data = make_classification(K=6, seed=1)
    m = Logistic(0.05, True, 3)
    des = m.design(data)
    p = np.full(6, 1 / 6)
    w = solve_weighted(m, des, p)
    assert np.linalg.norm(m.grad(w, des, p)) < 1e-8


def _payments_with_rounding_moved(monkeypatch, m, des, p):
    """Exact VCG's payments, then again with the loss (not its gradient) perturbed by 1e-14
    relative, deterministically in w: as another BLAS would round it."""
    clean = vcg_payments(m, des, p)[1]
    exact = type(m).loss_and_grad

    def rounded_otherwise(self, w, design, weights):
        f, g = exact(self, w, design, weights)
        return f * (1 + 1e-14 * (zlib.crc32(w.tobytes()) % 1000 / 1000 - 0.5)), g

    monkeypatch.setattr(type(m), "loss_and_grad", rounded_otherwise)
    moved = vcg_payments(m, des, p)[1]
    monkeypatch.setattr(type(m), "loss_and_grad", exact)
    return np.max(np.abs(moved - clean) / np.abs(clean))


def test_logistic_payments_do_not_depend_on_where_lbfgs_stopped(monkeypatch):
    """L-BFGS-B stops where F no longer falls in its last bits, so the loss's rounding decides
    where; a payment's error is first order in w^o's. The Newton-polished w^o makes payments
    agree to 1e-10 when the rounding moves; unpolished they moved by more than 1e-8 (6e-8 between
    two numpy/scipy builds on paper-fig5-privacy)."""
    import edgesim.mechanisms.vcg as vcg_module

    data = make_classification(K=8, d=10, C=4, seed=0, n=800)
    m = Logistic(0.01, True, 4)
    des = m.design(data)
    p = data.n_k / data.n
    assert _payments_with_rounding_moved(monkeypatch, m, des, p) < 1e-10
    w_o = vcg_module.solve_optimum(m, des, p)
    assert np.linalg.norm(m.grad(w_o, des, p)) < 1e-14
    monkeypatch.setattr(vcg_module, "POLISH_STEPS", 0)
    assert _payments_with_rounding_moved(monkeypatch, m, des, p) > 1e-8


def test_balanced_clusters_have_floor_or_ceil_size():
    labels = balanced_clusters(18, 4, np.random.default_rng(0))
    sizes = np.bincount(labels)
    assert sorted(sizes.tolist()) == [4, 4, 5, 5]


@pytest.mark.parametrize("model_kind", ["ridge", "logistic"])
def test_scalable_vcg_error_falls_with_L_and_vanishes_at_K(model_kind):
    K = 12
    if model_kind == "ridge":
        data, m = make_regression(K=K, seed=5), Ridge(0.1)
    else:
        data, m = make_classification(K=K, seed=5), Logistic(0.05, True, 3)
    des = m.design(data)
    p = np.full(K, 1 / K)
    w_o, exact = vcg_payments(m, des, p)
    errors = {}
    for L in (2, 3, 6, 12):  # L = 1 leaves nobody to solve for (Definition 2 needs L >= 2)
        errs = []
        for seed in range(6):  # average over random cluster draws
            clusters = balanced_clusters(K, L, np.random.default_rng(seed))
            _, approx = vcg_payments(m, des, p, clusters, w_opt=w_o)
            errs.append(np.max(np.abs(approx - exact)))
        errors[L] = float(np.mean(errs))
    assert errors[12] <= 1e-9 * max(1.0, np.abs(exact).max())
    assert errors[2] > errors[3] > errors[6] > errors[12]


def test_batched_ridge_vcg_equals_one_solve_per_problem(monkeypatch):
    """The batched ridge path (rank-K downdates, 1/2 D^T A D) against K separate solves."""
    import edgesim.mechanisms.vcg as vcg_module

    data = make_regression(K=30, seed=8)
    m = Ridge(0.2)
    des = m.design(data)
    p = data.n_k / data.n
    w_fast, fast = vcg_payments(m, des, p)
    monkeypatch.setattr(vcg_module, "RIDGE_BATCH_MAX", 0)
    w_slow, slow = vcg_payments(m, des, p)
    np.testing.assert_allclose(w_fast, w_slow, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fast, slow, rtol=1e-9)


def test_agent_grams_of_wide_blocks_take_one_product_per_agent(monkeypatch):
    """Past OUTER_MAX a block's Gram matrices are X_k^T X_k per agent, not per-row outer
    products (which took 30 GiB at K = 40, d = 1 000): the same matrices as numpy's."""
    import edgesim.mechanisms.vcg as vcg_module

    data = make_regression(K=7, seed=3)
    des = Ridge(0.2).design(data)
    by_outer = vcg_module._agent_grams(des)
    monkeypatch.setattr(vcg_module, "OUTER_MAX", 0)
    by_agent = vcg_module._agent_grams(des)
    Xa = np.column_stack([data.X, np.ones(data.n)])
    for k, (lo, hi) in enumerate(zip(data.offsets[:-1], data.offsets[1:], strict=True)):
        expected = Xa[lo:hi].T @ Xa[lo:hi] / (hi - lo)
        np.testing.assert_allclose(by_agent[k], expected, rtol=1e-12)
        np.testing.assert_allclose(by_outer[k], expected, rtol=1e-12)


def test_vcg_by_federated_runs_converges_to_exact_vcg_with_quadratic_messages():
    from edgesim.scenario import from_dict
    from edgesim.simulate import run

    sc = from_dict(
        {
            "data": {"source": "synthetic", "samples": 200},
            "model": {"kind": "ridge", "l2": 1.0},
            "agents": {"count": 5},
            "mechanism": {"kind": "vcg-federated", "phase1_rounds": 400, "exact_vcg": True},
            "output": {"local_baseline": False},
        }
    )
    result = run(sc)
    assert result["payment_error_rel_max"] < 1e-6
    K, T1 = 5, 400
    # K T1 + K (losses at w*) + K runs of (K - 1) (T1 + 1) messages, each direction.
    assert result["communication"]["messages_up"] == K * T1 + K + K * (K - 1) * (T1 + 1)


def test_vcg_by_federated_runs_aggregates_every_run_securely_when_asked():
    """With secure aggregation all K + 1 trainings send only sums; the payments do not move."""
    from edgesim.scenario import from_dict
    from edgesim.simulate import Simulation, run

    K, T1 = 4, 30
    raw = {
        "data": {"source": "synthetic", "samples": 160},
        "model": {"kind": "ridge", "l2": 1.0},
        "agents": {"count": K},
        "mechanism": {"kind": "vcg-federated", "phase1_rounds": T1},
        "network": {"fidelity": "batched", "secagg": {"masking": "skip"}},
        "output": {"local_baseline": False},
    }
    plain = run(from_dict(raw))
    raw["mechanism"]["secure_aggregation"] = True
    sc = from_dict(raw)
    sim = Simulation(sc)
    secure = run(sc, sim)
    rows = sim.last_trace.rows
    masked = [
        ph for ph, st in zip(rows["phase"], rows["stage"], strict=True) if st == "masked_input"
    ]
    assert masked.count("phase1") == T1 and masked.count("phase2") == K * T1
    np.testing.assert_allclose(secure["payments"], plain["payments"], rtol=1e-6)
