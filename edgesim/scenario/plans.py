"""Sweep plans: a scenario's ``[sweep]`` expanded into validated runs (:func:`load_sweep`).

A :class:`SweepPlan` holds the axes and one :class:`SweepRun` per point of
their cartesian product; :func:`run_id` names a run by a hash of its
resolved scenario, which sweeps resume by.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path

from edgesim.config import show
from edgesim.errors import ScenarioError, ScenarioErrors
from edgesim.scenario.axes import Axis, place_sweep_error, sweep_axes, sweep_line
from edgesim.scenario.keys import set_dotted, under
from edgesim.scenario.loading import prepare
from edgesim.scenario.schema import Scenario
from edgesim.scenario.validate import no_line, validate_raw


@dataclass(frozen=True)
class SweepRun:
    """One run of a sweep: its position, the swept values and the validated scenario."""

    index: int
    values: dict
    scenario: Scenario

    @functools.cached_property
    def run_id(self) -> str:
        """Return the run's id: 16 hex digits of a SHA-256 of the resolved scenario (seed included).

        Computed on first access, then cached (the scenario is frozen).
        """
        return run_id(self.scenario)


@dataclass(frozen=True)
class SweepPlan:
    """A scenario's runs: the cartesian product of its axes (one run when it has no sweep).

    ``path``: the scenario file (None for a dict); ``files``: ``(path, text)``
    of it and of every file it includes, for the sweep's manifest.
    """

    axes: tuple[Axis, ...]
    runs: tuple[SweepRun, ...]
    path: Path | None = None
    files: tuple[tuple[str, str], ...] = ()

    @property
    def keys(self) -> list[str]:
        """Return the swept keys in axis order."""
        return [k for axis in self.axes for k in axis.keys]


def run_id(sc: Scenario) -> str:
    """Return 16 hex digits of the SHA-256 of ``sc``'s resolved keys (canonical JSON).

    Two runs share an id exactly when every key, defaults and seed included,
    is equal; sweeps resume by it.
    """
    text = json.dumps(sc.to_dict(), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_sweep(
    path: str | Path | dict | None,
    overrides: list[str] | dict | tuple = (),
    seed: int | None = None,
) -> SweepPlan:
    """Load a scenario and expand its ``[sweep]`` table into validated runs.

    The runs are the cartesian product of the axes (first axis slowest),
    each a copy of the scenario with the swept keys set. Every run is
    validated; raises :class:`ScenarioErrors` with every problem, each
    reported once (an error found in only some runs names how many and one
    such run's values). A scenario without ``[sweep]`` is one run.
    """
    prep = prepare(path, overrides, seed)
    axes, errors = sweep_axes(prep)
    if errors:
        raise ScenarioErrors(errors)
    swept = [k for a in axes for k in a.keys]
    for key in prep.origins:
        for s in swept:
            if under(s, key) or under(key, s):
                errors.append(
                    no_line(
                        ScenarioError(
                            key,
                            f"is swept ({s}); override the sweep instead: --set sweep.{s}=[...]",
                        )
                    )
                )
    if errors:
        raise ScenarioErrors(errors)
    origins = dict(prep.origins)
    sweep_lines: dict[str, int] = {}
    for s in swept:
        hit = sweep_line(prep.layers, s)
        origins[s] = f"[sweep] {hit[0]}line {hit[1]}" if hit else "[sweep]"
        if hit:
            sweep_lines[s] = hit[1]

    def line_of(e: ScenarioError) -> int | None:
        if e.line is not None:
            return e.line
        return next((ln for s, ln in sweep_lines.items() if under(e.key, s)), None)

    runs: list[SweepRun] = []
    found: dict[str, tuple[ScenarioError, list[int], dict]] = {}
    total = math.prod(len(a.points) for a in axes)
    for index, choice in enumerate(itertools.product(*(a.points for a in axes))):
        raw = copy.deepcopy(prep.raw)
        values: dict = {}
        problems: list[ScenarioError] = []
        for axis, point in zip(axes, choice, strict=True):
            for key, value in zip(axis.keys, point, strict=True):
                values[key] = value
                try:
                    set_dotted(raw, key, copy.deepcopy(value))
                except ScenarioError as err:
                    err.key = f"sweep.{key}" if err.key in (key, "--set") else err.key
                    problems.append(err)
        if problems:
            for e in problems:
                place_sweep_error(e, prep.layers)
        else:
            sc, problems = validate_raw(raw, prep.layers, origins)
        for e in problems:
            text = str(e)
            if text not in found:
                found[text] = (e, [], values)
            found[text][1].append(index)
        if not problems:
            runs.append(SweepRun(index, values, sc))
    if found:
        out = []
        ordered = sorted(
            found.values(), key=lambda t: (line_of(t[0]) is None, line_of(t[0]) or 0, t[1][0])
        )
        for e, where, values in ordered:
            if len(where) < total:
                shown = ", ".join(f"{k}={show(v)}" for k, v in values.items())
                e.args = (f"{e.args[0]} [in {len(where)} of {total} runs, e.g. {shown}]",)
            out.append(e)
        raise ScenarioErrors(out)
    files = tuple((str(layer.path), layer.text) for layer in prep.layers if layer.path)
    return SweepPlan(tuple(axes), tuple(runs), prep.path, files)
