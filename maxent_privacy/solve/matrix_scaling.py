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

from .small_systems import gram, solve_spd

__all__ = ["AlternateScaling", "BucketNewton", "bucket_scaling", "NEWTON_MAX_DIM"]

#: matrix scaling stops when every class total is met to this (relative) or after
#: :data:`SCALING_MAX_ITER` sweeps (the certificate then says how far it got)
SCALING_TOL = 1e-13
SCALING_MAX_ITER = 10_000

#: the largest change of a value multiplier in one Newton step of :class:`BucketNewton`
STEP_MAX = 30.0

#: buckets up to this many classes + values go to the batched Newton of :class:`BucketNewton`
NEWTON_MAX_DIM = 40


def bucket_layout(cls, gs, bucket):
    """Each cell's bucket (0, 1, ...), class and value rank within its bucket."""
    bi = pd.factorize(bucket)[0]
    return bi, dense_rank_within(bi, cls), dense_rank_within(bi, gs)


def dense_rank_within(group: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Each entry's rank (0, 1, ...) among the distinct ``key`` values of its ``group``,
    in the keys' order (pandas' ``groupby(group)[key].rank(method="dense") - 1``).

    >>> dense_rank_within(np.array([0, 0, 1, 0]), np.array([7, 3, 7, 7])).tolist()
    [1, 0, 0, 1]
    """
    key = np.asarray(key, dtype=np.int64)
    lo = key.min(initial=0)
    # one int64 sort key (a stable sort of int64 is a radix sort, faster than lexsort)
    order = np.argsort(group * (key.max(initial=0) - lo + 1) + (key - lo), kind="stable")
    g, k = group[order], key[order]
    first = np.r_[True, g[1:] != g[:-1]]
    new = first | np.r_[True, k[1:] != k[:-1]]
    ids = np.cumsum(new) - 1
    start = ids[first]
    out = np.empty(len(key), dtype=np.intp)
    out[order] = ids - start[np.cumsum(first) - 1]
    return out


class BucketNewton:
    """The I-projection of every bucket at once by Newton's method on its dual, batched.

    ``x[c, s] = R_c pi[c, s]`` with ``pi[c] = softmax(log w[c] + beta)``: the class totals
    hold for any value multipliers ``beta``, which minimise the bucket's dual
    ``sum_c R_c log Z_c(beta) - sum_s C_s beta_s`` (convex; ``beta`` of the bucket's first
    value fixed at 0). One dense (values - 1) system per bucket and step, a backtracking
    step per bucket, warm-started from the previous call: quadratic convergence where
    alternate scaling crawls (priors with entries near 0). Arrays are laid out
    (classes, values, buckets), the buckets last (:mod:`.small_systems`); a bucket
    within the tolerance leaves the batch once at least half of the batch has."""

    def __init__(self, cls, gs, bucket, R, C, layout=None):
        self.bi, self.ci, self.si = layout or bucket_layout(cls, gs, bucket)
        B, Cm, Sm = self.bi.max() + 1, self.ci.max() + 1, self.si.max() + 1
        self.shape = (Cm, Sm, B)
        self.flat = np.ravel_multi_index((self.ci, self.si, self.bi), self.shape)
        self._W, self._Wn = np.zeros(self.shape), np.zeros(self.shape)
        self.R = np.zeros((Cm, B))
        self.R[self.ci, self.bi] = R[cls]
        self.R_cell = R[cls]
        self.unit = bool(np.all(self.R_cell == 1))  # x = pi: every class one record
        self.C = np.zeros((Sm, B))
        self.C[self.si, self.bi] = C[gs]
        self.beta = np.zeros((Sm, B))
        self.logZ = np.zeros((Cm, B))
        self.scale = np.maximum(self.R.max(axis=0), 1.0)
        self.iterations = 0

    @staticmethod
    def fits(cls, gs, bucket, layout=None) -> bool:
        """Every bucket has at most :data:`NEWTON_MAX_DIM` classes + values."""
        if not len(bucket):
            return False
        bi, ci, si = layout or bucket_layout(cls, gs, bucket)
        top_c = np.zeros(bi.max() + 1, dtype=np.intp)  # classes and values per bucket
        top_s = np.zeros_like(top_c)
        np.maximum.at(top_c, bi, ci + 1)
        np.maximum.at(top_s, bi, si + 1)
        return int((top_c + top_s).max()) <= NEWTON_MAX_DIM

    def __call__(self, w: np.ndarray, tol: float = 1e-12, max_iter: int = 200) -> np.ndarray:
        W = self._W  # (reused: the padding entries stay 0)
        W.put(self.flat, w)
        top = W.max(axis=1)  # 0: a padding class (no cell)
        live = top > 0
        Wn = np.divide(W, np.where(live, top, 1.0)[:, None, :], out=self._Wn)
        with np.errstate(divide="ignore"):
            top = np.log(top)  # -inf: a padding class
        batch = _Batch(Wn, W, top, self.R, self.C, self.scale, self.beta, self.unit)
        self.iterations = 0
        for _ in range(max_iter):
            if not batch.newton_step(tol):
                break
            self.iterations += 1
        self.beta, self.logZ, pi = batch.result()
        return pi.take(self.flat) * self.R_cell

    def snapshot(self):
        """The warm start (restored by :meth:`restore` after a call whose answer failed)."""
        return self.beta.copy(), self.logZ.copy()

    def restore(self, saved) -> None:
        self.beta, self.logZ = (v.copy() for v in saved)

    def logs(self, cls, gs, n_cls: int, n_gs: int):
        """The factors' logarithms per class and per SA row (``x = w e^(alpha + beta)``)."""
        alpha, beta = np.zeros(n_cls), np.zeros(n_gs)
        with np.errstate(divide="ignore"):
            a = np.log(self.R) - self.logZ
        alpha[cls] = a[self.ci, self.bi]
        beta[gs] = self.beta[self.si, self.bi]
        return alpha, beta


