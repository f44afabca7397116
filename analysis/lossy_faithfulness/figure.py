"""The figure: twenty panels drawn from the CSV rows, one function per kind of panel."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch

from .base import ACCEPT_Q, ACCEPT_R, GE_R, POLICIES, SCHEDULES
from .rows import CONDITIONS, QUANTITIES

COLORS = {label: f"C{j}" for j, (label, _, _) in enumerate(POLICIES)}
MARKERS = {"reweight": "o", "retry 3": "s", "retry 20": "^", "stale": "D"}
LINES = {"sequential": "-", "parallel": "--"}
YLABEL = {
    "payment_error": "max_k |P_k - P_k^VCG| (loss units)",
    "time_s": "simulated time to finish (s)",
    "messages": "messages (down + up)",
    "gain": "gain of amplifying, J_0(truthful) - J_0(gamma = 2)\n(loss units, symlog; bars: min-max over seeds)",
}
TITLE = {
    "payment_error": "payment error vs exact VCG",
    "time_s": "time to finish",
    "messages": "messages",
    "gain": "amplifier's gain (> 0: manipulation pays)",
}


def panel_rows(rows, panel, drawn_only=False):
    """Rows of one panel (only the drawn ones with ``drawn_only``)."""
    return [r for r in rows if r["panel"] == panel and (r["drawn"] or not drawn_only)]


def hidden_note(ax, rows, panel, where=(0.99, 0.02)) -> None:
    """Say in the panel how many of its rows (y <= 0 on a log axis) are in the CSV but not drawn."""
    n = len(panel_rows(rows, panel)) - len(panel_rows(rows, panel, drawn_only=True))
    if n:
        ax.text(
            *where,
            f"{n} point(s) with y = 0 not drawn (drawn = 0 in the CSV)",
            transform=ax.transAxes,
            ha="right",
            va="bottom" if where[1] < 0.5 else "top",
            fontsize=7,
            color="0.3",
        )


def spread(sel) -> list | np.ndarray:
    """Error bars of rows: min to max over seeds for the gain (the amplifier's best seed), else std."""
    if sel[0]["quantity"] == "gain":
        y = np.array([r["y"] for r in sel])
        return np.array([y - [r["y_min"] for r in sel], np.array([r["y_max"] for r in sel]) - y])
    return [r.get("y_std") or 0.0 for r in sel]


def series_lines(ax, rows, panel) -> None:
    """Plot each (policy, schedule) of a panel against q: mean over seeds with a std bar."""
    pr = panel_rows(rows, panel, drawn_only=True)
    for label, _, _ in POLICIES:
        for sched in SCHEDULES:
            sel = sorted(
                (r for r in pr if r["series"] == label and r["schedule"] == sched),
                key=lambda r: r["x"],
            )
            if not sel:
                continue
            ax.errorbar(
                [r["x"] for r in sel],
                [r["y"] for r in sel],
                yerr=spread(sel),
                color=COLORS[label],
                ls=LINES[sched],
                marker=MARKERS[label],
                mfc="none" if sched == "parallel" else COLORS[label],
                ms=5,
                capsize=2,
                lw=1.2,
                label=f"{label}, {sched}",
            )


def reference_lines(ax, rows, panel, quantity, epsilon=True) -> None:
    """Horizontal references: epsilon on the error and gain panels, zero on the gain panels.

    ``epsilon=False`` leaves epsilon out (churn-deadline fixes T1 and T2: it targets no epsilon).
    """
    if quantity in ("payment_error", "gain") and epsilon:
        eps = panel_rows(rows, panel)[0]["epsilon"]
        label = "epsilon" if quantity == "payment_error" else "+epsilon (FFL's bound)"
        ax.axhline(eps, color="k", ls=":", lw=1, label=f"{label} = {eps:g}")
    if quantity == "gain":
        ax.axhline(0, color="k", lw=0.8)


def scale(ax, rows, panel, quantity) -> None:
    """Log y for errors, times and messages; symlog for the gain (it changes sign)."""
    if quantity == "gain":
        ax.set_yscale("symlog", linthresh=1e-3)
        ys = [r["y"] for r in panel_rows(rows, panel)] + [panel_rows(rows, panel)[0]["epsilon"]]
        ys = [y for y in ys if np.isfinite(y)]
        lo, hi = min(min(ys), 0.0), max(ys)
        ax.set_ylim(3 * lo if lo < -1e-3 else -1e-3, 30 * hi if hi > 0 else 1)
    else:
        ax.set_yscale("log")
        hidden_note(ax, rows, panel)


def draw_cell_row(axes, rows, cond) -> None:
    """Draw one loss condition on the comm-vs-k cell: error, time, messages and gain against q."""
    loss, R = cond
    name = {
        "bernoulli": "Bernoulli loss",
        "gilbert-elliott": f"Gilbert-Elliott loss (bursts of {1 / GE_R:g})",
    }[loss]
    arq = "no ARQ (R = 0)" if R == 0 else f"ARQ R = {R}"
    for ax, quantity, panel in zip(axes, QUANTITIES, CONDITIONS[cond], strict=True):
        series_lines(ax, rows, panel)
        reference_lines(ax, rows, panel, quantity)
        scale(ax, rows, panel, quantity)
        K = panel_rows(rows, panel)[0]["K"]
        ax.set_title(
            f"({panel}) {TITLE[quantity]}\ncomm-vs-k, FFL, K = {K:g}, {name}, {arq}", fontsize=9.5
        )
        ax.set_xlabel("mean loss probability q per transmission")
        ax.set_ylabel(YLABEL[quantity], fontsize=8.5)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=6.5, loc="upper left", ncol=2)


