"""``bench_plan.py --write``: the text of ``edgesim/wall_costs.py`` and writing it.

:func:`write_table` runs every measurement of ``plan_calibration.py`` and writes the
table as Python constants (rounded to 3 significant digits, then ``ruff format``ed
where ruff is installed), with the machine and the time it was measured on.
"""

from __future__ import annotations

import datetime
import os
import platform
import pprint
import subprocess
import time

import numpy as np


def machine_text() -> str:
    """Return where and when the table was measured: date, CPUs, load average, Python."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    day = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{day}; {os.cpu_count()} CPUs ({platform.machine()}), load average {load};"
        f" Python {platform.python_version()}, numpy {np.__version__}"
    )


HEADER = '''"""Unit costs of a run's wall time, read by :mod:`edgesim.plan_wall` (``edgesim plan``).

Written by ``python analysis/benchmarks/bench_plan.py --write``, which measures
each cost on the machine it runs on (analysis/benchmarks/plan_calibration.py says
how): rerun it after a change to the driver, the network or the mechanisms, rather
than editing the numbers. Each cost is seconds per count; the plan multiplies it by
its own counts of exchanges, recipients and cells (docs/performance.md, "Know
before you run").
"""

'''


def _rounded(obj):
    if isinstance(obj, float):
        return float(f"{obj:.3g}")
    if isinstance(obj, (tuple, list)):
        return tuple(_rounded(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    return obj


def table_source(
    network: dict,
    start: dict,
    imports: dict,
    memory: dict,
    output: dict,
    secagg_word_s: float,
    machine: str,
):
    """Return the text of ``edgesim/wall_costs.py`` for these tables."""

    def block(name: str, doc: str, value) -> str:
        text = pprint.pformat(_rounded(value), width=96, sort_dicts=True)
        return f"#: {doc}\n{name} = {text}\n\n"

    return (
        HEADER
        + f"#: Where and when the costs were measured.\nMEASURED_ON = {machine!r}\n\n"
        + block(
            "NETWORK",
            "What the simulated network adds to a run, by fidelity, access scheme, link class"
            "\n#: (``equal``/``rates``/``staggered``) and exchange kind"
            " (``steady``/``others``/``general``):"
            "\n#: seconds per exchange, per recipient, per cell an exchange reaches.",
            network,
        )
        + block(
            "START_S",
            "What a simulated network costs once in a fresh process (imports, compiled code"
            "\n#: loaded), by fidelity: seconds.",
            start,
        )
        + block(
            "IMPORT_S",
            "The modules a run imports where it first needs them: seconds each.",
            imports,
        )
        + block(
            "MEMORY",
            "The in-memory driver and the mechanism's own work (reports excluded), by mechanism:"
            "\n#: its rounds and its problems' rounds, seconds per exchange and per recipient.",
            memory,
        )
        + block(
            "OUTPUT",
            "A run's output: seconds per run, and per agent as JSON or as a sidecar (the four"
            "\n#: per-agent passes at each agent's model are counted apart).",
            output,
        )
        + f"#: Secure aggregation's masks: seconds per mask word (and pair's key work in words).\n"
        f"SECAGG_WORD_S = {secagg_word_s!r}\n"
    )


def write_table(path: str, quick: bool = False, log=print) -> None:
    """Measure every table and write ``path`` (edgesim/wall_costs.py); returns None."""
    from plan_calibration import (
        import_table,
        memory_table,
        network_table,
        output_table,
        start_table,
    )

    from edgesim import wall_costs

    t0 = time.perf_counter()
    log("network (batched, events):")
    network = network_table(quick, log)
    log("start of a network in a fresh process:")
    start = start_table(log)
    log("imports a run makes where it first needs them:")
    imports = import_table(log)
    log("memory:")
    memory = memory_table(quick, log)
    log("output:")
    output = output_table(quick, log)
    text = table_source(
        network, start, imports, memory, output, wall_costs.SECAGG_WORD_S, machine_text()
    )
    with open(path, "w") as fh:
        fh.write(text)
    try:  # the repository's style (ruff format), where ruff is installed
        subprocess.run(["ruff", "format", "--quiet", path], check=False)
    except OSError:
        pass
    log(f"wrote {path} ({time.perf_counter() - t0:.0f} s of measurements)")
