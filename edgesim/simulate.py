"""One run of a scenario: data, agents, mechanism, references, and the JSON output contract.

Over 500 lines on purpose: the output contract is filled in one place, field by
field, beside the run that produces it (the per-agent part in both its forms, the
``agents`` array and the sidecar columns of :mod:`edgesim.per_agent`), so that a
reader checks a field against its source in one file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from edgesim.agents import TRUTHFUL, Population, make_strategy
from edgesim.best_response import best_response as best_response
from edgesim.best_response import search as search_deviation
from edgesim.deviations import identities
from edgesim.economics import properties as economic_properties
from edgesim.learning.data import FederatedDataset, build_dataset
from edgesim.learning.data import cache as data_cache
from edgesim.learning.local import local_models
from edgesim.learning.models import Design, Model, make_model
from edgesim.mechanisms import make_mechanism
from edgesim.mechanisms.base import (
    Outcome,
    ServerContext,
    clip_norm,
    feature_bound,
    loss_bound,
    smoothness_source,
)
from edgesim.mechanisms.driver import AgentSide, Counters
from edgesim.mechanisms.in_memory import run_in_memory
from edgesim.mechanisms.protocol import HEADER_BYTES, model_bytes
from edgesim.mechanisms.repair import Repair, with_repair
from edgesim.mechanisms.vcg import vcg_payments
from edgesim.network.round_time import RoundTimes
from edgesim.output import RunRecord, agent_dicts, clean
from edgesim.reference import optimum, reference_plan
from edgesim.scenario import Scenario
from edgesim.version import __version__

if TYPE_CHECKING:  # imported where used: a run in memory loads neither SimPy nor the canary
    from edgesim.canary import Canary
    from edgesim.network.server import NetworkServer

STREAMS = ("data", "server", "agents")
#: ``mechanism_info`` lists of one value per participant, reported per agent id (null: opted out)
PER_PARTICIPANT_INFO = (
    "cluster_of_agent",
    "phase2_restarts",
    "phase2_eta2_final",
    "payment_discretisation_error",
    "payment_phase1_error",
    "payment_truncation_error",
    "payment_error_estimate",
)


def streams(seed: int, trial: tuple[int, ...] = ()) -> dict[str, np.random.Generator]:
    """Return one independent ``numpy.random.Generator`` per stream name, all from ``seed``.

    ``trial`` (an audit's trial and side) reseeds the server's stream only (its
    noise and clusters), from ``(seed, *trial)``: data and agents stay as they are.
    """
    children = np.random.SeedSequence(seed).spawn(len(STREAMS))
    out = {name: np.random.default_rng(s) for name, s in zip(STREAMS, children, strict=True)}
    if trial:
        out["server"] = np.random.default_rng(np.random.SeedSequence([seed, *trial]))
    return out


def audit_trial(scenario: Scenario) -> tuple[int, ...]:
    """Return ``(trial, side)`` of an audit run, or ``()`` for an ordinary run."""
    a = scenario.audit
    return () if a.trial < 0 else (a.trial, int(a.neighbour))


def network_seed(seed: int) -> np.random.SeedSequence:
    """Return the seed sequence of the network's streams: the child after :data:`STREAMS`.

    ``SeedSequence.spawn`` numbers its children, so adding it leaves the
    data, server and agents streams unchanged.
    """
    return np.random.SeedSequence(seed).spawn(len(STREAMS) + 1)[len(STREAMS)]


def weights_for(kind: str, n_k: np.ndarray, claimed: np.ndarray | None = None) -> np.ndarray:
    """Return p_k (K,): equal (1/K), n_k / n, or for "claimed" claimed n_k / their sum (n_k / n
    when ``claimed`` is None: nobody claims)."""
    if kind == "equal":
        return np.full(n_k.size, 1.0 / n_k.size)
    if kind == "claimed" and claimed is not None:
        return claimed / claimed.sum()
    return n_k / n_k.sum()


@dataclass(eq=False)
class MechanismRun:
    """The result of running the mechanism once over the participants."""

    outcome: Outcome
    counters: Counters
    participants: np.ndarray
    p: np.ndarray
    design: Design
    mu: float
    L_g: float
    network: NetworkServer | None = None
    side: AgentSide | None = None
    claimed: np.ndarray | None = None  # the counts the server was told (None: true n_k)


class Simulation:
    """A scenario's data and model, prepared once; the mechanism can then be run many times.

    Running several times (a best-response search) reuses the same data and
    restarts the server's and agents' random streams from the seed, so runs
    differ only by the strategies (common random numbers).
    A ``sybil`` owner's samples are split over its m identities first (K grows by
    m - 1; ``sybil``: where they went, :func:`edgesim.deviations.identities.split_sybils`).
    """

    def __init__(self, scenario: Scenario, data: FederatedDataset | None = None):
        self.scenario = scenario
        rng = streams(scenario.seed)
        task = "regression" if scenario.model.kind == "ridge" else "classification"
        K, sc = scenario.agents.count, scenario
        self.data, entry = data, None  # entry: the data's in the process's cache, if built here
        if data is None:  # built once in a process for every run that asks for it (a sweep's)
            build = lambda: build_dataset(sc.data, K, task, rng["data"])  # noqa: E731
            self.data, entry = data_cache.dataset(sc.data, K, task, sc.seed, build)
        strategies = {s.agent: make_strategy(s) for s in scenario.agents.strategy}
        self.original_data = self.data
        self.data, self.sybil = identities.split_sybils(self.data, strategies, scenario)
        self.counterpart: Simulation | None = None  # the Sybil owners' truthful run (built once)
        m = scenario.model
        self.model: Model = make_model(m.kind, m.l2, m.intercept, self.data.n_classes)
        self.canary: Canary | None = None
        if audit_trial(scenario):  # built from D, so both sides of an audit build the same one
            mech = scenario.mechanism
            C = clip_norm(mech) or mech.gradient_bound
            a = scenario.audit
            size = a.canary_norm * (C if a.canary == "gradient" else 1.0)
            from edgesim.canary import make_canary

            self.canary = make_canary(self.data, self.model, size, a.canary)
            if scenario.audit.neighbour:
                self.data = self.canary.insert(self.data)
        R = feature_bound(scenario.mechanism)
        if R is not None:  # each device clips its own samples, the canary included
            self.data = self.data.clip_features(R, copy=data is not None or entry is not None)
        self.design = self.model.design(self.data)
        self.population = Population(self.data.K, strategies)
        self._local = None
        self.last_trace = self.last_events = None  # the last network run's trace and event log
        self.events_window: tuple[float, float] | None = None  # log device events in it (s)
        self.last_model = None  # w* of the last run, in the model's shape
        self.last_per_agent = None  # the last run's per-agent columns (output.per_agent sidecar)
        self._federations: dict[tuple, tuple[Design, float]] = {}
        # L_g and the local models are kept beside the cached data while it is used as built.
        self._entry = entry if entry is not None and self.data is entry.data else None

    def run_mechanism(self, population: Population | None = None) -> MechanismRun:
        """Run the scenario's mechanism with ``population`` (default: the scenario's strategies)."""
        sc = self.scenario
        population = population or self.population
        rng = streams(sc.seed, audit_trial(sc))
        participants = population.participants()
        ctx, design = self.server_context(participants, rng["server"], population)
        p, mu, L_g = ctx.p, ctx.mu, ctx.L_g
        side = AgentSide(
            self.model,
            design,
            population.restricted(participants),
            rng["agents"],
            sc.mechanism.local_rounds,
            sc.network.secagg.value_bound,
            clip_norm(sc.mechanism),
            loss_bound(sc.mechanism),
            sc.network.payload_bytes(self.model.n_params(self.data.d)),
        )
        repair = Repair(sc.mechanism.missing, sc.mechanism.retry_max, participants.size)
        gen = with_repair(make_mechanism(sc.mechanism.kind)(ctx), repair)
        server = None
        # A diverging run (too large a step for amplified reports) overflows on its way
        # to inf; the mechanism detects that and the result says "diverged".
        with np.errstate(over="ignore", invalid="ignore"):
            if sc.network.fidelity == "none":
                outcome, counters = run_in_memory(gen, side, participants.size)
            else:
                from edgesim.network.build import Network
                from edgesim.network.server import NetworkServer

                net = Network(sc.network, self.data.n_k, network_seed(sc.seed))
                server = NetworkServer(net, side, participants, self.events_window)
                outcome = server.run(gen)
                counters = server.counters
        side.release()
        told = None if ctx.n_k is design.n_k else ctx.n_k
        return MechanismRun(outcome, counters, participants, p, design, mu, L_g, server, side, told)

    def server_context(
        self,
        participants: np.ndarray,
        rng: np.random.Generator,
        population: Population | None = None,
    ) -> tuple[ServerContext, Design]:
        """Return the server's context for ``participants`` (and their design), drawing from ``rng``.
        With ``agents.weights = "claimed"``, p_k and n_k are the counts ``population``'s
        agents claim (default the scenario's; it cannot check them). Raises ValueError
        when nobody participates.
        """
        if participants.size == 0:
            raise ValueError("every agent opted out: nothing to federate")
        design, L_g = self.federation(participants)
        mech = self.scenario.mechanism
        source = smoothness_source(mech)  # 'public' and 'bound' are known without the data
        if source == "public":
            L_g = float(mech.public_smoothness)
        elif source == "bound":
            L_g = self.model.smoothness_bound(feature_bound(mech))
        kind, agents = self.scenario.agents.weights, population or self.population
        claimed = identities.claimed_counts(kind, agents, participants, design.n_k)
        ctx = ServerContext(
            self.model,
            self.scenario.mechanism,
            weights_for(kind, design.n_k, claimed),
            design.n_k if claimed is None else claimed,
            self.data.d,
            self.model.strong_convexity(),
            L_g,
            self.model.init(self.data.d),
            rng,
        )
        return ctx, design

    def federation(self, participants: np.ndarray) -> tuple[Design, float]:
        """Return the design of ``participants`` and its L_g, computed once per set (a search
        reruns the mechanism on the same participants) and kept with the cached data."""
        key = data_cache.digest(participants)
        if key not in self._federations:
            full = participants.size == self.data.K
            design = self.design if full else self.model.design(self.data.subset(participants))
            kind = self.scenario.model.smoothness
            L_g = self.kept(("L_g", key), lambda: self.model.smoothness(design, kind))
            self._federations[key] = (design, L_g)
        return self._federations[key]

    def kept(self, name: tuple, compute):
        """Return ``compute()``, a value of this data and model alone (``name`` says which): kept
        with the data in the process's cache for the next run of them (a sweep's)."""
        return data_cache.derived(self._entry, (*name, repr(self.scenario.model)), compute)

    def local(self) -> np.ndarray:
        """Return every agent's local-learning model (K, n_params), computed once."""
        if self._local is None:
            rounds = self.scenario.mechanism.local_rounds
            compute = lambda: local_models(self.model, self.design, rounds)[0]  # noqa: E731
            self._local = self.kept(("local models", rounds), compute)
        return self._local

    def agent_models(self, run: MechanismRun) -> np.ndarray:
        """Return the model each agent ends with (K, n_params): w*, or its local model if it left."""
        K = self.data.K
        if run.outcome.local_models is not None:
            W = np.empty((K, run.outcome.model.size))
            W[run.participants] = run.outcome.local_models
        elif run.participants.size == K:  # everyone ends with w*: a read-only view, no copy
            return np.broadcast_to(run.outcome.model, (K, run.outcome.model.size))
        else:
            W = np.broadcast_to(run.outcome.model, (K, run.outcome.model.size)).copy()
        out = np.flatnonzero(~np.isin(np.arange(K), run.participants))
        if out.size:
            W[out] = self.local()[out]
        return W

    def objective(self, run: MechanismRun, agent: int, kind: str) -> float:
        """Return agent's objective J_k: 'overall' P_k + F_k, 'overall-test' P_k + E_k, 'test' E_k.

        In loss units (payments are in loss units). Only the agent's own terms
        count: a run in which other agents' Phase II problems diverged (their
        payments NaN) still scores by the agent's own, finite, J_k. It is inf
        when the model w* is not finite (Phase I diverged: w* is useless) or
        when the agent's own payment or loss is not finite: no agent gains
        from a mechanism that broke down on it. A Sybil owner, or any agent when the
        server weighted claimed counts, pays money p_i P_i at the server's weights
        (:func:`edgesim.deviations.identities.owner_objective`: the owner's J).
        """
        if not np.isfinite(run.outcome.model).all():
            return math.inf
        W = self.agent_models(run)
        J = identities.owner_objective(self, run, agent, kind, W)
        if J is not None:
            return J
        pay = float(self.payments_all(run)[agent])
        if kind == "overall":
            value = pay + float(self.model.agent_losses_each(W, self.design)[agent])
        else:
            test = float(self.model.agent_losses_each(W, self.design, test=True)[agent])
            value = pay + test if kind == "overall-test" else test
        return value if math.isfinite(value) and math.isfinite(pay) else math.inf

    def payments_all(self, run: MechanismRun) -> np.ndarray:
        """Return payments for all K agents (0 for agents outside the federation)."""
        P = np.zeros(self.data.K)
        P[run.participants] = run.outcome.payments
        return P


