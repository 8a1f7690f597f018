"""Possible worlds (``exact=True``): bounds over integral tables by HiGHS MILPs.

The LP bound rounded inwards is exact once a possible world attains it; single-cell bounds
so rounded fix cells, what is left falls apart into small independent parts, and each
part's open bounds are settled by integer programs (:class:`MILP`) on that part alone,
within the time budget. :func:`integral` is the entry point, per component.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .lp import ATTAIN, LP, world_of


# ---------------------------------------------------------------- possible worlds
class MILP:
    """The same component as an integer program (HiGHS branch and bound)."""

    def __init__(self, E, e, G, g, u):
        self.lp = LP(E, e, G, g, u, integral=True)
        self.h = self.lp.h
        hs = self.lp.highspy
        self.hs = hs
        self.h.setOptionValue("mip_feasibility_tolerance", 1e-7)

    def bound(self, lo, hi) -> None:
        """Column bounds (``inf`` for none)."""
        hi = np.where(np.isfinite(hi), hi, self.hs.kHighsInf)
        idx = np.arange(len(lo), dtype=np.int32)
        self.h.changeColsBounds(len(lo), idx, np.asarray(lo, float), np.asarray(hi, float))

    def run(self, c, limit: float, rel_gap: float = 0.0, row=None, first: bool = False):
        """Minimize ``c'x`` over integral tables, optionally with ``lo <= P x <= hi`` for
        ``row = (cells, lo, hi)``; ``first``: stop at the first table found (``c`` then
        only steers the search). Returns (status, x or None): status "optimal",
        "feasible" (``first``), "infeasible" or "time"."""
        hs, h = self.hs, self.h
        self.lp.set_cost(np.asarray(c, dtype=float))
        # HiGHS counts a model's run time over all its runs: the limit is cumulative
        h.setOptionValue("time_limit", h.getRunTime() + float(max(limit, 0.01)))
        h.setOptionValue("mip_rel_gap", float(rel_gap))
        h.setOptionValue("mip_max_improving_sols", 1 if first else 2147483647)
        added = False
        if row is not None:
            cells, lo, hi = row
            inf = hs.kHighsInf
            h.addRow(
                -inf if lo is None else float(lo),
                inf if hi is None else float(hi),
                len(cells),
                np.asarray(cells, dtype=np.int32),
                np.ones(len(cells)),
            )
            added = True
        try:
            h.run()
            status = h.getModelStatus()
            sol = h.getSolution()
            x = np.asarray(sol.col_value) if sol.value_valid else None
        finally:
            if added:
                h.deleteRows(1, np.array([h.getNumRow() - 1], dtype=np.int32))
        if status == hs.HighsModelStatus.kOptimal:
            return "optimal", x
        if status == hs.HighsModelStatus.kInfeasible:
            return "infeasible", None
        if first and x is not None and status == hs.HighsModelStatus.kSolutionLimit:
            return "feasible", x
        return "time", x


def _finish_integral(pieces, idx, ex_hi, ex_lo) -> None:
    """Store the exact bounds found; the open ones keep the LP bound, ``exact`` False."""
    lp_hi, lp_lo = pieces.lp_hi[idx], pieces.lp_lo[idx]
    pieces.hi_exact[idx] = ~np.isnan(ex_hi)
    pieces.lo_exact[idx] = ~np.isnan(ex_lo)
    pieces.hi[idx] = np.where(np.isnan(ex_hi), lp_hi, ex_hi)
    pieces.lo[idx] = np.where(np.isnan(ex_lo), lp_lo, ex_lo)


def _no_world(pieces, idx, stats) -> None:
    """Record a component without integral tables: its bounds stay the LP's, not exact."""
    stats.no_world.append(int(pieces.comp[idx[0]]))
    pieces.hi_exact[idx] = pieces.lo_exact[idx] = False


def _cell_ranges(Pl, Z, top, bottom):
    """Integral range of every cell: proved zeros, single-cell LP bounds rounded inwards."""
    n = Pl.shape[1]
    cell_lo, cell_hi = np.zeros(n), np.where(Z, 0.0, np.inf)
    one = np.flatnonzero(np.diff(Pl.indptr) == 1)
    cell = Pl.indices[Pl.indptr[one]]
    cell_hi[cell] = np.minimum(cell_hi[cell], top[one])
    cell_lo[cell] = np.maximum(cell_lo[cell], bottom[one])
    return cell_lo, cell_hi