def grouped_bars(ax, rows, panel, categories) -> None:
    """Bars per category (x): one per (policy, schedule) run, parallel hatched; error bars as
    :func:`spread`."""
    pr = panel_rows(rows, panel)
    pairs = [
        (label, s)
        for label, _, _ in POLICIES
        for s in SCHEDULES
        if any(r["series"] == label and r["schedule"] == s for r in pr)
    ]
    width = 0.8 / len(pairs)
    for j, (label, sched) in enumerate(pairs):
        by_x = {r["x"]: r for r in pr if r["series"] == label and r["schedule"] == sched}
        sel = [by_x[c] for c in categories]
        ax.bar(
            np.arange(len(categories)) + (j - (len(pairs) - 1) / 2) * width,
            [r["y"] for r in sel],
            width,
            yerr=spread(sel),
            color=COLORS[label],
            hatch="//" if sched == "parallel" else None,
            edgecolor="k",
            lw=0.4,
            capsize=1.5,
            label=f"{label}, {sched}",
        )
    ax.set_xticks(np.arange(len(categories)))


def draw_churn_row(axes, rows) -> None:
    """Draw churn-deadline: error, time, messages and gain per round policy, grouped bars."""
    for ax, quantity, panel in zip(axes, QUANTITIES, CONDITIONS["churn"], strict=True):
        pr = panel_rows(rows, panel)
        cats = list(dict.fromkeys(r["x"] for r in pr))
        grouped_bars(ax, rows, panel, cats)
        ax.set_xticklabels(cats, fontsize=8)
        reference_lines(ax, rows, panel, quantity, epsilon=False)
        scale(ax, rows, panel, quantity)
        seeds = int(max(r["seeds"] for r in pr))
        ax.set_title(
            f"({panel}) {TITLE[quantity]}\nchurn-deadline, FFL, K = {pr[0]['K']:g}, "
            f"Markov churn, fixed T1 and T2, {seeds} seed(s)",
            fontsize=9.5,
        )
        ax.set_ylabel(YLABEL[quantity], fontsize=8.5)
        ax.grid(True, axis="y", alpha=0.3)
    bottom, top = axes[0].get_ylim()  # headroom (log scale) so the legend clears the bars
    axes[0].set_ylim(bottom, top * 30)
    axes[0].legend(fontsize=6.5, loc="upper left", ncol=2)


