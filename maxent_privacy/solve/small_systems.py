"""Many small dense systems at once, laid out with the stack last.

The batched Newton of :mod:`.matrix_scaling` solves one small symmetric system per
bucket and step, thousands of buckets at a time. numpy's batched ``linalg.solve`` and
``matmul`` call their kernels once per matrix (a fixed cost each); with the stack as the last,
contiguous axis, every entry of every matrix is one vector operation over the stack
instead, which is faster while the matrices are small:

* :func:`solve_spd`: ``A^-1 g`` by a Cholesky factorization vectorized over the stack;
* :func:`gram`: ``sum_c x[c, i] y[c, j]`` (a symmetric product) per stack entry.

Thousands of systems of a few unknowns are faster this way than by ``np.linalg.solve``;
a few dozen are not, hence the thresholds below (the attack that uses them: ``python -m
benchmarks adversaries``).

>>> import numpy as np
>>> A = np.array([[4.0, 2.0], [2.0, 3.0]])[:, :, None]  # one 2 x 2 system
>>> solve_spd(A, np.array([[2.0], [1.0]]), force=True).ravel().round(6).tolist()
[0.5, 0.0]
"""

from __future__ import annotations

import numpy as np

__all__ = ["CHOLESKY_MAX_DIM", "CHOLESKY_MIN_STACK", "gram", "solve_spd"]

#: :func:`solve_spd` factors stacks of at least CHOLESKY_MIN_STACK systems of up to
#: CHOLESKY_MAX_DIM unknowns by its own loop; LAPACK per matrix otherwise
CHOLESKY_MAX_DIM = 10
CHOLESKY_MIN_STACK = 200


def solve_spd(A: np.ndarray, g: np.ndarray, force: bool = False) -> np.ndarray:
    """``A^-1 g`` for symmetric positive definite ``A`` of shape (k, k, n) and ``g`` of
    shape (k, n) (n systems). A pivot that rounding leaves <= 0 is floored at a tiny
    positive number: the answer is then huge, and the caller cuts it. ``force``: the
    vectorized Cholesky whatever the size."""
    k, n = g.shape
    if not force and (k > CHOLESKY_MAX_DIM or n < CHOLESKY_MIN_STACK):
        return np.linalg.solve(np.moveaxis(A, -1, 0), g.T[:, :, None])[:, :, 0].T
    L = [[None] * k for _ in range(k)]
    for j in range(k):
        d = A[j, j].copy()
        for i in range(j):
            d -= L[j][i] * L[j][i]
        d = np.sqrt(np.maximum(d, 1e-300))
        L[j][j] = d
        for r in range(j + 1, k):
            v = A[r, j].copy()
            for i in range(j):
                v -= L[r][i] * L[j][i]
            L[r][j] = v / d
    y = [None] * k
    for j in range(k):  # L y = g
        v = g[j].copy()
        for i in range(j):
            v -= L[j][i] * y[i]
        y[j] = v / L[j][j]
    out = [None] * k
    for j in range(k - 1, -1, -1):  # L^T out = y
        v = y[j]
        for i in range(j + 1, k):
            v = v - L[i][j] * out[i]
        out[j] = v / L[j][j]
    return np.array(out) if k else np.zeros_like(g)


def gram(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``G[i, j, b] = sum_c x[c, i, b] y[c, j, b]`` for ``x``, ``y`` of shape (c, k, n)
    whose product is symmetric in (i, j) (``x = r y`` with ``r`` constant over i): one
    row at a time over the stack while k is small, ``matmul`` past it."""
    k = x.shape[1]
    if k > CHOLESKY_MAX_DIM:
        a, b = np.moveaxis(x, -1, 0), np.moveaxis(y, -1, 0)
        return np.moveaxis(np.matmul(np.swapaxes(a, 1, 2), b), 0, -1)
    G = np.empty((k, k, x.shape[2]))
    for i in range(k):
        row = np.einsum("cb,cjb->jb", x[:, i], y[:, i:])
        G[i, i:] = row
        G[i:, i] = row
    return G
