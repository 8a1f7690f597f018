"""Stage 2, implied rows: keep the data rows full rank (Du et al. Theorem 3).

Per bucket, the free cells of one release form a bipartite graph between class rows and
SA rows; each of its connected pieces has exactly one implied row (g + h - 1 independent
rows), and the last SA row of each piece is dropped. For pooled releases the Relation
rows of a release and bucket add up to the bucket's One rows: the last one is dropped.
Pieces linked to a class whose bucket is unknown, and pooled releases, are ranked by a
QR with column pivoting when they are small enough (conic solvers need it; our Newton
solver takes implied rows with its ridge, so it skips the QR). Redundant rows make
interior-point solvers slow or inaccurate.

``invert`` maps the multipliers of the kept rows back to every data row (0 for a
dropped row: its multiplier is not unique, and 0 is one valid choice).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..numerics import bipartite_components, cell_components
from . import tolerances as tl
from .presolve import Reduced

__all__ = ["DropImpliedRows", "independent_rows"]


def independent_rows(dense: np.ndarray) -> np.ndarray:
    """Indices of a maximal set of linearly independent rows (QR with column pivoting).

    >>> independent_rows(np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])).tolist()
    [1, 2]
    """
    from scipy.linalg import qr

    if dense.shape[0] == 0:
        return np.zeros(0, dtype=int)
    _, R, piv = qr(dense.T, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int(np.sum(diag > tl.RANK * max(1.0, diag.max(initial=0.0))))
    return np.sort(piv[:rank])


class DropImpliedRows:
    """Keep the data rows of the reduced problem independent; ``qr`` ranks the pieces that
    the structural rule cannot (class buckets unknown, pooled releases)."""

    def __init__(self, qr: bool = True):
        self.qr = qr

    def apply(self, red: Reduced) -> tuple[Reduced, tuple]:
        p = red.problem
        s = p.structure
        keep = [h.copy() for h in red.has_free]
        f_cls = s.cell_class[red.free]
        in_complex = np.zeros(red.n_free, dtype=bool)
        if not p.single:
            # per release and bucket the Relation rows add up to the bucket's One rows
            gs_ids = np.flatnonzero(red.has_free[2] & ~s.sa_has_placement)
            last = pd.Series(gs_ids).groupby(s.sa_bucket[gs_ids]).max().to_numpy()
            keep[2][last] = False
        complex_cells = s.class_member[f_cls] if p.single else np.ones(red.n_free, bool)
        if complex_cells.any():
            in_complex = self._rank_complex(red, keep, complex_cells)
        if p.single:
            self._drop_last_sa(red, keep, f_cls, in_complex)
        rows = [np.flatnonzero(k) for k in keep]
        blocks = p.data_blocks()
        D = sp.vstack([a[r] for (a, _), r in zip(blocks, rows, strict=True)], format="csr")
        D = sp.csr_array(D[:, red.free])
        d = np.concatenate([rr[r] for rr, r in zip(red.r, rows, strict=True)])
        d_block = np.concatenate([np.full(len(r), i) for i, r in enumerate(rows)])
        out = red.replace(
            keep=tuple(keep), D=D, d=d, d_block=d_block, d_row=np.concatenate(rows),
            in_complex=in_complex,
        )  # fmt: skip
        return out, (out.d_block, out.d_row, [len(b) for _, b in blocks])

    def invert(self, solution, inverse):
        d_block, d_row, sizes = inverse
        nu = [np.zeros(k) for k in sizes]
        for i in range(len(sizes)):
            sel = d_block == i
            nu[i][d_row[sel]] = solution.nu_d[sel]
        solution.nu_data = tuple(nu)
        return solution

    def _rank_complex(self, red: Reduced, keep: list, complex_cells: np.ndarray) -> np.ndarray:
        """QR on each small connected piece that holds a complex cell; its cells."""
        if complex_cells.all() and not self.qr:
            return complex_cells  # every piece holds a complex cell: no search needed
        p = red.problem
        A_data = sp.csr_array(sp.vstack([a for a, _ in p.data_blocks()], format="csr")[:, red.free])
        lab = cell_components([A_data], red.n_free)
        complex_labels = np.unique(lab[complex_cells])
        in_complex = np.isin(lab, complex_labels)
        if not self.qr:
            return in_complex
        offsets = np.cumsum([0] + [len(k) for k in keep])
        keep_all = np.concatenate(keep)
        order = np.argsort(lab, kind="stable")
        bounds = np.searchsorted(lab[order], np.arange(int(lab.max(initial=-1)) + 2))
        for m in complex_labels:
            cols = order[bounds[m] : bounds[m + 1]]
            sub = sp.csr_array(A_data[:, cols])
            rows = np.flatnonzero((np.diff(sub.indptr) > 0) & keep_all)
            if len(rows) > tl.QR_MAX_ROWS or len(cols) > tl.QR_MAX_COLUMNS:
                continue  # too big for a dense QR: keep the structural drops only
            kept = rows[independent_rows(sub[rows].toarray())]
            for r in np.setdiff1d(rows, kept):
                block = int(np.searchsorted(offsets, r, side="right") - 1)
                keep[block][r - offsets[block]] = False
        return in_complex

    @staticmethod
    def _drop_last_sa(red: Reduced, keep: list, f_cls, in_complex) -> None:
        """One release: drop the last SA row of each bucket piece of the other cells.

        A bucket whose free cells are every (class, value) pair of its free classes and
        values is one piece; only the other buckets' pieces need a graph search.
        """
        s = red.problem.structure
        n_cls, n_gs = len(s.class_n), len(s.sa_n)
        sel = np.flatnonzero(~in_complex)
        c, g = f_cls[sel], s.cell_sa[red.free][sel]
        bucket = s.sa_bucket[g]
        n_b = int(s.sa_bucket.max(initial=-1)) + 1
        has_c = np.bincount(c, minlength=n_cls) > 0
        has_g = np.bincount(g, minlength=n_gs) > 0
        c_bucket = np.zeros(n_cls, dtype=int)
        c_bucket[c] = bucket
        per_b = np.bincount(bucket, minlength=n_b)
        full = per_b == (
            np.bincount(c_bucket[has_c], minlength=n_b)
            * np.bincount(s.sa_bucket[has_g], minlength=n_b)
        )
        piece = np.where(full[s.sa_bucket], s.sa_bucket, -1)  # per SA row
        rest = ~full[bucket]
        if rest.any():
            labels = bipartite_components(c[rest], g[rest], n_cls, n_gs)[n_cls:]
            split = has_g & (piece < 0)
            piece[split] = n_b + labels[split]
        gs_ids = np.flatnonzero(has_g)
        last = np.full(int(piece.max(initial=-1)) + 1, -1)
        np.maximum.at(last, piece[gs_ids], gs_ids)
        keep[2][last[last >= 0]] = False
