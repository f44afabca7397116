"""edgesim: faithful federated learning mechanisms on a simulated wireless edge network.

The Python API (the same machinery as the ``edgesim`` command)::

    import edgesim

    sc = edgesim.load_scenario("scenarios/quickstart.toml", overrides={"agents.count": 20})
    res = edgesim.run(sc)                      # a RunResult
    br = edgesim.deviate("paper-fig1", agent=0, family="pull", parameters={"lam": [-2, 2]})
    res.model.global_loss, res["model"]["global_loss"], res.to_json()  # ``edgesim run --json``

    sc = edgesim.Scenario(agents=edgesim.AgentsConfig(count=5))  # typed, one class per table

    out = edgesim.sweep("scenarios/comm-vs-k.toml", "runs/comm", workers=2)
    rows = out.table()                         # one dict per run, dotted columns

    edgesim.register_strategy("free-rider", lambda cfg: MyStrategy(cfg.gamma))
    edgesim.register_mechanism("my-mech", my_mechanism)

Heavy modules are imported on first use, so ``import edgesim`` stays cheap:
the configuration classes and :class:`RunResult` too (:data:`LAZY_EXPORTS`).
docs/api.md documents all of it (``python -m edgesim.api_reference``).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgesim.version import __version__

if TYPE_CHECKING:
    from edgesim.result import RunResult

# Names imported on first use (module-level __getattr__), so ``import edgesim``
# stays cheap: the typed configuration, one class per scenario table, and the
# result and error types. Each name -> the module that defines it.
LAZY_EXPORTS = {
    "Scenario": "edgesim.scenario.schema",
    "DataConfig": "edgesim.learning.data",
    "PartitionConfig": "edgesim.learning.data",
    "ModelConfig": "edgesim.scenario.schema",
    "AgentsConfig": "edgesim.scenario.schema",
    "StrategyConfig": "edgesim.agents",
    "MechanismConfig": "edgesim.mechanisms.base",
    "NetworkConfig": "edgesim.network.config",
    "RadioConfig": "edgesim.network.radio",
    "BackhaulConfig": "edgesim.network.topology",
    "TopologyConfig": "edgesim.network.topology",
    "ComputeConfig": "edgesim.network.compute",
    "AvailabilityConfig": "edgesim.network.availability",
    "SecAggConfig": "edgesim.network.secagg",
    "EnergyConfig": "edgesim.network.energy",
    "MobilityConfig": "edgesim.network.mobility",
    "BestResponseConfig": "edgesim.scenario.schema",
    "OutputConfig": "edgesim.scenario.schema",
    "AuditConfig": "edgesim.scenario.schema",
    "RunResult": "edgesim.result",
    "ScenarioError": "edgesim.errors",
    "ScenarioErrors": "edgesim.errors",
}

__all__ = [
    "SweepResult",
    "__version__",
    "check_access",
    "check_mechanism",
    "deviate",
    "load_scenario",
    "load_sweep",
    "register_mechanism",
    "register_strategy",
    "run",
    "sweep",
    *LAZY_EXPORTS,
]


def __getattr__(name: str) -> Any:
    """Import a lazily exported name (:data:`LAZY_EXPORTS`) on first use; returns it."""
    module = LAZY_EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'edgesim' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Return the module's names, the lazy ones included."""
    return sorted({*globals(), *LAZY_EXPORTS})


def load_scenario(
    path_or_dict: str | Path | dict | None = None,
    overrides: dict | list[str] | None = None,
    seed: int | None = None,
):
    """Load and validate a scenario; returns an ``edgesim.scenario.Scenario`` (frozen).

    ``path_or_dict``: a TOML file, a shipped scenario's name (``"quickstart"``),
    a dict shaped like the TOML, or None (the built-in quick start).
    ``overrides``: ``{"agents.count": 20}`` or ``["agents.count=20"]`` (as
    ``--set``); ``seed`` replaces the seed. A ``[sweep]`` table is not
    expanded (see :func:`load_sweep`). Raises ``edgesim.errors.ScenarioErrors``
    listing every problem.
    """
    from edgesim import scenario

    return scenario.load(path_or_dict, overrides or (), seed)


def load_sweep(path_or_dict, overrides: dict | list[str] | None = None):
    """Expand a scenario's ``[sweep]`` into validated runs; returns an ``edgesim.scenario.SweepPlan``."""
    from edgesim import scenario

    return scenario.load_sweep(path_or_dict, overrides or ())


