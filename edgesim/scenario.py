"""TOML scenarios loaded into validated frozen dataclasses.

Every key is checked against the metadata declared with
:func:`edgesim.config.option` (type, range, allowed values); unknown keys are
rejected with the closest valid name; every error in a file is reported in
one pass with its dotted key and, where it can be found, its line.
``--set a.b=value`` overrides any key by dotted path (the value parsed as TOML).
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import hashlib
import itertools
import json
import math
import os
import re
import tomllib
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgesim.agents import BUILTIN_STRATEGIES, STRATEGIES, StrategyConfig
from edgesim.config import option, section
from edgesim.errors import ScenarioError, ScenarioErrors
from edgesim.learning.data import DataConfig
from edgesim.mechanisms import BUILTIN_MECHANISMS, MECHANISMS
from edgesim.mechanisms.base import CLIPS_GRADIENTS, CLIPS_LOSSES, MechanismConfig
from edgesim.network.config import NetworkConfig
from edgesim.plugins import register_from_spec


@dataclass(frozen=True)
class ModelConfig:
    """The ``[model]`` table."""

    kind: str = option("logistic", "model class", choices=("ridge", "logistic"))
    l2: float = option(0.01, "L2 regularisation l2 of the per-sample loss (= mu)", gt=0.0)
    intercept: bool = option(True, "append a constant 1 to x (regularised like the rest)")
    smoothness: str = option(
        "agent",
        "how L_g is bounded: 'agent' (max_k top eigenvalue of F_k's curvature) or 'sample'"
        " (the paper's per-sample bound, larger)",
        choices=("agent", "sample"),
    )


@dataclass(frozen=True)
class AgentsConfig:
    """The ``[agents]`` table and its ``[[agents.strategy]]`` entries."""

    count: int = option(10, "number of agents K", ge=1)
    weights: str = option(
        "equal", "weights p_k: 'equal' (1/K) or 'samples' (n_k/n)", choices=("equal", "samples")
    )
    strategy: list = option([], "[[agents.strategy]] tables: agent, kind, gamma, noise_std")


@dataclass(frozen=True)
class BestResponseConfig:
    """The ``[best_response]`` table: search one agent's best amplification factor gamma."""

    enabled: bool = option(False, "run the search after the main run")
    agent: int = option(0, "the deviating agent", ge=0)
    gamma_min: float = option(0.25, "lower end of the gamma bracket", gt=0.0)
    gamma_max: float = option(64.0, "upper end of the gamma bracket", gt=0.0)
    points: int = option(15, "log-spaced grid points before the bounded refinement", ge=3)
    objective: str = option(
        "overall",
        "what the agent minimises: 'overall' (P_k + F_k(w*), Definition 1), 'overall-test'"
        " (P_k + test loss) or 'test' (its test loss: expected risk estimate)",
        choices=("overall", "overall-test", "test"),
    )
    xtol: float = option(1e-3, "tolerance of the refinement, in log(gamma)", gt=0.0)


@dataclass(frozen=True)
class OutputConfig:
    """The ``[output]`` table."""

    local_baseline: bool = option(
        True, "train every agent's local model for local_loss (voluntary participation)"
    )
    model_weights: bool = option(
        False,
        "add model.weights: the final global model w* as nested lists in the model's shape"
        " ((d',) ridge, (d', classes) logistic; the intercept last); for dp-ffl the noisy release",
    )


@dataclass(frozen=True)
class AuditConfig:
    """The ``[audit]`` table: an empirical privacy audit (``edgesim audit``, :mod:`edgesim.audit`)."""

    runs: int = option(
        200,
        "runs per side (on D and on its neighbour D'); the first half of each side chooses"
        " the threshold, the second half measures it",
        ge=4,
    )
    confidence: float = option(
        0.95, "confidence of the Clopper-Pearson lower bound on epsilon", gt=0.0, lt=1.0
    )
    canary_norm: float = option(
        50.0,
        "the canary's per-sample gradient norm at w[0], in multiples of the clipping norm"
        " (of gradient_bound when clipping is off)",
        gt=0.0,
    )
    trial: int = option(
        -1,
        "set by edgesim audit: this run's trial, which seeds the server's noise afresh"
        " (-1: not an audit run)",
        ge=-1,
    )
    neighbour: bool = option(
        False, "set by edgesim audit: run on D' (the canary replaces one sample of D)"
    )


