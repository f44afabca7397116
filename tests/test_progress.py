"""Progress off a terminal: one plain line every log interval, with phase, round, problem, elapsed."""

from __future__ import annotations

import io

from edgesim import progress


def test_off_a_terminal_a_line_every_interval():
    now = [0.0]
    buf = io.StringIO()  # not a terminal
    bar = progress.Bar(label="run", stream=buf, clock=lambda: now[0], log_interval_s=30.0)
    assert not bar.enabled and bar.logging
    with progress.active(bar):
        for t in range(1, 100):  # one round per simulated second of wall time
            now[0] = float(t)
            progress.update(phase="phase2", round=t, problem=t // 40)
    lines = buf.getvalue().splitlines()
    assert lines == [
        "edgesim: run  phase2  round 30  problem=0  elapsed 30s",
        "edgesim: run  phase2  round 60  problem=1  elapsed 1m00s",
        "edgesim: run  phase2  round 90  problem=2  elapsed 1m30s",
    ]


def test_quiet_and_unset_intervals_stay_silent():
    buf = io.StringIO()
    for bar in (
        progress.Bar(stream=buf, enabled=False, log_interval_s=30.0),
        progress.Bar(stream=buf),
    ):
        assert not bar.active
        with progress.active(bar):
            progress.update(phase="phase1", round=1)
    assert buf.getvalue() == ""
