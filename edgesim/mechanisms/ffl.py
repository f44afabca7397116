"""Faithful Federated Learning (Alg. 1): gradient descent, then VCG-like payments.

Phase I (lines 2-7) is FedAvg's gradient descent. One extra round then
collects every agent's gradient at w* (documented extra round): it gives the
first step of every Phase II problem at once, since w_{-k}[0] = w* for all k,
and the gradient bound L_f used by Theorem 1's T2.

Phase II (lines 8-15), for each agent k: gradient descent on
sum_{j != k} p_j F_j from w*, accumulating the payment as the path integral of
the others' gradients, with the sign that makes P_k >= 0 (slip 1):

    P_k += (w[t] - w[t+1])^T sum_{j != k} (p_j / p_k) grad F_j(w[t])       (paper)
    P_k += (w[t] - w[t+1])^T sum_{j != k} (p_j / p_k) (g(w[t]) + g(w[t+1]))/2   (trapezoid)

The paper's rule is a left Riemann sum (error O(eta2), Prop. 4); the
trapezoid rule is exact for quadratic losses and needs no extra round: the
gradient at w[t+1] is the next round's report (slip 4). Each problem runs at
least T2 rounds and then until |sum_{j != k} p_j grad F_j|^2 / (2 (1 - p_k) mu)
<= p_k epsilon (Alg. 1, line 10; slip 5), capped by ``phase2_max_rounds``. That
rule bounds the optimisation error of the problem, the part of the path not
walked: with Phi = sum_{j != k} p_j F_j, (1 - p_k) mu-strongly convex,
Phi(w[T]) - min Phi <= |grad Phi(w[T])|^2 / (2 (1 - p_k) mu) <= p_k epsilon, so
at most epsilon in payment units. It does not bound the discretisation error
of the sums above (see "Discretisation error" below). A round with missing
replies (lost on the network, or cut by a deadline) cannot certify that check:
its gradient is a reweighted estimate over a random subset of the others,
whose norm does not vanish at the optimum. After T2 rounds such a round ends
the problem, as Theorem 1's T2 alone would.

Messages (each direction, lossless): K T1 + K + sum_k (K - 1) T2_k (with the paper's
rule and no stopping check the last step needs no report: T2_k - 1 rounds per problem).
T2_k counts every round of problem k, those of restarted attempts included.

Diverging Phase II problems (a decision; the paper assumes truthful reports).
An agent j that amplifies its reports by gamma scales its share of every other
agent's Phase II objective, whose curvature becomes up to
(1 - p_k + (gamma - 1) p_j) L_g. Once (gamma - 1) p_j > 1 - p_k the step
eta2 = 1/((1 - p_k) L_g) can diverge for the problems k != j (in the paper's
Fig. 1 example, K = 2 and 1 - p_1 = p_0: past gamma = 2), while j's own problem
leaves j out and stays finite. Two remedies were possible: score a deviation
in the best-response search by the deviator's own J_j only (its payment and
loss stay computable), or make Phase II robust. edgesim does both, because the
first alone leaves the other agents without payments, and a mechanism whose
budget is undefined is not a result one can compare.

Robust Phase II: gradient descent with eta2 <= 2/L on an L-smooth convex
objective never lets |grad| grow, so a problem whose complete-round aggregate
gradient becomes non-finite, or grows above GROWTH = 4 times its first value,
is diverging. Its server restarts it from w* with eta2 halved, and at most
1/(the largest secant curvature the attempt measured): halving alone can land
exactly on the stability edge |1 - eta2 lambda| = 1 when gamma is a power of
two, which on the Fig. 1 example ran 100000 rounds without converging. The
attempts' rounds are real messages and are counted; ``mechanism_info`` reports
``phase2_restarts`` and ``phase2_eta2_final`` per problem. A run without
divergence is unchanged bit for bit (the check never fires), and every payment
of a restarted run is again the path integral of the reported objective, equal
to VCG of the reports. Scoring: :meth:`edgesim.simulate.Simulation.objective`
returns the deviator's own J_j, inf only when its own payment or loss is not
finite or w* is not (Phase I diverged); the safety net for a problem that still
diverges after MAX_RESTARTS restarts (its payment NaN, the run "diverged").

Discretisation error. Both payment rules are accumulated along the same path
from the same reports (no message more), and ``mechanism_info`` reports per
agent an estimate of the chosen rule's discretisation error,
``payment_discretisation_error`` (payment units), and its maximum; see
:class:`~edgesim.mechanisms.payment_error.PathError` for the derivation. For the
paper's rule it is the difference of the two rules (its O(eta2) error) plus the
trapezoid's own; for the trapezoid it is twice a third-order estimate (zero for
quadratic losses), within the convexity bound |trapezoid - paper| per step.

Error estimate. ``mechanism_info`` also reports per agent, in payment units,
the two other sources of |P_k - P_k^VCG|: Phase I's gap (w* is not w^o) and
Phase II's truncation (the path stops short of argmin of the others' objective),
and the sum of the three (:mod:`edgesim.mechanisms.payment_error`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgesim import theory
from edgesim.arrays import all_finite, norm2
from edgesim.mechanisms.base import Outcome, ServerContext, register_mechanism, weighted_total
from edgesim.mechanisms.parallel import run_problems
from edgesim.mechanisms.payment_error import PathError, finite_max, phase1_error, truncation_error
from edgesim.mechanisms.protocol import Gather, GradientAsk
from edgesim.mechanisms.steps import run_phase1, step_size_phase1, step_size_phase2


def _phase2_target(ctx: ServerContext, L_f: float) -> int:
    T2 = ctx.cfg.phase2_rounds
    if T2 == "theory":
        return theory.phase2_rounds(
            ctx.K, L_f, ctx.cfg.theory_delta, ctx.mu, ctx.L_g, ctx.cfg.epsilon
        )
    return int(T2)


GROWTH = 4.0  # a complete Phase II gradient this many times its first norm: the step diverges
GROWTH_FLOOR = 1e-8  # ... and above this fraction of (1 - p_k) L_f (far above rounding noise)
MAX_RESTARTS = 60  # halvings of eta2 per problem before its payment is given up (NaN)


class _Path:
    """One attempt at Phase II problem k (Alg. 1, lines 8-15) with step size ``eta2``.

    :meth:`run` is a sub-generator (``yield from``). Afterwards ``status`` is
    "done" (T2 rounds and the stopping rule), "capped" (the round budget is
    spent), or "diverging": the others' aggregate gradient became non-finite,
    or a complete round's grew above GROWTH times the first complete one (and
    above GROWTH_FLOOR (1 - p_k) L_f). Gradient descent with eta2 <= 2/L on an
    L-smooth convex objective never lets |grad| grow (g_{t+1} = (I - eta2 Hb_t) g_t),
    so only a step too large for the reports (amplified ones) triggers it.
    ``payment`` is P_k by the configured rule (payment units), ``rounds`` the
    rounds run (messages sent to each other agent, except the paper rule's
    unreported last step), ``L_f`` the largest gradient norm reported, and
    ``final_grad_sq`` |sum_{j != k} p_j grad F_j|^2 at the path's end (gradient
    units squared): the last report's; after the paper rule's unreported last
    step, the one before it, which bounds it (gradient descent with
    eta2 <= 2 / ((1 - p_k) L_g) never lets |grad| grow).
    """

    def __init__(
        self,
        ctx: ServerContext,
        k: int,
        eta2: float,
        T2: int,
        budget: int,
        need_final: bool,
        scale: float,
    ):
        self.ctx, self.k, self.eta2 = ctx, k, eta2
        self.T2, self.budget, self.need_final = T2, budget, need_final
        self.floor = GROWTH_FLOOR * scale
        self.pk = float(ctx.p[k])
        self.weight = 1.0 - ctx.p[k]
        self.errors = PathError(eta2, self.weight * ctx.L_g)
        self.status, self.payment, self.rounds, self.L_f = "done", 0.0, 0, 0.0
        self.final_grad_sq = 0.0

    @property
    def others(self) -> np.ndarray:
        """The agents other than k, made when asked: K problems keeping theirs held K^2 ints."""
        return np.delete(np.arange(self.ctx.K), self.k)

    def error_estimate(self) -> float:
        """Return the discretisation error estimate of the configured rule (payment units)."""
        return self.errors.estimate(self.pk, self.ctx.cfg.payment_rule)

    def run(self, w_star: np.ndarray, g0: np.ndarray, complete0: bool):
        """Iterate from w* with the others' gradient ``g0`` there; yields Gathers, returns None."""
        ctx, cfg, k, pk, weight, eta2 = (
            self.ctx,
            self.ctx.cfg,
            self.k,
            self.pk,
            self.weight,
            self.eta2,
        )
        p, T2 = ctx.p, self.T2
        trapezoid = cfg.payment_rule == "trapezoid"
        mu_k = weight * ctx.mu
        w, g = w_star, g0
        complete = complete0
        ref = norm2(g) if complete else None
        P = 0.0
        t = 0
        others = None  # made at the first report asked for, then asked of every round
        while True:
            gg = float(g @ g)  # (once an iteration: the check, the payment, the end)
            converged = not complete or gg / (2.0 * mu_k) <= pk * cfg.epsilon
            if t >= T2 and (not cfg.phase2_check or converged):
                break
            if not all_finite(g):
                self.status = "diverging"
                break
            if t >= self.budget:
                self.status = "capped"
                break
            w_next = w - eta2 * g
            if t + 1 >= T2 and not self.need_final:
                # Last step of the paper's rule without the stopping check: no report needed.
                P += eta2 * gg / pk
                self.errors.unreported(g)
                t += 1
                break
            if others is None:
                others = self.others
            rep = yield Gather(
                w_next, agents=others, ask=GradientAsk, phase="phase2", problem=k, round=t + 1
            )
            if rep.values is not None and rep.values.size:
                norms = np.einsum("ij,ij->i", rep.values, rep.values)
                self.L_f = max(self.L_f, float(np.sqrt(norms.max())))
            g_next = weighted_total(rep, p[rep.agents], weight)
            complete = rep.missing.size == 0
            # w[t] - w[t+1] = eta2 g exactly; computing it as a difference loses digits.
            if trapezoid:
                P += eta2 * float(g @ (g + g_next)) / (2.0 * pk)
            else:
                P += eta2 * gg / pk
            t += 1
            if not all_finite(g_next):
                self.status = "diverging"
                break
            self.errors.step(g, g_next)
            if complete:
                norm = norm2(g_next)
                if ref is None:
                    ref = norm
                elif norm > GROWTH * ref and norm > self.floor:
                    self.status = "diverging"
                    break
            w, g = w_next, g_next
        self.payment, self.rounds = P, t
        self.final_grad_sq = gg  # (g is the last iteration's: every break comes before g moves)


