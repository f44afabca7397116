"""Network effects on FFL: dropouts, ARQ, churn with deadlines and a shared access point.

Issue 5, deliverable 7. How the edge network changes FFL's payment accuracy
(``payment_error_max`` = max_k |P_k - P_k^VCG| against exact VCG),
faithfulness (the gain of an agent that amplifies its gradients) and time to
finish (``sim_time_s.total``), and where the mechanism's guarantees stop
holding. Four studies, each on a shipped scenario with overrides:

1. Loss and ARQ (``comm-vs-k`` at K = 50, n = 500, FFL, Theorem 1's T1 and
   T2 with ``phase2_check = false``, so that every Phase II problem runs exactly
   Theorem 1's T2 rounds; the check was switched off because, with lost reports,
   it used to never fire and ran problems to ``phase2_max_rounds``, whereas
   edgesim now ends such a problem after T2 rounds). Bernoulli
   loss q per transmission, ARQ cap R retransmissions. Closed forms: uplink
   transmissions per message (1 - q^(R+1)) / (1 - q) (capped ARQ, docs/network.md
   "Network defaults"); a request gets no reply when its downlink or its
   uplink is dropped after R + 1 tries: 1 - (1 - q^(R+1))^2.
2. Churn and deadlines (``churn-deadline``, FFL): Markov on/off devices,
   shifted-exponential compute (shift s_c + Exp(mean m)); the round closes at
   the deadline d. Closed form: a request that reached an online device is
   answered in time with probability 1 - exp(-(d - s)/m), s = the fixed
   delays (radio and backhaul latency and airtime both ways, compute shift).
3. A shared access point (``lossy-wifi``, events fidelity, 20 devices,
   Gilbert-Elliott loss): OFDMA with a block per device, OFDMA with 4
   blocks, TDMA and processor sharing, at the scenario's 54 Mbit/s and in a
   congested 1 Mbit/s cell. The medium changes only timing: under wait-all
   the same replies arrive, so payments are identical. Serialising the
   uploads of a round costs at most (transmissions - 1) airtimes per round.
4. Faithfulness: agent 0 truthful or amplifying (gamma = 2) under FedAvg and
   FFL, on an ideal link, with loss (with and without ARQ) and with churn
   (wait-all and a deadline); gain = J_0(truthful) - J_0(amplify), J_0 =
   payment + F_0(w*) (Definition 1). Positive gain = manipulation pays.

Where the guarantees stop: FFL's payments are sums over rounds of the others'
reported gradients, and its Phase II assumes every agent reports in every
round. A missing reply is reweighted away, which leaves an error of the order
of one agent's gradient in a sum that should be O(p_k): payment errors grow
from below epsilon to orders of magnitude above it as soon as replies go
missing (loss without ARQ, churn, deadline cuts), and the amplifier's gain is
then no longer bounded by epsilon. Panel (i) shows it per agent.

Sizes. ``--quick``: 4 loss values x 3 ARQ caps, 5 deadlines, lossy-wifi with
40 Phase I rounds; one seed (about 40 s on two cores). Full: 8 x 4 loss grid
and 3 seeds, 10 deadlines, the scenario's 200 rounds (a few minutes).

    PYTHONPATH=. python -m analysis.network_effects [--quick] [--out DIR] [--workers N]
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import edgesim
from analysis import common

STEM = "network_effects"
AMPLIFY = '[[], [{agent = 0, kind = "amplify", gamma = 2.0}]]'
#: The loss study's base: comm-vs-k's lossy cell, FFL at K = 50 with exact VCG for reference.
LOSS_BASE = [
    "sweep.zip=[]",
    "mechanism.kind=ffl",
    "agents.count=50",
    "data.samples=500",
    "mechanism.exact_vcg=true",
    "mechanism.phase2_check=false",
]
SIZES = {
    True: {
        "q": [0.0, 0.1, 0.3, 0.5],
        "R": [0, 1, 3],
        "seeds": [0],
        "deadlines": [0.05, 0.07, 0.1, 0.15, 0.3],
        "wifi": ["mechanism.phase1_rounds=40"],
    },
    False: {
        "q": [0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5],
        "R": [0, 1, 2, 3],
        "seeds": [0, 1, 2],
        "deadlines": [0.045, 0.05, 0.06, 0.07, 0.08, 0.1, 0.12, 0.15, 0.2, 0.3],
        "wifi": [],
    },
}
ACCESS = [("ofdma", "per-device"), ("ofdma", "4"), ("tdma", "per-device"), ("shared", "per-device")]
ACCESS_LABEL = {
    ("ofdma", "per-device"): "OFDMA, block per device",
    ("ofdma", "4"): "OFDMA, 4 blocks",
    ("tdma", "per-device"): "TDMA",
    ("shared", "per-device"): "processor sharing",
}
HEADER_BYTES, FLOAT_BYTES = 64, 8


def sweep_results(name: str, out: Path, overrides: Sequence[str], workers: int, tag: str):
    """Sweep a shipped scenario under ``out/runs/<tag>``; returns [(swept values, result dict)].

    The whole output of each run is kept (per-agent objects and
    ``vcg_payments``), which the per-agent panel needs.
    """
    res = common.sweep(name, out, overrides, workers=workers, tag=tag)
    return [(rec.get("values") or {}, rec["result"]) for rec in res.ok]


def arq_transmissions(q: float, R: int) -> float:
    """Expected transmissions per message with capped ARQ: (1 - q^(R+1)) / (1 - q) (count)."""
    return float(R + 1) if q == 1 else (1 - q ** (R + 1)) / (1 - q)


def no_reply_probability(q: float, R: int) -> float:
    """Probability that a request gets no reply: downlink or uplink dropped after R + 1 tries."""
    return 1 - (1 - q ** (R + 1)) ** 2


def in_time_probability(d: float, shift_s: float, mean_s: float) -> float:
    """P(shift + Exp(mean) <= d): a request to an online device answered by the deadline d (s)."""
    return 0.0 if d <= shift_s else 1 - math.exp(-(d - shift_s) / mean_s)


def churn_shift_s(sc) -> float:
    """Fixed part of a request's round trip in the churn scenario (s).

    Radio latency + airtime and each wired hop's latency + airtime, down and
    up, plus the compute shift ``seconds + per_sample_s n_k`` (fixed radio
    model, equal sample counts). Messages are 64 + 8 p bytes (docs/paper.md,
    "Message sizes"), p = d + 1 parameters for ridge with an intercept.
    """
    net = sc.network
    p = sc.data.features + 1
    size_bits = 8 * (HEADER_BYTES + FLOAT_BYTES * p)
    radio = net.radio.latency_s + size_bits / net.radio.bandwidth_bps
    wired = net.backhaul.hops * (net.backhaul.latency_s + size_bits / net.backhaul.bandwidth_bps)
    n_k = sc.data.samples / sc.agents.count
    return 2 * (radio + wired) + net.compute.seconds + net.compute.per_sample_s * n_k


# ---------------------------------------------------------------------------- the studies


def loss_study(args, size) -> list[dict]:
    """Loss x ARQ grid of FFL runs; returns one record per run (q, R, seed and measurements).

    ``epsilon``: Theorem 1's payment accuracy the run was given (its resolved scenario).
    """
    over = LOSS_BASE + [
        f"sweep.network.radio.loss_prob={size['q']}",
        f"sweep.network.radio.arq_max_retries={size['R']}",
        f"sweep.seed={size['seeds']}",
    ]
    recs = []
    for vals, r in sweep_results("comm-vs-k", args.out, over, args.workers, "ne_loss"):
        c = r["communication"]
        recs.append(
            {
                "q": vals["network.radio.loss_prob"],
                "R": vals["network.radio.arq_max_retries"],
                "seed": r["seed"],
                "K": r["K"],
                "tx_per_message": c["transmissions_up"] / c["messages_up"],
                "no_reply": c["dropped"] / c["messages_down"],
                "payment_error": r["payment_error_max"],
                "time_s": r["sim_time_s"]["total"],
                "messages_up": c["messages_up"],
                "messages_down": c["messages_down"],
                "epsilon": r["scenario"]["mechanism"]["epsilon"],
            }
        )
    return recs


def deadline_study(args, size) -> tuple[list[dict], dict, float, float]:
    """FFL on churn-deadline for each deadline, under wait-all, and without churn (wait-all).

    Returns (records, {label: whole result} of the three runs panel (i)
    shows, the closed form's shift s and exponential mean m in seconds).
    """
    base = ["mechanism.exact_vcg=true", 'sweep.mechanism.kind=["ffl"]']
    dl = base + [
        'sweep.network.round_policy=["deadline"]',
        f"sweep.network.deadline_s={size['deadlines']}",
    ]
    wa = base + ['sweep.network.round_policy=["wait-all"]']
    runs = sweep_results("churn-deadline", args.out, dl, args.workers, "ne_deadline")
    runs += sweep_results("churn-deadline", args.out, wa, args.workers, "ne_waitall")
    calm = wa + ["network.availability.model=always"]
    runs += [
        ({**v, "network.round_policy": "no-churn"}, r)
        for v, r in sweep_results("churn-deadline", args.out, calm, args.workers, "ne_nochurn")
    ]
    recs = []
    for vals, r in runs:
        c, n = r["communication"], r["network"]
        reached = c["messages_down"] - n["lost"]
        recs.append(
            {
                "policy": vals["network.round_policy"],
                "deadline_s": vals.get("network.deadline_s", math.inf),
                "in_time": 1 - n["cut"] / reached,
                "lost_churn": n["lost"] / c["messages_down"],
                "payment_error": r["payment_error_max"],
                "time_s": r["sim_time_s"]["total"],
                "K": r["K"],
                "mechanism": r["mechanism"],
                "result": r,
            }
        )
    sc = edgesim.load_scenario(common.scenario_path("churn-deadline"))
    deadline = min(
        (x for x in recs if x["policy"] == "deadline"), key=lambda x: abs(x["deadline_s"] - 0.1)
    )
    chosen = {
        "no churn, wait-all": next(x for x in recs if x["policy"] == "no-churn")["result"],
        "churn, wait-all": next(x for x in recs if x["policy"] == "wait-all")["result"],
        f"churn, deadline {deadline['deadline_s']:g} s": deadline["result"],
    }
    return recs, chosen, churn_shift_s(sc), sc.network.compute.straggler_mean_s


def access_study(args, size) -> list[dict]:
    """lossy-wifi under four uplink access schemes at 54 and 1 Mbit/s; returns one record per run."""
    acc = ", ".join(f'"{a}"' for a, _ in ACCESS)
    rbs = ", ".join(f'"{b}"' if b == "per-device" else b for _, b in ACCESS)
    over = (
        ["mechanism.exact_vcg=true"]
        + size["wifi"]
        + [
            f'sweep.zip=[{{"network.radio.access" = [{acc}], "network.radio.resource_blocks" = [{rbs}]}}]',
            "sweep.network.radio.bandwidth_bps=[54e6, 1e6]",
        ]
    )
    recs = []
    for vals, r in sweep_results("lossy-wifi", args.out, over, args.workers, "ne_access"):
        c, n = r["communication"], r["network"]
        bw = vals["network.radio.bandwidth_bps"]
        airtime = 8 * (c["bytes_up"] / c["messages_up"]) / bw
        recs.append(
            {
                "access": vals["network.radio.access"],
                "blocks": str(vals["network.radio.resource_blocks"]),
                "bandwidth_bps": bw,
                "time_s": r["sim_time_s"]["total"],
                "payment_error": r["payment_error_max"],
                "serial_bound_s": (c["transmissions_up"] - n["exchanges"]) * airtime,
                "payments": tuple(a["payment"] for a in r["agents"]),
                "K": r["K"],
                "mechanism": r["mechanism"],
                "fidelity": r["scenario"]["network"]["fidelity"],
            }
        )
    return recs


def faith_study(args) -> list[dict]:
    """Agent 0 truthful vs amplifying (gamma 2) under FedAvg and FFL in five network conditions.

    Returns one record per (condition, mechanism) with J_0 (payment + F_0(w*))
    for both strategies and gain = J_0(truthful) - J_0(amplify).
    """
    conds = {
        "ideal link": ["network.radio.loss_prob=0.0"],
        "5 % loss, ARQ 3": ["network.radio.loss_prob=0.05"],
        "30 % loss, no ARQ": ["network.radio.loss_prob=0.3", "network.radio.arq_max_retries=0"],
    }
    runs: dict = defaultdict(dict)
    scen: dict = {}
    for label, extra in conds.items():
        base = [o for o in LOSS_BASE if not o.startswith("mechanism.kind=")]
        over = (
            base
            + extra
            + ['sweep.mechanism.kind=["fedavg", "ffl"]', f"sweep.agents.strategy={AMPLIFY}"]
        )
        tag = "ne_faith_" + label.split(",")[0].replace(" ", "").replace("%", "")
        for _vals, r in sweep_results("comm-vs-k", args.out, over, args.workers, tag):
            runs[(label, r["mechanism"])][r["agents"][0]["strategy"] != "truthful"] = r
            scen[label] = r["name"]
    over = [
        "mechanism.exact_vcg=true",
        "network.deadline_s=0.1",
        f"sweep.agents.strategy={AMPLIFY}",
    ]
    for vals, r in sweep_results("churn-deadline", args.out, over, args.workers, "ne_faith_churn"):
        label = (
            "churn, wait-all"
            if vals["network.round_policy"] == "wait-all"
            else "churn, deadline 0.1 s"
        )
        runs[(label, r["mechanism"])][r["agents"][0]["strategy"] != "truthful"] = r
        scen[label] = r["name"]
    recs = []
    for (label, mech), pair in runs.items():
        j_t, j_a = (pair[a]["agents"][0]["overall_loss"] for a in (False, True))
        recs.append(
            {
                "condition": label,
                "mechanism": mech,
                "J_truthful": j_t,
                "J_amplify": j_a,
                "gain": j_t - j_a,
                "payment_error": pair[False].get("payment_error_max"),
                "scenario": scen[label],
                "K": pair[False]["K"],
            }
        )
    order = list(conds) + ["churn, wait-all", "churn, deadline 0.1 s"]
    return sorted(recs, key=lambda x: (order.index(x["condition"]), x["mechanism"]))


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


# ---------------------------------------------------------------------------- rows and figure


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


def draw(rows: list[dict], meta: dict, quick: bool) -> plt.Figure:
    """Draw the nine panels from the CSV rows; returns the figure."""
    fig, axes = plt.subplots(3, 3, figsize=(18, 15.5))
    (a, b, c), (d, e, f), (g, h, i) = axes
    colors = {R: f"C{j}" for j, R in enumerate(meta["R"])}
    for ax, panel, ylabel, title in (
        (a, "a", "uplink transmissions per message", "(a) ARQ: transmissions per message"),
        (b, "b", "requests without a reply (fraction)", "(b) dropouts: requests without a reply"),
        (c, "c", "max_k |P_k - P_k^VCG| (loss units)", "(c) FFL payment error vs exact VCG"),
        (d, "d", "simulated time to finish (s)", "(d) time to finish (learning + payments)"),
    ):
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
        ax.set_title(
            title + f"\ncomm-vs-k cell, FFL, K = {K:g} (R = ARQ retransmissions)", fontsize=10
        )
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7.5, loc="upper left", ncol=2 if panel in ("a", "b") else 1)
    # (e) deadlines: answered in time, closed form, churn
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
    # (f) deadlines: payment error and time
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
    # (g) access schemes
    gr = [r for r in panel_rows(rows, "g") if "serialised" not in r["series"]]
    bound = [r for r in panel_rows(rows, "g") if "serialised" in r["series"]]
    labels = list(dict.fromkeys(r["x"] for r in gr))
    bws = sorted({r["bandwidth_bps"] for r in gr}, reverse=True)
    width = 0.38
    for j, bw in enumerate(bws):
        sel = {r["x"]: r for r in gr if r["bandwidth_bps"] == bw}
        pos = np.arange(len(labels)) + (j - 0.5) * width
        g.bar(
            pos,
            [sel[lab]["y"] for lab in labels],
            width,
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
    # (h) faithfulness
    hr = panel_rows(rows, "h")
    conds = list(dict.fromkeys(r["x"] for r in hr))
    for j, mech in enumerate(("fedavg", "ffl")):
        sel = {r["x"]: r["y"] for r in hr if r["series"] == mech}
        pos = np.arange(len(conds)) + (j - 0.5) * width
        h.bar(
            pos,
            [sel[cnd] for cnd in conds],
            width,
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
    # (i) per agent
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
    fig.suptitle(
        "Network effects on FFL: dropouts, ARQ, churn with deadlines, a shared access point "
        f"(synthetic data{', --quick' if quick else ''})",
        fontsize=12,
    )
    fig.tight_layout()
    return fig


def main(argv: Sequence[str] | None = None) -> list[Path]:
    """Run the four studies, draw, write ``network_effects.png`` and ``.csv``; returns their paths."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    size = SIZES[args.quick]
    loss = loss_study(args, size)
    dl, tight, shift, mean_s = deadline_study(args, size)
    access = access_study(args, size)
    faith = faith_study(args)
    # Theorem 1's payment accuracy the loss study's runs were given (churn-deadline runs fixed
    # T1, T2 instead).
    (eps,) = {float(r["epsilon"]) for r in loss}
    rows, meta = build(loss, dl, tight, shift, mean_s, access, faith, eps)
    csv = common.write_csv(args.out / f"{STEM}.csv", rows)
    png = common.save(draw(rows, meta, args.quick), args.out, STEM)
    return [png, csv]


if __name__ == "__main__":
    main()
