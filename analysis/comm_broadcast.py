"""Panel (g) of ``comm_vs_k``: FFL's downlink messages, unicast against broadcast.

With ``network.downlink = "broadcast"`` the global model and each Phase II iterate
go once per cell and exchange instead of once per recipient (docs/network.md), so
FFL's downlink messages are its exchanges, T1 + 1 + sum_k T2_k, where unicast sends
K T1 + K + (K - 1) sum_k T2_k. ``comm_vs_k`` runs FFL a second time with
:data:`OVERRIDES` (K up to 10^5) and draws both here.
"""

from __future__ import annotations

from analysis import common

#: The second FFL sweep's override: the downlink broadcast once per cell.
OVERRIDES = ['network.downlink="broadcast"']


def rows(unicast: list[dict], broadcast: list[dict]) -> list[dict]:
    """Panel (g)'s CSV rows: FFL's downlink messages and bytes, unicast and broadcast, by K.

    ``unicast``/``broadcast``: FFL's run records (``comm_vs_k.run_record``) of the two sweeps.
    A broadcast counts one copy per cell and exchange (one cell here), a unicast one per
    recipient; ``slope`` is the log-log slope of the downlink messages over all K.
    """
    out = []
    for series_name, recs in (("ffl unicast", unicast), ("ffl broadcast", broadcast)):
        s, c, k0, k1 = common.loglog_fit(recs, "messages_down")
        for r in recs:
            out.append(
                {
                    "panel": "downlink",
                    "series": series_name,
                    "mechanism": "ffl",
                    "K": r["K"],
                    "y": r["messages_down"],
                    "y_plot": r["messages_down"],
                    "slope": s,
                    "intercept": c,
                    "fit_K_min": k0,
                    "fit_K_max": k1,
                    "T1": r["T1"],
                    "phase2_total": r["phase2_total"],
                    "extra_rounds": r["extra_rounds"],
                    "messages_up": r["messages_up"],
                    "bytes": r["bytes"],
                }
            )
    return out


def draw(ax, rows: list[dict], color) -> None:
    """Draw panel (g) on ``ax`` from the CSV rows of :func:`rows`; returns nothing."""
    for name, style in (("ffl unicast", dict(marker="s")), ("ffl broadcast", dict(marker="v"))):
        pts = sorted(
            (r for r in rows if r["panel"] == "downlink" and r["series"] == name),
            key=lambda r: r["K"],
        )
        ax.plot(
            [r["K"] for r in pts],
            [r["y_plot"] for r in pts],
            color=color,
            ls="-" if name.endswith("unicast") else "--",
            label=f"FFL, {name.split()[1]}: slope {pts[0]['slope']:.2f}",
            **style,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("agents K")
    ax.set_ylabel("downlink messages (count)")
    ax.set_title(
        "(g) FFL's downlink: one message per agent, or one broadcast per cell", fontsize=10
    )
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
