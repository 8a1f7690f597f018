"""Our own maximum-entropy solver: Newton's method on the dual, record classes eliminated.

The problem of every component (after presolve) is

    maximize  sum_j -x_j log(x_j / n_j)
    s.t.      sum_{j in c} x_j = R_c      for every record class c   (QI-invariants)
              O x = b                       (SA-invariants / Relation rows, equality facts)
              G x <= h                      (inequality facts)

Its maximizer has the Gibbs form x_j = R_c w_j / W_c with w_j = n_j exp(-(O'lam + G'mu)_j)
and W_c = sum_{j in c} w_j: the class multipliers are eliminated in closed form, which
leaves the smooth convex dual

    phi(lam, mu) = lam.b + mu.h + sum_c R_c log W_c - sum_c R_c log R_c,   mu >= 0,

an upper bound on the maximum entropy for every (lam, mu >= 0), with gradient
``b - O x`` (and ``h - G x``) and Hessian ``O P O'`` where P is block diagonal over the
classes: ``P_c = diag(x_c) - x_c x_c' / R_c`` (a softmax per class, as in multinomial
logistic regression). Newton steps solve ``(O D O' - M diag(1/R) M') d = -grad`` with
``M = O X_c`` by a sparse LDL' factorization (:mod:`.hessian`; the class rows never
enter it); the step length is chosen per connected component (phi is separable over components) by
backtracking on phi. Inequality rows are handled by an active set around the equality
Newton method. The iteration stops on the certificate itself: the largest row residual
and the gap ``phi - H(x) = lam.(b - O x) + mu.(h - G x)``.

>>> import numpy as np, scipy.sparse as sp
>>> # one bucket: classes {a, b} (1 record each), values {s, t} (1 each)
>>> n = np.ones(4); cls = np.array([0, 0, 1, 1]); R = np.array([1.0, 1.0])
>>> O = sp.csr_array(np.array([[1.0, 0, 1, 0]]))      # value s: one record
>>> out = newton_maxent(n, cls, R, O, np.array([1.0]))
>>> np.round(out.x, 12).tolist(), out.status
([0.5, 0.5, 0.5, 0.5], 'optimal')
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..numerics import cell_components, entropy_terms
from . import tolerances as tl
from .hessian import BJ_MIN_ROWS, hessian_of, solve_newton, solve_upper

__all__ = [
    "DualResult",
    "DualStart",
    "DualUnbounded",
    "Layout",
    "NewtonSettings",
    "NotConverged",
    "class_rows",
    "newton_maxent",
    "solve_newton",
]


class NotConverged(RuntimeError):
    """Newton's method on the dual did not reach the certificate's tolerance.

    ``small``: cells that went next to 0 (suspects for an LP); ``zeros``: cells the
    dual's recession certificate proved 0 (:func:`recession_zeros`), possibly empty.
    """

    def __init__(self, message: str, small=(), zeros=(), state=None, done=None):
        super().__init__(message)
        self.small = np.asarray(small, dtype=int)
        self.zeros = np.asarray(zeros, dtype=int)
        #: the last iterate (a :class:`DualResult`) and which cells' components meet the
        #: certificate there (their answers can be kept)
        self.state = state
        self.done = done


class DualUnbounded(NotConverged):
    """phi fell below 0 on some components: no x >= 0 satisfies their rows.

    Every term -x log(x/n) is >= 0 here (x_j <= R_c <= n_j), so a feasible problem has
    maximum entropy >= 0 and phi >= 0 at every (lam, mu >= 0) by weak duality: phi < 0
    is a certificate of infeasibility. ``components`` are those components and
    ``cell_comp`` the component of every cell.
    """

    def __init__(self, message: str, components, cell_comp):
        super().__init__(message)
        self.components = components
        self.cell_comp = cell_comp


@dataclass
class DualResult:
    x: np.ndarray
    lam: np.ndarray  # multipliers of O x = b (dual of the minimization form)
    mu: np.ndarray  # multipliers of G x <= h, >= 0
    nu_cls: np.ndarray  # class multipliers: nu_c = log W_c - log R_c - 1
    iterations: int
    residual: float  # max |O x - b| and max (G x - h)+
    gap: float  # phi - H(x), nats (count scale)
    phi: float
    status: str


def _segments(cls: np.ndarray):
    """Start offsets of the runs of equal class labels (cells sorted by class)."""
    starts = np.flatnonzero(np.r_[True, cls[1:] != cls[:-1]])
    return starts


class _Classes:
    """Per-class sums and maxima over cells sorted by class."""

    def __init__(self, cls: np.ndarray, R: np.ndarray):
        order = np.argsort(cls, kind="stable")
        self.sorted = bool(np.all(order == np.arange(len(cls))))
        self.order = order
        self.cls = cls
        c_sorted = cls[order]
        self.starts = _segments(c_sorted) if len(cls) else np.zeros(0, dtype=int)
        self.labels = c_sorted[self.starts] if len(cls) else np.zeros(0, dtype=int)
        self.R = R
        self.C = len(R)

    def max(self, z: np.ndarray) -> np.ndarray:
        out = np.full(self.C, -np.inf)
        if len(z):
            zs = z if self.sorted else z[self.order]
            out[self.labels] = np.maximum.reduceat(zs, self.starts)
        return out

    def sum(self, v: np.ndarray) -> np.ndarray:
        return np.bincount(self.cls, weights=v, minlength=self.C)


def _state(lam, mu, O, b, G, h, n, K: _Classes, logn):
    """x, phi and the per-class log-partition at (lam, mu)."""
    z = logn.copy()
    if O.shape[0]:
        z -= O.T @ lam
    if G is not None and G.shape[0]:
        z -= G.T @ mu
    zmax = K.max(z)
    zm = np.where(np.isfinite(zmax), zmax, 0.0)
    w = np.exp(z - zm[K.cls])
    W = K.sum(w)
    with np.errstate(divide="ignore"):
        logW = np.log(W) + zm
    x = K.R[K.cls] * w / np.where(W > 0, W, 1.0)[K.cls]
    return x, logW


def _phi_parts(lam, mu, b, h, logW, K: _Classes, row_comp, ineq_comp, cls_comp, n_comp):
    """phi per component (without the constant -sum R log R)."""
    out = np.bincount(cls_comp, weights=K.R * np.where(K.R > 0, logW, 0.0), minlength=n_comp)
    if len(lam):
        out += np.bincount(row_comp, weights=lam * b, minlength=n_comp)
    if len(mu):
        out += np.bincount(ineq_comp, weights=mu * h, minlength=n_comp)
    return out


def _phi_size(lam, b, logW, K: _Classes, row_comp, cls_comp, n_comp):
    """Per component, the sum of the magnitudes of phi's terms (its rounding scale)."""
    out = np.bincount(
        cls_comp, weights=K.R * np.where(K.R > 0, np.abs(logW), 0.0), minlength=n_comp
    )
    if len(lam):
        out += np.bincount(row_comp, weights=np.abs(lam * b), minlength=n_comp)
    return out