@dataclass(frozen=True)
class Scenario:
    """A whole validated scenario."""

    seed: int = option(0, "seed of every random stream (data, server, agents)", ge=0)
    name: str = option("", "a label copied to the output")
    data: DataConfig = section(DataConfig, "the dataset and how it is split")
    model: ModelConfig = section(ModelConfig, "the model and its loss")
    agents: AgentsConfig = section(AgentsConfig, "the agents and their strategies")
    mechanism: MechanismConfig = section(MechanismConfig, "the mechanism the server runs")
    network: NetworkConfig = section(NetworkConfig, "the network driving the mechanism")
    best_response: BestResponseConfig = section(BestResponseConfig, "a best-response search")
    output: OutputConfig = section(OutputConfig, "what is computed for the output")
    audit: AuditConfig = section(AuditConfig, "an empirical privacy audit (edgesim audit)")

    def to_dict(self) -> dict:
        """Return the resolved scenario (defaults filled in) as plain data."""
        return dataclasses.asdict(self)


# ---------------------------------------------------------------------------- validation

_TYPE_NAMES = {
    int: "an integer",
    float: "a number",
    str: "a string",
    bool: "true or false",
    list: "a list",
    dict: "a table",
}
#: Built-in strategy kinds and the extra keys each one uses.
_STRATEGY_PARAMS = {"truthful": (), "amplify": ("gamma",), "noisy": ("noise_std",), "opt-out": ()}


def _show(value) -> str:
    """Return ``value`` the way a scenario writes it (TOML-like), short."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, str):
        return repr(value)
    text = repr(value) if isinstance(value, (int, float, list)) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _or_list(items: list[str]) -> str:
    """Join ``["a", "b", "c"]`` as ``"a, b or c"``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _allowed(kinds, choices) -> str:
    """Say what a key accepts: its choices and the types it takes besides them."""
    items = [repr(c) for c in choices or ()]
    for k in kinds:
        if k is str and choices:
            continue  # the strings allowed are the choices
        if k is int and float in kinds:
            continue  # "a number" covers integers
        if k is bool:
            items = ["true", "false", *items] if choices else [*items, "true or false"]
            continue
        items.append(_TYPE_NAMES.get(k, getattr(k, "__name__", str(k))))
    return _or_list(items) if items else "anything"


def _kinds_of(annotation) -> tuple[type, ...]:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return tuple(a for a in typing.get_args(annotation) if isinstance(a, type))
    if isinstance(annotation, type):
        return (annotation,)
    return (origin,) if isinstance(origin, type) else (object,)


def _matches(value, kind) -> bool:
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _suggest(word: str, options) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest option, or ``""``."""
    close = difflib.get_close_matches(str(word), [str(o) for o in options], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _range_text(meta) -> str | None:
    lo = ("[", meta["ge"]) if meta.get("ge") is not None else ("(", meta.get("gt"))
    hi = ("]", meta["le"]) if meta.get("le") is not None else (")", meta.get("lt"))
    if lo[1] is not None and hi[1] is not None:
        return f"in {lo[0]}{lo[1]:g}, {hi[1]:g}{hi[0]}"
    if lo[1] is not None:
        return f"{'>=' if lo[0] == '[' else '>'} {lo[1]:g}"
    if hi[1] is not None:
        return f"{'<=' if hi[0] == ']' else '<'} {hi[1]:g}"
    return None


def _check_value(key: str, value, f: dataclasses.Field, annotation) -> tuple[Any, str | None]:
    """Check one value against its field's metadata; returns (value, None) or (None, problem)."""
    meta = f.metadata
    kinds = meta.get("kinds") or _kinds_of(annotation)
    choices = meta.get("choices")
    if not any(_matches(value, k) for k in kinds):
        return None, f"expected {_allowed(kinds, choices)}, got {_show(value)}"
    if float in kinds and int not in kinds and _matches(value, int):
        value = float(value)
    if isinstance(value, str) and choices is not None and value not in choices:
        hint = _suggest(value, choices)
        return None, f"{_show(value)} is not allowed{hint}; use {_allowed(kinds, choices)}"
    if isinstance(value, float) and not math.isfinite(value):
        return None, f"must be a finite number, got {_show(value)}"
    if _matches(value, float):
        ok = all(
            meta.get(bound) is None or test(value, meta[bound])
            for bound, test in (
                ("ge", lambda v, b: v >= b),
                ("gt", lambda v, b: v > b),
                ("le", lambda v, b: v <= b),
                ("lt", lambda v, b: v < b),
            )
        )
        if not ok:
            return None, f"must be {_range_text(meta)}, got {_show(value)}"
    return value, None


def _unknown_key(prefix: str, key: str, fields) -> str:
    close = difflib.get_close_matches(key, list(fields), n=1, cutoff=0.6)
    if close:
        return f"unknown key; did you mean '{prefix}{close[0]}'?"
    return f"unknown key; keys here: {', '.join(fields)}"


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
            if K >= 1 and out >= set(range(K)):
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
        if sc.data.source in ("digits", "mnist") and sc.model.kind != "logistic":
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


# ---------------------------------------------------------------------------- key paths


