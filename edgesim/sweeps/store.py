"""The sweep folder: ``results.jsonl`` (appended, repaired), ``manifest.json``, the lock."""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from edgesim.scenario import SweepPlan
from edgesim.sweeps.errors import SweepError

RESULTS = "results.jsonl"
MANIFEST = "manifest.json"
LOCK = ".lock"


def utc_now() -> str:
    """Return the time now in UTC, ISO 8601 to the second with a Z (``2024-05-01T12:00:00Z``)."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def read_records(out_dir: str | Path, repair: bool = True) -> tuple[list[dict], int]:
    """Read ``results.jsonl``; returns (records in file order, bytes of partial line removed).

    A last line without its newline is what a crash mid-write leaves: with
    ``repair`` the file is cut back to its last complete line. A complete line
    that is not JSON (never written by edgesim) is skipped.
    """
    path = Path(out_dir) / RESULTS
    if not path.exists():
        return [], 0
    data = path.read_bytes()
    cut = 0
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        cut = len(data) - keep
        data = data[:keep]
        if repair:
            with open(path, "r+b") as fh:
                fh.truncate(keep)
                fh.flush()
                os.fsync(fh.fileno())
    records = []
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and "run_id" in rec:
            records.append(rec)
    return records, cut


def latest(records: Iterable[dict]) -> list[dict]:
    """Return the newest record of each run, ordered by the runs' index in the sweep."""
    by_id: dict[str, dict] = {}
    for rec in records:
        by_id[rec["run_id"]] = rec
    return sorted(by_id.values(), key=lambda r: (r.get("index", 0), r["run_id"]))


def load_records(out_dir: str | Path) -> list[dict]:
    """Return the newest record of every run in a sweep folder (see :func:`latest`)."""
    records, _ = read_records(out_dir, repair=False)
    return latest(records)


class Appender:
    """Appends records to ``results.jsonl``: one ``os.write`` per line, then fsync."""

    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, head: dict, result_text: str | None) -> None:
        text = json.dumps(head, separators=(",", ":"), allow_nan=False)
        if result_text is not None:
            text = text[:-1] + ',"result":' + result_text + "}"
        data = (text + "\n").encode()
        view = memoryview(data)
        while view:  # a regular file takes it in one write; the loop is for the exotic
            n = os.write(self.fd, view)
            view = view[n:]
        os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)


def write_atomic(path: str | Path, data: str | bytes | Callable[[BinaryIO], object]) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename: never half-written.

    ``data`` may also be a function that writes to the open binary file (to stream
    a large output instead of holding it whole); whatever it raises leaves no file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            if callable(data):
                data(fh)
            else:
                fh.write(data.encode() if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def git_revision() -> dict:
    """Return ``{"revision", "dirty"}`` of the git checkout holding edgesim (None values if none)."""
    here = Path(__file__).resolve().parent.parent.parent  # edgesim/sweeps/ -> the checkout
    out: dict = {"revision": None, "dirty": None}
    if not (here / ".git").exists():
        return out
    try:
        rev = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        if rev.returncode == 0:
            out["revision"] = rev.stdout.strip()
            st = subprocess.run(
                ["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                capture_output=True,
                text=True,
                timeout=10,
            )
            out["dirty"] = bool(st.stdout.strip()) if st.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def scenario_files(plan: SweepPlan) -> dict:
    """Return ``{path: text}`` of the scenario file and the files it includes."""
    return dict(plan.files)


def update_manifest(out_dir: Path, base: dict, session: dict) -> dict:
    """Merge ``base`` and this ``session`` into ``out_dir/manifest.json`` (atomically); returns the manifest."""
    path = out_dir / MANIFEST
    old: dict = {}
    if path.exists():
        with contextlib.suppress(ValueError, OSError):
            old = json.loads(path.read_text())
    manifest = {**old, **base}
    manifest["started"] = old.get("started", session["started"])
    sessions = [s for s in old.get("sessions", []) if s.get("id") != session["id"]]
    manifest["sessions"] = [*sessions, session]
    write_atomic(path, json.dumps(manifest, indent=1) + "\n")
    return manifest


_HELD: set[Path] = set()  # folders this process is sweeping (POSIX locks do not see those)


@contextlib.contextmanager
def locked(out_dir: Path):
    """Hold ``out_dir/.lock`` for one sweep; SweepError if another sweep holds it."""
    key = out_dir.resolve()
    if key in _HELD:
        raise SweepError("-o", f"{out_dir} is in use by another running sweep in this process")
    fd = os.open(out_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    _HELD.add(key)
    try:
        try:
            # A POSIX record lock: unlike flock, forked pool workers do not inherit it.
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise SweepError(
                "-o",
                f"{out_dir} is in use by another running sweep; wait for it or use another folder",
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        _HELD.discard(key)
        os.close(fd)
