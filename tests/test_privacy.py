"""Tests for edgesim.privacy: the paper's noise, zCDP vs tight accounting, calibration."""

from __future__ import annotations

import math

import dp_accounting  # required dev dependency: the cross-check must run
import numpy as np
import pytest
from scipy.stats import norm

from edgesim import privacy
from edgesim.privacy import (
    Release,
    accountant_releases,
    calibrate_accountant,
    delta_for_epsilon,
    epsilon_accounted,
    epsilon_dp_accounting,
    epsilon_for_mu,
    epsilon_zcdp,
    gaussian_mu,
    paper_releases,
    paper_sigmas,
)

# The worked example of slip 6 in docs/paper.md.
EX = {"K": 10, "T1": 80, "T2": 20, "n_min": 1000, "L_f": 1.0, "alpha": 0.1, "beta": 0.01}


def test_dp_accounting_is_not_imported_at_module_level():
    with open(privacy.__file__) as fh:
        source = fh.read()
    top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert not any("dp_accounting" in line for line in top_level)
    assert not any("simpy" in line for line in top_level)
    assert dp_accounting.GaussianDpEvent  # the dev dependency itself is present


# ------------------------------------------------------------- paper's sigma


def test_paper_sigmas_match_the_formulas_on_the_design_example():
    K, T1, T2, n, Lf, a, b = EX.values()
    sigma, sigma_p = paper_sigmas(**EX)
    expected = math.sqrt(16 * Lf**2 * (T1 + K * T2) * math.log(1 / b) / (K**2 * n**2 * a**2))
    expected_p = math.sqrt(16 * K * math.log(1 / b) / (n**2 * a**2))
    assert sigma == pytest.approx(expected, rel=1e-14)
    assert sigma_p == pytest.approx(expected_p, rel=1e-14)
    assert sigma == pytest.approx(0.143635519, abs=1e-9)
    assert sigma_p == pytest.approx(0.271445617, abs=1e-9)


def test_paper_releases_schedule():
    grad, pay = paper_releases(**EX)
    sigma, sigma_p = paper_sigmas(**EX)
    assert grad == Release(2.0 / (10 * 1000), sigma, 80 + 10 * 20, "gradient")
    assert pay == Release(2.0 / 1000, sigma_p, 10, "payment")
    assert grad.to_json() == {
        "label": "gradient",
        "sensitivity": 2e-4,
        "sigma": sigma,
        "count": 280,
    }
    assert type(pay.to_json()["count"]) is int


def test_paper_epsilon_by_its_own_zcdp_conversion_misses_alpha_slightly():
    releases = paper_releases(**EX)
    eps = epsilon_zcdp(releases, EX["beta"])
    a, b = EX["alpha"], EX["beta"]
    assert round(eps, 4) == 0.1005
    assert eps == pytest.approx(a + a**2 / (4 * math.log(1 / b)), abs=1e-12)
    assert eps > a


@pytest.mark.parametrize("alpha", [0.05, 0.5, 2.0])
@pytest.mark.parametrize("beta", [1e-5, 0.1])
def test_paper_zcdp_identity_holds_generally(alpha, beta):
    releases = paper_releases(7, 30, 5, 250, 2.5, alpha, beta)
    expected = alpha + alpha**2 / (4 * math.log(1 / beta))
    assert epsilon_zcdp(releases, beta) == pytest.approx(expected, rel=1e-12)


def test_paper_noise_is_far_more_than_needed_by_tight_accounting():
    releases = paper_releases(**EX)
    eps = epsilon_accounted(releases, EX["beta"])
    assert eps == pytest.approx(0.007, abs=5e-4)
    pld = epsilon_dp_accounting(releases, EX["beta"])
    assert eps == pytest.approx(pld, rel=0.02)
    # the composed mu is alpha / sqrt(2 ln(1/beta)) for the paper's schedule
    mu = gaussian_mu(releases)
    assert mu == pytest.approx(EX["alpha"] / math.sqrt(2 * math.log(1 / EX["beta"])), rel=1e-12)


def test_rdp_cross_check_is_an_upper_bound():
    releases = paper_releases(**EX)
    rdp = epsilon_dp_accounting(releases, EX["beta"], method="rdp")
    assert epsilon_accounted(releases, EX["beta"]) <= rdp <= epsilon_zcdp(releases, EX["beta"])


# ------------------------------------------------------------- GDP accounting


def test_gaussian_mu_composition():
    one = [Release(0.3, 1.7, 4, "x")]
    four = [Release(0.3, 1.7, 1, "x")] * 4
    assert gaussian_mu(one) == pytest.approx(gaussian_mu(four), rel=1e-15)
    assert gaussian_mu(one) == pytest.approx(2 * 0.3 / 1.7, rel=1e-15)
    # tuples are accepted, zero counts and zero sensitivities contribute nothing
    mixed = [(0.3, 1.7, 4, "x"), (1.0, 1.0, 0, "none"), (0.0, 1.0, 9, "public")]
    assert gaussian_mu(mixed) == pytest.approx(gaussian_mu(one), rel=1e-15)
    assert gaussian_mu([]) == 0.0
    assert epsilon_accounted([], 0.01) == 0.0


