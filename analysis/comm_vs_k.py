"""Communication against the number of agents K: messages, bytes, simulated time and rounds.

Issue 5, deliverable 5. Sweeps the shipped ``comm-vs-k`` scenario (ridge,
10 samples per agent in 20 dimensions, l2 = 10, a 20 Mbit/s cell with 5 ms
latency, 5 % Bernoulli loss and 3 ARQ retransmissions, batched fidelity) for

- ``fedavg``: Phase I only, K T1 messages per direction;
- ``ffl`` (Algorithm 1, Theorem 1's T1 and T2): K T1 + K (the extra round at
  w*) + sum_k (K-1) T2_k per direction (docs/paper.md, "One extra round at w*");
- ``dp-ffl`` (Algorithm 2) with L = ceil(sqrt K) clusters and secure
  aggregation, whose key, share and unmasking messages are counted;
- ``vcg-federated``: the naive exact VCG of K + 1 separate federated runs,
  K T1 + K + K (K-1) (T1+1) per direction, O(K^2 T1).

and draws, against K on log-log axes with least-squares slopes in the
legends, (a) all messages (both directions, secure aggregation included),
(b) all bytes, (c) simulated time to finish (``sim_time_s.total``: learning
plus payments), then (d) Phase I rounds T1 against log K, (e) FFL's total
Phase II rounds K T2 against Theorem 1's K-independent bound (the corrected
one, ``theory.theorem1_K_T2_bound_corrected``: the printed one is a slip),
(f) the simulated time in one cell and in cells of 100 (:mod:`analysis.comm_time`) and
(g) FFL's downlink messages with the model sent to each agent (unicast, the
scenario's default) or broadcast once per cell and exchange
(``network.downlink = "broadcast"``, a sweep of its own, K up to 10^5).

Sizes. Full: K = 10 .. 10^5 for FedAvg and FFL, then 10^6 and 10^7 (their own sweep,
``LARGE``: no per-agent rows, one run at a time, about 30 min alone, about an hour beside
other work), to 10^4 for DP-FFL (its L K T2 messages and secure-aggregation sessions make
10^5 in the one cell take hours; panel (f) runs it in cells of 100) and to 10^3 for
vcg-federated (K + 1 trainings; a few minutes at 10^3, hours at 10^4). FFL at 10^4
takes about 4 min of CPU because Theorem 1's T2 is still 2 there; at K >= c =
(L_f + Delta mu)^2 L_g / (mu^2 epsilon) (about 2.4 10^4 here) T2 = 0 and the run is
Phase I only, which is what makes 10^5 affordable. The whole full sweep (both regimes,
the broadcast sweep and LARGE) is about 3.7 hours of runs, measured with two workers on
the shared 2-core machine beside other jobs; most of it DP-FFL at 10^5 in cells of 100
(71 min) and the two 10^7 runs (59 min).

``--quick``: K = 10 .. 300 (FedAvg and FFL to 1000) and mechanism.epsilon = 10
instead of 0.1, which lowers c to about 50 so that FFL reaches Theorem 1's
T2 = 0 regime (where its O(K) claim applies) within the reduced range;
about 20 s on two cores.

    PYTHONPATH=. python -m analysis.comm_vs_k [--quick] [--out DIR] [--workers N]

Over 500 lines on purpose: one figure's sweeps, records, fits, CSV rows and claims
belong together; its two self-contained panels live apart (:mod:`analysis.comm_time`
for (f), :mod:`analysis.comm_broadcast` for (g)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from analysis import comm_broadcast, comm_time, common
from edgesim import theory
from edgesim.sweeps import table

STEM = "comm_vs_k"
SCENARIO = "comm-vs-k"
MECHANISMS = ("fedavg", "ffl", "dp-ffl", "vcg-federated")
SHORT = {"fedavg": "FedAvg", "ffl": "FFL", "dp-ffl": "DP-FFL", "vcg-federated": "naive VCG"}
LABELS = {
    "fedavg": "FedAvg",
    "ffl": "FFL (Alg. 1)",
    "dp-ffl": "DP-FFL, L = ceil(sqrt K), SecAgg",
    "vcg-federated": "naive VCG (K+1 runs)",
}
COLORS = {"fedavg": "C0", "ffl": "C1", "dp-ffl": "C2", "vcg-federated": "C3"}
MARKERS = {"fedavg": "o", "ffl": "s", "dp-ffl": "^", "vcg-federated": "D"}
#: The paper's claim for each mechanism's messages against K (log-log slope).
PAPER_SLOPE = {"fedavg": "1", "ffl": "1", "dp-ffl": "1.5", "vcg-federated": "2"}

#: Agents per run, by mechanism: the paper's size (see the module docstring).
FULL = {
    "fedavg": [10, 30, 100, 300, 1000, 3000, 10_000, 30_000, 50_000, 100_000],
    "ffl": [10, 30, 100, 300, 1000, 3000, 10_000, 30_000, 50_000, 100_000],
    "dp-ffl": [10, 30, 100, 300, 1000, 3000, 10_000],
    "vcg-federated": [10, 30, 100, 300, 1000],
}
#: Full only: FedAvg and FFL at a million and ten million agents, where Theorem 1's T2 is 0.
#: Their per-agent results are not kept (``output.per_agent = "none"``: the figure reads the
#: totals), and they run one at a time (the 10^7 runs peak near 15 GB each); about 25 min.
LARGE = {"fedavg": [1_000_000, 10_000_000], "ffl": [1_000_000, 10_000_000]}
LARGE_OVERRIDES = ['output.per_agent="none"']
BROADCAST = comm_broadcast.OVERRIDES
QUICK = {
    "fedavg": [10, 30, 100, 300, 1000],
    "ffl": [10, 30, 100, 300, 1000],
    "dp-ffl": [10, 30, 100, 300],
    "vcg-federated": [10, 30, 100, 300],
}
#: --quick only: a coarser payment accuracy, so that Theorem 1's T2 = 0 regime starts near K = 50.
QUICK_OVERRIDES = ["mechanism.epsilon=10.0"]
SAMPLES_PER_AGENT = 10


def sweep_overrides(plan: dict[str, list[int]]) -> list[str]:
    """Return the ``--set`` strings replacing the scenario's zip by ``plan`` (cheapest runs first)."""
    runs = sorted(((K, m) for m, Ks in plan.items() for K in Ks), key=lambda r: (r[0], r[1]))
    mech = ", ".join(f'"{m}"' for _, m in runs)
    ks = ", ".join(str(K) for K, _ in runs)
    ns = ", ".join(str(SAMPLES_PER_AGENT * K) for K, _ in runs)
    zipped = f'[{{"mechanism.kind" = [{mech}], "agents.count" = [{ks}], "data.samples" = [{ns}]}}]'
    return [f"sweep.zip={zipped}"]


