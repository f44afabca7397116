"""Paper Fig. 2 (Proposition 9): DP-FFL's three-way trade-off, with measured payment errors overlaid.

Left: the iterations T1 = T2 of Proposition 9's rule (eq. (Convergence11))
against the privacy risk alpha, for eta2 = c / ((K-1) L_g), c in {1, 0.5, 0.1}
(eta2 on the unweighted sum, as in the proposition). Right: the bound on the
expected payment error |E[P_k*] - P_k^VCG| at that T (``theory.prop9_bound``,
eq. (ABC) at the rule's T; Theorem 3's epsilon is 0 because L = K), with the
measured errors of DP-FFL runs overlaid. The black curve is the same bound
with A re-derived from the proposition's own proof (``theory.prop9_A_rederived``,
(K-1) L_g times the printed A: the noisy step's variance enters through the
descent lemma with J's smoothness (K-1) L_g), at the T the rule picks:

* "bias": max_k |mean over seeds of (P_k - P_k^VCG)|, the estimate of what
  Proposition 9 bounds, with its standard error;
* "per run": mean and standard deviation over seeds of
  max_k |P_k - P_k^VCG| (``payment_error_max``, what the paper's Fig. 5 plots).

Runs: scenario ``dp-ffl-privacy`` (ridge, synthetic heterogeneous data) with
K = 10 agents, L = K clusters (exact VCG, epsilon = 0), the paper's noise
calibration and T1 = T2 = Proposition 9's rule at the largest step
(``phase1_rounds = phase2_rounds = "theory"``). The theory curves use the
runs' constants: d = 11 parameters, L_f = mechanism.gradient_bound = 1,
n_(1) (smallest local data set), mu = l2 and the median L_g of the runs.

Full size: 5000 samples (n_k = 500), alpha in {0.05, 0.1, 0.2, 0.5, 1, 2},
10 seeds. Quick: 1000 samples, alpha in {0.1, 1}, 3 seeds.
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
        f"sweep.mechanism.alpha={alphas}",
        "sweep.mechanism.clusters=['all']",
        "sweep.mechanism.calibration=['paper']",
        f"sweep.seed={seeds}",
    ]


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


def measured_rows(results: list[dict]) -> list[dict]:
    """Return, per alpha, the rule's T of the runs, the bias estimate and the per-run error.

    Payment errors are in loss units (payments are differences of losses).
    """
    by_alpha: dict[float, list[dict]] = {}
    for r in results:
        by_alpha.setdefault(r["privacy"]["alpha"], []).append(r)
    rows = []
    for a, runs in sorted(by_alpha.items()):
        diff = np.array([np.subtract(r["payments"], r["vcg_payments"]) for r in runs])
        S = diff.shape[0]
        bias = diff.mean(axis=0)
        sem = diff.std(axis=0, ddof=1) / np.sqrt(S)
        k = int(np.argmax(np.abs(bias)))
        per_run = [r["payment_error_max"] for r in runs]
        m, s = common.mean_std(per_run)
        T = statistics.median(r["iterations"]["phase1"] for r in runs)
        base = {"x": a, "seeds": S}
        rows += [
            base | {"panel": "T", "series": "runs (rule at eta2 = 1/((K-1) L_g))", "y": float(T)},
            base
            | {
                "panel": "bound",
                "series": "measured bias max_k |mean(P_k - VCG_k)|",
                "y": float(abs(bias[k])),
                "err": float(sem[k]),
                "err_low_plotted": lower_bar(float(abs(bias[k])), float(sem[k])),
            },
            base
            | {
                "panel": "bound",
                "series": "measured per run max_k |P_k - VCG_k|",
                "y": m,
                "err": s,
                "err_low_plotted": lower_bar(m, s),
            },
        ]
    return rows


def draw(rows: list[dict], c: dict) -> plt.Figure:
    """Draw the two panels from the CSV rows; returns the figure."""
    fig, (ax_t, ax_b) = plt.subplots(1, 2, figsize=(13, 5))
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
    for series, style in (
        ("measured bias max_k |mean(P_k - VCG_k)|", dict(fmt="s", color="tab:red")),
        ("measured per run max_k |P_k - VCG_k|", dict(fmt="o", color="tab:purple")),
    ):
        pts = sorted(
            (r["x"], r["y"], r["err"], r["err_low_plotted"]) for r in rows if r["series"] == series
        )
        x, y, e, lower = (np.array(v) for v in zip(*pts, strict=True))  # lower: see lower_bar
        label = series.replace("measured bias", "DP-FFL runs: bias").replace(
            "measured per run", "DP-FFL runs: per run"
        )
        ax_b.errorbar(x, y, yerr=[lower, e], capsize=3, ms=6, label=label, **style)
    for ax in (ax_t, ax_b):
        ax.set_xscale("log")
        ax.set_xlabel("privacy risk $\\alpha$ ($\\beta$ = 0.01)")
        ax.grid(True, which="major", alpha=0.3)
    ax_t.set_ylabel("iterations $T_1 = T_2$ (rounds)")
    ax_t.set_title("(a) iterations needed (eq. Convergence11)", fontsize=10)
    ax_b.set_yscale("log")
    ax_b.set_ylabel("payment error $|P_k - P_k^{VCG}|$ (payment, in loss units)")
    ax_b.set_title(
        "(b) bound on $|E[P_k^*] - P_k^{VCG}|$ (eq. ABC at the rule's T) and runs", fontsize=10
    )
    ax_t.legend(fontsize=8)
    ax_b.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    fig.suptitle(
        f"Fig. 2 / Proposition 9: DP-FFL on dp-ffl-privacy (ridge, synthetic), K = {c['K']}, L = K, "
        f"n$_{{(1)}}$ = {c['n_min']}, d = {c['d']}, $L_f$ = {c['L_f']:g}, $\\mu$ = {c['mu']:g}, "
        f"$L_g$ = {c['L_g']:.3g}, paper noise calibration",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def main(argv=None) -> list[Path]:
    """Regenerate Fig. 2 with the measured errors; returns the PNG and CSV paths."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    tag = f"{SCENARIO}-fig2-{'quick' if args.quick else 'full'}"
    res = common.sweep(SCENARIO, args.out, _overrides(args.quick), workers=args.workers, tag=tag)
    results = [r["result"] for r in res.ok]
    c = constants(results)
    rows = theory_rows(c, {r["privacy"]["alpha"] for r in results}) + measured_rows(results)
    csv = common.write_csv(args.out / f"{STEM}.csv", rows)
    png = common.save(draw(rows, c), args.out, STEM)
    return [png, csv]


if __name__ == "__main__":
    for path in main():
        print(path)
