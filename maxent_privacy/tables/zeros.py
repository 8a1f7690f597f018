"""Combinations that every consistent table puts at 0 though no published 0 names them.

Tables that form a cycle (``A x B``, ``B x C``, ``C x A``) can force a combination to 0
with every cell that holds it positive. Iterative scaling then creeps toward 0: the
error falls like 1 / cycles, where it falls geometrically elsewhere. :func:`implied_zeros`
finds those combinations with one LP (HiGHS) over the parts of the table that converge
slowly, and proves each one from the LP's duals with our own arithmetic.

The duals give multipliers ``v`` of the rows (free on an equality, ``>= 0`` on an upper
bound, ``<= 0`` on a lower bound) with ``c = M'v`` and ``v'bound``. Every consistent table
``y`` then has ``c'y <= v'bound``. So where ``c_z > 0``,
``y_z <= (max(v'bound, 0) + N sum(max(-c, 0))) / c_z``. A combination is fixed at 0
only when that bound is at most :data:`ZERO_RECORDS`.

>>> import numpy as np, scipy.sparse as sp
>>> from maxent_privacy.tables.rows import Rows
>>> M = sp.csr_array(np.array([[1., 1., 0., 0.], [0., 0., 1., 1.], [1., 0., 1., 0.],
...                            [0., 1., 0., 1.], [1., 0., 0., 1.], [1., 1., 1., 1.]]))
>>> r = Rows(M, np.array([1., 1., 1., 1., 2., 2.]), np.array([1., 1., 1., 1., 2., 2.]),
...          ["a0", "a1", "b0", "b1", "diagonal", "total"],
...          np.array(["published"] * 5 + ["total"], dtype=object))
>>> implied_zeros(r, np.zeros(4, bool), np.ones(6, bool)).tolist()   # y = (1, 0, 0, 1)
[1, 2]
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..numerics import cell_components
from ..solve.highs import pass_lp, silent_highs
from .rows import Rows, _nonneg_rows

__all__ = ["ZERO_RECORDS", "implied_zeros"]

#: a combination is fixed at 0 when our bound from the LP's duals allows at most this
#: many records in it
ZERO_RECORDS = 1e-9


def implied_zeros(rows: Rows, zero: np.ndarray, slow: np.ndarray, time_limit=None) -> np.ndarray:
    """The combinations (indices) proved 0 in every table that meets ``rows``, among the
    connected parts of the table holding a ``slow`` row (a mask over the rows), the
    combinations ``zero`` already fixed. The total row is left out of the parts (it links
    them all): the LP then allows more tables, so a combination it proves 0 is 0. Empty
    when the LP does not finish within ``time_limit`` seconds."""
    keep = np.flatnonzero(~zero)
    part = np.flatnonzero(rows.kind != "total")
    M = sp.csr_array(rows.M[part][:, keep])
    used = np.diff(M.indptr) > 0
    if not (slow[part] & used).any():
        return np.zeros(0, dtype=np.int64)
    comp = cell_components([M], len(keep))
    row_comp = np.full(len(part), -1)
    row_comp[used] = comp[M.indices[M.indptr[:-1][used]]]
    chosen = np.unique(row_comp[slow[part] & used])
    cols = np.flatnonzero(np.isin(comp, chosen))
    sel = np.flatnonzero(np.isin(row_comp, chosen))
    R, beta, sense = _homogenized(
        sp.csr_array(M[sel][:, cols]), rows.lower[part][sel], rows.upper[part][sel]
    )
    duals = _max_support_duals(R, beta, sense, time_limit)
    if duals is None:
        return np.zeros(0, dtype=np.int64)
    v = -duals  # HiGHS's row duals of a minimization, turned into our multipliers
    v[sense > 0] = np.maximum(v[sense > 0], 0.0)
    v[sense < 0] = np.minimum(v[sense < 0], 0.0)
    c = R.T @ v
    total = float(rows.upper[rows.kind == "total"].min(initial=np.inf))
    if not np.isfinite(total):
        return np.zeros(0, dtype=np.int64)
    slack = max(float(v @ beta), 0.0) + total * float(np.maximum(-c, 0.0).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        proved = (c > 0) & (slack <= ZERO_RECORDS * c)
    return keep[cols[proved]]


def _homogenized(A: sp.csr_array, lower: np.ndarray, upper: np.ndarray):
    """Rows ``a y (=, <=, >=) beta``: (matrix, beta, sense 0 / +1 / -1); a lower bound
    that ``y >= 0`` already implies is left out."""
    eq = lower == upper
    up = ~eq & np.isfinite(upper)
    low = ~eq & np.isfinite(lower) & ~(_nonneg_rows(A) & (lower <= 0))
    R = sp.vstack([A[np.flatnonzero(w)] for w in (eq, up, low)], format="csr")
    beta = np.concatenate([lower[eq], upper[up], lower[low]])
    sense = np.repeat([0, 1, -1], [int(eq.sum()), int(up.sum()), int(low.sum())])
    return R, beta, sense


def _max_support_duals(R, beta, sense, time_limit):
    """HiGHS's row duals of ``R`` (None unless optimal) in ``max sum t`` over the cone
    ``R y (sense) lam beta``, ``0 <= t <= min(y, 1)``, ``lam >= 1``: at the optimum ``t``
    is 1 on every combination some table makes positive and the duals prove the rest 0."""
    import highspy

    r, k = R.shape
    eye = sp.identity(k, format="csr")
    M = sp.vstack(
        [
            sp.hstack([R, sp.csr_array((r, k)), sp.csr_array(-beta.reshape(-1, 1))]),
            sp.hstack([-eye, eye, sp.csr_array((k, 1))]),
        ],
        format="csr",
    )
    inf = highspy.kHighsInf
    h = silent_highs()
    pass_lp(
        h, M, np.concatenate([np.zeros(k), -np.ones(k), [0.0]]),
        np.concatenate([np.where(sense > 0, -inf, 0.0), np.full(k, -inf)]),
        np.concatenate([np.where(sense < 0, inf, 0.0), np.zeros(k)]),
        np.concatenate([np.zeros(2 * k), [1.0]]),
        np.concatenate([np.full(k, inf), np.ones(k), [inf]]),
    )  # fmt: skip
    if time_limit is not None:
        h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    return np.asarray(h.getSolution().row_dual)[:r]
