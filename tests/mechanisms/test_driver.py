"""The agents' side: clipping for every gradient mechanism, and what the JSON says of it."""

from __future__ import annotations

import numpy as np
import pytest

from edgesim import scenario
from edgesim.simulate import run
from tests.helpers import write

SMALL = """\
seed = 2
[data]
source = "synthetic"
samples = 200
features = 4
[model]
kind = "ridge"
l2 = 0.1
[agents]
count = 4
[mechanism]
kind = "ffl"
phase1_rounds = 60
phase2_rounds = 5
[output]
local_baseline = false
"""


@pytest.mark.parametrize("kind", ["fedavg", "ffl", "vcg-federated"])
def test_clipping_is_off_by_default_and_opt_in_for_other_mechanisms(tmp_path, kind):
    path = write(tmp_path, SMALL)
    plain = run(scenario.load(path, [f"mechanism.kind={kind}"]))
    assert "clipping" not in plain and "privacy" not in plain
    huge = run(scenario.load(path, [f"mechanism.kind={kind}", "mechanism.clip_norm=1e12"]))
    assert huge["clipping"]["clip_norm"] == 1e12 and huge["clipping"]["clipped_fraction"] == 0.0
    # Nothing clipped: the same payments. The unclipped run sums ridge's gradients from the
    # data's moments (S w - t) and the clipped one report by report: equal up to rounding.
    assert huge["payments"] == pytest.approx(plain["payments"], rel=1e-12, abs=1e-15)
    tight = run(scenario.load(path, [f"mechanism.kind={kind}", "mechanism.clip_norm=0.5"]))
    assert 0 < tight["clipping"]["clipped_fraction"] <= 1
    assert tight["model"]["global_loss"] > plain["model"]["global_loss"]  # clipping's bias


def test_vcg_federated_clips_its_loss_reports(tmp_path):
    path = write(tmp_path, SMALL)
    out = run(scenario.load(path, ["mechanism.kind=vcg-federated", "mechanism.loss_bound=0.01"]))
    c = out["clipping"]
    assert c["loss_bound"] == 0.01 and c["clip_norm"] is None and c["clipped_fraction"] is None
    assert 0 < c["loss_clipped_fraction"] <= 1


def test_dp_ffl_without_clipping_says_its_epsilon_is_assumed(tmp_path):
    path = write(tmp_path, SMALL)
    on = run(scenario.load(path, ["mechanism.kind=dp-ffl"]))["privacy"]
    off = run(scenario.load(path, ["mechanism.kind=dp-ffl", 'mechanism.clip_norm="off"']))
    assert on["sensitivity_enforced"] and on["clip_norm"] == 1.0 and on["loss_bound"] == 1.0
    pr = off["privacy"]
    assert not pr["sensitivity_enforced"] and pr["clip_norm"] is None
    assert "ASSUMES" in pr["note"]
    # the same accounting either way: the bound is the one assumed (gradient_bound = 1)
    assert pr["epsilon_accounted"] == pytest.approx(on["epsilon_accounted"], rel=1e-12)


def test_gradient_bound_is_the_clip_norm_of_dp_ffl_unless_clip_norm_is_set(tmp_path):
    path = write(tmp_path, SMALL)
    alias = run(scenario.load(path, ["mechanism.kind=dp-ffl", "mechanism.gradient_bound=3"]))
    direct = run(scenario.load(path, ["mechanism.kind=dp-ffl", "mechanism.clip_norm=3"]))
    assert alias["privacy"]["clip_norm"] == direct["privacy"]["clip_norm"] == 3.0
    assert alias["payments"] == direct["payments"]
    np.testing.assert_allclose(
        alias["privacy"]["releases"][0]["sensitivity"],
        2 * 3.0 / (4 * min(a["n"] for a in alias["agents"])),
    )


