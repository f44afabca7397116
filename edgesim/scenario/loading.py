"""Scenario files: the shipped scenarios, reading TOML, ``include``, overrides, and :func:`load`.

:func:`prepare` reads a scenario (a file, a shipped name, ``None`` for the
quick start, or a dict), resolves ``include`` and applies ``--set`` and
``--seed``; :func:`load_prepared` validates the result; :func:`load` does both.
"""

from __future__ import annotations

import copy
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from edgesim.config import show
from edgesim.errors import ScenarioError, ScenarioErrors
from edgesim.scenario.axes import sweep_axes
from edgesim.scenario.keys import Layer, Prepared, line_of, parse_override, set_dotted
from edgesim.scenario.schema import Scenario
from edgesim.scenario.validate import no_line, validate_raw

#: The scenario ``edgesim run`` runs without a file.
QUICKSTART = Path(__file__).parent.parent / "quickstart.toml"


def shipped_scenarios() -> dict[str, Path]:
    """Return the shipped scenarios, ``{name: path}``, sorted by name.

    They live in the ``scenarios/`` folder of the source tree, found next to
    the installed package (an editable install: ``pip install -e .``). The
    built-in quick start (package data) is always there as ``quickstart``.
    """
    found = {"quickstart": QUICKSTART}
    folder = Path(__file__).resolve().parent.parent.parent / "scenarios"
    if folder.is_dir():
        found.update({p.stem: p for p in folder.glob("*.toml")})
    return dict(sorted(found.items()))


def describe(path: Path, width: int = 110) -> str:
    """Return the first paragraph of a scenario's header comment, cut to ``width`` characters.

    Returns ``""`` when the file has no header comment or cannot be read.
    """
    words: list[str] = []
    try:
        for line in path.read_text(encoding="utf-8").splitlines():
            s = line.strip()
            if not s.startswith("#"):
                break
            s = s.lstrip("#").strip()
            if not s:
                if words:
                    break
                continue
            words.extend(s.split())
    except (OSError, UnicodeDecodeError):
        return ""
    text = " ".join(words)
    if len(text) > width:
        text = text[: width - 3].rsplit(" ", 1)[0] + "..."
    return text


def resolve_path(path: str | Path | None) -> Path:
    """Return the file a scenario argument names: a path, or a shipped scenario's name.

    ``None`` is the built-in quick start. A path that does not exist but is
    the name of a shipped scenario (``paper-fig1``) names that one; otherwise
    the path is returned as given (and loading reports it missing).
    """
    if path is None:
        return QUICKSTART
    p = Path(path)
    if not p.exists() and p.parent == Path(".") and p.suffix in ("", ".toml"):
        shipped = shipped_scenarios()
        if p.stem in shipped:
            return shipped[p.stem]
    return p


def _read_toml(p: Path) -> tuple[str, dict]:
    """Read and parse one TOML file; raises ScenarioError (key ``scenario``, line if known)."""
    if not p.exists():
        raise no_line(ScenarioError("scenario", f"file not found: {p}"))
    if not p.is_file():
        raise no_line(ScenarioError("scenario", f"{p} is not a file"))
    try:
        text = p.read_bytes().decode("utf-8")
    except OSError as err:
        raise no_line(ScenarioError("scenario", f"cannot read {p}: {err.strerror}")) from None
    except UnicodeDecodeError as err:
        raise no_line(
            ScenarioError("scenario", f"{p} is not UTF-8 text (byte {err.start})")
        ) from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        msg = " ".join(str(err).split())
        bad = ScenarioError("scenario", f"invalid TOML in {p}: {msg}")
        at = re.search(r"at line (\d+)", msg)
        bad.line = int(at.group(1)) if at else None
        raise bad from None


