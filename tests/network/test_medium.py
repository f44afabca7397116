"""Shared media against their closed forms (edgesim/network/medium.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

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


def test_dedicated_adds_the_work():
    assert finish_ns([5, 7], [10, 20], discipline="dedicated").tolist() == [15, 27]


def test_bad_arguments():
    with pytest.raises(ValueError, match="discipline"):
        finish_ns([0], [1], discipline="csma")
    with pytest.raises(ValueError, match="servers"):
        finish_ns([0], [1], discipline="fifo", servers=0)
