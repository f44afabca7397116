"""The figure: nine panels drawn from the CSV rows, one function per panel (or group of panels)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from analysis import common

#: Width of one bar in the grouped bar charts (g) and (h).
WIDTH = 0.38


def panel_rows(rows, panel, series=None, drawn_only=False):
    """Rows of one panel (and series, when given; only the drawn ones with ``drawn_only``)."""
    return [
        r
        for r in rows
        if r["panel"] == panel
        and (series is None or r["series"] == series)
        and (r["drawn"] or not drawn_only)
    ]


def hidden_note(ax, rows, panel) -> None:
    """Say in the panel how many of its rows (y <= 0 on a log axis) are in the CSV but not drawn."""
    n = len(panel_rows(rows, panel)) - len(panel_rows(rows, panel, drawn_only=True))
    if n:
        ax.text(
            0.99,
            0.02,
            f"{n} point(s) with y = 0 not drawn (log axis; in the CSV with drawn = 0)",
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=7.5,
            color="0.3",
        )


def one(rows, panel, column):
    """The single value of ``column`` over a panel's rows that have it (e.g. K); returns it."""
    (v,) = {r[column] for r in panel_rows(rows, panel) if r.get(column) is not None}
    return v


def draw_loss_panel(ax, rows, meta, panel, ylabel, title) -> None:
    """Draw one of (a)-(d): a loss-study measurement per ARQ cap R against q, and its closed form."""
    colors = {R: f"C{j}" for j, R in enumerate(meta["R"])}
    for R in meta["R"]:
        m = panel_rows(rows, panel, f"measured R={R}", drawn_only=True)
        x = np.array([r["x"] for r in m])
        y = np.array([r["y"] for r in m])
        sd = np.array([r["y_std"] or 0.0 for r in m])
        ax.errorbar(
            x,
            y,
            yerr=sd,
            marker="o",
            ls="-" if panel in ("c", "d") else "",
            color=colors[R],
            capsize=2,
            mfc="none",
            ms=7,
            label=f"measured, R = {R}",
        )
        cf = panel_rows(rows, panel, f"closed form R={R}", drawn_only=True)
        if cf:
            ax.plot(
                [r["x"] for r in cf],
                [r["y"] for r in cf],
                color=colors[R],
                lw=1,
                ls="--",
                label=f"closed form, R = {R}",
            )
    if panel == "c":
        eps = panel_rows(rows, "c")[0]["epsilon"]
        ax.axhline(eps, color="k", ls=":", lw=1, label=f"Theorem 1 target epsilon = {eps:g}")
    if panel in ("b", "c"):
        ax.set_yscale("log")
        hidden_note(ax, rows, panel)
    ax.set_xlabel("loss probability q per transmission")
    ax.set_ylabel(ylabel)
    K = one(rows, panel, "K")
    ax.set_title(title + f"\ncomm-vs-k cell, FFL, K = {K:g} (R = ARQ retransmissions)", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7.5, loc="upper left", ncol=2 if panel in ("a", "b") else 1)


def draw_answered(e, rows) -> None:
    """Draw panel (e) deadlines: answered in time, its closed form, lost to churn."""
    ms = panel_rows(rows, "e", "answered in time (measured)")
    cf = panel_rows(rows, "e", "closed form 1-exp(-(d-s)/m)")
    lc = panel_rows(rows, "e", "lost to churn (measured)")
    shift, mean_s = ms[0]["shift_s"], ms[0]["mean_s"]
    e.plot(
        [r["x"] for r in ms],
        [r["y"] for r in ms],
        "o",
        color="C0",
        label="reached an online device: answered in time",
    )
    e.plot(
        [r["x"] for r in cf],
        [r["y"] for r in cf],
        color="C0",
        ls="--",
        label=f"closed form 1 - exp(-(d - s)/m), s = {1e3 * shift:.1f} ms, m = {1e3 * mean_s:.0f} ms",
    )
    e.plot(
        [r["x"] for r in lc],
        [r["y"] for r in lc],
        "s",
        color="C3",
        label="lost: device offline (churn)",
    )
    wa_in = panel_rows(rows, "e", "wait-all: answered")[0]["y"]
    wa_lost = panel_rows(rows, "e", "wait-all: lost to churn")[0]["y"]
    e.axhline(wa_in, color="C0", ls=":", lw=1, label=f"wait-all: answered {wa_in:.2f}")
    e.axhline(wa_lost, color="C3", ls=":", lw=1, label=f"wait-all: lost to churn {wa_lost:.2f}")
    e.set_xlabel("round deadline d (s)")
    e.set_ylabel("fraction of requests")
    e.set_ylim(0, 1.05)
    K_dl = one(rows, "e", "K")
    e.set_title(
        f"(e) churn + deadline: who answers\nchurn-deadline, FFL, K = {K_dl:g}", fontsize=10
    )
    e.grid(True, alpha=0.3)
    e.legend(fontsize=7.5, loc="center right")


