"""The structure of pooled releases, built on a Dask cluster and kept there as partitions.

:func:`build_distributed` computes what :func:`~maxent_privacy.releases.pooled.build_pooled`
computes in one process (Wang et al.: record classes, value cells over each class's
Maximum Common Subset, Relation rows per release, group and value), with Dask DataFrame
operations, and leaves every table on the workers:

1. per release, a shuffle by group gives each group's published counts: its *bucket*
   (a global number, release by release), its value set as a bit mask and the number of
   its first Relation row (a bucket's rows are its values in code order);
2. the rows of all releases, each with its bucket, are shuffled by person id: a person's
   rows meet in one partition, where their QI values are checked to agree and their
   buckets, masks and first rows are laid side by side (:func:`link_persons`);
3. a shuffle by the class key (QI values and the bucket in every release) gives the
   record classes and each person's class (:func:`local_classes`);
4. the connected components of the class-bucket graph: a union-find on each partition
   of classes, merged pairwise across partitions (:mod:`.components`);
5. cells: each class's MCS is the AND of its masks; a cell (class, value) sits in Relation
   row ``first row + popcount(mask & (2**value - 1))`` of each release that has the
   class (:func:`explode_cells`), with no join.

Only small summaries come to the client: the sensitive values, partition lengths (to
number buckets, rows and classes) and the errors. Numbers: buckets, rows and classes are
numbered by partition offsets (another order than the in-memory build; the structure is
the same up to order, ``tests/distributed/test_build.py``).

>>> import pandas as pd, dask.dataframe as dd
>>> from maxent_privacy.distributed import DaskBucketized
>>> one = pd.DataFrame({"id": [1, 2, 3], "age": [30, 30, 41], "d": ["flu", "hiv", "flu"],
...                     "g": [1, 1, 1]})
>>> two = one.assign(g=[1, 2, 2], d=["flu", "flu", "hiv"])
>>> rels = [DaskBucketized(dd.from_pandas(f, npartitions=1), ["age"], "d", "g", "id")
...         for f in (one, two)]
>>> s = build_distributed(rels)
>>> s.values, s.n_releases
(['flu', 'hiv'], 2)
>>> cells = s.cells.compute().sort_values(["cls", "s"])
>>> len(cells), sorted(s.classes.compute()["n"].tolist())
(5, [1, 1, 1])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import ReleaseError
from ..releases.checks import shorten
from .components import component_labels
from .releases import DaskBucketized, compute, persist

__all__ = [
    "DistributedStructure",
    "MAX_VALUES",
    "popcount",
    "build_distributed",
    "explode_cells",
    "link_persons",
    "local_classes",
]

#: value sets are bit masks in an int64: at most this many distinct sensitive values
MAX_VALUES = 62
#: column names of the long frame (one row per release row; the person and group columns
#: renamed so that no QI column name can clash with them) and of the rows
PERSON, LONG_GROUP, GROUP, S, RELEASE = "person", "__group__", "group", "s", "release"


def popcount(a: np.ndarray) -> np.ndarray:
    """Set bits of each non-negative int64 (``np.bitwise_count`` on numpy 2).

    >>> popcount(np.array([0, 5, 2**61 - 1])).tolist()
    [0, 2, 61]
    """
    a = np.asarray(a, dtype=np.int64)
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(a).astype(np.int64)
    u = a.astype(np.uint64)
    u = u - ((u >> np.uint64(1)) & np.uint64(0x5555555555555555))
    u = (u & np.uint64(0x3333333333333333)) + ((u >> np.uint64(2)) & np.uint64(0x3333333333333333))
    u = (u + (u >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return ((u * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.int64)


def _py(value):
    """A numpy scalar as a Python one (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _cols(prefix: str, R: int) -> list[str]:
    return [f"{prefix}{r}" for r in range(R)]


@dataclass(eq=False)
class DistributedStructure:
    """Record classes, cells and Relation rows of pooled releases, as Dask DataFrames.

    ``values``: the sensitive values (sorted by ``str``; ``s`` in the frames is the code).
    ``rows``: one row per Relation row (``row``, ``release``, ``group``, ``s``, ``n``,
    ``bucket``, ``mask``, ``row_start``). ``persons``: one row per person (``person``, QI,
    per release r ``b<r>`` (bucket, -1 if absent), ``m<r>`` (its value mask), ``o<r>``
    (its first row), ``mask`` (the AND), ``cls``). ``classes``: one row per class (the
    same columns less ``person``, with ``n`` and ``comp``, the component: the smallest
    bucket in it). ``cells``: :func:`explode_cells` of ``classes``. ``long``: every
    release row (``person``, QI, ``__group__``, ``s``, ``release``, ``bucket``) partitioned
    by person, for the sub-models. ``labels``: a Dask Delayed holding the component of
    every bucket (an array indexed by bucket).
    """

    qi: list
    sa: str
    values: list
    n_releases: int
    n_buckets: int
    n_rows: int
    n_classes: int
    n_persons: int
    rows: object
    persons: object
    classes: object
    long: object
    labels: object
    client: object = None

    @property
    def cells(self):
        """One row per cell: ``cls``, ``s``, ``n``, ``comp`` and ``row<r>`` per release."""
        return self.classes.map_partitions(
            explode_cells, self.n_releases, meta=explode_cells(self.classes._meta, self.n_releases)
        )

    def relation_counts(self) -> pd.Series:
        """The right sides ``n`` of the Relation rows, by row number (computed)."""
        (rows,) = compute(self.client, self.rows[["row", "n"]])
        return rows.set_index("row")["n"].sort_index()


# ----------------------------------------------------------------- partition functions
def _bucket_rows(part: pd.DataFrame, group: str) -> pd.DataFrame:
    """Published counts of the groups in ``part`` (every row of a group is here): one row
    per (group, value) in order, with its bucket's local number ``lb``, its local row
    number ``lrow``, the bucket's mask and its first local row ``lstart``."""
    counts = part.groupby([group, S], sort=True).size().rename("n").reset_index()
    counts = counts.rename(columns={group: GROUP})
    g = counts[GROUP].to_numpy()
    new = np.ones(len(g), dtype=bool)
    if len(g) > 1:
        new[1:] = g[1:] != g[:-1]
    lb = np.cumsum(new) - 1
    bits = np.left_shift(np.int64(1), counts[S].to_numpy(dtype=np.int64))
    mask = np.zeros(int(new.sum()), dtype=np.int64)
    np.bitwise_or.at(mask, lb, bits)
    starts = np.flatnonzero(new)
    counts["n"] = counts["n"].astype(np.int64)
    counts["lb"] = lb.astype(np.int64)
    counts["lrow"] = np.arange(len(counts), dtype=np.int64)
    counts["mask"] = mask[lb]
    counts["lstart"] = starts[lb].astype(np.int64)
    return counts


def _globalize_rows(part: pd.DataFrame, r: int, bucket0: int, row0: int) -> pd.DataFrame:
    """Local bucket and row numbers made global (offsets of the partition)."""
    return pd.DataFrame(
        {
            "row": part["lrow"].to_numpy() + row0,
            RELEASE: np.full(len(part), r, dtype=np.int64),
            GROUP: part[GROUP].to_numpy(),
            S: part[S].to_numpy(dtype=np.int64),
            "n": part["n"].to_numpy(),
            "bucket": part["lb"].to_numpy() + bucket0,
            "mask": part["mask"].to_numpy(),
            "row_start": part["lstart"].to_numpy() + row0,
        },
        index=part.index,
    )


def _codes(part: pd.DataFrame, sa: str, values: list) -> pd.DataFrame:
    """The sensitive column ``sa`` replaced by its value codes ``s`` (dropped first: the
    user's column may itself be named ``s``)."""
    codes = pd.Index(values).get_indexer(part[sa].to_numpy()).astype(np.int64)
    out = part.drop(columns=[sa])
    out[S] = codes
    return out


def link_persons(part: pd.DataFrame, qi: list, R: int) -> pd.DataFrame:
    """One row per person of ``part`` (all of whose release rows are here): QI values
    (checked to agree between releases), and per release ``b<r>``, ``m<r>``, ``o<r>``
    (bucket, its value mask, its first Relation row; -1, all bits and -1 where the
    person is not in release r), and ``mask``, the AND of the masks (the MCS).

    >>> part = pd.DataFrame({"person": [7, 7], "age": [30, 30], "release": [0, 1],
    ...                      "bucket": [0, 3], "mask": [3, 1], "row_start": [0, 5]})
    >>> link_persons(part, ["age"], 2)[["person", "age", "b0", "b1", "mask"]].values.tolist()
    [[7, 30, 0, 3, 1]]
    """
    part = part.sort_values([PERSON, RELEASE], kind="stable")
    pid = part[PERSON].to_numpy()
    at, persons = pd.factorize(pid)
    persons = np.asarray(persons)
    n = len(persons)
    first = np.zeros(n, dtype=np.int64)
    if n:
        first[at[::-1]] = np.arange(len(pid))[::-1]
    out = {PERSON: persons}
    for c in qi:
        col = part[c].to_numpy()
        mine = col[first] if n else col[:0]
        same = pd.Series(col).reset_index(drop=True).eq(pd.Series(mine[at])).to_numpy()
        if not same.all():
            k = int(np.argmax(~same))
            who = pid[k]
            raise ReleaseError(
                f"person {shorten(_py(who))} has different QI in different releases: "
                f"{c}={shorten(_py(mine[at[k]]))} in release "
                f"{int(part[RELEASE].to_numpy()[first[at[k]]]) + 1} vs {c}={shorten(_py(col[k]))} "
                f"in release {int(part[RELEASE].to_numpy()[k]) + 1}"
            )
        out[c] = mine
    rel = part[RELEASE].to_numpy(dtype=np.int64)
    mask = np.full(n, -1, dtype=np.int64)
    for r in range(R):
        b = np.full(n, -1, dtype=np.int64)
        m = np.full(n, -1, dtype=np.int64)
        o = np.full(n, -1, dtype=np.int64)
        here = rel == r
        b[at[here]] = part["bucket"].to_numpy(dtype=np.int64)[here]
        m[at[here]] = part["mask"].to_numpy(dtype=np.int64)[here]
        o[at[here]] = part["row_start"].to_numpy(dtype=np.int64)[here]
        out[f"b{r}"], out[f"m{r}"], out[f"o{r}"] = b, m, o
        mask &= m
    out["mask"] = mask
    return pd.DataFrame(out)


def local_classes(part: pd.DataFrame, qi: list, R: int) -> pd.DataFrame:
    """``part`` (persons; all of a class's persons are here) with ``lcls``, the local
    class number (by first appearance), ``n`` the class size and ``first`` (the class's
    first person: one row per class).

    >>> part = pd.DataFrame({"person": [1, 2, 3], "age": [30, 30, 30], "b0": [0, 1, 0]})
    >>> local_classes(part, ["age"], 1)[["lcls", "n", "first"]].values.tolist()
    [[0, 2, True], [1, 1, True], [0, 2, False]]
    """
    key = [*qi, *_cols("b", R)]
    out = part.copy()
    if len(part):
        lcls = part.groupby(key, sort=False, dropna=False).ngroup().to_numpy(dtype=np.int64)
    else:
        lcls = np.zeros(0, dtype=np.int64)
    out["lcls"] = lcls
    out["n"] = np.bincount(lcls, minlength=int(lcls.max()) + 1 if len(lcls) else 0)[lcls]
    first = np.zeros(len(lcls), dtype=bool)
    if len(lcls):
        seen = np.full(int(lcls.max()) + 1, -1)
        seen[lcls[::-1]] = np.arange(len(lcls))[::-1]
        first[seen] = True
    out["first"] = first
    return out


def _globalize_classes(part: pd.DataFrame, offset: int) -> pd.DataFrame:
    out = part.drop(columns=["lcls"])
    out["cls"] = part["lcls"].to_numpy() + offset
    return out


def _with_components(part: pd.DataFrame, labels: np.ndarray, R: int) -> pd.DataFrame:
    """Each class's component: that of its bucket in the first release it is in."""
    b = part[_cols("b", R)].to_numpy(dtype=np.int64)
    first = b[np.arange(len(b)), np.argmax(b >= 0, axis=1)] if len(b) else np.zeros(0, int)
    out = part.copy()
    out["comp"] = labels[first] if len(first) else np.zeros(0, dtype=np.int64)
    return out


def explode_cells(classes: pd.DataFrame, R: int) -> pd.DataFrame:
    """One row per cell (class, value of its MCS): ``cls``, ``s``, ``n``, ``comp`` and,
    per release r, ``row<r>`` (the Relation row of the cell; -1 where the class is not in
    release r).

    >>> classes = pd.DataFrame({"cls": [4], "n": [2], "comp": [0], "mask": [0b101],
    ...                         "m0": [0b111], "o0": [10], "b0": [1]})
    >>> explode_cells(classes, 1).values.tolist()
    [[4, 0, 2, 0, 10], [4, 2, 2, 0, 12]]
    """
    mask = classes["mask"].to_numpy(dtype=np.int64)
    counts = popcount(mask)
    at = np.repeat(np.arange(len(mask)), counts)
    # the codes of the set bits, in order, of each class
    width = int(mask.max()).bit_length() if len(mask) else 0
    on = np.zeros((len(mask), width), dtype=bool)
    for v in range(width):
        on[:, v] = (mask >> v) & 1
    s = np.nonzero(on)[1].astype(np.int64)
    out = {
        "cls": classes["cls"].to_numpy(dtype=np.int64)[at],
        S: s,
        "n": classes["n"].to_numpy(dtype=np.int64)[at],
        "comp": classes["comp"].to_numpy(dtype=np.int64)[at],
    }
    below = np.left_shift(np.int64(1), s) - 1
    for r in range(R):
        m = classes[f"m{r}"].to_numpy(dtype=np.int64)[at]
        o = classes[f"o{r}"].to_numpy(dtype=np.int64)[at]
        out[f"row{r}"] = np.where(o >= 0, o + popcount(m & below), -1)
    return pd.DataFrame(out)


# ------------------------------------------------------------------------- the build
def _from_parts(client, ddf, fn, args_of, meta):
    """``dd.from_delayed`` of ``fn(part, *args_of(i))`` over the partitions of ``ddf``."""
    import dask
    import dask.dataframe as dd

    parts = [dask.delayed(fn)(p, *args_of(i)) for i, p in enumerate(ddf.to_delayed())]
    return dd.from_delayed(parts, meta=meta, verify_meta=False)


def _lengths(client, ddf, fn=len) -> list[int]:
    import dask

    return [int(v) for v in compute(client, *[dask.delayed(fn)(p) for p in ddf.to_delayed()])]


def _sa_values(client, rels) -> list:
    """The sensitive values of every release (a small summary), sorted as ``str``."""
    found = compute(client, *[rel.frame[rel.sa].drop_duplicates() for rel in rels])
    values = pd.unique(np.concatenate([np.asarray(v.to_numpy(), dtype=object) for v in found]))
    values = sorted(values.tolist(), key=str)
    if len({str(v) for v in values}) < len(values):
        raise ReleaseError(
            f"sensitive column {rels[0].sa!r}: two values print alike "
            f"({', '.join(map(repr, values[:5]))}...); convert the column to one type"
        )
    if len(values) > MAX_VALUES:
        raise ReleaseError(
            f"sensitive column {rels[0].sa!r} has {len(values)} distinct values; the "
            f"distributed build takes at most {MAX_VALUES}"
        )
    return values


def _reserved(R: int) -> set:
    """Column names the build's frames use beside the QI columns."""
    names = {PERSON, LONG_GROUP, GROUP, S, RELEASE, "n", "cls", "lcls", "mask", "bucket"}
    names |= {"row", "row_start", "comp", "first", "lb", "lrow", "lstart"}
    return names | {f"{p}{r}" for p in ("b", "m", "o", "row") for r in range(R)}


def _check_schema(rels) -> None:
    reserved = _reserved(len(rels))
    for c in rels[0].qi:
        if c in reserved:
            raise ReleaseError(
                f"quasi-identifier column {c!r} has a name the distributed build uses for "
                "its own columns; rename it"
            )
    for r, rel in enumerate(rels, start=1):
        if not isinstance(rel, DaskBucketized):
            raise ReleaseError(f"release {r} is a {type(rel).__name__}, not a DaskBucketized")
        if list(rel.qi) != list(rels[0].qi):
            raise ReleaseError(
                f"release {r} has quasi-identifiers {rel.qi}, release 1 has {rels[0].qi}"
            )
        if rel.sa != rels[0].sa:
            raise ReleaseError(
                f"release {r} has sensitive column {rel.sa!r}, release 1 has {rels[0].sa!r}"
            )
        for col, mine, first in (
            (rel.person, rel.frame[rel.person].dtype, rels[0].frame[rels[0].person].dtype),
            *((c, rel.frame[c].dtype, rels[0].frame[c].dtype) for c in rel.qi),
        ):
            if _kind(mine) != _kind(first):
                raise ReleaseError(
                    f"release {r}: column {col!r} holds {_kind(mine)} ({mine}), in release 1 "
                    f"{_kind(first)} ({first}); convert one of them"
                )


def _kind(dtype) -> str:
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
        return "numbers"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "dates"
    return "text"


def _sizes(part: pd.DataFrame) -> tuple[int, int]:
    """(buckets, rows) of a partition of :func:`_bucket_rows`."""
    return (int(part["lb"].max()) + 1 if len(part) else 0, len(part))


def _annotate(part: pd.DataFrame) -> pd.DataFrame:
    """The records of some whole groups (``person``, QI, ``__group__``, ``s``) with their
    bucket's local number ``lb``, value mask and first local row ``lstart``."""
    counts = _bucket_rows(part[[LONG_GROUP, S]], LONG_GROUP)
    firsts = counts[counts["lrow"] == counts["lstart"]][[GROUP, "lb", "mask", "lstart"]]
    firsts = firsts.rename(columns={GROUP: LONG_GROUP})
    return part.merge(firsts, on=LONG_GROUP, how="left")


def _rows_of(part: pd.DataFrame) -> pd.DataFrame:
    return _bucket_rows(part[[LONG_GROUP, S]], LONG_GROUP)


def _globalize_records(part: pd.DataFrame, r: int, bucket0: int, row0: int) -> pd.DataFrame:
    out = part.drop(columns=["lb", "lstart"])
    out["bucket"] = part["lb"].to_numpy(dtype=np.int64) + bucket0
    out["row_start"] = part["lstart"].to_numpy(dtype=np.int64) + row0
    out[RELEASE] = np.full(len(part), r, dtype=np.int64)
    return out


def _release(client, rel, r, values, bucket0, row0):
    """Release ``r``: its records with their bucket, mask and first Relation row (the long
    frame's rows), its Relation rows, and its numbers of buckets and rows. One shuffle
    by group; numbers by partition offsets."""
    import dask

    cols = [rel.person, *rel.qi, rel.group, rel.sa]
    f = rel.frame[cols].map_partitions(
        _codes, rel.sa, values, meta=_codes(rel.frame[cols]._meta, rel.sa, values)
    )
    f = f.rename(columns={rel.person: PERSON, rel.group: LONG_GROUP})
    local = persist(
        client,
        f.shuffle(on=LONG_GROUP, npartitions=f.npartitions).map_partitions(
            _annotate, meta=_annotate(f._meta)
        ),
    )
    counts = local.map_partitions(_rows_of, meta=_rows_of(local._meta))
    sizes = compute(client, *[dask.delayed(_sizes)(p) for p in counts.to_delayed()])
    b_off = np.cumsum([0] + [s[0] for s in sizes]) + bucket0
    r_off = np.cumsum([0] + [s[1] for s in sizes]) + row0

    def offsets(i):
        return (r, int(b_off[i]), int(r_off[i]))

    rows = _from_parts(
        client, counts, _globalize_rows, offsets, _globalize_rows(counts._meta, r, 0, 0)
    )
    records = _from_parts(
        client, local, _globalize_records, offsets, _globalize_records(local._meta, r, 0, 0)
    )
    return records, persist(client, rows), int(b_off[-1] - bucket0), int(r_off[-1] - row0)


def build_distributed(releases, client=None) -> DistributedStructure:
    """The :class:`DistributedStructure` of pooled ``releases`` (DaskBucketized, linked by
    person id), built on ``client`` (None: Dask's default scheduler). See the module."""
    import dask.dataframe as dd

    rels = list(releases) if isinstance(releases, (list, tuple)) else [releases]
    if not rels:
        raise ReleaseError("there is no release to build")
    _check_schema(rels)
    R = len(rels)
    qi, sa = list(rels[0].qi), rels[0].sa
    values = _sa_values(client, rels)
    rows, records = [], []
    n_buckets = n_rows = 0
    for r, rel in enumerate(rels):
        records_r, rows_r, nb, nr = _release(client, rel, r, values, n_buckets, n_rows)
        n_buckets += nb
        n_rows += nr
        rows.append(rows_r)
        records.append(records_r)
    long = dd.concat(records, ignore_unknown_divisions=True)
    parts = sum(rel.frame.npartitions for rel in rels)
    long = persist(client, long.shuffle(on=PERSON, npartitions=parts))
    meta_p = link_persons(long._meta, qi, R)
    persons = long.map_partitions(link_persons, qi, R, meta=meta_p)
    key = [*qi, *_cols("b", R)]
    byclass = persons.shuffle(on=key, npartitions=max(rel.frame.npartitions for rel in rels))
    byclass = persist(
        client, byclass.map_partitions(local_classes, qi, R, meta=local_classes(meta_p, qi, R))
    )
    n_cls = _lengths(
        client, byclass, lambda p: int(p["lcls"].max()) + 1 if len(p) else 0
    )  # classes per partition
    offsets = np.cumsum([0] + n_cls)
    meta = _globalize_classes(byclass._meta, 0)
    persons = _from_parts(client, byclass, _globalize_classes, lambda i: (int(offsets[i]),), meta)
    persons = persist(client, persons)
    labels = component_labels(client, persons[persons["first"]], R, n_buckets)
    classes = persons[persons["first"]].drop(columns=[PERSON, "first"])
    classes = classes.map_partitions(
        _with_components, labels, R, meta=_with_components(classes._meta, np.zeros(0, int), R)
    )
    classes = persist(client, classes)
    n_persons = sum(_lengths(client, persons))
    return DistributedStructure(
        qi=qi,
        sa=sa,
        values=values,
        n_releases=R,
        n_buckets=n_buckets,
        n_rows=n_rows,
        n_classes=int(offsets[-1]),
        n_persons=n_persons,
        rows=dd.concat(rows, ignore_unknown_divisions=True),
        persons=persons.drop(columns=["first"]),
        classes=classes,
        long=long,
        labels=labels,
        client=client,
    )
