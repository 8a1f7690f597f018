"""Several releases of the same people pooled in one model (Wang et al., ICDM 2008).

Each release carries person ids (``person=`` column). The variables are P(S | person) on
the count scale, for the values in the person's Maximum Common Subset (MCS): the values
present in every bucket that holds them (Zero constraints are omitted variables). The data
give a One constraint per person (their probabilities add up to 1) and a Relation
constraint per release, bucket and value (the bucket's people hold that value as many
times as it is published). People in the same bucket of every release, with the same QI,
are interchangeable: they share one record class.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .errors import ReleaseError

__all__ = ["build_pooled"]


def _release_table(release, r: int) -> pd.DataFrame:
    if release.person is None:
        raise ReleaseError(
            f"release {r + 1} has no person column: pooling releases needs person ids "
            "(Bucketized(..., person='id'))"
        )
    f = release.frame
    out = pd.DataFrame({"pid": f[release.person].to_numpy()})
    for c in release.qi:
        out[c] = f[c].to_numpy()
    out["group"] = f[release.group].to_numpy()
    return out


def build_pooled(model) -> None:
    """Set the model's classes, cells and rows for a list of releases."""
    rels = model.releases
    qi = list(rels[0].qi)
    sa = rels[0].sa
    for r, rel in enumerate(rels[1:], start=2):
        if list(rel.qi) != qi:
            raise ReleaseError(f"release {r} has QI {rel.qi}, release 1 has {qi}")
        if rel.sa != sa:
            raise ReleaseError(f"release {r} has sensitive column {rel.sa!r}, release 1 {sa!r}")
    tables = [_release_table(rel, r) for r, rel in enumerate(rels)]
    # persons and their QI (the same in every release)
    allq = pd.concat([t[["pid"] + qi] for t in tables], ignore_index=True)
    allq = allq.drop_duplicates()
    dup = allq["pid"].duplicated(keep=False)
    if dup.any():
        pid = allq.loc[dup, "pid"].tolist()[0]
        rows = allq.loc[allq["pid"] == pid, qi].drop_duplicates()
        shown = " vs ".join(
            "(" + ", ".join(f"{c}={v}" for c, v in zip(qi, row, strict=True)) + ")"
            for row in rows.itertuples(index=False)
        )
        raise ReleaseError(f"person {pid!r} has different QI in different releases: {shown}")
    persons = allq.reset_index(drop=True)
    gcols = [f"g{r}" for r in range(len(rels))]
    for r, t in enumerate(tables):
        persons = persons.merge(
            t[["pid", "group"]].rename(columns={"group": gcols[r]}), on="pid", how="left"
        )
    split = set(model._split)
    persons["split"] = np.where(persons["pid"].isin(list(split)), persons["pid"].astype(str), "")
    sig = qi + gcols + ["split"]
    keyed = persons[sig].astype(object).where(persons[sig].notna(), None)
    codes, uniques = pd.factorize(pd.MultiIndex.from_frame(keyed), sort=True)
    persons["cls"] = codes
    classes = pd.DataFrame(list(uniques), columns=sig)
    classes["n"] = np.bincount(codes, minlength=len(classes))

    # the values of each bucket, per release
    sets = []
    counts = []
    for r, rel in enumerate(rels):
        f = rel.frame
        sets.append(f.groupby(rel.group)[rel.sa].agg(lambda s: set(s.tolist())).to_dict())
        c = f.groupby([rel.group, rel.sa], sort=True).size().rename("count").reset_index()
        c.columns = ["group", "s", "count"]
        c["release"] = r
        counts.append(c)
    counts = pd.concat(counts, ignore_index=True)
    counts["row"] = np.arange(len(counts))
    bucket_key = pd.factorize(pd.MultiIndex.from_frame(counts[["release", "group"]]))[0]

    cell_cls, cell_s = [], []
    for c, row in enumerate(classes[gcols].itertuples(index=False)):
        mcs = None
        for r, g in enumerate(row):
            if g is None or (isinstance(g, float) and np.isnan(g)):
                continue
            vals = sets[r][g]
            mcs = set(vals) if mcs is None else mcs & vals
        if not mcs:
            pid = persons.loc[persons["cls"] == c, "pid"].tolist()[0]
            raise ReleaseError(
                f"person {pid!r}: no sensitive value is in all of their buckets "
                "(the releases contradict each other)"
            )
        for s in sorted(mcs, key=str):
            cell_cls.append(c)
            cell_s.append(s)
    cells = classes.iloc[cell_cls][qi + gcols + ["split", "n"]].reset_index(drop=True)
    cells["cls"] = np.asarray(cell_cls, dtype=int)
    cells[sa] = cell_s
    # Relation rows: cell (c, s) sits in row (r, g_r(c), s) of every release r it is in
    entries_r, entries_c = [], []
    for r in range(len(rels)):
        sub = cells[[gcols[r], sa]].copy()
        sub["cell"] = np.arange(len(cells))
        sub = sub[sub[gcols[r]].notna()]
        cr = counts[counts["release"] == r][["group", "s", "row"]]
        sub = sub.merge(cr, left_on=[gcols[r], sa], right_on=["group", "s"], how="inner")
        entries_r.append(sub["row"].to_numpy())
        entries_c.append(sub["cell"].to_numpy())
    rows = np.concatenate(entries_r)
    cols = np.concatenate(entries_c)
    A_sa = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(len(counts), len(cells)))
    empty = np.diff(A_sa.indptr) == 0
    if empty.any():
        bad = counts.iloc[int(np.argmax(empty))]
        raise ReleaseError(
            f"release {int(bad['release']) + 1}, bucket {bad['group']!r}: value {bad['s']!r} "
            "is published but no one in the bucket can have it (the releases contradict each "
            "other)"
        )

    def shown(g):
        return int(g) if isinstance(g, float) and g.is_integer() else g

    def groups_text(row):
        return ", ".join(
            f"r{r + 1}:{shown(g)}"
            for r, g in enumerate(row)
            if not (g is None or (isinstance(g, float) and np.isnan(g)))
        )

    cells["groups"] = [groups_text(row) for row in cells[gcols].itertuples(index=False)]
    cells["person"] = cells["split"].where(cells["split"] != "", None)
    classes["groups"] = [groups_text(row) for row in classes[gcols].itertuples(index=False)]

    model.qi, model.sa, model.group = qi, sa, "groups"
    model._qi_frame = persons[["pid"] + qi]
    model.n_records = len(persons)
    model.classes = classes[qi + ["groups", "n"]].assign(
        person=classes["split"].where(classes["split"] != "", None)
    )
    model.group_values = counts.rename(columns={"count": "n"})
    model.cells = cells[qi + ["groups", sa, "cls", "n", "person"]].copy()
    model.n_cells = len(cells)
    model._cls = cells["cls"].to_numpy()
    model._gs = None
    model._A_sa = A_sa
    model._sa_bucket = bucket_key
    model._n = cells["n"].to_numpy(dtype=float)
    model._class_n = classes["n"].to_numpy(dtype=float)
    model._class_member = np.zeros(len(classes), dtype=bool)
    model._gs_n = counts["count"].to_numpy(dtype=float)
    model._gs_group = bucket_key
    model._qg = np.full(len(cells), -1)
    model._qg_n = np.zeros(0)
    model._qg_table = pd.DataFrame(columns=qi + ["groups", "n"])
    model._person_class = persons.set_index("pid")["cls"]
    model._cell_key = list(
        zip(
            *(cells[c] for c in qi),
            *(cells[g] for g in gcols),
            cells["split"],
            cells[sa],
            strict=True,
        )
    )