def draw_acceptance(ax, rows) -> None:
    """Draw panel (q): payment error per seed at q = 0.1, R = 3 against lossless + epsilon."""
    pr = panel_rows(rows, "q")
    pairs = [(label, s) for label, _, _ in POLICIES for s in SCHEDULES]
    offsets = np.linspace(-0.35, 0.35, len(pairs))
    for (label, sched), off in zip(pairs, offsets, strict=True):
        sel = [r for r in pr if r["series"] == label and r["schedule"] == sched]
        ax.scatter(
            [r["x"] + off for r in sel],
            [r["y"] for r in sel],
            marker=MARKERS[label],
            s=22,
            facecolors="none" if sched == "parallel" else COLORS[label],
            edgecolors=COLORS[label],
            label=f"{label}, {sched}",
        )
    seeds = sorted({r["x"] for r in pr})
    bound = {r["x"]: r["bound"] for r in pr if r["schedule"] == "sequential"}
    ax.hlines(
        [bound[s] for s in seeds],
        np.array(seeds) - 0.45,
        np.array(seeds) + 0.45,
        color="k",
        lw=1.2,
        label="bound: lossless error of the seed + epsilon",
    )
    ax.set_yscale("log")
    lo = min(r["y"] for r in pr)
    ax.set_ylim(lo / 30, 3 * max(max(r["y"] for r in pr), max(bound.values())))
    ax.set_xticks(seeds)
    ax.set_xlabel("seed")
    ax.set_ylabel(YLABEL["payment_error"], fontsize=8.5)
    counts = []
    for sched in SCHEDULES:
        sel = [r for r in pr if r["series"] == "retry 3" and r["schedule"] == sched]
        counts.append(f"{sum(r['within'] for r in sel)}/{len(sel)} {sched}")
    ax.set_title(
        f"(q) acceptance: q = {ACCEPT_Q:g}, ARQ R = {ACCEPT_R}, K = {pr[0]['K']:g}, "
        f"{len(seeds)} seeds\nretry 3 within the bound in " + ", ".join(counts),
        fontsize=9.5,
    )
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6.5, loc="lower center", ncol=3)


def draw_time_at_acceptance(ax, rows) -> None:
    """Draw panel (r): mean time to finish at the acceptance point per policy and schedule."""
    pr = panel_rows(rows, "r")
    cats = ["lossless"] + [label for label, _, _ in POLICIES]
    by = {(r["series"], r["schedule"]): r for r in pr}
    for j, sched in enumerate(SCHEDULES):
        sel = [by[(c, sched)] for c in cats]
        pos = np.arange(len(cats)) + (j - 0.5) * 0.4
        ax.bar(
            pos,
            [r["y"] for r in sel],
            0.4,
            yerr=[r["y_std"] or 0.0 for r in sel],
            color=[COLORS.get(c, "0.6") for c in cats],
            hatch="//" if sched == "parallel" else None,
            edgecolor="k",
            lw=0.4,
            capsize=2,
        )
        for x, r in zip(pos, sel, strict=True):
            ax.text(x, r["y"] * 1.02, f"{r['y']:.3g}", ha="center", va="bottom", fontsize=6.5)
    ax.set_xticks(np.arange(len(cats)))
    ax.set_xticklabels(cats, fontsize=8)
    ax.set_ylim(0, 1.45 * max(r["y"] + (r["y_std"] or 0.0) for r in pr))
    text = "\n".join(
        f"{s}: retry 3 / reweight = x{by[('retry 3', s)]['time_vs_reweight']:.4f} time, "
        f"x{by[('retry 3', s)]['messages_vs_reweight']:.4f} messages"
        for s in SCHEDULES
    )
    seq, par = (by[("reweight", s)]["y"] for s in SCHEDULES)
    text += f"\nreweight: parallel / sequential = x{par / seq:.3f} time"
    ax.text(0.01, 0.98, text, transform=ax.transAxes, fontsize=7, va="top")
    ax.set_ylabel("simulated time to finish (s), mean over seeds", fontsize=8.5)
    ax.set_title(
        f"(r) what retry costs at q = {ACCEPT_Q:g}, R = {ACCEPT_R} "
        f"({int(pr[0]['seeds'])} seeds)\nparallel (hatched) vs sequential Phase II",
        fontsize=9.5,
    )
    handles = [
        Patch(facecolor="w", edgecolor="k", hatch=h, label=s)
        for h, s in ((None, "sequential"), ("//", "parallel"))
    ]
    ax.legend(handles=handles, fontsize=7, loc="upper right")
    ax.grid(True, axis="y", alpha=0.3)


