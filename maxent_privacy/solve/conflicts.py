"""Explaining contradictory knowledge: a small set of facts that cannot hold together.

The data constraints alone are always consistent (the original table satisfies them), so
when a model is infeasible some facts are to blame. :func:`explain_infeasibility` finds
an *irreducible* set of them with a deletion filter (Chinneck and Dravnieks, 1991): drop
each fact in turn and keep it out when the rest is still infeasible. What remains is a
conflict in which every fact matters: removing any one of them restores feasibility.
Feasibility of the linear system (invariants, linear facts, x >= 0) is decided by the
HiGHS linear-programming solver (:func:`.highs.run_lp`); non-linear
facts use cvxpy. Soft facts never conflict.

Both searches take a ``time_limit`` (seconds, None: none). When ``model.solve()`` finds
no table it explains why within :data:`EXPLAIN_TIME_LIMIT` seconds (or the solve's own
``time_limit`` when smaller): a search cut short keeps what it has proved (a set of facts
that still cannot hold together, though maybe not irreducible; the moves it had time
for), sets ``table.attrs["cut_short"]`` and says so in the error's message.

>>> from maxent_privacy import MaxEntModel, Bucketized, datasets
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                                sa="disease", group="bucket"))
>>> model.add(model.P("Breast Cancer", gender="male") == 0)
>>> model.add(model.P("Breast Cancer", gender="female") == 0)
>>> explain_infeasibility(model)["fact"].tolist()
['P(Breast Cancer | gender=male) == 0', 'P(Breast Cancer | gender=female) == 0']
"""

from __future__ import annotations

import math
import time

import cvxpy as cp
import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import InfeasibleKnowledge
from ..numerics import cell_components
from .highs import run_lp

__all__ = [
    "EXPLAIN_TIME_LIMIT",
    "conflict_moves",
    "explain_infeasibility",
    "explained",
    "is_feasible",
]

#: seconds ``model.solve()`` spends explaining a contradiction (which facts, how far each
#: must move) before it raises; the rest is left out and the message says so
EXPLAIN_TIME_LIMIT = 5.0


def _lp(c, A_eq, b_eq, A_ub, b_ub, deadline, tol=None):
    """(status, x) of one LP by HiGHS, stopped at ``deadline`` (perf_counter, or None)."""
    left = None if deadline is None else deadline - time.perf_counter()
    if left is not None and left <= 0:
        return "time", None
    return run_lp(c, A_eq, b_eq, A_ub, b_ub, time_limit=left, tol=tol)


def _deadline(time_limit):
    return None if time_limit is None else time.perf_counter() + float(time_limit)


def _data_rows(model):
    A, b, _ = model.invariant_matrix(drop_redundant=False)
    return sp.csr_array(A), b


def _feasible(model, facts, A, b, cols, tol, deadline=None) -> bool | None:
    """Feasibility of data rows ``A x = b`` and the facts, on the cells ``cols``; None
    when the ``deadline`` came first."""
    eq = [f for f in facts if f.sense == "=="]
    ineq = [f for f in facts if f.sense == "<="]
    convex = [f for f in facts if f.sense == "convex"]
    if convex:
        return _feasible_convex(model, convex, eq, ineq, A, b, deadline)
    rows = np.flatnonzero(np.diff(sp.csr_array(A[:, cols]).indptr) > 0)
    A_eq = sp.vstack([A[rows][:, cols]] + [f.A[:, cols] for f in eq], format="csr")
    b_eq = np.concatenate([b[rows]] + [f.b for f in eq])
    A_ub = sp.vstack([f.A[:, cols] for f in ineq], format="csr") if ineq else None
    b_ub = np.concatenate([f.b for f in ineq]) if ineq else None
    status, _ = _lp(np.zeros(len(cols)), A_eq, b_eq, A_ub, b_ub, deadline, tol=tol)
    if status == "time":
        return None
    return status == "optimal"


def _feasible_convex(model, convex, eq, ineq, A, b, deadline) -> bool | None:
    x = model.x
    cons = [A @ x == b, x >= 0] + [f.constraint for f in convex]
    for f in eq:
        cons.append(f.A @ x == f.b)
    for f in ineq:
        cons.append(f.A @ x <= f.b)
    prob = cp.Problem(cp.Minimize(0), cons)
    left = {} if deadline is None else {"time_limit": deadline - time.perf_counter()}
    if left and left["time_limit"] <= 0:
        return None
    prob.solve(solver="CLARABEL", **left)
    if prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        return True
    return None if deadline is not None and time.perf_counter() >= deadline else False


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


def _pieces(model, hard, A, first=()) -> list[tuple[np.ndarray, list]]:
    """(cells, facts) of each connected piece that holds a fact; the pieces holding a
    fact named in ``first`` come first."""
    if any(f.sense == "convex" for f in hard):
        return [(np.arange(model.n_cells), hard)]
    lab = _components(model, hard, A)
    facts_of: dict[int, list] = {}
    for f in hard:
        facts_of.setdefault(int(lab[f.cells[0]]) if len(f.cells) else -1, []).append(f)
    out = [
        (np.flatnonzero(lab == k) if k >= 0 else np.zeros(0, dtype=int), fs)
        for k, fs in facts_of.items()
    ]
    first = set(first)
    return sorted(out, key=lambda piece: not any(f.name in first for f in piece[1]))


