"""Executors: a local process pool, this process (``workers=0``) or a Dask cluster; signals."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass

from edgesim.footprint import machine_memory
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
    ``worker_memory``: the memory the workers share, bytes (None: unknown, not
    checked); ``sharing``: how many worker processes share it (a local pool's
    size; 1 for a Dask worker's own limit or this process); ``memory_source``:
    whose memory that is, for messages.
    """

    executor: cf.Executor
    slots: int
    label: str
    close: Callable[[], None] | None = None
    worker_memory: int | None = None
    memory_source: str = ""
    sharing: int = 1

    def memory_per_run(self, runs: int) -> int | None:
        """Return the bytes one of ``runs`` concurrent runs may use (None when unknown)."""
        if self.worker_memory is None:
            return None
        return self.worker_memory // max(1, min(self.sharing, runs))


def _dask_worker_memory(client) -> int | None:
    """Return the smallest memory limit of the Dask cluster's workers (None when unset)."""
    try:
        limits = [w.get("memory_limit") or 0 for w in client.scheduler_info()["workers"].values()]
    except Exception:
        return None
    limits = [m for m in limits if m > 0]
    return min(limits) if limits else None


def _distributed():
    """Return the ``distributed`` module; :class:`SweepError` when the ``dask`` extra is missing."""
    try:
        import distributed
    except ImportError:
        raise SweepError(
            "--scheduler", "needs Dask distributed: pip install 'edgesim[dask]'"
        ) from None
    return distributed


def dask_security(
    scheduler: str | None,
    ca_file: str | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
):
    """Return the ``distributed.Security`` of ``--dask-tls-ca/-cert/-key`` (None when none given).

    Mutual TLS: the scheduler must present a certificate signed by ``ca_file``
    and this client presents ``cert_file`` (its key in ``key_file``, or in the
    certificate file when None); plain connections are refused
    (``require_encryption``). Raises :class:`SweepError` naming the flag for
    a missing file, a CA without a certificate (or the reverse), no
    ``scheduler``, or a scheduler address that is not ``tls://``.
    """
    given = {"--dask-tls-ca": ca_file, "--dask-tls-cert": cert_file, "--dask-tls-key": key_file}
    named = [flag for flag, path in given.items() if path]
    if not named:
        return None
    if not scheduler:
        raise SweepError(named[0], "is read only with --scheduler tls://HOST:PORT")
    if not scheduler.startswith("tls://"):
        raise SweepError(
            "--scheduler", f"{scheduler!r}: with --dask-tls-* the address starts with tls://"
        )
    for flag in ("--dask-tls-ca", "--dask-tls-cert"):
        if not given[flag]:
            raise SweepError(flag, "is needed for a TLS scheduler (with --dask-tls-ca/-cert/-key)")
    for flag in named:
        if not os.path.isfile(os.path.expanduser(given[flag])):
            raise SweepError(flag, f"{given[flag]!r} is not a file")
    ca, cert = (os.path.expanduser(p) for p in (ca_file, cert_file))
    return _distributed().Security(
        tls_ca_file=ca,
        tls_client_cert=cert,
        tls_client_key=os.path.expanduser(key_file) if key_file else None,
        require_encryption=True,
    )


def make_executor(
    workers: int | None = None,
    scheduler: str | None = None,
    timeout_s: float = 10.0,
    security=None,
) -> ExecutorHandle:
    """Return the executor for ``--workers`` / ``--scheduler``.

    ``scheduler``: a Dask scheduler address (``tcp://host:8786``, or
    ``tls://host:8786`` with ``security``, a ``distributed.Security`` such as
    :func:`dask_security` returns; None: Dask's own configuration, which may
    itself name TLS files; needs the ``dask`` extra). Otherwise ``workers``
    processes (None: the CPU count), or this process when ``workers == 0``.
    Raises :class:`SweepError` for a scheduler that cannot be reached within
    ``timeout_s`` seconds or a negative worker count.
    """
    if scheduler:
        Client = _distributed().Client
        try:
            client = Client(scheduler, timeout=f"{timeout_s}s", security=security)
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
            _dask_worker_memory(client),
            "a Dask worker's memory limit",
        )
    if workers is not None and workers < 0:
        raise SweepError("--workers", f"must be >= 0, got {workers}")
    machine = machine_memory()
    if workers == 0:
        inline = InlineExecutor()
        return ExecutorHandle(inline, 1, "in-process", None, machine.limit, machine.source)
    n = workers or os.cpu_count() or 1
    pool = cf.ProcessPoolExecutor(max_workers=n, initializer=_ignore_sigint)

    def close() -> None:
        pool.shutdown(wait=True, cancel_futures=True)

    label = f"local process pool ({n} workers)"
    return ExecutorHandle(pool, 2 * n, label, close, machine.limit, machine.source, n)


def stop_pool(executor: cf.Executor) -> None:
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


def raise_interrupt(signum, frame):
    """A signal handler that raises KeyboardInterrupt (SIGTERM stops a sweep as Ctrl-C does)."""
    raise KeyboardInterrupt
