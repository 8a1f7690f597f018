"""The linear programs with certificates (HiGHS) and the steps of one component's LP work.

:class:`LP` is a component's program ``min c'x : E x = e, G x <= g, x >= 0`` kept warm
between objectives, with our own check of a dual point (:meth:`LP.lower_certificate`).
The steps that settle a component's bounds: cells no table makes positive
(:func:`zero_cells`), bounds proved without an LP of their own (:func:`zero_upper_bounds`,
:func:`pinned_lower_bounds`, the covers of :func:`covers`, the tables seen by
:class:`Seen`), aggregated objectives and one LP per bound left. Also the time
:class:`Budget` of a whole :func:`~maxent_privacy.bounds.intervals.bounds` call (each LP
and integer program stops at it; the steps check it between programs) and the
:class:`Stats` of a run.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..errors import InfeasibleKnowledge
from ..solve.forced_zeros import max_support
from ..solve.highs import pass_lp, silent_highs
from .closed_form import Pieces

#: a cell counts as positive in a table when it is above this (records)
POSITIVE = 1e-7
#: a table attains a bound when it is this close (records)
ATTAIN = 1e-7
#: rounds of :func:`zero_cells` before one LP finds every cell some table makes positive
ZERO_ROUNDS = 2
#: aggregated LPs of a side stop once a round settles less than this share of the first's
AGGREGATE_YIELD = 0.1
#: integrality / feasibility tolerance for the possible worlds found by the MILPs (records)
INTEGRAL = 1e-6
#: a table given to ``bounds`` (``start``) is used on components of at least this many
#: cells, where one LP costs seconds: on smaller ones the zero step's LPs are cheap and
#: their vertex tables settle more bounds than skipping them saves (measured by
#: ``python -m benchmarks bounds --generalized ...``; its history in
#: ``git log -p benchmarks/RESULTS.md``)
GIVEN_TABLE_CELLS = 20_000


# ---------------------------------------------------------------- linear programs
class LP:
    """One component's linear program ``min c'x : E x = e, G x <= g, x >= 0`` in HiGHS,
    kept between objectives (primal simplex from the previous basis)."""

    def __init__(self, E: sp.csr_array, e, G: sp.csr_array, g, u, integral=False):
        import highspy

        self.highspy = highspy
        self.E, self.e, self.G, self.g = E, np.asarray(e, float), G, np.asarray(g, float)
        self.M = sp.vstack([E, G], format="csr")
        self.MT = sp.csr_array(self.M.T)
        self.rhs = np.concatenate([self.e, self.g])
        self.m_e = E.shape[0]
        self.n = E.shape[1]
        self.u = u
        h = silent_highs()
        h.setOptionValue("random_seed", 0)
        inf = highspy.kHighsInf
        pass_lp(
            h,
            self.M,
            np.zeros(self.n),
            np.concatenate([self.e, np.full(G.shape[0], -inf)]),
            self.rhs,
            np.zeros(self.n),
            np.full(self.n, inf),
            integral,
        )
        self.h = h
        self.cost = np.zeros(self.n)
        self.warm = False
        self.budget = None  # a Budget: each run stops at its end ("time")
        self.pivots = 0  # simplex iterations of every run so far

    def set_cost(self, c) -> None:
        diff = np.flatnonzero(c != self.cost)
        if len(diff):
            self.h.changeColsCost(len(diff), diff.astype(np.int32), c[diff].astype(float))
            self.cost = c.astype(float).copy()

    def solve(self, c, cold: bool = False):
        """Minimize ``c'x``; returns (status, x, row duals, objective) (status "optimal",
        "infeasible", "time" when the :attr:`budget` ran out, or the solver's word). Warm:
        primal simplex from the last basis (fast when the objective moved a little);
        ``cold``: dual simplex from scratch (faster after a change of the whole objective on
        large degenerate components)."""
        hs = self.highspy
        if self.budget is not None:
            left = self.budget.left()
            if left <= 0:
                self.budget.ran_out = True
                return "time", None, None, np.nan
            # HiGHS counts a model's run time over all its runs: the limit is cumulative
            self.h.setOptionValue("time_limit", self.h.getRunTime() + float(left))
        self.set_cost(c)
        if cold and self.warm:
            self._from_scratch()
        elif self.warm:
            self.h.setOptionValue("simplex_strategy", 4)  # primal: the basis stays feasible
            self.h.setOptionValue("presolve", "off")
        status = self._run()
        if status == hs.HighsModelStatus.kOptimal:
            return self._optimal(c)
        if status in (hs.HighsModelStatus.kInfeasible, hs.HighsModelStatus.kUnboundedOrInfeasible):
            return "infeasible", None, None, np.nan  # (bounded: every cell is in a data row)
        if self.warm and status != hs.HighsModelStatus.kTimeLimit:  # once more from scratch
            self._from_scratch()
            self.warm = False
            status = self._run()
            if status == hs.HighsModelStatus.kOptimal:
                return self._optimal(c)
        if status == hs.HighsModelStatus.kTimeLimit:
            if self.budget is not None:
                self.budget.ran_out = True
            return "time", None, None, np.nan
        return self.h.modelStatusToString(status), None, None, np.nan

    def _from_scratch(self) -> None:
        """Forget the basis: dual simplex with presolve at the next run."""
        self.h.clearSolver()
        self.h.setOptionValue("simplex_strategy", 1)
        self.h.setOptionValue("presolve", "on")

    def _run(self):
        self.h.run()
        self.pivots += int(self.h.getInfo().simplex_iteration_count)
        return self.h.getModelStatus()

    def _optimal(self, c):
        """The optimal answer of the last run: ("optimal", x, row duals, objective)."""
        self.warm = True
        sol = self.h.getSolution()
        x = np.asarray(sol.col_value)
        return "optimal", x, np.asarray(sol.row_dual), float(c @ x)

    def lower_certificate(self, c, y):
        """Our check of a dual point for ``min c'x``: (dual bound valid for every table,
        largest sign violation). Multipliers of the ``<=`` rows must be <= 0 and the reduced
        costs ``c - M'y`` >= 0; a wrong sign is clipped, and what is left of a negative
        reduced cost is charged at the cell's largest value ``u`` (so the bound is a bound)."""
        y = np.asarray(y, dtype=float).copy()
        viol = 0.0
        if len(y) > self.m_e:
            tail = y[self.m_e :]
            viol = max(viol, float(np.max(tail, initial=0.0)))
            y[self.m_e :] = np.minimum(tail, 0.0)
        r = c - self.MT @ y
        neg = np.minimum(r, 0.0)
        viol = max(viol, float(-neg.min(initial=0.0)))
        bound = float(self.rhs @ y) + float(np.where(neg < 0, neg * self.u, 0.0).sum())
        return bound, viol


