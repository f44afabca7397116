"""The scenario-key reference: one row per key, and the Markdown table of docs/reference.md.

``python -m edgesim.scenario`` prints :func:`reference_markdown`; a test
keeps docs/reference.md in sync with it.
"""

from __future__ import annotations

import dataclasses
import typing

from edgesim.agents import BUILTIN_STRATEGIES, StrategyConfig
from edgesim.mechanisms import BUILTIN_MECHANISMS
from edgesim.mechanisms.base import MechanismConfig
from edgesim.scenario.schema import AgentsConfig, Scenario
from edgesim.scenario.text import _range_text
from edgesim.scenario.validate import _kinds_of


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