def theorem1_c(L_f: float, mu: float, L_g: float, epsilon: float, delta_tol: float) -> float:
    """Theorem 1's constant c = (L_f + Delta mu)^2 L_g / (mu^2 epsilon) (agents): T2 = 0 once K >= c."""
    return (L_f + delta_tol * mu) ** 2 * L_g / (mu**2 * epsilon)


def run_record(row: dict, epsilon: float, delta_tol: float) -> dict:
    """Return one run's plotted and checked quantities from a sweep row (counts, seconds, bytes).

    ``epsilon`` and ``delta_tol`` are the scenario's Theorem 1 parameters
    (``mechanism.epsilon``, ``mechanism.theory_delta``), the same in every run.
    """
    K = int(row["K"])
    T1 = int(row["iterations.phase1"])
    p2 = int(row["iterations.phase2_total"])
    mu, L_g = float(row["constants.mu"]), float(row["constants.L_g"])
    rec = {
        "mechanism": row["mechanism"],
        "K": K,
        "T1": T1,
        "phase2_total": p2,
        "messages_down": int(row["communication.messages_down"]),
        "messages_up": int(row["communication.messages_up"]),
        "transmissions_up": int(row["communication.transmissions_up"]),
        "dropped": int(row["communication.dropped"]),
        "secagg_messages": int(row["network.secagg_messages"]),
        "bytes": int(row["communication.bytes_down"]) + int(row["communication.bytes_up"]),
        "sim_time_s": float(row["sim_time_s.total"]),
        "mu": mu,
        "L_g": L_g,
        "extra_rounds": row.get("mechanism_info.extra_rounds"),
        "T2_target": row.get("mechanism_info.T2_target"),
        "L_f": row.get("mechanism_info.gradient_bound_observed"),
        "epsilon": epsilon,
        "delta_tol": delta_tol,
    }
    rec["messages"] = rec["messages_down"] + rec["messages_up"]
    rec["formula_per_direction"] = formula_per_direction(rec)
    if rec["mechanism"] == "ffl":
        c = theorem1_c(rec["L_f"], mu, L_g, rec["epsilon"], rec["delta_tol"])
        rec["theorem1_c"] = c
        rec["T2_theory"] = theory.phase2_rounds(
            K, rec["L_f"], rec["delta_tol"], mu, L_g, rec["epsilon"]
        )
        rec["KT2_bound"] = theory.theorem1_K_T2_bound_corrected(
            rec["L_f"], rec["delta_tol"], mu, L_g, rec["epsilon"]
        )
    return rec


