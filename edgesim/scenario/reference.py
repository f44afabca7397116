"""The scenario-key reference: one row per key, and the Markdown table of docs/reference.md.

``python -m edgesim.scenario`` prints :func:`reference_markdown`; a test
keeps docs/reference.md in sync with it.
"""

from __future__ import annotations

import dataclasses

from edgesim.agents import StrategyConfig
from edgesim.config import kinds_of, options_class, range_text, type_hints
from edgesim.deviations import BUILTIN_STRATEGIES
from edgesim.mechanisms import BUILTIN_MECHANISMS
from edgesim.mechanisms.base import MechanismConfig
from edgesim.scenario.schema import AgentsConfig, Scenario


def _default_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


#: Keys with no default: a table that omits them is an error.
_REQUIRED = {(StrategyConfig, "agent"), (StrategyConfig, "kind")}


def _builtin(part) -> bool:
    """Whether a registered part is edgesim's own (defined in one of its modules)."""
    return str(getattr(part, "__module__", "")).startswith("edgesim.")


def _builtin_parts(registry: dict) -> list[tuple[str, type]]:
    """Return ``(name, options class)`` of the parts edgesim registers that declare options."""
    out = []
    for name, part in registry.items():
        cls = options_class(part)
        if cls is not None and cls.__module__.startswith("edgesim.") and dataclasses.fields(cls):
            out.append((name, cls))
    return out


def reference_rows(cls=Scenario, prefix: str = "") -> list[tuple[str, str, str, str]]:
    """Return (key, default, unit/allowed, doc) rows for every key, for docs/reference.md.

    One row per leaf key (sections are walked; ``[[agents.strategy]]`` keys
    appear as ``agents.strategy[].agent``). A built-in part's options appear
    under its sub-table (``network.radio.wifi.mcs``) or, inline, as keys of
    the table (``agents.strategy[].gamma``, noted "amplify"). The default is
    written as in TOML; required keys show ``(required)``.
    """
    rows = []
    hints = type_hints(cls)
    shortcuts = {
        name
        for f in dataclasses.fields(cls)
        if f.metadata.get("part_options")
        for name in f.metadata["shortcuts"]
    }
    selects = {
        f.metadata["selector"]: f.metadata["registry"]
        for f in dataclasses.fields(cls)
        if f.metadata.get("part_options")
    }
    for f in dataclasses.fields(cls):
        key = f"{prefix}{f.name}"
        if f.name in shortcuts:
            continue  # listed as the built-in parts' options
        if f.metadata.get("part_options"):
            parts = _builtin_parts(f.metadata["registry"])
            if f.metadata["inline"]:  # the kinds' options share the table: one row per name
                rows.extend(_merged([(n, reference_rows(o, prefix)) for n, o in parts]))
                continue
            for name, options in parts:
                rows.extend(reference_rows(options, f"{prefix}{name}."))
            continue
        if f.metadata.get("section"):
            rows.extend(reference_rows(hints[f.name], f"{key}."))
            continue
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        meta = f.metadata
        allowed = []
        if meta.get("unit"):
            allowed.append(meta["unit"])
        kinds = meta.get("kinds") or kinds_of(hints[f.name])
        choices = list(meta.get("choices") or ())
        if (cls, f.name) == (MechanismConfig, "kind"):
            choices = [*BUILTIN_MECHANISMS, "module:function"]
        elif (cls, f.name) == (StrategyConfig, "kind"):
            choices = [*BUILTIN_STRATEGIES, "module:Class"]
        elif f.name in selects and not choices:  # a registry of parts: its built-in names
            registry = selects[f.name]
            choices = [n for n, part in registry.items() if _builtin(part)]
        if bool in kinds:
            choices = ["true", "false", *choices]
        if choices:
            allowed.append(" / ".join(str(c) for c in choices))
        rng = range_text(meta)
        if rng:
            allowed.append(rng)
        shown = "(required)" if (cls, f.name) in _REQUIRED else _default_text(default)
        rows.append((key, shown, "; ".join(allowed), meta.get("doc", "")))
        if cls is AgentsConfig and f.name == "strategy":
            rows.extend(reference_rows(StrategyConfig, f"{key}[]."))
    return rows


def _merged(per_kind: list[tuple[str, list]]) -> list[tuple[str, str, str, str]]:
    """Return one row per key of inline options that several kinds declare (a strategy's
    ``probability``, read by ``withhold`` and ``late``), in first-seen order: the default and
    the allowed values when the kinds agree, else each kind's; the kinds' distinct docs (each
    starts with the kinds it is read by, ``"withhold/late: ..."``)."""
    seen: dict[str, list] = {}
    for kind, rows in per_kind:
        for row in rows:
            seen.setdefault(row[0], []).append((kind, *row[1:]))
    out = []
    for key, uses in seen.items():
        if len(uses) == 1:
            _, default, allowed, doc = uses[0]
            out.append((key, default, allowed, doc))
            continue
        default, allowed = uses[0][1], uses[0][2]
        if any(u[1:3] != uses[0][1:3] for u in uses):
            default = "(per kind)"
            allowed = "; ".join(f"{u[0]}: {u[1]}, {u[2]}" for u in uses)
        doc = "; ".join(dict.fromkeys(u[3] for u in uses))  # each doc names its kinds
        out.append((key, default, allowed, doc))
    return out


def reference_markdown() -> str:
    """Return the scenario-key table of docs/reference.md (Markdown), generated from the dataclasses."""
    lines = ["| key | default | unit / allowed | meaning |", "|---|---|---|---|"]
    for key, default, allowed, doc in reference_rows():
        cells = [f"`{key}`", f"`{default}`", allowed, doc]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"
