"""The shape of a ``[sweep]`` table: its axes (plain keys and ``[[sweep.zip]]`` groups), checked.

:func:`sweep_axes` flattens the table and its ``--set sweep.KEY=...``
overrides into :class:`Axis` objects and reports malformed lists, keys swept
twice, duplicate values and too many runs, each at its file line when found.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from edgesim.config import show
from edgesim.errors import ScenarioError
from edgesim.scenario.keys import ASSIGN, HEADER, Layer, Prepared, key_names, set_dotted

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


def sweep_line(layers: list[Layer], target: str, zip_index: int | None = None):
    """Return ``(label, line)`` of a sweep key (``"agents.count"``) in the files, or None."""
    for layer in reversed(layers):
        table, zips = "", 0
        for i, line in enumerate(layer.text.splitlines(), 1):
            s = line.strip()
            head = HEADER.match(s)
            if head:
                table = ".".join(key_names(head.group(2)))
                if head.group(1) and table == "sweep.zip":
                    zips += 1
                continue
            m = ASSIGN.match(s)
            if not m:
                continue
            full = ".".join(x for x in (table, ".".join(key_names(m.group(1)))) if x)
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
                    f"{where}{key}", f"expected a list of values, e.g. [1, 2], got {show(value)}"
                )
            )


def _canon(value) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def sweep_axes(prep: Prepared) -> tuple[list[Axis], list[ScenarioError]]:
    """Check the shape of the ``[sweep]`` table; returns its axes and the errors found."""
    errors: list[ScenarioError] = []
    table = prep.sweep if prep.sweep is not None else {}
    if not isinstance(table, dict):
        err = ScenarioError("sweep", f"expected a table of KEY = [values], got {show(table)}")
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
            ScenarioError("sweep.zip", f"expected [[sweep.zip]] tables, got {show(zips)}")
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
            errors.append(ScenarioError(where, f"value {show(dup)} is given twice"))
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
            errors.append(ScenarioError(f"sweep.zip[{i}]", f"point {show(dup)} is given twice"))
            continue
        axes.append(Axis(tuple(flat), points, zip=True))
    total = math.prod(len(a.points) for a in axes)
    if total > MAX_RUNS:
        errors.append(ScenarioError("sweep", f"{total} runs; at most {MAX_RUNS} per sweep"))
    for e in errors:
        place_sweep_error(e, prep.layers)
    return axes, errors


def _duplicates(values: list):
    seen = set()
    for v in values:
        c = _canon(v)
        if c in seen:
            return v
        seen.add(c)
    return None


def place_sweep_error(e: ScenarioError, layers: list[Layer]) -> None:
    """Give a sweep-shape error its file line (when found) and one-line text."""
    m = re.match(r"^sweep\.zip\[(\d+)\](?:\.(.*))?$", e.key)
    if m:
        hit = sweep_line(layers, m.group(2) or "", int(m.group(1))) if m.group(2) else None
        if hit is None:
            hit = _zip_header_line(layers, int(m.group(1)))
    else:
        hit = sweep_line(layers, e.key[len("sweep.") :]) if e.key.startswith("sweep.") else None
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
            head = HEADER.match(line.strip())
            if head and head.group(1) and ".".join(key_names(head.group(2))) == "sweep.zip":
                if count == index:
                    return layer.label, i
                count += 1
    return None
