"""DP-FFL's claimed epsilon against the audit (quick size), and the cost of clipping."""

import pytest

from analysis import common

STEM = "privacy_audit"


@pytest.fixture(scope="module")
def rows(quick_figure):
    return common.read_figure(quick_figure(STEM), STEM)


def _pick(rows, panel, series, quantity=None):
    return {
        r["x"]: r["mean"]
        for r in rows
        if r["panel"] == panel
        and r["series"] == series
        and (quantity is None or r["quantity"] == quantity)
    }


def test_clipped_claims_survive_the_audit(rows):
    for series in ("paper", "accountant"):
        claimed = _pick(rows, "epsilon", series, "claimed")
        bound = _pick(rows, "epsilon", series, "audited lower bound")
        assert claimed and claimed.keys() == bound.keys()
        assert all(bound[a] <= claimed[a] for a in claimed)


def test_claims_are_what_the_calibrations_promise(rows):
    acc = _pick(rows, "epsilon", "accountant", "claimed")
    paper = _pick(rows, "epsilon", "paper", "claimed")
    assert all(acc[a] == pytest.approx(a, rel=1e-3) for a in acc)  # tight: epsilon = alpha
    assert all(paper[a] < a for a in paper)  # the paper's noise is larger than needed


def test_the_audit_refutes_the_unclipped_claim(rows):
    claimed = _pick(rows, "epsilon", "accountant, unclipped", "claimed")
    bound = _pick(rows, "epsilon", "accountant, unclipped", "audited lower bound")
    assert bound[1.0] > claimed[1.0]


def test_clipping_bites_and_its_bias_is_what_remains_without_noise(rows):
    for series in ("paper", "accountant"):
        frac = _pick(rows, "clipped_fraction", series)
        assert all(0 < f <= 1 for f in frac.values())
        err = _pick(rows, "payment_error", series)
        lo, hi = min(err), max(err)
        assert err[lo] >= err[hi]  # more noise, larger error
    bias = _pick(rows, "payment_error", "clipping only (no noise)")
    top = max(bias)
    acc = _pick(rows, "payment_error", "accountant")
    assert acc[top] == pytest.approx(bias[top], rel=0.1)
