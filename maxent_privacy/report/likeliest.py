"""Each row's likeliest sensitive value, read sparsely off the estimate's cells.

The risk table needs, per person (per (QI value, group) class without person ids), the
sensitive value an adversary would guess, its maximum-entropy probability and whether
another value ties with it. :func:`likeliest` reads them off the value cells of the
result (one per record class and value present in its group), so time and memory grow
with rows x values present in each row's group, never rows x every value (a release of
10,000 distinct values must not make a 10,000-column table).

The rounding rule (:data:`DIGITS`): every probability the risk table shows (``maxent``,
``lower``, ``upper``) is rounded to 4 decimals, and ``at_risk`` compares *that* rounded
``maxent`` with the threshold, so the CSV, the HTML and the terminal agree (a computed
0.4999999999999999 is 0.5: at risk at 0.5, and printed so).

>>> rounded(np.array([0.4999999999999999, 0.49994, 0.123456]))
array([0.5   , 0.4999, 0.1235])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._frames import reindex_keys

__all__ = ["DIGITS", "TIE", "Likeliest", "largest_share", "likeliest", "rounded"]

#: decimals of every probability in the risk table; ``at_risk`` is decided on them
DIGITS = 4
#: two values tie when their probabilities differ by at most this
TIE = 1e-9


def rounded(p) -> np.ndarray:
    """Probabilities rounded to :data:`DIGITS` decimals (the risk table's rule)."""
    return np.round(np.asarray(p, dtype=float), DIGITS) + 0.0  # + 0.0: no -0.0


@dataclass
class Likeliest:
    """Per row: its keys (person ids, or the QI and group columns), the likeliest value
    (None when every value of the row is non-sensitive), its probability (unrounded),
    and how many values tie with it (1: no tie)."""

    by: str  # "person" or "group"
    keys: pd.DataFrame  # one column per key (person id: "person")
    value: np.ndarray
    maxent: np.ndarray
    ties: np.ndarray

    def pairs(self) -> pd.MultiIndex:
        """(row keys..., value) of the rows that have a value: what the bounds bound."""
        on = self.has_value
        arrays = [self.keys[c].to_numpy()[on] for c in self.keys.columns]
        return pd.MultiIndex.from_arrays([*arrays, self.value[on]])

    @property
    def has_value(self) -> np.ndarray:
        return pd.notna(pd.Series(self.value, dtype=object)).to_numpy()


def _best(key: np.ndarray, value_rank: np.ndarray, share: np.ndarray, n_keys: int):
    """Per key: the position of its largest share (ties: the smallest value rank), the
    largest share and the number of shares within :data:`TIE` of it."""
    order = np.lexsort((value_rank, -share, key))
    k = key[order]
    first = np.ones(len(k), dtype=bool)
    first[1:] = k[1:] != k[:-1]
    pos = np.full(n_keys, -1, dtype=np.int64)
    pos[k[first]] = order[first]
    top = np.zeros(n_keys)
    top[k[first]] = share[order[first]]
    near = share >= top[key] - TIE
    ties = np.bincount(key[near & (share > 0)], minlength=n_keys)
    return pos, top, np.maximum(ties, 1)


def _value_rank(values: np.ndarray) -> np.ndarray:
    """Rank of each value in sorted (as text) order: the tie-break of the likeliest."""
    uniq = pd.unique(values)
    order = sorted(range(len(uniq)), key=lambda i: str(uniq[i]))
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq))
    return rank[pd.Index(uniq).get_indexer(values)]


def _sensitive(values: np.ndarray, nonsensitive) -> np.ndarray:
    if not nonsensitive:
        return np.ones(len(values), dtype=bool)
    names = {str(v) for v in nonsensitive}
    uniq = pd.unique(values)
    keep = np.array([str(u) not in names for u in uniq], dtype=bool)
    return keep[pd.Index(uniq).get_indexer(values)]


