"""Differentially-Private FFL (Alg. 2): noisy securely-aggregated descent, clustered payments.

Phase I: T1 rounds of w <- w - eta1 (sum_k p_k grad F_k(w) + n), n ~ N(0, sigma^2 I),
the sum computed by secure aggregation (the server sees the sum only).
Phase II, for each of L random balanced clusters C_l (Definition 2): T2
noisy rounds from w* on sum_{j not in C_l} p_j F_j (slip 2 in docs/paper.md: the paper's
line sums over C_l; Definition 2 sums over the others), then every agent
reports F_j(w*) - F_j(w_l[T2]) and, for k in C_l,
    P_k = sum_{j != k} (p_j / p_k) (F_j(w*) - F_j(w_l[T2])) + n_P,k,  n_P,k ~ N(0, sigma_P^2).

Sensitivities hold by construction: every agent clips each per-sample data
gradient to norm C (``mechanism.clip_norm``, default ``gradient_bound`` = 1)
and each per-sample loss to [0, B] (``mechanism.loss_bound``, default 1) before
it reports (:class:`~edgesim.mechanisms.driver.AgentSide`). Replacing one of
agent j's n_j samples then moves its mean gradient by at most 2 C / n_j (the
old and the new clipped gradient each have norm <= C; the l2 term does not
depend on the data), so the aggregate sum_j p_j g_j moves by at most
2 C max_j p_j / n_j; and it moves F_j(w*) - F_j(w_l) by at most 2 B / n_j
(each clipped loss lies in [0, B]), so a payment P_k, which weighs that by
p_j / p_k, moves by at most 2 B max_k (1/p_k) max_{j != k} p_j / n_j
(= 2 B / n_(1) for equal weights and for weights proportional to samples).

Noise calibration: ``paper`` uses sigma^2 and sigma_P^2 of the paper's eq.
(noise) exactly, with L_f = C (and sigma_P scaled by B; the paper assumes
B = 1); ``accountant`` sets them from the releases actually made (T1 + L T2
aggregate releases, K payments) with the enforced sensitivities, so that the
tight epsilon equals alpha. Either way the JSON reports the epsilon of the
enforced sensitivities. The noise is added to the securely aggregated sum
before the server rescales it for missing replies, so the rescaling is
post-processing and never raises the sensitivity.

Messages (each direction): K T1 + sum_l (K - |C_l|) T2 + L K.
"""

from __future__ import annotations

import numpy as np

from edgesim import privacy, theory
from edgesim.mechanisms.base import (
    Outcome,
    ServerContext,
    clip_norm,
    feature_bound,
    loss_bound,
    register_mechanism,
    secure_aggregation,
    smoothness_source,
)
from edgesim.mechanisms.parallel import run_problems
from edgesim.mechanisms.protocol import Gather, LossChangeAsk
from edgesim.mechanisms.steps import descend, step_size_phase1, step_size_phase2
from edgesim.mechanisms.vcg import balanced_clusters, resolve_clusters


def rounds(ctx: ServerContext) -> tuple[int, int]:
    """Return (T1, T2) as run: the configured ints, or Proposition 9's rule for "theory"."""
    cfg = ctx.cfg
    T1, T2 = cfg.phase1_rounds, cfg.phase2_rounds
    if "theory" in (T1, T2):
        K = ctx.K
        eta2_paper = 1.0 / (max(K - 1, 1) * ctx.L_g)
        A, B, C = theory.prop9_constants(
            eta2_paper,
            ctx.w0.size,
            _bounds(cfg)[0],
            K,
            int(ctx.n_k.min()),
            cfg.alpha,
            cfg.beta,
            ctx.mu,
        )
        T = theory.prop9_rounds(A, B, C)
        T1 = T if T1 == "theory" else T1
        T2 = T if T2 == "theory" else T2
    return int(T1), int(T2)


def cluster_count(ctx: ServerContext) -> int:
    """Return the number L of clusters (Definition 2) that ``mechanism.clusters`` asks for."""
    cfg = ctx.cfg
    L_theory = theory.theorem3_clusters(ctx.K, ctx.L_g, _bounds(cfg)[0], ctx.mu, cfg.epsilon)
    return resolve_clusters(cfg.clusters, ctx.K, L_theory)


