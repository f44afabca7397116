"""The privacy audit: Clopper-Pearson bounds, the canary, and audits that pass and that fail."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from edgesim import audit as aud
from edgesim import scenario
from edgesim.canary import make_canary
from edgesim.cli import main
from edgesim.learning.models import make_model
from edgesim.simulate import Simulation
from tests.helpers import make_classification, make_regression

AUDIT = Path(__file__).parents[1] / "scenarios" / "dp-ffl-audit.toml"


def test_clopper_pearson_closed_forms():
    # k = n: the lower bound solves p^n = level; k = 0: the upper bound solves (1 - p)^n = level
    assert aud.clopper_pearson(100, 100, 0.025)[0] == pytest.approx(0.025 ** (1 / 100))
    assert aud.clopper_pearson(0, 100, 0.025)[1] == pytest.approx(1 - 0.025 ** (1 / 100))
    assert (
        aud.clopper_pearson(0, 10, 0.05)[0] == 0.0 and aud.clopper_pearson(10, 10, 0.05)[1] == 1.0
    )
    lo, hi = aud.clopper_pearson(30, 100, 0.025)  # brackets the rate, exact binomial tails
    from scipy.stats import binom

    assert lo < 0.3 < hi
    assert binom.sf(29, 100, lo) == pytest.approx(0.025, rel=1e-6)
    assert binom.cdf(30, 100, hi) == pytest.approx(0.025, rel=1e-6)


def test_perfect_separation_gives_the_largest_bound_m_allows():
    null, alt = np.arange(100.0), np.arange(100.0) + 1000.0
    b = aud.lower_bound(null, alt, delta=0.01, confidence=0.95)
    p = 0.025 ** (1 / 50)  # 50 measuring runs per side, all right
    assert b["tpr"] == 1.0 and b["fpr"] == 0.0 and b["above"]
    assert b["epsilon_lower"] == pytest.approx(math.log((p - 0.01) / (1 - p)))
    # the same runs, labels swapped: the rule flips to "below"
    assert not aud.lower_bound(alt, null, 0.01)["above"]


def test_indistinguishable_runs_give_no_bound():
    rng = np.random.default_rng(0)
    b = aud.lower_bound(rng.normal(size=400), rng.normal(size=400), delta=0.01)
    assert b["epsilon_lower"] == 0.0


@pytest.mark.parametrize("kind", ["ridge", "logistic"])
def test_canary_has_the_asked_gradient_norm_and_a_fixed_place(kind):
    data = make_regression(K=5, seed=1) if kind == "ridge" else make_classification(K=5, seed=1)
    m = make_model(kind, 0.1, True, data.n_classes)
    c = make_canary(data, m, 50.0)
    assert c.agent == int(np.argmin(data.n_k)) and c.row == int(data.offsets[c.agent])
    xa = np.append(c.x, 1.0)[None, :]
    g = m.sample_data_grads(m.init(data.d), xa, np.asarray([c.y]))[0]
    assert np.linalg.norm(g) == pytest.approx(50.0, rel=1e-9)
    np.testing.assert_allclose(c.direction, -g / np.linalg.norm(g))
    if kind == "logistic":
        assert c.y == int(np.argmin(np.bincount(data.y, minlength=data.n_classes)))
    neighbour = c.insert(data)
    differ = np.flatnonzero(np.any(neighbour.X != data.X, axis=1) | (neighbour.y != data.y))
    assert differ.tolist() == [c.row]  # D' differs from D in exactly one sample


def test_audit_runs_differ_only_in_noise_and_the_canary():
    over = ["audit.trial=3", "mechanism.phase1_rounds=5", "mechanism.phase2_rounds=1"]
    a = Simulation(scenario.load(AUDIT, over))
    b = Simulation(scenario.load(AUDIT, [*over, "audit.neighbour=true"]))
    c = Simulation(scenario.load(AUDIT, [*over[1:], "audit.trial=4"]))
    assert np.count_nonzero(np.any(a.data.X != b.data.X, axis=1)) == 1
    np.testing.assert_array_equal(a.data.X, c.data.X)  # same data for every trial
    wa, wc = a.run_mechanism().outcome.model, c.run_mechanism().outcome.model
    assert not np.array_equal(wa, wc)  # fresh noise per trial
    np.testing.assert_array_equal(wa, a.run_mechanism().outcome.model)  # and reproducible


def _largest_bound(runs: int, delta: float = 0.01, confidence: float = 0.95) -> float:
    """The bound of a perfect distinguisher on ``runs`` per side (half of them measure)."""
    level = (1 - confidence) / 2
    return aud.epsilon_from_rates(runs // 2, runs // 2, 0, runs // 2, delta, level)


MODELS = {"ridge": [], "logistic": ["model.kind=logistic", "data.classes=3"]}


@pytest.mark.slow
@pytest.mark.parametrize("alpha, runs", [(1.0, 60), (2.0, 200)])
@pytest.mark.parametrize("canary", ["gradient", "smoothness"])
@pytest.mark.parametrize("model", sorted(MODELS))
def test_dp_ffl_with_default_constants_passes_its_audit(model, canary, alpha, runs):
    """The shipped audit scenario leaves every constant at its default: the canary, whether it
    pulls the gradient or raises L_g, never shows more than the claimed epsilon, although the
    runs could show 1.5 times it."""
    assert _largest_bound(runs) > 1.5 * alpha
    over = [
        *MODELS[model],
        f"audit.canary={canary!r}".replace("'", '"'),
        f"mechanism.alpha={alpha}",
    ]
    res = aud.audit(AUDIT, None, overrides=over, runs=runs, workers=2)
    assert res.epsilon_claimed == pytest.approx(alpha, rel=1e-3)
    assert res.epsilon_lower <= res.epsilon_claimed and not res.refuted


@pytest.mark.slow
@pytest.mark.parametrize("model", sorted(MODELS))
def test_a_smoothness_read_off_the_data_leaks_and_no_claim_is_made(model):
    """Asked for explicitly, a data-derived L_g moves the step size when the canary raises it:
    the audit's bound exceeds what the noise alone would give, and no claim was printed."""
    over = [*MODELS[model], 'audit.canary="smoothness"', 'mechanism.public_smoothness="data"']
    res = aud.audit(AUDIT, None, overrides=over, workers=2)
    assert res.epsilon_claimed is None and not res.refuted
    assert res.epsilon_noise_only == pytest.approx(1.0, rel=1e-3)
    assert res.epsilon_lower > 2.0 * res.epsilon_noise_only