def _free_parts(E, e, G, g, free, base):
    """The independent part of every free cell (None: the fixed cells break a row)."""
    Ef, Gf = sp.csc_array(E)[:, free], sp.csc_array(G)[:, free]
    ef, gf = e - E @ base, g - G @ base
    er = np.flatnonzero(np.diff(sp.csr_array(Ef).indptr) > 0)
    gr = np.flatnonzero(np.diff(sp.csr_array(Gf).indptr) > 0)
    rest_e = np.setdiff1d(np.arange(E.shape[0]), er)
    rest_g = np.setdiff1d(np.arange(G.shape[0]), gr)
    if np.abs(ef[rest_e]).max(initial=0.0) > 1e-9 or gf[rest_g].min(initial=0.0) < -1e-9:
        return None
    Ef = sp.csr_array(Ef)[er]
    Gf = sp.csr_array(Gf)[gr]
    link = sp.vstack([Ef, Gf], format="csr")
    big = sp.bmat([[None, link.T], [link, None]], format="csr")
    _, lab = connected_components(big, directed=False)
    part = np.full(E.shape[1], -1)
    part[free] = lab[: len(free)]
    return part


def _piece_parts(Pl, part, n_p: int) -> np.ndarray:
    """The part each piece lies in (-2: on no free cell; -3: several parts)."""
    Pc = Pl.tocoo()
    pc = part[Pc.col]
    m = pc >= 0
    by_piece = pd.Series(pc[m]).groupby(Pc.row[m])
    k_parts = by_piece.nunique().reindex(np.arange(n_p), fill_value=0).to_numpy()
    first = by_piece.first().reindex(np.arange(n_p), fill_value=-1).to_numpy()
    return np.where(k_parts == 0, -2, np.where(k_parts == 1, first, -3))


def _part_system(E, e, G, g, base, cols):
    """The rows on ``cols`` (right sides net of the fixed cells ``base``; the other
    parts' cells appear in none of them)."""
    sub_e = np.flatnonzero(np.diff(sp.csr_array(E[:, cols]).indptr) > 0)
    sub_g = np.flatnonzero(np.diff(sp.csr_array(G[:, cols]).indptr) > 0)
    return (
        sp.csr_array(E[sub_e][:, cols]),
        (e - E @ base)[sub_e],
        sp.csr_array(G[sub_g][:, cols]),
        (g - G @ base)[sub_g],
    )


def _first_world(Pl, model_rows, free, base, cell_lo, cell_hi, seen, budget, stats) -> str:
    """One possible world recorded in ``seen = (int_hi, int_lo)``: "found", "none", "time"."""
    E, e, G, g, u = model_rows
    int_hi, int_lo = seen
    if budget.left() <= 0:
        budget.ran_out = True
        return "time"
    world = base.copy()
    if len(free):
        Es, es, Gs, gs = _part_system(E, e, G, g, base, free)
        milp = MILP(Es, es, Gs, gs, u[free])
        milp.bound(cell_lo[free], cell_hi[free])
        st, x = milp.run(np.zeros(len(free)), budget.left(), first=True)
        stats.milps += 1
        x = world_of(x, Es, es, Gs, gs)
        if st == "infeasible":
            return "none"
        if x is None:
            budget.ran_out = True
            return "time"
        world[free] = x
    elif world_of(world, E, e, G, g) is None:
        return "none"
    stats.worlds += 1
    v = Pl @ world
    np.maximum(int_hi, v, out=int_hi)
    np.minimum(int_lo, v, out=int_lo)
    return "found"


def _still_open(members, ex_hi, ex_lo, int_hi, int_lo, enough, sense=None) -> np.ndarray:
    """Mask of ``members`` whose bound (``sense`` "hi", "lo", or either: None) is neither
    exact nor reached far ``enough`` (per piece: upper, lower) by a world seen."""
    hi = np.isnan(ex_hi[members]) & (int_hi[members] < enough[0][members] - 0.5)
    lo = np.isnan(ex_lo[members]) & (int_lo[members] > enough[1][members] + 0.5)
    return hi if sense == "hi" else lo if sense == "lo" else hi | lo