_PART = re.compile(r"^([A-Za-z0-9_\-]+)((?:\[\d+\])*)$")
_KEY_TOKEN = re.compile(r'"([^"]*)"|\'([^\']*)\'|([A-Za-z0-9_\-]+)')
_HEADER = re.compile(r"^\[(\[?)\s*([^\[\]]+?)\s*\]\]?\s*(?:#.*)?$")
_ASSIGN = re.compile(
    r"""^((?:[A-Za-z0-9_\-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_\-]+|"[^"]*"|'[^']*'))*)\s*="""
)


def _components(dotted: str) -> list[tuple[str, int | None]] | None:
    """Split ``"agents.strategy[1].kind"`` into ``[("agents", None), ("strategy", 1), ("kind", None)]``.

    Returns None when ``dotted`` is not a key path (only one index per part).
    """
    out = []
    for part in dotted.split("."):
        m = _PART.match(part.strip())
        if not m:
            return None
        idx = re.findall(r"\[(\d+)\]", m.group(2))
        if len(idx) > 1:
            return None
        out.append((m.group(1), int(idx[0]) if idx else None))
    return out


def _names(key_text: str) -> list[str]:
    return ["".join(t) for t in _KEY_TOKEN.findall(key_text)]


def _prefix_of(have: list, target: list) -> bool:
    """True when the path ``have`` names ``target`` or one of its parents."""
    if len(have) > len(target):
        return False
    for (hn, hi), (tn, ti) in zip(have, target, strict=False):
        if hn != tn or (hi is not None and ti is not None and hi != ti):
            return False
    return True


def _line_of(text: str, key: str) -> int | None:
    """Best-effort line number (1-based) of a dotted key (``a.b[1].c``) in TOML text.

    Tracks ``[table]`` and ``[[array.of.tables]]`` headers (counting the
    array entries) and dotted or inline keys. A key that is missing from an
    entry of an array of tables is placed at that entry's header.
    """
    target = _components(key)
    if target is None:
        return None
    table: list[tuple[str, int | None]] = []
    counts: dict[tuple[str, ...], int] = {}
    header_hit = None
    for i, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        head = _HEADER.match(s)
        if head:
            names = _names(head.group(2))
            if head.group(1):  # [[array]]: a new entry
                counts[tuple(names)] = counts.get(tuple(names), 0) + 1
            table = [
                (n, counts[tuple(names[: j + 1])] - 1 if tuple(names[: j + 1]) in counts else None)
                for j, n in enumerate(names)
            ]
            if len(table) == len(target) and _prefix_of(table, target):
                return i  # the key is this table (an unknown section, say)
            if any(ix is not None for _, ix in table) and table == target[: len(table)]:
                header_hit = i
            continue
        m = _ASSIGN.match(s)
        if m:
            full = table + [(n, None) for n in _names(m.group(1))]
            if len(full) > len(table) and _prefix_of(full, target):
                return i
    return header_hit


def _under(key: str, parent: str) -> bool:
    """True when ``key`` is ``parent`` or lies inside it (``parent.x``, ``parent[0]``)."""
    return key == parent or key.startswith((parent + ".", parent + "["))


def set_dotted(raw: dict, dotted: str, value) -> None:
    """Set ``raw[a][b][c] = value`` for ``dotted = "a.b.c"``, creating tables as needed.

    A part may index an array of tables: ``agents.strategy[0].gamma``; index
    ``len`` appends a new table. Raises :class:`ScenarioError` for a bad path.
    """
    parts = _components(dotted)
    if not parts or any(not n for n, _ in parts):
        raise ScenarioError(
            "--set", f"bad key {dotted!r}; use a dotted path such as agents.count or a.b[0].c"
        )
    node = raw
    walked = []
    for j, (name, idx) in enumerate(parts):
        last = j == len(parts) - 1
        walked.append(name if idx is None else f"{name}[{idx}]")
        if idx is None:
            if last:
                node[name] = value
                return
            nxt = node.setdefault(name, {})
            if not isinstance(nxt, dict):
                raise ScenarioError(dotted, f"{'.'.join(walked)} is {_show(nxt)}, not a table")
            node = nxt
            continue
        seq = node.setdefault(name, [])
        if isinstance(seq, dict):
            seq = node[name] = [seq]
        if not isinstance(seq, list):
            raise ScenarioError(dotted, f"{name} is {_show(seq)}, not an array of tables")
        if idx > len(seq):
            raise ScenarioError(
                dotted, f"{name} has {len(seq)} entries; use an index 0..{len(seq)}"
            )
        if idx == len(seq):
            seq.append({})
        if last:
            seq[idx] = value
            return
        if not isinstance(seq[idx], dict):
            raise ScenarioError(dotted, f"{'.'.join(walked)} is {_show(seq[idx])}, not a table")
        node = seq[idx]


