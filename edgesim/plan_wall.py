"""The wall-time model of :mod:`edgesim.plan`: counts of what a run does times unit costs.

A run's wall time is the sum of (seconds, each a count times a cost):

- **setup**: drawing the data and L_g (:data:`edgesim.reference.SETUP_S`, closed form);
- **reports**: the agents' gradient (and loss) passes, each costing one all-agents
  gradient as :func:`edgesim.plan.plan` measures it on the scenario's own data;
- **the mechanism in memory** (the driver and the mechanism's own work, reports
  excluded): per exchange and per recipient, for its rounds (to every agent: Phase I,
  FedAvg, the shared round, losses) and its problems' rounds (FFL's Phase II, DP-FFL's
  and vcg-federated's trainings without one agent or cluster):
  :data:`edgesim.wall_costs.MEMORY`;
- **the network** (fidelity ``batched`` or ``events``: what it adds to the in-memory
  run): per exchange, per recipient and per cell an exchange reaches, by access scheme,
  by link class (:func:`link_class`: ``equal``, the messages of an exchange land
  together; ``rates``, each at its own instant; ``staggered``, the replies also leave
  one by one) and by kind of exchange (``steady``: to every agent on a network
  whose exchanges can reuse their plan; ``others``: a problem's exchange to all but
  some agents on such a network; ``general``: any exchange on a network that plans
  each one afresh, e.g. with losses): :data:`edgesim.wall_costs.NETWORK`;
- **secure aggregation** over a network: each securely aggregated round is 4
  exchanges (keys, shares, masked input, unmasking; the masked input is the round
  itself; with ``rekey = "session"`` keys and shares run once), plus the masks'
  cryptography when it runs
  (:data:`edgesim.wall_costs.SECAGG_WORD_S` per mask word and pair's key work);
- the network's **start** in a fresh process (its compiled walks loaded), once:
  :data:`edgesim.wall_costs.START_S`;
- **the references** after the mechanism (:mod:`edgesim.reference`'s cost model);
  **the local baseline** (:func:`local_seconds`: a share of its rounds' bound, each a
  pass of every agent at its own model, measured by the plan); **the output** (four
  such passes, and the per-agent columns: :data:`edgesim.wall_costs.OUTPUT`);
- a **best-response search** reruns the mechanism (:func:`search_runs` times);
- the **imports** a run makes where it first needs them (scipy's optimisers: a
  logistic reference's L-BFGS-B, DP-FFL's privacy accounting, a search), when the
  plan's process has not made them yet: :func:`import_seconds`.

Every function here is arithmetic on counts and the table: the unit tests check it.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np

from edgesim import wall_costs
from edgesim.learning.segments import gradient_threads

#: Compute models that draw each device's time (its replies arrive one by one).
DRAWN_COMPUTE = ("shifted-exponential", "lognormal")
#: Brent's bounded search shrinks its bracket by the golden ratio per evaluation at worst;
#: its parabolic steps take about half as many (counted on paper-fig1: 7 for 15.6).
GOLDEN = (1.0 + math.sqrt(5.0)) / 2.0
#: Local learning costs about this share of its rounds' bound in all-agents passes: it stops at
#: 0.31 to 0.38 of the bound (the bound's Nesterov rate is a worst case), and agents that are
#: done drop out; measured 0.19 to 0.42 (0.19: paper-fig4-noniid, the largest) of 1.1 x bound
#: x one pass on five shipped scenarios
#: (paper-fig1, paper-fig3-samples, paper-fig4-noniid, quickstart, lossy-wifi).
LOCAL_ROUNDS_SHARE = 0.25
#: Per-agent passes of a run's output, each agent at its own model: train and test losses,
#: test accuracy, and the participants' losses for the global loss (``simulate.run``).
EACH_PASSES = 4


@dataclass(frozen=True)
class Work:
    """The counts of one mechanism run that its wall time is made of.

    ``round_exchanges`` and ``round_recipients``: the rounds to every agent (or nearly:
    Phase I, FedAvg, the shared round, the losses) and their recipients (one message each
    way per recipient); ``problem_exchanges`` and ``problem_recipients``: the problems'
    rounds; ``passes``: the all-agents gradient or loss passes the reports cost;
    ``secure_exchanges`` and ``secure_recipients``: the stages secure aggregation adds over a
    network (:func:`secure_stage_exchanges`) and their recipients; ``cells``: the cells each
    exchange reaches.
    """

    round_exchanges: float
    round_recipients: float
    problem_exchanges: float = 0.0
    problem_recipients: float = 0.0
    passes: float = 0.0
    secure_exchanges: float = 0.0
    secure_recipients: float = 0.0
    cells: int = 1


def link_class(network, n_k) -> str:
    """Return the link class of the ``[network]`` table ``network`` over devices holding ``n_k``
    samples: ``"staggered"`` when compute times differ by device (drawn, or per sample with
    unequal n_k: replies arrive one by one), else ``"rates"`` when the link's rates differ by
    device (any link model but ``fixed``), else ``"equal"`` (an exchange's messages land
    together)."""
    compute = network.compute.model
    n_k = np.asarray(n_k)
    unequal = n_k.size > 0 and bool(n_k.min() != n_k.max())
    if compute in DRAWN_COMPUTE or (compute == "per-sample" and unequal):
        return "staggered"
    return "equal" if network.radio.model == "fixed" else "rates"


def network_costs(fidelity: str, access: str, link: str) -> dict:
    """Return the table's network costs of one (fidelity, access scheme, link class): a dict of
    exchange kind -> (seconds per exchange, per recipient, per cell an exchange reaches).

    An access scheme the table does not have (a registered one) takes ``round-robin``'s.
    """
    by_access = wall_costs.NETWORK[fidelity]
    return by_access.get(access, by_access["round-robin"])[link]


def memory_costs(kind: str) -> dict:
    """Return the table's in-memory costs of mechanism ``kind``: ``round`` and ``problem`` ->
    (seconds per exchange, per recipient). A mechanism that is not built in takes FedAvg's."""
    return wall_costs.MEMORY.get(kind, wall_costs.MEMORY["fedavg"])


