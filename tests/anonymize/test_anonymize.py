"""Anatomy bucketization (Xiao and Tao 2006) and the l-diversity check."""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxent_privacy import Bucketized, ReleaseError
from maxent_privacy._validation import ArgumentError
from maxent_privacy.anonymize import anatomize, check_l_diversity
from maxent_privacy.datasets import ADULT_QI, ADULT_SA, du2008_adult, du2008_figure1, load_adult

DU_NONSENSITIVE = ["HS-grad", "Some-college"]


def assert_valid(release, frame, qi, sa, l, nonsensitive=(), group="group"):  # noqa: E741
    """Every record once, groups 1..m of l..2l-1 records, each sensitive value <= once."""
    out = release.frame
    assert isinstance(release, Bucketized)
    assert list(out.columns) == list(qi) + [sa, group]
    assert release.qi == list(qi) and release.sa == sa and release.group == group
    # every record exactly once, with its own values (original index kept)
    assert out.index.is_unique
    assert sorted(out.index.tolist()) == sorted(frame.index.tolist())
    pd.testing.assert_frame_equal(out[list(qi) + [sa]], frame.loc[out.index, list(qi) + [sa]])
    # rows sorted by group, ids 1..m
    groups = out[group].to_numpy()
    assert (np.diff(groups) >= 0).all()
    m = release.n_groups
    assert set(groups.tolist()) == set(range(1, m + 1))
    sizes = out.groupby(group).size()
    assert sizes.min() >= l and sizes.max() <= 2 * l - 1
    sensitive = out[~out[sa].isin(list(nonsensitive))]
    if len(sensitive):
        assert sensitive.groupby([group, sa]).size().max() == 1
    assert check_l_diversity(release, l, nonsensitive).all()
    return sizes


@pytest.fixture(scope="module")
def du_sample() -> pd.DataFrame:
    return du2008_adult()


# -- small examples -------------------------------------------------------------------


def test_small_example():
    frame = pd.DataFrame(
        {
            "zip": [10, 20, 30, 40, 50, 60, 70],
            "age": [31, 42, 53, 24, 35, 46, 57],
            "disease": ["Flu", "Flu", "HIV", "HIV", "Cold", "Cold", "Cancer"],
        },
        index=[f"p{i}" for i in range(7)],
    )
    release = anatomize(frame, ["zip", "age"], "disease", l=3)
    sizes = assert_valid(release, frame, ["zip", "age"], "disease", 3)
    assert sorted(sizes.tolist()) == [3, 4]
    assert release.n_groups == 2


def test_keeps_index_and_drops_other_columns():
    frame = du2008_figure1().set_index("name")
    frame["bucket"] = 99  # unrelated column, not in the release
    release = anatomize(frame, ["gender", "degree"], "disease", l=2)
    assert list(release.frame.columns) == ["gender", "degree", "disease", "group"]
    assert_valid(release, frame, ["gender", "degree"], "disease", 2)
    assert set(release.frame.index) == set(frame.index)
    assert "bucket" in frame.columns and "group" not in frame.columns  # input untouched


def test_custom_group_name_and_single_qi_string():
    frame = du2008_figure1()
    release = anatomize(frame, "gender", "disease", l=2, group="bucket_id")
    assert release.group == "bucket_id" and release.qi == ["gender"]
    assert_valid(release, frame, ["gender"], "disease", 2, group="bucket_id")


def test_nonsensitive_records_may_share_a_group():
    # 6 "none" records among 10: 2-diversity is unattainable unless "none" is exempt
    frame = pd.DataFrame({"q": range(10), "s": ["none"] * 6 + ["a", "b", "c", "d"]})
    with pytest.raises(ReleaseError, match="'none' occurs in 6 of 10 records"):
        anatomize(frame, ["q"], "s", l=2)
    release = anatomize(frame, ["q"], "s", l=2, nonsensitive=["none"])
    assert_valid(release, frame, ["q"], "s", 2, nonsensitive=["none"])
    assert release.n_groups == 5
    # a single string is one value
    other = anatomize(frame, ["q"], "s", l=2, nonsensitive="none")
    pd.testing.assert_frame_equal(release.frame, other.frame)


def test_all_values_nonsensitive():
    frame = pd.DataFrame({"q": range(11), "s": ["x"] * 11})
    release = anatomize(frame, ["q"], "s", l=3, nonsensitive=["x"])
    sizes = release.frame.groupby("group").size()
    assert sorted(sizes.tolist()) == [3, 4, 4]