class Budget:
    """What a :func:`~maxent_privacy.bounds.intervals.bounds` call may still spend
    (seconds, from its start: the LPs and the integer programs), and whether it ran out.
    ``on_check``: called at every check (the progress bar's redraw), or None."""

    def __init__(self, seconds: float):
        self.end = time.perf_counter() + float(seconds)
        self.ran_out = False
        self.on_check = None

    def left(self) -> float:
        if self.on_check is not None:
            self.on_check()
        return self.end - time.perf_counter()


class Stats:
    def __init__(self):
        self.lps = 0
        self.milps = 0
        self.pool_hits = 0
        self.zero_cells = 0
        self.worlds = 0
        self.no_world = []  # components where no integral table satisfies the facts
        self.cut = 0  # pieces whose LP bounds the time limit left trivial
        self.tables_given = 0  # components where the caller's table passed our check


def component_rows(cols, A, b, kind, facts):
    """The component's data rows and linear facts, restricted to its cells."""
    sub = sp.csr_array(A[:, cols])
    rows = np.flatnonzero(np.diff(sub.indptr) > 0)
    E, e, ekind = [sub[rows]], [b[rows]], [kind[rows]]
    G, g = [], []
    for f in facts:
        if f.sense not in ("==", "<="):
            continue
        Fa = sp.csr_array(f.A[:, cols])
        keep = np.diff(Fa.indptr) > 0
        outside = (
            np.asarray(abs(f.A[keep]).sum(axis=1)).ravel()
            - np.asarray(abs(Fa[keep]).sum(axis=1)).ravel()
        )
        if (outside > 1e-12).any():  # cannot happen: a fact's cells share a component
            raise AssertionError(f"fact {f.name!r} crosses components")
        if f.sense == "==":
            E.append(Fa[keep])
            e.append(f.b[keep])
            ekind.append(np.full(int(keep.sum()), "fact", dtype=object))
        else:
            G.append(Fa[keep])
            g.append(f.b[keep])
    n = len(cols)
    E = sp.vstack(E, format="csr")
    G = sp.vstack(G, format="csr") if G else sp.csr_array((0, n))
    e = np.concatenate(e)
    g = np.concatenate(g) if g else np.zeros(0)
    ekind = np.concatenate(ekind)
    return E, e, ekind, G, g


