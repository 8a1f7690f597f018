"""Backend: the closed form of Du et al. Eq. (9) for components no fact touches.

In a component of one release whose free cells are a full class x value product (every
class of the component may hold every value of it) and that no fact touches, the maximum
entropy is ``x[c, s] = R_c C_s / T`` (Theorem 5), with ``R_c`` the class totals, ``C_s``
the value totals and ``T`` their sum. All such components are solved at once, with their
multipliers in closed form (``nu_c + nu_s = -1 - log(x / n)``; the dropped SA row has
multiplier 0), so their dual bound is exact too.
"""

from __future__ import annotations

import numpy as np

from ..numerics import dual_bound
from .components import Part, PartSolution, closed_components
from .presolve import Reduced

__all__ = ["ClosedForm", "closed_components"]


class ClosedForm:
    """Eq. (9) on every closed component at once."""

    name = "closed form"

    def solve(self, red: Reduced, part: Part) -> PartSolution:
        s = red.problem.structure
        n_comp = int(part.comp.max(initial=-1)) + 1
        cls_f, gs_f = s.cell_class[red.free], s.cell_sa[red.free]
        r_cls, r_gs = red.r[0], red.r[2]
        cls_comp = np.full(len(s.class_n), -1)
        cls_comp[cls_f[part.cells]] = part.comp
        gs_comp = np.full(len(s.sa_n), -1)
        gs_comp[gs_f[part.cells]] = part.comp
        T = np.bincount(
            cls_comp[cls_comp >= 0], weights=r_cls[cls_comp >= 0], minlength=max(n_comp, 1)
        )
        Rc, Cs = r_cls[cls_f[part.cells]], r_gs[gs_f[part.cells]]
        x = Rc * Cs / T[part.comp]
        # multipliers: nu_c + nu_s = -1 - log(x / n); the dropped SA row has nu = 0
        dropped = np.flatnonzero(red.has_free[2] & ~red.keep[2] & (gs_comp >= 0))
        c_star = np.ones(len(T))
        c_star[gs_comp[dropped]] = r_gs[dropped]
        kc, kg = np.maximum(cls_comp, 0), np.maximum(gs_comp, 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            nu_cls = -1.0 - np.log(r_cls / s.class_n) - np.log(c_star[kc] / T[kc])
            nu_gs = -np.log(r_gs / T[kg]) + np.log(c_star[kg] / T[kg])
        block, row = red.d_block[part.dk], red.d_row[part.dk]
        nu_d = np.zeros(len(row))
        nu_d[block == 0] = nu_cls[row[block == 0]]
        nu_d[block == 2] = nu_gs[row[block == 2]]
        n = s.cell_n[red.free[part.cells]]
        D = red.D[part.dk][:, part.cells]
        bound = dual_bound(D, red.d[part.dk], nu_d, None, None, None, n)
        record = {
            "component": "closed form",
            "cells": len(part.cells),
            "facts": 0,
            "method": f"closed form ({len(part.comps)} components)",
            "status": "optimal",
            "solve_time": 0.0,
            "iterations": 0,
        }
        empty = np.zeros(0)
        return PartSolution(part, x, nu_d, empty, empty, bound, [record], ["optimal"])