def parse_override(text: str) -> tuple[str, Any]:
    """Parse ``key=value`` (value as TOML; a bare word is a string). Returns (key, value)."""
    key, eq, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not eq or not key:
        raise ScenarioError("--set", f"expected KEY=VALUE (e.g. agents.count=20), got {text!r}")
    try:
        parsed = tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value
    return key, parsed


@dataclass
class Layer:
    """One TOML file of a scenario: its path, text and own keys (``include`` removed).

    ``label`` is how errors name the file: ``""`` for the scenario itself,
    ``"base.toml "`` (relative to the scenario's folder) for an included one.
    """

    path: Path | None
    text: str
    raw: dict
    label: str = ""


def _depth(raw, parts) -> int:
    """How many leading parts of a key path ``raw`` holds (0: none)."""
    node, depth = raw, 0
    for name, idx in parts:
        if not isinstance(node, dict) or name not in node:
            break
        node = node[name]
        if idx is not None:
            if not isinstance(node, list) or idx >= len(node):
                break
            node = node[idx]
        depth += 1
    return depth


def _locate(layers: list[Layer], key: str) -> tuple[Layer | None, int | None]:
    """Return the file a key's value came from and its line there (best effort).

    The file holding the longest part of the key path wins; on a tie the
    later (overriding) file. Returns ``(None, None)`` when no file names it.
    """
    parts = _components(key)
    if not layers or parts is None:
        return None, None
    best, best_depth = None, 0
    for layer in layers:
        d = _depth(layer.raw, parts)
        if d >= best_depth and d > 0:
            best, best_depth = layer, d
    if best is None:
        return None, None
    return best, (_line_of(best.text, key) if best.text else None)


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


# ---------------------------------------------------------------------------- files and include

#: The scenario ``edgesim run`` runs without a file.
QUICKSTART = Path(__file__).parent / "quickstart.toml"


def shipped_scenarios() -> dict[str, Path]:
    """Return the shipped scenarios, ``{name: path}``, sorted by name.

    They live in the ``scenarios/`` folder of the source tree, found next to
    the installed package (an editable install: ``pip install -e .``). The
    built-in quick start (package data) is always there as ``quickstart``.
    """
    found = {"quickstart": QUICKSTART}
    folder = Path(__file__).resolve().parent.parent / "scenarios"
    if folder.is_dir():
        found.update({p.stem: p for p in folder.glob("*.toml")})
    return dict(sorted(found.items()))


def describe(path: Path, width: int = 110) -> str:
    """Return the first paragraph of a scenario's header comment, cut to ``width`` characters.

    Returns ``""`` when the file has no header comment or cannot be read.
    """
    words: list[str] = []
    try:
        for line in path.read_text(encoding="utf-8").splitlines():
            s = line.strip()
            if not s.startswith("#"):
                break
            s = s.lstrip("#").strip()
            if not s:
                if words:
                    break
                continue
            words.extend(s.split())
    except (OSError, UnicodeDecodeError):
        return ""
    text = " ".join(words)
    if len(text) > width:
        text = text[: width - 3].rsplit(" ", 1)[0] + "..."
    return text


def resolve_path(path: str | Path | None) -> Path:
    """Return the file a scenario argument names: a path, or a shipped scenario's name.

    ``None`` is the built-in quick start. A path that does not exist but is
    the name of a shipped scenario (``paper-fig1``) names that one; otherwise
    the path is returned as given (and loading reports it missing).
    """
    if path is None:
        return QUICKSTART
    p = Path(path)
    if not p.exists() and p.parent == Path(".") and p.suffix in ("", ".toml"):
        shipped = shipped_scenarios()
        if p.stem in shipped:
            return shipped[p.stem]
    return p


def _read_toml(p: Path) -> tuple[str, dict]:
    """Read and parse one TOML file; raises ScenarioError (key ``scenario``, line if known)."""
    if not p.exists():
        raise _no_line(ScenarioError("scenario", f"file not found: {p}"))
    if not p.is_file():
        raise _no_line(ScenarioError("scenario", f"{p} is not a file"))
    try:
        text = p.read_bytes().decode("utf-8")
    except OSError as err:
        raise _no_line(ScenarioError("scenario", f"cannot read {p}: {err.strerror}")) from None
    except UnicodeDecodeError as err:
        raise _no_line(
            ScenarioError("scenario", f"{p} is not UTF-8 text (byte {err.start})")
        ) from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        msg = " ".join(str(err).split())
        bad = ScenarioError("scenario", f"invalid TOML in {p}: {msg}")
        at = re.search(r"at line (\d+)", msg)
        bad.line = int(at.group(1)) if at else None
        raise bad from None


