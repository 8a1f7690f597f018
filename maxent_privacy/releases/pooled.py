"""Several releases of the same people pooled in one model (Wang et al., ICDM 2008).

Each release says who is in it: bucketized releases and generalized ones with a
``person`` column place every person in one group; a generalized release without one
comes with a population table (the adversary's voter list: person id -> exact QI, Byun
et al. Section 4.1), and each person may sit in any group whose QI cells cover theirs (its
groups are equivalence classes: :class:`~.generalized.Generalized` splits a group whose rows
carry different cells); each person must fit a group and each row must fit a person.

Variables, on the count scale, for a class c of interchangeable people (same QI, same
candidate groups in every release):

* ``z[c, s]``: how many of them have value s, for s in their Maximum Common Subset (MCS):
  the values that every release leaves possible for them (Zero constraints are omitted
  variables);
* ``y[r, c, g, s]``: for a release r in which their group is not known, how many of them
  sit in group g with value s.

Data rows: a One constraint per class (``sum_s z = n_c``); a Relation constraint per
release, group and value (the group's people hold the value as often as it is published,
counting ``z`` of people placed in the group and ``y`` of people who may be there); a link
``sum_g y[r, c, g, s] = z[c, s]`` per release with unknown groups. The objective is
H(S | person) plus, per such release, H(group | S, person): ``-z log(z / n_c)`` and
``-y log(y / z)``. The cells are fractional: the model is the LP relaxation of the
adversary's possible worlds (integral assignments of values to people). That is sound
(every value some consistent assignment gives keeps a positive posterior) but not exact,
even when every person's group is known: it may leave a positive posterior on a value
that no consistent assignment gives (six people in three one-bucket releases, issue 13);
:func:`maxent_privacy.bounds.relaxation_gap` lists such values.

This module holds :func:`build_pooled`, the general construction and the placed one (every
person's group known); bucketized releases with person ids are built with array operations
in :mod:`.pooled_arrays`, and every construction ends in :mod:`.pooled_structure`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import ReleaseError
from .bucketized import Bucketized
from .counterfeits import add_phantoms, phantom_row_counts
from .pooled_arrays import build_bucketized
from .pooled_structure import shown, structure, z_structure
from .structure import _COUNT, Structure, check_column_names

__all__ = ["build_pooled"]

#: columns of ours next to the user's QI columns while the classes are found: the
#: population's ids, each release's candidate groups, a person singled out (names no
#: user's column has)
_PID, _SPLIT = "__mp_pid", "__mp_split"


def _gcol(r: int) -> str:
    """The column of the candidate groups of release ``r`` (from 0)."""
    return f"__mp_g{r}"


def _is_missing(g) -> bool:
    return g is None or (isinstance(g, float) and np.isnan(g))


def _placements(rels, pops) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(persons with exact QI, candidate (pid, release, group) pairs)."""
    from .generalized import Generalized

    qi = list(rels[0].qi)
    quals, cands = [], []
    for r, (rel, pop) in enumerate(zip(rels, pops, strict=True), start=0):
        f = rel.frame
        if isinstance(rel, Bucketized):
            f = rel.people  # counterfeit records are no one
            if rel.person is None:
                raise ReleaseError(
                    f"release {r + 1} has no person column: pooling releases needs person "
                    "ids (Bucketized(..., person='id'))"
                )
            ids = f[rel.person].to_numpy()
            quals.append(pd.DataFrame({"pid": ids, **{c: f[c].to_numpy() for c in qi}}))
            cands.append(pd.DataFrame({"pid": ids, "r": r, "group": f[rel.group].to_numpy()}))
        elif isinstance(rel, Generalized):
            if pop is None and rel.person is None:
                raise ReleaseError(
                    f"release {r + 1} is generalized and has no person column: give its "
                    "population (person id -> exact QI) in populations=[...]"
                )
            if pop is not None:
                missing = [c for c in qi if c not in pop.columns]
                if missing:
                    raise ReleaseError(
                        f"population of release {r + 1} lacks QI column {missing[0]!r}"
                    )
                ids = pop.index.to_numpy()
                quals.append(pd.DataFrame({"pid": ids, **{c: pop[c].to_numpy() for c in qi}}))
            if rel.person is not None:
                ids = f[rel.person].to_numpy()
                cands.append(pd.DataFrame({"pid": ids, "r": r, "group": f[rel.group].to_numpy()}))
            else:
                if len(pop) != rel.n_records:
                    raise ReleaseError(
                        f"population of release {r + 1} lists {len(pop)} people but the "
                        f"release has {rel.n_records} records"
                    )
                p = pop[qi].copy()
                p[_PID] = pop.index.to_numpy()
                # the population lists the release's people: each fits a row, each row
                # fits one of them
                comp = rel.compatible(p, _PID, every_row=True, where=f"release {r + 1}: ")
                cands.append(
                    pd.DataFrame(
                        {
                            "pid": comp[_PID].to_numpy(),
                            "r": r,
                            "group": comp[rel.group].to_numpy(),
                        }
                    )
                )
        else:
            raise ReleaseError(
                f"release {r + 1} is a {type(rel).__name__}, not a Bucketized or Generalized "
                "release"
            )
    if not quals:
        raise ReleaseError(
            "no release gives exact QI values: the generalized releases need their "
            "population (person id -> exact QI) in populations=[...]"
        )
    allq = pd.concat(quals, ignore_index=True).drop_duplicates()
    dup = allq["pid"].duplicated(keep=False)
    if dup.any():
        pid = allq.loc[dup, "pid"].tolist()[0]
        rows = allq.loc[allq["pid"] == pid, qi].drop_duplicates()
        shown = " vs ".join(
            "(" + ", ".join(f"{c}={v}" for c, v in zip(qi, row, strict=True)) + ")"
            for row in rows.itertuples(index=False)
        )
        raise ReleaseError(f"person {pid!r} has different QI in different releases: {shown}")
    for r, rel in enumerate(rels):
        if isinstance(rel, Generalized) and rel.person is not None:
            # each person's cells must cover their exact QI (population, other releases)
            rel.check_covered(allq, "pid", where=f"release {r + 1}: ")
    cand = pd.concat(cands, ignore_index=True)
    unknown = set(cand["pid"]) - set(allq["pid"])
    if unknown:
        raise ReleaseError(
            f"person {sorted(unknown, key=str)[0]!r} has no exact QI in any release or population"
        )
    return allq.reset_index(drop=True), cand


