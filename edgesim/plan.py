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
- FFL's Phase II rounds under the stopping rule (``phase2_check``), per problem,
  from the curvature at Phase I's end, linearised (:mod:`edgesim.plan_phase2`), and
  how lost replies end problems early;
- the wall time of the whole run (:mod:`edgesim.plan_wall`): counts of what it
  does (exchanges, recipients, cells, report passes, secure-aggregation stages,
  a best-response search's runs) times unit costs: one all-agents gradient,
  measured here (best of three), and the driver's, the mechanism's, the network's
  and the output's costs per exchange, recipient and cell, from the table
  :mod:`edgesim.wall_costs` (measured by ``analysis/benchmarks/bench_plan.py
  --write``). Rounds whose weighted sum is formed from the data's moments (ridge's
  Phase I with truthful, unclipped, open reports:
  :meth:`~edgesim.mechanisms.driver.AgentSide.answer`) cost one pass for the
  moments, measured, instead of a gradient each;
- the references computed after the mechanism: whether exact VCG (K + 1 central solves) or
  the optimum w^o alone is computed and why (:func:`edgesim.reference.reference_plan`, the
  run's own decision), with their predicted seconds on the reference machine (the cost model
  of :mod:`edgesim.reference`); and the local-learning baseline's rounds, at most
  :func:`edgesim.reference.local_rounds_bound` (a closed-form bound), and seconds. Both are
  parts of the wall time.

Lost replies do not change the messages sent (a lost reply is still a sent message);
secure aggregation's key and share messages are counted by the network apart and not
predicted (their exchanges are part of the wall time).
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from edgesim import theory, wall_costs
from edgesim.mechanisms.base import clip_norm, secure_aggregation
from edgesim.mechanisms.dpffl import cluster_count
from edgesim.mechanisms.dpffl import rounds as dp_rounds
from edgesim.mechanisms.driver import reports_may_run_ahead, true_unclipped
from edgesim.mechanisms.protocol import FLOAT_BYTES, HEADER_BYTES, payload_bytes
from edgesim.mechanisms.steps import step_size_phase1
from edgesim.plan_phase2 import incomplete_probability, phase2_rounds
from edgesim.plan_wall import (
    hidden_reports_s,
    import_seconds,
    lazy_modules,
    link_class,
    local_seconds,
    mechanism_seconds,
    output_seconds,
    search_runs,
    secure_crypto_s,
    walks_compiled,
    work_of,
)
from edgesim.reference import (
    SETUP_S,
    exact_vcg_s,
    local_round_s,
    local_rounds_bound,
    problem_shape,
    reference_plan,
    seconds_text,
)
from edgesim.scenario import Scenario
from edgesim.simulate import Simulation

#: A run whose estimate exceeds this warns before it starts (seconds).
WARN_ABOVE_S = 3600.0


def _gradient_time(sim: Simulation, ctx, design) -> float:
    """Return the wall seconds of one all-agents gradient at w[0] (best of three)."""
    best = math.inf
    clip = clip_norm(ctx.cfg)  # clipped reports cost a norm per sample
    for _ in range(3):
        t0 = time.perf_counter()
        sim.model.agent_grads(ctx.w0, design, clip)
        best = min(best, time.perf_counter() - t0)
    return best


def _each_time(sim: Simulation, ctx, design) -> float:
    """Return the wall seconds of one pass of every agent's gradient at its own model (local
    learning's round, the output's per-agent losses), at w[0] (best of three)."""
    W = np.tile(ctx.w0, (design.K, 1))
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        sim.model.agent_grads_each(W, design)
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


def _phase2_expected(sim: Simulation, ctx, design, T1: int, T2: int):
    """Return FFL's Phase II rounds per problem under the stopping rule: (N, expected), each
    (K,) (:func:`edgesim.plan_phase2.phase2_rounds`; lost replies end problems early)."""
    cfg = ctx.cfg
    incomplete = incomplete_probability(sim.scenario.network, ctx.K - 1)
    return phase2_rounds(
        sim.model,
        design,
        ctx,
        T1=T1,
        eta1=step_size_phase1(ctx),
        T2=T2,
        cap=cfg.phase2_max_rounds,
        incomplete=incomplete,
    )