def _components(n_cells, cls, rows):
    """Connected components of cells linked by classes and the given rows (csr)."""
    blocks = [class_rows(cls, int(cls.max()) + 1 if n_cells else 0), *rows]
    return cell_components(blocks, n_cells)


@dataclass(frozen=True)
class _Point:
    """A point of the equality-only dual: the multipliers, the table, the per-class
    log-partition and phi per component."""

    lam: np.ndarray
    x: np.ndarray
    logW: np.ndarray
    phi: np.ndarray


_EMPTY = np.zeros(0)
_EMPTY.flags.writeable = False


@dataclass(frozen=True)
class _Eq:
    """The equality-only dual of one round of the active set: rows ``A x = b`` over cells of
    base measure ``n`` (``logn`` its log) in the classes ``K``; the component of every row
    and class, and their number."""

    A: sp.csr_array
    b: np.ndarray
    n: np.ndarray
    K: _Classes
    logn: np.ndarray
    row_comp: np.ndarray
    cls_comp: np.ndarray
    n_comp: int

    @cached_property
    def scale(self) -> np.ndarray:
        """The scale of every row's residual: ``max(1, |b|)``."""
        return np.maximum(1.0, np.abs(self.b))

    def at(self, lam) -> _Point:
        """x, the log-partitions and phi per component at ``lam``."""
        x, logW = _state(lam, _EMPTY, self.A, self.b, None, None, self.n, self.K, self.logn)
        phi = _phi_parts(
            lam, _EMPTY, self.b, _EMPTY, logW, self.K,
            self.row_comp, self.row_comp[:0], self.cls_comp, self.n_comp,
        )  # fmt: skip
        return _Point(lam, x, logW, phi)

    def per_comp(self, w) -> np.ndarray:
        """The sums of the rows' ``w`` per component."""
        return np.bincount(self.row_comp, weights=w, minlength=self.n_comp)

    def per_class_comp(self, w) -> np.ndarray:
        """The sums of the classes' ``w`` per component."""
        return np.bincount(self.cls_comp, weights=w, minlength=self.n_comp)