def run(scenario: Scenario, sim: Simulation | None = None) -> dict:
    """Run a scenario; returns the output-contract dict (see docs/output.md)."""
    sim = sim or Simulation(scenario)
    mrun = sim.run_mechanism()
    out, model, design = mrun.outcome, sim.model, sim.design
    K = sim.data.K
    W = sim.agent_models(mrun)
    payments = sim.payments_all(mrun)
    train = model.agent_losses_each(W, design)
    test = model.agent_losses_each(W, design, test=True)
    acc = model.accuracy_each(W, design)

    result = RunRecord(
        edgesim_version=__version__,
        name=scenario.name,
        scenario=scenario.to_dict(),
        seed=scenario.seed,
        mechanism=scenario.mechanism.kind,
        K=K,
        participants=int(mrun.participants.size),
        data={"n": sim.data.n, "d": sim.data.d, "classes": sim.data.n_classes},
        constants={"mu": mrun.mu, "L_g": mrun.L_g},
        diverged=bool(out.info.get("diverged", False)),
        iterations={
            "phase1": out.phase1_rounds,
            "phase2_total": int(np.sum(out.phase2_rounds, dtype=np.int64)),
            "phase2_per_agent": _spread(out.phase2_per_agent, mrun.participants, K, fill=0),
            "phase2_problems": len(out.phase2_rounds),
        },
        communication={
            **mrun.counters.to_json(),
            "model_message_bytes": HEADER_BYTES + mrun.side.payload(),
            "learning_model_message_bytes": model_bytes(model.n_params(sim.data.d)),
        },
        sim_time_s=(
            mrun.network.time_by_phase()
            if mrun.network is not None
            else {
                "total": 0.0,
                "phase1": 0.0,
                "phase2": 0.0,
                "by_direction": RoundTimes().seconds(),
            }
        ),
    )
    p = mrun.p
    participants_W = W if mrun.participants.size == K else W[mrun.participants]
    glob = float(p @ model.agent_losses_each(participants_W, mrun.design))
    model_out = {"global_loss": glob, "test_accuracy": None}
    sim.last_model = model.shaped(out.model)
    if scenario.output.model_weights:
        model_out["weights"] = sim.last_model
    if model.kind == "logistic":
        n_t = design.n_k_test[mrun.participants]
        a = acc[mrun.participants]
        ok = n_t > 0
        model_out["test_accuracy"] = (
            float((a[ok] * n_t[ok]).sum() / n_t[ok].sum()) if ok.any() else None
        )

    vcg = None
    reference = reference_plan(scenario)  # exact VCG, w^o alone, or neither (edgesim.reference)
    solve = (data_cache.digest(mrun.participants), data_cache.digest(p))  # once per data and p
    if reference.exact_vcg:
        w_o, vcg_fed = sim.kept(("VCG", *solve), lambda: vcg_payments(model, mrun.design, p))
        vcg = np.zeros(K)
        vcg[mrun.participants] = vcg_fed
    elif reference.optimum:
        w_o = sim.kept(("w^o", *solve), lambda: optimum(model, mrun.design, p))
    if reference.optimum:
        model_out["optimum_loss"] = model.loss(w_o, mrun.design, p)
        model_out["optimality_gap"] = glob - model_out["optimum_loss"]
    model_out["exact_vcg"] = {"computed": reference.exact_vcg, "reason": reference.reason}
    result.model = model_out
    result.payments = payments
    if vcg is not None:
        result.vcg_payments = vcg
        err = np.abs(payments - vcg)[mrun.participants]
        result.payment_error_max = float(err.max())
        scale = np.maximum(np.abs(vcg[mrun.participants]), 1e-300)
        result.payment_error_rel_max = float((err / scale).max())
    result.budget_total = float(payments.sum())

    local_test = local_train = local_acc = np.full(K, np.nan)
    if scenario.output.local_baseline:
        WL = sim.local()
        local_test = model.agent_losses_each(WL, design, test=True)
        local_train = model.agent_losses_each(WL, design)
        local_acc = model.accuracy_each(WL, design)
    columns = {
        "payment": payments,
        "train_loss": train,
        "test_loss": test,
        "overall_loss": payments + train,
        "overall_test_loss": payments + test,
        "local_loss": local_test,
        "local_train_loss": local_train,
        "test_accuracy": acc,
        "local_test_accuracy": local_acc,
    }
    network_cols = {}
    if mrun.network is not None:
        network_cols = dict(mrun.network.trace.per_agent())
        if mrun.network.energy is not None:
            network_cols["energy_j"] = mrun.network.energy.per_agent_j()
        result.network = _network_summary(mrun.network)
        sim.last_trace, sim.last_events = mrun.network.trace, mrun.network.events_log
    info = dict(out.info)
    # Mechanisms number the participants 0..m-1; report the scenario's agent ids.
    if "phase2_capped" in info:
        info["phase2_capped"] = [int(mrun.participants[i]) for i in info["phase2_capped"]]
    mode = scenario.output.per_agent
    if mode == "json":
        _agents_json(result, sim, mrun, columns, network_cols, info)
    else:
        _agents_columns(result, sim, mrun, columns, network_cols, info, vcg, mode)
    clipping = _clipping(mrun.side)
    if "privacy" in info:
        result.privacy = {**info.pop("privacy"), **clipping}
    elif clipping["clip_norm"] is not None or clipping["loss_bound"] is not None:
        result.clipping = clipping
    result.mechanism_info = info

    if sim.canary is not None:
        c = sim.canary
        result.audit = {
            "trial": scenario.audit.trial,
            "neighbour": scenario.audit.neighbour,
            "statistic": c.statistic(out.model),
            "canary_agent": c.agent,
            "canary_gradient_norm": c.gradient_norm,
        }
    br = scenario.best_response
    if br.enabled:
        result.best_response = search_deviation(sim, br, optimum=optimum)
    no_gap = None if reference.optimum else f"w^o was not computed ({reference.reason})"
    if out.local_models is not None:
        no_gap = "each agent ends with its own model: there is no federated model to compare"
    no_local = None if scenario.output.local_baseline else "output.local_baseline = false"
    result.economics = economic_properties(
        scenario.mechanism.kind,
        scenario.mechanism.epsilon,
        gap=model_out.get("optimality_gap"),
        gap_missing=no_gap,
        payments=payments,
        overall_test=columns["overall_test_loss"],
        local_test=local_test,
        participants=mrun.participants,
        baseline_missing=no_local,
        search=result.best_response,
    )
    for key, section in identities.identity_report(sim, mrun).items():  # sybil, claims
        setattr(result, key, section)
    return result.to_json_dict()


