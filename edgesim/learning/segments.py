"""Segment sums over agents' row blocks, and the batched power iteration behind L_g.

Agents own consecutive row blocks of the design matrix; these helpers reduce
over every block at once (a sparse block-indicator product, or a batched
product when all blocks have the same size), never with a Python loop over
agents, and never with an (n, m) temporary larger than a cache-sized block.
"""

from __future__ import annotations

import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # imported where used: a run whose blocks are all equal never loads scipy
    from scipy.sparse import csr_matrix

BLOCK_ROWS = 8192


def row_blocks(offsets: np.ndarray) -> tuple:
    """Return the agents split into consecutive groups of about BLOCK_ROWS training rows.

    Returns ``((a0, a1, r0, r1), ...)``: agents a0..a1-1 own rows r0..r1-1.
    Gradients are computed block by block so the second pass over a block's
    rows (the segment sum after the scores) reads them from cache.
    """
    K = offsets.size - 1
    cuts = np.searchsorted(offsets, np.arange(0, offsets[-1], BLOCK_ROWS), side="right") - 1
    cuts = np.unique(np.concatenate([cuts, [K]]))
    cuts = cuts[(cuts >= 0) & (cuts <= K)]
    if cuts[0] != 0:
        cuts = np.concatenate([[0], cuts])
    return tuple(
        (int(a0), int(a1), int(offsets[a0]), int(offsets[a1]))
        for a0, a1 in zip(cuts[:-1], cuts[1:], strict=True)
        if a1 > a0
    )


#: Row blocks a thread takes at a time, at most.
THREAD_CHUNK_BLOCKS = 16
#: The fewest row blocks worth threads: about 32 000 rows, half a millisecond of a ridge
#: model's reports or more, against some 50 us to hand work to a thread and back.
THREAD_MIN_BLOCKS = 4


def usable_cpus() -> int:
    """Return the CPUs this process may run on (its affinity mask where the OS has one), >= 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def gradient_threads() -> int:
    """Return how many threads compute the agents' gradients: ``EDGESIM_THREADS``, else the
    CPUs this process may use (at most 8). Blocks are independent, so any count gives
    the same bits."""
    env = os.environ.get("EDGESIM_THREADS", "")
    if env.strip().isdigit() and int(env) > 0:
        return int(env)
    return min(8, usable_cpus())


_POOLS: dict[tuple, ThreadPoolExecutor] = {}  # by (process, name, workers)


def _pool(name: str, workers: int) -> ThreadPoolExecutor:
    """Return this process's pool ``name`` of ``workers`` threads, made at its first use (a
    forked child has none of its parent's threads, so it makes its own). Two threads racing
    here keep one pool (``setdefault``; an unused one starts no thread)."""
    key = (os.getpid(), name, workers)
    pool = _POOLS.get(key)
    if pool is None:
        pool = _POOLS.setdefault(key, ThreadPoolExecutor(workers, thread_name_prefix=name))
    return pool


def helper_thread() -> ThreadPoolExecutor:
    """Return this process's one helper thread: work a caller overlaps with its own (a
    batched exchange's reports while the network plans it,
    :meth:`edgesim.mechanisms.driver.AgentSide.reports_ahead`). It is not a thread of the
    gradients' pool, so the work it runs may call :func:`in_threads`."""
    return _pool("edgesim-helper", 1)


def block_threads(n_blocks: int) -> int:
    """Return how many threads :func:`in_threads` uses for ``n_blocks`` row blocks: one
    below :data:`THREAD_MIN_BLOCKS` (a small call asks nothing), else
    :func:`gradient_threads`, at most one a block."""
    if n_blocks < THREAD_MIN_BLOCKS:
        return 1
    return min(gradient_threads(), n_blocks)