@dataclass(frozen=True)
class _EqAnswer:
    """What :func:`_newton_eq` ends with: the last point, the steps taken, whether it meets
    the certificate and the cells the recession certificate proved 0."""

    point: _Point
    iterations: int
    converged: bool
    proved: np.ndarray


@dataclass(frozen=True)
class NewtonSettings:
    """How :func:`newton_maxent` iterates and when it stops.

    ``tol``: the certificate's relative tolerance (row residuals and the gap);
    ``max_iter``: Newton steps per round of the active set; ``deadline``: a
    :func:`time.perf_counter` time after which it stops (None: none); ``max_rounds``:
    rounds of the inequalities' active set; ``verbose``: print every step.
    """

    tol: float = tl.NEWTON_TOL
    max_iter: int = tl.NEWTON_MAX_ITER
    deadline: float | None = None
    max_rounds: int = 40
    verbose: bool = False


@dataclass(frozen=True)
class Layout:
    """What the caller knows of the problem's structure, for :func:`newton_maxent`.

    ``comp``: the cells' connected components (through the classes and the rows);
    ``row_block``: the bucket of every row of ``O`` for block-Jacobi steps (labels >= 0;
    a label < 0 is a block of its own). None: not known (the components are computed; the
    Newton steps factor the Hessian).
    """

    comp: np.ndarray | None = None
    row_block: np.ndarray | None = None


@dataclass(frozen=True)
class DualStart:
    """A starting point of :func:`newton_maxent`: the multipliers of ``O x = b`` and of
    ``G x <= h`` (None: its own start). A :class:`DualResult` serves as one too."""

    lam: np.ndarray | None = None
    mu: np.ndarray | None = None


#: the parameters of newton_maxent before its options were records, in their old order
_OLD_OPTIONS = (
    "lam0", "mu0", "tol", "max_iter", "deadline", "max_rounds", "verbose", "comp", "row_block"
)  # fmt: skip


def _options_of(old: tuple, options: dict) -> tuple:
    """(start, layout, settings) from :func:`newton_maxent`'s options: the records
    (``start=``, ``layout=``, ``settings=``), or the old parameters (positional after ``h``,
    or by name) with a DeprecationWarning."""
    import warnings

    from .._validation import ArgumentTypeError

    if len(old) > len(_OLD_OPTIONS):
        raise ArgumentTypeError("newton_maxent() takes at most 7 positional arguments")
    legacy = dict(zip(_OLD_OPTIONS, old, strict=False))
    for key in [k for k in options if k in _OLD_OPTIONS]:
        if key in legacy:
            raise ArgumentTypeError(f"newton_maxent() got multiple values for {key!r}")
        legacy[key] = options.pop(key)
    unknown = [k for k in options if k not in ("start", "layout", "settings")]
    if unknown:
        raise ArgumentTypeError(f"newton_maxent() got an unexpected keyword {unknown[0]!r}")
    start, layout, settings = (options.get(k) for k in ("start", "layout", "settings"))
    if legacy:
        warnings.warn(
            f"newton_maxent: {', '.join(legacy)} as parameters are deprecated; give "
            "start=DualStart(lam, mu), layout=Layout(comp, row_block) and "
            "settings=NewtonSettings(tol, max_iter, deadline, max_rounds, verbose)",
            DeprecationWarning,
            stacklevel=3,
        )
        if "lam0" in legacy or "mu0" in legacy:
            start = DualStart(legacy.pop("lam0", None), legacy.pop("mu0", None))
        if "comp" in legacy or "row_block" in legacy:
            layout = Layout(legacy.pop("comp", None), legacy.pop("row_block", None))
        if legacy:
            settings = NewtonSettings(**legacy)
    return start, layout, settings


def newton_maxent(n, cls, R, O, b, G=None, h=None, *old, **options) -> DualResult:
    """Maximum entropy of ``x >= 0`` with class totals ``R``, ``O x = b``, ``G x <= h``.

    Options: ``start`` (:class:`DualStart`), ``layout`` (:class:`Layout`) and ``settings``
    (:class:`NewtonSettings`), described below; the old parameters (``lam0``, ``mu0``,
    ``tol``, ``max_iter``, ``deadline``, ``max_rounds``, ``verbose``, ``comp``,
    ``row_block``) still work, with a DeprecationWarning.
    """
    start, layout, settings = _options_of(old, options)
    return _newton_maxent(n, cls, R, O, b, G, h, start=start, layout=layout, settings=settings)


