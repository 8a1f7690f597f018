"""Certified posterior intervals: the worst case beside the maximum-entropy estimate.

Maximum entropy gives the least committed belief. :func:`bounds` gives the other end: over
*every* table the model allows (the data constraints and the hard facts that maximum entropy
uses), how low and how high can P(s | QI value), P(s | QI value, group) or P(s | person) go?
The answers are linear programs over the cells of the model, one minimum and one maximum per
(row, value), solved component by component:

* a bucket that no fact touches (one bucketized release) has a closed form: of the n_qb
  records with QI value q and the n_bs records with value s in bucket b, at most
  min(n_qb, n_bs) and at least max(0, n_qb + n_bs - |b|) can coincide; add over buckets;
* a component that linear facts touch is a linear program solved with HiGHS (``highspy``,
  primal simplex warm-started from the previous objective's basis). Every bound carries a
  *dual certificate* that our own arithmetic checks: multipliers y for the equalities, w for
  the inequalities (sign-constrained) and the reduced costs c - A'y - G'w, whose signs make
  the dual objective a bound for every table; ``gap`` is |primal value - dual objective| and
  ``dual_violation`` the largest sign error of a multiplier or reduced cost (both in
  probability units). Many bounds are proved without an LP of their own: a cell that no
  table makes positive is found in bulk (one LP whose optimum 0 certifies a whole set of
  cells), and a bound that a table already seen attains and a simple dual point proves
  (a cover of the target's cells by data rows) is taken from there;
* a component with non-linear convex facts is solved by cvxpy (Clarabel); those bounds are
  the conic solver's answers, not checked by a certificate of ours (``certified`` False).

Soft facts (:func:`maxent_privacy.soft`) are penalties, not walls: a table that violates
them is still allowed, so they are left out of the bounds.

``exact=True`` bounds the probabilities over *integral* tables instead: the adversary's
possible worlds (every assignment of values to people consistent with the releases and the
facts). The LP relaxation is sound but not exact when several releases are pooled or
people are singled out (see :func:`relaxation_gap`); the integer programs are HiGHS MILPs.
Facts are then read as statements about the true table (they must hold in every possible
world); a probability fact that no integral table satisfies leaves the LP bound in place.
A bound whose integer program ran out of time is the LP bound, with ``lower_exact`` or
``upper_exact`` False.

``time_limit`` bounds the whole call: the LP phase first (a bound it does not reach keeps
a trivial but sound one, method "time limit"), then the integer programs in the time left.

Rows are shares of records (``by=None``, ``"group"``, ``"class"``) or individuals
(``by="person"``), read off the same count bounds (:mod:`~maxent_privacy.bounds.frame`).

>>> from maxent_privacy import MaxEntModel, Bucketized, datasets
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                                sa="disease", group="bucket"))
>>> model.add(model.P("Breast Cancer", gender="male") == 0)
>>> b = model.bounds()
>>> [round(float(v), 9) for v in b.loc[("male", "college", "Flu"), ["lower", "upper"]]]
[0.333333333, 0.666666667]
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._validation import ArgumentError
from ..errors import InfeasibleKnowledge
from .arguments import check_bounds_arguments
from .closed_form import Pieces, closed_pieces, components, cut_pieces
from .frame import CERTIFIED, METHODS, assemble
from .lp import (
    ATTAIN,
    INTEGRAL,
    LP,
    POSITIVE,
    Budget,
    Open,
    Seen,
    Stats,
    aggregated_lps,
    cell_caps,
    component_rows,
    covers,
    given_table,
    lp_per_bound,
    lp_solver,
    pinned_lower_bounds,
    store_lp,
    zero_cells,
    zero_upper_bounds,
)
from .progress import BoundsProgress, show_progress
from .targets import data_rows, targets
from .worlds import integral

__all__ = [
    "ATTAIN",
    "BATCH",
    "CERTIFIED",
    "INTEGRAL",
    "METHODS",
    "POSITIVE",
    "bounds",
    "maxent_column",
    "relaxation_gap",
]

#: components smaller than this (cells) are solved together in one LP
BATCH = 2000


# ---------------------------------------------------------------- per component
def _lp_component(pieces: Pieces, idx, cols, rows, exact, budget, stats, rng, start=None):
    """Bounds of the pieces ``idx`` of one component with linear facts (see the module
    docstring for the order: forced zeros, tables seen, aggregated objectives, one LP per
    bound; ``start``: a table of these cells given by the caller, counted as seen when
    it satisfies the rows). Returns, with ``exact``, the step that settles them over
    integral tables (run once every component has its LP bounds), else None. Bounds the
    time limit cut are closed soundly (:meth:`Open.close_open`), method "time limit",
    not exact."""
    E, e, ekind, G, g = rows
    n = len(cols)
    u, arg, data = cell_caps(E, e, ekind)
    lp = LP(E, e, G, g, u)
    lp.budget = budget
    Pl = sp.csr_array(pieces.P[idx][:, cols])
    seen = Seen(Pl, (E, e, G, g), exact, stats)
    solve = lp_solver(lp, seen, stats)
    known = given_table(start, E, e, G, g, seen, stats)

    # 1. cells that no table makes positive, certified in bulk
    w = 1.0 / np.where(np.isfinite(u) & (u > 0), u, 1.0)
    Z, zero_bound, zero_viol = zero_cells(lp, solve, w, n, known)
    stats.zero_cells += int(Z.sum())

    # 2. bounds proved without an LP of their own
    op = Open(len(idx), pieces.enough_hi[idx], pieces.enough_lo[idx])
    in_z = zero_upper_bounds(op, Pl, Z, w, zero_bound, zero_viol)
    pinned_lower_bounds(op, Pl, E, e, ekind, Z, w, zero_bound, zero_viol)
    todo_hi = np.flatnonzero(~in_z)
    if len(todo_hi):
        op.U[todo_hi], op.U_v[todo_hi] = covers(Pl[todo_hi], E, e, ekind, u, arg, data, budget)
    op.settle(seen, stats)

    # 3. aggregated objectives; 4. one LP per bound left
    aggregated_lps(op, Pl, lp, solve, seen, stats, rng)
    lp_per_bound(op, Pl, lp, solve, seen, stats)

    cut = op.close_open(seen)
    store_lp(pieces, idx, op)
    if exact:
        pieces.world_hi[idx], pieces.world_lo[idx] = seen.int_hi, seen.int_lo
    if cut.any():
        stats.cut += int(cut.sum())
        pieces.method[idx[cut]] = 3
        pieces.lo_exact[idx] = pieces.hi_exact[idx] = False
        return None
    if not exact:
        return None

    def settle_integral():
        integral(pieces, idx, Pl, (E, e, G, g, u), Z, seen.int_hi, seen.int_lo, budget, stats, rng)
        pieces.world_hi[idx], pieces.world_lo[idx] = seen.int_hi, seen.int_lo

    return settle_integral


def _not_reached(pieces: Pieces, idx, stats) -> None:
    """Pieces whose LP work the time limit prevented: the trivial bounds (0 below, ``inf``
    above: 1 once a probability), method "time limit", no certificate, not exact."""
    pieces.lo[idx] = pieces.lp_lo[idx] = 0.0
    pieces.hi[idx] = pieces.lp_hi[idx] = np.inf
    pieces.lo_gap[idx] = pieces.hi_gap[idx] = np.inf
    pieces.lo_viol[idx] = pieces.hi_viol[idx] = np.inf
    pieces.method[idx] = 3
    pieces.lo_exact[idx] = pieces.hi_exact[idx] = False
    stats.cut += len(idx)


def _convex_pieces(model, pieces: Pieces, idx, A, b, facts, solver: str, budget, stats) -> None:
    """Pieces of components with non-linear convex facts: one conic program per bound
    (cvxpy, the objective a parameter so the problem compiles once); those the time limit
    does not reach keep the trivial bounds."""
    import cvxpy as cp

    from ..errors import SolverFailed

    x = model.x
    c = cp.Parameter(model.n_cells)
    cons = [sp.csr_matrix(A) @ x == b, x >= 0]
    for f in facts:
        if f.sense == "==":
            cons.append(sp.csr_matrix(f.A) @ x == f.b)
        elif f.sense == "<=":
            cons.append(sp.csr_matrix(f.A) @ x <= f.b)
        elif f.sense == "convex":
            cons.append(f.constraint)
    prob = cp.Problem(cp.Minimize(c @ x), cons)
    for k, i in enumerate(idx):
        if budget.left() <= 0:
            budget.ran_out = True
            _not_reached(pieces, idx[k:], stats)
            idx = idx[:k]
            break
        row = pieces.P[[i]].toarray().ravel()
        for sense in ("lo", "hi"):
            c.value = row if sense == "lo" else -row
            prob.solve(solver=solver)
            if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
                if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
                    raise InfeasibleKnowledge(
                        "the facts contradict the data (no table satisfies them)"
                    )
                raise SolverFailed(f"{solver}: {prob.status} on a bound")
            val = float(row @ np.asarray(x.value))
            if sense == "lo":
                pieces.lo[i] = pieces.lp_lo[i] = val
            else:
                pieces.hi[i] = pieces.lp_hi[i] = val
    pieces.method[idx] = 2
    pieces.lo_gap[idx] = np.nan
    pieces.hi_gap[idx] = np.nan
    pieces.lo_viol[idx] = np.nan
    pieces.hi_viol[idx] = np.nan
    pieces.lo_exact[idx] = False
    pieces.hi_exact[idx] = False


# ---------------------------------------------------------------- public API
def bounds(
    model,
    by: str | None = None,
    values=None,
    exact: bool = False,
    time_limit: float = 60.0,
    solver: str = "CLARABEL",
    seed: int = 0,
    start=None,
    progress=None,
) -> pd.DataFrame:
    """Lower and upper bounds of every posterior over all tables the model allows.

    Parameters
    ----------
    model : MaxEntModel
    by : None, "group", "person" or "class"
        What a row is about. None: P(s | QI value) (``Result.posterior()``); "group":
        P(s | QI value, group). "person": **the individual**, the probability that this
        one person holds s (releases with a person column, pooled releases, people
        singled out with ``model.person``); with ``exact=True``, upper 1 when some
        possible world gives them s (else 0) and lower 1 when every world does (else 0),
        also in words: ``possible`` and ``certain``. "class": one row per person too,
        but the share of their record class (people with the same QI value and groups)
        that holds s, x[c, s] / n_c (what ``by="person"`` gave before; the person
        posterior of maximum entropy is this share). Both follow from the class's counts
        (:mod:`~maxent_privacy.bounds.frame`): upper = min(1, U_c), lower = max(0, L_c -
        (n_c - 1)) for an individual of a class of n_c.
    values : value or list, optional
        Only these sensitive values (default: all).
    exact : bool
        Bounds over integral tables (possible worlds: every assignment of values to people
        consistent with the releases and the facts, read as statements about the true
        table) instead of the LP relaxation; adds ``lp_lower`` and ``lp_upper`` (the
        relaxation) and ``lower_exact``, ``upper_exact`` (that side proved over integral
        tables; a side not proved keeps the LP bound) and ``exact`` (both). The LP bound
        rounded inwards is exact once a verified integral table reaches it; the rest is
        settled by HiGHS integer programs. Without any integral table (facts no count of
        records meets), a warning says so and every bound is the LP's.
    time_limit : float
        Seconds the whole call may take: LPs and integer programs stop at it (the integer
        programs run once every LP bound is found, in the time left). A bound the LP
        phase did not reach is the trivial one (0 below; a cover, else 1, above), with
        ``method`` "time limit", not certified nor exact, and a warning says how many.
    solver : str
        cvxpy solver for components with non-linear convex facts.
    seed : int
        Seeds the aggregated objectives' random weights (the route, not the bounds).
    start : array, optional
        A table of the model (one value per cell, e.g. :attr:`Result.table
        <maxent_privacy.results.Result.table>`, which :meth:`Result.bounds` passes) that
        the LP phase of a large component (``lp.GIVEN_TABLE_CELLS`` cells or more)
        counts as a table seen: where our check finds
        that it satisfies the component's data rows and hard facts, every cell it makes
        positive is known to be possible without an LP, and the bounds it attains are
        settled as by any table. Only the route changes, never a bound (a table that fails
        the check is not used).
    progress : bool or function, optional
        A bar on stderr (components done, LPs and integer programs run, seconds used),
        or a function given each of its lines; default: shown when the components that
        need LPs hold ``progress.PROGRESS_LP_CELLS`` cells or more.

    Returns
    -------
    DataFrame
        Indexed like ``posterior().stack()`` (the QI columns, the group with
        ``by="group"``, or ``person``; then the sensitive value), with columns

        * ``lower``, ``upper``: the bounds (probabilities). A value that no table gives is
          0/0, with ``method`` "impossible"; every (row, value) pair is in the frame;
        * ``records`` (by None or "group"): how many records the row is about;
        * ``method``: "closed form", "LP", "conic" (non-linear convex facts), "time
          limit", "impossible";
        * ``certified``: the dual certificate passed our check (``gap`` and
          ``dual_violation`` at most 1e-6; conic bounds: False); an individual's is their
          class count bound's (in records; 0 where the bound is the trivial 1 or 0);
        * ``gap``: the larger, over the two bounds, of |attained value - dual bound|;
          ``dual_violation``: the larger sign violation of the dual points;
        * with ``exact=True``: see ``exact`` above.

        ``.attrs["certificate"]`` sums up: largest gap and violation, LPs and integer
        programs, bounds settled without an LP, cells proved 0, rows cut, seconds.

    >>> import pandas as pd
    >>> from maxent_privacy import Bucketized, MaxEntModel
    >>> rel = [Bucketized(pd.DataFrame({"pid": m, "q": "x", "g": 1, "s": list("abbccc")}),
    ...                   qi=["q"], sa="s", group="g", person="pid")
    ...        for m in ([3, 4, 5, 6, 0, 1], [3, 4, 5, 6, 1, 2], [3, 4, 5, 6, 0, 2])]
    >>> b = bounds(MaxEntModel(rel), by="person", exact=True).xs("a", level="s")
    >>> b.loc[[0, 3], ["lower", "upper", "possible", "certain", "lp_upper"]]
            lower  upper  possible  certain  lp_upper
    person...
    0         0.0    0.0     False    False       0.5
    3         0.0    1.0      True    False       1.0
    """
    check_bounds_arguments(model, by, values, exact, time_limit, solver, seed, start, progress)
    budget, stats, t0 = Budget(time_limit), Stats(), time.perf_counter()
    tg = targets(model, by, values)
    pieces = _bound_pieces(model, tg, exact, solver, seed, start, progress, budget, stats)
    return assemble(model, tg, pieces, stats, budget, exact, time.perf_counter() - t0)


def _bound_pieces(model, tg, exact, solver, seed, start, progress, budget, stats) -> Pieces:
    """The bounds of :func:`bounds` per piece of the targets ``tg``: closed forms, conic
    programs, LPs (and integer programs with ``exact``), within ``budget``."""
    A, b, kind = data_rows(model)
    hard = _hard_facts(model)  # soft facts are left out (a penalty is not a wall)
    lab = components(model.n_cells, A, hard)
    pieces = _cut(tg, lab)
    has_lin, has_cvx = _fact_components(lab, hard)
    rng = np.random.default_rng(seed)
    closed = closed_pieces(pieces, has_lin | has_cvx, A, b, kind, lab)
    cvx = has_cvx[pieces.comp]
    if cvx.any():
        _convex_pieces(model, pieces, np.flatnonzero(cvx), A, b, hard, solver, budget, stats)
    lp_pieces = np.flatnonzero(~closed & ~cvx)
    if len(lp_pieces):
        data = (A, b, kind, None if start is None else np.asarray(start, dtype=float))
        _lp_pieces(pieces, lp_pieces, lab, data, hard, (exact, progress), budget, stats, rng)
    return pieces


def _cut(tg, lab) -> Pieces:
    """The targets' pieces; an individual's bounds need less of their class's than the
    class's own (:class:`~maxent_privacy.bounds.lp.Open`): a table with a count of 1 above,
    one with n - 1 below."""
    pieces = cut_pieces(tg.T, lab)
    if tg.person:
        pieces.enough_hi[:] = 1.0
        pieces.enough_lo[:] = tg.den[pieces.target] - 1.0
    return pieces


def _hard_facts(model) -> list:
    """The facts that are walls (not soft); those on no cell must hold as constants."""
    hard = [f for f in model.facts if f.sense in ("==", "<=", "convex")]
    for f in hard:
        if len(f.cells) == 0 and f.sense != "convex":
            ok = (np.abs(f.b) <= 1e-9).all() if f.sense == "==" else (f.b >= -1e-9).all()
            if not ok:
                raise InfeasibleKnowledge(f"fact {f.name!r} is false on every table")
    return hard


def _fact_components(lab, hard):
    """Per component: whether linear facts touch it, whether non-linear convex ones do."""
    ncomp = int(lab.max()) + 1 if len(lab) else 0
    has_lin = np.zeros(ncomp, dtype=bool)
    has_cvx = np.zeros(ncomp, dtype=bool)
    for f in hard:
        if len(f.cells):
            (has_cvx if f.sense == "convex" else has_lin)[lab[f.cells[0]]] = True
    return has_lin, has_cvx


def _lp_batches(comps, size) -> list[list[int]]:
    """Components grouped, smallest first, into batches of about ``BATCH`` cells."""
    batches, batch, cells = [], [], 0
    for j in np.argsort(size, kind="stable"):
        batch.append(int(comps[j]))
        cells += int(size[j])
        if cells >= BATCH:
            batches.append(batch)
            batch, cells = [], 0
    if batch:
        batches.append(batch)
    return batches


def _batch_work(pieces, lp_pieces, lab, hard):
    """The LP work in batches: a list of (pieces, cells, hard facts) per batch of
    components, and the cells of all of them."""
    ncomp = int(lab.max()) + 1 if len(lab) else 0
    order = np.argsort(lab, kind="stable")
    starts = np.searchsorted(lab[order], np.arange(ncomp + 1))
    pc = pieces.comp[lp_pieces]
    lp_pieces = lp_pieces[np.argsort(pc, kind="stable")]
    comps, first = np.unique(pieces.comp[lp_pieces], return_index=True)
    pieces_of = dict(zip(comps.tolist(), np.split(lp_pieces, first[1:]), strict=True))
    facts_of: dict[int, list] = {}
    for f in hard:
        if len(f.cells):
            facts_of.setdefault(int(lab[f.cells[0]]), []).append(f)
    # small components share one LP (independent blocks: each bound's objective
    # lives in its own block), which saves the per-LP overhead
    size = starts[comps + 1] - starts[comps]
    work = []
    for batch in _lp_batches(comps, size):
        idx = np.concatenate([pieces_of[j] for j in batch])
        cols = np.concatenate([order[starts[j] : starts[j + 1]] for j in batch])
        work.append((idx, cols, [f for j in batch for f in facts_of.get(j, [])]))
    return work, int(size.sum())


def _lp_pieces(pieces, lp_pieces, lab, data, hard, flags, budget, stats, rng) -> None:
    """Bounds of the pieces of components with linear facts, one LP per batch of them,
    then (``flags``: exact, progress) their integer programs in the time left."""
    A, b, kind, start = data
    exact, progress = flags
    work, cells = _batch_work(pieces, lp_pieces, lab, hard)
    steps = []
    bar = BoundsProgress(show_progress(progress, cells), len(work) * (1 + exact), stats, budget)
    try:
        for idx, cols, fs in work:
            if budget.left() <= 0:  # the time limit cut the LP phase: trivial bounds
                budget.ran_out = True
                _not_reached(pieces, idx, stats)
            else:
                rows = component_rows(cols, A, b, kind, fs)
                given = None if start is None else start[cols]
                step = _lp_component(pieces, idx, cols, rows, exact, budget, stats, rng, given)
                if step is not None:
                    steps.append(step)
            bar.done()
        # possible worlds once every LP bound is found, in the time left
        for step in steps:
            step()
            bar.done()
    finally:
        bar.close()


def relaxation_gap(model, values=None, time_limit: float = 60.0, frame=None) -> pd.DataFrame:
    """(person, value) pairs that the LP relaxation allows but no possible world does.

    The pooled model (and the LP bounds) treat assignments of values to people as
    fractional; an adversary's possible worlds are integral. Each row here is a value
    that the relaxation leaves possible for a person (``lp_upper`` > 0) while every
    integral assignment consistent with the releases and the facts rules it out (exact
    upper bound 0, proved). ``frame`` reuses a ``bounds(model, by="person", exact=True)``
    frame (or ``by="class"``: the same pairs). ``.attrs["undecided"]`` counts the pairs
    whose upper bound was not proved (``time_limit`` seconds in all), so the list may
    miss some.

    >>> import pandas as pd
    >>> from maxent_privacy import Bucketized, MaxEntModel
    >>> rel = [Bucketized(pd.DataFrame({"pid": m, "q": "x", "g": 1,
    ...                                 "s": ["s1", "s2", "s2", "s3", "s3"]}),
    ...                   qi=["q"], sa="s", group="g", person="pid")
    ...        for m in ([3, 4, 5, 0, 1], [3, 4, 5, 1, 2], [3, 4, 5, 0, 2])]
    >>> gap = relaxation_gap(MaxEntModel(rel))
    >>> gap.index.tolist(), gap["lp_upper"].tolist()
    ([(0, 's1'), (1, 's1'), (2, 's1')], [0.5, 0.5, 0.5])
    """
    if frame is None:
        frame = bounds(model, by="person", values=values, exact=True, time_limit=time_limit)
    elif "exact" not in frame.columns:
        raise ArgumentError("frame must come from bounds(..., by='person', exact=True)")
    proved = frame["upper_exact"] if "upper_exact" in frame else frame["exact"]
    allowed = frame["lp_upper"] > CERTIFIED
    gap = frame[allowed & proved & (frame["upper"] <= 0)]
    out = gap[["lp_lower", "lp_upper"]].copy()
    out.attrs["undecided"] = int((allowed & ~proved).sum())
    out.attrs["pairs"] = int(allowed.sum())
    return out


def maxent_column(result, frame: pd.DataFrame, by) -> np.ndarray:
    """The maximum-entropy estimate aligned with a bounds frame (``by="person"`` and
    ``"class"``: the person posterior, which is the class's share)."""
    if by in ("person", "class"):
        post = result.person_posterior().stack()
        return post.reindex(frame.index).fillna(0.0).to_numpy(dtype=float)
    keys = list(frame.index.names)
    cells = result.cell_table()
    if "phantom" in cells.columns:  # counterfeit records are in no row
        cells = cells[~cells["phantom"].to_numpy(dtype=bool)]
    num = cells.groupby(keys, sort=False, observed=True)["x"].sum()
    num = num.reindex(frame.index).fillna(0.0).to_numpy(dtype=float)
    return num / frame["records"].to_numpy(dtype=float)
