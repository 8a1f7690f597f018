"""Stage 1, presolve: fix the cells that every feasible answer fixes, exactly.

Equality rows (the data's invariants and linear equality facts) whose free cells all have
positive coefficients and whose remaining right side is 0 force those cells to 0; a row
with one free cell fixes it. Repeated until nothing changes, then the stronger rules: the
tight upper bound of a fact row, rules added up per condition Qv, the bucket-flow bound of
a fact row, and max-flow with strongly connected components per bucket (exact for the
data rows of one release); for pooled releases, flows per group and per value across
each pair of releases (:mod:`.flows`), then the exact support of the pieces the flows do
not decide exactly (:mod:`.support`). This is what ``P(Breast Cancer | male) = 0`` does
on Figure 1: the women of buckets 1 and 2 are then fixed to Breast Cancer with value
exactly 1.

:class:`FixForcedCells` applies them to a :class:`~.problem.MaxEntProblem` and returns a
:class:`Reduced` problem on the free cells (fixed values moved to the right sides);
``invert`` puts the fixed cells back.

>>> import numpy as np, scipy.sparse as sp
>>> E = sp.csr_array(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]))
>>> presolve_cells(E, np.array([0.0, 2.0]), sp.csr_array((0, 3)), 3).tolist()
[0.0, 0.0, 2.0]
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import InfeasibleKnowledge
from ..numerics import sorted_distinct
from . import tolerances as tl
from .flows import PooledFlows, PooledRows
from .problem import MaxEntProblem
from .support import PieceSupport
from .tight import rect_tight as _rect_tight
from .tight import tight_rows as _tight_rows

__all__ = ["FixForcedCells", "PooledRules", "Reduced", "TightRule", "presolve_cells"]


@dataclass(frozen=True)
class Reduced:
    """The problem on the free cells, as the stages after presolve see it.

    Set by :class:`FixForcedCells`: ``fixed`` (value of every cell, NaN where free),
    ``free`` (global indices of the free cells), ``x`` (fixed values, 0 on free cells),
    ``r`` and ``has_free`` (per data block: class, shared, SA: remaining right sides and
    whether a row still has a free cell), ``Feq, feq, Fin, fin`` (fact rows on the free
    cells, fixed values moved to the right side). Set by the later stages: ``keep``,
    ``D, d, d_block, d_row, in_complex`` (:mod:`.rank`) and ``eq_scale, in_scale``
    (:mod:`.scaling`). ``rules``: cells each rule of presolve fixed at 0 (see
    :class:`FixForcedCells`).
    """

    problem: MaxEntProblem
    fixed: np.ndarray
    free: np.ndarray
    x: np.ndarray
    r: tuple
    has_free: tuple
    Feq: sp.csr_array
    feq: np.ndarray
    Fin: sp.csr_array
    fin: np.ndarray
    keep: tuple | None = None
    D: sp.csr_array | None = None
    d: np.ndarray | None = None
    d_block: np.ndarray | None = None
    d_row: np.ndarray | None = None
    in_complex: np.ndarray | None = None
    eq_scale: np.ndarray | None = None
    in_scale: np.ndarray | None = None
    rules: dict | None = None

    @property
    def n_free(self) -> int:
        return len(self.free)

    def replace(self, **changes) -> Reduced:
        return replace(self, **changes)


class FixForcedCells:
    """Presolve as a stage: ``apply`` fixes forced cells, ``invert`` puts them back.

    ``zeros`` are cells proved 0 after an earlier pass (by the dual's recession
    certificate or an LP); with ``enabled=False`` only those are fixed. ``tol`` is the
    certificate's tolerance: fixed values that break a data row or a fact by more are
    reported as contradictory knowledge.

    The reduced problem's ``rules`` counts the cells each rule fixed at 0 (``zeros`` not
    included): "rows" (a row's remaining count 0, the tight bounds, the bucket flows of one
    release), "flows" (pooled releases, :mod:`.flows`) and "support LP" (:mod:`.support`).

    ``start``: ``presolved`` of an earlier pass on the same problem, where the rules start
    from (what they fixed holds in every table, so a later pass, which only knows more
    zeros, need not find it again: the flows of pooled releases cost seconds a pass).
    After ``apply``, ``presolved`` is this pass's (fixed cells, counts by rule).
    """

    def __init__(self, zeros=(), enabled: bool = True, tol: float = 1e-6, start=None):
        self.zeros = np.asarray(zeros, dtype=int)
        self.enabled = enabled
        self.tol = tol
        self.start = start
        self.presolved = None

    def apply(self, p: MaxEntProblem) -> tuple[Reduced, None]:
        counts = {"flows": 0, "support LP": 0}
        if self.enabled:
            start = None if self.start is None else self.start[0]
            if self.start is not None:
                counts.update(self.start[1])
            fixed = self._presolve(p, counts, start)
            self.presolved = (fixed.copy(), dict(counts))
        else:
            fixed = np.full(p.n_cells, np.nan)
            fixed[self.zeros] = 0.0
        zero = fixed == 0.0
        zero[self.zeros] = False
        rules = {"rows": int(zero.sum()) - counts["flows"] - counts["support LP"], **counts}
        red = reduce_to_free(p, fixed, self.tol).replace(rules=rules)
        return red, red

    def invert(self, solution, red: Reduced):
        x = red.x.copy()
        x[red.free] = solution.x
        solution.x = x
        return solution

    def _presolve(self, p: MaxEntProblem, counts: dict, start=None) -> np.ndarray:
        n = p.n_cells
        blocks = p.data_blocks()
        E = _stack_rows([a for a, _ in blocks] + [p.F_eq], n)
        e = np.concatenate([b for _, b in blocks] + [p.f_eq])
        F_in, f_in = p.F_in, p.f_in
        zero_rows, G, g = sp.csr_array((0, n)), None, None
        if F_in.shape[0]:
            # inequality rows a x <= 0 with a >= 0 force zeros; rows with a <= 0 are G x >= g
            nonneg = np.asarray((F_in < 0).sum(axis=1)).ravel() == 0
            small = np.abs(f_in) <= tl.ZERO_INEQUALITY_RHS
            zero_rows = F_in[nonneg & small & (np.diff(F_in.indptr) > 0)]
            nonpos = np.asarray((F_in > 0).sum(axis=1)).ravel() == 0
            G, g = -F_in[nonpos], -f_in[nonpos]
        if len(self.zeros):
            k = len(self.zeros)
            extra = sp.csr_array((np.ones(k), (np.zeros(k, dtype=int), self.zeros)), shape=(1, n))
            zero_rows = sp.vstack([zero_rows, extra], format="csr")
        # rules of one condition Qv added up: their confidences may add up to 1 on some
        # values, which pins the Qv records to them (exact, as a data row)
        sums = [_group_sums(p, start, grp) for start, grp in p.eq_groups]
        if sums:
            E = _stack_rows([E] + [a for a, _ in sums], n)
            e = np.concatenate([e] + [v for _, v in sums])
        s = p.structure
        cls_t = np.where(s.value_cell, s.cell_class, -1)
        rect = None
        if p.single and (p.F_eq.shape[0] or F_in.shape[0]):
            # the bucket-flow bound on fact rows (equalities, and >= rows as G x >= g)
            extra = [G] if G is not None else []
            Fr = sp.vstack([p.F_eq] + [a for a, _ in sums] + extra, format="csr")
            fr = np.concatenate([p.f_eq] + [v for _, v in sums] + ([g] if G is not None else []))
            rect = (Fr, fr, s.cell_sa, s.sa_n, s.sa_bucket)
        # one release: the bucket flows decide the data rows exactly, so the tight rule
        # only looks at the facts (and their sums)
        n_data = sum(a.shape[0] for a, _ in blocks)
        Ec = sp.csc_array(E)  # the cheap rules' columns, and the flows' Relation rows
        pooled = PooledRows.of(s, Ec, blocks[0][0].shape[0] + blocks[1][0].shape[0])
        # pooled releases: the flows decide what the tight rule would on the data rows
        exact = rect is not None or pooled is not None
        tight = TightRule(cls_t, s.class_n, G, g, n_data if exact else 0)
        rules = None if pooled is None else PooledRules(PooledFlows(pooled), PieceSupport(pooled))
        return presolve_cells(
            E, e, zero_rows, n, tight, rect=rect, pooled=rules, csc=Ec, counts=counts,
            start=start,
        )  # fmt: skip


def _stack_rows(mats: list, n: int) -> sp.csr_array:
    """Row blocks (``n`` columns each) stacked into one CSR matrix, entries in the blocks'
    order (as ``sp.vstack``), with 32-bit indices when they fit: half the memory of 64-bit
    ones, and of the CSC copy made from it.

    >>> a = sp.csr_array(np.array([[1.0, 0.0]]))
    >>> s = _stack_rows([a, sp.csr_array((0, 2)), 2 * a], 2)
    >>> s.toarray().tolist(), s.indices.dtype.name
    ([[1.0, 0.0], [2.0, 0.0]], 'int32')
    """
    mats = [sp.csr_array(a) for a in mats]
    nnz, m = sum(a.nnz for a in mats), sum(a.shape[0] for a in mats)
    idx = np.int32 if max(nnz, n, m) < 2**31 - 1 else np.int64
    data, indices = np.empty(nnz), np.empty(nnz, dtype=idx)
    indptr = np.empty(m + 1, dtype=idx)
    indptr[0] = at = row = 0
    for a in mats:
        data[at : at + a.nnz] = a.data[: a.nnz]
        indices[at : at + a.nnz] = a.indices[: a.nnz]
        indptr[row + 1 : row + 1 + a.shape[0]] = a.indptr[1:] + at
        at, row = at + a.nnz, row + a.shape[0]
    return sp.csr_array((data, indices, indptr), shape=(m, n))


def _group_sums(p: MaxEntProblem, start: int, grp: np.ndarray):
    """The rows of one fact added up per group of rows that share a condition."""
    multi = np.flatnonzero(np.bincount(grp)[grp] > 1)
    size = len(grp)
    Sg = sp.csr_array(
        (np.ones(len(multi)), (pd.factorize(grp[multi])[0], multi)),
        shape=(len(sorted_distinct(grp[multi])), size),
    )
    A = sp.csr_array(p.F_eq[start : start + size])
    return sp.csr_array(Sg @ A), Sg @ p.f_eq[start : start + size]


def reduce_to_free(p: MaxEntProblem, fixed: np.ndarray, tol: float) -> Reduced:
    """The problem on the cells ``fixed`` leaves free (NaN); checks what the fixed
    values imply (no negative count, rows with nothing free already hold)."""
    free = np.isnan(fixed)
    x = np.where(free, 0.0, fixed)
    if (x < -tol).any():
        bad = int(np.argmin(x))
        names = [nm for nm, s in zip(p.rows.names, p.rows.senses, strict=True) if s == "=="]
        raise InfeasibleKnowledge(
            f"the facts force a negative count ({x[bad]:.3g}) on cell {bad}: they contradict "
            "the data",
            conflicts=pd.DataFrame({"fact": names}),
        )
    x = np.maximum(x, 0.0)
    free_idx = np.flatnonzero(free)
    r, has = [], []
    for A, b in p.data_blocks():
        rem = b - A @ x
        h = _has_free(sp.csr_array(A), free)
        if (~h & (np.abs(rem) > tol * np.maximum(1.0, b))).any():
            raise InfeasibleKnowledge("the facts force cell values that the data rule out")
        if _out_of_reach(A, rem, free, tol, -1.0).any():
            raise InfeasibleKnowledge(
                "the facts force cell values that the data rule out (more than a row's "
                "total on its cells)"
            )
        r.append(rem)
        has.append(h)
    Feq, feq = _on_free(p.F_eq, p.f_eq, x, free_idx)
    Fin, fin = _on_free(p.F_in, p.f_in, x, free_idx)
    _check_resolved(p, "==", np.diff(Feq.indptr) == 0, np.abs(feq) > tol)
    _check_resolved(p, "<=", np.diff(Fin.indptr) == 0, -fin > tol)
    # rows no x >= 0 meets, their free cells all of one sign
    reach = _out_of_reach(p.F_eq, feq, free, tol, -1.0) | _out_of_reach(p.F_eq, feq, free, tol)
    _check_resolved(p, "==", reach, reach)
    reach = _out_of_reach(p.F_in, fin, free, tol, -1.0)
    _check_resolved(p, "<=", reach, reach)
    return Reduced(
        problem=p, fixed=fixed, free=free_idx, x=x, r=tuple(r), has_free=tuple(has),
        Feq=Feq, feq=feq, Fin=Fin, fin=fin,
    )  # fmt: skip


def _has_free(A: sp.csr_array, free: np.ndarray) -> np.ndarray:
    """Whether each row of ``A`` has an entry on a free cell (no column slicing).

    >>> import numpy as np, scipy.sparse as sp
    >>> _has_free(sp.csr_array(np.array([[1.0, 0.0], [0.0, 2.0]])), np.array([False, True]))
    array([False,  True])
    """
    seen = np.concatenate([[0], np.cumsum(free[A.indices])])
    return seen[A.indptr[1:]] > seen[A.indptr[:-1]]


def _out_of_reach(A, rem, free: np.ndarray, tol: float, sign: float = 1.0) -> np.ndarray:
    """Rows ``a x = rem`` (or ``<=``) no ``x >= 0`` on the ``free`` cells can meet: with
    ``sign`` -1, every free coefficient >= 0 and ``rem`` below 0; with +1, every free
    coefficient <= 0 and ``rem`` above 0 (beyond ``tol``, relative)."""
    A = sp.csr_array(A)
    if A.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    wrong = (A.data * -sign < 0) & free[A.indices]  # entries of the other sign
    seen = np.concatenate([[0], np.cumsum(wrong)])
    mixed = seen[A.indptr[1:]] > seen[A.indptr[:-1]]
    return ~mixed & (sign * rem > tol * np.maximum(1.0, np.abs(rem)))


def _on_free(F, f, x, free_idx):
    """Fact rows restricted to the free cells, the fixed values moved to the right."""
    if F.shape[0] == 0:
        return sp.csr_array((0, len(free_idx))), np.zeros(0)
    return sp.csr_array(F[:, free_idx]), f - F @ x


def _check_resolved(p: MaxEntProblem, sense: str, empty: np.ndarray, violated) -> None:
    """Fact rows with no free cell left must already hold."""
    bad = np.flatnonzero(empty & violated)
    if not len(bad):
        return
    uniq = sorted(set(p.rows.facts_of(sense, bad)))
    raise InfeasibleKnowledge(
        f"the facts contradict the data: {len(uniq)} fact(s) cannot hold once the data's "
        f"forced values are in ({', '.join(uniq[:5])})",
        conflicts=pd.DataFrame({"fact": uniq}),
    )


# ------------------------------------------------------------------- the rules
@dataclass(frozen=True)
class TightRule:
    """What the tight upper bound rule of :func:`presolve_cells` reads: the class of every
    cell (-1: none) and the classes' totals, rows ``G x >= g`` (None: none) and the first
    row of ``E`` it takes (the rows before it are data rows another rule decides
    exactly; with ``tight_from > 0`` the rule takes them too when that rule cannot run)."""

    cls: np.ndarray | None
    class_n: np.ndarray | None
    G: sp.csr_array | None = None
    g: np.ndarray | None = None
    tight_from: int = 0


@dataclass(frozen=True)
class PooledRules:
    """The rules of pooled releases for :func:`presolve_cells`: ``flows(fixed)``
    (:class:`.flows.PooledFlows`) and ``support(fixed)`` (:class:`.support.PieceSupport`);
    None: not run."""

    flows: object = None
    support: object = None


def presolve_cells(
    E: sp.csr_array,
    e: np.ndarray,
    zero_rows: sp.csr_array,
    n: int,
    tight: TightRule | None = None,
    *,
    rect=None,
    pooled: PooledRules | None = None,
    csc=None,
    counts: dict | None = None,
    start: np.ndarray | None = None,
) -> np.ndarray:
    """Cells fixed by the equality rows ``E x = e`` (and rows forcing zeros), NaN if free.

    With the cell classes (``tight``, :class:`TightRule`: with ``G x >= g`` rows too),
    also the *tight upper bound* rule: a row with nonnegative coefficients can reach at
    most ``sum_c R_c max_{j in c} a_j`` (R_c the class total still free); when its target
    equals that bound, every free cell of those classes whose coefficient is below its
    class's maximum is 0 (``P(s | q) = 1`` or ``>= 1`` puts everyone with q on s).
    ``rect``: the bucket-flow bound's rows and buckets (one release; needs ``tight``).
    ``pooled.flows(fixed)`` (pooled releases, :class:`PooledRules`, see
    :func:`.flows.pooled_flow_zeros`) fixes more cells in place when the other rules stop;
    it returns None when it cannot run, and the tight rule then also takes the data rows.
    ``pooled.support(fixed)`` (pooled releases, :class:`.support.PieceSupport`) fixes the
    zeros the flows cannot see (three releases at once), when the flows stop too. ``csc``:
    ``E`` in CSC form if the caller has it already. ``counts``: the zeros fixed by "flows" and by
    "support LP" are added to it. ``start``: cells already fixed (NaN: free), proved by
    these rules before (an earlier pass of the same problem).
    """
    t = TightRule(None, None) if tight is None else tight
    G, g, cls, class_n, tight_from = t.G, t.g, t.cls, t.class_n, t.tight_from
    flows, support = (None, None) if pooled is None else (pooled.flows, pooled.support)
    fixed = np.full(n, np.nan) if start is None else np.array(start, dtype=float)
    E_t, e_t = sp.csr_array(E[tight_from:]), e[tight_from:]  # rows for the tight rule
    if zero_rows.shape[0]:
        fixed[zero_rows.indices] = 0.0
    cheap = _CheapRules(sp.csr_array(E), e, csc)
    for _ in range(tl.PRESOLVE_MAX_ROUNDS):
        changed = cheap.apply(fixed)
        if cheap.n_free == 0:
            break
        if changed:
            continue  # the cheap rules first, until they stop
        cheap.stale = True  # the rules below change ``fixed`` in place
        if cls is not None:
            changed = _tight_rows(E_t, e_t, G, g, fixed, cls, class_n)
        if rect is not None and not changed:
            changed = _rect_tight(*rect, fixed, cls, class_n)
        if rect is not None and not changed:
            # exact for the data rows: cells no feasible flow of a bucket can use
            changed = _flow_zeros(rect[2], rect[3], fixed, cls, class_n)
            if changed is None:  # fractional totals: the tight rule on the data rows
                changed = tight_from > 0 and _tight_rows(cheap.E, e, G, g, fixed, cls, class_n)
        if flows is not None and not changed:
            # pooled releases: per-group and per-value flows (:mod:`.flows`), exact
            before = _count_zeros(fixed, counts)
            changed = flows(fixed)
            _add_zeros(fixed, counts, "flows", before)
            if changed is None:  # fractional totals: the tight rule on the data rows
                changed = tight_from > 0 and _tight_rows(cheap.E, e, G, g, fixed, cls, class_n)
        if support is not None and not changed:
            # pooled releases: the pieces the flows do not decide exactly (:mod:`.support`)
            before = _count_zeros(fixed, counts)
            changed = support(fixed)
            _add_zeros(fixed, counts, "support LP", before)
        if not changed:
            break
    return fixed


def _count_zeros(fixed: np.ndarray, counts: dict | None) -> int:
    return 0 if counts is None else int(np.count_nonzero(fixed == 0.0))


def _add_zeros(fixed: np.ndarray, counts: dict | None, rule: str, before: int) -> None:
    if counts is not None:
        counts[rule] = counts.get(rule, 0) + _count_zeros(fixed, counts) - before


#: rows per chunk of the cheap rules' tests (8 MB per temporary array)
_CHUNK = 1 << 20


class _CheapRules:
    """The zero and single-cell rules of :func:`presolve_cells`, at a cost per round
    proportional to the entries of the cells fixed since the last round and of their rows:
    per-row counts of free entries and of negative ones, and the remaining right sides
    ``r = e - E x``, are updated from the newly fixed columns (``E`` kept in CSC as well)
    instead of re-slicing ``E``, and only the rows those columns touch are tested again (a
    row the last round tested and left alone cannot fire until one of its cells is fixed).
    The cells fixed since the last round are the ones the rules fixed themselves, unless
    ``stale`` says another rule may have changed ``fixed`` (then one full comparison).
    Each ``r`` is recomputed as the whole row's product, so it equals ``e - E @ x``
    exactly.

    >>> import numpy as np, scipy.sparse as sp
    >>> rules = _CheapRules(sp.csr_array(np.array([[1.0, 1.0], [0.0, 1.0]])), np.array([0.0, 3.0]))
    >>> fixed = np.full(2, np.nan)
    >>> rules.apply(fixed), fixed.tolist(), rules.n_free
    (True, [0.0, 0.0], 0)
    """

    def __init__(self, E: sp.csr_array, e: np.ndarray, Ec: sp.csc_array | None = None):
        self.E, self.e = E, e
        m, n = E.shape
        self.Ec = sp.csc_array(E) if Ec is None else Ec
        self.Et = self.Ec.T  # E' in CSR form (the same arrays): its rows are E's columns
        self.nnz = np.diff(E.indptr)
        neg = E.data < 0
        if neg.any():  # negative entries per row, from the row pointers (no row array)
            seen = np.concatenate([[0], np.cumsum(neg)])
            self.neg = seen[E.indptr[1:]] - seen[E.indptr[:-1]]
        else:
            self.neg = np.zeros(m, dtype=self.nnz.dtype)
        self.free = np.ones(n, dtype=bool)  # free once the last round is done
        self.n_free = n
        self.vals = np.zeros(n)
        self.r = e - 0.0  # e - E @ 0, as a copy
        self.stale = True  # compare with ``fixed`` in full at the next round
        self.new = np.zeros(0, dtype=np.int64)  # cells the last round fixed, not counted yet
        self.first = True

    def _update(self, fixed: np.ndarray) -> np.ndarray | None:
        """Counts and right sides brought up to ``fixed``; the rows to test (sorted; None:
        every row)."""
        m = self.E.shape[0]
        new = self.new
        if self.stale:  # cells another rule fixed
            other = np.flatnonzero(self.free & ~np.isnan(fixed))
            self.free[other] = False
            self.n_free -= len(other)
            new = np.concatenate([new, other])
        self.stale, self.new = False, new[:0]
        first, self.first = self.first, False
        if not len(new):
            return None if first else new
        rows, data, per_cell = _entries(self.Et, new)
        if 8 * len(rows) > m:
            self.nnz -= np.bincount(rows, minlength=m).astype(self.nnz.dtype, copy=False)
            if (data < 0).any():
                self.neg -= np.bincount(rows[data < 0], minlength=m).astype(self.neg.dtype)
            touched = _distinct(rows, m)
        else:
            touched, count = np.unique(rows, return_counts=True)
            self.nnz[touched] -= count.astype(self.nnz.dtype, copy=False)
            if (data < 0).any():
                lower, count = np.unique(rows[data < 0], return_counts=True)
                self.neg[lower] -= count.astype(self.neg.dtype, copy=False)
        vals = fixed[new]
        moved = vals != 0.0
        if moved.any():
            self.vals[new[moved]] = vals[moved]
            dirty = _distinct(rows[np.repeat(moved, per_cell)], m)
            if 8 * len(dirty) > m:  # many rows: one product (the same sums, row by row)
                np.subtract(self.e, self.E @ self.vals, out=self.r)
            else:  # the same sums as the product: entry by entry, in row order
                cols, coef, count = _entries(self.E, dirty)
                terms = coef * self.vals[cols]
                at = np.repeat(np.arange(len(dirty)), count)
                self.r[dirty] = self.e[dirty] - np.bincount(at, terms, len(dirty))
        return None if first else touched

    def _firing(self, act: np.ndarray | None):
        """The rows among ``act`` (None: all) where the zero rule fires, where the single
        rule does, and the latter's remaining sides and thresholds; by chunks of rows, so
        that the temporaries stay small (and their memory is reused, not faulted in)."""
        size = len(self.nnz) if act is None else len(act)
        out = [[], [], [], []]
        for lo in range(0, size, _CHUNK):
            at = slice(lo, lo + _CHUNK) if act is None else act[lo : lo + _CHUNK]
            nnz, r = self.nnz[at], self.r[at]
            thr = np.abs(self.e[at])
            np.maximum(thr, 1.0, out=thr)
            thr *= tl.ZERO_RHS
            live = nnz > 0
            # rows with nonnegative coefficients and nothing left to fill: all zero
            is_zero = live & (self.neg[at] == 0) & (np.abs(r) <= thr)
            # rows with a single free cell: its value is determined
            one = np.flatnonzero(live & (nnz == 1) & ~is_zero)
            for k, part in enumerate((np.flatnonzero(is_zero) + lo, one + lo, r[one], thr[one])):
                out[k].append(part)
        zero, one, r_one, thr_one = (np.concatenate(p) if p else np.zeros(0) for p in out)
        zero, one = zero.astype(np.int64, copy=False), one.astype(np.int64, copy=False)
        if act is not None:
            zero, one = act[zero], act[one]
        return zero, one, r_one, thr_one

    def apply(self, fixed: np.ndarray) -> bool:
        """One round of both rules on ``fixed`` (in place); True when it fixed a cell."""
        act = self._update(fixed)
        zero, one, r_one, thr_one = self._firing(act)
        new = []
        if len(zero):
            cols = _entries(self.E, zero)[0]
            cols = _distinct(cols[np.isnan(fixed[cols])], len(fixed))
            fixed[cols] = 0.0
            new.append(cols)
        if len(one):
            cols, data, _ = _entries(self.E, one)
            on = self.free[cols]
            cols, data = cols[on], data[on]
            value = r_one / data
            value[np.abs(value) <= thr_one] = 0.0
            still = np.isnan(fixed[cols])
            fixed[cols[still]] = value[still]
            new.append(_distinct(cols[still], len(fixed)))
        self.new = np.concatenate(new) if new else np.zeros(0, dtype=np.int64)
        self.free[self.new] = False
        self.n_free -= len(self.new)
        return bool(len(self.new))


def _entries(M: sp.csr_array, sel: np.ndarray):
    """Column, coefficient of every entry of the rows ``sel`` of ``M``, in order, and how
    many each row has: scipy's slicing for many rows, index arithmetic for a few (no
    sparse matrix built, whose checks cost more than the slicing itself).

    >>> M = sp.csr_array(np.array([[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]))
    >>> [a.tolist() for a in _entries(M, np.array([2, 0]))]
    [[0, 0, 1], [3.0, 1.0, 2.0], [1, 2]]
    """
    if len(sel) > _CHUNK // 16:
        sub = M[sel]
        return sub.indices, sub.data, np.diff(sub.indptr)
    start = M.indptr[sel]
    count = M.indptr[np.asarray(sel) + 1] - start
    ends = np.cumsum(count)
    pos = np.arange(ends[-1] if len(ends) else 0) + np.repeat(start - ends + count, count)
    return M.indices[pos], M.data[pos], count


def _distinct(rows: np.ndarray, m: int) -> np.ndarray:
    """The distinct values of ``rows`` (row or cell indices below ``m``), sorted: a mask
    when they are many, else a sort.

    >>> _distinct(np.array([3, 1, 3]), 5).tolist()
    [1, 3]
    """
    if 8 * len(rows) <= m:
        return sorted_distinct(rows)
    seen = np.zeros(m, dtype=bool)
    seen[rows] = True
    return np.flatnonzero(seen)


def _flow_zeros(gs, gs_n, fixed, cls, class_n) -> bool | None:
    """Cells of a single release that no answer to the data rows can make positive.

    Within the QI- and SA-invariants the free cells form a transportation polytope
    (classes supply R_c records, values demand C_s). One feasible flow (max-flow) and the
    strongly connected components of its residual graph decide every cell exactly: a cell
    with zero flow can carry some only along a cycle class -> value -> class ... that
    lowers cells with positive flow, i.e. when its class and value share a component.
    Runs only when the remaining totals are integers (max-flow capacities), else returns
    None; True if it fixed a cell.
    """
    from scipy.sparse.csgraph import connected_components, maximum_flow

    free = np.isnan(fixed) & (cls >= 0)
    if not free.any():
        return False
    vals = np.where(np.isnan(fixed), 0.0, fixed)
    own = cls >= 0
    R = class_n - np.bincount(cls[own], weights=vals[own], minlength=len(class_n))
    C = gs_n - np.bincount(gs, weights=vals, minlength=len(gs_n))
    idx = np.flatnonzero(free)
    used_c, ci = np.unique(cls[idx], return_inverse=True)
    used_s, si = np.unique(gs[idx], return_inverse=True)
    Rc, Cs = R[used_c], C[used_s]
    if (
        np.abs(Rc - np.round(Rc)).max(initial=0) > tl.FLOW_INTEGER
        or np.abs(Cs - np.round(Cs)).max(initial=0) > tl.FLOW_INTEGER
        or Rc.sum() > 2**40
    ):
        return None  # skipped: max-flow needs integer totals
    Rc, Cs = np.round(Rc).astype(np.int64), np.round(Cs).astype(np.int64)
    nc, ns = len(used_c), len(used_s)
    src, sink = nc + ns, nc + ns + 1
    rows = np.concatenate([np.full(nc, src), ci, nc + np.arange(ns)])
    cols = np.concatenate([np.arange(nc), nc + si, np.full(ns, sink)])
    cap = np.concatenate([Rc, Rc[ci], Cs]).astype(np.int32 if Rc.sum() < 2**31 else np.int64)
    graph = sp.csr_matrix((cap, (rows, cols)), shape=(nc + ns + 2, nc + ns + 2))
    flow = maximum_flow(graph, src, sink, method="dinic")
    if flow.flow_value != Rc.sum() or Rc.sum() != Cs.sum():
        return False  # infeasible or unbalanced: left to the solver's diagnosis
    F = sp.csr_matrix(flow.flow)
    f_cell = np.asarray(F[ci, nc + si]).ravel()
    pos = f_cell > 0
    # residual graph on classes and values: c -> s always, s -> c where flow > 0
    r_rows = np.concatenate([ci, nc + si[pos]])
    r_cols = np.concatenate([nc + si, ci[pos]])
    res = sp.csr_matrix((np.ones(len(r_rows)), (r_rows, r_cols)), shape=(nc + ns, nc + ns))
    _, scc = connected_components(res, directed=True, connection="strong")
    zero = ~pos & (scc[ci] != scc[nc + si])
    if not zero.any():
        return False
    fixed[idx[zero]] = 0.0
    return True