def test_single_gaussian_mechanism_classical_delta():
    expected = norm.cdf(-0.5) - math.e * norm.cdf(-1.5)
    assert delta_for_epsilon(1.0, 1.0) == pytest.approx(expected, rel=1e-12)
    releases = [Release(1.0, 1.0, 1, "g")]
    assert epsilon_accounted(releases, expected) == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("mu", [1e-3, 0.03, 0.5, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("eps", [0.0, 0.1, 1.0, 5.0])
def test_delta_matches_scipy_where_scipy_is_accurate(mu, eps):
    expected = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
    assert delta_for_epsilon(mu, eps) == pytest.approx(expected, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("mu", [1e-3, 0.05, 1.0, 5.0, 30.0, 200.0])
@pytest.mark.parametrize("beta", [1e-12, 1e-5, 0.01, 0.3])
def test_epsilon_for_mu_inverts_delta_and_is_monotone(mu, beta):
    eps = epsilon_for_mu(mu, beta)
    assert eps >= 0.0 and math.isfinite(eps)
    if eps > 0:
        assert delta_for_epsilon(mu, eps) == pytest.approx(beta, rel=1e-8)
    else:
        assert delta_for_epsilon(mu, 0.0) <= beta
    # tighter than the zCDP conversion, and grows with mu
    assert eps <= mu * mu / 2 + mu * math.sqrt(2 * math.log(1 / beta)) + 1e-12
    assert epsilon_for_mu(mu * 1.1, beta) >= eps


def test_epsilon_is_zero_when_delta_at_zero_is_already_small():
    mu = 0.01
    beta = delta_for_epsilon(mu, 0.0) * 1.5  # = 2 Phi(mu/2) - 1, times 1.5
    assert delta_for_epsilon(mu, 0.0) == pytest.approx(2 * norm.cdf(mu / 2) - 1, rel=1e-9)
    assert epsilon_for_mu(mu, beta) == 0.0
    assert epsilon_for_mu(0.0, 0.01) == 0.0


# ---------------------------------------------------------------- calibration


@pytest.mark.parametrize("alpha", [0.1, 1.0, 4.0])
@pytest.mark.parametrize("L", [10, 3])
def test_accountant_releases_hit_alpha(alpha, L):
    beta = 0.01
    releases, sigma, sigma_p = accountant_releases(10, 80, 20, L, 1000, 1.0, alpha, beta)
    grad, pay = releases
    assert (grad.label, grad.count, grad.sensitivity, grad.sigma) == (
        "gradient",
        80 + L * 20,
        2.0 / (10 * 1000),
        sigma,
    )
    assert (pay.label, pay.count, pay.sensitivity, pay.sigma) == ("payment", 10, 2e-3, sigma_p)
    eps = epsilon_accounted(releases, beta)
    assert 0.99 * alpha <= eps <= alpha
    pld = epsilon_dp_accounting(releases, beta)
    assert pld == pytest.approx(eps, rel=0.02)
    assert pld <= alpha * 1.02
    # the paper's split is kept: both kinds carry the same zCDP rho
    rho = [r.count * (r.sensitivity / r.sigma) ** 2 / 2 for r in releases]
    assert rho[0] == pytest.approx(rho[1], rel=1e-12)
    # and less noise than the paper's calibration needs
    paper_sigma, paper_sigma_p = paper_sigmas(10, 80, 20, 1000, 1.0, alpha, beta)
    assert sigma < paper_sigma and sigma_p < paper_sigma_p


def test_accountant_base_is_paper_formula_with_L_clusters():
    # With L = K the base schedule is the paper's: the scale c is sigma / paper sigma.
    K, T1, T2, n, Lf, a, b = EX.values()
    _, sigma, sigma_p = accountant_releases(K, T1, T2, K, n, Lf, a, b)
    paper_sigma, paper_sigma_p = paper_sigmas(**EX)
    c = calibrate_accountant(
        [(r.sensitivity, r.sigma, r.count, r.label) for r in paper_releases(**EX)], a, b
    )
    assert sigma == pytest.approx(c * paper_sigma, rel=1e-12)
    assert sigma_p == pytest.approx(c * paper_sigma_p, rel=1e-12)
    assert 0.25 < c < 0.4  # "the noise is about 3x larger than needed"


def test_accountant_custom_sensitivity():
    # a problem averaging over m < K agents has sensitivity 2 L_f / (m n_(1))
    releases, _, _ = accountant_releases(
        10, 80, 20, 3, 1000, 1.0, 1.0, 1e-5, grad_sensitivity=2.0 / (7 * 1000)
    )
    assert releases[0].sensitivity == pytest.approx(2.0 / 7000)
    assert 0.99 <= epsilon_accounted(releases, 1e-5) <= 1.0


@pytest.mark.parametrize("alpha", [0.01, 0.3, 8.0])
@pytest.mark.parametrize("beta", [1e-9, 1e-3])
def test_calibrate_accountant_generic_schedule(alpha, beta):
    schedule = [(1.0, 1.0, 50, "a"), (0.2, 0.5, 7, "b"), (3.0, 2.0, 1, "c")]
    c = calibrate_accountant(schedule, alpha, beta)
    scaled = [Release(s, c * sig, n, lab) for s, sig, n, lab in schedule]
    eps = epsilon_accounted(scaled, beta)
    assert alpha * (1 - 1e-3) <= eps <= alpha
    # mu scales as 1/c
    assert gaussian_mu(scaled) == pytest.approx(gaussian_mu(schedule) / c, rel=1e-12)


# ---------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("alpha", [0.0, -1.0, math.nan, math.inf])
def test_bad_alpha_names_alpha(alpha):
    with pytest.raises(ValueError, match="alpha"):
        paper_sigmas(10, 80, 20, 1000, 1.0, alpha, 0.01)
    with pytest.raises(ValueError, match="alpha"):
        accountant_releases(10, 80, 20, 3, 1000, 1.0, alpha, 0.01)
    with pytest.raises(ValueError, match="alpha"):
        calibrate_accountant([(1.0, 1.0, 1, "g")], alpha, 0.01)


@pytest.mark.parametrize("beta", [0.0, 1.0, -0.1, 2.0, math.nan])
def test_bad_beta_names_beta(beta):
    releases = [Release(1.0, 1.0, 1, "g")]
    calls = [
        lambda: paper_sigmas(10, 80, 20, 1000, 1.0, 0.1, beta),
        lambda: paper_releases(10, 80, 20, 1000, 1.0, 0.1, beta),
        lambda: accountant_releases(10, 80, 20, 3, 1000, 1.0, 0.1, beta),
        lambda: calibrate_accountant(releases, 0.1, beta),
        lambda: epsilon_zcdp(releases, beta),
        lambda: epsilon_accounted(releases, beta),
        lambda: epsilon_for_mu(1.0, beta),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="beta"):
            call()


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"K": 0}, "K"),
        ({"T1": -1}, "T1"),
        ({"T1": 0, "T2": 0}, "T1"),
        ({"L": 11}, "L"),
        ({"L": 0}, "L"),
        ({"n_min": 0}, "n_min"),
        ({"L_f": -1.0}, "L_f"),
        ({"grad_sensitivity": 0.0}, "grad_sensitivity"),
        ({"pay_sensitivity": -1.0}, "pay_sensitivity"),
        ({"K": 2.5}, "K"),
    ],
)
def test_bad_problem_parameters_name_the_field(kwargs, name):
    args = {"K": 10, "T1": 80, "T2": 20, "L": 3, "n_min": 1000, "L_f": 1.0, "alpha": 0.1}
    args = args | {"beta": 0.01} | kwargs
    with pytest.raises(ValueError, match=rf"^{name}:"):
        accountant_releases(**args)


