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

__all__ = ["explain_infeasibility", "is_feasible"]


def _data_rows(model):
    A, b, _ = model.invariant_matrix(drop_redundant=False)
    return A, b


def is_feasible(model, facts=None, tol: float = 1e-9) -> bool:
    """Whether the data and the given hard facts (default: all) can hold together."""
    facts = [f for f in (model.facts if facts is None else facts) if f.sense != "soft"]
    A, b = _data_rows(model)
    eq = [f for f in facts if f.sense == "=="]
    ineq = [f for f in facts if f.sense == "<="]
    convex = [f for f in facts if f.sense == "convex"]
    n = model.n_cells
    A_eq = sp.vstack([A] + [f.A for f in eq], format="csr")
    b_eq = np.concatenate([b] + [f.b for f in eq])
    if convex:
        x = model.x
        cons = [A_eq @ x == b_eq, x >= 0] + [f.constraint for f in convex]
        if ineq:
            cons.append(
                sp.vstack([f.A for f in ineq], format="csr") @ x
                <= np.concatenate([f.b for f in ineq])
            )
        prob = cp.Problem(cp.Minimize(0), cons)
        prob.solve(solver="CLARABEL")
        return prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)
    A_ub = sp.vstack([f.A for f in ineq], format="csr") if ineq else None
    b_ub = np.concatenate([f.b for f in ineq]) if ineq else None
    res = linprog(
        np.zeros(n),
        A_ub=A_ub,
        b_ub=b_ub,
        A_eq=A_eq,
        b_eq=b_eq,
        bounds=(0, None),
        method="highs",
        options={"primal_feasibility_tolerance": tol},
    )
    return res.status == 0


def explain_infeasibility(model) -> pd.DataFrame:
    """An irreducible set of facts that contradict the data or each other.

    Returns a DataFrame with one row per fact in the conflict (``fact``, ``sense``,
    ``rows``); empty when the facts are feasible after all.
    """
    hard = [f for f in model.facts if f.sense != "soft"]
    if is_feasible(model, hard):
        return pd.DataFrame({"fact": [], "sense": [], "rows": []})
    # only facts that share cells (directly or through others) with an infeasible one can
    # matter; the deletion filter below is exact whatever set it starts from
    keep = list(hard)
    for f in list(keep):
        trial = [g for g in keep if g is not f]
        if not is_feasible(model, trial):
            keep = trial
    return pd.DataFrame(
        {
            "fact": [f.name for f in keep],
            "sense": [f.sense for f in keep],
            "rows": [f.size for f in keep],
        }
    )
