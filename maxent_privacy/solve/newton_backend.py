"""Backend: our Newton solver on the dual (:mod:`.newton`) for a batch of components.

``prepare`` cuts the arrays :func:`.newton.newton_maxent` takes out of the reduced
problem (class rows eliminated: the classes and their totals; the other data rows and the
equality facts as ``O x = b``; the inequality facts as ``G x <= h``), ``run_job`` runs it
(locally or on a Dask worker: it only sees arrays) and returns errors as values, and
``finish`` maps the answer back onto the part's rows, or raises: the dual bound below 0
says "no table", believed once one HiGHS LP agrees (:class:`InfeasibleKnowledge`; when
the LP finds a table, the cells it proves 0 are fixed and the part solved again); a
stall next to the boundary yields the cells proved 0 (:class:`.forced_zeros.ForcedZeros`),
and a stall with none is checked by an LP too before the conic fallback.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import InfeasibleKnowledge, SolverFailed
from .components import Part, PartSolution
from .forced_zeros import ForcedZeros, lp_status_of, lp_zeros_by_component
from .newton import (
    DualUnbounded,
    Layout,
    NewtonSettings,
    NotConverged,
    class_rows,
    newton_maxent,
)
from .presolve import Reduced

__all__ = ["Newton", "NewtonJob", "run_job"]


@dataclass(frozen=True)
class NewtonJob:
    """The arrays of one batch for :func:`newton_maxent` (picklable: sent to Dask workers):
    the cells' base measures ``n`` and classes ``cls`` (local numbers), the class totals
    ``R``, the other equality rows ``O x = o``, the inequalities ``G x <= h`` (or None), the
    cells' components ``comp`` and the rows' buckets ``blocks`` (block-Jacobi steps)."""

    n: np.ndarray
    cls: np.ndarray
    R: np.ndarray
    O: sp.csr_array
    o: np.ndarray
    G: sp.csr_array | None
    h: np.ndarray | None
    comp: np.ndarray
    blocks: np.ndarray

    def system(self) -> tuple:
        """The batch's rows as ``A x = b`` (class rows first), ``G x <= h``."""
        A = sp.vstack([class_rows(self.cls, len(self.R)), self.O], format="csr")
        return A, np.concatenate([self.R, self.o]), self.G, self.h


def run_job(job: NewtonJob, kw):
    """One batch through :func:`newton_maxent`; errors as values (picklable)."""
    try:
        layout = Layout(comp=job.comp, row_block=job.blocks)
        return "ok", newton_maxent(
            job.n, job.cls, job.R, job.O, job.o, job.G, job.h,
            layout=layout, settings=NewtonSettings(**kw),
        )  # fmt: skip
    except DualUnbounded as err:
        return "unbounded", np.flatnonzero(np.isin(err.cell_comp, err.components))
    except NotConverged as err:
        return "stalled", (str(err), err.small, err.zeros, err.state, err.done)


def _row_buckets(red: Reduced, rows: np.ndarray, n_facts: int) -> np.ndarray:
    """The bucket of each row of ``O`` for Newton's block-Jacobi steps: the SA (Relation)
    rows of one bucket share their bucket's code; the other data rows and the facts get
    -1 (a block of their own)."""
    s = red.problem.structure
    blk, row = red.d_block[rows], red.d_row[rows]
    n_b = len(s.sa_bucket)
    sa = (blk == 2) & (row < n_b)
    bucket = s.sa_bucket[np.where(sa, row, 0)] if n_b else np.zeros(len(rows), dtype=int)
    return np.concatenate([np.where(sa, bucket, -1), np.full(n_facts, -1)])


