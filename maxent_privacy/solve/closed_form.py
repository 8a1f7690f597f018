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
import pandas as pd

from ..numerics import dual_bound
from .components import Part, PartSolution, closed_components
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


#: matrix scaling stops when every class total is met to this (relative) or after
#: :data:`SCALING_MAX_ITER` sweeps (the certificate then says how far it got)
SCALING_TOL = 1e-13
SCALING_MAX_ITER = 10_000


#: buckets up to this many classes + values go to the batched Newton of :class:`BucketNewton`
NEWTON_MAX_DIM = 40


class BucketNewton:
    """The I-projection of every bucket at once by Newton's method on its dual, batched:
    ``x[c, s] = w[c, s] exp(alpha_c + beta_s)`` with the bucket's class totals ``R`` and
    value totals ``C``; one dense (classes + values - 1) system per bucket (beta of the
    bucket's first value fixed at 0), a backtracking step per bucket, warm-started from
    the previous call. Quadratic convergence where alternate scaling crawls (priors with
    entries near 0)."""

    def __init__(self, cls, gs, bucket, R, C):
        frame = pd.DataFrame({"b": bucket, "c": cls, "g": gs})
        self.bi = pd.factorize(frame["b"])[0]
        self.ci = frame.groupby("b")["c"].rank(method="dense").to_numpy(int) - 1
        self.si = frame.groupby("b")["g"].rank(method="dense").to_numpy(int) - 1
        B, Cm, Sm = self.bi.max() + 1, self.ci.max() + 1, self.si.max() + 1
        self.shape = (B, Cm, Sm)
        self.R = np.zeros((B, Cm))
        self.R[self.bi, self.ci] = R[cls]
        self.C = np.zeros((B, Sm))
        self.C[self.bi, self.si] = C[gs]
        self.alpha, self.beta = np.zeros((B, Cm)), np.zeros((B, Sm))
        self.scale = np.maximum(self.R.max(axis=1), 1.0)

    @staticmethod
    def fits(cls, gs, bucket) -> bool:
        frame = pd.DataFrame({"b": bucket, "c": cls, "g": gs})
        dims = frame.groupby("b")["c"].nunique() + frame.groupby("b")["g"].nunique()
        return bool(len(dims)) and int(dims.max()) <= NEWTON_MAX_DIM

    def _dual(self, W, alpha, beta):
        with np.errstate(over="ignore"):
            E = W * np.exp(np.minimum(alpha[:, :, None] + beta[:, None, :], 700.0))
        f = E.sum(axis=(1, 2)) - (self.R * alpha).sum(1) - (self.C * beta).sum(1)
        return E, f

    def __call__(self, w: np.ndarray, tol: float = 1e-12, max_iter: int = 200) -> np.ndarray:
        B, Cm, Sm = self.shape
        W = np.zeros(self.shape)
        W[self.bi, self.ci, self.si] = w
        alpha, beta = self.alpha, self.beta
        E, f = self._dual(W, alpha, beta)
        self.iterations = 0
        for _ in range(max_iter):
            r, c = E.sum(axis=2), E.sum(axis=1)
            g = np.concatenate([r - self.R, (c - self.C)[:, 1:]], axis=1)
            if np.max(np.abs(g) / self.scale[:, None], initial=0.0) <= tol:
                break
            n = Cm + Sm - 1
            H = np.zeros((B, n, n))
            H[:, :Cm, :Cm] = r[:, :, None] * np.eye(Cm)
            H[:, Cm:, Cm:] = c[:, 1:, None] * np.eye(Sm - 1)
            H[:, :Cm, Cm:] = E[:, :, 1:]
            H[:, Cm:, :Cm] = np.transpose(E[:, :, 1:], (0, 2, 1))
            diag = np.einsum("bii->bi", H)
            diag[diag <= 0] = 1.0  # padding (and empty rows): no move
            # a bucket whose positive cells fall apart into several blocks (zero prior
            # weights) has one free shift of the multipliers per extra block, along which
            # the gradient is 0: a ridge far below the counts makes H invertible there
            diag += 1e-12 * self.scale[:, None]
            d = -np.linalg.solve(H, g[:, :, None])[:, :, 0]
            da = d[:, :Cm]
            db = np.concatenate([np.zeros((B, 1)), d[:, Cm:]], axis=1)
            slope = (g * d).sum(axis=1)
            # near the answer f changes below its rounding: take the full Newton step
            near = np.max(np.abs(g) / self.scale[:, None], axis=1) <= 1e-6
            t = np.ones(B)
            todo = np.ones(B, dtype=bool)
            new_a, new_b, new_E, new_f = alpha.copy(), beta.copy(), E.copy(), f.copy()
            for _ in range(40):  # backtracking per bucket (Armijo)
                k = np.flatnonzero(todo)
                a_k = alpha[k] + t[k, None] * da[k]
                b_k = beta[k] + t[k, None] * db[k]
                E_k = W[k] * np.exp(np.minimum(a_k[:, :, None] + b_k[:, None, :], 700.0))
                f_k = E_k.sum(axis=(1, 2)) - (self.R[k] * a_k).sum(1) - (self.C[k] * b_k).sum(1)
                ok = (f_k <= f[k] + 1e-4 * t[k] * slope[k]) | (near[k] & (t[k] == 1.0))
                acc = k[ok]
                new_a[acc], new_b[acc], new_E[acc], new_f[acc] = a_k[ok], b_k[ok], E_k[ok], f_k[ok]
                todo[acc] = False
                t[k[~ok]] /= 2
                if not todo.any():
                    break
            alpha, beta, E, f = new_a, new_b, new_E, new_f
            self.iterations += 1
        self.alpha, self.beta = alpha, beta
        return E[self.bi, self.ci, self.si]

    def logs(self, cls, gs, n_cls: int, n_gs: int):
        """The factors' logarithms per class and per SA row (``x = w e^(alpha + beta)``)."""
        alpha, beta = np.zeros(n_cls), np.zeros(n_gs)
        alpha[cls] = self.alpha[self.bi, self.ci]
        beta[gs] = self.beta[self.bi, self.si]
        return alpha, beta


