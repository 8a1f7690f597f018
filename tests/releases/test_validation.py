"""Bad input at the boundary: a one-line MaxEntError naming the culprit (issue 12).

Each section tries one class of bad input, as a user would make it by mistake; the
hypothesis strategies in test_validation_hostile.py generate more of the same.
"""

from decimal import Decimal
from fractions import Fraction

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest

from maxent_privacy import (
    Bucketized,
    KnowledgeError,
    MaxEntError,
    MaxEntModel,
    ReleaseError,
    datasets,
)
from maxent_privacy._validation import shown
from maxent_privacy.anonymize import (
    anatomize,
    check_l_diversity,
    history_guided,
    rebucketize,
    robust_anonymize,
)
from maxent_privacy.data import check_input_table, check_same_schema
from maxent_privacy.generalized import Generalized
from maxent_privacy.knowledge import count_having, soft, vague
from maxent_privacy.mondrian import mondrian
from maxent_privacy.robustness import (
    Prior,
    compare_posteriors,
    delta_ceil,
    delta_max,
    delta_report,
    exact_posterior,
    permanent,
    query_error,
    robustness_table,
    satisfies_delta_bound,
    wong2010_example,
)

RELEASES = [Bucketized, Generalized]


def clear(excinfo, *culprits) -> str:
    """The error's message: one line, short, naming every culprit given."""
    msg = str(excinfo.value)
    assert isinstance(excinfo.value, MaxEntError)
    assert "\n" not in msg and len(msg) < 400, msg
    for c in culprits:
        assert str(c) in msg, (c, msg)
    return msg


@pytest.fixture
def table():
    return pd.DataFrame(
        {
            "sex": ["m", "f", "m", "f"],
            "age": [30, 31, 30, 32],
            "disease": ["Flu", "HIV", "Flu", "Cold"],
            "bucket": [1, 1, 2, 2],
            "pid": [11, 12, 13, 14],
        }
    )


def make(cls, frame, **kw):
    args = dict(qi=["sex", "age"], sa="disease", group="bucket")
    args.update(kw)
    return cls(frame, **args)


# ----------------------------------------------------------------- 1. release tables
@pytest.mark.parametrize("cls", RELEASES)
@pytest.mark.parametrize("col", ["sex", "disease", "bucket", "pid"])
def test_duplicate_column_name(cls, table, col):
    frame = pd.concat([table, table[[col]]], axis=1)  # two columns named col
    with pytest.raises(ReleaseError) as e:
        make(cls, frame, person="pid")
    assert "occurs 2 times" in clear(e, repr(col))


@pytest.mark.parametrize("cls", RELEASES)
def test_duplicate_name_of_an_unused_column_is_ignored(cls, table):
    frame = pd.concat([table, table[["pid"]], table[["pid"]]], axis=1).rename(
        columns={"pid": "note"}
    )
    frame.columns = ["sex", "age", "disease", "bucket", "note", "note", "note"]
    assert make(cls, frame).n_records == 4


@pytest.mark.parametrize("cls", RELEASES)
@pytest.mark.parametrize(
    "col, role",
    [("sex", "quasi-identifier"), ("disease", "sensitive"), ("bucket", "group"), ("pid", "person")],
)
@pytest.mark.parametrize(
    "value",
    [["a", "b"], {"a": 1}, {"a", "b"}, ("a", 1), frozenset({"a"}), np.array([1, 2])],
    ids=["list", "dict", "set", "tuple", "frozenset", "array"],
)
def test_cell_that_is_not_a_single_value(cls, table, col, role, value):
    frame = table.astype({col: object})
    frame.at[2, col] = value
    with pytest.raises(ReleaseError) as e:
        make(cls, frame, person="pid")
    clear(e, f"{role} column {col!r}", "row 2", type(value).__name__)


@pytest.mark.parametrize("cls", RELEASES)
def test_bad_cell_found_on_a_labelled_index(cls, table):
    frame = table.astype({"sex": object}).set_axis(["a", "b", "c", "d"])
    frame.at["d", "sex"] = ["m"]
    with pytest.raises(ReleaseError) as e:
        make(cls, frame)
    clear(e, "'sex'", "row 'd'")


@pytest.mark.parametrize("cls", RELEASES)
def test_bad_category(cls, table):
    frame = table.astype({"sex": object})
    frame["sex"] = pd.Categorical([("m",), "f", ("m",), "f"])
    with pytest.raises(ReleaseError) as e:
        make(cls, frame)
    clear(e, "'sex'", "row 0", "tuple")


@pytest.mark.parametrize("cls", RELEASES)
@pytest.mark.parametrize("col", ["sex", "age", "disease", "bucket", "pid"])
@pytest.mark.parametrize("missing", [None, np.nan, pd.NA, pd.NaT], ids=str)
def test_missing_value(cls, table, col, missing):
    frame = table.astype({col: object})
    frame.at[3, col] = missing
    with pytest.raises(ReleaseError) as e:
        make(cls, frame, person="pid")
    clear(e, f"column {col!r} has a missing value (row 3)")


@pytest.mark.parametrize("cls", RELEASES)
@pytest.mark.parametrize(
    "frame, match",
    [
        (None, "needs a pandas DataFrame, got NoneType"),
        ({"sex": ["m"]}, "needs a pandas DataFrame, got dict"),
        (pd.Series(["m"], name="sex"), "needs a pandas DataFrame, got Series"),
        ([["m", 30, "Flu", 1]], "needs a pandas DataFrame, got list"),
        ("table.csv", "needs a pandas DataFrame, got str"),
    ],
)
def test_not_a_dataframe(cls, frame, match):
    with pytest.raises(ReleaseError, match=match) as e:
        make(cls, frame)
    clear(e)


@pytest.mark.parametrize("cls", RELEASES)
def test_no_rows(cls, table):
    with pytest.raises(ReleaseError, match="no rows") as e:
        make(cls, table.iloc[:0])
    clear(e)


@pytest.mark.parametrize("cls", RELEASES)
def test_no_columns(cls, table):
    with pytest.raises(ReleaseError, match="quasi-identifier column 'sex' is not in") as e:
        make(cls, pd.DataFrame())
    clear(e)


