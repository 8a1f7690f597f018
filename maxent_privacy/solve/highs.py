"""One linear program through HiGHS, for the LPs of the solve path and of the conflicts.

``min c'x : A_eq x = b_eq, A_ub x <= b_ub, lo <= x <= hi`` with a status in words
("optimal", "infeasible", "time", or HiGHS's own word) and an optional time limit.

HiGHS's presolve searches for dependent equations; on the rows of pooled and generalized
releases (class rows and value rows that sum to the same totals) that search alone can
take nearly all of an LP's time (``python -m benchmarks infeasible``), and it grows
faster than the rows. This runs HiGHS (``highspy``) with that one rule off, the rest of
presolve on.

>>> import numpy as np, scipy.sparse as sp
>>> A = sp.csr_array(np.array([[1.0, 1.0]]))
>>> status, x = run_lp(np.array([1.0, 2.0]), A, np.array([3.0]))
>>> status, x.tolist()
('optimal', [3.0, 0.0])
>>> run_lp(np.zeros(2), A, np.array([-1.0]))[0]
'infeasible'
"""

from __future__ import annotations

import os
import sys

import numpy as np
import scipy.sparse as sp

__all__ = ["pass_lp", "run_lp", "silent_highs"]

#: HiGHS's presolve rules are bits of ``presolve_rule_off``; this one is the search for
#: dependent equations (``kPresolveRuleDependentEquations``)
DEPENDENT_EQUATIONS = 1 << 10


def silent_highs():
    """A silent ``highspy.Highs`` (the first one of a process prints a banner on fd 1
    before any option can be set: fd 1 is muted meanwhile)."""
    import highspy

    try:
        sys.stdout.flush()
        saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    except OSError:  # no file descriptor 1 to mute
        h = highspy.Highs()
    else:
        try:
            os.dup2(null, 1)
            h = highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)
    h.setOptionValue("output_flag", False)
    return h


def pass_lp(h, M, cost, row_lower, row_upper, col_lower, col_upper, integral=False) -> None:
    """Give ``h`` the program ``min cost'x : row_lower <= M x <= row_upper, col_lower <= x
    <= col_upper`` (all columns integer with ``integral``), ``M`` column by column."""
    import highspy

    Mc = sp.csc_array(M)
    Mc.sort_indices()
    n = Mc.shape[1]
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, Mc.shape[0]
    lp.col_cost_ = np.asarray(cost, dtype=float)
    lp.col_lower_ = np.asarray(col_lower, dtype=float)
    lp.col_upper_ = np.asarray(col_upper, dtype=float)
    lp.row_lower_ = np.asarray(row_lower, dtype=float)
    lp.row_upper_ = np.asarray(row_upper, dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = Mc.indptr.astype(np.int32)
    lp.a_matrix_.index_ = Mc.indices.astype(np.int32)
    lp.a_matrix_.value_ = Mc.data.astype(float)
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, Mc.shape[0]
    if integral:
        lp.integrality_ = [highspy.HighsVarType.kInteger] * n
    h.passModel(lp)


def run_lp(
    c, A_eq, b_eq, A_ub=None, b_ub=None, bounds=(None, None), time_limit=None, tol=None,
    solver=None, duals=False,
):  # fmt: skip
    """(status, x) of ``min c'x`` (``x`` None unless "optimal"); ``bounds``: ``(lo, hi)``
    per column (None: 0 and +inf); ``time_limit`` in seconds (None: none);
    ``tol``: HiGHS's primal feasibility tolerance (None: its default, 1e-7); ``solver``:
    HiGHS's ``solver`` option ("simplex", "ipm", "pdlp"; None: HiGHS's choice).
    ``duals``: (status, x, y) with HiGHS's row duals ``y`` (the rows of ``A_eq`` then
    ``A_ub``; None unless "optimal"; ``c - A'y`` are the reduced costs)."""
    n = len(c)
    lo, hi = bounds
    lo = np.zeros(n) if lo is None else np.asarray(lo, dtype=float)
    hi = np.full(n, np.inf) if hi is None else np.asarray(hi, dtype=float)
    A_ub = sp.csr_array((0, n)) if A_ub is None else sp.csr_array(A_ub)
    b_ub = np.zeros(0) if b_ub is None else np.asarray(b_ub, dtype=float)
    import highspy

    inf = highspy.kHighsInf
    b_eq = np.asarray(b_eq, dtype=float)
    h = silent_highs()
    pass_lp(
        h,
        sp.vstack([sp.csr_array(A_eq), A_ub], format="csr"),
        np.asarray(c, dtype=float),
        np.concatenate([b_eq, np.full(len(b_ub), -inf)]),
        np.concatenate([b_eq, b_ub]),
        lo,
        np.where(np.isfinite(hi), hi, inf),
    )
    h.setOptionValue("presolve_rule_off", DEPENDENT_EQUATIONS)
    if time_limit is not None:
        h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
    if tol is not None:
        h.setOptionValue("primal_feasibility_tolerance", float(tol))
    if solver is not None:
        h.setOptionValue("solver", solver)
    h.run()
    status = h.getModelStatus()
    S = highspy.HighsModelStatus
    if status == S.kOptimal:
        solution = h.getSolution()
        x = np.asarray(solution.col_value)
        return ("optimal", x, np.asarray(solution.row_dual)) if duals else ("optimal", x)
    if status in (S.kInfeasible, S.kUnboundedOrInfeasible):
        word = "infeasible"
    elif status == S.kTimeLimit:
        word = "time"
    else:
        word = h.modelStatusToString(status)
    return (word, None, None) if duals else (word, None)
