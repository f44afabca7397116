"""Models: losses and gradients against finite differences and per-agent loops; mu and L_g."""

from __future__ import annotations

import numpy as np
import pytest

from edgesim.learning.models import Logistic, Ridge, make_model


def finite_difference(f, w, eps=1e-6):
    g = np.zeros_like(w)
    for i in range(w.size):
        e = np.zeros_like(w)
        e[i] = eps
        g[i] = (f(w + e) - f(w - e)) / (2 * eps)
    return g


@pytest.mark.parametrize("intercept", [True, False])
def test_ridge_gradient_matches_finite_differences(regression_data, intercept):
    m = Ridge(0.3, intercept)
    des = m.design(regression_data)
    w = np.random.default_rng(1).normal(size=m.n_params(regression_data.d))
    G = m.agent_grads(w, des)
    for k in range(des.K):
        num = finite_difference(lambda v, k=k: m.agent_losses(v, des)[k], w)
        np.testing.assert_allclose(G[k], num, atol=1e-6)


@pytest.mark.parametrize("intercept", [True, False])
def test_logistic_gradient_matches_finite_differences(classification_data, intercept):
    m = Logistic(0.05, intercept, classification_data.n_classes)
    des = m.design(classification_data)
    w = np.random.default_rng(2).normal(size=m.n_params(classification_data.d))
    G = m.agent_grads(w, des)
    for k in (0, 3, 9):
        num = finite_difference(lambda v, k=k: m.agent_losses(v, des)[k], w)
        np.testing.assert_allclose(G[k], num, atol=1e-6)


def test_losses_match_the_per_sample_definition(classification_data, regression_data):
    """F_k = mean over k's samples of the per-sample loss of docs/paper.md, written out by hand."""
    rng = np.random.default_rng(3)
    m = Ridge(0.2)
    des = m.design(regression_data)
    w = rng.normal(size=m.n_params(regression_data.d))
    X, y = regression_data.agent_rows(2)
    x1 = np.hstack([X, np.ones((len(X), 1))])
    expect = np.mean(0.5 * (x1 @ w - y) ** 2 + 0.5 * 0.2 * w @ w)
    assert m.agent_losses(w, des)[2] == pytest.approx(expect, rel=1e-12)

    C = classification_data.n_classes
    lg = Logistic(0.1, True, C)
    des = lg.design(classification_data)
    W = rng.normal(size=(classification_data.d + 1, C))
    X, y = classification_data.agent_rows(4)
    S = np.hstack([X, np.ones((len(X), 1))]) @ W
    nll = -(S[np.arange(len(y)), y] - np.log(np.exp(S).sum(axis=1)))
    expect = np.mean(nll) + 0.5 * 0.1 * np.sum(W * W)
    assert lg.agent_losses(W.ravel(), des)[4] == pytest.approx(expect, rel=1e-12)


def test_vectorised_grads_equal_a_loop_over_agents(classification_data):
    m = Logistic(0.05, True, 3)
    des = m.design(classification_data)
    w = np.random.default_rng(4).normal(size=m.n_params(classification_data.d))
    G = m.agent_grads(w, des)
    for k in range(des.K):
        sub = classification_data.subset([k])
        np.testing.assert_allclose(G[k], m.agent_grads(w, m.design(sub))[0], rtol=1e-12)
    W = np.random.default_rng(5).normal(size=(des.K, w.size))
    Ge = m.agent_grads_each(W, des)
    for k in range(des.K):
        np.testing.assert_allclose(Ge[k], m.agent_grads(W[k], des)[k], rtol=1e-12)
    np.testing.assert_allclose(
        m.agent_losses_each(W, des)[3], m.agent_losses(W[3], des)[3], rtol=1e-12
    )


def test_global_gradient_is_weighted_sum(regression_data):
    m = Ridge(0.1)
    des = m.design(regression_data)
    p = regression_data.n_k / regression_data.n
    w = np.ones(m.n_params(regression_data.d))
    num = finite_difference(lambda v: m.loss(v, des, p), w)
    np.testing.assert_allclose(m.grad(w, des, p), num, atol=1e-6)


