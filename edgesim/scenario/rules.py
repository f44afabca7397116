"""The rules of a :class:`~edgesim.scenario.schema.Scenario` that span several tables.

:meth:`Scenario.errors <edgesim.scenario.schema.Scenario.errors>` runs them
after every field's own check, on every path a scenario takes (typed objects,
a dict, a TOML file, ``--set``, a sweep point), so each path reports the same
key and text. Each rule is skipped when a key it reads is already bad
(``bad(*keys)``): that key's value is then only a stand-in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from edgesim.agents import STRATEGIES, make_strategy
from edgesim.config import or_list, resolved_options, suggest
from edgesim.deviations.network_aware import round_range_problem
from edgesim.errors import ScenarioError
from edgesim.mechanisms import BUILTIN_MECHANISMS, MECHANISMS
from edgesim.mechanisms.base import CLIPS_GRADIENTS, CLIPS_LOSSES, secure_aggregation
from edgesim.mechanisms.parallel import HAS_PHASE2
from edgesim.network.access import ACCESS_SCHEMES
from edgesim.plugins import register_from_spec

Bad = Callable[..., bool]
#: A :class:`~edgesim.scenario.schema.Scenario` (not imported: schema imports this module).
Scenario = Any


def cross_table_errors(sc: Scenario, bad: Bad) -> list[ScenarioError]:
    """Return the errors of every rule spanning several keys of ``sc`` (empty when consistent).

    ``bad(*keys)`` is true when one of ``keys`` already has an error.
    """
    K = sc.agents.count
    errors: list[ScenarioError] = []
    if sc.output.per_agent == "parquet" and not bad("output.per_agent"):
        from edgesim.per_agent import parquet_problem

        problem = parquet_problem()
        if problem:
            errors.append(ScenarioError("output.per_agent", problem))
    errors += _strategy_errors(sc, bad)
    errors += _network_aware_errors(sc, bad)
    errors += _mechanism_errors(sc, bad)
    errors += _best_response_errors(sc, bad)
    if not bad("data.source", "model.kind"):
        errors += _model_errors(sc)
    if not bad("data", "agents.count"):
        errors.extend(sc.data.cross_check(K))
    if not bad("network", "agents.count"):
        errors.extend(sc.network.cross_check(K))
    return errors


def _strategy_errors(sc: Scenario, bad: Bad) -> list[ScenarioError]:
    """Strategies: agents in range, known kinds, one strategy per agent, someone participates."""
    K = sc.agents.count
    errors = []
    for i, s in enumerate(sc.agents.strategy):
        key = f"agents.strategy[{i}]"
        if not bad("agents.count", f"{key}.agent") and s.agent >= K:
            errors.append(
                ScenarioError(
                    f"{key}.agent", f"must be < agents.count = {K} (0..{K - 1}), got {s.agent}"
                )
            )
        if bad(f"{key}.kind") or s.kind in STRATEGIES:
            continue
        if ":" in s.kind:
            errors.extend(register_from_spec(s.kind, f"{key}.kind", STRATEGIES))
        else:
            allowed = ", ".join(repr(k) for k in sorted(STRATEGIES))
            hint = suggest(s.kind, STRATEGIES)
            errors.append(
                ScenarioError(
                    f"{key}.kind",
                    f"unknown strategy {s.kind!r}{hint}; use {allowed} or 'module:Class'",
                )
            )
    if any(bad(f"agents.strategy[{i}].agent") for i in range(len(sc.agents.strategy))):
        return errors
    agents = [s.agent for s in sc.agents.strategy]
    dup = sorted({a for a in agents if agents.count(a) > 1})
    if dup:
        errors.append(
            ScenarioError("agents.strategy", f"agent(s) {dup} given more than one strategy")
        )
    if not bad("agents.count", "agents.strategy"):
        out = {s.agent for s in sc.agents.strategy if s.kind == "opt-out"}
        # Counted, never enumerated: K may be anything a scenario says (no set of size K).
        if K >= 1 and len(out) >= K and len({a for a in out if 0 <= a < K}) == K:
            errors.append(
                ScenarioError(
                    "agents.strategy", "every agent opts out: at least one must participate"
                )
            )
    return errors


def _network_aware_errors(sc: Scenario, bad: Bad) -> list[ScenarioError]:
    """Network-aware strategies: a round range that is not empty, and a strategy that holds
    replies back (``may_delay``: ``late``) only where there is time (fidelity batched or events)."""
    errors = []
    for i, s in enumerate(sc.agents.strategy):
        key = f"agents.strategy[{i}]"
        if bad(key) or s.kind not in STRATEGIES:
            continue
        problem = round_range_problem(resolved_options(s, "options"))
        if problem:
            errors.append(ScenarioError(f"{key}.round_max", problem))
            continue
        if bad("network.fidelity"):
            continue
        strategy = make_strategy(s)
        delays = getattr(strategy, "may_delay", False)
        if sc.network.fidelity == "none":
            if delays:
                errors.append(
                    ScenarioError(
                        f"{key}.kind",
                        f"{s.kind!r} holds replies back in simulated time, and network.fidelity"
                        " = 'none' has none; set network.fidelity to 'batched' or 'events'",
                    )
                )
            continue
        if not (delays or getattr(strategy, "may_withhold", False)):
            continue
        where = _unmodelled_deviation(sc, bad)
        if where:
            errors.append(
                ScenarioError(
                    f"{key}.kind",
                    f"{s.kind!r} withholds or holds back replies, which is not modelled {where}"
                    " over a simulated network (in memory it is: network.fidelity = 'none')",
                )
            )
    return errors


def _unmodelled_deviation(sc: Scenario, bad: Bad) -> str | None:
    """Where a withheld or held-back reply is not modelled on a simulated network: a Wi-Fi
    cell (one medium both ways); None elsewhere."""
    access = sc.network.radio.access
    if not bad("network.radio.access") and getattr(ACCESS_SCHEMES.get(access), "joint", False):
        return f"on a {access!r} cell (one medium both ways)"
    return None


def _mechanism_errors(sc: Scenario, bad: Bad) -> list[ScenarioError]:
    """The mechanism: a known kind, clipping it uses, dp-ffl's feature clip, Phase II, clusters."""
    m, K = sc.mechanism, sc.agents.count
    errors = []
    if not bad("mechanism.kind") and m.kind not in MECHANISMS:
        if ":" in m.kind:
            errors.extend(register_from_spec(m.kind, "mechanism.kind", MECHANISMS))
        else:
            allowed = ", ".join(repr(k) for k in sorted(MECHANISMS))
            hint = suggest(m.kind, MECHANISMS)
            errors.append(
                ScenarioError(
                    "mechanism.kind",
                    f"unknown mechanism {m.kind!r}{hint}; use {allowed} or 'module:function'",
                )
            )
    for key, kinds, what in (
        ("clip_norm", CLIPS_GRADIENTS, "gradient reports"),
        ("loss_bound", CLIPS_LOSSES, "loss reports"),
    ):
        value = getattr(m, key)
        if bad("mechanism.kind", f"mechanism.{key}") or isinstance(value, str):
            continue
        if m.kind in BUILTIN_MECHANISMS and m.kind not in kinds:
            errors.append(
                ScenarioError(
                    f"mechanism.{key}",
                    f"mechanism {m.kind!r} sends no {what} to clip; set it for"
                    f" {or_list([repr(k) for k in kinds])}, or leave it 'auto'",
                )
            )
    keys = ("mechanism.kind", "mechanism.feature_bound", "mechanism.public_smoothness")
    if m.kind == "dp-ffl" and m.public_smoothness == "auto" and m.feature_bound == "off":
        if not bad(*keys):
            errors.append(
                ScenarioError(
                    "mechanism.feature_bound",
                    "dp-ffl's public L_g (public_smoothness = 'auto') rests on the agents'"
                    " feature clip; set feature_bound to a number R (or 'auto', R = 1), or"
                    " public_smoothness to a number known in public",
                )
            )
    if m.phase2_schedule == "parallel" and not bad("mechanism.phase2_schedule", "mechanism.kind"):
        if m.kind in BUILTIN_MECHANISMS and m.kind not in HAS_PHASE2:
            errors.append(
                ScenarioError(
                    "mechanism.phase2_schedule",
                    f"mechanism {m.kind!r} has no Phase II to run in parallel; 'parallel' is for"
                    f" {or_list([repr(k) for k in HAS_PHASE2])}",
                )
            )
        elif m.kind == "dp-ffl" and secure_aggregation(m):
            errors.append(
                ScenarioError(
                    "mechanism.phase2_schedule",
                    "'parallel' serves several problems in one exchange, but secure aggregation"
                    " runs one session per exchange; set mechanism.secure_aggregation = false"
                    " or keep 'sequential'",
                )
            )
    if not bad("mechanism.clusters", "agents.count"):
        if isinstance(m.clusters, int) and m.clusters > K:
            errors.append(
                ScenarioError(
                    "mechanism.clusters", f"must be <= agents.count = {K}, got {m.clusters}"
                )
            )
    return errors


