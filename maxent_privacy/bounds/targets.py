"""What :func:`~maxent_privacy.bounds.intervals.bounds` bounds, and the model's rows.

The model access helpers (the records the posteriors count, the value cells, the data
constraints ``A x == b`` with the links of pooled releases' placement cells) and the base
targets: per (QI value[, group], value) or per (person class, value), the row of cells it
counts and its denominator, with the output rows of the frame. ``by="person"`` and
``by="class"`` share their targets (the class counts, divided by the class size ``n_c``);
they differ in how a row is read off them (:mod:`~maxent_privacy.bounds.frame`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._frames import reindex_keys
from .._validation import ArgumentError, check_choice
from ..errors import KnowledgeError

#: what a bounds frame's rows are: QI values (None), QI values and group, people or
#: (record) classes; the glossary's ``by``
BY = (None, "group", "person", "class")


# ---------------------------------------------------------------- model access
def _person_class(model):
    """Person id -> class index of the model's structure (None without person ids)."""
    return model.structure.person_class


def _z_mask(model) -> np.ndarray:
    """Cells that are values (not group placements of pooled releases)."""
    if "kind" in model.cells.columns:
        return (model.cells["kind"] == "z").to_numpy()
    return np.ones(model.n_cells, dtype=bool)


def _person_mask(model) -> np.ndarray:
    """Value cells of real people: what the targets count (counterfeit records, the
    phantom classes of :mod:`~maxent_privacy.releases.counterfeits`, are no one's)."""
    return _z_mask(model) & ~model.structure.phantom_cell


def data_rows(model):
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
    # (the cell numbers and the release sit next to the sensitive column: names of ours)
    zcol, ycol, rcol = "__mp_z", "__mp_y", "__mp_release"
    zc = cells.loc[z, ["cls", sa]].copy()
    zc[zcol] = np.flatnonzero(z)
    yc = cells.loc[~z, ["cls", sa, "kind"]].copy()
    yc[ycol] = y_cells
    yc[rcol] = yc["kind"].map(lambda k: re.match(r"y (r\d+):", k).group(1))
    yc = yc.merge(zc, on=["cls", sa], how="left")
    key = pd.factorize(pd.MultiIndex.from_frame(yc[["cls", sa, rcol]].astype(str)))[0]
    n_link = int(key.max()) + 1 if len(key) else 0
    first = pd.Series(np.arange(len(yc))).groupby(key).first().to_numpy()
    rr = np.concatenate([key, np.arange(n_link)])
    cc = np.concatenate([yc[ycol].to_numpy(), yc[zcol].to_numpy()[first]])
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
    classes: np.ndarray | None = None  # by="person"/"class": the class of each base target
    person: bool = False  # by="person": rows are individuals (else shares)


def targets(model, by, values) -> _Targets:
    """The targets of ``bounds(model, by, values)``.

    ``values`` None (every value), one value or a list of them; or a ``pd.MultiIndex`` of
    (row, value) pairs (see :func:`pair_targets`): only those pairs, in that order.
    """
    if isinstance(values, pd.MultiIndex):
        return pair_targets(model, by, values)
    cells = model.cells
    sa = model.sa
    z = _person_mask(model)
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
    if by in ("person", "class"):
        tg = _person_targets(model, zc, keep_values, all_values)
        tg.person = by == "person"
        return tg
    if by is None:
        keys = list(model.qi)
    elif by == "group":
        keys = list(model.qi) + [model.group]
    else:
        check_choice(by, "by", BY)
    sub = cells.iloc[zc]
    groups = sub.groupby(keys, sort=True, observed=True)
    key_index = pd.MultiIndex.from_frame(groups.size().index.to_frame(index=False))
    key_code = groups.ngroup().to_numpy()
    den = reindex_keys(model.structure.records_by(keys), key_index).to_numpy(dtype=float)
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


