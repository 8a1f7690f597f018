"""Mondrian multidimensional partitioning under (k, c)-anonymity."""

from __future__ import annotations

import doctest
import time
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from maxent_privacy import ReleaseError
from maxent_privacy import mondrian as mondrian_module
from maxent_privacy._validation import ArgumentError
from maxent_privacy.attacks import check_kc, kc_violations, placement
from maxent_privacy.datasets import load_adult
from maxent_privacy.generalized import Generalized, covers
from maxent_privacy.mondrian import mondrian

QI = ["age", "sex", "race", "marital_status"]
SA = "occupation"


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    frame = load_adult()
    frame["pid"] = [f"r{i}" for i in range(len(frame))]
    return frame


@pytest.fixture(scope="module")
def sample(adult) -> pd.DataFrame:
    return adult.sample(1500, random_state=0)


def test_docstring_examples():
    failures, tried = doctest.testmod(mondrian_module, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0


def assert_valid(release: Generalized, frame: pd.DataFrame, k: int, c: float, strict: bool):
    out = release.frame
    assert isinstance(release, Generalized)
    assert out.index.equals(frame.index)
    assert (out[release.sa].to_numpy() == frame[release.sa].to_numpy()).all()
    # every class has at least k records and no value above the share c
    assert check_kc(release, k, c)
    for _, part in out.groupby(release.group):
        assert len(part) >= k
        assert max(Counter(part[release.sa]).values()) <= c * len(part) + 1e-12
        for col in release.qi:  # a class shares its cells
            assert part[col].nunique() == 1
    assert sorted(out[release.group].unique()) == list(range(1, release.n_groups + 1))
    # every record's exact QI is covered by its own class's cells
    population = frame[release.qi].assign(_id=np.arange(len(frame)))
    pairs = release.compatible(population, "_id")
    own = set(zip(np.arange(len(frame)), out[release.group].to_numpy(), strict=True))
    assert own <= set(zip(pairs["_id"], pairs[release.group], strict=True))
    if strict:  # strict partitions never overlap: each record fits its class only
        assert len(pairs) == len(frame)


@pytest.mark.parametrize("relaxed", [False, True])
def test_adult_sample(sample, relaxed):
    release = mondrian(sample, QI, SA, k=5, c=0.5, relaxed=relaxed, person="pid")
    assert_valid(release, sample, 5, 0.5, strict=not relaxed)
    assert release.person == "pid"
    assert release.n_groups > 20
    cells = release.frame
    assert cells["age"].str.match(r"^(\[\d+-\d+\]|\d+)$").all()
    assert cells["sex"].isin(["*", "Male", "Female"]).all()
    race = cells["race"]
    assert (race.str.startswith("{") | (race == "*") | race.isin(set(sample["race"]))).all()


def test_adult_cells_cover_exactly_the_extent(sample):
    release = mondrian(sample, QI, SA, k=10, c=0.4)
    out = release.frame
    for _, part in out.groupby("group"):
        ages = sample.loc[part.index, "age"]
        cell = part["age"].iloc[0]
        expect = str(ages.min()) if ages.min() == ages.max() else f"[{ages.min()}-{ages.max()}]"
        assert cell == expect
        races = sorted(set(sample.loc[part.index, "race"]))
        cell = part["race"].iloc[0]
        if len(races) == sample["race"].nunique():
            assert cell == "*"
        elif len(races) == 1:
            assert cell == races[0]
        else:
            assert cell == "{" + ", ".join(races) + "}"


def test_deterministic(sample):
    one = mondrian(sample, QI, SA, k=4, c=0.6)
    two = mondrian(sample.copy(), QI, SA, k=4, c=0.6)
    pd.testing.assert_frame_equal(one.frame, two.frame)


def test_strict_classes_place_every_person(sample):
    release = mondrian(sample.iloc[:300], QI, SA, k=3, c=0.5, person="pid")
    where = placement(release, sample.iloc[:300][["pid", *QI]])
    truth = release.frame.set_index("pid")["group"]
    assert (where["group"].to_numpy() == truth.loc[where["person"]].to_numpy()).all()


def test_c_above_one_is_l(sample):
    one = mondrian(sample, QI, SA, k=3, c=3)
    two = mondrian(sample, QI, SA, k=3, c=1 / 3)
    pd.testing.assert_frame_equal(one.frame, two.frame)


def test_numeric_override(sample):
    part = sample.iloc[:200]
    release = mondrian(part.astype({"age": object}), ["age", "sex"], SA, k=5, c=0.5)
    ages = release.frame["age"]
    assert not ages.str.startswith("[").any()  # sets or single values, not intervals
    assert_valid(release, part, 5, 0.5, strict=True)
    frame = pd.DataFrame({"zip": ["1", "2", "3", "4"], "d": list("abab")})
    release = mondrian(frame.astype({"zip": int}), ["zip"], "d", k=2, c=0.5)
    assert release.frame["zip"].tolist() == ["[1-2]", "[1-2]", "[3-4]", "[3-4]"]


def test_small_by_hand():
    frame = pd.DataFrame(
        {"age": [30, 31, 32, 33, 40, 41], "sex": list("FMFMFM"), "d": list("abcabc")},
        index=list("uvwxyz"),
    )
    release = mondrian(frame, ["age", "sex"], "d", k=3, c=1)
    assert release.frame["age"].tolist() == ["[30-32]"] * 3 + ["[33-41]"] * 3
    assert release.frame["sex"].tolist() == ["*"] * 6
    assert release.frame["group"].tolist() == [1, 1, 1, 2, 2, 2]
    assert release.frame.index.tolist() == list("uvwxyz")
    # k = 1, c = 1: every distinct QI point is its own class
    release = mondrian(frame, ["age", "sex"], "d", k=1, c=1)
    assert release.n_groups == 6
    assert release.frame["age"].tolist() == ["30", "31", "32", "33", "40", "41"]
    # relaxed splits cut ties: both halves may share the median value
    frame = pd.DataFrame({"age": [5, 6, 5, 5], "d": list("abab")})
    assert mondrian(frame, ["age"], "d", k=2, c=1).n_groups == 1
    relaxed = mondrian(frame, ["age"], "d", k=2, c=1, relaxed=True)
    assert relaxed.frame["age"].tolist() == ["5", "[5-6]", "5", "[5-6]"]
    # identical points are never split, even when relaxed
    frame = pd.DataFrame({"age": [5, 5, 5, 5], "d": list("abab")})
    assert mondrian(frame, ["age"], "d", k=2, c=1, relaxed=True).n_groups == 1


def test_errors():
    frame = pd.DataFrame({"age": [1, 2, 3], "sex": ["F", "M", "F"], "d": ["a", "a", "b"]})
    with pytest.raises(ReleaseError, match=r"value 'a' is 2 of 3 records, more than c=0.5"):
        mondrian(frame, ["age"], "d", k=1, c=0.5)
    with pytest.raises(ReleaseError, match="3 records, fewer than k=4"):
        mondrian(frame, ["age"], "d", k=4, c=1)
    with pytest.raises(ReleaseError, match="quasi-identifier column 'zip'"):
        mondrian(frame, ["zip"], "d", k=1, c=1)
    with pytest.raises(ReleaseError, match="group column name 'age'"):
        mondrian(frame, ["age"], "d", k=1, c=1, group="age")
    with pytest.raises(ArgumentError, match="k must be a whole number"):
        mondrian(frame, ["age"], "d", k=0, c=1)
    with pytest.warns(DeprecationWarning, match="numeric="):  # deprecated, still checked
        with pytest.raises(ReleaseError, match="numeric column 'd' is not a quasi-identifier"):
            mondrian(frame, ["age"], "d", k=1, c=1, numeric=["d"])
    with pytest.warns(DeprecationWarning, match="numeric="):
        with pytest.raises(ReleaseError, match="numeric column 'sex' has a value that is not"):
            mondrian(frame, ["sex"], "d", k=1, c=1, numeric=["sex"])
    with pytest.raises(ReleaseError, match=r"column 'age' has a missing value \(row 1\)"):
        mondrian(frame.assign(age=[1, None, 3]), ["age"], "d", k=1, c=1)
    with pytest.raises(ReleaseError, match="column 'sex' has value 'F, M'"):
        mondrian(frame.assign(sex=["F, M", "M", "F"]), ["sex"], "d", k=1, c=1)
    with pytest.raises(ReleaseError, match="needs a pandas DataFrame"):
        mondrian([1], ["age"], "d", k=1, c=1)
    with pytest.raises(ReleaseError, match="no rows"):
        mondrian(frame.iloc[:0], ["age"], "d", k=1, c=1)


def test_adult_speed(adult):
    """5,000 and 30,000 Adult records in a few seconds (typically well under one)."""
    for n in (5_000, 30_000):
        part = adult.iloc[:n]
        start = time.perf_counter()
        release = mondrian(part, QI, SA, k=5, c=0.5)
        relaxed = mondrian(part, QI, SA, k=5, c=0.5, relaxed=True)
        elapsed = time.perf_counter() - start
        assert elapsed < 10, elapsed
        assert kc_violations(release, 5, 0.5).empty and kc_violations(relaxed, 5, 0.5).empty
        assert relaxed.n_groups > release.n_groups


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 30),
            st.sampled_from(["F", "M"]),
            st.sampled_from(["r1", "r2", "r3", "r4"]),
            st.sampled_from(list("abcde")),
        ),
        min_size=1,
        max_size=60,
    ),
    k=st.integers(1, 5),
    c=st.sampled_from([0.34, 0.5, 0.75, 1.0]),
    relaxed=st.booleans(),
)
def test_every_class_is_k_c_anonymous_and_covers_its_records(rows, k, c, relaxed):
    frame = pd.DataFrame(rows, columns=["age", "sex", "race", "s"])
    try:
        release = mondrian(frame, ["age", "sex", "race"], "s", k=k, c=c, relaxed=relaxed)
    except ReleaseError as e:
        assume(False)
        raise AssertionError from e  # pragma: no cover
    assert_valid(release, frame, k, c, strict=not relaxed)
    for cells, value in zip(
        release.frame[["age", "sex", "race"]].itertuples(index=False),
        frame[["age", "sex", "race"]].itertuples(index=False),
        strict=True,
    ):
        assert all(covers(cell, v) for cell, v in zip(cells, value, strict=True))
