"""Federated datasets: per-agent train and test data, loaders and partitioners.

A :class:`FederatedDataset` stores every agent's samples in one array with the
rows grouped by agent (agent 0 first), so per-agent sums are segment sums over
``offsets`` and never a Python loop over agents.

:func:`build_dataset` turns a :class:`DataConfig` (the scenario's ``[data]``
section) into a dataset. Sources: ``synthetic`` (Gaussian classes or
per-agent linear models), ``paper-linear`` (the two-agent example of the
paper's Fig. 1, slip 8 in docs/paper.md), ``npz`` (a user file), ``digits``
(scikit-learn's 8x8 digits, an optional extra) and ``mnist`` (IDX files or a
Keras-layout ``.npz``, optionally downloaded with checksum verification).
Samples of the partitioned sources are split among agents by one of the
vectorised partitioners (``iid``, ``label-skew`` of the paper's Sec. VII,
``dirichlet``, ``quantity``); train and test data are split by the same rule,
so an agent's test data looks like its training data (paper, Sec. VII).
Every random draw comes from the ``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import importlib.util
import os
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgesim.config import option, section
from edgesim.errors import ScenarioError

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


def _group(X: np.ndarray, y: np.ndarray, agent: np.ndarray):
    order = np.argsort(agent, kind="stable")
    return X[order], y[order], agent[order]


@dataclass(frozen=True, eq=False)
class FederatedDataset:
    """Training and test samples of K agents.

    ``X`` is (n, d) float64 without the intercept column (models append it);
    ``y`` is (n,) float64 for regression or int64 class labels in
    ``0..n_classes-1``; ``agent`` is (n,) int64, non-decreasing, in ``0..K-1``.
    The ``*_test`` arrays follow the same layout (an agent may have no test
    samples). ``n_classes`` is 0 for regression.
    """

    X: np.ndarray
    y: np.ndarray
    agent: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    agent_test: np.ndarray
    K: int
    n_classes: int
    description: str = ""

    @classmethod
    def from_arrays(
        cls,
        X,
        y,
        agent,
        K: int,
        n_classes: int,
        X_test=None,
        y_test=None,
        agent_test=None,
        description: str = "",
    ) -> FederatedDataset:
        """Build a dataset from unsorted arrays; rows are grouped by agent (stable).

        Returns the dataset. Raises ``ValueError`` when shapes disagree or an
        agent index is outside ``0..K-1``.
        """
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[:, None]
        ydt = np.int64 if n_classes else np.float64
        y = np.asarray(y).astype(ydt)
        agent = np.asarray(agent).astype(np.int64)
        if X_test is None:
            X_test = np.zeros((0, X.shape[1]))
            y_test = np.zeros(0, dtype=ydt)
            agent_test = np.zeros(0, dtype=np.int64)
        X_test = np.ascontiguousarray(X_test, dtype=np.float64)
        if X_test.ndim == 1:
            X_test = X_test[:, None]
        y_test = np.asarray(y_test).astype(ydt)
        agent_test = np.asarray(agent_test).astype(np.int64)
        for name, a, b in (("train", X, y), ("test", X_test, y_test)):
            if a.shape[0] != b.shape[0]:
                raise ValueError(f"{name}: X has {a.shape[0]} rows but y has {b.shape[0]}")
        if X.shape[0] != agent.shape[0] or X_test.shape[0] != agent_test.shape[0]:
            raise ValueError("agent index arrays must have one entry per sample")
        for a in (agent, agent_test):
            if a.size and (a.min() < 0 or a.max() >= K):
                raise ValueError(f"agent indices must lie in 0..{K - 1}")
        X, y, agent = _group(X, y, agent)
        X_test, y_test, agent_test = _group(X_test, y_test, agent_test)
        return cls(X, y, agent, X_test, y_test, agent_test, int(K), int(n_classes), description)

    @property
    def n(self) -> int:
        """Total number of training samples."""
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        """Number of raw features (without intercept)."""
        return int(self.X.shape[1])

    @property
    def n_k(self) -> np.ndarray:
        """Training samples per agent, shape (K,), int64."""
        return np.bincount(self.agent, minlength=self.K)

    @property
    def n_k_test(self) -> np.ndarray:
        """Test samples per agent, shape (K,), int64."""
        return np.bincount(self.agent_test, minlength=self.K)

    @property
    def offsets(self) -> np.ndarray:
        """Row offsets of each agent's training block, shape (K + 1,)."""
        return np.concatenate([[0], np.cumsum(self.n_k)])

    def agent_rows(self, k: int, test: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Return agent ``k``'s (X, y) training (or test) block as views."""
        a = self.agent_test if test else self.agent
        lo, hi = np.searchsorted(a, [k, k + 1])
        if test:
            return self.X_test[lo:hi], self.y_test[lo:hi]
        return self.X[lo:hi], self.y[lo:hi]

    def subset(self, agents) -> FederatedDataset:
        """Return the dataset of the listed agents, renumbered 0..len(agents)-1 in the given order."""
        agents = np.asarray(agents, dtype=np.int64)
        remap = np.full(self.K, -1, dtype=np.int64)
        remap[agents] = np.arange(agents.size)
        keep = remap[self.agent] >= 0
        keep_t = remap[self.agent_test] >= 0
        return FederatedDataset.from_arrays(
            self.X[keep],
            self.y[keep],
            remap[self.agent[keep]],
            int(agents.size),
            self.n_classes,
            self.X_test[keep_t],
            self.y_test[keep_t],
            remap[self.agent_test[keep_t]],
            self.description,
        )


# ---------------------------------------------------------------------------
# Scenario sections
# ---------------------------------------------------------------------------

#: Test samples per agent when ``data.test_samples = -1`` and the source is
#: ``paper-linear`` (the test set estimates each agent's expected risk E_k).
PAPER_LINEAR_TEST_SAMPLES = 10_000
#: Synthetic sources with ``test_samples = -1``: this many test samples per
#: agent, fewer when K is large so the whole test set stays within
#: :data:`SYNTHETIC_TEST_TOTAL` rows.
SYNTHETIC_TEST_SAMPLES = 200
SYNTHETIC_TEST_TOTAL = 200_000

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

_IDX_IMAGES_MAGIC = 0x00000803
_IDX_LABELS_MAGIC = 0x00000801


@dataclass(frozen=True)
class PartitionConfig:
    """How the samples of a partitioned source are split among the agents.

    Applies to ``synthetic``, ``digits`` and ``mnist``; ``paper-linear`` and
    ``npz`` define the agents themselves.
    """

    kind: str = option(
        "label-skew",
        "rule that assigns samples to agents: 'iid' (random, sizes differ by at most 1), "
        "'label-skew' (paper Sec. VII: a sample of label c goes to an agent whose index ends "
        "in digit c, then moves to a uniformly random agent with probability 1 - delta), "
        "'dirichlet' (each class split by proportions ~ Dirichlet(dirichlet_alpha)), "
        "'quantity' (log-normal sample counts); synthetic regression has no labels and uses "
        "equal counts for every kind but 'quantity'",
        choices=("iid", "label-skew", "dirichlet", "quantity"),
    )
    delta: float = option(
        0.05,
        "label-skew: probability that a sample stays with the agent whose index ends in its "
        "label (the paper's Delta, slip 7 in docs/paper.md): 1 = each agent holds only its own label, "
        "0 = iid. With fewer than 10 agents, label c goes to agent c mod agents.count",
        ge=0.0,
        le=1.0,
    )
    dirichlet_alpha: float = option(
        0.5,
        "dirichlet: concentration of the per-class agent proportions; small = each class on "
        "few agents, large = balanced",
        gt=0.0,
    )
    quantity_sigma: float = option(
        1.0,
        "quantity: sigma of the log-normal weights to which agents' sample counts are "
        "proportional; 0 = equal counts",
        ge=0.0,
    )
    min_samples: int = option(
        1,
        "every agent ends with at least this many training samples: an agent left short is "
        "topped up with samples moved at random from agents holding more",
        unit="samples",
        ge=1,
    )


@dataclass(frozen=True)
class DataConfig:
    """The scenario's ``[data]`` section: where samples come from and how they are split."""

    source: str = option(
        "synthetic",
        "'synthetic' (Gaussian classes or per-agent linear models), 'paper-linear' (the "
        "two-agent example of the paper's Fig. 1, regression), 'npz' (arrays X, y, agent "
        "[, X_test, y_test, agent_test] in data.path), 'digits' (scikit-learn 8x8 digits, "
        "needs the 'digits' extra), 'mnist' (IDX files or a Keras-layout .npz)",
        choices=("synthetic", "paper-linear", "npz", "digits", "mnist"),
    )
    path: str = option(
        "",
        "npz: the .npz file; mnist: a folder holding the four IDX files (optionally .gz) or "
        "a .npz with x_train, y_train, x_test, y_test; empty = data.cache_dir",
    )
    samples: int = option(
        2000,
        "synthetic: total training samples n; digits and mnist: keep at most this many "
        "training samples, drawn at random (0 = all)",
        unit="samples",
        ge=0,
    )
    features: int = option(10, "synthetic: number of features d", ge=1)
    classes: int = option(3, "synthetic classification: number of classes", ge=2)
    separation: float = option(
        2.0,
        "synthetic classification: standard deviation of the class means (unit-variance "
        "classes); larger = easier",
        ge=0.0,
    )
    noise_std: float = option(
        0.5, "synthetic regression: standard deviation of the label noise", ge=0.0
    )
    heterogeneity: float = option(
        1.0,
        "synthetic regression: standard deviation of each agent's shift of the true weights "
        "(0 = one model for all agents)",
        ge=0.0,
    )
    test_samples: int = option(
        -1,
        "test samples per agent for synthetic and paper-linear, drawn from the agent's own "
        "distribution; -1 = auto: 10000 for paper-linear, min(200, 200000 // agents.count) "
        "(at least 1) for synthetic. Synthetic classification draws agents.count times this "
        "many and splits them like the training set",
        unit="samples",
        ge=-1,
    )
    mean_shift: float = option(
        2.0,
        "paper-linear: mean of agent 0's label noise kappa (the paper's 'mean'; agent 1's "
        "is 0); 0 = both agents alike",
    )
    kappa_var: float = option(
        2.0,
        "paper-linear: variance of kappa before truncation (the paper's N(mean, 2), read as "
        "the variance, slip 8 in docs/paper.md)",
        gt=0.0,
    )
    kappa_clip: float = option(
        3.0, "paper-linear: kappa is truncated to [-kappa_clip, kappa_clip]", gt=0.0
    )
    paper_sizes: list = option(  # noqa: RUF009
        [50, 400],
        "paper-linear: training samples [n_1, n_2] of agents 0 and 1",
        unit="samples",
    )
    test_fraction: float = option(
        0.2, "digits: fraction of the 1797 images held out for testing", gt=0.0, lt=1.0
    )
    cache_dir: str = option(
        "",
        "mnist: folder searched when data.path is empty and written by downloads; "
        "empty = $XDG_CACHE_HOME/edgesim/mnist (~/.cache/edgesim/mnist)",
    )
    download: bool = option(
        False,
        "mnist: download the four .gz files when missing (SHA-256 verified) into the folder "
        "searched (data.path, else data.cache_dir)",
    )
    mirrors: list = option(  # noqa: RUF009
        list(MNIST_MIRRORS),
        "mnist: base URLs tried in order by data.download; the file name is appended",
    )
    partition: PartitionConfig = section(  # noqa: RUF009
        PartitionConfig, "how samples are split among agents (synthetic, digits, mnist)"
    )

    def cross_check(self, agents_count: int) -> list[ScenarioError]:
        """Return the cross-field errors of this section for ``agents_count`` agents.

        Checks what per-key metadata cannot: ``paper-linear`` has exactly 2
        agents and two positive sizes; ``npz`` needs an existing file;
        ``mnist`` needs its files (or ``download``); ``digits`` needs
        scikit-learn; enough samples for every agent. Returns an empty list
        when the section is consistent.
        """
        errs: list[ScenarioError] = []
        ps = self.paper_sizes
        if not (
            isinstance(ps, (list, tuple))
            and len(ps) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in ps)
        ):
            errs.append(
                ScenarioError("data.paper_sizes", f"got {ps!r}; give two positive integers")
            )
        mirrors = self.mirrors
        if not (
            isinstance(mirrors, (list, tuple))
            and all(isinstance(m, str) and m.startswith(("http://", "https://")) for m in mirrors)
        ):
            errs.append(
                ScenarioError("data.mirrors", f"got {mirrors!r}; give a list of http(s) URLs")
            )
        src = self.source
        m = self.partition.min_samples
        if src == "paper-linear" and agents_count != 2:
            errs.append(
                ScenarioError(
                    "agents.count",
                    f"data.source = 'paper-linear' has 2 agents; got agents.count = {agents_count}",
                )
            )
        if src == "synthetic" and self.samples < agents_count * m:
            errs.append(_too_few(self.samples, agents_count, m))
        if src in ("digits", "mnist") and 0 < self.samples < agents_count * m:
            errs.append(_too_few(self.samples, agents_count, m))
        if src == "npz":
            if not self.path:
                errs.append(
                    ScenarioError(
                        "data.path",
                        "data.source = 'npz' needs data.path, a .npz file with arrays X, y, agent",
                    )
                )
            elif not Path(self.path).expanduser().is_file():
                errs.append(ScenarioError("data.path", f"npz file {self.path!r} not found"))
        if src == "digits" and not _have_sklearn():
            errs.append(_no_sklearn())
        if src == "mnist":
            p = Path(self.path).expanduser() if self.path else None
            if p is not None and p.is_file():
                if p.suffix != ".npz":
                    errs.append(_mnist_not_npz(p))
            elif not self.download and _find_mnist(_mnist_dir(self)) is None:
                errs.append(_mnist_missing(_mnist_dir(self)))
        return errs