def formula_per_direction(rec: dict) -> int | None:
    """Lossless messages per direction predicted by each protocol (None for DP-FFL).

    FedAvg K T1; FFL K T1 + K (extra round at w*) + (K-1) sum_k T2_k (docs/paper.md,
    "One extra round at w*"); vcg-federated K T1 + K + K (K-1) (T1+1) (its
    K leave-one-out trainings of T1 rounds plus a loss report each).
    """
    K, T1 = rec["K"], rec["T1"]
    if rec["mechanism"] == "fedavg":
        return K * T1
    if rec["mechanism"] == "ffl":
        return K * T1 + K * int(rec["extra_rounds"]) + (K - 1) * rec["phase2_total"]
    if rec["mechanism"] == "vcg-federated":
        return K * T1 + K + K * (K - 1) * (T1 + 1)
    return None


def t1_log_fit(records: list[dict]) -> tuple[float, float]:
    """Least squares T1 = a ln K + b; returns (a, b) in rounds per e-fold of K and rounds."""
    K = np.array([r["K"] for r in records], float)
    T1 = np.array([r["T1"] for r in records], float)
    a, b = np.polyfit(np.log(K), T1, 1)
    return float(a), float(b)


CONTEXT = (
    "T1",
    "phase2_total",
    "messages_down",
    "messages_up",
    "transmissions_up",
    "dropped",
    "secagg_messages",
    "extra_rounds",
    "T2_target",
    "T2_theory",
    "L_f",
    "L_g",
    "mu",
    "epsilon",
    "theorem1_c",
)


def tidy_rows(by_mech: dict[str, list[dict]], network: dict) -> list[dict]:
    """Build the CSV rows, one per plotted point, from which :func:`draw` draws; returns them.

    ``y`` is the measured (or formula, fit, bound) value and ``y_plot`` the
    value drawn (FFL's K T2 = 0 is drawn at 0.5 on the log axis). Messages,
    bytes and time rows carry the log-log ``slope`` (and ``intercept``) fitted
    over ``fit_K_min``..``fit_K_max``; T1 rows carry T1 = slope ln K + intercept
    and the fitted line's points are rows of series "<mech> fit". ``network``
    (the runs' ``scenario.network``) gives the suptitle's columns.
    """
    rows: list[dict] = []
    net = {
        "bandwidth_bps": network["radio"]["bandwidth_bps"],
        "latency_s": network["radio"]["latency_s"],
        "loss_prob": network["radio"]["loss_prob"],
        "loss": network["radio"]["loss"],
        "arq_max_retries": network["radio"]["arq_max_retries"],
        "fidelity": network["fidelity"],
    }

    def add(panel, series, rec, y, slope=math.nan, kmin=None, kmax=None, **extra):
        row = {"panel": panel, "series": series, "mechanism": rec["mechanism"], "K": rec["K"]}
        row.update(y=y, y_plot=y, slope=slope, fit_K_min=kmin, fit_K_max=kmax)
        row.update({k: rec.get(k) for k in CONTEXT})
        row.update(KT2_bound=rec.get("KT2_bound"), **net)
        row.update(extra)
        rows.append(row)

    for mech, recs in by_mech.items():
        for panel, key in (("messages", "messages"), ("bytes", "bytes"), ("time", "sim_time_s")):
            s, c, k0, k1 = common.loglog_fit(recs, key)
            paper = PAPER_SLOPE[mech] if panel == "messages" else None
            for r in recs:
                add(panel, mech, r, r[key], s, k0, k1, intercept=c, paper_slope=paper)
        if mech == "ffl":
            for name, keep in (
                ("T2=0", lambda r: r["T2_target"] == 0),
                ("T2>0", lambda r: r["T2_target"] > 0),
            ):
                s, c, k0, k1 = common.loglog_fit(recs, "messages", keep)
                for r in recs:
                    if keep(r):
                        add("messages", f"ffl {name} fit", r, r["messages"], s, k0, k1, intercept=c)
            for r in recs:
                add("phase2", "ffl K T2", r, r["phase2_total"], y_plot=max(r["phase2_total"], 0.5))
                add("phase2", "ffl Theorem 1 bound", r, r["KT2_bound"])
        if mech in ("fedavg", "ffl", "vcg-federated"):
            for r in recs:
                add("messages", f"{mech} formula", r, 2 * r["formula_per_direction"])
        if mech == "dp-ffl":
            for r in recs:
                add("phase2", "dp-ffl L T2", r, r["phase2_total"])
        if mech in ("ffl", "dp-ffl"):
            a, b = t1_log_fit(recs)
            k0, k1 = min(x["K"] for x in recs), max(x["K"] for x in recs)
            for r in recs:
                add("T1", mech, r, r["T1"], a, k0, k1, intercept=b)
            for r in recs:
                line = a * math.log(r["K"]) + b
                add("T1", f"{mech} fit", r, line, a, k0, k1, intercept=b)
    return rows