def run(scenario, overrides: dict | list[str] | None = None) -> RunResult:
    """Run one scenario (a Scenario, a path, a shipped name or a dict); returns a :class:`RunResult`.

    A path or dict is loaded first with :func:`load_scenario` and ``overrides``;
    a Scenario built in Python is validated the same way (its errors carry the
    same keys and text): raises ``edgesim.errors.ScenarioErrors`` listing every problem.
    """
    from edgesim import simulate
    from edgesim.scenario import Scenario, ensure_registered, raise_errors

    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario, overrides)
    elif overrides:
        raise TypeError("overrides apply when loading: pass a path or a dict, not a Scenario")
    else:
        raise_errors(scenario)
    ensure_registered(scenario)
    from edgesim.result import RunResult

    return RunResult(simulate.run(scenario))


def deviate(
    scenario,
    *,
    agent=None,
    family: str | None = None,
    parameters: dict | None = None,
    fixed: dict | None = None,
    objective: str | None = None,
    budget: int | None = None,
    overrides: dict | list[str] | None = None,
) -> dict:
    """Search an agent's (or a coalition's) best deviation within a family; returns the search's dict.

    ``scenario``: a Scenario, path, shipped name or dict (loaded with ``overrides``); its
    ``[best_response]`` table is the starting point, changed by the arguments given:
    ``agent`` (an index, or a list: a coalition deviating jointly, summed objective),
    ``family`` (a registered strategy), ``parameters`` ({option: [lo, hi]}, 1 to 4),
    ``fixed`` ({option: value}), ``objective`` ('overall', 'overall-test', 'test'),
    ``budget`` (most mechanism runs). ``edgesim.deviate("paper-fig1", agent=0,
    family="pull", parameters={"lam": [-2, 2]})``. Returns what a run's JSON holds under
    ``best_response`` (:func:`edgesim.best_response.search`: regret, bound, parameters,
    curve, ...; loss units). Raises ``edgesim.errors.ScenarioErrors`` naming bad keys.
    """
    from edgesim import best_response, reference, simulate
    from edgesim.scenario import Scenario, ensure_registered

    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario, overrides)
    elif overrides:
        raise TypeError("overrides apply when loading: pass a path or a dict, not a Scenario")
    sc = best_response.configured(
        scenario,
        agent,
        family=family,
        parameters=parameters,
        fixed=fixed,
        objective=objective,
        budget=budget,
    )
    ensure_registered(sc)
    sim = simulate.Simulation(sc)
    return best_response.search(sim, sc.best_response, optimum=reference.optimum)


class SweepResult:
    """What :func:`sweep` did and found.

    ``summary``: an ``edgesim.sweeps.SweepSummary`` (counts, ``interrupted``);
    ``records``: the newest record of every run of this plan (read back from
    ``out_dir``, or kept in memory when there is none; runs of other plans
    in the same folder are left out), ordered by run index; ``plan``: the runs.
    """

    def __init__(self, plan, summary, records: list[dict]):
        self.plan = plan
        self.summary = summary
        self.records = records

    @property
    def ok(self) -> list[dict]:
        """Return the records of successful runs."""
        return [r for r in self.records if r.get("status") == "ok"]

    @property
    def failed(self) -> list[dict]:
        """Return the records of failed runs."""
        return [r for r in self.records if r.get("status") != "ok"]

    def table(self, per_agent: bool = False) -> list[dict]:
        """Return tidy rows: one dict per run (or per agent); see ``edgesim.sweeps.table``."""
        from edgesim.sweeps import table

        return table(self.records, per_agent)

    def __repr__(self) -> str:
        return f"SweepResult({len(self.ok)} ok, {len(self.failed)} failed of {self.summary.total})"


