"""The models' reports on a one-block design, compiled: what a best-response search runs.

A search on the paper's Fig. 1 (K = 2, one row block) asks for about 80 000 rounds of two
reports; FFL at K = 200 for tens of thousands of exchanges of 200. In numpy each is a dozen
calls of a few microseconds each (scipy's sparse segment sum, the division by n_k, the
regulariser, the softmax's steps), much of it per-call cost, not arithmetic.
:func:`ridge_rows` and :func:`logistic_rows` do the same arithmetic in one compiled call, with
the same floating-point operations in the same order as
:meth:`edgesim.learning.models.Model.agent_grads` (IEEE double, no fast-math, no fused
multiply-add: numba's defaults), so the reports are the same bits:

- what numpy computes with BLAS or its own vector maths stays in numpy (the scores X w, the
  exponentials, the softmax's row sums: their order of operations is not reproduced here);
- each agent's sum of (weight_i x_i) over its rows in row order, from zero, as scipy's CSR
  kernel (``csr_matvecs``) sums them;
- the sum divided by n_k, then l2 w added (``gb /= n_k``; ``gb += l2 * w``).

numba is imported for them only where they pay for its import
(:data:`edgesim.learning.compiled_reports.NUMBA_IMPORT_US`); the functions are cached on disk
(``cache=True``) after their first use.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def ridge_rows(s, y, X, starts, counts, l2, w, agents, out):
    """Write grad F_k(w) of each agent ``agents[j]`` into ``out[j]`` and return ``out``.

    ``s``: X w over the block's rows (n,); ``y`` (n,) and ``X`` (n, p) the block's rows;
    ``starts``, ``counts`` (int64): each agent's first row in the block and its number of
    rows n_k (divided by as a float64, exactly as numpy's float copy of it); ``agents``:
    block-relative agent indices (any order); ``out``: (len(agents), p) float64.
    """
    p = out.shape[1]
    for j in range(agents.size):
        k = agents[j]
        for c in range(p):
            out[j, c] = 0.0
        for i in range(starts[k], starts[k] + counts[k]):
            a = s[i] - y[i]
            for c in range(p):
                out[j, c] += a * X[i, c]
        for c in range(p):
            out[j, c] = out[j, c] / np.float64(counts[k]) + l2 * w[c]
    return out


@njit(cache=True, nogil=True)
def logistic_rows(E, sums, y, X, starts, counts, l2, w, agents, out):
    """Write grad F_k(w) of each agent ``agents[j]`` into ``out[j]`` and return ``out``.

    ``E`` (n, C): exp(scores - each row's max) over the block's rows, and ``sums`` (n,) their
    row sums, both from numpy (its exp is not libm's); ``y`` the rows' labels; the rest as
    :func:`ridge_rows`. The operations of the numpy path, in its order: the probability
    E[i, c] / sums[i], less 1.0 in the label's column; each agent's sum over its rows of
    that times x_ij, from zero in row order, into column j C + c; divided by n_k; l2 w added.
    """
    C = E.shape[1]
    m = X.shape[1]
    acc = np.empty(m * C)  # (local: the compiler keeps no alias of ``out`` in the loop)
    a = np.empty(C)
    for j in range(agents.size):
        k = agents[j]
        acc[:] = 0.0
        for i in range(starts[k], starts[k] + counts[k]):
            for c in range(C):
                a[c] = E[i, c] / sums[i]
            a[y[i]] = a[y[i]] - 1.0
            for c in range(C):  # acc holds (C, m): the inner loop runs along a row of X
                ac = a[c]
                for f in range(m):
                    acc[c * m + f] += ac * X[i, f]
        for f in range(m):
            for c in range(C):
                q = f * C + c
                out[j, q] = acc[c * m + f] / np.float64(counts[k]) + l2 * w[q]
    return out