def test_ridge_smoothness_is_the_largest_agent_hessian_eigenvalue(regression_data):
    """For ridge the Hessian of F_k is X_k^T X_k / n_k + l2 I: L_g is its top eigenvalue over k."""
    m = Ridge(0.1)
    des = m.design(regression_data)
    exact = 0.0
    for k in range(des.K):
        X, _ = regression_data.agent_rows(k)
        x1 = np.hstack([X, np.ones((len(X), 1))])
        exact = max(exact, np.linalg.eigvalsh(x1.T @ x1 / len(X)).max() + 0.1)
    assert m.smoothness(des) == pytest.approx(exact, rel=1e-6)
    assert m.smoothness(des, "sample") >= exact
    assert m.strong_convexity() == 0.1


def test_logistic_smoothness_bounds_the_hessian(classification_data):
    """Numerical Hessian of each F_k at random points never exceeds L_g."""
    m = Logistic(0.05, True, 3)
    des = m.design(classification_data)
    L = m.smoothness(des)
    rng = np.random.default_rng(6)
    for k in (0, 5):
        w = rng.normal(size=m.n_params(classification_data.d))
        H = np.column_stack(
            [
                finite_difference(lambda v, i=i, k=k: m.agent_grads(v, des)[k][i], w)
                for i in range(w.size)
            ]
        )
        assert np.linalg.eigvalsh(0.5 * (H + H.T)).max() <= L * (1 + 1e-6)


def test_ridge_closed_form_solves_the_weighted_problem(regression_data):
    m = Ridge(0.1)
    des = m.design(regression_data)
    weights = np.array([0.3, 0.0, 0.2, 0.1, 0.1])
    w = m.solve(des, weights)
    assert np.linalg.norm(weights @ m.agent_grads(w, des)) < 1e-10


def test_bad_model_settings():
    with pytest.raises(ValueError, match="l2"):
        Ridge(0.0)
    with pytest.raises(ValueError, match="classes"):
        Logistic(0.1, True, 1)
    with pytest.raises(ValueError, match="model.kind"):
        make_model("svm", 0.1, True, 0)


def test_equal_and_unequal_agent_blocks_give_the_same_gradients():
    """Equal-size agents take the batched (K, c, m) path, others the sparse one: same numbers."""
    from edgesim.learning.data import FederatedDataset

    rng = np.random.default_rng(7)
    K, c, d = 40, 6, 3
    X = rng.normal(size=(K * c, d))
    y = rng.integers(0, 3, K * c)
    agent = np.repeat(np.arange(K), c)
    equal = FederatedDataset.from_arrays(X, y, agent, K, 3)
    uneven = FederatedDataset.from_arrays(
        np.vstack([X, X[:1]]), np.append(y, y[0]), np.append(agent, K - 1), K, 3
    )
    for model in (Logistic(0.1, True, 3), Ridge(0.1)):
        w = rng.normal(size=model.n_params(d))
        g_equal = model.agent_grads(w, model.design(equal))
        g_uneven = model.agent_grads(w, model.design(uneven))
        np.testing.assert_allclose(g_equal[:-1], g_uneven[:-1], rtol=1e-12, atol=1e-14)
        for k in (0, 17):
            sub = equal.subset([k])
            np.testing.assert_allclose(
                g_equal[k], model.agent_grads(w, model.design(sub))[0], rtol=1e-12
            )


def test_smoothness_is_found_when_ones_is_the_small_eigenvector():
    """A +-1 feature with a negative mean beside the intercept: [[1, m], [m, 1]], m < 0.

    The all-ones start vector is then the eigenvector of the smallest eigenvalue; the
    estimate must still be the largest one.
    """
    from edgesim.learning.data import FederatedDataset

    rng = np.random.default_rng(0)
    x = np.where(rng.random(400) < 0.2, 1.0, -1.0)[:, None]
    data = FederatedDataset.from_arrays(x, rng.normal(size=400), np.repeat(np.arange(4), 100), 4, 0)
    m = Ridge(0.01)
    des = m.design(data)
    exact = max(
        np.linalg.eigvalsh(
            np.c_[xk, np.ones(len(xk))].T @ np.c_[xk, np.ones(len(xk))] / len(xk)
        ).max()
        for xk in (data.agent_rows(k)[0] for k in range(4))
    )
    assert m.smoothness(des) == pytest.approx(exact + 0.01, rel=1e-6)