def _best_response_errors(sc: Scenario, bad: Bad) -> list[ScenarioError]:
    """The best-response search: its agent (or coalition) exists, its gamma bracket is not empty,
    its family is registered and its parameters are the family's options, in range."""
    br, K = sc.best_response, sc.agents.count
    if not br.enabled or bad("best_response"):
        return []
    errors = []
    if not bad("agents.count") and br.agent >= K:
        errors.append(
            ScenarioError(
                "best_response.agent",
                f"must be < agents.count = {K} (0..{K - 1}), got {br.agent}",
            )
        )
    if br.gamma_min >= br.gamma_max:
        errors.append(
            ScenarioError(
                "best_response.gamma_max",
                f"must exceed best_response.gamma_min = {br.gamma_min:g}, got {br.gamma_max:g}",
            )
        )
    if not bad("agents.count"):
        errors += br.cross_check(K)  # family, coalition, parameters, fixed options
    return errors


def _model_errors(sc: Scenario) -> list[ScenarioError]:
    """The model class fits the data's task (regression: ridge; classification: logistic)."""
    if sc.data.source == "paper-linear" and sc.model.kind != "ridge":
        return [
            ScenarioError(
                "model.kind",
                f"data.source 'paper-linear' is regression: use 'ridge', got {sc.model.kind!r}",
            )
        ]
    if sc.data.source in ("digits", "mnist", "fashion-mnist") and sc.model.kind != "logistic":
        return [
            ScenarioError(
                "model.kind",
                f"data.source {sc.data.source!r} is classification: use 'logistic',"
                f" got {sc.model.kind!r}",
            )
        ]
    return []
