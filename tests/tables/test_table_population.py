"""Counts tables of a known population: what is possible and certain for each person
equals the enumeration of every assignment of values to people that reproduces the
published tables (written here, not the package's)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maxent_privacy import (
    Bucketized,
    InconsistentTables,
    MaxEntModel,
    ReleaseError,
    Tabulated,
    datasets,
)

VALUES = ["a", "b", "c"]


def _people(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "age": rng.choice([25, 35, 45, 55], n),
            "d": rng.choice(VALUES, n),
        },
        index=pd.Index([f"p{i}" for i in range(n)], name="id"),
    )


def _table(truth: pd.DataFrame, by: list, banded: bool = False) -> pd.DataFrame:
    frame = truth.copy()
    if banded:
        frame["age"] = np.where(frame["age"] < 40, "20-39", "40-59")
    return frame.groupby(by + ["d"]).size().rename("count").reset_index()


def _worlds(truth: pd.DataFrame, tables: list) -> list[tuple]:
    """Every assignment of values to the people that gives the same published counts."""
    people = truth.index.tolist()
    banded = np.where(truth["age"] < 40, "20-39", "40-59")
    keys = {
        "sex": truth["sex"].tolist(),
        "age": banded.tolist(),
    }
    want = [sorted(zip(*[keys[c] for c in by], truth["d"].tolist(), strict=True)) for by in tables]
    worlds = []
    for world in itertools.product(VALUES, repeat=len(people)):
        ok = all(
            sorted(zip(*[keys[c] for c in by], world, strict=True)) == w
            for by, w in zip(tables, want, strict=True)
        )
        if ok:
            worlds.append(world)
    return worlds


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 7))
def test_possible_and_certain_equal_enumeration(seed, n):
    truth = _people(seed, n)
    population = truth[["sex", "age"]]
    by_sex = Tabulated(_table(truth, ["sex"]), qi=["sex"], sa="d", name="by sex")
    by_age = Tabulated(_table(truth, ["age"], banded=True), qi=["age"], sa="d", name="by age")
    model = MaxEntModel([by_sex, by_age], populations=[population, None])
    bounds = model.bounds(by="person", exact=True)
    worlds = _worlds(truth, [["sex"], ["age"]])
    assert worlds, "the truth itself reproduces the tables"
    for i, person in enumerate(truth.index):
        seen = {w[i] for w in worlds}
        for value in sorted(set(truth["d"])):
            row = bounds.loc[(person, value)]
            assert bool(row["possible"]) == (value in seen), (person, value)
            assert bool(row["certain"]) == (seen == {value}), (person, value)
    posterior = model.solve().person_posterior()
    np.testing.assert_allclose(posterior.sum(axis=1), 1.0, atol=1e-6)


def test_tables_pooled_with_a_bucketized_release_expose_more():
    """Du et al.'s Figure 1 alone makes nobody certain; with the counts of disease by
    gender published too, the two women with breast cancer and James with flu are."""
    frame = datasets.du2008_figure1()
    release = Bucketized(frame, qi=["gender", "degree"], sa="disease", group="bucket",
                         person="name")  # fmt: skip
    population = frame.set_index("name")[["gender", "degree"]]
    table = Tabulated(
        frame.groupby(["gender", "disease"]).size().rename("count").reset_index(),
        qi=["gender"], sa="disease",
    )  # fmt: skip
    alone = MaxEntModel(release).bounds(by="person", exact=True)
    both = MaxEntModel([release, table], populations=[None, population])
    pooled = both.bounds(by="person", exact=True)
    assert not alone["certain"].any()
    certain = sorted(pooled.index[pooled["certain"]].tolist())
    truth = sorted(zip(frame["name"], frame["disease"], strict=True))
    assert set(certain) <= set(truth)
    assert len(certain) == 3


def test_a_table_against_the_register_is_named():
    truth = _people(3, 5)
    counts = _table(truth, ["sex"])
    counts.loc[0, "count"] += 1
    with pytest.raises(InconsistentTables) as err:
        MaxEntModel([Tabulated(counts, qi=["sex"], sa="d")], populations=[truth[["sex"]]])
    assert "\n" not in str(err.value) and "table 1" in str(err.value)


def test_suppressed_cells_with_a_population_are_one_line():
    truth = _people(4, 6)
    counts = _table(truth, ["sex"]).astype({"count": object})
    counts.loc[0, "count"] = "x"
    with pytest.raises(ReleaseError) as err:
        MaxEntModel([Tabulated(counts, qi=["sex"], sa="d")], populations=[truth[["sex"]]])
    assert "\n" not in str(err.value) and "row 1" in str(err.value)


def test_a_table_of_the_sensitive_value_alone():
    """One cell for everyone: each person's posterior is the published share, beside a
    table by gender too; the population's columns are the QI when no table names one."""
    frame = datasets.du2008_figure1()
    population = frame.set_index("name")[["gender", "degree"]]
    overall = frame.groupby("disease").size()
    alone = Tabulated(overall.rename("count").reset_index(), qi=[], sa="disease")
    model = MaxEntModel([alone], populations=[population])
    posterior = model.solve().person_posterior()
    for value, n in overall.items():
        assert posterior[value].to_numpy() == pytest.approx(n / len(frame), abs=1e-6)
    by_gender = Tabulated(
        frame.groupby(["gender", "disease"]).size().rename("count").reset_index(),
        qi=["gender"], sa="disease",
    )  # fmt: skip
    both = MaxEntModel([by_gender, alone], populations=[population, None]).solve()
    women = frame.loc[frame["gender"] == "female", "disease"].value_counts()
    cathy = both.person_posterior().loc["Cathy"]
    for value, n in women.items():
        assert cathy[value] == pytest.approx(n / len(women.index.repeat(women)), abs=1e-6)