def draw_deadline_cost(f, rows) -> None:
    """Draw panel (f) deadlines: payment error (left axis) and time to finish (right axis)."""
    K_dl = one(rows, "e", "K")  # the deadline study's K, as in panel (e)
    pe = panel_rows(rows, "f", "payment error", drawn_only=True)
    tt = panel_rows(rows, "f", "time to finish")
    f.plot(
        [r["x"] for r in pe], [r["y"] for r in pe], "o-", color="C1", label="payment error (left)"
    )
    wa_pe = panel_rows(rows, "f", "wait-all: payment error")[0]["y"]
    f.axhline(wa_pe, color="C1", ls=":", lw=1, label=f"wait-all payment error {wa_pe:.2g}")
    calm = panel_rows(rows, "f", "no churn: payment error")[0]["y"]
    f.axhline(calm, color="k", ls=":", lw=1, label=f"no churn, wait-all: {calm:.2g}")
    f.set_yscale("log")
    hidden_note(f, rows, "f")
    f.set_xlabel("round deadline d (s)")
    f.set_ylabel("max_k |P_k - P_k^VCG| (loss units)", color="C1")
    f2 = f.twinx()
    f2.plot(
        [r["x"] for r in tt], [r["y"] for r in tt], "s-", color="C2", label="time to finish (right)"
    )
    wa_t = panel_rows(rows, "f", "wait-all: time to finish")[0]["y"]
    f2.axhline(wa_t, color="C2", ls=":", lw=1, label=f"wait-all time {wa_t:.0f} s")
    f2.set_ylabel("simulated time to finish (s)", color="C2")
    f2.set_ylim(0, None)
    h1, l1 = f.get_legend_handles_labels()
    h2, l2 = f2.get_legend_handles_labels()
    f.legend(h1 + h2, l1 + l2, fontsize=7.5, loc="center right")
    f.set_title(
        f"(f) churn + deadline: payment error and time\nchurn-deadline, FFL, K = {K_dl:g}",
        fontsize=10,
    )
    f.grid(True, alpha=0.3)


def draw_access(g, rows) -> None:
    """Draw panel (g) access schemes: time to finish per scheme and bandwidth, serialised bound."""
    gr = [r for r in panel_rows(rows, "g") if "serialised" not in r["series"]]
    bound = [r for r in panel_rows(rows, "g") if "serialised" in r["series"]]
    labels = list(dict.fromkeys(r["x"] for r in gr))
    bws = sorted({r["bandwidth_bps"] for r in gr}, reverse=True)
    for j, bw in enumerate(bws):
        sel = {r["x"]: r for r in gr if r["bandwidth_bps"] == bw}
        pos = np.arange(len(labels)) + (j - 0.5) * WIDTH
        g.bar(
            pos,
            [sel[lab]["y"] for lab in labels],
            WIDTH,
            color=f"C{j + 4}",
            label=f"{bw / 1e6:g} Mbit/s",
        )
        tick = {r["x"]: r["y"] for r in bound if r["bandwidth_bps"] == bw}
        g.plot(
            pos,
            [tick[lab] for lab in labels],
            "k_",
            ms=14,
            mew=2,
        )
    g.plot([], [], "k_", ms=14, mew=2, label="OFDMA time + all uploads serialised")
    g.set_xticks(np.arange(len(labels)))
    g.set_xticklabels([lab.replace(", ", ",\n") for lab in labels], fontsize=8)
    g.set_ylim(0, 1.25 * max(r["y"] for r in gr + bound))
    g.set_ylabel("simulated time to finish (s)")
    pe_all = {r["payment_error"] for r in gr}
    spread = max(r["payment_spread"] for r in gr)
    same = (
        f"payments identical, error {min(pe_all):.2g}"
        if spread == 0
        else f"payments differ by up to {spread:.2g}"
    )
    mech = {"ffl": "FFL"}.get(one(rows, "g", "mechanism"), one(rows, "g", "mechanism"))
    g.set_title(
        f"(g) shared access point ({same})\n"
        f"lossy-wifi, {mech}, K = {one(rows, 'g', 'K'):g}, {one(rows, 'g', 'fidelity')} fidelity",
        fontsize=10,
    )
    g.legend(fontsize=7.5, loc="upper left")
    g.grid(True, axis="y", alpha=0.3)


