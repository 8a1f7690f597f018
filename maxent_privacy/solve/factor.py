"""Sparse factorizations of Newton's Hessian (:mod:`.hessian`), and the choice between them.

Two backends, one interface (``update(U)``, ``solve(g)``, ``budget``: the conjugate-gradient
iterations worth half a refactorization, see :func:`.hessian._pcg`):

* :class:`Qdldl` -- the up-looking LDL' of :mod:`qdldl` (AMD order), column by column. The
  cheapest where the factor stays sparse: a single release's buckets, pieces of a few
  thousand rows.
* :class:`Supernodal` -- CHOLMOD (SuiteSparse, through :mod:`cvxopt`), which factors
  dense trailing blocks ("supernodes") with BLAS. Releases that re-bucketize the same
  people (several releases pooled by person id) make H's graph an expander: every
  fill-reducing order leaves a factor with millions of entries, and a column-by-column
  factorization spends seconds where a supernodal one spends a tenth of that.

Which one pays is measured, not guessed from a row count (:func:`factor`): the first
factorization of a Hessian pattern with at least :data:`SUPERNODAL_MIN_ROWS` rows is
supernodal and timed; when it took under :data:`SUPERNODAL_SURE_SECONDS` the next
factorization of the same pattern is by qdldl, timed too, and the faster one factors the
rest of the solve: on the Hessians of ``python -m benchmarks solvers --sequences`` and
``--random`` the supernodal factor wins by far on re-bucketized sequences, qdldl on
sparse factors (a release whose buckets the facts do not join); the step times:
``python -m benchmarks newton_steps``.

>>> import numpy as np, scipy.sparse as sp
>>> U = sp.csc_array(np.array([[4.0, 1.0], [0.0, 3.0]]))   # upper triangle of H
>>> np.round(Qdldl(U).solve(np.array([1.0, 2.0])), 6).tolist()
[0.090909, 0.636364]
>>> np.round(Supernodal(U).solve(np.array([1.0, 2.0])), 6).tolist()
[0.090909, 0.636364]
"""

from __future__ import annotations

import time

import numpy as np
import qdldl
import scipy.sparse as sp

try:  # CHOLMOD ships in cvxopt's wheels (SuiteSparse and OpenBLAS bundled)
    import cvxopt
    from cvxopt import cholmod

    HAVE_CHOLMOD = True
except ImportError:  # pragma: no cover - cvxopt is a dependency; its absence falls back
    HAVE_CHOLMOD = False

__all__ = ["HAVE_CHOLMOD", "Qdldl", "Supernodal", "factor", "prefer_ldl"]

#: Hessians with fewer rows are factored by qdldl (both take well under a millisecond)
SUPERNODAL_MIN_ROWS = 1000
#: a supernodal factorization at least this slow is one whose fill the supernodes pay
#: for many times over: qdldl is not tried on that pattern (measured on ``python -m
#: benchmarks solvers --sequences``: where qdldl won, CHOLMOD took milliseconds; where
#: CHOLMOD took a tenth of a second or more, the qdldl trial cost seconds per solve pass)
SUPERNODAL_SURE_SECONDS = 0.1
#: most conjugate-gradient iterations preconditioned by an old factorization
PCG_MAX_BUDGET = 200


class Qdldl:
    """LDL' by :mod:`qdldl` of the symmetric matrix with upper triangle ``U`` (csc)."""

    def __init__(self, U):
        self.solver = qdldl.Solver(U, upper=True)
        L = self.solver.factors()[0]
        cc = np.diff(sp.csc_array(L).indptr).astype(float)
        per_iter = 4.0 * (L.nnz + U.nnz) + 10.0 * U.shape[0]
        self.budget = int(min(0.5 * float((cc * cc).sum()) / per_iter, PCG_MAX_BUDGET))

    def update(self, U) -> None:
        self.solver.update(U, upper=True)

    def solve(self, g: np.ndarray) -> np.ndarray:
        return self.solver.solve(g)


