"""Know before you run: the rounds, messages, bytes and wall time a scenario implies.

:func:`plan` prepares the scenario's data and constants (as a run does), then
predicts from the mechanism's own rules, without running it:

- the rounds: T1 (as configured, or Theorem 1's rule from the first gradient
  at w[0], or Proposition 9's for DP-FFL), T2 per Phase II problem (FFL's
  Theorem 1 rule needs L_f = max_j |grad F_j(w*)|; the plan bounds it by the
  gradients at w[0], so it predicts at least as many rounds), the clusters L;
- the exchanges (one per ``Gather``) and the messages and bytes each way, from
  the message formulas of the mechanism modules (``edgesim/mechanisms``) and
  the sizes of :mod:`edgesim.mechanisms.protocol`;
- on a network, the expected uplink transmissions: messages times
  E[attempts] = (1 - q^(R+1)) / (1 - q) for independent (Bernoulli) loss q with
  R retransmissions (capped ARQ);
- the wall time of the mechanism: the gradient rounds times the time of one
  all-agents gradient, measured here (best of three), plus the messages times
  the driver's cost per message, measured by a short calibration (a few FedAvg
  rounds on the same data and network). Rounds whose weighted sum is formed
  from the data's moments (ridge's Phase I with truthful, unclipped, open
  reports: :meth:`~edgesim.mechanisms.driver.AgentSide.answer`) cost one
  pass for the moments, measured, instead of a gradient each;
- the references computed after the mechanism, apart from its wall time: whether
  exact VCG (K + 1 central solves) or the optimum w^o alone is computed and why
  (:func:`edgesim.reference.reference_plan`, the run's own decision), with their
  predicted seconds on the reference machine (the cost model of
  :mod:`edgesim.reference`); and the local-learning baseline's rounds, at most
  :func:`edgesim.reference.local_rounds_bound` (a closed-form bound), and seconds.
  A best-response search is not predicted.

With ``phase2_check = true`` FFL's problems run *at least* T2 rounds, then
until the stopping rule holds: the plan says so. Lost replies do not change
the messages sent (a lost reply is still a sent message); secure aggregation's
key and share messages are counted by the network apart and not predicted.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time

import numpy as np

from edgesim import theory
from edgesim.mechanisms.base import clip_norm, secure_aggregation
from edgesim.mechanisms.dpffl import cluster_count
from edgesim.mechanisms.dpffl import rounds as dp_rounds
from edgesim.mechanisms.driver import true_unclipped
from edgesim.mechanisms.protocol import FLOAT_BYTES, HEADER_BYTES, payload_bytes
from edgesim.reference import (
    local_round_s,
    local_rounds_bound,
    problem_shape,
    reference_plan,
    seconds_text,
)
from edgesim.scenario import Scenario
from edgesim.simulate import Simulation

#: FedAvg rounds run on the scenario's own data and network to measure the cost per message.
CALIBRATION_ROUNDS = 5
#: A run whose estimate exceeds this warns before it starts (seconds).
WARN_ABOVE_S = 3600.0


def _gradient_time(sim: Simulation, ctx, design) -> float:
    """Return the wall seconds of one all-agents gradient at w[0] (best of three)."""
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        sim.model.agent_grads(ctx.w0, design)
        best = min(best, time.perf_counter() - t0)
    return best


def _moments_time(sim: Simulation, ctx, design) -> float | None:
    """Return the wall seconds of the gradient moments when the run's descent rounds sum
    from them (ridge, truthful agents, open unclipped reports), else None."""
    cfg = ctx.cfg
    if secure_aggregation(cfg) or not true_unclipped(clip_norm(cfg), sim.population):
        return None
    t0 = time.perf_counter()
    found = sim.model.gradient_moments(design, ctx.p)
    return None if found is None else time.perf_counter() - t0


def _message_time(sim: Simulation, reports_s: float) -> float:
    """Return the wall seconds per message (each way) of the scenario's network, measured.

    Runs CALIBRATION_ROUNDS rounds of FedAvg on the same data and network and
    takes away the reports' share, ``reports_s`` (their gradients, or the moments'
    pass when the rounds sum from it): what remains is the driver's cost per message.
    """
    sc = sim.scenario
    mech = dataclasses.replace(
        sc.mechanism, kind="fedavg", phase1_rounds=CALIBRATION_ROUNDS, eta1="theory"
    )
    # A shallow copy shares the data, the design and L_g: no second copy of the data.
    short = copy.copy(sim)
    short.scenario = dataclasses.replace(sc, mechanism=mech)
    t0 = time.perf_counter()
    run = short.run_mechanism()
    elapsed = time.perf_counter() - t0
    messages = run.counters.messages_down + run.counters.messages_up
    return max(elapsed - reports_s, 0.0) / max(messages, 1)


def _phase1_rounds(sim: Simulation, ctx, design) -> int:
    cfg = ctx.cfg
    if cfg.phase1_rounds != "theory":
        return int(cfg.phase1_rounds)
    reports = sim.model.agent_grads(ctx.w0, design, clip_norm(cfg))  # clipped as the agents clip
    G = float(np.linalg.norm(ctx.p @ reports)) / ctx.mu
    return max(1, theory.phase1_rounds(ctx.K, G, cfg.theory_delta, ctx.mu, ctx.L_g))


def _counts(sim: Simulation, ctx, design) -> dict:
    """Return the rounds and the (gradient, loss) exchanges and messages of the mechanism."""
    cfg, K = ctx.cfg, ctx.K
    kind = cfg.kind
    out: dict = {"T1": None, "T2": None, "problems": 0, "clusters": None, "notes": []}
    if kind == "fedavg":
        T1 = _phase1_rounds(sim, ctx, design)
        out.update(T1=T1, grad=(T1, K * T1), loss=(0, 0, 0), summed=T1)
    elif kind == "ffl":
        T1 = _phase1_rounds(sim, ctx, design)
        T2 = cfg.phase2_rounds
        if T2 == "theory":
            L_f = float(np.max(np.linalg.norm(sim.model.agent_grads(ctx.w0, design), axis=1)))
            T2 = theory.phase2_rounds(K, L_f, cfg.theory_delta, ctx.mu, ctx.L_g, cfg.epsilon)
            out["notes"].append("T2 from Theorem 1 with L_f bounded by the gradients at w[0]")
        T2 = int(T2)
        per = T2 - 1 if cfg.payment_rule == "paper" and not cfg.phase2_check else T2
        problems = K if (K > 1 and T2 > 0) else 0
        if cfg.phase2_check:
            out["notes"].append("phase2_check: each problem runs at least T2 rounds (a minimum)")
        exchanges = T1 + 1 + problems * max(per, 0)
        messages = K * T1 + K + problems * (K - 1) * max(per, 0)
        out.update(T1=T1, T2=T2, problems=problems, grad=(exchanges, messages), loss=(0, 0, 0))
        out["summed"] = T1  # Phase I; the shared round and Phase II form the reports
        rounds2 = max(per, 0) if problems else 0  # parallel: one exchange per round, to all K
        out["parallel"] = (T1 + 1 + rounds2, K * (T1 + 1 + rounds2))
    elif kind == "dp-ffl":
        T1, T2 = dp_rounds(ctx)
        L = cluster_count(ctx)
        problems = L if L > 1 else 0
        out.update(T1=T1, T2=T2, problems=problems, clusters=L)
        grad_msgs = K * T1 + (K * (L - 1) * T2 if problems else 0)
        out["grad"] = (T1 + problems * T2, grad_msgs)
        out["loss"] = (problems, problems * K, problems * K)  # with the reference model
        rounds2 = T2 + 1 if problems else 0  # parallel: T2 descent rounds, then the losses
        out["parallel"] = (T1 + rounds2, K * (T1 + rounds2))
    elif kind == "vcg-federated":
        T1 = _phase1_rounds(sim, ctx, design)
        problems = K if K > 1 else 0  # one agent: nobody else to train on, P = 0
        out.update(T1=T1, T2=T1, problems=problems)
        out["grad"] = (T1 + problems * T1, K * T1 + problems * (K - 1) * T1)
        out["summed"] = T1 + problems * T1  # every training is a descent
        out["loss"] = (1 + problems, K + problems * (K - 1), 0)
        rounds2 = T1 + 1 if problems else 0  # parallel: the K trainings' rounds, then the losses
        out["parallel"] = (T1 + 1 + rounds2, K * (T1 + 1 + rounds2))
    elif kind in ("local", "vcg"):
        out.update(grad=(0, 0), loss=(0, 0, 0))
        if kind == "vcg":
            out["data_upload"] = K
    else:
        out["notes"].append(f"mechanism {kind!r} is not built in: its messages are not predicted")
        return out
    return out


def _references(sim: Simulation) -> dict:
    """Return the plan's keys for the references computed after the mechanism (module
    docstring): exact VCG's and w^o's decision and predicted seconds, the local baseline's."""
    sc = sim.scenario
    ref = reference_plan(sc)
    out = {
        "exact_vcg": ref.exact_vcg,
        "exact_vcg_reason": ref.reason,
        "reference_solves": ref.solves,
        "exact_vcg_s": ref.exact_vcg_s,
        "optimum_s": ref.optimum_s,
        "reference_s": ref.seconds,
        "local_baseline_rounds": None,
        "local_baseline_s": None,
    }
    if sc.output.local_baseline:  # every agent from zeros, with the data's own L (as it runs)
        model, design = sim.model, sim.design
        L = sim.federation(np.arange(sim.data.K))[1]
        g0 = float(
            np.max(np.linalg.norm(model.agent_grads(model.init(sim.data.d), design), axis=1))
        )
        rounds = local_rounds_bound(L, model.strong_convexity(), g0, sc.mechanism.local_rounds)
        out["local_baseline_rounds"] = rounds
        # one gradient of every agent at its own model per round, and one more every 10th
        out["local_baseline_s"] = 1.1 * rounds * local_round_s(problem_shape(sc))
    return out


