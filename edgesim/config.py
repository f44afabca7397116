"""Declarative configuration fields: type, unit, range and allowed values, and their one check.

Every scenario section is a frozen dataclass whose fields are declared with
:func:`option`. :func:`check_value` checks a value against this metadata and
is the one field validator: the scenario loader (``edgesim.scenario``) uses
it for every key, and :func:`field_errors` for a configuration built in
Python (recursively), so a section only writes the cross-field rules that
metadata cannot express (its ``cross_check`` method). The same messages and
one "did you mean" (:func:`suggest`) serve them all. docs/reference.md's
scenario reference is generated from the same metadata.

A registered part (a mechanism, a strategy, an access scheme) may declare
options of its own: :func:`part_options` declares the field that holds them,
:func:`resolved_options` returns them with defaults filled in, and
:func:`as_data` writes a configuration in the scenario file's layout (the
chosen part's options as the sub-table named after it).
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import math
import types
import typing
from typing import Any

from edgesim.errors import ScenarioError


def option(
    default: Any,
    doc: str,
    *,
    unit: str | None = None,
    choices: tuple | None = None,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
    kinds: tuple[type, ...] | None = None,
) -> Any:
    """Declare one scenario key.

    Returns a ``dataclasses.field`` whose metadata holds the documentation,
    the unit, the allowed values (``choices``), numeric bounds (``ge`` >=,
    ``gt`` >, ``le`` <=, ``lt`` <) and, when the annotation is not enough,
    the accepted Python types (``kinds``, e.g. ``(int, str)`` for a value that
    is a round count or ``"theory"``).
    """
    meta = {
        "doc": doc,
        "unit": unit,
        "choices": choices,
        "ge": ge,
        "gt": gt,
        "le": le,
        "lt": lt,
        "kinds": kinds,
    }
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def section(default_factory: Any, doc: str) -> Any:
    """Declare a nested section (itself a dataclass) with its documentation."""
    return dataclasses.field(
        default_factory=default_factory, metadata={"doc": doc, "section": True}
    )


# ---------------------------------------------------------------------------- checking values

_TYPE_NAMES = {
    int: "an integer",
    float: "a number",
    str: "a string",
    bool: "true or false",
    list: "a list",
    dict: "a table",
}


def show(value) -> str:
    """Return ``value`` the way a scenario writes it (TOML-like), short."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, str):
        return repr(value)
    text = repr(value) if isinstance(value, (int, float, list)) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def or_list(items: list[str]) -> str:
    """Join ``["a", "b", "c"]`` as ``"a, b or c"``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def allowed(kinds, choices) -> str:
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
    return or_list(items) if items else "anything"


def suggest(word: str, options, prefix: str = "") -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest option, or ``""`` (the one "did you mean").

    ``prefix`` is written before the option found (a key's section, ``"agents."``).
    """
    close = difflib.get_close_matches(str(word), [str(o) for o in options], n=1, cutoff=0.6)
    return f" (did you mean {prefix + close[0]!r}?)" if close else ""


def range_text(meta) -> str | None:
    """Return a field's numeric range in words ("in [0, 1]", "> 0"), or None when it has none."""
    lo = ("[", meta["ge"]) if meta.get("ge") is not None else ("(", meta.get("gt"))
    hi = ("]", meta["le"]) if meta.get("le") is not None else (")", meta.get("lt"))
    if lo[1] is not None and hi[1] is not None:
        return f"in {lo[0]}{lo[1]:g}, {hi[1]:g}{hi[0]}"
    if lo[1] is not None:
        return f"{'>=' if lo[0] == '[' else '>'} {lo[1]:g}"
    if hi[1] is not None:
        return f"{'<=' if hi[0] == ']' else '<'} {hi[1]:g}"
    return None