def test_report_buffers_are_reused_only_when_nobody_holds_the_reports(monkeypatch):
    """A round's (K, p) reports reuse an earlier round's buffer once nothing refers to it;
    reports a mechanism still holds are never overwritten. Small reports take fresh arrays."""
    from edgesim.agents import Population
    from edgesim.learning.models import Ridge
    from edgesim.mechanisms import driver
    from edgesim.mechanisms.driver import AgentSide
    from edgesim.mechanisms.protocol import Gather
    from tests.helpers import make_regression

    data = make_regression(K=6)
    model = Ridge(0.1)
    side = AgentSide(model, model.design(data), Population(6), np.random.default_rng(0))
    everyone = np.arange(6)
    w0 = np.zeros(model.n_params(data.d))
    side.reports(Gather(w0, ask="gradient"), everyone)
    assert side._buffers == []  # 6 x p values: below SMALL_REPORTS
    monkeypatch.setattr(driver, "SMALL_REPORTS", 0)
    w1, w2, w3 = (np.full(model.n_params(data.d), v) for v in (0.1, 0.2, 0.3))
    kept = side.reports(Gather(w1, ask="gradient"), everyone)
    first = kept.copy()
    second = side.reports(Gather(w2, ask="gradient"), everyone)
    assert not np.shares_memory(kept, second)  # the first round's reports are still held
    assert np.array_equal(kept, first)
    del second
    third = side.reports(Gather(w3, ask="gradient"), everyone)
    assert not np.shares_memory(third, kept) and np.array_equal(kept, first)
    assert len(side._buffers) == 2  # the second round's buffer, free again, was reused
    assert np.array_equal(third, model.agent_grads(w3, side.design))
    del third
    some = side.reports(Gather(w1, ask="gradient"), np.array([0, 4]))
    assert np.array_equal(some, first[[0, 4]]) and len(side._buffers) == 2


def test_a_step_that_reads_only_the_weighted_sum_is_answered_without_the_reports():
    """Ridge, truthful, unclipped: the sum comes from the data's moments; the reports only
    when asked. An amplifier, clipping or a nonlinear model get the reports themselves."""
    import dataclasses

    from edgesim.agents import Amplify, Population
    from edgesim.learning.models import Logistic, Ridge
    from edgesim.mechanisms.base import weighted_total
    from edgesim.mechanisms.driver import AgentSide
    from edgesim.mechanisms.protocol import Gather
    from edgesim.mechanisms.repair import _merge
    from tests.helpers import make_classification, make_regression

    data = make_regression(K=6)
    model = Ridge(0.1)
    p = data.n_k / data.n
    w = np.linspace(-1.0, 1.0, model.n_params(data.d))
    side = AgentSide(model, model.design(data), Population(6), np.random.default_rng(0))
    step = Gather(w, ask="gradient", sum_weights=p)
    some = np.array([0, 1, 2, 4, 5])
    r = side.answer(step, some)
    assert r.values is None and r.sum_of is not None
    plain = side.answer(Gather(w, ask="gradient"), some)
    expect = weighted_total(plain, p[some], 1.0)  # rescaled to weight 1: agent 3 is missing
    np.testing.assert_allclose(weighted_total(r, p[some], 1.0), expect, rtol=1e-13)
    assert np.array_equal(r.reports(), plain.values)
    # a retry's replies merge into the sum of a lossless round, bit for bit
    lossless = side.answer(step, np.arange(6))
    first = side.answer(step, some)
    first.missing = np.array([3])
    retry = dataclasses.replace(step, agents=np.array([3]))
    again = side.answer(retry, np.array([3]))
    merged = _merge(step, first, again, 6)
    assert merged.values is None and merged.agents.tolist() == list(range(6))
    assert np.array_equal(weighted_total(merged, p, 1.0), weighted_total(lossless, p, 1.0))
    # the reports themselves wherever the sum is not the true reports' affine sum
    amplified = AgentSide(model, model.design(data), Population(6, {2: Amplify(3.0)}),
                          np.random.default_rng(0))  # fmt: skip
    clipped = AgentSide(model, model.design(data), Population(6), np.random.default_rng(0),
                        clip_norm=1.0)  # fmt: skip
    cdata = make_classification()
    logistic = Logistic(0.1, n_classes=cdata.n_classes)
    nonlinear = AgentSide(logistic, logistic.design(cdata), Population(cdata.K),
                          np.random.default_rng(0))  # fmt: skip
    cw = np.zeros(logistic.n_params(cdata.d))
    cstep = Gather(cw, ask="gradient", sum_weights=cdata.n_k / cdata.n)
    for s, st, k in ((amplified, step, 6), (clipped, step, 6), (nonlinear, cstep, cdata.K)):
        got = s.answer(st, np.arange(k))
        assert got.values is not None and got.sum_of is None
