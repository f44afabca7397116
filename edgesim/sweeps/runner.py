"""The sweep: submit the runs not yet recorded, record each as it finishes, stop cleanly."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import json
import os
import signal
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from edgesim.footprint import estimate, human, machine_memory
from edgesim.scenario import SweepPlan
from edgesim.sweeps.errors import SweepError
from edgesim.sweeps.executors import (
    ExecutorHandle,
    make_executor,
    raise_interrupt,
    stop_pool,
    threading_main,
)
from edgesim.sweeps.store import (
    RESULTS,
    Appender,
    git_revision,
    locked,
    read_records,
    scenario_files,
    update_manifest,
    utc_now,
)
from edgesim.sweeps.worker import execute
from edgesim.version import __version__


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
    security=None,
    bar=None,
    retry_failed: bool = False,
    keep: bool = False,
    manifest: dict | None = None,
    on_record: Callable[[dict], None] | None = None,
    force: bool = False,
) -> SweepSummary:
    """Run every run of ``plan`` not yet recorded in ``out_dir``; returns a :class:`SweepSummary`.

    ``out_dir`` None records nothing on disk (``keep=True`` then returns the
    records). ``executor``: one the caller owns (left open), else one made
    from ``workers``/``scheduler`` (see :func:`make_executor`; ``security``: the
    Dask scheduler's TLS, a ``distributed.Security``). ``bar``: a
    :class:`edgesim.progress.Bar`. ``manifest``: extra fields for
    ``manifest.json`` (the CLI passes the scenario path and overrides).
    Ctrl-C stops cleanly (``summary.interrupted``); failed runs do not stop it.
    Before anything is submitted or written, every run's memory estimate is
    compared with what one worker may use; the runs that would not fit are
    refused together (:class:`SweepError`), unless ``force``.
    """
    summary = SweepSummary(total=len(plan.runs))
    handle = (
        ExecutorHandle(executor, 2 * (os.cpu_count() or 1), type(executor).__name__)
        if executor is not None
        else make_executor(workers, scheduler, security=security)
    )
    if handle.worker_memory is None and executor is not None:
        mem = machine_memory()
        handle.worker_memory, handle.memory_source = mem.limit, mem.source
    try:
        if not force:
            _check_memory(plan, handle)
        return _run(plan, out_dir, handle, summary, bar, retry_failed, keep, manifest, on_record)
    finally:
        if handle.close is not None:
            with contextlib.suppress(Exception):
                handle.close()


def _check_memory(plan: SweepPlan, handle: ExecutorHandle) -> None:
    """Raise :class:`SweepError` naming every run whose estimate exceeds a worker's memory."""
    limit = handle.memory_per_run(len(plan.runs))
    if limit is None:
        return
    shared = max(1, min(handle.sharing, len(plan.runs)))
    where = handle.memory_source + (f", shared by {shared} workers" if shared > 1 else "")
    too_big = []
    for run in plan.runs:
        fp = estimate(run.scenario)
        if fp.total > limit:
            values = ", ".join(f"{k}={v}" for k, v in run.values.items())
            too_big.append(f"run {run.index} ({values or 'the scenario'}): {human(fp.total)}")
    if too_big:
        shown = "; ".join(too_big[:5]) + (
            f"; and {len(too_big) - 5} more" if len(too_big) > 5 else ""
        )
        raise SweepError(
            "memory",
            f"{len(too_big)} of {len(plan.runs)} runs would not fit in {human(limit)}"
            f" ({where}): {shown}; shrink them, use fewer --workers, or pass"
            " --force to run anyway",
        )


def _run(plan, out_dir, handle, summary, bar, retry_failed, keep, manifest, on_record):
    """The body of :func:`run_sweep` once the executor is made and the memory checked."""
    out = Path(out_dir) if out_dir is not None else None
    if out is not None:
        if out.exists() and not out.is_dir():
            raise SweepError("-o", f"{out} exists and is not a folder")
        out.mkdir(parents=True, exist_ok=True)
    with locked(out) if out is not None else contextlib.nullcontext():
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
        summary.executor = handle.label if todo else ""
        session = {
            "id": uuid.uuid4().hex[:12],
            "started": utc_now(),
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
            base.setdefault("scenario_files", scenario_files(plan))
            update_manifest(out, base, session)
        if bar is not None:
            bar.update(total=len(todo), done=0, failed=0)
        appender = Appender(out / RESULTS) if out is not None else None
        try:
            if todo:
                _drive(handle, todo, appender, summary, bar, keep, on_record)
        finally:
            if appender is not None:
                appender.close()
            if out is not None:
                session.update(
                    finished=utc_now(),
                    runs_ok=summary.ok,
                    runs_failed=summary.failed,
                    interrupted=summary.interrupted,
                )
                update_manifest(out, base, session)
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
        head["finished"] = utc_now()
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
        signal.signal(signal.SIGTERM, raise_interrupt)
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
                stop_pool(ex)
                handle.close = None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