def _softmax(Wn, W, top, beta, R, C):
    """pi[c, s], log Z_c and the dual per bucket at ``beta`` (``Wn``: each class's weights
    ``W`` over its largest, ``top`` the log of that largest): ``Wn * exp(beta - max
    beta)``, no exponent positive."""
    live = np.isfinite(top)
    bmax = beta.max(axis=0)
    m = np.where(live, top, 0.0) + bmax
    e = Wn * np.exp(beta - bmax)[None]
    Z = e.sum(axis=1)
    low = (Z < 1e-250) & live  # the largest terms sit far apart: exact max
    if low.any():
        c, b = np.nonzero(low)
        with np.errstate(divide="ignore"):
            z = np.log(W[c, :, b]) + beta[:, b].T
        m[c, b] = z.max(axis=1)
        e[c, :, b] = np.exp(z - m[c, b][:, None])
        Z[c, b] = e[c, :, b].sum(axis=1)
    empty = Z <= 0  # padding classes (no cell): pi = 0, log Z = 0
    Z[empty] = 1.0
    pi = e  # (in place: one array of the batch's size less to allocate)
    pi *= (1.0 / Z)[:, None, :]
    logZ = np.log(Z) + np.where(empty, 0.0, m)
    f = np.einsum("cb,cb->b", R, logZ) - np.einsum("sb,sb->b", C, beta)
    return pi, logZ, f


class _Batch:
    """The buckets :class:`BucketNewton` still iterates on (arrays: the last axis) and
    the answers of those that left."""

    def __init__(self, Wn, W, top, R, C, scale, beta, unit):
        self.idx = None  # every bucket
        self.a = [Wn, W, top, R, C, scale]
        self.unit = unit  # every class one record: x = R pi is pi (padding: both 0)
        self.beta = beta.copy()
        self.pi, self.logZ, self.f = _softmax(Wn, W, top, self.beta, R, C)
        self._store()  # the answers are the batch's own arrays until it shrinks

    def _store(self):
        """The batch's current state into the answers."""
        if self.idx is None:
            self.out_pi, self.out_logZ, self.out_beta = self.pi, self.logZ, self.beta
        else:
            self.out_pi[..., self.idx] = self.pi
            self.out_logZ[:, self.idx] = self.logZ
            self.out_beta[:, self.idx] = self.beta

    def _shrink(self, keep):
        self._store()
        if self.idx is None:  # the answers were the batch's own arrays until now
            self.out_pi, self.out_logZ = self.out_pi.copy(), self.out_logZ.copy()
            self.out_beta = self.out_beta.copy()
        self.idx = keep if self.idx is None else self.idx[keep]
        self.a = [v[..., keep] for v in self.a]
        self.beta, self.pi = self.beta[:, keep], self.pi[..., keep]
        self.logZ, self.f = self.logZ[:, keep], self.f[keep]

    def result(self):
        self._store()
        return self.out_beta, self.out_logZ, self.out_pi

    def newton_step(self, tol) -> bool:
        """One Newton step of the buckets still off by more than ``tol``; False when none is."""
        Wn, W, top, R, C, scale = self.a
        x = self.pi if self.unit else R[:, None, :] * self.pi
        col = x.sum(axis=0)
        g = col - C
        err = np.abs(g).max(axis=0) / scale
        done = err <= tol
        if done.all():
            return False
        if done.sum() * 2 >= len(done):
            keep = np.flatnonzero(~done)
            self._shrink(keep)
            Wn, W, top, R, C, scale = self.a
            x, col, g, err = x[..., keep], col[:, keep], g[:, keep], err[keep]
        d = _direction(x, self.pi, col, g, C, scale)
        slope = np.einsum("sb,sb->b", g, d)
        near = err <= 1e-6  # f changes below its rounding there: full Newton step
        old_beta, old_f = self.beta, self.f
        beta = old_beta + d  # the full step, kept where it is good enough
        pi, logZ, f = _softmax(Wn, W, top, beta, R, C)
        todo = np.flatnonzero((f > old_f + 1e-4 * slope) & ~near)
        t = 1.0
        for _ in range(40):  # backtracking where it is not (Armijo, per bucket)
            if not len(todo):
                break
            t /= 2
            b_k = old_beta[:, todo] + t * d[:, todo]
            sub = [v[..., todo] for v in (Wn, W, top, R, C)]
            pi_k, logZ_k, f_k = _softmax(*sub[:3], b_k, *sub[3:])
            ok = (f_k <= old_f[todo] + 1e-4 * t * slope[todo]) | (t < 1e-10)
            acc = todo[ok]
            beta[:, acc], pi[..., acc] = b_k[:, ok], pi_k[..., ok]
            logZ[:, acc], f[acc] = logZ_k[:, ok], f_k[ok]
            todo = todo[~ok]
        self.beta, self.pi, self.logZ, self.f = beta, pi, logZ, f
        return True


