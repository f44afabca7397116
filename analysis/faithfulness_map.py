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
DP-FFL's level (Corollary 10) holds only at Proposition 9's T1 = T2 (about
10^3 rounds here; the runs use the scenario's T1 = 80, T2 = 20) and has an
unspecified constant D, so it is not drawn.

Scenario ``paper-fig4-noniid`` (synthetic 10-class data, not MNIST;
multinomial logistic regression) with K = 5 agents (label c goes to agent
c mod 5), l2 = 0.1, 2000 samples, 5 features. FedAvg and FFL run Theorem 1's
T1 with Delta_tol = 1e-3 (w* close to w^o); FFL also Theorem 1's T2 and the
stopping rule at epsilon = 1e-3; DP-FFL runs T1 = 80, T2 = 20, L = K, alpha =
0.1 (paper calibration). Full size: Delta in {0, 0.5, 1} (an intermediate
size: each search costs about 15 mechanism runs), every agent, 5 grid points of
gamma plus the refinement to 0.05 in log gamma. Quick: Delta in {0, 1},
agent 0, 400 samples, 3 grid points, refinement to 0.3, Delta_tol = 0.01.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import edgesim
from analysis import common
from analysis.fig1_proposition3 import sweep_records
from edgesim import theory
from edgesim.simulate import Simulation

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


def _size(quick: bool) -> tuple[list[str], list[float], list[int]]:
    """Return (common overrides, Delta values, agents searched)."""
    samples, deltas, agents, points, xtol, tol = (
        (400, [0.0, 1.0], [0], 3, 0.3, 0.01)
        if quick
        else (2000, [0.0, 0.5, 1.0], list(range(K)), 5, 0.05, 0.001)
    )
    common_ov = [
        f"agents.count={K}",
        f"data.samples={samples}",
        "data.features=5",
        "model.l2=0.1",
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
    return common_ov, deltas, agents


def max_feature_norm(overrides: list[str], delta: float) -> float:
    """Return max_i |x~_i| (features with the intercept) of the training data at ``delta``."""
    ov = [o for o in overrides if not o.startswith(("sweep.", "best_response."))]
    sc = edgesim.load_scenario(
        common.scenario_path(SCENARIO), ov + [f"data.partition.delta={delta}"]
    )
    Xa = Simulation(sc).design.Xa
    return float(np.sqrt(np.einsum("ij,ij->i", Xa, Xa).max()))


def epsilon_tilde(r: dict, x_norm: float) -> dict:
    """Return Proposition 5's epsilon~ and the proof's empirical tolerance for an FFL run."""
    sc = r["scenario"]
    C = r["data"]["classes"]
    l2 = sc["model"]["l2"]
    n = [a["n"] for a in r["agents"]]
    p = [1.0 / len(n)] * len(n)
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


def rows_for(results: dict[str, list[dict]], x_norms: dict[float, float]) -> list[dict]:
    """Return the tidy rows: per mechanism, Delta and agent, both gains; FFL's bounds."""
    rows = []
    for mech, runs in results.items():
        for r in runs:
            delta = r["scenario"]["data"]["partition"]["delta"]
            br = r["best_response"]
            base = {"mechanism": mech, "delta": delta, "agent": br["agent"]}
            rows.append(
                base | {"series": "gain of best gamma", "y": br["gain"], "gamma": br["gamma"]}
            )
            rows.append(
                base | {"series": "gain of opting out", "y": br["truthful"] - br["opt_out"]}
            )
            if mech == "ffl":
                b = epsilon_tilde(r, x_norms[delta])
                rows.append(base | {"series": "Prop. 5 epsilon~", "y": b["epsilon_tilde"]})
                rows.append(
                    base | {"series": "2 epsilon + K (F(w*) - F(w^o))", "y": b["tolerance"]}
                )
    return rows


def draw(rows: list[dict], deltas: list[float]) -> plt.Figure:
    """Draw the gains (two panels) from the CSV rows; returns the figure."""
    fig, axes = plt.subplots(1, 2, figsize=(13.5, 5.6))
    jitter = {"fedavg": -0.012, "ffl": 0.0, "dp-ffl": 0.012}
    for ax, series in zip(axes, ("gain of best gamma", "gain of opting out"), strict=True):
        for mech in MECHANISMS:
            sub = [r for r in rows if r["mechanism"] == mech and r["series"] == series]
            x = np.array([r["delta"] for r in sub]) + jitter[mech]
            y = np.array([r["y"] for r in sub])
            ax.plot(x, y, "o", color=COLOR[mech], alpha=0.45, ms=5)
            worst = [max(r["y"] for r in sub if r["delta"] == dl) for dl in deltas]
            ax.plot(
                np.array(deltas) + jitter[mech],
                worst,
                "-",
                color=COLOR[mech],
                lw=1.8,
                label=f"{LABEL[mech]} (dots: agents; line: largest over agents)",
            )
        if series == "gain of best gamma":
            for name, ls in (("Prop. 5 epsilon~", "--"), ("2 epsilon + K (F(w*) - F(w^o))", ":")):
                top = [
                    max(r["y"] for r in rows if r["series"] == name and r["delta"] == dl)
                    for dl in deltas
                ]
                label = (
                    "FFL: Prop. 5 $\\tilde\\epsilon$ = 2$\\epsilon$ + K$\\Phi(0.05)$"
                    if name.startswith("Prop")
                    else "FFL: proof's tolerance 2$\\epsilon$ + K(F(w*) - F(w$^o$))"
                )
                ax.plot(deltas, top, ls, color="tab:green", lw=1.4, label=label)
        ax.axhline(0.0, color="0.6", lw=0.8)
        ax.set_yscale("symlog", linthresh=1e-4)
        opting = series == "gain of opting out"
        ys = [r["y"] for r in rows if (r["series"] == "gain of opting out") == opting]
        top, bottom = 5 * max(max(ys), 1e-4), 3 * min(min(ys), 0.0)
        ax.set_ylim(bottom if series != "gain of best gamma" else -2e-5, top)
        if series == "gain of best gamma":
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
    fig.suptitle(
        f"Faithfulness map: each agent's best-deviation gain in overall loss P + F (Def. 1), "
        f"paper-fig4-noniid, K = {K}, synthetic 10-class data (not MNIST), logistic",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def main(argv=None) -> list[Path]:
    """Regenerate the faithfulness map; returns the PNG and CSV paths."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    common_ov, deltas, _ = _size(args.quick)
    size = "quick" if args.quick else "full"
    results = {}
    for mech, ov in MECHANISMS.items():
        recs = sweep_records(
            common_ov + ov, args.out, f"{SCENARIO}-map-{mech}-{size}", args.workers, SCENARIO
        )
        results[mech] = [rec["result"] for rec in recs]
    x_norms = {dl: max_feature_norm(common_ov, dl) for dl in deltas}
    rows = rows_for(results, x_norms)
    csv = common.write_csv(args.out / f"{STEM}.csv", rows)
    png = common.save(draw(rows, deltas), args.out, STEM)
    return [png, csv]


if __name__ == "__main__":
    for path in main():
        print(path)
