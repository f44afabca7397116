"""Validation: raw TOML data checked key by key into a :class:`Scenario`, then across keys.

Every value is checked against its field's metadata (type, range, allowed
values); unknown keys get the closest valid name; rules that span several
keys run last. Every error is collected, given its origin or file line,
and reported in one pass (:func:`from_dict` raises them together).
"""

from __future__ import annotations

import dataclasses
import typing

from edgesim.agents import STRATEGIES, StrategyConfig
from edgesim.config import check_value, kinds_of, matches, suggest
from edgesim.errors import ScenarioError, ScenarioErrors
from edgesim.mechanisms import BUILTIN_MECHANISMS, MECHANISMS
from edgesim.mechanisms.base import CLIPS_GRADIENTS, CLIPS_LOSSES, secure_aggregation
from edgesim.mechanisms.parallel import HAS_PHASE2
from edgesim.plugins import register_from_spec
from edgesim.scenario.keys import Layer, _locate, _under
from edgesim.scenario.schema import AgentsConfig, Scenario
from edgesim.scenario.text import _or_list, _show, _suggest

#: Built-in strategy kinds and the extra keys each one uses.
_STRATEGY_PARAMS = {"truthful": (), "amplify": ("gamma",), "noisy": ("noise_std",), "opt-out": ()}


_kinds_of, _matches, _check_value = kinds_of, matches, check_value


def _unknown_key(prefix: str, key: str, fields) -> str:
    hint = suggest(key, fields, prefix)
    return f"unknown key{hint}" if hint else f"unknown key; keys here: {', '.join(fields)}"


def _build(cls, raw: dict, prefix: str, errors: list[ScenarioError]):
    """Build dataclass ``cls`` from ``raw``; bad values are reported and left at their defaults."""
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in raw.items():
        path = f"{prefix}{key}"
        if key not in fields:
            errors.append(ScenarioError(path, _unknown_key(prefix, key, fields)))
            continue
        f = fields[key]
        if f.metadata.get("section"):
            if not isinstance(value, dict):
                errors.append(ScenarioError(path, f"expected a table, got {_show(value)}"))
                continue
            kwargs[key] = _build(hints[key], value, f"{path}.", errors)
            continue
        if cls is AgentsConfig and key == "strategy":
            kwargs[key] = _build_strategies(value, path, errors)
            continue
        checked, problem = _check_value(path, value, f, hints[key])
        if problem:
            errors.append(ScenarioError(path, problem))
        else:
            kwargs[key] = checked
    return cls(**kwargs)


def _build_strategies(value, path: str, errors) -> list:
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        errors.append(
            ScenarioError(
                path, f"expected [[agents.strategy]] tables (agent, kind, ...), got {_show(value)}"
            )
        )
        return []
    out = []
    for i, table in enumerate(value):
        key = f"{path}[{i}]"
        for required, what in (
            ("agent", "the index (from 0) of the agent playing this strategy"),
            ("kind", f"the strategy: {', '.join(sorted(STRATEGIES))} or 'module:Class'"),
        ):
            if required not in table:
                errors.append(ScenarioError(f"{key}.{required}", f"missing; give {what}"))
        kind = table.get("kind")
        if isinstance(kind, str) and kind in _STRATEGY_PARAMS:
            for param, owner in (("gamma", "amplify"), ("noise_std", "noisy")):
                if param in table and param not in _STRATEGY_PARAMS[kind]:
                    errors.append(
                        ScenarioError(
                            f"{key}.{param}",
                            f"only used by kind = {owner!r}, not by kind = {kind!r}; remove it",
                        )
                    )
        out.append(_build(StrategyConfig, table, f"{key}.", errors))
    return out


def ensure_registered(sc: Scenario) -> None:
    """Register the ``"module:Name"`` strategy and mechanism kinds ``sc`` uses, in this process.

    Validation registers them where the scenario was loaded; a worker process
    that receives an already-validated scenario (a Dask worker, say) calls
    this before running it. Returns nothing; raises :class:`ScenarioError`
    when an import fails there.
    """
    errors = [
        *(
            err
            for i, s in enumerate(sc.agents.strategy)
            for err in register_from_spec(s.kind, f"agents.strategy[{i}].kind", STRATEGIES)
        ),
        *register_from_spec(sc.mechanism.kind, "mechanism.kind", MECHANISMS),
        *sc.network.register_plugins(),
    ]
    if errors:
        raise errors[0]


