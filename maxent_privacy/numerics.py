"""Small numerical helpers shared by the model, the solve stages and the metrics.

One place each for the connected components of cells linked by rows, for the entropy
terms ``-x log(x / n)`` (0 where x = 0), and for the distinct values of an integer array
(by a sort), and for the Lagrange dual bound of the entropy problem.

>>> import numpy as np, scipy.sparse as sp
>>> rows = sp.csr_array(np.array([[1.0, 1.0, 0, 0], [0, 0, 0, 1.0]]))
>>> cell_components([rows], 4).tolist()
[0, 0, 1, 2]
>>> entropy_terms(np.array([0.0, 1.0]), np.array([2.0, 2.0])).round(6).tolist()
[0.0, 0.693147]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

__all__ = [
    "bipartite_components",
    "cell_components",
    "dual_bound",
    "entropy_terms",
    "sorted_distinct",
]


def cell_components(blocks: Sequence, n_cells: int) -> np.ndarray:
    """Label of the connected component of every cell (cells linked by a shared row).

    ``blocks`` are sparse matrices with ``n_cells`` columns (any nonzero links a row to
    a cell); ``None`` and empty blocks are skipped. Labels are ``0 .. k-1``; a cell in no
    row is a component of its own.
    """
    parts = [sp.coo_array(b) for b in blocks if b is not None and b.shape[0]]
    if n_cells == 0:
        return np.zeros(0, dtype=int)
    rows, cols, offset = [], [], n_cells
    for part in parts:  # an edge cell -> row for every nonzero (traversed both ways)
        rows.append(part.col)
        cols.append(offset + part.row)
        offset += part.shape[0]
    if offset == n_cells:
        return np.arange(n_cells)
    r, c = np.concatenate(rows), np.concatenate(cols)
    big = sp.csr_array((np.ones(len(r), dtype=bool), (r, c)), shape=(offset, offset))
    k, labels = connected_components(big, directed=False)
    labels = labels[:n_cells]
    used = np.zeros(k, dtype=bool)
    used[labels] = True
    return (np.cumsum(used) - 1)[labels]  # 0 .. k'-1, in the order of the graph's labels


def bipartite_components(a: np.ndarray, b: np.ndarray, na: int, nb: int) -> np.ndarray:
    """Component labels of the ``na + nb`` nodes of a bipartite graph with edges
    ``(a[i], b[i])`` (a-nodes first): the pieces that cells of classes ``a`` and values
    ``b`` form, without a node per cell.

    >>> bipartite_components(np.array([0, 1]), np.array([0, 0]), 3, 2).tolist()
    [0, 0, 1, 0, 2]
    """
    graph = sp.csr_array(
        (np.ones(len(a), dtype=bool), (a, na + np.asarray(b))), shape=(na + nb, na + nb)
    )
    _, labels = connected_components(graph, directed=False)
    return labels


def entropy_terms(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``-x log(x / n)`` elementwise, 0 where ``x <= 0`` or ``n <= 0``."""
    x = np.asarray(x, dtype=float)
    n = np.broadcast_to(np.asarray(n, dtype=float), x.shape)
    out = np.zeros_like(x)
    pos = (x > 0) & (n > 0)
    out[pos] = -x[pos] * np.log(x[pos] / n[pos])
    return out


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` by a sort: numpy's own takes a hash table for integers, far
    slower from a few thousand values on.

    >>> sorted_distinct(np.array([3, 1, 3])).tolist()
    [1, 3]
    """
    s = np.sort(values)
    if len(s) < 2:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def dual_bound(A_eq, b_eq, nu, G, h, mu, n) -> float:
    """Lagrange dual of max sum -x log(x/n) s.t. A_eq x = b_eq, G x <= h (mu clipped >= 0)."""
    mu = np.maximum(mu, 0.0) if mu is not None and len(mu) else np.zeros(0)
    z = -1.0 - A_eq.T @ nu
    val = float(nu @ b_eq)
    if G is not None and G.shape[0]:
        z = z - G.T @ mu
        val += float(mu @ h)
    with np.errstate(over="ignore"):
        val += float(np.sum(n * np.exp(z)))
    return val
