"""Shared media against their closed forms (edgesim/network/medium.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgesim.network import medium
from edgesim.network.medium import finish_ns


@pytest.mark.parametrize("N", [1, 7, 40])
def test_processor_sharing_of_equal_messages_arriving_together(N):
    # each of N progresses at 1/N: all through at N w
    assert finish_ns([0] * N, [1000] * N).tolist() == [N * 1000] * N


def test_processor_sharing_unequal_messages():
    # a and 3a from t = 0: the short one leaves at 2a, then the long one alone: 4a
    assert finish_ns([0, 0], [1000, 3000]).tolist() == [2000, 4000]


def test_processor_sharing_late_joiner():
    # three of 1000 ns from t = 0, 0, 500: by 500 the first two have 250 each; then
    # three share: the first two need 750 more at 1/3 -> 2750; the third 250 alone -> 3000
    assert finish_ns([0, 0, 500], [1000, 1000, 1000]).tolist() == [2750, 2750, 3000]


def test_processor_sharing_walk_equals_the_closed_form_when_arrivals_coincide():
    # the walk (general arrivals) and the vectorised closed form agree: shift one group's
    # arrivals apart by a message that arrives long after the others are through
    rng = np.random.default_rng(3)
    work = rng.integers(1, 10_000, 50)
    together = finish_ns(np.zeros(50, dtype=np.int64), work)
    late = finish_ns(np.r_[np.zeros(50, dtype=np.int64), 10**9], np.r_[work, 5])
    assert np.abs(late[:50] - together).max() <= 1
    assert late[50] == 10**9 + 5


def test_groups_do_not_interact():
    got = finish_ns([0, 0, 0, 0], [10, 20, 10, 40], group=[1, 0, 1, 0])
    assert got.tolist() == [20, 40, 20, 60]


@pytest.mark.parametrize("R", [1, 3, 4, 10])
def test_fifo_servers_finish_in_waves(R):
    N, w = 10, 8000
    got = sorted(finish_ns([0] * N, [w] * N, discipline="fifo", servers=R).tolist())
    waves = math.ceil(N / R)
    assert got[-1] == waves * w
    assert [got.count(w * k) for k in range(1, waves + 1)] == [
        min(R, N - R * k) for k in range(waves)
    ]


def test_fifo_one_server_queues_in_arrival_order():
    # 100 ns each; the second arrives at 10 and waits; the one at 5000 finds the server idle
    got = finish_ns([0, 10, 10, 5000], [100, 100, 100, 10], group=[0, 0, 1, 0], discipline="fifo")
    assert got.tolist() == [100, 200, 110, 5010]


def test_fifo_many_equals_a_reference_list_scheduler():
    rng = np.random.default_rng(0)
    a = np.sort(rng.integers(0, 5000, 40))
    w = rng.integers(1, 3000, 40)
    free = [0, 0, 0]
    want = []
    for ai, wi in zip(a.tolist(), w.tolist(), strict=True):
        k = min(range(3), key=lambda j: free[j])
        free[k] = max(ai, free[k]) + wi
        want.append(free[k])
    assert finish_ns(a, w, discipline="fifo", servers=3).tolist() == want


def test_fifo_with_a_server_for_every_message_is_the_walk_without_waits():
    # at most R messages (whatever their groups): each has a server at once, a + w; the
    # walks (Python and compiled), called directly, agree
    rng = np.random.default_rng(3)
    a, w = rng.integers(0, 10**6, 40), rng.integers(1, 10**5, 40)
    g = rng.integers(0, 3, 40)
    got = finish_ns(a, w, group=g, discipline="fifo", servers=40)
    assert got.tolist() == (a + w).tolist()
    assert medium._fifo_many(a, w, g, 40).tolist() == got.tolist()
    # one more message than servers in one group: some wait
    assert (finish_ns(a[:5] * 0, w[:5], discipline="fifo", servers=4) > w[:5]).any()


def test_dedicated_adds_the_work():
    assert finish_ns([5, 7], [10, 20], discipline="dedicated").tolist() == [15, 27]


def test_bad_arguments():
    with pytest.raises(ValueError, match="discipline"):
        finish_ns([0], [1], discipline="csma")
    with pytest.raises(ValueError, match="servers"):
        finish_ns([0], [1], discipline="fifo", servers=0)


def _reference_ps(arrive, work, slowness=None):
    """An independent processor-sharing walk of one medium: time steps from event to event,
    every message in service served at 1 / n (or 1 / slowness(n)) per ns. Returns float ns."""
    arrive = [float(x) for x in arrive]
    left = [float(x) for x in work]
    done = [math.nan] * len(arrive)
    t = min(arrive)
    while any(math.isnan(d) for d in done):
        active = [i for i, a in enumerate(arrive) if a <= t and math.isnan(done[i])]
        future = [a for a, d in zip(arrive, done, strict=True) if a > t and math.isnan(d)]
        if not active:
            t = min(future)
            continue
        n = len(active)
        per_ns = 1.0 / (n if slowness is None else slowness(n))
        finish = t + min(left[i] for i in active) / per_ns
        step_to = min([finish] + future)
        for i in active:
            left[i] -= (step_to - t) * per_ns
            if left[i] <= 1e-6 * max(1.0, work[i]):
                done[i] = step_to
        t = step_to
    return np.array(done)


@pytest.mark.parametrize("compiled", [False, True])
def test_processor_sharing_walks_equal_an_independent_walk(compiled, monkeypatch):
    # staggered arrivals on several media: the batched walk (in Python, or compiled by numba)
    # is through within a ns of a plain time-stepping walk of each medium
    from edgesim.network import medium

    monkeypatch.setattr(medium, "runs_compiled", lambda n: compiled)
    rng = np.random.default_rng(5)
    for _ in range(20):
        m, groups = int(rng.integers(2, 40)), int(rng.integers(1, 4))
        a = rng.integers(0, 20_000, m)
        w = rng.integers(0, 8_000, m)
        g = rng.integers(0, groups, m)
        got = finish_ns(a, w, group=g)
        for k in range(groups):
            mine = g == k
            if mine.any():
                want = _reference_ps(a[mine], w[mine])
                assert np.abs(got[mine] - want).max() <= 1.0


def test_compiled_walks_are_the_python_walks_bit_for_bit(monkeypatch):
    # the same operations in the same order: every fidelity and executor gives the same ns
    from edgesim.network import medium
    from edgesim.network.access.round_robin import RbgFloorEfficiency

    rng = np.random.default_rng(11)
    for trial in range(60):
        m = int(rng.integers(2, 300))
        groups = int(rng.integers(1, 8))
        a = rng.integers(0, 10 ** int(rng.integers(2, 7)), m)
        if trial % 3 == 0:
            a = (a // 1000) * 1000  # many arrive together
        w = rng.integers(0, 10**5, m)
        g = rng.integers(0, groups, m)
        efficiency = RbgFloorEfficiency(int(rng.integers(1, 25))) if trial % 2 else None
        servers = int(rng.integers(1, 9))
        answers = []
        for compiled in (False, True):
            monkeypatch.setattr(medium, "runs_compiled", lambda n, c=compiled: c)
            answers.append(
                (
                    finish_ns(a, w, group=g, efficiency=efficiency),
                    finish_ns(a, w, group=g, discipline="fifo", servers=servers),
                )
            )
        assert np.array_equal(answers[0][0], answers[1][0])
        assert np.array_equal(answers[0][1], answers[1][1])


@pytest.mark.parametrize("shape", ["few pairs", "many pairs", "one large group", "sparse names"])
def test_grouped_compiled_processor_sharing_is_the_python_walk_bit_for_bit(shape, monkeypatch):
    # many cells in one call, in any order, as an exchange's uplinks: the compiled call counts
    # the messages into their cells and sorts each (by counting when it holds few distinct
    # (arrival, work) pairs), and gives the Python walk's bits; cells whose messages all
    # arrive together carry, with an efficiency, one float running sum across them
    from edgesim.network import medium
    from edgesim.network.access.round_robin import RbgFloorEfficiency

    rng = np.random.default_rng(23)
    for trial in range(24):
        cells = 1 if shape == "one large group" else int(rng.integers(5, 60))
        m = int(rng.integers(300, 1500)) if shape == "one large group" else cells * 30
        g = rng.integers(0, cells, m)
        if shape == "sparse names":
            g = g * 10 * m + 7  # names too far apart to count into: the sorting path
        values = 3 if shape == "few pairs" else 10**4
        a = rng.integers(0, values, m) * 1000
        w = rng.integers(0, values, m) * 500 + (trial % 2)  # even trials: some works are 0
        if trial % 4 == 1:
            w *= 10**7  # large sums, whose float rounding the running sum must repeat
        together = rng.random(cells) < 0.4
        a[together[g % cells]] = 5_000  # whole cells arriving together
        efficiency = RbgFloorEfficiency(int(rng.integers(1, 25))) if trial % 3 else None
        answers = []
        for compiled in (False, True):
            monkeypatch.setattr(medium, "runs_compiled", lambda n, c=compiled: c)
            answers.append(finish_ns(a, w, group=g, efficiency=efficiency))
        assert np.array_equal(answers[0], answers[1])
        if trial % 6 == 0:  # other integer names: numbered as int64 (no new compiled version)
            small = g.astype(np.int32) if shape != "sparse names" else g.astype(np.uint64)
            assert np.array_equal(finish_ns(a, w, group=small, efficiency=efficiency), answers[1])
    # equal messages on every cell: a + N w per cell, with no walk
    g = rng.integers(0, 40, 2_000)
    got = finish_ns(np.full(2_000, 9), np.full(2_000, 4), group=g)
    assert np.array_equal(got, 9 + 4 * np.bincount(g)[g])


@pytest.mark.parametrize("per_triple", [4, 10**9])
def test_compiled_processor_sharing_by_triples_and_by_messages_agree_bit_for_bit(
    per_triple, monkeypatch
):
    # the compiled call walks distinct (cell, arrival, work) triples when they are few
    # (at most one per 4 messages) and messages otherwise (10^9: never by triples); both
    # give the Python walk's bits, also with repeated zero-work messages where a busy period
    # ends, whole cells arriving together, an efficiency, and negative cell names
    from edgesim.network import compiled_walks, medium
    from edgesim.network.access.round_robin import RbgFloorEfficiency

    monkeypatch.setattr(medium, "MESSAGES_PER_TRIPLE", per_triple)
    by_triples = []
    walk = compiled_walks.ps_pairs
    monkeypatch.setattr(compiled_walks, "ps_pairs", lambda *a: by_triples.append(1) or walk(*a))
    rng = np.random.default_rng(31)
    trials = 40
    for trial in range(trials):
        cells = int(rng.integers(1, 6))
        m = int(rng.integers(400, 900))
        g = rng.integers(0, cells, m) - (5 if trial % 5 == 0 else 0)
        a = rng.integers(0, 5, m) * 700
        w = rng.integers(0, 4, m) * 350  # a message of 350 ns ends a period where the next
        together = rng.random(cells) < 0.3  # arrives; zero-work ones repeat there
        a[together[g % cells]] = 1_400
        efficiency = RbgFloorEfficiency(int(rng.integers(1, 25))) if trial % 3 == 1 else None
        answers = []
        for compiled in (False, True):
            monkeypatch.setattr(medium, "runs_compiled", lambda n, c=compiled: c)
            answers.append(finish_ns(a, w, group=g, efficiency=efficiency))
        assert np.array_equal(answers[0], answers[1])
    assert len(by_triples) == (trials if per_triple == 4 else 0)