@dataclass(eq=False)
class SharedRound:
    """What the documented extra round at w* gives every Phase II problem at once.

    ``G0`` (K, n_params): each agent's reported gradient at w* (zero rows for those
    that did not reply); ``g_all``: their weighted sum; ``scale`` (K,): problem k's
    rescaling of the others' sum to weight 1 - p_k when reports were lost (1
    otherwise); ``L_f``: the largest reported gradient norm (Theorem 1's gradient
    bound); ``complete``: every report arrived; ``converged`` (K,): the stopping
    rule already holds at w* for problem k. Problem k's first gradient,
    sum_{j != k} p_j grad F_j(w*), is :meth:`others` (k): computed when asked,
    so K of them are never held at once. For the error estimate (gradient units):
    ``grad_norm`` = |grad F(w*)| (the sum rescaled to weight 1 when reports were
    lost), ``others_norm`` (K,) = |:meth:`others` (k)| and ``own_norm`` (K,) =
    |grad F_k(w*)| as reported (0 for an agent that did not reply).
    """

    G0: np.ndarray
    g_all: np.ndarray
    p: np.ndarray
    scale: np.ndarray
    L_f: float
    complete: bool
    converged: np.ndarray
    grad_norm: float = 0.0
    others_norm: np.ndarray | None = None
    own_norm: np.ndarray | None = None

    def others(self, k) -> np.ndarray:
        """Return sum_{j != k} p_j grad F_j(w*) (rescaled) for problem k, or for an index array
        of problems (rows), shape (n_params,) or (len(k), n_params)."""
        if np.ndim(k) == 0:
            return (self.g_all - self.p[k] * self.G0[k]) * self.scale[k]
        return (self.g_all[None, :] - self.p[k, None] * self.G0[k]) * self.scale[k, None]