def sweep(
    scenario,
    out_dir: str | Path | None = None,
    *,
    overrides: dict | list[str] | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    executor=None,
    retry_failed: bool = False,
    progress: bool = False,
) -> SweepResult:
    """Run every run of a scenario's ``[sweep]``; returns a :class:`SweepResult`.

    ``scenario``: a path, shipped name, dict or ``SweepPlan``. ``out_dir``:
    the sweep folder (``results.jsonl`` and ``manifest.json``; resumes what
    is recorded there), or None to keep the records in memory only.
    ``workers`` (local processes; 0 = this process), ``scheduler`` (a Dask
    address) or ``executor`` (any ``concurrent.futures.Executor`` you own).
    ``progress``: draw a progress bar on a terminal. Ctrl-C stops cleanly
    (``result.summary.interrupted``).
    """
    from edgesim import scenario as scn
    from edgesim import sweeps as sw
    from edgesim.progress import Bar

    plan = scenario if isinstance(scenario, scn.SweepPlan) else load_sweep(scenario, overrides)
    bar = Bar(len(plan.runs), "sweep", enabled=None if progress else False)
    info = {"scenario": str(plan.path) if plan.path else None, "overrides": overrides}
    if isinstance(overrides, dict):
        info["overrides"] = [f"{k}={v!r}" for k, v in overrides.items()]
    with bar:
        summary = sw.run_sweep(
            plan,
            out_dir,
            workers=workers,
            scheduler=scheduler,
            executor=executor,
            bar=bar,
            retry_failed=retry_failed,
            keep=out_dir is None,
            manifest=info,
        )
    records = sw.load_records(out_dir) if out_dir is not None else sw.latest(summary.records)
    # The folder may also hold runs of other plans (an earlier grid, another size):
    # keep this plan's, in its order and under its indices.
    order = {run.run_id: i for i, run in enumerate(plan.runs)}
    records = sorted(
        ({**r, "index": order[r["run_id"]]} for r in records if r["run_id"] in order),
        key=lambda r: r["index"],
    )
    return SweepResult(plan, summary, records)


def register_strategy(name: str, factory, *, options=None, replace: bool = False) -> None:
    """Register a strategy: ``factory(cfg: StrategyConfig) -> Strategy``; scenarios then take ``kind = name``.

    Same registry as the built-in strategies (``edgesim.agents``); returns
    nothing. ``options``: the strategy's options class (a frozen dataclass
    declared with ``edgesim.config.option``), set inline in its
    ``[[agents.strategy]]`` table and read with
    ``edgesim.config.resolved_options(cfg, "options")``. A name already taken
    raises ValueError unless ``replace`` is true.
    """
    from edgesim.agents import register_strategy as register

    register(name, factory, options=options, replace=replace)


def register_mechanism(name: str, mechanism, *, options=None, replace: bool = False) -> None:
    """Register a mechanism generator ``mechanism(ctx: ServerContext)``; scenarios then take ``mechanism.kind = name``.

    Same registry as the built-in mechanisms (``edgesim.mechanisms``); returns
    nothing. ``options``: the mechanism's options class (a frozen dataclass
    declared with ``edgesim.config.option``), set in the scenario's
    ``[mechanism.<name>]`` sub-table and read with
    ``edgesim.config.resolved_options(ctx.cfg, "options")``. A name already
    taken raises ValueError unless ``replace`` is true; :func:`check_mechanism`
    tests a mechanism first.
    """
    from edgesim.mechanisms import register_mechanism as register

    register(name, mechanism, options=options, replace=replace)


def check_mechanism(mechanism, *, agents: int = 4, seed: int = 0) -> dict:
    """Check a registered name or a mechanism function like Gymnasium's ``check_env``.

    Runs it on a small ridge problem of ``agents`` agents, twice in memory
    and once on a lossless network (:func:`edgesim.check.check_mechanism`
    lists the rules); returns its report ``{"mechanism", "steps",
    "phase1_rounds", "payments"}``, raises
    :class:`edgesim.check.MechanismCheckError` naming the first check that fails.
    """
    from edgesim.check import check_mechanism as _check

    return _check(mechanism, agents=agents, seed=seed)


def check_access(scheme, *, agents: int = 6, seed: int = 0) -> dict:
    """Check an access scheme (a registered name or an ``AccessScheme`` subclass) like :func:`check_mechanism`.

    Runs its closed forms on a small exchange, then a small scenario in the
    events and batched fidelities (:func:`edgesim.check.check_access` lists
    the rules); returns its report, raises
    :class:`edgesim.check.AccessCheckError` naming the first check that fails.
    """
    from edgesim.check import check_access as _check

    return _check(scheme, agents=agents, seed=seed)


# Custom network parts register in edgesim.network: register_link and register_loss
# (edgesim.network.links), register_compute_model (.compute), register_availability
# (.availability) and register_access (.access); a scenario may also name any of them
# as "package.module:Name".
