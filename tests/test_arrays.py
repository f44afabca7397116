"""Views of one number and what reads them (edgesim/arrays.py)."""

from __future__ import annotations

import numpy as np
import pytest

from edgesim import arrays


def test_a_constant_view_reads_as_the_full_column():
    full = np.full(5, 7, dtype=np.int64)
    view = arrays.constant(5, 7)
    assert arrays.is_constant(view) and not arrays.is_constant(full)
    rows = np.array([4, 0, 2])
    for a in (view, full):
        assert np.array_equal(arrays.take_rows(a, rows), full[rows])
        assert arrays.total(a) == 35
        assert arrays.all_equal(a)
        assert np.array_equal(arrays.squeezed(a), a[:1] if a is view else a)
    assert arrays.is_constant(arrays.take_rows(view, rows))  # no copy of one number
    assert not arrays.all_equal(np.array([1, 2], dtype=np.int64))
    assert arrays.all_equal(np.zeros(0))


def test_a_float_view_keeps_its_values():
    """Only int64 views are rebuilt as constant(); a float one is gathered as it is."""
    half = np.broadcast_to(2.5, (4,))
    assert arrays.take_rows(half, np.array([0, 3])).tolist() == [2.5, 2.5]
    with pytest.raises(TypeError, match="int64"):
        arrays.total(half)


def test_norm2_is_numpys_norm_bit_for_bit():
    """norm2 repeats numpy.linalg.norm's operations: the same float on contiguous and strided
    vectors of any scale, and NaN / inf as numpy gives them."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        v = rng.standard_normal(int(rng.integers(1, 400))) * 10.0 ** rng.integers(-150, 150)
        for x in (v, v[::3], v[::-1]):
            assert arrays.norm2(x) == float(np.linalg.norm(x))
    assert np.isnan(arrays.norm2(np.array([1.0, np.nan])))
    assert arrays.norm2(np.array([np.inf, 1.0])) == np.inf
    assert arrays.norm2(np.zeros(0)) == 0.0
    assert arrays.column(np.int64(7), 3).tolist() == [7, 7, 7]


def test_every_agent_but_one_is_found_and_added_through_by_slices():
    n = arrays.ALL_BUT_FROM + 5
    everyone = np.arange(n)
    for j in (0, 7, n - 1):
        agents = np.delete(everyone, j)
        rows = arrays.all_but(agents, everyone)
        assert rows == arrays.AllBut(j)
        rng = np.random.default_rng(j)
        values = rng.integers(0, 100, agents.size)
        for added in (values, 3, arrays.constant(agents.size, 4)):
            expected = rng.integers(0, 100, n)
            got = expected.copy()
            expected[agents] += added
            arrays.add_rows(got, rows, added)
            assert np.array_equal(got, expected)
        per_agent = everyone * 10
        assert np.array_equal(arrays.select_rows(per_agent, rows), per_agent[agents])
    # not every agent but one: the same size, but two left out and one twice, or out of order
    twice = np.delete(everyone, [3, 9])
    twice = np.sort(np.append(twice, 4))
    assert arrays.all_but(twice, everyone) is None
    swapped = np.delete(everyone, 5)
    swapped[[10, 11]] = swapped[[11, 10]]
    assert arrays.all_but(swapped, everyone) is None
    assert arrays.all_but(np.delete(everyone, [1, 2]), everyone) is None  # two short
    small = np.arange(10)
    assert arrays.all_but(np.delete(small, 3), small) is None  # too few to pay for the check
    index = np.array([2, 0, 5])
    target = np.zeros(6, dtype=np.int64)
    arrays.add_rows(target, index, np.array([1, 2, 3]))
    assert target.tolist() == [2, 0, 1, 0, 0, 3]
    assert arrays.select_rows(np.arange(6) * 10, index).tolist() == [20, 0, 50]


def test_kept_rows_move_to_the_front_in_place_chunk_by_chunk(monkeypatch):
    monkeypatch.setattr(arrays, "KEEP_CHUNK_ROWS", 3)  # several chunks
    rng = np.random.default_rng(1)
    for n in (0, 1, 7, 20):
        a = rng.standard_normal((n, 4))
        keep = rng.random(n) < 0.6
        expected = a[keep].copy()
        got = arrays.keep_rows(a, keep)
        assert np.shares_memory(got, a) or got.size == 0
        assert np.array_equal(got, expected)


def test_as_slice_is_a_slice_only_for_consecutive_positions():
    """Consecutive positions select the same elements as a slice; others stay an array."""
    a = np.arange(10) * 3
    for pos in ([4], [2, 3, 4], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]):
        sl = arrays.as_slice(np.array(pos))
        assert type(sl) is slice and np.array_equal(a[sl], a[pos])
    gaps = np.array([1, 3, 4])
    assert arrays.as_slice(gaps) is gaps


def test_constant_views_are_kept_and_read_only():
    """constant() hands out one read-only view per (m, value), and holds a bounded number."""
    v = arrays.constant(5, 7)
    assert arrays.constant(5, 7) is v and not v.flags.writeable
    assert np.array_equal(v, np.full(5, 7)) and arrays.total(v) == 35
    for m in range(arrays.CONSTANTS_KEPT + 3):
        arrays.constant(m, 1)
    assert len(arrays._CONSTANTS) <= arrays.CONSTANTS_KEPT


def test_all_finite_and_frozen_copy():
    """all_finite is np.isfinite(a).all(); frozen_copy is a read-only copy that later writes
    to the original do not reach."""
    for a in (np.zeros(0), np.ones(3), np.array([1.0, np.inf]), np.array([[np.nan, 1.0]])):
        assert arrays.all_finite(a) == bool(np.isfinite(a).all())
    a = np.arange(4)
    kept = arrays.frozen_copy(a)
    a[0] = 9
    assert kept.tolist() == [0, 1, 2, 3] and not kept.flags.writeable


@pytest.mark.parametrize("size", [0, 1, 7, 200])
def test_every_is_numpys_all_on_bool_masks(size):
    rng = np.random.default_rng(size)
    for mask in (np.ones(size, bool), rng.random(size) < 0.9, np.zeros(size, bool)):
        assert arrays.every(mask) == bool(mask.all())
        if size:
            mask[-1] = False  # a single False anywhere decides it
            assert not arrays.every(mask)