def _include_layers(
    text: str, raw: dict, here: Path | None, label: str, chain: tuple[Path, ...], top: Path
) -> tuple[list[Layer], list[ScenarioError]]:
    """Resolve ``include`` in one file's ``raw`` (removed from it), depth first.

    Returns the layers in merge order (included files first, this file last)
    and the errors found (missing files, cycles, bad TOML), each naming the
    including file's line.
    """
    errors: list[ScenarioError] = []
    layers: list[Layer] = []
    names = raw.pop("include", None)
    if names is not None:
        where = line_of(text, "include")
        spot = f"{label}line {where}" if where else label.strip()

        def bad(message: str) -> None:
            err = ScenarioError("include", message)
            err.line = where
            err.args = (f"include ({spot}): {message}" if spot else f"include: {message}",)
            errors.append(err)

        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            bad(f"expected a file name or a list of file names, got {show(names)}")
            names = []
        base = here.parent if here is not None else Path.cwd()
        for name in names:
            q = (base / name).resolve()
            if q in chain:
                cycle = " -> ".join(_rel(c, top) for c in (*chain[chain.index(q) :], q))
                bad(f"include cycle: {cycle}")
                continue
            try:
                sub_text, sub_raw = _read_toml(q)
            except ScenarioError as err:
                bad(f"{name}: {err.message}" + (f" (line {err.line})" if err.line else ""))
                continue
            sub, sub_errors = _include_layers(
                sub_text, sub_raw, q, f"{_rel(q, top)} ", (*chain, q), top
            )
            layers.extend(sub)
            errors.extend(sub_errors)
    layers.append(Layer(here, text, raw, label))
    return layers, errors


def _rel(p: Path, top: Path) -> str:
    """Return ``p`` relative to the folder of the scenario file ``top`` when possible."""
    try:
        return os.path.relpath(p, top.parent)
    except ValueError:
        return str(p)


def merge(base: dict, over: dict) -> dict:
    """Return ``base`` updated key by key with ``over`` (both left unchanged).

    A table in ``over`` overrides only the keys it names, recursively; any
    other value, an array of tables included, replaces the base's value.
    """
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def prepare(
    source: str | Path | dict | None,
    overrides: list[str] | dict | tuple = (),
    seed: int | None = None,
) -> Prepared:
    """Read a scenario (a file, a shipped name, ``None`` or a dict), resolve ``include``, apply overrides.

    ``overrides``: ``["a.b=value", ...]`` (values parsed as TOML) or a dict
    ``{"a.b": value}``. Raises :class:`ScenarioErrors` for unreadable files,
    include problems and malformed overrides; the keys are validated later.
    """
    if isinstance(source, dict):
        raw = copy.deepcopy(source)
        layers, errors = _include_layers("", raw, None, "", (), Path.cwd() / "scenario")
        path = None
    else:
        path = resolve_path(source)
        label = "quickstart.toml " if source is None else ""
        try:
            text, raw = _read_toml(path)
        except ScenarioError as err:
            raise ScenarioErrors([err]) from None
        top = path.resolve()
        layers, errors = _include_layers(text, raw, path, label, (top,), path)
    merged: dict = {}
    for layer in layers:
        merged = merge(merged, layer.raw)
    if errors:
        raise ScenarioErrors(errors)
    sweep = merged.pop("sweep", None)
    origins: dict[str, str] = {}
    sweep_overrides: list[tuple[str, Any]] = []
    items = list(overrides.items()) if isinstance(overrides, dict) else list(overrides)
    for item in items:
        try:
            key, value = parse_override(item) if isinstance(item, str) else item
            if key == "sweep" or key.startswith("sweep."):
                sweep_overrides.append((key[len("sweep.") :], value))
                continue
            set_dotted(merged, key, value)
            origins[key] = "--set"
        except ScenarioError as err:
            errors.append(no_line(err))
    if seed is not None:
        merged["seed"] = seed
        origins["seed"] = "--seed"
    if errors:
        raise ScenarioErrors(errors)
    return Prepared(merged, sweep, layers, origins, sweep_overrides, path)


def load(
    path: str | Path | dict | None,
    overrides: list[str] | dict | tuple = (),
    seed: int | None = None,
) -> Scenario:
    """Load and validate a scenario file (``None``: the built-in quick start; or a dict).

    Resolves ``include``, applies ``--set`` overrides and ``--seed``; raises
    :class:`ScenarioErrors` listing every problem found. A ``[sweep]`` table
    is checked for its shape and otherwise ignored: this is the scenario
    without the sweep (see :func:`load_sweep`).
    """
    return load_prepared(prepare(path, overrides, seed))


def load_prepared(prep: Prepared) -> Scenario:
    """Validate a scenario :func:`prepare` returned; as :func:`load`, without reading it again."""
    errors: list[ScenarioError] = []
    if prep.sweep is not None or prep.sweep_overrides:
        _, errors = sweep_axes(prep)
    sc, more = validate_raw(prep.raw, prep.layers, prep.origins)
    if errors or more:
        raise ScenarioErrors(errors + more)
    return sc
