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
    assert huge["payments"] == plain["payments"]  # nothing clipped: the same bits
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


def test_report_buffers_are_reused_only_when_nobody_holds_the_reports():
    """A round's (K, p) reports reuse an earlier round's buffer once nothing refers to it;
    reports a mechanism still holds are never overwritten."""
    from edgesim.agents import Population
    from edgesim.learning.models import Ridge
    from edgesim.mechanisms.driver import AgentSide
    from edgesim.mechanisms.protocol import Gather
    from tests.helpers import make_regression

    data = make_regression(K=6)
    model = Ridge(0.1)
    side = AgentSide(model, model.design(data), Population(6), np.random.default_rng(0))
    everyone = np.arange(6)
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