def _agents_json(result, sim, mrun, columns, network_cols, info) -> None:
    """Fill the JSON's per-agent parts (``output.per_agent = "json"``): the ``agents`` array,
    and each per-participant list of ``info`` spread over the agent ids (None outside)."""
    K, part = sim.data.K, mrun.participants.tolist()
    # plain floats, NaN and infinities -> None
    columns = {name: clean(np.asarray(col, dtype=float)) for name, col in columns.items()}
    network_cols = {
        n: _spread(v, mrun.participants, K, fill=0).tolist() for n, v in network_cols.items()
    }
    inside = np.zeros(K, dtype=bool)
    inside[mrun.participants] = True
    labels, codes = _strategy_codes(sim.population, K)
    fields = {
        "id": list(range(K)),
        "n": sim.data.n_k.tolist(),
        "strategy": [labels[c] for c in codes.tolist()],
        "participates": inside.tolist(),
        **columns,
    }
    result.agents = agent_dicts(fields, network_cols or None)
    for key in PER_PARTICIPANT_INFO:  # one value per participant -> one per agent id
        if key in info and len(info[key]) == mrun.participants.size:
            values = np.asarray(info[key]).tolist()
            if len(part) == K:  # everyone participates: the ids are the positions
                info[key] = values
                continue
            full = [None] * K
            for i, value in zip(part, values, strict=True):
                full[i] = value
            info[key] = full