def kinds_of(annotation) -> tuple[type, ...]:
    """Return the Python types a field's annotation accepts (``float | str`` -> (float, str))."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return tuple(a for a in typing.get_args(annotation) if isinstance(a, type))
    if isinstance(annotation, type):
        return (annotation,)
    return (origin,) if isinstance(origin, type) else (object,)


def matches(value, kind) -> bool:
    """Return whether ``value`` is of ``kind`` as a scenario means it (an int is a float, a bool no number)."""
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def check_value(key: str, value, f: dataclasses.Field, annotation) -> tuple[Any, str | None]:
    """Check one value against its field's metadata; returns (value, None) or (None, problem).

    The value comes back converted where the field asks (an int for a float
    field becomes a float); ``problem`` is the message, without the key.
    """
    meta = f.metadata
    kinds = meta.get("kinds") or kinds_of(annotation)
    choices = meta.get("choices")
    if not any(matches(value, k) for k in kinds):
        return None, f"expected {allowed(kinds, choices)}, got {show(value)}"
    if float in kinds and int not in kinds and matches(value, int):
        value = float(value)
    if isinstance(value, str) and choices is not None and value not in choices:
        hint = suggest(value, choices)
        return None, f"{show(value)} is not allowed{hint}; use {allowed(kinds, choices)}"
    if isinstance(value, float) and not math.isfinite(value):
        return None, f"must be a finite number, got {show(value)}"
    if matches(value, float):
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
            return None, f"must be {range_text(meta)}, got {show(value)}"
    return value, None


def join_key(prefix: str, name: str) -> str:
    """Return the dotted key ``prefix.name`` (just ``name`` at the top, ``prefix == ""``)."""
    return f"{prefix}.{name}" if prefix else name


def field_errors(cfg, prefix: str) -> list[ScenarioError]:
    """Check every field of the dataclass instance ``cfg`` with :func:`check_value`, recursively.

    Returns one :class:`ScenarioError` per bad field, keyed ``prefix.field``
    (``field`` alone when ``prefix`` is ``""``), for a configuration built in
    Python rather than loaded from a scenario file. Nested sections, lists of
    tables (``agents.strategy[0]``) and a part's options (:func:`part_options`,
    keyed as the scenario file writes them: ``network.radio.wifi.mcs``) are
    checked too. Numpy scalars count as the Python numbers they hold.
    """
    errs = []
    hints = type_hints(type(cfg))
    skip = mirrored(cfg)
    for f in dataclasses.fields(cfg):
        key = join_key(prefix, f.name)
        if f.name in skip:
            continue
        value = getattr(cfg, f.name)
        if f.metadata.get("part_options"):
            errs.extend(_options_errors(cfg, f, prefix))
            continue
        if type(value).__module__ == "numpy" and hasattr(value, "item") and not value.shape:
            value = value.item()  # a numpy scalar (an array stays one, and is "wrong type")
        _, problem = check_value(key, value, f, hints[f.name])
        if problem:
            errs.append(ScenarioError(key, problem))
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            errs.extend(field_errors(value, key))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if dataclasses.is_dataclass(item) and not isinstance(item, type):
                    errs.extend(field_errors(item, f"{key}[{i}]"))
    return errs


@functools.cache
def type_hints(cls: type) -> dict[str, Any]:
    """Return ``typing.get_type_hints(cls)``, computed once per class."""
    return typing.get_type_hints(cls)


# ---------------------------------------------------------------------------- parts' options


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """The options of a part that takes none (an empty table: any key in it is unknown)."""


def part_options(
    selector: str, registry: dict, doc: str, *, inline: bool = False, shortcuts: tuple = ()
) -> Any:
    """Declare the field that holds the options of the part the sibling field ``selector`` names.

    ``registry`` maps part names to parts; a part declares its options class
    as its attribute ``options`` (a frozen dataclass whose fields are
    declared with :func:`option`; absent or None: the part takes none). The
    field's value is an instance of that class, or None for the part's
    defaults (:func:`resolved_options` fills them in). In a scenario file the
    options are the sub-table named after the chosen part
    (``[network.radio.wifi]``), or with ``inline`` the keys of the table
    itself (a strategy's ``gamma``). ``shortcuts``: sibling fields that mirror
    built-in parts' options of the same name (kept so older code that sets or
    reads them keeps working); they are written only for a part that declares
    no options.
    """
    meta = {
        "doc": doc,
        "part_options": True,
        "selector": selector,
        "registry": registry,
        "inline": inline,
        "shortcuts": tuple(shortcuts),
    }
    return dataclasses.field(default=None, metadata=meta)


def options_class(part) -> type | None:
    """Return the options class a registered part declares (its ``options`` attribute), or None."""
    cls = getattr(part, "options", None)
    return cls if isinstance(cls, type) and dataclasses.is_dataclass(cls) else None


def attach_options(part, options: type | None) -> None:
    """Give ``part`` the options class ``options`` unless it already declares one; returns nothing.

    For the ``register_*`` functions' ``options=`` keyword. Raises TypeError
    when ``options`` is not a dataclass class.
    """
    if options is None:
        return
    if not (isinstance(options, type) and dataclasses.is_dataclass(options)):
        raise TypeError(f"options must be a dataclass class, got {options!r}")
    if options_class(part) is None:
        part.options = options


def part_of(cfg, field_name: str) -> tuple[str, type | None]:
    """Return ``(name, options class or None)`` of the part ``cfg``'s options field ``field_name`` serves."""
    meta = {f.name: f for f in dataclasses.fields(cfg)}[field_name].metadata
    name = getattr(cfg, meta["selector"])
    part = meta["registry"].get(name) if isinstance(name, str) else None
    return name, options_class(part)