class Supernodal:
    """Cholesky by CHOLMOD (supernodal where the factor is dense enough, CHOLMOD's own
    rule) of the symmetric matrix with upper triangle ``U`` (csc); raises
    ``ArithmeticError`` when it is not positive definite (the caller adds a ridge)."""

    def __init__(self, U):
        n = U.shape[0]
        # U's entry (r, c), r <= c, is the lower triangle's (c, r)
        self.rows = cvxopt.matrix(np.repeat(np.arange(n, dtype=np.int64), np.diff(U.indptr)))
        self.cols = cvxopt.matrix(U.indices.astype(np.int64))
        self.n = n
        t = time.perf_counter()
        A = self._matrix(U)
        with _Options():
            self.F = cholmod.symbolic(A, uplo="L")
            cholmod.numeric(A, self.F)
        self.seconds = time.perf_counter() - t
        self.budget = None  # set from the first solve's time (see :meth:`solve`)

    def _matrix(self, U):
        return cvxopt.spmatrix(cvxopt.matrix(U.data), self.rows, self.cols, (self.n, self.n))

    def update(self, U) -> None:
        t = time.perf_counter()
        with _Options():
            cholmod.numeric(self._matrix(U), self.F)
        self.seconds = time.perf_counter() - t

    def solve(self, g: np.ndarray) -> np.ndarray:
        t = time.perf_counter()
        b = cvxopt.matrix(np.array(g, dtype=float))
        with _Options():
            cholmod.solve(self.F, b)
        if self.budget is None:  # a CG iteration: about one solve and a product with H
            per_iter = 2.0 * max(time.perf_counter() - t, 1e-6)
            self.budget = int(min(0.5 * self.seconds / per_iter, PCG_MAX_BUDGET))
        return np.asarray(b).ravel()


class _Options:
    """CHOLMOD's options for one call (``cvxopt.cholmod.options`` is global state)."""

    def __enter__(self):
        self.saved = dict(cholmod.options)
        cholmod.options["supernodal"] = 1  # CHOLMOD decides by flops per factor entry
        cholmod.options["postorder"] = True

    def __exit__(self, *exc):
        cholmod.options.clear()
        cholmod.options.update(self.saved)


def factor(U, state: dict):
    """A factorization of the symmetric matrix with upper triangle ``U`` (csc, sorted),
    refilled when ``state`` holds one of the same pattern; the backend chosen by measured
    time (see the module's docstring). ``state["factor_kind"]`` records the choice;
    ``state["ldl"]`` the factorization and its pattern."""
    try:
        return _factor(U, state)
    except ArithmeticError:
        # CHOLMOD's Cholesky needs H positive definite to rounding; next to the boundary
        # (cells on their way to 0) qdldl's LDL' still factors H without a ridge
        f = Qdldl(U)
        state["factor_kind"] = "qdldl"
        state["ldl"] = (f, U.indptr, U.indices)
        return f


def _factor(U, state: dict):
    old = state.get("ldl")
    same = old is not None and _same_pattern(old[1], old[2], U)
    kind = state.get("factor_kind") if same else None
    if same and kind is not None:
        if kind == "supernodal" or isinstance(old[0], Qdldl):
            old[0].update(U)
            return old[0]
        f = Qdldl(U)  # the pattern fell back to qdldl (see :func:`factor`)
        state["ldl"] = (f, U.indptr, U.indices)
        return f
    if not same:
        state.pop("factor_kind", None)
        state.pop("supernodal_seconds", None)
    if HAVE_CHOLMOD and U.shape[0] >= SUPERNODAL_MIN_ROWS and not same:
        f = Supernodal(U)
        state["supernodal_seconds"] = f.seconds
        if f.seconds >= SUPERNODAL_SURE_SECONDS:
            state["factor_kind"] = "supernodal"
    elif same:  # the pattern's second factorization: qdldl, timed against the first
        t = time.perf_counter()
        f = Qdldl(U)
        fast = time.perf_counter() - t < state.get("supernodal_seconds", np.inf)
        state["factor_kind"] = "qdldl" if fast else "supernodal"
        if not fast:  # keep the supernodal factorization, refilled at this step's values
            old[0].update(U)
            f = old[0]
    else:
        f = Qdldl(U)
        state["factor_kind"] = "qdldl"
    state["ldl"] = (f, U.indptr, U.indices)
    return f


def prefer_ldl(state: dict) -> bool:
    """Switch the pattern factored in ``state`` from CHOLMOD to qdldl's LDL' (a
    supernodal Cholesky of an H next to singular can miss the residual test where LDL'
    passes without a ridge); False when it was not CHOLMOD's."""
    if state.get("factor_kind") == "qdldl" or "ldl" not in state:
        return False
    if not isinstance(state["ldl"][0], Supernodal):
        return False
    state["factor_kind"] = "qdldl"
    return True


def _same_pattern(indptr, indices, U) -> bool:
    return np.array_equal(indptr, U.indptr) and np.array_equal(indices, U.indices)