def _newton_maxent(
    n,
    cls,
    R,
    O,
    b,
    G=None,
    h=None,
    *,
    start: DualStart | DualResult | None = None,
    layout: Layout | None = None,
    settings: NewtonSettings | None = None,
) -> DualResult:
    """Maximum entropy of ``x >= 0`` with class totals ``R``, ``O x = b``, ``G x <= h``.

    ``n``: base measure per cell (counts of the records the cell stands for); ``cls``:
    class label of every cell (``0 .. len(R) - 1``); ``O``, ``G``: sparse rows over the
    cells. Stops when every row residual is at most ``tol * max(1, |rhs|)`` and the gap
    ``phi - H`` is at most ``tol * max(1, sum R)`` (``settings``, :class:`NewtonSettings`);
    raises :class:`NotConverged` otherwise, with the cells that went to ~0 (candidates for
    forced zeros) and the components that did converge attached. ``start``: the
    multipliers to start from (:class:`DualStart`); ``layout`` (:class:`Layout`): the
    cells' connected components and the buckets of the rows when the caller knows them.
    """
    settings = NewtonSettings() if settings is None else settings
    layout = Layout() if layout is None else layout
    lam0, mu0 = (None, None) if start is None else (start.lam, start.mu)
    tol = settings.tol
    P = _Batch.of(n, cls, R, O, b, G, h, layout.comp)
    lam = np.zeros(P.O.shape[0]) if lam0 is None else np.array(lam0, dtype=float)
    mu = np.zeros(P.G.shape[0]) if mu0 is None else np.maximum(np.array(mu0, dtype=float), 0.0)
    if lam0 is None and P.O.shape[0]:  # (O, b are P's checked arrays from here on)
        lam = _scaling_start(P.O, P.b, P.n, P.K, P.logn, P.row_comp)
    active = mu > 0
    total_iter = 0
    for _ in range(settings.max_rounds):
        rows = sp.vstack([P.O, P.G[active]], format="csr") if active.any() else P.O
        rhs = np.concatenate([P.b, P.h[active]])
        rc = np.concatenate([P.row_comp, P.ineq_comp[active]])
        eq = _Eq(rows, rhs, P.n, P.K, P.logn, rc, P.cls_comp, P.n_comp)
        lam_in, mu_in = lam, mu
        blocks = _row_blocks(layout.row_block, int(active.sum()))
        out = _newton_eq(
            eq,
            np.concatenate([lam, mu[active]]),
            settings,
            n_signed=int(active.sum()),
            blocks=blocks,
        )
        x, logW = out.point.x, out.point.logW
        total_iter += out.iterations
        lam = out.point.lam[: P.O.shape[0]]
        mu_new = np.zeros(P.G.shape[0])
        mu_new[active] = out.point.lam[P.O.shape[0] :]
        if not out.converged and (active & (mu_new < 0)).any():
            # a row held as equality that should be slack (its multiplier went
            # negative) can leave no interior point: drop it and go on from where this
            # round started (its multipliers ran off towards that face, and would leave
            # phi a sum of huge terms that cancel: steps of no use, rounding)
            active &= mu_new >= 0
            lam, mu = lam_in, np.where(active, mu_in, 0.0)
            continue
        state = DualResult(x, lam, mu_new, P.nu_cls(logW), total_iter, np.nan, np.nan, np.nan, "")
        if not out.converged:
            small = np.flatnonzero(x < 1e-3 * P.n)
            raise NotConverged(
                f"Newton on the dual stopped after {total_iter} iterations without "
                f"reaching the tolerance ({len(small)} cells near 0)",
                small=small,
                zeros=out.proved,
                state=state,
                done=P.done_cells(state, active, tol),
            )
        slack = P.G @ x - P.h if P.G.shape[0] else np.zeros(0)
        scale_h = np.maximum(1.0, np.abs(P.h))
        bad_mu = active & (mu_new < -tl.KKT * max(1.0, np.abs(mu_new).max(initial=0.0)))
        bad_slack = ~active & (slack > tol * scale_h)
        if not bad_mu.any() and not bad_slack.any():
            return P.result(state, logW)
        active = _next_active(active, bad_mu, bad_slack, slack / scale_h)
        mu = np.maximum(mu_new, 0.0)
    raise NotConverged(
        f"the active set of the inequality facts did not settle in {settings.max_rounds} rounds"
    )