@pytest.mark.parametrize("cls", RELEASES)
@pytest.mark.parametrize("qi", [["sex"], [("t", "sex")]], ids=["name", "tuple"])
def test_multiindex_columns(cls, table, qi):
    frame = table.set_axis(pd.MultiIndex.from_product([["t"], table.columns]), axis=1)
    with pytest.raises(ReleaseError, match="MultiIndex columns") as e:
        cls(frame, qi=qi, sa="disease", group="bucket")
    clear(e, "('t', 'sex')")


@pytest.mark.parametrize("cls", RELEASES)
@pytest.mark.parametrize(
    "kwargs, culprit",
    [
        (dict(qi=None), "qi must be a column name or a list of column names, got NoneType"),
        (dict(qi=3), "got int 3"),
        (dict(qi=[["sex"]]), "quasi-identifier 1 of qi=[...] must be one column name, got list"),
        (dict(qi=["sex", {"age"}]), "quasi-identifier 2 of qi=[...]"),
        (dict(sa=["disease"]), "sa must be one column name, got list ['disease']"),
        (dict(sa={"disease"}), "sa must be one column name, got set"),
        (dict(group=["bucket"]), "group must be one column name, got list"),
        (dict(person=["pid"]), "person must be one column name, got list"),
        (dict(qi=["sex", "sex"]), "'sex' is given more than one role"),
    ],
)
def test_bad_role_arguments(cls, table, kwargs, culprit):
    with pytest.raises(ReleaseError) as e:
        make(cls, table, **kwargs)
    clear(e, culprit)


@pytest.mark.parametrize("cls", RELEASES)
def test_odd_but_valid_releases_still_work(cls, table):
    # numbers as column names, a categorical QI, a repeated index, infinite group ids
    frame = table.set_axis([0, 1, 2, 3, 4], axis=1)
    assert cls(frame, qi=[0, 1], sa=2, group=3).n_records == 4
    frame = table.astype({"sex": "category"}).set_axis([0, 0, 1, 1])
    assert make(cls, frame).n_groups == 2
    assert make(cls, table.assign(bucket=[1.0, 1.0, np.inf, np.inf])).n_groups == 2
    assert make(cls, table.astype(object)).n_records == 4  # object columns of scalars


def test_odd_but_valid_release_solves(table):
    frame = table.astype({"sex": "category", "age": object}).set_axis([0, 0, 1, 1])
    post = MaxEntModel(make(Bucketized, frame)).solve().posterior()
    assert np.allclose(post.sum(axis=1), 1)


def test_input_not_mutated(table):
    before = table.copy()
    make(Bucketized, table)
    make(Generalized, table)
    pd.testing.assert_frame_equal(table, before)


@pytest.fixture
def generalized_release():
    frame = pd.DataFrame({"age": ["[20-30]", "[20-30]"], "d": ["Flu", "HIV"], "g": [1, 1]})
    return Generalized(frame, qi=["age"], sa="d", group="g")


PEOPLE = pd.DataFrame({"name": ["a", "b"], "age": [21, 25]})


def test_population_valid(generalized_release):
    assert len(generalized_release.compatible(PEOPLE, "name")) == 2


@pytest.mark.parametrize(
    "people, id_column, culprits",
    [
        (
            PEOPLE.astype(object).assign(age=[21, [25]]),
            "name",
            ["population quasi-identifier column 'age'", "row 1", "list"],
        ),
        (
            PEOPLE.assign(name=[("a",), ("b",)]),
            "name",
            ["population person id column 'name'", "row 0"],
        ),
        (pd.concat([PEOPLE, PEOPLE[["age"]]], axis=1), "name", ["column 'age' occurs 2 times"]),
        (PEOPLE, ["name"], ["person must be one column name"]),
        (PEOPLE.to_dict(), "name", ["a population needs a pandas DataFrame, got dict"]),
    ],
)
def test_population_of_a_generalized_release(generalized_release, people, id_column, culprits):
    with pytest.raises(ReleaseError) as e:
        generalized_release.compatible(people, id_column)
    clear(e, *culprits)


# anonymizers share check_input_table: the same classes of bad table
@pytest.mark.parametrize(
    "change, culprit",
    [
        (lambda t: pd.concat([t, t[["age"]]], axis=1), "column 'age' occurs 2 times"),
        (
            lambda t: t.astype(object).assign(age=[[30], 31, 30, 32]),
            "quasi-identifier column 'age'",
        ),
        (lambda t: t.assign(disease=[{"Flu"}, "HIV", "Flu", "Cold"]), "sensitive column 'disease'"),
        (
            lambda t: t.assign(age=[30, np.nan, 30, 32]),
            "quasi-identifier column 'age' has a missing",
        ),
        (lambda t: t.assign(disease=[None, "HIV", "Flu", "Cold"]), "sensitive column 'disease'"),
        (
            lambda t: t.set_axis(pd.MultiIndex.from_product([["t"], t.columns]), axis=1),
            "MultiIndex",
        ),
        (lambda t: t.to_numpy(), "needs a pandas DataFrame, got ndarray"),
    ],
)
def test_check_input_table(table, change, culprit):
    with pytest.raises(ReleaseError) as e:
        check_input_table(change(table), ["sex", "age"], "disease", "group", "pid", "anatomize")
    clear(e, culprit)


def test_check_input_table_qi(table):
    with pytest.raises(ReleaseError) as e:
        check_input_table(table, None, "disease", "group", None, "anatomize")
    clear(e, "anatomize: qi must be a column name")


# ---------------------------------------------------------- 2. pooled release schemas
@pytest.fixture
def wang():
    d1, d2 = datasets.wang2008_figure1()

    def release(frame, qi=("gender", "zip"), sa="disease", **kw):
        return Bucketized(frame, list(qi), sa, kw.pop("group", "bucket"), person="pseudonym")

    return d1, d2, release


