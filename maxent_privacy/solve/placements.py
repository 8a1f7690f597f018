"""Placements for our Newton solver: joint cells instead of value and placement cells.

In a pooled model with generalized releases a class c may sit in several groups of a
release r (:mod:`maxent_privacy.releases.pooled`): its value cell ``z[c, s]`` is refined by
placement cells ``y[r, c, g, s]`` with the link rows ``sum_g y[r, c, g, s] = z[c, s]``,
and the objective is H(S | p) + sum_r H(G_r | S, p):
``-z log(z / n) - sum_r sum_g y log(y / z)``.

With one release r of unknown groups, on the link rows ``z = sum_g y`` and

    -z log(z/n) - sum_g y log(y/z) = -sum_g y log y + z log z - z log z + z log n
                                    = -sum_g y log(y / n),

the ordinary entropy of the placement cells with the class size n as base measure. With
several such releases, a *joint cell* ``w[c, s, g_1, ..., g_k]`` (class c, value s, one
candidate group per release of unknown group) has the same property: any w with
marginals ``z`` and ``y_r`` has ``H(w) <= H(S|p) + sum_r H(G_r|S,p)`` (conditional
entropies add up to at most the joint one), with equality when the groups are
independent given the value, ``w = prod_r y_r / z^(k-1)``, which has those marginals.
The rows only see the marginals (``z = sum w``, ``y_r`` = sum of w with ``g_r = g``),
so ``max H(w)`` over the joint cells is the model's maximum, and its maximizer is of that
product form (the Gibbs form of w factorizes over the releases).

:class:`JointCells` is the stage: ``apply`` writes every row on the joint cells
(``x = T w``; data rows, Relation rows and facts), drops the link rows, gives each
joint cell its class's size as base measure and its class's record-class row, so our
Newton solver (classes eliminated as a softmax per class) and the rest of the chain take
it as any other model. ``invert`` maps the answer back (``x = T w``), recovers the link
rows' multipliers from the stationarity of the placement cells and puts the dual bound
on the model's cells. Conic solvers keep the model's own form (the reference).

>>> import pandas as pd
>>> from maxent_privacy import MaxEntModel
>>> from maxent_privacy.releases.generalized import Generalized
>>> release = Generalized(pd.DataFrame({"age": ["[20-22]"] * 2 + ["[21-23]"] * 2,
...     "s": ["a", "a", "b", "c"], "g": [1, 1, 2, 2]}), qi=["age"], sa="s", group="g")
>>> people = pd.DataFrame({"age": [20, 21, 22, 23]}, index=["p0", "p1", "p2", "p3"])
>>> model = MaxEntModel(release, populations=people)
>>> work, joint = JointCells().apply(model.compile())
>>> model.structure.n_cells, work.n_cells, work.A_sh.shape[0]
(15, 9, 0)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from ..numerics import entropy_terms
from ..releases.structure import Structure
from .certificate import entropy_of
from .problem import MaxEntProblem

__all__ = ["JOINT_MAX_FACTOR", "JointCells", "joint_cell_count"]

#: our Newton solver takes placements while the joint cells are at most this many times
#: the model's cells (each class's candidate groups multiplied across releases)
JOINT_MAX_FACTOR = 20


@dataclass(frozen=True)
class _Links:
    """The link rows of a structure: value cell ``z`` of each row, its placement cells
    (``y``, csr-like: ``y[start[l]:start[l + 1]]``) and its rank among its value cell's
    link rows (one per release with unknown groups)."""

    z: np.ndarray
    y: np.ndarray
    start: np.ndarray
    rank: np.ndarray

    @classmethod
    def of(cls, s: Structure) -> _Links:
        L = sp.csr_array(s.link_matrix)
        L.sort_indices()
        coo = L.tocoo()
        n_link = L.shape[0]
        z = np.full(n_link, -1)
        neg = coo.data < 0
        z[coo.row[neg]] = coo.col[neg]
        pos = ~neg
        y, y_row = coo.col[pos], coo.row[pos]
        start = np.searchsorted(y_row, np.arange(n_link + 1))
        order = np.argsort(z, kind="stable")
        first = np.searchsorted(z[order], z[order], side="left")
        rank = np.empty(n_link, dtype=int)
        rank[order] = np.arange(n_link) - first
        return cls(z, y, start, rank)

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.start)


def joint_cell_count(s: Structure) -> int:
    """How many joint cells :class:`JointCells` makes for ``s`` (its cells if none).

    >>> from maxent_privacy import MaxEntModel, Bucketized, datasets
    >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
    ...                                sa="disease", group="bucket"))
    >>> joint_cell_count(model.structure)
    27
    """
    if not (s.placement_of >= 0).any():
        return s.n_cells
    links = _Links.of(s)
    per_z = np.ones(s.n_cells)
    np.multiply.at(per_z, links.z, links.sizes.astype(float))
    return int(per_z[s.value_cell].sum())


def _joint_matrix(s: Structure) -> tuple[np.ndarray, sp.csr_array]:
    """(value cell of each joint cell, ``T`` with ``x = T w``), joint cells in the order
    of their value cells (so by class)."""
    links = _Links.of(s)
    n = s.n_cells
    w_z = np.flatnonzero(s.value_cell)
    chosen = np.zeros((len(w_z), 0), dtype=int)  # placement cell per release, or -1
    for j in range(int(links.rank.max(initial=-1)) + 1):
        link_at = np.full(n, -1)
        at_j = links.rank == j
        link_at[links.z[at_j]] = np.flatnonzero(at_j)
        lw = link_at[w_z]
        has = lw >= 0
        m = np.where(has, links.sizes[np.maximum(lw, 0)], 1)
        rep = np.repeat(np.arange(len(w_z)), m)
        pos = np.arange(len(rep)) - np.repeat(np.cumsum(m) - m, m)
        lr = lw[rep]  # where lr < 0, pos is 0 and the index below is valid (start[0] = 0)
        y = np.where(lr >= 0, links.y[links.start[np.maximum(lr, 0)] + pos], -1)
        w_z, chosen = w_z[rep], np.column_stack([chosen[rep], y])
    n_w = len(w_z)
    cols = np.arange(n_w)
    sel = chosen >= 0
    rows = np.concatenate([w_z, chosen[sel]])
    cols = np.concatenate([cols, np.broadcast_to(cols[:, None], chosen.shape)[sel]])
    T = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(n, n_w))
    return w_z, T


@dataclass
class Joint:
    """What :meth:`JointCells.invert` needs: the model's problem, ``T`` (``x = T w``)
    and the value cell of each joint cell."""

    problem: MaxEntProblem
    T: sp.csr_array
    w_z: np.ndarray

    def invert(self, solution, free_w: np.ndarray):
        """The answer on the model's cells, and which of them are free.

        ``solution`` is on the joint cells (after the chain's ``invert``), ``free_w`` the
        joint cells presolve left free. The model's cells: ``x = T w``; the link rows'
        multipliers from the stationarity of the placement cells (see
        :func:`link_multipliers`); the dual bound is the joint problem's (an upper bound
        on the same maximum), written so that the certificate's "fixed cells' entropy +
        bound of the free part" adds up to it: a model cell is fixed when all its joint
        cells are.
        """
        p, T = self.problem, self.T
        w = solution.x
        x = T @ w
        free_mask = np.zeros(len(w), dtype=bool)
        free_mask[free_w] = True
        fixed_x = (T @ free_mask.astype(float)) == 0
        s = p.structure
        fixed_w_terms = entropy_terms(w[~free_mask], s.cell_n[self.w_z[~free_mask]]).sum()
        fixed_x_terms = entropy_of(p, x)[fixed_x].sum()
        nu_cls, nu_sh, nu_sa = solution.nu_data
        kappa = link_multipliers(p, x, nu_sa, solution.nu_eq, solution.mu_in)
        n_shared = len(s.shared_n)
        solution.nu_data = (nu_cls, np.concatenate([nu_sh[:n_shared], kappa]), nu_sa)
        solution.x = x
        solution.bound = solution.bound + fixed_w_terms - fixed_x_terms
        return solution, np.flatnonzero(~fixed_x)


def link_multipliers(p: MaxEntProblem, x, nu_sa, nu_eq, mu_in) -> np.ndarray:
    """Multipliers of the link rows ``sum_g y - z = 0`` (the conic convention:
    ``grad f = A' nu`` at the optimum).

    A placement cell y of value cell z has ``df/dy = -log(y / z) - 1``, which equals
    ``a_y + kappa_l`` with ``a_y`` the Relation rows' and facts' part of ``A' nu`` and
    ``kappa_l`` its link row's multiplier (coefficient +1). At the optimum the difference
    is the same for every placement cell of the row (``y / z`` is a softmax of ``-a_y``);
    it is averaged over them weighted by y, and rows whose z is 0 get 0.
    """
    s = p.structure
    a = s.sa_matrix.T @ nu_sa if s.sa_matrix is not None else np.zeros(p.n_cells)
    if p.F_eq.shape[0]:
        a = a + p.F_eq.T @ np.nan_to_num(nu_eq)
    if p.F_in.shape[0]:
        a = a + p.F_in.T @ np.nan_to_num(mu_in)
    links = _Links.of(s)
    row = np.repeat(np.arange(len(links.z)), links.sizes)
    y = x[links.y]
    z = x[links.z][row]
    ok = (y > 0) & (z > 0)
    term = np.zeros(len(y))
    term[ok] = y[ok] * (-np.log(y[ok] / z[ok]) - 1.0 - a[links.y[ok]])
    num = np.bincount(row, weights=term, minlength=len(links.z))
    den = np.bincount(row, weights=np.where(ok, y, 0.0), minlength=len(links.z))
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


class JointCells:
    """The stage: a model with placements rewritten on joint cells (see the module
    docstring); a model without placements passes unchanged (``invert`` info None)."""

    def apply(self, p: MaxEntProblem) -> tuple[MaxEntProblem, Joint | None]:
        s = p.structure
        if not (s.placement_of >= 0).any():
            return p, None
        w_z, T = _joint_matrix(s)
        n_w = len(w_z)
        cells = s.cells.iloc[w_z].reset_index(drop=True).assign(kind="joint")
        sw = replace(
            s,
            cells=cells,
            cell_class=s.cell_class[w_z],
            cell_n=s.cell_n[w_z],
            cell_sa=None,
            sa_matrix=sp.csr_array(s.sa_matrix @ T),
            cell_shared=np.full(n_w, -1),
            link_matrix=sp.csr_array((0, n_w)),
            placement_of=np.full(n_w, -1),
            key_fn=lambda: [("joint", j) for j in range(n_w)],
            _keys=None,
        )
        A_cls, b_cls = sw.class_rows()
        A_sh, b_sh = sw.shared_rows()
        A_sa, b_sa = sw.sa_rows()
        work = replace(
            p,
            structure=sw,
            A_cls=A_cls, b_cls=b_cls, A_sh=A_sh, b_sh=b_sh, A_sa=A_sa, b_sa=b_sa,
            F_eq=sp.csr_array(p.F_eq @ T), F_in=sp.csr_array(p.F_in @ T),
        )  # fmt: skip
        return work, Joint(p, T, w_z)
