"""Counterfeit records (m-invariance, Xiao and Tao, SIGMOD 2007) in the model.

A bucketized release may publish counterfeit records
(``Bucketized(..., counterfeits="column")``): each adds its sensitive value to its group's
multiset but belongs to no one, and the publisher says how many values of each group are
counterfeit. In the model the c_g counterfeits of group g are one *phantom* record class:

* it sits in group g of its release only (counterfeits of different releases are
  different records: no Relation or One row links them to anything else);
* it may hold any value of g: one free cell per value, in that value's SA (Relation) row;
* its One row says its cells add up to c_g; it has no QI value, so no knowledge statement
  on QI attributes and no QI-invariant counts it (those count real people only);
* it is no one: the person-facing outputs (posteriors, person posteriors, bounds, risk
  tables, metrics, reports) leave it out. ``Structure.class_phantom`` marks it (and the
  ``phantom`` column of ``structure.classes`` and ``structure.cells``).

Every construction (:func:`~.structure.build_single`, :func:`~.pooled.build_pooled`) builds
the classes of real people first (from :attr:`Bucketized.people`, with the published
counts of every record) and ends in :func:`add_phantoms`, which appends the phantom classes.

>>> import pandas as pd
>>> from maxent_privacy import Bucketized, MaxEntModel
>>> release = Bucketized(pd.DataFrame({"name": ["Alice", "Bob", None], "g": 1,
...                                    "s": ["flu", "flu", "gastritis"],
...                                    "fake": [False, False, True]}),
...                      qi=["name"], sa="s", group="g", counterfeits="fake")
>>> s = MaxEntModel(release).structure
>>> s.class_phantom.tolist(), s.class_n.tolist(), s.n_records
([False, False, True], [1.0, 1.0, 1.0], 2)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import ReleaseError

if TYPE_CHECKING:  # the structure module calls this one: no import at run time
    from .structure import Structure

__all__ = ["add_phantoms", "counterfeit_counts", "phantom_row_counts"]


def counterfeit_counts(rel) -> pd.Series | None:
    """The release's counterfeit count per group (groups sorted), or None without any."""
    if getattr(rel, "counterfeits", None) is None:
        return None
    counts = rel.counterfeit_counts()
    return counts if counts.to_numpy().any() else None


def phantom_row_counts(rels, sa_release, sa_bucket) -> np.ndarray:
    """Per SA (Relation) row: how many counterfeit records its group holds.

    ``sa_release``: the release of each row (None: one release); ``sa_bucket``: the
    group of each row, numbered in each release's sorted group order (every construction
    numbers them so). A published value of a group with counterfeits may be held by them
    alone, so it needs no real person who could hold it.
    """
    out = np.zeros(len(sa_bucket), dtype=np.int64)
    for r, rel in enumerate(rels):
        counts = counterfeit_counts(rel)
        if counts is None:
            continue
        rows = np.flatnonzero(sa_release == r) if sa_release is not None else np.arange(len(out))
        local = np.asarray(sa_bucket[rows], dtype=np.int64)
        local = local - local.min()
        if local.max() + 1 != len(counts):  # pragma: no cover - every group has a row
            raise ReleaseError(f"release {r + 1}: the groups of the SA rows are not its groups")
        out[rows] = counts.to_numpy()[local]
    return out


def add_phantoms(s: Structure, rels, label: Callable | None = None) -> Structure:
    """``s`` with one phantom class per group with counterfeit records appended (the
    structure itself when no release has counterfeits).

    The phantom classes come after the classes of real people, their cells after theirs
    (cells stay sorted by class). Records, person ids and QI-invariants are unchanged.
    ``label(r, g)`` spells the group column of release ``r``'s group ``g`` (default: the
    group itself; pooled releases: ``"r1:3"``).
    """
    per_release = [counterfeit_counts(rel) for rel in rels]
    if all(c is None for c in per_release):
        return s
    pooled = s.kind == "pooled"
    n_rows = len(s.sa_n)
    ph = _phantom_classes(s, per_release, label)
    n_real, n_ph, cls_n = ph.n_real, len(ph.n), ph.n
    ph_cells, ph_cls, ph_n = ph.cells, ph.cls, ph.cell_n
    n_new = s.n_cells + len(ph_cells)
    grp, sa, qi = s.group, s.sa, list(s.qi)
    if pooled:
        P = sp.csr_array(
            (np.ones(len(ph_cells)), (ph_cells, np.arange(len(ph_cells)))),
            shape=(n_rows, len(ph_cells)),
        )
        sa_matrix = sp.hstack([s.sa_matrix, P], format="csr")
        cell_sa = None
    else:
        sa_matrix, cell_sa = None, np.concatenate([s.cell_sa, ph_cells])
    link = sp.csr_array(s.link_matrix)
    return type(s)(
        kind=s.kind,
        qi=qi,
        sa=sa,
        group=grp,
        records=(lambda: s.records),
        **_phantom_frames(s, ph),
        group_values=(lambda: s.group_values),
        cell_class=np.concatenate([s.cell_class, ph_cls]),
        cell_n=np.concatenate([s.cell_n, ph_n]),
        class_n=np.concatenate([s.class_n, np.asarray(cls_n, dtype=float)]),
        class_member=np.concatenate([s.class_member, np.zeros(n_ph, dtype=bool)]),
        sa_n=s.sa_n,
        sa_bucket=s.sa_bucket,
        cell_sa=cell_sa,
        sa_matrix=sa_matrix,
        sa_has_placement=s.sa_has_placement,
        cell_shared=np.concatenate([s.cell_shared, np.full(len(ph_cells), -1)]),
        shared_n=s.shared_n,
        shared_table=s.shared_table,
        link_matrix=sp.csr_array(
            (link.data, link.indices, link.indptr), shape=(link.shape[0], n_new)
        ),
        placement_of=np.concatenate([s.placement_of, np.full(len(ph_cells), -1)]),
        person_class=s.person_class,
        sa_release=s.sa_release,
        class_phantom=np.concatenate([np.zeros(n_real, dtype=bool), np.ones(n_ph, dtype=bool)]),
    )


