"""The checks the data modules share: too few samples, scikit-learn present, a classification task,
class labels; each raises or returns a :class:`~edgesim.errors.ScenarioError` naming its key."""

from __future__ import annotations

import importlib.util

import numpy as np

from edgesim.errors import ScenarioError


def too_few_samples(n: int, K: int, m: int) -> ScenarioError:
    """The error for ``n`` training samples that cannot give each of ``K`` agents ``m`` (data.samples)."""
    return ScenarioError(
        "data.samples",
        f"{n} training samples cannot give each of {K} agents {m} "
        f"(data.partition.min_samples); use more data.samples or fewer agents",
    )


def have_sklearn() -> bool:
    """Whether scikit-learn can be imported (the ``digits`` source needs it), without importing it."""
    try:
        return importlib.util.find_spec("sklearn") is not None
    except (ImportError, ValueError):
        return False


def sklearn_missing() -> ScenarioError:
    """The error for ``data.source = "digits"`` without scikit-learn installed."""
    return ScenarioError("data.source", "digits needs scikit-learn: pip install 'edgesim[digits]'")


def require_classification(source: str, task: str) -> None:
    """Raise a ScenarioError on model.kind unless ``task`` is classification (``source`` has labels)."""
    if task != "classification":
        raise ScenarioError(
            "model.kind", f"data.source = {source!r} is a classification data set; use 'logistic'"
        )


def as_labels(y: np.ndarray, where: str) -> np.ndarray:
    """Return ``y`` as int64 class labels >= 0; a ScenarioError on data.path names ``where``
    when they are not non-negative integers."""
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
