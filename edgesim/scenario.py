"""TOML scenarios loaded into validated frozen dataclasses.

Every key is checked against the metadata declared with
:func:`edgesim.config.option` (type, range, allowed values); unknown keys are
rejected with the closest valid name; every error in a file is reported in
one pass with its dotted key and, where it can be found, its line.
``--set a.b=value`` overrides any key by dotted path (the value parsed as TOML).
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import re
import tomllib
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgesim.agents import STRATEGIES, StrategyConfig
from edgesim.config import option, section
from edgesim.errors import ScenarioError, ScenarioErrors
from edgesim.learning.data import DataConfig
from edgesim.mechanisms import MECHANISMS
from edgesim.mechanisms.base import MechanismConfig


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
class NetworkConfig:
    """The ``[network]`` table (the in-memory driver only, until the network lands)."""

    fidelity: str = option(
        "none", "'none': the in-memory driver (no simulated time)", choices=("none",)
    )


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

    def to_dict(self) -> dict:
        """Return the resolved scenario (defaults filled in) as plain data."""
        return dataclasses.asdict(self)


# ---------------------------------------------------------------------------- validation


def _type_name(kinds) -> str:
    names = {int: "an integer", float: "a number", str: "a string", bool: "true/false"}
    names[list] = "a list"
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _kinds_of(annotation) -> tuple[type, ...]:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
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


def _check_value(key: str, value, f: dataclasses.Field, annotation) -> tuple[Any, str | None]:
    meta = f.metadata
    kinds = meta.get("kinds") or _kinds_of(annotation)
    if not any(_matches(value, k) for k in kinds):
        return None, f"expected {_type_name(kinds)}, got {value!r}"
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        if int not in kinds:
            value = float(value)
    choices = meta.get("choices")
    if isinstance(value, str) and choices is not None and value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        if any(k in kinds for k in (int, float)):
            allowed += " or a number"
        return None, f"{value!r} is not allowed; use {allowed}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for bound, test, word in (
            ("ge", lambda v, b: v >= b, ">="),
            ("gt", lambda v, b: v > b, ">"),
            ("le", lambda v, b: v <= b, "<="),
            ("lt", lambda v, b: v < b, "<"),
        ):
            b = meta.get(bound)
            if b is not None and not test(value, b):
                return None, f"must be {word} {b:g}, got {value!r}"
    return value, None


def _build(cls, raw: dict, prefix: str, errors: list[ScenarioError]):
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in raw.items():
        path = f"{prefix}{key}"
        if key not in fields:
            close = difflib.get_close_matches(key, list(fields), n=1)
            hint = f"; did you mean {prefix}{close[0]!r}?" if close else ""
            errors.append(ScenarioError(path, f"unknown key{hint}"))
            continue
        f = fields[key]
        if f.metadata.get("section"):
            if not isinstance(value, dict):
                errors.append(ScenarioError(path, f"expected a table, got {value!r}"))
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
        errors.append(ScenarioError(path, "expected [[agents.strategy]] tables"))
        return []
    out = []
    for i, table in enumerate(value):
        cfg = _build(StrategyConfig, table, f"{path}[{i}].", errors)
        out.append(cfg)
    return out


def resolve_object(spec: str, key: str):
    """Import ``"package.module:Name"`` and return the object; ScenarioError if it fails."""
    module, _, name = spec.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as err:
        raise ScenarioError(key, f"cannot import {spec!r}: {err}") from None


def _cross_check(sc: Scenario, errors: list[ScenarioError]) -> None:
    K = sc.agents.count
    for i, s in enumerate(sc.agents.strategy):
        key = f"agents.strategy[{i}]"
        if s.agent >= K:
            errors.append(
                ScenarioError(f"{key}.agent", f"must be < agents.count = {K}, got {s.agent}")
            )
        if s.kind not in STRATEGIES:
            if ":" in s.kind:
                try:
                    STRATEGIES[s.kind] = resolve_object(s.kind, f"{key}.kind")
                except ScenarioError as err:
                    errors.append(err)
            else:
                allowed = ", ".join(sorted(STRATEGIES))
                errors.append(
                    ScenarioError(f"{key}.kind", f"unknown strategy {s.kind!r}; use {allowed}")
                )
    agents = [s.agent for s in sc.agents.strategy]
    dup = sorted({a for a in agents if agents.count(a) > 1})
    if dup:
        errors.append(
            ScenarioError("agents.strategy", f"agent(s) {dup} given more than one strategy")
        )
    m = sc.mechanism
    if m.kind not in MECHANISMS:
        allowed = ", ".join(sorted(MECHANISMS))
        errors.append(
            ScenarioError("mechanism.kind", f"unknown mechanism {m.kind!r}; use {allowed}")
        )
    if isinstance(m.clusters, int) and m.clusters > K:
        errors.append(
            ScenarioError("mechanism.clusters", f"must be <= agents.count = {K}, got {m.clusters}")
        )
    br = sc.best_response
    if br.enabled:
        if br.agent >= K:
            errors.append(ScenarioError("best_response.agent", f"must be < agents.count = {K}"))
        if br.gamma_min >= br.gamma_max:
            errors.append(ScenarioError("best_response.gamma_max", "must exceed gamma_min"))
    if sc.data.source == "paper-linear" and sc.model.kind != "ridge":
        errors.append(
            ScenarioError("model.kind", "data.source 'paper-linear' is regression: use 'ridge'")
        )
    errors.extend(sc.data.cross_check(K))


def _line_of(text: str, key: str) -> int | None:
    """Best-effort line number (1-based) of a dotted key in TOML text."""
    parts = re.sub(r"\[\d+\]", "", key).split(".")
    lines = text.splitlines()
    table: list[str] = []
    for i, line in enumerate(lines, 1):
        s = line.strip()
        head = re.match(r"^\[\[?\s*([^\]]+?)\s*\]\]?", s)
        if head:
            table = head.group(1).split(".")
            continue
        m = re.match(r"^([A-Za-z0-9_.\-\"]+)\s*=", s)
        if m:
            full = table + m.group(1).replace('"', "").split(".")
            if full == parts or full == parts[: len(full)] and len(full) > len(table):
                return i
    return None


def set_dotted(raw: dict, dotted: str, value) -> None:
    """Set ``raw[a][b][c] = value`` for ``dotted = "a.b.c"``, creating tables as needed."""
    parts = dotted.split(".")
    node = raw
    for part in parts[:-1]:
        nxt = node.setdefault(part, {})
        if not isinstance(nxt, dict):
            raise ScenarioError(dotted, f"{part!r} is not a table")
        node = nxt
    node[parts[-1]] = value


def parse_override(text: str) -> tuple[str, Any]:
    """Parse ``key=value`` (value as TOML; a bare word is a string). Returns (key, value)."""
    if "=" not in text:
        raise ScenarioError("--set", f"expected key=value, got {text!r}")
    key, _, value = text.partition("=")
    key, value = key.strip(), value.strip()
    try:
        parsed = tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value
    return key, parsed


def from_dict(raw: dict, text: str = "") -> Scenario:
    """Validate plain data into a :class:`Scenario`; raises ScenarioErrors with every problem."""
    errors: list[ScenarioError] = []
    sc = _build(Scenario, raw, "", errors)
    if not errors:
        _cross_check(sc, errors)
    if errors:
        if text:
            for e in errors:
                line = _line_of(text, e.key)
                if line is not None:
                    e.args = (f"{e.key} (line {line}): {e.message}",)
        raise ScenarioErrors(errors)
    return sc


def load(path: str | Path | None, overrides: list[str] = (), seed: int | None = None) -> Scenario:
    """Load and validate a scenario file (``None``: the built-in quick start).

    Applies ``--set`` overrides and ``--seed``; raises :class:`ScenarioErrors`.
    """
    if path is None:
        text = (Path(__file__).parent / "quickstart.toml").read_text()
    else:
        p = Path(path)
        if not p.is_file():
            raise ScenarioErrors([ScenarioError("scenario", f"file not found: {p}")])
        text = p.read_text()
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ScenarioErrors([ScenarioError("scenario", f"invalid TOML: {err}")]) from None
    errors = []
    for item in overrides:
        try:
            key, value = parse_override(item)
            set_dotted(raw, key, value)
        except ScenarioError as err:
            errors.append(err)
    if seed is not None:
        raw["seed"] = seed
    if errors:
        raise ScenarioErrors(errors)
    return from_dict(raw, text)


def reference_rows(cls=Scenario, prefix: str = "") -> list[tuple[str, str, str, str]]:
    """Return (key, default, unit/allowed, doc) rows for every key, for the README reference."""
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
        if meta.get("choices"):
            allowed.append(" / ".join(str(c) for c in meta["choices"]))
        for bound, word in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            if meta.get(bound) is not None:
                allowed.append(f"{word} {meta[bound]:g}")
        rows.append((key, repr(default), "; ".join(allowed), meta.get("doc", "")))
        if cls is AgentsConfig and f.name == "strategy":
            rows.extend(reference_rows(StrategyConfig, f"{key}[]."))
    return rows
