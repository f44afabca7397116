"""An empirical privacy audit: a lower bound on epsilon from runs on neighbouring datasets.

``edgesim audit SCENARIO -o DIR`` (and :func:`audit`) runs the scenario's
mechanism M times on its dataset D and M times on a neighbour D' in which a
canary replaces one sample of the smallest agent (:mod:`edgesim.canary`),
with fresh noise in every run (the server's stream is reseeded by the run's
trial) and everything else fixed. Each run reports a scalar statistic of what
it released: the projection of the final model w* on the canary's direction.

A distinguisher thresholds the statistic. The threshold (and which side of it
means "D'") is chosen on the first half of each side's runs; on the second
half its true positive rate TPR = P[stat > t | D'] and false positive rate
FPR = P[stat > t | D] are bounded with Clopper-Pearson intervals, each at
level (1 - confidence) / 2 so both hold together with the confidence asked.
(epsilon, delta)-DP forces TPR <= e^eps FPR + delta and
1 - FPR <= e^eps (1 - TPR) + delta, so

    eps >= max(ln((TPR_lo - delta) / FPR_hi), ln((1 - FPR_hi - delta) / (1 - TPR_lo)))

holds with that confidence at the scenario's delta (``mechanism.beta``)
(Jagielski, Ullman and Oprea, "Auditing differentially private machine
learning: how private is private SGD?", NeurIPS 2020; Nasr et al.,
"Adversary instantiation: lower bounds for differentially private machine
learning", IEEE S&P 2021). A lower bound above the claimed epsilon
(``privacy.epsilon_accounted``) proves the claim false; one below it is
consistent with the claim, not a proof of it. With M runs per side the bound
cannot exceed about ln((M/2) / ln(2 / (1 - confidence))): about 3.3 at
M = 200 and 95%, so an audit can refute claims below that.

The runs are a sweep (:func:`edgesim.sweeps.run_sweep`): ``--workers`` and
``--scheduler`` work, and an interrupted audit resumes from its folder.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import beta as beta_dist

from edgesim import scenario as scn
from edgesim import sweeps as sw
from edgesim.errors import ScenarioError


@dataclass(frozen=True)
class AuditResult:
    """The outcome of an audit.

    ``epsilon_claimed``: the runs' ``privacy.epsilon_accounted`` (None when the
    mechanism claims no privacy, as DP-FFL with data-derived constants does);
    ``epsilon_noise_only``: what the noise alone would give
    (``privacy.epsilon_noise_only``, None without noise); ``epsilon_lower``: the audited lower bound
    (nats) at ``delta`` with ``confidence``; ``runs``: runs per side;
    ``threshold``/``above``: the distinguisher (D' when the statistic is above
    the threshold, or below it when ``above`` is false); ``tpr``/``fpr``: its
    rates on the measuring half; ``statistics``: the statistic of every run,
    ``{"D": [...], "D'": [...]}`` in trial order; ``canary_agent``: whose sample
    the canary replaced.
    """

    epsilon_claimed: float | None
    epsilon_noise_only: float | None
    epsilon_lower: float
    delta: float
    confidence: float
    runs: int
    threshold: float
    above: bool
    tpr: float
    fpr: float
    statistics: dict
    canary_agent: int

    @property
    def refuted(self) -> bool:
        """Whether the audit proves the claimed epsilon false (lower bound above the claim)."""
        return self.epsilon_claimed is not None and self.epsilon_lower > self.epsilon_claimed

    def to_json(self) -> dict:
        """Return the result as plain JSON-ready data (the statistics included)."""
        return {**dataclasses.asdict(self), "refuted": self.refuted}


def clopper_pearson(k: int, n: int, level: float) -> tuple[float, float]:
    """Return the one-sided Clopper-Pearson bounds (lower, upper) of a rate k / n, each at ``level``.

    The lower bound is the ``level`` quantile of Beta(k, n - k + 1) (0 when
    k = 0), the upper the 1 - ``level`` quantile of Beta(k + 1, n - k) (1
    when k = n): exact binomial bounds, probabilities in [0, 1].
    """
    lo = 0.0 if k == 0 else float(beta_dist.ppf(level, k, n - k + 1))
    hi = 1.0 if k == n else float(beta_dist.ppf(1.0 - level, k + 1, n - k))
    return lo, hi


def epsilon_from_rates(tp: int, n_alt: int, fp: int, n_null: int, delta: float, level: float):
    """Return the lower bound on epsilon (nats, >= 0) from a distinguisher's counts.

    ``tp`` of ``n_alt`` runs on D' and ``fp`` of ``n_null`` runs on D were
    called "D'"; each rate is bounded at one-sided ``level`` (module docstring).
    """
    tpr_lo, tpr_hi = clopper_pearson(tp, n_alt, level)
    fpr_lo, fpr_hi = clopper_pearson(fp, n_null, level)
    best = 0.0
    for num, den in ((tpr_lo - delta, fpr_hi), (1.0 - fpr_hi - delta, 1.0 - tpr_lo)):
        if num > 0 and den > 0:
            best = max(best, math.log(num / den))
    return best


def _counts(null: np.ndarray, alt: np.ndarray, t: float, above: bool) -> tuple[int, int]:
    """Return (true positives, false positives) of the rule "D' when stat > t" (or < t)."""
    if above:
        return int(np.count_nonzero(alt > t)), int(np.count_nonzero(null > t))
    return int(np.count_nonzero(alt < t)), int(np.count_nonzero(null < t))


def choose_threshold(null, alt, delta: float, level: float) -> tuple[float, bool]:
    """Return the (threshold, above) that maximises the lower bound on these runs.

    Candidates are the midpoints between consecutive observed values (and
    beyond both ends), in both orientations.
    """
    values = np.unique(np.concatenate([null, alt]))
    mids = (values[:-1] + values[1:]) / 2 if values.size > 1 else values
    candidates = np.concatenate([[values[0] - 1.0], mids, [values[-1] + 1.0]])
    best, choice = -1.0, (float(candidates[0]), True)
    for above in (True, False):
        for t in candidates.tolist():
            tp, fp = _counts(null, alt, t, above)
            eps = epsilon_from_rates(tp, alt.size, fp, null.size, delta, level)
            if eps > best:
                best, choice = eps, (t, above)
    return choice


def lower_bound(null, alt, delta: float, confidence: float = 0.95) -> dict:
    """Return the audit's bound from the statistics of the runs on D (``null``) and D' (``alt``).

    The first half of each side chooses the threshold, the second half
    measures it. Returns ``{"epsilon_lower", "threshold", "above", "tpr", "fpr"}``.
    """
    null, alt = np.asarray(null, dtype=float), np.asarray(alt, dtype=float)
    level = (1.0 - confidence) / 2.0
    hn, ha = null.size // 2, alt.size // 2
    t, above = choose_threshold(null[:hn], alt[:ha], delta, level)
    tp, fp = _counts(null[hn:], alt[ha:], t, above)
    n_alt, n_null = alt.size - ha, null.size - hn
    eps = epsilon_from_rates(tp, n_alt, fp, n_null, delta, level)
    return {
        "epsilon_lower": eps,
        "threshold": t,
        "above": above,
        "tpr": tp / n_alt,
        "fpr": fp / n_null,
    }


def audit_plan(path, overrides=(), runs: int | None = None) -> tuple[scn.Scenario, scn.SweepPlan]:
    """Return the audited scenario and the plan of its 2 M runs (M on D, then M on D').

    ``path``: a scenario file or shipped name; ``overrides``: ``--set`` strings;
    ``runs``: M (default ``audit.runs``). The scenario's own ``[sweep]`` is
    ignored: an audit is of one scenario. Raises ScenarioErrors on bad input.
    """
    base = scn.load(path, list(overrides))
    if runs is not None:
        if runs < 4:
            raise ScenarioError("--runs", f"must be an integer >= 4, got {runs}")
        base = dataclasses.replace(base, audit=dataclasses.replace(base.audit, runs=runs))
    M = base.audit.runs
    plan_runs = []
    for side in (False, True):
        for t in range(M):
            cfg = dataclasses.replace(base.audit, trial=t, neighbour=side)
            values = {"audit.neighbour": side, "audit.trial": t}
            sc = dataclasses.replace(base, audit=cfg)
            plan_runs.append(scn.SweepRun(len(plan_runs), values, sc))
    axis = scn.Axis(
        ("audit.neighbour", "audit.trial"),
        tuple(tuple(r.values.values()) for r in plan_runs),
        zip=True,
    )
    resolved = scn.resolve_path(path) if not isinstance(path, dict) else None
    return base, scn.SweepPlan((axis,), tuple(plan_runs), resolved)


def audit(
    path,
    out_dir: str | Path | None = None,
    *,
    overrides=(),
    runs: int | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    bar=None,
) -> AuditResult:
    """Audit a scenario's privacy claim; returns an :class:`AuditResult`.

    ``out_dir``: the audit's folder (the runs' records; rerunning resumes), or
    None to keep them in memory. ``workers``/``scheduler`` as for a sweep.
    Raises RuntimeError when a run failed or the audit was interrupted.
    """
    base, plan = audit_plan(path, overrides, runs)
    summary = sw.run_sweep(
        plan,
        out_dir,
        workers=workers,
        scheduler=scheduler,
        bar=bar,
        keep=out_dir is None,
        manifest={"audit": True, "scenario": str(plan.path), "overrides": list(overrides)},
    )
    if summary.interrupted:
        raise KeyboardInterrupt
    records = sw.load_records(out_dir) if out_dir is not None else sw.latest(summary.records)
    by_id = {r["run_id"]: r for r in records}
    M = base.audit.runs
    stats = {False: np.full(M, np.nan), True: np.full(M, np.nan)}
    claimed: list[float | None] = []
    noise_only: list[float] = []
    canary_agent = -1
    for run in plan.runs:
        rec = by_id.get(run.run_id)
        if rec is None or rec.get("status") != "ok":
            why = rec.get("error") if rec else "not run"
            raise RuntimeError(f"audit run {run.index} ({run.values}) failed: {why}")
        result = rec["result"]
        stats[run.scenario.audit.neighbour][run.scenario.audit.trial] = result["audit"]["statistic"]
        canary_agent = result["audit"]["canary_agent"]
        if "privacy" in result:
            claimed.append(result["privacy"]["epsilon_accounted"])
            noise_only.append(result["privacy"]["epsilon_noise_only"])
    delta = base.mechanism.beta
    bound = lower_bound(stats[False], stats[True], delta, base.audit.confidence)
    return AuditResult(
        epsilon_claimed=None if not claimed or None in claimed else max(claimed),
        epsilon_noise_only=max(noise_only) if noise_only else None,
        delta=delta,
        confidence=base.audit.confidence,
        runs=M,
        statistics={"D": stats[False].tolist(), "D'": stats[True].tolist()},
        canary_agent=canary_agent,
        **bound,
    )