def _include_layers(
    text: str, raw: dict, here: Path | None, label: str, chain: tuple[Path, ...], top: Path
) -> tuple[list[Layer], list[ScenarioError]]:
    """Resolve ``include`` in one file's ``raw`` (removed from it), depth first.

    Returns the layers in merge order (included files first, this file last)
    and the errors found (missing files, cycles, bad TOML), each naming the
    including file's line.
    """
    errors: list[ScenarioError] = []
    layers: list[Layer] = []
    names = raw.pop("include", None)
    if names is not None:
        where = _line_of(text, "include")
        spot = f"{label}line {where}" if where else label.strip()

        def bad(message: str) -> None:
            err = ScenarioError("include", message)
            err.line = where
            err.args = (f"include ({spot}): {message}" if spot else f"include: {message}",)
            errors.append(err)

        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            bad(f"expected a file name or a list of file names, got {_show(names)}")
            names = []
        base = here.parent if here is not None else Path.cwd()
        for name in names:
            q = (base / name).resolve()
            if q in chain:
                cycle = " -> ".join(_rel(c, top) for c in (*chain[chain.index(q) :], q))
                bad(f"include cycle: {cycle}")
                continue
            try:
                sub_text, sub_raw = _read_toml(q)
            except ScenarioError as err:
                bad(f"{name}: {err.message}" + (f" (line {err.line})" if err.line else ""))
                continue
            sub, sub_errors = _include_layers(
                sub_text, sub_raw, q, f"{_rel(q, top)} ", (*chain, q), top
            )
            layers.extend(sub)
            errors.extend(sub_errors)
    layers.append(Layer(here, text, raw, label))
    return layers, errors


def _rel(p: Path, top: Path) -> str:
    """Return ``p`` relative to the folder of the scenario file ``top`` when possible."""
    try:
        return os.path.relpath(p, top.parent)
    except ValueError:
        return str(p)


def merge(base: dict, over: dict) -> dict:
    """Return ``base`` updated key by key with ``over`` (both left unchanged).

    A table in ``over`` overrides only the keys it names, recursively; any
    other value, an array of tables included, replaces the base's value.
    """
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


@dataclass
class Prepared:
    """A scenario read and merged but not yet validated: what :func:`load` and sweeps share.

    ``raw``: the merged keys with overrides applied, ``sweep`` removed;
    ``sweep``: the ``[sweep]`` table (None when absent); ``layers``: the files;
    ``origins``: keys set by ``--set``/``--seed``; ``sweep_overrides``:
    ``--set sweep.KEY=...`` items, ``(key after "sweep.", value)``.
    """

    raw: dict
    sweep: Any
    layers: list[Layer]
    origins: dict[str, str]
    sweep_overrides: list[tuple[str, Any]]
    path: Path | None = None


def prepare(
    source: str | Path | dict | None,
    overrides: list[str] | dict | tuple = (),
    seed: int | None = None,
) -> Prepared:
    """Read a scenario (a file, a shipped name, ``None`` or a dict), resolve ``include``, apply overrides.

    ``overrides``: ``["a.b=value", ...]`` (values parsed as TOML) or a dict
    ``{"a.b": value}``. Raises :class:`ScenarioErrors` for unreadable files,
    include problems and malformed overrides; the keys are validated later.
    """
    if isinstance(source, dict):
        raw = copy.deepcopy(source)
        layers, errors = _include_layers("", raw, None, "", (), Path.cwd() / "scenario")
        path = None
    else:
        path = resolve_path(source)
        label = "quickstart.toml " if source is None else ""
        try:
            text, raw = _read_toml(path)
        except ScenarioError as err:
            raise ScenarioErrors([err]) from None
        top = path.resolve()
        layers, errors = _include_layers(text, raw, path, label, (top,), path)
    merged: dict = {}
    for layer in layers:
        merged = merge(merged, layer.raw)
    if errors:
        raise ScenarioErrors(errors)
    sweep = merged.pop("sweep", None)
    origins: dict[str, str] = {}
    sweep_overrides: list[tuple[str, Any]] = []
    items = list(overrides.items()) if isinstance(overrides, dict) else list(overrides)
    for item in items:
        try:
            key, value = parse_override(item) if isinstance(item, str) else item
            if key == "sweep" or key.startswith("sweep."):
                sweep_overrides.append((key[len("sweep.") :], value))
                continue
            set_dotted(merged, key, value)
            origins[key] = "--set"
        except ScenarioError as err:
            errors.append(_no_line(err))
    if seed is not None:
        merged["seed"] = seed
        origins["seed"] = "--seed"
    if errors:
        raise ScenarioErrors(errors)
    return Prepared(merged, sweep, layers, origins, sweep_overrides, path)


def load(
    path: str | Path | dict | None,
    overrides: list[str] | dict | tuple = (),
    seed: int | None = None,
) -> Scenario:
    """Load and validate a scenario file (``None``: the built-in quick start; or a dict).

    Resolves ``include``, applies ``--set`` overrides and ``--seed``; raises
    :class:`ScenarioErrors` listing every problem found. A ``[sweep]`` table
    is checked for its shape and otherwise ignored: this is the scenario
    without the sweep (see :func:`load_sweep`).
    """
    return load_prepared(prepare(path, overrides, seed))


