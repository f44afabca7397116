"""Figures at reduced size, each made once per test session through ``analysis/run_all.py --quick``."""

import os
from pathlib import Path

import pytest

from analysis import run_all


@pytest.fixture(scope="session")
def quick_figure(tmp_path_factory):
    """Return a function: figure module name -> the folder holding its quick PNG and CSV files."""
    base = tmp_path_factory.mktemp("figures-quick")
    made: dict[str, Path] = {}

    def make(name: str) -> Path:
        if name not in made:
            before = os.environ.get("EDGESIM_MNIST")
            os.environ["EDGESIM_MNIST"] = "none"  # the claims' thresholds are set for digits
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
