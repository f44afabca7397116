"""What "auto" computes after the mechanism (edgesim/reference.py), and what the run says."""

from __future__ import annotations

import numpy as np
import pytest

from edgesim import reference, scenario
from edgesim.learning.local import local_models
from edgesim.mechanisms import vcg
from edgesim.mechanisms.base import MECHANISMS
from edgesim.mechanisms.fedavg import fedavg
from edgesim.mechanisms.ffl import ffl
from edgesim.simulate import Simulation, run
from edgesim.summary import summary

SMALL = [
    "agents.count=6",
    "agents.strategy=[]",
    "data.samples=600",
    "network.fidelity=none",
    "output.local_baseline=false",
    "mechanism.phase1_rounds=20",
    "mechanism.phase2_rounds=3",
]
#: A wide logistic model (P = 8 008) with a short FFL run: 41 L-BFGS solves cost far more
#: than the run's 41 rounds.
WIDE = [
    "agents.count=40",
    "agents.strategy=[]",
    "data.samples=400",
    "data.features=1000",
    "data.classes=8",
    "network.fidelity=none",
    "output.local_baseline=false",
    "mechanism.phase1_rounds=1",
    "mechanism.phase2_rounds=1",
    "mechanism.phase2_check=false",
]


def _sc(*overrides):
    return scenario.load(None, [o for group in overrides for o in group])


@pytest.mark.parametrize("kind", ["fedavg", "local"])
def test_auto_never_computes_exact_vcg_for_a_mechanism_without_payments(kind):
    sc = _sc(SMALL, [f"mechanism.kind={kind}"])
    planned, reason = reference.exact_vcg_planned(sc)
    assert not planned and reason.startswith(f"skipped: {kind} has no payments")
    p = reference.reference_plan(sc)
    assert p.optimum and p.solves == 1  # w^o, FedAvg's optimality gap, stays computed


@pytest.mark.parametrize("kind", ["ffl", "dp-ffl", "vcg-federated", "vcg"])
def test_auto_computes_it_for_a_mechanism_with_payments_on_small_K(kind):
    planned, reason = reference.exact_vcg_planned(_sc(SMALL, [f"mechanism.kind={kind}"]))
    assert planned and reason.startswith("computed: K + 1 = 7 solves")


def test_auto_skips_it_when_its_share_of_the_run_is_too_large():
    p = reference.reference_plan(_sc(WIDE))
    assert not p.exact_vcg and p.optimum
    assert p.exact_vcg_s > reference.AUTO_ALWAYS_S and p.share > reference.AUTO_SHARE
    assert "of the run (above 50%); mechanism.exact_vcg = true computes it" in p.reason
    # The same shape with a long Phase II: the reference is now a small share, so it is computed.
    long = reference.reference_plan(_sc(WIDE, ["mechanism.phase2_rounds=200"]))
    assert long.exact_vcg and long.share <= reference.AUTO_SHARE
    assert long.exact_vcg_s == p.exact_vcg_s and long.run_s > 100 * p.run_s


def test_true_and_false_keep_meaning_always_and_never():
    assert reference.exact_vcg_planned(_sc(WIDE, ["mechanism.exact_vcg=true"]))[0]
    assert reference.exact_vcg_planned(_sc(SMALL, ["mechanism.kind=fedavg",
                                                   "mechanism.exact_vcg=true"]))[0]  # fmt: skip
    off = reference.reference_plan(_sc(SMALL, ["mechanism.exact_vcg=false"]))
    assert (off.exact_vcg, off.optimum, off.solves) == (False, False, 0)
    assert off.reason == "skipped: mechanism.exact_vcg = false"


def test_a_registered_mechanism_says_whether_it_pays(monkeypatch):
    def no_payments(ctx):
        return (yield from fedavg(ctx))

    no_payments.has_payments = False

    def pays(ctx):
        return (yield from ffl(ctx))

    monkeypatch.setitem(MECHANISMS, "test-no-payments", no_payments)
    monkeypatch.setitem(MECHANISMS, "test-pays", pays)
    assert not reference.has_payments("test-no-payments")
    assert reference.has_payments("test-pays")  # no attribute: taken to pay
    sc = _sc(SMALL, ["mechanism.kind=test-no-payments"])
    assert reference.exact_vcg_planned(sc)[1].startswith("skipped: test-no-payments has no")
    assert reference.exact_vcg_planned(_sc(SMALL, ["mechanism.kind=test-pays"]))[0]