def test_same_schema_accepts_pooled_releases(wang):
    d1, d2, release = wang
    assert check_same_schema([release(d1), release(d2)]) is None
    assert check_same_schema(release(d1)) is None  # one release
    # group columns may be named differently, generalized releases hold cells
    other = release(d2.rename(columns={"bucket": "b"}), group="b")
    assert check_same_schema([release(d1), other]) is None
    gen = Generalized(
        d2.assign(zip="*"), ["gender", "zip"], "disease", "bucket", person="pseudonym"
    )
    assert check_same_schema([release(d1), gen]) is None


@pytest.mark.parametrize(
    "second, culprits",
    [
        (dict(qi=["gender"]), ["release 2", "lacks 'zip'"]),
        (dict(rename={"zip": "zipcode"}, qi=["gender", "zipcode"]), ["'zip'", "'zipcode'"]),
        (dict(qi=["zip", "gender"]), ["release 2", "another order"]),
        (dict(rename={"disease": "dx"}, sa="dx"), ["release 2", "'dx'", "'disease'"]),
        (dict(astype={"zip": str}), ["release 2", "'zip'", "text", "numbers"]),
        (dict(astype={"pseudonym": str}), ["release 2", "person id", "text", "numbers"]),
        (dict(astype={"disease": "category"}, codes=True), ["release 2", "'disease'"]),
    ],
)
def test_different_schemas(wang, second, culprits):
    d1, d2, release = wang
    frame = d2.rename(columns=second.get("rename", {})).astype(second.get("astype", {}))
    if second.get("codes"):
        frame["disease"] = frame["disease"].cat.codes
    other = release(frame, qi=second.get("qi", ("gender", "zip")), sa=second.get("sa", "disease"))
    with pytest.raises(ReleaseError) as e:
        check_same_schema([release(d1), release(d1), other])
    clear(e, *[c.replace("release 2", "release 3") for c in culprits])


def test_same_schema_first_release_differs(wang):
    d1, d2, release = wang
    with pytest.raises(ReleaseError) as e:
        check_same_schema([release(d1, qi=["gender"]), release(d2)])
    clear(e, "release 2", "has 'zip' in addition")


@pytest.mark.parametrize(
    "releases, culprit",
    [
        ([], "no release to pool"),
        (None, "releases must be a list"),
        ("release.csv", "releases must be a list"),
        (pd.DataFrame({"a": [1]}), "got DataFrame"),
        ("second is a frame", "release 2 is a DataFrame"),
    ],
)
def test_same_schema_not_releases(wang, releases, culprit):
    d1, d2, release = wang
    if isinstance(releases, str) and releases == "second is a frame":
        releases = [release(d1), d2]
    with pytest.raises(ReleaseError) as e:
        check_same_schema(releases)
    clear(e, culprit)


# Through the model: MaxEntModel([r1, r2]) calls check_same_schema before it reads a table.
@pytest.mark.parametrize(
    "qi, rename",
    [(["gender"], {}), (["gender", "zipcode"], {"zip": "zipcode"})],
)
def test_model_compares_schemas_first(wang, qi, rename):
    d1, d2, release = wang
    with pytest.raises(ReleaseError) as e:
        MaxEntModel([release(d1), release(d2.rename(columns=rename), qi=qi)])
    clear(e, "release 2", "'zip'")


def test_model_refuses_text_ids_against_numbers(wang):
    # today the two releases become 25 people instead of 15, silently
    d1, d2, release = wang
    with pytest.raises(ReleaseError) as e:
        MaxEntModel([release(d1), release(d2.astype({"pseudonym": str}))])
    clear(e, "release 2", "person id")


# ------------------------------------------------------------- 3. knowledge helpers
@pytest.fixture
def du_model():
    release = Bucketized(datasets.du2008_figure1(), ["gender", "degree"], "disease", "bucket")
    return MaxEntModel(release)


NAN, INF = float("nan"), float("inf")
NOT_NUMBERS = [
    ("0.3", "str"),
    (None, "NoneType"),
    (True, "bool"),
    (np.bool_(False), "bool"),
    ([0.3], "list"),
    (np.array([0.3, 0.4]), "ndarray"),
    (0.3 + 0j, "complex"),
    (cp.Constant(0.3), "Constant"),
]


@pytest.mark.parametrize(
    "p, eps, culprit",
    [
        (0.3, NAN, "eps must be a finite number, got nan"),
        (NAN, 0.1, "p must be a finite number, got nan"),
        (INF, 0.1, "p must be a finite number, got inf"),
        (-INF, 0.1, "p must be a finite number, got -inf"),
        (0.3, INF, "eps must be a finite number, got inf"),
        (0.3, -INF, "eps must be a finite number, got -inf"),
        (0.3, -0.1, "eps must be >= 0, got -0.1"),
        (1.2, 0.1, "probability 1.2 is outside [0, 1]"),
        (-0.2, 0.0, "probability -0.2 is outside [0, 1]"),
    ]
    + [(v, 0.1, f"p must be a number, got {t}") for v, t in NOT_NUMBERS]
    + [(0.3, v, f"eps must be a number, got {t}") for v, t in NOT_NUMBERS],
)
def test_vague_arguments(du_model, p, eps, culprit):
    expr = du_model.P("Flu", gender="male")
    with pytest.raises(KnowledgeError) as e:
        vague(expr, p, eps)
    clear(e, "vague()", culprit)
    assert du_model.facts == []


def test_vague_vector_expression(du_model):
    with pytest.raises(KnowledgeError) as e:
        vague(du_model.x, 0.3, 0.1)
    clear(e, "vague() needs one probability", "shape (")


def test_vague_constraint_for_expression(du_model):
    with pytest.raises(KnowledgeError) as e:
        vague(du_model.P("Flu", gender="male") == 0.3, 0.3, 0.1)
    clear(e, "vague() needs a cvxpy expression", "Equality")


