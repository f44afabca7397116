"""Models with the per-sample losses of docs/paper.md, vectorised over agents.

Parameters are one flat float64 vector ``w``:

- ``Ridge``: ``w`` has ``d'`` entries, per-sample loss
  ``0.5 (x.w - y)^2 + 0.5 l2 |w|^2``;
- ``Logistic`` (multinomial): ``w`` is the row-major flattening of a
  ``(d', C)`` matrix ``W``, per-sample loss
  ``-log softmax(W^T x)_y + 0.5 l2 |W|_F^2``;

where ``d' = d + 1`` when ``intercept`` is true (a constant 1 is appended to
x and regularised like the other weights) and ``d`` otherwise. ``F_k`` is the
mean per-sample loss over agent k's samples. Per-agent quantities are computed
for all agents in one call with segment sums (``np.add.reduceat`` over the
agent blocks of a :class:`~edgesim.learning.data.FederatedDataset`), never a
Python loop over agents.

Over 500 lines on purpose: the two models share the block machinery of
:class:`Model` (float32 rows converted block by block, reports into reused
buffers, subsets, threads), and splitting them would scatter that contract.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgesim.learning import compiled_reports
from edgesim.learning.data import FederatedDataset
from edgesim.learning.design import (  # noqa: F401  (re-exported: users import them from here)
    Design,
    add_intercept,
    as_float64,
    by_row_blocks,
)
from edgesim.learning.numerics import clip_scale, log_softmax, ones  # noqa: F401  (re-exported)
from edgesim.learning.segments import (  # noqa: F401  (re-exported)
    BLOCK_ROWS,
    THREAD_CHUNK_BLOCKS,
    SharedBlocks,
    batched_top_eigenvalue,
    gradient_threads,
    in_threads,
    segment_sum,
)


class Model:
    """Common interface of the models; subclasses define the per-sample loss."""

    kind = "model"

    def __init__(self, l2: float, intercept: bool = True, n_classes: int = 0):
        if not l2 > 0:
            raise ValueError(f"model.l2 must be > 0 (strong convexity), got {l2}")
        self.l2 = float(l2)
        self.intercept = bool(intercept)
        self.n_classes = int(n_classes)

    def design(self, data: FederatedDataset) -> Design:
        """Return the :class:`Design` of ``data`` for this model."""
        return Design.of(data, self.intercept)

    def n_params(self, d: int) -> int:
        """Number of parameters for ``d`` raw features."""
        raise NotImplementedError

    def init(self, d: int) -> np.ndarray:
        """Return the initial model w[0] (zeros), shape (n_params,)."""
        return np.zeros(self.n_params(d))

    # --- per-sample pieces, implemented by subclasses -------------------------------------
    def sample_losses(self, w: np.ndarray, Xa: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Data part of the per-sample loss (without the l2 term), shape (n,)."""
        raise NotImplementedError

    def _agent_data_grads(
        self, w, Xa, y, starts, n_k, clip=None, out=None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Per-agent sums of the data part of the gradient, shape (K, n_params).

        ``clip``: ``None``, or ``(row_norms, C)``: each per-sample gradient is then
        rescaled to L2 norm at most C before the sums. ``out`` (K, n_params), if given,
        receives the sums (:func:`segment_sum`'s ``out``). Returns (sums, which rows were
        clipped: a boolean (n,) array, or None without ``clip``).
        """
        raise NotImplementedError

    def curvature_factor(self) -> float:
        """Bound on the loss' second derivative in the linear score (1 ridge, 1/2 softmax)."""
        raise NotImplementedError

    def sample_data_grads(self, w: np.ndarray, Xa: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Return every row's per-sample data gradient explicitly, shape (n, n_params).

        For a few rows only (an audit's canary): the training paths never form
        this (n, n_params) array (see :meth:`agent_grads`).
        """
        raise NotImplementedError

    def gradient_moments(self, design: Design, weights: np.ndarray):
        """Return what makes any weighted sum of the agents' gradients O(n_params^2), or None.

        Only a model whose gradients are affine in ``w`` has them (:class:`Ridge`);
        the others return None and their reports are summed one by one.
        """
        return None

    # --- shared API -------------------------------------------------------------------------
    def agent_losses(
        self,
        w: np.ndarray,
        design: Design,
        test: bool = False,
        loss_bound: float | None = None,
        clipped: np.ndarray | None = None,
    ) -> np.ndarray:
        """Return F_k(w) for every agent, shape (K,) (mean loss incl. the l2 term).

        With ``test=True`` the mean is over each agent's test samples (NaN for an
        agent without test samples): the estimate of its expected risk E_k(w).
        With ``loss_bound`` B, each per-sample data loss is clipped to [0, B]
        first (the data losses of both models are >= 0, so only the top clips);
        the l2 term is data-independent and never clipped. ``clipped``, a (K,)
        array, receives each agent's number of clipped samples.
        """
        Xa, y, _, starts, n_k = design.split(test)
        losses = by_row_blocks(
            Xa.shape[0], lambda sl: self.sample_losses(w, as_float64(Xa[sl]), y[sl])
        )
        if loss_bound is not None:
            if clipped is not None:
                clipped[:] = segment_sum((losses > loss_bound).astype(float), starts, n_k)
            losses = np.minimum(losses, loss_bound)
        means = design.agent_means(losses, test)
        return means + 0.5 * self.l2 * float(w @ w)

    def agent_grads(
        self,
        w: np.ndarray,
        design: Design,
        clip_norm: float | None = None,
        clipped: np.ndarray | None = None,
        out: np.ndarray | None = None,
        agents: np.ndarray | None = None,
        threads: int | None = None,
        shared: SharedBlocks | None = None,
    ) -> np.ndarray:
        """Return grad F_k(w) for every agent in one vectorised call, shape (K, n_params).

        With ``clip_norm`` C, agent k's report is the mean of its per-sample data
        gradients each clipped to L2 norm C, plus the regulariser's gradient
        l2 w (data-independent, so not clipped), as per-sample clipping in
        Opacus and TF Privacy. Replacing one of agent k's n_k samples then
        moves the report by at most 2 C / n_k, whatever the data. The
        per-sample data gradient is r_i x_i (ridge) or x_i (p_i - e_{y_i})^T
        (logistic), so its norm is |r_i| ||x_i|| or ||p_i - e_{y_i}|| ||x_i||
        and clipping is a per-sample rescaling of r_i or of p_i - e_{y_i}: no
        (n, n_params) array is formed. ``clipped``, a (K,) array, receives each
        agent's number of clipped samples.

        ``agents`` (sorted, distinct) asks for those agents' rows only, shape
        (len(agents), n_params): blocks without any of them are skipped and no (K,
        n_params) array is formed. ``out`` receives the result (a buffer reused
        across rounds, so no fresh pages are touched); it is returned. Either way
        each agent's row is computed exactly as for all K. ``threads``: at most this many
        threads (default :func:`~edgesim.learning.segments.gradient_threads`); any count
        gives the same bits. ``shared``: the row blocks are offered there, for the thread
        that waits for the result to join (:class:`~edgesim.learning.segments.SharedBlocks`).
        """
        if clip_norm is None:
            rows = self._compiled_rows(w, design, agents, out)
            if rows is not None:
                return rows
        K = design.K
        if agents is not None and agents.size > 1 and (agents[1:] <= agents[:-1]).any():
            # not sorted: gather
            every = self.agent_grads(w, design, clip_norm, clipped, threads=threads, shared=shared)
            return np.take(every, agents, 0, out=out)
        if agents is not None and agents.size == K:  # sorted and distinct: all of them
            agents = None
        m = K if agents is None else agents.size
        g = np.empty((m, w.size)) if out is None else out
        Xa = design.Xa
        norms = design.row_norms if clip_norm is not None else None
        reg = self.l2 * w
        blocks = design.blocks
        cuts = None
        if agents is not None:  # agents a0 <= k < a1 of block i are cuts[i]:cuts[i + 1] of them
            inner = [blk[0] for blk in blocks[1:]]
            cuts = [0] + (np.searchsorted(agents, inner).tolist() if inner else []) + [m]

        parts = design.block_parts

        def some_blocks(first: int, last: int) -> None:
            for i in range(first, last):  # cache-sized blocks of agents, not a loop over agents
                a0, a1, r0, r1 = blocks[i]
                yb, st, nb, nfb = design.block_part(i) if parts is None else parts[i]
                # a block whose agents are all asked for is computed in place
                whole = cuts is None or cuts[i + 1] - cuts[i] == a1 - a0
                if cuts is None:
                    gb = g[a0:a1]
                elif cuts[i] == cuts[i + 1]:
                    continue
                else:
                    gb = g[cuts[i] : cuts[i + 1]] if whole else np.empty((a1 - a0, w.size))
                clip = None if norms is None else (norms[r0:r1], clip_norm)
                Xb = as_float64(Xa[r0:r1])
                into = gb if gb.flags.c_contiguous else None  # (segment_sum writes C order)
                sums, over = self._agent_data_grads(w, Xb, yb, st, nb, clip, into)
                if not np.may_share_memory(sums, gb):  # (the models write into gb)
                    gb[:] = sums
                if clipped is not None and over is not None:
                    clipped[a0:a1] = segment_sum(over.astype(float), st, nb)
                gb /= nfb  # while the block is in cache
                gb += reg
                if not whole:
                    g[cuts[i] : cuts[i + 1]] = gb[agents[cuts[i] : cuts[i + 1]] - a0]

        if shared is None:
            in_threads(some_blocks, len(blocks), most=threads)
        else:
            shared.run(some_blocks, len(blocks), gradient_threads() if threads is None else threads)
        return g

    #: Whether the model writes its one-block reports by a compiled kernel
    #: (:meth:`_fill_compiled`, :mod:`edgesim.learning.compiled_grads`).
    compiled_reports = False

    def _compiled_rows(self, w, design, agents, out) -> np.ndarray | None:
        """Return :meth:`agent_grads`' unclipped rows of ``agents`` (None: every agent), (m,
        n_params), from the model's compiled kernel (the same bits as numpy's), written into
        ``out`` when given; or None, and numpy computes them: a model without a kernel, a
        design of more than one row block (where numpy's per-call cost is small beside the
        arithmetic), rows not in float64, agents all with the same number of rows (numpy's
        segment sums are then a batched BLAS product, whose order of operations is not
        reproduced), or a process where they do not pay yet
        (:data:`~edgesim.learning.compiled_reports.NUMBA_IMPORT_US`)."""
        if (
            not self.compiled_reports
            or len(design.blocks) != 1
            or design.Xa.dtype != np.float64
            or w.dtype != np.float64
            or design.equal_blocks
        ):
            return None
        kernels = compiled_reports.kernels(design.Xa.shape[0] * w.size)
        if kernels is None:
            return None
        agents = design.everyone if agents is None else np.ascontiguousarray(agents, np.int64)
        if out is None or not out.flags.c_contiguous:
            rows = np.empty((agents.size, w.size))
        else:
            rows = out
        self._fill_compiled(kernels, w, design, agents, rows)
        if rows is not out and out is not None:
            out[...] = rows
            return out
        return rows

    def _fill_compiled(self, kernels, w, design, agents, rows) -> None:
        """Write the unclipped reports of ``agents`` into ``rows`` with ``kernels`` (the module
        :mod:`edgesim.learning.compiled_grads`); models with ``compiled_reports`` define it."""
        raise NotImplementedError

    def agent_grads_each(self, W: np.ndarray, design: Design) -> np.ndarray:
        """Return grad F_k(W[k]) for every agent k, each at its own model; W is (K, n_params)."""
        g = np.empty_like(W, dtype=float)
        Xa, y, starts, n_k = design.Xa, design.data.y, design.starts, design.n_k
        agent = design.data.agent
        for a0, a1, r0, r1 in design.blocks:
            g[a0:a1] = self._agent_data_grads_each(
                W[a0:a1],
                as_float64(Xa[r0:r1]),
                y[r0:r1],
                agent[r0:r1] - a0,
                starts[a0:a1] - r0,
                n_k[a0:a1],
            )
        g /= n_k[:, None]
        g += self.l2 * W
        return g

    def agent_losses_each(self, W: np.ndarray, design: Design, test: bool = False) -> np.ndarray:
        """Return F_k(W[k]) for every agent at its own model, shape (K,); test means E_k estimates."""
        Xa, y, a, *_ = design.split(test)
        losses = by_row_blocks(
            Xa.shape[0], lambda sl: self._sample_losses_each(W, as_float64(Xa[sl]), y[sl], a[sl])
        )
        means = design.agent_means(losses, test)
        return means + 0.5 * self.l2 * np.einsum("ij,ij->i", W, W)

    def loss(self, w: np.ndarray, design: Design, p: np.ndarray) -> float:
        """Return the weighted global loss F(w) = sum_k p_k F_k(w)."""
        return float(p @ self.agent_losses(w, design))

    def grad(self, w: np.ndarray, design: Design, p: np.ndarray) -> np.ndarray:
        """Return grad F(w) = sum_k p_k grad F_k(w), shape (n_params,)."""
        return p @ self.agent_grads(w, design)

    def loss_and_grad(self, w: np.ndarray, design: Design, p: np.ndarray):
        """Return (F(w), grad F(w)) for scipy's optimisers."""
        return self.loss(w, design, p), self.grad(w, design, p)

    def strong_convexity(self) -> float:
        """Return mu: every per-sample loss is l2-strongly convex (docs/paper.md, "Notation"), so mu = l2."""
        return self.l2

    def smoothness(self, design: Design, method: str = "agent") -> float:
        """Return a smoothness constant L_g valid for every F_k.

        ``method="agent"`` (default): ``c * max_k lambda_max(X_k^T X_k / n_k) + l2``,
        with ``c`` the curvature factor (1 for ridge; 1/2 for softmax, whose
        Hessian in the scores is ``diag(p) - p p^T <= I/2``), the top eigenvalue
        found by batched power iteration over all agents at once.
        ``method="sample"``: the paper's per-sample bound (Assumption 1),
        ``c * max_i |x_i|^2 + l2``, never smaller but often much larger.
        """
        c = self.curvature_factor()
        if method == "sample":
            Xa = design.Xa
            sq = by_row_blocks(
                Xa.shape[0], lambda sl: np.einsum("ij,ij->i", *[as_float64(Xa[sl])] * 2)
            )
            return c * float(np.max(sq)) + self.l2
        if method != "agent":
            raise ValueError(f"smoothness method must be 'agent' or 'sample', got {method!r}")
        lam = batched_top_eigenvalue(design.Xa, design.starts, design.n_k, blocks=design.blocks)
        return c * lam + self.l2

    def smoothness_bound(self, feature_bound: float) -> float:
        """Return c (R^2 + 1) + l2 (c R^2 + l2 without an intercept): an L_g valid for every F_k
        whose samples have feature norm <= R = ``feature_bound``, known without the data.

        Each per-sample Hessian is c x_a x_a^T + l2 I with x_a the features and the
        intercept's 1, and |x_a|^2 <= R^2 + 1 (``c`` as in :meth:`smoothness`).
        """
        R2 = float(feature_bound) ** 2 + (1.0 if self.intercept else 0.0)
        return self.curvature_factor() * R2 + self.l2

    def predict(self, w: np.ndarray, Xa: np.ndarray) -> np.ndarray:
        """Return predictions: real values (ridge) or class indices (logistic)."""
        raise NotImplementedError

    def shaped(self, w: np.ndarray) -> np.ndarray:
        """Return the flat parameters ``w`` in the model's own shape: (d',) ridge, (d', C) logistic."""
        return w if self.n_classes == 0 else w.reshape(-1, self.n_classes)

    def accuracy_each(self, W: np.ndarray, design: Design) -> np.ndarray:
        """Return each agent's test accuracy with its own model W[k], shape (K,); NaN for regression."""
        return np.full(design.K, np.nan)


