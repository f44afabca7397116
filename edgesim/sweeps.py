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
``Client(address).get_executor()``). Every run is a pure function of its
scenario, so the per-run JSON is byte-identical whichever executes it.

Runs whose strategy or mechanism is named ``"module:Name"`` are imported
again in each worker, which therefore needs that module on its path. Names
registered at run time with :func:`edgesim.register_strategy` reach forked
local workers, but not Dask workers: use ``"module:Name"`` there.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import csv
import datetime as _dt
import difflib
import fcntl
import io
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from edgesim.errors import ScenarioError
from edgesim.scenario import Scenario, SweepPlan, ensure_registered
from edgesim.version import __version__

RESULTS = "results.jsonl"
MANIFEST = "manifest.json"
LOCK = ".lock"


class SweepError(ScenarioError):
    """A sweep cannot start (folder in use, bad executor settings): bad input, exit code 2."""


# ---------------------------------------------------------------------------- one run


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
    from edgesim.simulate import to_json

    return to_json(record["result"])


# ---------------------------------------------------------------------------- executors


class InlineExecutor(cf.Executor):
    """Run each submitted call at once in this process (``--workers 0``)."""

    def submit(self, fn, /, *args, **kwargs):
        """Run ``fn(*args, **kwargs)`` now; return a finished Future."""
        fut: cf.Future = cf.Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except Exception as err:
            fut.set_exception(err)
        return fut


def _ignore_sigint() -> None:
    """Pool worker initializer: Ctrl-C reaches the coordinator only, which stops the workers.

    SIGTERM gets its default action back (the coordinator's handler is inherited by fork).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@dataclass
class ExecutorHandle:
    """An executor with what the sweep needs to know about it.

    ``slots``: how many runs to keep in flight; ``label``: for the manifest;
    ``close``: called when the sweep ends (None for an executor the caller owns).
    """

    executor: cf.Executor
    slots: int
    label: str
    close: Callable[[], None] | None = None


def make_executor(
    workers: int | None = None, scheduler: str | None = None, timeout_s: float = 10.0
) -> ExecutorHandle:
    """Return the executor for ``--workers`` / ``--scheduler``.

    ``scheduler``: a Dask scheduler address (``tcp://host:8786``; needs the
    ``dask`` extra). Otherwise ``workers`` processes (None: the CPU count), or
    this process when ``workers == 0``. Raises :class:`SweepError` for a
    scheduler that cannot be reached within ``timeout_s`` seconds or a
    negative worker count.
    """
    if scheduler:
        try:
            from distributed import Client
        except ImportError:
            raise SweepError(
                "--scheduler", "needs Dask distributed: pip install 'edgesim[dask]'"
            ) from None
        try:
            client = Client(scheduler, timeout=f"{timeout_s}s")
        except Exception as err:  # OSError, TimeoutError, ValueError for a bad address
            raise SweepError(
                "--scheduler", f"cannot connect to {scheduler}: {' '.join(str(err).split())}"
            ) from None
        try:
            threads = sum(client.nthreads().values())
        except Exception:
            threads = 0
        return ExecutorHandle(
            client.get_executor(pure=False),
            max(2 * threads, 4),
            f"dask {scheduler} ({threads} threads)",
            client.close,
        )
    if workers is not None and workers < 0:
        raise SweepError("--workers", f"must be >= 0, got {workers}")
    if workers == 0:
        return ExecutorHandle(InlineExecutor(), 1, "in-process")
    n = workers or os.cpu_count() or 1
    pool = cf.ProcessPoolExecutor(max_workers=n, initializer=_ignore_sigint)

    def close() -> None:
        pool.shutdown(wait=True, cancel_futures=True)

    return ExecutorHandle(pool, 2 * n, f"local process pool ({n} workers)", close)


def _stop_pool(executor: cf.Executor) -> None:
    """Stop a local process pool's workers now (the runs they hold are dropped)."""
    procs = getattr(executor, "_processes", None) or {}
    for proc in list(procs.values()):
        with contextlib.suppress(Exception):
            proc.terminate()
    for proc in list(procs.values()):
        with contextlib.suppress(Exception):
            proc.join(timeout=5)
    with contextlib.suppress(Exception):
        executor.shutdown(wait=False, cancel_futures=True)


