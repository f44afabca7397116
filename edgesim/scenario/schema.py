"""The scenario schema: one frozen dataclass per TOML table, and :class:`Scenario`, the whole.

Each key's type, default, range, allowed values and documentation are
declared with :func:`edgesim.config.option`; a nested table is a
:func:`edgesim.config.section`. Validation (:mod:`edgesim.scenario.validate`)
and the key reference (:mod:`edgesim.scenario.reference`) read them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass

from edgesim.agents import STRATEGIES
from edgesim.config import (
    as_data,
    check_value,
    field_errors,
    kinds_of,
    matches,
    option,
    options_class,
    or_list,
    section,
    show,
    suggest,
    type_hints,
)
from edgesim.errors import ScenarioError
from edgesim.learning.data import DataConfig
from edgesim.mechanisms.base import MechanismConfig
from edgesim.network.config import NetworkConfig
from edgesim.scenario.keys import under
from edgesim.scenario.rules import cross_table_errors


@dataclass(frozen=True)
class ModelConfig:
    """The ``[model]`` table."""

    kind: str = option("logistic", "model class", choices=("ridge", "logistic"))
    l2: float = option(0.01, "L2 regularisation l2 of the per-sample loss (= mu)", gt=0.0)
    intercept: bool = option(True, "append a constant 1 to x (regularised like the rest)")
    smoothness: str = option(
        "agent",
        "how L_g is bounded: 'agent' (max_k top eigenvalue of F_k's curvature) or 'sample'"
        " (the paper's per-sample bound, larger)",
        choices=("agent", "sample"),
    )


@dataclass(frozen=True)
class AgentsConfig:
    """The ``[agents]`` table and its ``[[agents.strategy]]`` entries."""

    count: int = option(10, "number of agents K", ge=1)
    weights: str = option(
        "equal",
        "weights p_k: 'equal' (1/K), 'samples' (n_k/n) or 'claimed' (claimed n_k / the claims'"
        " sum: the counts the agents claim, as a server that cannot check n_k; a claim-size"
        " strategy's factor sets its claim, every other agent claims its n_k)",
        choices=("equal", "samples", "claimed"),
    )
    strategy: list = option([], "[[agents.strategy]] tables: agent, kind, gamma, noise_std")


@dataclass(frozen=True)
class BestResponseConfig:
    """The ``[best_response]`` table: search one agent's (or a coalition's) best deviation.

    By default the original search: agent ``agent`` amplifies by gamma in
    [gamma_min, gamma_max]. ``family``, ``parameters``, ``fixed`` and ``agents``
    search any registered strategy's numeric options (:mod:`edgesim.best_response`).
    """

    enabled: bool = option(False, "run the search after the main run")
    agent: int = option(0, "the deviating agent", ge=0)
    gamma_min: float = option(0.25, "lower end of the gamma bracket", gt=0.0)
    gamma_max: float = option(64.0, "upper end of the gamma bracket", gt=0.0)
    points: int = option(
        15,
        "grid points before the bounded refinement (log-spaced when the bracket's lower end"
        " is > 0); with two or more parameters, per parameter at most this many",
        ge=3,
    )
    objective: str = option(
        "overall",
        "what the agent minimises: 'overall' (P_k + F_k(w*), Definition 1), 'overall-test'"
        " (P_k + test loss) or 'test' (its test loss: expected risk estimate)",
        choices=("overall", "overall-test", "test"),
    )
    xtol: float = option(
        1e-3,
        "tolerance of the refinement, in the search coordinate: log(value) for a parameter"
        " whose lower end is > 0 (log(gamma)), else the value",
        gt=0.0,
    )
    family: str = option(
        "amplify",
        "the deviation family searched: a registered strategy kind whose options are searched"
        " (amplify, pull, pretend-data, loss-misreport, withhold, claim-size, sybil, ...)",
    )
    agents: list = option(
        [],
        "a coalition: agent indices that deviate jointly (each plays the family with the same"
        " parameters) and minimise their summed objective; empty: agent alone",
    )
    parameters: dict = option(
        {},
        "the family's numeric options searched, {name = [lo, hi]}, 1 to 4 of them, each"
        " inside its option's range (signed where the option allows); empty with family ="
        " 'amplify': gamma in [gamma_min, gamma_max], the original search",
    )
    fixed: dict = option(
        {},
        "the family's other options, {name = value}, held fixed during the search (an"
        " option not named keeps its default)",
    )
    budget: int = option(
        60,
        "at most this many mechanism runs for the grid and the refinement (with parameters"
        " given; the original gamma search runs its grid and refinement as before)",
        ge=3,
    )

    def cross_check(self, K: int) -> list[ScenarioError]:
        """Return the search's problems for K agents, one ScenarioError per bad key (empty when
        valid): a coalition names each of agents 0..K-1 at most once; the family is a
        registered strategy; ``parameters`` names 1 to 4 of its numeric options (none only for
        a family without any, or amplify: gamma), each with a bracket [lo, hi], lo < hi, inside
        the option's range; ``fixed`` holds allowed values of its other options. The search (:mod:`edgesim.best_response`) raises them."""
        key = "best_response"
        errs = []
        seen: set[int] = set()
        for a in self.agents:
            if not (isinstance(a, int) and not isinstance(a, bool)) or not 0 <= a < K:
                errs.append(
                    ScenarioError(f"{key}.agents", f"{a!r} is not an agent: use 0..{K - 1}")
                )
            elif a in seen:
                errs.append(ScenarioError(f"{key}.agents", f"names agent {a} twice"))
            seen.add(a)
        if self.family not in STRATEGIES:
            hint = suggest(self.family, sorted(STRATEGIES))
            return errs + [
                ScenarioError(
                    f"{key}.family",
                    f"{self.family!r} is not a registered strategy{hint}; use"
                    f" {or_list([repr(n) for n in sorted(STRATEGIES)])}",
                )
            ]
        cls = options_class(STRATEGIES[self.family])
        fields_of = {f.name: f for f in dataclasses.fields(cls)} if cls else {}
        numeric = [n for n, f in fields_of.items() if _searchable(cls, f)]
        if not self.parameters and numeric and self.family != "amplify":
            return errs + [
                ScenarioError(
                    f"{key}.parameters",
                    f"give the options of {self.family!r} to search, {{name = [lo, hi]}}; its"
                    f" numeric options: {', '.join(numeric) or 'none'}",
                )
            ]
        if len(self.parameters) > 4:
            errs.append(ScenarioError(f"{key}.parameters", "search at most 4 options at once"))
        for name, bracket in self.parameters.items():
            errs += _bracket_errors(f"{key}.parameters.{name}", name, bracket, cls, fields_of)
        for name, value in self.fixed.items():
            k = f"{key}.fixed.{name}"
            if name not in fields_of:
                errs.append(ScenarioError(k, f"{self.family!r} has no option {name!r}"))
            elif name in self.parameters:
                errs.append(ScenarioError(k, f"{name!r} is searched (best_response.parameters)"))
            else:
                _, problem = check_value(k, value, fields_of[name], type_hints(cls)[name])
                errs += [ScenarioError(k, problem)] if problem else []
        return errs


