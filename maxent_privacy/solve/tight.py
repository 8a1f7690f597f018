"""Presolve's tight-bound rules (:mod:`.presolve`) on arrays: sorts and ``bincount``.

Two exact rules of the presolve, each applied once per call and returning True when it
fixed a cell (to 0):

* :func:`tight_rows`, the *tight upper bound* of a row with nonnegative coefficients:
  it can reach at most ``sum_c R_c max_{j in c} a_j`` (R_c the class total still free);
  when its target equals that bound, every free cell of those classes whose coefficient
  is below its class's maximum is 0 (``P(s | q) = 1`` puts everyone with q on s).
* :func:`rect_tight`, the *bucket-flow bound* of a fact row with equal positive
  coefficients: in one bucket its cells lie in Q x V (its classes, its values) and hold at
  most ``min(R_Q, C_V)`` records; when the row's target is the sum of these bounds, every
  bucket attains its bound: if ``R_Q <= C_V`` the other cells of Q are 0, if
  ``C_V <= R_Q`` the other cells of V are 0.

Both group the row entries by (row, class), (row, bucket) and so on through integer keys
(``np.unique``) instead of data frames: a few milliseconds for a thousand rules.

>>> import numpy as np, scipy.sparse as sp
>>> # one class of 2 records, cells 0 and 1; the row says both records are on cell 0
>>> fixed = np.full(2, np.nan)
>>> tight_rows(sp.csr_array(np.array([[1.0, 0.0]])), np.array([2.0]), None, None,
...            fixed, np.array([0, 0]), np.array([2.0]))
True
>>> fixed.tolist()
[nan, 0.0]
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..numerics import sorted_distinct
from . import tolerances as tl

__all__ = ["rect_tight", "tight_rows"]


def _free_entries(F, f, fixed):
    """``(t, row, cell, a, free_idx)``: targets left once the fixed cells are moved to
    the right side, and the entries of ``F`` on the free cells; None if there are none."""
    free = np.isnan(fixed)
    vals = np.where(free, 0.0, fixed)
    F = sp.csr_array(F)
    t = f - F @ vals
    on = free[F.indices]  # the entries on free cells (no column slicing)
    if not on.any():
        return None
    row = np.repeat(np.arange(F.shape[0], dtype=np.int64), np.diff(F.indptr))
    return t, row[on], F.indices[on].astype(np.int64), F.data[on], np.flatnonzero(free)


def _remaining(cls, class_n, fixed):
    """Class totals still free (records not yet placed by the fixed cells)."""
    vals = np.where(np.isnan(fixed), 0.0, fixed)
    own = cls >= 0
    return class_n - np.bincount(cls[own], weights=vals[own], minlength=len(class_n))


def _cells_of(values: np.ndarray, cells: np.ndarray, wanted: np.ndarray):
    """For each of ``wanted``, the ``cells`` whose value is it: ``(which, cell)``."""
    order = np.argsort(values, kind="stable")
    v = values[order]
    lo = np.searchsorted(v, wanted, side="left")
    count = np.searchsorted(v, wanted, side="right") - lo
    which = np.repeat(np.arange(len(wanted)), count)
    offset = np.arange(len(which)) - np.repeat(np.cumsum(count) - count, count)
    return which, cells[order[np.repeat(lo, count) + offset]]


def _absent(row, cell, in_row, in_cell, n: int) -> np.ndarray:
    """Whether each (row, cell) pair is absent from the pairs ``(in_row, in_cell)``."""
    have = np.sort(in_row * n + in_cell)
    key = row * n + cell
    pos = np.minimum(np.searchsorted(have, key), max(len(have) - 1, 0))
    return ~(have[pos] == key) if len(have) else np.ones(len(key), dtype=bool)


def _fix_zero(fixed, zero) -> bool:
    zero = sorted_distinct(zero)
    zero = zero[np.isnan(fixed[zero])]
    if len(zero) == 0:
        return False
    fixed[zero] = 0.0
    return True


def tight_rows(E, e, G, g, fixed, cls, class_n) -> bool:
    """The tight-upper-bound rule on the rows ``E x = e`` and ``G x >= g`` once; True
    when it fixed a cell."""
    blocks, targets = [E], [e]
    if G is not None and G.shape[0]:
        blocks.append(G)
        targets.append(g)
    R = sp.vstack(blocks, format="csr")
    got = _free_entries(R, np.concatenate(targets), fixed)
    if got is None:
        return False
    t, row, cell, a, free_idx = got
    c = cls[cell]
    bad = np.zeros(R.shape[0], dtype=bool)
    bad[row[(a < 0) | (c < 0)]] = True  # rows the rule does not apply to
    ok = ~bad[row]
    row, cell, a, c = row[ok], cell[ok], a[ok], c[ok]
    if not len(row):
        return False
    n_cls = len(class_n)
    pair, inv = np.unique(row * n_cls + c, return_inverse=True)
    top = np.full(len(pair), -np.inf)
    np.maximum.at(top, inv, a)
    p_row, p_cls = pair // n_cls, pair % n_cls
    ub = np.bincount(p_row, weights=top * _remaining(cls, class_n, fixed)[p_cls])
    rows = sorted_distinct(p_row)
    tight = np.zeros(R.shape[0], dtype=bool)
    tight[rows] = t[rows] >= ub[rows] - tl.TIGHT * np.maximum(1.0, np.abs(t[rows]))
    sel = tight[p_row]
    if not sel.any():
        return False
    # every free cell of a tight class whose coefficient is below the class maximum is 0
    members = free_idx[cls[free_idx] >= 0]
    which, cand = _cells_of(cls[members], members, p_cls[sel])
    cand_row, cand_top = p_row[sel][which], top[sel][which]
    n = len(fixed)
    coef = np.zeros(len(cand))
    key = row * n + cell
    order = np.argsort(key)
    pos = np.minimum(np.searchsorted(key[order], cand_row * n + cand), len(key) - 1)
    hit = key[order][pos] == cand_row * n + cand
    coef[hit] = a[order][pos[hit]]
    return _fix_zero(fixed, cand[coef < cand_top - tl.TIGHT * np.abs(cand_top)])


def rect_tight(F, f, gs, gs_n, gs_bucket, fixed, cls, class_n) -> bool:
    """The bucket-flow bound of the rows ``F x = f`` (equal positive coefficients) once;
    True when it fixed a cell."""
    got = _free_entries(F, f, fixed)
    if got is None:
        return False
    t, rows, cell, a, free_idx = got
    amax = np.zeros(F.shape[0])
    np.maximum.at(amax, rows, a)
    amin = np.full(F.shape[0], np.inf)
    np.minimum.at(amin, rows, a)
    eq_rows = (amin > 0) & (amax - amin <= tl.TIGHT * amax)
    keep = eq_rows[rows] & (cls[cell] >= 0)
    if not keep.any():
        return False
    row, cell = rows[keep], cell[keep]
    c, g = cls[cell], gs[cell]
    n_b = int(gs_bucket.max()) + 1
    rb, rb_of = np.unique(row * n_b + gs_bucket[g], return_inverse=True)  # (row, bucket)
    vals = np.where(np.isnan(fixed), 0.0, fixed)
    r_cls = _remaining(cls, class_n, fixed)
    r_gs = gs_n - np.bincount(gs, weights=vals, minlength=len(gs_n))
    q = sorted_distinct(rb_of * len(class_n) + c)  # distinct (row, bucket, class)
    rq = np.bincount(q // len(class_n), weights=r_cls[q % len(class_n)], minlength=len(rb))
    v = sorted_distinct(rb_of * len(gs_n) + g)  # distinct (row, bucket, value)
    cv = np.bincount(v // len(gs_n), weights=r_gs[v % len(gs_n)], minlength=len(rb))
    bound = np.minimum(rq, cv)
    rb_row = rb // n_b
    total = np.bincount(rb_row, weights=bound, minlength=F.shape[0])
    rr = sorted_distinct(rb_row)
    target = t[rr] / amax[rr]
    tight = np.zeros(F.shape[0], dtype=bool)
    tight[rr] = target >= total[rr] - tl.BUCKET_FLOW_TIGHT * np.maximum(1.0, np.abs(target))
    if not tight[rr].any():
        return False
    tol = tl.BUCKET_FLOW_TIGHT * np.maximum(1.0, bound)
    in_t = tight[row]
    zero = []
    for binds, key, cells_key in (
        (rq <= cv + tol, c, cls[free_idx]),  # every record of Q takes a value of the row
        (cv <= rq + tol, g, gs[free_idx]),  # every record with a value in V is in Q
    ):
        sel = in_t & binds[rb_of]
        if not sel.any():
            continue
        n_key = int(max(key.max(), cells_key.max())) + 1
        member = sorted_distinct(row[sel] * n_key + key[sel])  # distinct (row, class or value)
        which, cand = _cells_of(cells_key, free_idx, member % n_key)
        cand_row = member[which] // n_key
        out = _absent(cand_row, cand, row[in_t], cell[in_t], len(fixed))
        zero.append(cand[out])
    return _fix_zero(fixed, np.concatenate(zero)) if zero else False
