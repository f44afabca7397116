"""The runs: the comm-vs-k cell's loss grid, the ten-seed acceptance point and churn-deadline."""

from __future__ import annotations

from .base import (
    ACCEPT_Q,
    ACCEPT_R,
    GE_R,
    POLICIES,
    SCHEDULES,
    cell_base,
    ge_p,
    policy_sweep,
    strategies,
    sweep_records,
)

SCHEDULE_SWEEP = "sweep.mechanism.phase2_schedule=" + ", ".join(f'"{s}"' for s in SCHEDULES).join(
    "[]"
)


def cell_study(args, size) -> list[dict]:
    """FFL on the comm-vs-k cell: Bernoulli loss (R = 0 and 3) and Gilbert-Elliott loss (R = 3).

    Every q x policy x schedule x seed, agent 0 truthful and amplifying;
    returns one record per run (:func:`~.base.record`).
    """
    common_over = [
        policy_sweep(),
        SCHEDULE_SWEEP,
        strategies(),
        f"sweep.seed={size['seeds']}",
    ]
    bern = cell_base(size) + [
        f"sweep.network.radio.loss_prob={size['q']}",
        "sweep.network.radio.arq_max_retries=[0, 3]",
        *common_over,
    ]
    recs = sweep_records("comm-vs-k", args.out, bern, args.workers, "lf_bernoulli")
    ge = cell_base(size) + [
        "network.radio.loss_prob=0.0",
        "network.radio.loss=gilbert-elliott",
        f"network.radio.ge_r={GE_R}",
        "network.radio.arq_max_retries=3",
        f"sweep.network.radio.ge_p={[ge_p(q) for q in size['q']]}",
        *common_over,
    ]
    return recs + sweep_records("comm-vs-k", args.out, ge, args.workers, "lf_gilbert")


def accept_study(args, size) -> list[dict]:
    """The acceptance point, truthful agents, ten seeds: lossless, and q = 0.1 under each policy.

    Bernoulli loss with R = 3 ARQ retransmissions on the comm-vs-k cell; the
    lossless run (q = 0) is the same under every policy, so it runs under
    reweight only. Returns one record per run.
    """
    over = cell_base(size) + [
        f"network.radio.arq_max_retries={ACCEPT_R}",
        SCHEDULE_SWEEP,
        f"sweep.seed={size['accept_seeds']}",
    ]
    lossless = over + ["network.radio.loss_prob=0.0", "sweep.zip=[]"]
    lossless = sweep_records("comm-vs-k", args.out, lossless, args.workers, "lf_accept_0")
    lossy = over + [f"network.radio.loss_prob={ACCEPT_Q}", policy_sweep()]
    return lossless + sweep_records("comm-vs-k", args.out, lossy, args.workers, "lf_accept_q")


def churn_study(args, size) -> list[dict]:
    """FFL on churn-deadline (its own 0.15 s deadline, and wait-all) under each policy and schedule.

    Agent 0 truthful and amplifying; returns one record per run.
    """
    over = size["churn"] + [
        "mechanism.exact_vcg=true",
        'sweep.mechanism.kind=["ffl"]',
        'sweep.network.round_policy=["deadline", "wait-all"]',
        policy_sweep([p for p in POLICIES if p[0] in size["churn_policies"]]),
        SCHEDULE_SWEEP,
        strategies(),
        f"sweep.seed={size['churn_seeds']}",
    ]
    return sweep_records("churn-deadline", args.out, over, args.workers, "lf_churn")