def _agents_columns(result, sim, mrun, columns, network_cols, info, vcg, mode: str) -> None:
    """Keep the per-agent results as columns (``output.per_agent`` npz, parquet or none).

    Every per-agent list of the JSON (the agents array, ``payments``, ``vcg_payments``,
    ``iterations.phase2_per_agent``, the per-participant lists of ``info``) becomes a
    column of ``sim.last_per_agent`` (None for 'none'), and the JSON's ``per_agent``
    field holds their summaries (:mod:`edgesim.per_agent`).
    """
    from edgesim import per_agent

    K, part = sim.data.K, mrun.participants
    inside = np.zeros(K, dtype=bool)
    inside[part] = True
    labels, codes = _strategy_codes(sim.population, K)
    cols = {"id": np.arange(K), "n": sim.data.n_k, "strategy": codes, "participates": inside}
    for name, col in columns.items():  # a column without any value (all NaN) is left out
        col = np.asarray(col, dtype=np.float64)
        if not np.isnan(col).all():
            cols[name] = col
    for name, values in network_cols.items():
        cols[f"network.{name}"] = _spread(values, part, K, fill=0)
    cols["phase2_rounds"] = _spread(result.iterations.pop("phase2_per_agent"), part, K, fill=0)
    for key in PER_PARTICIPANT_INFO:
        if key in info and len(info[key]) == part.size:
            cols[key] = _spread(info.pop(key), part, K, fill=np.nan)
    if vcg is not None:
        cols["vcg_payment"] = vcg
    result.payments = None
    result.vcg_payments = None
    result.per_agent = {
        "format": mode,
        "file": None,  # set by the writer (edgesim run --json FILE: FILE.agents.npz)
        "rows": K,
        "columns": list(cols),
        "strategy_labels": labels,
        "summary": per_agent.summary(cols),
    }
    sim.last_per_agent = None if mode == "none" else cols