def _direction(x, pi, col, g, C, scale):
    """The Newton direction in the value multipliers (the first value's is 0)."""
    H = gram(x[:, 1:], pi[:, 1:])
    np.negative(H, out=H)
    diag = np.einsum("iib->ib", H)
    diag += col[1:]
    # padding values (total 0, no cell): no move. A value whose cells all underflow
    # keeps a diagonal ~0, so its step is long (cut to STEP_MAX below): it climbs
    # by e^STEP_MAX per step instead of crawling by its gradient
    diag[C[1:] <= 0] = 1.0
    # a bucket whose positive cells fall apart into several blocks (zero prior
    # weights) has one free shift per extra block, along which the gradient is 0:
    # a ridge far below the counts makes H invertible there
    diag += 1e-12 * scale
    d = -solve_spd(H, g[1:])
    # a value whose cells are all ~0 makes H nearly singular and the step huge: a
    # step of at most STEP_MAX in every multiplier (exp(STEP_MAX) in every factor)
    longest = np.abs(d).max(axis=0, initial=0.0)
    d *= np.minimum(1.0, STEP_MAX / np.maximum(longest, 1e-300))
    return np.concatenate([np.zeros((1, d.shape[1])), d], axis=0)


class AlternateScaling:
    """Alternate scaling (Sinkhorn's iterative proportional fitting) of ``x = w a_c b_s``
    to the class totals ``R`` and value totals ``C``, warm-started from the previous call;
    the same interface as :class:`BucketNewton` (for buckets too large for it)."""

    def __init__(self, cls, gs, R, C):
        self.cls, self.gs, self.R, self.C = cls, gs, R, C
        self.a, self.b = np.ones(len(R)), np.ones(len(C))
        self.uc, self.ug = np.unique(cls), np.unique(gs)
        self.iterations = 0

    def __call__(self, w: np.ndarray, tol: float = SCALING_TOL) -> np.ndarray:
        a, b, cls, gs, uc, ug = self.a, self.b, self.cls, self.gs, self.uc, self.ug
        for self.iterations in range(1, SCALING_MAX_ITER + 1):  # noqa: B007
            b[ug] = self.C[ug] / np.bincount(gs, weights=w * a[cls], minlength=len(b))[ug]
            got = np.bincount(cls, weights=w * b[gs], minlength=len(a))[uc]
            err = np.max(np.abs(a[uc] * got - self.R[uc]) / np.maximum(self.R[uc], 1.0), initial=0)
            a[uc] = self.R[uc] / got
            if err <= tol:
                break
        return w * a[cls] * b[gs]

    def snapshot(self):
        return self.a.copy(), self.b.copy()

    def restore(self, saved) -> None:
        self.a, self.b = (v.copy() for v in saved)  # (a call scales them in place)

    def logs(self, cls, gs, n_cls: int, n_gs: int):
        with np.errstate(divide="ignore"):
            return np.log(self.a), np.log(self.b)


def bucket_scaling(cls, gs, bucket, R, C):
    """The I-projection of every bucket (cells ``cls``, ``gs`` of ``bucket``; totals
    ``R`` per class, ``C`` per SA row) as a warm-started callable ``w -> x``:
    :class:`BucketNewton`, or :class:`AlternateScaling` past :data:`NEWTON_MAX_DIM`."""
    layout = bucket_layout(cls, gs, bucket) if len(bucket) else None
    if BucketNewton.fits(cls, gs, bucket, layout):
        return BucketNewton(cls, gs, bucket, R, C, layout)
    return AlternateScaling(cls, gs, R, C)
