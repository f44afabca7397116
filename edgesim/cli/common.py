"""What the ``edgesim`` commands share: one-line input errors, output checks, progress.

Exit code 2 and one ``edgesim: error: KEY: ...`` line per bad input
(:func:`fail_input`); an output path checked before anything runs
(:func:`check_output`); the progress bar (:func:`progress_bar`).
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

from edgesim.errors import ScenarioError, ScenarioErrors, one_line

FORCE_HELP = (
    "run even when the memory estimate exceeds the machine's memory (edgesim plan shows it)"
)


def fail_input(errors) -> int:
    """Print one ``edgesim: error: KEY: ...`` line per error; return exit code 2."""
    for e in errors:
        print(f"edgesim: error: {one_line(e)}", file=sys.stderr)
    return 2


def failure_code(err: BaseException, what: str, debug: bool) -> int:
    """Return the exit code of an exception raised while running: 2 for bad input (one line
    per error, naming the key), else 1 for a failed ``what`` (one line; the traceback too
    with ``debug``)."""
    if isinstance(err, ScenarioErrors):
        return fail_input(err.errors)
    if isinstance(err, ScenarioError):
        return fail_input([err])
    if debug:
        traceback.print_exception(err)
    print(f"edgesim: {what} failed: {type(err).__name__}: {one_line(err)}", file=sys.stderr)
    return 1


def check_output(path: str, flag: str) -> ScenarioError | None:
    """Return an error when ``flag PATH`` cannot be written (before running anything)."""
    p = Path(path)
    if p.is_dir():
        return ScenarioError(flag, f"{p} is a folder; give a file name")
    parent = p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return ScenarioError(flag, f"cannot create {p}: {parent} is not a folder")
    if not os.access(parent, os.W_OK):
        return ScenarioError(flag, f"cannot write into {parent}")
    return None


def progress_bar(args, label: str, total: int | None = None):
    """Return a progress bar on stderr: drawn on a terminal, without ``--quiet``.

    Off a terminal (a batch job, a pipe) it writes a plain progress line every 30 s
    instead (phase, round, problem, elapsed), so a long run is never silent.
    """
    from edgesim.progress import Bar

    return Bar(total=total, label=label, enabled=False if args.quiet else None, log_interval_s=30.0)


def parse_window(text: str, flag: str) -> tuple[float, float] | ScenarioError:
    """Parse ``START:END`` (seconds, 0 <= START < END); returns the pair or the error to report."""
    try:
        start, end = (float(x) for x in text.split(":"))
    except ValueError:
        return ScenarioError(flag, f"{text!r} is not START:END in seconds, e.g. 0:10")
    if not 0 <= start < end:
        return ScenarioError(flag, f"{text!r}: needs 0 <= START < END (seconds)")
    return start, end