@pytest.mark.parametrize(
    "p, eps",
    [
        (0.3, 0.1),
        (np.float32(0.3), np.float64(0.1)),
        (Fraction(1, 3), 0),
        (Decimal("0.3"), Decimal("0.05")),
        (np.array(0.3), 0.5),
        (1, 2.0),
    ],
)
def test_vague_numbers_accepted(du_model, p, eps):
    fact = vague(du_model.P("Flu", gender="male"), p, eps)
    assert fact.p == pytest.approx(float(p)) and fact.eps == pytest.approx(float(eps))


@pytest.mark.parametrize(
    "weight, culprit",
    [
        (INF, "weight must be a finite number, got inf"),
        (NAN, "weight must be a finite number, got nan"),
        (-INF, "weight must be a finite number, got -inf"),
        (0, "weight must be > 0, got 0"),
        (-1.5, "weight must be > 0, got -1.5"),
    ]
    + [(v, f"weight must be a number, got {t}") for v, t in NOT_NUMBERS],
)
def test_soft_weight(du_model, weight, culprit):
    with pytest.raises(KnowledgeError) as e:
        soft(du_model.P("Flu", gender="male") == 0.3, weight)
    clear(e, "soft()", culprit)


def test_soft_inf_no_longer_reaches_the_solver(du_model):
    # issue 12: soft(..., inf) used to fail later, inside the solver
    with pytest.raises(KnowledgeError, match="finite"):
        du_model.add(soft(du_model.P("Flu", gender="male") == 0.3, INF))
    assert du_model.facts == []
    du_model.add(soft(du_model.P("Flu", gender="male") == 0.3, np.float32(5)))
    assert len(du_model.facts) == 1


@pytest.mark.parametrize("fact", [0.3, True, "P(Flu) == 0.3", None])
def test_soft_fact(du_model, fact):
    with pytest.raises(KnowledgeError) as e:
        soft(fact, 1.0)
    clear(e, "soft() needs a fact")


@pytest.fixture
def people(du_model):
    iris = du_model.person("Iris", gender="female", degree="graduate")
    james = du_model.person("James", gender="male", degree="graduate")
    other = MaxEntModel(du_model.release).person("Ann", gender="female", degree="graduate")
    return {"iris": iris, "james": james, "other": other, "expr": du_model.P("Flu")}


@pytest.mark.parametrize(
    "persons, culprit",
    [
        ("iris iris", "person 'Iris' is listed twice"),
        ("iris james james", "person 'James' is listed twice"),
        (["iris", "James"], "item 2 of persons is a str"),
        ("expr", "item 1 of persons is a DivExpression"),
        (["iris", None], "item 2 of persons is a NoneType"),
        ("iris", "got Person (put it in a list)"),
        ("Iris", "persons must be a list of persons"),
        (None, "got NoneType"),
        (3, "got int"),
        ({"Iris": 1}, "got dict"),
        ([], "needs at least one person"),
        ("iris other", "different models"),
    ],
)
def test_count_having_persons(people, persons, culprit):
    if isinstance(persons, str) and persons != "Iris":
        names = persons.split()
        persons = people[names[0]] if persons == "iris" else [people[n] for n in names]
    elif isinstance(persons, list):
        persons = [people.get(p, p) if isinstance(p, str) else p for p in persons]
    with pytest.raises(KnowledgeError) as e:
        count_having("HIV", persons)
    clear(e, culprit)


@pytest.mark.parametrize(
    "s, culprit",
    [
        ([], "needs at least one sensitive value"),
        ((), "needs at least one sensitive value"),
        ({"a": 1}, "must be a single value, got dict"),
        (["HIV", ["Flu"]], "must be a single value, got list"),
        ("Cancer", "sensitive value 'Cancer'"),
    ],
)
def test_count_having_values(people, s, culprit):
    with pytest.raises(KnowledgeError) as e:
        count_having(s, [people["iris"]])
    clear(e, culprit)


def test_count_having_valid(people):
    # a value, a list, a set, a generator of persons
    assert count_having({"HIV", "Flu"}, (p for p in [people["iris"]])) is not None
    assert count_having("HIV", [people["iris"], people["james"]]) is not None


# ------------------------------------------------------------- 4. robustness inputs
@pytest.fixture
def wong():
    frame, prior = wong2010_example()
    return frame, prior, frame[frame["GID"] == "L2"]


# issue 12: satisfies_delta_bound returned True for a group without tuples; Wong et al.
# define an A-group by its N tuples (Definition 5) and the bound needs N >= r
@pytest.mark.parametrize(
    "call",
    [
        lambda g, p: satisfies_delta_bound(g, p, 2),
        lambda g, p: delta_report(g, p, 2),
        lambda g, p: delta_max(g, p, "Flu"),
        lambda g, p: exact_posterior(g, p),
    ],
    ids=["satisfies_delta_bound", "delta_report", "delta_max", "exact_posterior"],
)
def test_empty_group_is_not_vacuously_robust(wong, call):
    frame, prior, _ = wong
    with pytest.raises(ReleaseError) as e:
        call(frame.iloc[:0], prior)
    clear(e, "the group has no rows")


@pytest.mark.parametrize(
    "r",
    [1, 1.0, 0.5, 0, -2, NAN, INF, -INF, "2", None, True, [2], Fraction(1, 2), np.float64(0.9)],
    ids=repr,
)
@pytest.mark.parametrize(
    "call",
    [
        lambda f, p, g, r: satisfies_delta_bound(g, p, r),
        lambda f, p, g, r: delta_report(g, p, r),
        lambda f, p, g, r: delta_ceil(3, r, 0.1),
        lambda f, p, g, r: robustness_table(
            Bucketized(f, ["Gender", "Age"], "Disease", "GID"), p, r
        ),
        lambda f, p, g, r: robust_anonymize(f, ["Gender", "Age"], "Disease", r=r, prior=p),
    ],
    ids=["satisfies_delta_bound", "delta_report", "delta_ceil", "robustness_table", "robust"],
)
def test_r_out_of_range(wong, r, call):
    frame, prior, l2 = wong
    with pytest.raises(ReleaseError) as e:
        call(frame, prior, l2, r)
    clear(e, "r must be a number above 1")