def _steady_network(sim: Simulation) -> tuple[bool, int]:
    """Return (whether the scenario's network reuses a steady exchange's plan, its cells):
    the server's own rule (``NetworkServer.steady_ok``), on the network a run builds."""
    from edgesim.network.build import Network
    from edgesim.network.server import NetworkServer
    from edgesim.simulate import network_seed

    sc = sim.scenario
    net = Network(sc.network, sim.data.n_k, network_seed(sc.seed))
    server = NetworkServer(net, None, np.arange(sim.data.K))
    return bool(server.steady_ok), sc.network.topology.cells(sim.data.K)


def _wall_parts(sim: Simulation, ctx, c: dict, t_grad: float, t_each: float, t_moments, summed):
    """Return (the predicted seconds of the whole run by part, the mechanism's
    :class:`~edgesim.plan_wall.Work`) (:mod:`edgesim.plan_wall`). Parts: ``setup``,
    ``reports``, ``memory``, ``network``, ``secure_aggregation``, ``mechanism_own`` (vcg's
    solves, local learning), ``search`` (a best-response search's runs), ``references``,
    ``local_baseline`` (filled by :func:`plan`) and ``output``."""
    sc = sim.scenario
    shape = problem_shape(sc)
    n_params = ctx.w0.size
    fidelity = sc.network.fidelity
    steady, cells = _steady_network(sim) if fidelity != "none" else (False, 1)
    work = work_of(sc, c, cells)
    work = dataclasses.replace(work, passes=max(work.passes - summed, 0.0))
    link = link_class(sc.network, sim.data.n_k)
    start = fidelity != "none" and walks_compiled(sc.agents.count)
    run = mechanism_seconds(
        work, sc.mechanism.kind, t_grad, fidelity, sc.network.radio.access, link, steady, start
    )
    reports = run["reports"] + (t_moments or 0.0)
    ahead = reports_may_run_ahead(clip_norm(ctx.cfg), sim.population, len(sim.design.blocks))
    if fidelity == "batched" and not secure_aggregation(sc.mechanism) and ahead:
        hidden = hidden_reports_s(run["reports"], run["network"])
        reports -= hidden
        c["notes"].append(f"reports computed while the network plans: {hidden:.3g} s hidden")
    crypto = secure_crypto_s(sc, c, n_params)
    # a search's runs have a deviator: every round forms reports, none sums the moments
    deviating = run["total"] - run["reports"] + c.get("passes", 0) * t_grad + crypto
    if start:  # the network started once, for the run
        deviating -= wall_costs.START_S.get(fidelity, 0.0)
    setup = SETUP_S[0] + SETUP_S[1] * (shape.n + shape.n_test) * shape.d
    setup += SETUP_S[2] * shape.n * shape.dprime
    own = 0.0
    if sc.mechanism.kind == "vcg":
        own = exact_vcg_s(shape, c.get("solves") or shape.K)
    parts = {
        "setup": setup,
        "reports": reports,
        "memory": run["memory"],
        "network": run["network"],
        "secure_aggregation": crypto,
        "mechanism_own": own,
        "search": search_runs(sc.best_response) * deviating,
        "references": 0.0,  # filled by plan() from the reference plan
        "local_baseline": 0.0,
        "output": output_seconds(shape.K, sc.output.per_agent, t_each),
    }
    return parts, work


def _phase1_rounds(sim: Simulation, ctx, design) -> int:
    cfg = ctx.cfg
    if cfg.phase1_rounds != "theory":
        return int(cfg.phase1_rounds)
    reports = sim.model.agent_grads(ctx.w0, design, clip_norm(cfg))  # clipped as the agents clip
    G = float(np.linalg.norm(ctx.p @ reports)) / ctx.mu
    return max(1, theory.phase1_rounds(ctx.K, G, cfg.theory_delta, ctx.mu, ctx.L_g))