def test_the_solves_take_about_the_evaluations_the_model_counts(monkeypatch):
    # The model's L-BFGS-B evaluations per solve (cold, then warm at w^o), against a count.
    sim = Simulation(_sc(SMALL, ["data.features=30", "data.classes=4"]))
    ctx, design = sim.server_context(np.arange(6), np.random.default_rng(0))
    calls = []
    real = type(sim.model).loss_and_grad
    monkeypatch.setattr(
        type(sim.model), "loss_and_grad", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    vcg.vcg_payments(sim.model, design, ctx.p)
    predicted = reference.COLD_EVALUATIONS + 6 * reference.WARM_EVALUATIONS
    assert predicted / 2 <= len(calls) <= 2 * predicted


@pytest.mark.parametrize("kind", ["ridge", "logistic"])
def test_the_optimum_alone_is_exact_vcgs_w_o_to_its_solvers_accuracy(kind):
    sim = Simulation(_sc(SMALL, [f"model.kind={kind}"]))
    ctx, design = sim.server_context(np.arange(6), np.random.default_rng(0))
    m = sim.model
    w_o, _ = vcg.vcg_payments(m, design, ctx.p)
    w = reference.optimum(m, design, ctx.p)
    if kind == "ridge":
        np.testing.assert_allclose(w, w_o, rtol=1e-10)
        return
    # Exact VCG's w^o is Newton-polished; the optimum alone is L-BFGS-B's, within the
    # strong-convexity bound |w - w*| <= |grad F(w)| / mu of it, and of the same loss.
    assert np.linalg.norm(w - w_o) <= np.linalg.norm(m.grad(w, design, ctx.p)) / m.l2
    assert m.loss(w, design, ctx.p) == pytest.approx(m.loss(w_o, design, ctx.p), rel=1e-13)


def test_the_local_rounds_bound_is_the_closed_form():
    # q = sqrt(mu / L) = 1/2: t >= ln(2 * 4 * 1 / 1e-18) / ln 2 = 62.8, checked every 10 rounds.
    assert reference.local_rounds_bound(4.0, 1.0, 1.0, 10**6) == 70
    assert reference.local_rounds_bound(4.0, 1.0, 1.0, 50) == 50


@pytest.mark.parametrize("extra", [[], ["model.kind=ridge"], ["model.l2=0.01"]])
def test_local_learning_stops_within_the_bound(extra):
    sim = Simulation(_sc(SMALL, extra))
    m, design = sim.model, sim.design
    g0 = float(np.max(np.linalg.norm(m.agent_grads(m.init(sim.data.d), design), axis=1)))
    bound = reference.local_rounds_bound(m.smoothness(design), m.strong_convexity(), g0, 10**6)
    _, rounds = local_models(m, design, 10**6)
    assert rounds <= bound < 10**6


def test_a_fedavg_run_says_it_skipped_exact_vcg_and_keeps_its_optimality_gap():
    result = run(_sc(SMALL, ["mechanism.kind=fedavg"]))
    m = result["model"]
    assert m["exact_vcg"]["computed"] is False
    assert m["exact_vcg"]["reason"].startswith("skipped: fedavg has no payments to compare")
    assert "vcg_payments" not in result and result["payment_error_max"] is None
    assert m["optimality_gap"] == pytest.approx(m["global_loss"] - m["optimum_loss"])
    assert m["optimality_gap"] >= 0
    assert "  exact VCG     skipped: fedavg has no payments to compare" in summary(result)


def test_a_run_whose_reference_costs_too_much_says_so():
    result = run(_sc(WIDE))
    assert result["model"]["exact_vcg"]["computed"] is False
    assert "above 50%" in result["model"]["exact_vcg"]["reason"]
    assert "vcg_payments" not in result and "optimum_loss" in result["model"]
    assert "above 50%); mechanism.exact_vcg = true computes it" in summary(result)


def test_a_computed_or_refused_reference_adds_no_summary_line():
    computed = run(_sc(SMALL))
    assert computed["model"]["exact_vcg"]["computed"] is True and "vcg_payments" in computed
    off = run(_sc(SMALL, ["mechanism.exact_vcg=false"]))
    assert off["model"]["exact_vcg"] == {
        "computed": False,
        "reason": "skipped: mechanism.exact_vcg = false",
    }
    assert "optimum_loss" not in off["model"]  # false: neither reference
    for result in (computed, off):
        assert "exact VCG" not in summary(result)
