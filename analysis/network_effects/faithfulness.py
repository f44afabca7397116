"""Study 4, faithfulness under the network: agent 0 truthful or amplifying, FedAvg and FFL."""

from __future__ import annotations

from collections import defaultdict

from .base import sweep_results
from .loss import LOSS_BASE

AMPLIFY = '[[], [{agent = 0, kind = "amplify", gamma = 2.0}]]'


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
