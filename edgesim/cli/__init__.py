"""Command line: ``edgesim run | plan | deviate | sweep | audit | validate | scenarios | results | plot | data``.

Exit codes: 0 success, 1 a run failed, 2 bad input (one line per problem, naming the key),
130 interrupted (a sweep keeps every finished run; rerun the same command to resume).
One module per command group (:mod:`~edgesim.cli.run`, ``deviate``, ``sweep``,
``audit``, ``results``, ``scenarios``, ``timeline``, ``data``), each a short function over
the library with its own arguments (``add_parsers``); what they share is
:mod:`~edgesim.cli.common`. The summary printed after a run is
:mod:`edgesim.summary`.
"""

from __future__ import annotations

import argparse
import os
import sys

from edgesim.cli import audit, data, deviate, results, run, scenarios, sweep, timeline
from edgesim.cli.audit import cmd_audit
from edgesim.cli.common import FORCE_HELP
from edgesim.cli.data import cmd_data_fetch
from edgesim.cli.results import cmd_plot, cmd_results
from edgesim.cli.run import cmd_run
from edgesim.cli.scenarios import cmd_scenarios, cmd_validate
from edgesim.cli.sweep import cmd_sweep
from edgesim.cli.timeline import cmd_plot_timeline
from edgesim.summary import summary

__all__ = [
    "FORCE_HELP",
    "build_parser",
    "cmd_audit",
    "cmd_data_fetch",
    "cmd_plot",
    "cmd_plot_timeline",
    "cmd_results",
    "cmd_run",
    "cmd_scenarios",
    "cmd_sweep",
    "cmd_validate",
    "main",
    "summary",
]


#: How long OpenBLAS's idle worker threads spin before they sleep, log2 of CPU cycles, for the
#: ``edgesim`` command (:func:`shorten_blas_spin`); OpenBLAS's own default is 28.
BLAS_SPIN_LOG2_CYCLES = 20


def shorten_blas_spin() -> bool:
    """Set ``OPENBLAS_THREAD_TIMEOUT`` to :data:`BLAS_SPIN_LOG2_CYCLES` unless the user set it
    (or ``GOTO_THREAD_TIMEOUT``) or numpy is loaded already; returns whether it was set.

    numpy and scipy each load their own OpenBLAS, whose worker threads (one per core but
    one) busy-wait 2^28 cycles, about a tenth of a second, when the library loads and after
    every call before they sleep. A short run pays that as CPU stolen from its own thread:
    on two cores a plain paper-fig1 run took about 0.78 s of CPU for 0.58 s of wall time,
    and about 0.48 s and 0.53 s with 2^20 cycles (about 0.4 ms). The spin's length changes
    no result (how a product is split over threads does not depend on it), and a product
    threaded over the cores 0.2 or 2 ms after the last measured no slower (5 to 7 ms
    either way for (8192 x 784) (784 x 10)). Sweep workers inherit the setting.
    """
    if "numpy" in sys.modules or {"OPENBLAS_THREAD_TIMEOUT", "GOTO_THREAD_TIMEOUT"} & set(
        os.environ
    ):
        return False
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = str(BLAS_SPIN_LOG2_CYCLES)
    return True


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``edgesim`` command."""
    parser = argparse.ArgumentParser(prog="edgesim", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run.add_parsers(sub)  # run, plan
    timeline.add_parsers(sub)
    audit.add_parsers(sub)
    scenarios.add_parsers(sub)  # validate
    sweep.add_parsers(sub)
    results.add_parsers(sub)  # results, plot
    scenarios.add_list_parser(sub)  # scenarios
    data.add_parsers(sub)
    deviate.add_parsers(sub)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``edgesim`` console script; returns the exit code."""
    shorten_blas_spin()  # before a command imports numpy (importing this package does not)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse printed usage and a one-line error (or --help)
        if exc.code is None:
            return 0
        return exc.code if isinstance(exc.code, int) else 2
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("edgesim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