@dataclass(frozen=True, eq=False)
class RidgeMoments:
    """The weighted second moments of ridge's data: S = sum_k c_k X_k^T X_k / n_k (n_params,
    n_params), t = sum_k c_k X_k^T y_k / n_k (n_params,), with ``weight`` = sum_k c_k for
    the agents' weights c = ``weights`` (K,). sum_k c_k grad F_k(w) = S w - t + l2 w weight."""

    weights: np.ndarray
    S: np.ndarray
    t: np.ndarray
    weight: float


class Ridge(Model):
    """Ridge regression: per-sample loss 0.5 (x.w - y)^2 + 0.5 l2 |w|^2."""

    kind = "ridge"
    compiled_reports = True

    def n_params(self, d: int) -> int:
        """Number of parameters: d + 1 with an intercept, d otherwise."""
        return d + (1 if self.intercept else 0)

    def curvature_factor(self) -> float:
        """The squared loss has second derivative 1 in the score."""
        return 1.0

    def sample_losses(self, w, Xa, y):
        """Data part of the per-sample loss 0.5 (x.w - y)^2, shape (n,)."""
        r = Xa @ w - y
        return 0.5 * r * r

    def _fill_compiled(self, kernels, w, design, agents, rows) -> None:
        """Write the rows of ``agents`` into ``rows`` by ``kernels.ridge_rows``."""
        y, starts, n_k, _ = design.block_parts[0]
        X = design.Xa
        kernels.ridge_rows(X @ w, y, X, starts, n_k, self.l2, w, agents, rows)

    def _agent_data_grads(self, w, Xa, y, starts, n_k, clip=None, out=None):
        r = Xa @ w
        r -= y
        over = None
        if clip is not None:  # per-sample gradient r_i x_i has norm |r_i| ||x_i||
            norms, C = clip
            s = clip_scale(np.abs(r) * norms, C)
            over = s < 1.0
            r *= s
        return segment_sum(Xa, starts, n_k, r, out), over

    def _agent_data_grads_each(self, W, Xa, y, agent, starts, n_k):
        r = np.einsum("ij,ij->i", Xa, W[agent]) - y
        return segment_sum(Xa, starts, n_k, r)

    def gradient_moments(self, design: Design, weights: np.ndarray) -> RidgeMoments | None:
        """Return the :class:`RidgeMoments` of ``weights`` (K,), or None if an agent has no samples.

        One pass over the rows, block by block (float32 rows converted per block);
        the blocks' partial sums are added in block order, so any thread count
        gives the same bits.
        """
        Xa, y, n_k, blocks = design.Xa, design.data.y, design.n_k, design.blocks
        if n_k.size and n_k.min() <= 0:
            return None
        scale = np.asarray(weights, dtype=np.float64) / n_k
        parts: list = [None] * len(blocks)

        def some_blocks(first: int, last: int) -> None:
            for i in range(first, last):
                a0, a1, r0, r1 = blocks[i]
                Xb = as_float64(Xa[r0:r1])
                Xs = Xb * np.repeat(scale[a0:a1], n_k[a0:a1])[:, None]
                parts[i] = (Xs.T @ Xb, Xs.T @ as_float64(y[r0:r1]))

        in_threads(some_blocks, len(blocks))
        p = Xa.shape[1]
        S, t = np.zeros((p, p)), np.zeros(p)
        for S_b, t_b in parts:
            S += S_b
            t += t_b
        return RidgeMoments(weights, S, t, float(np.sum(weights)))

    def weighted_gradient_sum(
        self, w: np.ndarray, design: Design, moments: RidgeMoments, agents: np.ndarray
    ) -> np.ndarray:
        """Return sum_{k in agents} c_k grad F_k(w), c = ``moments.weights``, shape (n_params,).

        grad F_k(w) = (X_k^T X_k w - X_k^T y_k) / n_k + l2 w is affine in w, so the sum over
        every agent is S w - t + l2 w sum_k c_k (:class:`RidgeMoments`); the agents left out
        (at most half of them: else their reports are summed directly) are subtracted
        with their own gradients. ``agents``: distinct agent ids.
        """
        c = moments.weights
        if agents.size == design.K:  # every agent (the ids are distinct): none left out
            left_out = agents[:0]
        else:
            out = np.ones(design.K, dtype=bool)
            out[agents] = False
            left_out = np.flatnonzero(out)
        if left_out.size > agents.size:  # few agents: add their reports
            return c[agents] @ self.agent_grads(w, design, agents=np.asarray(agents))
        total = moments.S @ w - moments.t + (self.l2 * moments.weight) * w
        if left_out.size:
            total -= c[left_out] @ self.agent_grads(w, design, agents=left_out)
        return total

    def _sample_losses_each(self, W, Xa, y, agent):
        r = np.einsum("ij,ij->i", Xa, W[agent]) - y
        return 0.5 * r * r

    def sample_data_grads(self, w, Xa, y):
        """Return r_i x_i for every row, shape (n, d')."""
        return (Xa @ w - y)[:, None] * Xa

    def predict(self, w, Xa):
        """Return the real-valued predictions Xa w."""
        return Xa @ w

    def solve(self, design: Design, weights: np.ndarray) -> np.ndarray:
        """Return argmin_w sum_k weights_k F_k(w) in closed form (normal equations).

        ``weights`` need not sum to one (the VCG problems drop one agent).
        Solves (sum_k weights_k X_k^T X_k / n_k + l2 sum(weights) I) w
        = sum_k weights_k X_k^T y_k / n_k.
        """
        s = weights[design.data.agent] / design.n_k[design.data.agent]
        Xa = as_float64(design.Xa)
        Xs = Xa * s[:, None]
        A = Xs.T @ Xa + self.l2 * weights.sum() * np.eye(Xa.shape[1])
        b = Xs.T @ design.data.y.astype(np.float64, copy=False)
        return np.linalg.solve(A, b)


