"""The references a run computes after its mechanism, what they cost, and what 'auto' computes.

A run can compare its mechanism with two central references, each solved from
every agent's data at once (:mod:`edgesim.mechanisms.vcg`):

- **the optimum** w^o = argmin sum_k p_k F_k: one solve. It gives every run its
  optimality gap F(w*) - F(w^o) (FedAvg's only measure of accuracy);
- **exact VCG**: w^o and the K problems without one agent, K + 1 solves, whose
  payments are compared with the mechanism's (``payment_error_max``).

``mechanism.exact_vcg = true`` computes exact VCG (and so w^o), ``false``
neither. ``"auto"`` (:func:`reference_plan`) computes exact VCG only for a
mechanism with payments, and only when its predicted cost is at most
:data:`AUTO_SHARE` of the whole run's (the run plus the reference), or under
:data:`AUTO_ALWAYS_S`; otherwise w^o alone (one solve: as much as a few dozen
rounds of the mechanism). The decision is
made from the scenario alone (the footprint estimate needs it before any data
exist), by the closed-form cost model below, so the same scenario always gives
the same decision and the same JSON.

The cost model predicts wall seconds on the reference machine (2 cores, 24 GiB,
the machine of docs/performance.md; constants fitted by
``analysis/benchmarks/bench_reference.py --calibrate``). Each part is a count of
what the code does times a measured unit cost: one evaluation of F and its
gradient (logistic L-BFGS-B), one all-agents gradient (a mechanism round's
reports), a closed-form ridge solve, a network exchange and message. Counts that
are only known once the data exist are taken at their lower end (``"theory"``
rounds: T1 = 1, T2 = 0, DP-FFL's L = 1): the run is never overstated, so "auto"
never computes a reference because it guessed the run long.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from edgesim.learning.data.shape import config_shape
from edgesim.learning.models import Design, Model, Ridge
from edgesim.mechanisms import vcg
from edgesim.mechanisms.base import MECHANISMS, clip_norm, secure_aggregation
from edgesim.scenario import Scenario

#: Built-in mechanisms without payments. A registered mechanism says it has none by an
#: attribute ``has_payments = False`` on its function; without it, it is taken to pay.
WITHOUT_PAYMENTS = frozenset({"fedavg", "local"})
#: "auto" computes a reference whose predicted cost is at most this share of the whole run
#: (the run plus the reference): the reference may at most double a run's wall time.
AUTO_SHARE = 0.5
#: ... and always one predicted under this many seconds, whatever its share: a small run's
#: reference costs less than reading its output, and small studies compare with it.
AUTO_ALWAYS_S = 2.0

# --- unit costs on the reference machine (seconds), bench_reference.py --calibrate ---------
#: L-BFGS-B evaluations of F and its gradient per solve to a gradient norm of 1e-10: from
#: zeros (w^o), and warm-started at w^o (each problem without one agent). Measured 23 to 38
#: and 17 to 48 (median 20) over logistic problems with L_g / mu from 200 to 2 * 10^5.
COLD_EVALUATIONS = 35
WARM_EVALUATIONS = 22
#: Gradients of the Newton polish of exact VCG's w^o (``vcg.polish_optimum``), counted as
#: evaluations: 1.6 to 2.6 cold solves' (56 to 218 gradients against 34 to 83) measured.
POLISH_EVALUATIONS = 2 * COLD_EVALUATIONS
#: One logistic ``loss_and_grad`` (single thread): per call, per row, per row x parameter,
#: per agent x parameter (the (K, n_params) gradients it sums).
EVAL_S = (4e-4, 2.5e-7, 1.8e-9, 1e-8)
#: One all-agents gradient (``agent_grads``, a round's reports), per model kind: the same parts.
PASS_S = {"logistic": (2e-4, 5e-8, 3e-9, 1e-8), "ridge": (2e-4, 2e-8, 1e-9, 1e-8)}
#: One round of local learning (``agent_grads_each``: every agent at its own model).
EACH_S = {"logistic": (3e-4, 1.4e-7, 6e-9), "ridge": (3e-4, 2e-8, 3e-9)}
#: A closed-form ridge solve (or the moments behind w^o): per call, per row x d', per row x d'^2.
RIDGE_SOLVE_S = (1e-4, 1e-8, 7e-11)
#: The batched ridge reference: per call, per row x d'^2 (the per-row outer products), per
#: agent x d'^3 (the K solves).
RIDGE_BATCHED_S = (1e-3, 8e-9, 3e-9)
#: The driver's cost per exchange and per message (either way), by fidelity.
EXCHANGE_S = {"none": 3e-5, "batched": 6e-4, "events": 6e-4}
MESSAGE_S = {"none": 2e-8, "batched": 3.5e-6, "events": 4.5e-6}
#: Drawing the data and finding L_g: per call, per draw (row x feature), per row x d' (the
#: power iteration).
SETUP_S = (1.2e-3, 3e-8, 4e-8)


@dataclass(frozen=True)
class ProblemShape:
    """The sizes the cost model reads: K agents, n training and n_test test rows, d features,
    d' = d + intercept, ``params`` (d' x classes, or d' for ridge), the model's ``kind``."""

    K: int
    n: int
    n_test: int
    d: int
    dprime: int
    params: int
    kind: str


def problem_shape(sc: Scenario) -> ProblemShape:
    """Return the :class:`ProblemShape` of ``sc``, read from the scenario alone (no data)."""
    n, n_test, d, classes = config_shape(sc.data, sc.agents.count, sc.model.kind == "logistic")
    dprime = d + (1 if sc.model.intercept else 0)
    return ProblemShape(
        sc.agents.count, n, n_test, d, dprime, dprime * max(classes, 1), sc.model.kind
    )


def seconds_text(x: float) -> str:
    """Return ``x`` seconds as short text: 1,320 or 350 from 100 s on, else 2 digits (12, 0.42)."""
    return f"{x:,.0f}" if x >= 100 else f"{x:.2g}"


def _linear(coef: tuple, *counts: float) -> float:
    return coef[0] + sum(c * x for c, x in zip(coef[1:], counts, strict=True))


def evaluation_s(s: ProblemShape) -> float:
    """Return the predicted seconds of one L-BFGS-B evaluation of F and its gradient."""
    return _linear(EVAL_S, s.n, s.n * s.params, s.K * s.params)


def report_pass_s(s: ProblemShape) -> float:
    """Return the predicted seconds of one all-agents gradient (one round's reports)."""
    return _linear(PASS_S.get(s.kind, PASS_S["logistic"]), s.n, s.n * s.params, s.K * s.params)


def local_round_s(s: ProblemShape) -> float:
    """Return the predicted seconds of one round of local learning (every agent's gradient at
    its own model)."""
    return _linear(EACH_S.get(s.kind, EACH_S["logistic"]), s.n, s.n * s.params)


def _ridge_solve_s(s: ProblemShape) -> float:
    return _linear(RIDGE_SOLVE_S, s.n * s.dprime, s.n * s.dprime**2)


def optimum_s(s: ProblemShape) -> float:
    """Return the predicted seconds of w^o alone (one solve; ridge: from the data's moments)."""
    if s.kind == "ridge":
        return _ridge_solve_s(s)
    return COLD_EVALUATIONS * evaluation_s(s)


def exact_vcg_solves(K: int) -> int:
    """Return the central solves of exact VCG over K agents: w^o and one per agent (K + 1;
    one agent has no problem without itself)."""
    return K + 1 if K > 1 else 1


def exact_vcg_s(s: ProblemShape, problems: int | None = None) -> float:
    """Return the predicted seconds of exact VCG: w^o, then ``problems`` problems without one
    agent or cluster (default K), each followed by one pass for the agents' losses.

    Ridge takes one batched solve while K d'^2 <= ``vcg.RIDGE_BATCH_MAX``, else one closed-form
    solve per problem; logistic one L-BFGS-B solve per problem, warm-started at w^o, and
    w^o's Newton polish.
    """
    problems = s.K if problems is None else problems
    problems = problems if s.K > 1 else 0
    if s.kind == "ridge":
        if problems == s.K and s.K * s.dprime**2 <= vcg.RIDGE_BATCH_MAX:
            return _linear(RIDGE_BATCHED_S, s.n * s.dprime**2, s.K * s.dprime**3)
        return (problems + 1) * (_ridge_solve_s(s) + report_pass_s(s))
    per_eval = evaluation_s(s)
    losses = (problems + 1) * 0.5 * per_eval  # agent_losses: half an evaluation
    solves = COLD_EVALUATIONS + POLISH_EVALUATIONS + problems * WARM_EVALUATIONS
    return solves * per_eval + losses


def _rounds(value, unknown: int) -> int:
    return unknown if value == "theory" else int(value)


def _clusters(setting, K: int) -> int:
    """DP-FFL's or vcg's L for a ``mechanism.clusters`` setting; 'theory' at its lower end, 1."""
    if setting == "theory":
        return 1
    return vcg.resolve_clusters(setting, K)


def mechanism_work(sc: Scenario) -> dict:
    """Return what the mechanism does, from the scenario alone: ``exchanges``, ``messages``
    (both ways), ``passes`` (all-agents gradients) and ``solves`` (central problems, vcg).

    The message formulas are those of :mod:`edgesim.plan`; ``"theory"`` rounds count as
    T1 = 1 and T2 = 0 (their lower end); a mechanism that is not built in counts as T1 rounds
    to every agent.
    """
    cfg, K = sc.mechanism, sc.agents.count
    T1, T2 = _rounds(cfg.phase1_rounds, 1), _rounds(cfg.phase2_rounds, 0)
    kind = cfg.kind
    exchanges = messages = passes = solves = 0
    if kind == "ffl":
        per = T2 - 1 if cfg.payment_rule == "paper" and not cfg.phase2_check else T2
        problems = K if K > 1 and per > 0 else 0
        exchanges = T1 + 1 + problems * per
        messages = K * T1 + K + problems * (K - 1) * per
        passes = T1 + 1 + problems * per * (K - 1) / K
    elif kind == "dp-ffl":
        L = _clusters(cfg.clusters, K)
        problems = L if L > 1 else 0
        exchanges = T1 + problems * (T2 + 1)
        messages = K * T1 + (K * (L - 1) * T2 + problems * K if problems else 0)
        passes = T1 + (problems * T2 * (L - 1) / L if problems else 0)
    elif kind == "vcg-federated":
        problems = K if K > 1 else 0
        exchanges = T1 + 1 + problems * (T1 + 1)
        messages = K * T1 + K + problems * (K - 1) * (T1 + 1)
        passes = T1 + problems * T1 * (K - 1) / K
    elif kind == "vcg":
        L = K if cfg.clusters in ("sqrt", "theory", "all") else min(K, int(cfg.clusters))
        exchanges, messages, solves = 1, K, L
    elif kind == "local":
        exchanges, messages = 1, K
    else:  # fedavg, and a registered mechanism (its rounds are its own: T1 at least)
        exchanges, messages, passes = T1, K * T1, T1
    summed_phase1 = (
        sc.model.kind == "ridge"
        and not sc.agents.strategy
        and clip_norm(cfg) is None
        and not secure_aggregation(cfg)
        and kind in ("fedavg", "ffl", "vcg-federated")
    )
    if summed_phase1 and T1 > 0:  # Phase I sums from the data's moments: one pass, not T1
        passes -= T1 - 1
    return {"exchanges": exchanges, "messages": 2 * messages, "passes": passes, "solves": solves}


def run_s(sc: Scenario, s: ProblemShape | None = None) -> float:
    """Return the predicted seconds of the run without its references: drawing the data,
    L_g, and the mechanism (its exchanges, messages, reports, and vcg's own solves)."""
    s = s or problem_shape(sc)
    work = mechanism_work(sc)
    fidelity = sc.network.fidelity
    seconds = _linear(SETUP_S, (s.n + s.n_test) * s.d, s.n * s.dprime)
    seconds += work["exchanges"] * EXCHANGE_S.get(fidelity, EXCHANGE_S["events"])
    seconds += work["messages"] * MESSAGE_S.get(fidelity, MESSAGE_S["events"])
    seconds += work["passes"] * report_pass_s(s)
    if work["solves"]:
        seconds += exact_vcg_s(s, work["solves"])
    return seconds


def has_payments(kind: str) -> bool:
    """Return whether mechanism ``kind`` charges payments (see :data:`WITHOUT_PAYMENTS`)."""
    if kind in WITHOUT_PAYMENTS:
        return False
    return bool(getattr(MECHANISMS.get(kind), "has_payments", True))


@dataclass(frozen=True)
class ReferencePlan:
    """What a run of the scenario computes after its mechanism, and why.

    ``exact_vcg``: the K + 1 solves; ``optimum``: w^o (true whenever ``exact_vcg`` is);
    ``reason``: one line saying why (printed by ``edgesim plan`` and the run summary, kept in
    the JSON); ``solves``: the central solves planned (K + 1, 1 or 0); ``exact_vcg_s``,
    ``optimum_s``, ``run_s``: predicted seconds on the reference machine of exact VCG and of
    w^o alone (whether or not planned), and of the run without them; ``share``: exact VCG's
    predicted share of the whole run, exact_vcg_s / (run_s + exact_vcg_s).
    """

    exact_vcg: bool
    optimum: bool
    reason: str
    solves: int
    exact_vcg_s: float
    optimum_s: float
    run_s: float

    @property
    def share(self) -> float:
        """Exact VCG's predicted share of the whole run (0 to 1)."""
        return self.exact_vcg_s / (self.run_s + self.exact_vcg_s)

    @property
    def seconds(self) -> float:
        """Predicted seconds of what is planned: exact VCG, or w^o alone, or nothing."""
        if self.exact_vcg:
            return self.exact_vcg_s
        return self.optimum_s if self.optimum else 0.0


def reference_plan(sc: Scenario) -> ReferencePlan:
    """Return the :class:`ReferencePlan` of ``sc`` (the module docstring gives the rule)."""
    s = problem_shape(sc)
    setting, kind = sc.mechanism.exact_vcg, sc.mechanism.kind
    vcg_s, opt_s, run = exact_vcg_s(s), optimum_s(s), run_s(sc, s)
    share = vcg_s / (run + vcg_s)
    count = f"K + 1 = {s.K + 1} solves" if s.K > 1 else "1 solve"
    cost = f"{count}, about {seconds_text(vcg_s)} s"

    def made(exact: bool, optimum: bool, reason: str) -> ReferencePlan:
        solves = exact_vcg_solves(s.K) if exact else (1 if optimum else 0)
        return ReferencePlan(exact, optimum, reason, solves, vcg_s, opt_s, run)

    if setting is True:
        return made(True, True, f"computed: mechanism.exact_vcg = true ({cost})")
    if setting is False:
        return made(False, False, "skipped: mechanism.exact_vcg = false")
    if not has_payments(kind):
        why = f"skipped: {kind} has no payments to compare ({cost})"
    elif vcg_s <= AUTO_ALWAYS_S or share <= AUTO_SHARE:
        small = f" (under {AUTO_ALWAYS_S:g} s)" if share > AUTO_SHARE else ""
        return made(True, True, f"computed: {cost}, {share:.0%} of the run{small}")
    else:
        why = (
            f"skipped: {cost}, {share:.0%} of the run (above {AUTO_SHARE:.0%});"
            " mechanism.exact_vcg = true computes it"
        )
    return made(False, True, why)


def exact_vcg_planned(sc: Scenario) -> tuple[bool, str]:
    """Return (whether a run of ``sc`` computes exact VCG's K + 1 solves, the reason in words)."""
    p = reference_plan(sc)
    return p.exact_vcg, p.reason


def optimum(model: Model, design: Design, p: np.ndarray) -> np.ndarray:
    """Return w^o = argmin_w sum_k p_k F_k(w) alone, shape (n_params,).

    Ridge from the data's moments (one pass, block by block: no (n, d') copy); logistic by
    the reference's own solver (L-BFGS-B, gtol 1e-10), without exact VCG's Newton polish
    (``vcg.solve_optimum``): the losses and gaps it feeds are second order in its error.
    """
    if isinstance(model, Ridge):
        m = model.gradient_moments(design, p)
        if m is not None:
            A = m.S + model.l2 * m.weight * np.eye(m.S.shape[0])
            return np.linalg.solve(A, m.t)
    return vcg.solve_weighted(model, design, p)


def local_rounds_bound(L: float, mu: float, g0: float, cap: int, tol: float = 1e-9) -> int:
    """Return an upper bound on the rounds of local learning (:func:`edgesim.learning.local.
    local_models`), at most ``cap``.

    Nesterov's method with constant momentum on a mu-strongly convex, L-smooth F_k gives
    F_k(w_t) - F_k* <= (1 - sqrt(mu/L))^t 2 (F_k(w_0) - F_k*) <= (1 - sqrt(mu/L))^t g0^2 / mu,
    and |grad F_k(w_t)|^2 <= 2 L (F_k(w_t) - F_k*); so every agent's gradient is below ``tol``
    once t >= ln(2 L g0^2 / (mu tol^2)) / -ln(1 - sqrt(mu/L)), with g0 the largest gradient
    norm at w_0. The run checks every 10 rounds: the bound is rounded up to a multiple of 10.
    """
    if g0 <= tol:
        return min(cap, 10)
    q = math.sqrt(mu / L)
    if q >= 1.0:
        return min(cap, 10)
    t = math.log(2.0 * L * g0 * g0 / (mu * tol * tol)) / -math.log1p(-q)
    return int(min(cap, 10 * math.ceil(max(t, 1.0) / 10)))
