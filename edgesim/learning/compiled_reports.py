"""When a model's one-block reports run compiled: numba's import is paid only where it pays.

:mod:`edgesim.learning.compiled_grads` holds the kernels (and imports numba);
:meth:`edgesim.learning.models.Model.agent_grads` asks :func:`kernels` for them on every
one-block report and computes with numpy while it returns None. The kernels give numpy's bits,
so which path runs changes no result.
"""

from __future__ import annotations

import importlib
import sys

#: A model's one-block reports run compiled (:mod:`edgesim.learning.compiled_grads`: about a
#: third of numpy's time at K = 2, half at K = 200) where numba is loaded already (a network's
#: compiled walks load it), after :func:`expect_many_runs` (a best-response search), or once
#: the time they would have saved so far exceeds numba's import, about this many microseconds
#: (0.3 to 0.5 s; the rent-or-buy rule: at most twice the better choice's cost). The saving is
#: estimated per call as :data:`SAVED_PER_CALL_US` plus :data:`SAVED_PER_VALUE_US` per row and
#: parameter (measured: about 18 us at K = 2, two parameters, 450 rows; 70 us at K = 200,
#: logistic, 33 parameters, 2 000 rows). A plain paper-fig1 run (3 000 rounds) never loads
#: numba; FFL at K = 200 does after about 5 000 exchanges.
NUMBA_IMPORT_US = 400_000.0
SAVED_PER_CALL_US = 12.0
SAVED_PER_VALUE_US = 1e-3
_COMPILED_GRADS = "edgesim.learning.compiled_grads"
_saved_us = 0.0  # what the kernels would have saved so far in this process (until they load)
_kernels = None  # the module of compiled kernels, once loaded
_many_runs = False  # set by expect_many_runs


def expect_many_runs() -> None:
    """Say that this process is about to run a mechanism many times (a best-response search:
    tens of runs): its one-block reports then run compiled from the first, numba's import
    paid once for them all. Changes no result (the kernels give numpy's bits); returns nothing."""
    global _many_runs
    _many_runs = True


def kernels(values: int):
    """Return :mod:`edgesim.learning.compiled_grads` where its kernels pay (see
    :data:`NUMBA_IMPORT_US`) for a call over ``values`` rows times parameters, else None
    (numpy computes the reports)."""
    global _saved_us, _kernels
    if _kernels is None:
        _saved_us += SAVED_PER_CALL_US + SAVED_PER_VALUE_US * values
        if _saved_us < NUMBA_IMPORT_US and not _many_runs and not _numba_loaded():
            return None
        _kernels = importlib.import_module(_COMPILED_GRADS)
    return _kernels


def _numba_loaded() -> bool:
    """Whether this process has imported numba already (its import then costs nothing more)."""
    return "numba" in sys.modules
