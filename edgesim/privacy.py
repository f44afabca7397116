"""Noise calibration and privacy accounting for DP-FFL (paper Algorithm 2).

Everything here is pure arithmetic on a *release schedule*: a list of
:class:`Release`, each one kind of Gaussian release (L2 sensitivity, noise
standard deviation, how many times it happens). Two calibrations of the noise
exist (docs/paper.md, slip 6, and docs/privacy.md):

``paper``
    The paper's eq. (noise): sigma^2 = 16 L_f^2 (T1 + K T2) log(1/beta) /
    (K^2 n_(1)^2 alpha^2) and sigma_P^2 = 16 K log(1/beta) / (n_(1)^2 alpha^2)
    (:func:`paper_sigmas`, :func:`paper_releases`). By the paper's own
    zCDP-to-DP conversion (appendix, proof of Proposition 8, Lemma LL3) this
    gives epsilon = alpha + alpha^2 / (4 ln(1/beta)), slightly above alpha
    (:func:`epsilon_zcdp`); the tight accounting of the same releases gives an
    epsilon about 14x smaller (:func:`epsilon_accounted`).
``accountant``
    The actual schedule (T1 + L T2 gradient releases, K payments) with one
    common noise scale chosen so that the tight epsilon is just below alpha
    (:func:`calibrate_accountant`, :func:`accountant_releases`).

Tight accounting: a composition of Gaussian mechanisms is exactly mu-GDP with
mu = sqrt(sum count (Delta / sigma)^2) (Dong, Roth and Su 2019, Cor. 3.3), and
mu-GDP is (epsilon, delta(epsilon))-DP for every epsilon >= 0 with
delta(epsilon) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)
(ibid., Cor. 2.13; Balle and Wang 2018). All epsilons are in nats (the e in
e^epsilon), all deltas are probabilities.

The noise is added by the server after secure aggregation, so these
guarantees protect each agent's data against the other agents and outsiders
who see the model and the payments, not against the server.

``dp_accounting`` (Google) is a development dependency only; it is imported
inside :func:`epsilon_dp_accounting`, which exists for the cross-check in the
tests.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from edgesim import arguments

__all__ = [
    "Release",
    "accountant_releases",
    "calibrate_accountant",
    "delta_for_epsilon",
    "epsilon_accounted",
    "epsilon_dp_accounting",
    "epsilon_for_mu",
    "epsilon_zcdp",
    "gaussian_mu",
    "paper_releases",
    "paper_sigmas",
]


# ---------------------------------------------------------------- validation


_real, _positive, _nonnegative = arguments.real, arguments.positive, arguments.nonnegative
_int = arguments.integer


def _alpha(alpha: object) -> float:
    return _positive("alpha", alpha)


def _beta(beta: object) -> float:
    x = _real("beta", beta)
    if not 0.0 < x < 1.0:
        raise ValueError(f"beta: must be in (0, 1), got {beta!r}")
    return x


# ------------------------------------------------------------------ releases


@dataclass(frozen=True)
class Release:
    """One kind of Gaussian release, repeated ``count`` times.

    ``sensitivity`` is the L2 sensitivity of the released quantity to one
    sample of one agent (replace-one), ``sigma`` the standard deviation of the
    Gaussian noise added per coordinate (same units as the quantity), ``count``
    how many such releases the run makes and ``label`` a name for reports
    (``"gradient"``, ``"payment"``). Values are validated and stored as plain
    Python ``float``/``int``.
    """

    sensitivity: float
    sigma: float
    count: int
    label: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "sensitivity", _nonnegative("sensitivity", self.sensitivity))
        object.__setattr__(self, "sigma", _positive("sigma", self.sigma))
        object.__setattr__(self, "count", _int("count", self.count, 0))
        if not isinstance(self.label, str):
            raise TypeError(f"label: must be a string, got {self.label!r}")

    @property
    def noise_multiplier(self) -> float:
        """sigma / sensitivity (``inf`` for a zero-sensitivity release)."""
        return math.inf if self.sensitivity == 0 else self.sigma / self.sensitivity

    def to_json(self) -> dict:
        """A flat JSON-ready record: ``{"label", "sensitivity", "sigma", "count"}``."""
        return {
            "label": self.label,
            "sensitivity": self.sensitivity,
            "sigma": self.sigma,
            "count": self.count,
        }


ScheduleItem = Release | tuple[float, float, int, str]


def _as_release(item: ScheduleItem) -> Release:
    if isinstance(item, Release):
        return item
    try:
        sensitivity, sigma, count, label = item
    except (TypeError, ValueError):
        raise ValueError(
            f"schedule: each item must be a Release or (sensitivity, sigma, count, label), "
            f"got {item!r}"
        ) from None
    return Release(sensitivity, sigma, count, label)


def _releases(releases: Iterable[ScheduleItem]) -> list[Release]:
    return [_as_release(r) for r in releases]


# ------------------------------------------------------------ paper's noise


def _check_problem(K: int, T1: int, T2: int, n_min: float, L_f: float) -> tuple:
    K = _int("K", K, 1)
    T1 = _int("T1", T1, 0)
    T2 = _int("T2", T2, 0)
    n_min = _positive("n_min", n_min)
    L_f = _positive("L_f", L_f)
    return K, T1, T2, n_min, L_f


def paper_sigmas(
    K: int, T1: int, T2: int, n_min: float, L_f: float, alpha: float, beta: float
) -> tuple[float, float]:
    """The paper's noise levels, eq. (noise) of Section "DP-FFL".

    Returns ``(sigma, sigma_P)``, the standard deviations (not variances) of
    the gradient noise and of the payment noise:

        sigma^2   = 16 L_f^2 (T1 + K T2) ln(1/beta) / (K^2 n_(1)^2 alpha^2)
        sigma_P^2 = 16 K ln(1/beta) / (n_(1)^2 alpha^2)

    ``sigma`` is in gradient units, ``sigma_P`` in loss (payment) units;
    ``alpha`` is the target epsilon in nats, ``beta`` the target delta,
    ``n_min`` = n_(1) the smallest local dataset size, ``L_f`` the bound on
    the per-sample gradient norm (Lipschitz constant of the loss).
    """
    K, T1, T2, n_min, L_f = _check_problem(K, T1, T2, n_min, L_f)
    alpha, beta = _alpha(alpha), _beta(beta)
    log_term = math.log(1.0 / beta)
    var = 16.0 * L_f**2 * (T1 + K * T2) * log_term / (K**2 * n_min**2 * alpha**2)
    var_p = 16.0 * K * log_term / (n_min**2 * alpha**2)
    return math.sqrt(var), math.sqrt(var_p)


def paper_releases(
    K: int, T1: int, T2: int, n_min: float, L_f: float, alpha: float, beta: float
) -> list[Release]:
    """The release schedule as the paper accounts it (appendix, proof of Prop. 8).

    Returns two :class:`Release`: ``"gradient"`` with sensitivity
    2 L_f / (K n_(1)) (eq. P10-Eq1), noise ``sigma`` and count T1 + K T2; and
    ``"payment"`` with sensitivity 2 / n_(1) (eq. P10-Eq2), noise ``sigma_P``
    and count K; ``sigma`` and ``sigma_P`` from :func:`paper_sigmas`. With
    these, each kind has zCDP rho = alpha^2 / (8 ln(1/beta)), as in the paper.
    Note: the algorithm actually runs T1 + L T2 gradient releases (L cluster
    problems in Phase II), see :func:`accountant_releases`.
    """
    K, T1, T2, n_min, L_f = _check_problem(K, T1, T2, n_min, L_f)
    if T1 + K * T2 < 1:
        raise ValueError(f"T1: T1 + K*T2 must be >= 1, got T1={T1}, T2={T2}")
    sigma, sigma_p = paper_sigmas(K, T1, T2, n_min, L_f, alpha, beta)
    return [
        Release(2.0 * L_f / (K * n_min), sigma, T1 + K * T2, "gradient"),
        Release(2.0 / n_min, sigma_p, K, "payment"),
    ]


# ---------------------------------------------------------------- accounting


def epsilon_zcdp(releases: Iterable[ScheduleItem], beta: float) -> float:
    """Epsilon (nats) at delta = ``beta`` by the paper's zCDP accounting.

    rho = sum count * sensitivity^2 / (2 sigma^2) (Gaussian mechanism and
    composition, Lemmas LL1-LL2, Bun and Steinke 2016), converted with
    epsilon = rho + 2 sqrt(rho ln(1/beta)) (Lemma LL3). For the paper's own
    schedule (:func:`paper_releases`) this is alpha + alpha^2 / (4 ln(1/beta)),
    slightly above alpha (docs/paper.md, slip 6). A valid but loose upper bound.
    """
    beta = _beta(beta)
    rho = sum(r.count * r.sensitivity**2 / (2.0 * r.sigma**2) for r in _releases(releases))
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / beta))


def gaussian_mu(releases: Iterable[ScheduleItem]) -> float:
    """The GDP parameter mu of the composed releases (dimensionless).

    mu = sqrt(sum count (sensitivity / sigma)^2): a composition of Gaussian
    mechanisms (adaptive or not) is exactly mu-GDP (Dong, Roth and Su 2019,
    Cor. 3.3), i.e. as private as one Gaussian mechanism with sensitivity 1
    and noise 1/mu. zCDP rho equals mu^2 / 2.
    """
    total = sum(r.count * (r.sensitivity / r.sigma) ** 2 for r in _releases(releases))
    return math.sqrt(total)


def _log_delta(mu: float, eps: float) -> float:
    """ln delta(eps) for mu-GDP, computed in log space; -inf when delta is 0."""
    if mu == 0.0:
        return -math.inf
    from scipy.special import log_ndtr  # here: a run without DP need not load scipy.special

    log_a = float(log_ndtr(-eps / mu + mu / 2.0))
    log_b = eps + float(log_ndtr(-eps / mu - mu / 2.0))
    d = log_b - log_a  # <= 0 in exact arithmetic
    if d >= 0.0:
        return -math.inf
    return log_a + math.log(-math.expm1(d))


def delta_for_epsilon(mu: float, eps: float) -> float:
    """The smallest delta such that mu-GDP implies (eps, delta)-DP.

    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Dong, Roth
    and Su 2019, Cor. 2.13), ``eps`` in nats, ``mu`` >= 0 dimensionless.
    Computed as Phi(a) (1 - exp(ln Phi(b) + eps - ln Phi(a))) with
    ``scipy.special.log_ndtr`` so it stays accurate for large mu and eps.
    Returns a probability in [0, 1]; 0 for mu = 0.
    """
    mu = _nonnegative("mu", mu)
    eps = _real("eps", eps)
    return math.exp(_log_delta(mu, eps))


def epsilon_for_mu(mu: float, beta: float) -> float:
    """The exact (smallest) epsilon, in nats, of mu-GDP at delta = ``beta``.

    Solves delta_for_epsilon(mu, eps) = beta for eps >= 0 by Brent's method on
    ln delta; returns 0 when delta(0) <= beta already (including mu = 0). The
    zCDP conversion mu^2/2 + mu sqrt(2 ln(1/beta)) is a valid upper bound and
    starts the bracket, which is expanded if rounding demands it.
    """
    mu = _nonnegative("mu", mu)
    beta = _beta(beta)
    log_beta = math.log(beta)
    if _log_delta(mu, 0.0) <= log_beta:
        return 0.0

    def f(eps: float) -> float:
        return _log_delta(mu, eps) - log_beta

    hi = max(mu * mu / 2.0 + mu * math.sqrt(2.0 * math.log(1.0 / beta)), 1e-12)
    for _ in range(200):
        if f(hi) <= 0.0:
            break
        hi *= 2.0
    else:  # pragma: no cover - delta(eps) -> 0 as eps -> inf, so this cannot happen
        raise RuntimeError(f"epsilon_for_mu: no bracket for mu={mu}, beta={beta}")
    from scipy.optimize import brentq  # here: scipy.optimize costs every run a fifth of a second

    return float(brentq(f, 0.0, hi, xtol=1e-15, rtol=4.0 * np.finfo(float).eps, maxiter=500))


def epsilon_accounted(releases: Iterable[ScheduleItem], beta: float) -> float:
    """The tight epsilon, in nats, of the releases at delta = ``beta``.

    Composes all releases exactly as mu-GDP (:func:`gaussian_mu`) and returns
    :func:`epsilon_for_mu`. This is the epsilon DP-FFL actually obtains
    (docs/paper.md, slip 6: always report the epsilon actually obtained); for the
    worked example of docs/paper.md (slip 6: (K=10, T1=80, T2=20, n_(1)=1000, L_f=1, alpha=0.1,
    beta=0.01) the paper's noise gives about 0.0069 instead of alpha = 0.1.
    """
    return epsilon_for_mu(gaussian_mu(releases), beta)


def _mu_for_epsilon(eps: float, beta: float) -> float:
    """The mu whose exact epsilon at delta = beta is ``eps`` (delta grows with mu)."""
    log_beta = math.log(beta)
    # Inverting the (loose) zCDP conversion gives a mu whose exact epsilon is <= eps.
    s = math.sqrt(2.0 * math.log(1.0 / beta))
    lo = -s + math.sqrt(s * s + 2.0 * eps)

    def g(mu: float) -> float:
        return _log_delta(mu, eps) - log_beta

    while g(lo) > 0.0:  # only if rounding put the bound on the wrong side
        lo /= 2.0
    hi = 2.0 * lo
    for _ in range(200):
        if g(hi) >= 0.0:
            break
        hi *= 2.0
    else:  # pragma: no cover
        raise RuntimeError(f"calibrate_accountant: no bracket for eps={eps}, beta={beta}")
    if g(lo) == 0.0:
        return lo
    from scipy.optimize import brentq

    return float(brentq(g, lo, hi, xtol=1e-15, rtol=4.0 * np.finfo(float).eps, maxiter=500))


def calibrate_accountant(
    schedule: Sequence[ScheduleItem], alpha: float, beta: float, rel_tol: float = 1e-3
) -> float:
    """The common noise scale c for a release schedule to be (alpha, beta)-DP.

    ``schedule`` lists (sensitivity, base_sigma, count, label) tuples (or
    :class:`Release`); the releases with sigma = c * base_sigma are mu-GDP
    with mu = mu_base / c. Solves for the mu* whose exact epsilon at delta =
    ``beta`` is ``alpha`` (nats) and returns c = mu_base / mu*, nudged up so
    that alpha * (1 - rel_tol) <= epsilon_accounted <= alpha holds in floating
    point. Dimensionless; c < 1 means less noise than the base schedule.
    Raises ValueError if the schedule has nothing to protect (mu_base = 0).
    """
    alpha, beta = _alpha(alpha), _beta(beta)
    rel_tol = _real("rel_tol", rel_tol)
    if not 0.0 < rel_tol < 1.0:
        raise ValueError(f"rel_tol: must be in (0, 1), got {rel_tol!r}")
    base = _releases(schedule)
    mu_base = gaussian_mu(base)
    if mu_base == 0.0:
        raise ValueError(
            "schedule: no release with positive sensitivity and count; nothing to calibrate"
        )
    mu_star = _mu_for_epsilon(alpha, beta)
    c = mu_base / mu_star

    def eps_at(scale: float) -> float:
        scaled = [Release(r.sensitivity, scale * r.sigma, r.count, r.label) for r in base]
        return epsilon_accounted(scaled, beta)

    nudge = 1e-12
    eps = eps_at(c)
    while eps > alpha:
        c *= 1.0 + nudge
        nudge *= 2.0
        eps = eps_at(c)
    if eps < alpha * (1.0 - rel_tol):  # pragma: no cover - mu* solved to ~1e-15
        raise RuntimeError(
            f"calibrate_accountant: reached epsilon {eps} for alpha {alpha}, "
            f"outside rel_tol {rel_tol}"
        )
    return c


def accountant_releases(
    K: int,
    T1: int,
    T2: int,
    L: int,
    n_min: float,
    L_f: float,
    alpha: float,
    beta: float,
    grad_sensitivity: float | None = None,
    pay_sensitivity: float | None = None,
) -> tuple[list[Release], float, float]:
    """DP-FFL noise for ``calibration = "accountant"`` (docs/paper.md, slip 6).

    The schedule is the one Algorithm 2 actually runs: T1 + L T2 gradient
    releases (Phase II solves L cluster problems, not K) with sensitivity
    ``grad_sensitivity`` (default 2 L_f / (K n_(1)), eq. P10-Eq1; pass
    2 L_f / (m n_(1)) when a problem averages over m < K agents) and K payment
    releases with sensitivity ``pay_sensitivity`` (default 2 / n_(1), eq.
    P10-Eq2). The paper's split of the budget is kept: base noise
    sigma_kind = sensitivity * sqrt(count) * 2 sqrt(ln(1/beta)) / alpha, which
    with the default sensitivities is exactly the paper's eq. (noise) with
    T1 + L T2 in place of T1 + K T2 (equal zCDP rho for both kinds). Both are
    then scaled by one factor from :func:`calibrate_accountant` so that the
    tight epsilon is in [alpha (1 - 1e-3), alpha].

    Returns ``(releases, sigma, sigma_P)``: the two :class:`Release`
    (``"gradient"``, ``"payment"``) and their noise standard deviations
    (gradient units, payment/loss units).
    """
    K, T1, T2, n_min, L_f = _check_problem(K, T1, T2, n_min, L_f)
    L = _int("L", L, 1)
    if L > K:
        raise ValueError(f"L: must be <= K={K}, got {L}")
    alpha, beta = _alpha(alpha), _beta(beta)
    if grad_sensitivity is None:
        grad_sensitivity = 2.0 * L_f / (K * n_min)
    if pay_sensitivity is None:
        pay_sensitivity = 2.0 / n_min
    grad_sensitivity = _positive("grad_sensitivity", grad_sensitivity)
    pay_sensitivity = _positive("pay_sensitivity", pay_sensitivity)
    n_grad = T1 + L * T2
    if n_grad < 1:
        raise ValueError(f"T1: T1 + L*T2 must be >= 1, got T1={T1}, T2={T2}")
    unit = 2.0 * math.sqrt(math.log(1.0 / beta)) / alpha
    schedule = [
        (grad_sensitivity, grad_sensitivity * math.sqrt(n_grad) * unit, n_grad, "gradient"),
        (pay_sensitivity, pay_sensitivity * math.sqrt(K) * unit, K, "payment"),
    ]
    c = calibrate_accountant(schedule, alpha, beta)
    releases = [Release(s, c * b, n, label) for s, b, n, label in schedule]
    return releases, releases[0].sigma, releases[1].sigma


# ------------------------------------------------------- dev cross-check


def _rdp_orders() -> list[float]:
    """A dense grid of Renyi orders for the RDP cross-check."""
    orders = np.concatenate(
        [
            1.0 + np.geomspace(1e-4, 1.0, 200),
            np.linspace(2.0, 64.0, 621),
            np.geomspace(64.0, 1e6, 600)[1:],
        ]
    )
    return sorted({float(o) for o in orders})


def epsilon_dp_accounting(
    releases: Iterable[ScheduleItem],
    beta: float,
    method: str = "pld",
    value_discretization_interval: float = 1e-4,
) -> float:
    """Epsilon (nats) at delta = ``beta`` from Google's ``dp_accounting``.

    For the cross-check in the tests only: ``dp_accounting`` is a development
    dependency and is imported here, not at module level. Each release becomes
    ``SelfComposedDpEvent(GaussianDpEvent(sigma / sensitivity), count)``, all
    composed. ``method="pld"`` uses the privacy-loss-distribution accountant
    (tight, pessimistic discretisation of width ``value_discretization_interval``);
    ``method="rdp"`` the RDP accountant over a dense order grid (looser).
    """
    import dp_accounting  # dev-only dependency, imported lazily on purpose
    from dp_accounting.pld import PLDAccountant
    from dp_accounting.rdp import RdpAccountant

    beta = _beta(beta)
    events = [
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.GaussianDpEvent(noise_multiplier=r.sigma / r.sensitivity), r.count
        )
        for r in _releases(releases)
        if r.count > 0 and r.sensitivity > 0
    ]
    if not events:
        return 0.0
    event = dp_accounting.ComposedDpEvent(events)
    if method == "pld":
        accountant = PLDAccountant(value_discretization_interval=value_discretization_interval)
    elif method == "rdp":
        accountant = RdpAccountant(orders=_rdp_orders())
    else:
        raise ValueError(f"method: must be 'pld' or 'rdp', got {method!r}")
    accountant.compose(event)
    return float(accountant.get_epsilon(beta))