@dataclass(frozen=True)
class _Phantoms:
    """The phantom classes of :func:`add_phantoms`: their totals (``n``) and group
    labels, numbered from ``n_real`` (the classes of real people); per phantom cell, its
    SA row (``cells``), its class and its base measure."""

    n: list
    label: list
    cells: np.ndarray
    cls: np.ndarray
    cell_n: np.ndarray
    n_real: int


def _phantom_classes(s: Structure, per_release, label) -> _Phantoms:
    """The phantom classes: (release, local group) with counterfeits, in row order."""
    pooled = s.kind == "pooled"
    n_rows = len(s.sa_n)
    sa_release = s.sa_release if pooled else None
    cls_rows, cls_n, cls_label = [], [], []
    for r, counts in enumerate(per_release):
        if counts is None:
            continue
        rows = np.flatnonzero(sa_release == r) if pooled else np.arange(n_rows)
        bucket = np.asarray(s.sa_bucket[rows], dtype=np.int64)
        local = bucket - bucket.min()
        for k in np.flatnonzero(counts.to_numpy() > 0):
            cls_rows.append(rows[local == k])
            cls_n.append(float(counts.iloc[k]))
            g = counts.index[k]
            cls_label.append(g if label is None else label(r, g))
    n_real = len(s.class_n)
    n_ph = len(cls_rows)
    ph_cells = np.concatenate(cls_rows)  # the SA row of each phantom cell
    ph_cls = n_real + np.repeat(np.arange(n_ph), [len(r) for r in cls_rows])
    ph_n = np.asarray(cls_n)[ph_cls - n_real]
    return _Phantoms(cls_n, cls_label, ph_cells, ph_cls, ph_n, n_real)


def _phantom_frames(s: Structure, ph: _Phantoms) -> dict:
    """The makers of the frames ``classes`` and ``cells`` and of the cell keys of ``s``
    with the phantom classes appended (the arguments of :class:`Structure` they are)."""
    pooled = s.kind == "pooled"
    n_real, n_ph, cls_n, cls_label = ph.n_real, len(ph.n), ph.n, ph.label
    ph_cells, ph_cls, ph_n = ph.cells, ph.cls, ph.cell_n
    grp, sa, qi = s.group, s.sa, list(s.qi)

    def classes() -> pd.DataFrame:
        real = s.classes.assign(phantom=False)
        extra = pd.DataFrame({c: [None] * n_ph for c in qi})
        extra[grp] = pd.Series(cls_label, dtype=object)
        extra["n"] = np.asarray(cls_n).astype(real["n"].dtype)
        extra["person"] = None
        extra["phantom"] = True
        return pd.concat([real, extra[real.columns]], ignore_index=True)

    def cells() -> pd.DataFrame:
        real = s.cells.assign(phantom=False)
        gv = s.group_values
        value = gv["s" if pooled else sa].to_numpy()[ph_cells]
        extra = pd.DataFrame({c: [None] * len(ph_cells) for c in qi})
        extra[grp] = pd.Series(np.asarray(cls_label, dtype=object)[ph_cls - n_real], dtype=object)
        extra[sa] = pd.Series(value, dtype=object)
        extra["cls"] = ph_cls
        if "gs" in real.columns:
            extra["gs"] = ph_cells
        extra["n"] = ph_n.astype(real["n"].dtype)
        extra["person"] = None
        if "kind" in real.columns:
            extra["kind"] = "z"
        extra["phantom"] = True
        return pd.concat([real, extra[real.columns]], ignore_index=True)

    def key_fn() -> list:
        none = (None,) * len(qi)
        g = np.asarray(cls_label, dtype=object)[ph_cls - n_real]
        value = s.group_values["s" if pooled else sa].to_numpy()[ph_cells]
        if pooled:  # (who, QI..., groups, value, kind)
            extra = [("", *none, a, b, "z") for a, b in zip(g, value, strict=True)]
        else:  # (who, member/fixed, QI..., group, value)
            extra = [("", "fixed", *none, a, b) for a, b in zip(g, value, strict=True)]
        return list(s.cell_keys()) + extra

    return {"classes": classes, "cells": cells, "key_fn": key_fn}
