"""Declarative configuration fields: type, unit, range and allowed values, and their one check.

Every scenario section is a frozen dataclass whose fields are declared with
:func:`option`. :func:`check_value` checks a value against this metadata and
is the one field validator: the scenario loader (``edgesim.scenario``) uses
it for every key, and :func:`field_errors` for a section built in Python (the
network's radio tables), so a section only writes the cross-field rules that
metadata cannot express (its ``cross_check`` method). The same messages and
one "did you mean" (:func:`suggest`) serve them all. docs/reference.md's
scenario reference is generated from the same metadata.
"""

from __future__ import annotations

import dataclasses
import difflib
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


def field_errors(cfg, prefix: str) -> list[ScenarioError]:
    """Check every field of the dataclass instance ``cfg`` with :func:`check_value`.

    Returns one :class:`ScenarioError` per bad field, keyed ``prefix.field``
    (for a section built in Python rather than loaded from a scenario file).
    Numpy scalars count as the Python numbers they hold.
    """
    errs = []
    hints = typing.get_type_hints(type(cfg))
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        if type(value).__module__ == "numpy" and hasattr(value, "item") and not value.shape:
            value = value.item()  # a numpy scalar (an array stays one, and is "wrong type")
        _, problem = check_value(f"{prefix}.{f.name}", value, f, hints[f.name])
        if problem:
            errs.append(ScenarioError(f"{prefix}.{f.name}", problem))
    return errs