def build_pooled(releases, populations, split=()) -> Structure:
    """The classes, cells and rows of releases pooled by person id.

    ``populations`` (one per release, or None) place the people of a generalized release
    without a person column; ``split`` lists person ids singled out as classes of their
    own (``model.person``).

    Bucketized releases with person ids are built with array operations on integer codes
    (:func:`~.pooled_arrays.build_bucketized`, timed against the records by ``python -m
    benchmarks scale``; the frames ``records``, ``classes``, ``cells`` and
    ``group_values`` are made when first read);
    input it leaves aside (object columns of numbers or mixed values, more than 63
    sensitive values, a person whose QI differ between releases, contradicting releases)
    and generalized releases take the construction from tables, which gives the same
    classes, cells and rows, in the same order, and names the culprit of an error.
    """
    rels = list(releases)
    check_column_names(rels, pooled=True)
    split = {str(p) for p in split}
    qi = list(rels[0].qi)
    sa = rels[0].sa
    for r, rel in enumerate(rels[1:], start=2):
        if list(rel.qi) != qi:
            raise ReleaseError(f"release {r} has QI {rel.qi}, release 1 has {qi}")
        if rel.sa != sa:
            raise ReleaseError(f"release {r} has sensitive column {rel.sa!r}, release 1 {sa!r}")
    if all(isinstance(rel, Bucketized) and rel.person is not None for rel in rels):
        built = build_bucketized(rels, split, qi, sa)
        if built is not None:
            return add_phantoms(built, rels, _group_label)
    persons, cand = _placements(rels, list(populations))
    if not cand.duplicated(["pid", "r"]).any():
        # every person sits in one known group of each release they are in: no placement
        # cells, and the whole construction vectorizes
        return add_phantoms(_build_placed(rels, split, persons, cand, qi, sa), rels, _group_label)
    return add_phantoms(_build_general(rels, split, persons, cand, qi, sa), rels, _group_label)


