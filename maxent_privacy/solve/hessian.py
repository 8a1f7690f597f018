"""The Hessian of the dual (:mod:`.newton`) and its Newton step, by a sparse LDL'.

With the record classes eliminated, the dual's Hessian is ``H = A P A'`` where P is
block diagonal over the classes, ``P_c = diag(x_c) - x_c x_c' / R_c``; so
``H = A diag(x) A' - M diag(1/R) M'`` with ``M = A diag(x) C`` (C the 0/1 cell-to-class
matrix). Its sparsity pattern does not depend on x: :class:`Gram` finds the upper
triangle's pattern once and refills it at every Newton step from x with two weighted
``bincount`` (no sparse product, no sort); :func:`hessian` is the sparse-product form,
used when the pattern would hold too many products, or when many products share each
entry of H (then a product costs as little as a refill, and the pattern is not worth
finding: :func:`hessian_of` decides at the first step). :func:`solve_upper` factors H
(:mod:`.factor`: qdldl's LDL' or CHOLMOD's supernodal Cholesky, whichever the measured
time favours; AMD order: rows coupled with many others, such as facts over whole
populations, are eliminated last) and reuses the symbolic factorization across steps.
Where a factorization is expensive (the random pairing of buckets across two releases
fills the factor), steps are inexact Newton steps by conjugate gradients: preconditioned
by the inverse of H's diagonal blocks, one per bucket (:func:`block_jacobi`; buckets of
different releases couple weakly), or else by the last factor; H is factored (again) only
when they stall.

>>> import numpy as np, scipy.sparse as sp
>>> A = sp.csr_array(np.array([[1.0, 0, 1, 0], [0, 1.0, 0, 1]]))
>>> cls, R, x = np.array([0, 0, 1, 1]), np.array([1.0, 1.0]), np.full(4, 0.5)
>>> gram = Gram.of(A, cls, R)
>>> gram.fill(x).toarray().tolist()        # upper triangle of A P A'
[[0.5, -0.5], [0.0, 0.5]]
>>> bool(np.allclose(hessian(A, x, cls, R).toarray(), [[0.5, -0.5], [-0.5, 0.5]]))
True
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .factor import factor, prefer_ldl

__all__ = ["Gram", "hessian", "hessian_of", "solve_newton", "solve_upper"]

#: :class:`Gram` keeps at most this many products (24 bytes each); beyond, the Hessian is
#: formed by sparse products at every step
GRAM_MAX_PAIRS = 8_000_000
#: up to this many products :class:`Gram` is always used: finding its pattern costs a
#: few dozen of its refills at most, and a refill is faster than sparse products when few
#: products share an entry of H (bucketized releases)
GRAM_SURE_PAIRS = 1_000_000
#: past :data:`GRAM_SURE_PAIRS`, the first step forms H by sparse products and
#: :class:`Gram` is built for the next ones only when there are at most this many products
#: per entry of H's upper triangle. Where many classes meet the same rows (a generalized
#: release with a population: a class's placements span dozens of rows) the products
#: pile up on few entries and sparse products cost as little as a refill (measured on the
#: instances of ``python -m benchmarks adversaries``, ``bounds --generalized`` and
#: ``solvers --sequences``; ``git log -p benchmarks/RESULTS.md``)
GRAM_MAX_SHARE = 6.0
#: ridges tried, relative to the largest diagonal entry, when H is singular
RIDGES = (0.0, 1e-13, 1e-11, 1e-9, 1e-7)
#: conjugate gradients preconditioned by the last factorization are tried before H is
#: factored again only when a refactorization costs at least this many of their
#: iterations (one iteration: a triangular solve pair and a product with H; a small
#: fraction of a refactorization once the factor has filled), see ``_pcg_budget``
PCG_MIN_ITER = 12
#: conjugate gradients are abandoned once ``|H d - g|`` exceeds this multiple of ``|g|``
PCG_DIVERGED = 10.0
#: block-Jacobi conjugate gradients (a block: the rows of one bucket, see
#: :func:`block_jacobi`) get this many iterations before H is factored instead
BJ_MAX_ITER = 100
#: blocks larger than this are not inverted densely: no block-Jacobi step
BJ_MAX_BLOCK = 64
#: block-Jacobi steps are tried only when the buckets' rows form a connected piece of
#: at least this many rows: below, the sparse factorization costs less than the
#: iterations (on the random two-release instances of ``python -m benchmarks solvers
#: --random``; a single release's buckets are pieces of a few rows, facts aside)
BJ_MIN_ROWS = 2500


def _inv(R: np.ndarray) -> np.ndarray:
    return np.where(R > 0, 1.0 / np.where(R > 0, R, 1.0), 0.0)


def hessian(A, x, cls, R, AT=None) -> sp.csc_array:
    """``A P A'`` by sparse products (symmetric, csc). ``AT``: ``A'`` as csr, if kept."""
    A = sp.csr_array(A)
    m = A.shape[1]
    C = sp.csr_array((np.ones(m), np.asarray(cls), np.arange(m + 1)), shape=(m, len(R)))
    Ad = sp.csr_array((A.data * x[A.indices], A.indices, A.indptr), shape=A.shape)
    AT = sp.csr_array(A.T) if AT is None else AT
    M = Ad @ C
    Mr = sp.csr_array((M.data * _inv(R)[M.indices], M.indices, M.indptr), shape=M.shape)
    H = Ad @ AT - Mr @ sp.csr_array(M.T)
    return sp.csc_array((H.data, H.indices, H.indptr), shape=H.shape)  # symmetric


def _unique_inverse(keys: np.ndarray, bound: int, first: bool = False):
    """``np.unique(keys, return_inverse=True)`` for keys in ``[0, bound)``: one sort of
    the keys packed with their positions (faster than an argsort); with
    ``first``, also the position of each unique key's first occurrence."""
    P = len(keys)
    shift = max(1, (P - 1).bit_length())
    if P == 0 or max(1, bound - 1).bit_length() + shift > 62:
        u, at, inv = np.unique(keys, return_index=True, return_inverse=True)
        return (u, inv.ravel(), at) if first else (u, inv.ravel())
    packed = np.sort((keys.astype(np.int64) << shift) | np.arange(P, dtype=np.int64))
    k = packed >> shift
    new = np.empty(P, dtype=bool)
    new[0] = True
    np.not_equal(k[1:], k[:-1], out=new[1:])
    inv = np.empty(P, dtype=np.int64)
    pos = packed & ((1 << shift) - 1)
    inv[pos] = np.cumsum(new) - 1
    return (k[new], inv, pos[new]) if first else (k[new], inv)


