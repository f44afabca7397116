"""The paper's economic properties E1-E4 of one run: the JSON's ``economics`` section.

"Faithful Edge Federated Learning: Scalability and Privacy", Sec. II ("Goals"),
asks a mechanism for four properties, each in a probably approximate sense:

- **E1 efficiency**: the federation reaches the optimum w^o of F = sum_k p_k F_k (or an
  approximation). Here: the optimality gap F(w*) - F(w^o) over the participants, with
  w^o one central solve (:mod:`edgesim.reference`), holds when it is at most the
  tolerance (:func:`tolerance`).
- **E2 faithful implementation**: no agent gains by deviating from the suggested
  algorithm (Definition "Faithfulness": the regret E[J_k(s^m)] - min_A E[J_k(A)] is at
  most epsilon-tilde; Proposition 5 gives epsilon-tilde = 2 epsilon + K Phi for FFL).
  Here: only when a best-response search ran, its regret J(truthful) - J(best found)
  against the bound the search states (``bound``; none: ``holds`` is null). A search
  explores a family of deviations, so ``holds = true`` says no deviation *found* beats
  the bound, not that none exists.
- **E3 voluntary participation**: no agent is worse off by participating. Here, per
  participant: its overall test loss P_k + E_k(w*) (payment plus the test-set estimate of
  its expected risk, the paper's risk-bound comparison of Proposition 6) against its
  local model's test loss E_k(w_k^L); it fails for an agent whose excess is above the
  tolerance (Proposition 6 allows epsilon).
- **E4 weak budget balance**: the payments sum to at least 0 (Proposition 7), up to the
  float rounding of that sum (:data:`BUDGET_ROUNDING`).

Every number is one the run already computed; nothing here reruns anything.
Payments and losses are in loss units (payments per unit weight, as the paper's P_k).
"""

from __future__ import annotations

import math

import numpy as np

#: Mechanisms with an accuracy target of their own, ``mechanism.epsilon``: FFL's Phase II
#: target (Alg. 1, line 10; Theorem 1) and DP-FFL's (Theorem 3, Corollary "Faithful
#: Implementation"). Their E1 and E3 tolerance is that epsilon.
EPSILON_TARGET = frozenset({"ffl", "dp-ffl"})
#: E1 and E3's tolerance for every other mechanism (loss units): mechanism.epsilon's default.
DEFAULT_TOLERANCE = 1e-3
#: E4 holds when sum_k P_k >= -BUDGET_ROUNDING * sum_k |P_k|: the float rounding of the sum.
BUDGET_ROUNDING = 1e-9
#: E3 lists the ids of at most this many failing agents (the smallest ids); the count is whole.
LISTED_AGENTS = 20


def tolerance(kind: str, epsilon: float) -> tuple[float, str]:
    """Return E1 and E3's tolerance (loss units) for mechanism ``kind`` and where it comes from:
    ``mechanism.epsilon`` for a mechanism in :data:`EPSILON_TARGET`, else
    :data:`DEFAULT_TOLERANCE` ("default")."""
    if kind in EPSILON_TARGET:
        return float(epsilon), "mechanism.epsilon"
    return DEFAULT_TOLERANCE, "default"


def _finite(x) -> bool:
    return x is not None and math.isfinite(x)


def efficiency(gap: float | None, tol: float, source: str, missing: str | None = None) -> dict:
    """Return E1: ``gap`` = F(w*) - F(w^o) (loss units) and whether it is at most ``tol``.

    ``missing`` (why there is no gap: w^o not computed, no federated model) makes
    ``holds`` null; a gap that is not finite (w* diverged) fails.
    """
    out = {"property": "efficiency", "holds": None, "gap": None, "tolerance": tol}
    out |= {"tolerance_source": source, "reason": missing}
    if missing is not None:
        return out
    if not _finite(gap):
        return out | {"holds": False, "reason": "w* is not finite: the mechanism diverged"}
    return out | {"holds": bool(gap <= tol), "gap": float(gap)}


