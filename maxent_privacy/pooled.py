"""Several releases of the same people pooled in one model (Wang et al., ICDM 2008).

Each release says who is in it: bucketized releases and generalized ones with a
``person`` column place every person in one group; a generalized release without one
comes with a population table (the adversary's voter list: person id -> exact QI, Byun
et al. Section 4.1), and each person may sit in any group whose QI cells cover theirs.

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
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .data import Bucketized
from .errors import ReleaseError

__all__ = ["build_pooled"]


def _is_missing(g) -> bool:
    return g is None or (isinstance(g, float) and np.isnan(g))


def _placements(model) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(persons with exact QI, candidate (pid, release, group) pairs)."""
    from .generalized import Generalized

    rels, pops = model.releases, model.populations
    qi = list(rels[0].qi)
    quals, cands = [], []
    for r, (rel, pop) in enumerate(zip(rels, pops, strict=True), start=0):
        f = rel.frame
        if isinstance(rel, Bucketized):
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
                p["__pid"] = pop.index.to_numpy()
                comp = rel.compatible(p, "__pid")
                lost = set(p["__pid"]) - set(comp["__pid"])
                if lost:
                    raise ReleaseError(
                        f"person {sorted(lost, key=str)[0]!r} of release {r + 1}'s population "
                        "fits no group of the release"
                    )
                cands.append(
                    pd.DataFrame(
                        {
                            "pid": comp["__pid"].to_numpy(),
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
    cand = pd.concat(cands, ignore_index=True)
    unknown = set(cand["pid"]) - set(allq["pid"])
    if unknown:
        raise ReleaseError(
            f"person {sorted(unknown, key=str)[0]!r} has no exact QI in any release or population"
        )
    return allq.reset_index(drop=True), cand


def build_pooled(model) -> None:
    """Set the model's classes, cells and rows for releases pooled by person id."""
    rels = model.releases
    qi = list(rels[0].qi)
    sa = rels[0].sa
    for r, rel in enumerate(rels[1:], start=2):
        if list(rel.qi) != qi:
            raise ReleaseError(f"release {r} has QI {rel.qi}, release 1 has {qi}")
        if rel.sa != sa:
            raise ReleaseError(f"release {r} has sensitive column {rel.sa!r}, release 1 {sa!r}")
    persons, cand = _placements(model)
    R = len(rels)
    if not cand.duplicated(["pid", "r"]).any():
        # every person sits in one known group of each release they are in: no placement
        # cells, and the whole construction vectorizes
        return _build_placed(model, persons, cand, qi, sa)
    # candidate groups per person and release, as a sorted tuple (None: not in it)
    cand = cand.sort_values(["pid", "r", "group"], kind="stable")
    grouped = cand.groupby(["pid", "r"], sort=False)["group"].agg(tuple)
    gcols = [f"g{r}" for r in range(R)]
    persons = persons.set_index("pid")
    for r in range(R):
        sub = grouped.xs(r, level="r") if r in grouped.index.get_level_values("r") else None
        persons[gcols[r]] = sub.reindex(persons.index) if sub is not None else None
    persons = persons.reset_index()
    persons["split"] = np.where(
        persons["pid"].isin(list(model._split)), persons["pid"].astype(str), ""
    )
    sig = qi + gcols + ["split"]
    keyed = persons[sig].astype(object).where(persons[sig].notna(), None)
    codes, uniques = pd.factorize(pd.MultiIndex.from_frame(keyed), sort=False)
    persons["cls"] = codes
    classes = pd.DataFrame(list(uniques), columns=sig)
    classes["n"] = np.bincount(codes, minlength=len(classes))

    sets, counts = [], []
    for r, rel in enumerate(rels):
        f = rel.frame
        sets.append(f.groupby(rel.group)[rel.sa].agg(lambda s: set(s.tolist())).to_dict())
        c = f.groupby([rel.group, rel.sa], sort=True).size().rename("count").reset_index()
        c.columns = ["group", "s", "count"]
        c["release"] = r
        counts.append(c)
    counts = pd.concat(counts, ignore_index=True)
    counts["row"] = np.arange(len(counts))
    row_of = {
        (r, g, s): i
        for i, (r, g, s) in enumerate(
            zip(counts["release"], counts["group"], counts["s"], strict=True)
        )
    }
    bucket_key = pd.factorize(pd.MultiIndex.from_frame(counts[["release", "group"]]))[0]

    # cells: z first (per class), then y (per class, release with unknown group)
    kind, c_of, s_of, g_of, r_of, ref = [], [], [], [], [], []
    rel_r, rel_c = [], []  # Relation incidence (row, cell)
    link_r, link_c, link_v = [], [], []
    n_link = 0
    for c, row in enumerate(classes[gcols].itertuples(index=False)):
        mcs = None
        for r, gs in enumerate(row):
            if _is_missing(gs):
                continue
            vals = set().union(*(sets[r][g] for g in gs))
            mcs = vals if mcs is None else mcs & vals
        if not mcs:
            pid = persons.loc[persons["cls"] == c, "pid"].tolist()[0]
            raise ReleaseError(
                f"person {pid!r}: no sensitive value is in all of their buckets "
                "(the releases contradict each other)"
            )
        mcs = sorted(mcs, key=str)
        z_index = {}
        for s in mcs:
            z_index[s] = len(kind)
            kind.append("z")
            c_of.append(c)
            s_of.append(s)
            g_of.append(None)
            r_of.append(-1)
            ref.append(-1)
        for r, gs in enumerate(row):
            if _is_missing(gs):
                continue
            if len(gs) == 1:
                for s in mcs:
                    if s in sets[r][gs[0]]:
                        rel_r.append(row_of[(r, gs[0], s)])
                        rel_c.append(z_index[s])
                continue
            for s in mcs:
                link_r.append(n_link)
                link_c.append(z_index[s])
                link_v.append(-1.0)
                for g in gs:
                    if s not in sets[r][g]:
                        continue
                    j = len(kind)
                    kind.append("y")
                    c_of.append(c)
                    s_of.append(s)
                    g_of.append(g)
                    r_of.append(r)
                    ref.append(z_index[s])
                    rel_r.append(row_of[(r, g, s)])
                    rel_c.append(j)
                    link_r.append(n_link)
                    link_c.append(j)
                    link_v.append(1.0)
                n_link += 1
    n_cells = len(kind)
    A_sa = sp.csr_array((np.ones(len(rel_r)), (rel_r, rel_c)), shape=(len(counts), n_cells))
    A_link = sp.csr_array((link_v, (link_r, link_c)), shape=(n_link, n_cells))
    empty = np.diff(A_sa.indptr) == 0
    if empty.any():
        bad = counts.iloc[int(np.argmax(empty))]
        raise ReleaseError(
            f"release {int(bad['release']) + 1}, group {bad['group']!r}: value {bad['s']!r} "
            "is published but no one in the group can have it (the releases contradict each "
            "other)"
        )
    kind = np.asarray(kind)
    y_cells = np.flatnonzero(kind == "y")
    sa_has_y = np.zeros(len(counts), dtype=bool)
    if len(y_cells):
        sa_has_y[np.unique(sp.csc_array(A_sa)[:, y_cells].tocoo().row)] = True

    def groups_text(row):
        parts = []
        for r, gs in enumerate(row):
            if _is_missing(gs):
                continue
            inner = "|".join(_shown(g) for g in gs)
            parts.append(f"r{r + 1}:{inner}")
        return ", ".join(parts)

    classes["groups"] = [groups_text(row) for row in classes[gcols].itertuples(index=False)]
    c_arr = np.asarray(c_of, dtype=int)
    cells = pd.DataFrame({c: classes[c].to_numpy()[c_arr] for c in qi})
    cells["groups"] = classes["groups"].to_numpy()[c_arr]
    cells[sa] = s_of
    cells["cls"] = c_arr
    cells["n"] = classes["n"].to_numpy()[c_arr]
    split = classes["split"].to_numpy()[c_arr]
    cells["person"] = pd.Series(split, dtype=object).where(split != "", None)
    cells["kind"] = [
        k if k == "z" else f"y r{r + 1}:{_shown(g)}"
        for k, r, g in zip(kind, r_of, g_of, strict=True)
    ]

    classes["person"] = classes["split"].where(classes["split"] != "", None)
    _install(
        model,
        persons=persons[["pid"] + qi],
        person_class=persons.set_index("pid")["cls"],
        classes=classes[qi + ["groups", "n", "person"]],
        cells=cells[qi + ["groups", sa, "cls", "n", "person", "kind"]].copy(),
        counts=counts,
        A_sa=A_sa,
        A_link=A_link,
        bucket_key=bucket_key,
        sa_has_y=sa_has_y,
        ref=np.asarray(ref, dtype=int),
    )


def _install(
    model, persons, person_class, classes, cells, counts, A_sa, A_link, bucket_key, sa_has_y, ref
) -> None:
    """Set the pooled model's attributes (both constructions end here)."""
    qi, sa = model.releases[0].qi, model.releases[0].sa
    n_cells = len(cells)
    model.qi, model.sa, model.group = list(qi), sa, "groups"
    model._qi_frame = persons
    model.n_records = len(persons)
    model.classes = classes.reset_index(drop=True)
    model.group_values = counts.rename(columns={"count": "n"})
    model.cells = cells
    model.n_cells = n_cells
    model._cls = cells["cls"].to_numpy()
    model._gs = None
    model._A_sa = A_sa
    model._A_link = A_link
    model._sa_bucket = bucket_key
    model._sa_has_y = sa_has_y
    model._ref = ref
    model._z = ref < 0
    model._n = cells["n"].to_numpy(dtype=float)
    model._class_n = classes["n"].to_numpy(dtype=float)
    model._class_member = np.zeros(len(classes), dtype=bool)
    model._gs_n = counts["count"].to_numpy(dtype=float)
    model._gs_group = bucket_key
    model._qg = np.full(n_cells, -1)
    model._qg_n = np.zeros(0)
    model._qg_table = pd.DataFrame(columns=list(qi) + ["groups", "n"])
    model._person_class = person_class
    split = cells["person"].fillna("").to_numpy()
    model._cell_key_fn = lambda: list(
        zip(*(cells[c] for c in qi), cells["groups"], split, cells[sa], cells["kind"], strict=True)
    )
    model._cell_key_cache = None


def _shown(g) -> str:
    return str(int(g)) if isinstance(g, float) and g.is_integer() else str(g)


def _build_placed(model, persons: pd.DataFrame, cand: pd.DataFrame, qi, sa) -> None:
    """:func:`build_pooled` when each person's group in each release is known.

    The same classes, cells (z only) and rows as the general construction, with array
    operations: candidate value sets per (release, group) as boolean matrices, the MCS of
    each class as their AND.
    """
    rels = model.releases
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
        c = f.groupby([rel.group, rel.sa], sort=True).size().rename("count").reset_index()
        c.columns = ["group", "s", "count"]
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
        group_names.append(np.array([f"r{r + 1}:{_shown(g)}" for g in groups], dtype=object))
    counts = pd.concat(counts, ignore_index=True)
    counts["row"] = np.arange(len(counts))
    # (release, group) pairs numbered in order: each release's sorted groups after the last
    bucket_key = np.concatenate(bucket_keys)

    split = np.where(persons["pid"].isin(list(model._split)), persons["pid"].astype(str), "")
    keys = persons[qi].copy()
    for r in range(R):
        keys[f"__g{r}"] = gcode[:, r]
    keys["__split"] = split
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
    no_one = np.diff(A_sa.indptr) == 0
    if no_one.any():
        bad = counts.iloc[int(np.argmax(no_one))]
        raise ReleaseError(
            f"release {int(bad['release']) + 1}, group {bad['group']!r}: value {bad['s']!r} "
            "is published but no one in the group can have it (the releases contradict each "
            "other)"
        )
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
    _install(
        model,
        persons=persons[["pid"] + qi],
        person_class=pd.Series(codes, index=persons["pid"].to_numpy()),
        classes=classes,
        cells=cells,
        counts=counts,
        A_sa=A_sa,
        A_link=sp.csr_array((0, n_cells)),
        bucket_key=bucket_key,
        sa_has_y=np.zeros(len(counts), dtype=bool),
        ref=np.full(n_cells, -1),
    )
