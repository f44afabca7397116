"""Paper Fig. 2 (Proposition 9): DP-FFL's three-way trade-off, with measured payment errors overlaid.

Left: the iterations T1 = T2 of Proposition 9's rule (eq. (Convergence11))
against the privacy risk alpha, for eta2 = c / ((K-1) L_g), c in {1, 0.5, 0.1}
(eta2 on the unweighted sum, as in the proposition). Right: the bound on the
expected payment error |E[P_k*] - P_k^VCG| at that T (``theory.prop9_bound``,
eq. (ABC) at the rule's T; Theorem 3's epsilon is 0 because L = K), with the
measured errors of DP-FFL runs overlaid. The black curve is the same bound
with A re-derived from the proposition's own proof (``theory.prop9_A_rederived``,
(K-1) L_g times the printed A: the noisy step's variance enters through the
descent lemma with J's smoothness (K-1) L_g), at the T the rule picks.

Why two references for the payments: the agents clip each per-sample gradient
to norm C = 1 and each per-sample loss to [0, 1] (``docs/privacy.md``), so
that the sensitivities behind the privacy claim hold. Clipping changes the
objective the agents descend and report, so even without noise the payments
do not tend to exact VCG of the unclipped objective. Proposition 9 assumes the
bounds hold and bounds what the *noise* does to the payments at the rule's T;
clipping's own bias lies outside it. Each DP-FFL run therefore has a
noise-free twin: the same scenario, seed, clusters and T1, T2, with
``mechanism.alpha = 1e9`` (sigma and sigma_P below 1e-6, checked). The series:

* "noise": max_k |mean over seeds of (P_k - P_k^noise-free)|, the seeds
  paired, with its standard error: the estimate of what Proposition 9 bounds;
* "noise + clipping": max_k |mean over seeds of (P_k - P_k^VCG)| with its
  standard error (what this figure drew before clipping), and "noise +
  clipping, per run": mean and standard deviation over seeds of
  max_k |P_k - P_k^VCG| (``payment_error_max``, what the paper's Fig. 5 plots);
* "clipping alone": max_k |mean over seeds of (P_k^noise-free - P_k^VCG)|,
  the noise-free twins against exact VCG, with its standard error, at each
  alpha (the twins' T follows alpha's rule), and drawn as a horizontal
  reference at its mean over the alphas (the "level drawn" rows of the CSV).

The runs read L_g off the data (``public_smoothness = "data"``): Proposition 9
is stated for a known L_g, and the figure measures payment error, not
privacy, so its runs make no privacy claim (``docs/privacy.md``). DP-FFL's
default, a public bound from a feature clip, would change the problem (the
features) and the step sizes the rule is drawn for.

Runs: scenario ``dp-ffl-privacy`` (ridge, synthetic heterogeneous data) with
K = 10 agents, L = K clusters (exact VCG, epsilon = 0), the paper's noise
calibration and T1 = T2 = Proposition 9's rule at the largest step
(``phase1_rounds = phase2_rounds = "theory"``). The theory curves use the
runs' constants: d = 11 parameters, L_f = mechanism.gradient_bound = 1,
n_(1) (smallest local data set), mu = l2 and the median L_g of the runs.

Full size: 5000 samples (n_k = 500), alpha in {0.05, 0.1, 0.2, 0.5, 1, 2},
10 seeds. Quick: 1000 samples, alpha in {0.1, 1}, 3 seeds. The noise-free
twins are one sweep per seed (its T1, T2 zipped), under ``runs/<tag>-noise-free/``.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from analysis import common
from edgesim import theory

STEM = "fig2_tradeoff"
SCENARIO = "dp-ffl-privacy"
K = 10
BETA = 0.01
STEP_FACTORS = (1.0, 0.5, 0.1)
ALPHA_GRID = np.geomspace(0.01, 10.0, 61)
REDERIVED = "re-derived A, eta2 = 1/((K-1) L_g)"
#: The series of the measured payment errors (CSV names; see the module docstring).
NOISE = "noise: max_k |mean(P_k - P_k^noise-free)|"
BOTH = "noise + clipping: max_k |mean(P_k - VCG_k)|"
BOTH_PER_RUN = "noise + clipping, per run: max_k |P_k - VCG_k|"
CLIPPING = "clipping alone: max_k |mean(P_k^noise-free - VCG_k)|"
CLIPPING_LEVEL = "clipping alone, level drawn (mean over alpha)"
#: alpha of the noise-free twins, and the largest sigma (per coordinate) accepted as noise-free.
NOISE_FREE_ALPHA = 1e9
NOISE_FREE_SIGMA = 1e-6


def _overrides(quick: bool) -> list[str]:
    """Return the scenario overrides (size, rule-based T, L = K, sweep over alpha and seeds)."""
    alphas, seeds, samples = (
        ([0.1, 1.0], [0, 1, 2], 1000)
        if quick
        else ([0.05, 0.1, 0.2, 0.5, 1.0, 2.0], list(range(10)), 5000)
    )
    return [
        f"agents.count={K}",
        f"data.samples={samples}",
        f"mechanism.beta={BETA}",
        "mechanism.phase1_rounds=theory",
        "mechanism.phase2_rounds=theory",
        # Proposition 9 takes L_g as known: the figure uses the data's own L_g, as when it was
        # drawn, so its runs make no privacy claim (docs/privacy.md); it measures payment error.
        'mechanism.public_smoothness="data"',
        f"sweep.mechanism.alpha={alphas}",
        "sweep.mechanism.clusters=['all']",
        "sweep.mechanism.calibration=['paper']",
        f"sweep.seed={seeds}",
    ]


def noise_free_overrides(quick: bool, seed: int, rounds: list[tuple[int, int]]) -> list[str]:
    """Return the overrides of one seed's noise-free twins: alpha = 1e9 and its runs' (T1, T2) zipped."""
    t1 = ", ".join(str(a) for a, _ in rounds)
    t2 = ", ".join(str(b) for _, b in rounds)
    zipped = f'[{{"mechanism.phase1_rounds" = [{t1}], "mechanism.phase2_rounds" = [{t2}]}}]'
    return [
        o
        for o in _overrides(quick)
        if not o.startswith(("sweep.mechanism.alpha=", "sweep.seed=", "mechanism.phase"))
    ] + [
        f"sweep.mechanism.alpha=[{NOISE_FREE_ALPHA:g}]",
        f"sweep.seed=[{seed}]",
        f"sweep.zip={zipped}",
    ]


def rounds(r: dict) -> tuple[int, int]:
    """Return the (T1, T2) a run ran (T2 the same for every Phase II problem)."""
    t2 = set(r["iterations"]["phase2_per_agent"])
    assert len(t2) == 1, "one T2 for every Phase II problem"
    return int(r["iterations"]["phase1"]), int(t2.pop())


def noise_free_twins(results: list[dict], out: Path, quick: bool, workers: int, tag: str) -> dict:
    """Run (or resume) a noise-free twin of every run; returns {(seed, T1, T2): twin's result}.

    One sweep per seed, its runs' (T1, T2) zipped, under ``out/runs/<tag>-noise-free/seed-<s>``.
    Raises AssertionError if a twin's noise is not negligible (sigma or sigma_P >= 1e-6).
    """
    by_seed: dict[int, set[tuple[int, int]]] = {}
    for r in results:
        by_seed.setdefault(r["seed"], set()).add(rounds(r))
    twins = {}
    for seed, pairs in sorted(by_seed.items()):
        res = common.sweep(
            SCENARIO,
            out,
            noise_free_overrides(quick, seed, sorted(pairs)),
            workers=workers,
            tag=f"{tag}-noise-free/seed-{seed}",
        )
        for row in res.ok:
            t = row["result"]
            p = t["privacy"]
            assert max(p["sigma"], p["sigma_p"]) < NOISE_FREE_SIGMA, ("noise-free twin", p)
            twins[(t["seed"], *rounds(t))] = t
    return twins


def constants(results: list[dict]) -> dict:
    """Return Proposition 9's inputs shared by the runs (d, L_f, K, n_(1), mu, L_g)."""
    r0 = results[0]
    n_min = min(min(a["n"] for a in r["agents"]) for r in results)
    return {
        "K": r0["K"],
        "d": r0["data"]["d"] + 1,  # ridge with intercept: one weight per feature plus one
        "L_f": r0["scenario"]["mechanism"]["gradient_bound"],
        "n_min": n_min,
        "mu": r0["constants"]["mu"],
        "L_g": statistics.median(r["constants"]["L_g"] for r in results),
        "beta": BETA,
    }


def theory_rows(c: dict, measured_alphas) -> list[dict]:
    """Return T and the bound against alpha for each step factor (Prop. 9, printed A).

    The alpha grid is ALPHA_GRID plus the alphas of the runs (so the bound is
    known exactly where a run is).
    """
    rows = []
    alphas = sorted(set(ALPHA_GRID.tolist()) | set(measured_alphas))
    for f in STEP_FACTORS:
        eta2 = f / ((c["K"] - 1) * c["L_g"])
        for a in alphas:
            A, B, C = theory.prop9_constants(
                eta2, c["d"], c["L_f"], c["K"], c["n_min"], float(a), c["beta"], c["mu"]
            )
            base = {"series": f"theory, eta2 = {f:g}/((K-1) L_g)", "eta2": eta2, "x": float(a)}
            rows.append(base | {"panel": "T", "y": float(theory.prop9_rounds(A, B, C))})
            rows.append(base | {"panel": "bound", "y": theory.prop9_bound(A, B, C, 0.0)})
            if f == 1.0:  # the proof's own A at the rule's T (what the runs use)
                A_r = theory.prop9_A_rederived(
                    eta2,
                    c["d"],
                    c["L_f"],
                    c["K"],
                    c["n_min"],
                    float(a),
                    c["beta"],
                    c["mu"],
                    c["L_g"],
                )
                T = theory.prop9_rounds(A, B, C)
                y = theory.prop9_objective(A_r, B, C, T)
                rows.append(base | {"panel": "bound", "series": REDERIVED, "y": y})
    return [r | c for r in rows]


def lower_bar(y: float, err: float) -> float:
    """Return the lower error bar drawn on the log axis: err clipped to 0.999 y (loss units).

    A log axis cannot show a bar reaching 0 or below, so a bar longer than the
    point's value is drawn down to 0.001 y; the CSV keeps both ``err`` (the
    statistic) and ``err_low_plotted`` (what is drawn below the point).
    """
    return min(err, 0.999 * y)


def _bias(diff: np.ndarray) -> tuple[float, float]:
    """Return max_k |mean over seeds| of diff (seeds x agents) and the standard error at that k."""
    bias = diff.mean(axis=0)
    sem = diff.std(axis=0, ddof=1) / np.sqrt(diff.shape[0])
    k = int(np.argmax(np.abs(bias)))
    return float(abs(bias[k])), float(sem[k])


def _point(series: str, y: float, err: float) -> dict:
    """Return a bound-panel row with its error bar (``err``) and the lower bar drawn."""
    return {
        "panel": "bound",
        "series": series,
        "y": y,
        "err": err,
        "err_low_plotted": lower_bar(y, err),
    }


def measured_rows(results: list[dict], twins: dict) -> list[dict]:
    """Return, per alpha, the rule's T of the runs and the measured payment errors (module docstring).

    ``twins``: {(seed, T1, T2): noise-free result} from :func:`noise_free_twins`;
    each run is paired with the twin of its seed and rounds. Payment errors are
    in loss units (payments are differences of losses).
    """
    by_alpha: dict[float, list[dict]] = {}
    for r in results:
        by_alpha.setdefault(r["privacy"]["alpha"], []).append(r)
    rows = []
    for a, runs in sorted(by_alpha.items()):
        runs = sorted(runs, key=lambda r: r["seed"])
        free = [twins[(r["seed"], *rounds(r))] for r in runs]
        for r, t in zip(runs, free, strict=True):
            assert [x["n"] for x in r["agents"]] == [x["n"] for x in t["agents"]], "same data"
        pay = np.array([r["payments"] for r in runs], float)
        pay_free = np.array([t["payments"] for t in free], float)
        vcg = np.array([r["vcg_payments"] for r in runs], float)
        m, s = common.mean_std(r["payment_error_max"] for r in runs)
        T = statistics.median(r["iterations"]["phase1"] for r in runs)
        base = {"x": a, "seeds": len(runs)}
        rows += [
            base | {"panel": "T", "series": "runs (rule at eta2 = 1/((K-1) L_g))", "y": float(T)},
            base | _point(NOISE, *_bias(pay - pay_free)),
            base | _point(BOTH, *_bias(pay - vcg)),
            base | _point(BOTH_PER_RUN, m, s),
            base | _point(CLIPPING, *_bias(pay_free - vcg)),
        ]
    level = float(np.mean([r["y"] for r in rows if r["series"] == CLIPPING]))
    xs = [r["x"] for r in rows if r["series"] == CLIPPING]
    lo, hi = min(ALPHA_GRID.min(), *xs), max(ALPHA_GRID.max(), *xs)
    rows += [{"panel": "bound", "series": CLIPPING_LEVEL, "x": x, "y": level} for x in (lo, hi)]
    return rows


def draw(rows: list[dict], c: dict) -> plt.Figure:
    """Draw the two panels from the CSV rows; returns the figure."""
    fig, (ax_t, ax_b) = plt.subplots(1, 2, figsize=(13, 5.5))
    colors = dict(zip(STEP_FACTORS, ["tab:blue", "tab:orange", "tab:green"], strict=True))
    for f in STEP_FACTORS:
        name = f"theory, eta2 = {f:g}/((K-1) L_g)"
        for ax, panel in ((ax_t, "T"), (ax_b, "bound")):
            pts = sorted(
                (r["x"], r["y"]) for r in rows if r["panel"] == panel and r["series"] == name
            )
            ls = {1.0: "-", 0.5: "--", 0.1: ":"}[f]
            label = f"Prop. 9, $\\eta_2$ = {f:g}/((K-1)$L_g$)"
            ax.plot(*zip(*pts, strict=True), ls, color=colors[f], lw=1.8, label=label)
    pts = sorted((r["x"], r["y"]) for r in rows if r["series"] == REDERIVED)
    ax_b.plot(
        *zip(*pts, strict=True),
        "-",
        color="k",
        lw=1.2,
        label="Prop. 9 with A re-derived from its proof (x (K-1)$L_g$), $\\eta_2$ = 1/((K-1)$L_g$)",
    )
    runs_T = sorted((r["x"], r["y"]) for r in rows if r["series"].startswith("runs"))
    ax_t.plot(*zip(*runs_T, strict=True), "ko", ms=6, mfc="none", label="T used by the runs")
    level = sorted((r["x"], r["y"]) for r in rows if r["series"] == CLIPPING_LEVEL)
    ax_b.plot(
        *zip(*level, strict=True),
        "-.",
        color="tab:gray",
        lw=1.5,
        label="clipping alone, mean over $\\alpha$ (noise-free twins vs exact VCG)",
    )
    labels = {
        CLIPPING: "clipping alone at each $\\alpha$'s T: max$_k$ |mean($P_k^{nf}$ - VCG$_k$)|",
        NOISE: "noise (vs noise-free twin, seeds paired): max$_k$ |mean($P_k$ - $P_k^{nf}$)|",
        BOTH: "noise + clipping (vs exact VCG): max$_k$ |mean($P_k$ - VCG$_k$)|",
        BOTH_PER_RUN: "noise + clipping, per run: max$_k$ |$P_k$ - VCG$_k$|",
    }
    styles = {
        CLIPPING: dict(fmt="x", color="tab:gray", ms=6),
        NOISE: dict(fmt="s", color="tab:red", ms=7),
        BOTH: dict(fmt="D", color="tab:brown", mfc="none", ms=6),
        BOTH_PER_RUN: dict(fmt="o", color="tab:purple", mfc="none", ms=5),
    }
    for series, label in labels.items():
        pts = sorted(
            (r["x"], r["y"], r["err"], r["err_low_plotted"]) for r in rows if r["series"] == series
        )
        x, y, e, lower = (np.array(v) for v in zip(*pts, strict=True))  # lower: see lower_bar
        ax_b.errorbar(x, y, yerr=[lower, e], capsize=3, label=label, **styles[series])
    for ax in (ax_t, ax_b):
        ax.set_xscale("log")
        ax.set_xlabel("privacy risk $\\alpha$ ($\\beta$ = 0.01)")
        ax.grid(True, which="major", alpha=0.3)
    ax_t.set_ylabel("iterations $T_1 = T_2$ (rounds)")
    ax_t.set_title("(a) iterations needed (eq. Convergence11)", fontsize=10)
    ax_b.set_yscale("log")
    ax_b.set_ylabel("payment error (in loss units)")
    ax_b.set_title(
        "(b) bound on $|E[P_k^*] - P_k^{VCG}|$ (eq. ABC at the rule's T) and runs "
        "(C = 1, loss in [0, 1])",
        fontsize=10,
    )
    ax_t.legend(fontsize=8)
    ax_b.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2)
    return common.titled(
        fig,
        f"Fig. 2 / Proposition 9: DP-FFL on dp-ffl-privacy (ridge, synthetic), K = {c['K']}, L = K, "
        f"n$_{{(1)}}$ = {c['n_min']}, d = {c['d']}, $L_f$ = {c['L_f']:g}, $\\mu$ = {c['mu']:g}, "
        f"$L_g$ = {c['L_g']:.3g}, paper noise calibration",
    )


def main(argv=None) -> list[Path]:
    """Regenerate Fig. 2 with the measured errors; returns the PNG and CSV paths."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    tag = f"{SCENARIO}-fig2-{'quick' if args.quick else 'full'}"
    res = common.sweep(SCENARIO, args.out, _overrides(args.quick), workers=args.workers, tag=tag)
    results = [r["result"] for r in res.ok]
    twins = noise_free_twins(results, args.out, args.quick, args.workers, tag)
    c = constants(results)
    rows = theory_rows(c, {r["privacy"]["alpha"] for r in results}) + measured_rows(results, twins)
    csv = common.write_csv(args.out / f"{STEM}.csv", rows)
    png = common.save(draw(rows, c), args.out, STEM)
    return [png, csv]


if __name__ == "__main__":
    for path in main():
        print(path)