SHARED_BLOCK = 1 << 15  # problems whose first gradients are formed at once (stopping rule)


def shared_first_round(ctx: ServerContext, w_star: np.ndarray, T1: int = -1):
    """The extra round at w*: every agent's gradient, the first step of all K problems.

    Labelled Phase I's round ``T1`` (w* = w[T1]: the round after Phase I's last).

    Every Phase II problem starts at w_{-k}[0] = w* (Alg. 1, line 9), so one
    round serves them all, and the stopping rule (line 10) is checked for all k
    at once from it, in blocks of problems. A sub-generator; returns a
    :class:`SharedRound`.
    """
    K, p, cfg = ctx.K, ctx.p, ctx.cfg
    r = yield Gather(w_star, ask=GradientAsk, phase="phase1", round=T1)
    if r.agents.size == K and bool(np.all(r.agents[1:] > r.agents[:-1])):
        # every report, agents in order (row k is agent k): keep the replies themselves
        G0 = r.values
    else:
        G0 = np.zeros((K, w_star.size))
        G0[r.agents] = r.values
    norms = np.einsum("ij,ij->i", r.values, r.values) if r.values.size else np.zeros(0)
    L_f = float(np.sqrt(norms.max())) if norms.size else 0.0
    g_all = p[r.agents] @ r.values
    complete = r.missing.size == 0
    weights = 1.0 - p
    replied = np.zeros(K, dtype=bool)
    replied[r.agents] = True
    got_all = float(p[r.agents].sum())
    got = got_all - np.where(replied, p, 0.0)
    scale = np.divide(weights, got, out=np.zeros(K), where=got > 0)
    shared = SharedRound(G0, g_all, p, scale, L_f, complete, np.ones(K, dtype=bool))
    g_norm = float(np.linalg.norm(g_all))
    shared.grad_norm = g_norm if complete or got_all == 0 else g_norm / got_all
    shared.own_norm = np.zeros(K)
    shared.own_norm[r.agents] = np.sqrt(norms)
    shared.others_norm = np.empty(K)
    for lo in range(0, K, SHARED_BLOCK):
        k = np.arange(lo, min(lo + SHARED_BLOCK, K))
        G_minus = shared.others(k)
        grad_sq = np.einsum("ij,ij->i", G_minus, G_minus)
        shared.others_norm[k] = np.sqrt(grad_sq)
        if complete:
            with np.errstate(divide="ignore", invalid="ignore"):
                shared.converged[k] = grad_sq / (2.0 * weights[k] * ctx.mu) <= p[k] * cfg.epsilon
    return shared


