"""Executors: a local process pool, this process (``workers=0``) or a Dask cluster; signals."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass

from edgesim.sweeps.errors import SweepError


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


def threading_main() -> bool:
    """True in the main thread of the main interpreter (where signal handlers can be set)."""
    import threading

    return threading.current_thread() is threading.main_thread()


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt
