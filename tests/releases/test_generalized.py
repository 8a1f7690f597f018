"""Generalized releases: cell syntax, validation, matching a population."""

from __future__ import annotations

import doctest

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxent_privacy import ReleaseError, datasets_byun, generalized
from maxent_privacy.datasets_byun import byun2008_tables
from maxent_privacy.generalized import Cell, Generalized, covers, parse_cell


def one_line(excinfo) -> str:
    msg = str(excinfo.value)
    assert "\n" not in msg
    return msg


@pytest.mark.parametrize("module", [generalized, datasets_byun])
def test_docstring_examples(module):
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0


# -- cells -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cell, value, expected",
    [
        ("[21-25]", 21, True),
        ("[21-25]", 25, True),
        ("[21 - 25]", 23, True),
        ("[21 - 25]", 20, False),
        ("[21-25]", 25.5, False),
        ("[21-25]", "23", True),
        ("[21-25]", "abc", False),
        ("[-5--1]", -3, True),
        ("[0.5-1.5]", 1.5, True),
        ("[1e2-2e2]", 150, True),
        ("{a, b}", "a", True),
        ("{a,b}", "b", True),
        ("{a, b}", "c", False),
        ("{21, 22}", 22, True),
        ("{21, 22}", 23, False),
        ("*", "anything", True),
        ("*", 3.5, True),
        ("Male", "Male", True),
        ("Male", "male", False),
        (" Male ", "Male", True),
        ("21", 21, True),
        ("21", 21.0, True),
        (21, "21", True),
        (21, 22, False),
    ],
)
def test_covers(cell, value, expected):
    assert covers(cell, value) is expected


def test_any_values():
    assert covers("Person", "Female", any_values=("*", "Person"))
    assert not covers("Person", "Female")  # an exact value by default
    assert covers("ANY", 3, any_values="ANY")
    assert parse_cell("*").kind == "any"
    # in our own syntax "*" is "any" only as an any_value (formats="auto" reads it as
    # suppression whatever any_values says: tests/test_formats.py)
    assert parse_cell("*", any_values=("Person",), formats="ours").kind == "exact"


def test_parse_cell_kinds():
    assert parse_cell("[21 - 25]") == Cell("interval", "[21 - 25]", lo=21.0, hi=25.0)
    assert parse_cell("[3-3]").lo == 3.0
    assert parse_cell("{b, a, b}").values == ("a", "b")
    assert parse_cell("Flu") == Cell("exact", "Flu", values=("Flu",))
    assert parse_cell(7).kind == "exact"
    assert 7 in parse_cell("[5-9]")


@pytest.mark.parametrize(
    "cell, words",
    [
        ("[25-21]", ["'age'", "'[25-21]'", "above upper bound"]),
        ("[a-b]", ["'age'", "'[a-b]'", "malformed interval"]),
        ("[21-25", ["'age'", "'[21-25'", "malformed interval"]),
        ("21-25]", ["'age'", "malformed interval"]),
        ("[21, 25]", ["'age'", "malformed interval"]),
        ("[]", ["'age'", "malformed interval"]),
        ("{}", ["'age'", "'{}'", "empty member"]),
        ("{a, }", ["'age'", "empty member"]),
        ("{a, b", ["'age'", "malformed set"]),
        ("  ", ["'age'", "empty generalized value"]),
    ],
)
def test_malformed_cells_name_column_and_value(cell, words):
    # our own syntax: [21, 25] is malformed there (formats="auto" reads it as ARX's
    # closed interval, tests/test_formats.py)
    with pytest.raises(ReleaseError) as e:
        parse_cell(cell, column="age", formats="ours")
    msg = one_line(e)
    for word in words:
        assert word in msg


def test_malformed_cell_in_a_release_names_the_column():
    frame = pd.DataFrame({"age": ["[21-25]", "[30-20]"], "d": ["x", "y"], "g": [1, 1]})
    with pytest.raises(ReleaseError, match=r"column 'age' has an empty interval '\[30-20\]'"):
        Generalized(frame, ["age"], "d", "g")
    frame = pd.DataFrame({"zip": ["[a-b]", "1"], "d": ["x", "y"], "g": [1, 1]})
    with pytest.raises(ReleaseError, match=r"column 'zip' has a malformed interval '\[a-b\]'"):
        Generalized(frame, ["zip"], "d", "g")


# -- validation ------------------------------------------------------------------------


@pytest.fixture
def fig2() -> Generalized:
    return byun2008_tables()["figure2"]


