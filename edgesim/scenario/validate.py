"""Validation: raw TOML data checked key by key into a :class:`Scenario`, then across keys.

Every value is checked against its field's metadata (type, range, allowed
values); unknown keys get the closest valid name; rules that span several
keys run last. Every error is collected, given its origin or file line,
and reported in one pass (:func:`from_dict` raises them together).
"""

from __future__ import annotations

import dataclasses
import warnings

from edgesim.agents import STRATEGIES, StrategyConfig
from edgesim.config import (
    check_value,
    options_class,
    show,
    suggest,
    type_hints,
    unused_option,
)
from edgesim.errors import ScenarioError, ScenarioErrors, shown_key
from edgesim.mechanisms import MECHANISMS
from edgesim.plugins import register_from_spec
from edgesim.scenario.keys import Layer, locate, under
from edgesim.scenario.schema import AgentsConfig, Scenario


def _unknown_key(prefix: str, key: str, fields) -> str:
    hint = suggest(key, fields, prefix)
    return f"unknown key{hint}" if hint else f"unknown key; keys here: {', '.join(fields)}"


def _build(cls, raw: dict, prefix: str, errors: list[ScenarioError]):
    """Build dataclass ``cls`` from ``raw``; bad values are reported and left at their defaults.

    A part's options (:func:`edgesim.config.part_options`) are built from the
    sub-table named after the chosen part, or from the table's own keys when
    inline; deprecated flat keys are moved there first (with a FutureWarning).
    """
    hints = type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if not f.metadata.get("part_options")}
    raw = dict(raw)
    kwargs: dict = {}
    names = list(fields)
    for f in dataclasses.fields(cls):
        if f.metadata.get("part_options"):
            names += _take_options(f, raw, prefix, fields, kwargs, errors)
    for key, value in raw.items():
        path = f"{prefix}{key}"
        if key not in fields:
            errors.append(ScenarioError(path, _unknown_key(prefix, key, names)))
            continue
        f = fields[key]
        if f.metadata.get("section"):
            if not isinstance(value, dict):
                errors.append(ScenarioError(path, f"expected a table, got {show(value)}"))
                continue
            kwargs[key] = _build(hints[key], value, f"{path}.", errors)
            continue
        if cls is AgentsConfig and key == "strategy":
            kwargs[key] = _build_strategies(value, path, errors)
            continue
        checked, problem = check_value(path, value, f, hints[key])
        if problem:
            errors.append(ScenarioError(path, problem))
        else:
            kwargs[key] = checked
    return cls(**kwargs)


def _take_options(f, raw: dict, prefix: str, fields: dict, kwargs: dict, errors: list) -> list:
    """Build the chosen part's options for the :func:`~edgesim.config.part_options` field ``f``.

    Takes the keys it reads out of ``raw`` (the part's sub-table, or for an
    inline field the keys its options declare) and puts the options instance
    in ``kwargs``. Returns the option names valid in this table (for "did you mean").
    """
    selector, registry = f.metadata["selector"], f.metadata["registry"]
    chosen = raw.get(selector, fields[selector].default)
    if isinstance(chosen, str) and ":" in chosen:
        register_from_spec(chosen, f"{prefix}{selector}", registry)  # its errors: the rules'
    chosen_cls = options_class(registry.get(chosen)) if isinstance(chosen, str) else None
    if f.metadata["inline"]:
        if selector not in raw:  # a required selector: its absence is the error
            for key in f.metadata["shortcuts"]:
                raw.pop(key, None)  # options of no part in particular: nothing to check them by
            return list(f.metadata["shortcuts"])
        return _take_inline(f, raw, prefix, chosen, chosen_cls, kwargs, errors)
    moved = _move_flat_aliases(registry, raw, prefix, fields, errors)
    for name in [k for k in raw if k not in fields and k in registry]:
        table, key = raw.pop(name), f"{prefix}{name}"
        olds = {opt: old for (part, opt), old in moved.items() if part == name}
        if name != chosen:
            for where in [f"{prefix}{old}" for old in olds.values()] or [key]:
                errors.append(
                    ScenarioError(
                        where,
                        f"only read with {selector} = {name!r}, not with {selector} ="
                        f" {chosen!r}; remove it",
                    )
                )
        elif chosen_cls is None:
            errors.append(ScenarioError(key, f"{selector} = {name!r} takes no options; remove it"))
        elif not isinstance(table, dict):
            errors.append(ScenarioError(key, f"expected a table, got {show(table)}"))
        else:
            found: list[ScenarioError] = []
            kwargs[f.name] = _build(chosen_cls, table, f"{key}.", found)
            for e in found:  # an error in a moved flat key names the key as written
                opt = e.key[len(key) + 1 :]
                e.key = f"{prefix}{olds[opt]}" if opt in olds else e.key
            errors.extend(found)
    if chosen_cls is None:
        return []
    kwargs.setdefault(f.name, chosen_cls())
    return [chosen]