def _group_label(r: int, g) -> str:
    """Group ``g`` of release ``r`` (from 0) as the ``groups`` column spells it."""
    return f"r{r + 1}:{shown(g)}"


def _general_classes(persons, cand, qi, R: int, split: set):
    """Classes of people with the same QI and the same candidate groups in every release
    (a sorted tuple per release; None: not in it)."""
    cand = cand.sort_values(["pid", "r", "group"], kind="stable")
    grouped = cand.groupby(["pid", "r"], sort=False)["group"].agg(tuple)
    gcols = [_gcol(r) for r in range(R)]
    persons = persons.set_index("pid")
    for r in range(R):
        sub = grouped.xs(r, level="r") if r in grouped.index.get_level_values("r") else None
        persons[gcols[r]] = sub.reindex(persons.index) if sub is not None else None
    persons = persons.reset_index()
    pid = persons["pid"].astype(str)
    persons[_SPLIT] = np.where(pid.isin(list(split)), pid, "")
    sig = qi + gcols + [_SPLIT]
    keyed = persons[sig].astype(object).where(persons[sig].notna(), None)
    codes, uniques = pd.factorize(pd.MultiIndex.from_frame(keyed), sort=False)
    persons["cls"] = codes
    classes = pd.DataFrame(list(uniques), columns=sig)
    classes["n"] = np.bincount(codes, minlength=len(classes))
    return persons, classes, gcols


def _published(rels):
    """Per release: each group's value set; the published counts with their row numbers."""
    sets, counts = [], []
    for r, rel in enumerate(rels):
        f = rel.frame
        sets.append(f.groupby(rel.group)[rel.sa].agg(lambda s: set(s.tolist())).to_dict())
        c = f.groupby([rel.group, rel.sa], sort=True).size().rename(_COUNT).reset_index()
        c.columns = ["group", "s", "count"]  # (a user's column may be named "count")
        c["release"] = r
        counts.append(c)
    counts = pd.concat(counts, ignore_index=True)
    counts["row"] = np.arange(len(counts))
    rows = zip(counts["release"], counts["group"], counts["s"], strict=True)
    row_of = {(r, g, s): i for i, (r, g, s) in enumerate(rows)}
    return sets, counts, row_of