def cell_caps(E, e, ekind):
    """Per cell: the smallest right side of a data row (all coefficients >= 0) holding it,
    and that row: the largest value the cell can take."""
    nonneg = np.asarray(E.min(axis=1).toarray()).ravel() >= 0
    data = np.flatnonzero((ekind != "fact") & nonneg)
    D = sp.csr_array(E[data]).tocoo()
    n = E.shape[1]
    u = np.full(n, np.inf)
    arg = np.full(n, -1, dtype=np.int64)
    if D.nnz:
        val = e[data[D.row]] / D.data
        order = np.lexsort((val, D.col))
        col = D.col[order]
        first = np.flatnonzero(np.r_[True, col[1:] != col[:-1]])
        u[col[first]] = val[order][first]
        arg[col[first]] = data[D.row[order][first]]
    return u, arg, data


def covers(Pl: sp.csr_array, E, e, ekind, u, arg, data, budget=None):
    """An upper-bound certificate per piece: data rows covering its cells (y = 1 on them,
    A'y >= 1 on the piece, >= 0 elsewhere), chosen greedily by cost per new cell. Pieces
    not reached when the ``budget`` runs out get no cover (bound ``inf``)."""
    n_p = Pl.shape[0]
    D = sp.csr_array(E[data])
    DT = sp.csc_array(D)
    rows_of = []
    bound = np.zeros(n_p)
    for p in range(n_p):
        J = Pl.indices[Pl.indptr[p] : Pl.indptr[p + 1]]
        if budget is not None and p % 64 == 0 and budget.left() <= 0:
            budget.ran_out = True
            rows_of += [[] for _ in range(p, n_p)]
            bound[p:] = np.inf
            break
        if len(J) == 1:
            r = arg[J[0]]
            rows_of.append([r] if r >= 0 else [])
            bound[p] = e[r] if r >= 0 else np.inf  # no data row holds it: no cover
            continue
        # candidate rows: every data row holding a cell of the piece
        cand = np.unique(np.concatenate([DT.indices[DT.indptr[j] : DT.indptr[j + 1]] for j in J]))
        left = set(J.tolist())
        chosen = []
        cover = {
            int(r): set(D.indices[D.indptr[r] : D.indptr[r + 1]].tolist()) & left for r in cand
        }
        while left:
            best, best_ratio = None, np.inf
            for r, cells in cover.items():
                k = len(cells & left)
                if k and e[data[r]] / k < best_ratio:
                    best, best_ratio = r, e[data[r]] / k
            chosen.append(data[best])
            left -= cover.pop(best)
        rows_of.append(chosen)
        bound[p] = float(e[chosen].sum())
    r_idx = np.concatenate([np.asarray(r, dtype=np.int64) for r in rows_of]) if n_p else []
    p_idx = np.repeat(np.arange(n_p), [len(r) for r in rows_of])
    Y = sp.csr_array((np.ones(len(r_idx)), (p_idx, r_idx)), shape=(n_p, E.shape[0]))
    # our check: Y E >= P on every cell (the certificate of max P x <= Y e)
    lack = (Pl - sp.csr_array(Y @ E)).tocsr()
    viol = np.zeros(n_p)
    if lack.nnz:
        lack.data = np.maximum(lack.data, 0.0)
        viol = np.asarray(lack.max(axis=1).toarray()).ravel()
    return bound, viol


def world_of(x, E, e, G, g):
    """``x`` rounded to integers if it is a table of the model (every constraint within
    rounding error), else None."""
    if x is None:
        return None
    r = np.round(x)
    if np.max(np.abs(x - r), initial=0.0) > INTEGRAL or (r < 0).any():
        return None
    if np.max(np.abs(E @ r - e), initial=0.0) > 1e-9:
        return None
    if G.shape[0] and np.max(G @ r - g, initial=-1.0) > 1e-9:
        return None
    return r