def _row_blocks(row_block, n_active: int) -> np.ndarray | None:
    """Block labels of O's rows followed by the active inequality rows: ``row_block``'s
    buckets (labels >= 0) renumbered from 0, and every other row (label < 0, and the
    inequality rows) a block of its own, numbered after them."""
    if row_block is None:
        return None
    rb = np.concatenate([np.asarray(row_block), np.full(n_active, -1)])
    own = rb < 0
    _, lab = np.unique(rb[~own], return_inverse=True)
    out = np.empty(len(rb), dtype=np.int64)
    out[~own] = lab.ravel()
    out[own] = len(lab) + np.arange(int(own.sum()))
    return out


def _bucket_piece(U, blocks) -> int:
    """Rows in the largest connected piece of H's graph (upper triangle ``U``) on the rows
    that share their block with another row (the buckets' rows). The rows of their own
    (facts over many cells) are left out: a sparse factorization eliminates them last,
    at little cost, so only these pieces make the factor fill."""
    from scipy.sparse.csgraph import connected_components

    multi = np.flatnonzero(np.bincount(blocks)[blocks] > 1)
    if not len(multi):
        return 0
    _, lab = connected_components(sp.csr_array(U)[multi][:, multi], directed=False)
    return int(np.bincount(lab).max())


def _next_active(active, bad_mu, bad_slack, violation) -> np.ndarray:
    """Drop rows whose multiplier went negative; add the most violated rows (all at once
    can hold more rows as equalities than the answer has: a face with no interior, where
    Newton stalls), a quarter of them at a time."""
    if bad_slack.sum() > 8:
        v = np.where(bad_slack, violation, -np.inf)
        keep = max(8, int(bad_slack.sum()) // 4)
        top = np.argpartition(-v, keep - 1)[:keep]
        bad_slack = np.zeros_like(bad_slack)
        bad_slack[top] = True
    return (active & ~bad_mu) | bad_slack


@dataclass
class _Batch:
    """The arrays of one call of :func:`newton_maxent`, with its components."""

    n: np.ndarray
    R: np.ndarray
    O: sp.csr_array
    b: np.ndarray
    G: sp.csr_array
    h: np.ndarray
    K: _Classes
    logn: np.ndarray
    comp: np.ndarray
    n_comp: int
    cls_comp: np.ndarray
    row_comp: np.ndarray
    ineq_comp: np.ndarray

    @classmethod
    def of(cls_, n, cls, R, O, b, G, h, comp=None) -> _Batch:
        n = np.asarray(n, dtype=float)
        cls = np.asarray(cls)
        R = np.asarray(R, dtype=float)
        m = len(n)
        O = sp.csr_array(O) if O is not None else sp.csr_array((0, m))
        if G is None or G.shape[0] == 0:
            G, h = sp.csr_array((0, m)), np.zeros(0)
        else:
            G, h = sp.csr_array(G), np.asarray(h, dtype=float)
        K = _Classes(cls, R)
        with np.errstate(divide="ignore"):
            logn = np.log(n)
        if comp is None:
            comp = _components(m, cls, [O, G])
        else:
            _, comp = np.unique(comp, return_inverse=True)
        cls_comp = np.zeros(K.C, dtype=int)
        cls_comp[cls] = comp
        n_comp = int(comp.max()) + 1 if m else 0
        b = np.asarray(b, dtype=float)
        return cls_(
            n,
            R,
            O,
            b,
            G,
            h,
            K,
            logn,
            comp,
            n_comp,
            cls_comp,
            _row_comp(O, comp),
            _row_comp(G, comp),
        )

    def nu_cls(self, logW) -> np.ndarray:
        """Class multipliers in the conic convention: ``nu_c = log W_c - log R_c - 1``."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return logW - np.log(np.where(self.R > 0, self.R, np.nan)) - 1.0

    def result(self, state: DualResult, logW) -> DualResult:
        """The certified answer: residual, entropy, phi and the gap."""
        x, lam, mu = state.x, state.lam, np.maximum(state.mu, 0.0)
        R = self.R
        slack = self.G @ x - self.h if self.G.shape[0] else np.zeros(0)
        res = max(
            float(
                np.max(np.abs(self.O @ x - self.b) / np.maximum(1.0, np.abs(self.b)), initial=0.0)
            ),
            float(np.max(np.maximum(slack, 0.0) / np.maximum(1.0, np.abs(self.h)), initial=0.0)),
        )
        H = float(entropy_terms(x, self.n).sum())
        Rlog = float(np.sum(np.where(R > 0, R * np.log(np.where(R > 0, R, 1.0)), 0.0)))
        phi = float(lam @ self.b + mu @ self.h) + float(np.sum(np.where(R > 0, R * logW, 0.0)))
        phi -= Rlog
        return DualResult(x, lam, mu, state.nu_cls, state.iterations, res, phi - H, phi, "optimal")

    def done_cells(self, state: DualResult, active, tol: float) -> np.ndarray:
        """Cells of the components that meet the certificate at ``state``: residuals,
        gap, inequalities and multiplier signs within ``tol``, and no cell next to 0."""
        x, lam, mu = state.x, state.lam, state.mu
        bad = np.zeros(self.n_comp, dtype=bool)
        r = self.O @ x - self.b
        if len(r):
            over = np.abs(r) / np.maximum(1.0, np.abs(self.b)) > tol
            bad[self.row_comp[over]] = True
            gap = np.bincount(self.row_comp, weights=-lam * r, minlength=self.n_comp)
            bad |= np.abs(gap) > tol * max(1.0, float(self.R.sum()))
        if self.G.shape[0]:
            slack = self.G @ x - self.h
            wrong = (slack > tol * np.maximum(1.0, np.abs(self.h))) | (active & (mu < 0))
            bad[self.ineq_comp[wrong]] = True
        near = x < tl.NEWTON_SETTLED * self.n
        bad[self.comp[near]] = True
        return ~bad[self.comp]


def class_rows(cls: np.ndarray, n_classes: int) -> sp.csr_array:
    """The 0/1 rows summing each class's cells."""
    m = len(cls)
    return sp.csr_array((np.ones(m), (cls, np.arange(m))), shape=(n_classes, m))


def recession_zeros(A, cls, R, b, lam0, lam1, logW0, logW1, ratio, n_signed: int = 0) -> np.ndarray:
    """Cells that every feasible x puts at 0, read off the dual's last step; verified.

    When no x > 0 satisfies the rows, the dual decreases without bound along a direction
    y (class rows: the change of log W; other rows: the change of lam): with
    ``v = A'y`` (v_j = dlogW_c(j) + (O'dlam)_j), ``v >= 0`` and ``y.b = 0``, every
    feasible x has ``sum_j v_j x_j = y.b = 0``, so ``x_j = 0`` wherever ``v_j > 0``
    (Gordan's alternative). The step is taken as y and the certificate is checked in
    floating point: ``v >= -eps`` and ``|y.b| <= eps * sum |v|``; an empty array means it
    failed (the caller then falls back to an LP). The last ``n_signed`` rows are
    inequalities ``g x <= h`` held as equalities: their part of y must be >= 0, else the
    certificate would only hold for the equality version.
    """
    dl = lam1 - lam0
    dW = np.where(R > 0, logW1 - logW0, 0.0)
    v = dW[cls] + (A.T @ dl if A.shape[0] else 0.0)
    vmax = float(np.max(np.abs(v), initial=0.0))
    if not np.isfinite(vmax) or vmax <= 0:
        return np.zeros(0, dtype=int)
    yb = float(R @ dW + dl @ b)
    eps = 1e-6 * vmax
    if v.min() < -eps or abs(yb) > 1e-6 * vmax * max(1.0, float(R.sum())):
        return np.zeros(0, dtype=int)
    if n_signed and dl[len(dl) - n_signed :].min() < -eps:
        return np.zeros(0, dtype=int)
    # the cells the certificate pins, among those already next to 0
    return np.flatnonzero((v > 1e-4 * vmax) & (ratio < 1e-6))


def _row_comp(A, comp):
    out = np.zeros(A.shape[0], dtype=int)
    if A.shape[0] and A.nnz:
        coo = A.tocoo()
        out[coo.row] = comp[coo.col]
    return out


#: sweeps of iterative scaling before the first Newton step
SCALING_SWEEPS = 3


def _scaling_start(O, b, n, K: _Classes, logn, row_comp):
    """A few sweeps of iterative scaling on the rows with 0/1 coefficients (data rows).

    On a single release the SA rows of a bucket are disjoint, so a sweep is exact
    iterative proportional fitting: buckets without facts land on the closed form (Eq. 9)
    at once; the rest start next to their optimum.
    """
    lam = np.zeros(O.shape[0])
    ones = np.asarray((O != 0).sum(axis=1)).ravel() == np.asarray((O == 1).sum(axis=1)).ravel()
    ones &= (np.diff(O.indptr) > 0) & (b > 0)
    if not ones.any():
        return lam
    S = sp.csr_array(O[ones])
    per_cell = np.maximum(np.asarray(S.sum(axis=0)).ravel(), 1.0)
    step = 1.0 / per_cell.max()
    for _ in range(SCALING_SWEEPS):
        x, _ = _state(lam, np.zeros(0), O, b, None, None, n, K, logn)
        Sx = S @ x
        ok = Sx > 0
        upd = np.zeros(len(Sx))
        upd[ok] = np.log(Sx[ok] / b[ones][ok])
        lam[ones] += step * upd
    return lam


def _line_search(eq: _Eq, p: _Point, d, r, tol):
    """Backtracking per component on phi(lam + t d): descent since grad = -r and
    d = H^{-1} r. Near the optimum the decrease drops below the rounding of phi: there the
    merit is the residual. Components already at the floating-point floor take no step.
    Returns the new point and the step length of each component."""
    dec = eq.per_comp(r * d)
    rr = eq.per_comp((r / eq.scale) ** 2)
    fine = dec <= 1e-11 * np.maximum(1.0, np.abs(p.phi))
    t = np.ones(eq.n_comp)
    todo = (rr > (1e-3 * tol) ** 2) | (dec > 1e-13 * np.maximum(1.0, np.abs(p.phi)))
    t[~todo] = 0.0
    for _ in range(40):
        new = eq.at(p.lam + t[eq.row_comp] * d)
        rr_new = eq.per_comp(((eq.A @ new.x - eq.b) / eq.scale) ** 2)
        armijo = new.phi <= p.phi - 1e-4 * t * dec + 1e-13 * np.abs(p.phi)
        bad = todo & np.where(fine, ~(rr_new <= rr), ~armijo)
        if not bad.any():
            break
        t[bad] *= 0.5
        t[bad & (t < 1e-12)] = 0.0
        todo &= t > 0
    return new, t


def _entropy_floor(K: _Classes, logn, cls_comp, n_comp) -> np.ndarray:
    """Per component, a lower bound of the objective over every table: 0 when each cell's
    base measure is at least its class total (then every term -x log(x/n) >= 0), else
    ``sum_c R_c min(0, min_j log(n_j / R_c))`` (a prior, :mod:`.prior`: each class's
    cells add up to R_c, so their terms add up to at least R_c times the smallest
    log(n_j / R_c)). The dual bound below it proves that no table exists."""
    with np.errstate(divide="ignore"):
        low = -K.max(-logn) - np.log(np.maximum(K.R, 1e-300))
    per_class = np.where(K.R > 0, K.R * np.minimum(0.0, low), 0.0)
    return np.bincount(cls_comp, weights=per_class, minlength=n_comp)


def _below_zero(phi, rlog, rsum, lam, b, logW, K: _Classes, comps, n_signed: int) -> bool:
    """Raises :class:`DualUnbounded` on the components whose dual bound ``phi - rlog``
    fell below 0 (their rows have no answer); returns whether some of the last
    ``n_signed`` rows (inequalities held as equalities) have negative multipliers. Only
    a dual point with those multipliers >= 0 bounds the entropy: in their components
    phi < 0 says the active set is wrong, not the data. ``comps``: the components of the
    rows and of the classes, and their number.

    phi is a sum of terms that cancel; below 0 means below their rounding error too (a
    feasible problem whose maximum entropy is 0, a single table, has phi -> 0 from above
    with multipliers that may grow without bound: only rounding takes it below 0 there).
    """
    row_comp, cls_comp, n_comp = comps
    below = phi - rlog < -1e-9 * np.maximum(1.0, rsum)
    if below.any():  # (the rounding scale only then)
        size = _phi_size(lam, b, logW, K, row_comp, cls_comp, n_comp) + np.abs(rlog)
        below &= phi - rlog < -1e-9 * np.maximum(1.0, rsum) - tl.PHI_ROUNDING * size
    neg = np.zeros(0, dtype=bool)
    if n_signed and below.any():
        neg = lam[len(lam) - n_signed :] < 0
        below &= np.bincount(row_comp[len(lam) - n_signed :][neg], minlength=n_comp) == 0
    if below.any():
        raise DualUnbounded(
            f"no answer satisfies the rows of {int(below.sum())} component(s): the dual "
            "bound fell below 0",
            components=np.flatnonzero(below),
            cell_comp=cls_comp[K.cls],
        )
    return bool(neg.any())


def _newton_eq(eq: _Eq, lam, settings: NewtonSettings, n_signed=0, blocks=None) -> _EqAnswer:
    """Newton with per-component backtracking on the equality-only dual."""
    tol, max_iter = settings.tol, settings.max_iter
    A, b, n, K = eq.A, eq.b, eq.n, eq.K
    hess = hessian_of(A, K.cls, K.R)  # the Hessian's pattern, refilled at every step
    R_tot = max(1.0, float(K.R.sum()))
    p = eq.at(lam)
    rlog = eq.per_class_comp(-entropy_terms(K.R, 1.0))  # R log R
    rsum = eq.per_class_comp(K.R)
    rlog += _entropy_floor(K, eq.logn, eq.cls_comp, eq.n_comp)  # (the test: phi - rlog < floor)
    it = stall = stalled_for = 0
    stalled = False
    history: list[float] = []
    proved = np.zeros(0, dtype=int)  # cells the recession certificate proved 0
    ridge_state = {}
    if blocks is not None and _bucket_piece(hess.fill(p.x), blocks) < BJ_MIN_ROWS:
        blocks = None  # small pieces: factor them
    prev = p
    last_low = np.inf  # the smallest x/n after the previous step
    for it in range(1, max_iter + 1):
        r = A @ p.x - b  # = -gradient of phi
        low = float(np.min(p.x / n, initial=1.0))
        res = float(np.max(np.abs(r) / eq.scale, initial=0.0))
        gap = float(p.lam @ (b - A @ p.x)) if len(p.lam) else 0.0
        if settings.verbose:
            print(
                f"newton {it - 1:3d}: residual {res:.2e}  gap {gap:+.2e}  "
                f"phi {p.phi.sum():.10g}  min x/n {np.min(p.x / n, initial=1):.2e}"
            )
        if res <= tol and abs(gap) <= tol * R_tot:
            # a cell still next to 0 may be a forced zero that the tolerance hides: go on
            # until it settles (quadratic convergence) or leaves (the certificate below)
            # ... or until the cells next to 0 stop moving (a step that takes less than a
            # tenth off the smallest: no recession left to follow)
            still = it > 3 and low >= 0.9 * last_low
            if low > tl.NEWTON_SETTLED or still or it > max_iter // 2:
                return _EqAnswer(p, it - 1, True, proved)
        last_low = low
        comps = (eq.row_comp, eq.cls_comp, eq.n_comp)
        if _below_zero(p.phi, rlog, rsum, p.lam, b, p.logW, K, comps, n_signed) and it > 3:
            break  # the caller drops the rows with negative multipliers
        if settings.deadline is not None and time.perf_counter() > settings.deadline:
            break
        # inexact Newton (Eisenstat-Walker): a relative accuracy that tightens with the
        # residual keeps the convergence superlinear
        d = solve_upper(hess.fill(p.x), r, ridge_state, rtol=min(0.1, res**0.5), blocks=blocks)
        if d is None:
            if settings.verbose:
                print("newton: the Hessian could not be factored")
            break
        new, t = _line_search(eq, p, d, r, tol)
        moved = t > 0
        if not moved.any():
            stall += 1
            if stall > 2:
                break
        prev, p = p, new
        res_new = float(np.max(np.abs(A @ p.x - b) / eq.scale, initial=0.0))
        slow = res_new > 0.2 * res
        history.append(res_new)
        if it > 15 and res_new > 0.5 * history[-11] and res_new > tol:
            # no progress in 10 steps (tiny steps next to the boundary): give the
            # caller the cells near 0 to decide
            stalled = True
            break
        ratio = p.x / np.maximum(n, 1e-300)
        if it >= 4 and (slow or res_new <= tol) and ratio.min(initial=1.0) < tl.NEWTON_SETTLED:
            # linear convergence towards the boundary: cells forced to 0. Stop once the
            # last step proves them (recession_zeros: the rest of the answer has to settle
            # first; tried from x/n < NEWTON_SETTLED, as the line search may stop moving
            # before 1e-13), or after 40 more steps below 1e-13; the caller removes them
            stalled_for += int(ratio.min() < 1e-13)
            zeros = recession_zeros(
                A, K.cls, K.R, b, prev.lam, p.lam, prev.logW, p.logW, ratio, n_signed=n_signed
            )
            if len(zeros) or stalled_for > 40:
                proved = zeros
                stalled = True
                break
    res = float(np.max(np.abs(A @ p.x - b) / eq.scale, initial=0.0))
    gap = float(p.lam @ (b - A @ p.x)) if len(p.lam) else 0.0
    converged = bool(res <= tol and abs(gap) <= tol * R_tot and not stalled)
    return _EqAnswer(p, it, converged, proved)