def _too_few(n: int, K: int, m: int) -> ScenarioError:
    return ScenarioError(
        "data.samples",
        f"{n} training samples cannot give each of {K} agents {m} "
        f"(data.partition.min_samples); use more data.samples or fewer agents",
    )


def _have_sklearn() -> bool:
    try:
        return importlib.util.find_spec("sklearn") is not None
    except (ImportError, ValueError):
        return False


def _no_sklearn() -> ScenarioError:
    return ScenarioError("data.source", "digits needs scikit-learn: pip install 'edgesim[digits]'")


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())


def _test_per_agent(cfg: DataConfig, K: int) -> int:
    if cfg.test_samples >= 0:
        return int(cfg.test_samples)
    if cfg.source == "paper-linear":
        return PAPER_LINEAR_TEST_SAMPLES
    return max(1, min(SYNTHETIC_TEST_SAMPLES, SYNTHETIC_TEST_TOTAL // max(K, 1)))


# ---------------------------------------------------------------------------
# Partitioners: int64 agent index per sample, vectorised
# ---------------------------------------------------------------------------


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
        raise _too_few(n, K, minimum)
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
        raise _too_few(n, K, min_samples)
    shuffled = rng.permutation(n)
    order = shuffled[np.argsort(agent[shuffled], kind="stable")]
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.arange(n) - starts[agent[order]]
    spare = order[rank >= min_samples]
    moved = spare[rng.choice(spare.size, size=missing, replace=False)]
    out = agent.copy()
    out[moved] = np.repeat(np.arange(K, dtype=np.int64), need)
    return out


def _assign(
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
            raise _too_few(y.size, K, m)
        w = quantity_weights(K, pcfg.quantity_sigma, rng)
        agent = _spread(apportion(y.size, w, m), rng)
        agent_test = _spread(apportion(y_test.size, w, 0), rng)
    else:
        raise ScenarioError("data.partition.kind", f"unknown partition {kind!r}")
    return ensure_min_samples(agent, K, m, rng), agent_test


def _partition_text(p: PartitionConfig) -> str:
    extra = {
        "iid": "",
        "label-skew": f"(delta={p.delta:g})",
        "dirichlet": f"(alpha={p.dirichlet_alpha:g})",
        "quantity": f"(sigma={p.quantity_sigma:g})",
    }[p.kind]
    return p.kind + extra


# ---------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------


_BLOCK_ROWS = 1 << 14


def _gather_add(X: np.ndarray, table: np.ndarray, idx: np.ndarray) -> None:
    """In place ``X[i] += table[idx[i]]``, in row blocks so temporaries stay small."""
    for lo in range(0, X.shape[0], _BLOCK_ROWS):
        X[lo : lo + _BLOCK_ROWS] += table[idx[lo : lo + _BLOCK_ROWS]]


def _row_dots(X: np.ndarray, table: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``out[i] = X[i] . table[idx[i]]``, shape (n,), in row blocks."""
    out = np.empty(X.shape[0])
    for lo in range(0, X.shape[0], _BLOCK_ROWS):
        sl = slice(lo, lo + _BLOCK_ROWS)
        out[sl] = np.einsum("ij,ij->i", X[sl], table[idx[sl]])
    return out


def _equal_sizes(n: int, K: int, rng: np.random.Generator) -> np.ndarray:
    sizes = np.full(K, n // K, dtype=np.int64)
    sizes[rng.permutation(K)[: n % K]] += 1
    return sizes


def _synthetic(cfg: DataConfig, K: int, task: str, rng: np.random.Generator) -> FederatedDataset:
    d, n, t = cfg.features, cfg.samples, _test_per_agent(cfg, K)
    pcfg = cfg.partition
    m = pcfg.min_samples
    if n < m * K:
        raise _too_few(n, K, m)
    if task == "classification":
        C = cfg.classes
        means = cfg.separation * rng.standard_normal((C, d))
        y = rng.integers(0, C, size=n)
        X = rng.standard_normal((n, d))
        _gather_add(X, means, y)
        y_test = rng.integers(0, C, size=K * t)
        X_test = rng.standard_normal((K * t, d))
        _gather_add(X_test, means, y_test)
        agent, agent_test = _assign(y, y_test, K, C, pcfg, rng)
        text = (
            f"synthetic classification: n={n}, d={d}, {C} classes, K={K}, "
            f"partition {_partition_text(pcfg)}"
        )
        return FederatedDataset.from_arrays(
            X, y, agent, K, C, X_test, y_test, agent_test, description=text
        )
    w0 = rng.standard_normal(d)
    b0 = rng.standard_normal()
    W = w0 + cfg.heterogeneity * rng.standard_normal((K, d))
    M = 0.5 * rng.standard_normal((K, d))
    if pcfg.kind == "quantity":
        sizes = apportion(n, quantity_weights(K, pcfg.quantity_sigma, rng), m)
        split = _partition_text(pcfg)
    else:
        sizes = _equal_sizes(n, K, rng)
        split = "equal sizes"
    parts = []
    for agent in (np.repeat(np.arange(K, dtype=np.int64), sizes), np.repeat(np.arange(K), t)):
        X = rng.standard_normal((agent.size, d))
        _gather_add(X, M, agent)
        y = _row_dots(X, W, agent) + b0
        y += cfg.noise_std * rng.standard_normal(agent.size)
        parts += [X, y, agent]
    text = (
        f"synthetic regression: n={n}, d={d}, K={K}, heterogeneity={cfg.heterogeneity:g}, "
        f"noise_std={cfg.noise_std:g}, {split}"
    )
    X, y, agent, X_test, y_test, agent_test = parts
    return FederatedDataset(X, y, agent, X_test, y_test, agent_test, K, 0, text)


def paper_linear_noise(mean: float, variance: float, clip: float):
    """The paper's label noise kappa (Fig. 1, slip 8 in docs/paper.md).

    kappa ~ N(mean, variance) truncated to [-clip, clip] (``variance`` is the
    variance, not the standard deviation).

    Returns a frozen ``scipy.stats.truncnorm`` distribution (``.mean()``,
    ``.var()``, ``.rvs(size, random_state=rng)``).
    """
    from scipy import stats

    std = float(np.sqrt(variance))
    a, b = (-clip - mean) / std, (clip - mean) / std
    return stats.truncnorm(a, b, loc=mean, scale=std)


def _paper_linear_needs_ridge() -> ScenarioError:
    return ScenarioError(
        "model.kind", "data.source = 'paper-linear' is a regression data set; use 'ridge'"
    )


def _paper_linear(cfg: DataConfig, K: int, task: str, rng: np.random.Generator) -> FederatedDataset:
    """Fig. 1: x ~ U[0, 1], y = -2 x + 1 + kappa; agent 0's kappa has mean ``mean_shift``."""
    if task != "regression":
        raise _paper_linear_needs_ridge()
    if K != 2:
        raise ScenarioError(
            "agents.count", f"data.source = 'paper-linear' has 2 agents; got agents.count = {K}"
        )
    t = _test_per_agent(cfg, K)
    noise = [
        paper_linear_noise(mean, cfg.kappa_var, cfg.kappa_clip) for mean in (cfg.mean_shift, 0.0)
    ]
    out = []
    for sizes in ([int(s) for s in cfg.paper_sizes], [t, t]):
        xs, ys = [], []
        for k in (0, 1):
            x = rng.random(sizes[k])
            kappa = noise[k].rvs(size=sizes[k], random_state=rng)
            xs.append(x)
            ys.append(-2.0 * x + 1.0 + kappa)
        agent = np.repeat(np.arange(2, dtype=np.int64), sizes)
        out += [np.concatenate(xs)[:, None], np.concatenate(ys), agent]
    X, y, agent, X_test, y_test, agent_test = out
    n1, n2 = cfg.paper_sizes
    text = (
        f"paper-linear (Fig. 1): n_1={n1}, n_2={n2}, mean={cfg.mean_shift:g}, "
        f"kappa variance {cfg.kappa_var:g} truncated to +-{cfg.kappa_clip:g}"
    )
    return FederatedDataset(X, y, agent, X_test, y_test, agent_test, 2, 0, text)


def _as_labels(y: np.ndarray, where: str) -> np.ndarray:
    """Class labels as int64 >= 0, or a ScenarioError on data.path."""
    y = np.asarray(y)
    ok = y.dtype.kind in "iub" or (
        y.dtype.kind == "f" and bool(np.all(np.isfinite(y))) and bool(np.all(y == np.rint(y)))
    )
    if not ok:
        raise ScenarioError(
            "data.path", f"{where}: class labels must be non-negative integers, got {y.dtype}"
        )
    lab = y.astype(np.int64)
    if lab.size and lab.min() < 0:
        raise ScenarioError(
            "data.path", f"{where}: class labels must be non-negative integers, found {lab.min()}"
        )
    return lab


def _load_npz(cfg: DataConfig, K: int, task: str) -> FederatedDataset:
    """An npz file with X, y, agent [, X_test, y_test, agent_test] (the fixed keys of docs/scenarios.md)."""
    if not cfg.path:
        raise ScenarioError(
            "data.path", "data.source = 'npz' needs data.path, a .npz file with arrays X, y, agent"
        )
    p = Path(cfg.path).expanduser()
    if not p.is_file():
        raise ScenarioError("data.path", f"npz file {str(p)!r} not found")
    try:
        with np.load(p, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, AttributeError, TypeError) as e:
        raise ScenarioError("data.path", f"cannot read {p} as .npz: {_one_line(e)}") from None
    missing = [k for k in ("X", "y", "agent") if k not in arrays]
    if missing:
        raise ScenarioError(
            "data.path",
            f"{p} lacks array(s) {', '.join(missing)} (has {', '.join(sorted(arrays)) or 'none'}); "
            "need X (n x d), y (n), agent (n)",
        )
    test_keys = [k for k in ("X_test", "y_test", "agent_test") if k in arrays]
    if test_keys and len(test_keys) != 3:
        raise ScenarioError(
            "data.path", f"{p}: give all of X_test, y_test, agent_test or none (has {test_keys})"
        )
    sets = [("", arrays["X"], arrays["y"], arrays["agent"])]
    if test_keys:
        sets.append(("_test", arrays["X_test"], arrays["y_test"], arrays["agent_test"]))
    clean = []
    d = None
    for suffix, X, y, a in sets:
        X, y, a = np.asarray(X), np.asarray(y), np.asarray(a)
        if X.ndim == 1:
            X = X[:, None]
        if X.ndim != 2 or X.dtype.kind not in "iufb":
            raise ScenarioError(
                "data.path",
                f"{p}: X{suffix} must be a numeric n x d array, got {X.dtype} {X.shape}",
            )
        if d is not None and X.shape[1] != d:
            raise ScenarioError("data.path", f"{p}: X_test has {X.shape[1]} columns but X has {d}")
        d = X.shape[1]
        n = X.shape[0]
        for name, v in ((f"y{suffix}", y), (f"agent{suffix}", a)):
            if v.shape != (n,):
                raise ScenarioError(
                    "data.path", f"{p}: {name} has shape {v.shape}, expected ({n},) like X{suffix}"
                )
        X = X.astype(np.float64)
        if not np.all(np.isfinite(X)):
            raise ScenarioError("data.path", f"{p}: X{suffix} holds NaN or infinite values")
        a_ok = a.dtype.kind in "iu" or (a.dtype.kind == "f" and bool(np.all(a == np.rint(a))))
        if not a_ok:
            raise ScenarioError(
                "data.path", f"{p}: agent{suffix} must hold integer agent indices, got {a.dtype}"
            )
        a = a.astype(np.int64)
        if a.size and a.min() < 0:
            raise ScenarioError(
                "data.path", f"{p}: agent{suffix} holds {a.min()}; agent indices start at 0"
            )
        if a.size and a.max() >= K:
            raise ScenarioError(
                "agents.count",
                f"{p} assigns samples to agent {a.max()} but agents.count = {K} "
                f"(agents 0..{K - 1})",
            )
        if task == "classification":
            y = _as_labels(y, f"{p}: y{suffix}")
        else:
            if y.dtype.kind not in "iufb":
                raise ScenarioError("data.path", f"{p}: y{suffix} must be numeric, got {y.dtype}")
            y = y.astype(np.float64)
            if not np.all(np.isfinite(y)):
                raise ScenarioError("data.path", f"{p}: y{suffix} holds NaN or infinite values")
        clean.append((X, y, a))
    X, y, a = clean[0]
    counts = np.bincount(a, minlength=K)
    if a.size and a.max() + 1 < K:
        raise ScenarioError(
            "agents.count",
            f"{p} holds agents 0..{a.max()} but agents.count = {K}; set agents.count = "
            f"{a.max() + 1}",
        )
    if counts.min() == 0:
        k = int(np.argmin(counts))
        raise ScenarioError("data.path", f"{p}: agent {k} has no training samples")
    n_classes = 0
    if task == "classification":
        n_classes = int(max(c[1].max(initial=0) for c in clean)) + 1
        if n_classes < 2:
            raise ScenarioError("data.path", f"{p}: classification needs at least 2 classes")
    test = clean[1] if len(clean) > 1 else (None, None, None)
    return FederatedDataset.from_arrays(
        X, y, a, K, n_classes, *test, description=f"npz {p}: n={X.shape[0]}, d={X.shape[1]}, K={K}"
    )


def _partitioned(
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
    agent, agent_test = _assign(y, y_test, K, n_classes, cfg.partition, rng)
    text = (
        f"{name}: {y.size} train / {y_test.size} test samples, d={X.shape[1]}, "
        f"{n_classes} classes, K={K}, partition {_partition_text(cfg.partition)}"
    )
    return FederatedDataset.from_arrays(
        X, y, agent, K, n_classes, X_test, y_test, agent_test, description=text
    )


def _needs_classification(source: str, task: str) -> None:
    if task != "classification":
        raise ScenarioError(
            "model.kind", f"data.source = {source!r} is a classification data set; use 'logistic'"
        )


def _load_digits(cfg: DataConfig, K: int, task: str, rng: np.random.Generator) -> FederatedDataset:
    """scikit-learn's 8x8 digits: pixels / 16 in [0, 1], random train/test split."""
    _needs_classification("digits", task)
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise _no_sklearn() from None
    bunch = load_digits()
    X_all = np.asarray(bunch.data, dtype=np.float64) / 16.0
    y_all = np.asarray(bunch.target, dtype=np.int64)
    N = y_all.size
    perm = rng.permutation(N)
    n_test = round(cfg.test_fraction * N)
    test, train = perm[:n_test], perm[n_test:]
    if 0 < cfg.samples < train.size:
        train = train[: cfg.samples]
    if train.size < cfg.partition.min_samples * K:
        raise _too_few(train.size, K, cfg.partition.min_samples)
    return _partitioned(
        cfg, K, rng, X_all[train], y_all[train], X_all[test], y_all[test], 10, "digits"
    )


# ---------------------------------------------------------------------------
# MNIST
# ---------------------------------------------------------------------------

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
        raise ScenarioError("data.path", f"cannot read {path}: {_one_line(e)}") from None
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


def _mnist_dir(cfg: DataConfig) -> Path:
    """The folder searched for MNIST IDX files: data.path, else data.cache_dir, else the cache."""
    if cfg.path:
        return Path(cfg.path).expanduser()
    if cfg.cache_dir:
        return Path(cfg.cache_dir).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "edgesim" / "mnist"


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


def _mnist_missing(directory: Path, detail: str = "") -> ScenarioError:
    msg = (
        f"MNIST files not found in {directory}; set data.path to a folder with the IDX files "
        "or data.download = true"
    )
    return ScenarioError("data.path", msg + (f" ({detail})" if detail else ""))


def _mnist_not_npz(p: Path) -> ScenarioError:
    return ScenarioError(
        "data.path",
        f"{p} is a file but not a .npz; give a folder with the MNIST IDX files or a .npz with "
        "x_train, y_train, x_test, y_test",
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
                failures.append(f"{url}: {_one_line(e)}")
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
        raise ScenarioError("data.path", f"cannot read {p} as .npz: {_one_line(e)}") from None
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
    """Raw (x_train, y_train, x_test, y_test) and where they came from."""
    if cfg.path:
        p = Path(cfg.path).expanduser()
        if p.is_file():
            if p.suffix != ".npz":
                raise _mnist_not_npz(p)
            return _read_keras_npz(p), str(p)
    directory = _mnist_dir(cfg)
    files = _find_mnist(directory)
    if files is None:
        if not cfg.download:
            raise _mnist_missing(directory)
        try:
            download_mnist(directory, tuple(cfg.mirrors))
        except OSError as e:
            raise _mnist_missing(directory, f"download failed: {_one_line(e)}") from None
        files = _find_mnist(directory)
        if files is None:  # pragma: no cover - download_mnist raised otherwise
            raise _mnist_missing(directory)
    arrays = (
        read_idx(files["train_images"], _IDX_IMAGES_MAGIC),
        read_idx(files["train_labels"], _IDX_LABELS_MAGIC),
        read_idx(files["test_images"], _IDX_IMAGES_MAGIC),
        read_idx(files["test_labels"], _IDX_LABELS_MAGIC),
    )
    return arrays, str(directory)


def _pixels(a: np.ndarray) -> np.ndarray:
    """Flatten images to rows; integer pixels are scaled from 0..255 to [0, 1]."""
    flat = a.reshape(a.shape[0], -1)
    if flat.dtype.kind in "iu":
        return flat.astype(np.float64) / 255.0
    return flat.astype(np.float64)


def _load_mnist(cfg: DataConfig, K: int, task: str, rng: np.random.Generator) -> FederatedDataset:
    """MNIST from IDX files or a Keras .npz; pixels in [0, 1], 28 x 28 flattened to 784."""
    _needs_classification("mnist", task)
    (xtr, ytr, xte, yte), where = _mnist_arrays(cfg)
    for name, x, y in (("train", xtr, ytr), ("test", xte, yte)):
        if x.ndim < 2 or y.ndim != 1 or x.shape[0] != y.shape[0]:
            raise ScenarioError(
                "data.path",
                f"{where}: MNIST {name} images {x.shape} and labels {y.shape} do not match",
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
        cfg, K, rng, _pixels(xtr), ytr, _pixels(xte), yte, n_classes, f"mnist ({where})"
    )


# ---------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------

_SOURCES = {
    "synthetic": _synthetic,
    "paper-linear": _paper_linear,
    "digits": _load_digits,
    "mnist": _load_mnist,
}


def build_dataset(cfg: DataConfig, K: int, task: str, rng: np.random.Generator) -> FederatedDataset:
    """Build the federated dataset of a scenario's ``[data]`` section for ``K`` agents.

    ``task`` is ``"regression"`` (y float64, ``n_classes = 0``) or
    ``"classification"`` (y int64 labels). Every random draw comes from
    ``rng``, so a seed fixes the data. Every agent ends with at least
    ``data.partition.min_samples`` (>= 1) training samples. Returns the
    :class:`FederatedDataset`; a user error (missing file, too few samples,
    wrong agent count, source/model mismatch) raises :class:`ScenarioError`
    naming the key.
    """
    if task not in ("regression", "classification"):
        raise ValueError(f"task must be 'regression' or 'classification', got {task!r}")
    K = int(K)
    if K < 1:
        raise ScenarioError("agents.count", f"got {K}; need at least 1 agent")
    if cfg.source in ("digits", "mnist"):
        _needs_classification(cfg.source, task)
    if cfg.source == "paper-linear" and task != "regression":
        raise _paper_linear_needs_ridge()
    errs = cfg.cross_check(K)
    if errs:
        raise errs[0]
    if cfg.source == "npz":
        return _load_npz(cfg, K, task)
    if cfg.source not in _SOURCES:
        raise ScenarioError("data.source", f"unknown source {cfg.source!r}")
    return _SOURCES[cfg.source](cfg, K, task, rng)
