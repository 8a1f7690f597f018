"""Certified posterior intervals: the worst case beside the maximum-entropy estimate.

Maximum entropy gives the least committed belief. :func:`bounds` gives the other end: over
*every* table the model allows (the data constraints and the hard facts that maximum entropy
uses), how low and how high can P(s | QI value), P(s | QI value, group) or P(s | person) go?
The answers are linear programs over the cells of the model, one minimum and one maximum per
(row, value), solved component by component:

* a bucket that no fact touches (one bucketized release) has a closed form: of the n_qb
  records with QI value q and the n_bs records with value s in bucket b, at most
  min(n_qb, n_bs) and at least max(0, n_qb + n_bs - |b|) can coincide; add over buckets;
* a component that linear facts touch is a linear program solved with HiGHS (``highspy``,
  primal simplex warm-started from the previous objective's basis). Every bound carries a
  *dual certificate* that our own arithmetic checks: multipliers y for the equalities, w for
  the inequalities (sign-constrained) and the reduced costs c - A'y - G'w, whose signs make
  the dual objective a bound for every table; ``gap`` is |primal value - dual objective| and
  ``dual_violation`` the largest sign error of a multiplier or reduced cost (both in
  probability units). Many bounds are proved without an LP of their own: a cell that no
  table makes positive is found in bulk (one LP whose optimum 0 certifies a whole set of
  cells), and a bound that a table already seen attains and a simple dual point proves
  (a cover of the target's cells by data rows) is taken from there;
* a component with non-linear convex facts is solved by cvxpy (Clarabel); those bounds are
  the conic solver's answers, not checked by a certificate of ours (``certified`` False).

Soft facts (:func:`maxent_privacy.soft`) are penalties, not walls: a table that violates
them is still allowed, so they are left out of the bounds.

``exact=True`` bounds the probabilities over *integral* tables instead: the adversary's
possible worlds (every assignment of values to people consistent with the releases and the
facts). The LP relaxation is sound but not exact when several releases are pooled or
people are singled out (see :func:`relaxation_gap`); the integer programs are HiGHS MILPs,
time-boxed by ``time_limit``. Facts are then read as statements about the true table (they
must hold in every possible world); a probability fact that no integral table satisfies
leaves the LP bound in place. A bound whose integer program ran out of time is the LP
bound, with ``exact`` False.

>>> from maxent_privacy import MaxEntModel, Bucketized, datasets
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                                sa="disease", group="bucket"))
>>> model.add(model.P("Breast Cancer", gender="male") == 0)
>>> b = model.bounds()
>>> [round(float(v), 9) for v in b.loc[("male", "college", "Flu"), ["lower", "upper"]]]
[0.333333333, 0.666666667]
"""

from __future__ import annotations

import os
import re
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .errors import InfeasibleKnowledge, KnowledgeError

__all__ = ["bounds", "relaxation_gap"]

#: a cell counts as positive in a table when it is above this (records)
POSITIVE = 1e-7
#: a table attains a bound when it is this close (records)
ATTAIN = 1e-7
#: a bound is ``certified`` when its gap and dual violation are at most this (probability)
CERTIFIED = 1e-6
#: integrality / feasibility tolerance for the possible worlds found by the MILPs (records)
INTEGRAL = 1e-6
#: components smaller than this (cells) are solved together in one LP
BATCH = 2000


# ---------------------------------------------------------------- model access
def _person_class(model):
    """Person id -> class index of the model's structure (None without person ids)."""
    return model.structure.person_class


def _records(model) -> pd.DataFrame:
    """The records (pooled releases: people) the posteriors' denominators count."""
    return model.structure.records


def _z_mask(model) -> np.ndarray:
    """Cells that are values (not group placements of pooled releases)."""
    if "kind" in model.cells.columns:
        return (model.cells["kind"] == "z").to_numpy()
    return np.ones(model.n_cells, dtype=bool)


def _data_rows(model):
    """``(A, b, kind)``: every data constraint ``A x == b`` over all cells (count scale).

    ``model.invariant_matrix(drop_redundant=False)``, with the rows of placement cells
    (pooled releases where a person's group is not known) put right: a class's One row
    counts its value cells only, and ``sum_g y[r, c, g, s] == z[c, s]`` links the
    placements of each release to the values. ``kind`` per row: "class", "SA", "shared",
    "link".
    """
    A, b, rows = model.invariant_matrix(drop_redundant=False)
    A = sp.csr_array(A, dtype=float)
    b = np.asarray(b, dtype=float)
    kind = rows["kind"].map({"QI": "class", "QI (shared)": "shared", "SA": "SA"})
    kind = kind.fillna("other").to_numpy(dtype=object)
    z = _z_mask(model)
    if z.all():
        return A, b, kind
    cells = model.cells
    y_cells = np.flatnonzero(~z)
    C = A.tocoo()
    keep = ~((kind[C.row] == "class") & ~z[C.col])  # One rows hold the value cells only
    A = sp.csr_array((C.data[keep], (C.row[keep], C.col[keep])), shape=A.shape)
    if (A.data < 0).any():  # the links are there already
        return A, b, np.where(A.min(axis=1).toarray().ravel() < 0, "link", kind)
    sa = model.sa
    zc = cells.loc[z, ["cls", sa]].copy()
    zc["z"] = np.flatnonzero(z)
    yc = cells.loc[~z, ["cls", sa, "kind"]].copy()
    yc["y"] = y_cells
    yc["release"] = yc["kind"].map(lambda k: re.match(r"y (r\d+):", k).group(1))
    yc = yc.merge(zc, on=["cls", sa], how="left")
    key = pd.factorize(pd.MultiIndex.from_frame(yc[["cls", sa, "release"]].astype(str)))[0]
    n_link = int(key.max()) + 1 if len(key) else 0
    first = pd.Series(np.arange(len(yc))).groupby(key).first().to_numpy()
    rr = np.concatenate([key, np.arange(n_link)])
    cc = np.concatenate([yc["y"].to_numpy(), yc["z"].to_numpy()[first]])
    vv = np.concatenate([np.ones(len(yc)), -np.ones(n_link)])
    L = sp.csr_array((vv, (rr, cc)), shape=(n_link, model.n_cells))
    A = sp.vstack([A, L], format="csr")
    b = np.concatenate([b, np.zeros(n_link)])
    kind = np.concatenate([kind, np.full(n_link, "link", dtype=object)])
    return A, b, kind


# ---------------------------------------------------------------- targets
@dataclass
class _Targets:
    """Base targets (rows of T over the cells, count scale, divided by ``den``) and the
    output rows: ``index`` with ``base[i]`` (-1: a value no table gives: 0/0)."""

    T: sp.csr_array
    den: np.ndarray
    index: pd.MultiIndex
    base: np.ndarray
    records: np.ndarray | None = None  # per output row: records it is about (not persons)
    classes: np.ndarray | None = None  # by="person": the class of each base target


