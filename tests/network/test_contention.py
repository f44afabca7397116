"""A Wi-Fi cell's medium (edgesim/network/contention.py): the compiled walk is the Python one."""

import numpy as np


def test_compiled_contention_is_the_python_walk_bit_for_bit(monkeypatch):
    # a Wi-Fi cell's walk of both directions: the compiled one is the Python one
    from edgesim.network import contention, medium

    def efficiency(n):
        return 1.0 / (1.0 + 0.037 * (n - 1))

    rng = np.random.default_rng(2)
    for trial in range(40):
        m = int(rng.integers(2, 120))
        down_at = np.zeros(m, dtype=np.int64) if trial % 3 == 0 else rng.integers(0, 10**6, m)
        down_work, up_work = rng.integers(1, 10**5, m), rng.integers(1, 10**5, m)
        up_offset, sends = rng.integers(0, 10**5, m), rng.random(m) < 0.8
        answers = []
        for compiled in (False, True):
            monkeypatch.setattr(medium, "runs_compiled", lambda n, c=compiled: c)
            answers.append(
                contention.contention_ns(down_at, down_work, up_offset, up_work, sends, efficiency)
            )
        assert np.array_equal(answers[0][0], answers[1][0])
        assert np.array_equal(answers[0][1], answers[1][1])
        assert (answers[1][1][~sends] == -1).all() and (answers[1][1][sends] > 0).all()
