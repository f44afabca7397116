"""Faithfulness map: FFL leaves nothing to gain by misreporting, FedAvg does under heterogeneity.

Every claim is checked on the quick map made here (synthetic data: MNIST at any
size takes minutes) and on the committed one (``analysis/figures``, MNIST).
"""

import pytest

STEM = "faithfulness_map"
GAMMA = "gain of best gamma"


@pytest.fixture(scope="module", params=["quick", "committed"], ids=["quick-synthetic", "committed"])
def rows(request, figure_rows):
    """Return the rows of the quick or the committed CSV."""
    return figure_rows(STEM, request.param)


def pick(rows, mechanism, series):
    out = [r for r in rows if r["mechanism"] == mechanism and r["series"] == series]
    assert out, (mechanism, series)
    return out


def bound_of(rows, series, r):
    (b,) = [
        x["y"]
        for x in rows
        if x["series"] == series and (x["delta"], x["agent"]) == (r["delta"], r["agent"])
    ]
    return b


def test_gain_is_truthful_minus_the_grid_minimum(rows):
    """Each plotted gain is J_k(gamma = 1) - min over the searched grid, gamma = 1 was searched,
    and each line is the largest dot at its Delta."""
    for mech in ("fedavg", "ffl", "dp-ffl"):
        for r in pick(rows, mech, GAMMA):
            assert r["grid_at_1"] is not None, r  # gamma = 1 was evaluated
            assert r["truthful"] == r["grid_at_1"], r
            assert r["best_objective"] == r["grid_min"], r
            assert r["y"] == pytest.approx(r["truthful"] - r["best_objective"], abs=1e-12)
        for series in (GAMMA, "gain of opting out"):
            for top in pick(rows, mech, series + ", largest over agents"):
                dots = [r["y"] for r in pick(rows, mech, series) if r["delta"] == top["delta"]]
                assert top["y"] == max(dots)


def test_ffl_gain_within_the_proof_tolerance_and_epsilon_tilde(rows):
    """Prop. 5: misreporting gains at most 2 epsilon + K (F(w*) - F(w^o)) (the proof's steps for
    the empirical overall loss), far below epsilon~ = 2 epsilon + K Phi."""
    for r in pick(rows, "ffl", GAMMA):
        tol = bound_of(rows, "2 epsilon + K (F(w*) - F(w^o))", r)
        assert r["y"] <= tol, r
        assert tol < 0.01 * bound_of(rows, "Prop. 5 epsilon~", r)


def test_fedavg_gain_clearly_positive_for_heterogeneous_data(rows):
    """Without payments an agent lowers F_k(w*) by amplifying, most of all for non-i.i.d. data."""
    fed = pick(rows, "fedavg", GAMMA)
    top = max(r["delta"] for r in fed)
    hetero = [r for r in fed if r["delta"] == top]
    ffl_tol = max(r["y"] for r in pick(rows, "ffl", "2 epsilon + K (F(w*) - F(w^o))"))
    for r in hetero:
        assert r["y"] > 0.1
        assert r["y"] > 20 * ffl_tol
        assert r["gamma"] > 1.0
    iid = [r["y"] for r in fed if r["delta"] == 0.0]
    assert max(iid) < min(r["y"] for r in hetero)


def test_dp_ffl_is_not_faithful_at_the_paper_noise(rows):
    """What is true (see REPRODUCTION): Corollary 10 needs Proposition 9's T1 = T2 (about 10^3
    rounds on the synthetic data; on the MNIST map its rule gives 1) and has an unspecified
    constant, so it bounds nothing at T1 = 80, T2 = 20; there the paper's noise dominates w* and
    amplifying (a stronger signal against the same noise) lowers F(w*) and with it the payment:
    the best gamma gains more than under FFL's tolerance, by far."""
    ffl_tol = max(r["y"] for r in pick(rows, "ffl", "2 epsilon + K (F(w*) - F(w^o))"))
    dp = pick(rows, "dp-ffl", GAMMA)
    assert all(r["y"] > 10 * ffl_tol and r["gamma"] > 1.0 for r in dp)
