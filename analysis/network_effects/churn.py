"""Study 2, churn and deadlines: the straggler-tail closed form and FFL on churn-deadline."""

from __future__ import annotations

import math

import edgesim
from analysis import common

from .base import sweep_results

HEADER_BYTES, FLOAT_BYTES = 64, 8


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
    radio = net.radio.latency_s + size_bits / net.radio.channel_rate_bps()
    wired = net.backhaul.hops * (net.backhaul.latency_s + size_bits / net.backhaul.bandwidth_bps)
    n_k = sc.data.samples / sc.agents.count
    return 2 * (radio + wired) + net.compute.seconds + net.compute.per_sample_s * n_k


def deadline_study(args, size) -> tuple[list[dict], dict, float, float]:
    """FFL on churn-deadline for each deadline, under wait-all, and without churn (wait-all).

    Returns (records, {label: whole result} of the three runs panel (i)
    shows, the closed form's shift s and exponential mean m in seconds).
    """
    # Every device has a channel of its own and the backhaul is unshared, so that a request's
    # round trip is the closed form's shift plus its compute tail (no queueing for the medium).
    base = [
        "mechanism.exact_vcg=true",
        'sweep.mechanism.kind=["ffl"]',
        'network.radio.resource_blocks="per-device"',
        'network.backhaul.sharing="dedicated"',
    ]
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
