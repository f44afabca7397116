"""Entry point: :func:`build_dataset` turns a :class:`DataConfig` into a dataset."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from edgesim.errors import ScenarioError
from edgesim.learning.data.checks import require_classification
from edgesim.learning.data.sources import (
    load_digits,
    load_npz,
    load_paper_linear,
    load_synthetic,
    paper_linear_needs_ridge,
)

if TYPE_CHECKING:
    from edgesim.learning.data.config import DataConfig
    from edgesim.learning.data.dataset import FederatedDataset


def _images(name: str):
    """Return the image source ``name`` (its module imported on first use: most runs read none)."""
    from edgesim.learning.data import images

    return {"mnist": images.load_mnist, "fashion-mnist": images.load_fashion_mnist}[name]


_SOURCES = {
    "synthetic": load_synthetic,
    "paper-linear": load_paper_linear,
    "digits": load_digits,
    "mnist": None,  # edgesim.learning.data.images: see _images
    "fashion-mnist": None,
}


def build_dataset(cfg: DataConfig, K: int, task: str, rng: np.random.Generator) -> FederatedDataset:
    """Build the federated dataset of a scenario's ``[data]`` section for ``K`` agents.

    ``task`` is ``"regression"`` (y float64, ``n_classes = 0``) or
    ``"classification"`` (y int64 labels). Every random draw comes from
    ``rng``, so a seed fixes the data. Every agent ends with at least
    ``data.partition.min_samples`` (>= 1) training samples. Returns the
    :class:`FederatedDataset`; a user error (missing file, too few samples,
    wrong agent count, source/model mismatch) raises :class:`ScenarioError`
    naming the key.
    """
    if task not in ("regression", "classification"):
        raise ValueError(f"task must be 'regression' or 'classification', got {task!r}")
    K = int(K)
    if K < 1:
        raise ScenarioError("agents.count", f"got {K}; need at least 1 agent")
    if cfg.source in ("digits", "mnist", "fashion-mnist"):
        require_classification(cfg.source, task)
    if cfg.source == "paper-linear" and task != "regression":
        raise paper_linear_needs_ridge()
    errs = cfg.cross_check(K)
    if errs:
        raise errs[0]
    if cfg.source == "npz":
        return load_npz(cfg, K, task)
    if cfg.source not in _SOURCES:
        raise ScenarioError("data.source", f"unknown source {cfg.source!r}")
    load = _SOURCES[cfg.source] or _images(cfg.source)
    return load(cfg, K, task, rng)
