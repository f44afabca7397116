"""Key paths: dotted keys (``agents.strategy[0].gamma``), ``--set`` overrides, and line lookup.

:func:`set_dotted` and :func:`parse_override` apply ``--set a.b=value``;
:func:`line_of` finds a key's line in TOML text, and :func:`locate` which
file of a scenario (a :class:`Layer`: the scenario or a file it includes)
a key's value came from.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgesim.config import show
from edgesim.errors import ScenarioError

_PART = re.compile(r"^([A-Za-z0-9_\-]+)((?:\[\d+\])*)$")
_KEY_TOKEN = re.compile(r'"([^"]*)"|\'([^\']*)\'|([A-Za-z0-9_\-]+)')
#: A TOML table header line, ``[a.b]`` or ``[[a.b]]`` (group 1: "[" for an array entry; 2: the key).
HEADER = re.compile(r"^\[(\[?)\s*([^\[\]]+?)\s*\]\]?\s*(?:#.*)?$")
#: A TOML assignment line's key, dotted and quoted parts allowed (group 1).
ASSIGN = re.compile(
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


def key_names(key_text: str) -> list[str]:
    """Return the parts of a TOML key as written (``'a."b.c".d'`` -> ``["a", "b.c", "d"]``)."""
    return ["".join(t) for t in _KEY_TOKEN.findall(key_text)]


def _prefix_of(have: list, target: list) -> bool:
    """True when the path ``have`` names ``target`` or one of its parents."""
    if len(have) > len(target):
        return False
    for (hn, hi), (tn, ti) in zip(have, target, strict=False):
        if hn != tn or (hi is not None and ti is not None and hi != ti):
            return False
    return True


def line_of(text: str, key: str) -> int | None:
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
        head = HEADER.match(s)
        if head:
            names = key_names(head.group(2))
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
        m = ASSIGN.match(s)
        if m:
            full = table + [(n, None) for n in key_names(m.group(1))]
            if len(full) > len(table) and _prefix_of(full, target):
                return i
    return header_hit


def under(key: str, parent: str) -> bool:
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
                raise ScenarioError(dotted, f"{'.'.join(walked)} is {show(nxt)}, not a table")
            node = nxt
            continue
        seq = node.setdefault(name, [])
        if isinstance(seq, dict):
            seq = node[name] = [seq]
        if not isinstance(seq, list):
            raise ScenarioError(dotted, f"{name} is {show(seq)}, not an array of tables")
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
            raise ScenarioError(dotted, f"{'.'.join(walked)} is {show(seq[idx])}, not a table")
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


def locate(layers: list[Layer], key: str) -> tuple[Layer | None, int | None]:
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
    return best, (line_of(best.text, key) if best.text else None)


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