def series(rows: list[dict], panel: str, name: str) -> list[dict]:
    """Rows of one panel and series, sorted by K."""
    return sorted(
        (r for r in rows if r["panel"] == panel and r["series"] == name), key=lambda r: r["K"]
    )


def draw(rows: list[dict], quick: bool) -> plt.Figure:
    """Draw the five panels and the claims box from the CSV rows; returns the figure."""
    fig, axes = plt.subplots(2, 4, figsize=(23, 10.5))
    ax_m, ax_b, ax_t, ax_f, ax_r, ax_p, ax_txt, ax_cast = axes.ravel()
    comm_broadcast.draw(ax_cast, rows, COLORS["ffl"])
    comm_time.draw_regimes(
        ax_f, [r for r in rows if r["panel"] == "time regimes"], COLORS, MARKERS, SHORT
    )
    panels = (
        (ax_m, "messages", "(a) messages sent, both directions (count)"),
        (ax_b, "bytes", "(b) bytes sent, both directions (B)"),
        (ax_t, "time", "(c) simulated time to finish (s)"),
    )
    for ax, panel, ylabel in panels:
        for mech in MECHANISMS:
            pts = series(rows, panel, mech)
            slope = f"slope {pts[0]['slope']:.2f}"
            if panel == "messages" and mech == "ffl":
                slope += " (all K: not one power law)"
            ax.plot(
                [r["K"] for r in pts],
                [r["y_plot"] for r in pts],
                marker=MARKERS[mech],
                color=COLORS[mech],
                lw=1.5,
                label=f"{LABELS[mech]}: {slope}",
            )
            if panel == "messages" and mech != "dp-ffl":
                f = series(rows, panel, f"{mech} formula")
                ax.plot([r["K"] for r in f], [r["y_plot"] for r in f], ls=":", color="k", lw=0.8)
        if panel == "messages":
            for name, what in (("T2>0", "T2 > 0"), ("T2=0", "T2 = 0")):
                pts = series(rows, "messages", f"ffl {name} fit")
                if pts and not math.isnan(pts[0]["slope"]):
                    r = pts[0]
                    ax.plot(
                        [],
                        [],
                        " ",
                        label=f"FFL where {what} (K = {r['fit_K_min']:g}..{r['fit_K_max']:g}): "
                        f"slope {r['slope']:.2f}",
                    )
            ax.plot([], [], ls=":", color="k", lw=0.8, label="formula, 2 x per direction")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("agents K")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left" if panel == "time" else "lower right")
    for mech in ("ffl", "dp-ffl"):
        pts, line = series(rows, "T1", mech), series(rows, "T1", f"{mech} fit")
        ax_r.plot(
            [r["K"] for r in pts],
            [r["y_plot"] for r in pts],
            marker=MARKERS[mech],
            color=COLORS[mech],
            ls="",
            label=f"{LABELS[mech]}",
        )
        a, b = line[0]["slope"], line[0]["intercept"]
        ax_r.plot(
            [r["K"] for r in line],
            [r["y_plot"] for r in line],
            color=COLORS[mech],
            lw=1,
            label=f"fit {a:.2f} ln K {b:+.1f}",
        )
    ax_r.set_xscale("log")
    ax_r.set_xlabel("agents K")
    ax_r.set_ylabel("Phase I rounds T1 (rounds)")
    ax_r.set_title("(d) Phase I rounds: O(log K) (Theorem 1; Prop. 9 for DP-FFL)", fontsize=10)
    ax_r.grid(True, alpha=0.3)
    ax_r.legend(fontsize=8, loc="upper left")
    for name, style, label in (
        ("ffl K T2", dict(marker="s"), "FFL: K T2 = sum_k T2_k (0 drawn at 0.5)"),
        ("ffl Theorem 1 bound", dict(ls="--"), "Theorem 1: K T2 <= c/(e l) + c (corrected)"),
    ):
        pts = series(rows, "phase2", name)
        ax_p.plot(
            [r["K"] for r in pts],
            [r["y_plot"] for r in pts],
            color=COLORS["ffl"],
            label=label,
            **style,
        )
    dp = series(rows, "phase2", "dp-ffl L T2")
    ax_p.plot(
        [r["K"] for r in dp],
        [r["y_plot"] for r in dp],
        marker="^",
        color=COLORS["dp-ffl"],
        label="DP-FFL: L T2 (L clusters)",
    )
    ax_p.set_xscale("log")
    ax_p.set_yscale("log")
    ax_p.set_xlabel("agents K")
    ax_p.set_ylabel("Phase II rounds, all problems (rounds)")
    ax_p.set_title("(e) Phase II work: K T2 = O(1) in K (Theorem 1)", fontsize=10)
    ax_p.grid(True, alpha=0.3)
    ax_p.legend(fontsize=8, loc="lower left")
    ax_m.set_title("(a) messages: O(K) for FFL, O(K^2) for naive VCG", fontsize=10)
    ax_b.set_title("(b) bytes (64-byte header + 8 bytes per parameter)", fontsize=10)
    ax_t.set_title("(c) learning + payments, simulated seconds", fontsize=10)
    ax_txt.axis("off")
    ax_txt.text(
        0,
        1,
        claims_text(rows),
        va="top",
        ha="left",
        fontsize=9,
        family="monospace",
        transform=ax_txt.transAxes,
    )
    r0 = series(rows, "messages", "ffl")[0]
    return common.titled(
        fig,
        f"Communication vs K, scenario {SCENARIO}: ridge, synthetic data "
        f"({SAMPLES_PER_AGENT} samples/agent, d = 20), "
        f"epsilon = {r0['epsilon']:g}{' (--quick)' if quick else ''}\n"
        f"one {r0['bandwidth_bps'] / 1e6:g} Mbit/s cell, {1e3 * r0['latency_s']:g} ms latency, "
        f"{100 * r0['loss_prob']:g} % {r0['loss'].capitalize()} loss, "
        f"ARQ up to {r0['arq_max_retries']:g} retransmissions, {r0['fidelity']} fidelity",
        fontsize=11,
    )


