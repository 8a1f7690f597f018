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
from .matrix_scaling import bucket_scaling
from .presolve import Reduced

__all__ = ["ClosedForm", "closed_components"]


def _row_multipliers(red: Reduced, part: Part, nu_cls, nu_gs, n):
    """The part's row multipliers from the class and SA-row ones (other rows: 0), and
    the dual bound they give with base measure ``n``."""
    block, row = red.d_block[part.dk], red.d_row[part.dk]
    nu_d = np.zeros(len(row))
    nu_d[block == 0] = nu_cls[row[block == 0]]
    nu_d[block == 2] = nu_gs[row[block == 2]]
    D = red.D[part.dk][:, part.cells]
    return nu_d, dual_bound(D, red.d[part.dk], nu_d, None, None, None, n)


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
        nu_d, bound = _row_multipliers(red, part, nu_cls, nu_gs, s.cell_n[red.free[part.cells]])
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


class MatrixScaling:
    """The closed components of a problem with a prior (:mod:`.prior`): the answer is
    ``x = w a_c b_s`` (``w = n_c q_c[s]``) with the class and value factors that meet
    both totals, found by Newton's method on every bucket's dual at once
    (:func:`bucket_scaling`: :class:`BucketNewton`, or alternate scaling for buckets past
    :data:`NEWTON_MAX_DIM` classes + values); multipliers
    ``nu_c = -1 - log a_c``, ``nu_s = -log b_s``, shifted so that the dropped SA row's
    is 0, give the exact dual bound."""

    name = "matrix scaling"

    def solve(self, red: Reduced, part: Part) -> PartSolution:
        s = red.problem.structure
        cls, gs = s.cell_class[red.free[part.cells]], s.cell_sa[red.free[part.cells]]
        w = s.cell_n[red.free[part.cells]]
        R, C = red.r[0], red.r[2]
        scaling = bucket_scaling(cls, gs, s.sa_bucket[gs], R, C)
        x = scaling(w)
        log_a, log_b = scaling.logs(cls, gs, len(s.class_n), len(s.sa_n))
        it = scaling.iterations
        # our own check: every class total and every value total of the part
        miss_c = np.abs(np.bincount(cls, weights=x, minlength=len(R)) - R)[cls]
        miss_s = np.abs(np.bincount(gs, weights=x, minlength=len(C)) - C)[gs]
        err = max(
            np.max(miss_c / np.maximum(R[cls], 1.0), initial=0.0),
            np.max(miss_s / np.maximum(C[gs], 1.0), initial=0.0),
        )
        nu_cls, nu_gs = -1.0 - log_a, -log_b
        # the dropped SA row of each component has multiplier 0: shift its component
        gs_comp = np.full(len(s.sa_n), -1)
        gs_comp[gs] = part.comp
        cls_comp = np.full(len(s.class_n), -1)
        cls_comp[cls] = part.comp
        shift = np.zeros(int(part.comp.max(initial=-1)) + 1)
        dropped = np.flatnonzero(red.has_free[2] & ~red.keep[2] & (gs_comp >= 0))
        shift[gs_comp[dropped]] = nu_gs[dropped]
        nu_gs = nu_gs - np.where(gs_comp >= 0, shift[np.maximum(gs_comp, 0)], 0.0)
        nu_cls = nu_cls + np.where(cls_comp >= 0, shift[np.maximum(cls_comp, 0)], 0.0)
        nu_d, bound = _row_multipliers(red, part, nu_cls, nu_gs, w)
        record = {
            "component": "matrix scaling",
            "cells": len(part.cells),
            "facts": 0,
            "method": f"matrix scaling ({len(part.comps)} components)",
            "status": "optimal" if err <= 1e-9 else "optimal_inaccurate",
            "solve_time": 0.0,
            "iterations": it,
        }
        empty = np.zeros(0)
        status = "optimal" if err <= 1e-9 else "inaccurate"
        return PartSolution(part, x, nu_d, empty, empty, bound, [record], [status])