def resolved_options(cfg, field_name: str):
    """Return the options of the part that ``cfg``'s field ``field_name`` serves, defaults filled in.

    ``field_name`` is a :func:`part_options` field (``"options"``,
    ``"access_options"``). Returns the instance the field holds, a default
    instance when it holds None, or None when the chosen part declares no options.
    """
    _, cls = part_of(cfg, field_name)
    if cls is None:
        return None
    value = getattr(cfg, field_name)
    return cls() if value is None else value


def mirrored(cfg) -> set[str]:
    """Return the names of ``cfg``'s shortcut fields that its chosen parts' options stand for.

    A shortcut (see :func:`part_options`) is neither checked nor written on
    its own when the chosen part declares options: the options hold its value.
    """
    out: set[str] = set()
    for f in dataclasses.fields(cfg):
        if f.metadata.get("part_options") and part_of(cfg, f.name)[1] is not None:
            out.update(f.metadata["shortcuts"])
    return out


def options_key(f: dataclasses.Field, prefix: str, part: str) -> str:
    """Return the key prefix of a part's options: ``prefix.part`` (a sub-table) or ``prefix`` (inline)."""
    return prefix if f.metadata["inline"] else join_key(prefix, part)


def _options_errors(cfg, f: dataclasses.Field, prefix: str) -> list[ScenarioError]:
    """Check a :func:`part_options` field: the chosen part's class, then its options' values."""
    value = getattr(cfg, f.name)
    name, cls = part_of(cfg, f.name)
    if value is None:
        return []
    key = join_key(prefix, f.name)
    selector = f.metadata["selector"]
    if cls is None:
        return [ScenarioError(key, f"{selector} = {name!r} declares no options; leave it None")]
    if type(value) is not cls:
        return [
            ScenarioError(
                key,
                f"expected {cls.__name__} (the options of {selector} = {name!r}),"
                f" got {type(value).__name__}",
            )
        ]
    return [
        *_shortcut_errors(cfg, f, prefix, cls, value),
        *field_errors(value, options_key(f, prefix, name)),
    ]


def _shortcut_errors(cfg, f: dataclasses.Field, prefix: str, cls: type, value) -> list:
    """Check the shortcut fields beside a part's options: unused by the part, or contradicting it."""
    errs = []
    own = {g.name for g in dataclasses.fields(cls)}
    defaults = {g.name: g.default for g in dataclasses.fields(cfg)}
    name = getattr(cfg, f.metadata["selector"])
    for short in f.metadata["shortcuts"]:
        given = getattr(cfg, short)
        if short in own:
            if given != defaults[short] and given != getattr(value, short):
                errs.append(
                    ScenarioError(
                        join_key(prefix, short),
                        f"{show(given)} contradicts the options' {short} ="
                        f" {show(getattr(value, short))}; set one of them",
                    )
                )
        elif given != defaults[short]:
            errs.append(ScenarioError(join_key(prefix, short), unused_option(f, short, name)))
    return errs


def unused_option(f: dataclasses.Field, key: str, chosen: str) -> str:
    """Return the message for an option ``key`` the chosen part does not read but another does.

    ``"only used by kind = 'amplify', not by kind = 'noisy'; remove it"``
    (``"unknown key"`` when no registered part declares it).
    """
    selector, registry = f.metadata["selector"], f.metadata["registry"]
    owners = [
        repr(n)
        for n, part in registry.items()
        if options_class(part) is not None
        and key in {g.name for g in dataclasses.fields(options_class(part))}
    ]
    if not owners:
        return "unknown key"
    return f"only used by {selector} = {or_list(owners)}, not by {selector} = {chosen!r}; remove it"


def as_data(cfg) -> dict:
    """Return the dataclass instance ``cfg`` as plain data, in the scenario file's layout.

    Sections become tables; a part's options (:func:`part_options`) become
    the sub-table named after the chosen part, or the table's own keys when
    inline, resolved (defaults filled in); nothing when the part declares no
    options. What this returns loads back to an equal configuration.
    """
    out: dict = {}
    skip = mirrored(cfg)
    for f in dataclasses.fields(cfg):
        if f.name in skip:
            continue
        value = getattr(cfg, f.name)
        if f.metadata.get("part_options"):
            opts = resolved_options(cfg, f.name)
            if opts is None:
                continue
            data = as_data(opts) if dataclasses.is_dataclass(opts) else opts
            if f.metadata["inline"]:
                out.update(data)
            else:
                out[part_of(cfg, f.name)[0]] = data
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            out[f.name] = as_data(value)
        elif isinstance(value, list):
            out[f.name] = [
                as_data(v) if dataclasses.is_dataclass(v) else copy.deepcopy(v) for v in value
            ]
        else:
            out[f.name] = copy.deepcopy(value)
    return out
