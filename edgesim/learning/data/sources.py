"""Data sources that need no download: synthetic, paper-linear, npz and digits.

``synthetic`` draws Gaussian classes or per-agent linear models,
``paper-linear`` is the two-agent example of the paper's Fig. 1 (slip 8 in
docs/paper.md), ``npz`` reads a user file and ``digits`` is scikit-learn's 8x8
digits (an optional extra).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from edgesim.errors import ScenarioError, one_line
from edgesim.learning.data.checks import (
    as_labels,
    require_classification,
    sklearn_missing,
    too_few_samples,
)
from edgesim.learning.data.dataset import FederatedDataset
from edgesim.learning.data.partition import (
    apportion,
    assign_agents,
    partition_text,
    partitioned_dataset,
    quantity_weights,
)

if TYPE_CHECKING:
    from edgesim.learning.data.config import DataConfig

#: Test samples per agent when ``data.test_samples = -1`` and the source is
#: ``paper-linear`` (the test set estimates each agent's expected risk E_k).
PAPER_LINEAR_TEST_SAMPLES = 10_000
#: Synthetic sources with ``test_samples = -1``: this many test samples per
#: agent, fewer when K is large so the whole test set stays within
#: :data:`SYNTHETIC_TEST_TOTAL` rows.
SYNTHETIC_TEST_SAMPLES = 200
SYNTHETIC_TEST_TOTAL = 200_000
#: ... and within this many bytes of features, so that a default never dominates memory
#: (at d = 9 999 and K = 1 000 the row cap alone gave a 16 GB test set). One test sample
#: per agent stays as long as those fit in this budget; beyond it (K > 419 430 at d = 20)
#: the default has no test samples: per-agent test losses are null, and a run of 10^7
#: agents does not hold a gigabyte of one-sample estimates. ``test_samples = 1`` asks
#: for them.
SYNTHETIC_TEST_BYTES = 64 * 2**20


def held_out_per_agent(cfg: DataConfig, K: int) -> int:
    """Test samples per agent of a synthetic or paper-linear source: ``data.test_samples``
    when set, else the defaults above (:data:`SYNTHETIC_TEST_BYTES` caps them at large K)."""
    if cfg.test_samples >= 0:
        return int(cfg.test_samples)
    if cfg.source == "paper-linear":
        return PAPER_LINEAR_TEST_SAMPLES
    K = max(K, 1)
    by_bytes = SYNTHETIC_TEST_BYTES // (8 * max(cfg.features, 1) * K)
    return max(min(1, by_bytes), min(SYNTHETIC_TEST_SAMPLES, SYNTHETIC_TEST_TOTAL // K, by_bytes))


#: Rows drawn per block when the synthetic features are generated in place (the numbers
#: are those of one big draw; the block only bounds the temporary arrays).
DRAW_BLOCK_ROWS = 1 << 14
#: ``data.precision = "auto"`` stores the synthetic samples in float32 once their float64
#: features (with the intercept column) would take more than this many bytes.
PRECISION_AUTO_BYTES = 2 * 2**30


def storage_dtype(cfg: DataConfig, n: int, d: int) -> type:
    """Return the dtype the synthetic source stores ``n`` samples of ``d`` features in.

    ``data.precision``: ``float64``, ``float32``, or ``auto`` (float32 once the float64
    features with the intercept column, ``8 n (d + 1)`` bytes, exceed
    :data:`PRECISION_AUTO_BYTES`). Returns ``np.float64`` or ``np.float32``.
    """
    if cfg.precision == "auto":
        return np.float32 if 8 * n * (d + 1) > PRECISION_AUTO_BYTES else np.float64
    return np.float32 if cfg.precision == "float32" else np.float64


def _with_ones(m: int, d: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """Return an (m, d + 1) array whose last column is ones, and its first d columns (a view).

    The source fills the view; a model with an intercept then uses the whole array as its
    design instead of copying the features (``Design.of``).
    """
    full = np.empty((m, d + 1), dtype=dtype)
    full[:, d] = 1.0
    return full, full[:, :d]


def _draw_rows(rng: np.random.Generator, X: np.ndarray, fill) -> None:
    """Fill ``X`` (m, d) with standard normal rows, block by block, then ``fill(X_block, rows)``.

    The draws are the same numbers, in the same order, as one ``rng.standard_normal((m, d))``
    (the generator draws each value in turn), so a block-by-block source gives the same
    data as a materialised one; ``fill`` sees each float64 block before it is stored in
    ``X``'s dtype.
    """
    m, d = X.shape
    for lo in range(0, m, DRAW_BLOCK_ROWS):
        hi = min(lo + DRAW_BLOCK_ROWS, m)
        block = rng.standard_normal((hi - lo, d))
        fill(block, slice(lo, hi))
        X[lo:hi] = block


def _equal_sizes(n: int, K: int, rng: np.random.Generator) -> np.ndarray:
    sizes = np.full(K, n // K, dtype=np.int64)
    sizes[rng.permutation(K)[: n % K]] += 1
    return sizes


def load_synthetic(
    cfg: DataConfig, K: int, task: str, rng: np.random.Generator
) -> FederatedDataset:
    """Gaussian classes (classification) or per-agent linear models (regression).

    Samples are drawn block by block into their storage (``data.precision``), so no
    float64 copy of the whole set is ever held.
    """
    d, n, t = cfg.features, cfg.samples, held_out_per_agent(cfg, K)
    dtype = storage_dtype(cfg, n, d)
    pcfg = cfg.partition
    m = pcfg.min_samples
    if n < m * K:
        raise too_few_samples(n, K, m)
    if task == "classification":
        C = cfg.classes
        means = cfg.separation * rng.standard_normal((C, d))
        parts = []
        for rows in (n, K * t):
            y = rng.integers(0, C, size=rows)
            full, X = _with_ones(rows, d, dtype)
            _draw_rows(rng, X, lambda b, sl, y=y: b.__iadd__(means[y[sl]]))
            parts += [full, y]
        (full, y), (full_test, y_test) = parts[:2], parts[2:]
        agent, agent_test = assign_agents(y, y_test, K, C, pcfg, rng)
        grouped = []
        for f, lab, a in ((full, y, agent), (full_test, y_test, agent_test)):
            order = np.argsort(a, kind="stable")  # rows grouped by agent, as from_arrays does
            grouped += [f[order][:, :d], lab[order], a[order]]
        text = (
            f"synthetic classification: n={n}, d={d}, {C} classes, K={K}, "
            f"partition {partition_text(pcfg)}"
        )
        return FederatedDataset(*grouped, K, C, text)
    w0 = rng.standard_normal(d)
    b0 = rng.standard_normal()
    W = w0 + cfg.heterogeneity * rng.standard_normal((K, d))
    M = 0.5 * rng.standard_normal((K, d))
    if pcfg.kind == "quantity":
        sizes = apportion(n, quantity_weights(K, pcfg.quantity_sigma, rng), m)
        split = partition_text(pcfg)
    else:
        sizes = _equal_sizes(n, K, rng)
        split = "equal sizes"
    parts = []
    index = np.arange(K, dtype=np.int32 if K < 2**31 else np.int64)  # int32: half the bytes
    for agent in (np.repeat(index, sizes), np.repeat(index, t)):
        full, X = _with_ones(agent.size, d, dtype)
        y = np.empty(agent.size)

        def fill(block, sl, agent=agent, y=y):
            block += M[agent[sl]]
            y[sl] = np.einsum("ij,ij->i", block, W[agent[sl]]) + b0

        _draw_rows(rng, X, fill)
        for lo in range(0, agent.size, DRAW_BLOCK_ROWS):  # the label noise, after every feature
            hi = min(lo + DRAW_BLOCK_ROWS, agent.size)
            y[lo:hi] += cfg.noise_std * rng.standard_normal(hi - lo)
        parts += [X, y.astype(dtype, copy=False), agent]
    text = (
        f"synthetic regression: n={n}, d={d}, K={K}, heterogeneity={cfg.heterogeneity:g}, "
        f"noise_std={cfg.noise_std:g}, {split}"
    )
    if dtype is np.float32:
        text += ", stored in float32"
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


def paper_linear_draws(
    mean: float, variance: float, clip: float, size: int, rng: np.random.Generator
) -> np.ndarray:
    """Draw ``size`` values of the paper's label noise kappa (:func:`paper_linear_noise`).

    The same values, bit for bit, as ``paper_linear_noise(mean, variance, clip).rvs(size=size,
    random_state=rng)`` (the inverse-CDF draw of ``scipy.stats.truncnorm``: one uniform per
    value, then its quantile function, step by step as scipy computes it), without importing
    ``scipy.stats`` (about a third of a second: most of a small run's start-up);
    tests/learning/test_data.py checks the equality on every branch. Returns (size,) float64.
    """
    from scipy import special as sc

    std = float(np.sqrt(variance))
    a, b = (-clip - mean) / std, (clip - mean) / std
    if not a < b:
        raise ValueError(f"paper-linear noise: empty interval [{-clip}, {clip}]")
    q = rng.uniform(size=size)
    a_, b_ = np.broadcast_to(a, q.shape), np.broadcast_to(b, q.shape)
    if a < 0:  # scipy's ppf_left: the lower tail's log mass, then ndtri_exp
        log_phi = sc.logsumexp([sc.log_ndtr(a_), np.log(q) + _log_gauss_mass(sc, a_, b_)], axis=0)
        kappa = sc.ndtri_exp(log_phi)
    else:  # ppf_right, by symmetry
        log_phi = sc.logsumexp(
            [sc.log_ndtr(-b_), np.log1p(-q) + _log_gauss_mass(sc, a_, b_)], axis=0
        )
        kappa = -sc.ndtri_exp(log_phi)
    return kappa * std + mean


def _log_gauss_mass(sc, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return log(Phi(b) - Phi(a)) elementwise as ``scipy.stats.truncnorm`` computes it (its
    left, right and central cases; ``sc`` is ``scipy.special``)."""

    def left(lo, hi):  # log(Phi(hi) - Phi(lo)) for hi <= 0: a difference of logs
        return sc.logsumexp([sc.log_ndtr(hi), sc.log_ndtr(lo) + np.pi * 1j], axis=0)

    out = np.full_like(a, fill_value=np.nan, dtype=np.complex128)
    case_left, case_right = b <= 0, a > 0
    central = ~(case_left | case_right)
    if case_left.any():
        out[case_left] = left(a[case_left], b[case_left])
    if case_right.any():
        out[case_right] = left(-b[case_right], -a[case_right])
    if central.any():
        out[central] = sc.log1p(-sc.ndtr(a[central]) - sc.ndtr(-b[central]))
    return np.real(out)


def paper_linear_needs_ridge() -> ScenarioError:
    """The error for ``paper-linear`` data under a classification model (model.kind)."""
    return ScenarioError(
        "model.kind", "data.source = 'paper-linear' is a regression data set; use 'ridge'"
    )


def load_paper_linear(
    cfg: DataConfig, K: int, task: str, rng: np.random.Generator
) -> FederatedDataset:
    """Fig. 1: x ~ U[0, 1], y = -2 x + 1 + kappa; agent 0's kappa has mean ``mean_shift``."""
    if task != "regression":
        raise paper_linear_needs_ridge()
    if K != 2:
        raise ScenarioError(
            "agents.count", f"data.source = 'paper-linear' has 2 agents; got agents.count = {K}"
        )
    t = held_out_per_agent(cfg, K)
    means = (cfg.mean_shift, 0.0)
    out = []
    for sizes in ([int(s) for s in cfg.paper_sizes], [t, t]):
        xs, ys = [], []
        for k in (0, 1):
            x = rng.random(sizes[k])
            kappa = paper_linear_draws(means[k], cfg.kappa_var, cfg.kappa_clip, sizes[k], rng)
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


def load_npz(cfg: DataConfig, K: int, task: str) -> FederatedDataset:
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
        raise ScenarioError("data.path", f"cannot read {p} as .npz: {one_line(e)}") from None
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
            y = as_labels(y, f"{p}: y{suffix}")
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


def load_digits(cfg: DataConfig, K: int, task: str, rng: np.random.Generator) -> FederatedDataset:
    """scikit-learn's 8x8 digits: pixels / 16 in [0, 1], random train/test split."""
    require_classification("digits", task)
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise sklearn_missing() from None
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
        raise too_few_samples(train.size, K, cfg.partition.min_samples)
    return partitioned_dataset(
        cfg, K, rng, X_all[train], y_all[train], X_all[test], y_all[test], 10, "digits"
    )