@pytest.mark.parametrize(
    "group_of, culprit",
    [
        (lambda g: g.assign(Disease=[np.nan, "HIV"]), "sensitive column 'Disease' has a missing"),
        (lambda g: g.assign(Gender=[None, "Female"]), "prior attribute column 'Gender' has a"),
        (lambda g: g.assign(Disease=[["Flu"], "HIV"]), "sensitive column 'Disease' holds"),
        (lambda g: g.assign(Gender=[{"Female"}, "Female"]), "'Gender' holds {'Female'}"),
        (lambda g: pd.concat([g, g[["Disease"]]], axis=1), "'Disease' occurs 2 times"),
        (lambda g: g.drop(columns="Disease"), "sensitive column 'Disease' of the prior"),
        (lambda g: g.drop(columns="Gender"), "prior attribute 'Gender' is not a column"),
        (lambda g: g.to_dict(), "a group must be a pandas DataFrame, got dict"),
        (lambda g: None, "a group must be a pandas DataFrame, got NoneType"),
    ],
)
@pytest.mark.parametrize(
    "call",
    [
        lambda g, p: satisfies_delta_bound(g, p, 2),
        lambda g, p: delta_max(g, p, "HIV"),
        lambda g, p: exact_posterior(g, p),
    ],
    ids=["satisfies_delta_bound", "delta_max", "exact_posterior"],
)
def test_bad_groups(wong, group_of, culprit, call):
    frame, prior, l2 = wong
    with pytest.raises(MaxEntError) as e:
        call(group_of(l2.copy()), prior)
    clear(e, culprit)


def test_delta_report_missing_value_no_longer_dropped(wong):
    # a NaN sensitive value used to be left out of the counts: a report on another group
    frame, prior, l2 = wong
    with pytest.raises(ReleaseError, match="missing value"):
        delta_report(l2.assign(Disease=[np.nan, "HIV"]), prior, 2)


@pytest.mark.parametrize(
    "table, other, culprit",
    [
        ({"x": [0.1, -0.1], "y": [0.5, 0.5]}, None, "p(f : x) = -0.1 is not a probability"),
        ({"x": [0.1, NAN], "y": [0.5, 0.5]}, None, "p(f : x) = nan"),
        ({"x": [0.1, INF], "y": [0.5, 0.5]}, None, "p(f : x) = inf"),
        ({"x": [0.7, 0.1], "y": [0.5, 0.5]}, None, "'m' sums to 1.2, above 1"),
        ({"x": [0.1, 0.1], "y": [0.9, 0.5]}, "y", "'f' sums to 0.6, not 1"),
        ({"x": [Fraction(1, 10), 0.1], "y": [Fraction(8, 10), 0.9]}, "y", "'m' sums to 0.9"),
        ({"x": ["0.1", 0.1], "y": [0.9, 0.9]}, None, "p(m : x) = '0.1'"),
        ({"x": [True, 0.1], "y": [0.0, 0.9]}, None, "p(m : x) = True"),
        ({"x": [None, 0.1], "y": [0.9, 0.9]}, None, "p(m : x) = nan"),
    ],
)
def test_bad_prior_weights(table, other, culprit):
    index = pd.Index(["m", "f"], name="sex")
    with pytest.raises(KnowledgeError) as e:
        Prior(pd.DataFrame(table, index=index), "d", other=other)
    clear(e, culprit)


@pytest.mark.parametrize(
    "change, culprit",
    [
        (dict(index=pd.Index(["m", np.nan], name="sex")), "missing"),
        (dict(sa=["d"]), "the prior's sa must be one column name, got list"),
        (dict(table="dict"), "a prior needs a pandas DataFrame, got dict"),
        (dict(other="z"), "other='z' is not a column"),
    ],
)
def test_bad_prior_tables(change, culprit):
    ok = {"x": [0.1, 0.2], "y": [0.9, 0.8]}
    table = pd.DataFrame(ok, index=change.get("index", pd.Index(["m", "f"], name="sex")))
    if change.get("table") == "dict":
        table = ok
    with pytest.raises(KnowledgeError) as e:
        Prior(table, change.get("sa", "d"), other=change.get("other"))
    clear(e, culprit)


def test_valid_prior_tables():
    # every row a whole distribution: 1 (floats within 1e-9), with other or without
    index = pd.Index(["m", "f"], name="sex")
    col = pd.Series([0.1, 0.2], index=index)
    assert Prior(pd.DataFrame({"x": col, "y": 1 - col}), "d").p({"sex": "f"}, "x") == 0.2
    Prior(pd.DataFrame({"x": col, "rest": 1 - col}), "d", other="rest")


@pytest.mark.parametrize(
    "kwargs, culprit",
    [
        (dict(alpha=NAN), "alpha must be a finite number >= 0, got nan"),
        (dict(alpha=INF), "alpha must be a finite number >= 0, got inf"),
        (dict(alpha=-1), "got -1"),
        (dict(alpha="1"), "got '1'"),
        (dict(attributes=[]), "needs at least one attribute"),
        (dict(attributes=None), "attributes must be a list of column names"),
        (dict(attributes=["Gendr"]), "column 'Gendr' is not in the table"),
        (dict(frame=None), "Prior.estimate needs a pandas DataFrame, got NoneType"),
        (dict(frame="Gender"), "got str"),
        (dict(change=lambda f: f.assign(Gender=[np.nan, "a", "b", "c"])), "'Gender' has a miss"),
        (dict(change=lambda f: f.assign(Disease=[None, "a", "b", "c"])), "'Disease' has a miss"),
        (dict(change=lambda f: f.assign(Gender=[["M"], "a", "b", "c"])), "'Gender' holds"),
    ],
)
def test_bad_prior_estimate(wong, kwargs, culprit):
    frame, _, _ = wong
    change = kwargs.pop("change", lambda f: f)
    args = dict(frame=change(frame), attributes=["Gender"], sa="Disease")
    args.update(kwargs)
    with pytest.raises(MaxEntError) as e:
        Prior.estimate(**args)
    clear(e, culprit)