def exchange_seconds(cost: tuple, exchanges: float, recipients: float, cells: int = 0) -> float:
    """Return ``cost`` = (per exchange, per recipient[, per cell and exchange]) times the counts
    (seconds)."""
    seconds = cost[0] * exchanges + cost[1] * recipients
    if len(cost) > 2:
        seconds += cost[2] * cells * exchanges
    return seconds


def mechanism_seconds(
    work: Work,
    kind: str,
    pass_s: float,
    fidelity: str = "none",
    access: str = "round-robin",
    link: str = "equal",
    steady: bool = False,
    start: bool = True,
) -> dict:
    """Return the seconds of one mechanism run: ``reports``, ``memory`` (the mechanism and the
    in-memory driver) and ``network`` (what a simulated network adds, its start in a fresh
    process included, :data:`edgesim.wall_costs.START_S`; 0 in memory), and their ``total``.

    ``pass_s``: one all-agents gradient (seconds); ``start``: whether the network's start is
    counted (its compiled walks load once exchanges reach their size); ``steady``: whether the
    network can reuse
    a steady exchange's plan (then its rounds cost ``steady`` and its problems' rounds
    ``others``; else every exchange costs ``general``). Secure aggregation's stages cost
    ``general`` (their messages differ by client).
    """
    mem = memory_costs(kind)
    memory = exchange_seconds(mem["round"], work.round_exchanges, work.round_recipients)
    memory += exchange_seconds(mem["problem"], work.problem_exchanges, work.problem_recipients)
    network = 0.0
    if fidelity != "none":
        network = wall_costs.START_S.get(fidelity, 0.0) if start else 0.0
        costs = network_costs(fidelity, access, link)
        rounds_cost = costs["steady"] if steady else costs["general"]
        problems_cost = costs["others"] if steady else costs["general"]
        network += exchange_seconds(
            rounds_cost, work.round_exchanges, work.round_recipients, work.cells
        )
        network += exchange_seconds(
            problems_cost, work.problem_exchanges, work.problem_recipients, work.cells
        )
        network += exchange_seconds(
            costs["general"], work.secure_exchanges, work.secure_recipients, work.cells
        )
    reports = work.passes * pass_s
    return {
        "reports": reports,
        "memory": memory,
        "network": network,
        "total": reports + memory + network,
    }


