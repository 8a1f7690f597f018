"""Explaining contradictory knowledge: a small set of facts that cannot hold together.

The data constraints alone are always consistent (the original table satisfies them), so
when a model is infeasible some facts are to blame. :func:`explain_infeasibility` finds
an *irreducible* set of them with a deletion filter (Chinneck and Dravnieks, 1991): drop
each fact in turn and keep it out when the rest is still infeasible. What remains is a
conflict in which every fact matters: removing any one of them restores feasibility.
Feasibility of the linear system (invariants, linear facts, x >= 0) is decided by the
HiGHS linear-programming solver through ``scipy.optimize.linprog``; non-linear facts use
cvxpy. Soft facts never conflict.

>>> from maxent_privacy import MaxEntModel, Bucketized, datasets
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                                sa="disease", group="bucket"))
>>> model.add(model.P("Breast Cancer", gender="male") == 0)
>>> model.add(model.P("Breast Cancer", gender="female") == 0)
>>> explain_infeasibility(model)["fact"].tolist()
['P(Breast Cancer | gender=male) == 0', 'P(Breast Cancer | gender=female) == 0']
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.optimize import linprog

from .errors import InfeasibleKnowledge
from .numerics import cell_components

__all__ = ["explain_infeasibility", "explained", "is_feasible"]


def _data_rows(model):
    A, b, _ = model.invariant_matrix(drop_redundant=False)
    return sp.csr_array(A), b


def _feasible(model, facts, A, b, cols, tol) -> bool:
    """Feasibility of data rows ``A x = b`` and the facts, on the cells ``cols``."""
    eq = [f for f in facts if f.sense == "=="]
    ineq = [f for f in facts if f.sense == "<="]
    convex = [f for f in facts if f.sense == "convex"]
    if convex:
        x = model.x
        cons = [A @ x == b, x >= 0] + [f.constraint for f in convex]
        for f in eq:
            cons.append(f.A @ x == f.b)
        for f in ineq:
            cons.append(f.A @ x <= f.b)
        prob = cp.Problem(cp.Minimize(0), cons)
        prob.solve(solver="CLARABEL")
        return prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)
    rows = np.flatnonzero(np.diff(sp.csr_array(A[:, cols]).indptr) > 0)
    A_eq = sp.vstack([A[rows][:, cols]] + [f.A[:, cols] for f in eq], format="csr")
    b_eq = np.concatenate([b[rows]] + [f.b for f in eq])
    A_ub = sp.vstack([f.A[:, cols] for f in ineq], format="csr") if ineq else None
    b_ub = np.concatenate([f.b for f in ineq]) if ineq else None
    res = linprog(
        np.zeros(len(cols)),
        A_ub=A_ub,
        b_ub=b_ub,
        A_eq=A_eq,
        b_eq=b_eq,
        bounds=(0, None),
        method="highs",
        options={"primal_feasibility_tolerance": tol},
    )
    return res.status == 0


def is_feasible(model, facts=None, tol: float = 1e-9) -> bool:
    """Whether the data and the given hard facts (default: all) can hold together."""
    facts = [f for f in (model.facts if facts is None else facts) if f.sense != "soft"]
    A, b = _data_rows(model)
    return _feasible(model, facts, A, b, np.arange(model.n_cells), tol)


def _components(model, facts, A):
    """Connected pieces of cells linked by data rows or facts; each fact's piece."""
    n = model.n_cells
    blocks = [A]
    for f in facts:
        blocks.append(
            sp.csr_array(
                (np.ones(len(f.cells)), (np.zeros(len(f.cells), dtype=int), f.cells)), shape=(1, n)
            )
        )
    return cell_components(blocks, n)


def explain_infeasibility(model, tol: float = 1e-9) -> pd.DataFrame:
    """An irreducible set of facts that contradict the data or each other.

    Returns a DataFrame with one row per fact in the conflict (``fact``, ``sense``,
    ``rows``); empty when the facts are feasible after all. A conflict lies within one
    connected piece of the constraint graph, so each piece is checked alone; within the
    first infeasible piece a deletion filter with halving chunks (drop half the facts
    while the rest stays infeasible, then quarters, ..., then single facts) leaves an
    irreducible set: removing any one of its facts restores feasibility.
    """
    hard = [f for f in model.facts if f.sense != "soft"]
    A, b = _data_rows(model)
    empty = pd.DataFrame({"fact": [], "sense": [], "rows": []})
    if not hard:
        return empty
    if any(f.sense == "convex" for f in hard):
        cols_of = {0: np.arange(model.n_cells)}
        facts_of = {0: hard}
    else:
        lab = _components(model, hard, A)
        facts_of: dict[int, list] = {}
        for f in hard:
            key = int(lab[f.cells[0]]) if len(f.cells) else -1
            facts_of.setdefault(key, []).append(f)
        cols_of = {k: np.flatnonzero(lab == k) for k in facts_of if k >= 0}
        cols_of[-1] = np.zeros(0, dtype=int)
    for k, fs in facts_of.items():
        cols = cols_of[k]

        def feasible(subset, cols=cols):
            if len(cols) == 0:  # facts on no cell: constants that must hold
                return all(
                    (np.abs(f.b) <= tol).all() if f.sense == "==" else (f.b >= -tol).all()
                    for f in subset
                )
            return _feasible(model, subset, A, b, cols, tol)

        if feasible(fs):
            continue
        keep = list(fs)
        chunk = max(1, len(keep) // 2)
        while True:
            i = 0
            while i < len(keep):
                trial = keep[:i] + keep[i + chunk :]
                if trial and not feasible(trial):
                    keep = trial
                else:
                    i += chunk
            if chunk == 1:
                break
            chunk = max(1, chunk // 2)
        return pd.DataFrame(
            {
                "fact": [f.name for f in keep],
                "sense": [f.sense for f in keep],
                "rows": [f.size for f in keep],
            }
        )
    return empty


def explained(model, err: InfeasibleKnowledge) -> InfeasibleKnowledge:
    """``err`` with the conflicting facts named (:func:`explain_infeasibility`), or
    ``err`` itself when no fact is to blame."""
    table = explain_infeasibility(model)
    if table.empty:
        return err
    names = table["fact"].tolist()
    shown = "; ".join(names[:6]) + ("; ..." if len(names) > 6 else "")
    return InfeasibleKnowledge(
        f"{len(names)} fact{'s' if len(names) != 1 else ''} cannot hold together with "
        f"the data: {shown} (see .conflicts)",
        conflicts=table,
    )