def public_constants(cfg) -> bool:
    """Return whether every constant the server derives is public (not read off the data).

    The server reads L_g for a 'theory' step size, 'theory' rounds (Proposition 9)
    and 'theory' clusters (Theorem 3). L_g is public when stated
    (``public_smoothness`` a number) or when it is the bound of the agents'
    feature clip (``'auto'``); with ``public_smoothness = 'data'`` it is
    estimated from the agents' data, a release the accounting does not cover,
    unless nothing reads it (numeric step sizes, rounds and clusters). mu = l2 and
    the sample counts n_k are public (a replace-one neighbour keeps every n_k).
    """
    if smoothness_source(cfg) != "data":
        return True
    uses = (cfg.eta1, cfg.eta2, cfg.phase1_rounds, cfg.phase2_rounds, cfg.clusters)
    return "theory" not in uses


def _bounds(cfg) -> tuple[float, float]:
    """Return (C, B): the enforced clipping bounds, or the assumed ones when clipping is off."""
    C = clip_norm(cfg)
    B = loss_bound(cfg)
    return (cfg.gradient_bound if C is None else C), (1.0 if B is None else B)


def sensitivities(p: np.ndarray, n_k: np.ndarray, C: float, B: float) -> tuple[float, float]:
    """Return the L2 sensitivities (aggregate gradient, payment) to one sample (replace-one).

    Aggregate: 2 C max_j p_j / n_j, in gradient units. Payment:
    2 B max_k (1 / p_k) max_{j != k} p_j / n_j, in loss units (module docstring).
    """
    ratio = p / n_k
    grad = 2.0 * C * float(ratio.max())
    if p.size < 2:
        return grad, 2.0 * B / float(n_k.min())
    top2 = np.partition(ratio, -2)[-2:]
    others_max = np.where(ratio == top2[1], top2[0], top2[1])  # max over j != k
    return grad, 2.0 * B * float(np.max(others_max / p))


def _noise(ctx: ServerContext, T1: int, T2: int, L: int):
    """Return (sigma, sigma_P, releases actually made); ``L`` = Phase II problems run."""
    cfg = ctx.cfg
    K, n_min = ctx.K, int(ctx.n_k.min())
    C, B = _bounds(cfg)
    grad_sens, pay_sens = sensitivities(ctx.p, ctx.n_k, C, B)
    if cfg.calibration == "paper":
        sigma, sigma_p = privacy.paper_sigmas(K, T1, T2, n_min, C, cfg.alpha, cfg.beta)
        sigma_p *= B
    else:
        _, sigma, sigma_p = privacy.accountant_releases(
            K, T1, T2, max(L, 1), n_min, C, cfg.alpha, cfg.beta, grad_sens, pay_sens
        )
    releases = [privacy.Release(grad_sens, sigma, T1 + L * T2, "aggregate gradient")]
    if L > 0:
        releases.append(privacy.Release(pay_sens, sigma_p, K, "payment"))
    return sigma, sigma_p, releases


