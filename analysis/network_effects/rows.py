"""The CSV rows: one per plotted point, horizontal line or tick of the nine panels."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from analysis import common

from .access import ACCESS, ACCESS_LABEL
from .churn import in_time_probability
from .loss import arq_transmissions, no_reply_probability


def per_agent_errors(result: dict) -> list[dict]:
    """Per agent of one run: |P_k - P_k^VCG| and the fraction of its requests that got no reply."""
    out = []
    for a, vcg in zip(result["agents"], result["vcg_payments"], strict=True):
        net = a["network"]
        out.append(
            {
                "agent": a["id"],
                "missing": (net["lost"] + net["cut"]) / net["messages_down"],
                "abs_error": abs(a["payment"] - vcg),
                "vcg": vcg,
            }
        )
    return out


def mean_over_seeds(recs: list[dict], keys: Sequence[str]) -> dict:
    """Group by (q, R), in one pass; returns {key: {(q, R): (mean, std)}} for each of ``keys``."""
    stats = common.group_stats(((key, r["q"], r["R"]), r[key]) for r in recs for key in keys)
    out: dict = {key: {} for key in keys}
    for (key, q, R), (m, s, _) in sorted(stats.items(), key=lambda kv: kv[0][1:]):
        out[key][(q, R)] = (m, s)
    return out


def payment_spread(access: list[dict]) -> dict:
    """Per bandwidth, max over agents of the spread (max - min) of P_k across access schemes.

    Returns {bandwidth_bps: spread} in loss units; 0 means the payments are identical.
    """
    out = {}
    for bw in {r["bandwidth_bps"] for r in access}:
        pay = np.array([r["payments"] for r in access if r["bandwidth_bps"] == bw], float)
        out[bw] = float((pay.max(axis=0) - pay.min(axis=0)).max())
    return out


def log_axis(row: dict) -> bool:
    """Whether a row is drawn on a log y axis (panels b, c, i and f's payment errors)."""
    return row["panel"] in ("b", "c", "i") or (
        row["panel"] == "f" and "payment error" in row["series"]
    )


def build(loss, dl, tight, shift, mean_s, access, faith, epsilon) -> tuple[list[dict], dict]:
    """Return the CSV rows (one per plotted point, horizontal line or tick) and the R and q values.

    Every row has ``drawn``: 0 for a point with y <= 0 on a log axis, which the
    figure leaves out (and says so in the panel), 1 otherwise.
    """
    rows: list[dict] = []

    def add(panel, series, x, y, y_std=None, **extra):
        rows.append({"panel": panel, "series": series, "x": x, "y": y, "y_std": y_std, **extra})

    R_values = sorted({r["R"] for r in loss})
    q_values = sorted({r["q"] for r in loss})
    panels = {"tx_per_message": "a", "no_reply": "b", "payment_error": "c", "time_s": "d"}
    stats = mean_over_seeds(loss, ["messages_up", "messages_down", *panels])
    n_up, n_down = stats["messages_up"], stats["messages_down"]
    seeds = len({r["seed"] for r in loss})
    (K_loss,) = {r["K"] for r in loss}
    for key, panel in panels.items():
        for R in R_values:
            for q in q_values:
                m, s = stats[key][(q, R)]
                add(
                    panel,
                    f"measured R={R}",
                    q,
                    m,
                    s,
                    R=R,
                    seeds=seeds,
                    messages_up=n_up[(q, R)][0],
                    messages_down=n_down[(q, R)][0],
                    epsilon=epsilon if panel == "c" else None,
                    K=K_loss,
                )
                if panel == "a":
                    add(panel, f"closed form R={R}", q, arq_transmissions(q, R), R=R, K=K_loss)
                if panel == "b":
                    add(panel, f"closed form R={R}", q, no_reply_probability(q, R), R=R, K=K_loss)
    dead = sorted((x for x in dl if x["policy"] == "deadline"), key=lambda x: x["deadline_s"])
    (K_dl,) = {r["K"] for r in dl}
    for r in dead:
        d = r["deadline_s"]
        add(
            "e",
            "answered in time (measured)",
            d,
            r["in_time"],
            shift_s=shift,
            mean_s=mean_s,
            K=K_dl,
        )
        add("e", "lost to churn (measured)", d, r["lost_churn"], K=K_dl)
        add("f", "payment error", d, r["payment_error"], K=K_dl)
        add("f", "time to finish", d, r["time_s"], K=K_dl)
    # The closed form is drawn as a curve: 200 points between the extreme deadlines plus each one.
    ds = [r["deadline_s"] for r in dead]
    grid = sorted(set(np.linspace(min(ds), max(ds), 200).tolist()) | set(ds))
    for d in grid:
        cf = in_time_probability(d, shift, mean_s)
        add("e", "closed form 1-exp(-(d-s)/m)", d, cf, shift_s=shift, mean_s=mean_s, K=K_dl)
    wa = next(x for x in dl if x["policy"] == "wait-all")
    calm = next(x for x in dl if x["policy"] == "no-churn")
    add("f", "no churn: payment error", "wait-all", calm["payment_error"], K=K_dl)
    add("e", "wait-all: answered", "wait-all", wa["in_time"], K=K_dl)
    add("e", "wait-all: lost to churn", "wait-all", wa["lost_churn"], K=K_dl)
    add("f", "wait-all: payment error", "wait-all", wa["payment_error"], K=K_dl)
    add("f", "wait-all: time to finish", "wait-all", wa["time_s"], K=K_dl)
    spread = payment_spread(access)
    first = ACCESS_LABEL[ACCESS[0]]
    for r in access:
        lab = ACCESS_LABEL[(r["access"], r["blocks"])]
        bw = r["bandwidth_bps"]
        add(
            "g",
            f"{bw / 1e6:g} Mbit/s",
            lab,
            r["time_s"],
            payment_error=r["payment_error"],
            serial_bound_s=r["serial_bound_s"],
            bandwidth_bps=bw,
            payment_spread=spread[bw],
            K=r["K"],
            mechanism=r["mechanism"],
            fidelity=r["fidelity"],
        )
    for r in access:
        lab = ACCESS_LABEL[(r["access"], r["blocks"])]
        bw = r["bandwidth_bps"]
        base = next(
            x["time_s"]
            for x in access
            if x["bandwidth_bps"] == bw and ACCESS_LABEL[(x["access"], x["blocks"])] == first
        )
        add(
            "g",
            f"{bw / 1e6:g} Mbit/s: OFDMA time + all uploads serialised",
            lab,
            base if lab == first else base + r["serial_bound_s"],
            bandwidth_bps=bw,
            K=r["K"],
        )
    for r in faith:
        add(
            "h",
            r["mechanism"],
            r["condition"],
            r["gain"],
            J_truthful=r["J_truthful"],
            J_amplify=r["J_amplify"],
            payment_error=r["payment_error"],
            epsilon=epsilon,
            scenario=r["scenario"],
            K=r["K"],
        )
    vcg = []
    for label, result in tight.items():
        for a in per_agent_errors(result):
            vcg.append(abs(a["vcg"]))
            add(
                "i",
                label,
                a["missing"],
                a["abs_error"],
                agent=a["agent"],
                vcg=a["vcg"],
                K=result["K"],
                mechanism=result["mechanism"],
            )
    add("i", "median exact VCG payment", "horizontal line", float(np.median(vcg)), K=K_dl)
    for r in rows:
        r["drawn"] = int(not (log_axis(r) and not r["y"] > 0))
    return rows, {"q": q_values, "R": R_values}