def draw_round_trips(ax, rows) -> None:
    """Draw panel (s): Phase II round trips against q, with sum_k T2_k and max_k T2_k."""
    series_lines(ax, rows, "s")
    pr = panel_rows(rows, "s")
    for sched, col, label in (
        ("sequential", "sum_T2", "sum_k T2_k"),
        ("parallel", "max_T2", "max_k T2_k"),
    ):
        sel = sorted(
            (r for r in pr if r["series"] == "reweight" and r["schedule"] == sched),
            key=lambda r: r["x"],
        )
        ax.plot(
            [r["x"] for r in sel],
            [r[col] for r in sel],
            color="k",
            ls=":",
            lw=1.5,
            label=f"{label} (reweight, {sched})",
        )
    ax.set_yscale("log")
    ax.set_xlabel("loss probability q per transmission")
    ax.set_ylabel("Phase II exchanges (round trips, retries included)", fontsize=8.5)
    ax.set_title(
        f"(s) Phase II round trips: sum_k T2_k -> max_k T2_k\n"
        f"comm-vs-k, K = {pr[0]['K']:g}, Bernoulli loss, ARQ R = 3",
        fontsize=9.5,
    )
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6.5, loc="center right", ncol=2)


def draw_given_up(ax, rows) -> None:
    """Draw panel (t): replies still missing after the policy, per run, without ARQ."""
    series_lines(ax, rows, "t")
    ax.set_yscale("log")
    hidden_note(ax, rows, "t", where=(0.99, 0.98))
    ax.set_xlabel("loss probability q per transmission")
    ax.set_ylabel("replies still missing after the policy (per run)", fontsize=8.5)
    K = panel_rows(rows, "t")[0]["K"]
    ax.set_title(
        f"(t) replies given up (retry) or without an earlier report (stale)\n"
        f"comm-vs-k, K = {K:g}, Bernoulli loss, no ARQ (reweight keeps no count)",
        fontsize=9.5,
    )
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6.5, loc="lower right", ncol=2)


def draw(rows: list[dict], quick: bool) -> plt.Figure:
    """Draw the twenty panels from the CSV rows; returns the figure."""
    fig, axes = plt.subplots(5, 4, figsize=(24, 27))
    for row, cond in zip(axes[:3], [c for c in CONDITIONS if c != "churn"], strict=True):
        draw_cell_row(row, rows, cond)
    draw_churn_row(axes[3], rows)
    draw_acceptance(axes[4][0], rows)
    draw_time_at_acceptance(axes[4][1], rows)
    draw_round_trips(axes[4][2], rows)
    draw_given_up(axes[4][3], rows)
    fig.suptitle(
        "What keeps FFL within epsilon on lossy links, and at what price: repair policies "
        "(reweight, retry, stale) x Phase II schedules (sequential, parallel)"
        f"{' (--quick)' if quick else ''}",
        fontsize=13,
    )
    fig.subplots_adjust(left=0.05, right=0.99, bottom=0.03, top=0.955, wspace=0.3, hspace=0.32)
    return fig