def _strategy_codes(population: Population, K: int) -> tuple[list[str], np.ndarray]:
    """Return the strategy labels and each agent's code into them, (K,) int16 (0: truthful)."""
    labels = [TRUTHFUL.describe()]
    codes = np.zeros(K, dtype=np.int16)
    for k, s in sorted(population.assigned.items()):
        label = s.describe()
        if label not in labels:
            labels.append(label)
        codes[k] = labels.index(label)
    return labels, codes


def _spread(values, participants: np.ndarray, K: int, fill) -> np.ndarray:
    """Return ``values`` (one per participant) at the participants' ids of a (K,) column,
    ``fill`` elsewhere (a float column when ``fill`` is NaN)."""
    values = np.asarray(values)
    dtype = np.float64 if (values.dtype.kind == "f" or fill is np.nan) else np.int64
    full = np.full(K, fill, dtype=dtype)
    if values.size == participants.size:
        full[participants] = values
    return full


def _clipping(side: AgentSide) -> dict:
    """Return what the agents' clipping enforced and how often it bit (JSON-ready).

    ``clip_norm`` C and ``loss_bound`` B (None: not clipped); ``clipped_fraction``
    and ``loss_clipped_fraction``: the share of per-sample gradients (losses) that
    were clipped, over every report the agents computed (None when nothing was
    clipped-checked).
    """
    return {
        "clip_norm": side.clip_norm,
        "loss_bound": side.loss_bound,
        "clipped_fraction": side.gradient_clips.fraction,
        "loss_clipped_fraction": side.loss_clips.fraction,
    }


def _network_summary(server: NetworkServer) -> dict:
    """Return the JSON ``network`` object: fidelity, exchanges run, and the trace's totals."""
    totals = server.trace.totals()
    return {
        "fidelity": server.cfg.fidelity,
        "round_policy": server.cfg.round_policy,
        "exchanges": len(server.trace),
        "transmissions": totals["transmissions"],
        "lost": totals["lost"],
        "cut": totals["cut"],
        "secagg_messages": totals["secagg_messages"],
        "secagg_bytes": totals["secagg_bytes"],
        "secagg_aborted": server.secure.aborted,  # rounds whose aggregate was lost
        **({} if server.energy is None else {"energy": server.energy.summary()}),
        **({} if server.sites is None else {"handovers": server.handovers}),
    }