def integral(pieces, idx, Pl, model_rows, Z, int_hi, int_lo, budget, stats, rng) -> None:
    """Exact bounds over integral tables.

    The LP bound rounded inwards (floor of a maximum, ceiling of a minimum: integral
    tables are LP tables) is the exact bound as soon as a possible world attains it; the
    LP tables seen that are integral are such worlds. Every single-cell bound rounded so
    also fixes cells (a person whose LP maximum for a value is below 1 never has it);
    what is left falls apart into small independent parts, and each part's bounds left
    open are settled by HiGHS integer programs on that part alone (within the budget).
    A bound that a world seen takes far enough (``pieces.enough_hi``/``enough_lo``: an
    individual's needs a world giving their class one s, or leaving one of them without
    it; :class:`~maxent_privacy.bounds.lp.Open`) needs no integer program: it keeps the
    LP bound, not exact for the class, and the frame reads the individual's off the
    worlds seen.
    """
    E, e, G, g, u = model_rows
    top = np.floor(pieces.lp_hi[idx] + ATTAIN)  # integral tables cannot beat the LP
    bottom = np.ceil(pieces.lp_lo[idx] - ATTAIN)
    ex_hi = np.where(int_hi >= top - 0.5, top, np.nan)
    ex_lo = np.where(int_lo <= bottom + 0.5, bottom, np.nan)
    # a world that goes this far settles the bound for the frame (an individual: a world
    # giving their class one s makes it possible, one leaving one of them without it
    # makes it not certain), with no exact count of the class's own
    enough = (np.minimum(top, pieces.enough_hi[idx]), np.maximum(bottom, pieces.enough_lo[idx]))
    if not _still_open(np.arange(len(idx)), ex_hi, ex_lo, int_hi, int_lo, enough).any():
        return _finish_integral(pieces, idx, ex_hi, ex_lo)
    cell_lo, cell_hi = _cell_ranges(Pl, Z, top, bottom)
    if (cell_lo > cell_hi + 0.5).any():  # no integral value between the LP bounds
        return _no_world(pieces, idx, stats)
    fixed = cell_lo >= cell_hi
    free = np.flatnonzero(~fixed)
    base = np.where(fixed, cell_lo, 0.0)
    part = _free_parts(E, e, G, g, free, base)
    if part is None:
        return _no_world(pieces, idx, stats)
    where = _piece_parts(Pl, part, len(idx))

    if not (np.isfinite(int_hi).any() or np.isfinite(int_lo).any()):
        # no possible world seen yet: is there one at all?
        found = _first_world(
            Pl, model_rows, free, base, cell_lo, cell_hi, (int_hi, int_lo), budget, stats
        )
        if found == "none":
            return _no_world(pieces, idx, stats)
        if found == "time":
            return _finish_integral(pieces, idx, ex_hi, ex_lo)
        hit = np.isnan(ex_hi) & (int_hi >= top - 0.5)
        ex_hi[hit] = top[hit]
        hit = np.isnan(ex_lo) & (int_lo <= bottom + 0.5)
        ex_lo[hit] = bottom[hit]
    # pieces on fixed cells only: every world gives them the same value
    const = where == -2
    ex_hi[const & np.isnan(ex_hi)] = top[const & np.isnan(ex_hi)]
    ex_lo[const & np.isnan(ex_lo)] = bottom[const & np.isnan(ex_lo)]
    open_ = _still_open(np.arange(len(idx)), ex_hi, ex_lo, int_hi, int_lo, enough)
    bounds = _Bounds(top, bottom, enough, ex_hi, ex_lo, int_hi, int_lo)
    groups: dict[int, list] = {}
    for i in np.flatnonzero(open_):
        groups.setdefault(int(where[i]), []).append(i)
    for key, members in sorted(groups.items(), key=lambda kv: len(kv[1])):
        if budget.left() <= 0:
            budget.ran_out = True
            break
        members = np.asarray(members)
        cols = np.flatnonzero(part == key) if key >= 0 else free  # -3: several parts
        Es, es, Gs, gs = _part_system(E, e, G, g, base, cols)
        one = _Part(cols, base, Es, es, Gs, gs, u[cols], cell_lo[cols], cell_hi[cols])
        ok = _settle_part(members, Pl, one, bounds, budget, stats, rng)
        if not ok:
            return _no_world(pieces, idx, stats)
    return _finish_integral(pieces, idx, ex_hi, ex_lo)


@dataclass(frozen=True)
class _Part:
    """One part of the free cells: its cells (``cols``), the values of the fixed cells
    (``base``, every cell), its rows (``E x = e``, ``G x >= g`` on its cells, the fixed
    cells moved to the right side), the cells' capacities and ranges."""

    cols: np.ndarray
    base: np.ndarray
    E: sp.csr_array
    e: np.ndarray
    G: sp.csr_array
    g: np.ndarray
    u: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