class Logistic(Model):
    """Multinomial logistic regression: -log softmax(W^T x)_y + 0.5 l2 |W|_F^2."""

    kind = "logistic"
    compiled_reports = True

    def __init__(self, l2: float, intercept: bool = True, n_classes: int = 2):
        if n_classes < 2:
            raise ValueError(f"logistic regression needs at least 2 classes, got {n_classes}")
        super().__init__(l2, intercept, n_classes)

    def n_params(self, d: int) -> int:
        """Number of parameters: (d + intercept) * n_classes."""
        return (d + (1 if self.intercept else 0)) * self.n_classes

    def curvature_factor(self) -> float:
        """The softmax cross-entropy Hessian in the scores is at most 1/2 (largest eigenvalue)."""
        return 0.5

    def _scores(self, w, Xa):
        return Xa @ w.reshape(Xa.shape[1], self.n_classes)

    def sample_losses(self, w, Xa, y):
        """Data part of the per-sample loss -log softmax(W^T x)_y, shape (n,)."""
        if Xa.shape[0] == 0:
            return np.zeros(0)
        logp = log_softmax(self._scores(w, Xa), axis=1)
        return -logp[np.arange(Xa.shape[0]), y]

    def _agent_data_grads(self, w, Xa, y, starts, n_k, clip=None, out=None):
        return self._class_sums(self._scores(w, Xa), Xa, y, starts, n_k, clip, out)

    def _scores_each(self, W, Xa, agent):
        Wm = W.reshape(W.shape[0], Xa.shape[1], self.n_classes)
        return np.einsum("ij,ijc->ic", Xa, Wm[agent])

    def _agent_data_grads_each(self, W, Xa, y, agent, starts, n_k):
        S = self._scores_each(W, Xa, agent)
        return self._class_sums(S, Xa, y, starts, n_k)[0]

    def _sample_losses_each(self, W, Xa, y, agent):
        if Xa.shape[0] == 0:
            return np.zeros(0)
        logp = log_softmax(self._scores_each(W, Xa, agent), axis=1)
        return -logp[np.arange(Xa.shape[0]), y]

    @staticmethod
    def _exp_scores(S):
        """Return (exp(S - each row's max), each row's sum of them): the softmax probabilities
        are their quotients. Reductions over the few class columns are written column by
        column: numpy's axis=1 reduce is slow on short rows."""
        top = S[:, 0].copy()
        for c in range(1, S.shape[1]):
            np.maximum(top, S[:, c], out=top)
        E = np.exp(S - top[:, None])
        return E, E @ ones(S.shape[1])

    def _fill_compiled(self, kernels, w, design, agents, rows) -> None:
        """Write the rows of ``agents`` into ``rows``: the scores' exponentials and their row
        sums from numpy (:meth:`_exp_scores`), the rest by ``kernels.logistic_rows``."""
        y, starts, n_k, _ = design.block_parts[0]
        X = design.Xa
        E, sums = self._exp_scores(self._scores(w, X))
        kernels.logistic_rows(E, sums, y, X, starts, n_k, self.l2, w, agents, rows)

    def _class_sums(self, S, Xa, y, starts, n_k, clip=None, out=None):
        # Softmax probabilities minus the one-hot label.
        E, sums = self._exp_scores(S)
        E /= sums[:, None]
        E.reshape(-1)[np.arange(Xa.shape[0]) * S.shape[1] + y] -= 1.0
        over = None
        if clip is not None:  # the gradient x_i (p_i - e_y)^T has norm ||p_i - e_y|| ||x_i||
            norms, C = clip
            s = clip_scale(np.sqrt(np.einsum("ic,ic->i", E, E)) * norms, C)
            over = s < 1.0
            E *= s[:, None]
        return segment_sum(Xa, starts, n_k, E, out).reshape(starts.size, -1), over

    def sample_data_grads(self, w, Xa, y):
        """Return x_i (p_i - e_{y_i})^T for every row, flattened row-major, shape (n, d' C)."""
        P = np.exp(log_softmax(self._scores(w, Xa), axis=1))
        P[np.arange(Xa.shape[0]), y] -= 1.0
        return np.einsum("ij,ic->ijc", Xa, P).reshape(Xa.shape[0], -1)

    def predict(self, w, Xa):
        """Return the predicted class of each row, shape (n,), int64."""
        return np.argmax(self._scores(w, Xa), axis=1)

    def accuracy_each(self, W, design):
        """Return each agent's test accuracy with its own model W[k], shape (K,); NaN if no test data."""
        Xa, y, a, *_ = design.split(test=True)
        if Xa.shape[0] == 0:
            return np.full(design.K, np.nan)
        hit = by_row_blocks(
            Xa.shape[0],
            lambda sl: np.argmax(self._scores_each(W, as_float64(Xa[sl]), a[sl]), axis=1) == y[sl],
        )
        return design.agent_means(hit, test=True)


def make_model(kind: str, l2: float, intercept: bool, n_classes: int) -> Model:
    """Return the model named ``kind`` (``"ridge"`` or ``"logistic"``)."""
    if kind == "ridge":
        return Ridge(l2, intercept)
    if kind == "logistic":
        return Logistic(l2, intercept, n_classes)
    raise ValueError(f"model.kind must be 'ridge' or 'logistic', got {kind!r}")