class Seen:
    """Per piece, the extremes that the tables seen so far reach (and, with ``exact``,
    those that the integral ones among them reach); calling it records one table."""

    def __init__(self, Pl, model_rows, exact, stats):
        n_p = Pl.shape[0]
        self.Pl, self.model_rows, self.exact, self.stats = Pl, model_rows, exact, stats
        self.best_hi = np.full(n_p, -np.inf)
        self.best_lo = np.full(n_p, np.inf)
        self.int_hi = np.full(n_p, -np.inf)
        self.int_lo = np.full(n_p, np.inf)

    def __call__(self, x) -> None:
        """Record the table ``x``."""
        v = self.Pl @ x
        np.maximum(self.best_hi, v, out=self.best_hi)
        np.minimum(self.best_lo, v, out=self.best_lo)
        if self.exact:
            w = world_of(x, *self.model_rows)
            if w is not None:
                self.stats.worlds += 1
                vi = self.Pl @ w
                np.maximum(self.int_hi, vi, out=self.int_hi)
                np.minimum(self.int_lo, vi, out=self.int_lo)


def lp_solver(lp: LP, seen: Seen, stats):
    """``solve(c, cold=False)``: one counted LP whose optimal table ``seen`` records."""

    def solve(c, cold=False):
        st, x, y, obj = lp.solve(c, cold)
        stats.lps += 1
        if st == "infeasible":
            raise InfeasibleKnowledge("the facts contradict the data (no table satisfies them)")
        if st == "optimal":
            seen(x)
        return st, x, y, obj

    return solve


class Open:
    """The bounds of one component's pieces while they are settled (NaN: still open),
    with their gaps, dual violations and the cover bounds ``U`` (violation ``U_v``).

    ``enough_hi`` and ``enough_lo`` (counts, per piece) say how far a table seen must go
    to settle a bound: a table with a count of at least ``min(U, enough_hi)`` settles the
    upper bound at the cover ``U``, one with at most ``enough_lo`` the lower bound at 0
    (their gaps are what is left to the table). The defaults (``inf``, 0) ask for the
    bound itself; an individual (``by="person"``) needs less, since a class of n people
    gives each of them ``min(1, U)`` and ``max(0, L - (n - 1))``: a table with a count of 1
    settles their upper bound 1, one with n - 1 their lower bound 0
    (:mod:`~maxent_privacy.bounds.frame`)."""

    def __init__(self, n_p: int, enough_hi=None, enough_lo=None):
        self.hi_val, self.lo_val = np.full(n_p, np.nan), np.full(n_p, np.nan)
        self.hi_gap, self.lo_gap = np.zeros(n_p), np.zeros(n_p)
        self.hi_v, self.lo_v = np.zeros(n_p), np.zeros(n_p)
        self.U = np.full(n_p, np.inf)
        self.U_v = np.zeros(n_p)
        self.enough_hi = np.full(n_p, np.inf) if enough_hi is None else enough_hi
        self.enough_lo = np.zeros(n_p) if enough_lo is None else enough_lo

    def settle(self, seen: Seen, stats) -> int:
        """Settle the bounds that a table seen attains (or goes far enough towards: see
        the class docstring) and a cover or 0 proves; how many."""
        reach = np.minimum(self.U, self.enough_hi)
        hit = np.isnan(self.hi_val) & np.isfinite(self.U) & (seen.best_hi >= reach - ATTAIN)
        self.hi_val[hit] = self.U[hit]
        self.hi_gap[hit] = self.U[hit] - seen.best_hi[hit]
        self.hi_v[hit] = self.U_v[hit]
        low = np.isnan(self.lo_val) & (seen.best_lo <= np.maximum(self.enough_lo, 0.0) + ATTAIN)
        self.lo_val[low] = 0.0
        self.lo_gap[low] = np.maximum(seen.best_lo[low], 0.0)
        stats.pool_hits += int(hit.sum() + low.sum())
        return int(hit.sum() + low.sum())

    def close_open(self, seen: Seen) -> np.ndarray:
        """The bounds still open when the time ran out, closed soundly: 0 below, the cover
        (``inf`` without one) above, their gaps to the tables seen (``inf`` without one).
        Returns the mask of the pieces closed so."""
        hi, lo = np.isnan(self.hi_val), np.isnan(self.lo_val)
        self.hi_val[hi] = self.U[hi]
        self.hi_gap[hi] = np.where(
            np.isfinite(seen.best_hi[hi]), self.U[hi] - seen.best_hi[hi], np.inf
        )
        self.hi_v[hi] = np.where(np.isfinite(self.U[hi]), self.U_v[hi], np.inf)
        self.lo_val[lo] = 0.0
        self.lo_gap[lo] = np.where(np.isfinite(seen.best_lo[lo]), seen.best_lo[lo], np.inf)
        self.lo_v[lo] = 0.0
        return hi | lo


