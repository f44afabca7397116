"""Sweeps: many runs on a ``concurrent.futures`` Executor, recorded so that nothing is lost.

This module is callable: ``edgesim.sweep(scenario, out_dir, workers=..., ...)``
is the Python API's sweep (see ``edgesim._sweep_api``), returning an
``edgesim.SweepResult``.

A sweep directory holds:

- ``results.jsonl``: one JSON object per finished run, appended as the run
  finishes, in completion order. A record is
  ``{"run_id", "index", "values", "status", "error"?, "elapsed_s", "finished", "result"?}``:
  ``run_id`` (16 hex digits of a SHA-256 of the resolved scenario, seed
  included), ``index`` (the run's place in the sweep's cartesian product),
  ``values`` (the swept keys and their values), ``status`` (``"ok"`` or
  ``"failed"``), ``error`` (failures: ``"Type: message"`` on one line, with
  ``traceback`` beside it), ``elapsed_s`` (wall seconds the run took),
  ``finished`` (UTC time) and ``result`` (successes: the full output of
  ``edgesim run --json``, the same object; ``json.loads`` then
  :func:`edgesim.simulate.to_json` gives that file byte for byte).
  Each record is one line written by a single ``os.write`` on a file opened
  with ``O_APPEND``, then ``fsync``: a crash leaves at most a partial last
  line, which the next start cuts off.
- ``manifest.json``: the scenario (path, text of every file, overrides),
  the swept keys, the number of runs, and per session the edgesim version,
  git revision, executor and start/finish times (UTC). Written atomically.

Rerunning the same sweep resumes it: runs whose id is already recorded are
skipped (failed ones too, unless ``retry_failed``; then the newest record of
a run is the one that counts). An interrupt (Ctrl-C, SIGTERM) stops
submitting, records the runs that already finished, cancels the rest and
returns; nothing finished is lost and nothing is half-written.

Executors: a local process pool (the default, ``workers`` processes), an
in-process one (``workers=0``, for debugging and small tests), or a Dask
distributed cluster (``scheduler="tcp://host:8786"``, through
``Client(address).get_executor()``; ``tls://host:8786`` with
``security=dask_security(...)`` for a scheduler behind mutual TLS). Every run
is a pure function of its scenario, so the per-run JSON is byte-identical
whichever executes it.

Runs whose strategy or mechanism is named ``"module:Name"`` are imported
again in each worker, which therefore needs that module on its path. Names
registered at run time with :func:`edgesim.register_strategy` reach forked
local workers, but not Dask workers: use ``"module:Name"`` there.

The package, one job a module: :mod:`~edgesim.sweeps.worker` (one run in a
worker: ``execute``, ``result_json``), :mod:`~edgesim.sweeps.executors`
(executors and signals), :mod:`~edgesim.sweeps.store` (the sweep folder's
files and lock), :mod:`~edgesim.sweeps.runner` (``run_sweep``),
:mod:`~edgesim.sweeps.tables` (rows, CSV, Parquet), :mod:`~edgesim.sweeps.plots`
and :mod:`~edgesim.sweeps.errors` (``SweepError``). Every name is also here,
as ``edgesim.sweeps.NAME``.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Every name of the package -> the module that defines it, imported on first use, so that
#: a command needing one of them (``edgesim run`` writes with ``write_atomic``) loads only it.
EXPORTS = {
    "SweepError": "errors",
    **dict.fromkeys(
        ("ExecutorHandle", "InlineExecutor", "dask_security", "make_executor", "threading_main"),
        "executors",
    ),
    "plot": "plots",
    "save_figure": "plots",
    "SweepSummary": "runner",
    "run_sweep": "runner",
    **dict.fromkeys(
        (
            "LOCK",
            "MANIFEST",
            "RESULTS",
            "git_revision",
            "latest",
            "load_records",
            "read_records",
            "write_atomic",
        ),
        "store",
    ),
    **dict.fromkeys(("columns_of", "csv_text", "table", "write_csv", "write_parquet"), "tables"),
    "execute": "worker",
    "result_json": "worker",
}


def __getattr__(name: str) -> Any:
    """Import an exported name (:data:`EXPORTS`) or a submodule on first use; returns it."""
    module = EXPORTS.get(name)
    if module is None:
        if name in ("errors", "executors", "plots", "runner", "store", "tables", "worker"):
            return importlib.import_module(f"{__name__}.{name}")
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Return the package's names, the lazy ones included."""
    return sorted({*globals(), *EXPORTS})


__all__ = [
    "LOCK",
    "MANIFEST",
    "RESULTS",
    "ExecutorHandle",
    "InlineExecutor",
    "SweepError",
    "SweepSummary",
    "columns_of",
    "csv_text",
    "dask_security",
    "execute",
    "git_revision",
    "latest",
    "load_records",
    "make_executor",
    "plot",
    "read_records",
    "result_json",
    "run_sweep",
    "save_figure",
    "table",
    "threading_main",
    "write_atomic",
    "write_csv",
    "write_parquet",
]