def test_bad_release_and_schedule():
    with pytest.raises(ValueError, match="^sigma:"):
        Release(1.0, 0.0, 1, "g")
    with pytest.raises(ValueError, match="^sensitivity:"):
        Release(-1.0, 1.0, 1, "g")
    with pytest.raises(ValueError, match="^count:"):
        Release(1.0, 1.0, -1, "g")
    with pytest.raises(ValueError, match="^count:"):
        Release(1.0, 1.0, 1.5, "g")
    with pytest.raises(ValueError, match="^schedule:"):
        calibrate_accountant([(1.0, 1.0, 0, "nothing")], 1.0, 0.01)
    with pytest.raises(ValueError, match="^schedule:"):
        calibrate_accountant([(1.0, 1.0)], 1.0, 0.01)
    with pytest.raises(ValueError, match="^rel_tol:"):
        calibrate_accountant([(1.0, 1.0, 1, "g")], 1.0, 0.01, rel_tol=0.0)
    with pytest.raises(ValueError, match="^method:"):
        epsilon_dp_accounting([Release(1.0, 1.0, 1, "g")], 0.01, method="zcdp")
    with pytest.raises(ValueError, match="^mu:"):
        delta_for_epsilon(-1.0, 0.1)


def test_release_is_frozen_and_numpy_values_become_python():
    r = Release(np.float64(0.5), np.float32(2.0), np.int64(3), "g")
    assert type(r.sensitivity) is float and type(r.sigma) is float and type(r.count) is int
    assert r.noise_multiplier == pytest.approx(4.0)
    with pytest.raises(AttributeError):
        r.sigma = 1.0  # type: ignore[misc]