def _filter(feasible, facts: list) -> tuple[list, bool]:
    """The deletion filter with halving chunks on an infeasible set of ``facts``: (what
    is kept, whether it ran to the end). ``feasible`` returns None when time ran out;
    what is kept then still cannot hold together (each drop was checked)."""
    keep = list(facts)
    chunk = max(1, len(keep) // 2)
    while True:
        i = 0
        while i < len(keep):
            trial = keep[:i] + keep[i + chunk :]
            verdict = feasible(trial) if trial else True
            if verdict is None:
                return keep, False
            if not verdict:
                keep = trial
            else:
                i += chunk
        if chunk == 1:
            return keep, True
        chunk = max(1, chunk // 2)


def explain_infeasibility(
    model, tol: float = 1e-9, time_limit: float | None = None, first=()
) -> pd.DataFrame:
    """An irreducible set of facts that contradict the data or each other.

    Returns a DataFrame with one row per fact in the conflict (``fact``, ``sense``,
    ``rows``); empty when the facts are feasible after all. A conflict lies within one
    connected piece of the constraint graph, so each piece is checked alone (those
    holding a fact named in ``first`` first); within the first infeasible piece a
    deletion filter with halving chunks (drop half the facts while the rest stays
    infeasible, then quarters, ..., then single facts) leaves an irreducible set:
    removing any one of its facts restores feasibility.

    ``time_limit`` (seconds, None: none) bounds the search: when it runs out the table
    holds what was proved so far, a set that cannot hold together but may not be
    irreducible (empty if no infeasible piece was found yet), and
    ``table.attrs["cut_short"]`` is True (``attrs["irreducible"]``: whether the filter
    ran to the end).
    """
    deadline = _deadline(time_limit)
    hard = [f for f in model.facts if f.sense != "soft"]
    A, b = _data_rows(model)
    table = pd.DataFrame({"fact": [], "sense": [], "rows": []})
    table.attrs["cut_short"] = False
    for cols, fs in _pieces(model, hard, A, first) if hard else []:

        def feasible(subset, cols=cols):
            if len(cols) == 0:  # facts on no cell: constants that must hold
                return all(
                    (np.abs(f.b) <= tol).all() if f.sense == "==" else (f.b >= -tol).all()
                    for f in subset
                )
            return _feasible(model, subset, A, b, cols, tol, deadline)

        verdict = feasible(fs)
        if verdict is None:
            table.attrs["cut_short"] = True
            return table
        if verdict:
            continue
        keep, done = _filter(feasible, fs)
        table = pd.DataFrame(
            {
                "fact": [f.name for f in keep],
                "sense": [f.sense for f in keep],
                "rows": [f.size for f in keep],
            }
        )
        table.attrs.update(cut_short=not done, irreducible=done)
        return table
    return table


#: conflicts with more facts than this get no ``move`` (one LP per fact)
MAX_MOVES = 50


def _value_sign(fact) -> float | None:
    """+1 or -1: how the fact's stated constant moves when its right side ``b`` grows (a
    scalar fact comparing an expression with a constant), else None."""
    args = getattr(fact.constraint, "args", ())
    if fact.size != 1 or len(args) != 2:
        return None
    left, right = (not a.variables() for a in args)
    if right and not left:
        return 1.0  # expr - c: b = c
    if left and not right:
        return -1.0  # c - expr: b = -c
    return None


def _move(model, fact, others, A, b, cols, deadline=None) -> tuple[float, float] | None:
    """(min sum |change of fact.b|, the stated constant after it) keeping ``others``;
    (inf, nan) when no change of this fact alone restores feasibility; None when the
    ``deadline`` came first."""
    k = fact.size
    n = len(cols)
    rows = np.flatnonzero(np.diff(sp.csr_array(A[:, cols]).indptr) > 0)
    eq = [g for g in others if g.sense == "=="]
    ineq = [g for g in others if g.sense == "<="]
    shift = sp.hstack([-sp.eye_array(k), sp.eye_array(k)])  # fact.A x - t+ + t-

    def rows_of(fs):
        return [sp.hstack([g.A[:, cols], sp.csr_array((g.size, 2 * k))]) for g in fs]

    own = sp.hstack([fact.A[:, cols], shift])
    data = sp.hstack([A[rows][:, cols], sp.csr_array((len(rows), 2 * k))])
    eq_rows, eq_b = [data, *rows_of(eq)], [b[rows]] + [g.b for g in eq]
    in_rows, in_b = rows_of(ineq), [g.b for g in ineq]
    if fact.sense == "==":
        eq_rows.append(own)
        eq_b.append(fact.b)
    else:
        in_rows.append(own)
        in_b.append(fact.b)
    A_eq, b_eq = sp.vstack(eq_rows, format="csr"), np.concatenate(eq_b)
    A_ub = sp.vstack(in_rows, format="csr") if in_rows else None
    b_ub = np.concatenate(in_b) if in_rows else None
    cost = np.concatenate([np.zeros(n), np.ones(2 * k)])
    status, x = _lp(cost, A_eq, b_eq, A_ub, b_ub, deadline)
    if status == "time":
        return None
    if status != "optimal":
        return math.inf, math.nan
    t = x[n : n + k] - x[n + k :]
    move = float(np.abs(t).sum())
    sign = _value_sign(fact)
    if sign is None:
        return move, math.nan
    # the constant as written is sign * b; the fact holds at b + t
    return move, sign * (float(fact.b[0]) + float(t[0]))


def conflict_moves(model, conflicts: pd.DataFrame, time_limit: float | None = None) -> pd.DataFrame:
    """``conflicts`` (from :func:`explain_infeasibility`) with how far each fact is off.

    ``move``: the smallest total change of the fact's right-hand side (probability units
    for ``P(...)`` facts; summed over the rows of a vector fact) that makes the knowledge
    feasible when the other facts of the conflict stay as they are (a linear program,
    HiGHS; facts outside the conflict are not considered, the model may hold other
    conflicts); infinite when changing this fact alone cannot (a relation between
    expressions may be such); NaN when a fact of the conflict is not linear. ``to``: for a
    fact that compares an expression with a constant, the constant after that change (the
    nearest value that would hold), else NaN. ``time_limit`` (seconds, None: none): facts
    whose LP did not finish in time keep NaN, ``table.attrs["moves_left"]`` counts them
    and ``table.attrs["cut_short"]`` is then True.

    >>> from maxent_privacy import MaxEntModel, Bucketized, datasets
    >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
    ...                                sa="disease", group="bucket"))
    >>> model.add(model.P("Flu", gender="male") == 0.1, name="too few flu")
    >>> table = conflict_moves(model, explain_infeasibility(model))
    >>> [round(float(v), 6) for v in table.loc[0, ["move", "to"]]]  # 1 of 6 men at least
    [0.066667, 0.166667]
    """
    deadline = _deadline(time_limit)
    out = conflicts.copy()
    out.attrs = {**conflicts.attrs, "moves_left": 0}
    out.attrs.setdefault("cut_short", False)
    out["move"] = np.nan
    out["to"] = np.nan
    if out.empty or len(out) > MAX_MOVES:
        return out
    by_name = {f.name: f for f in model.facts}
    facts = [by_name.get(name) for name in out["fact"]]
    if any(f is None or f.sense not in ("==", "<=") for f in facts):
        return out  # a non-linear fact in the conflict: no LP
    A, b = _data_rows(model)
    lab = _components(model, facts, A)
    for i, fact in enumerate(facts):
        if not len(fact.cells):
            continue
        piece = lab[fact.cells[0]]
        cols = np.flatnonzero(lab == piece)
        others = [g for g in facts if g is not fact and len(g.cells) and lab[g.cells[0]] == piece]
        found = _move(model, fact, others, A, b, cols, deadline)
        if found is None:
            out.attrs["moves_left"] += 1
            out.attrs["cut_short"] = True
            continue
        out.loc[out.index[i], ["move", "to"]] = found
    return out


def _cut_short_note(table: pd.DataFrame, seconds: float) -> str:
    """What a time-boxed explanation left out, in words ('' when nothing)."""
    if not table.attrs.get("cut_short"):
        return ""
    what = []
    if table.empty:
        what.append("no conflicting set of facts found yet")
    elif not table.attrs.get("irreducible", True):
        what.append("the facts named cannot hold together but some may not be needed")
    left = table.attrs.get("moves_left", 0)
    if left:
        what.append(f"how far to move {left} of them not computed")
    return (
        f"; the explanation was cut short at its {seconds:g} s limit ({', '.join(what)}): "
        "explain_infeasibility(model) and conflict_moves(model, table) give the whole"
    )


def explained(
    model, err: InfeasibleKnowledge, time_limit: float | None = EXPLAIN_TIME_LIMIT
) -> InfeasibleKnowledge:
    """``err`` with the conflicting facts named (:func:`explain_infeasibility`) and how far
    each is off (:func:`conflict_moves`), or ``err`` itself when no fact is to blame; both
    searches share ``time_limit`` seconds (None: no limit), and the message says what a
    search cut short left out."""
    deadline = _deadline(time_limit)
    hint = [] if err.conflicts is None or "fact" not in err.conflicts else err.conflicts["fact"]
    table = explain_infeasibility(model, time_limit=time_limit, first=list(hint))
    if table.empty:
        if not table.attrs.get("cut_short"):
            return err
        return InfeasibleKnowledge(f"{err}{_cut_short_note(table, time_limit)}", err.conflicts)
    left = None if deadline is None else max(0.0, deadline - time.perf_counter())
    table = conflict_moves(model, table, time_limit=left)
    names = table["fact"].tolist()
    shown = "; ".join(names[:6]) + ("; ..." if len(names) > 6 else "")
    return InfeasibleKnowledge(
        f"{len(names)} fact{'s' if len(names) != 1 else ''} cannot hold together with "
        f"the data: {shown} (see .conflicts){_cut_short_note(table, time_limit)}",
        conflicts=table,
    )
