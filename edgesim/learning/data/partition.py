"""Partitioners: int64 agent index per sample, vectorised.

Samples of the partitioned sources are split among agents by ``iid``,
``label-skew`` (the paper's Sec. VII), ``dirichlet`` or ``quantity``; train and
test data are split by the same rule, so an agent's test data looks like its
training data (paper, Sec. VII). Every random draw comes from the
``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from edgesim.errors import ScenarioError
from edgesim.learning.data.checks import too_few_samples
from edgesim.learning.data.dataset import FederatedDataset

if TYPE_CHECKING:
    from edgesim.learning.data.config import DataConfig, PartitionConfig


def partition_iid(n: int, K: int, rng: np.random.Generator) -> np.ndarray:
    """Assign ``n`` samples to ``K`` agents uniformly at random with balanced sizes.

    Returns an int64 array of shape (n,) with values in ``0..K-1``; the agents'
    sample counts differ by at most 1 (which agents get the extra sample is
    random).
    """
    relabel = rng.permutation(K).astype(np.int64)
    return relabel[np.arange(n, dtype=np.int64) % K][rng.permutation(n)]


def _home_agents(y: np.ndarray, K: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform draw among the agents whose index ends in the label's last digit."""
    r = y % 10
    count = np.where(r < K, (K - 1 - r) // 10 + 1, 0)
    j = rng.integers(0, np.maximum(count, 1))
    return np.where(count > 0, r + 10 * j, y % K)


def partition_label_skew(
    y: np.ndarray, K: int, delta: float, rng: np.random.Generator
) -> np.ndarray:
    """Split samples by label as in the paper's Sec. VII (slip 7, docs/paper.md).

    A sample with label ``c`` first goes to a uniformly random agent among
    those whose (0-based) index ends in the digit ``c % 10`` (``k % 10 == c %
    10``); with fewer than 10 agents, a label with no such agent goes to agent
    ``c % K``. Then, with probability ``1 - delta``, it moves to a uniformly
    random agent among all ``K`` (possibly the same). ``delta = 1`` is the
    most heterogeneous split, ``delta = 0`` is iid. The probability that a
    sample ends on one of its home agents is ``delta + (1 - delta) h / K``
    with ``h`` the number of home agents (1 when ``K <= 10``).

    Returns an int64 array of shape ``y.shape`` with values in ``0..K-1``.
    """
    if not 0.0 <= delta <= 1.0:
        raise ValueError(f"delta must lie in [0, 1], got {delta}")
    y = np.asarray(y).astype(np.int64, copy=False)
    home = _home_agents(y, K, rng)
    move = rng.random(y.shape) >= delta
    dest = rng.integers(0, K, size=y.shape)
    return np.where(move, dest, home)


def dirichlet_proportions(
    n_classes: int, K: int, alpha: float, rng: np.random.Generator
) -> np.ndarray:
    """Draw each class's split among agents: shape (n_classes, K), rows ~ Dirichlet(alpha 1_K).

    Returns float64 proportions; each row sums to 1.
    """
    return rng.dirichlet(np.full(K, float(alpha)), size=int(n_classes))


def split_by_proportions(y: np.ndarray, P: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Split the samples of each class ``c`` among agents in proportions ``P[c]``.

    Class ``c``'s ``n_c`` samples are shuffled and cut at the rounded
    cumulative proportions ``round(n_c cumsum(P[c]))``, so agent ``k`` gets
    ``n_c P[c, k]`` of them up to rounding. Returns an int64 array of shape
    (n,) with values in ``0..K-1``.
    """
    y = np.asarray(y).astype(np.int64, copy=False)
    C, K = P.shape
    if y.size and (y.min() < 0 or y.max() >= C):
        raise ValueError(f"labels must lie in 0..{C - 1}")
    n_c = np.bincount(y, minlength=C)
    bounds = np.rint(np.cumsum(P, axis=1) * n_c[:, None]).astype(np.int64)
    bounds[:, -1] = n_c
    counts = np.diff(bounds, axis=1, prepend=0)
    targets = np.repeat(np.tile(np.arange(K, dtype=np.int64), C), counts.ravel())
    order = np.lexsort((rng.random(y.size), y))  # by class, random within a class
    agent = np.empty(y.size, dtype=np.int64)
    agent[order] = targets
    return agent


def partition_dirichlet(
    y: np.ndarray, K: int, alpha: float, rng: np.random.Generator, n_classes: int | None = None
) -> np.ndarray:
    """Dirichlet label split: per class, proportions ~ Dirichlet(alpha 1_K) (Hsu et al. 2019).

    ``n_classes`` defaults to ``max(y) + 1``. Returns an int64 array of shape
    (n,) with values in ``0..K-1``. Small ``alpha`` puts each class on few
    agents; large ``alpha`` approaches equal shares.
    """
    y = np.asarray(y).astype(np.int64, copy=False)
    C = int(n_classes) if n_classes is not None else int(y.max()) + 1 if y.size else 1
    return split_by_proportions(y, dirichlet_proportions(C, K, alpha, rng), rng)


def quantity_weights(K: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Draw the agents' size weights: shape (K,), log-normal(0, sigma)."""
    return rng.lognormal(0.0, float(sigma), size=K)


def apportion(total: int, weights: np.ndarray, minimum: int = 0) -> np.ndarray:
    """Split ``total`` into integer counts proportional to ``weights``, each >= ``minimum``.

    ``minimum`` is given to every entry first and the rest is shared by the
    largest-remainder rule. Returns int64 counts of shape ``weights.shape``
    summing to ``total``. Raises ``ValueError`` when ``total < minimum *
    len(weights)``.
    """
    weights = np.asarray(weights, dtype=np.float64)
    extra = int(total) - int(minimum) * weights.size
    if extra < 0:
        raise ValueError(f"{total} cannot give {weights.size} entries {minimum} each")
    q = extra * weights / weights.sum()
    base = np.floor(q).astype(np.int64)
    r = extra - int(base.sum())
    if r > 0:
        top = np.argpartition(base - q, r - 1)[:r]
        base[top] += 1
    return base + int(minimum)


def _spread(sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Agent index per sample for the given counts, in random order."""
    agent = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    return agent[rng.permutation(agent.size)]


def partition_quantity(
    n: int, K: int, sigma: float, rng: np.random.Generator, minimum: int = 1
) -> np.ndarray:
    """Quantity skew: agent k gets ``n_k`` samples, proportional to log-normal(0, sigma) weights.

    Every agent gets at least ``minimum`` samples and the counts sum to ``n``;
    which samples go where is random. Returns an int64 array of shape (n,).
    Raises ``ScenarioError("data.samples")`` when ``n < minimum K``.
    """
    if n < minimum * K:
        raise too_few_samples(n, K, minimum)
    return _spread(apportion(n, quantity_weights(K, sigma, rng), minimum), rng)


def ensure_min_samples(
    agent: np.ndarray, K: int, min_samples: int, rng: np.random.Generator
) -> np.ndarray:
    """Top up agents holding fewer than ``min_samples`` samples.

    Each short agent receives samples drawn uniformly at random from the
    "spare" samples of the other agents (those beyond the first
    ``min_samples`` of an agent, in random order), so no donor falls below
    ``min_samples``. Only as many samples as missing are moved; an input that
    already satisfies the bound is returned unchanged. Returns a new int64
    array; raises ``ScenarioError("data.samples")`` when ``len(agent) <
    min_samples K``.
    """
    agent = np.asarray(agent, dtype=np.int64)
    counts = np.bincount(agent, minlength=K)
    need = np.maximum(min_samples - counts, 0)
    missing = int(need.sum())
    if missing == 0:
        return agent
    n = agent.size
    if n < min_samples * K:
        raise too_few_samples(n, K, min_samples)
    shuffled = rng.permutation(n)
    order = shuffled[np.argsort(agent[shuffled], kind="stable")]
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.arange(n) - starts[agent[order]]
    spare = order[rank >= min_samples]
    moved = spare[rng.choice(spare.size, size=missing, replace=False)]
    out = agent.copy()
    out[moved] = np.repeat(np.arange(K, dtype=np.int64), need)
    return out


def assign_agents(
    y: np.ndarray,
    y_test: np.ndarray,
    K: int,
    n_classes: int,
    pcfg: PartitionConfig,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Partition train and test labels by the same rule; train agents get >= min_samples."""
    kind, m = pcfg.kind, pcfg.min_samples
    if kind == "iid":
        agent, agent_test = partition_iid(y.size, K, rng), partition_iid(y_test.size, K, rng)
    elif kind == "label-skew":
        agent = partition_label_skew(y, K, pcfg.delta, rng)
        agent_test = partition_label_skew(y_test, K, pcfg.delta, rng)
    elif kind == "dirichlet":
        P = dirichlet_proportions(n_classes, K, pcfg.dirichlet_alpha, rng)
        agent, agent_test = split_by_proportions(y, P, rng), split_by_proportions(y_test, P, rng)
    elif kind == "quantity":
        if y.size < m * K:
            raise too_few_samples(y.size, K, m)
        w = quantity_weights(K, pcfg.quantity_sigma, rng)
        agent = _spread(apportion(y.size, w, m), rng)
        agent_test = _spread(apportion(y_test.size, w, 0), rng)
    else:
        raise ScenarioError("data.partition.kind", f"unknown partition {kind!r}")
    return ensure_min_samples(agent, K, m, rng), agent_test


def partition_text(p: PartitionConfig) -> str:
    """The partition as a dataset description names it, e.g. ``dirichlet(alpha=0.5)``."""
    extra = {
        "iid": "",
        "label-skew": f"(delta={p.delta:g})",
        "dirichlet": f"(alpha={p.dirichlet_alpha:g})",
        "quantity": f"(sigma={p.quantity_sigma:g})",
    }[p.kind]
    return p.kind + extra


def partitioned_dataset(
    cfg: DataConfig,
    K: int,
    rng: np.random.Generator,
    X: np.ndarray,
    y: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    n_classes: int,
    name: str,
) -> FederatedDataset:
    """Return the dataset of labelled samples split among ``K`` agents by ``cfg.partition``
    (train and test by the same rule), described as ``name`` in its description."""
    agent, agent_test = assign_agents(y, y_test, K, n_classes, cfg.partition, rng)
    text = (
        f"{name}: {y.size} train / {y_test.size} test samples, d={X.shape[1]}, "
        f"{n_classes} classes, K={K}, partition {partition_text(cfg.partition)}"
    )
    return FederatedDataset.from_arrays(
        X, y, agent, K, n_classes, X_test, y_test, agent_test, description=text
    )