def hidden_reports_s(reports_s: float, network_s: float) -> float:
    """Return the seconds of reports computed while the network plans the exchanges (batched
    reports run ahead): the helper's side has n - 1 of the n gradient threads
    (:func:`~edgesim.learning.segments.gradient_threads`) while the network plans, then the
    driver's thread joins in; the reports were timed on all n, so min(reports, network
    (n - 1) / n) of them are hidden."""
    n = gradient_threads()
    return min(reports_s, network_s * (n - 1) / n)


def work_of(sc, counts: dict, cells: int) -> Work:
    """Return the :class:`Work` of one run of scenario ``sc``'s mechanism from the plan's counts:
    ``round`` and ``problem`` (exchanges, recipients), ``passes``, and ``secure`` (the rounds
    summed by secure aggregation: their stages count over a network)."""
    from edgesim.mechanisms.base import secure_aggregation

    secure = counts.get("secure", 0) if secure_aggregation(sc.mechanism) else 0
    stages = 0.0
    if secure and sc.network.fidelity != "none":
        stages = secure_stage_exchanges(secure, sc.network.secagg.rekey)
    return Work(
        round_exchanges=counts["round"][0],
        round_recipients=counts["round"][1],
        problem_exchanges=counts["problem"][0],
        problem_recipients=counts["problem"][1],
        passes=counts.get("passes", 0),
        secure_exchanges=stages,
        secure_recipients=stages * sc.agents.count,
        cells=cells,
    )


def secure_crypto_s(sc, counts: dict, n_params: int) -> float:
    """Return the seconds of secure aggregation's masks and key work over a network for the
    plan's ``counts`` (0 in memory, and when ``masking = "auto"`` skips the cryptography)."""
    from edgesim.mechanisms.base import secure_aggregation

    secure = counts.get("secure", 0) if secure_aggregation(sc.mechanism) else 0
    if not secure or sc.network.fidelity == "none":
        return 0.0
    from edgesim.network.secagg import KEY_AGREEMENT_WORDS, plan_secagg

    cfg = sc.network.secagg
    s = plan_secagg(sc.agents.count, n_params, cfg)
    if s.masking != "crypto":
        return 0.0
    sessions = secure if cfg.rekey == "round" else 1
    masks = crypto_seconds(secure, s.n_clients, s.degree, n_params, 0)
    keys = crypto_seconds(sessions, s.n_clients, s.degree, 0, KEY_AGREEMENT_WORDS[s.profile])
    return masks + keys


def secure_stage_exchanges(aggregations: float, rekey: str) -> float:
    """Return the extra exchanges secure aggregation adds over a network to ``aggregations``
    securely summed rounds: 3 each (keys, shares, unmasking; the masked input stands for the
    round), or with ``rekey = "session"`` 1 each (unmasking) and 2 once (keys, shares)."""
    if aggregations <= 0:
        return 0.0
    return 3.0 * aggregations if rekey == "round" else aggregations + 2.0


def crypto_seconds(aggregations: float, n: int, degree: int, dim: int, key_words: int) -> float:
    """Return the seconds of the masks' cryptography in ``aggregations`` sessions of ``n`` clients
    with ``degree`` neighbours each, vectors of ``dim`` entries: n k (dim + key_words) mask-word
    equivalents each (:mod:`edgesim.network.secagg.config`), at
    :data:`edgesim.wall_costs.SECAGG_WORD_S`."""
    return aggregations * n * degree * (dim + key_words) * wall_costs.SECAGG_WORD_S