def claims_text(rows: list[dict]) -> str:
    """Return the text of the claims box from the CSV rows: paper's slope vs the fitted one."""
    lines = ["log-log slope of messages vs K", "", f"{'':10s} {'paper':>5s} {'fit':>6s}   K range"]
    for mech in MECHANISMS:
        r = series(rows, "messages", mech)[0]
        lines.append(
            f"{SHORT[mech]:10s} {r['paper_slope']:>5s} {r['slope']:6.2f}   "
            f"{r['fit_K_min']:g}..{r['fit_K_max']:g}"
        )
    for name in ("T2>0", "T2=0"):
        pts = series(rows, "messages", f"ffl {name} fit")
        if pts and not math.isnan(pts[0]["slope"]):
            r = pts[0]
            lines += [
                f"{'FFL, ' + name:10s} {'1':>5s} {r['slope']:6.2f}   "
                f"{r['fit_K_min']:g}..{r['fit_K_max']:g}"
            ]
    c = [r["theorem1_c"] for r in series(rows, "messages", "ffl")]
    bound = max(r["y"] for r in series(rows, "phase2", "ffl Theorem 1 bound"))
    lines += [
        "",
        "paper: FedAvg, FFL O(K) messages (x T1 = O(log K)),",
        "naive VCG O(K^2) (K+1 problems), DP-FFL's",
        "L = sqrt K problems: O(K^1.5).",
        "",
        "FFL: T2 = 0 once K >= c = (L_f + Delta mu)^2 L_g / (mu^2 eps)",
        f"= {min(c):.3g}..{max(c):.3g} (Theorem 1). Below c the (K-1) K T2",
        "term dominates: K T2 is bounded (panel e) but by up",
        f"to {bound:.3g} rounds, so messages grow near K^2",
        "until K ~ c, then drop to K (T1 + 1).",
        "DP-FFL: 4 exchanges per secure aggregation.",
    ]
    return "\n".join(lines)


