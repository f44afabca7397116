"""The federated dataset: every agent's training and test samples, grouped by agent.

A :class:`FederatedDataset` stores every agent's samples in one array with the
rows grouped by agent (agent 0 first), so per-agent sums are segment sums over
``offsets`` and never a Python loop over agents.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np


def _group(X: np.ndarray, y: np.ndarray, agent: np.ndarray):
    order = np.argsort(agent, kind="stable")
    return X[order], y[order], agent[order]


def _clip_rows(X: np.ndarray, bound: float, block: int = 1 << 16) -> np.ndarray:
    """Scale the rows of ``X`` in place to L2 norm at most ``bound`` (not cut); returns ``X``."""
    for lo in range(0, X.shape[0], block):
        rows = X[lo : lo + block]
        norms = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))
        over = norms > bound
        rows[over] *= (bound / norms[over])[:, None].astype(rows.dtype)
    return X


@dataclass(frozen=True, eq=False)
class FederatedDataset:
    """Training and test samples of K agents.

    ``X`` is (n, d) float64 without the intercept column (models append it);
    ``y`` is (n,) float64 for regression or int64 class labels in
    ``0..n_classes-1``; ``agent`` is (n,) int64, non-decreasing, in ``0..K-1``.
    The synthetic source may store ``X`` and ``y`` in float32 (``data.precision``;
    models convert row blocks to float64) and its regression ``agent`` in int32.
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

    def clip_features(self, bound: float, copy: bool = True) -> FederatedDataset:
        """Return the dataset with every sample's feature vector scaled to L2 norm <= ``bound``.

        A row x becomes x min(1, bound / |x|), training and test rows alike (the
        device's own preprocessing, so the model is always applied to clipped
        features). Rows are processed in blocks; the arrays keep their dtype.
        With ``copy=False`` the arrays are changed in place (no second copy of
        the data; for a dataset nobody else holds).
        """
        X, X_test = (self.X.copy(), self.X_test.copy()) if copy else (self.X, self.X_test)
        return dataclasses.replace(self, X=_clip_rows(X, bound), X_test=_clip_rows(X_test, bound))

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
