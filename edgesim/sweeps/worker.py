"""One run in a worker: the function the executor's workers call, and its result's text.

``execute`` is a module-level function, so process pools and Dask pickle it by reference.
"""

from __future__ import annotations

import json
import time
import traceback

from edgesim.scenario import Scenario, ensure_registered


def execute(scenario: Scenario) -> dict:
    """Run one validated scenario; the function the executor's workers call.

    Returns ``{"status": "ok", "result": <compact JSON text>, "elapsed_s"}``
    or ``{"status": "failed", "error": "Type: message", "traceback", "elapsed_s"}``
    (seconds of wall time). Never raises for a failing run.
    """
    t0 = time.perf_counter()
    try:
        ensure_registered(scenario)
        from edgesim.simulate import run

        result = run(scenario)
        text = json.dumps(result, separators=(",", ":"), allow_nan=False)
        return {"status": "ok", "result": text, "elapsed_s": time.perf_counter() - t0}
    except Exception as err:  # a failed run is recorded, not raised
        return {
            "status": "failed",
            "error": f"{type(err).__name__}: {' '.join(str(err).split())}",
            "traceback": traceback.format_exc(),
            "elapsed_s": time.perf_counter() - t0,
        }


def result_json(record: dict) -> str:
    """Return a record's result as ``edgesim run --json`` writes it (byte-identical text)."""
    from edgesim.output import to_json

    return to_json(record["result"])