@pytest.mark.parametrize("weight", [NAN, INF, -INF, 0, -1, "1", True, [1.0]], ids=repr)
@pytest.mark.parametrize("where", ["knowledge", "compare_posteriors"])
def test_prior_weight(wong, weight, where):
    frame, prior, _ = wong
    release = Bucketized(frame, ["Gender", "Age"], "Disease", "GID")
    with pytest.raises(KnowledgeError) as e:
        if where == "knowledge":
            prior.knowledge(weight)
        else:
            compare_posteriors(release, prior, weight=weight)
    clear(e, "the prior's weight must be > 0 and finite")


@pytest.mark.parametrize(
    "call, culprit",
    [
        (lambda g, p: exact_posterior(g, p, method="fast"), "method must be 'auto'"),
        (lambda g, p: exact_posterior(g, p, method=None), "got None"),
        (
            lambda g, p: exact_posterior(g, p, samples=0),
            "samples must be a whole number >= 1, got 0",
        ),
        (lambda g, p: exact_posterior(g, p, samples=2.5), "got 2.5"),
        (lambda g, p: exact_posterior(g, p, max_states=-1), "max_states must be a whole number"),
        (lambda g, p: exact_posterior(g, p, max_states=NAN), "got nan"),
        (lambda g, p: exact_posterior(g, "prior"), "exact_posterior needs a Prior, got str"),
        (lambda g, p: delta_max(g, None, "HIV"), "delta_max needs a Prior, got NoneType"),
        (lambda g, p: delta_max(g, p, ["HIV"]), "x must be one sensitive value"),
        (lambda g, p: delta_max(g, p, "Cancer"), "value 'Cancer' does not occur in the group"),
        (lambda g, p: delta_report(g, None, 2), "prior must be a Prior or a list of Priors"),
        (lambda g, p: delta_report(g, [], 2), "prior must be a Prior or a list of Priors"),
        (lambda g, p: delta_report(g, [p, "x"], 2), "prior must be a Prior or a list"),
        (lambda g, p: delta_ceil(0, 2, 0.1), "the group size N must be a whole number >= 1, got 0"),
        (lambda g, p: delta_ceil(2.5, 2, 0.1), "got 2.5"),
        (lambda g, p: delta_ceil(3, 2, NAN), "f_max must be a probability in [0, 1], got nan"),
        (lambda g, p: delta_ceil(3, 2, "0.1"), "got '0.1'"),
        (lambda g, p: delta_ceil(3, 2, None), "got None"),
        (lambda g, p: delta_ceil(3, 2, 1.5), "got 1.5"),
        (lambda g, p: p.p("Gender=Male", "Flu"), "the signature must be a dict"),
        (lambda g, p: p.p({"Age": 3}, "Flu"), "the signature needs attribute 'Gender'"),
        (lambda g, p: p.weights(g.to_numpy(), ["Flu"]), "rows must be a pandas DataFrame"),
        (lambda g, p: p.binary("Flu"), "value 'Flu' has no column of its own"),
        (lambda g, p: permanent([[1, 2]]), "needs a square matrix, got 1 rows and 2 entries"),
        (lambda g, p: permanent([[1, 2], [3]]), "1 entries in row 1"),
        (lambda g, p: permanent([[NAN]]), "entry (0, 0) is nan, not a finite number"),
        (lambda g, p: permanent([["a"]]), "entry (0, 0) is 'a'"),
        (lambda g, p: permanent(None), "needs a square matrix of numbers, got NoneType"),
    ],
)
def test_bad_robustness_arguments(wong, call, culprit):
    _, prior, l2 = wong
    with pytest.raises(MaxEntError) as e:
        call(l2, prior)
    clear(e, culprit)


@pytest.mark.parametrize(
    "kwargs, culprit",
    [
        (dict(sample=0), "sample must be a whole number >= 1, got 0"),
        (dict(sample=-1), "got -1"),
        (dict(sample=1.5), "got 1.5"),
        (dict(max_states=-1), "max_states must be a whole number >= 0, got -1"),
        (dict(prior="wrong sa"), "a prior speaks of 'Illness'"),
        (dict(prior=None), "prior must be a Prior or a list of Priors"),
        (dict(release="frame"), "robustness_table needs a Bucketized release, got DataFrame"),
    ],
)
def test_bad_robustness_table_arguments(wong, kwargs, culprit):
    frame, prior, _ = wong
    args = dict(release=Bucketized(frame, ["Gender", "Age"], "Disease", "GID"), prior=prior, r=2)
    if kwargs.get("prior") == "wrong sa":
        kwargs["prior"] = Prior(prior.table, "Illness", other="Not Lung Cancer")
    if kwargs.get("release") == "frame":
        kwargs["release"] = frame
    args.update(kwargs)
    with pytest.raises(MaxEntError) as e:
        robustness_table(**args)
    clear(e, culprit)


@pytest.mark.parametrize(
    "kwargs, culprit",
    [
        (dict(queries=0), "queries must be a whole number >= 1, got 0"),
        (dict(queries=NAN), "got nan"),
        (dict(selectivity=NAN), "selectivity must be a number in (0, 1], got nan"),
        (dict(selectivity=0), "got 0"),
        (dict(selectivity="a"), "got 'a'"),
        (dict(qd=0), "qd must be a whole number in [1, 2], got 0"),
        (dict(qd=1.5), "got 1.5"),
        (dict(qd=3), "got 3"),
    ],
)
def test_bad_query_error_arguments(wong, kwargs, culprit):
    frame, _, _ = wong
    release = Bucketized(frame, ["Gender", "Age"], "Disease", "GID")
    with pytest.raises(ReleaseError) as e:
        query_error(release, **kwargs)
    assert isinstance(e.value, ValueError)  # as before, for callers catching ValueError
    clear(e, culprit)


@pytest.fixture
def robust_table():
    frame = pd.DataFrame({"sex": list("MMMMFFFF"), "age": [30, 31, 32, 33, 30, 31, 32, 33]})
    frame["disease"] = ["Flu", "HIV", "Cold", "Flu", "Flu", "HIV", "Cold", "HIV"]
    return frame, Prior.estimate(frame, ["sex"], "disease")


