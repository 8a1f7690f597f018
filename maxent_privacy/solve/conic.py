"""Backend: one component through a cvxpy conic solver (Clarabel, ECOS, SCS, MOSEK).

The component is one vectorized cvxpy problem: ``maximize -sum rel_entr(y, n)`` (with
``-y log(y / z)`` for placement cells of pooled releases) subject to its kept data rows,
its scaled fact rows and its convex facts (written on the model's variable and
substituted), soft facts as an L1 penalty ``N * weight * violation``. Duals are read per
constraint; a linear component's answer is then polished (:mod:`.polish`). A status of
infeasible names the facts of the component; a solver error or failure raises
:class:`SolverFailed`.
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import InfeasibleKnowledge, SolverFailed
from ..knowledge.facts import substitute
from ..numerics import dual_bound
from . import tolerances as tl
from .components import Part, PartSolution
from .polish import RowBlock, polish_kkt
from .presolve import Reduced

__all__ = ["Conic"]


class Conic:
    """A cvxpy solver by name, with its options; ``polish`` refines linear components;
    ``suspects`` reports cells near 0 when the polish fails (for an LP check)."""

    def __init__(self, name: str, options: dict, polish: bool, suspects: bool, verbose: bool):
        self.name, self.options = name, dict(options)
        self.polish, self.suspects, self.verbose = polish, suspects, verbose

    def solve(self, red: Reduced, part: Part) -> PartSolution:
        p = red.problem
        y = cp.Variable(len(part.cells))
        rows = self._rows(red, part)
        cons = [A @ y == b for A, b in rows[:2] if A is not None]
        if rows[2][0] is not None:
            cons.append(rows[2][0] @ y <= rows[2][1])
        n_linear = len(cons)
        repl = self._embedding(red, part, y)
        cons += [
            substitute(p.convex[j].constraint, p.x_var, repl)
            for j in part.ck
            if p.convex[j].sense != "soft"
        ]
        objective, placements = self._objective(red, part, y, repl)
        prob = cp.Problem(cp.Maximize(objective), cons)
        t0 = time.perf_counter()
        try:
            prob.solve(solver=self.name, verbose=self.verbose, **self.options)
        except cp.error.SolverError as err:
            raise SolverFailed(
                f"{self.name} failed on component {part.comps[0]} ({len(part.cells)} cells): {err}"
            ) from err
        elapsed = time.perf_counter() - t0
        self._check_status(red, part, prob, y)
        duals = [np.asarray(c.dual_value, dtype=float).ravel() for c in cons[:n_linear]]
        return self._answer(red, part, rows, prob, y, duals, elapsed, placements)

    @staticmethod
    def _rows(red: Reduced, part: Part) -> list:
        """(A, b) of the data rows, equality facts, inequality facts (None when empty)."""
        cells = part.cells
        out = []
        for F, f, k in (
            (red.D, red.d, part.dk),
            (red.Feq, red.feq, part.ek),
            (red.Fin, red.fin, part.ik),
        ):
            out.append((sp.csr_array(F[k][:, cells]), f[k]) if len(k) else (None, None))
        return out

    @staticmethod
    def _embedding(red: Reduced, part: Part, y):
        """The model's variable as an expression of ``y`` (for convex facts), or None."""
        if not len(part.ck):
            return None
        p = red.problem
        n, k = p.n_cells, len(part.cells)
        S = sp.csr_array((np.ones(k), (red.free[part.cells], np.arange(k))), shape=(n, k))
        return S @ y + red.x

    def _objective(self, red: Reduced, part: Part, y, repl):
        """The entropy (with placement terms) minus soft penalties; and whether the part
        holds placement cells."""
        p = red.problem
        s = p.structure
        nk = s.cell_n[red.free[part.cells]]
        ref = s.placement_of[red.free[part.cells]]
        placed = ref >= 0
        if placed.any():
            objective = self._placement_entropy(red, part, y, ref, placed, nk)
        else:
            objective = -cp.sum(cp.rel_entr(y, nk))
        for j in part.ck:
            f = p.convex[j]
            if f.sense == "soft":
                # Kazama-Tsujii style penalty: N * weight * (violation in the fact's units)
                gap = substitute(f.constraint.args[0] - f.constraint.args[1], p.x_var, repl)
                hinge = cp.abs(gap) if f.soft_sense == "==" else cp.pos(gap)
                objective = objective - p.n_records * f.weight * cp.sum(hinge)
        return objective, bool(placed.any())

    @staticmethod
    def _placement_entropy(red, part, y, ref, placed, nk):
        """``-z log(z / n)`` for value cells, ``-y log(y / z)`` for placements."""
        pos_of = np.full(red.problem.n_cells, -1)
        pos_of[red.free] = np.arange(red.n_free)
        local = np.full(red.n_free, -1)
        local[part.cells] = np.arange(len(part.cells))
        zpos = pos_of[ref[placed]]
        zloc = local[np.maximum(zpos, 0)]
        yi = np.flatnonzero(placed)
        fixed_ref = zpos < 0
        zi = np.flatnonzero(~placed)
        objective = -cp.sum(cp.rel_entr(y[zi], nk[zi]))
        if (~fixed_ref).any():
            objective -= cp.sum(cp.rel_entr(y[yi[~fixed_ref]], y[zloc[~fixed_ref]]))
        if fixed_ref.any():
            zval = np.maximum(red.x[ref[placed][fixed_ref]], 1e-300)
            objective -= cp.sum(cp.rel_entr(y[yi[fixed_ref]], zval))
        # placements presolve fixed at y > 0 whose value cell is free: -y log(y / z)
        # still depends on z (y log z, up to a constant)
        s = red.problem.structure
        yf = np.flatnonzero((s.placement_of >= 0) & (red.x > 0))
        zp = pos_of[s.placement_of[yf]]
        yf, zp = yf[zp >= 0], zp[zp >= 0]
        zl = local[zp]
        if (zl >= 0).any():
            coef = np.bincount(zl[zl >= 0], weights=red.x[yf[zl >= 0]], minlength=len(nk))
            k = np.flatnonzero(coef > 0)
            objective += cp.sum(cp.multiply(coef[k], cp.log(y[k])))
        return objective

    def _check_status(self, red: Reduced, part: Part, prob, y) -> None:
        rows = red.problem.rows
        names = rows.facts_of("==", part.ek) + rows.facts_of("<=", part.ik)
        names += [red.problem.convex[j].name for j in part.ck]
        uniq = sorted(set(names))
        if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            raise InfeasibleKnowledge(
                f"the facts contradict the data: {len(uniq)} facts share the "
                f"infeasible part ({', '.join(uniq[:5])}"
                + (", ..." if len(uniq) > 5 else "")
                + ")",
                conflicts=pd.DataFrame({"fact": uniq}),
            )
        if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or y.value is None:
            raise SolverFailed(
                f"{self.name} returned status {prob.status!r} on component {part.comps[0]} "
                f"({len(part.cells)} cells, facts: {', '.join(names[:5])})"
            )

    def _answer(self, red, part, rows, prob, y, duals, elapsed, placements) -> PartSolution:
        """Duals in order, polish, the dual bound and the record of this component."""
        nk = red.problem.structure.cell_n[red.free[part.cells]]
        yk = np.maximum(np.asarray(y.value).ravel(), 0.0)
        it = iter(duals)
        nud = next(it) if rows[0][0] is not None else np.zeros(0)
        nu_e = next(it) if rows[1][0] is not None else None
        mu_i = np.maximum(next(it), 0.0) if rows[2][0] is not None else None
        status = prob.status
        linear = not len(part.ck) and not placements
        attempt = (
            self.polish
            and linear
            and len(part.dk) + len(part.ek) + len(part.ik) <= tl.POLISH_MAX_ROWS
        )
        polished = False
        if attempt:
            deadline = time.perf_counter() + max(
                tl.POLISH_MIN_SECONDS, tl.POLISH_TIME_FACTOR * elapsed
            )
            (Ad, bd), (Fe, fe), (Fi, fi) = rows
            out = polish_kkt(
                RowBlock(
                    Ad if Ad is not None else sp.csr_array((0, len(yk))),
                    bd if bd is not None else np.zeros(0),
                    nud,
                ),
                RowBlock(Fe, fe, nu_e), RowBlock(Fi, fi, mu_i), nk, deadline,
            )  # fmt: skip
            if out is not None:
                polished = True
                yk, nud, nu_e, mu_i = out
        suspects = np.zeros(0, dtype=int)
        if attempt and self.suspects and not polished:
            suspects = red.free[part.cells][yk < tl.SUSPECT * np.maximum(1.0, nk)]
        stats = prob.solver_stats
        record = {
            "component": int(part.comps[0]),
            "cells": len(part.cells),
            "facts": len(part.ek) + len(part.ik) + len(part.ck),
            "method": self.name,
            "status": cp.OPTIMAL if polished else status,
            "solve_time": stats.solve_time if stats.solve_time is not None else elapsed,
            "iterations": stats.num_iters,
            "wall_time": elapsed,
            "polished": polished,
        }
        if polished:
            # the polished answer is certified by our own KKT check (residuals of floating
            # point, multipliers of the right sign), whatever the solver said
            record["solver_status"] = status
        bound = np.nan
        if linear:
            (Ad, bd), (Fe, fe), (Fi, fi) = rows
            A_all = (
                sp.vstack([a for a in (Ad, Fe) if a is not None], format="csr")
                if (Ad is not None or Fe is not None)
                else sp.csr_array((0, len(yk)))
            )
            b_all = np.concatenate([b for b in (bd, fe) if b is not None] or [np.zeros(0)])
            nu_all = np.concatenate(
                [v for v, a in ((nud, Ad), (nu_e, Fe)) if a is not None] or [np.zeros(0)]
            )
            bound = dual_bound(A_all, b_all, nu_all, Fi, fi, mu_i, nk)
        empty = np.zeros(0)
        return PartSolution(
            part, yk, nud, empty if nu_e is None else nu_e, empty if mu_i is None else mu_i,
            bound, [record], [record["status"]], suspects,
        )  # fmt: skip