class _CellList:
    """Cells of the general construction as they are made: z (value) cells per class,
    y (placement) cells per class and release with unknown group, and their rows."""

    def __init__(self, sets, row_of):
        self.sets, self.row_of = sets, row_of
        self.kind, self.c_of, self.s_of, self.g_of, self.r_of, self.ref = [], [], [], [], [], []
        self.rel_r, self.rel_c = [], []  # Relation incidence (row, cell)
        self.link_r, self.link_c, self.link_v = [], [], []
        self.n_link = 0

    def _cell(self, kind, c, s, g, r, ref) -> int:
        j = len(self.kind)
        for lst, v in zip(
            (self.kind, self.c_of, self.s_of, self.g_of, self.r_of, self.ref),
            (kind, c, s, g, r, ref),
            strict=True,
        ):
            lst.append(v)
        return j

    def add_class(self, c: int, row, pid_of) -> None:
        """The cells of class ``c`` (``row``: its candidate groups per release)."""
        mcs = None  # the Maximum Common Subset of values
        for r, gs in enumerate(row):
            if not _is_missing(gs):
                vals = set().union(*(self.sets[r][g] for g in gs))
                mcs = vals if mcs is None else mcs & vals
        if not mcs:
            raise ReleaseError(
                f"person {pid_of(c)!r}: no sensitive value is in all of their buckets "
                "(the releases contradict each other)"
            )
        mcs = sorted(mcs, key=str)
        z = {s: self._cell("z", c, s, None, -1, -1) for s in mcs}
        for r, gs in enumerate(row):
            if _is_missing(gs):
                continue
            if len(gs) == 1:
                for s in mcs:
                    if s in self.sets[r][gs[0]]:
                        self.rel_r.append(self.row_of[(r, gs[0], s)])
                        self.rel_c.append(z[s])
            else:
                self._placements(c, r, gs, mcs, z)

    def _placements(self, c, r, gs, mcs, z) -> None:
        """y cells of class ``c`` in release ``r``, tied to its z cells by link rows."""
        for s in mcs:
            self.link_r.append(self.n_link)
            self.link_c.append(z[s])
            self.link_v.append(-1.0)
            for g in gs:
                if s in self.sets[r][g]:
                    j = self._cell("y", c, s, g, r, z[s])
                    self.rel_r.append(self.row_of[(r, g, s)])
                    self.rel_c.append(j)
                    self.link_r.append(self.n_link)
                    self.link_c.append(j)
                    self.link_v.append(1.0)
            self.n_link += 1

    def matrices(self, counts, covered) -> tuple[sp.csr_array, sp.csr_array, np.ndarray]:
        """Relation rows, link rows, and which Relation rows hold placements (``covered``:
        rows that counterfeit records may fill, see :func:`_check_published`)."""
        n = len(self.kind)
        A_sa = sp.csr_array(
            (np.ones(len(self.rel_r)), (self.rel_r, self.rel_c)), shape=(len(counts), n)
        )
        A_link = sp.csr_array((self.link_v, (self.link_r, self.link_c)), shape=(self.n_link, n))
        _check_published(A_sa, counts, covered)
        y_cells = np.flatnonzero(np.asarray(self.kind) == "y")
        sa_has_y = np.zeros(len(counts), dtype=bool)
        if len(y_cells):
            sa_has_y[np.unique(sp.csc_array(A_sa)[:, y_cells].tocoo().row)] = True
        return A_sa, A_link, sa_has_y


def _check_published(A_sa, counts, covered) -> None:
    """Every published (group, value) must be possible for someone in the group, or for
    its counterfeit records (``covered``: rows of groups that have some)."""
    empty = (np.diff(A_sa.indptr) == 0) & ~covered
    if empty.any():
        bad = counts.iloc[int(np.argmax(empty))]
        raise ReleaseError(
            f"release {int(bad['release']) + 1}, group {bad['group']!r}: value {bad['s']!r} "
            "is published but no one in the group can have it (the releases contradict each "
            "other)"
        )


def _groups_text(row) -> str:
    """A class's candidate groups, as ``r1:3, r2:1|4``."""
    parts = []
    for r, gs in enumerate(row):
        if not _is_missing(gs):
            parts.append(f"r{r + 1}:" + "|".join(shown(g) for g in gs))
    return ", ".join(parts)


