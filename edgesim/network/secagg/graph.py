"""SecAgg+'s neighbour graph: who masks with whom and holds whose shares.

:class:`NeighbourGraph` is the complete graph (Bonawitz et al. 2017) or a
random Harary graph of even degree k (Bell et al. 2020), with vectorised
neighbour counts and edge lists.
"""

from __future__ import annotations

import numpy as np


class NeighbourGraph:
    """An undirected k-regular graph on n clients: a Harary graph H(k, n) on a random ring order.

    Clients sit on a ring in the order ``order`` (client at each position)
    and are adjacent to the k/2 nearest positions on each side (k even, k <
    n - 1), the random Harary graph of SecAgg+ (Bell et al. 2020, Sec. 3).
    ``degree = n - 1`` is the complete graph (no order is drawn). Nothing
    here is O(n^2) unless the graph is complete and neighbours are listed.
    """

    def __init__(self, n_clients: int, degree: int, rng: np.random.Generator | None = None):
        n, k = int(n_clients), int(degree)
        if not 0 <= k <= n - 1:
            raise ValueError(f"degree must lie in 0..{n - 1}, got {degree}")
        if k < n - 1 and k % 2:
            raise ValueError(f"a k-regular graph here needs an even degree, got {degree}")
        self.n, self.degree = n, k
        if self.complete:
            self.order = np.arange(n, dtype=np.int64)
        else:
            if rng is None:
                raise ValueError("a k-regular graph needs a random generator")
            self.order = rng.permutation(n).astype(np.int64)
        self.position = np.empty(n, dtype=np.int64)
        self.position[self.order] = np.arange(n, dtype=np.int64)

    @property
    def complete(self) -> bool:
        """True when every client neighbours every other (degree n - 1)."""
        return self.degree == self.n - 1

    def neighbours(self, i: int) -> np.ndarray:
        """Return the sorted neighbour ids of client ``i`` (int64, (k,))."""
        i = int(i)
        if self.complete:
            return np.concatenate([np.arange(i), np.arange(i + 1, self.n)]).astype(np.int64)
        half = np.arange(1, self.degree // 2 + 1)
        pos = (self.position[i] + np.concatenate([half, -half])) % self.n
        return np.sort(self.order[pos])

    def neighbour_counts(self, mask) -> np.ndarray:
        """Return, for every client, how many of its neighbours have ``mask`` set (int64 (n,))."""
        m = np.asarray(mask, dtype=bool)
        if self.complete:
            return np.int64(np.count_nonzero(m)) - m.astype(np.int64)
        h = self.degree // 2
        ring = m[self.order].astype(np.int64)
        # window sums over ring positions q-h..q+h (wrapping) from one cumulative sum: O(n)
        cs = np.concatenate([[0], np.cumsum(np.concatenate([ring[-h:], ring, ring[:h]]))])
        c = cs[2 * h + 1 :] - cs[: self.n] - ring
        out = np.empty(self.n, dtype=np.int64)
        out[self.order] = c
        return out

    def edges(self) -> np.ndarray:
        """Return every edge once as (i, j) with i < j, lexicographically sorted (int64 (n k / 2, 2))."""
        if self.complete:
            i, j = np.triu_indices(self.n, 1)
            return np.stack([i, j], axis=1).astype(np.int64)
        q = np.arange(self.n)
        a = np.concatenate([self.order[q]] * (self.degree // 2))
        b = np.concatenate([self.order[(q + o) % self.n] for o in range(1, self.degree // 2 + 1)])
        e = np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1)
        return e[np.lexsort((e[:, 1], e[:, 0]))]

    def adjacency(self) -> np.ndarray:
        """Return the boolean adjacency matrix (n, n) (for small graphs and tests)."""
        adj = np.zeros((self.n, self.n), dtype=bool)
        e = self.edges()
        adj[e[:, 0], e[:, 1]] = True
        adj[e[:, 1], e[:, 0]] = True
        return adj
