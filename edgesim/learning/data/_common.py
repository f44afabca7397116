"""Helpers shared by the data modules: ScenarioError builders and label checks."""

from __future__ import annotations

import importlib.util

import numpy as np

from edgesim.errors import ScenarioError


def _too_few(n: int, K: int, m: int) -> ScenarioError:
    return ScenarioError(
        "data.samples",
        f"{n} training samples cannot give each of {K} agents {m} "
        f"(data.partition.min_samples); use more data.samples or fewer agents",
    )


def _have_sklearn() -> bool:
    try:
        return importlib.util.find_spec("sklearn") is not None
    except (ImportError, ValueError):
        return False


def _no_sklearn() -> ScenarioError:
    return ScenarioError("data.source", "digits needs scikit-learn: pip install 'edgesim[digits]'")


def _needs_classification(source: str, task: str) -> None:
    if task != "classification":
        raise ScenarioError(
            "model.kind", f"data.source = {source!r} is a classification data set; use 'logistic'"
        )


def _as_labels(y: np.ndarray, where: str) -> np.ndarray:
    """Class labels as int64 >= 0, or a ScenarioError on data.path."""
    y = np.asarray(y)
    ok = y.dtype.kind in "iub" or (
        y.dtype.kind == "f" and bool(np.all(np.isfinite(y))) and bool(np.all(y == np.rint(y)))
    )
    if not ok:
        raise ScenarioError(
            "data.path", f"{where}: class labels must be non-negative integers, got {y.dtype}"
        )
    lab = y.astype(np.int64)
    if lab.size and lab.min() < 0:
        raise ScenarioError(
            "data.path", f"{where}: class labels must be non-negative integers, found {lab.min()}"
        )
    return lab