@dataclass(eq=False)
class Problem:
    """The outcome of Phase II problem k: its last attempt, the rounds and the largest reported
    gradient norm of all attempts, the restarts and the final eta2."""

    path: _Path
    rounds: int
    L_f: float
    restarts: int
    eta2: float


def payment_problem(ctx: ServerContext, k: int, w_star, shared: SharedRound, eta2: float, T2: int):
    """Alg. 1, lines 8-15 for agent k: descend on the others' objective, accumulating P_k.

    A diverging attempt restarts from w* at a smaller step (module docstring),
    at most MAX_RESTARTS times, within ``phase2_max_rounds`` rounds in all.
    A sub-generator; returns a :class:`Problem`.
    """
    cfg = ctx.cfg
    need_final = cfg.phase2_check or cfg.payment_rule == "trapezoid"
    scale = (1.0 - ctx.p[k]) * shared.L_f  # the divergence check's floor
    used = restarts = 0
    L_f = 0.0
    while True:  # one attempt per step size
        path = _Path(ctx, k, eta2, T2, cfg.phase2_max_rounds - used, need_final, scale)
        yield from path.run(w_star, shared.others(k), shared.complete)
        used += path.rounds
        L_f = max(L_f, path.L_f)
        if path.status != "diverging" or restarts >= MAX_RESTARTS:
            path.errors.finish()  # closes the last step and drops its gradients
            return Problem(path, used, L_f, restarts, eta2)
        restarts += 1
        # Halve eta2, and go below 1 / (the largest curvature met): halving alone can land
        # on the stability edge |1 - eta2 lambda| = 1 (amplification by a power of two).
        curvature = path.errors.curvature
        eta2 = min(eta2 / 2.0, 1.0 / curvature) if curvature > 0 else eta2 / 2.0


