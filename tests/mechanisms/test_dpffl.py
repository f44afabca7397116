"""DP-FFL (Alg. 2): noise calibration, the epsilon actually obtained, messages, clusters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgesim import privacy
from edgesim.learning.models import Ridge
from edgesim.mechanisms.protocol import GradientAsk, LossChangeAsk
from edgesim.mechanisms.vcg import vcg_payments
from tests.helpers import make_regression, run_mechanism


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
        clip_norm="off",  # the limit of the noise alone: clipping biases (tested apart)
        loss_bound="off",
    )
    clusters = np.asarray(out.info["cluster_of_agent"])
    assert sorted(np.bincount(clusters).tolist()) == [2, 2, 2]
    _, scalable = vcg_payments(m, des, p, clusters)
    np.testing.assert_allclose(out.payments, scalable, rtol=1e-4, atol=1e-6)
    # K T1 + sum_l (K - |C_l|) T2 gradient messages, then K loss reports per cluster
    assert c.messages_up == K * 3000 + sum(K - 2 for _ in range(L)) * 3000 + L * K


# ------------------------------------------------------------ sensitivity enforced


def _spy_reports(monkeypatch):
    """Record every report the agents compute: (step, agents, values)."""
    from edgesim.mechanisms.driver import AgentSide

    seen = []
    original = AgentSide.reports

    def spy(self, step, agents):
        values = original(self, step, agents)
        seen.append((self, step, np.asarray(agents), np.array(values)))
        return values

    monkeypatch.setattr(AgentSide, "reports", spy)
    return seen


@pytest.mark.parametrize(
    "name, smaller",
    [
        ("dp-ffl-privacy", ["data.samples=500", "mechanism.phase1_rounds=6"]),
        ("paper-fig5-privacy", ["data.samples=300", "mechanism.phase1_rounds=4"]),
    ],
)
@pytest.mark.parametrize("calibration", ["paper", "accountant"])
def test_every_released_gradient_is_clipped_and_epsilon_is_the_enforced_one(
    monkeypatch, name, smaller, calibration
):
    """Recompute every per-sample gradient and loss behind a report, independently."""
    from edgesim import scenario
    from edgesim.simulate import run
    from tests.learning.test_models import per_sample_grads

    path = Path(__file__).parents[2] / "scenarios" / f"{name}.toml"
    sc = scenario.load(
        path, [*smaller, "mechanism.phase2_rounds=2", f"mechanism.calibration={calibration}"]
    )
    seen = _spy_reports(monkeypatch)
    result = run(sc)
    C, B = 1.0, 1.0  # the defaults: clip_norm 'auto' = gradient_bound = 1, loss_bound 'auto' = 1
    checked = clipped = total = 0
    for side, step, agents, values in seen:
        des, m = side.design, side.model
        if isinstance(step.ask, GradientAsk):
            G = per_sample_grads(m, step.model, des.Xa, des.data.y)
            scale = np.minimum(1.0, C / np.linalg.norm(G, axis=1))
            Gc = G * scale[:, None]
            assert np.linalg.norm(Gc, axis=1).max() <= C * (1 + 1e-12)
            for row, k in zip(values, agents, strict=True):
                mine = des.data.agent == k
                expect = Gc[mine].mean(axis=0) + m.l2 * step.model
                np.testing.assert_allclose(row, expect, rtol=1e-9, atol=1e-12)
                clipped += int(np.count_nonzero(scale[mine] < 1))
                total += int(mine.sum())
            checked += 1
        else:
            assert isinstance(step.ask, LossChangeAsk)
            ref = np.minimum(m.sample_losses(step.reference, des.Xa, des.data.y), B)
            now = np.minimum(m.sample_losses(step.model, des.Xa, des.data.y), B)
            l2 = 0.5 * m.l2 * (step.reference @ step.reference - step.model @ step.model)
            for v, k in zip(values, agents, strict=True):
                mine = des.data.agent == k
                assert v == pytest.approx(ref[mine].mean() - now[mine].mean() + l2, abs=1e-12)
    assert checked == result["iterations"]["phase1"] + result["iterations"]["phase2_total"]
    pr = result["privacy"]
    assert pr["clip_norm"] == C and pr["loss_bound"] == B and pr["sensitivity_enforced"]
    assert pr["clipped_fraction"] == pytest.approx(clipped / total, rel=1e-12)
    assert 0 < pr["clipped_fraction"] <= 1 and 0 <= pr["loss_clipped_fraction"] <= 1
    # The accounting of the enforced sensitivities, rebuilt here and by dp-accounting's PLD.
    K, n_min = result["K"], min(a["n"] for a in result["agents"])
    L, T1 = result["mechanism_info"]["clusters"], result["iterations"]["phase1"]
    grads = privacy.Release(2 * C / (K * n_min), pr["sigma"], T1 + L * 2, "gradient")
    pays = privacy.Release(2 * B / n_min, pr["sigma_p"], K, "payment")
    assert [r["sensitivity"] for r in pr["releases"]] == pytest.approx(
        [grads.sensitivity, pays.sensitivity], rel=1e-12
    )
    assert pr["epsilon_accounted"] == pytest.approx(
        privacy.epsilon_dp_accounting([grads, pays], pr["beta"]), rel=0.01
    )
    if calibration == "accountant":
        assert pr["epsilon_accounted"] == pytest.approx(pr["alpha"], rel=1e-3)


def test_sensitivities_weighted_by_samples_and_unequal():
    from edgesim.mechanisms.dpffl import sensitivities

    n = np.array([10.0, 40.0, 50.0])
    for p in (n / n.sum(), np.full(3, 1 / 3)):  # both: 2 B / n_(1) for the payment
        g, pay = sensitivities(p, n, 2.0, 3.0)
        assert g == pytest.approx(2 * 2.0 * np.max(p / n))
        assert pay == pytest.approx(2 * 3.0 / 10.0)
    p = np.array([0.1, 0.1, 0.8])  # brute force over (j, k), j != k
    brute = max(p[j] / p[k] * 2 * 3.0 / n[j] for j in range(3) for k in range(3) if j != k)
    assert sensitivities(p, n, 2.0, 3.0)[1] == pytest.approx(brute)


def test_noise_is_added_before_the_rescaling_for_missing_replies():
    """A lossy round rescales noise and sum together: the released sum's sensitivity holds."""
    from edgesim.mechanisms.base import MechanismConfig, ServerContext
    from edgesim.mechanisms.dpffl import dp_ffl
    from edgesim.mechanisms.protocol import Replies

    K, d = 4, 3
    cfg = MechanismConfig(kind="dp-ffl", phase1_rounds=1, phase2_rounds=0, clusters=1, alpha=1.0)

    def model_after_one_round(replied):
        rng = np.random.default_rng(0)
        ctx = ServerContext(Ridge(0.1), cfg, np.full(K, 0.25), np.full(K, 10), d - 1, 0.1, 1.0,
                            np.zeros(d), rng)  # fmt: skip
        gen = dp_ffl(ctx)
        next(gen)
        try:
            gen.send(Replies(np.asarray(replied), total=np.zeros(d)))  # a zero sum: noise only
        except StopIteration as stop:
            return stop.value.model
        raise AssertionError("one round was asked for")

    full, half = model_after_one_round([0, 1, 2, 3]), model_after_one_round([0, 1])
    assert np.all(full != 0)
    # Half the weight replied: the noisy sum is rescaled by 2 as a whole (post-processing).
    np.testing.assert_allclose(half, 2 * full, rtol=1e-12)
