"""The data rows' table is built without pandas' FutureWarning (issue 39, item 8).

``Structure.data_rows`` concatenated an empty shared-invariant table, an empty link table
and a class table whose ``person`` column is all missing; pandas 2.x warns on that
("concatenation with empty or all-NA entries is deprecated"), printed on every report of a
generalized release with a population. pandas 3 no longer warns, so the second test spies
on ``pd.concat`` and checks it is never handed such an entry, whatever pandas is installed.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from maxent_privacy import MaxEntModel, datasets
from maxent_privacy.anonymize import mondrian
from maxent_privacy.bounds import targets


@pytest.fixture(scope="module", params=[False, True], ids=["strict", "relaxed"])
def model(request):
    """Mondrian on 300 Adult records with their population: strict (no shared rows, no
    links; classes hold no person) and relaxed (people fit several groups: links)."""
    adult = datasets.du2008_adult(300, seed=3).reset_index(drop=True)
    adult["pid"] = [f"p{i}" for i in range(len(adult))]
    rel = mondrian(adult, ["age", "sex"], "education", k=6, c=0.5, relaxed=request.param)
    return MaxEntModel(rel, populations=[adult[["pid", "age", "sex"]].set_index("pid")])


def test_no_future_warning_and_the_rows_named(model):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        A, b, rows = model.invariant_matrix(drop_redundant=False)
        targets.data_rows(model)
    s = model.structure
    assert len(rows) == len(b) == A.shape[0]
    counts = rows["kind"].value_counts().to_dict()
    assert counts.get("QI") == len(s.classes) and counts.get("SA") == len(s.group_values)
    assert counts.get("link", 0) == s.link_matrix.shape[0]
    assert "QI (shared)" not in counts and s.shared_table.empty
    qi_rows = rows[rows["kind"] == "QI"].reset_index(drop=True)
    assert qi_rows["age"].tolist() == s.classes["age"].tolist()
    assert qi_rows["n"].tolist() == s.classes["n"].tolist()
    assert list(rows.columns[:5]) == list(s.classes.columns)  # concat's column order


def test_concat_is_never_given_an_empty_or_all_missing_entry(model, monkeypatch):
    real = pd.concat
    seen = []

    def spy(objs, *args, **kwargs):
        objs = list(objs)
        seen.append(len(objs))
        for part in objs:
            assert len(part), "an empty part"
            assert not part.isna().all().any(), "an all-NA column"
        return real(objs, *args, **kwargs)

    monkeypatch.setattr(pd, "concat", spy)
    A, b, rows = model.structure.data_rows()
    assert seen and len(rows) == len(b)
    # the entries left out still have their columns: all missing where nothing fills them
    assert rows["person"].isna().all() == model.structure.classes["person"].isna().all()


def test_categorical_columns_count_observed_classes_only():
    """A categorical QI or group column with unused categories: the classes are the
    records' own (pandas 2.x grouped every combination of categories by default, with a
    FutureWarning, and gave classes of 0 records)."""
    from maxent_privacy import Bucketized

    frame = pd.DataFrame(
        {
            "sex": pd.Categorical(["m", "f", "m", "f"], categories=["f", "m", "x"]),
            "d": pd.Categorical(["flu", "hiv", "hiv", "flu"], categories=["cold", "flu", "hiv"]),
            "g": pd.Categorical([1, 1, 2, 2], categories=[1, 2, 3]),
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        release = Bucketized(frame, ["sex"], "d", "g")
        s = MaxEntModel(release).structure
        table, buckets = release.sa_table(), release.buckets()
    assert s.classes["n"].tolist() == [1, 1, 1, 1] and len(s.classes) == 4
    assert table["count"].tolist() == [1, 1, 1, 1]
    assert buckets["size"].tolist() == [2, 2]