def collect(args) -> tuple[dict[str, list[dict]], dict, list[dict]]:
    """Run (or resume) the sweeps; returns (run records per mechanism sorted by K, the network,
    the time panel's rows of both regimes).

    The network is the first run's ``scenario.network`` (the sweep changes
    only the mechanism, K and the samples). The second sweep runs FedAvg,
    FFL and DP-FFL again with the cells grown (:data:`analysis.comm_time.GROWN`).
    """
    plan = QUICK if args.quick else FULL
    overrides = sweep_overrides(plan) + (QUICK_OVERRIDES if args.quick else [])
    res = common.sweep(SCENARIO, args.out, overrides, workers=args.workers, tag=STEM)
    timed = {m: [K for K in plan[m] if (m, K) not in comm_time.GROWN_SKIP] for m in comm_time.TIMED}
    if not args.quick:
        for m, extra in comm_time.GROWN_EXTRA.items():
            timed[m] = sorted(set(timed[m]) | set(extra))
    grown = common.sweep(
        SCENARIO,
        args.out,
        sweep_overrides(timed) + (QUICK_OVERRIDES if args.quick else []) + comm_time.GROWN,
        workers=args.workers,
        tag=f"{STEM}-cells",
    )
    by_regime = {
        regime: [
            (row, rec["result"]["scenario"]["network"])
            for row, rec in zip(table(r.ok), r.ok, strict=True)
            if row["mechanism"] in comm_time.TIMED
        ]
        for regime, r in zip(comm_time.REGIMES, (res, grown), strict=True)
    }
    rows = res.table()
    if not args.quick:
        large = common.sweep(
            SCENARIO, args.out, sweep_overrides(LARGE) + LARGE_OVERRIDES, workers=1,
            tag=f"{STEM}-large",
        )  # fmt: skip
        rows += large.table()
    cast_plan = {"ffl": [K for K in plan["ffl"] if K <= 100_000]}
    cast = common.sweep(
        SCENARIO,
        args.out,
        sweep_overrides(cast_plan) + (QUICK_OVERRIDES if args.quick else []) + BROADCAST,
        workers=args.workers,
        tag=f"{STEM}-broadcast",
    )
    mech = res.ok[0]["result"]["scenario"]["mechanism"]  # what ran (the zip changes only kind)
    eps, delta_tol = float(mech["epsilon"]), float(mech["theory_delta"])
    by_mech: dict[str, list[dict]] = {m: [] for m in MECHANISMS}
    for row in rows:
        rec = run_record(row, eps, delta_tol)
        by_mech[rec["mechanism"]].append(rec)
    network = res.ok[0]["result"]["scenario"]["network"]
    by_mech = {m: sorted(v, key=lambda r: r["K"]) for m, v in by_mech.items()}
    broadcast = sorted(
        (run_record(row, eps, delta_tol) for row in cast.table()), key=lambda r: r["K"]
    )
    return by_mech, network, comm_time.time_rows(by_regime), broadcast


def main(argv: Sequence[str] | None = None) -> list[Path]:
    """Sweep, draw and write ``comm_vs_k.png`` and ``comm_vs_k.csv``; returns their paths."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    by_mech, network, time_rows, broadcast = collect(args)
    unicast = [r for r in by_mech["ffl"] if r["K"] <= 100_000]
    rows = tidy_rows(by_mech, network) + time_rows + comm_broadcast.rows(unicast, broadcast)
    csv = common.write_csv(args.out / f"{STEM}.csv", rows)
    png = common.save(draw(rows, args.quick), args.out, STEM)
    return [png, csv]


if __name__ == "__main__":
    main()
