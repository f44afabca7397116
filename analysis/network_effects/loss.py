"""Study 1, loss and ARQ: capped-ARQ closed forms and the loss x ARQ grid of FFL runs."""

from __future__ import annotations

from .base import sweep_results

#: The loss study's base: comm-vs-k's lossy cell, FFL at K = 50 with exact VCG for reference.
LOSS_BASE = [
    "sweep.zip=[]",
    "mechanism.kind=ffl",
    "agents.count=50",
    "data.samples=500",
    "mechanism.exact_vcg=true",
    "mechanism.phase2_check=false",
]


def arq_transmissions(q: float, R: int) -> float:
    """Expected transmissions per message with capped ARQ: (1 - q^(R+1)) / (1 - q) (count)."""
    return float(R + 1) if q == 1 else (1 - q ** (R + 1)) / (1 - q)


def no_reply_probability(q: float, R: int) -> float:
    """Probability that a request gets no reply: downlink or uplink dropped after R + 1 tries."""
    return 1 - (1 - q ** (R + 1)) ** 2


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