def in_threads(work, n_blocks: int, chunk: int | None = None, most: int | None = None) -> None:
    """Run ``work(first, last)`` over the row blocks 0..n_blocks-1, split among
    :func:`block_threads` threads, at most ``most`` when given (``chunk`` blocks a task;
    by default as many as spreads them evenly over the threads, at most
    :data:`THREAD_CHUNK_BLOCKS`).

    numpy releases the GIL in the blocks' products and copies, so the agents' gradients
    (the largest cost of a run at K = 10^6 and beyond, and of FFL's many exchanges at
    K = 10^4) use every core. The calling thread is one of the threads: it and the pool's
    workers take the tasks in turn until none is left. Each block's result depends on
    that block only: any split gives the same bits. Returns nothing; a worker's
    exception is raised here.
    """
    if chunk is None and n_blocks < THREAD_MIN_BLOCKS:  # (block_threads: one thread)
        work(0, n_blocks)
        return
    if chunk is None:
        threads = block_threads(n_blocks)
    else:
        threads = 1 if n_blocks < 2 * chunk else gradient_threads()
    if most is not None:
        threads = min(most, threads)
    if threads <= 1:
        work(0, n_blocks)
        return
    if chunk is None:
        chunk = min(THREAD_CHUNK_BLOCKS, -(-n_blocks // threads))
    SharedBlocks().run(work, n_blocks, threads, chunk)  # (no other thread joins)


class SharedBlocks:
    """Row blocks that a helper thread starts and the thread waiting for them joins.

    The helper calls :meth:`run` (what :func:`in_threads` runs, here one block a task, taken
    in turn); the thread that needs the result calls :meth:`join` once it has nothing else to
    do and computes the blocks still left. :meth:`run` returns only when every block taken,
    by any thread, has ended, so what the helper does after it sees every block. Blocks are
    independent, so which thread computes one changes no bit. The helper must call
    :meth:`close` when it is done (also when it computed the rows another way, or failed),
    so that a join never waits for work that will not come.
    """

    def __init__(self) -> None:
        self._ready = threading.Event()
        self._taking = threading.Condition()
        self._tasks = iter(())
        self._work = None
        self._chunk = self._end = 1
        self._running = 0  # tasks taken and not ended

    def run(self, work, n_blocks: int, threads: int, chunk: int = 1) -> None:
        """Run ``work(first, last)`` over row blocks 0..n_blocks-1, ``chunk`` blocks a task, on
        the calling thread and ``threads`` - 1 of the gradients' pool (one pool whatever the
        call's threads: it starts them as asked), with whoever joins; returns when every task
        has ended (a worker's exception is raised; a joiner's reaches the joiner)."""
        with self._taking:
            self._work, self._chunk, self._end = work, chunk, n_blocks
            self._tasks = iter(range(0, n_blocks, chunk))
        self._ready.set()
        extra = max(0, min(threads, -(-n_blocks // chunk)) - 1)
        futures = []
        if extra:
            pool = _pool("edgesim-grad", gradient_threads() - 1)
            futures = [pool.submit(self._drain) for _ in range(extra)]
        try:
            self._drain()
        finally:
            wait(futures)
            with self._taking:  # the blocks a joiner took
                self._taking.wait_for(lambda: self._running == 0)
        for f in futures:
            f.result()

    def close(self) -> None:
        """Say that no more blocks will be offered (a :meth:`join` then waits no longer)."""
        self._ready.set()

    def join(self) -> None:
        """Compute the blocks still left, once the helper has offered them (or closed); returns
        when none is left to take (blocks the other threads took may still be running)."""
        self._ready.wait()
        self._drain()

    def _drain(self) -> None:
        while True:
            with self._taking:
                first = next(self._tasks, None)
                if first is None:
                    return
                self._running += 1
            try:
                self._work(first, min(first + self._chunk, self._end))
            finally:
                with self._taking:
                    self._running -= 1
                    self._taking.notify_all()


def segment_sum(
    values: np.ndarray,
    starts: np.ndarray,
    counts: np.ndarray,
    weights: np.ndarray | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Sum ``weights_i * values_i`` over consecutive row blocks; empty blocks give zeros.

    ``values`` is (n,) or (n, m); block k is rows ``starts[k] : starts[k] + counts[k]``;
    ``weights`` is (n,) or (n, C) (then the result is (K, m, C), one sum per column).
    One sparse (K x n) block-indicator product: no (n, m) temporary, no Python loop.
    Returns (K,) or (K, m), or (K, m, C); ``out`` (C-contiguous, that many elements in
    any shape) receives it, and is returned in that shape: the same bits either way.
    """
    if out is not None and not out.flags.c_contiguous:
        raise ValueError("segment_sum's out must be C-contiguous (a view of it is written)")
    sums = _segment_sum(values, starts, counts, weights, out)
    if out is None:
        return sums
    if not np.may_share_memory(sums, out):  # (else the product wrote them there)
        out.reshape(sums.shape)[...] = sums
    return out


def _segment_sum(values, starts, counts, weights, out):
    """:func:`segment_sum`'s sums, written into ``out`` (viewed in their shape) where the
    product can write there directly."""
    K, n = starts.size, values.shape[0]
    if n == 0 or K == 0:
        columns = () if weights is None or weights.ndim == 1 else weights.shape[1:]
        return np.zeros((K,) + values.shape[1:] + columns)
    c = int(counts[0])
    if c > 0 and c * K == n and counts.min() == counts.max():
        # Equal blocks: a batched product on the (K, c, m) view is faster than a sparse one.
        blocks = values.reshape((K, c) + values.shape[1:])
        if weights is None:
            return blocks.sum(axis=1)
        if weights.ndim == 2:  # one weight column per output column set: (K, m, C)
            into = None if out is None else out.reshape(K, values.shape[1], -1)
            return np.matmul(blocks.transpose(0, 2, 1), weights.reshape(K, c, -1), out=into)
        if values.ndim == 2:  # a batched (1 x c) (c x m) product: faster than einsum here
            into = None if out is None else out.reshape(K, 1, values.shape[1])
            return np.matmul(weights.reshape(K, 1, c), blocks, out=into)[:, 0]
        return np.einsum("ki,ki...->k...", weights.reshape(K, c), blocks)
    if weights is None:
        weights = np.ones(n)
    C = 1 if weights.ndim == 1 else weights.shape[1]
    S = _indicator(starts, counts, n, C)
    # row c K + k holds weights[:, c] over block k: one sparse product for every column,
    # each row's sum in the order of the rows
    np.copyto(S.data.reshape(C, n), weights.T if weights.ndim == 2 else weights)
    if weights.ndim == 1:
        return _product(S, values, out)
    sums = _product(S, values, None)
    sums = sums.reshape((C, K) + values.shape[1:])
    return sums.transpose(tuple(range(1, sums.ndim)) + (0,))  # (numpy.moveaxis, without its checks)


#: Block indicators kept for reuse (a round's segment sums repeat the same blocks), per
#: thread, at most :data:`INDICATORS_KEPT` of at most :data:`INDICATOR_MAX_ENTRIES` entries
#: each (16 bytes an entry: at most 2 MiB in all; edgesim.footprint counts one).
_INDICATORS: dict = {}
INDICATORS_KEPT = 8
INDICATOR_MAX_ENTRIES = 1 << 14


def _indicator(starts: np.ndarray, counts: np.ndarray, n: int, C: int) -> csr_matrix:
    """Return the (C K x n) sparse indicator whose row c K + k has ones over block k's
    rows (``starts[k] : starts[k] + counts[k]``; its data is overwritten by the caller),
    kept for reuse by the calling thread when small."""
    K = starts.size
    small = n * C <= INDICATOR_MAX_ENTRIES
    key = (threading.get_ident(), n, C, starts.tobytes(), counts.tobytes()) if small else None
    S = _INDICATORS.get(key) if small else None
    if S is None:
        from scipy.sparse import csr_matrix

        indptr = np.empty(K + 1, dtype=np.int64)
        indptr[:-1] = starts
        indptr[-1] = starts[-1] + counts[-1]
        rows = (indptr[None, :-1] + n * np.arange(C)[:, None]).reshape(-1)
        S = csr_matrix(
            (np.ones(C * n), np.tile(np.arange(n), C), np.append(rows, C * n)), shape=(C * K, n)
        )
        if small:
            if len(_INDICATORS) >= INDICATORS_KEPT:
                _INDICATORS.clear()
            _INDICATORS[key] = S
    return S


def _product(S: csr_matrix, values: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    """Return ``S @ values`` (the same bits), written into ``out`` (C-contiguous, S's rows
    times the columns, in any shape) when given. A C-contiguous float64 (n, m) ``values``
    goes to scipy's own CSR kernel directly (``csr_matvecs``, what ``@`` calls after its
    dispatch: a zeroed result, then each row's sum in the order of its entries), which
    spares about 10 us a call; a K = 2 best-response search makes about 80 000 of them.
    Anything else, or a scipy without that kernel, goes through ``@``."""
    matvecs = _csr_matvecs()
    direct = values.ndim == 2 and values.dtype == np.float64 and values.flags.c_contiguous
    if matvecs is None or not direct:
        return S @ values
    M, N = S.shape
    m = values.shape[1]
    if out is None or out.dtype != np.float64 or out.size != M * m:
        result = np.zeros((M, m))
    else:
        result = out.reshape(M, m)
        result.fill(0.0)
    matvecs(M, N, m, S.indptr, S.indices, S.data, values.reshape(-1), result.reshape(-1))
    return result


@functools.cache
def _csr_matvecs():
    """Return scipy's ``csr_matvecs`` kernel (``scipy.sparse._sparsetools``), or None if this
    scipy has none (then :func:`_product` uses ``@``)."""
    try:
        from scipy.sparse import _sparsetools
    except ImportError:
        return None
    return getattr(_sparsetools, "csr_matvecs", None)


def batched_top_eigenvalue(
    Xa: np.ndarray, starts, n_k, iterations: int = 100, blocks: tuple | None = None
) -> float:
    """Largest eigenvalue over agents of ``X_k^T X_k / n_k`` by batched power iteration.

    The agents are taken block by block (``blocks`` as :func:`row_blocks` returns; by
    default computed from ``starts`` and ``n_k``): a block's rows are read (and, when
    stored in float32, converted) once, and all its agents iterate at once while the
    block is in cache, until the block's largest Rayleigh quotient has settled (three
    steady iterations after at least 20). Returns the largest over the blocks: a lower
    estimate that converges to the true value (within 1e-15 relative of an exact
    eigensolver on the synthetic data; slower on nearly degenerate spectra). No
    (K, d') array is formed; the start vectors are the same draws as one (K, d') draw.
    """
    K = starts.size
    dprime = Xa.shape[1]
    c = int(n_k[0])
    equal = c > 0 and c * K == Xa.shape[0] and n_k.min() == n_k.max()
    if blocks is None:
        blocks = row_blocks(np.append(starts, starts[-1] + n_k[-1]))
    # A fixed generic start: the all-ones vector can be an eigenvector of the *smallest*
    # eigenvalue (a +-1 feature beside the intercept), which power iteration never leaves.
    rng = np.random.default_rng(12345)
    merged = _merged(blocks, EIGEN_BLOCK_ROWS)
    tops = np.zeros(len(merged))
    step = max(1, gradient_threads())
    for first in range(0, len(merged), step):  # start vectors drawn in block order, then iterated
        group = merged[first : first + step]
        vs = [rng.standard_normal((a1 - a0, dprime)) for a0, a1, _, _ in group]

        def one(i: int, _: int, group=group, vs=vs, first=first) -> None:
            a0, a1, r0, r1 = group[i]
            Xb = Xa[r0:r1] if Xa.dtype == np.float64 else Xa[r0:r1].astype(np.float64)
            v = vs[i]
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            k = c if equal else 0
            tops[first + i] = _block_top(Xb, v, starts[a0:a1] - r0, n_k[a0:a1], k, iterations)

        in_threads(one, len(group), chunk=1)
    return float(tops.max(initial=0.0))


EIGEN_BLOCK_ROWS = 1 << 16  # rows per block of the power iteration (its state stays in cache)


def _merged(blocks: tuple, rows: int) -> list:
    """Return consecutive ``blocks`` joined into blocks of at least ``rows`` rows (the last
    may be smaller), as ``(a0, a1, r0, r1)``."""
    out = []
    for a0, a1, r0, r1 in blocks:
        if out and out[-1][3] - out[-1][2] < rows:
            out[-1] = (out[-1][0], a1, out[-1][2], r1)
        else:
            out.append((a0, a1, r0, r1))
    return out


def _block_top(Xb: np.ndarray, v: np.ndarray, starts, n_k, c: int, iterations: int) -> float:
    """Power-iterate the agents of one row block from ``v`` (agents, d'); returns their largest
    Rayleigh quotient once it has settled (``c`` > 0: every agent has c rows)."""
    m, dprime = v.shape
    Av = np.empty_like(v)
    if c:  # an (agents, c, d') view, no gather
        X3 = Xb.reshape(m, c, dprime)
    else:
        agent = np.repeat(np.arange(m), n_k)
    gram = 0 < c < dprime
    if gram:  # X_k X_k^T / n_k (c x c) has the same top eigenvalue, and is smaller
        X3, v = np.einsum("kci,kdi->kcd", X3, X3) / c, np.einsum("kcd,kd->kc", X3, v)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        Av = np.empty_like(v)
        n_k = np.ones(m)
    top = 0.0
    steady = 0
    for it in range(iterations):
        if gram:
            np.einsum("kcd,kd->kc", X3, v, out=Av)
        elif c:
            np.einsum("kcd,kc->kd", X3, np.einsum("kcd,kd->kc", X3, v), out=Av)
        else:
            proj = np.einsum("ij,ij->i", Xb, v[agent])
            Av[:] = segment_sum(Xb, starts, n_k, proj)
        Av /= n_k[:, None]
        lam = np.einsum("ij,ij->i", Av, v)
        norm = np.linalg.norm(Av, axis=1)
        norm[norm == 0] = 1.0
        np.divide(Av, norm[:, None], out=v)
        new_top = float(lam.max())
        steady = steady + 1 if abs(new_top - top) <= 1e-12 * abs(new_top) else 0
        top = new_top
        if steady >= 3 and it >= 20:
            break
    return top