def _sorted_unique_inverse(keys: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_unique_inverse` without a sort when the keys are already non-decreasing
    (rows in order, cells sorted by class)."""
    if len(keys) < 2 or not (keys[1:] >= keys[:-1]).all():
        return _unique_inverse(keys, bound)
    new = np.empty(len(keys), dtype=bool)
    new[0] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    return keys[new], np.cumsum(new) - 1


def _pairs_within(indptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (p, q), p <= q, of positions in the same group (groups given by indptr)."""
    E = int(indptr[-1])
    pos = np.arange(E)
    count = np.repeat(indptr[1:], np.diff(indptr)) - pos  # partners at or after p
    first = np.repeat(pos, count)
    start = np.cumsum(count) - count
    return first, first + (np.arange(len(first)) - np.repeat(start, count))


class _Layout:
    """A's entries grouped by cell (``Ac``, ``k1`` rows per cell) and its (row, class)
    entries, M's (``m_row``, ``m_cls``, ``m_of``: M's entry of each of A's, ``k2`` rows per
    class); ``pairs``: the products of :class:`Gram`'s pattern."""

    def __init__(self, A, cls, R):
        A = sp.csr_array(A, copy=True)
        A.sum_duplicates()
        self.n, self.C = A.shape[0], len(R)
        cls = np.asarray(cls, dtype=np.int64)
        self.Ac = sp.csc_array(A)  # entries grouped by cell, rows sorted
        self.Ac.sort_indices()
        self.k1 = np.diff(self.Ac.indptr)
        self.coo = A.tocoo()
        # M: one entry per (row, class) met by A
        mkey, self.m_of = _sorted_unique_inverse(
            self.coo.row.astype(np.int64) * self.C + cls[self.coo.col], self.n * self.C
        )
        self.m_row, self.m_cls = mkey // self.C, mkey % self.C
        self.k2 = np.bincount(self.m_cls, minlength=self.C)
        self.pairs = int((self.k1 * (self.k1 + 1)).sum() + (self.k2 * (self.k2 + 1)).sum()) // 2


@dataclass(frozen=True)
class _Entries:
    """A's entries (value, cell) and the entry of M each adds to."""

    a: np.ndarray
    cell: np.ndarray
    m_of: np.ndarray


@dataclass(frozen=True)
class _CellProducts:
    """H1's products ``a_ij a_kj x_j``: the cell j, the coefficient ``a_ij a_kj`` and the
    entry of H's upper triangle each lands in."""

    cell: np.ndarray
    coef: np.ndarray
    pos: np.ndarray


@dataclass(frozen=True)
class _ClassProducts:
    """H2's products ``M_ic M_kc / R_c``: the two entries of M, ``1 / R_c`` and the entry of
    H's upper triangle each lands in."""

    qa: np.ndarray
    qb: np.ndarray
    inv_R: np.ndarray
    pos: np.ndarray


class Gram:
    """The upper triangle of ``A P A'`` (csc, sorted, fixed pattern), refilled from x.

    ``H1 = A diag(x) A'`` has one product ``a_ij a_kj x_j`` per pair of rows meeting in
    cell j; ``H2 = M diag(1/R) M'`` one ``M_ic M_kc / R_c`` per pair of rows meeting in
    class c. Both lists, and where each product lands, are found once (:meth:`of`);
    :meth:`fill` adds them up with ``bincount``.
    """

    def __init__(self, n, rows, indptr, entries: _Entries, h1: _CellProducts, h2: _ClassProducts):
        self.n, self.rows, self.indptr = n, rows, indptr  # the upper triangle's pattern
        self.a, self.cell, self.m_of = entries.a, entries.cell, entries.m_of
        self.p1, self.c1, self.pos1 = h1.cell, h1.coef, h1.pos
        self.qa, self.qb, self.r2, self.pos2 = h2.qa, h2.qb, h2.inv_R, h2.pos
        self.n_m = int(self.m_of.max()) + 1 if len(self.m_of) else 0

    @classmethod
    def of(cls_, A, cls, R, max_pairs: int | None = None, layout=None) -> Gram | None:
        """The pattern of ``A P A'``; None when it holds more than ``max_pairs`` products
        (default :data:`GRAM_MAX_PAIRS`). ``layout``: the :class:`_Layout` of the same
        arguments, when already computed."""
        max_pairs = GRAM_MAX_PAIRS if max_pairs is None else max_pairs
        L = _Layout(A, cls, R) if layout is None else layout
        if L.pairs > max_pairs:
            return None
        n, C, Ac, m_row, m_cls = L.n, L.C, L.Ac, L.m_row, L.m_cls
        f1, s1 = _pairs_within(Ac.indptr)
        cell = np.repeat(np.arange(Ac.shape[1]), L.k1)
        lo1, hi1 = Ac.indices[f1], Ac.indices[s1]
        # M's entries grouped by class (rows stay sorted): a csr -> csc counting sort
        order = sp.csr_array(
            (
                np.arange(len(m_row), dtype=float),
                m_cls,
                np.r_[0, np.cumsum(np.bincount(m_row, minlength=n))],
            ),
            shape=(n, C),
        )
        by_cls = sp.csc_array(order).data.astype(np.int64)
        f2, s2 = _pairs_within(np.r_[0, np.cumsum(L.k2)])
        qa, qb = by_cls[f2], by_cls[s2]
        lo2, hi2 = np.minimum(m_row[qa], m_row[qb]), np.maximum(m_row[qa], m_row[qb])
        keys = np.concatenate([hi1 * n + lo1, hi2 * n + lo2])  # column-major, upper
        u, pos = _unique_inverse(keys, n * n)
        indptr = np.r_[0, np.cumsum(np.bincount(u // n, minlength=n))]
        return cls_(
            n, u % n, indptr,
            _Entries(L.coo.data, L.coo.col, L.m_of),
            _CellProducts(cell[f1], Ac.data[f1] * Ac.data[s1], pos[: len(f1)]),
            _ClassProducts(qa, qb, _inv(R)[m_cls[qa]], pos[len(f1) :]),
        )  # fmt: skip

    def fill(self, x: np.ndarray) -> sp.csc_array:
        """The upper triangle of ``A P A'`` at x."""
        M = np.bincount(self.m_of, weights=self.a * x[self.cell], minlength=self.n_m)
        nnz = len(self.rows)
        data = np.bincount(self.pos1, weights=self.c1 * x[self.p1], minlength=nnz)
        data -= np.bincount(self.pos2, weights=M[self.qa] * M[self.qb] * self.r2, minlength=nnz)
        U = sp.csc_array((data, self.rows, self.indptr), shape=(self.n, self.n))
        U.has_sorted_indices = True  # (rows sorted by construction)
        return U


def column_kinds(A) -> tuple[np.ndarray, np.ndarray]:
    """(kind of each column of ``A``, one column of each kind): columns with the same
    entries (rows and coefficients) are one kind. The joint cells of generalized releases
    repeat a few row patterns many times (three overlapping Mondrian releases of 2,000
    people: 1,537,449 cells, 192,821 kinds).

    >>> A = sp.csc_array(np.array([[1.0, 0, 1, 1], [1, 1, 1, 0]]))
    >>> [k.tolist() for k in column_kinds(A)]
    [[2, 1, 2, 0], [3, 1, 0]]
    """
    A = sp.csc_array(A, copy=True)
    A.sum_duplicates()  # (rows sorted)
    n = A.shape[1]
    count = np.diff(A.indptr)
    if len(A.data) and (A.data == A.data[0]).all():
        values, n_values = np.zeros(len(A.data), dtype=np.int64), 1
    else:
        _, values = np.unique(A.data, return_inverse=True)
        n_values = int(values.max(initial=0)) + 1
    # each entry as a number in [1, width); a column: its count, then its entries in turn,
    # packed into one key while it fits in 62 bits, re-numbered (kinds so far) otherwise
    width = (A.shape[0] + 1) * n_values + 1
    longest = int(count.max(initial=0))
    kind, bound = count.astype(np.int64), longest + 1
    starts = A.indptr[:-1]
    for t in range(longest):
        has = count > t
        entry = np.zeros(n, dtype=np.int64)
        at = starts[has] + t
        entry[has] = A.indices[at].astype(np.int64) * n_values + values[at] + 1
        kind, bound = kind * width + entry, bound * width
        if (bound * width).bit_length() > 62 or t == longest - 1:
            _, kind, first = _unique_inverse(kind, bound, first=True)
            bound = len(first)
    if longest == 0:  # every column empty: one kind
        _, kind, first = _unique_inverse(kind, bound, first=True)
    return kind, first


class _Products:
    """:func:`hessian` at every step (upper triangle), when :class:`Gram` declines: ``A
    diag(x) A'`` over the kinds of columns (:func:`column_kinds`: cells with the same rows
    add up first) and ``M diag(1/R) M'`` from M's entries added up by ``bincount``."""

    def __init__(self, A, cls, R, layout: _Layout | None = None):
        self.L = _Layout(A, cls, R) if layout is None else layout
        self.R = R
        self.kind, first = column_kinds(self.L.Ac)
        self.K = sp.csr_array(self.L.Ac[:, first])  # one column per kind
        self.KT = sp.csr_array(self.K.T)

    def fill(self, x: np.ndarray) -> sp.csc_array:
        L, K = self.L, self.K
        xk = np.bincount(self.kind, weights=x, minlength=K.shape[1])
        H1 = sp.csr_array((K.data * xk[K.indices], K.indices, K.indptr), shape=K.shape) @ self.KT
        m = np.bincount(L.m_of, weights=L.coo.data * x[L.coo.col], minlength=len(L.m_row))
        where, shape = (L.m_row, L.m_cls), (L.n, L.C)
        M = sp.csr_array((m, where), shape=shape)
        Mr = sp.csr_array((m * _inv(self.R)[L.m_cls], where), shape=shape)
        return sp.triu(H1 - Mr @ sp.csr_array(M.T), format="csc")


class _Measured:
    """Sparse products at the first step; then a :class:`Gram` when H's entries hold few
    products each (:data:`GRAM_MAX_SHARE`), else sparse products again."""

    def __init__(self, A, cls, R, layout: _Layout):
        self.products = _Products(A, cls, R, layout)
        self.args = (A, cls, R)  # None once decided
        self.gram = None

    def fill(self, x: np.ndarray) -> sp.csc_array:
        if self.gram is not None:
            return self.gram.fill(x)
        U = self.products.fill(x)
        if self.args is not None:
            layout = self.products.L
            if layout.pairs <= GRAM_MAX_SHARE * max(U.nnz, 1):
                self.gram = Gram.of(*self.args, layout=layout)
                self.products = None
            self.args = None
        return U


def hessian_of(A, cls, R):
    """What gives the upper triangle of ``A P A'`` at x (``.fill(x)``): a :class:`Gram`
    up to :data:`GRAM_SURE_PAIRS` products, sparse products past :data:`GRAM_MAX_PAIRS`,
    and in between whichever the first step's Hessian favours (:class:`_Measured`)."""
    layout = _Layout(A, cls, R)
    if layout.pairs > GRAM_MAX_PAIRS:
        return _Products(A, cls, R, layout)
    if layout.pairs <= GRAM_SURE_PAIRS:
        return Gram.of(A, cls, R, layout=layout)
    return _Measured(A, cls, R, layout)


def solve_newton(H, g, state=None):
    """Solve ``H d = g`` for a symmetric positive (semi)definite H (see :func:`solve_upper`)."""
    return solve_upper(sp.triu(H, format="csc"), g, state)


def solve_upper(U, g, state=None, rtol: float = 0.0, blocks=None):
    """Solve ``H d = g``, H symmetric positive (semi)definite given by its upper triangle
    ``U`` (csc); a small ridge when H is singular (a row implied by the others).

    With ``rtol`` > 0 (an inexact Newton step: ``|H d - g| <= rtol |g|``) and a
    factorization of an earlier step's H in ``state``, conjugate gradients preconditioned
    by that factorization are tried first (:func:`_pcg`); H is factored again only when
    they do not get there in half a refactorization's work (:func:`_pcg_budget`).
    With ``blocks`` (a label per row: the rows of one bucket share one), conjugate
    gradients preconditioned by the inverse of H's diagonal blocks come first
    (:func:`block_jacobi`): across releases the buckets couple weakly, so a few dozen
    iterations reach ``rtol`` with no factorization at all; once they fail, the rest of
    the solve factors H (``state`` remembers).

    A singular H means a fact (or data row) is implied by the rest on the free cells;
    the system stays consistent and any solution moves x the same way, so the ridge only
    picks one. The LDL' factorization decides, and its residual is checked. ``state`` (a
    dict kept across the Newton steps) keeps the ridge that worked and the symbolic
    factorization, which later steps with the same pattern only refill. None when no
    ridge gives a descent direction.
    """
    n = U.shape[0]
    if n == 0:
        return np.zeros(0)
    U = sp.csc_array(U)
    diag = U.diagonal()
    if (diag <= 0).any():
        # a row whose cells are whole classes of one cell each has no curvature: x cannot
        # move it. Solve without it
        keep = np.flatnonzero(diag > 0)
        d = np.zeros(n)
        if len(keep):
            sub_blocks = None if blocks is None else np.asarray(blocks)[keep]
            sub = solve_upper(sp.csc_array(U[keep][:, keep]), g[keep], state, rtol, sub_blocks)
            if sub is None:
                return None
            d[keep] = sub
        return d
    state = {} if state is None else state
    diag_max = max(1.0, float(np.abs(diag).max(initial=0.0)))
    gnorm = max(float(np.abs(g).max(initial=0.0)), 1e-300)
    U.sort_indices()
    if rtol > 0 and blocks is not None and state.get("block_jacobi", True):
        d = _block_pcg(U, diag, g, blocks, rtol, state)
        if d is not None:
            return d
        state["block_jacobi"] = False  # the blocks do not precondition this H well
    if rtol > 0:  # (a singular H's system is consistent: CG still gets there)
        d = _pcg(U, diag, g, state, rtol)
        if d is not None:
            return d
    H = _operator(U, diag)
    on_diag = U.indptr[1:] - 1  # sorted upper triangle, diagonal present: last of each column

    def attempt(Ur, ridge):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                d = _ldl(Ur, state).solve(g)
            except Exception:
                return None
        if not np.all(np.isfinite(d)):
            return None
        err = float(np.abs(H.matvec(d) + ridge * d - g).max(initial=0.0))
        return d if err <= 1e-8 * gnorm and float(g @ d) > 0 else None

    for k in range(state.get("ridge", 0), len(RIDGES)):
        ridge = RIDGES[k] * diag_max
        Ur = U
        if ridge:
            Ur = sp.csc_array((U.data.copy(), U.indices, U.indptr), shape=U.shape)
            Ur.data[on_diag] += ridge
        d = attempt(Ur, ridge)
        if d is None and not ridge and prefer_ldl(state):
            d = attempt(Ur, ridge)  # CHOLMOD's Cholesky lost H's smallest pivots: LDL'
        if d is not None:
            state["ridge"] = k  # the next Newton step starts from this ridge
            return d
    return None


def _same_pattern(indptr, indices, U) -> bool:
    """Whether ``U`` (csc, sorted) has the pattern ``(indptr, indices)``."""
    return np.array_equal(indptr, U.indptr) and np.array_equal(indices, U.indices)


def _operator(U, diag) -> spla.LinearOperator:
    """H (symmetric) as an operator, from its upper triangle ``U`` (csc)."""
    n = U.shape[0]
    UT = sp.csr_array((U.data, U.indices, U.indptr), shape=(n, n))  # U' as csr
    return spla.LinearOperator((n, n), matvec=lambda v: U @ v + UT @ v - diag * v, dtype=float)


def _cg(H, g, M, rtol: float, maxiter: int) -> np.ndarray | None:
    """Preconditioned conjugate gradients for ``H d = g`` to ``|H d - g| <= rtol |g|``;
    None when they do not get there in ``maxiter`` iterations or diverge. Each iterate
    is a descent direction (``g'd > 0``), so the line search accepts any."""
    gnorm = float(np.linalg.norm(g))

    def diverged(d):  # a tiny pivot (singular H) can blow up the iterates: stop early
        if np.linalg.norm(H.matvec(d) - g) > PCG_DIVERGED * gnorm:
            raise _Diverged

    try:
        d, info = spla.cg(H, g, rtol=rtol, atol=0.0, maxiter=maxiter, M=M, callback=diverged)
    except _Diverged:
        return None
    if info != 0 or not np.all(np.isfinite(d)) or not float(g @ d) > 0:
        return None
    return d


class _Diverged(Exception):
    """Conjugate gradients left the right side far behind (see :func:`_cg`)."""


def _pcg(U, diag, g, state: dict, rtol: float):
    """``H d = g`` by conjugate gradients preconditioned by the factorization kept in
    ``state`` (an earlier Newton step's H, same pattern); None when there is none, when
    a refactorization is cheaper, or when the relative residual ``rtol`` is not reached
    in the budget of iterations."""
    old = state.get("ldl")
    if old is None or not _same_pattern(old[1], old[2], U):
        return None
    maxiter = _pcg_budget(old[0])
    if maxiter < PCG_MIN_ITER:
        return None  # a refactorization is cheaper
    M = spla.LinearOperator(U.shape, matvec=old[0].solve, dtype=float)
    return _cg(_operator(U, diag), g, M, rtol, maxiter)


def _block_pcg(U, diag, g, blocks, rtol: float, state: dict):
    """``H d = g`` by conjugate gradients preconditioned by :func:`block_jacobi` (its
    structure kept in ``state`` across steps with the same pattern); None when the blocks
    are too large or ``rtol`` is not reached in :data:`BJ_MAX_ITER` iterations."""
    bj = state.get("bj")
    if bj is None or not bj.fits(U):
        bj = state["bj"] = _BlockJacobi.of(U, blocks)
    if bj.M is None:
        return None
    return _cg(_operator(U, diag), g, bj.inverse(U), rtol, BJ_MAX_ITER)


def block_jacobi(U, blocks) -> sp.csr_array | None:
    """The (pseudo-)inverse of the diagonal blocks of H (upper triangle ``U``, csc): rows
    with the same label in ``blocks`` form a block; None when one has more than
    :data:`BJ_MAX_BLOCK` rows.

    >>> H = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 4.0]])
    >>> M = block_jacobi(sp.csc_array(np.triu(H)), np.array([0, 0, 1]))
    >>> np.round(M.toarray(), 4).tolist()
    [[0.6667, -0.3333, 0.0], [-0.3333, 0.6667, 0.0], [0.0, 0.0, 0.25]]
    """
    bj = _BlockJacobi.of(U, blocks)
    return None if bj.M is None else bj.inverse(U)


class _BlockJacobi:
    """Where each entry of U goes in the dense diagonal blocks (one batch per block size)
    and where each block entry goes in the sparse inverse; :meth:`inverse` refills them."""

    def __init__(self, indptr, indices, batches, M, perm):
        self.indptr, self.indices = indptr, indices  # U's pattern
        self.batches = batches  # per size k: (k, number of blocks, U entries, flat, flat')
        self.M, self.perm = M, perm  # the inverse's pattern; its data from the batches

    def fits(self, U) -> bool:
        return _same_pattern(self.indptr, self.indices, U)

    @classmethod
    def of(cls, U, blocks) -> _BlockJacobi:
        n = U.shape[0]
        _, lab = np.unique(np.asarray(blocks), return_inverse=True)
        lab = lab.ravel()
        size = np.bincount(lab, minlength=1)
        if size.max(initial=0) > BJ_MAX_BLOCK:
            return cls(U.indptr, U.indices, [], None, None)
        order = np.argsort(lab, kind="stable")
        start = np.cumsum(size) - size
        pos = np.empty(n, dtype=np.int64)
        pos[order] = np.arange(n) - np.repeat(start, size)
        col = np.repeat(np.arange(n), np.diff(U.indptr))  # csc: the column of each entry
        row = U.indices
        entry = np.flatnonzero(lab[row] == lab[col])
        r, c = row[entry], col[entry]
        batches, rows, cols = [], [], []
        for k in np.unique(size):
            ids = np.flatnonzero(size == k)
            at = np.full(len(size), -1)
            at[ids] = np.arange(len(ids))
            on = at[lab[r]] >= 0
            base = at[lab[r[on]]] * k * k
            flat, flat_t = base + pos[r[on]] * k + pos[c[on]], base + pos[c[on]] * k + pos[r[on]]
            batches.append((int(k), len(ids), entry[on], flat, flat_t))
            member = order[start[ids][:, None] + np.arange(k)[None, :]]
            rows.append(np.repeat(member, k, axis=1).ravel())
            cols.append(np.tile(member, (1, k)).ravel())
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        M = sp.csr_array((np.arange(len(rows), dtype=float), (rows, cols)), shape=(n, n))
        return cls(U.indptr, U.indices, batches, M, M.data.astype(np.int64))

    def inverse(self, U) -> sp.csr_array:
        """The block inverse at U's values (eigenvalues below 1e-12 of the block's
        largest taken as 0: a pseudo-inverse)."""
        parts = []
        for k, nb, entry, flat, flat_t in self.batches:
            B = np.zeros(nb * k * k)
            B[flat] = U.data[entry]
            B[flat_t] = U.data[entry]
            w, V = np.linalg.eigh(B.reshape(nb, k, k))
            big = w > 1e-12 * np.maximum(w.max(axis=1, keepdims=True), 1e-300)
            winv = np.where(big, 1.0 / np.where(big, w, 1.0), 0.0)
            parts.append(np.einsum("bij,bj,bkj->bik", V, winv, V).ravel())
        M = self.M.copy()
        M.data = np.concatenate(parts)[self.perm]
        return M


def _pcg_budget(f) -> int:
    """Conjugate-gradient iterations worth half a refactorization: the factorization's
    own estimate (:mod:`.factor`; 0 until it is known)."""
    return f.budget or 0


def _ldl(U, state: dict):
    """The factorization of the symmetric matrix whose upper triangle is ``U`` (csc,
    sorted, diagonal present): :func:`.factor.factor` (qdldl or supernodal CHOLMOD, by
    measured time), refilled when ``state`` holds one of the same pattern. Raises when U
    cannot be factored (a singular H: the caller tries the next ridge; a failed first
    analysis is not kept, so no factorization is spent on a matrix that is not used)."""
    return factor(U, state)
