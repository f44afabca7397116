"""What the studies share: sizes, the repair policies, the sweeps and one record per run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from analysis import common
from analysis.network_effects.faithfulness import AMPLIFY
from analysis.network_effects.loss import LOSS_BASE

SIZES = {
    True: {
        "cell": ["agents.count=20", "data.samples=200"],
        "q": [0.0, 0.1, 0.3],
        "seeds": [0],
        "accept_seeds": list(range(10)),
        "churn": ["agents.count=20", "data.samples=1000", "mechanism.phase1_rounds=40"],
        "churn_seeds": [0],
        # retry 20 retries offline devices 20 times a round: most of the quick run's time
        "churn_policies": ("reweight", "retry 3", "stale"),
    },
    False: {
        "cell": ["agents.count=50", "data.samples=500"],
        "q": [0.0, 0.05, 0.1, 0.2, 0.3, 0.5],
        "seeds": [0, 1, 2],
        "accept_seeds": list(range(10)),
        "churn": [],
        "churn_seeds": [0, 1],
        "churn_policies": ("reweight", "retry 3", "retry 20", "stale"),
    },
}

#: The repair policies drawn: (label, ``mechanism.missing``, ``mechanism.retry_max``).
POLICIES = (
    ("reweight", "reweight", 3),
    ("retry 3", "retry", 3),
    ("retry 20", "retry", 20),
    ("stale", "stale", 3),
)
SCHEDULES = ("sequential", "parallel")
#: Gilbert-Elliott P(bad -> good) per transmission: bursts of 1 / 0.25 = 4 transmissions on average.
GE_R = 0.25
#: The acceptance point: Bernoulli loss q = 0.1 with R = 3 ARQ retransmissions.
ACCEPT_Q, ACCEPT_R = 0.1, 3


def cell_base(size) -> list[str]:
    """Overrides of the comm-vs-k cell: network_effects' loss study at this size (K, n)."""
    drop = ("agents.count=", "data.samples=", "sweep.zip=")  # the caller sets the sweep
    return [o for o in LOSS_BASE if not o.startswith(drop)] + size["cell"]


def policy_sweep(policies: Sequence[tuple[str, str, int]] = POLICIES) -> str:
    """Return the ``sweep.zip`` override pairing ``mechanism.missing`` with ``retry_max``."""
    missing = ", ".join(f'"{m}"' for _, m, _ in policies)
    retry = ", ".join(str(r) for _, _, r in policies)
    return f'sweep.zip=[{{"mechanism.missing" = [{missing}], "mechanism.retry_max" = [{retry}]}}]'


def ge_p(q: float, r: float = GE_R) -> float:
    """P(good -> bad) giving a Gilbert-Elliott chain (h = 0, k = 1) the mean loss q: q r / (1 - q)."""
    return q * r / (1.0 - q)


def policy_label(missing: str, retry_max: int) -> str:
    """Return the label of :data:`POLICIES` for a run's ``mechanism.missing`` and ``retry_max``."""
    return f"retry {retry_max}" if missing == "retry" else missing


def sweep_records(name: str, out: Path, overrides: Sequence[str], workers: int, tag: str):
    """Sweep a shipped scenario under ``out/runs/<tag>``; returns one :func:`record` per run."""
    res = common.sweep(name, out, overrides, workers=workers, tag=tag)
    return [record(rec["result"]) for rec in res.ok]


def record(result: dict) -> dict:
    """The measurements of one run (a flat dict).

    ``q``: the mean loss per transmission (Bernoulli q, or the Gilbert-Elliott
    chain's stationary loss p / (p + r)); ``cond``: the round policy (churn
    runs); ``time_s`` simulated seconds; ``messages`` down + up; ``rounds_phase2``
    Phase II exchanges (retries included); ``sum_T2`` and ``max_T2`` the Phase II
    rounds summed and maximised over the problems; ``J0`` agent 0's overall loss
    (payment + F_0(w*)); ``given_up`` replies still missing after the repair
    policy (``None`` under reweight, which keeps no count).
    """
    sc = result["scenario"]
    mech, net = sc["mechanism"], sc["network"]
    radio = net.get("radio", {})
    loss = radio.get("loss", "none")
    if loss == "gilbert-elliott":
        q = radio["ge_p"] / (radio["ge_p"] + radio["ge_r"])
    else:
        q = radio.get("loss_prob", 0.0) if loss == "bernoulli" else 0.0
    c, it = result["communication"], result["iterations"]
    rep = result["mechanism_info"].get("repair", {})
    policy = net.get("round_policy", "wait-all")
    cond = f"deadline {net['deadline_s']:g} s" if policy == "deadline" else policy
    return {
        "scenario": result["name"],
        "loss": loss,
        "q": round(q, 12),
        "R": radio.get("arq_max_retries"),
        "cond": cond,
        "policy": policy_label(mech["missing"], mech["retry_max"]),
        "schedule": mech["phase2_schedule"],
        "seed": result["seed"],
        "amplify": result["agents"][0]["strategy"] != "truthful",
        "payment_error": result["payment_error_max"],
        "time_s": result["sim_time_s"]["total"],
        "messages": c["messages_down"] + c["messages_up"],
        "rounds_phase2": c["rounds"].get("phase2", 0),
        "sum_T2": it["phase2_total"],
        "max_T2": max(it["phase2_per_agent"], default=0),
        "J0": result["agents"][0]["overall_loss"],
        "retries": rep.get("retries", 0),
        "given_up": rep.get("given_up_replies", 0) if mech["missing"] != "reweight" else None,
        "stale_replies": rep.get("stale_replies", 0),
        "epsilon": mech["epsilon"],
        "K": result["K"],
    }


def strategies() -> str:
    """Return the override sweeping agent 0 over truthful and amplifying (gamma = 2)."""
    return f"sweep.agents.strategy={AMPLIFY}"
