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
import math
import re
import tomllib
import types
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


def resolve_object(spec: str, key: str):
    """Import ``"package.module:Name"`` and return the object; ScenarioError if it fails."""
    module, _, name = spec.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except Exception as err:  # ImportError, AttributeError, or the module's own failure
        detail = " ".join(f"{type(err).__name__}: {err}".split())
        raise ScenarioError(key, f"cannot import {spec!r} ({detail})") from None


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
            try:
                STRATEGIES[s.kind] = resolve_object(s.kind, f"{key}.kind")
            except ScenarioError as err:
                errors.append(err)
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
        allowed = ", ".join(repr(k) for k in sorted(MECHANISMS))
        hint = _suggest(m.kind, MECHANISMS)
        errors.append(
            ScenarioError("mechanism.kind", f"unknown mechanism {m.kind!r}{hint}; use {allowed}")
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


def from_dict(
    raw: dict, text: str = "", origins: dict[str, str] | None = None, source: str = ""
) -> Scenario:
    """Validate plain data into a :class:`Scenario`; raises ScenarioErrors with every problem.

    ``text``: the TOML it came from, to give each error its line (sorted by
    line). ``origins``: dotted keys set elsewhere (``{"seed": "--seed"}``),
    whose errors name that origin instead of a line.
    """
    errors: list[ScenarioError] = []
    sc = _build(Scenario, raw, "", errors)
    keys = [e.key for e in errors]
    _cross_check(sc, errors, lambda *ks: any(_under(k, e) for k in ks for e in keys))
    if errors:
        origins = origins or {}
        for e in errors:
            where = next((o for k, o in origins.items() if _under(e.key, k)), None)
            line = None if where or not text else _line_of(text, e.key)
            e.line = line
            e.message = " ".join(str(e.message).split())
            if where:
                e.args = (f"{e.key} (from {where}): {e.message}",)
            elif line is not None:
                e.args = (f"{e.key} ({source}line {line}): {e.message}",)
            else:
                e.args = (f"{e.key}: {e.message}",)
        order = sorted(
            range(len(errors)),
            key=lambda i: (errors[i].line is None, errors[i].line or 0, i),
        )
        raise ScenarioErrors([errors[i] for i in order])
    return sc


def _no_line(err: ScenarioError) -> ScenarioError:
    """Mark ``err`` as having no line in the scenario file (``err.line = None``)."""
    err.line = None
    return err


def load(path: str | Path | None, overrides: list[str] = (), seed: int | None = None) -> Scenario:
    """Load and validate a scenario file (``None``: the built-in quick start).

    Applies ``--set`` overrides and ``--seed``; raises :class:`ScenarioErrors`
    listing every problem found.
    """
    if path is None:
        p = Path(__file__).parent / "quickstart.toml"
        source = "quickstart.toml "
    else:
        p = Path(path)
        source = ""
        if not p.exists():
            raise ScenarioErrors([_no_line(ScenarioError("scenario", f"file not found: {p}"))])
        if not p.is_file():
            raise ScenarioErrors([_no_line(ScenarioError("scenario", f"{p} is not a file"))])
    try:
        text = p.read_bytes().decode("utf-8")
    except OSError as err:
        raise ScenarioErrors(
            [_no_line(ScenarioError("scenario", f"cannot read {p}: {err.strerror}"))]
        ) from None
    except UnicodeDecodeError as err:
        raise ScenarioErrors(
            [_no_line(ScenarioError("scenario", f"{p} is not UTF-8 text (byte {err.start})"))]
        ) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        msg = " ".join(str(err).split())
        bad = ScenarioError("scenario", f"invalid TOML in {p}: {msg}")
        at = re.search(r"at line (\d+)", msg)
        bad.line = int(at.group(1)) if at else None
        raise ScenarioErrors([bad]) from None
    errors = []
    origins: dict[str, str] = {}
    for item in overrides:
        try:
            key, value = parse_override(item)
            set_dotted(raw, key, value)
            origins[key] = "--set"
        except ScenarioError as err:
            errors.append(err)
    if seed is not None:
        raw["seed"] = seed
        origins["seed"] = "--seed"
    if errors:
        for e in errors:
            e.line = None
        raise ScenarioErrors(errors)
    return from_dict(raw, text, origins, source)


def _default_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


#: Keys with no default: a table that omits them is an error.
_REQUIRED = {(StrategyConfig, "agent"), (StrategyConfig, "kind")}


def reference_rows(cls=Scenario, prefix: str = "") -> list[tuple[str, str, str, str]]:
    """Return (key, default, unit/allowed, doc) rows for every key, for the README reference.

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
            choices = sorted(MECHANISMS)
        elif (cls, f.name) == (StrategyConfig, "kind"):
            choices = [*sorted(STRATEGIES), "module:Class"]
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
    """Return the README's scenario-key table (Markdown), generated from the dataclasses."""
    lines = ["| key | default | unit / allowed | meaning |", "|---|---|---|---|"]
    for key, default, allowed, doc in reference_rows():
        cells = [f"`{key}`", f"`{default}`", allowed, doc]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(reference_markdown(), end="")