class AlternateScaling:
    """Alternate scaling (Sinkhorn's iterative proportional fitting) of ``x = w a_c b_s``
    to the class totals ``R`` and value totals ``C``, warm-started from the previous call;
    the same interface as :class:`BucketNewton` (for buckets too large for it)."""

    def __init__(self, cls, gs, R, C):
        self.cls, self.gs, self.R, self.C = cls, gs, R, C
        self.a, self.b = np.ones(len(R)), np.ones(len(C))
        self.uc, self.ug = np.unique(cls), np.unique(gs)
        self.iterations = 0

    def __call__(self, w: np.ndarray) -> np.ndarray:
        a, b, cls, gs, uc, ug = self.a, self.b, self.cls, self.gs, self.uc, self.ug
        for self.iterations in range(1, SCALING_MAX_ITER + 1):  # noqa: B007
            b[ug] = self.C[ug] / np.bincount(gs, weights=w * a[cls], minlength=len(b))[ug]
            got = np.bincount(cls, weights=w * b[gs], minlength=len(a))[uc]
            err = np.max(np.abs(a[uc] * got - self.R[uc]) / np.maximum(self.R[uc], 1.0))
            a[uc] = self.R[uc] / got
            if err <= SCALING_TOL:
                break
        return w * a[cls] * b[gs]

    def logs(self, cls, gs, n_cls: int, n_gs: int):
        with np.errstate(divide="ignore"):
            return np.log(self.a), np.log(self.b)


def bucket_scaling(cls, gs, bucket, R, C):
    """The I-projection of every bucket (cells ``cls``, ``gs`` of ``bucket``; totals
    ``R`` per class, ``C`` per SA row) as a warm-started callable ``w -> x``:
    :class:`BucketNewton`, or :class:`AlternateScaling` past :data:`NEWTON_MAX_DIM`."""
    if BucketNewton.fits(cls, gs, bucket):
        return BucketNewton(cls, gs, bucket, R, C)
    return AlternateScaling(cls, gs, R, C)


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
        miss = np.abs(np.bincount(cls, weights=x, minlength=len(R)) - R)[cls]
        err = np.max(miss / np.maximum(R[cls], 1.0), initial=0.0)
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