def _persons(model) -> tuple[list, np.ndarray]:
    """Every person id (the releases' people, then those singled out) and their class."""
    cells = model.cells
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
            "by='person' (and by='class') needs persons: a release with a person column, "
            "pooled releases, or individuals singled out with model.person(...)"
        )
    return persons, np.asarray(cls_of, dtype=np.int64)


def _person_targets(model, zc, keep_values, all_values) -> _Targets:
    cells = model.cells
    sa = model.sa
    persons, cls_of = _persons(model)
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


# ---------------------------------------------------------------- (row, value) pairs
def _row_keys(model, by) -> list:
    if by is None:
        return list(model.qi)
    if by == "group":
        return list(model.qi) + [model.group]
    check_choice(by, "by", BY)
    raise ArgumentError(f"by={by!r} has no row keys: its rows are people")


def pair_targets(model, by, pairs: pd.MultiIndex) -> _Targets:
    """Targets of the (row, value) pairs ``pairs`` only, in their order: sparse bounds.

    ``pairs`` has the row's keys then the sensitive value as levels: the person id for
    ``by="person"``/``"class"``; the QI values (and the group for ``by="group"``)
    otherwise. Only the cells of the pairs' rows and values make targets, so the work and
    the memory grow with the pairs, not with rows x every value (the risk table asks for
    each row's likeliest value). A row the model does not have is a KnowledgeError; a
    value its row never holds is the impossible 0/0.
    """
    cells = model.cells
    sa = model.sa
    zc = np.flatnonzero(_person_mask(model))
    if pairs.nlevels < 2:
        raise ArgumentError("pairs need the row's key levels and the sensitive value")
    sa_cells = cells[sa].to_numpy()[zc]
    v_index = pd.Index(pd.unique(sa_cells))
    want_v = v_index.get_indexer(pairs.get_level_values(-1))
    nv = max(len(v_index), 1)
    rows = pairs.droplevel(-1)
    person = by in ("person", "class")
    if person:
        persons, cls_of = _persons(model)
        pos = pd.Index(persons, dtype=object).get_indexer(rows.get_level_values(0))
        if (pos < 0).any():
            bad = rows.get_level_values(0)[pos < 0][0]
            raise KnowledgeError(f"no person {bad!r} in the model")
        row_key = cls_of[pos]
        cell_key = cells["cls"].to_numpy()[zc]
    else:
        keys = _row_keys(model, by)
        sub = cells.iloc[zc]
        groups = sub.groupby(keys, sort=True, observed=True)
        key_index = pd.MultiIndex.from_frame(groups.size().index.to_frame(index=False))
        cell_key = groups.ngroup().to_numpy()
        row_key = key_index.get_indexer(rows if rows.nlevels > 1 else rows.get_level_values(0))
        if rows.nlevels != len(keys) or (row_key < 0).any():
            raise KnowledgeError(f"a pair's row is not a row of bounds(by={by!r}) ({keys})")
        den_key = reindex_keys(model.structure.records_by(keys), key_index).to_numpy(float)
    want = np.where(want_v >= 0, row_key.astype(np.int64) * nv + want_v, -1)
    flat_cells = cell_key.astype(np.int64) * nv + v_index.get_indexer(sa_cells)
    on = np.isin(flat_cells, want[want >= 0])
    base_code, uniq = pd.factorize(flat_cells[on], sort=True)
    T = sp.csr_array(
        (np.ones(int(on.sum())), (base_code, zc[on])), shape=(len(uniq), model.n_cells)
    )
    T.sum_duplicates()
    base = pd.Index(uniq).get_indexer(want).astype(np.int64)
    names = (["person"] if person else _row_keys(model, by)) + [sa]
    index = pd.MultiIndex.from_arrays(
        [pairs.get_level_values(i) for i in range(pairs.nlevels)], names=names
    )
    if person:
        den = model.classes["n"].to_numpy(dtype=float)[uniq // nv]
        tg = _Targets(T, den, index, base, classes=uniq // nv)
        tg.person = by == "person"
        return tg
    records = den_key[row_key].astype(np.int64)
    return _Targets(T, den_key[uniq // nv], index, base, records=records)
