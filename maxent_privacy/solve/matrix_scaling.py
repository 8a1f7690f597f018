"""Matrix scaling of buckets: the I-projection of a prior onto one release's class and
value totals, ``x[c, s] = w[c, s] a_c b_s``.

Used by the closed components of a problem with a prior (:class:`.closed_form.MatrixScaling`)
and by the learning adversary's projections (:mod:`maxent_privacy.adversaries.projection`),
which call it once per round, warm-started.

* :class:`BucketNewton`: every bucket at once by Newton's method on the bucket's dual with
  the class factors eliminated (they are exact for any value factors: a class's cells are
  its total times a softmax), so each step solves one small system per bucket in the
  value multipliers only;
* :class:`AlternateScaling`: Sinkhorn's alternate scaling, for buckets too large for
  the batched dense systems.

>>> import numpy as np
>>> cls, gs = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
>>> one = np.array([1.0, 1.0])
>>> scale = bucket_scaling(cls, gs, np.zeros(4, int), R=one, C=one)
>>> np.round(scale(np.array([0.9, 0.1, 0.5, 0.5])), 3).tolist()
[0.75, 0.25, 0.25, 0.75]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["AlternateScaling", "BucketNewton", "bucket_scaling", "NEWTON_MAX_DIM"]

#: matrix scaling stops when every class total is met to this (relative) or after
#: :data:`SCALING_MAX_ITER` sweeps (the certificate then says how far it got)
SCALING_TOL = 1e-13
SCALING_MAX_ITER = 10_000

#: the largest change of a value multiplier in one Newton step of :class:`BucketNewton`
STEP_MAX = 30.0

#: buckets up to this many classes + values go to the batched Newton of :class:`BucketNewton`
NEWTON_MAX_DIM = 40


class BucketNewton:
    """The I-projection of every bucket at once by Newton's method on its dual, batched.

    ``x[c, s] = R_c pi[c, s]`` with ``pi[c] = softmax(log w[c] + beta)``: the class totals
    hold for any value multipliers ``beta``, which minimise the bucket's dual
    ``sum_c R_c log Z_c(beta) - sum_s C_s beta_s`` (convex; ``beta`` of the bucket's first
    value fixed at 0). One dense (values - 1) system per bucket and step, a backtracking
    step per bucket, warm-started from the previous call: quadratic convergence where
    alternate scaling crawls (priors with entries near 0)."""

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
        self.beta = np.zeros((B, Sm))
        self.logZ = np.zeros((B, Cm))
        self.scale = np.maximum(self.R.max(axis=1), 1.0)
        self.iterations = 0

    @staticmethod
    def fits(cls, gs, bucket) -> bool:
        frame = pd.DataFrame({"b": bucket, "c": cls, "g": gs})
        dims = frame.groupby("b")["c"].nunique() + frame.groupby("b")["g"].nunique()
        return bool(len(dims)) and int(dims.max()) <= NEWTON_MAX_DIM

    def _softmax(self, logW, top, beta, R, C):
        """pi[c, s], log Z_c and the dual per bucket at ``beta`` (rows of ``logW``; ``top``:
        each class's largest log-weight, so that no exponent is positive)."""
        live = np.isfinite(top)
        m = np.where(live, top, 0.0) + beta.max(axis=1)[:, None]
        e = np.exp(logW + (beta[:, None, :] - m[:, :, None]))
        Z = np.einsum("bcs->bc", e)
        low = (Z < 1e-250) & live  # the largest terms sit far apart: exact max
        if low.any():
            b, c = np.nonzero(low)
            z = logW[b, c] + beta[b]
            m[b, c] = z.max(axis=1)
            e[b, c] = np.exp(z - m[b, c][:, None])
            Z[b, c] = e[b, c].sum(axis=1)
        empty = Z <= 0  # padding classes (no cell): pi = 0, log Z = 0
        Z[empty] = 1.0
        pi = e / Z[:, :, None]
        logZ = np.log(Z) + np.where(empty, 0.0, m)
        f = np.einsum("bc,bc->b", R, logZ) - np.einsum("bs,bs->b", C, beta)
        return pi, logZ, f

    def _step(self, x, pi, g):
        """The Newton direction in the value multipliers (the first value's is 0)."""
        col = np.einsum("bcs->bs", x)
        H = -np.matmul(np.swapaxes(x[:, :, 1:], 1, 2), pi[:, :, 1:])
        diag = np.einsum("bii->bi", H)
        diag += col[:, 1:]
        # padding values (total 0, no cell): no move. A value whose cells all underflow
        # keeps a diagonal ~0, so its step is long (cut to STEP_MAX below): it climbs
        # by e^STEP_MAX per step instead of crawling by its gradient
        diag[self.C[:, 1:] <= 0] = 1.0
        # a bucket whose positive cells fall apart into several blocks (zero prior
        # weights) has one free shift per extra block, along which the gradient is 0:
        # a ridge far below the counts makes H invertible there
        diag += 1e-12 * self.scale[:, None]
        d = -np.linalg.solve(H, g[:, 1:, None])[:, :, 0]
        # a value whose cells are all ~0 makes H nearly singular and the step huge: a
        # step of at most STEP_MAX in every multiplier (exp(STEP_MAX) in every factor)
        longest = np.abs(d).max(axis=1, initial=0.0)
        d *= np.minimum(1.0, STEP_MAX / np.maximum(longest, 1e-300))[:, None]
        return np.concatenate([np.zeros((len(d), 1)), d], axis=1)

    def __call__(self, w: np.ndarray, tol: float = 1e-12, max_iter: int = 200) -> np.ndarray:
        W = np.zeros(self.shape)
        W[self.bi, self.ci, self.si] = w
        with np.errstate(divide="ignore"):
            logW = np.log(W)
        top = logW.max(axis=2)  # -inf: a padding class (no cell)
        R, C, beta = self.R, self.C, self.beta
        pi, logZ, f = self._softmax(logW, top, beta, R, C)
        self.iterations = 0
        for _ in range(max_iter):
            x = R[:, :, None] * pi
            g = np.einsum("bcs->bs", x) - C
            err = np.abs(g).max(axis=1) / self.scale
            if err.max(initial=0.0) <= tol:
                break
            d = self._step(x, pi, g)
            slope = np.einsum("bs,bs->b", g, d)
            near = err <= 1e-6  # f changes below its rounding there: full Newton step
            old_beta, old_f = beta, f
            beta = old_beta + d  # the full step, kept where it is good enough
            pi, logZ, f = self._softmax(logW, top, beta, R, C)
            todo = np.flatnonzero((f > old_f + 1e-4 * slope) & ~near)
            t = 1.0
            for _ in range(40):  # backtracking where it is not (Armijo, per bucket)
                if not len(todo):
                    break
                t /= 2
                b_k = old_beta[todo] + t * d[todo]
                pi_k, logZ_k, f_k = self._softmax(logW[todo], top[todo], b_k, R[todo], C[todo])
                ok = (f_k <= old_f[todo] + 1e-4 * t * slope[todo]) | (t < 1e-10)
                acc = todo[ok]
                beta[acc], pi[acc], logZ[acc], f[acc] = b_k[ok], pi_k[ok], logZ_k[ok], f_k[ok]
                todo = todo[~ok]
            self.iterations += 1
        self.beta, self.logZ = beta, logZ
        return (R[:, :, None] * pi)[self.bi, self.ci, self.si]

    def logs(self, cls, gs, n_cls: int, n_gs: int):
        """The factors' logarithms per class and per SA row (``x = w e^(alpha + beta)``)."""
        alpha, beta = np.zeros(n_cls), np.zeros(n_gs)
        with np.errstate(divide="ignore"):
            a = np.log(self.R) - self.logZ
        alpha[cls] = a[self.bi, self.ci]
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