def given_table(x, E, e, G, g, seen: Seen, stats) -> np.ndarray | None:
    """A table the caller gave (``x``: this component's cells, or None), checked by our
    arithmetic against the rows (every equality within :data:`ATTAIN`, no inequality
    over by more, no cell below ``-ATTAIN``): recorded by ``seen`` and returned as the
    mask of the cells it makes positive; None when it is not given, fails the check or the
    component is smaller than :data:`GIVEN_TABLE_CELLS`."""
    if x is None or len(x) < GIVEN_TABLE_CELLS or not np.all(np.isfinite(x)):
        return None
    if x.min() < -ATTAIN or np.max(np.abs(E @ x - e), initial=0.0) > ATTAIN:
        return None
    if G.shape[0] and np.max(G @ x - g) > ATTAIN:
        return None
    seen(x)
    stats.tables_given += 1
    return x > POSITIVE


def zero_cells(lp: LP, solve, w, n: int, known=None):
    """Step 1: cells no table makes positive (mask, certified bound, dual violation);
    ``known``: cells a table already seen makes positive (they need no LP).

    Each round maximizes the weighted sum of the cells not yet seen positive; the cells
    the optimal table makes positive are dropped, until an optimum of 0 certifies the
    rest. A vertex shows few new cells per round, so after :data:`ZERO_ROUNDS` rounds one
    homogenized LP (:func:`~maxent_privacy.solve.forced_zeros.max_support`) finds every
    cell that some table makes positive at once; the next round certifies the rest as
    before (and goes on if it does not)."""
    R = np.ones(n, dtype=bool) if known is None else ~known
    Z = np.zeros(n, dtype=bool)
    zero_bound, zero_viol = 0.0, 0.0
    for round_ in range(60 if R.any() else 0):
        c = np.where(R, -w, 0.0)
        st, x, y, obj = solve(c, cold=True)
        if st != "optimal":
            break
        pos = R & (x > POSITIVE)
        if not pos.any():
            lb, zero_viol = lp.lower_certificate(c, y)
            zero_bound = max(-lb, 0.0)
            Z = R.copy()
            break
        R &= ~pos
        if not R.any():
            break
        if round_ == ZERO_ROUNDS - 1:
            left = None if lp.budget is None else lp.budget.left()
            support = None
            if left is None or left > 0:
                support = max_support(lp.E, lp.e, lp.G, lp.g, R, time_limit=left)
            if support is not None:
                R &= ~support
    return Z, zero_bound, zero_viol


def zero_upper_bounds(op: Open, Pl, Z, w, zero_bound, zero_viol) -> np.ndarray:
    """Step 2a: pieces on proved-zero cells only have upper bound 0; returns their mask."""
    free = Pl @ (~Z).astype(float)
    in_z = free == 0
    if in_z.any():
        Pz = Pl[np.flatnonzero(in_z)]
        alpha = np.asarray(
            [w[Pz.indices[Pz.indptr[i] : Pz.indptr[i + 1]]].min() for i in range(Pz.shape[0])]
        )
        op.hi_val[in_z] = 0.0
        op.hi_gap[in_z] = zero_bound / alpha
        op.hi_v[in_z] = zero_viol / alpha
    return in_z


def pinned_lower_bounds(op: Open, Pl, E, e, ekind, Z, w, zero_bound, zero_viol) -> None:
    """Step 2b: a piece whose classes have no other possible value: pinned to their size."""
    cls_rows = np.flatnonzero(ekind == "class")
    Cm = sp.csr_array(E[cls_rows])
    Q = sp.csr_array((Pl @ Cm.T) > 0, dtype=float)
    S = sp.csr_array((Q @ Cm) > 0, dtype=float)
    K = sp.csr_array(S - Pl)
    K.eliminate_zeros()
    covered = np.asarray((Pl @ sp.csr_array(Cm.T)).sum(axis=1)).ravel() == Pl.sum(axis=1)
    pinned = covered & ((K @ (~Z).astype(float)) == 0)
    n_cls = Q @ e[cls_rows]
    if pinned.any():
        for i in np.flatnonzero(pinned):
            Kc = K.indices[K.indptr[i] : K.indptr[i + 1]]
            beta = 1.0 / w[Kc].min() if len(Kc) else 0.0
            op.lo_val[i] = n_cls[i]
            op.lo_gap[i] = beta * zero_bound
            op.lo_v[i] = beta * zero_viol


