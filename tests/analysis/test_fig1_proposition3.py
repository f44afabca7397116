"""Fig. 1 (Proposition 3) and the overall loss under FFL: the claims its CSV must show."""

import math

import pytest

from analysis import common

STEM = "fig1_proposition3"


@pytest.fixture(scope="module")
def rows(quick_figure):
    return common.read_figure(quick_figure(STEM), STEM)


def curve(rows, panel, series, mechanism=None, mean=None):
    """Return [(x, y)] sorted by x for one plotted series."""
    pts = [
        (r["x"], r["y"])
        for r in rows
        if r["panel"] == panel
        and r["series"] == series
        and (mechanism is None or r["mechanism"] == mechanism)
        and (mean is None or r["mean"] == mean)
    ]
    assert pts, (panel, series, mechanism, mean)
    return sorted(pts)


def argmin(pts):
    return min(pts, key=lambda p: p[1])[0]


def test_fedavg_atypical_agent_gains_by_amplifying(rows):
    """Sec. III-B: with mean = 2, agent 1's expected risk is lowest at some gamma > 1 (here the top of the grid)."""
    pts = curve(rows, "b", "measured excess risk")
    g_best = argmin(pts)
    at_one = dict(pts)[1.0]
    assert g_best > 4.0
    assert min(y for _, y in pts) < 0.5 * at_one  # the gain is large, not noise


def test_fedavg_typical_agent_prefers_gamma_slightly_above_one(rows):
    """Sec. III-B, Fig. 1(a): with mean = 0.1 the risk-minimising gamma is finite and above 1."""
    pts = curve(rows, "a", "measured excess risk")
    g_best = argmin(pts)
    assert 1.0 < g_best < max(x for x, _ in pts)


def test_ffl_overall_loss_minimised_by_telling_the_truth(rows):
    """Faithfulness (Prop. 5): under FFL agent 0's overall loss is lowest at gamma = 1 on the grid."""
    for mean in (0.1, 2.0):
        raw = {
            r["x"]: r["raw"]
            for r in rows
            if r["panel"] == "d" and r["mechanism"] == "ffl" and r["mean"] == mean
        }
        assert 1.0 in raw, sorted(raw)  # the truthful report is on the grid
        # every deviation costs (numerical slack far below the deviation gains of FedAvg)
        assert all(v >= raw[1.0] - 1e-9 for v in raw.values()), raw
        assert max(raw.values()) > raw[1.0] + 1e-3  # not flat: deviating is penalised


def test_fedavg_overall_loss_not_minimised_at_one(rows):
    """Without payments (FedAvg), amplifying lowers the atypical agent's overall loss F_0(w*)."""
    pts = curve(rows, "d", "fedavg overall loss", "fedavg", 2.0)
    assert argmin(pts) > 1.0
    assert min(y for _, y in pts) < -0.1


def test_prop3_bound_covers_the_measured_excess_risk(rows):
    """Prop. 3 bounds E_k(w_gamma) - min E_k: both bound curves lie above the measured gap."""
    for panel in "abc":
        measured = dict(curve(rows, panel, "measured excess risk"))
        assert all(y >= 0.0 for y in measured.values())  # the excess risk is a gap, never < 0
        for series in ("Prop. 3 as printed", "Prop. 3, distance x sup loss"):
            for x, b in curve(rows, panel, series):
                assert b >= measured[x], (panel, series, x, b, measured[x])


def test_bound_decreases_in_delta_logarithmically(rows):
    """Fig. 1(c): the estimation term scales with log(2d/delta), d = 2, so it falls as delta grows."""
    pts = curve(rows, "c", "Prop. 3 as printed")
    ys = [y for _, y in pts]
    assert all(a > b for a, b in zip(ys, ys[1:], strict=False))
    measured = curve(rows, "c", "measured excess risk")[0][1]
    # bound = c log(4/delta) + const: three points pin it; check the log-linear shape
    (x0, y0), (x1, y1), (x2, y2) = pts[0], pts[len(pts) // 2], pts[-1]

    slope = (y1 - y0) / (math.log(4 / x1) - math.log(4 / x0))
    assert y2 == pytest.approx(y0 + slope * (math.log(4 / x2) - math.log(4 / x0)), rel=1e-9)
    assert measured < y2