def test_sizes_and_repr(fig2):
    assert fig2.n_records == 4 and fig2.n_groups == 2
    assert fig2.sa_values == ["Alzheimer", "Asthma", "Diabetes", "Flu"]
    assert repr(fig2) == (
        "Generalized(4 records, 2 groups, qi=['age', 'gender'], sa='diagnosis', group='group')"
    )
    assert fig2.any_values == ("*", "Person")
    assert fig2.cell("age", "[21 - 25]").hi == 25.0


def test_repr_with_person():
    frame = pd.DataFrame({"id": ["a", "b"], "z": ["*", "*"], "d": [1, 2], "g": [1, 1]})
    release = Generalized(frame, "z", "d", "g", person="id")
    assert release.qi == ["z"]
    assert repr(release).endswith("person='id')")


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        (dict(qi=["agee"], sa="diagnosis", group="group"), "quasi-identifier column 'agee'"),
        (dict(qi=["age"], sa="dx", group="group"), "sensitive column 'dx'"),
        (dict(qi=["age"], sa="diagnosis", group="grp"), "group column 'grp'"),
        (dict(qi=["age"], sa="diagnosis", group="group", person="pid"), "person column 'pid'"),
        (dict(qi=["age"], sa="age", group="group"), "column 'age' is given more than one role"),
        (dict(qi=[], sa="diagnosis", group="group"), "at least one quasi-identifier"),
    ],
)
def test_bad_roles(fig2, kwargs, pattern):
    with pytest.raises(ReleaseError, match=pattern) as e:
        Generalized(fig2.frame, **kwargs)
    one_line(e)


def test_bad_frames(fig2):
    with pytest.raises(ReleaseError, match="needs a pandas DataFrame"):
        Generalized([1, 2], ["age"], "diagnosis", "group")
    with pytest.raises(ReleaseError, match="no rows"):
        Generalized(fig2.frame.iloc[:0], ["age"], "diagnosis", "group")
    frame = fig2.frame.copy()
    frame.loc[2, "age"] = None
    with pytest.raises(ReleaseError, match=r"column 'age' has a missing value \(row 2\)"):
        Generalized(frame, ["age", "gender"], "diagnosis", "group")
    frame = fig2.frame.assign(pid=["a", "b", "a", "c"])
    with pytest.raises(ReleaseError, match="person id 'a' occurs in more than one row"):
        Generalized(frame, ["age"], "diagnosis", "group", person="pid")
    with pytest.raises(ReleaseError, match="any_values must be non-empty strings"):
        Generalized(fig2.frame, ["age"], "diagnosis", "group", any_values=("",))


def test_classes(fig2):
    classes = fig2.classes()
    assert classes.index.tolist() == [1, 2]
    assert classes["size"].tolist() == [2, 2]
    assert classes["age"].tolist() == ["[21 - 25]", "[50 - 60]"]
    assert classes["diagnosis"].tolist() == [["Asthma", "Flu"], ["Alzheimer", "Diabetes"]]


def test_classes_of_mixed_groups():
    """Rows of one group with different cells are separate classes (split); one cell
    written two ways stays one class and shows both spellings."""
    frame = pd.DataFrame(
        {"z": ["1", "2", "[3-4]", "3-4"], "d": ["x", "y", "x", "z"], "g": [1, 1, 2, 2]}
    )
    classes = Generalized(frame, ["z"], "d", "g").classes()
    assert classes.index.tolist() == ["1/1", "1/2", "2"]
    assert classes["z"].tolist() == ["1", "2", ("3-4", "[3-4]")]
    assert classes["d"].tolist() == [["x"], ["y"], ["x", "z"]]


# -- compatible --------------------------------------------------------------------------


def test_compatible_byun():
    t = byun2008_tables()
    pairs = t["figure2"].compatible(t["populations"][0], "name")
    assert pairs.values.tolist() == [["Tom", 1], ["Mike", 1], ["Bob", 2], ["Eve", 2]]
    pairs = t["figure4"].compatible(t["populations"][1], "name")
    assert dict(pairs.values.tolist()) == {
        "Tom": 1,
        "Mike": 1,
        "Bob": 2,
        "Eve": 3,
        "Alice": 1,
        "Hank": 2,
        "Sal": 3,
    }
    # Alice (27, female) fits no class of Figure 2: she is a new patient
    alice = t["populations"][1].iloc[[4]]
    assert t["figure2"].compatible(alice, "name").empty