@pytest.mark.parametrize(
    "change, kwargs, culprit",
    [
        (lambda f: f.iloc[:0], {}, "robust_anonymize: the table has no rows"),
        (lambda f: f.assign(age=[np.nan] + [31] * 7), {}, "'age' has a missing value (row 0)"),
        (lambda f: f.assign(sex=[None] + list("MMMFFFF")), {}, "'sex' has a missing value"),
        (lambda f: f.assign(disease=[["Flu"]] + ["HIV"] * 7), {}, "'disease' holds ['Flu']"),
        (lambda f: f, dict(prior="wrong"), "prior must be a Prior or a list of Priors"),
        (lambda f: f, dict(verify=-1), "verify must be True, False or a whole number"),
        (lambda f: f, dict(qi=None), "qi must be a column name"),
    ],
)
def test_bad_robust_anonymize_input(robust_table, change, kwargs, culprit):
    frame, prior = robust_table
    args = dict(frame=change(frame), qi=["sex", "age"], sa="disease", prior=prior, r=2)
    args.update(kwargs)
    with pytest.raises(MaxEntError) as e:
        robust_anonymize(**args)
    clear(e, culprit)


def test_valid_robustness_input_unchanged(wong, robust_table):
    frame, prior, l2 = wong
    assert satisfies_delta_bound(l2, prior, 2) is True
    assert satisfies_delta_bound(l2, prior, Fraction(3, 2)) is True
    assert satisfies_delta_bound(l2, [prior, prior.binary("Lung Cancer")], np.float64(2))
    frame, prior = robust_table
    release = robust_anonymize(frame, ["sex", "age"], "disease", r=np.int64(2), prior=prior)
    assert robustness_table(release, prior, 2, sample=1, max_states=0).shape[0] == 1


# ---------------------------------------------------------------- 5. anonymizer inputs
@pytest.fixture
def micro():
    return pd.DataFrame(
        {
            "zip": list(range(12)),
            "sex": list("MF" * 6),
            "d": ["a", "b", "c", "d"] * 3,
            "pid": list(range(100, 112)),
        }
    )


# (a whole float, such as 2.0, is a whole number: _validation.check_integer takes it)
BAD_L = [1, 0, -2, 1.0, 2.5, "2", True, None, NAN, INF, [2]]
BAD_K = [0, -1, 0.0, 2.5, "2", True, None, NAN, INF]
BAD_C = [0, -0.5, NAN, INF, -INF, "0.5", True, None, [0.5]]


def release_with_ids(micro):
    return anatomize(micro, ["zip"], "d", l=2, person="pid")


@pytest.mark.parametrize("l", BAD_L, ids=repr)  # noqa: E741
@pytest.mark.parametrize(
    "call",
    [
        lambda m, l: anatomize(m, ["zip"], "d", l=l),  # noqa: E741
        lambda m, l: check_l_diversity(anatomize(m, ["zip"], "d", l=2), l),  # noqa: E741
        lambda m, l: rebucketize(m, ["zip"], "d", l=l, person="pid"),  # noqa: E741
        lambda m, l: history_guided(m, ["zip"], "d", l=l, history=release_with_ids(m)),  # noqa: E741
    ],
    ids=["anatomize", "check_l_diversity", "rebucketize", "history_guided"],
)
def test_l(micro, l, call):  # noqa: E741
    with pytest.raises(ReleaseError) as e:
        call(micro, l)
    clear(e, "l must be a whole number >= 2", shown(l))


@pytest.mark.parametrize("k", BAD_K, ids=repr)
def test_mondrian_k(micro, k):
    with pytest.raises(ReleaseError) as e:
        mondrian(micro, ["zip", "sex"], "d", k=k, c=0.5)
    clear(e, "k must be a whole number >= 1")


@pytest.mark.parametrize("c", BAD_C, ids=repr)
def test_mondrian_c(micro, c):
    with pytest.raises(ReleaseError) as e:
        mondrian(micro, ["zip", "sex"], "d", k=2, c=c)
    clear(e, "c must be a number in (0, 1]")


@pytest.mark.parametrize(
    "call, culprits",
    [
        (
            lambda m: anatomize(m, ["zip"], "d", l=13),
            ["13-diversity needs at least 13 records, the table has 12"],
        ),
        (lambda m: anatomize(m.assign(d="a"), ["zip"], "d", l=2), ["2-diversity is unattainable"]),
        (lambda m: mondrian(m, ["zip"], "d", k=13, c=0.5), ["12 records, fewer than k=13"]),
        (lambda m: mondrian(m, ["zip"], "d", k=2, c=0.2), ["not (k, c)-anonymous", "c=0.2"]),
    ],
)
def test_anonymizer_parameters_out_of_reach(micro, call, culprits):
    with pytest.raises(ReleaseError) as e:
        call(micro)
    clear(e, *culprits)


ANONYMIZERS = {
    "anatomize": lambda f, **kw: anatomize(f, kw.pop("qi", ["zip", "sex"]), "d", l=2, **kw),
    "mondrian": lambda f, **kw: mondrian(f, kw.pop("qi", ["zip", "sex"]), "d", k=2, c=0.5, **kw),
    "robust_anonymize": lambda f, **kw: robust_anonymize(
        f,
        kw.pop("qi", ["zip", "sex"]),
        "d",
        r=2,
        prior=Prior.estimate(micro_frame(), ["sex"], "d"),
        **kw,
    ),
}


def micro_frame():
    return pd.DataFrame(
        {"zip": list(range(12)), "sex": list("MF" * 6), "d": ["a", "b", "c", "d"] * 3}
    )


