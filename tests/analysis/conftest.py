"""Figures at reduced size, each made once per test session through ``analysis/run_all.py --quick``."""

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
            run_all.main(["--quick", "--out", str(base), "--only", name])
            made[name] = base
        return base

    return make
