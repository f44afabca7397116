"""DP-FFL (Alg. 2): noise calibration, the epsilon actually obtained, messages, clusters."""

from __future__ import annotations

import numpy as np
import pytest

from edgesim import privacy
from edgesim.learning.models import Ridge
from edgesim.mechanisms.vcg import vcg_payments
from tests.conftest import make_regression, run_mechanism


def test_paper_calibration_uses_the_paper_formulas():
    data = make_regression(K=6, seed=1)
    m = Ridge(0.1)
    T1, T2, a, b, L_f = 30, 4, 0.5, 0.01, 2.0
    out, *_ = run_mechanism(
        m,
        data,
        kind="dp-ffl",
        phase1_rounds=T1,
        phase2_rounds=T2,
        clusters=3,
        alpha=a,
        beta=b,
        gradient_bound=L_f,
        calibration="paper",
    )
    n1, K = int(data.n_k.min()), 6
    sigma2 = 16 * L_f**2 * (T1 + K * T2) * np.log(1 / b) / (K**2 * n1**2 * a**2)
    sigma_p2 = 16 * K * np.log(1 / b) / (n1**2 * a**2)
    pr = out.info["privacy"]
    assert pr["sigma"] == pytest.approx(np.sqrt(sigma2), rel=1e-12)
    assert pr["sigma_p"] == pytest.approx(np.sqrt(sigma_p2), rel=1e-12)
    grads, pays = pr["releases"]
    assert grads["count"] == T1 + 3 * T2  # L cluster problems, not K
    assert pays["count"] == K
    assert grads["sensitivity"] == pytest.approx(2 * L_f / (K * n1))


def test_worked_example_of_design_md():
    """K=10, T1=80, T2=20, n=1000, L_f=1, alpha=0.1, beta=0.01: 0.1005 (zCDP) and ~0.007 (tight)."""
    rel = privacy.paper_releases(10, 80, 20, 1000, 1.0, 0.1, 0.01)
    assert privacy.epsilon_zcdp(rel, 0.01) == pytest.approx(0.1005, abs=5e-5)
    assert privacy.epsilon_accounted(rel, 0.01) == pytest.approx(0.007, abs=2e-4)


def test_accountant_calibration_hits_alpha_and_agrees_with_dp_accounting():
    data = make_regression(K=8, seed=2)
    m = Ridge(0.1)
    out, *_ = run_mechanism(
        m,
        data,
        kind="dp-ffl",
        phase1_rounds=40,
        phase2_rounds=5,
        clusters=4,
        alpha=1.0,
        beta=1e-3,
        calibration="accountant",
    )
    pr = out.info["privacy"]
    assert 0.99 <= pr["epsilon_accounted"] <= 1.0
    releases = [
        privacy.Release(r["sensitivity"], r["sigma"], r["count"], r["label"])
        for r in pr["releases"]
    ]
    assert privacy.epsilon_dp_accounting(releases, 1e-3) == pytest.approx(
        pr["epsilon_accounted"], rel=0.01
    )
    paper, *_ = run_mechanism(
        m,
        data,
        kind="dp-ffl",
        phase1_rounds=40,
        phase2_rounds=5,
        clusters=4,
        alpha=1.0,
        beta=1e-3,
        calibration="paper",
    )
    assert pr["sigma"] < paper.info["privacy"]["sigma"]  # the paper over-noises


def test_messages_and_noise_free_limit_equal_scalable_vcg():
    """With huge alpha the noise vanishes and the payments approach scalable VCG (Def. 2)."""
    K, L = 6, 3
    data = make_regression(K=K, seed=3)
    m = Ridge(0.1)
    out, c, des, p, _ = run_mechanism(
        m,
        data,
        kind="dp-ffl",
        phase1_rounds=3000,
        phase2_rounds=3000,
        clusters=L,
        alpha=1e9,
        beta=0.01,
        calibration="paper",
    )
    clusters = np.asarray(out.info["cluster_of_agent"])
    assert sorted(np.bincount(clusters).tolist()) == [2, 2, 2]
    _, scalable = vcg_payments(m, des, p, clusters)
    np.testing.assert_allclose(out.payments, scalable, rtol=1e-4, atol=1e-6)
    # K T1 + sum_l (K - |C_l|) T2 gradient messages, then K loss reports per cluster
    assert c.messages_up == K * 3000 + sum(K - 2 for _ in range(L)) * 3000 + L * K