def load_prepared(prep: Prepared) -> Scenario:
    """Validate a scenario :func:`prepare` returned; as :func:`load`, without reading it again."""
    errors: list[ScenarioError] = []
    if prep.sweep is not None or prep.sweep_overrides:
        _, errors = _sweep_axes(prep)
    sc, more = _validate(prep.raw, prep.layers, prep.origins)
    if errors or more:
        raise ScenarioErrors(errors + more)
    return sc


# ---------------------------------------------------------------------------- sweeps

#: The most runs one sweep may expand to.
MAX_RUNS = 1_000_000


@dataclass(frozen=True)
class Axis:
    """One dimension of a sweep: ``keys`` varied together through ``points``.

    A plain ``[sweep]`` key is an axis of one key; a ``[[sweep.zip]]`` table
    is one axis of several keys. ``points[i]`` holds one value per key.
    """

    keys: tuple[str, ...]
    points: tuple[tuple, ...]
    zip: bool = False


@dataclass(frozen=True)
class SweepRun:
    """One run of a sweep: its position, the swept values and the validated scenario."""

    index: int
    values: dict
    scenario: Scenario

    @functools.cached_property
    def run_id(self) -> str:
        """Return the run's id: 16 hex digits of a SHA-256 of the resolved scenario (seed included).

        Computed on first access, then cached (the scenario is frozen).
        """
        return run_id(self.scenario)


@dataclass(frozen=True)
class SweepPlan:
    """A scenario's runs: the cartesian product of its axes (one run when it has no sweep).

    ``path``: the scenario file (None for a dict); ``files``: ``(path, text)``
    of it and of every file it includes, for the sweep's manifest.
    """

    axes: tuple[Axis, ...]
    runs: tuple[SweepRun, ...]
    path: Path | None = None
    files: tuple[tuple[str, str], ...] = ()

    @property
    def keys(self) -> list[str]:
        """Return the swept keys in axis order."""
        return [k for axis in self.axes for k in axis.keys]


def run_id(sc: Scenario) -> str:
    """Return 16 hex digits of the SHA-256 of ``sc``'s resolved keys (canonical JSON).

    Two runs share an id exactly when every key, defaults and seed included,
    is equal; sweeps resume by it.
    """
    text = json.dumps(sc.to_dict(), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _sweep_line(layers: list[Layer], target: str, zip_index: int | None = None):
    """Return ``(label, line)`` of a sweep key (``"agents.count"``) in the files, or None."""
    for layer in reversed(layers):
        table, zips = "", 0
        for i, line in enumerate(layer.text.splitlines(), 1):
            s = line.strip()
            head = _HEADER.match(s)
            if head:
                table = ".".join(_names(head.group(2)))
                if head.group(1) and table == "sweep.zip":
                    zips += 1
                continue
            m = _ASSIGN.match(s)
            if not m:
                continue
            full = ".".join(x for x in (table, ".".join(_names(m.group(1)))) if x)
            if zip_index is None:
                if full == f"sweep.{target}" or (table == "" and full == target == "sweep"):
                    return layer.label, i
            elif table == "sweep.zip" and zips - 1 == zip_index and full == f"sweep.zip.{target}":
                return layer.label, i
    return None


def _flatten_sweep(table: dict, prefix: str, out: dict, errors: list, where: str) -> None:
    """Collect ``{dotted key: list of values}`` from a sweep table; nested tables join keys."""
    for name, value in table.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict):
            _flatten_sweep(value, f"{key}.", out, errors, where)
        elif isinstance(value, list):
            out[key] = value
        else:
            errors.append(
                ScenarioError(
                    f"{where}{key}", f"expected a list of values, e.g. [1, 2], got {_show(value)}"
                )
            )