def plan(scenario: Scenario, sim: Simulation | None = None) -> dict:
    """Return what running ``scenario`` implies, without running it (module docstring).

    Keys: ``mechanism``, ``K``, ``T1``, ``T2``, ``problems`` (Phase II problems),
    ``clusters``, ``exchanges``, ``messages_down``, ``messages_up``,
    ``bytes_down``, ``bytes_up`` (None for a mechanism that is not built in),
    ``transmissions_up_expected`` (None when the loss model is not independent),
    ``seconds_per_gradient`` (measured), ``report_exchanges`` (the gradient exchanges
    whose reports are formed, not summed from the data's moments), ``wall_time_s``
    (estimate, the mechanism only); the references after it: ``exact_vcg`` (whether its
    K + 1 solves are computed), ``exact_vcg_reason``, ``reference_solves`` (the central
    solves: K + 1, 1 for w^o alone, or 0), ``exact_vcg_s`` and ``optimum_s`` (predicted
    seconds on the reference machine, whether or not computed), ``reference_s`` (those
    of what is computed), ``local_baseline_rounds`` (at most) and ``local_baseline_s``
    (None without the baseline); ``warn``
    (the estimate exceeds :data:`WARN_ABOVE_S`) and ``notes``.
    """
    sim = sim or Simulation(scenario)
    participants = sim.population.participants()
    ctx, design = sim.server_context(participants, np.random.default_rng(scenario.seed))
    c = _counts(sim, ctx, design)
    if (
        sim.population.assigned
        and c["T1"] is not None
        and scenario.mechanism.phase1_rounds == "theory"
    ):
        c["notes"].append("Theorem 1's T1 assumes truthful reports (strategies change it)")
    n_params = ctx.w0.size
    out = {
        "mechanism": scenario.mechanism.kind,
        "K": ctx.K,
        "T1": c["T1"],
        "T2": c["T2"],
        "problems": c["problems"],
        "clusters": c["clusters"],
        "exchanges": None,
        "messages_down": None,
        "messages_up": None,
        "bytes_down": None,
        "bytes_up": None,
        "transmissions_up_expected": None,
        "notes": c["notes"],
        **_references(sim),
    }
    t_grad = _gradient_time(sim, ctx, design)
    out["seconds_per_gradient"] = t_grad
    t_moments = _moments_time(sim, ctx, design)
    if "grad" not in c:
        out["wall_time_s"] = None
        out["warn"] = False
        return out
    g_ex, g_msg = c["grad"]
    l_ex, l_msg, l_ref = c["loss"]
    data_up = c.get("data_upload", 0)
    messages = g_msg + l_msg + data_up
    payload = scenario.network.payload_bytes(n_params)
    down = (HEADER_BYTES + payload) * (g_msg + l_msg) + payload * l_ref
    down += HEADER_BYTES * data_up
    up = (HEADER_BYTES + payload) * g_msg + payload_bytes("loss", n_params) * l_msg
    if data_up:
        up += int(
            (HEADER_BYTES + FLOAT_BYTES * design.n_k * (sim.data.d + 1)).sum()
        )  # the central reference's data uploads
    exchanges = g_ex + l_ex + (1 if data_up else 0)
    if scenario.mechanism.phase2_schedule == "parallel" and "parallel" in c:
        # the same bytes in fewer messages: each agent's reports of one round travel together
        exchanges, messages = c["parallel"]
    out.update(
        exchanges=exchanges,
        messages_down=messages,
        messages_up=messages,
        bytes_down=int(down),
        bytes_up=int(up),
    )
    net = scenario.network
    if (
        scenario.mechanism.phase2_schedule == "parallel"
        and net.fidelity != "none"
        and net.round_policy == "deadline"
    ):
        out["notes"].append(
            "parallel Phase II under a deadline: a device computes up to K - 1 reports per round"
            " (its compute time times that); replies later than deadline_s are cut"
        )
    if scenario.mechanism.missing == "retry" and net.fidelity != "none":
        out["notes"].append(
            "missing = 'retry': retries of lost replies add exchanges (not counted)"
        )
    if net.fidelity != "none":
        radio = net.radio
        q = {"none": 0.0, "bernoulli": radio.loss_prob}.get(radio.loss)
        if q is not None:
            R = radio.arq_max_retries
            attempts = float(R + 1) if q == 1.0 else (1.0 - q ** (R + 1)) / (1.0 - q)
            out["transmissions_up_expected"] = messages * attempts
        else:
            out["notes"].append(f"loss model {radio.loss!r}: transmissions not predicted")
    summed = c.get("summed", 0) if t_moments is not None else 0
    calibration = CALIBRATION_ROUNDS * t_grad if t_moments is None else t_moments
    out["seconds_per_message"] = _message_time(sim, calibration)
    out["report_exchanges"] = g_ex - summed
    reports = (g_ex - summed) * t_grad + (t_moments if summed else 0.0)
    out["wall_time_s"] = reports + 2 * messages * out["seconds_per_message"]
    out["warn"] = out["wall_time_s"] > WARN_ABOVE_S
    return out