# ---------------------------------------------------------------------------- the files


def _now() -> str:
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


class _Appender:
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


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename: never half-written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def git_revision() -> dict:
    """Return ``{"revision", "dirty"}`` of the git checkout holding edgesim (None values if none)."""
    here = Path(__file__).resolve().parent.parent
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


def _scenario_files(plan: SweepPlan) -> dict:
    """Return ``{path: text}`` of the scenario file and the files it includes."""
    return dict(plan.files)


def _update_manifest(out_dir: Path, base: dict, session: dict) -> dict:
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
def _locked(out_dir: Path):
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


# ---------------------------------------------------------------------------- the sweep


@dataclass
class SweepSummary:
    """What a sweep session did: run counts, whether it was interrupted, and the records.

    ``total``: runs in the sweep; ``skipped``: already recorded; ``ok``,
    ``failed``: finished now; ``interrupted``: stopped early (runs left
    for the next session); ``records``: the records written now (when
    ``keep``); ``repaired_bytes``: partial last line cut from the file.
    """

    total: int = 0
    skipped: int = 0
    ok: int = 0
    failed: int = 0
    interrupted: bool = False
    duplicates: int = 0
    repaired_bytes: int = 0
    executor: str = ""
    records: list = field(default_factory=list)

    @property
    def remaining(self) -> int:
        """Runs neither recorded before nor finished now."""
        return self.total - self.skipped - self.duplicates - self.ok - self.failed


def run_sweep(
    plan: SweepPlan,
    out_dir: str | Path | None,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    executor: cf.Executor | None = None,
    bar=None,
    retry_failed: bool = False,
    keep: bool = False,
    manifest: dict | None = None,
    on_record: Callable[[dict], None] | None = None,
) -> SweepSummary:
    """Run every run of ``plan`` not yet recorded in ``out_dir``; returns a :class:`SweepSummary`.

    ``out_dir`` None records nothing on disk (``keep=True`` then returns the
    records). ``executor``: one the caller owns (left open), else one made
    from ``workers``/``scheduler`` (see :func:`make_executor`). ``bar``: a
    :class:`edgesim.progress.Bar`. ``manifest``: extra fields for
    ``manifest.json`` (the CLI passes the scenario path and overrides).
    Ctrl-C stops cleanly (``summary.interrupted``); failed runs do not stop it.
    """
    summary = SweepSummary(total=len(plan.runs))
    out = Path(out_dir) if out_dir is not None else None
    if out is not None:
        if out.exists() and not out.is_dir():
            raise SweepError("-o", f"{out} exists and is not a folder")
        out.mkdir(parents=True, exist_ok=True)
    with _locked(out) if out is not None else contextlib.nullcontext():
        done: set[str] = set()
        if out is not None:
            old, summary.repaired_bytes = read_records(out)
            newest = {r["run_id"]: r for r in old}
            done = {k for k, r in newest.items() if r.get("status") == "ok" or not retry_failed}
        todo, seen = [], set()
        for run in plan.runs:
            rid = run.run_id
            if rid in done:
                summary.skipped += 1
            elif rid in seen:
                summary.duplicates += 1
            else:
                seen.add(rid)
                todo.append((rid, run))
        handle = (
            ExecutorHandle(executor, 2 * (os.cpu_count() or 1), type(executor).__name__)
            if executor is not None
            else (make_executor(workers, scheduler) if todo else None)
        )
        summary.executor = handle.label if handle else ""
        session = {
            "id": uuid.uuid4().hex[:12],
            "started": _now(),
            "edgesim_version": __version__,
            "git": git_revision(),
            "executor": summary.executor,
            "python": sys.version.split()[0],
            "runs_total": summary.total,
            "runs_skipped": summary.skipped,
        }
        base = {
            "edgesim_version": __version__,
            "git_revision": session["git"]["revision"],
            **(manifest or {}),
            "swept_keys": plan.keys,
            "runs": summary.total,
        }
        if out is not None:
            base.setdefault("scenario_files", _scenario_files(plan))
            _update_manifest(out, base, session)
        if bar is not None:
            bar.update(total=len(todo), done=0, failed=0)
        appender = _Appender(out / RESULTS) if out is not None else None
        try:
            if todo:
                _drive(handle, todo, appender, summary, bar, keep, on_record)
        finally:
            if appender is not None:
                appender.close()
            if handle is not None and handle.close is not None:
                with contextlib.suppress(Exception):
                    handle.close()
            if out is not None:
                session.update(
                    finished=_now(),
                    runs_ok=summary.ok,
                    runs_failed=summary.failed,
                    interrupted=summary.interrupted,
                )
                _update_manifest(out, base, session)
    return summary


