"""The distributed build equals the in-memory one (same classes, cells, Relation rows,
cell-row incidence and components, up to order), and bad input is one line naming the
release, the partition and the row."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from maxent_privacy import ReleaseError
from maxent_privacy.distributed import DaskBucketized, build_distributed
from maxent_privacy.distributed.synthetic import QI, SA

dd = pytest.importorskip("dask.dataframe")

pytestmark = pytest.mark.heavy


def _read(paths, client):
    return [
        DaskBucketized(
            dd.read_parquet(p), QI, SA, "group", "pid", name=f"release {r + 1}", client=client
        )
        for r, p in enumerate(paths)
    ]


def _groups_text(frame: pd.DataFrame, R: int, label_of: dict) -> list[str]:
    cols = [frame[f"b{r}"].to_numpy() for r in range(R)]
    return [
        ", ".join(f"r{r + 1}:{label_of[b]}" for r, b in enumerate(bs) if b >= 0)
        for bs in zip(*cols, strict=True)
    ]


def _distributed_tables(s, client):
    classes, rows, cells = client.gather(client.compute([s.classes, s.rows, s.cells]))
    label_of = dict(zip(rows["bucket"], rows["group"].astype(str), strict=False))
    classes = classes.assign(groups=_groups_text(classes, s.n_releases, label_of))
    key_of = dict(
        zip(
            classes["cls"],
            zip(*(classes[c] for c in [*s.qi, "groups"]), strict=True),
            strict=True,
        )
    )
    row_key = dict(
        zip(
            rows["row"],
            zip(
                rows["release"],
                rows["group"].astype(str),
                [s.values[k] for k in rows["s"]],
                strict=True,
            ),
            strict=True,
        )
    )
    cell_keys = [(*key_of[c], s.values[v]) for c, v in zip(cells["cls"], cells["s"], strict=True)]
    pairs = {
        (cell_keys[i], row_key[row])
        for r in range(s.n_releases)
        for i, row in enumerate(cells[f"row{r}"])
        if row >= 0
    }
    comps = {}
    for key, comp in zip(key_of.values(), classes.set_index("cls")["comp"], strict=True):
        comps.setdefault(comp, set()).add(key)
    return {
        "classes": sorted((*key, n) for key, n in zip(key_of.values(), classes["n"], strict=True)),
        "cells": sorted(cell_keys),
        "rows": sorted((*row_key[r], n) for r, n in zip(rows["row"], rows["n"], strict=True)),
        "pairs": pairs,
        "components": {frozenset(v) for v in comps.values()},
    }


def _memory_tables(structure):
    s = structure
    classes = s.classes
    class_key = list(zip(*(classes[c] for c in [*s.qi, "groups"]), strict=True))
    cells = s.cells
    cell_keys = [(*class_key[c], v) for c, v in zip(cells["cls"], cells[s.sa], strict=True)]
    gv = s.group_values
    row_keys = list(
        zip(gv["release"], gv["group"].astype(str), gv["s"] if "s" in gv else gv[s.sa], strict=True)
    )
    A = sp.coo_array(s.sa_matrix)
    pairs = {(cell_keys[j], row_keys[i]) for i, j in zip(A.row, A.col, strict=True)}
    # components over the class-bucket graph: classes linked through their cells' rows
    n_cls = len(class_key)
    C = sp.csr_array((np.ones(A.nnz), (s.cell_class[A.col], A.row)), shape=(n_cls, A.shape[0]))
    graph = sp.bmat([[None, C], [C.T, None]])
    _, lab = connected_components(graph, directed=False)
    comps = {}
    for k, key in enumerate(class_key):
        comps.setdefault(lab[k], set()).add(key)
    return {
        "classes": sorted((*k, n) for k, n in zip(class_key, classes["n"], strict=True)),
        "cells": sorted(cell_keys),
        "rows": sorted((*k, n) for k, n in zip(row_keys, gv["n"], strict=True)),
        "pairs": pairs,
        "components": {frozenset(v) for v in comps.values()},
    }


def test_the_build_equals_the_in_memory_one(client, parquet_releases, in_memory_model):
    model = in_memory_model
    s = build_distributed(_read(parquet_releases, client), client)
    ours = _distributed_tables(s, client)
    theirs = _memory_tables(model.structure)
    assert s.n_classes == len(model.structure.class_n)
    assert s.n_rows == model.structure.sa_matrix.shape[0]
    assert s.n_persons == model.structure.n_records
    for what in ("classes", "cells", "rows"):
        assert ours[what] == theirs[what], what
    assert len(ours["pairs"]) == model.structure.sa_matrix.nnz
    assert ours["pairs"] == theirs["pairs"]
    assert len(ours["components"]) == 50  # one per region
    assert ours["components"] == theirs["components"]


def _parts(frames):
    return dd.from_pandas(pd.concat(frames, ignore_index=True), npartitions=len(frames))


def test_errors_name_the_partition_and_row(client):
    good = pd.DataFrame(
        {"pid": [1, 2, 3, 4], "region": 0, "age": [30, 31, 32, 33], "sex": 0,
         "disease": ["a", "b", "a", "b"], "group": [1, 1, 2, 2]}
    )  # fmt: skip
    bad = good.copy()
    bad.loc[3, "age"] = None
    frame = dd.from_pandas(bad, npartitions=2)
    with pytest.raises(ReleaseError, match=r"^release 2 partition 1: quasi-identifier column "
                       r"'age' has a missing value \(row 3\)"):  # fmt: skip
        DaskBucketized(frame, QI, SA, "group", "pid", name="release 2", client=client)
    twice = good.assign(pid=[1, 2, 3, 1])
    with pytest.raises(ReleaseError, match=r"person id 1 occurs in more than one row of "
                       r"column 'pid' \(partition 0 row 0 and partition 1 row 3\)"):  # fmt: skip
        DaskBucketized(dd.from_pandas(twice, npartitions=2), QI, SA, "group", "pid", client=client)
    with pytest.raises(ReleaseError, match="person column 'id' is not in the table"):
        DaskBucketized(dd.from_pandas(good, npartitions=1), QI, SA, "group", "id")
    with pytest.raises(ReleaseError, match="needs a dask DataFrame"):
        DaskBucketized(good, QI, SA, "group", "pid")
    moved = good.assign(age=[30, 31, 32, 99])
    rels = [
        DaskBucketized(dd.from_pandas(f, npartitions=2), QI, SA, "group", "pid", client=client)
        for f in (good, moved)
    ]
    with pytest.raises(ReleaseError, match=r"person 4 has different QI in different releases: "
                       r"age=33 in release 1 vs age=99 in release 2"):  # fmt: skip
        build_distributed(rels, client)


@pytest.mark.parametrize("sa", ["s", "person", "group", "release", "n", "cls"])
def test_a_sensitive_column_named_like_an_internal_one(sa):
    """Issue 39: a sensitive column named ``s`` was a KeyError ("['s'] not in index")."""
    from maxent_privacy import Bucketized, MaxEntModel

    one = pd.DataFrame(
        {"id": [1, 2, 3, 4], "age": [30, 30, 41, 52], sa: ["flu", "hiv", "flu", "cold"],
         "g": [1, 1, 2, 2]}
    )  # fmt: skip
    two = one.assign(g=[1, 2, 2, 1])
    frames = [dd.from_pandas(f, npartitions=2) for f in (one, two)]
    s = build_distributed([DaskBucketized(f, ["age"], sa, "g", "id") for f in frames])
    assert s.values == ["cold", "flu", "hiv"]
    # the in-memory model refuses the names its own tables use (it read a sensitive
    # column named "n" as the class sizes): its reference is the column renamed
    from maxent_privacy.releases.structure import RESERVED

    named = sa + "_" if sa in RESERVED else sa
    frames = [f.rename(columns={sa: named}) for f in (one, two)]
    model = MaxEntModel([Bucketized(f, ["age"], named, "g", person="id") for f in frames])
    assert len(s.cells.compute()) == model.n_cells
