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
