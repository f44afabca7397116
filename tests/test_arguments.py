"""The one set of argument checks: what passes, and a message that starts with the name."""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgesim import arguments as a


def test_values_that_pass_come_back_as_plain_numbers():
    assert a.real("x", np.float32(1.5)) == 1.5 and type(a.real("x", 2)) is float
    assert a.positive("x", 1e-300) == 1e-300 and a.nonnegative("x", 0) == 0.0
    assert a.open_unit("x", 0.5) == 0.5
    assert a.integer("n", 10.0, 1) == 10 and a.integer("n", np.int64(3), 0) == 3


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: a.real("x", True), "x: must be a finite real number, got True"),
        (lambda: a.real("x", "1.0"), "x: must be a finite real number"),
        (lambda: a.real("x", math.nan), "x: must be a finite real number"),
        (lambda: a.positive("x", 0.0), "x: must be > 0, got 0.0"),
        (lambda: a.nonnegative("x", -1), "x: must be >= 0, got -1"),
        (lambda: a.open_unit("beta", 1.0), "beta: must be in (0, 1), got 1.0"),
        (lambda: a.integer("K", 2.5, 1), "K: must be an integer >= 1, got 2.5"),
        (lambda: a.integer("K", 0, 1), "K: must be an integer >= 1, got 0"),
        (lambda: a.integer("K", False, 0), "K: must be an integer >= 0, got False"),
    ],
)
def test_failures_name_the_argument(call, words):
    with pytest.raises(ValueError) as err:
        call()
    assert str(err.value).startswith(words)