def _build_general(rels, split, persons, cand, qi, sa) -> Structure:
    """:func:`build_pooled` when some person's group in some release is not known."""
    persons, classes, gcols = _general_classes(persons, cand, qi, len(rels), split)
    sets, counts, row_of = _published(rels)
    bucket_key = pd.factorize(pd.MultiIndex.from_frame(counts[["release", "group"]]))[0]
    made = _CellList(sets, row_of)

    def pid_of(c):
        return persons.loc[persons["cls"] == c, "pid"].tolist()[0]

    for c, row in enumerate(classes[gcols].itertuples(index=False)):
        made.add_class(c, row, pid_of)
    covered = phantom_row_counts(rels, counts["release"].to_numpy(), bucket_key) > 0
    A_sa, A_link, sa_has_y = made.matrices(counts, covered)
    classes["groups"] = [_groups_text(row) for row in classes[gcols].itertuples(index=False)]
    c_arr = np.asarray(made.c_of, dtype=int)
    cells = pd.DataFrame({c: classes[c].to_numpy()[c_arr] for c in qi})
    cells["groups"] = classes["groups"].to_numpy()[c_arr]
    cells[sa] = made.s_of
    cells["cls"] = c_arr
    cells["n"] = classes["n"].to_numpy()[c_arr]
    split_of = classes[_SPLIT].to_numpy()[c_arr]
    cells["person"] = pd.Series(split_of, dtype=object).where(split_of != "", None)
    cells["kind"] = [
        k if k == "z" else f"y r{r + 1}:{shown(g)}"
        for k, r, g in zip(made.kind, made.r_of, made.g_of, strict=True)
    ]
    classes["person"] = classes[_SPLIT].where(classes[_SPLIT] != "", None)
    return structure(
        rels,
        persons=persons[["pid"] + qi],
        person_class=persons.set_index("pid")["cls"],
        frames=_made(
            classes[qi + ["groups", "n", "person"]],
            cells[qi + ["groups", sa, "cls", "n", "person", "kind"]].copy(),
        ),
        rows=_rows_of(counts, bucket_key),
        A_sa=A_sa,
        A_link=A_link,
        sa_has_y=sa_has_y,
        ref=np.asarray(made.ref, dtype=int),
    )


def _made(classes: pd.DataFrame, cells: pd.DataFrame) -> dict:
    """Frames already made, with the arrays :func:`~.pooled_structure.structure` takes
    from them."""
    classes = classes.reset_index(drop=True)
    return {
        "make_classes": lambda: classes,
        "make_cells": lambda: cells,
        "cell_class": cells["cls"].to_numpy(),
        "cell_n": cells["n"].to_numpy(dtype=float),
        "class_n": classes["n"].to_numpy(dtype=float),
    }


def _rows_of(counts: pd.DataFrame, bucket_key) -> dict:
    """Published counts already in a frame, with the arrays
    :func:`~.pooled_structure.structure` takes."""
    return {
        "group_values": counts.rename(columns={"count": "n"}),
        "n_rows": len(counts),
        "sa_n": counts["count"].to_numpy(dtype=float),
        "sa_bucket": np.asarray(bucket_key),
        "sa_release": counts["release"].to_numpy(),
    }


