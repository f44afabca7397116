"""How error messages write values and options: TOML-like values, "a, b or c", ranges, "did you mean"."""

from __future__ import annotations

import difflib

_TYPE_NAMES = {
    int: "an integer",
    float: "a number",
    str: "a string",
    bool: "true or false",
    list: "a list",
    dict: "a table",
}


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
