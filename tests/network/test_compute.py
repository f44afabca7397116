"""Compute-time models: exact deterministic times, the straggler tail, per-device speeds."""

from __future__ import annotations

import numpy as np
import pytest

from edgesim.errors import ScenarioError
from edgesim.network.compute import (
    COMPUTE_MODELS,
    ComputeConfig,
    ComputeModel,
    build_compute_model,
    register_compute_model,
)

N_K = np.array([0, 1, 37, 250, 1000, 12345])


def test_fixed_times_are_exact_and_draw_nothing():
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state
    m = ComputeModel(ComputeConfig(model="fixed", seconds=0.0123), N_K, rng)
    t = m.times_ns(np.array([5, 0, 5, 2]), rng)
    assert t.dtype == np.int64
    np.testing.assert_array_equal(t, [12_300_000] * 4)
    assert rng.bit_generator.state == state


def test_per_sample_times_match_integer_arithmetic():
    rng = np.random.default_rng(2)
    cfg = ComputeConfig(model="per-sample", seconds=0.01, per_sample_s=1e-4)
    m = build_compute_model(cfg, N_K, rng)
    agents = np.arange(N_K.size)
    # 0.01 s = 10^7 ns, 1e-4 s = 10^5 ns per sample
    np.testing.assert_array_equal(m.times_ns(agents, rng), 10_000_000 + 100_000 * N_K)
    np.testing.assert_array_equal(m.shift_ns(agents), 10_000_000 + 100_000 * N_K)


def test_shifted_exponential_mean_minimum_and_draw_order():
    K, reps = 4, 10_000
    n_k = np.array([10, 100, 1000, 0])
    cfg = ComputeConfig(
        model="shifted-exponential", seconds=0.02, per_sample_s=2e-4, straggler_mean_s=0.05
    )
    m = ComputeModel(cfg, n_k, np.random.default_rng(0))
    agents = np.tile(np.arange(K), reps)
    t = m.times_ns(agents, np.random.default_rng(3))
    shift_ns = 20_000_000 + 200_000 * n_k
    assert (t >= shift_ns[agents]).all()
    # per agent: mean within 3 standard errors of shift + mean (Exp: sd = mean)
    mean_ns = 0.05e9
    got = np.array([t[agents == k].mean() for k in range(K)])
    se = mean_ns / np.sqrt(reps)
    assert np.all(np.abs(got - (shift_ns + mean_ns)) < 3 * se)
    # documented draw order: one standard exponential per entry, in agents order
    e = np.random.default_rng(3).standard_exponential(agents.size)
    expect = np.rint((0.02 + 2e-4 * n_k[agents] + 0.05 * e) * 1e9).astype(np.int64)
    np.testing.assert_array_equal(t, expect)


def test_shifted_exponential_is_reproducible():
    cfg = ComputeConfig(model="shifted-exponential")
    a = np.array([3, 1, 4, 1, 5])
    t1 = ComputeModel(cfg, N_K, None).times_ns(a, np.random.default_rng(9))
    t2 = ComputeModel(cfg, N_K, None).times_ns(a, np.random.default_rng(9))
    np.testing.assert_array_equal(t1, t2)
    assert t1[1] != t1[3]  # a fresh tail per request


def test_lognormal_speeds_drawn_once_per_device():
    K, sigma = 20_000, 0.7
    n_k = np.full(K, 100)
    cfg = ComputeConfig(model="lognormal", seconds=0.01, per_sample_s=1e-4, speed_sigma=sigma)
    m = ComputeModel(cfg, n_k, np.random.default_rng(5))
    q = np.random.default_rng(6)
    state = q.bit_generator.state
    agents = np.arange(K)
    t1 = m.times_ns(agents, q)
    t2 = m.times_ns(agents[::-1], q)
    np.testing.assert_array_equal(t1, t2[::-1])  # same agent, same time
    assert q.bit_generator.state == state  # queries draw nothing
    # the speeds are rng.lognormal(0, sigma, K) from the construction generator
    s = np.random.default_rng(5).lognormal(0.0, sigma, K)
    np.testing.assert_array_equal(t1, np.rint(0.02 * s * 1e9).astype(np.int64))
    # and they are LogNormal(0, sigma): log-mean 0 and log-sd sigma within 3 SE
    logs = np.log(t1 / 0.02e9)
    assert abs(logs.mean()) < 3 * sigma / np.sqrt(K)
    assert abs(logs.std() - sigma) < 3 * sigma / np.sqrt(2 * K)


def test_bad_agents_and_sizes_are_rejected():
    m = ComputeModel(ComputeConfig(), N_K, None)
    with pytest.raises(ValueError, match="0..5"):
        m.times_ns(np.array([6]), None)
    with pytest.raises(ValueError, match="0..5"):
        m.times_ns(np.array([-1]), None)
    with pytest.raises(ValueError, match="n_k"):
        ComputeModel(ComputeConfig(), np.array([1.5, 2.0]), None)


def test_registry_and_unknown_model():
    class Constant:
        def __init__(self, cfg, n_k, rng):
            self.K = n_k.size

        def times_ns(self, agents, rng):
            return np.full(np.asarray(agents).size, 7, dtype=np.int64)

    register_compute_model("test-constant", Constant)
    try:
        cfg = ComputeConfig(model="test-constant")
        assert cfg.cross_check(3) == []
        m = build_compute_model(cfg, np.array([1, 2, 3]), None)
        np.testing.assert_array_equal(m.times_ns(np.array([0, 2]), None), [7, 7])
    finally:
        del COMPUTE_MODELS["test-constant"]
    errs = ComputeConfig(model="gamma").cross_check(3)
    assert len(errs) == 1 and errs[0].key == "network.compute.model"
    assert "'gamma'" in errs[0].message and "'shifted-exponential'" in errs[0].message
    with pytest.raises(ScenarioError, match="network.compute.model"):
        build_compute_model(ComputeConfig(model="gamma"), N_K, None)
