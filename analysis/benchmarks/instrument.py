"""What the benchmark scripts share: timing, peak memory, child processes, verdicts, arguments.

Imported as ``from instrument import ...``: the benchmarks run as scripts
(``python analysis/benchmarks/bench_network.py``), so their own folder is on
``sys.path``.

- timing: :func:`timed_call` (one call, after a garbage collection),
  :func:`best_time` (least wall time of repeats), :func:`accumulate`
  (wrap a function or generator function to add up its calls and seconds),
  :func:`timed_simulation` (one run of a scenario, its setup and whole time, with
  the model's and the mechanism's time split out);
- peak memory: :func:`reset_peak_rss`, :func:`peak_rss`;
- fresh processes: :func:`report_to_parent` (the child's one JSON line) and
  :func:`run_child` (the parent reading it);
- what is printed: :func:`machine_line`, :func:`verdict`, :func:`met`;
- arguments: :func:`argument_parser`, :func:`add_epsilon` and :func:`epsilon`.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import resource
import subprocess
import time
from collections.abc import Callable
from typing import Any

from edgesim.simulate import Simulation, run

#: What ``--epsilon`` defaults to: 0.1, or 1.0 with ``--quick`` (T2 = 0 at the quick K).
EPSILON, EPSILON_QUICK = 0.1, 1.0


# ------------------------------------------------------------------ timing


def timed_call(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Collect garbage, then call ``fn`` once; returns (its wall time in seconds, its result).

    The collection runs before the clock starts, so that garbage left by what ran
    before is not charged to ``fn``.
    """
    gc.collect()
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def best_time(fn: Callable[[], Any], repeats: int = 3, warm_up: bool = False) -> tuple[float, Any]:
    """Call ``fn`` ``repeats`` times (after one untimed call when ``warm_up``).

    Returns (the least wall time of one call in seconds, the last call's result).
    """
    result = fn() if warm_up else None
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def accumulate(owner: Any, name: str, acc: dict, generator: bool = False) -> None:
    """Replace ``owner.name`` (a function or generator function) by a timed wrapper.

    ``owner`` is a class (every instance is timed) or an instance (only it).
    ``acc[name]`` becomes [calls, seconds] and adds up every call from now on.
    For a generator (a SimPy process step) only the time spent inside it counts,
    not the simulated waits it yields. Returns None.
    """
    fn = getattr(owner, name)
    acc[name] = [0, 0.0]
    clock = time.perf_counter

    def wrapper(*args, **kwargs):
        t0 = clock()
        try:
            return fn(*args, **kwargs)
        finally:
            acc[name][0] += 1
            acc[name][1] += clock() - t0

    def gen_wrapper(*args, **kwargs):
        acc[name][0] += 1
        g = fn(*args, **kwargs)
        value = None
        while True:
            t0 = clock()
            try:
                event = g.send(value)
            except StopIteration as stop:
                acc[name][1] += clock() - t0
                return stop.value
            acc[name][1] += clock() - t0
            value = yield event

    setattr(owner, name, gen_wrapper if generator else wrapper)


def timed_simulation(
    scenario_of: Callable[[], Any], calls: dict
) -> tuple[dict, Simulation, float, float]:
    """Build and run one scenario with ``edgesim.simulate``, timing its parts.

    The clock starts before ``scenario_of()`` (which returns the Scenario, so
    that a caller decides whether loading it is timed). ``calls`` gains the
    [calls, seconds] of ``model.smoothness`` (L_g), ``model.agent_grads`` (the
    agents' gradient reports) and ``Simulation.run_mechanism`` (see
    :func:`accumulate`). Returns (the result dict, the Simulation, the seconds
    to the built Simulation, the seconds to the returned result).
    """
    t0 = time.perf_counter()
    sc = scenario_of()
    sim = Simulation(sc)
    build_s = time.perf_counter() - t0
    accumulate(sim.model, "smoothness", calls)
    accumulate(sim.model, "agent_grads", calls)
    accumulate(sim, "run_mechanism", calls)
    result = run(sc, sim)
    return result, sim, build_s, time.perf_counter() - t0


# ------------------------------------------------------------------ peak memory


def _proc_status_bytes(field: str) -> int | None:
    """A memory line of /proc/self/status (e.g. VmRSS, VmHWM) in bytes; None where unavailable."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def reset_peak_rss() -> int:
    """Reset the peak RSS (Linux ``clear_refs``) so that :func:`peak_rss` covers what follows.

    Returns the current RSS in bytes (the baseline of the run). Where the reset is not
    available, returns the peak so far (the increase then reads 0 when imports peaked higher).
    """
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return peak_rss()
    return _proc_status_bytes("VmRSS") or peak_rss()


def peak_rss() -> int:
    """Peak RSS of this process in bytes: VmHWM, else ``ru_maxrss``.

    ``ru_maxrss`` alone is not used on Linux: a child started by fork + exec inherits
    the parent's RSS at the fork as its ``ru_maxrss`` floor, and ``clear_refs`` does not
    lower it.
    """
    hwm = _proc_status_bytes("VmHWM")
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# ------------------------------------------------------------------ fresh processes


def report_to_parent(tag: str, measurements: dict) -> None:
    """Print ``measurements`` as one JSON line after ``tag``, for :func:`run_child`; returns None."""
    print(tag + json.dumps(measurements), flush=True)


def run_child(
    cmd: list[str], tag: str, label: str
) -> tuple[dict | None, subprocess.CompletedProcess]:
    """Run ``cmd`` (a benchmark's own child mode) and read its JSON line (after ``tag``).

    Returns (the measurements, None when no line came, and the finished process). On
    failure prints "<label> failed (exit N):" and the last 3000 characters of its output.
    """
    proc = subprocess.run(cmd, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith(tag):
            return json.loads(line[len(tag) :]), proc
    print(f"{label} failed (exit {proc.returncode}):")
    print((proc.stdout + proc.stderr)[-3000:])
    return None, proc


# ------------------------------------------------------------------ what is printed


def machine_line() -> str:
    """Return "machine: N CPUs, load average a, b, c (...)", the first line a benchmark prints."""
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"machine: {os.cpu_count()} CPUs, load average {load} (other work skews timings)"


def verdict(ok: bool) -> str:
    """Return "PASS" or "FAIL"."""
    return "PASS" if ok else "FAIL"


def met(ok: bool) -> str:
    """Return "met" or "not met" (a target, in a measurement's line)."""
    return "met" if ok else "not met"


# ------------------------------------------------------------------ arguments


def argument_parser(doc: str) -> argparse.ArgumentParser:
    """Return a parser described by the first line of ``doc`` (the script's docstring)."""
    return argparse.ArgumentParser(description=doc.splitlines()[0])


def add_epsilon(ap: argparse.ArgumentParser) -> None:
    """Add ``--epsilon`` (FFL's payment accuracy) to ``ap``; returns None.

    Read it back with :func:`epsilon`: 0.1 by default, 1.0 with ``--quick`` so
    that T2 = 0 at the quick run's K.
    """
    ap.add_argument(
        "--epsilon",
        type=float,
        default=None,
        help=f"FFL payment accuracy (default {EPSILON:g}; {EPSILON_QUICK:g} with --quick,"
        " so T2 = 0 at small K)",
    )


def epsilon(args: argparse.Namespace) -> float:
    """Return ``--epsilon`` as given, else its default for ``--quick`` or not (see :func:`add_epsilon`)."""
    if args.epsilon is not None:
        return args.epsilon
    return EPSILON_QUICK if getattr(args, "quick", False) else EPSILON