def _cross_check(sc: Scenario, errors: list[ScenarioError], bad=lambda *keys: False) -> None:
    """Append the errors of rules that span several keys.

    ``bad(*keys)`` is true when one of ``keys`` already has an error: a rule
    reading such a key is skipped (its value is only a stand-in default).
    """
    K = sc.agents.count
    if sc.output.per_agent == "parquet" and not bad("output.per_agent"):
        from edgesim.per_agent import parquet_problem

        problem = parquet_problem()
        if problem:
            errors.append(ScenarioError("output.per_agent", problem))
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
            hint = _suggest(s.kind, STRATEGIES)
            errors.append(
                ScenarioError(
                    f"{key}.kind",
                    f"unknown strategy {s.kind!r}{hint}; use {allowed} or 'module:Class'",
                )
            )
    if not any(bad(f"agents.strategy[{i}].agent") for i in range(len(sc.agents.strategy))):
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
    m = sc.mechanism
    if not bad("mechanism.kind") and m.kind not in MECHANISMS:
        if ":" in m.kind:
            errors.extend(register_from_spec(m.kind, "mechanism.kind", MECHANISMS))
        else:
            allowed = ", ".join(repr(k) for k in sorted(MECHANISMS))
            hint = _suggest(m.kind, MECHANISMS)
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
                    f" {_or_list([repr(k) for k in kinds])}, or leave it 'auto'",
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
                    f" {_or_list([repr(k) for k in HAS_PHASE2])}",
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
    br = sc.best_response
    if br.enabled and not bad("best_response"):
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
    if not bad("data.source", "model.kind"):
        if sc.data.source == "paper-linear" and sc.model.kind != "ridge":
            errors.append(
                ScenarioError(
                    "model.kind",
                    f"data.source 'paper-linear' is regression: use 'ridge', got {sc.model.kind!r}",
                )
            )
        if sc.data.source in ("digits", "mnist", "fashion-mnist") and sc.model.kind != "logistic":
            errors.append(
                ScenarioError(
                    "model.kind",
                    f"data.source {sc.data.source!r} is classification: use 'logistic',"
                    f" got {sc.model.kind!r}",
                )
            )
    if not bad("data", "agents.count"):
        errors.extend(sc.data.cross_check(K))
    if not bad("network", "agents.count"):
        errors.extend(sc.network.cross_check(K))


def _format_errors(
    errors: list[ScenarioError], layers: list[Layer], origins: dict[str, str]
) -> list[ScenarioError]:
    """Give each error its origin or file line, one-line text, and sort them by file and line."""
    rank = {id(layer): i for i, layer in enumerate(reversed(layers))}  # the scenario file first
    keyed = []
    for i, e in enumerate(errors):
        where = next((o for k, o in origins.items() if _under(e.key, k)), None)
        layer, line = (None, None) if where else _locate(layers, e.key)
        e.line = line
        e.file = layer.path if layer is not None and line is not None else None
        e.message = " ".join(str(e.message).split())
        if where:
            e.args = (f"{e.key} (from {where}): {e.message}",)
        elif line is not None:
            e.args = (f"{e.key} ({layer.label}line {line}): {e.message}",)
        else:
            e.args = (f"{e.key}: {e.message}",)
        keyed.append(((line is None, rank.get(id(layer), 0), line or 0, i), e))
    return [e for _, e in sorted(keyed, key=lambda t: t[0])]


def _validate(
    raw: dict, layers: list[Layer], origins: dict[str, str]
) -> tuple[Scenario, list[ScenarioError]]:
    """Build a Scenario from ``raw``; returns it and the formatted errors (empty when valid)."""
    errors: list[ScenarioError] = []
    sc = _build(Scenario, raw, "", errors)
    keys = [e.key for e in errors]
    _cross_check(sc, errors, lambda *ks: any(_under(k, e) for k in ks for e in keys))
    return sc, (_format_errors(errors, layers, origins) if errors else [])


def from_dict(raw: dict) -> Scenario:
    """Validate plain data into a :class:`Scenario`; raises ScenarioErrors with every problem.

    No ``include`` and no file lines (see :func:`load` for files and dicts with ``include``).
    """
    sc, errors = _validate(raw, [], {})
    if errors:
        raise ScenarioErrors(errors)
    return sc


def _no_line(err: ScenarioError) -> ScenarioError:
    """Mark ``err`` as having no line in the scenario file (``err.line = None``)."""
    err.line = None
    return err
