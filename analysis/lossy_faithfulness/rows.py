"""The CSV rows: one per plotted point (a mean over seeds, or one seed in the acceptance panel)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from analysis import common

from .base import ACCEPT_Q, ACCEPT_R, POLICIES, SCHEDULES

#: The four measurements drawn per loss condition, in column order.
QUANTITIES = ("payment_error", "time_s", "messages", "gain")
#: Rows of panels (one per quantity) per loss condition: (loss, R) on the cell, or churn.
CONDITIONS = {
    ("bernoulli", 3): "abcd",
    ("bernoulli", 0): "efgh",
    ("gilbert-elliott", 3): "ijkl",
    "churn": "mnop",
}
#: Panels on log y axes (a point with y <= 0 is kept in the CSV, not drawn).
LOG_QUANTITIES = ("payment_error", "time_s", "messages", "rounds_phase2", "given_up")


def gains(records: list[dict]) -> list[dict]:
    """Pair each truthful run with its amplifying twin (same everything else, same seed).

    Returns the truthful records with ``gain`` = J_0(truthful) - J_0(amplify)
    added (loss units; > 0: amplifying pays).
    """
    key = ("scenario", "loss", "q", "R", "cond", "policy", "schedule", "seed")
    amp = {tuple(r[k] for k in key): r["J0"] for r in records if r["amplify"]}
    return [
        {**r, "gain": r["J0"] - amp[tuple(r[k] for k in key)]} for r in records if not r["amplify"]
    ]


def stats(records: list[dict], by: tuple[str, ...], keys: tuple[str, ...]) -> dict:
    """Statistics over seeds; returns {(by values): {key: (mean, std, n, min, max)}}."""
    values: dict = defaultdict(lambda: defaultdict(list))
    for r in records:
        for key in keys:
            if r[key] is not None:
                values[tuple(r[b] for b in by)][key].append(r[key])
    return {
        group: {k: (*common.mean_std_count(v), min(v), max(v)) for k, v in per_key.items()}
        for group, per_key in values.items()
    }


def grid_rows(cell: list[dict], churn: list[dict]) -> list[dict]:
    """The rows of panels (a)-(p): per condition, quantity, policy, schedule and q (or round policy)."""
    rows = []
    keys = (*QUANTITIES, "rounds_phase2", "sum_T2", "max_T2", "given_up", "retries")
    runs = gains(cell) + gains(churn)
    by = ("scenario", "loss", "R", "cond", "q", "policy", "schedule")
    for (scenario, loss, R, cond, q, policy, schedule), st in stats(runs, by, keys).items():
        is_churn = scenario == "churn-deadline"
        cnd = "churn" if is_churn else (loss, R)
        sample = next(r for r in runs if r["scenario"] == scenario)
        for quantity, panel in zip(QUANTITIES, CONDITIONS[cnd], strict=True):
            m, s, n, lo, hi = st[quantity]
            rows.append(
                {
                    "panel": panel,
                    "quantity": quantity,
                    "series": policy,
                    "schedule": schedule,
                    "x": cond if is_churn else q,
                    "y": m,
                    "y_std": s,
                    "y_min": lo,
                    "y_max": hi,
                    "seeds": n,
                    "loss": loss,
                    "R": R,
                    "scenario": scenario,
                    "K": sample["K"],
                    "epsilon": sample["epsilon"],
                    "retries": st["retries"][0],
                    "given_up": st["given_up"][0] if "given_up" in st else None,
                    "given_up_max": st["given_up"][4] if "given_up" in st else None,
                }
            )
        if cnd == ("bernoulli", 3):
            extra = {"sum_T2": st["sum_T2"][0], "max_T2": st["max_T2"][0]}
            extra |= {"retries": st["retries"][0], "loss": loss, "R": R, "K": sample["K"]}
            rows.append(mean_row("s", "rounds_phase2", policy, schedule, q, st, **extra))
        if cnd == ("bernoulli", 0) and "given_up" in st:
            extra = {"loss": loss, "R": R, "K": sample["K"]}
            rows.append(mean_row("t", "given_up", policy, schedule, q, st, **extra))
    return rows


def mean_row(panel, quantity, policy, schedule, x, st: dict, **columns) -> dict:
    """Return one plotted point of ``quantity``: its mean over seeds as y, with y_std and seeds.

    ``st`` is a group of :func:`stats`; ``columns`` follow the seeds, in order.
    """
    m, s, n = st[quantity][:3]
    head = {"panel": panel, "quantity": quantity, "series": policy, "schedule": schedule, "x": x}
    return head | {"y": m, "y_std": s, "seeds": n, **columns}


def accept_rows(accept: list[dict]) -> list[dict]:
    """Panels (q) and (r): the acceptance point per seed, and its mean time and messages.

    Each run at q = 0.1 gets ``bound`` = the lossless error of its seed and
    schedule + epsilon and ``within`` (1 when its error is at most the bound).
    """
    lossless = {(r["seed"], r["schedule"]): r["payment_error"] for r in accept if r["q"] == 0}
    lossy = [r for r in accept if r["q"] == ACCEPT_Q]
    rows = []
    for r in lossy:
        bound = lossless[(r["seed"], r["schedule"])] + r["epsilon"]
        rows.append(
            {
                "panel": "q",
                "quantity": "payment_error",
                "series": r["policy"],
                "schedule": r["schedule"],
                "x": r["seed"],
                "y": r["payment_error"],
                "lossless": lossless[(r["seed"], r["schedule"])],
                "bound": bound,
                "within": int(r["payment_error"] <= bound),
                "time_s": r["time_s"],
                "messages": r["messages"],
                "loss": r["loss"],
                "R": r["R"],
                "K": r["K"],
                "epsilon": r["epsilon"],
            }
        )
    runs = [{**r, "policy": "lossless" if r["q"] == 0 else r["policy"]} for r in accept]
    st = stats(runs, ("policy", "schedule"), ("time_s", "messages", "payment_error"))
    for (policy, schedule), v in st.items():
        base = st[("reweight", schedule)]
        rows.append(
            {
                "panel": "r",
                "quantity": "time_s",
                "series": policy,
                "schedule": schedule,
                "x": policy,
                "y": v["time_s"][0],
                "y_std": v["time_s"][1],
                "seeds": v["time_s"][2],
                "time_vs_reweight": v["time_s"][0] / base["time_s"][0],
                "time_vs_sequential": v["time_s"][0] / st[(policy, "sequential")]["time_s"][0],
                "messages": v["messages"][0],
                "messages_vs_reweight": v["messages"][0] / base["messages"][0],
                "payment_error": v["payment_error"][0],
                "loss": "bernoulli",
                "q": 0.0 if policy == "lossless" else ACCEPT_Q,
                "R": ACCEPT_R,
                "K": runs[0]["K"],
            }
        )
    return rows


def build(cell: list[dict], accept: list[dict], churn: list[dict]) -> list[dict]:
    """Return the CSV rows of the twenty panels, each with ``drawn`` (0: y <= 0 on a log axis)."""
    rows = grid_rows(cell, churn) + accept_rows(accept)
    order = {p[0]: i for i, p in enumerate(POLICIES)} | {"lossless": -1}
    rows.sort(
        key=lambda r: (
            r["panel"],
            order[r["series"]],
            SCHEDULES.index(r["schedule"]),
            str(r["x"]) if isinstance(r["x"], str) else f"{r['x']:012.6f}",
        )
    )
    for r in rows:
        positive = r["y"] is not None and np.isfinite(r["y"]) and r["y"] > 0
        r["drawn"] = int(positive or r["quantity"] not in LOG_QUANTITIES)
    return rows