def _counts(sim: Simulation, ctx, design, predict: bool = True) -> dict:
    """Return the rounds and the (gradient, loss) exchanges and messages of the mechanism."""
    cfg, K = ctx.cfg, ctx.K
    kind = cfg.kind
    out: dict = {"T1": None, "T2": None, "problems": 0, "clusters": None, "notes": []}
    if kind == "fedavg":
        T1 = _phase1_rounds(sim, ctx, design)
        out.update(T1=T1, grad=(T1, K * T1), loss=(0, 0, 0), summed=T1)
        out.update(round=(T1, K * T1), problem=(0, 0), passes=T1, secure=T1)
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
        phase2 = problems * max(per, 0)  # Phase II exchanges, each to the K - 1 others
        rounds2 = max(per, 0) if problems else 0  # parallel: one exchange per round, to all K
        if cfg.phase2_check and K > 1 and predict:
            N, expected = _phase2_expected(sim, ctx, design, T1, T2)
            problems, phase2 = int(np.count_nonzero(N)), float(expected.sum())
            rounds2 = int(N.max()) if problems else 0
            out["phase2_rounds_expected"] = expected
            out["notes"].append(
                "phase2_check: each problem's rounds predicted from the curvature at Phase I's"
                " end (linearised, truthful reports; edgesim.plan_phase2)"
            )
        exchanges = T1 + 1 + phase2
        messages = K * T1 + K + (K - 1) * phase2
        out.update(T1=T1, T2=T2, problems=problems, grad=(exchanges, messages), loss=(0, 0, 0))
        out["summed"] = T1  # Phase I; the shared round and Phase II form the reports
        out["round"], out["problem"] = (T1 + 1, K * (T1 + 1)), (phase2, (K - 1) * phase2)
        out["passes"] = T1 + 1 + phase2 * (K - 1) / K
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
        out["round"] = (T1 + problems, K * (T1 + problems))  # Phase I, and the losses
        out["problem"] = (problems * T2, grad_msgs - K * T1)
        out["passes"] = T1 + problems + (problems * T2 * (L - 1) / L if problems else 0)
        out["secure"] = T1 + problems * T2  # every descent round is summed
    elif kind == "vcg-federated":
        T1 = _phase1_rounds(sim, ctx, design)
        problems = K if K > 1 else 0  # one agent: nobody else to train on, P = 0
        out.update(T1=T1, T2=T1, problems=problems)
        out["grad"] = (T1 + problems * T1, K * T1 + problems * (K - 1) * T1)
        out["summed"] = T1 + problems * T1  # every training is a descent
        out["loss"] = (1 + problems, K + problems * (K - 1), 0)
        rounds2 = T1 + 1 if problems else 0  # parallel: the K trainings' rounds, then the losses
        out["parallel"] = (T1 + 1 + rounds2, K * (T1 + 1 + rounds2))
        out["round"] = (T1 + 1, K * (T1 + 1))
        out["problem"] = (problems * (T1 + 1), problems * (K - 1) * (T1 + 1))
        out["passes"] = T1 + 1 + problems * (T1 + 1) * (K - 1) / K
        out["secure"] = T1 + problems * T1
    elif kind in ("local", "vcg"):
        out.update(grad=(0, 0), loss=(0, 0, 0), round=(1, K), problem=(0, 0), passes=0)
        if kind == "vcg":
            out["data_upload"] = K
            L = cfg.clusters
            out["solves"] = K if L in ("sqrt", "theory", "all") else min(K, int(L))
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
    if sc.output.local_baseline:
        out["local_baseline_rounds"], out["local_baseline_s"] = _local_learning(sim)
    return out


def _local_learning(sim: Simulation) -> tuple[int, float]:
    """Return local learning's rounds (at most) and predicted seconds: every agent from zeros,
    with the data's own L (as the local baseline and the ``local`` mechanism run)."""
    sc, model, design = sim.scenario, sim.model, sim.design
    L = sim.federation(np.arange(sim.data.K))[1]
    g0 = float(np.max(np.linalg.norm(model.agent_grads(model.init(sim.data.d), design), axis=1)))
    rounds = local_rounds_bound(L, model.strong_convexity(), g0, sc.mechanism.local_rounds)
    # one gradient of every agent at its own model per round, and one more every 10th
    return rounds, 1.1 * rounds * local_round_s(problem_shape(sc))