@pytest.mark.parametrize("who", list(ANONYMIZERS))
@pytest.mark.parametrize(
    "change, kwargs, culprit",
    [
        (None, dict(qi=["zp"]), "quasi-identifier column 'zp' is not in the table"),
        (lambda f: f.drop(columns="d"), {}, "sensitive column 'd' is not in the table"),
        (None, dict(qi=[]), "at least one quasi-identifier"),
        (None, dict(qi=None), "qi must be a column name"),
        (None, dict(qi=[["zip"]]), "must be one column name, got list"),
        (None, dict(qi=["zip", "d"]), "is already used|more than one role"),
        (None, dict(group="zip"), "group column name 'zip' is already used"),
        (lambda f: f.to_numpy(), {}, "needs a pandas DataFrame, got ndarray"),
        (lambda f: pd.concat([f, f[["sex"]]], axis=1), {}, "column 'sex' occurs 2 times"),
        (
            lambda f: f.astype({"sex": object}).assign(sex=[["M"]] + list("FM" * 5) + ["F"]),
            {},
            "quasi-identifier column 'sex' holds ['M'] (a list) in row 0",
        ),
        (
            lambda f: f.assign(d=[{"a"}] + ["b", "c", "d", "a"] * 2 + ["b", "c", "d"]),
            {},
            "sensitive column 'd' holds {'a'} (a set) in row 0",
        ),
        (
            lambda f: f.assign(zip=[np.nan] + list(range(11))),
            {},
            "'zip' has a missing value (row 0)",
        ),
        (lambda f: f.assign(d=[None] + ["b", "c", "d"] * 3 + ["a", "b"]), {}, "'d' has a missing"),
        (
            lambda f: f.set_axis(pd.MultiIndex.from_product([["t"], f.columns]), axis=1),
            {},
            "MultiIndex columns",
        ),
    ],
)
def test_anonymizer_tables(who, change, kwargs, culprit):
    frame = micro_frame()
    if change is not None:
        frame = change(frame)
    with pytest.raises(ReleaseError) as e:
        ANONYMIZERS[who](frame, **kwargs)
    msg = clear(e)
    assert any(part in msg for part in culprit.split("|")), msg


@pytest.mark.parametrize("who", ["anatomize", "mondrian"])
@pytest.mark.parametrize(
    "change, person, culprit",
    [
        (lambda m: m.assign(pid=[1] * 12), "pid", "person id 1 occurs in more than one row"),
        (
            lambda m: m.assign(pid=[np.nan] + list(range(11))),
            "pid",
            "person column 'pid' has a missing",
        ),
        (lambda m: m.assign(pid=[[1]] + list(range(11))), "pid", "person column 'pid' holds [1]"),
        (lambda m: m.drop(columns="pid"), "pid", "person column 'pid' is not in the table"),
        (lambda m: m, ["pid"], "person must be one column name"),
    ],
)
def test_anonymizer_person_column(micro, who, change, person, culprit):
    with pytest.raises(ReleaseError) as e:
        ANONYMIZERS[who](change(micro), person=person)
    clear(e, culprit)


@pytest.mark.parametrize(
    "call, culprit",
    [
        (
            lambda m: anatomize(m, ["zip"], "d", l=2, nonsensitive=[["a"]]),
            "nonsensitive values must be single values, got list",
        ),
        (
            lambda m: anatomize(m, ["zip"], "d", l=2, nonsensitive=["z"]),
            "nonsensitive value 'z' does not occur",
        ),
        (lambda m: anatomize(m, ["zip"], "d", l=2, seed="x"), "seed must be a whole number"),
        (
            lambda m: check_l_diversity(m, 2),
            "check_l_diversity needs a Bucketized or Generalized release, got DataFrame",
        ),
        (  # numeric= is deprecated (a DeprecationWarning), still checked
            lambda m: mondrian(m, ["zip"], "d", k=2, c=0.5, numeric=["sex"]),
            "numeric column 'sex' is not a quasi-identifier",
        ),
        (
            lambda m: mondrian(m, ["zip", "sex"], "d", k=2, c=0.5, numeric=["sex"]),
            "numeric column 'sex' has a value that is not a number: 'M'",
        ),
        (
            lambda m: mondrian(m.assign(zip=[INF] + list(range(11))), ["zip"], "d", k=2, c=0.5),
            "numeric column 'zip' has an infinite value",
        ),
    ],
)
@pytest.mark.filterwarnings("ignore:mondrian. numeric=:DeprecationWarning")
def test_other_anonymizer_arguments(micro, call, culprit):
    with pytest.raises(ReleaseError) as e:
        call(micro)
    clear(e, culprit)


def new_table(micro):
    return micro.assign(pid=range(106, 118))


@pytest.mark.parametrize(
    "args, culprit",
    [
        (
            lambda m: (new_table(m), m),
            "history must be a list of earlier Bucketized releases (or None), got DataFrame",
        ),
        (
            lambda m: (None, release_with_ids(m)),
            "history_guided needs a pandas DataFrame, got NoneType",
        ),
        (
            lambda m: (new_table(m).drop(columns="d"), release_with_ids(m)),
            "sensitive column 'd' is not in the table",
        ),
        (
            lambda m: (new_table(m).assign(d=[None] + ["a"] * 11), release_with_ids(m)),
            "sensitive column 'd' has a missing value",
        ),
        (
            lambda m: (new_table(m).assign(d=[["a"]] * 12), release_with_ids(m)),
            "sensitive column 'd' holds ['a']",
        ),
        (
            lambda m: (pd.concat([new_table(m), m[["d"]]], axis=1), release_with_ids(m)),
            "column 'd' occurs 2 times",
        ),
        (
            lambda m: (new_table(m), anatomize(m, ["zip"], "d", l=2)),
            "release 1 of the history has no person ids",
        ),
    ],
)
def test_history_guided_inputs(micro, args, culprit):
    frame, history = args(micro)
    with pytest.raises(ReleaseError) as e:
        history_guided(frame, ["zip"], "d", l=2, history=history)
    clear(e, culprit)


def test_valid_anonymizer_input_unchanged(micro):
    history = release_with_ids(micro)
    assert history_guided(new_table(micro), ["zip"], "d", l=2, history=history).n_records == 12
    assert anatomize(micro, ["zip"], "d", l=np.int64(3)).n_groups == 4
    assert mondrian(micro, ["zip", "sex"], "d", k=np.int64(2), c=2).n_groups == 4
    assert check_l_diversity(anatomize(micro, "zip", "d", l=2), 2).all()