def _privacy_info(ctx: ServerContext, sigma: float, sigma_p: float, releases) -> dict:
    """Return the run's ``privacy`` record: the noise, the releases and what is claimed.

    ``epsilon_accounted`` and ``epsilon_zcdp`` are the claim (nats). When a
    constant the server acts on was read off the data (``public_constants``
    false) no claim is made: both are None and ``epsilon_noise_only`` holds
    what the noise alone would give, which the uncovered release can break.
    """
    cfg = ctx.cfg
    enforced = clip_norm(cfg) is not None and loss_bound(cfg) is not None
    public = public_constants(cfg)
    eps, eps_zcdp = (
        privacy.epsilon_accounted(releases, cfg.beta),
        privacy.epsilon_zcdp(releases, cfg.beta),
    )
    if not enforced:
        note = (
            "clipping is off: epsilon_accounted ASSUMES per-sample gradient norms <="
            " gradient_bound and per-sample losses in [0, 1]; nothing enforces it, so the"
            " figure may be false"
        )
    else:
        note = (
            "server-side noise after secure aggregation protects against agents and"
            " outsiders, not against the server; the sensitivities hold because each agent"
            " clips its per-sample gradients to clip_norm and its per-sample losses to"
            " [0, loss_bound]"
        )
    if not public:
        note += (
            "; NO privacy claim: L_g, read off the data (public_smoothness = 'data'), sets the"
            " step sizes (and 'theory' rounds or clusters), a release the accounting does not"
            " cover; epsilon_noise_only is the noise's accounting alone. Leave"
            " public_smoothness 'auto' (a public bound from the feature clip), or give a"
            " number, or numeric eta1, eta2, rounds and clusters"
        )
    R = feature_bound(cfg)
    return {
        "alpha": cfg.alpha,
        "beta": cfg.beta,
        "calibration": cfg.calibration,
        "sigma": sigma,
        "sigma_p": sigma_p,
        "epsilon_accounted": eps if public else None,
        "epsilon_zcdp": eps_zcdp if public else None,
        "epsilon_noise_only": eps,
        "releases": [r.to_json() for r in releases],
        "sensitivity_enforced": enforced,
        "public_constants": public,
        "smoothness": {"L_g": ctx.L_g, "source": smoothness_source(cfg), "feature_bound": R},
        "note": note,
    }


def dp_ffl(ctx: ServerContext):
    """Run Alg. 2; yields Gathers, returns an :class:`Outcome` with noisy scalable-VCG payments."""
    cfg = ctx.cfg
    K, p, rng = ctx.K, ctx.p, ctx.rng
    eta1 = step_size_phase1(ctx)
    T1, T2 = rounds(ctx)
    L = cluster_count(ctx)
    clusters = balanced_clusters(K, L, rng)
    # With one cluster nobody is left to solve for (Definition 2): no Phase II, P_k = 0.
    problems = L if L > 1 else 0
    sigma, sigma_p, releases = _noise(ctx, T1, T2, problems)
    secure = secure_aggregation(cfg)

    def gaussian(total: np.ndarray) -> np.ndarray:
        # Alg. 2: the securely aggregated sum plus N(0, sigma^2 I), before any rescaling
        return total + sigma * rng.standard_normal(total.size)

    everyone = np.arange(K)
    w_star, _, _ = yield from descend(
        ctx, ctx.w0, agents=everyone, weight=1.0, eta=eta1, rounds=T1, phase="phase1",
        noise=gaussian,
    )  # fmt: skip
    payments = np.zeros(K)
    etas = []

    def cluster_problem(l: int):  # Alg. 2's Phase II for cluster l; sets its members' payments
        members = np.flatnonzero(clusters == l)
        others = np.flatnonzero(clusters != l)
        weight = float(p[others].sum())
        if weight == 0:  # a single cluster: nobody is left, P_k = 0 (Definition 2)
            return
        eta2 = step_size_phase2(ctx, weight)
        etas.append(eta2)
        w_l, _, _ = yield from descend(
            ctx, w_star, agents=others, weight=weight, eta=eta2, rounds=T2, phase="phase2",
            problem=l, noise=gaussian,
        )  # fmt: skip
        r = yield Gather(
            w_l,
            agents=everyone,
            ask=LossChangeAsk,
            phase="phase2",
            problem=l,
            reference=w_star,
            round=T2,
            payees=members,
        )
        diff = np.zeros(K)
        diff[r.agents] = p[r.agents] * r.values  # p_j (F_j(w*) - F_j(w_l[T2]))
        total = diff.sum()
        payments[members] = (total - diff[members]) / p[members]
        payments[members] += sigma_p * rng.standard_normal(members.size)

    yield from run_problems([cluster_problem(l) for l in range(L)], cfg.phase2_schedule)
    info = {
        "eta1": eta1,
        "eta2": float(np.mean(etas)) if etas else 0.0,
        "clusters": L,
        "cluster_of_agent": clusters.tolist(),
        "secure_aggregation": secure,
        "privacy": _privacy_info(ctx, sigma, sigma_p, releases),
    }
    return Outcome(
        w_star,
        payments,
        phase1_rounds=T1,
        phase2_rounds=[T2] * problems,
        phase2_per_agent=[T2 if problems else 0] * K,
        info=info,
    )


register_mechanism("dp-ffl", dp_ffl)
