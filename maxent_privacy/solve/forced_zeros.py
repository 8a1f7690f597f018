"""Cells that every feasible answer puts at 0, found after presolve.

Presolve's rules are exact but not complete. When our Newton solver stalls at the
boundary, its recession certificate (:func:`.newton.recession_zeros`) usually proves the
zeros; otherwise, and when a conic answer cannot be polished next to cells near 0, HiGHS
LPs decide which suspects are forced (:func:`lp_forced_zeros`), on the smallest piece
that holds them. A backend raises :class:`ForcedZeros`; the solve loop fixes the cells
and solves again only the components that held them.

>>> import numpy as np, scipy.sparse as sp
>>> A = sp.csr_array(np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0]]))
>>> lp_forced_zeros(A, np.array([0.0, 1.0]), None, None, [0, 1, 2]).tolist()
[0, 1]
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import tolerances as tl
from .highs import run_lp

__all__ = ["CLEAN_T", "ForcedZeros", "ZeroLog", "lp_forced_zeros", "lp_status", "max_support"]


class ForcedZeros(Exception):
    """Raised by a backend: ``cells`` (global indices) are 0 in every feasible answer,
    proved by ``how`` ("dual certificate" or "LP"); ``kept`` are the part solutions of
    components that are done and hold none of them."""

    def __init__(self, cells, how: str, kept=()):
        super().__init__(f"{len(cells)} cells forced to 0 ({how})")
        self.cells = np.asarray(cells, dtype=int)
        self.how = how
        self.kept = list(kept)


class ZeroLog:
    """The cells proved 0 so far, by what, and the passes of the solve (1 + one per
    :class:`ForcedZeros` raised)."""

    def __init__(self):
        self.cells = np.zeros(0, dtype=int)
        self.counts = {"dual certificate": 0, "LP": 0}
        self.passes = 1

    def add(self, found: ForcedZeros) -> None:
        self.passes += 1
        new = np.setdiff1d(found.cells, self.cells)
        self.cells = np.union1d(self.cells, new)
        self.counts[found.how] = self.counts.get(found.how, 0) + len(new)


def lp_forced_zeros(A_eq, b_eq, G, h, suspects) -> np.ndarray:
    """Which ``suspects`` are 0 in every ``x >= 0`` with ``A_eq x = b_eq``, ``G x <= h``.

    LPs solved by HiGHS (:func:`.highs.run_lp`): maximize ``sum t_j`` with
    ``0 <= t_j <= min(x_j, 1)`` over the suspects; a suspect with ``t_j > 0`` can be
    positive and leaves; repeat until the optimum is 0. Empty when the LP fails (the
    caller then reports the failure; :func:`lp_status` tells an infeasible system).
    """
    m = A_eq.shape[1]
    left = np.unique(suspects)
    while len(left):
        k = len(left)
        pick = sp.csr_array((np.ones(k), (np.arange(k), left)), shape=(k, m))
        A_ub = sp.hstack([-pick, sp.identity(k, format="csr")], format="csr")
        b_ub = np.zeros(k)
        if G is not None and G.shape[0]:
            A_ub = sp.vstack([A_ub, sp.hstack([G, sp.csr_array((G.shape[0], k))])], format="csr")
            b_ub = np.concatenate([b_ub, h])
        status, x = run_lp(
            np.concatenate([np.zeros(m), -np.ones(k)]),
            sp.hstack([A_eq, sp.csr_array((A_eq.shape[0], k))], format="csr"),
            b_eq,
            A_ub,
            b_ub,
            bounds=(None, np.concatenate([np.full(m, np.inf), np.ones(k)])),
        )
        if status != "optimal":
            return np.zeros(0, dtype=int)
        t = x[m:]
        if t.max(initial=0.0) <= tl.LP_POSITIVE:
            return left
        left = left[t <= tl.LP_POSITIVE]
    return left


def max_support(A_eq, b_eq, G, h, cand: np.ndarray, time_limit=None, solver=None, duals=False):
    """The cells of ``cand`` (a mask) that some ``x >= 0`` with ``A_eq x = b_eq``,
    ``G x <= h`` makes positive, by one LP (None when it does not finish): ``max sum t``
    over ``A_eq x = lam b_eq``, ``G x <= lam h``, ``t <= x_cand``, ``0 <= t <= 1``,
    ``lam >= 1``. The tables scaled by ``lam >= 1`` are a cone and a sum of tables is one
    of it, so at the optimum every cell that one table makes positive has ``t = 1`` and
    every other ``t = 0`` (where :func:`lp_forced_zeros` needs a round per new cell).

    ``duals``: (support, y) with HiGHS's row duals of the rows of ``A_eq`` then ``G``
    (None, None when it does not finish): minus them, they are multipliers ``v`` (``>= 0``
    on ``G``) with ``c = [A_eq; G]'v >= 1`` on every candidate left out of the support,
    ``>= 0`` elsewhere, and ``v'[b_eq; h] <= 0``: a proof that those cells are 0.

    ``solver``: HiGHS's method (:func:`.highs.run_lp`; None: its choice). A first-order
    method ("pdlp") stops near the optimum, and an interior point method ("ipm") may too
    when its crossover to a vertex does not finish: their answer is taken only when every
    ``t`` is within :data:`CLEAN_T` of 0 or 1 (then the objective is within 1 of the
    optimum's, which no cell can move without moving ``t`` by 1), else None.
    """
    idx = np.flatnonzero(cand)
    k, n = len(idx), A_eq.shape[1]
    G = sp.csr_array((0, n)) if G is None else sp.csr_array(G)
    h = np.zeros(0) if h is None else np.asarray(h, dtype=float)
    pick = sp.csr_array((-np.ones(k), (np.arange(k), idx)), shape=(k, n))
    eq = sp.hstack([A_eq, sp.csr_array((A_eq.shape[0], k)), -np.reshape(b_eq, (-1, 1))])
    ub = sp.vstack(
        [
            sp.hstack([G, sp.csr_array((G.shape[0], k)), -h.reshape(-1, 1)]),
            sp.hstack([pick, sp.identity(k, format="csr"), sp.csr_array((k, 1))]),
        ],
        format="csr",
    )
    c = np.concatenate([np.zeros(n), -np.ones(k), [0.0]])
    lo = np.concatenate([np.zeros(n + k), [1.0]])
    hi = np.concatenate([np.full(n, np.inf), np.ones(k), [np.inf]])
    status, x, *y = run_lp(
        c, sp.csr_array(eq), np.zeros(A_eq.shape[0]), ub, np.zeros(ub.shape[0]), (lo, hi),
        time_limit, solver=solver, duals=duals,
    )  # fmt: skip
    failed = (None, None) if duals else None
    if status != "optimal":
        return failed
    t = x[n : n + k]
    if solver in ("pdlp", "ipm") and ((t > CLEAN_T) & (t < 1.0 - CLEAN_T)).any():
        return failed
    support = np.zeros(n, dtype=bool)
    support[idx] = t > 0.5
    return (support, y[0][: A_eq.shape[0] + G.shape[0]]) if duals else support


#: a first-order LP answer to :func:`max_support` is taken when every ``t`` is this close
#: to 0 or 1
CLEAN_T = 1e-3


def lp_status(A_eq, b_eq, G, h) -> str:
    """Whether some ``x >= 0`` has ``A_eq x = b_eq`` and ``G x <= h``: "optimal" (yes),
    "infeasible" (no, HiGHS's verdict), else HiGHS's word (undecided)."""
    status, _ = run_lp(np.zeros(A_eq.shape[1]), A_eq, b_eq, G, h)
    return status


def _piece(A, b, G, h, cols):
    """The system on the columns ``cols`` (a union of connected components): the rows
    that touch them, restricted to them."""
    rk = np.flatnonzero(np.diff(sp.csr_array(A[:, cols]).indptr) > 0)
    gk = hk = None
    if G is not None:
        gi = np.flatnonzero(np.diff(sp.csr_array(G[:, cols]).indptr) > 0)
        gk, hk = sp.csr_array(G[gi][:, cols]), h[gi]
    return sp.csr_array(A[rk][:, cols]), b[rk], gk, hk


def lp_zeros_by_component(A, b, G, h, comp, suspects) -> np.ndarray:
    """:func:`lp_forced_zeros` on each connected component (``comp`` labels the columns)
    that holds a suspect: smaller LPs than the whole problem."""
    found = []
    for k in np.unique(comp[suspects]):
        ck = np.flatnonzero(comp == k)
        pos = np.searchsorted(ck, suspects[comp[suspects] == k])
        sub = lp_forced_zeros(*_piece(A, b, G, h, ck), pos)
        found.append(ck[sub])
    return np.concatenate(found) if found else np.zeros(0, dtype=int)


def lp_status_of(A, b, G, h, comp, cells) -> str:
    """:func:`lp_status` of the components (``comp`` labels the columns) that hold
    ``cells``, in one LP."""
    cols = np.flatnonzero(np.isin(comp, np.unique(comp[cells])))
    return lp_status(*_piece(A, b, G, h, cols))


def lp_zeros_of_problem(p, fixed: np.ndarray, suspects) -> np.ndarray:
    """Which suspect cells (global) are 0 in every feasible answer of the whole problem
    ``p`` (:class:`.problem.MaxEntProblem`), the cells ``fixed`` (not NaN) held; one LP
    per connected component holding a suspect (:func:`lp_zeros_by_component`)."""
    from ..numerics import cell_components

    free = np.isnan(fixed)
    vals = np.where(free, 0.0, fixed)
    A, b = p.equalities()
    b = b - A @ vals
    pos = np.full(len(fixed), -1)
    pos[free] = np.arange(int(free.sum()))
    sus = pos[np.unique(suspects)]
    G = h = None
    Af = sp.csr_array(A[:, free])
    if p.F_in.shape[0]:
        G, h = sp.csr_array(p.F_in[:, free]), p.f_in - p.F_in @ vals
    comp = cell_components([Af, G], Af.shape[1])
    found = lp_zeros_by_component(Af, b, G, h, comp, sus[sus >= 0])
    return np.flatnonzero(free)[np.sort(found)]