def _canon(value) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _sweep_axes(prep: Prepared) -> tuple[list[Axis], list[ScenarioError]]:
    """Check the shape of the ``[sweep]`` table; returns its axes and the errors found."""
    errors: list[ScenarioError] = []
    table = prep.sweep if prep.sweep is not None else {}
    if not isinstance(table, dict):
        err = ScenarioError("sweep", f"expected a table of KEY = [values], got {_show(table)}")
        errors.append(err)
        table = {}
    table = dict(table)
    zips = table.pop("zip", [])
    plain: dict[str, list] = {}
    _flatten_sweep(table, "", plain, errors, "sweep.")
    zip_over = {"zip": zips}
    for key, value in prep.sweep_overrides:
        try:
            if key == "zip" or key.startswith(("zip.", "zip[")):
                set_dotted(zip_over, key, value)
            elif not key:
                raise ScenarioError("sweep", "use --set sweep.KEY=[values]")
            else:
                plain.pop(key, None)
                plain[key] = value if isinstance(value, list) else [value]
        except ScenarioError as err:
            errors.append(err)
    zips = zip_over["zip"]
    if isinstance(zips, dict):
        zips = [zips]
    if not isinstance(zips, list) or not all(isinstance(z, dict) for z in zips):
        errors.append(
            ScenarioError("sweep.zip", f"expected [[sweep.zip]] tables, got {_show(zips)}")
        )
        zips = []
    axes: list[Axis] = []
    seen: dict[str, str] = {}

    def claim(key: str, where: str) -> bool:
        if key == "sweep" or key.startswith("sweep.") or key == "include":
            errors.append(ScenarioError(where, f"{key!r} cannot be swept"))
            return False
        if key in seen:
            errors.append(ScenarioError(where, f"{key} is swept twice (also {seen[key]})"))
            return False
        seen[key] = where
        return True

    for key, values in plain.items():
        where = f"sweep.{key}"
        if not claim(key, where):
            continue
        if not values:
            errors.append(ScenarioError(where, "empty list: give at least one value"))
            continue
        dup = _duplicates(values)
        if dup:
            errors.append(ScenarioError(where, f"value {_show(dup)} is given twice"))
            continue
        axes.append(Axis((key,), tuple((v,) for v in values)))
    for i, group in enumerate(zips):
        flat: dict[str, list] = {}
        _flatten_sweep(group, "", flat, errors, f"sweep.zip[{i}].")
        if not flat:
            errors.append(ScenarioError(f"sweep.zip[{i}]", "empty: give KEY = [values] pairs"))
            continue
        lengths = {len(v) for v in flat.values()}
        if len(lengths) > 1:
            sizes = ", ".join(f"{k} has {len(v)}" for k, v in flat.items())
            errors.append(
                ScenarioError(f"sweep.zip[{i}]", f"lists must have equal lengths: {sizes}")
            )
            continue
        if lengths == {0}:
            errors.append(ScenarioError(f"sweep.zip[{i}]", "empty lists: give values"))
            continue
        if not all(claim(k, f"sweep.zip[{i}].{k}") for k in list(flat)):
            continue
        points = tuple(zip(*flat.values(), strict=True))
        dup = _duplicates([list(p) for p in points])
        if dup:
            errors.append(ScenarioError(f"sweep.zip[{i}]", f"point {_show(dup)} is given twice"))
            continue
        axes.append(Axis(tuple(flat), points, zip=True))
    total = math.prod(len(a.points) for a in axes)
    if total > MAX_RUNS:
        errors.append(ScenarioError("sweep", f"{total} runs; at most {MAX_RUNS} per sweep"))
    for e in errors:
        _place_sweep_error(e, prep.layers)
    return axes, errors


def _duplicates(values: list):
    seen = set()
    for v in values:
        c = _canon(v)
        if c in seen:
            return v
        seen.add(c)
    return None


def _place_sweep_error(e: ScenarioError, layers: list[Layer]) -> None:
    """Give a sweep-shape error its file line (when found) and one-line text."""
    m = re.match(r"^sweep\.zip\[(\d+)\](?:\.(.*))?$", e.key)
    if m:
        hit = _sweep_line(layers, m.group(2) or "", int(m.group(1))) if m.group(2) else None
        if hit is None:
            hit = _zip_header_line(layers, int(m.group(1)))
    else:
        hit = _sweep_line(layers, e.key[len("sweep.") :]) if e.key.startswith("sweep.") else None
    e.message = " ".join(str(e.message).split())
    e.line = hit[1] if hit else None
    if hit:
        e.args = (f"{e.key} ({hit[0]}line {hit[1]}): {e.message}",)
    else:
        e.args = (f"{e.key}: {e.message}",)


def _zip_header_line(layers: list[Layer], index: int):
    for layer in reversed(layers):
        count = 0
        for i, line in enumerate(layer.text.splitlines(), 1):
            head = _HEADER.match(line.strip())
            if head and head.group(1) and ".".join(_names(head.group(2))) == "sweep.zip":
                if count == index:
                    return layer.label, i
                count += 1
    return None