def draw_faithfulness(h, rows) -> None:
    """Draw panel (h) faithfulness: agent 0's gain from amplifying per condition and mechanism."""
    hr = panel_rows(rows, "h")
    conds = list(dict.fromkeys(r["x"] for r in hr))
    for j, mech in enumerate(("fedavg", "ffl")):
        sel = {r["x"]: r["y"] for r in hr if r["series"] == mech}
        pos = np.arange(len(conds)) + (j - 0.5) * WIDTH
        h.bar(
            pos,
            [sel[cnd] for cnd in conds],
            WIDTH,
            color=f"C{j}",
            label={"fedavg": "FedAvg", "ffl": "FFL"}[mech],
        )
    eps = hr[0]["epsilon"]
    h.axhline(eps, color="k", ls=":", lw=1, label=f"+epsilon = {eps:g} (FFL's bound)")
    h.axhline(0, color="k", lw=0.8)
    h.set_yscale("symlog", linthresh=1e-3)
    ys = [r["y"] for r in hr] + [eps]
    lo, hi = min(min(ys), 0.0), max(ys)
    h.set_ylim(3 * lo if lo < -1e-3 else -1e-3, 20 * hi)  # room above the bars for the legend
    h.set_xticks(np.arange(len(conds)))
    h.set_xticklabels([cnd.replace(", ", ",\n") for cnd in conds], fontsize=8)
    h.set_ylabel("gain of amplifying, J(truthful) - J(gamma = 2)\n(loss units, symlog)")
    h.set_title(
        "(h) faithfulness: does agent 0 gain by amplifying?\n"
        "> 0: manipulation pays ("
        + "; ".join(sorted({f"{r['scenario']} K = {r['K']:g}" for r in hr}))
        + ")",
        fontsize=10,
    )
    h.legend(fontsize=7.5, loc="upper right")
    h.grid(True, axis="y", alpha=0.3)


def draw_per_agent(i, rows) -> None:
    """Draw panel (i) per agent: payment error against the fraction of requests missing."""
    ir = [r for r in panel_rows(rows, "i", drawn_only=True) if r["x"] != "horizontal line"]
    for j, label in enumerate(dict.fromkeys(r["series"] for r in ir)):
        sel = [r for r in ir if r["series"] == label]
        i.scatter(
            [r["x"] for r in sel],
            [r["y"] for r in sel],
            s=14,
            color=f"C{j + 7}",
            marker="os^"[j % 3],
            label=label,
        )
    med = panel_rows(rows, "i", "median exact VCG payment")[0]["y"]
    i.axhline(med, color="k", ls=":", lw=1, label=f"median exact VCG payment {med:.2g}")
    i.set_yscale("log")
    hidden_note(i, rows, "i")
    i.set_xlabel("fraction of the agent's requests lost (offline) or cut (late)")
    i.set_ylabel("|P_k - P_k^VCG| (loss units)")
    i.set_title(
        "(i) per agent: missing rounds make payments wrong, even for\n"
        f"agents never online (x = 1) (churn-deadline, FFL, K = {one(rows, 'i', 'K'):g})",
        fontsize=10,
    )
    i.legend(fontsize=7.5, loc="lower right")
    i.grid(True, alpha=0.3)


def draw(rows: list[dict], meta: dict, quick: bool) -> plt.Figure:
    """Draw the nine panels from the CSV rows; returns the figure."""
    fig, axes = plt.subplots(3, 3, figsize=(18, 15.5))
    (a, b, c), (d, e, f), (g, h, i) = axes
    for ax, panel, ylabel, title in (
        (a, "a", "uplink transmissions per message", "(a) ARQ: transmissions per message"),
        (b, "b", "requests without a reply (fraction)", "(b) dropouts: requests without a reply"),
        (c, "c", "max_k |P_k - P_k^VCG| (loss units)", "(c) FFL payment error vs exact VCG"),
        (d, "d", "simulated time to finish (s)", "(d) time to finish (learning + payments)"),
    ):
        draw_loss_panel(ax, rows, meta, panel, ylabel, title)
    draw_answered(e, rows)
    draw_deadline_cost(f, rows)
    draw_access(g, rows)
    draw_faithfulness(h, rows)
    draw_per_agent(i, rows)
    return common.titled(
        fig,
        "Network effects on FFL: dropouts, ARQ, churn with deadlines, a shared access point "
        f"(synthetic data{', --quick' if quick else ''})",
        fontsize=12,
    )