def _drive(handle, todo, appender, summary, bar, keep, on_record) -> None:
    """Submit runs with at most ``handle.slots`` in flight; record each as it finishes."""
    ex = handle.executor
    queue = iter(todo)
    pending: dict[cf.Future, tuple[str, object]] = {}

    def record(fut: cf.Future, rid: str, run) -> None:
        try:
            out = fut.result()
        except Exception as err:  # the worker died or the executor lost it
            out = {
                "status": "failed",
                "error": f"{type(err).__name__}: {' '.join(str(err).split())}",
                "elapsed_s": None,
            }
        head = {
            "run_id": rid,
            "index": run.index,
            "values": run.values,
            "status": out["status"],
        }
        if out["status"] != "ok":
            head["error"] = out["error"]
            head["traceback"] = out.get("traceback")
        head["elapsed_s"] = out.get("elapsed_s")
        head["finished"] = _now()
        text = out.get("result") if out["status"] == "ok" else None
        if appender is not None:
            appender.write(head, text)
        if out["status"] == "ok":
            summary.ok += 1
        else:
            summary.failed += 1
        if keep or on_record is not None:
            rec = dict(head)
            if text is not None:
                rec["result"] = json.loads(text)
            if keep:
                summary.records.append(rec)
            if on_record is not None:
                on_record(rec)
        if bar is not None:
            bar.advance(failed=out["status"] != "ok")

    previous = None
    if threading_main():
        previous = signal.getsignal(signal.SIGTERM)
        signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        try:
            while True:
                while len(pending) < handle.slots:
                    nxt = next(queue, None)
                    if nxt is None:
                        break
                    rid, run = nxt
                    pending[ex.submit(execute, run.scenario)] = (rid, run)
                if not pending:
                    break
                finished, _ = cf.wait(list(pending), return_when=cf.FIRST_COMPLETED)
                for fut in finished:
                    rid, run = pending.pop(fut)
                    record(fut, rid, run)
        except KeyboardInterrupt:
            summary.interrupted = True
            for fut in list(pending):
                if fut.done() and not fut.cancelled():
                    rid, run = pending.pop(fut)
                    with contextlib.suppress(Exception, KeyboardInterrupt):  # a second Ctrl-C
                        record(fut, rid, run)
            for fut in pending:
                fut.cancel()
            if isinstance(ex, cf.ProcessPoolExecutor):
                _stop_pool(ex)
                handle.close = None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def threading_main() -> bool:
    """True in the main thread of the main interpreter (where signal handlers can be set)."""
    import threading

    return threading.current_thread() is threading.main_thread()


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


# ---------------------------------------------------------------------------- tidy tables

#: Result fields left out of the run table: the resolved scenario (its swept keys have their
#: own columns) and the per-agent list (see ``per_agent``).
_SKIP = ("scenario", "agents")


def _scalar(value):
    return value is None or isinstance(value, (bool, int, float, str))


def _flatten(obj: dict, prefix: str, out: dict) -> None:
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            _flatten(value, f"{name}.", out)
        elif _scalar(value):
            out[name] = value


def _cell(value):
    return value if _scalar(value) else json.dumps(value, sort_keys=True)


