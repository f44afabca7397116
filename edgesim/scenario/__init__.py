"""TOML scenarios loaded into validated frozen dataclasses.

Every key is checked against the metadata declared with
:func:`edgesim.config.option` (type, range, allowed values); unknown keys are
rejected with the closest valid name; every error in a file is reported in
one pass with its dotted key and, where it can be found, its line.
``--set a.b=value`` overrides any key by dotted path (the value parsed as TOML).

The package's modules, one job each (everything is re-exported here):

- :mod:`~edgesim.scenario.schema`: the dataclasses, one per TOML table, and :class:`Scenario`;
- :mod:`~edgesim.scenario.validate`: raw data checked key by key into a Scenario, :func:`from_dict`;
- :mod:`~edgesim.scenario.rules`: the rules spanning several tables (:meth:`Scenario.errors`);
- :mod:`~edgesim.scenario.keys`: dotted key paths, ``--set`` overrides, line lookup;
- :mod:`~edgesim.scenario.loading`: files, shipped scenarios, ``include``, :func:`prepare`, :func:`load`;
- :mod:`~edgesim.scenario.axes`: the shape of a ``[sweep]`` table, checked into axes;
- :mod:`~edgesim.scenario.plans`: sweep plans, :func:`load_sweep`, :func:`run_id`;
- :mod:`~edgesim.scenario.reference`: the key reference of docs/reference.md
  (``python -m edgesim.scenario`` prints it).
"""

from __future__ import annotations

from edgesim.agents import STRATEGIES, StrategyConfig
from edgesim.config import option, section
from edgesim.deviations import BUILTIN_STRATEGIES  # registers the deviation families
from edgesim.errors import ScenarioError, ScenarioErrors
from edgesim.learning.data import DataConfig
from edgesim.mechanisms import BUILTIN_MECHANISMS, MECHANISMS
from edgesim.mechanisms.base import CLIPS_GRADIENTS, CLIPS_LOSSES, MechanismConfig
from edgesim.network.config import NetworkConfig
from edgesim.plugins import register_from_spec
from edgesim.scenario.axes import MAX_RUNS, Axis
from edgesim.scenario.keys import Layer, parse_override, set_dotted
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
from edgesim.scenario.plans import SweepPlan, SweepRun, load_sweep, run_id
from edgesim.scenario.reference import reference_markdown, reference_rows
from edgesim.scenario.schema import (
    AUTO_SIDECAR_FROM_K,
    AgentsConfig,
    AuditConfig,
    BestResponseConfig,
    ModelConfig,
    OutputConfig,
    Scenario,
    for_json_file,
)
from edgesim.scenario.validate import ensure_registered, from_dict, raise_errors

__all__ = [
    "AUTO_SIDECAR_FROM_K",
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
    "for_json_file",
    "from_dict",
    "load",
    "load_prepared",
    "load_sweep",
    "merge",
    "option",
    "parse_override",
    "prepare",
    "raise_errors",
    "reference_markdown",
    "reference_rows",
    "register_from_spec",
    "resolve_path",
    "run_id",
    "section",
    "set_dotted",
    "shipped_scenarios",
]
