"""A small progress bar for sweeps and long single runs, with no dependencies.

A :class:`Bar` draws one status line on a terminal (stderr by default),
redrawn in place at most ``1 / min_interval_s`` times a second. It stays
silent when the stream is not a terminal (a log file, CI, a pipe) or when
``enabled=False`` (``--quiet``). Nothing else is ever printed by it, so
output files and stdout are unaffected.

Sweeps count runs::

    with Bar(total=40, label="sweep") as bar:
        for record in records:
            bar.advance(failed=record["status"] != "ok")
    # sweep  12/40 runs  1 failed  2.1 runs/s  ETA 13s

Code deep inside a single run reports through the module-level callback,
which costs one global lookup when no bar is active (in worker processes,
in tests, with ``--quiet``, off a terminal)::

    from edgesim import progress
    progress.update(phase="phase1", round=t, total=T1)   # phase name, round done, rounds planned

The caller that owns the terminal activates a bar around the run::

    with progress.active(Bar(label="quickstart")):
        simulate.run(scenario)
    # quickstart  phase1  round 120/400  ETA 2s

Fields understood by :meth:`Bar.update`: ``done`` and ``failed`` (runs),
``total`` (runs or rounds planned), ``phase`` (a word) and ``round`` (the
round reached). Unknown fields are shown as ``name=value``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from typing import IO


def _duration(seconds: float) -> str:
    """Return ``seconds`` as ``"42s"``, ``"3m05s"`` or ``"2h01m"``."""
    s = int(round(max(seconds, 0.0)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def is_terminal(stream: IO | None) -> bool:
    """Return True when ``stream`` is an interactive terminal (and TERM is not ``dumb``)."""
    try:
        return bool(stream is not None and stream.isatty()) and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):  # closed or not a file
        return False


class Bar:
    """One redrawn status line: runs done, failures, rate and ETA, or phase and round.

    ``total``: runs (or rounds) expected, None if unknown; ``label``: the
    line's first word; ``stream``: where to draw (default ``sys.stderr``);
    ``enabled``: None draws only on a terminal, False never, True always
    (tests); ``min_interval_s``: the least time between redraws, in seconds.
    ``log_interval_s``: off a terminal (``enabled`` None and no terminal), write
    the status as a plain line, with the time elapsed, every this many seconds
    (None: stay silent), so that a long run in a batch job still says where it is.
    ``clock`` (seconds, monotonic) can be replaced in tests.
    """

    def __init__(
        self,
        total: int | None = None,
        label: str = "",
        stream: IO | None = None,
        enabled: bool | None = None,
        min_interval_s: float = 0.1,
        clock=time.monotonic,
        log_interval_s: float | None = None,
    ):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = is_terminal(self.stream) if enabled is None else bool(enabled)
        self.logging = enabled is None and not self.enabled and log_interval_s is not None
        self.log_interval_s = log_interval_s
        self.label = label
        self.fields: dict = {"done": 0, "failed": 0, "total": total}
        self.min_interval_s = min_interval_s
        self.clock = clock
        self.start = clock()
        self._last_draw = -float("inf")
        self._width = 0
        self._round_start: tuple[str | None, float, int] | None = None

    # ------------------------------------------------------------------ reporting

    def update(self, **fields) -> None:
        """Set fields (``done``, ``failed``, ``total``, ``phase``, ``round``, ...) and redraw.

        Redraws at most every ``min_interval_s`` seconds; returns nothing.
        """
        if "phase" in fields and fields["phase"] != self.fields.get("phase"):
            self._round_start = (fields["phase"], self.clock(), int(fields.get("round") or 0))
        self.fields.update(fields)
        self._draw()

    def advance(self, n: int = 1, failed: bool = False) -> None:
        """Count ``n`` more finished runs (and as many failures when ``failed``); redraw."""
        self.fields["done"] += n
        if failed:
            self.fields["failed"] += n
        self._draw()

    def text(self) -> str:
        """Return the status line as it would be drawn now (no newline)."""
        f = self.fields
        parts = [self.label] if self.label else []
        now = self.clock()
        elapsed = now - self.start
        total = f.get("total")
        if "round" in f:  # a single run: phase and round
            if f.get("phase"):
                parts.append(str(f["phase"]))
            parts.append(f"round {f['round']}" + (f"/{total}" if total else ""))
            if total and self._round_start and f["round"]:
                _, t0, r0 = self._round_start
                rate = (f["round"] - r0) / max(now - t0, 1e-9)
                if rate > 0 and f["round"] < total:
                    parts.append(f"ETA {_duration((total - f['round']) / rate)}")
        else:  # a sweep: runs
            done = f["done"]
            parts.append(f"{done}/{total} runs" if total is not None else f"{done} runs")
            if f["failed"]:
                parts.append(f"{f['failed']} failed")
            if done and elapsed > 0:
                rate = done / elapsed
                parts.append(f"{rate:.3g} runs/s" if rate >= 1 else f"{1 / rate:.3g} s/run")
                if total is not None and done < total:
                    parts.append(f"ETA {_duration((total - done) / rate)}")
            if f.get("phase"):
                parts.append(str(f["phase"]))
        parts.extend(
            f"{k}={v}"
            for k, v in f.items()
            if k not in ("done", "failed", "total", "phase", "round") and v is not None
        )
        return "  ".join(parts)

    @property
    def active(self) -> bool:
        """Whether anything is shown: a drawn line, or log lines off a terminal."""
        return self.enabled or self.logging

    def _log(self) -> None:
        now = self.clock()
        if now - self.start < self.log_interval_s or now - self._last_draw < self.log_interval_s:
            return
        self._last_draw = now
        try:
            self.stream.write(f"edgesim: {self.text()}  elapsed {_duration(now - self.start)}\n")
            self.stream.flush()
        except (OSError, ValueError):
            self.logging = False

    def _draw(self, force: bool = False) -> None:
        if self.logging:
            self._log()
            return
        if not self.enabled:
            return
        now = self.clock()
        if not force and now - self._last_draw < self.min_interval_s:
            return
        self._last_draw = now
        line = self.text()
        pad = max(self._width - len(line), 0)
        self._width = len(line)
        try:
            self.stream.write("\r" + line + " " * pad)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: stop drawing
            self.enabled = False

    def close(self) -> None:
        """Draw the final state and end the line (a no-op when disabled); returns nothing."""
        if not self.enabled:
            return
        self._draw(force=True)
        try:
            self.stream.write("\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass
        self.enabled = False

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------------------- the callback

_current: Bar | None = None


def update(**fields) -> None:
    """Report progress of the run in progress to the active bar, if any; returns nothing.

    Cheap when no bar is active (none, or a disabled one). Typical fields: ``phase`` (``"phase1"``,
    ``"phase2"``, ``"local"``, ...), ``round`` (rounds done) and ``total``
    (rounds planned, if known).
    """
    bar = _current
    if bar is not None:
        bar.update(**fields)


@contextlib.contextmanager
def active(bar: Bar | None) -> Iterator[Bar | None]:
    """Make ``bar`` the target of :func:`update` inside the ``with`` block, then close it.

    ``None`` or a disabled bar (``--quiet``, not a terminal) activates nothing,
    so :func:`update` stays a no-op. Yields the bar; the previous one is
    restored after.
    """
    global _current
    previous = _current
    _current = bar if bar is not None and bar.active else None
    try:
        yield bar
    finally:
        _current = previous
        if bar is not None:
            bar.close()