def test_exactly_n_over_l_is_attainable():
    frame = pd.DataFrame({"q": range(6), "s": ["a", "a", "b", "b", "c", "d"]})
    release = anatomize(frame, ["q"], "s", l=3)
    assert_valid(release, frame, ["q"], "s", 3)
    assert release.n_groups == 2


# -- the Adult experiments -------------------------------------------------------------


def test_du2008_adult_l5_gives_2842_buckets_of_five(du_sample):
    release = anatomize(du_sample, ADULT_QI, ADULT_SA, l=5, nonsensitive=DU_NONSENSITIVE)
    sizes = assert_valid(release, du_sample, ADULT_QI, ADULT_SA, 5, DU_NONSENSITIVE)
    assert release.n_groups == 2_842
    assert Counter(sizes.tolist()) == {5: 2_842}
    # every sensitive (non-exempt) education level at most once per bucket
    sens = release.frame[~release.frame[ADULT_SA].isin(DU_NONSENSITIVE)]
    assert sens.groupby(["group", ADULT_SA]).size().max() == 1


def test_du2008_adult_hs_grad_alone_is_unattainable(du_sample):
    with pytest.raises(
        ReleaseError,
        match=r"5-diversity is unattainable: sensitive value 'Some-college' occurs in "
        r"3,142 of 14,210 records \(22\.1%\), more than 1/5",
    ):
        anatomize(du_sample, ADULT_QI, ADULT_SA, l=5, nonsensitive=["HS-grad"])
    with pytest.raises(ReleaseError, match=r"'HS-grad' occurs in 4,600 of 14,210 .*'Some-college'"):
        anatomize(du_sample, ADULT_QI, ADULT_SA, l=5)


def test_full_adult_l5_is_fast_and_valid():
    adult = load_adult()
    with pytest.raises(
        ReleaseError,
        match=r"^5-diversity is unattainable: sensitive value 'HS-grad' occurs in 14,783 of "
        r"45,222 records \(32\.7%\), more than 1/5",
    ):
        anatomize(adult, ADULT_QI, ADULT_SA, l=5)
    start = time.perf_counter()
    release = anatomize(adult, ADULT_QI, ADULT_SA, l=5, nonsensitive=DU_NONSENSITIVE)
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0
    sizes = assert_valid(release, adult, ADULT_QI, ADULT_SA, 5, DU_NONSENSITIVE)
    # 45,222 = 5 * 9,044 + 2: two leftovers join two different groups
    assert release.n_groups == 9_044
    assert Counter(sizes.tolist()) == {5: 9_042, 6: 2}


def test_deterministic_per_seed(du_sample):
    frame = du_sample.iloc[:2_000]
    a = anatomize(frame, ADULT_QI, ADULT_SA, l=3, nonsensitive=DU_NONSENSITIVE, seed=7)
    b = anatomize(frame, ADULT_QI, ADULT_SA, l=3, nonsensitive=DU_NONSENSITIVE, seed=7)
    c = anatomize(frame, ADULT_QI, ADULT_SA, l=3, nonsensitive=DU_NONSENSITIVE, seed=8)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert not a.frame.equals(c.frame)
    assert not a.frame.index.equals(c.frame.index)
    # default seed is 0
    pd.testing.assert_frame_equal(
        anatomize(frame, ADULT_QI, ADULT_SA, l=3, nonsensitive=DU_NONSENSITIVE).frame,
        anatomize(frame, ADULT_QI, ADULT_SA, l=3, nonsensitive=DU_NONSENSITIVE, seed=0).frame,
    )


# -- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("l", [1, 0, -2, 2.5, "3", True, None])
def test_bad_l(l):  # noqa: E741
    with pytest.raises(ArgumentError, match="l must be a whole number >= 2"):
        anatomize(du2008_figure1(), ["gender"], "disease", l=l)


def test_numpy_integer_l_is_accepted():
    release = anatomize(du2008_figure1(), ["gender"], "disease", l=np.int64(2))
    assert release.n_records == 10


def test_missing_columns_are_named():
    frame = du2008_figure1()
    with pytest.raises(ReleaseError, match="quasi-identifier column 'zip' is not in the table"):
        anatomize(frame, ["gender", "zip"], "disease", l=2)
    with pytest.raises(ReleaseError, match="sensitive column 'illness' is not in the table"):
        anatomize(frame, ["gender"], "illness", l=2)
    with pytest.raises(ReleaseError, match="group column name 'gender'"):
        anatomize(frame, ["gender"], "disease", l=2, group="gender")


def test_unknown_nonsensitive_value_is_named():
    with pytest.raises(ReleaseError, match="nonsensitive value 'Malaria' does not occur"):
        anatomize(du2008_figure1(), ["gender"], "disease", l=2, nonsensitive=["Flu", "Malaria"])


