"""Segment sums over agents' row blocks (edgesim/learning/segments.py)."""

from __future__ import annotations

import numpy as np

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