def table(records: Iterable[dict], per_agent: bool = False) -> list[dict]:
    """Flatten sweep records into tidy rows (dicts of scalars), one per run or per agent.

    A run's row: ``run_id``, ``index``, ``status``, ``error``, then the swept
    keys under their dotted names (``agents.count``; a list or table value as
    JSON text), then every scalar of the result under its dotted path
    (``communication.messages_up``, ``model.global_loss``,
    ``privacy.epsilon_accounted``; lists and the resolved scenario left out).
    With ``per_agent``, one row per agent of each successful run: the run's
    ``run_id``, ``index``, swept keys and ``seed``, then ``agent.<field>``
    (``agent.id``, ``agent.payment``, ...).
    """
    rows = []
    for rec in records:
        swept = {k: _cell(v) for k, v in (rec.get("values") or {}).items()}
        head = {"run_id": rec["run_id"], "index": rec.get("index")}
        result = rec.get("result")
        if per_agent:
            if rec.get("status") != "ok" or not result:
                continue
            common = {**head, **swept, "seed": result.get("seed")}
            for agent in result.get("agents", []):
                rows.append({**common, **{f"agent.{k}": _cell(v) for k, v in agent.items()}})
            continue
        row = {**head, "status": rec.get("status"), "error": rec.get("error"), **swept}
        if result:
            flat: dict = {}
            _flatten({k: v for k, v in result.items() if k not in _SKIP}, "", flat)
            for k, v in flat.items():
                row.setdefault(k, v)
        rows.append(row)
    return rows


def columns_of(rows: list[dict]) -> list[str]:
    """Return the union of the rows' keys in order of first appearance."""
    seen: dict[str, None] = {}
    for row in rows:
        for k in row:
            seen.setdefault(k, None)
    return list(seen)


def _csv_text(value) -> str:
    if type(value).__module__ == "numpy":
        value = value.item()  # a numpy scalar's repr names its type (np.float64(1.5))
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def csv_text(rows: list[dict], columns: list[str] | None = None) -> str:
    """Return rows as CSV text: a header of ``columns`` (default every column, first seen
    first), then one line per row with empty cells for missing values; floats exact (repr)."""
    cols = columns_of(rows) if columns is None else list(columns)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in rows:
        w.writerow([_csv_text(row.get(c)) for c in cols])
    return buf.getvalue()


def write_csv(path: str | Path, rows: list[dict], columns: list[str] | None = None) -> None:
    """Write :func:`csv_text` of the rows to ``path``, atomically."""
    write_atomic(path, csv_text(rows, columns))


