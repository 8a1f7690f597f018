"""Combinations that every consistent table puts at 0 though no published 0 names them.

Tables that form a cycle (``A x B``, ``B x C``, ``C x A``) can force a combination to 0
with every cell that holds it positive. Iterative scaling then creeps toward 0: the
error falls like 1 / cycles, where it falls geometrically elsewhere. :func:`implied_zeros`
finds those combinations with one LP over the parts of the table that converge slowly
(:func:`~maxent_privacy.solve.forced_zeros.max_support`, HiGHS), and proves each one from
the LP's duals with our own arithmetic.

The duals give multipliers ``v`` of the rows ``E y = b``, ``G y <= h``
(:meth:`~.rows.Rows.split`; free on ``E``, ``>= 0`` on ``G``) with ``c = E'v_E + G'v_G``.
Every consistent table ``y`` then has ``c'y <= v'(b, h)``. So where ``c_z > 0``,
``y_z <= (max(v'(b, h), 0) + N sum(max(-c, 0))) / c_z``. A combination is fixed at 0
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
from ..solve.forced_zeros import max_support
from .rows import Rows

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
    none = np.zeros(0, dtype=np.int64)
    keep = np.flatnonzero(~zero)
    part = np.flatnonzero(rows.kind != "total")
    M = sp.csr_array(rows.M[part][:, keep])
    used = np.diff(M.indptr) > 0
    if not (slow[part] & used).any():
        return none
    comp = cell_components([M], len(keep))
    row_comp = np.full(len(part), -1)
    row_comp[used] = comp[M.indices[M.indptr[:-1][used]]]
    chosen = np.unique(row_comp[slow[part] & used])
    cols = keep[np.isin(comp, chosen)]
    sel = part[np.isin(row_comp, chosen)]
    sub = Rows(rows.M[sel], rows.lower[sel], rows.upper[sel], [], rows.kind[sel])
    E, b, G, h = sub.split(cols)
    _, y = max_support(E, b, G, h, np.ones(len(cols), dtype=bool), time_limit, duals=True)
    total = float(rows.upper[rows.kind == "total"].min(initial=np.inf))
    if y is None or not np.isfinite(total):
        return none
    v = -y  # our multipliers: free on E, >= 0 on G (HiGHS's duals of a minimization)
    v[E.shape[0] :] = np.maximum(v[E.shape[0] :], 0.0)
    c = E.T @ v[: E.shape[0]] + G.T @ v[E.shape[0] :]
    slack = max(float(v @ np.concatenate([b, h])), 0.0) + total * float(np.maximum(-c, 0).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        proved = (c > 0) & (slack <= ZERO_RECORDS * c)
    return cols[proved]