def voluntary_participation(
    overall_test: np.ndarray,
    local_test: np.ndarray,
    participants: np.ndarray,
    tol: float,
    source: str,
    missing: str | None = None,
) -> dict:
    """Return E3 over the ``participants`` (agent ids): who has overall test loss ``overall_test``
    (P_k + test loss, (K,)) above its local model's ``local_test`` (K,) by more than ``tol``.

    Keys: ``failing_count`` and ``failing_agents`` (the first :data:`LISTED_AGENTS` ids),
    ``above_local_count`` (excess > 0, within the tolerance or not), ``excess_max`` (loss
    units) and its agent, ``undetermined_count`` (a participant without a test sample or with
    an undefined payment). ``holds`` is false when an agent fails, null when none could be
    checked or ``missing`` (no local baseline) says why not.
    """
    out = {"property": "voluntary participation", "holds": None, "tolerance": tol}
    out |= {"tolerance_source": source, "failing_count": None, "failing_agents": None}
    out |= {"above_local_count": None, "excess_max": None, "excess_max_agent": None}
    out |= {"undetermined_count": None, "reason": missing}
    if missing is not None:
        return out
    ids = np.asarray(participants, dtype=np.int64)
    excess = np.asarray(overall_test, dtype=np.float64)[ids] - np.asarray(local_test)[ids]
    known = np.isfinite(excess)
    out["undetermined_count"] = int(ids.size - np.count_nonzero(known))
    if not known.any():
        reason = "no participant has a finite overall and local test loss (test samples?)"
        return out | {"reason": reason}
    failing = ids[known & (excess > tol)]  # NaN compares false: undetermined never fails
    worst = int(np.argmax(np.where(known, excess, -np.inf)))
    return out | {
        "holds": failing.size == 0,
        "failing_count": int(failing.size),
        "failing_agents": failing[:LISTED_AGENTS].tolist(),
        "above_local_count": int(np.count_nonzero(excess[known] > 0)),
        "excess_max": float(excess[worst]),
        "excess_max_agent": int(ids[worst]),
    }


def budget_balance(payments: np.ndarray) -> dict:
    """Return E4: ``budget_total`` = sum_k P_k (loss units, the JSON's budget_total) and whether
    it is at least -:data:`BUDGET_ROUNDING` sum_k |P_k| (null when a payment is undefined)."""
    payments = np.asarray(payments, dtype=np.float64)
    total = float(payments.sum())
    tol = BUDGET_ROUNDING * float(np.abs(payments).sum())
    out = {"property": "weak budget balance", "holds": None, "budget_total": None}
    out |= {"tolerance": None, "reason": None}
    if not (math.isfinite(total) and math.isfinite(tol)):
        return out | {"reason": "a payment is undefined (its problem diverged)"}
    return out | {"holds": total >= -tol, "budget_total": total, "tolerance": tol}


def faithfulness(search: dict | None) -> dict:
    """Return E2 from a best-response search's result (None: no search ran).

    ``regret`` = J(truthful) - J(best found) (the search's ``regret``, else its ``gain``;
    loss units), the best deviation (``agent``, ``family``, ``parameters``, ``objective_kind``),
    ``opt_out_gain`` = J(truthful) - J(opting out), and ``holds`` = regret <= ``bound`` when
    the search states a bound (its ``bound`` key), else null.
    """
    out = {"property": "faithful implementation", "holds": None}
    if search is None:
        reason = "no best-response search ran ([best_response] enabled = false)"
        return out | {"reason": reason}
    regret = search.get("regret", search.get("gain"))
    bound = search.get("bound")
    truthful, opt_out = search.get("truthful"), search.get("opt_out")
    params = search.get("parameters")
    if params is None:
        params = {"gamma": search.get("gamma")}
    out |= {
        "agent": search.get("agent"),
        "family": search.get("family", "amplify"),
        "parameters": params,
        "objective_kind": search.get("objective_kind"),
        "regret": regret,
        "bound": bound,
        "opt_out_gain": truthful - opt_out if _finite(truthful) and _finite(opt_out) else None,
        "reason": None,
    }
    if not _finite(regret):
        return out | {"regret": None, "reason": "the regret is not finite (a run diverged)"}
    if not _finite(bound):
        return out | {"reason": "the search states no bound for this mechanism and setting"}
    return out | {"holds": bool(regret <= bound)}


def properties(
    kind: str,
    epsilon: float,
    *,
    gap: float | None,
    gap_missing: str | None,
    payments: np.ndarray,
    overall_test: np.ndarray,
    local_test: np.ndarray,
    participants: np.ndarray,
    baseline_missing: str | None,
    search: dict | None,
) -> dict:
    """Return the ``economics`` section: E1, E2, E3 and E4, each a dict with ``property`` (its
    name), ``holds`` (true, false or null) and ``reason`` (why null; else null).

    ``kind`` and ``epsilon`` are the mechanism's (the tolerance, :func:`tolerance`); the
    other arguments are passed on to :func:`efficiency`, :func:`faithfulness`,
    :func:`voluntary_participation` and :func:`budget_balance`.
    """
    tol, source = tolerance(kind, epsilon)
    return {
        "E1": efficiency(gap, tol, source, gap_missing),
        "E2": faithfulness(search),
        "E3": voluntary_participation(
            overall_test, local_test, participants, tol, source, baseline_missing
        ),
        "E4": budget_balance(payments),
    }
