"""Segment sums over agents' row blocks (edgesim/learning/segments.py)."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

from edgesim.learning import segments
from edgesim.learning.segments import segment_sum


def _blocks(counts):
    counts = np.asarray(counts, dtype=np.int64)
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64), counts


def test_segment_sums_equal_a_loop_over_blocks_with_reused_indicators():
    # unequal blocks (some empty): the sparse indicator is kept and its data overwritten,
    # so a second call with other weights must not see the first call's
    rng = np.random.default_rng(0)
    starts, counts = _blocks([3, 0, 5, 1, 7])
    n = int(counts.sum())
    values = rng.standard_normal((n, 4))
    for _ in range(3):
        for weights in (None, rng.standard_normal(n), rng.standard_normal((n, 3))):
            got = segment_sum(values, starts, counts, weights)
            w = np.ones(n) if weights is None else weights
            for k, (s, c) in enumerate(zip(starts, counts, strict=True)):
                rows = slice(s, s + c)
                if w.ndim == 1:
                    want = (w[rows, None] * values[rows]).sum(axis=0)
                else:
                    want = np.einsum("ic,ij->jc", w[rows], values[rows])
                np.testing.assert_allclose(got[k], want, rtol=1e-12, atol=1e-12)


def test_a_kept_indicator_gives_the_bits_of_a_fresh_one(monkeypatch):
    rng = np.random.default_rng(1)
    starts, counts = _blocks(rng.integers(1, 9, 30))
    n = int(counts.sum())
    values, weights = rng.standard_normal((n, 5)), rng.standard_normal((n, 3))
    segment_sum(values, starts, counts, rng.standard_normal((n, 3)))  # kept, other data
    kept = segment_sum(values, starts, counts, weights)
    monkeypatch.setattr(segments, "INDICATOR_MAX_ENTRIES", 0)  # nothing kept: built afresh
    assert np.array_equal(kept, segment_sum(values, starts, counts, weights))
    assert segments._INDICATORS  # the first calls kept theirs


def test_out_receives_the_bits_of_a_fresh_sum():
    """``out`` is written in place (equal blocks: the batched product's own output; unequal:
    a copy) and holds what a call without it returns, bit for bit."""
    rng = np.random.default_rng(2)
    for counts in ([4] * 6, [3, 0, 5, 1, 7]):
        starts, counts = _blocks(counts)
        n = int(counts.sum())
        values = rng.standard_normal((n, 5))
        for weights in (rng.standard_normal(n), rng.standard_normal((n, 3))):
            want = segment_sum(values, starts, counts, weights).reshape(starts.size, -1)
            buffer = np.full((starts.size + 2, want.shape[1]), np.nan)
            out = buffer[1:-1]  # a view inside a larger buffer, as a round's reports are
            got = segment_sum(values, starts, counts, weights, out)
            assert got is out
            assert np.array_equal(out, want)
            assert np.isnan(buffer[[0, -1]]).all()
    # no rows: zeros, in the shape of the sums (one per weight column)
    empty = segment_sum(np.zeros((0, 5)), np.zeros(3, np.int64), np.zeros(3, np.int64),
                        np.zeros((0, 2)), np.ones((3, 10)))  # fmt: skip
    assert np.array_equal(empty, np.zeros((3, 10)))
    with pytest.raises(ValueError, match="C-contiguous"):
        segment_sum(values, starts, counts, weights, np.zeros((want.shape[1], starts.size)).T)


def test_the_direct_sparse_kernel_gives_the_operators_bits(monkeypatch):
    """Unequal blocks' sums go to scipy's CSR kernel directly: the bits of ``S @ values``
    (the operator, used when the kernel is missing), signed zeros and cancellation included,
    with and without ``out``; a non-contiguous or float32 ``values`` takes the operator."""
    rng = np.random.default_rng(4)
    for trial in range(40):
        starts, counts = _blocks(rng.integers(0, 9, int(rng.integers(1, 12))))
        n = int(counts.sum())
        values = (
            rng.standard_normal((n, int(rng.integers(1, 6))))
            * 10.0 ** rng.integers(-8, 9, n)[:, None]
        )
        values[rng.random(values.shape) < 0.1] = -0.0
        weights = rng.standard_normal(n)
        weights[rng.random(n) < 0.1] = 0.0
        if trial % 4 == 3:
            values = values[:, ::-1]  # not C-contiguous: the operator
        got = segment_sum(values, starts, counts, weights)
        into = segment_sum(
            values, starts, counts, weights, np.full((starts.size, values.shape[1]), 7.0)
        )
        monkeypatch.setattr(segments, "_csr_matvecs", lambda: None)  # the operator
        want = segment_sum(values, starts, counts, weights)
        monkeypatch.undo()
        for sums in (got, into):
            assert np.array_equal(sums, want)
            assert np.array_equal(np.signbit(sums), np.signbit(want))
    assert segments._csr_matvecs() is not None  # this scipy has the kernel: the direct path ran


def test_a_few_blocks_are_split_over_the_threads_the_caller_among_them(monkeypatch):
    monkeypatch.setenv("EDGESIM_THREADS", "2")
    assert segments.block_threads(segments.THREAD_MIN_BLOCKS - 1) == 1
    assert segments.block_threads(segments.THREAD_MIN_BLOCKS) == 2
    calls = []
    segments.in_threads(lambda lo, hi: calls.append((lo, hi, threading.get_ident())), 13)
    assert sorted(c[:2] for c in calls) == [(0, 7), (7, 13)]  # ceil(13 / 2) blocks a task

    def slow(lo, hi):  # many tasks: the caller keeps taking them, not only the first
        time.sleep(0.002)
        calls.append((lo, hi, threading.get_ident()))

    calls.clear()
    monkeypatch.setattr(segments, "THREAD_CHUNK_BLOCKS", 1)
    segments.in_threads(slow, 40)
    assert sorted(c[:2] for c in calls) == [(i, i + 1) for i in range(40)]
    mine = sum(c[2] == threading.get_ident() for c in calls)
    assert 5 <= mine <= 35, mine  # about half each (before: the caller took only the first)

    def fails(lo, hi):
        if lo > 0:
            raise ValueError("a worker's error")

    with pytest.raises(ValueError, match="a worker's error"):
        segments.in_threads(fails, 13)


def test_one_thread_pool_whatever_the_block_count(monkeypatch):
    monkeypatch.setenv("EDGESIM_THREADS", "3")
    monkeypatch.setattr(segments, "_POOLS", {})
    for n_blocks in range(1, 12):
        segments.in_threads(lambda lo, hi: None, n_blocks)
    key = (os.getpid(), "edgesim-grad", 2)  # (a forked child makes its own)
    assert list(segments._POOLS) == [key]
    assert segments._POOLS[key]._max_workers == 2  # and the calling thread
    segments._POOLS[key].shutdown()


def test_in_threads_takes_at_most_the_threads_asked(monkeypatch):
    monkeypatch.setenv("EDGESIM_THREADS", "3")
    for most, allowed in ((1, 1), (2, 2), (None, 3)):
        seen = set()
        lock = threading.Lock()

        def work(lo, hi, seen=seen, lock=lock):
            with lock:
                seen.add(threading.get_ident())
            time.sleep(0.002)  # long enough for every pool thread to take a task

        segments.in_threads(work, 12, most=most)
        assert 1 <= len(seen) <= allowed
        if most == 1:
            assert seen == {threading.get_ident()}  # the caller alone: no hand-over


def test_shared_blocks_are_taken_by_the_thread_that_joins():
    # a helper offers the blocks; the thread that waits for them computes those still left,
    # so every block runs once, some on each thread, and the helper's run returns only when
    # the joiner's blocks have ended too (what it does next sees every block)
    from concurrent.futures import ThreadPoolExecutor

    main = threading.get_ident()
    joined = threading.Event()
    calls = []

    def work(lo, hi):
        if threading.get_ident() == main:
            joined.set()
            time.sleep(0.05)  # the joiner's block ends after the helper ran out of blocks
        else:
            joined.wait(timeout=10)  # the helper's first block waits for the joiner's
        calls.append((lo, hi, threading.get_ident()))

    def helper(blocks):
        try:
            blocks.run(work, 6, threads=1)
            return len(calls)  # the blocks ended when run returned
        finally:
            blocks.close()

    with ThreadPoolExecutor(1) as pool:
        blocks = segments.SharedBlocks()
        done = pool.submit(helper, blocks)
        blocks.join()
        assert done.result() == 6
        assert sorted(c[:2] for c in calls) == [(i, i + 1) for i in range(6)]
        assert {c[2] == main for c in calls} == {True, False}


def test_a_join_ends_when_the_helper_closes_and_errors_reach_their_thread():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        idle = segments.SharedBlocks()  # the helper offers no blocks (it computed them so)
        waiting = threading.Thread(target=idle.join)
        waiting.start()
        time.sleep(0.02)  # the join is waiting
        pool.submit(idle.close).result()
        waiting.join(timeout=10)
        assert not waiting.is_alive()

        main = threading.get_ident()
        for failing_thread in ("helper", "joiner"):
            joined = threading.Event()

            def work(lo, hi, who=failing_thread, joined=joined):
                mine = threading.get_ident() == main
                if mine:
                    joined.set()
                else:
                    joined.wait(timeout=10)  # the helper's first block waits for the joiner's
                if mine == (who == "joiner"):
                    raise ValueError(f"the {who}'s block")

            blocks = segments.SharedBlocks()
            started = pool.submit(blocks.run, work, 8, 1)
            if failing_thread == "joiner":
                with pytest.raises(ValueError, match="the joiner's block"):
                    blocks.join()
                started.result()  # (the helper's blocks ran)
            else:
                blocks.join()
                with pytest.raises(ValueError, match="the helper's block"):
                    started.result()
