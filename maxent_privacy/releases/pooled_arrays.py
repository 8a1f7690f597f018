"""Pooled bucketized releases with person ids, built with array operations at scale.

:func:`build_bucketized` gives the same classes, cells and rows as the placed construction
of :mod:`.pooled` (in the same order) from integer codes: persons by first appearance, QI
and groups as codes, value sets per group as bit masks. It returns None for input it
leaves to the constructions from tables there (mixed values, contradictions, a person with
two QI values).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .counterfeits import phantom_row_counts
from .pooled_structure import shown, z_structure
from .structure import Structure

__all__ = ["build_bucketized"]


class _General(Exception):
    """Raised inside the array construction for input it leaves to the general one."""


def _plain(series: pd.Series) -> bool:
    """A column whose values numpy/pandas factorize and sort as groupby does."""
    return isinstance(series.dtype, (np.dtype, pd.StringDtype)) and series.dtype.kind != "V"


def _uniform(uniques: np.ndarray) -> np.ndarray:
    """``uniques`` (of a factorized column), if not an object array of mixed or non-text
    values (pandas infers their dtype case by case); else :class:`_General`."""
    if uniques.dtype == object and pd.api.types.infer_dtype(uniques, skipna=False) != "string":
        raise _General
    return uniques


def _first_positions(codes: np.ndarray) -> np.ndarray:
    """Where each code of a first-appearance factorization first occurs.

    >>> _first_positions(np.array([0, 1, 0, 2, 1])).tolist()
    [0, 1, 3]
    """
    if not len(codes):
        return np.zeros(0, dtype=np.int64)
    seen = np.maximum.accumulate(codes)
    new = np.empty(len(codes), dtype=bool)
    new[0] = True
    new[1:] = seen[1:] > seen[:-1]
    return np.flatnonzero(new)


def _combine(columns: list[np.ndarray], n: int) -> np.ndarray:
    """Codes of the rows of integer ``columns`` (each >= 0), numbered by first appearance.

    The same numbering as ``DataFrame(columns).groupby(..., sort=False).ngroup()``. The
    rows are hashed to 64 bits and the hashes factorized; every row is then compared with
    the first row of its code, and on a collision the columns are folded pairwise into one
    exact integer key instead, factorized at each step.

    >>> _combine([np.array([1, 0, 1, 1]), np.array([5, 5, 5, 6])], 4).tolist()
    [0, 1, 0, 2]
    """
    h = np.full(n, 0x9E3779B97F4A7C15, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for col in columns:
            h ^= col.astype(np.uint64)
            h *= np.uint64(0xBF58476D1CE4E5B9)
            h ^= h >> np.uint64(31)
    codes = pd.factorize(h)[0]
    first = _first_positions(codes)
    if all((col[first][codes] == col).all() for col in columns):
        return codes
    key = np.zeros(n, dtype=np.int64)
    card = 1
    for col in columns:
        width = int(col.max()) + 1 if len(col) else 1
        if card * width >= 2**62:
            key, uniq = pd.factorize(key)
            card = len(uniq)
        key = key * width + col
        card *= width
    return pd.factorize(key)[0]


def _folded(columns: list[np.ndarray]) -> list[np.ndarray]:
    """Integer ``columns`` (each >= 0) as one exact key ``(c1 * w2 + c2) * w3 + ...`` when
    the product of their widths fits in 62 bits (rows with the same key are the rows
    with the same values), else as they are.

    >>> _folded([np.array([1, 0, 2]), np.array([3, 0, 3])])[0].tolist()
    [7, 0, 11]
    """
    widths = [int(c.max()) + 1 if len(c) else 1 for c in columns]
    if len(columns) < 2 or float(np.prod(widths, dtype=float)) >= 2**62:
        return columns
    key = columns[0].astype(np.int64)
    for c, w in zip(columns[1:], widths[1:], strict=True):
        key *= w
        key += c
    return [key]


def _factorize_ids(ids: list[np.ndarray]) -> list[np.ndarray]:
    """Codes of person ids (one array per release), numbered by first appearance.

    Integer ids in a range not much wider than their number are looked up in an array
    indexed by id; other ids are factorized with a hash table.

    >>> [c.tolist() for c in _factorize_ids([np.array([7, 3]), np.array([3, 9, 7])])]
    [[0, 1], [1, 2, 0]]
    """
    n = sum(len(i) for i in ids)
    if all(i.dtype.kind in "iu" for i in ids) and n:
        lo = min(int(i.min()) for i in ids)
        span = max(int(i.max()) for i in ids) - lo + 1
        if span <= 4 * n:
            code_of = np.full(span, -1, dtype=np.int64)
            out, k = [], 0
            for i in ids:
                at = i - lo
                new = at[code_of[at] < 0]  # ids unique within a release
                code_of[new] = np.arange(k, k + len(new))
                k += len(new)
                out.append(code_of[at])
            return out
    codes = pd.factorize(np.concatenate(ids))[0]
    bounds = np.cumsum([0] + [len(i) for i in ids])
    return [codes[bounds[r] : bounds[r + 1]] for r in range(len(ids))]


def _persons_bucketized(rels, qi):
    """Persons of bucketized releases in order of first appearance.

    Returns ``(person ids, person index of each release row (one array per release), QI
    codes per person (one array per QI column), the values the codes stand for (one
    Series per QI column))``, or None when a person has different QI values in different
    releases (the general path names them).
    """
    pid_all = pd.concat([pd.Series(rel.people[rel.person].to_numpy()) for rel in rels])
    pid_all = pid_all.reset_index(drop=True)
    bounds = np.cumsum([0] + [len(rel.people) for rel in rels])
    ids = pid_all.to_numpy()
    rows = _factorize_ids([ids[bounds[r] : bounds[r + 1]] for r in range(len(rels))])
    P = 1 + max(int(r.max()) for r in rows)
    # each person's first appearance: release, and position in it
    new, again = [], []  # rows where a person appears for the first time, and the others
    seen = np.zeros(P, dtype=bool)
    for rows_r in rows:
        fresh = ~seen[rows_r]
        seen[rows_r] = True
        new.append(np.flatnonzero(fresh))
        again.append(np.flatnonzero(~fresh))
    first = np.concatenate([bounds[r] + new[r] for r in range(len(rels))])
    pid = pid_all.iloc[first].reset_index(drop=True)
    qcodes, qvalues, texts = [], [], []
    for c in qi:
        columns = [rel.people[c].to_numpy() for rel in rels]
        text = all(
            a.dtype == object and pd.api.types.infer_dtype(a, skipna=False) == "string"
            for a in columns
        )
        got = _first_codes(columns, new) if text else _column_codes(columns, rows, new, P)
        if got is None:
            return None
        qvalues.append(got[0])
        qcodes.append(_lean(got[1]))
        if text:
            texts.append((columns, qvalues[-1], qcodes[-1]))
    if not _same_text(texts, [rows_r[k] for rows_r, k in zip(rows, again, strict=True)], again):
        return None
    return pid, rows, qcodes, qvalues


def _records(pid: pd.Series, qi, qcodes, qvalues):
    """A maker of the frame of persons (pid, QI...) from their QI codes, made once."""

    @cache
    def make() -> pd.DataFrame:
        out = {"pid": pid}
        for c, codes, values in zip(qi, qcodes, qvalues, strict=True):
            out[c] = values.take(codes).reset_index(drop=True)
        return pd.DataFrame(out, copy=False)[["pid"] + list(qi)]

    return make


def _first_codes(columns, new):
    """``(the values (a Series), each person's first-appearance code)`` of a QI column of
    text from each person's first row only (``new``: the rows of each release where a
    person first appears); :func:`_same_text` then checks the other rows.

    >>> col = [np.array(["a", "b"], dtype=object), np.array(["b", "c"], dtype=object)]
    >>> values, codes = _first_codes(col, [np.array([0, 1]), np.array([1])])
    >>> values.tolist(), codes.tolist()
    (['a', 'b', 'c'], [0, 1, 2])
    """
    firsts = np.concatenate([a[k] for a, k in zip(columns, new, strict=True)])
    mine, uniques = pd.factorize(firsts)
    return pd.Series(uniques), mine


def _same_text(texts, persons, at) -> bool:
    """Whether the rows ``at`` of every release (``persons``: whose they are) hold their
    person's value in the text columns ``texts`` (per column: its values in each
    release, its values and person codes from :func:`_first_codes`). Text compares equal
    exactly when it hashes alike, so the codes are those of factorizing every row,
    numbered by first appearance.

    >>> col = [np.array(["a", "b"], dtype=object), np.array(["b", "x"], dtype=object)]
    >>> values, codes = _first_codes(col, [np.array([0, 1]), np.array([], dtype=int)])
    >>> none = np.array([], dtype=int)
    >>> _same_text([(col, values, codes)], [none, np.array([1, 0])], [none, np.array([0, 1])])
    False
    """
    if not texts:
        return True
    stacked = np.stack([codes for _, _, codes in texts], axis=1)  # people x columns
    for r, (persons_r, at_r) in enumerate(zip(persons, at, strict=True)):
        sub = stacked[persons_r]  # one gather per row for all the columns
        for k, (columns, values, _) in enumerate(texts):
            if not (columns[r][at_r] == values.to_numpy()[sub[:, k]]).all():
                return False
    return True


def _column_codes(columns, rows, new, P):
    """``(the values (a Series), each person's first-appearance code)`` of one QI column
    (``columns``: its values in each release), or None when a person's value differs
    between releases; :class:`_General` for values of mixed types."""
    parts = [pd.factorize(a) for a in columns]
    for _, u in parts:
        _uniform(u)
    uniq = pd.concat([pd.Series(u) for _, u in parts], ignore_index=True)
    ucode = pd.factorize(uniq)[0]
    offsets = np.cumsum([0] + [len(u) for _, u in parts])
    local = [ucode[offsets[r] : offsets[r + 1]][k] for r, (k, _) in enumerate(parts)]
    mine = np.empty(P, dtype=np.int64)
    for r, rows_r in enumerate(rows):
        mine[rows_r[new[r]]] = local[r][new[r]]
    if any((local[r] != mine[rows_r]).any() for r, rows_r in enumerate(rows)):
        return None
    ufirst = _first_positions(ucode)
    return uniq.iloc[ufirst].reset_index(drop=True), mine


def _release_counts(rel):
    """Published counts of one release, as ``groupby([group, sa], sort=True).size()``.

    Returns ``(sorted groups, group code of each row of a real person, values (sorted),
    per counts row: group code, value code and count)``; the counts hold counterfeit
    records too (every group has a real person, so the groups are the same).
    """
    f = rel.frame
    gi, groups = _sorted_codes(f[rel.group].to_numpy())
    si, svals = pd.factorize(f[rel.sa].to_numpy(), sort=True)
    _uniform(groups), _uniform(svals)
    ns = len(svals)
    cnt = np.bincount(gi * ns + si, minlength=len(groups) * ns)
    nz = np.flatnonzero(cnt)
    if rel.counterfeits is not None:
        gi = gi[~rel.is_counterfeit]
    return groups, gi, svals, nz // ns, nz % ns, cnt[nz]


def _sorted_codes(a: np.ndarray):
    """``pd.factorize(a, sort=True)``; integers in a range not much wider than their
    number are looked up in an array indexed by value instead of hashed.

    >>> [x.tolist() for x in _sorted_codes(np.array([7, 3, 7, 5]))]
    [[2, 0, 2, 1], [3, 5, 7]]
    """
    if a.dtype.kind not in "iu" or not len(a):
        return pd.factorize(a, sort=True)
    lo, hi = int(a.min()), int(a.max())
    if hi - lo >= 4 * len(a):
        return pd.factorize(a, sort=True)
    at = (a - lo).astype(np.int64)
    present = np.zeros(hi - lo + 1, dtype=bool)
    present[at] = True
    code_of = np.cumsum(present) - 1
    uniques = (np.flatnonzero(present) + lo).astype(a.dtype)
    return code_of[at], uniques


def _counts_frame(made) -> pd.DataFrame:
    """The published counts of every release (``made``: per release ``(groups, values, g,
    s, count)`` as :func:`_release_counts` gives them) as one frame, numbered by ``row``."""
    parts = []
    for r, (groups, svals, g, s, cnt) in enumerate(made):
        c = pd.DataFrame(
            {
                "group": pd.Index(groups).take(g),
                "s": pd.Index(svals).take(s),
                "count": cnt.astype(np.int64),
            }
        )
        c["release"] = r
        parts.append(c)
    counts = pd.concat(parts, ignore_index=True)
    counts["row"] = np.arange(len(counts))
    return counts


def _text_of_classes(g_cls: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """Each class's candidate groups as ``r1:3, r2:1`` (releases it is not in left out).

    ``g_cls``: the class's group code in each release (-1: not in it); ``groups``: each
    release's sorted group labels. The texts are laid out as rows of bytes (each release's
    ``, r<k>:<group>`` padded with NUL to one width, all NUL where the class is not in the
    release), the first comma and the padding deleted and the whole decoded and split
    once, a million classes at a time; labels holding a NUL or a line break are joined one
    class at a time instead (:func:`_text_joined`).

    >>> _text_of_classes(np.array([[0, -1], [1, 0]]), [np.array([3, 5]), np.array(["a"])])
    array(['r1:3', 'r1:5, r2:a'], dtype=object)
    """
    pieces = [_label_bytes(r, g) for r, g in enumerate(groups)]
    if any(p is None for p in pieces):
        return _text_joined(g_cls, groups)
    n, R = g_cls.shape
    layout = np.dtype([(f"r{r}", p.dtype) for r, p in enumerate(pieces)] + [("end", "u1")])
    offsets = np.array([layout.fields[f"r{r}"][1] for r in range(R)])
    text = np.empty(n, dtype=object)
    step = 1 << 20
    for lo in range(0, n, step):
        g_part = g_cls[lo : lo + step]
        m = len(g_part)
        buf = np.empty(m, dtype=layout)
        for r in range(R):  # row len(groups) of a piece table is all NUL: not in release
            g = g_part[:, r]
            buf[f"r{r}"] = pieces[r][np.where(g >= 0, g, len(pieces[r]) - 1)]
        buf["end"] = ord("\n")
        raw = buf.view(np.uint8).reshape(m, layout.itemsize)
        lead = offsets[np.argmax(g_part >= 0, axis=1)]  # the first release a class is in
        raw[np.arange(m), lead] = 0  # its ", "
        raw[np.arange(m), lead + 1] = 0
        lines = raw.tobytes().translate(None, b"\0").decode("utf-8").split("\n")
        text[lo : lo + m] = lines[:-1]
    return text


def _label_bytes(r: int, groups: np.ndarray) -> np.ndarray | None:
    """``, r<k>:<group>`` for each sorted group of release ``r`` in UTF-8, as one
    fixed-width item each (padded with NUL), then an item of NUL only; None when a label
    holds a NUL or a line break.

    >>> _label_bytes(0, np.array([7, 12])).view("S7").tolist()
    [b', r1:7', b', r1:12', b'']
    """
    n = len(groups)
    if groups.dtype.kind in "iu" and n:  # numpy prints integers as str() does
        wide = max(len(str(v)) for v in (groups.min(), groups.max()))
        tail = groups.astype(f"S{wide}").view(np.uint8).reshape(n, wide)
    else:
        names = [t[len(f"r{r + 1}:") :] for t in _group_names(r, groups).tolist()]
        if any("\0" in t or "\n" in t for t in names):
            return None
        enc = np.array([t.encode("utf-8") for t in names], dtype=bytes)
        tail = enc.view(np.uint8).reshape(n, enc.dtype.itemsize)
    head = np.frombuffer(f", r{r + 1}:".encode(), dtype=np.uint8)
    rows = np.zeros((n + 1, len(head) + tail.shape[1]), dtype=np.uint8)
    rows[:n, : len(head)] = head
    rows[:n, len(head) :] = tail
    return rows.view(f"V{rows.shape[1]}").ravel()


def _text_joined(g_cls: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """:func:`_text_of_classes`, one class at a time.

    >>> _text_joined(np.array([[0, -1], [1, 0]]), [np.array([3, 5]), np.array(["a"])])
    array(['r1:3', 'r1:5, r2:a'], dtype=object)
    """
    n, R = g_cls.shape
    present = g_cls >= 0
    pattern = (present * (1 << np.arange(R, dtype=np.int64))).sum(axis=1)
    names = [_group_names(r, g) for r, g in enumerate(groups)]
    text = np.empty(n, dtype=object)
    for pat in np.unique(pattern):
        rows = np.flatnonzero(pattern == pat)
        on = [r for r in range(R) if (pat >> r) & 1]
        cols = [names[r][g_cls[rows, r]].tolist() for r in on]
        text[rows] = list(map(", ".join, zip(*cols, strict=True)))
    return text


def _group_names(r: int, groups: np.ndarray) -> np.ndarray:
    """``r<k>:<group>`` for each sorted group of release ``r`` (spelled by
    :func:`~.pooled_structure.shown`)."""
    if groups.dtype.kind in "iu":
        return np.array([f"r{r + 1}:{g}" for g in groups.tolist()], dtype=object)
    return np.array([f"r{r + 1}:{shown(g)}" for g in groups], dtype=object)


def _bucketized_releases(rels, persons_rows, P):
    """Per release: group of each person, published counts, value sets, rows by value.

    None when two sensitive values print alike (their order would depend on the data's
    order; the general construction keeps that order).
    """
    made = [_release_counts(rel) for rel in rels]
    values = pd.unique(np.concatenate([m[2] for m in made]))
    if len({str(v) for v in values}) < len(values):
        return None
    values = np.array(sorted(values, key=str), dtype=object)
    v_index = pd.Index(values)
    nv = len(values)
    most = max(len(m[0]) for m in made)
    gcode = np.full((P, len(rels)), -1, dtype=np.int32 if most < 2**31 else np.int64)
    n_all = sum(len(m[5]) for m in made)
    small = np.int32 if n_all < 2**31 else np.int64
    bits, row_at, names, bucket_keys, kept = [], [], [], [], []
    n_rows = n_groups = 0
    for r in range(len(rels)):
        groups, gi, svals, g, s, cnt = made[r]
        made[r] = None  # freed as soon as used
        gcode[persons_rows[r], r] = gi
        del gi
        sv = v_index.get_indexer(svals)[s]
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        bits.append(np.bitwise_or.reduceat(np.left_shift(1, sv).astype(np.uint64), starts))
        at = np.full((len(groups) + 1, nv), -1, dtype=small)  # last row: not in release
        at[g, sv] = n_rows + np.arange(len(g))
        row_at.append(at)
        bucket_keys.append(n_groups + g)
        names.append(groups)
        kept.append((groups, svals, g.astype(small), _lean(s), _lean(cnt)))
        n_rows += len(g)
        n_groups += len(groups)
    rows = {
        "group_values": lambda: _counts_frame(kept).rename(columns={"count": "n"}),
        "n_rows": n_rows,
        "sa_n": np.concatenate([k[4] for k in kept]).astype(float),
        "sa_bucket": np.concatenate(bucket_keys),
        "sa_release": np.repeat(_lean(np.arange(len(rels))), [len(k[2]) for k in kept]),
    }
    return values, gcode, rows, bits, row_at, names


def _lean(a: np.ndarray) -> np.ndarray:
    """Non-negative integers in the narrowest dtype that holds them.

    >>> _lean(np.array([0, 300])).dtype
    dtype('uint16')
    """
    return a.astype(np.min_scalar_type(int(a.max()) if len(a) else 0))


def _relation_matrix(g_cls, c_arr, s_arr, row_at, n_rows) -> sp.csr_array:
    """Relation rows over cells: cell (class c, value s) counts in row (r, group of c, s).

    ``row_at[r][g, s]``: the row of group g and value s of release r (-1: none; its last
    row, g = -1, is that of classes not in the release). Built by columns (the rows of a
    cell, release by release, are increasing), then turned.
    """
    n_cells, R = len(c_arr), g_cls.shape[1]
    at = np.empty((n_cells, R), dtype=row_at[0].dtype)
    for r in range(R):
        at[:, r] = row_at[r][g_cls[c_arr, r], s_arr]
    has = at >= 0
    indices = at[has]
    del at
    small = np.int32 if max(len(indices), n_rows, n_cells) < 2**31 else np.int64
    indptr = np.zeros(n_cells + 1, dtype=small)
    np.cumsum(has.sum(axis=1, dtype=small), out=indptr[1:])
    del has
    A = sp.csc_array(
        (np.ones(len(indices)), indices.astype(small, copy=False), indptr),
        shape=(n_rows, n_cells),
    )
    return sp.csr_array(A.tocsr())


def build_bucketized(rels, split: set, qi, sa) -> Structure | None:
    """:func:`~.pooled.build_pooled` for bucketized releases with person ids, with arrays.

    The same classes, cells and rows as ``_build_placed`` of :mod:`.pooled` (in the same
    order): the persons, their QI and groups as integer codes, classes as the
    first-appearance codes of their rows, value sets per group as bit masks (the MCS of a
    class is their AND).
    Returns None when something needs the general path's error message (a person with two
    QI values, a contradiction) or a column is not a plain numpy/str column.
    """
    cols = [c for rel in rels for c in (*qi, rel.sa, rel.group, rel.person)]
    if not all(_plain(rel.people[c]) for rel in rels for c in cols if c in rel.people):
        return None
    try:
        got = _persons_bucketized(rels, qi)
        if got is None:
            return None
        pid_col, rows_of, qcodes, qvalues = got
        P = len(pid_col)
        got = _bucketized_releases(rels, rows_of, P)
        del rows_of  # the arrays below are freed as soon as they are used (10M people: GBs)
    except (TypeError, _General):  # values that do not sort, or of mixed types
        return None
    if got is None:
        return None
    values, gcode, rows, bits, row_at, names = got
    del got
    nv = len(values)
    if nv > 63:
        return None
    if split:
        pid_str = pid_col.astype(str)
        split_of = np.where(pid_str.isin(list(split)), pid_str, "")
        split_code = pd.factorize(split_of)[0]
    else:
        split_of = np.full(P, "", dtype=object)
        split_code = np.zeros(P, dtype=np.int64)
    groups_of = (gcode[:, r] + 1 for r in range(len(rels)))
    codes = _combine([*_folded(qcodes), *groups_of, split_code], P)
    del split_code
    first = _first_positions(codes)
    n_cls = len(first)
    g_cls = gcode[first]
    del gcode
    mask = np.full(n_cls, (1 << nv) - 1, dtype=np.uint64)
    for r in range(len(rels)):
        has = g_cls[:, r] >= 0
        mask[has] &= bits[r][g_cls[has, r]]
    if not mask.all():
        return None
    mcs = np.zeros((n_cls, nv), dtype=bool)
    for v in range(nv):
        mcs[:, v] = (mask >> np.uint64(v)) & np.uint64(1)
    c_arr, s_arr = np.nonzero(mcs)
    del mcs, mask, bits
    A_sa = _relation_matrix(g_cls, c_arr, s_arr, row_at, rows["n_rows"])
    del row_at
    empty = np.diff(A_sa.indptr) == 0
    if empty.any():  # a value no one may hold, unless counterfeit records may
        covered = phantom_row_counts(rels, rows["sa_release"], rows["sa_bucket"]) > 0
        if (empty & ~covered).any():
            return None
    return _placed_structure(
        rels,
        (pid_col, _records(pid_col, qi, qcodes, qvalues)),
        _PlacedClasses(codes, first, g_cls, names, split_of),
        _PlacedCells(c_arr, s_arr, values),
        rows,
        A_sa,
    )


def _inferred(values: np.ndarray):
    """``values`` as the array pandas makes of them (object arrays of text become str).

    >>> _inferred(np.array(["a", "b"], dtype=object)).dtype == pd.Series(["a"]).array.dtype
    True
    """
    return pd.Series(values).array


@dataclass(frozen=True)
class _PlacedClasses:
    """The record classes of placed people: every person's class (``codes``), each
    class's first person, its group code in each release (-1: none), the groups' names and
    every person's id if singled out (else "")."""

    codes: np.ndarray
    first: np.ndarray
    g_cls: np.ndarray
    names: list
    split_of: np.ndarray


