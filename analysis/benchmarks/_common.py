"""What the benchmark scripts share: peak memory of this process, PASS/FAIL, the child runner.

Imported as ``from _common import ...``: the benchmarks run as scripts
(``python analysis/benchmarks/bench_network.py``), so their own folder is on
``sys.path``.
"""

from __future__ import annotations

import json
import resource
import subprocess


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


def verdict(ok: bool) -> str:
    """Return "PASS" or "FAIL"."""
    return "PASS" if ok else "FAIL"


def run_child(
    cmd: list[str], tag: str, label: str
) -> tuple[dict | None, subprocess.CompletedProcess]:
    """Run ``cmd`` (a benchmark's own ``--child`` mode) and read its JSON line (after ``tag``).

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