def _build_placed(rels, split, persons: pd.DataFrame, cand: pd.DataFrame, qi, sa) -> Structure:
    """:func:`build_pooled` when each person's group in each release is known.

    The same classes, cells (z only) and rows as the general construction, with array
    operations: candidate value sets per (release, group) as boolean matrices, the MCS of
    each class as their AND.
    """
    R = len(rels)
    P = len(persons)
    pid_index = pd.Index(persons["pid"])
    # sensitive values in the order of str, as the general construction sorts them
    values = pd.unique(np.concatenate([rel.frame[rel.sa].to_numpy() for rel in rels]))
    values = np.array(sorted(values, key=str), dtype=object)
    v_index = pd.Index(values)
    nv = len(values)
    gcode = np.full((P, R), -1, dtype=np.int64)
    present, row_at, counts, group_names, bucket_keys = [], [], [], [], []
    n_rows = n_groups_before = 0
    for r, rel in enumerate(rels):
        f = rel.frame
        sub = cand[cand["r"].to_numpy() == r]
        groups = pd.Index(pd.unique(f[rel.group])).sort_values()
        gcode[pid_index.get_indexer(sub["pid"]), r] = groups.get_indexer(sub["group"])
        c = f.groupby([rel.group, rel.sa], sort=True).size().rename(_COUNT).reset_index()
        c.columns = ["group", "s", "count"]  # (a user's column may be named "count")
        c["release"] = r
        gi = groups.get_indexer(c["group"])
        si = v_index.get_indexer(c["s"])
        pres = np.zeros((len(groups), nv), dtype=bool)
        pres[gi, si] = True
        at = np.full((len(groups), nv), -1, dtype=np.int64)
        at[gi, si] = n_rows + np.arange(len(c))
        n_rows += len(c)
        bucket_keys.append(n_groups_before + gi)
        n_groups_before += len(groups)
        present.append(pres)
        row_at.append(at)
        counts.append(c)
        group_names.append(np.array([f"r{r + 1}:{shown(g)}" for g in groups], dtype=object))
    counts = pd.concat(counts, ignore_index=True)
    counts["row"] = np.arange(len(counts))
    # (release, group) pairs numbered in order: each release's sorted groups after the last
    bucket_key = np.concatenate(bucket_keys)

    split = np.where(persons["pid"].astype(str).isin(list(split)), persons["pid"].astype(str), "")
    keys = persons[qi].copy()
    for r in range(R):
        keys[_gcol(r)] = gcode[:, r]
    keys[_SPLIT] = split
    codes = keys.groupby(list(keys.columns), sort=False, dropna=False).ngroup().to_numpy()
    n_cls = int(codes.max()) + 1 if P else 0
    first = np.full(n_cls, P, dtype=np.int64)
    np.minimum.at(first, codes, np.arange(P))
    # groupby's ngroup numbers groups by first appearance when sort=False
    g_cls = gcode[first]
    mcs = np.ones((n_cls, nv), dtype=bool)
    for r in range(R):
        has = g_cls[:, r] >= 0
        mcs[has] &= present[r][g_cls[has, r]]
    empty = ~mcs.any(axis=1)
    if empty.any():
        pid = persons["pid"].tolist()[first[int(np.argmax(empty))]]
        raise ReleaseError(
            f"person {pid!r}: no sensitive value is in all of their buckets "
            "(the releases contradict each other)"
        )
    c_arr, s_arr = np.nonzero(mcs)
    n_cells = len(c_arr)
    rel_r, rel_c = [], []
    for r in range(R):
        g = g_cls[c_arr, r]
        on = g >= 0
        rel_r.append(row_at[r][g[on], s_arr[on]])
        rel_c.append(np.flatnonzero(on))
    rel_r, rel_c = np.concatenate(rel_r), np.concatenate(rel_c)
    A_sa = sp.csr_array((np.ones(len(rel_r)), (rel_r, rel_c)), shape=(len(counts), n_cells))
    covered = phantom_row_counts(rels, counts["release"].to_numpy(), bucket_key) > 0
    _check_published(A_sa, counts, covered)
    text = np.full(n_cls, "", dtype=object)
    for r in range(R):
        part = np.where(g_cls[:, r] >= 0, group_names[r][np.maximum(g_cls[:, r], 0)], "")
        sep = np.where((text != "") & (part != ""), ", ", "")
        text = text + sep + part
    cls_n = np.bincount(codes, minlength=n_cls)
    cls_split = split[first]
    classes = persons[qi].iloc[first].reset_index(drop=True)
    classes["groups"] = text
    classes["n"] = cls_n
    person_col = pd.Series(cls_split, dtype=object).where(cls_split != "", None)
    cells = pd.DataFrame({c: classes[c].to_numpy()[c_arr] for c in qi})
    cells["groups"] = text[c_arr]
    cells[sa] = values[s_arr]
    cells["cls"] = c_arr
    cells["n"] = cls_n[c_arr]
    cells["person"] = person_col.to_numpy()[c_arr]
    cells["kind"] = "z"

    classes["person"] = person_col
    frames, rows = _made(classes, cells), _rows_of(counts, bucket_key)
    return z_structure(rels, persons["pid"], persons[["pid"] + qi], codes, frames, rows, A_sa)
