"""Strategic deviations: regret of each deviation family under each mechanism, beside FFL's bound.

Issue 29, part 5. For every deviation family (``edgesim.deviations`` and the
coalition search of ``edgesim.best_response``) and every mechanism (``fedavg``,
``ffl``, ``dp-ffl``, and ``vcg-federated`` for exact VCG: the central ``vcg``
takes data, not reports, so report families do not apply to it), one agent's
best deviation is searched (``edgesim.best_response.search``, objective
``overall``: P_k + F_k(w*) on its training data, the paper's Definition 1) and
its regret J(truthful) - J(best found) is set beside the bound the search gives
(FFL only: epsilon + both runs' Phase II payment error estimates + Phase I's gap
(F(w*) - F(w^o)) / p_k; null elsewhere, with the reason). Two cases:

- ``paper-fig1``: ``scenarios/paper-fig1.toml`` (ridge, K = 2, T1 = 3000,
  epsilon = 1e-8), agent 0 (the atypical one), coalition {0, 1};
  ``mechanism.phase2_max_rounds = 5000`` (an amplifier makes the other agent's
  Phase II problem oscillate to the cap: 43 s a run at the default 100 000;
  the capped run's truncation estimate enters the bound);
- ``logistic-K10``: the quick start's data (label-skew, delta = 0.3, 10 agents,
  logistic, epsilon = 1e-3) with Theorem 1's rounds (``phase1_rounds =
  "theory"``: T1 = 2484), no amplifier, agent 3, coalition {3, 4}.

Networks: ``lossless`` (in memory); ``loss 10%, <policy>`` (batched, Bernoulli
loss 0.1 per message, no ARQ, ``mechanism.missing`` = reweight / retry /
stale); ``deadline`` (batched, lossless, ``network.round_policy = "deadline"``,
``deadline_s`` = 0.05 s: no truthful reply is cut, a ``late`` one past it is);
and two FFL settings in memory that show the network-aware effects:
``T2 = 0`` (``phase2_rounds = 0``) and ``T2 = theory``.

Families (:data:`FAMILIES`, the searched bracket in parentheses; a budget of
``budget`` mechanism runs per search plus its truthful and opt-out runs):
amplify (gamma in [0.25, 16]) in all requests, Phase I only, Phase II only,
own problem, others' problems; pretend-data (target_shift in [-4, 4] for
ridge, flip_rate in [0, 1] for logistic); pull (lam in [-0.5, 4]);
loss-misreport (loss_shift in [-1, 1], Phase II); free-ride (zero, first: no
parameter); withhold (probability in [0, 1], every request); withhold at w*
(probability in [0, 1], FFL's extra round T1 only); late (delay_s in [0, 0.1] s,
networks with time only); claim-size (factor in [0.25, 4], ``agents.weights =
"claimed"``); sybil (identities in [2, 6]); coalition (two agents amplifying
only in the others' Phase II problems, gamma in [0.05, 4], summed objective).

Sizes. Full (what ``analysis/figures`` holds; a reduced product, :data:`SIZES`):
lossless, FedAvg, FFL and DP-FFL x every family on both cases, vcg-federated x
every family on paper-fig1 and x amplify and sybil on logistic-K10 (budget 4;
3 for vcg-federated on logistic-K10); FFL on the networks: paper-fig1 x the
four networks x pull, withhold, withhold at w*, late, logistic-K10 x deadline
and loss 10% with retry x withhold at w* and late (budget 3); the two T2
settings: FFL x withhold at w*. 131 searches, about 800 mechanism runs: 0.1-1.5
s a run in memory, 15 s for vcg-federated on logistic-K10 (it retrains every
w_{-k} for T1 rounds), 3-9 s a batched lossy run; about 1 100 CPU-seconds,
about 10 minutes on 2 cores (2 workers). The complete product (every
mechanism and family on every network, budget 5) would take about 3 hours on
2 cores: only ``SIZES`` changes. ``--quick`` (CI): paper-fig1 with T1 = 500,
FedAvg and FFL, lossless x amplify, pull, pretend-data, free-ride zero,
withhold, sybil, and FFL at 10% loss with retry x pull and withhold, budget 3:
about 25 s on 2 cores.

    PYTHONPATH=. python -m analysis.strategic_deviations [--quick] [--out DIR] [--workers N]
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

if __package__ in (None, ""):  # run as a script: make ``analysis`` importable
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis import common

STEM = "strategic_deviations"
MECHANISMS = ("fedavg", "ffl", "dp-ffl", "vcg-federated")
#: The deadline of the ``deadline`` network (s): above every truthful round of both cases.
DEADLINE_S = 0.05


@dataclass(frozen=True)
class Case:
    """A scenario studied: the shipped scenario, its overrides, the searched agent and coalition."""

    name: str
    scenario: str
    overrides: tuple
    agent: int
    coalition: tuple
    task: str  # "regression" or "classification": pretend-data's parameter


CASES = {
    "paper-fig1": Case(
        "paper-fig1",
        "paper-fig1",
        ("best_response.enabled=false", "mechanism.phase2_max_rounds=5000"),
        0,
        (0, 1),
        "regression",
    ),
    "logistic-K10": Case(
        "logistic-K10",
        "quickstart",
        (
            "best_response.enabled=false",
            "agents.strategy=[]",
            "mechanism.phase1_rounds=theory",
            "network.radio.loss=none",
            "network.radio.loss_prob=0",
            "network.fidelity=none",
        ),
        3,
        (3, 4),
        "classification",
    ),
}

_LOSSY = ("network.fidelity=batched", "network.radio.loss=bernoulli")
_LOSSY += ("network.radio.loss_prob=0.1", "network.radio.arq_max_retries=0")
#: The networks: label -> overrides (after the case's).
NETWORKS = {
    "lossless": ("network.fidelity=none",),
    "loss 10%, reweight": (*_LOSSY, "mechanism.missing=reweight"),
    "loss 10%, retry": (*_LOSSY, "mechanism.missing=retry"),
    "loss 10%, stale": (*_LOSSY, "mechanism.missing=stale"),
    "deadline": (
        "network.fidelity=batched",
        "network.round_policy=deadline",
        f"network.deadline_s={DEADLINE_S}",
    ),
    "T2 = 0": ("network.fidelity=none", "mechanism.phase2_rounds=0"),
    "T2 = theory": ("network.fidelity=none", "mechanism.phase2_rounds=theory"),
}
#: Networks with simulated time (where ``late`` applies).
TIMED = {"loss 10%, reweight", "loss 10%, retry", "loss 10%, stale", "deadline"}


@dataclass(frozen=True)
class Family:
    """A searched deviation: its label, registered family, brackets, fixed options, kind of row.

    ``report``: a unilateral report deviation Proposition 5 bounds (the acceptance test's
    families); ``at_w_star``: withhold only FFL's extra round at w* (round T1 of Phase I);
    ``overrides``: scenario keys it needs (``claim-size``: weights from the claims).
    """

    label: str
    family: str
    parameters: dict = field(default_factory=dict)
    fixed: dict = field(default_factory=dict)
    report: bool = False
    coalition: bool = False
    at_w_star: bool = False
    timed: bool = False
    overrides: tuple = ()

    def brackets(self, case: Case) -> dict:
        """Return the searched options {name: [lo, hi]} on ``case`` (pretend-data: by task)."""
        if self.family == "pretend-data":
            key = "target_shift" if case.task == "regression" else "flip_rate"
            return {key: [-4.0, 4.0] if key == "target_shift" else [0.0, 1.0]}
        return dict(self.parameters)


GAMMA = {"gamma": [0.25, 16.0]}
FAMILIES = (
    Family("amplify", "amplify", GAMMA, report=True),
    Family("amplify phase1", "amplify", GAMMA, {"phases": "phase1"}, report=True),
    Family("amplify phase2", "amplify", GAMMA, {"phases": "phase2"}, report=True),
    Family("amplify own", "amplify", GAMMA, {"problems": "own"}, report=True),
    Family("amplify others", "amplify", GAMMA, {"problems": "others"}, report=True),
    Family("pretend-data", "pretend-data", report=True),
    Family("pull", "pull", {"lam": [-0.5, 4.0]}, report=True),
    Family("loss-misreport", "loss-misreport", {"loss_shift": [-1.0, 1.0]}, report=True),
    Family("free-ride zero", "free-ride", {}, {"report": "zero"}, report=True),
    Family("free-ride first", "free-ride", {}, {"report": "first"}, report=True),
    Family("withhold", "withhold", {"probability": [0.0, 1.0]}, report=True),
    Family(
        "withhold at w*",
        "withhold",
        {"probability": [0.0, 1.0]},
        {"phases": "phase1"},
        report=True,
        at_w_star=True,
    ),
    Family("late", "late", {"delay_s": [0.0, 2 * DEADLINE_S]}, timed=True),
    Family(
        "claim-size", "claim-size", {"factor": [0.25, 4.0]}, overrides=("agents.weights=claimed",)
    ),
    Family("sybil", "sybil", {"identities": [2, 6]}),
    Family(
        "coalition",
        "amplify",
        {"gamma": [0.05, 4.0]},
        {"phases": "phase2", "problems": "others"},
        coalition=True,
    ),
)
BY_LABEL = {f.label: f for f in FAMILIES}
#: The families searched on the lossy networks and the deadline (full size; ``late``: timed only).
NETWORK_FAMILIES = ("pull", "withhold", "withhold at w*", "late")
#: logistic-K10 on a network: 9 s a batched lossy run, so two networks and two families.
K10_NETWORKS = ("deadline", "loss 10%, retry")
#: vcg-federated on logistic-K10 retrains each w_{-k} for T1 = 2484 rounds (15 s a run).
VCG_K10_FAMILIES = ("amplify", "sybil")
BOTH = tuple(CASES)

#: Each size: ``plan`` entries (cases, mechanisms, networks, family labels, budget), and
#: ``extra`` overrides for every run.
SIZES = {
    True: {
        "extra": ("mechanism.phase1_rounds=500",),
        "plan": [
            (("paper-fig1",), ("fedavg", "ffl"), ("lossless",),
             ("amplify", "pull", "pretend-data", "free-ride zero", "withhold", "sybil"), 3),
            (("paper-fig1",), ("ffl",), ("loss 10%, retry",), ("pull", "withhold"), 3),
        ],
    },
    False: {
        "extra": (),
        "plan": [
            (BOTH, ("fedavg", "ffl", "dp-ffl"), ("lossless",), tuple(BY_LABEL), 4),
            (("paper-fig1",), ("vcg-federated",), ("lossless",), tuple(BY_LABEL), 4),
            (("logistic-K10",), ("vcg-federated",), ("lossless",), VCG_K10_FAMILIES, 3),
            (("paper-fig1",), ("ffl",), tuple(sorted(TIMED)), NETWORK_FAMILIES, 3),
            (("logistic-K10",), ("ffl",), K10_NETWORKS, ("withhold at w*", "late"), 3),
            (BOTH, ("ffl",), ("T2 = 0", "T2 = theory"), ("withhold at w*",), 3),
        ],
    },
}  # fmt: skip


def tasks(size: dict) -> list[tuple]:
    """Return the (case, mechanism, network, family label, budget) searches of a size, in CSV order."""
    out = []
    for cases, mechanisms, networks, families, budget in size["plan"]:
        for case in cases:
            for network in networks:
                for mech in mechanisms:
                    for label in families:
                        if BY_LABEL[label].timed and network not in TIMED:
                            continue
                        out.append((case, mech, network, label, budget))
    return out


def scenario(case: Case, mechanism: str, network: str, family: Family, extra: Sequence[str] = ()):
    """Return the loaded Scenario of one search (the case, the mechanism, the network, the family's keys)."""
    import edgesim

    overrides = [
        *case.overrides,
        f"mechanism.kind={mechanism}",
        *NETWORKS[network],
        *family.overrides,
        *extra,
    ]
    return edgesim.load_scenario(case.scenario, overrides)


def search_row(
    case_name: str, mechanism: str, network: str, label: str, budget: int, extra: Sequence[str] = ()
) -> dict:
    """Search one family's best deviation; returns the CSV row (regret, bound in loss units).

    ``within``: 1 when regret <= bound, 0 when not, None without a bound.
    """
    from edgesim import best_response, reference
    from edgesim.scenario import ensure_registered
    from edgesim.simulate import Simulation

    case, fam = CASES[case_name], BY_LABEL[label]
    sc = scenario(case, mechanism, network, fam, extra)
    ensure_registered(sc)
    sim = Simulation(sc)
    fixed = dict(fam.fixed)
    if fam.at_w_star:  # FFL's extra round at w* is Phase I's round T1
        T1 = sim.run_mechanism().outcome.phase1_rounds
        fixed |= {"round_min": T1, "round_max": T1}
    agent = list(case.coalition) if fam.coalition else case.agent
    sc = best_response.configured(
        sc, agent, family=fam.family, parameters=fam.brackets(case), fixed=fixed,
        objective="overall", budget=budget, points=max(budget - 1, 3), xtol=0.05,
    )  # fmt: skip
    found = best_response.search(sim, sc.best_response, optimum=reference.optimum)
    bound = found["bound"]
    regret = found["regret"]
    return {
        "case": case_name,
        "mechanism": mechanism,
        "network": network,
        "family": label,
        "kind": fam.family,
        "report": int(fam.report),
        "agent": json.dumps(found["agent"]),
        "regret": regret,
        "truthful": found["truthful"],
        "objective": found["objective"],
        "bound": bound,
        "within": None if bound is None or not math.isfinite(regret) else int(regret <= bound),
        "bound_reason": found["bound_reason"] or "",
        "parameters": json.dumps({**fixed, **found["parameters"]}, sort_keys=True),
        "evaluations": found["evaluations"],
        "budget": budget,
    }


def _row(task: tuple) -> dict:
    try:
        return search_row(*task)
    except Exception as exc:  # a ScenarioErrors does not cross a process boundary
        raise RuntimeError(f"{task[:4]}: {type(exc).__name__}: {exc}") from None


def run_study(size: dict, workers: int) -> list[dict]:
    """Run every search of a size (``workers`` processes; 0 or 1: this one); returns the rows in order."""
    todo = [(*t, tuple(size["extra"])) for t in tasks(size)]
    if workers <= 1:
        return [_row(t) for t in todo]
    with ProcessPoolExecutor(workers) as pool:  # the slowest first, the rows in plan order
        futures = {
            i: pool.submit(_row, todo[i])
            for i in sorted(range(len(todo)), key=lambda i: -_cost(todo[i]))
        }
        return [futures[i].result() for i in range(len(todo))]


def _cost(task: tuple) -> float:
    """A rough relative cost of one search (for ordering the work only)."""
    case, mech, network, _, budget = task[:5]
    per_run = 9.0 if network in TIMED else 1.0
    per_run *= 15.0 if mech == "vcg-federated" and case == "logistic-K10" else 1.0
    per_run *= 10.0 if network == "T2 = theory" else 1.0
    return per_run * (budget + 2) * (1.0 if case == "logistic-K10" else 0.5)


def draw(rows: list[dict], quick: bool) -> plt.Figure:
    """Heat maps of regret (family x mechanism), one per (case, network); FFL's bound in each FFL cell."""
    panels = list(dict.fromkeys((r["case"], r["network"]) for r in rows))
    ncol = min(4, len(panels))
    nrow = math.ceil(len(panels) / ncol)
    # constrained layout keeps each panel's family names clear of its left neighbour
    fig, axes = plt.subplots(
        nrow, ncol, figsize=(4.6 * ncol, 5.2 * nrow), squeeze=False, layout="constrained"
    )
    for ax in axes.flat[len(panels) :]:
        ax.axis("off")
    for ax, (case, network) in zip(axes.flat, panels, strict=False):
        sel = [r for r in rows if r["case"] == case and r["network"] == network]
        mechs = [m for m in MECHANISMS if any(r["mechanism"] == m for r in sel)]
        fams = [f.label for f in FAMILIES if any(r["family"] == f.label for r in sel)]
        grid = np.full((len(fams), len(mechs)), np.nan)
        for r in sel:
            grid[fams.index(r["family"]), mechs.index(r["mechanism"])] = r["regret"]
        shown = np.sign(grid) * np.log10(1 + np.abs(grid) / 1e-4)  # symlog, 1e-4 linear
        im = ax.imshow(shown, cmap="RdBu_r", vmin=-4, vmax=4, aspect="auto")
        for r in sel:
            i, j = fams.index(r["family"]), mechs.index(r["mechanism"])
            text = f"{r['regret']:.2g}"
            if r["bound"] is not None:
                text += f"\n≤{r['bound']:.2g}" if r["within"] else f"\n>{r['bound']:.2g}!"
            dark = abs(shown[i, j]) > 2.5  # white text where the colour is deep
            ax.text(j, i, text, ha="center", va="center", fontsize=5.5,
                    color="r" if r["within"] == 0 else ("w" if dark else "k"))  # fmt: skip
        ax.set_xticks(range(len(mechs)), mechs, fontsize=7)
        ax.set_yticks(range(len(fams)), fams, fontsize=7)
        ax.set_title(f"{case}, {network}", fontsize=8.5)
    cbar = fig.colorbar(im, ax=axes, shrink=0.6)
    cbar.set_label("regret J(truthful) - J(best found), symlog (1e-4 linear)", fontsize=8)
    cbar.set_ticks([-4, -2, 0, 2, 4], labels=["-1", "-1e-2", "0", "1e-2", "1"])
    size = "quick size" if quick else "full size"
    fig.suptitle(
        "Best deviation found per family and mechanism (objective 'overall'); under FFL each cell"
        f" gives the bound below the regret (red: exceeded) ({size})",
        fontsize=10,
    )
    return fig


def main(argv: Sequence[str] | None = None) -> list[Path]:
    """Run the searches, draw, write ``strategic_deviations.png`` and ``.csv``; returns their paths."""
    args = common.parse_args(argv, __doc__.splitlines()[0])
    rows = run_study(SIZES[args.quick], args.workers)
    csv = common.write_csv(args.out / f"{STEM}.csv", rows)
    fig = draw(rows, args.quick)
    path = args.out / f"{STEM}.png"
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return [path, csv]


if __name__ == "__main__":
    main()