@pytest.mark.parametrize("sizes", ["equal", "unequal", "fewer-than-features"])
def test_batched_top_eigenvalue_matches_eigvalsh(sizes):
    """Against LAPACK per agent; 'fewer-than-features' (3 rows in 6 dimensions) iterates on
    the 3 x 3 Gram matrices X_k X_k^T, which share the top eigenvalue."""
    from edgesim.learning.models import batched_top_eigenvalue

    rng = np.random.default_rng(7)
    K, d = 300, 6
    n_k = {"equal": np.full(K, 9), "unequal": rng.integers(3, 15, K)}.get(sizes, np.full(K, 3))
    scales = rng.uniform(0.5, 2.0, (K, d))  # each agent its own spectrum
    Xa = rng.standard_normal((n_k.sum(), d)) * np.repeat(scales, n_k, axis=0)
    starts = np.concatenate([[0], np.cumsum(n_k)[:-1]])
    exact = max(
        np.linalg.eigvalsh(Xa[s : s + n].T @ Xa[s : s + n] / n).max()
        for s, n in zip(starts, n_k, strict=True)
    )
    assert batched_top_eigenvalue(Xa, starts, n_k) == pytest.approx(exact, rel=1e-12)
    # Stored in float32: the same as the float64 copy of the same values, in small blocks.
    X32 = Xa.astype(np.float32)
    blocks = _blocks_of(np.append(starts, n_k.sum()), 20)
    wide = batched_top_eigenvalue(X32.astype(np.float64), starts, n_k, blocks=blocks)
    assert batched_top_eigenvalue(X32, starts, n_k, blocks=blocks) == wide


# ------------------------------------------------------------------- per-sample clipping