def _searchable(cls: type, f: dataclasses.Field) -> bool:
    """Return whether option ``f`` of the options class ``cls`` is a number (int or float, not
    bool) that a search can vary."""
    kinds = f.metadata.get("kinds") or kinds_of(type_hints(cls)[f.name])
    return bool(kinds) and all(k in (int, float) for k in kinds)


def _bracket_errors(key: str, name: str, bracket, cls, fields_of: dict) -> list[ScenarioError]:
    """Return the problems of one searched option's bracket ``[lo, hi]`` (empty when valid)."""
    if name not in fields_of:
        return [ScenarioError(key, f"no such option; options: {', '.join(fields_of) or 'none'}")]
    f = fields_of[name]
    if not _searchable(cls, f):
        return [ScenarioError(key, f"{name!r} is not a number: set it in best_response.fixed")]
    ok = isinstance(bracket, list) and len(bracket) == 2
    if not ok or not all(matches(v, float) and math.isfinite(v) for v in bracket):
        return [ScenarioError(key, f"expected [lo, hi] (two numbers), got {show(bracket)}")]
    lo, hi = (float(v) for v in bracket)
    if lo >= hi:
        return [ScenarioError(key, f"needs lo < hi, got [{lo:g}, {hi:g}]")]
    for end in (lo, hi):
        _, problem = check_value(key, end, f, float)
        if problem:
            return [ScenarioError(key, f"the bracket's end {problem}")]
    return []


#: From this many agents, ``output.per_agent = "auto"`` puts ``edgesim run --json``'s
#: per-agent results in the npz sidecar: the JSON's ``agents`` array would be about 70 MB
#: and a second and a half to form and write at 10^5 agents (about 700 B and 15 us an
#: agent), against a few MB and a fraction of a second for the sidecar.
AUTO_SIDECAR_FROM_K = 100_000


@dataclass(frozen=True)
class OutputConfig:
    """The ``[output]`` table.

    ``per_agent = "auto"`` (the default) is resolved at once: a scenario holds the mode it
    runs with, ``"json"``, and ``edgesim run --json`` alone turns it into ``"npz"`` for a run
    of at least :data:`AUTO_SIDECAR_FROM_K` agents (:func:`for_json_file`). So the result's
    scenario echo names the mode used, and a run's echo loads back to the same run.
    """

    local_baseline: bool = option(
        True, "train every agent's local model for local_loss (voluntary participation)"
    )
    model_weights: bool = option(
        False,
        "add model.weights: the final global model w* as nested lists in the model's shape"
        " ((d',) ridge, (d', classes) logistic; the intercept last); for dp-ffl the noisy release",
    )
    per_agent: str = option(
        "auto",
        "where the per-agent results go: 'json' (the agents array, one object per agent, and"
        " the per-agent lists payments, iterations.phase2_per_agent, ...), 'npz' or 'parquet'"
        " (one column per field in a sidecar file beside the JSON, FILE.agents.npz or"
        " FILE.agents.parquet; the JSON keeps per_agent: quantiles and totals of each column;"
        " recommended from K = 10^5 on: the JSON array costs about 700 B and 15 us per agent),"
        " 'none' (the summaries only), or 'auto': 'npz' when `edgesim run --json` writes a run"
        f" of K >= {AUTO_SIDECAR_FROM_K} agents, 'json' otherwise (a smaller run, a sweep, the"
        " Python API); the result's scenario echo names the one used. parquet needs pyarrow",
        choices=("auto", "json", "npz", "parquet", "none"),
    )

    def __post_init__(self):
        if self.per_agent == "auto":  # what every path but `edgesim run --json` runs with
            object.__setattr__(self, "per_agent", "json")