@dataclass(frozen=True)
class _Bounds:
    """The bounds of :func:`integral` per piece: the LP bounds rounded inwards (``top``,
    ``bottom``), how far a world has to go (``enough``: upper, lower), the exact bounds
    found (NaN: open) and the extremes of the worlds seen; the last four are updated in
    place."""

    top: np.ndarray
    bottom: np.ndarray
    enough: tuple
    ex_hi: np.ndarray
    ex_lo: np.ndarray
    int_hi: np.ndarray
    int_lo: np.ndarray


def _settle_part(members, Pl, part: _Part, bounds: _Bounds, budget, stats, rng) -> bool:
    """Integer programs on one part for the open bounds of ``members`` (``bounds``: see
    :class:`_Bounds` and :func:`integral`); False when the part has no integral table at
    all."""
    cols, base, Es, es, Gs, gs = part.cols, part.base, part.E, part.e, part.G, part.g
    u, lo, hi = part.u, part.lo, part.hi
    top, bottom, enough = bounds.top, bounds.bottom, bounds.enough
    ex_hi, ex_lo, int_hi, int_lo = bounds.ex_hi, bounds.ex_lo, bounds.int_hi, bounds.int_lo
    Pm = sp.csr_array(Pl[members][:, cols])
    offset = Pl[members] @ base  # what the fixed cells add
    milp = MILP(Es, es, Gs, gs, u)
    milp.bound(lo, hi)

    def seen(x):
        w = world_of(x, Es, es, Gs, gs)
        if w is None:
            return
        stats.worlds += 1
        v = Pm @ w + offset
        np.maximum.at(int_hi, members, v)
        np.minimum.at(int_lo, members, v)
        for ex, ok in ((ex_hi, int_hi >= top - 0.5), (ex_lo, int_lo <= bottom + 0.5)):
            hit = members[ok[members] & np.isnan(ex[members])]
            ex[hit] = (top if ex is ex_hi else bottom)[hit]

    def still(sense):
        return _still_open(members, ex_hi, ex_lo, int_hi, int_lo, enough, sense)

    # aggregated: worlds that reach many bounds at once (a loose gap is enough)
    for sense in ("hi", "lo"):
        for _ in range(30):
            open_ = np.flatnonzero(still(sense))
            if len(open_) < 3 or budget.left() <= 0:
                break
            weight = rng.uniform(0.5, 1.5, len(open_))
            c = np.asarray(Pm[open_].T @ weight).ravel()
            st, x = milp.run(-c if sense == "hi" else c, min(budget.left(), 5.0), first=True)
            stats.milps += 1
            if st == "infeasible":
                return False
            seen(x)
            if len(open_) - int(still(sense).sum()) < max(20, 0.05 * len(open_)):
                break
    # one integer program per bound left: is there a world beyond the best one seen?
    for sense in ("hi", "lo"):
        ex = ex_hi if sense == "hi" else ex_lo
        for k_m, i in enumerate(members):
            if not still(sense)[k_m]:
                continue
            if budget.left() <= 0:
                budget.ran_out = True
                return True
            cells = Pm.indices[Pm.indptr[k_m] : Pm.indptr[k_m + 1]]
            k = int_hi[i] if sense == "hi" else int_lo[i]
            step = 1 if sense == "hi" else -1
            need = k + step - offset[k_m] if np.isfinite(k) else None
            edge = enough[0][i] if sense == "hi" else enough[1][i]
            if need is not None and abs(k + step - edge) < 0.5:
                # any world beyond k goes far enough: find one (or prove none),
                # steered towards the other bounds still open
                rest = np.flatnonzero(still(sense))
                c = np.asarray(Pm[rest].T @ rng.uniform(0.5, 1.5, len(rest))).ravel()
                c, first = (-c if sense == "hi" else c), True
            else:  # the piece's own optimum
                c = np.zeros(len(cols))
                c[cells] = -1.0 if sense == "hi" else 1.0
                first = False
            row = (cells, need, None) if sense == "hi" else (cells, None, need)
            st, x = milp.run(c, budget.left(), row=row, first=first)
            stats.milps += 1
            if x is not None:
                seen(x)
            if st == "infeasible":
                if not np.isfinite(k):
                    return False
                ex[i] = k  # no world goes beyond the best one seen
            elif st == "optimal" and x is not None and np.isnan(ex[i]) and not first:
                ex[i] = float(np.round(x[cells].sum() + offset[k_m]))
            elif st == "time":
                budget.ran_out = True
    return True