def _take_inline(f, raw, prefix, chosen, chosen_cls, kwargs, errors) -> list:
    """Build an inline part's options from the table's keys (a strategy's ``gamma``)."""
    if chosen_cls is None:
        return []  # a part without options reads the shortcut fields, as before
    own = [g.name for g in dataclasses.fields(chosen_cls)]
    shortcuts = f.metadata["shortcuts"]
    table = {}
    for key in list(raw):
        if key in own:
            table[key] = raw.pop(key)
        elif key in shortcuts or unused_option(f, key, chosen) != "unknown key":
            raw.pop(key)
            errors.append(ScenarioError(f"{prefix}{key}", unused_option(f, key, chosen)))
    for key in shortcuts:
        raw.pop(key, None)
    kwargs[f.name] = _build(chosen_cls, table, prefix, errors)
    return own


def _move_flat_aliases(registry: dict, raw: dict, prefix: str, fields: dict, errors) -> dict:
    """Move deprecated flat keys (a part's ``flat_aliases``) into the part's sub-table in ``raw``.

    Warns once per key (FutureWarning). Returns ``{(part, option): old key}``
    for the keys moved.
    """
    moved = {}
    for name, part in list(registry.items()):
        aliases = getattr(part, "flat_aliases", None) or getattr(
            options_class(part), "flat_aliases", None
        )
        for old, opt in (aliases or {}).items():
            if old not in raw or old in fields:
                continue
            value = raw.pop(old)
            table = f"{prefix}{name}" if ":" not in name else f'{prefix}"{name}"'
            warnings.warn(
                f"{prefix}{old} is deprecated; write [{table}] {opt}", FutureWarning, stacklevel=2
            )
            sub = raw.get(name, {})
            if not isinstance(sub, dict):
                continue  # the sub-table itself is reported
            if opt in sub:
                errors.append(
                    ScenarioError(
                        f"{prefix}{old}", f"also given as {prefix}{name}.{opt}; keep that one"
                    )
                )
                continue
            raw[name] = {**sub, opt: value}
            moved[(name, opt)] = old
    return moved


def _build_strategies(value, path: str, errors) -> list:
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        errors.append(
            ScenarioError(
                path, f"expected [[agents.strategy]] tables (agent, kind, ...), got {show(value)}"
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


def format_errors(
    errors: list[ScenarioError], layers: list[Layer], origins: dict[str, str]
) -> list[ScenarioError]:
    """Give each error its origin or file line, one-line text, and sort them by file and line."""
    rank = {id(layer): i for i, layer in enumerate(reversed(layers))}  # the scenario file first
    keyed = []
    for i, e in enumerate(errors):
        where = next((o for k, o in origins.items() if under(e.key, k)), None)
        layer, line = (None, None) if where else locate(layers, e.key)
        e.line = line
        e.file = layer.path if layer is not None and line is not None else None
        e.message = " ".join(str(e.message).split())
        key = shown_key(e.key)
        if where:
            e.args = (f"{key} (from {where}): {e.message}",)
        elif line is not None:
            e.args = (f"{key} ({layer.label}line {line}): {e.message}",)
        else:
            e.args = (f"{key}: {e.message}",)
        keyed.append(((line is None, rank.get(id(layer), 0), line or 0, i), e))
    return [e for _, e in sorted(keyed, key=lambda t: t[0])]


def validate_raw(
    raw: dict, layers: list[Layer], origins: dict[str, str]
) -> tuple[Scenario, list[ScenarioError]]:
    """Build a Scenario from ``raw``; returns it and the formatted errors (empty when valid)."""
    errors: list[ScenarioError] = []
    sc = _build(Scenario, raw, "", errors)
    errors += sc.errors(known=[e.key for e in errors])
    return sc, (format_errors(errors, layers, origins) if errors else [])


def raise_errors(sc: Scenario) -> None:
    """Validate a Scenario built in Python; returns nothing, raises ScenarioErrors listing every problem.

    The same checks, keys and text as loading it from a file (:meth:`Scenario.errors`).
    """
    errors = sc.errors()
    if errors:
        raise ScenarioErrors(format_errors(errors, [], {}))


def from_dict(raw: dict) -> Scenario:
    """Validate plain data into a :class:`Scenario`; raises ScenarioErrors with every problem.

    No ``include`` and no file lines (see :func:`load` for files and dicts with ``include``).
    """
    sc, errors = validate_raw(raw, [], {})
    if errors:
        raise ScenarioErrors(errors)
    return sc


def no_line(err: ScenarioError) -> ScenarioError:
    """Mark ``err`` as having no line in the scenario file (``err.line = None``)."""
    err.line = None
    return err