def test_unattainable_names_value_count_share():
    frame = du2008_figure1()  # Flu 3 of 10
    with pytest.raises(
        ReleaseError,
        match=r"^4-diversity is unattainable: sensitive value 'Flu' occurs in 3 of 10 records "
        r"\(30\.0%\), more than 1/4; name it in nonsensitive=\[\.\.\.\]",
    ):
        anatomize(frame, ["gender"], "disease", l=4)
    release = anatomize(frame, ["gender"], "disease", l=4, nonsensitive=["Flu"])
    assert_valid(release, frame, ["gender"], "disease", 4, nonsensitive=["Flu"])


def test_too_few_records_and_missing_sensitive_value():
    frame = du2008_figure1()
    with pytest.raises(ReleaseError, match="11-diversity needs at least 11 records"):
        anatomize(frame, ["gender"], "disease", l=11, nonsensitive=["Flu"])
    frame.loc[4, "disease"] = None
    with pytest.raises(ReleaseError, match="sensitive column 'disease' has a missing value"):
        anatomize(frame, ["gender"], "disease", l=2)
    with pytest.raises(ReleaseError, match="pandas DataFrame"):
        anatomize(frame.to_dict(), ["gender"], "disease", l=2)


# -- check_l_diversity --------------------------------------------------------------------


def test_check_l_diversity_on_figure1():
    release = Bucketized(du2008_figure1(), ["gender", "degree"], "disease", "bucket")
    result = check_l_diversity(release, 3)
    assert result.name == "l_diverse"
    assert result.index.tolist() == [1, 2, 3]
    assert result.tolist() == [False, True, True]  # bucket 1 holds Flu twice in 4
    assert check_l_diversity(release, 2).tolist() == [True, True, True]
    assert check_l_diversity(release, 3, nonsensitive=["Flu"]).tolist() == [True, True, True]
    assert check_l_diversity(release, 4).tolist() == [False, False, False]


# -- property test ------------------------------------------------------------------------


@st.composite
def small_tables(draw):
    l = draw(st.integers(2, 5))  # noqa: E741
    n_values = draw(st.integers(1, 8))
    values = [f"v{i}" for i in range(n_values)]
    column = draw(st.lists(st.sampled_from(values), min_size=l, max_size=40))
    present = sorted(set(column))
    exempt = draw(st.lists(st.sampled_from(present), max_size=2, unique=True))
    seed = draw(st.integers(0, 2**32 - 1))
    return l, column, exempt, seed


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_tables())
def test_property_anatomize_when_eligible(case):
    l, column, exempt, seed = case  # noqa: E741
    n = len(column)
    frame = pd.DataFrame({"q": np.arange(n) * 3, "s": column}, index=np.arange(n) + 100)
    counts = Counter(v for v in column if v not in exempt)
    eligible = all(c * l <= n for c in counts.values())
    if not eligible:
        worst = max(counts.values())
        with pytest.raises(ReleaseError, match=f"occurs in {worst} of {n} records"):
            anatomize(frame, ["q"], "s", l=l, seed=seed, nonsensitive=exempt)
        return
    release = anatomize(frame, ["q"], "s", l=l, seed=seed, nonsensitive=exempt)
    sizes = assert_valid(release, frame, ["q"], "s", l, nonsensitive=exempt)
    assert release.n_groups == n // l
    assert sizes.sum() == n


def test_history_guided_after_an_m_invariant_release_and_a_repeated_index():
    """history_guided takes an m-invariant release (its counterfeit records are no one's
    slot) and a new table whose index repeats labels (a plain ``pd.concat``)."""
    from maxent_privacy.anonymize import history_guided, m_invariant

    t1 = pd.DataFrame(
        {"id": [1, 2, 3, 4], "age": [21, 23, 50, 52], "disease": ["flu", "hiv", "flu", "hiv"]}
    )
    r1 = m_invariant(t1, ["age"], "disease", m=2, person="id")
    r2 = m_invariant(t1[t1["id"] != 4], ["age"], "disease", m=2, history=[r1], person="id")
    assert r2.counterfeit_counts().sum() == 1
    new = pd.DataFrame({"id": [5, 6], "age": [30, 31], "disease": ["flu", "hiv"]})
    r3 = history_guided(
        pd.concat([t1[t1["id"] != 4], new]), ["age"], "disease", l=2, history=r2, person="id"
    )
    got = r3.frame.set_index("id")["group"]
    assert got.loc[[1, 2]].nunique() == 1 and got.loc[3] != got.loc[1]  # stayers keep
    assert sorted(got.index) == [1, 2, 3, 5, 6] and r3.counterfeits is None
