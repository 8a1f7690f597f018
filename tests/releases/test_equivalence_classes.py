"""Generalized groups are equivalence classes (issue 21, item 6).

Each row's cells belong to that row's sensitive value (ARX, sdcMicro): rows of one group
with different cells are separate classes (``mixed_groups="split"``, the default) or an
error naming the group (``"refuse"``), never one bucket whose values are pooled over the
rows. A row whose cells fit no one in its population is an error naming the row.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxent_privacy import Bucketized, Generalized, MaxEntModel, ReleaseError, attacks
from maxent_privacy.anonymize.mondrian import mondrian
from maxent_privacy.datasets_byun import byun2008_tables


def one_line(excinfo) -> str:
    msg = str(excinfo.value)
    assert "\n" not in msg
    return msg


def ann_release(**kw) -> Generalized:
    """Rows ("20-29", Flu) and ("30-39", HIV) published in one group ``g1``."""
    rows = pd.DataFrame({"age": ["20-29", "30-39"], "d": ["Flu", "HIV"], "g": ["g1", "g1"]})
    return Generalized(rows, qi=["age"], sa="d", group="g", **kw)


ANN = pd.DataFrame({"age": [25, 35]}, index=pd.Index(["Ann", "Bo"], name="name"))


# -- the reading: one class per distinct cells ---------------------------------------------
@pytest.mark.parametrize("solver", ["maxent", "CLARABEL"])
def test_ann_has_flu(solver):
    release = ann_release()
    assert release.n_groups == 2 and release.split_groups == {"g1": ["g1/1", "g1/2"]}
    post = MaxEntModel(release, populations=[ANN]).solve(solver=solver).person_posterior()
    assert post.loc["Ann", "Flu"] == pytest.approx(1.0, abs=1e-6)  # was 0.5 (pooled)
    assert post.loc["Bo", "HIV"] == pytest.approx(1.0, abs=1e-6)


def test_split_with_placements_maxent_agrees_with_clarabel():
    """A split group next to a group that overlaps both of its classes: people may sit in
    either, so the model has placements; both solvers give the same posteriors, and no
    one aged 20-29 can hold HIV (the only HIV row says 30-39)."""
    rows = pd.DataFrame(
        {
            "age": ["20-29", "30-39", "20-39", "20-39"],
            "d": ["Flu", "HIV", "Cold", "Flu"],
            "g": [1, 1, 2, 2],
        }
    )
    release = Generalized(rows, qi=["age"], sa="d", group="g")
    assert release.frame["g"].tolist() == ["1/1", "1/2", "2", "2"]
    people = pd.DataFrame({"age": [25, 35, 22, 31]}, index=["Ann", "Bo", "Cy", "Di"])
    model = MaxEntModel(release, populations=[people])
    assert model.classes["groups"].str.contains("r1:1/1").any()
    ours = model.solve(solver="maxent").person_posterior()
    ref = model.solve(solver="CLARABEL").person_posterior()
    # Clarabel's own accuracy is about 1e-5 here
    pd.testing.assert_frame_equal(ours, ref[ours.columns], atol=1e-4, check_exact=False)
    assert ours.loc[["Ann", "Cy"], "HIV"].max() < 1e-6
    assert ours.loc[["Bo", "Di"], "HIV"].min() > 0.1


def test_cells_are_compared_by_what_they_cover():
    rows = pd.DataFrame(
        {
            "age": ["[20-29]", "20-29", "[20, 29]", "[25-25]", "25"],
            "sex": ["*", "Person", "*", "{M, F}", "{F,M}"],
            "d": list("abcde"),
            "g": [1, 1, 1, 2, 2],
        }
    )
    release = Generalized(rows, ["age", "sex"], "d", "g", any_values=("*", "Person"))
    assert release.split_groups == {} and release.frame["g"].tolist() == [1, 1, 1, 2, 2]


def test_split_labels_keep_the_group_and_only_split_groups_change():
    rows = pd.DataFrame(
        {
            "age": ["20-29", "30-39", "20-29", "40-49", "40-49"],
            "d": ["a", "b", "c", "d", "e"],
            "g": [7, 7, 7, 8, 8],
        }
    )
    release = Generalized(rows, ["age"], "d", "g")
    # parts numbered by first row; the other groups keep their label, as text
    assert release.frame["g"].tolist() == ["7/1", "7/2", "7/1", "8", "8"]
    assert release.split_groups == {7: ["7/1", "7/2"]}
    assert release.classes()["d"].to_dict() == {"7/1": ["a", "c"], "7/2": ["b"], "8": ["d", "e"]}
    assert release.mixed_groups == "split"  # "auto": the release has generalized cells


def test_exact_values_with_group_ids_are_buckets_unless_told():
    """Every cell an exact value: an Anatomy-style table, read as buckets by default
    ("auto"); "split" and "bucket" say which reading to use whatever the cells."""
    exact = pd.DataFrame({"age": [25, 35], "d": ["Flu", "HIV"], "g": [1, 1]})
    bucket = Generalized(exact, ["age"], "d", "g")
    assert (bucket.mixed_groups, bucket.n_groups, bucket.split_groups) == ("bucket", 1, {})
    post = MaxEntModel(bucket, populations=[ANN]).solve().person_posterior()
    assert post.loc["Ann", "Flu"] == pytest.approx(0.5, abs=1e-6)
    split = Generalized(exact, ["age"], "d", "g", mixed_groups="split")
    post = MaxEntModel(split, populations=[ANN]).solve().person_posterior()
    assert post.loc["Ann", "Flu"] == pytest.approx(1.0, abs=1e-6)
    # formats=None reads "20-29" as an exact value: buckets too
    assert ann_release(formats=None).mixed_groups == "bucket"
    # and "bucket" on generalized cells is the pooled reading, asked for by name
    pooled = ann_release(mixed_groups="bucket")
    post = MaxEntModel(pooled, populations=[ANN]).solve().person_posterior()
    assert post.loc["Ann", "Flu"] == pytest.approx(0.5, abs=1e-6)


def test_split_labels_that_clash_are_refused():
    rows = pd.DataFrame({"age": ["20-29", "30-39", "5"], "d": list("abc"), "g": [1, 1, "1/2"]})
    with pytest.raises(ReleaseError) as e:
        Generalized(rows, ["age"], "d", "g")
    assert one_line(e) == (
        "groups 1 and '1/2' both read '1/2' once the groups whose rows carry different cells "
        "are split; give them other labels"
    )


def test_refuse_names_the_group_and_two_rows():
    with pytest.raises(ReleaseError) as e:
        ann_release(mixed_groups="refuse")
    assert one_line(e) == (
        "group 'g1' has rows with different quasi-identifier cells: row 0 (age='20-29') and "
        "row 1 (age='30-39'); each row's cells belong to its own value, so the group is "
        "several equivalence classes: give each its own group label, or pass "
        "mixed_groups='split'"
    )
    rows = pd.DataFrame(
        {
            "age": ["20-29", "20-29", "20-29"],
            "zip": ["021**", "021**", "0213*"],
            "d": ["a", "b", "c"],
            "g": [4, 4, 4],
        },
        index=[10, 11, 12],
    )
    with pytest.raises(ReleaseError) as e:
        Generalized(rows, ["age", "zip"], "d", "g", mixed_groups="refuse")
    # only the cells that differ are shown
    assert "group 4 has rows with different" in one_line(e)
    assert "row 10 (zip='021**') and row 12 (zip='0213*')" in one_line(e)
    # groups whose rows share their cells are accepted either way
    byun = byun2008_tables()
    same = Generalized(byun["figure2"].frame, ["age", "gender"], "diagnosis", "group",
                       any_values=("*", "Person"), mixed_groups="refuse")  # fmt: skip
    assert same.n_groups == 2


@pytest.mark.parametrize("bad", ["pool", None, 1, ["split"]])
def test_mixed_groups_must_be_one_of_the_readings(bad):
    with pytest.raises(ReleaseError) as e:
        ann_release(mixed_groups=bad)
    assert one_line(e).startswith(
        "mixed_groups must be 'auto', 'split', 'refuse' or 'bucket', got "
    )


# -- a row that fits no one ----------------------------------------------------------------
def arx_rows(age_of_third="30-39") -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": ["20-29", "20-29", age_of_third, "*"],
            "zip": ["021**", "021**", "021**", "*"],
            "d": ["Flu", "HIV", "Cold", "Flu"],
            "g": [1, 1, 2, 3],
        }
    )


PEOPLE = pd.DataFrame(
    {"age": [23, 27, 35, 61], "zip": ["02139", "02141", "10001", "02139"]},
    index=pd.Index(["Ann", "Bo", "Cy", "Di"], name="name"),
)


def test_a_row_that_fits_no_one_is_an_error_naming_it():
    # everyone fits some row (Cy and Di the suppressed one), but no one is 30-39 in 021**
    release = Generalized(arx_rows(), ["age", "zip"], "d", "g")
    with pytest.raises(ReleaseError) as e:
        MaxEntModel(release, populations=[PEOPLE])
    assert one_line(e) == (
        "release 1: row 2 (group 2: age='30-39', zip='021**') fits no one in the population: "
        "no one has all of these values"
    )
    with pytest.raises(ReleaseError) as e:
        MaxEntModel(Generalized(arx_rows("40-49"), ["age", "zip"], "d", "g"), populations=[PEOPLE])
    assert one_line(e).endswith("fits no one in the population: no one's age is in '40-49'")
    # the attacks match the population the same way
    with pytest.raises(ReleaseError) as e:
        attacks.intersection([release], [PEOPLE.reset_index()])
    assert "row 2 (group 2: age='30-39', zip='021**') fits no one" in one_line(e)
    # a few people asked about need not cover every row
    assert release.compatible(PEOPLE.reset_index().iloc[:1], "name").values.tolist() == [
        ["Ann", 1],
        ["Ann", 3],
    ]


def test_the_row_is_named_in_a_pooled_model_too():
    truth = pd.DataFrame(
        {
            "pid": ["Ann", "Bo", "Cy", "Di"],
            "age": [23, 27, 35, 61],
            "d": ["Flu", "HIV", "Cold", "Flu"],
        }
    ).assign(zip=["02139", "02141", "10001", "02139"], b=1)
    bucket = Bucketized(truth, ["age", "zip"], "d", "b", person="pid")
    general = Generalized(arx_rows(), ["age", "zip"], "d", "g")
    with pytest.raises(ReleaseError) as e:
        MaxEntModel([bucket, general], populations=[None, PEOPLE])
    assert one_line(e).startswith("release 2: row 2 (group 2: age='30-39', zip='021**') fits no")


def test_a_person_who_fits_no_row_is_named_first():
    # Di (45, zip x) fits no row, and no one fits the row "<20": the person comes first
    people = PEOPLE.assign(age=[23, 27, 35, 45], zip=["02139", "02141", "02139", "x"])
    rows = arx_rows().assign(age=["20-29", "20-29", "30-39", "<20"])
    release = Generalized(rows, ["age", "zip"], "d", "g")
    with pytest.raises(ReleaseError) as e:
        MaxEntModel(release, populations=[people])
    assert one_line(e) == (
        "release 1: person 'Di' of the population fits no group of the release: no cell of "
        "column 'age' covers age 45 (cells: '20-29', '30-39', '<20')"
    )


# -- releases whose groups share their cells are unchanged ---------------------------------
def test_byun_and_mondrian_releases_are_unchanged():
    byun = byun2008_tables()
    for release in byun["releases"]:
        assert release.split_groups == {}
        assert release.frame["group"].tolist() == sorted(release.frame["group"].tolist())
    pops = [p.set_index("name") for p in byun["populations"]]
    post = MaxEntModel(list(byun["releases"]), populations=pops).solve().person_posterior()
    assert post.loc["Alice", "Cancer"] == pytest.approx(1.0, abs=1e-6)
    assert post.loc["Tom", "Asthma"] == pytest.approx(0.5, abs=1e-6)
    rng = np.random.default_rng(3)
    table = pd.DataFrame(
        {
            "age": rng.integers(20, 70, 60),
            "sex": rng.choice(["M", "F"], 60),
            "d": rng.choice(list("abcd"), 60),
        }
    )
    for relaxed in (False, True):
        release = mondrian(table, ["age", "sex"], "d", k=4, c=0.75, relaxed=relaxed)
        assert release.split_groups == {}
        assert release.frame["group"].dtype.kind == "i"


# -- against brute force: every row matched to one person ----------------------------------
AGES = ["20-24", "25-29", "20-29", "*"]


@st.composite
def mixed_releases(draw):
    """3-5 rows in 1-2 groups, cells drawn freely (groups mix cells), one person per row
    with an age inside the row's cell (the truth)."""
    n = draw(st.integers(3, 5))
    cells = draw(st.lists(st.sampled_from(AGES), min_size=n, max_size=n))
    values = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    groups = draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
    ages = []
    for cell in cells:
        lo, hi = (20, 29) if cell in ("*", "20-29") else map(int, cell.split("-"))
        ages.append(draw(st.integers(lo, hi)))
    rows = pd.DataFrame({"age": cells, "d": values, "g": groups})
    people = pd.DataFrame({"age": ages}, index=[f"p{i}" for i in range(n)])
    return rows, people


def possible_pairs(release: Generalized, people: pd.DataFrame) -> set:
    """(person, value) of every one-to-one matching of people to rows that cover them."""
    rows = release.frame.reset_index(drop=True)
    out = set()
    for perm in itertools.permutations(range(len(rows))):
        if all(
            age in release.cell("age", rows["age"][perm[i]]) for i, age in enumerate(people["age"])
        ):
            out |= {(p, rows["d"][perm[i]]) for i, p in enumerate(people.index)}
    return out


@given(mixed_releases())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_posterior_support_is_the_possible_worlds(instance):
    """One release: the model's support is exactly the values some matching of people
    to rows gives (the fractional matchings of a bipartite graph are integral's hull)."""
    rows, people = instance
    release = Generalized(rows, ["age"], "d", "g")
    post = MaxEntModel(release, populations=[people]).solve().person_posterior()
    possible = possible_pairs(release, people)
    for p in people.index:
        for v in post.columns:
            if (p, v) in possible:
                assert post.loc[p, v] > 1e-6, (p, v)
            else:
                assert post.loc[p, v] < 1e-6, (p, v)