def per_sample_grads(model, w, Xa, y):
    """Every per-sample data gradient as an explicit (n, n_params) array (test reference)."""
    if model.kind == "ridge":
        return (Xa @ w - y)[:, None] * Xa
    S = Xa @ w.reshape(Xa.shape[1], -1)
    P = np.exp(S - S.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    P[np.arange(y.size), y] -= 1.0
    return np.einsum("ij,ic->ijc", Xa, P).reshape(y.size, -1)


@pytest.mark.parametrize("kind", ["ridge", "logistic"])
@pytest.mark.parametrize("C", [0.05, 1.0, 1e6])
def test_clipped_gradients_are_means_of_clipped_per_sample_gradients(kind, C):
    from tests.helpers import make_classification, make_regression

    data = make_regression(K=6, seed=3) if kind == "ridge" else make_classification(K=6, seed=3)
    m = make_model(kind, 0.05, True, data.n_classes)
    des = m.design(data)
    w = np.random.default_rng(4).normal(size=m.n_params(data.d))
    G = per_sample_grads(m, w, des.Xa, data.y)
    norms = np.linalg.norm(G, axis=1)
    Gc = G * np.minimum(1.0, C / norms)[:, None]
    assert np.all(np.linalg.norm(Gc, axis=1) <= C * (1 + 1e-12))
    clipped = np.zeros(data.K)
    got = m.agent_grads(w, des, clip_norm=C, clipped=clipped)
    for k in range(data.K):
        rows = data.agent == k
        np.testing.assert_allclose(got[k], Gc[rows].mean(axis=0) + m.l2 * w, rtol=1e-10, atol=1e-13)
        assert clipped[k] == np.count_nonzero(norms[rows] > C)
    if C == 1e6:  # nothing to clip: exactly the unclipped gradient
        np.testing.assert_array_equal(got, m.agent_grads(w, des))


@pytest.mark.parametrize("kind", ["ridge", "logistic"])
def test_clipped_losses_clip_each_sample_to_the_bound(kind):
    from tests.helpers import make_classification, make_regression

    data = make_regression(K=4, seed=5) if kind == "ridge" else make_classification(K=4, seed=5)
    m = make_model(kind, 0.05, True, data.n_classes)
    des = m.design(data)
    w = np.random.default_rng(6).normal(size=m.n_params(data.d))
    per = m.sample_losses(w, des.Xa, data.y)
    B = float(np.median(per))  # half the samples clip
    clipped = np.zeros(data.K)
    got = m.agent_losses(w, des, loss_bound=B, clipped=clipped)
    for k in range(data.K):
        rows = data.agent == k
        expect = np.minimum(per[rows], B).mean() + 0.5 * m.l2 * w @ w
        assert got[k] == pytest.approx(expect, rel=1e-12)
        assert clipped[k] == np.count_nonzero(per[rows] > B)
    assert 0 < clipped.sum() < data.n


# ------------------------------------------------------------------- reports at scale


def _many_blocks(data, model, rows=64):
    """The design of ``data`` cut into row blocks of about ``rows`` rows (many blocks)."""
    import dataclasses

    return dataclasses.replace(model.design(data), blocks=_blocks_of(data.offsets, rows))


def _blocks_of(offsets, rows):
    from edgesim.learning import segments

    old = segments.BLOCK_ROWS
    segments.BLOCK_ROWS = rows
    try:
        return segments.row_blocks(np.asarray(offsets))
    finally:
        segments.BLOCK_ROWS = old


@pytest.mark.parametrize("kind", ["ridge", "logistic"])
def test_subset_reports_into_a_buffer_are_the_rows_of_all_reports(
    kind, regression_data, classification_data
):
    data = regression_data if kind == "ridge" else classification_data
    model = make_model(kind, 0.1, True, data.n_classes)
    des = _many_blocks(data, model, rows=16)
    w = 0.1 * np.random.default_rng(3).standard_normal(model.n_params(data.d))
    full = model.agent_grads(w, des)
    for agents in (np.array([1, 3]), np.arange(1, data.K), np.array([data.K - 1])):
        buf = np.full((agents.size, w.size), np.nan)
        got = model.agent_grads(w, des, out=buf, agents=agents)
        assert got is buf and np.array_equal(got, full[agents])
    shuffled = np.array([3, 1])  # unsorted: gathered from all
    assert np.array_equal(model.agent_grads(w, des, agents=shuffled), full[shuffled])
    column_major = np.full((w.size, data.K), np.nan).T  # a buffer in Fortran order
    assert np.array_equal(model.agent_grads(w, des, out=column_major), full)


def test_reports_in_threads_are_the_same_bits(monkeypatch):
    from tests.helpers import make_classification

    data = make_classification(K=60, n=1200)
    model = make_model("logistic", 0.1, True, data.n_classes)
    des = _many_blocks(data, model, rows=4)
    assert len(des.blocks) == 60  # one agent a block: 30 chunks of 2 for the threads
    w = 0.1 * np.random.default_rng(5).standard_normal(model.n_params(data.d))
    monkeypatch.setenv("EDGESIM_THREADS", "1")
    one = model.agent_grads(w, des)
    monkeypatch.setenv("EDGESIM_THREADS", "3")
    monkeypatch.setattr("edgesim.learning.segments.THREAD_CHUNK_BLOCKS", 2)
    assert np.array_equal(model.agent_grads(w, des), one)


# ------------------------------------------------------------------- sums from moments


def test_ridge_sums_of_reports_from_the_data_moments(monkeypatch):
    """sum_k c_k grad F_k(w) over any set of agents, from S and t, equals the sum of reports."""
    from tests.helpers import make_regression

    data = make_regression(K=12, d=4, seed=2)
    model = make_model("ridge", 0.3, True, 0)
    des = _many_blocks(data, model, rows=40)
    assert len(des.blocks) > 4
    rng = np.random.default_rng(8)
    w = rng.standard_normal(model.n_params(data.d))
    c = rng.random(data.K)
    mom = model.gradient_moments(des, c)
    # S and t against a loop over the agents' own rows
    S = sum(c[k] / data.n_k[k] * des.Xa[data.agent == k].T @ des.Xa[data.agent == k]
            for k in range(data.K))  # fmt: skip
    t = sum(c[k] / data.n_k[k] * des.Xa[data.agent == k].T @ data.y[data.agent == k]
            for k in range(data.K))  # fmt: skip
    np.testing.assert_allclose(mom.S, S, rtol=1e-13)
    np.testing.assert_allclose(mom.t, t, rtol=1e-13)
    G = model.agent_grads(w, des)
    K = data.K
    for agents in (
        np.arange(K),
        np.delete(np.arange(K), [0, 5]),
        np.array([7, 2]),
        np.array([K - 1]),
    ):
        got = model.weighted_gradient_sum(w, des, mom, agents)
        scale = np.abs(c[agents, None] * G[agents]).sum(axis=0).max()
        np.testing.assert_allclose(got, c[agents] @ G[agents], rtol=0, atol=1e-13 * scale)
    # the blocks' partial sums are added in block order: any thread count, the same bits
    monkeypatch.setenv("EDGESIM_THREADS", "1")
    one = model.gradient_moments(des, c)
    monkeypatch.setenv("EDGESIM_THREADS", "3")
    monkeypatch.setattr("edgesim.learning.segments.THREAD_CHUNK_BLOCKS", 1)
    three = model.gradient_moments(des, c)
    assert np.array_equal(one.S, three.S) and np.array_equal(one.t, three.t)


def test_only_ridge_has_gradient_moments(classification_data):
    model = make_model("logistic", 0.1, True, classification_data.n_classes)
    des = model.design(classification_data)
    assert model.gradient_moments(des, np.ones(classification_data.K)) is None


@pytest.mark.parametrize("kind, intercept", [("ridge", True), ("ridge", False), ("logistic", True)])
def test_smoothness_bound_is_reached_by_samples_at_the_feature_bound(kind, intercept):
    """c (R^2 + 1) + l2 (without intercept c R^2 + l2) is the L_g of an agent whose samples all
    have norm R along one direction, and bounds the L_g of any data clipped to norm R."""
    R, l2 = 3.0, 0.2
    m = make_model(kind, l2, intercept, 3 if kind == "logistic" else 0)
    c, extra = (1.0 if kind == "ridge" else 0.5), (1.0 if intercept else 0.0)
    assert m.smoothness_bound(R) == pytest.approx(c * (R * R + extra) + l2, rel=1e-15)
    from edgesim.learning.data import FederatedDataset

    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4))
    y = rng.integers(0, 3, 60) if kind == "logistic" else rng.normal(size=60)
    agent = np.repeat(np.arange(3), 20)
    X[:20] = [R, 0.0, 0.0, 0.0]  # agent 0: every sample at the bound, one direction
    data = FederatedDataset.from_arrays(X, y, agent, 3, 3 if kind == "logistic" else 0)
    clipped = data.clip_features(R)
    L_data = m.smoothness(m.design(clipped))
    if kind == "ridge":  # agent 0's X^T X / n = x x^T: top eigenvalue |x|^2 (+1 intercept)
        assert L_data == pytest.approx(m.smoothness_bound(R), rel=1e-9)
    assert L_data <= m.smoothness_bound(R) * (1 + 1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("axis", [0, 1])
def test_log_softmax_has_scipys_bits(dtype, axis):
    """edgesim's numpy log_softmax gives scipy.special.log_softmax's bits, infinite rows too."""
    from scipy.special import log_softmax as scipy_log_softmax

    from edgesim.learning.models import log_softmax

    x = (np.random.default_rng(3).normal(size=(200, 7)) * 40).astype(dtype)
    x[0, 0], x[1, :] = np.inf, -np.inf
    with np.errstate(over="ignore", invalid="ignore"):
        want, got = scipy_log_softmax(x, axis=axis), log_softmax(x, axis)
    assert got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()