class Newton:
    """Newton on the dual with the record classes eliminated (``solver="maxent"``)."""

    name = "MAXENT"

    def __init__(self, tol: float, max_iter: int, time_limit: float | None, verbose: bool):
        self.tol, self.max_iter = tol, max_iter
        self.time_limit, self.verbose = time_limit, verbose

    def options(self, t0: float, local: bool) -> dict:
        deadline = None if self.time_limit is None else t0 + float(self.time_limit)
        return {
            "tol": self.tol,
            "max_iter": self.max_iter,
            "deadline": deadline,
            "verbose": self.verbose and local,
        }

    @staticmethod
    def prepare(red: Reduced, part: Part) -> NewtonJob:
        """The arrays of :func:`newton_maxent` for this part."""
        s = red.problem.structure
        cells, dk = part.cells, part.dk
        other = dk[red.d_block[dk] != 0]
        O = sp.vstack([red.D[other], red.Feq[part.ek]], format="csr")[:, cells]
        o = np.concatenate([red.d[other], red.feq[part.ek]])
        G = h = None
        if len(part.ik):
            G, h = sp.csr_array(red.Fin[part.ik][:, cells]), red.fin[part.ik]
        used, local = np.unique(s.cell_class[red.free[cells]], return_inverse=True)
        n = s.cell_n[red.free[cells]]
        blocks = _row_buckets(red, other, len(part.ek))
        return NewtonJob(n, local, red.r[0][used], sp.csr_array(O), o, G, h, part.comp, blocks)

    def finish(self, red: Reduced, part: Part, args: NewtonJob, outcome, elapsed: float):
        """The part's answer from a job's outcome (or the error it proves)."""
        kind, res = outcome
        if kind == "unbounded":
            raise self._unbounded(red, part, args, res)
        if kind == "stalled":
            raise self._stalled(red, part, args, *res)
        return self._answer(red, part, res, elapsed)

    def _answer(self, red: Reduced, part: Part, res, elapsed: float) -> PartSolution:
        """The part's answer from Newton's result (multipliers mapped to the part's rows)."""
        s = red.problem.structure
        dk = part.dk
        is_cls = red.d_block[dk] == 0
        n_o = int((~is_cls).sum())
        used = np.unique(s.cell_class[red.free[part.cells]])
        nu_cls = np.zeros(len(s.class_n))
        nu_cls[used] = res.nu_cls
        nu_d = np.zeros(len(dk))
        nu_d[is_cls] = nu_cls[red.d_row[dk[is_cls]]]
        nu_d[~is_cls] = res.lam[:n_o]
        record = {
            "component": f"{len(part.comps)} components",
            "cells": len(part.cells),
            "facts": len(part.ek) + len(part.ik),
            "method": "maxent (dual Newton)",
            "status": "optimal",
            "solve_time": elapsed,
            "iterations": res.iterations,
            "wall_time": elapsed,
            "polished": False,
        }
        nu_e, mu = res.lam[n_o:], res.mu
        bounds = self._bounds(red, part, nu_d, nu_e, mu)
        return PartSolution(
            part, res.x, nu_d, nu_e, mu, float(bounds.sum()), [record], ["optimal"], bounds=bounds
        )

    @staticmethod
    def _bounds(red: Reduced, part: Part, nu_d, nu_e, mu) -> np.ndarray:
        """phi per component: ``lam.b + mu.h + sum_c R_c (nu_c + 1)`` (the dual bound)."""
        comps = part.comps
        d = red.d[part.dk]
        is_cls = red.d_block[part.dk] == 0
        terms = nu_d * d + np.where(is_cls & (d > 0), d, 0.0)
        terms = np.where(is_cls & (d <= 0), 0.0, terms)

        def per(labels, w):
            return np.bincount(np.searchsorted(comps, labels), weights=w, minlength=len(comps))

        order = np.argsort(comps)
        comps = comps[order]
        out = per(part.comp_d, terms) + per(part.comp_e, nu_e * red.feq[part.ek])
        out = out + per(part.comp_i, mu * red.fin[part.ik])
        back = np.empty_like(out)
        back[order] = out
        return back

    def _unbounded(self, red: Reduced, part: Part, args, bad_local) -> Exception:
        """Newton's "no table" on some components, checked by one LP over them before it
        is believed: :class:`InfeasibleKnowledge` when HiGHS finds no table either. When
        it finds one, the dual was not attained (phi -> 0 from above, cells forced to 0
        that presolve did not see): the cells the LP proves 0 are fixed and the
        components solved again (:class:`ForcedZeros`)."""
        A, b, G, h = args.system()
        status = lp_status_of(A, b, G, h, part.comp, bad_local)
        if status == "infeasible":
            return self._infeasible(red, part, bad_local)
        found = np.zeros(0, dtype=int)
        if status == "optimal":
            found = lp_zeros_by_component(A, b, G, h, part.comp, bad_local)
        if not len(found):
            return SolverFailed(
                f"solver 'maxent': its dual bound fell below 0 but an LP says {status!r}; "
                "try solver='CLARABEL' (a conic solver)"
            )
        if self.verbose:
            print(f"maxent: an LP finds a table; {len(found)} cells forced to 0; solving again")
        return ForcedZeros(red.free[part.cells[found]], "LP")

    @staticmethod
    def _infeasible(red: Reduced, part: Part, bad_local) -> InfeasibleKnowledge:
        cols = part.cells[bad_local]
        rows = red.problem.rows
        hit_e = np.asarray(abs(red.Feq[part.ek][:, cols]).sum(axis=1)).ravel() > 0
        hit_i = np.asarray(abs(red.Fin[part.ik][:, cols]).sum(axis=1)).ravel() > 0
        names = sorted(
            set(rows.facts_of("==", part.ek[hit_e]) + rows.facts_of("<=", part.ik[hit_i]))
        )
        return InfeasibleKnowledge(
            f"the facts contradict the data: {len(names)} facts share the infeasible "
            f"part ({', '.join(names[:5])}" + (", ..." if len(names) > 5 else "") + ")",
            conflicts=pd.DataFrame({"fact": names}),
        )

    def _stalled(self, red, part, args, message, small, found, state, done) -> Exception:
        """Newton stopped short: the cells its recession certificate proved 0, else the
        cells next to 0 that an LP proves 0 (:class:`ForcedZeros`). With none, an LP on
        the components left decides whether they have a table at all: none is
        :class:`InfeasibleKnowledge` at once (no conic fallback to wait for)."""
        how = "dual certificate"
        if not len(found) and len(small):
            found = lp_zeros_by_component(*args.system(), part.comp, small)
            how = "LP"
        if not len(found):
            left = small
            if not len(left):
                left = np.arange(len(part.cells)) if done is None else np.flatnonzero(~done)
            if len(left) and lp_status_of(*args.system(), part.comp, left) == "infeasible":
                return self._infeasible(red, part, left)
            return SolverFailed(
                f"solver 'maxent': {message}; try solver='CLARABEL' (a conic solver)"
            )
        if self.verbose:
            print(f"maxent: {len(found)} cells forced to 0 ({how}); solving again")
        return ForcedZeros(
            red.free[part.cells[found]], how, self._kept(red, part, state, done, found)
        )

    def _kept(self, red, part, state, done, found) -> list[PartSolution]:
        """Answers of the components that met the certificate and hold no forced zero."""
        if state is None or done is None:
            return []
        bad = np.unique(part.comp[~done])
        bad = np.union1d(bad, part.comp[found])
        whole = self._answer(red, part, state, 0.0)
        return [p for p in whole.split() if p.part.comps[0] not in bad]