def _targets(model, by, values) -> _Targets:
    cells = model.cells
    sa = model.sa
    z = _z_mask(model)
    zc = np.flatnonzero(z)
    all_values = sorted(cells.loc[z, sa].unique().tolist(), key=str)
    if values is None:
        keep_values = all_values
    else:
        want = values if isinstance(values, (list, tuple, set, pd.Index, np.ndarray)) else [values]
        keep_values = []
        for v in want:
            hit = [u for u in all_values if u == v or str(u) == str(v)]
            if not hit:
                raise KnowledgeError(
                    f"sensitive value {v!r} is not in the model (values: "
                    + ", ".join(map(str, all_values[:12]))
                    + (", ..." if len(all_values) > 12 else "")
                    + ")"
                )
            keep_values.append(hit[0])
        keep_values = sorted(set(keep_values), key=str)
    if by == "person":
        return _person_targets(model, zc, keep_values, all_values)
    if by is None:
        keys = list(model.qi)
    elif by == "group":
        keys = list(model.qi) + [model.group]
    else:
        raise ValueError(f"by must be None, 'group' or 'person', got {by!r}")
    sub = cells.iloc[zc]
    groups = sub.groupby(keys, sort=True, observed=True)
    key_index = pd.MultiIndex.from_frame(groups.size().index.to_frame(index=False))
    key_code = groups.ngroup().to_numpy()
    records = _records(model)
    if all(k in records.columns for k in keys):
        sizes = records.groupby(keys, sort=True, observed=True).size()
        den = sizes.reindex(key_index).to_numpy(dtype=float)
    else:  # pooled releases by group: the classes count the people
        cl = model.classes
        sizes = cl.groupby(keys, sort=True, observed=True)["n"].sum()
        den = sizes.reindex(key_index).to_numpy(dtype=float)
    v_index = pd.Index(keep_values)
    v_code = v_index.get_indexer(sub[sa])
    on = v_code >= 0
    nv = len(keep_values)
    flat = key_code[on] * nv + v_code[on]
    base_code, uniq = pd.factorize(flat, sort=True)
    T = sp.csr_array((np.ones(on.sum()), (base_code, zc[on])), shape=(len(uniq), model.n_cells))
    T.sum_duplicates()
    base = np.full(len(key_index) * nv, -1, dtype=np.int64)
    base[uniq] = np.arange(len(uniq))
    codes = np.repeat(np.arange(len(key_index)), nv)
    index = pd.MultiIndex.from_arrays(
        [key_index.get_level_values(i)[codes] for i in range(key_index.nlevels)]
        + [pd.Index(keep_values)[np.tile(np.arange(nv), len(key_index))]],
        names=keys + [sa],
    )
    records = np.repeat(den, nv).astype(np.int64)
    return _Targets(T, den[uniq // nv], index, base, records=records)


def _person_targets(model, zc, keep_values, all_values) -> _Targets:
    cells = model.cells
    sa = model.sa
    pc = _person_class(model)
    persons, cls_of = [], []
    if pc is not None:
        persons += list(pc.index)
        cls_of += list(np.asarray(pc.to_numpy(), dtype=np.int64))
    named = [p.name for p in model.persons]
    known = set(map(str, persons))
    for name in named:
        if name in known:
            continue
        hit = cells["cls"].to_numpy()[(cells["person"] == name).to_numpy()]
        if len(hit):
            persons.append(name)
            cls_of.append(int(hit[0]))
    if not persons:
        raise KnowledgeError(
            "by='person' needs persons: a release with a person column, pooled releases, "
            "or individuals singled out with model.person(...)"
        )
    cls_of = np.asarray(cls_of, dtype=np.int64)
    v_index = pd.Index(keep_values)
    nv = len(keep_values)
    v_code = v_index.get_indexer(cells[sa].to_numpy()[zc])
    on = v_code >= 0
    cls = cells["cls"].to_numpy()[zc][on]
    flat = cls * nv + v_code[on]
    base_code, uniq = pd.factorize(flat, sort=True)
    T = sp.csr_array((np.ones(on.sum()), (base_code, zc[on])), shape=(len(uniq), model.n_cells))
    T.sum_duplicates()
    class_n = model.classes["n"].to_numpy(dtype=float)
    den = class_n[uniq // nv]
    lookup = pd.Index(uniq)
    want = (cls_of[:, None] * nv + np.arange(nv)[None, :]).ravel()
    base = lookup.get_indexer(want).astype(np.int64)
    index = pd.MultiIndex.from_arrays(
        [
            pd.Index(persons, dtype=object)[np.repeat(np.arange(len(persons)), nv)],
            pd.Index(keep_values)[np.tile(np.arange(nv), len(persons))],
        ],
        names=["person", sa],
    )
    return _Targets(T, den, index, base, classes=uniq // nv)


# ---------------------------------------------------------------- components
def _components(n_cells: int, A: sp.csr_array, facts) -> np.ndarray:
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
class _Pieces:
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

    def __post_init__(self):
        n = len(self.target)
        for name in ("lo", "hi", "lp_lo", "lp_hi"):
            setattr(self, name, np.full(n, np.nan))
        for name in ("lo_gap", "hi_gap", "lo_viol", "hi_viol"):
            setattr(self, name, np.zeros(n))
        self.method = np.zeros(n, dtype=np.int8)
        self.lo_exact = np.ones(n, dtype=bool)
        self.hi_exact = np.ones(n, dtype=bool)


def _pieces(T: sp.csr_array, lab: np.ndarray) -> _Pieces:
    C = T.tocoo()
    ncomp = int(lab.max()) + 1 if len(lab) else 1
    key = C.row.astype(np.int64) * ncomp + lab[C.col]
    code, uniq = pd.factorize(key, sort=True)
    P = sp.csr_array((np.ones(len(code)), (code, C.col)), shape=(len(uniq), T.shape[1]))
    return _Pieces(uniq // ncomp, uniq % ncomp, P)


def _closed_form(pieces: _Pieces, sel: np.ndarray, A, b, kind, lab) -> np.ndarray:
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
    pieces.method[done] = 0
    settled = np.zeros(len(sel), dtype=bool)
    settled[np.isin(sel, done)] = True
    return settled


# ---------------------------------------------------------------- linear programs
def _highs():
    """A silent ``highspy.Highs`` (HiGHS prints a banner on stdout when the first one of
    a process is made, before any option can be set: fd 1 is muted meanwhile)."""
    import highspy

    try:
        sys.stdout.flush()
        saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    except OSError:  # no file descriptor 1 to mute
        h = highspy.Highs()
    else:
        try:
            os.dup2(null, 1)
            h = highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)
    h.setOptionValue("output_flag", False)
    return h


class _LP:
    """One component's linear program ``min c'x : E x = e, G x <= g, x >= 0`` in HiGHS,
    kept between objectives (primal simplex from the previous basis)."""

    def __init__(self, E: sp.csr_array, e, G: sp.csr_array, g, u, integral=False):
        import highspy

        self.highspy = highspy
        self.E, self.e, self.G, self.g = E, np.asarray(e, float), G, np.asarray(g, float)
        self.M = sp.vstack([E, G], format="csr")
        self.MT = sp.csr_array(self.M.T)
        self.rhs = np.concatenate([self.e, self.g])
        self.m_e = E.shape[0]
        self.n = E.shape[1]
        self.u = u
        h = _highs()
        h.setOptionValue("random_seed", 0)
        inf = highspy.kHighsInf
        lp = highspy.HighsLp()
        lp.num_col_ = self.n
        lp.num_row_ = self.M.shape[0]
        lp.col_cost_ = np.zeros(self.n)
        lp.col_lower_ = np.zeros(self.n)
        lp.col_upper_ = np.full(self.n, inf)
        lp.row_lower_ = np.concatenate([self.e, np.full(G.shape[0], -inf)])
        lp.row_upper_ = self.rhs.copy()
        Mc = sp.csc_array(self.M)
        Mc.sort_indices()
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = Mc.indptr.astype(np.int32)
        lp.a_matrix_.index_ = Mc.indices.astype(np.int32)
        lp.a_matrix_.value_ = Mc.data.astype(float)
        lp.a_matrix_.num_col_ = self.n
        lp.a_matrix_.num_row_ = self.M.shape[0]
        if integral:
            lp.integrality_ = [highspy.HighsVarType.kInteger] * self.n
        h.passModel(lp)
        self.h = h
        self.cost = np.zeros(self.n)
        self.warm = False

    def set_cost(self, c) -> None:
        diff = np.flatnonzero(c != self.cost)
        if len(diff):
            self.h.changeColsCost(len(diff), diff.astype(np.int32), c[diff].astype(float))
            self.cost = c.astype(float).copy()

    def solve(self, c, cold: bool = False):
        """Minimize ``c'x``; returns (status, x, row duals, objective) (status "optimal",
        "infeasible" or the solver's word). Warm: primal simplex from the last basis (fast
        when the objective moved a little); ``cold``: dual simplex from scratch (faster
        after a change of the whole objective on large degenerate components)."""
        hs = self.highspy
        self.set_cost(c)
        if cold and self.warm:
            self.h.clearSolver()
            self.h.setOptionValue("simplex_strategy", 1)
            self.h.setOptionValue("presolve", "on")
        elif self.warm:
            self.h.setOptionValue("simplex_strategy", 4)  # primal: the basis stays feasible
            self.h.setOptionValue("presolve", "off")
        self.h.run()
        status = self.h.getModelStatus()
        if status == hs.HighsModelStatus.kOptimal:
            self.warm = True
            sol = self.h.getSolution()
            x = np.asarray(sol.col_value)
            y = np.asarray(sol.row_dual)
            return "optimal", x, y, float(c @ x)
        if status in (hs.HighsModelStatus.kInfeasible, hs.HighsModelStatus.kUnboundedOrInfeasible):
            return "infeasible", None, None, np.nan  # (bounded: every cell is in a data row)
        if self.warm:  # try once more from scratch
            self.h.clearSolver()
            self.h.setOptionValue("simplex_strategy", 1)
            self.h.setOptionValue("presolve", "on")
            self.warm = False
            self.h.run()
            if self.h.getModelStatus() == hs.HighsModelStatus.kOptimal:
                self.warm = True
                sol = self.h.getSolution()
                x = np.asarray(sol.col_value)
                return "optimal", x, np.asarray(sol.row_dual), float(c @ x)
        return self.h.modelStatusToString(self.h.getModelStatus()), None, None, np.nan

    def lower_certificate(self, c, y):
        """Our check of a dual point for ``min c'x``: (dual bound valid for every table,
        largest sign violation). Multipliers of the ``<=`` rows must be <= 0 and the reduced
        costs ``c - M'y`` >= 0; a wrong sign is clipped, and what is left of a negative
        reduced cost is charged at the cell's largest value ``u`` (so the bound is a bound)."""
        y = np.asarray(y, dtype=float).copy()
        viol = 0.0
        if len(y) > self.m_e:
            tail = y[self.m_e :]
            viol = max(viol, float(np.max(tail, initial=0.0)))
            y[self.m_e :] = np.minimum(tail, 0.0)
        r = c - self.MT @ y
        neg = np.minimum(r, 0.0)
        viol = max(viol, float(-neg.min(initial=0.0)))
        bound = float(self.rhs @ y) + float(np.where(neg < 0, neg * self.u, 0.0).sum())
        return bound, viol


class _Budget:
    """What the integer programs may still spend (seconds), and whether it ran out."""

    def __init__(self, seconds: float):
        self.end = time.perf_counter() + float(seconds)
        self.ran_out = False

    def left(self) -> float:
        return self.end - time.perf_counter()


class _Stats:
    def __init__(self):
        self.lps = 0
        self.milps = 0
        self.pool_hits = 0
        self.zero_cells = 0
        self.worlds = 0
        self.no_world = []  # components where no integral table satisfies the facts


def _component_rows(cols, A, b, kind, facts):
    """The component's data rows and linear facts, restricted to its cells."""
    sub = sp.csr_array(A[:, cols])
    rows = np.flatnonzero(np.diff(sub.indptr) > 0)
    E, e, ekind = [sub[rows]], [b[rows]], [kind[rows]]
    G, g = [], []
    for f in facts:
        if f.sense not in ("==", "<="):
            continue
        Fa = sp.csr_array(f.A[:, cols])
        keep = np.diff(Fa.indptr) > 0
        outside = (
            np.asarray(abs(f.A[keep]).sum(axis=1)).ravel()
            - np.asarray(abs(Fa[keep]).sum(axis=1)).ravel()
        )
        if (outside > 1e-12).any():  # cannot happen: a fact's cells share a component
            raise AssertionError(f"fact {f.name!r} crosses components")
        if f.sense == "==":
            E.append(Fa[keep])
            e.append(f.b[keep])
            ekind.append(np.full(int(keep.sum()), "fact", dtype=object))
        else:
            G.append(Fa[keep])
            g.append(f.b[keep])
    n = len(cols)
    E = sp.vstack(E, format="csr")
    G = sp.vstack(G, format="csr") if G else sp.csr_array((0, n))
    e = np.concatenate(e)
    g = np.concatenate(g) if g else np.zeros(0)
    ekind = np.concatenate(ekind)
    return E, e, ekind, G, g


def _cell_caps(E, e, ekind):
    """Per cell: the smallest right side of a data row (all coefficients >= 0) holding it,
    and that row: the largest value the cell can take."""
    nonneg = np.asarray(E.min(axis=1).toarray()).ravel() >= 0
    data = np.flatnonzero((ekind != "fact") & nonneg)
    D = sp.csr_array(E[data]).tocoo()
    n = E.shape[1]
    u = np.full(n, np.inf)
    arg = np.full(n, -1, dtype=np.int64)
    if D.nnz:
        val = e[data[D.row]] / D.data
        order = np.lexsort((val, D.col))
        col = D.col[order]
        first = np.flatnonzero(np.r_[True, col[1:] != col[:-1]])
        u[col[first]] = val[order][first]
        arg[col[first]] = data[D.row[order][first]]
    return u, arg, data


def _covers(Pl: sp.csr_array, E, e, ekind, u, arg, data):
    """An upper-bound certificate per piece: data rows covering its cells (y = 1 on them,
    A'y >= 1 on the piece, >= 0 elsewhere), chosen greedily by cost per new cell."""
    n_p = Pl.shape[0]
    D = sp.csr_array(E[data])
    DT = sp.csc_array(D)
    rows_of = []
    bound = np.zeros(n_p)
    for p in range(n_p):
        J = Pl.indices[Pl.indptr[p] : Pl.indptr[p + 1]]
        if len(J) == 1:
            r = arg[J[0]]
            rows_of.append([r] if r >= 0 else [])
            bound[p] = e[r] if r >= 0 else np.inf  # no data row holds it: no cover
            continue
        # candidate rows: every data row holding a cell of the piece
        cand = np.unique(np.concatenate([DT.indices[DT.indptr[j] : DT.indptr[j + 1]] for j in J]))
        left = set(J.tolist())
        chosen = []
        cover = {
            int(r): set(D.indices[D.indptr[r] : D.indptr[r + 1]].tolist()) & left for r in cand
        }
        while left:
            best, best_ratio = None, np.inf
            for r, cells in cover.items():
                k = len(cells & left)
                if k and e[data[r]] / k < best_ratio:
                    best, best_ratio = r, e[data[r]] / k
            chosen.append(data[best])
            left -= cover.pop(best)
        rows_of.append(chosen)
        bound[p] = float(e[chosen].sum())
    r_idx = np.concatenate([np.asarray(r, dtype=np.int64) for r in rows_of]) if n_p else []
    p_idx = np.repeat(np.arange(n_p), [len(r) for r in rows_of])
    Y = sp.csr_array((np.ones(len(r_idx)), (p_idx, r_idx)), shape=(n_p, E.shape[0]))
    # our check: Y E >= P on every cell (the certificate of max P x <= Y e)
    lack = (Pl - sp.csr_array(Y @ E)).tocsr()
    viol = np.zeros(n_p)
    if lack.nnz:
        lack.data = np.maximum(lack.data, 0.0)
        viol = np.asarray(lack.max(axis=1).toarray()).ravel()
    return bound, viol


class _MILP:
    """The same component as an integer program (HiGHS branch and bound)."""

    def __init__(self, E, e, G, g, u):
        self.lp = _LP(E, e, G, g, u, integral=True)
        self.h = self.lp.h
        hs = self.lp.highspy
        self.hs = hs
        self.h.setOptionValue("mip_feasibility_tolerance", 1e-7)

    def bound(self, lo, hi) -> None:
        """Column bounds (``inf`` for none)."""
        hi = np.where(np.isfinite(hi), hi, self.hs.kHighsInf)
        idx = np.arange(len(lo), dtype=np.int32)
        self.h.changeColsBounds(len(lo), idx, np.asarray(lo, float), np.asarray(hi, float))

    def run(self, c, limit: float, rel_gap: float = 0.0, row=None, first: bool = False):
        """Minimize ``c'x`` over integral tables, optionally with ``lo <= P x <= hi`` for
        ``row = (cells, lo, hi)``; ``first``: stop at the first table found (``c`` then
        only steers the search). Returns (status, x or None): status "optimal",
        "feasible" (``first``), "infeasible" or "time"."""
        hs, h = self.hs, self.h
        self.lp.set_cost(np.asarray(c, dtype=float))
        h.setOptionValue("time_limit", float(max(limit, 0.01)))
        h.setOptionValue("mip_rel_gap", float(rel_gap))
        h.setOptionValue("mip_max_improving_sols", 1 if first else 2147483647)
        added = False
        if row is not None:
            cells, lo, hi = row
            inf = hs.kHighsInf
            h.addRow(
                -inf if lo is None else float(lo),
                inf if hi is None else float(hi),
                len(cells),
                np.asarray(cells, dtype=np.int32),
                np.ones(len(cells)),
            )
            added = True
        try:
            h.run()
            status = h.getModelStatus()
            sol = h.getSolution()
            x = np.asarray(sol.col_value) if sol.value_valid else None
        finally:
            if added:
                h.deleteRows(1, np.array([h.getNumRow() - 1], dtype=np.int32))
        if status == hs.HighsModelStatus.kOptimal:
            return "optimal", x
        if status == hs.HighsModelStatus.kInfeasible:
            return "infeasible", None
        if first and x is not None and status == hs.HighsModelStatus.kSolutionLimit:
            return "feasible", x
        return "time", x


def _world(x, E, e, G, g):
    """``x`` rounded to integers if it is a table of the model (every constraint within
    rounding error), else None."""
    if x is None:
        return None
    r = np.round(x)
    if np.max(np.abs(x - r), initial=0.0) > INTEGRAL or (r < 0).any():
        return None
    if np.max(np.abs(E @ r - e), initial=0.0) > 1e-9:
        return None
    if G.shape[0] and np.max(G @ r - g, initial=-1.0) > 1e-9:
        return None
    return r


class _Seen:
    """Per piece, the extremes that the tables seen so far reach (and, with ``exact``,
    those that the integral ones among them reach); calling it records one table."""

    def __init__(self, Pl, model_rows, exact, stats):
        n_p = Pl.shape[0]
        self.Pl, self.model_rows, self.exact, self.stats = Pl, model_rows, exact, stats
        self.best_hi = np.full(n_p, -np.inf)
        self.best_lo = np.full(n_p, np.inf)
        self.int_hi = np.full(n_p, -np.inf)
        self.int_lo = np.full(n_p, np.inf)

    def __call__(self, x) -> None:
        """Record the table ``x``."""
        v = self.Pl @ x
        np.maximum(self.best_hi, v, out=self.best_hi)
        np.minimum(self.best_lo, v, out=self.best_lo)
        if self.exact:
            w = _world(x, *self.model_rows)
            if w is not None:
                self.stats.worlds += 1
                vi = self.Pl @ w
                np.maximum(self.int_hi, vi, out=self.int_hi)
                np.minimum(self.int_lo, vi, out=self.int_lo)


def _lp_solver(lp: _LP, seen: _Seen, stats):
    """``solve(c, cold=False)``: one counted LP whose optimal table ``seen`` records."""

    def solve(c, cold=False):
        st, x, y, obj = lp.solve(c, cold)
        stats.lps += 1
        if st == "infeasible":
            raise InfeasibleKnowledge("the facts contradict the data (no table satisfies them)")
        if st == "optimal":
            seen(x)
        return st, x, y, obj

    return solve


class _Open:
    """The bounds of one component's pieces while they are settled (NaN: still open),
    with their gaps, dual violations and the cover bounds ``U`` (violation ``U_v``)."""

    def __init__(self, n_p: int):
        self.hi_val, self.lo_val = np.full(n_p, np.nan), np.full(n_p, np.nan)
        self.hi_gap, self.lo_gap = np.zeros(n_p), np.zeros(n_p)
        self.hi_v, self.lo_v = np.zeros(n_p), np.zeros(n_p)
        self.U = np.full(n_p, np.inf)
        self.U_v = np.zeros(n_p)

    def settle(self, seen: _Seen, stats) -> int:
        """Settle the bounds that a table seen attains and a cover or 0 proves; how many."""
        hit = np.isnan(self.hi_val) & (seen.best_hi >= self.U - ATTAIN)
        self.hi_val[hit] = self.U[hit]
        self.hi_gap[hit] = self.U[hit] - seen.best_hi[hit]
        self.hi_v[hit] = self.U_v[hit]
        low = np.isnan(self.lo_val) & (seen.best_lo <= ATTAIN)
        self.lo_val[low] = 0.0
        self.lo_gap[low] = np.maximum(seen.best_lo[low], 0.0)
        stats.pool_hits += int(hit.sum() + low.sum())
        return int(hit.sum() + low.sum())


def _zero_cells(lp: _LP, solve, w, n: int):
    """Step 1: cells no table makes positive (mask, certified bound, dual violation)."""
    R = np.ones(n, dtype=bool)
    Z = np.zeros(n, dtype=bool)
    zero_bound, zero_viol = 0.0, 0.0
    for _ in range(60):
        c = np.where(R, -w, 0.0)
        st, x, y, obj = solve(c, cold=True)
        if st != "optimal":
            break
        pos = R & (x > POSITIVE)
        if not pos.any():
            lb, zero_viol = lp.lower_certificate(c, y)
            zero_bound = max(-lb, 0.0)
            Z = R.copy()
            break
        R &= ~pos
        if not R.any():
            break
    return Z, zero_bound, zero_viol


def _zero_upper_bounds(op: _Open, Pl, Z, w, zero_bound, zero_viol) -> np.ndarray:
    """Step 2a: pieces on proved-zero cells only have upper bound 0; returns their mask."""
    free = Pl @ (~Z).astype(float)
    in_z = free == 0
    if in_z.any():
        Pz = Pl[np.flatnonzero(in_z)]
        alpha = np.asarray(
            [w[Pz.indices[Pz.indptr[i] : Pz.indptr[i + 1]]].min() for i in range(Pz.shape[0])]
        )
        op.hi_val[in_z] = 0.0
        op.hi_gap[in_z] = zero_bound / alpha
        op.hi_v[in_z] = zero_viol / alpha
    return in_z


def _pinned_lower_bounds(op: _Open, Pl, E, e, ekind, Z, w, zero_bound, zero_viol) -> None:
    """Step 2b: a piece whose classes have no other possible value: pinned to their size."""
    cls_rows = np.flatnonzero(ekind == "class")
    Cm = sp.csr_array(E[cls_rows])
    Q = sp.csr_array((Pl @ Cm.T) > 0, dtype=float)
    S = sp.csr_array((Q @ Cm) > 0, dtype=float)
    K = sp.csr_array(S - Pl)
    K.eliminate_zeros()
    covered = np.asarray((Pl @ sp.csr_array(Cm.T)).sum(axis=1)).ravel() == Pl.sum(axis=1)
    pinned = covered & ((K @ (~Z).astype(float)) == 0)
    n_cls = Q @ e[cls_rows]
    if pinned.any():
        for i in np.flatnonzero(pinned):
            Kc = K.indices[K.indptr[i] : K.indptr[i + 1]]
            beta = 1.0 / w[Kc].min() if len(Kc) else 0.0
            op.lo_val[i] = n_cls[i]
            op.lo_gap[i] = beta * zero_bound
            op.lo_v[i] = beta * zero_viol


def _aggregated_lps(op: _Open, Pl, solve, seen: _Seen, stats, rng) -> None:
    """Step 3: aggregated objectives, one table that reaches many bounds at once."""
    scale = np.where(np.isfinite(op.U) & (op.U > 0), op.U, 1.0)
    for sense in ("hi", "lo"):
        for _ in range(20):
            open_ = np.flatnonzero(np.isnan(op.hi_val if sense == "hi" else op.lo_val))
            if not len(open_):
                break
            weight = rng.uniform(0.5, 1.5, len(open_)) / scale[open_]
            c = np.asarray(Pl[open_].T @ weight).ravel()
            st, *_ = solve(-c if sense == "hi" else c, cold=True)
            if st != "optimal":
                break
            if op.settle(seen, stats) < max(3, 0.02 * len(open_)):
                break


def _lp_per_bound(op: _Open, Pl, lp: _LP, solve, seen: _Seen, stats) -> None:
    """Step 4: one LP per bound left, each with its dual certificate checked."""
    n = Pl.shape[1]
    for sense in ("hi", "lo"):
        vals = op.hi_val if sense == "hi" else op.lo_val
        for i in np.flatnonzero(np.isnan(vals)):
            if not np.isnan(vals[i]):
                continue  # a table seen meanwhile settled it
            c = np.zeros(n)
            c[Pl.indices[Pl.indptr[i] : Pl.indptr[i + 1]]] = 1.0
            if sense == "hi":
                c = -c
            st, x, y, obj = solve(c)
            if st != "optimal":
                raise RuntimeError(f"HiGHS: {st} on a bound of a feasible component")
            lb, viol = lp.lower_certificate(c, y)
            if sense == "hi":
                op.hi_val[i], op.hi_gap[i], op.hi_v[i] = -obj, abs(-lb - -obj), viol
            else:
                op.lo_val[i], op.lo_gap[i], op.lo_v[i] = obj, abs(obj - lb), viol
            op.settle(seen, stats)


def _store_lp(pieces: _Pieces, idx, op: _Open) -> None:
    """Write the settled LP bounds of the pieces ``idx`` into ``pieces``."""
    pieces.hi[idx], pieces.lo[idx] = op.hi_val, op.lo_val
    pieces.lp_hi[idx], pieces.lp_lo[idx] = op.hi_val, op.lo_val
    pieces.hi_gap[idx], pieces.lo_gap[idx] = op.hi_gap, op.lo_gap
    pieces.hi_viol[idx], pieces.lo_viol[idx] = op.hi_v, op.lo_v
    pieces.method[idx] = 1


def _lp_component(pieces: _Pieces, idx, cols, rows, exact, budget, stats, rng) -> None:
    """Bounds of the pieces ``idx`` of one component with linear facts (see the module
    docstring for the order: forced zeros, tables seen, aggregated objectives, one LP per
    bound; then, with ``exact``, integral tables)."""
    E, e, ekind, G, g = rows
    n = len(cols)
    u, arg, data = _cell_caps(E, e, ekind)
    lp = _LP(E, e, G, g, u)
    Pl = sp.csr_array(pieces.P[idx][:, cols])
    seen = _Seen(Pl, (E, e, G, g), exact, stats)
    solve = _lp_solver(lp, seen, stats)

    # 1. cells that no table makes positive, certified in bulk
    w = 1.0 / np.where(np.isfinite(u) & (u > 0), u, 1.0)
    Z, zero_bound, zero_viol = _zero_cells(lp, solve, w, n)
    stats.zero_cells += int(Z.sum())

    # 2. bounds proved without an LP of their own
    op = _Open(len(idx))
    in_z = _zero_upper_bounds(op, Pl, Z, w, zero_bound, zero_viol)
    _pinned_lower_bounds(op, Pl, E, e, ekind, Z, w, zero_bound, zero_viol)
    todo_hi = np.flatnonzero(~in_z)
    if len(todo_hi):
        op.U[todo_hi], op.U_v[todo_hi] = _covers(Pl[todo_hi], E, e, ekind, u, arg, data)
    op.settle(seen, stats)

    # 3. aggregated objectives; 4. one LP per bound left
    _aggregated_lps(op, Pl, solve, seen, stats, rng)
    _lp_per_bound(op, Pl, lp, solve, seen, stats)

    _store_lp(pieces, idx, op)
    if exact:
        _integral(pieces, idx, Pl, (E, e, G, g, u), Z, seen.int_hi, seen.int_lo, budget, stats, rng)


def _finish_integral(pieces, idx, ex_hi, ex_lo) -> None:
    """Store the exact bounds found; the open ones keep the LP bound, ``exact`` False."""
    lp_hi, lp_lo = pieces.lp_hi[idx], pieces.lp_lo[idx]
    pieces.hi_exact[idx] = ~np.isnan(ex_hi)
    pieces.lo_exact[idx] = ~np.isnan(ex_lo)
    pieces.hi[idx] = np.where(np.isnan(ex_hi), lp_hi, ex_hi)
    pieces.lo[idx] = np.where(np.isnan(ex_lo), lp_lo, ex_lo)


def _no_world(pieces, idx, stats) -> None:
    """Record a component without integral tables: its bounds stay the LP's, not exact."""
    stats.no_world.append(int(pieces.comp[idx[0]]))
    pieces.hi_exact[idx] = pieces.lo_exact[idx] = False


def _cell_ranges(Pl, Z, top, bottom):
    """Integral range of every cell: proved zeros, single-cell LP bounds rounded inwards."""
    n = Pl.shape[1]
    cell_lo, cell_hi = np.zeros(n), np.where(Z, 0.0, np.inf)
    one = np.flatnonzero(np.diff(Pl.indptr) == 1)
    cell = Pl.indices[Pl.indptr[one]]
    cell_hi[cell] = np.minimum(cell_hi[cell], top[one])
    cell_lo[cell] = np.maximum(cell_lo[cell], bottom[one])
    return cell_lo, cell_hi


def _free_parts(E, e, G, g, free, base):
    """The independent part of every free cell (None: the fixed cells break a row)."""
    Ef, Gf = sp.csc_array(E)[:, free], sp.csc_array(G)[:, free]
    ef, gf = e - E @ base, g - G @ base
    er = np.flatnonzero(np.diff(sp.csr_array(Ef).indptr) > 0)
    gr = np.flatnonzero(np.diff(sp.csr_array(Gf).indptr) > 0)
    rest_e = np.setdiff1d(np.arange(E.shape[0]), er)
    rest_g = np.setdiff1d(np.arange(G.shape[0]), gr)
    if np.abs(ef[rest_e]).max(initial=0.0) > 1e-9 or gf[rest_g].min(initial=0.0) < -1e-9:
        return None
    Ef = sp.csr_array(Ef)[er]
    Gf = sp.csr_array(Gf)[gr]
    link = sp.vstack([Ef, Gf], format="csr")
    big = sp.bmat([[None, link.T], [link, None]], format="csr")
    _, lab = connected_components(big, directed=False)
    part = np.full(E.shape[1], -1)
    part[free] = lab[: len(free)]
    return part


def _piece_parts(Pl, part, n_p: int) -> np.ndarray:
    """The part each piece lies in (-2: on no free cell; -3: several parts)."""
    Pc = Pl.tocoo()
    pc = part[Pc.col]
    m = pc >= 0
    by_piece = pd.Series(pc[m]).groupby(Pc.row[m])
    k_parts = by_piece.nunique().reindex(np.arange(n_p), fill_value=0).to_numpy()
    first = by_piece.first().reindex(np.arange(n_p), fill_value=-1).to_numpy()
    return np.where(k_parts == 0, -2, np.where(k_parts == 1, first, -3))


def _part_system(E, e, G, g, base, cols):
    """The rows on ``cols`` (right sides net of the fixed cells ``base``; the other
    parts' cells appear in none of them)."""
    sub_e = np.flatnonzero(np.diff(sp.csr_array(E[:, cols]).indptr) > 0)
    sub_g = np.flatnonzero(np.diff(sp.csr_array(G[:, cols]).indptr) > 0)
    return (
        sp.csr_array(E[sub_e][:, cols]),
        (e - E @ base)[sub_e],
        sp.csr_array(G[sub_g][:, cols]),
        (g - G @ base)[sub_g],
    )


def _first_world(Pl, model_rows, free, base, cell_lo, cell_hi, seen, budget, stats) -> str:
    """One possible world recorded in ``seen = (int_hi, int_lo)``: "found", "none", "time"."""
    E, e, G, g, u = model_rows
    int_hi, int_lo = seen
    if budget.left() <= 0:
        budget.ran_out = True
        return "time"
    world = base.copy()
    if len(free):
        Es, es, Gs, gs = _part_system(E, e, G, g, base, free)
        milp = _MILP(Es, es, Gs, gs, u[free])
        milp.bound(cell_lo[free], cell_hi[free])
        st, x = milp.run(np.zeros(len(free)), budget.left(), first=True)
        stats.milps += 1
        x = _world(x, Es, es, Gs, gs)
        if st == "infeasible":
            return "none"
        if x is None:
            budget.ran_out = True
            return "time"
        world[free] = x
    elif _world(world, E, e, G, g) is None:
        return "none"
    stats.worlds += 1
    v = Pl @ world
    np.maximum(int_hi, v, out=int_hi)
    np.minimum(int_lo, v, out=int_lo)
    return "found"


def _integral(pieces, idx, Pl, model_rows, Z, int_hi, int_lo, budget, stats, rng) -> None:
    """Exact bounds over integral tables.

    The LP bound rounded inwards (floor of a maximum, ceiling of a minimum: integral
    tables are LP tables) is the exact bound as soon as a possible world attains it; the
    LP tables seen that are integral are such worlds. Every single-cell bound rounded so
    also fixes cells (a person whose LP maximum for a value is below 1 never has it);
    what is left falls apart into small independent parts, and each part's bounds left
    open are settled by HiGHS integer programs on that part alone (within the budget).
    """
    E, e, G, g, u = model_rows
    top = np.floor(pieces.lp_hi[idx] + ATTAIN)  # integral tables cannot beat the LP
    bottom = np.ceil(pieces.lp_lo[idx] - ATTAIN)
    ex_hi = np.where(int_hi >= top - 0.5, top, np.nan)
    ex_lo = np.where(int_lo <= bottom + 0.5, bottom, np.nan)
    if not (np.isnan(ex_hi).any() or np.isnan(ex_lo).any()):
        return _finish_integral(pieces, idx, ex_hi, ex_lo)
    cell_lo, cell_hi = _cell_ranges(Pl, Z, top, bottom)
    if (cell_lo > cell_hi + 0.5).any():  # no integral value between the LP bounds
        return _no_world(pieces, idx, stats)
    fixed = cell_lo >= cell_hi
    free = np.flatnonzero(~fixed)
    base = np.where(fixed, cell_lo, 0.0)
    part = _free_parts(E, e, G, g, free, base)
    if part is None:
        return _no_world(pieces, idx, stats)
    where = _piece_parts(Pl, part, len(idx))

    if not (np.isfinite(int_hi).any() or np.isfinite(int_lo).any()):
        # no possible world seen yet: is there one at all?
        found = _first_world(
            Pl, model_rows, free, base, cell_lo, cell_hi, (int_hi, int_lo), budget, stats
        )
        if found == "none":
            return _no_world(pieces, idx, stats)
        if found == "time":
            return _finish_integral(pieces, idx, ex_hi, ex_lo)
        hit = np.isnan(ex_hi) & (int_hi >= top - 0.5)
        ex_hi[hit] = top[hit]
        hit = np.isnan(ex_lo) & (int_lo <= bottom + 0.5)
        ex_lo[hit] = bottom[hit]
    # pieces on fixed cells only: every world gives them the same value
    const = where == -2
    ex_hi[const & np.isnan(ex_hi)] = top[const & np.isnan(ex_hi)]
    ex_lo[const & np.isnan(ex_lo)] = bottom[const & np.isnan(ex_lo)]
    open_ = np.isnan(ex_hi) | np.isnan(ex_lo)
    groups: dict[int, list] = {}
    for i in np.flatnonzero(open_):
        groups.setdefault(int(where[i]), []).append(i)
    for key, members in sorted(groups.items(), key=lambda kv: len(kv[1])):
        if budget.left() <= 0:
            budget.ran_out = True
            break
        members = np.asarray(members)
        cols = np.flatnonzero(part == key) if key >= 0 else free  # -3: several parts
        Es, es, Gs, gs = _part_system(E, e, G, g, base, cols)
        ok = _settle_part(
            members, Pl, cols, base, Es, es, Gs, gs, u[cols], cell_lo[cols], cell_hi[cols],
            top, bottom, ex_hi, ex_lo, int_hi, int_lo, budget, stats, rng,
        )  # fmt: skip
        if not ok:
            return _no_world(pieces, idx, stats)
    return _finish_integral(pieces, idx, ex_hi, ex_lo)


def _settle_part(
    members, Pl, cols, base, Es, es, Gs, gs, u, lo, hi, top, bottom, ex_hi, ex_lo,
    int_hi, int_lo, budget, stats, rng,
) -> bool:  # fmt: skip
    """Integer programs on one part for the open bounds of ``members``; False when the
    part has no integral table at all."""
    Pm = sp.csr_array(Pl[members][:, cols])
    offset = Pl[members] @ base  # what the fixed cells add
    milp = _MILP(Es, es, Gs, gs, u)
    milp.bound(lo, hi)

    def seen(x):
        w = _world(x, Es, es, Gs, gs)
        if w is None:
            return
        stats.worlds += 1
        v = Pm @ w + offset
        np.maximum.at(int_hi, members, v)
        np.minimum.at(int_lo, members, v)
        for ex, ok in ((ex_hi, int_hi >= top - 0.5), (ex_lo, int_lo <= bottom + 0.5)):
            hit = members[ok[members] & np.isnan(ex[members])]
            ex[hit] = (top if ex is ex_hi else bottom)[hit]

    # aggregated: worlds that reach many bounds at once (a loose gap is enough)
    for sense in ("hi", "lo"):
        ex = ex_hi if sense == "hi" else ex_lo
        for _ in range(30):
            open_ = np.flatnonzero(np.isnan(ex[members]))
            if len(open_) < 3 or budget.left() <= 0:
                break
            weight = rng.uniform(0.5, 1.5, len(open_))
            c = np.asarray(Pm[open_].T @ weight).ravel()
            st, x = milp.run(-c if sense == "hi" else c, min(budget.left(), 5.0), first=True)
            stats.milps += 1
            if st == "infeasible":
                return False
            seen(x)
            if len(open_) - int(np.isnan(ex[members]).sum()) < max(20, 0.05 * len(open_)):
                break
    # one integer program per bound left: is there a world beyond the best one seen?
    for sense in ("hi", "lo"):
        ex = ex_hi if sense == "hi" else ex_lo
        for k_m, i in enumerate(members):
            if not np.isnan(ex[i]):
                continue
            if budget.left() <= 0:
                budget.ran_out = True
                return True
            cells = Pm.indices[Pm.indptr[k_m] : Pm.indptr[k_m + 1]]
            k = int_hi[i] if sense == "hi" else int_lo[i]
            step = 1 if sense == "hi" else -1
            need = k + step - offset[k_m] if np.isfinite(k) else None
            edge = top[i] if sense == "hi" else bottom[i]
            if need is not None and abs(k + step - edge) < 0.5:
                # any world beyond k reaches the LP's bound: find one (or prove none),
                # steered towards the other bounds still open
                rest = np.flatnonzero(np.isnan(ex[members]))
                c = np.asarray(Pm[rest].T @ rng.uniform(0.5, 1.5, len(rest))).ravel()
                c, first = (-c if sense == "hi" else c), True
            else:  # the piece's own optimum
                c = np.zeros(len(cols))
                c[cells] = -1.0 if sense == "hi" else 1.0
                first = False
            row = (cells, need, None) if sense == "hi" else (cells, None, need)
            st, x = milp.run(c, budget.left(), row=row, first=first)
            stats.milps += 1
            if x is not None:
                seen(x)
            if st == "infeasible":
                if not np.isfinite(k):
                    return False
                ex[i] = k  # no world goes beyond the best one seen
            elif st == "optimal" and x is not None and np.isnan(ex[i]) and not first:
                ex[i] = float(np.round(x[cells].sum() + offset[k_m]))
            elif st == "time":
                budget.ran_out = True
    return True


def _convex_pieces(model, pieces: _Pieces, idx, A, b, facts, solver: str) -> None:
    """Pieces of components with non-linear convex facts: one conic program per bound
    (cvxpy, the objective a parameter so the problem compiles once)."""
    import cvxpy as cp

    from .errors import SolverFailed

    x = model.x
    c = cp.Parameter(model.n_cells)
    cons = [sp.csr_matrix(A) @ x == b, x >= 0]
    for f in facts:
        if f.sense == "==":
            cons.append(sp.csr_matrix(f.A) @ x == f.b)
        elif f.sense == "<=":
            cons.append(sp.csr_matrix(f.A) @ x <= f.b)
        elif f.sense == "convex":
            cons.append(f.constraint)
    prob = cp.Problem(cp.Minimize(c @ x), cons)
    for i in idx:
        row = pieces.P[[i]].toarray().ravel()
        for sense in ("lo", "hi"):
            c.value = row if sense == "lo" else -row
            prob.solve(solver=solver)
            if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
                if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
                    raise InfeasibleKnowledge(
                        "the facts contradict the data (no table satisfies them)"
                    )
                raise SolverFailed(f"{solver}: {prob.status} on a bound")
            val = float(row @ np.asarray(x.value))
            if sense == "lo":
                pieces.lo[i] = pieces.lp_lo[i] = val
            else:
                pieces.hi[i] = pieces.lp_hi[i] = val
    pieces.method[idx] = 2
    pieces.lo_gap[idx] = np.nan
    pieces.hi_gap[idx] = np.nan
    pieces.lo_viol[idx] = np.nan
    pieces.hi_viol[idx] = np.nan
    pieces.lo_exact[idx] = False
    pieces.hi_exact[idx] = False


# ---------------------------------------------------------------- public API
METHODS = np.array(["closed form", "LP", "conic"], dtype=object)


def bounds(
    model,
    by: str | None = None,
    values=None,
    exact: bool = False,
    time_limit: float = 60.0,
    solver: str = "CLARABEL",
    seed: int = 0,
) -> pd.DataFrame:
    """Lower and upper bounds of every posterior over all tables the model allows.

    Parameters
    ----------
    model : MaxEntModel
    by : None, "group" or "person"
        What the probabilities are about, as in ``Result.posterior()`` (P(s | QI value)),
        ``posterior(by="group")`` (P(s | QI value, group)) and ``person_posterior()``
        (P(s | person); releases with a person column, pooled releases, individuals
        singled out with ``model.person``). People whom nothing tells apart (one record
        class: same QI value and groups) share their class's share x[c, s] / n_c: with
        ``exact=True`` a value is *possible* for such a person when ``upper`` > 0 (some
        world gives it to one of them, hence, by symmetry, to this one) and *certain*
        when ``lower`` is 1.
    values : value or list, optional
        Only these sensitive values (default: all).
    exact : bool
        Bounds over integral tables (possible worlds: every assignment of values to people
        consistent with the releases and the facts, read as statements about the true
        table) instead of the LP relaxation. The frame then also has ``lp_lower`` and
        ``lp_upper`` (the relaxation) and ``exact``. The LP bound rounded inwards is
        exact once a verified integral table reaches it (our own check); the rest is
        settled by HiGHS integer programs (``highspy``), whose optimality and
        infeasibility proofs are HiGHS's. When no integral table satisfies the facts
        (say P(Flu | male) = 0.3 of 6 men), a warning says so and every bound is the LP's.
    time_limit : float
        Seconds the integer programs may take in all (``exact=True``); a bound whose
        integer program did not finish keeps the LP bound and ``exact`` False.
    solver : str
        cvxpy solver for components with non-linear convex facts.
    seed : int
        Seeds the random weights of the aggregated objectives (the bounds do not depend on
        it, only the route to them).

    Returns
    -------
    DataFrame
        Indexed like ``posterior().stack()`` (the QI columns, the group with
        ``by="group"``, or ``person``; then the sensitive value), with columns

        * ``lower``, ``upper``: the bounds (probabilities). A value that no table gives
          (not in the row's buckets: a Zero-invariant) is shown as 0/0, with ``method``
          "impossible"; every (row, value) pair is in the frame;
        * ``records`` (not with ``by="person"``): how many records the row is about;
        * ``method``: "closed form" (buckets no fact touches), "LP", "conic" (non-linear
          convex facts), "impossible";
        * ``certified``: the bound's dual certificate passed our check (``gap`` and
          ``dual_violation`` at most 1e-6); closed forms are exact by construction, conic
          bounds are the solver's word (False);
        * ``gap``: the larger, over the two bounds, of |attained value - dual bound|;
          ``dual_violation``: the larger sign violation of the dual points (probability);
        * with ``exact=True``: ``exact`` (both bounds proved over integral tables),
          ``lp_lower``, ``lp_upper``.

        ``.attrs["certificate"]`` sums up: largest gap and violation, LPs and integer
        programs run, bounds settled without an LP of their own, cells proved 0, seconds.

    Soft facts are left out (a penalty is not a wall). Facts on no cell must hold as
    constants.
    """
    t0 = time.perf_counter()
    tg = _targets(model, by, values)
    A, b, kind = _data_rows(model)
    hard = _hard_facts(model)
    lab = _components(model.n_cells, A, hard)
    pieces = _pieces(tg.T, lab)
    has_lin, has_cvx = _fact_components(lab, hard)
    stats = _Stats()
    budget = _Budget(time_limit)
    rng = np.random.default_rng(seed)
    closed = _closed_pieces(pieces, has_lin | has_cvx, A, b, kind, lab)
    cvx = has_cvx[pieces.comp]
    if cvx.any():
        _convex_pieces(model, pieces, np.flatnonzero(cvx), A, b, hard, solver)
    lp_pieces = np.flatnonzero(~closed & ~cvx)
    if len(lp_pieces):
        _lp_pieces(pieces, lp_pieces, lab, (A, b, kind), hard, exact, budget, stats, rng)
    return _assemble(model, tg, pieces, stats, budget, exact, time.perf_counter() - t0)


def _hard_facts(model) -> list:
    """The facts that are walls (not soft); those on no cell must hold as constants."""
    hard = [f for f in model.facts if f.sense in ("==", "<=", "convex")]
    for f in hard:
        if len(f.cells) == 0 and f.sense != "convex":
            ok = (np.abs(f.b) <= 1e-9).all() if f.sense == "==" else (f.b >= -1e-9).all()
            if not ok:
                raise InfeasibleKnowledge(f"fact {f.name!r} is false on every table")
    return hard


def _fact_components(lab, hard):
    """Per component: whether linear facts touch it, whether non-linear convex ones do."""
    ncomp = int(lab.max()) + 1 if len(lab) else 0
    has_lin = np.zeros(ncomp, dtype=bool)
    has_cvx = np.zeros(ncomp, dtype=bool)
    for f in hard:
        if len(f.cells):
            (has_cvx if f.sense == "convex" else has_lin)[lab[f.cells[0]]] = True
    return has_lin, has_cvx


def _closed_pieces(pieces: _Pieces, has_fact, A, b, kind, lab) -> np.ndarray:
    """Mask of the pieces settled in closed form (components that no fact touches)."""
    free = np.flatnonzero(~has_fact[pieces.comp])
    closed = np.zeros(len(pieces.target), dtype=bool)
    closed[free[_closed_form(pieces, free, A, b, kind, lab)]] = True
    return closed


def _lp_batches(comps, size) -> list[list[int]]:
    """Components grouped, smallest first, into batches of about ``BATCH`` cells."""
    batches, batch, cells = [], [], 0
    for j in np.argsort(size, kind="stable"):
        batch.append(int(comps[j]))
        cells += int(size[j])
        if cells >= BATCH:
            batches.append(batch)
            batch, cells = [], 0
    if batch:
        batches.append(batch)
    return batches


def _lp_pieces(pieces, lp_pieces, lab, data, hard, exact, budget, stats, rng) -> None:
    """Bounds of the pieces of components with linear facts, one LP per batch of them."""
    A, b, kind = data
    ncomp = int(lab.max()) + 1 if len(lab) else 0
    order = np.argsort(lab, kind="stable")
    starts = np.searchsorted(lab[order], np.arange(ncomp + 1))
    pc = pieces.comp[lp_pieces]
    lp_pieces = lp_pieces[np.argsort(pc, kind="stable")]
    comps, first = np.unique(pieces.comp[lp_pieces], return_index=True)
    pieces_of = dict(zip(comps.tolist(), np.split(lp_pieces, first[1:]), strict=True))
    facts_of: dict[int, list] = {}
    for f in hard:
        if len(f.cells):
            facts_of.setdefault(int(lab[f.cells[0]]), []).append(f)
    # small components share one LP (independent blocks: each bound's objective
    # lives in its own block), which saves the per-LP overhead
    size = starts[comps + 1] - starts[comps]
    for batch in _lp_batches(comps, size):
        cols = np.concatenate([order[starts[j] : starts[j + 1]] for j in batch])
        idx = np.concatenate([pieces_of[j] for j in batch])
        fs = [f for j in batch for f in facts_of.get(j, [])]
        rows = _component_rows(cols, A, b, kind, fs)
        _lp_component(pieces, idx, cols, rows, exact, budget, stats, rng)


def _assemble(model, tg, pieces, stats, budget, exact, seconds) -> pd.DataFrame:
    nt = tg.T.shape[0]
    t = pieces.target

    def total(v):
        return np.bincount(t, weights=v, minlength=nt)

    def worst(v):
        out = np.zeros(nt)
        np.maximum.at(out, t, np.nan_to_num(v, nan=np.inf))
        return out

    lo, hi = total(pieces.lo), total(pieces.hi)
    lp_lo, lp_hi = total(pieces.lp_lo), total(pieces.lp_hi)
    gap = np.maximum(total(pieces.lo_gap), total(pieces.hi_gap))
    gap = np.where(np.isnan(gap), np.inf, gap)
    viol = np.maximum(worst(pieces.lo_viol), worst(pieces.hi_viol))
    method = np.zeros(nt, dtype=np.int8)
    np.maximum.at(method, t, pieces.method)
    bad = np.zeros(nt)
    np.add.at(bad, t, (~pieces.lo_exact | ~pieces.hi_exact).astype(float))
    den = tg.den
    base = tg.base
    on = base >= 0
    bi = np.where(on, base, 0)

    def out(v, fill=0.0):
        return np.where(on, v[bi], fill)

    lower = np.clip(out(lo / den), 0.0, 1.0)
    upper = np.clip(out(hi / den), 0.0, 1.0)
    frame = pd.DataFrame({"lower": lower, "upper": upper}, index=tg.index)
    if tg.classes is None:
        frame["records"] = tg.records
    gap_p = out(gap / den)
    viol_p = out(viol / den)
    meth = np.where(on, METHODS[method[bi]], "impossible")
    frame["method"] = meth
    frame["certified"] = (gap_p <= CERTIFIED) & (viol_p <= CERTIFIED) & (meth != "conic")
    frame["gap"] = np.where(np.isinf(gap_p), np.nan, gap_p)
    frame["dual_violation"] = np.where(np.isinf(viol_p), np.nan, viol_p)
    if exact:
        # no integral table in some component: the model has no possible world at all
        frame["exact"] = np.where(on, bad[bi] == 0, True) & (not stats.no_world)
        frame["lp_lower"] = np.clip(out(lp_lo / den), 0.0, 1.0)
        frame["lp_upper"] = np.clip(out(lp_hi / den), 0.0, 1.0)
    counts = pd.Series(pieces.method).value_counts()
    frame.attrs["certificate"] = {
        "max_gap": float(np.nanmax(frame["gap"], initial=0.0)),
        "max_dual_violation": float(np.nanmax(frame["dual_violation"], initial=0.0)),
        "all_certified": bool(frame["certified"].all()),
        "closed_form_pieces": int(counts.get(0, 0)),
        "lp_pieces": int(counts.get(1, 0)),
        "conic_pieces": int(counts.get(2, 0)),
        "lps": stats.lps,
        "settled_without_own_lp": stats.pool_hits,
        "cells_proved_zero": stats.zero_cells,
        "milps": stats.milps,
        "worlds_seen": stats.worlds,
        "time_limit_reached": bool(exact and budget.ran_out),
        "no_integral_world": bool(stats.no_world),
        "seconds": seconds,
    }
    if exact and stats.no_world:
        warnings.warn(
            "no integral table satisfies the facts in some components (probability facts "
            "that no count of records meets?): their bounds are the LP relaxation's",
            stacklevel=3,
        )
    return frame


def relaxation_gap(model, values=None, time_limit: float = 60.0, frame=None) -> pd.DataFrame:
    """(person, value) pairs that the LP relaxation allows but no possible world does.

    The pooled model (and the LP bounds) treat assignments of values to people as
    fractional; an adversary's possible worlds are integral. Each row here is a value
    that the relaxation leaves possible for a person (``lp_upper`` > 0) while every
    integral assignment consistent with the releases and the facts rules it out (exact
    upper bound 0, proved). ``frame`` reuses a ``bounds(model, by="person", exact=True)``
    frame. ``.attrs["undecided"]`` counts the pairs whose integer program ran out of time
    (``time_limit`` seconds in all), so the list may miss some.

    >>> import pandas as pd
    >>> from maxent_privacy import Bucketized, MaxEntModel
    >>> rel = [Bucketized(pd.DataFrame({"pid": m, "q": "x", "g": 1,
    ...                                 "s": ["s1", "s2", "s2", "s3", "s3"]}),
    ...                   qi=["q"], sa="s", group="g", person="pid")
    ...        for m in ([3, 4, 5, 0, 1], [3, 4, 5, 1, 2], [3, 4, 5, 0, 2])]
    >>> gap = relaxation_gap(MaxEntModel(rel))
    >>> gap.index.tolist(), gap["lp_upper"].tolist()
    ([(0, 's1'), (1, 's1'), (2, 's1')], [0.5, 0.5, 0.5])
    """
    if frame is None:
        frame = bounds(model, by="person", values=values, exact=True, time_limit=time_limit)
    elif "exact" not in frame.columns:
        raise ValueError("frame must come from bounds(..., by='person', exact=True)")
    allowed = frame["lp_upper"] > CERTIFIED
    gap = frame[allowed & frame["exact"] & (frame["upper"] <= 0)]
    out = gap[["lp_lower", "lp_upper"]].copy()
    out.attrs["undecided"] = int((allowed & ~frame["exact"]).sum())
    out.attrs["pairs"] = int(allowed.sum())
    return out


def maxent_column(result, frame: pd.DataFrame, by) -> np.ndarray:
    """The maximum-entropy estimate aligned with a bounds frame."""
    if by == "person":
        post = result.person_posterior().stack()
        return post.reindex(frame.index).fillna(0.0).to_numpy(dtype=float)
    keys = list(frame.index.names)
    cells = result.cell_table()
    num = cells.groupby(keys, sort=False, observed=True)["x"].sum()
    num = num.reindex(frame.index).fillna(0.0).to_numpy(dtype=float)
    return num / frame["records"].to_numpy(dtype=float)
