"""Components, pieces and the closed form: the bounds that need no program.

Cells linked by a data row or a fact form a component; the part of a target inside one
component is a *piece* (:class:`Pieces` holds every piece's bounds while they are found).
A piece in a bucket that no fact touches has a closed form (Du et al. Theorem 5): of the
n_qb records with QI value q and the n_bs with value s in bucket b, at most min(n_qb, n_bs)
and at least max(0, n_qb + n_bs - |b|) coincide.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components


# ---------------------------------------------------------------- components
def components(n_cells: int, A: sp.csr_array, facts) -> np.ndarray:
    """Component label of every cell: cells linked by a data row or by a fact."""
    blocks = [sp.csr_array(A != 0, dtype=float)]
    for f in facts:
        if len(f.cells):
            blocks.append(
                sp.csr_array(
                    (np.ones(len(f.cells)), (np.zeros(len(f.cells), dtype=int), f.cells)),
                    shape=(1, n_cells),
                )
            )
    M = sp.vstack(blocks, format="csr")
    big = sp.bmat([[None, M.T], [M, None]], format="csr")
    _, lab = connected_components(big, directed=False)
    return pd.factorize(lab[:n_cells])[0]


def _one_row_of(A_kind: sp.csr_array, n_cells: int) -> np.ndarray:
    """Per cell: the row of ``A_kind`` holding it (-1: none, -2: several)."""
    C = sp.csc_array(A_kind)
    count = np.diff(C.indptr)
    out = np.full(n_cells, -1, dtype=np.int64)
    one = count == 1
    out[one] = C.indices[C.indptr[:-1][one]]
    out[count > 1] = -2
    return out


@dataclass
class Pieces:
    """The part of each base target inside one component (count scale)."""

    target: np.ndarray  # base target of each piece
    comp: np.ndarray  # component of each piece
    P: sp.csr_array  # piece x cell, 1 on the cells the piece counts
    lo: np.ndarray = field(default=None)
    hi: np.ndarray = field(default=None)
    lo_gap: np.ndarray = field(default=None)
    hi_gap: np.ndarray = field(default=None)
    lo_viol: np.ndarray = field(default=None)
    hi_viol: np.ndarray = field(default=None)
    method: np.ndarray = field(default=None)  # 0 closed form, 1 LP, 2 conic
    lo_exact: np.ndarray = field(default=None)
    hi_exact: np.ndarray = field(default=None)
    lp_lo: np.ndarray = field(default=None)
    lp_hi: np.ndarray = field(default=None)
    # the extremes that the possible worlds seen reach (exact=True; -inf/inf: none seen)
    world_lo: np.ndarray = field(default=None)
    world_hi: np.ndarray = field(default=None)
    # how far a table seen must go to settle a bound (counts; see lp.Open): inf / 0 ask
    # for the bound itself, an individual's needs 1 above and n - 1 below
    enough_hi: np.ndarray = field(default=None)
    enough_lo: np.ndarray = field(default=None)

    def __post_init__(self):
        n = len(self.target)
        for name in ("lo", "hi", "lp_lo", "lp_hi"):
            setattr(self, name, np.full(n, np.nan))
        self.world_lo, self.world_hi = np.full(n, np.inf), np.full(n, -np.inf)
        self.enough_hi, self.enough_lo = np.full(n, np.inf), np.zeros(n)
        for name in ("lo_gap", "hi_gap", "lo_viol", "hi_viol"):
            setattr(self, name, np.zeros(n))
        self.method = np.zeros(n, dtype=np.int8)
        self.lo_exact = np.ones(n, dtype=bool)
        self.hi_exact = np.ones(n, dtype=bool)


def cut_pieces(T: sp.csr_array, lab: np.ndarray) -> Pieces:
    C = T.tocoo()
    ncomp = int(lab.max()) + 1 if len(lab) else 1
    key = C.row.astype(np.int64) * ncomp + lab[C.col]
    code, uniq = pd.factorize(key, sort=True)
    P = sp.csr_array((np.ones(len(code)), (code, C.col)), shape=(len(uniq), T.shape[1]))
    return Pieces(uniq // ncomp, uniq % ncomp, P)


def _closed_form(pieces: Pieces, sel: np.ndarray, A, b, kind, lab) -> np.ndarray:
    """Bounds of the pieces ``sel`` that lie in plain fact-free components (Du et al.
    Theorem 5's buckets); returns the mask of ``sel`` they settled."""
    n = A.shape[1]
    cls_row = _one_row_of(A[np.flatnonzero(kind == "class")], n)
    sa_row = _one_row_of(A[np.flatnonzero(kind == "SA")], n)
    other = A[np.flatnonzero((kind != "class") & (kind != "SA"))]
    n_other = np.diff(sp.csc_array(other).indptr) if other.shape[0] else np.zeros(n, dtype=int)
    cls_b = b[np.flatnonzero(kind == "class")]
    sa_b = b[np.flatnonzero(kind == "SA")]
    cells = pd.DataFrame({"comp": lab, "cls": cls_row, "sa": sa_row, "other": n_other})
    ok_cell = (cells["cls"] >= 0) & (cells["sa"] >= 0) & (cells["other"] == 0)
    g = cells.groupby("comp")
    stats = pd.DataFrame(
        {
            "bad": (~ok_cell).groupby(cells["comp"]).sum(),
            "cells": g.size(),
            "n_cls": g["cls"].nunique(),
            "n_sa": g["sa"].nunique(),
            "pairs": cells.assign(p=cells["cls"] * (len(sa_b) + 1) + cells["sa"])
            .groupby("comp")["p"]
            .nunique(),
        }
    )
    plain = (stats["bad"] == 0) & (stats["cells"] == stats["n_cls"] * stats["n_sa"])
    plain &= stats["pairs"] == stats["cells"]
    plain = plain.reindex(np.arange(int(lab.max()) + 1), fill_value=False).to_numpy()
    # records per plain component: the sum of its class sizes
    first = cells[ok_cell].drop_duplicates("cls")
    size = np.bincount(first["comp"], weights=cls_b[first["cls"]], minlength=len(plain))
    idx = sel[plain[pieces.comp[sel]]]
    if not len(idx):
        return np.zeros(len(sel), dtype=bool)
    Pc = pieces.P[idx].tocoo()
    n_c = np.bincount(Pc.row, weights=cls_b[cls_row[Pc.col]], minlength=len(idx))
    s_row = pd.Series(sa_row[Pc.col]).groupby(Pc.row)
    single = (s_row.nunique() == 1).reindex(np.arange(len(idx)), fill_value=False).to_numpy()
    n_s = sa_b[s_row.first().reindex(np.arange(len(idx)), fill_value=0).to_numpy()]
    B = size[pieces.comp[idx]]
    done = idx[single]
    pieces.hi[done] = np.minimum(n_c, n_s)[single]
    pieces.lo[done] = np.maximum(0.0, n_c + n_s - B)[single]
    pieces.lp_hi[done] = pieces.hi[done]
    pieces.lp_lo[done] = pieces.lo[done]
    pieces.world_hi[done] = pieces.hi[done]  # integral tables reach both ends
    pieces.world_lo[done] = pieces.lo[done]
    pieces.method[done] = 0
    settled = np.zeros(len(sel), dtype=bool)
    settled[np.isin(sel, done)] = True
    return settled


def closed_pieces(pieces: Pieces, has_fact, A, b, kind, lab) -> np.ndarray:
    """Mask of the pieces settled in closed form (components that no fact touches)."""
    free = np.flatnonzero(~has_fact[pieces.comp])
    closed = np.zeros(len(pieces.target), dtype=bool)
    closed[free[_closed_form(pieces, free, A, b, kind, lab)]] = True
    return closed
