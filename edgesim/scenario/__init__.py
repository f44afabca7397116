"""TOML scenarios loaded into validated frozen dataclasses.

Every key is checked against the metadata declared with
:func:`edgesim.config.option` (type, range, allowed values); unknown keys are
rejected with the closest valid name; every error in a file is reported in
one pass with its dotted key and, where it can be found, its line.
``--set a.b=value`` overrides any key by dotted path (the value parsed as TOML).

The package's modules, one job each (everything is re-exported here):

- :mod:`~edgesim.scenario.schema`: the dataclasses, one per TOML table, and :class:`Scenario`;
- :mod:`~edgesim.scenario.text`: how messages write values, options and ranges;
- :mod:`~edgesim.scenario.validate`: key-by-key and cross-key validation, :func:`from_dict`;
- :mod:`~edgesim.scenario.keys`: dotted key paths, ``--set`` overrides, line lookup;
- :mod:`~edgesim.scenario.loading`: files, shipped scenarios, ``include``, :func:`prepare`, :func:`load`;
- :mod:`~edgesim.scenario.axes`: the shape of a ``[sweep]`` table, checked into axes;
- :mod:`~edgesim.scenario.plans`: sweep plans, :func:`load_sweep`, :func:`run_id`;
- :mod:`~edgesim.scenario.reference`: the key reference of docs/reference.md
  (``python -m edgesim.scenario`` prints it).
"""

from __future__ import annotations

from edgesim.agents import BUILTIN_STRATEGIES, STRATEGIES, StrategyConfig
from edgesim.config import option, section
from edgesim.errors import ScenarioError, ScenarioErrors
from edgesim.learning.data import DataConfig
from edgesim.mechanisms import BUILTIN_MECHANISMS, MECHANISMS
from edgesim.mechanisms.base import CLIPS_GRADIENTS, CLIPS_LOSSES, MechanismConfig
from edgesim.network.config import NetworkConfig
from edgesim.plugins import register_from_spec
from edgesim.scenario.axes import MAX_RUNS, Axis
from edgesim.scenario.axes import _canon as _canon
from edgesim.scenario.axes import _duplicates as _duplicates
from edgesim.scenario.axes import _flatten_sweep as _flatten_sweep
from edgesim.scenario.axes import _place_sweep_error as _place_sweep_error
from edgesim.scenario.axes import _sweep_axes as _sweep_axes
from edgesim.scenario.axes import _sweep_line as _sweep_line
from edgesim.scenario.axes import _zip_header_line as _zip_header_line
from edgesim.scenario.keys import _ASSIGN as _ASSIGN
from edgesim.scenario.keys import _HEADER as _HEADER
from edgesim.scenario.keys import _KEY_TOKEN as _KEY_TOKEN
from edgesim.scenario.keys import _PART as _PART
from edgesim.scenario.keys import Layer, parse_override, set_dotted
from edgesim.scenario.keys import _components as _components
from edgesim.scenario.keys import _depth as _depth
from edgesim.scenario.keys import _line_of as _line_of
from edgesim.scenario.keys import _locate as _locate
from edgesim.scenario.keys import _names as _names
from edgesim.scenario.keys import _prefix_of as _prefix_of
from edgesim.scenario.keys import _under as _under
from edgesim.scenario.loading import (
    QUICKSTART,
    Prepared,
    describe,
    load,
    load_prepared,
    merge,
    prepare,
    resolve_path,
    shipped_scenarios,
)
from edgesim.scenario.loading import _include_layers as _include_layers
from edgesim.scenario.loading import _read_toml as _read_toml
from edgesim.scenario.loading import _rel as _rel
from edgesim.scenario.plans import SweepPlan, SweepRun, load_sweep, run_id
from edgesim.scenario.reference import _REQUIRED as _REQUIRED
from edgesim.scenario.reference import _default_text as _default_text
from edgesim.scenario.reference import reference_markdown, reference_rows
from edgesim.scenario.schema import (
    AgentsConfig,
    AuditConfig,
    BestResponseConfig,
    ModelConfig,
    OutputConfig,
    Scenario,
)
from edgesim.scenario.text import _TYPE_NAMES as _TYPE_NAMES
from edgesim.scenario.text import _allowed as _allowed
from edgesim.scenario.text import _or_list as _or_list
from edgesim.scenario.text import _range_text as _range_text
from edgesim.scenario.text import _show as _show
from edgesim.scenario.text import _suggest as _suggest
from edgesim.scenario.validate import _STRATEGY_PARAMS as _STRATEGY_PARAMS
from edgesim.scenario.validate import _build as _build
from edgesim.scenario.validate import _build_strategies as _build_strategies
from edgesim.scenario.validate import _check_value as _check_value
from edgesim.scenario.validate import _cross_check as _cross_check
from edgesim.scenario.validate import _format_errors as _format_errors
from edgesim.scenario.validate import _kinds_of as _kinds_of
from edgesim.scenario.validate import _matches as _matches
from edgesim.scenario.validate import _no_line as _no_line
from edgesim.scenario.validate import _unknown_key as _unknown_key
from edgesim.scenario.validate import _validate as _validate
from edgesim.scenario.validate import ensure_registered, from_dict

__all__ = [
    "BUILTIN_MECHANISMS",
    "BUILTIN_STRATEGIES",
    "CLIPS_GRADIENTS",
    "CLIPS_LOSSES",
    "MAX_RUNS",
    "MECHANISMS",
    "QUICKSTART",
    "STRATEGIES",
    "AgentsConfig",
    "AuditConfig",
    "Axis",
    "BestResponseConfig",
    "DataConfig",
    "Layer",
    "MechanismConfig",
    "ModelConfig",
    "NetworkConfig",
    "OutputConfig",
    "Prepared",
    "Scenario",
    "ScenarioError",
    "ScenarioErrors",
    "StrategyConfig",
    "SweepPlan",
    "SweepRun",
    "describe",
    "ensure_registered",
    "from_dict",
    "load",
    "load_prepared",
    "load_sweep",
    "merge",
    "option",
    "parse_override",
    "prepare",
    "reference_markdown",
    "reference_rows",
    "register_from_spec",
    "resolve_path",
    "run_id",
    "section",
    "set_dotted",
    "shipped_scenarios",
]