def ffl(ctx: ServerContext):
    """Run Alg. 1; yields Gathers, returns an :class:`Outcome` with the payments P_k."""
    cfg = ctx.cfg
    K, p = ctx.K, ctx.p
    eta1 = step_size_phase1(ctx)
    w_star, T1, diverged = yield from run_phase1(ctx, eta1)  # lines 2-7
    if diverged:
        info = {"eta1": eta1, "diverged": True}
        return Outcome(w_star, np.full(K, np.nan), phase1_rounds=T1, info=info)

    shared = yield from shared_first_round(ctx, w_star, T1)  # line 9 for every k at once
    L_f = shared.L_f
    T2 = _phase2_target(ctx, L_f)
    weights = 1.0 - p
    etas = np.array([step_size_phase2(ctx, 1.0)]) / np.where(weights > 0, weights, np.inf)
    if cfg.eta2 != "theory":
        etas = np.full(K, float(cfg.eta2))
    # With one agent the others' objective is empty: P_k = 0 (eq. VCG), no Phase II.
    active = np.flatnonzero(((T2 > 0) | (cfg.phase2_check & ~shared.converged)) & (weights > 0))

    payments = np.zeros(K)
    rounds = np.zeros(K, dtype=np.int64)
    capped = []
    restarts = np.zeros(K, dtype=np.int64)
    eta_final = etas.astype(float).copy()
    disc = np.zeros(K)
    # A problem not run ends at w*: its truncation is measured there (0 with nobody else).
    trunc = truncation_error(shared.others_norm**2, p, ctx.mu)
    problems = [  # lines 8-15, one problem per agent
        payment_problem(ctx, k, w_star, shared, float(etas[k]), T2) for k in active.tolist()
    ]
    solved = yield from run_problems(problems, cfg.phase2_schedule)
    for k, prob in zip(active.tolist(), solved, strict=True):
        path = prob.path
        L_f = max(L_f, prob.L_f)
        if path.status != "done":
            capped.append(k)
        diverged_k = path.status == "diverging"
        payments[k] = np.nan if diverged_k else path.payment
        disc[k] = np.nan if diverged_k else path.error_estimate()
        trunc[k] = np.nan if diverged_k else truncation_error(path.final_grad_sq, p[k], ctx.mu)
        rounds[k], restarts[k], eta_final[k] = prob.rounds, prob.restarts, prob.eta2
    gap = phase1_error(shared.grad_norm, shared.others_norm, shared.own_norm, p, ctx.mu)
    gap[~np.isfinite(payments)] = np.nan
    total = gap + trunc + disc
    info = {
        "eta1": eta1,
        "eta2": float(np.mean(etas)) if K else 0.0,
        "T2_target": T2,
        "gradient_bound_observed": L_f,  # max ||grad F_j|| reported at w* and in Phase II
        "payment_rule": cfg.payment_rule,
        "phase2_capped": capped,
        "phase2_restarts": restarts,
        "phase2_eta2_final": eta_final,
        "payment_discretisation_error": disc,
        "payment_discretisation_error_max": finite_max(disc),
        "payment_phase1_error": gap,
        "payment_phase1_error_max": finite_max(gap),
        "payment_truncation_error": trunc,
        "payment_truncation_error_max": finite_max(trunc),
        "payment_error_estimate": total,
        "payment_error_estimate_max": finite_max(total),
        "extra_rounds": 1,
        "diverged": bool(capped) and not np.isfinite(payments).all(),
    }
    return Outcome(
        w_star,
        payments,
        phase1_rounds=T1,
        phase2_rounds=rounds,
        phase2_per_agent=rounds,
        info=info,
    )


register_mechanism("ffl", ffl)