@pytest.mark.slow
def test_unclipped_dp_ffl_fails_its_audit():
    """The audit can fail: without clipping, a canary 50x the bound refutes the claimed epsilon."""
    res = aud.audit(AUDIT, None, overrides=['mechanism.clip_norm="off"'], workers=2)
    assert res.epsilon_claimed == pytest.approx(1.0, rel=1e-3)
    assert res.epsilon_lower > res.epsilon_claimed and res.refuted


def test_cli_audit_prints_claim_and_bound_and_resumes(tmp_path, capsys):
    folder, out = tmp_path / "audit", tmp_path / "audit.json"
    args = ["audit", str(AUDIT), "-o", str(folder), "--runs", "8", "--workers", "0"]
    args += ["--set", "mechanism.phase1_rounds=5", "--json", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "claimed epsilon" in text and "audited lower bound" in text and "8 runs on D" in text
    first = json.loads(out.read_text())
    results = folder / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    assert len(lines) == 16
    results.write_text("".join(lines[:5]) + lines[5][:20])  # interrupted mid-write
    assert main(args) == 0
    assert len(results.read_text().splitlines()) == 16
    assert json.loads(out.read_text()) == first  # the same audit, resumed


@pytest.mark.parametrize(
    "extra, key",
    [(["--runs", "2"], "--runs"), (["--set", "audit.confidence=1.5"], "audit.confidence")],
)
def test_cli_audit_bad_input_exits_2(tmp_path, capsys, extra, key):
    assert main(["audit", str(AUDIT), "-o", str(tmp_path / "a"), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and key in err[0]
    assert not (tmp_path / "a").exists()


def test_privacy_output_says_whether_the_constants_are_public():
    from edgesim.simulate import run

    small = ["mechanism.phase1_rounds=3", "mechanism.phase2_rounds=1"]
    public = run(scenario.load(AUDIT, small))["privacy"]
    assert public["public_constants"] is True and "L_g" not in public["note"]
    assert public["epsilon_accounted"] == public["epsilon_noise_only"] > 0
    # ridge with an intercept and the default feature clip R = 1: L_g = (1 + 1) + l2
    assert public["smoothness"] == {
        "L_g": pytest.approx(2.1),
        "source": "bound",
        "feature_bound": 1.0,
    }
    data = run(scenario.load(AUDIT, [*small, 'mechanism.public_smoothness="data"']))["privacy"]
    assert data["public_constants"] is False and "mechanism.public_smoothness" not in data["note"]
    assert "NO privacy claim" in data["note"] and "public_smoothness" in data["note"]
    assert data["epsilon_accounted"] is None and data["epsilon_zcdp"] is None
    assert data["epsilon_noise_only"] == pytest.approx(public["epsilon_noise_only"])
    assert data["smoothness"]["source"] == "data" and data["smoothness"]["feature_bound"] is None
    fixed = ['mechanism.public_smoothness="data"', "mechanism.eta1=0.1", "mechanism.eta2=0.1"]
    assert run(scenario.load(AUDIT, [*small, *fixed]))["privacy"]["public_constants"] is True
    stated = run(scenario.load(AUDIT, [*small, "mechanism.public_smoothness=7.5"]))["privacy"]
    assert stated["smoothness"] == {"L_g": 7.5, "source": "public", "feature_bound": None}


def test_cli_audit_without_a_claim_says_so(tmp_path, capsys):
    args = ["audit", str(AUDIT), "-o", str(tmp_path / "a"), "--runs", "4", "--workers", "0"]
    args += ["--set", "mechanism.phase1_rounds=3", "--set", 'mechanism.public_smoothness="data"']
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "no privacy claim (constants read off the data; noise alone 1)" in text
    assert "no claim to test" in text