def describe(p: dict, memory=None) -> str:
    """Return the plan as a few readable lines (what ``edgesim plan`` prints).

    ``memory``: the run's :class:`edgesim.footprint.Footprint`, printed when given.
    """

    def num(x, spec=",d"):
        return "-" if x is None else format(x, spec)

    lines = [f"plan: {p['mechanism']} with K = {p['K']} agents"]
    rounds = f"  rounds        T1 = {num(p['T1'])}"
    if p["T2"] is not None:
        rounds += f", T2 = {num(p['T2'])} per Phase II problem, {p['problems']} problems"
    if p["clusters"] is not None:
        rounds += f" (L = {p['clusters']} clusters)"
    lines.append(rounds)
    lines.append(
        f"  messages      {num(p['messages_down'])} each way in {num(p['exchanges'])} exchanges;"
        f" {num(p['bytes_down'])} bytes down, {num(p['bytes_up'])} up"
    )
    if p["transmissions_up_expected"] is not None:
        lines.append(f"  transmissions {p['transmissions_up_expected']:,.0f} uplink expected (ARQ)")
    if p.get("wall_time_s") is not None:
        lines.append(
            f"  wall time     about {p['wall_time_s']:.3g} s (one all-agents gradient:"
            f" {p['seconds_per_gradient'] * 1e3:.3g} ms)"
        )
    if "exact_vcg_reason" in p:
        vcg = p["exact_vcg_reason"]
        if not p["exact_vcg"] and p["reference_solves"]:
            vcg += f"; the optimum w^o: 1 solve, about {seconds_text(p['optimum_s'])} s"
        lines.append(f"  exact VCG     {vcg}")
    if p.get("local_baseline_rounds") is not None:
        lines.append(
            f"  local         baseline: at most {p['local_baseline_rounds']:,d} rounds, at most"
            f" about {seconds_text(p['local_baseline_s'])} s (output.local_baseline = false skips"
            " it)"
        )
    if memory is not None:
        lines.append(f"  memory        {memory.describe()}")
    lines.extend(f"  note          {n}" for n in p["notes"])
    if p.get("warn"):
        lines.append(f"  WARNING       the estimate exceeds {WARN_ABOVE_S / 3600:g} hour")
    return "\n".join(lines)
