"""Stage 4, decomposition: cells linked by a data row or a fact form independent problems.

``SplitComponents.apply`` labels the connected components of the reduced problem and
returns :class:`Parts`: the components, which of them have the closed form of Eq. (9)
(Theorem 5: no fact, cells a full class x value product), and ``take(components)``,
which cuts out a :class:`Part` (index arrays only) for a backend. A backend returns a
:class:`PartSolution`; ``invert`` puts the parts' answers together into one
:class:`Solution` on the free cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..numerics import cell_components
from .presolve import Reduced

__all__ = ["Part", "PartSolution", "Parts", "Solution", "SplitComponents", "closed_components"]


@dataclass
class Part:
    """Some components of a reduced problem: indices of their free cells (``cells``),
    kept data rows (``dk``), equality and inequality fact rows (``ek``, ``ik``) and
    convex facts (``ck``); ``comp``, ``comp_d``, ``comp_e``, ``comp_i`` label the cells
    and rows by component."""

    comps: np.ndarray
    cells: np.ndarray
    dk: np.ndarray
    ek: np.ndarray
    ik: np.ndarray
    ck: np.ndarray
    comp: np.ndarray
    comp_d: np.ndarray
    comp_e: np.ndarray
    comp_i: np.ndarray


@dataclass
class PartSolution:
    """A backend's answer on a :class:`Part` (multipliers of the scaled rows).

    ``bound`` is the Lagrange dual bound of the part (NaN when not available);
    ``bounds``, when given, splits it per component (in the order of ``part.comps``).
    """

    part: Part
    x: np.ndarray
    nu_d: np.ndarray
    nu_e: np.ndarray
    mu_i: np.ndarray
    bound: float
    records: list = field(default_factory=list)
    statuses: list = field(default_factory=list)
    suspects: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    bounds: np.ndarray | None = None

    def split(self) -> list[PartSolution]:
        """One answer per component (for answers kept across passes)."""
        p = self.part
        if len(p.comps) == 1:
            return [self]
        if self.bounds is None and not np.isnan(self.bound):
            return []  # a joint bound cannot be split: keep nothing
        groups = [_groups(lab, p.comps) for lab in (p.comp, p.comp_d, p.comp_e, p.comp_i)]
        out = []
        for i, k in enumerate(p.comps):
            c, d, e, g = (grp[i] for grp in groups)
            part = Part(
                np.array([k]), p.cells[c], p.dk[d], p.ek[e], p.ik[g], p.ck[:0],
                p.comp[c], p.comp_d[d], p.comp_e[e], p.comp_i[g],
            )  # fmt: skip
            bound = np.nan if self.bounds is None else float(self.bounds[i])
            out.append(
                PartSolution(part, self.x[c], self.nu_d[d], self.nu_e[e], self.mu_i[g], bound)
            )
        return out

    def retarget(self, part: Part) -> PartSolution:
        """This answer on the same component of a later pass (same cells and rows)."""
        record = {
            "component": int(part.comps[0]),
            "cells": len(part.cells),
            "facts": len(part.ek) + len(part.ik),
            "method": "kept from an earlier pass",
            "status": "optimal",
            "solve_time": 0.0,
            "iterations": 0,
        }
        return PartSolution(
            part, self.x, self.nu_d, self.nu_e, self.mu_i, self.bound, [record], ["optimal"]
        )


@dataclass
class Solution:
    """The answer on the free cells, then (after the stages' ``invert``) on every cell.

    ``x``: cell values; ``nu_d``: multipliers of the kept data rows (``nu_data`` per data
    block after :mod:`.rank`'s invert); ``nu_eq``, ``mu_in``: multipliers of the fact rows
    (NaN for a row presolve resolved); ``bound``: dual bound of the free part.
    """

    x: np.ndarray
    nu_d: np.ndarray
    nu_eq: np.ndarray
    mu_in: np.ndarray
    bound: float
    records: list
    statuses: list
    suspects: np.ndarray
    nu_data: tuple = ()


def _groups(labels: np.ndarray, comps: np.ndarray) -> list[np.ndarray]:
    """For each of ``comps``, the positions of ``labels`` equal to it."""
    order = np.argsort(labels, kind="stable")
    lo = np.searchsorted(labels[order], comps, side="left")
    hi = np.searchsorted(labels[order], comps, side="right")
    return [order[a:b] for a, b in zip(lo, hi, strict=True)]


def closed_components(red: Reduced, comp: np.ndarray, n_comp: int, has_fact) -> np.ndarray:
    """Which components have the closed form (one release only; with a prior, solved by
    matrix scaling instead: :class:`.closed_form.MatrixScaling`)."""
    p = red.problem
    if not n_comp or not p.single:
        return np.zeros(n_comp, dtype=bool)
    s = p.structure
    cls_f, gs_f = s.cell_class[red.free], s.cell_sa[red.free]
    cls_comp = np.full(len(s.class_n), -1)
    cls_comp[cls_f] = comp
    gs_comp = np.full(len(s.sa_n), -1)
    gs_comp[gs_f] = comp
    n_cells_k = np.bincount(comp, minlength=n_comp)
    n_cls_k = np.bincount(cls_comp[cls_comp >= 0], minlength=n_comp)
    n_gs_k = np.bincount(gs_comp[gs_comp >= 0], minlength=n_comp)
    r_cls = red.r[0]
    T = np.bincount(cls_comp[cls_comp >= 0], weights=r_cls[cls_comp >= 0], minlength=n_comp)
    product = (n_cells_k == n_cls_k * n_gs_k) & (T > 0)
    member = np.zeros(n_comp, dtype=bool)
    member[comp[red.in_complex]] = True
    # an SA row whose free cells lie in several components (its piece split when an
    # implied row was dropped): its total is not this component's, so no closed form
    lo = np.full(len(s.sa_n), n_comp)
    hi = np.full(len(s.sa_n), -1)
    np.minimum.at(lo, gs_f, comp)
    np.maximum.at(hi, gs_f, comp)
    split = np.zeros(n_comp, dtype=bool)
    shared = np.flatnonzero((hi >= 0) & (lo != hi))
    split[lo[shared]] = True
    split[hi[shared]] = True
    split[comp[np.isin(gs_f, shared)]] = True
    return product & ~np.asarray(has_fact) & ~member & ~split


class Parts:
    """The components of a reduced problem, and which have the closed form."""

    def __init__(self, red: Reduced, comp_of_cell: np.ndarray, row_comp: np.ndarray):
        self.red = red
        self.comp_of_cell = comp_of_cell
        self.n_comp = int(comp_of_cell.max()) + 1 if len(comp_of_cell) else 0
        n_d, n_e, n_i = red.D.shape[0], red.Feq.shape[0], red.Fin.shape[0]
        self.comp_d = row_comp[:n_d]
        self.comp_e = row_comp[n_d : n_d + n_e]
        self.comp_i = row_comp[n_d + n_e : n_d + n_e + n_i]
        self.comp_c = row_comp[n_d + n_e + n_i :]
        has_fact = np.zeros(self.n_comp, dtype=bool)
        for rc in (self.comp_e, self.comp_i, self.comp_c):
            has_fact[rc[rc >= 0]] = True
        self.has_fact = has_fact
        self.closed = closed_components(red, comp_of_cell, self.n_comp, has_fact)
        self._order = np.argsort(comp_of_cell, kind="stable")
        self._bounds = np.searchsorted(comp_of_cell[self._order], np.arange(self.n_comp + 1))

    def cells_of(self, k: int) -> np.ndarray:
        """The free cells of component ``k``, in order."""
        return self._order[self._bounds[k] : self._bounds[k + 1]]

    def cells_per_component(self) -> np.ndarray:
        return np.diff(self._bounds)

    def take(self, comps) -> Part:
        """The part made of the components ``comps``."""
        comps = np.asarray(comps, dtype=int)
        if len(comps) == 1:
            cells = self.cells_of(int(comps[0]))
        else:
            cells = np.flatnonzero(np.isin(self.comp_of_cell, comps))

        def rows(rc):
            return np.flatnonzero(np.isin(rc, comps))

        dk, ek, ik = rows(self.comp_d), rows(self.comp_e), rows(self.comp_i)
        return Part(
            comps=comps,
            cells=cells,
            dk=dk,
            ek=ek,
            ik=ik,
            ck=rows(self.comp_c),
            comp=self.comp_of_cell[cells],
            comp_d=self.comp_d[dk],
            comp_e=self.comp_e[ek],
            comp_i=self.comp_i[ik],
        )

    def invert(self, solutions: list[PartSolution]) -> Solution:
        red = self.red
        nu_eq = np.where(np.diff(red.Feq.indptr) > 0, 0.0, np.nan)
        mu_in = np.where(np.diff(red.Fin.indptr) > 0, 0.0, np.nan)
        out = Solution(
            x=np.zeros(red.n_free), nu_d=np.zeros(red.D.shape[0]), nu_eq=nu_eq, mu_in=mu_in,
            bound=0.0, records=[], statuses=[], suspects=np.zeros(0, dtype=int),
        )  # fmt: skip
        for s in solutions:
            p = s.part
            out.x[p.cells] = s.x
            out.nu_d[p.dk] = s.nu_d
            out.nu_eq[p.ek] = s.nu_e
            out.mu_in[p.ik] = s.mu_i
            out.bound += s.bound
            out.records.extend(s.records)
            out.statuses.extend(s.statuses)
            out.suspects = np.union1d(out.suspects, s.suspects)
        return out


class SplitComponents:
    """Decomposition as a stage; ``enabled=False`` keeps one component."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled

    def apply(self, red: Reduced) -> tuple[Parts, None]:
        n = red.n_free
        incid = [red.D, red.Feq, red.Fin]
        pos_of = np.full(red.problem.n_cells, -1)
        pos_of[red.free] = np.arange(n)
        for f in red.problem.convex:
            fp = pos_of[f.cells]
            fp = fp[fp >= 0]
            incid.append(
                sp.csr_array((np.ones(len(fp)), (np.zeros(len(fp), dtype=int), fp)), shape=(1, n))
            )
        M = (
            sp.vstack(incid, format="csr")
            if n
            else sp.csr_array((sum(b.shape[0] for b in incid), 0))
        )
        comp = cell_components([M], n) if self.enabled else np.zeros(n, dtype=int)
        row_comp = np.full(M.shape[0], -1)
        coo = M.tocoo()
        if n:
            row_comp[coo.row] = comp[coo.col]
        parts = Parts(red, comp, row_comp)
        return parts, parts

    def invert(self, solutions: list[PartSolution], parts: Parts) -> Solution:
        return parts.invert(solutions)
