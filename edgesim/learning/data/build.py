"""Entry point: :func:`build_dataset` turns a :class:`DataConfig` into a dataset."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from edgesim.errors import ScenarioError
from edgesim.learning.data._common import _needs_classification
from edgesim.learning.data.mnist import _load_fashion_mnist, _load_mnist
from edgesim.learning.data.sources import (
    _load_digits,
    _load_npz,
    _paper_linear,
    _paper_linear_needs_ridge,
    _synthetic,
)

if TYPE_CHECKING:
    from edgesim.learning.data.config import DataConfig
    from edgesim.learning.data.dataset import FederatedDataset

_SOURCES = {
    "synthetic": _synthetic,
    "paper-linear": _paper_linear,
    "digits": _load_digits,
    "mnist": _load_mnist,
    "fashion-mnist": _load_fashion_mnist,
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
        _needs_classification(cfg.source, task)
    if cfg.source == "paper-linear" and task != "regression":
        raise _paper_linear_needs_ridge()
    errs = cfg.cross_check(K)
    if errs:
        raise errs[0]
    if cfg.source == "npz":
        return _load_npz(cfg, K, task)
    if cfg.source not in _SOURCES:
        raise ScenarioError("data.source", f"unknown source {cfg.source!r}")
    return _SOURCES[cfg.source](cfg, K, task, rng)