def likeliest(result, nonsensitive=()) -> Likeliest:
    """The likeliest sensitive value of each row of the risk table (see the module
    docstring); values in ``nonsensitive`` never count (a row whose values are all
    non-sensitive has none, probability 0)."""
    m = result.model
    cells = result.value_cells
    s_all = cells[m.sa].to_numpy()
    x = np.asarray(result.x, dtype=float)
    keep = _sensitive(s_all, nonsensitive)
    person = result.structure.person_class is not None
    named = [
        n
        for n in result.person_names
        if not person or n not in set(map(str, result.structure.person_class.index))
    ]
    if named:  # individuals singled out with model.person: the (small) dense table
        return _dense(result, nonsensitive)
    if person:
        cls = np.asarray(result.cell_class, dtype=np.int64)
        n_cls = len(result.class_n)
        share = x / np.asarray(result.class_n, dtype=float)[cls]
        sel = keep
        pos, top, ties = _best(cls[sel], _value_rank(s_all[sel]), share[sel], n_cls)
        s_sel = s_all[sel]
        cls_value = np.where(top > 0, s_sel[np.maximum(pos, 0)], None).astype(object)
        pc = result.structure.person_class
        c = np.asarray(pc.to_numpy(), dtype=np.int64)
        keys = pd.DataFrame({"person": pc.index.to_numpy()})
        return Likeliest("person", keys, cls_value[c], top[c], np.where(pos[c] >= 0, ties[c], 0))
    return Likeliest("group", *_by_keys(result, list(m.qi) + [m.group], keep))


def _by_keys(result, names: list, keep: np.ndarray):
    """``(keys, value, largest share, ties)`` per distinct ``names`` of the value cells
    (sorted), over the values ``keep`` marks (per cell)."""
    cells = result.value_cells
    s_all = cells[result.model.sa].to_numpy()
    x = np.asarray(result.x, dtype=float)
    real = ~result.phantom  # counterfeit records have no QI value: in no row
    if not real.all():
        cells, s_all, x, keep = cells[real], s_all[real], x[real], keep[real]
    groups = cells[names].groupby(names, sort=True, observed=True)
    key = groups.ngroup().to_numpy()
    keys = groups.size().index.to_frame(index=False)
    den = result.structure.records_by(names)
    den = reindex_keys(den, pd.MultiIndex.from_frame(keys)).to_numpy(dtype=float)
    # one share per (key, value): cells of several record classes of a key add up
    v_code = pd.Index(pd.unique(s_all)).get_indexer(s_all)
    nv = int(v_code.max()) + 1 if len(v_code) else 1
    flat, uniq = pd.factorize(key.astype(np.int64) * nv + v_code, sort=True)
    xs = np.bincount(flat, weights=x, minlength=len(uniq))
    kk, first = uniq // nv, pd.Series(np.arange(len(flat))).groupby(flat).first().to_numpy()
    sv = s_all[first]
    sel = keep[first]
    share = xs / np.where(den[kk] > 0, den[kk], 1.0)
    pos, top, ties = _best(kk[sel], _value_rank(sv[sel]), share[sel], len(keys))
    value = np.where(top > 0, sv[sel][np.maximum(pos, 0)], None).astype(object)
    return keys, value, top, np.where(pos >= 0, ties, 0)


def largest_share(result, by: str | None, nonsensitive=()) -> np.ndarray:
    """The largest posterior of a sensitive value per QI value (``by=None``) or per (QI
    value, group) (``by="group"``): ``posterior(by).max(axis=1)`` without the dense
    table; ``nonsensitive`` values left out."""
    m = result.model
    names = list(m.qi) + ([m.group] if by == "group" else [])
    keep = _sensitive(result.value_cells[m.sa].to_numpy(), nonsensitive)
    return _by_keys(result, names, keep)[2]


def _dense(result, nonsensitive) -> Likeliest:
    """:func:`likeliest` from ``person_posterior()`` (models with people singled out)."""
    post = result.person_posterior()
    if nonsensitive:
        names = {str(v) for v in nonsensitive}
        post = post[[c for c in post.columns if str(c) not in names]]
    p = np.nan_to_num(post.to_numpy(dtype=float), nan=-1.0)
    if p.shape[1]:
        best = p.argmax(axis=1)
        top = p[np.arange(len(p)), best]
        value = np.asarray(post.columns, dtype=object)[best]
        ties = ((p >= top[:, None] - TIE) & (p > 0)).sum(axis=1)
        value = np.where(top > 0, value, None).astype(object)
    else:
        top, value, ties = np.zeros(len(p)), np.full(len(p), None, dtype=object), np.zeros(len(p))
    keys = pd.DataFrame({"person": post.index.to_numpy()})
    return Likeliest("person", keys, value, np.maximum(top, 0.0), np.maximum(ties, 1))