def aggregated_lps(op: Open, Pl, lp: LP, solve, seen: Seen, stats, rng) -> None:
    """Step 3: aggregated objectives, one table that reaches many bounds at once.

    An aggregated LP costs as much as tens of LPs of one bound each; each round settles
    fewer bounds than the one before, so the rounds of a side stop once one settles less
    than :data:`AGGREGATE_YIELD` of what its first did (the bounds left go to step 4).
    The first round starts from scratch, the second from the first's basis; the rest
    start the way that took fewer simplex iterations (from scratch pays on large
    degenerate components, the warm start on small ones)."""
    scale = np.where(np.isfinite(op.U) & (op.U > 0), op.U, 1.0)
    pivots = {}  # simplex iterations of the first cold and the first warm round
    for sense in ("hi", "lo"):
        vals = op.hi_val if sense == "hi" else op.lo_val
        first = None  # bounds the side's first round settled
        for _ in range(20):
            open_ = np.flatnonzero(np.isnan(vals))
            if not len(open_):
                break
            weight = rng.uniform(0.5, 1.5, len(open_)) / scale[open_]
            c = np.asarray(Pl[open_].T @ weight).ravel()
            cold = len(pivots) != 1 and pivots.get(True, 0) <= pivots.get(False, np.inf)
            before = lp.pivots
            st, *_ = solve(-c if sense == "hi" else c, cold=cold)
            pivots.setdefault(cold, lp.pivots - before)
            if st != "optimal":
                break
            k = op.settle(seen, stats)
            first = k if first is None else first
            if k < max(3, 0.02 * len(open_), AGGREGATE_YIELD * first):
                break


def one_bound(op: Open, i: int, sense: str, Pl, lp: LP, solve, seen: Seen, stats) -> str:
    """The bound ``sense`` ("hi" or "lo") of piece ``i`` by its own LP, with its dual
    certificate checked; returns the LP's status ("time": left open)."""
    c = np.zeros(Pl.shape[1])
    c[Pl.indices[Pl.indptr[i] : Pl.indptr[i + 1]]] = -1.0 if sense == "hi" else 1.0
    st, x, y, obj = solve(c)
    if st == "time":
        return st
    if st != "optimal":
        raise RuntimeError(f"HiGHS: {st} on a bound of a feasible component")
    lb, viol = lp.lower_certificate(c, y)
    if sense == "hi":
        op.hi_val[i], op.hi_gap[i], op.hi_v[i] = -obj, abs(-lb - -obj), viol
    else:
        op.lo_val[i], op.lo_gap[i], op.lo_v[i] = obj, abs(obj - lb), viol
    op.settle(seen, stats)
    return st


def lp_per_bound(op: Open, Pl, lp: LP, solve, seen: Seen, stats) -> None:
    """Step 4: one LP per bound left (:func:`one_bound`); stops when the LP's budget runs
    out (the bounds left stay open: NaN)."""
    for sense in ("hi", "lo"):
        vals = op.hi_val if sense == "hi" else op.lo_val
        for i in np.flatnonzero(np.isnan(vals)):
            if not np.isnan(vals[i]):
                continue  # a table seen meanwhile settled it
            if one_bound(op, int(i), sense, Pl, lp, solve, seen, stats) == "time":
                return


def store_lp(pieces: Pieces, idx, op: Open) -> None:
    """Write the settled LP bounds of the pieces ``idx`` into ``pieces``."""
    pieces.hi[idx], pieces.lo[idx] = op.hi_val, op.lo_val
    pieces.lp_hi[idx], pieces.lp_lo[idx] = op.hi_val, op.lo_val
    pieces.hi_gap[idx], pieces.lo_gap[idx] = op.hi_gap, op.lo_gap
    pieces.hi_viol[idx], pieces.lo_viol[idx] = op.hi_v, op.lo_v
    pieces.method[idx] = 1