def test_compatible_overlapping_and_mixed_groups():
    frame = pd.DataFrame(
        {
            "age": ["[20-30]", "[25-35]", "40", "{41, 42}"],
            "sex": ["*", "M", "F", "{F, M}"],
            "d": ["a", "b", "c", "d"],
            "g": ["x", "y", "z", "z"],
        }
    )
    release = Generalized(frame, ["age", "sex"], "d", "g")
    people = pd.DataFrame(
        {"id": [1, 2, 3, 4, 5], "age": [27, 27, 40, 42, 50], "sex": ["M", "F", "F", "M", "M"]}
    )
    pairs = release.compatible(people, "id")
    # group z's rows carry different cells: two classes, each person in the one that fits
    assert pairs.values.tolist() == [[1, "x"], [1, "y"], [2, "x"], [3, "z/1"], [4, "z/2"]]
    assert list(pairs.columns) == ["id", "g"]


def test_compatible_population_errors(fig2):
    people = pd.DataFrame({"name": ["a", "b"], "age": [21, 22], "gender": ["Male", "Male"]})
    with pytest.raises(ReleaseError, match="person id column 'who'"):
        fig2.compatible(people, "who")
    with pytest.raises(ReleaseError, match="quasi-identifier column 'gender'"):
        fig2.compatible(people.drop(columns="gender"), "name")
    with pytest.raises(ReleaseError, match="person id 'a' occurs more than once"):
        fig2.compatible(people.assign(name=["a", "a"]), "name")
    with pytest.raises(
        ReleaseError, match=r"population column 'age' has a missing value \(row 1\)"
    ):
        fig2.compatible(people.assign(age=[21, None]), "name")
    with pytest.raises(ReleaseError, match="population needs a pandas DataFrame"):
        fig2.compatible([1], "name")


def test_compatible_is_vectorized_enough():
    """Thousands of classes against thousands of persons in well under a second each."""
    rng = np.random.default_rng(0)
    n = 4000
    lo = rng.integers(17, 80, n)
    frame = pd.DataFrame(
        {
            "age": [f"[{a}-{a + 4}]" for a in lo],
            "sex": rng.choice(["M", "F", "*"], n),
            "d": rng.choice(list("abcde"), n),
            "g": np.arange(n) // 4,
        }
    )
    release = Generalized(frame, ["age", "sex"], "d", "g")
    people = pd.DataFrame(
        {"id": np.arange(n), "age": rng.integers(17, 90, n), "sex": rng.choice(["M", "F"], n)}
    )
    pairs = release.compatible(people, "id")
    # spot-check against the scalar definition (groups of rows with different cells are
    # split: the release's frame holds the classes)
    sample = pairs.sample(200, random_state=0)
    for pid, g in sample.itertuples(index=False):
        rows = release.frame[release.frame["g"] == g]
        person = people.loc[pid]
        assert any(
            covers(a, person["age"]) and covers(s, person["sex"])
            for a, s in zip(rows["age"], rows["sex"], strict=True)
        )


CELLS = st.one_of(
    st.tuples(st.integers(0, 9), st.integers(0, 4)).map(lambda t: f"[{t[0]}-{t[0] + t[1]}]"),
    st.tuples(st.integers(0, 9), st.integers(0, 4)).map(lambda t: f"[{t[0]} - {t[0] + t[1]}]"),
    st.sets(st.integers(0, 9), min_size=1, max_size=3).map(
        lambda s: "{" + ", ".join(map(str, sorted(s))) + "}"
    ),
    st.integers(0, 9).map(str),
    st.just("*"),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(CELLS, st.sampled_from(["A", "B", "*", "{A, B}"]), st.integers(0, 3)),
        min_size=1,
        max_size=8,
    ),
    people=st.lists(st.tuples(st.integers(0, 10), st.sampled_from(["A", "B"])), max_size=8),
)
def test_compatible_matches_the_scalar_definition(rows, people):
    frame = pd.DataFrame(rows, columns=["x", "y", "g"]).assign(s="v")
    release = Generalized(frame, ["x", "y"], "s", "g")
    population = pd.DataFrame(people, columns=["x", "y"]).assign(id=range(len(people)))
    got = {tuple(p) for p in release.compatible(population, "id").values.tolist()}
    classes = release.frame[["x", "y", "g"]].itertuples(index=False)
    want = {
        (pid, g)
        for cx, cy, g in classes
        for pid, (x, y) in enumerate(people)
        if covers(cx, x) and covers(cy, y)
    }
    assert got == want
    # with a generalized cell ("auto" reads "split"), every class is one cell per column
    # (up to spelling), each from the group it splits; exact values only: buckets
    assert release.mixed_groups == ("split" if release.generalized else "bucket")
    for _, part in release.frame.groupby("g"):
        for col in ("x", "y"):
            distinct = len({release.cell(col, raw).key() for raw in part[col]})
            assert distinct == 1 or release.mixed_groups == "bucket"
    assert {g.split("/")[0] for g in map(str, release.frame["g"])} == {str(g) for *_, g in rows}