def plan(scenario: Scenario, sim: Simulation | None = None, predict: bool = True) -> dict:
    """Return what running ``scenario`` implies, without running it (module docstring).

    Keys: ``mechanism``, ``K``, ``T1``, ``T2``, ``problems`` (Phase II problems),
    ``clusters``, ``exchanges``, ``messages_down``, ``messages_up``,
    ``bytes_down``, ``bytes_up`` (None for a mechanism that is not built in),
    ``transmissions_up_expected`` (None when the loss model is not independent),
    ``phase2_rounds_expected`` (FFL with ``phase2_check``: each problem's expected rounds,
    (K,); else None), ``seconds_per_gradient`` and ``seconds_per_each_pass`` (every agent
    at its own model) (measured), ``report_exchanges`` (the
    gradient exchanges whose reports are formed, not summed from the data's moments),
    ``work`` (the counts the wall time multiplies: :class:`~edgesim.plan_wall.Work` as a
    dict), ``wall_parts_s`` (seconds by part: setup, reports, memory, network,
    secure_aggregation, mechanism_own, search, references, local_baseline, output,
    imports) and
    ``wall_time_s`` (their sum: the whole run, as ``edgesim run --json`` runs it; None for
    a mechanism that is not built in); the references after it: ``exact_vcg`` (whether its
    K + 1 solves are computed), ``exact_vcg_reason``, ``reference_solves`` (the central
    solves: K + 1, 1 for w^o alone, or 0), ``exact_vcg_s`` and ``optimum_s`` (predicted
    seconds on the reference machine, whether or not computed), ``reference_s`` (those
    of what is computed), ``local_baseline_rounds`` (at most) and ``local_baseline_s``
    (None without the baseline); ``warn``
    (the estimate exceeds :data:`WARN_ABOVE_S`) and ``notes``.

    ``predict = False`` skips FFL's Phase II prediction under ``phase2_check`` (it runs
    Phase I in memory) and counts each problem's minimum T2 rounds instead: the cheap
    lower estimate ``edgesim run`` checks before every run, whose cost stays small
    against the run's.
    """
    sim = sim or Simulation(scenario)
    participants = sim.population.participants()
    ctx, design = sim.server_context(participants, np.random.default_rng(scenario.seed))
    c = _counts(sim, ctx, design, predict)
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
        "phase2_rounds_expected": c.get("phase2_rounds_expected"),
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
        rounds1 = c["round"][0]
        c["problem"] = (exchanges - rounds1, messages - c["round"][1])
    out.update(
        exchanges=round(exchanges),
        messages_down=round(messages),
        messages_up=round(messages),
        bytes_down=round(down),
        bytes_up=round(up),
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
    out["report_exchanges"] = round(g_ex - summed)
    t_each = _each_time(sim, ctx, design)
    out["seconds_per_each_pass"] = t_each
    parts, work = _wall_parts(sim, ctx, c, t_grad, t_each, t_moments if summed else None, summed)
    out["work"] = dataclasses.asdict(work)
    parts["references"] = out["reference_s"]
    parts["imports"] = import_seconds(lazy_modules(scenario, out["reference_solves"]))
    if out["local_baseline_rounds"] is not None:
        parts["local_baseline"] = local_seconds(out["local_baseline_rounds"], t_each)
    if scenario.mechanism.kind == "local":
        parts["mechanism_own"] = local_seconds(_local_learning(sim)[0], t_each)
    out["wall_parts_s"] = parts
    out["wall_time_s"] = sum(parts.values())
    out["warn"] = out["wall_time_s"] > WARN_ABOVE_S
    return out


def _largest_parts(p: dict) -> str:
    """Return the wall time's largest parts as text: "network 61%, reports 30%" (those of 10%
    or more, at most three)."""
    total = p["wall_time_s"] or 1.0
    parts = sorted(p["wall_parts_s"].items(), key=lambda kv: -kv[1])
    big = [f"{name.replace('_', ' ')} {s / total:.0%}" for name, s in parts[:3] if s >= 0.1 * total]
    return ", ".join(big) or "no part above 10%"


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
    expected = p.get("phase2_rounds_expected")
    if expected is not None and p["problems"]:  # the stopping rule's rounds, per problem run
        rounds += f" (about {expected.sum() / p['problems']:,.3g} rounds each under the rule)"
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
            f"  wall time     about {p['wall_time_s']:.3g} s ({_largest_parts(p)}; one"
            f" all-agents gradient: {p['seconds_per_gradient'] * 1e3:.3g} ms)"
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