def write_parquet(path: str | Path, rows: list[dict]) -> None:
    """Write rows as a Parquet file (needs pyarrow), atomically; SweepError without pyarrow."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise SweepError(
            "--parquet", "needs pyarrow: pip install pyarrow (or write --csv)"
        ) from None
    cols = columns_of(rows)
    data = {}
    for c in cols:
        values = [row.get(c) for row in rows]
        kinds = {type(v) for v in values if v is not None}
        if kinds == {int, float}:
            values = [None if v is None else float(v) for v in values]
        elif len(kinds) > 1:
            values = [None if v is None else _csv_text(v) for v in values]
        data[c] = values
    tbl = pa.table(data)
    buf = pa.BufferOutputStream()
    pq.write_table(tbl, buf)
    write_atomic(path, buf.getvalue().to_pybytes())


# ---------------------------------------------------------------------------- plots


def _number(value):
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    return None


def _check_column(rows: list[dict], key: str, what: str) -> None:
    cols = columns_of(rows)
    if key not in cols:
        close = difflib.get_close_matches(key, cols, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise SweepError(what, f"no column {key!r} in the results{hint}")


def plot(
    rows: list[dict],
    x: str,
    y: str,
    hue: str | None = None,
    logx: bool = False,
    logy: bool = False,
    spread: str = "std",
    where: dict | None = None,
    swept: Iterable[str] = (),
):
    """Plot the mean of ``y`` against ``x`` over the runs that differ only by seed.

    ``rows``: :func:`table` rows (successful runs are used). ``hue``: one
    line per value of this column. ``spread``: ``"std"`` (a band of +-1
    sample standard deviation), ``"minmax"`` (min to max) or ``"none"``.
    ``where``: ``{column: value}`` keeps only matching rows. ``swept``: the
    swept keys; if one other than x, hue and seed still varies, the means
    would mix settings, so that raises :class:`SweepError` (name it with
    ``hue`` or fix it with ``where``). Returns the ``matplotlib.figure.Figure``
    (Agg canvas; axis labels are the keys, the legend's title is ``hue``).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if spread not in ("std", "minmax", "none"):
        raise SweepError("--spread", f"use 'std', 'minmax' or 'none', got {spread!r}")
    rows = [r for r in rows if r.get("status", "ok") == "ok"]
    if not rows:
        raise SweepError("results", "no successful runs to plot")
    for key, what in ((x, "--x"), (y, "--y"), (hue, "--hue")):
        if key is not None:
            _check_column(rows, key, what)
    for key, value in (where or {}).items():
        _check_column(rows, key, "--where")
        rows = [r for r in rows if r.get(key) == value or _csv_text(r.get(key)) == str(value)]
        if not rows:
            raise SweepError("--where", f"no run has {key} = {value!r}")
    for key in swept:
        if key in (x, hue, "seed") or key in (where or {}):
            continue
        # A key zipped with x or hue is fixed by them; only one that varies within a point mixes.
        within: dict = {}
        for r in rows:
            point = (json.dumps(r.get(x), sort_keys=True), json.dumps(r.get(hue) if hue else None))
            within.setdefault(point, set()).add(json.dumps(r.get(key), sort_keys=True))
        if any(len(v) > 1 for v in within.values()):
            n = len({v for vs in within.values() for v in vs})
            raise SweepError(
                key,
                f"also varies ({n} values) and would be averaged over: "
                f"plot it with --hue {key}, or keep one value with --where {key}=VALUE",
            )
    groups: dict = {}
    for r in rows:
        xv, yv = r.get(x), _number(r.get(y))
        if xv is None or yv is None:
            continue
        groups.setdefault(r.get(hue) if hue else None, {}).setdefault(xv, []).append(yv)
    if not groups:
        raise SweepError("--y", f"{y} has no numeric values to plot")
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    numeric_x = all(_number(v) is not None for g in groups.values() for v in g)
    categories = sorted({str(v) for g in groups.values() for v in g}) if not numeric_x else None
    most = 1
    for label in sorted(groups, key=_order):
        pts = groups[label]
        xs = sorted(pts, key=lambda v: _number(v) if numeric_x else str(v))
        xpos = [float(v) if numeric_x else categories.index(str(v)) for v in xs]
        ys = [pts[v] for v in xs]
        mean = [sum(v) / len(v) for v in ys]
        most = max(most, *(len(v) for v in ys))
        line = ax.plot(xpos, mean, marker="o", label=str(label) if hue else None)[0]
        if spread != "none":
            if spread == "std":
                sd = [
                    math.sqrt(sum((a - m) ** 2 for a in v) / (len(v) - 1)) if len(v) > 1 else 0.0
                    for v, m in zip(ys, mean, strict=True)
                ]
                lo = [m - s for m, s in zip(mean, sd, strict=True)]
                hi = [m + s for m, s in zip(mean, sd, strict=True)]
            else:
                lo, hi = [min(v) for v in ys], [max(v) for v in ys]
            if any(h > l for l, h in zip(lo, hi, strict=True)):
                ax.fill_between(xpos, lo, hi, alpha=0.2, color=line.get_color(), linewidth=0)
    if categories is not None:
        ax.set_xticks(range(len(categories)), categories)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    if hue:
        ax.legend(title=hue)
    band = {"std": "mean +- 1 std", "minmax": "mean, min-max band", "none": "mean"}[spread]
    ax.set_title(f"{band} over up to {most} runs per point", fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig


def _order(value):
    """Sort key putting numbers in numeric order before strings."""
    num = _number(value)
    return (0, num, "") if num is not None else (1, 0.0, str(value))


def save_figure(fig, path: str | Path) -> None:
    """Save a figure as PNG (or the format its suffix names) atomically."""
    buf = io.BytesIO()
    suffix = Path(path).suffix.lstrip(".").lower() or "png"
    fig.savefig(buf, format=suffix, dpi=120)
    write_atomic(path, buf.getvalue())