def import_seconds(modules) -> float:
    """Return the seconds of importing those of ``modules`` this process has not imported yet
    (:data:`edgesim.wall_costs.IMPORT_S`; edgesim imports them where a run first needs them)."""
    return sum(wall_costs.IMPORT_S.get(m, 0.0) for m in modules if m not in sys.modules)


def lazy_modules(sc, reference_solves: int) -> list[str]:
    """Return the modules a run of scenario ``sc`` imports where it first needs them, in the
    order :data:`edgesim.wall_costs.IMPORT_S` measured them (each after the ones before it):
    scipy's optimisers for a logistic reference (L-BFGS-B; ``reference_solves`` > 0),
    DP-FFL's privacy accounting or a search, which import scipy.special (and its array-API
    layer, most of the cost) first; scipy.special alone for the paper-linear data's draws."""
    logistic_reference = sc.model.kind == "logistic" and reference_solves > 0
    dp = sc.mechanism.kind == "dp-ffl"
    if logistic_reference or dp or sc.best_response.enabled:
        return ["scipy.special", "scipy.optimize"]
    return ["scipy.special"] if sc.data.source == "paper-linear" else []


def walks_compiled(K: int) -> bool:
    """Whether a network's exchanges to K agents walk compiled, loading its compiled walks
    once (``edgesim.network.medium.COMPILED_FROM`` messages; always where it has no such
    threshold)."""
    from edgesim.network import medium

    return K >= getattr(medium, "COMPILED_FROM", 0)


def local_seconds(rounds_bound: int, each_pass_s: float) -> float:
    """Return the expected seconds of local learning whose rounds are at most ``rounds_bound``
    (:func:`edgesim.reference.local_rounds_bound`): :data:`LOCAL_ROUNDS_SHARE` of the bound's
    passes of every agent at its own model (``each_pass_s``), one per round and one more
    every 10th."""
    return 1.1 * LOCAL_ROUNDS_SHARE * rounds_bound * each_pass_s


def output_seconds(K: int, per_agent: str, each_pass_s: float) -> float:
    """Return the seconds of a run's output: four per-agent passes at each agent's own model
    (train, test, accuracy, the global loss; ``each_pass_s`` each) and the per-agent columns,
    written as JSON (``per_agent = "json"``) or as a sidecar (any other mode)."""
    per = wall_costs.OUTPUT["json_agent_s" if per_agent == "json" else "sidecar_agent_s"]
    return wall_costs.OUTPUT["run_s"] + EACH_PASSES * each_pass_s + K * per


def search_runs(br) -> int:
    """Return the mechanism runs of the ``[best_response]`` table ``br``'s search (0 when it is
    off): the grid (and gamma = 1), a bounded Brent refinement over two grid steps to ``xtol``
    (about half the golden-section count), capped by ``budget`` for a search with parameters,
    and the opt-out run. An estimate: the refinement stops when its parabola converges."""
    if not br.enabled:
        return 0
    original = br.family == "amplify" and not (br.parameters or br.agents or br.fixed)
    if original:
        lo, hi = math.log(br.gamma_min), math.log(br.gamma_max)
        grid = br.points + (1 if br.gamma_min < 1.0 < br.gamma_max else 0)
        width = 2.0 * (hi - lo) / max(br.points - 1, 1)
    else:
        grid, width = br.points, 2.0 / max(br.points - 1, 1)  # a unit bracket's two grid steps
    refine = math.ceil(0.5 * math.log(max(width / br.xtol, 1.0)) / math.log(GOLDEN))
    runs = grid + refine if original else min(br.budget, grid + refine)
    return runs + 1  # the opt-out