@dataclass(frozen=True)
class _PlacedCells:
    """The cells: the class and the value code of each, and the sensitive values."""

    cls: np.ndarray
    sa: np.ndarray
    values: np.ndarray


def _placed_structure(
    rels, persons, classes: _PlacedClasses, cells: _PlacedCells, rows, A_sa
) -> Structure:
    """The structure of pooled releases whose people are all placed (z cells only).

    ``persons``: their ids and the maker of their frame. The frames ``records``,
    ``classes`` and ``cells`` are made on first use, from the arrays kept here (the
    class's first person, its group code in each release and its cells' values).
    """
    # (the closures below keep these arrays, not the records)
    codes, first, g_cls = classes.codes, classes.first, classes.g_cls
    names, split_of = classes.names, classes.split_of
    c_arr, s_arr, values = cells.cls, cells.sa, cells.values
    qi, sa = list(rels[0].qi), rels[0].sa
    pid, make_records = persons
    n_cls = len(first)
    cls_n = np.bincount(codes, minlength=n_cls)
    cls_split = split_of[first]
    s_arr = s_arr.astype(np.min_scalar_type(max(len(values) - 1, 0)))

    @cache
    def make_classes() -> pd.DataFrame:
        classes = make_records()[qi].iloc[first].reset_index(drop=True)
        classes["groups"] = _text_of_classes(g_cls, names)
        classes["n"] = cls_n
        classes["person"] = pd.Series(cls_split, dtype=object).where(cls_split != "", None)
        return classes

    def make_cells() -> pd.DataFrame:
        classes = make_classes()
        # columns taken from arrays whose dtype pandas inferred once (as it would per cell)
        return pd.DataFrame(
            {
                **{c: _inferred(classes[c].to_numpy()).take(c_arr) for c in [*qi, "groups"]},
                sa: _inferred(values).take(s_arr),
                "cls": c_arr,
                "n": cls_n[c_arr],
                "person": _inferred(classes["person"].to_numpy()).take(c_arr),
                "kind": "z",
            },
            copy=False,
        )

    frames = {
        "make_classes": make_classes,
        "make_cells": make_cells,
        "cell_class": c_arr,
        "cell_n": cls_n[c_arr].astype(float),
        "class_n": cls_n.astype(float),
    }
    return z_structure(rels, pid, make_records, codes, frames, rows, A_sa)