@dataclass(frozen=True)
class AuditConfig:
    """The ``[audit]`` table: an empirical privacy audit (``edgesim audit``, :mod:`edgesim.audit`)."""

    runs: int = option(
        200,
        "runs per side (on D and on its neighbour D'); the first half of each side chooses"
        " the threshold, the second half measures it",
        ge=4,
    )
    confidence: float = option(
        0.95, "confidence of the Clopper-Pearson lower bound on epsilon", gt=0.0, lt=1.0
    )
    canary: str = option(
        "gradient",
        "the canary sample: 'gradient' (its gradient at w[0] is canary_norm clipping norms)"
        " or 'smoothness' (its features are canary_norm times the median feature norm: it"
        " raises a data-derived L_g)",
        choices=("gradient", "smoothness"),
    )
    canary_norm: float = option(
        50.0,
        "the canary's size: its per-sample gradient norm at w[0] in multiples of the clipping"
        " norm (of gradient_bound when clipping is off), or for a smoothness canary its"
        " feature norm in multiples of the median feature norm",
        gt=0.0,
    )
    trial: int = option(
        -1,
        "set by edgesim audit: this run's trial, which seeds the server's noise afresh"
        " (-1: not an audit run)",
        ge=-1,
    )
    neighbour: bool = option(
        False, "set by edgesim audit: run on D' (the canary replaces one sample of D)"
    )


@dataclass(frozen=True)
class Scenario:
    """A whole validated scenario."""

    seed: int = option(0, "seed of every random stream (data, server, agents)", ge=0)
    name: str = option("", "a label copied to the output")
    data: DataConfig = section(DataConfig, "the dataset and how it is split")
    model: ModelConfig = section(ModelConfig, "the model and its loss")
    agents: AgentsConfig = section(AgentsConfig, "the agents and their strategies")
    mechanism: MechanismConfig = section(MechanismConfig, "the mechanism the server runs")
    network: NetworkConfig = section(NetworkConfig, "the network driving the mechanism")
    best_response: BestResponseConfig = section(BestResponseConfig, "a best-response search")
    output: OutputConfig = section(OutputConfig, "what is computed for the output")
    audit: AuditConfig = section(AuditConfig, "an empirical privacy audit (edgesim audit)")

    def to_dict(self) -> dict:
        """Return the resolved scenario (defaults filled in) as plain data, in the file's layout.

        A part's options are the sub-table named after the part
        (``mechanism.<kind>``, ``network.radio.wifi``) or, for a strategy,
        keys of its table: what this returns loads back to an equal Scenario.
        """
        return as_data(self)

    def errors(self, known: Iterable[str] = ()) -> list[ScenarioError]:
        """Return every problem of this scenario (empty when valid), one ScenarioError each.

        Every field is checked against its declared type, range and choices
        (recursively, a part's options included), then every rule that spans
        several tables (:mod:`edgesim.scenario.rules`, ``NetworkConfig.cross_check``).
        ``known``: keys already found bad (the loader's per-key errors); rules
        reading them are skipped. The loader, :func:`edgesim.run` and sweep
        points all validate through here, so each reports the same key and text.
        """
        errs = field_errors(self, "")
        replaced = list(known)  # the loader put defaults in their place
        held = [e.key for e in errs]  # still holding the bad value: skip every rule near them

        def bad(*keys: str) -> bool:
            return any(under(k, e) for k in keys for e in replaced) or any(
                under(k, e) or under(e, k) for k in keys for e in held
            )

        return errs + cross_table_errors(self, bad)


def for_json_file(sc: Scenario, raw: dict) -> Scenario:
    """Return ``sc`` as ``edgesim run --json FILE`` runs it: with ``output.per_agent = "npz"``
    when the scenario leaves it at ``"auto"`` (``raw``, its merged tables, sets no other
    value) and has at least :data:`AUTO_SIDECAR_FROM_K` agents; else ``sc`` itself."""
    output = raw.get("output")
    asked = output.get("per_agent", "auto") if isinstance(output, dict) else "auto"
    if asked != "auto" or sc.agents.count < AUTO_SIDECAR_FROM_K:
        return sc
    return dataclasses.replace(sc, output=dataclasses.replace(sc.output, per_agent="npz"))