def load_sweep(
    path: str | Path | dict | None,
    overrides: list[str] | dict | tuple = (),
    seed: int | None = None,
) -> SweepPlan:
    """Load a scenario and expand its ``[sweep]`` table into validated runs.

    The runs are the cartesian product of the axes (first axis slowest),
    each a copy of the scenario with the swept keys set. Every run is
    validated; raises :class:`ScenarioErrors` with every problem, each
    reported once (an error found in only some runs names how many and one
    such run's values). A scenario without ``[sweep]`` is one run.
    """
    prep = prepare(path, overrides, seed)
    axes, errors = _sweep_axes(prep)
    if errors:
        raise ScenarioErrors(errors)
    swept = [k for a in axes for k in a.keys]
    for key in prep.origins:
        for s in swept:
            if _under(s, key) or _under(key, s):
                errors.append(
                    _no_line(
                        ScenarioError(
                            key,
                            f"is swept ({s}); override the sweep instead: --set sweep.{s}=[...]",
                        )
                    )
                )
    if errors:
        raise ScenarioErrors(errors)
    origins = dict(prep.origins)
    sweep_lines: dict[str, int] = {}
    for s in swept:
        hit = _sweep_line(prep.layers, s)
        origins[s] = f"[sweep] {hit[0]}line {hit[1]}" if hit else "[sweep]"
        if hit:
            sweep_lines[s] = hit[1]

    def line_of(e: ScenarioError) -> int | None:
        if e.line is not None:
            return e.line
        return next((ln for s, ln in sweep_lines.items() if _under(e.key, s)), None)

    runs: list[SweepRun] = []
    found: dict[str, tuple[ScenarioError, list[int], dict]] = {}
    total = math.prod(len(a.points) for a in axes)
    for index, choice in enumerate(itertools.product(*(a.points for a in axes))):
        raw = copy.deepcopy(prep.raw)
        values: dict = {}
        problems: list[ScenarioError] = []
        for axis, point in zip(axes, choice, strict=True):
            for key, value in zip(axis.keys, point, strict=True):
                values[key] = value
                try:
                    set_dotted(raw, key, copy.deepcopy(value))
                except ScenarioError as err:
                    err.key = f"sweep.{key}" if err.key in (key, "--set") else err.key
                    problems.append(err)
        if problems:
            for e in problems:
                _place_sweep_error(e, prep.layers)
        else:
            sc, problems = _validate(raw, prep.layers, origins)
        for e in problems:
            text = str(e)
            if text not in found:
                found[text] = (e, [], values)
            found[text][1].append(index)
        if not problems:
            runs.append(SweepRun(index, values, sc))
    if found:
        out = []
        ordered = sorted(
            found.values(), key=lambda t: (line_of(t[0]) is None, line_of(t[0]) or 0, t[1][0])
        )
        for e, where, values in ordered:
            if len(where) < total:
                shown = ", ".join(f"{k}={_show(v)}" for k, v in values.items())
                e.args = (f"{e.args[0]} [in {len(where)} of {total} runs, e.g. {shown}]",)
            out.append(e)
        raise ScenarioErrors(out)
    files = tuple((str(layer.path), layer.text) for layer in prep.layers if layer.path)
    return SweepPlan(tuple(axes), tuple(runs), prep.path, files)


def _default_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


#: Keys with no default: a table that omits them is an error.
_REQUIRED = {(StrategyConfig, "agent"), (StrategyConfig, "kind")}


def reference_rows(cls=Scenario, prefix: str = "") -> list[tuple[str, str, str, str]]:
    """Return (key, default, unit/allowed, doc) rows for every key, for docs/reference.md.

    One row per leaf key (sections are walked; ``[[agents.strategy]]`` keys
    appear as ``agents.strategy[].agent``). The default is written as in TOML;
    required keys show ``(required)``.
    """
    rows = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        key = f"{prefix}{f.name}"
        if f.metadata.get("section"):
            rows.extend(reference_rows(hints[f.name], f"{key}."))
            continue
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        meta = f.metadata
        allowed = []
        if meta.get("unit"):
            allowed.append(meta["unit"])
        kinds = meta.get("kinds") or _kinds_of(hints[f.name])
        choices = list(meta.get("choices") or ())
        if (cls, f.name) == (MechanismConfig, "kind"):
            choices = [*BUILTIN_MECHANISMS, "module:function"]
        elif (cls, f.name) == (StrategyConfig, "kind"):
            choices = [*BUILTIN_STRATEGIES, "module:Class"]
        if bool in kinds:
            choices = ["true", "false", *choices]
        if choices:
            allowed.append(" / ".join(str(c) for c in choices))
        rng = _range_text(meta)
        if rng:
            allowed.append(rng)
        shown = "(required)" if (cls, f.name) in _REQUIRED else _default_text(default)
        rows.append((key, shown, "; ".join(allowed), meta.get("doc", "")))
        if cls is AgentsConfig and f.name == "strategy":
            rows.extend(reference_rows(StrategyConfig, f"{key}[]."))
    return rows


def reference_markdown() -> str:
    """Return the scenario-key table of docs/reference.md (Markdown), generated from the dataclasses."""
    lines = ["| key | default | unit / allowed | meaning |", "|---|---|---|---|"]
    for key, default, allowed, doc in reference_rows():
        cells = [f"`{key}`", f"`{default}`", allowed, doc]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(reference_markdown(), end="")
