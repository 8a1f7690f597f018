"""Ranges of quasi-identifier values in knowledge: range(...), between(...), and the
knowledge file's ``age in 18..29``, ``age < 30``, ... (issue 15, item 3)."""

from __future__ import annotations

import pandas as pd
import pytest

import maxent_privacy as mp
from maxent_privacy import Bucketized, Generalized, KnowledgeError, MaxEntModel, between
from maxent_privacy.parser import KnowledgeFileError, apply_knowledge, parse_knowledge
from maxent_privacy.ranges import Between, select

# buckets: 1 = {Flu, HIV, Flu}, 2 = {Cold, Flu, HIV}, 3 = {Cold, Flu}
ROWS = [
    (17, "M", "Flu", 1),
    (22, "F", "HIV", 1),
    (25, "M", "Flu", 1),
    (29, "F", "Cold", 2),
    (31, "M", "Flu", 2),
    (45, "F", "HIV", 2),
    (60, "M", "Cold", 3),
    (72, "F", "Flu", 3),
]


def numeric_model() -> MaxEntModel:
    frame = pd.DataFrame(ROWS, columns=["age", "sex", "d", "g"])
    return MaxEntModel(Bucketized(frame, ["age", "sex"], "d", "g"))


def value(model: MaxEntModel, expr, result) -> float:
    """The value of a P(...) expression at a solution (its row times the cells)."""
    return float((expr.maxent_tag.row @ result.x)[0])


# -- the Python forms ---------------------------------------------------------------------
def test_between_and_select():
    assert 18 in between(18, 29) and 29 in between(18, 29) and 30 not in between(18, 29)
    assert 30 not in between(None, 30, include_high=False) and 30 in between(None, 30)
    assert 17 not in between(17, None, include_low=False)
    assert "25" in between(18, 29) and "x" not in between() and True not in between()
    assert select([17, 18, "25", 29.5, 30, "x"], range(18, 30)) == [18, "25"]
    assert select([17, 18, 29.5, 30], between(18, 29.5)) == [18, 29.5]
    assert mp.between is between
    with pytest.raises(KnowledgeError, match=r"between\(30, 20\) is empty"):
        between(30, 20)
    with pytest.raises(KnowledgeError, match="low must be a finite number or None"):
        between("a", 3)
    with pytest.raises(KnowledgeError, match="high must be a finite number"):
        between(1, float("inf"))


def test_conditions_select_the_values_present():
    model = numeric_model()
    assert model.match_values("age", range(18, 30)) == ([22, 25, 29], "age in range(18, 30)")
    assert model.match_values("age", between(18, 29)) == ([22, 25, 29], "age in 18..29")
    assert model.match_values("age", between(None, 30, include_high=False))[1] == "age < 30"
    assert model.match_values("age", between(60, None)) == ([60, 72], "age >= 60")
    assert model.match_values("age", [17, between(60, None)]) == ([17, 60, 72], "age={17, 60, 72}")


def test_p_over_a_range_is_the_hand_computed_sum():
    """No knowledge: each record has its bucket's distribution (Du et al. Eq. 9)."""
    model = numeric_model()
    exprs = {
        "18..29": model.P("Flu", age=range(18, 30)),  # 22, 25 (bucket 1), 29 (bucket 2)
        "<30": model.P("Flu", age=between(None, 30, include_high=False)),  # and 17
        ">=60": model.P("Flu", age=between(60, None)),  # bucket 3
        ">17, M": model.P("Flu", age=between(17, None, include_low=False), sex="M"),
    }
    result = model.solve()
    assert value(model, exprs["18..29"], result) == pytest.approx((2 / 3 + 2 / 3 + 1 / 3) / 3)
    assert value(model, exprs["<30"], result) == pytest.approx((3 * 2 / 3 + 1 / 3) / 4)
    assert value(model, exprs[">=60"], result) == pytest.approx(1 / 2)
    assert value(model, exprs[">17, M"], result) == pytest.approx((2 / 3 + 1 / 3 + 1 / 2) / 3)
    assert exprs["18..29"].maxent_tag.label == "P(Flu | age in range(18, 30))"
    assert exprs[">17, M"].maxent_tag.label == "P(Flu | age > 17, sex=M)"


def test_a_fact_on_a_range_holds_in_the_posterior():
    model = numeric_model()
    model.add(model.P("Flu", age=between(18, 29)) == 0.4)
    post = model.solve().posterior()
    ages = post.index.get_level_values("age")
    inside = post[(ages >= 18) & (ages <= 29)]["Flu"]  # one record per QI value
    assert inside.mean() == pytest.approx(0.4, abs=1e-7)


def test_range_and_list_give_the_same_fact():
    a, b, c = numeric_model(), numeric_model(), numeric_model()
    a.add(a.P("Flu", age=range(18, 30)) <= 0.4)
    b.add(b.P("Flu", age=between(18, 29)) <= 0.4)
    c.add(c.P("Flu", age=[22, 25, 29]) <= 0.4)
    for other in (b, c):
        assert (a.facts[0].A != other.facts[0].A).nnz == 0
        assert a.facts[0].b == other.facts[0].b


def test_range_errors_name_the_attribute_and_the_range():
    model = numeric_model()
    with pytest.raises(KnowledgeError) as e:
        model.P("Flu", age=range(80, 90))
    assert str(e.value) == (
        "no value of quasi-identifier 'age' matches age in range(80, 90) "
        "(its numbers run from 17 to 72)"
    )
    with pytest.raises(KnowledgeError, match=r"'sex' matches sex < 3 \(it holds no numbers\)"):
        model.P("Flu", sex=between(None, 3, include_high=False))
    with pytest.raises(KnowledgeError, match=r"no record .* age in 18..22, sex=M"):
        model.P("Flu", age=between(18, 22), sex="M")  # 22 is F
    with pytest.raises(KnowledgeError, match="person 'Al': give 'age' as one exact value"):
        model.person("Al", age=range(18, 30), sex="M")


# -- generalized releases: knowledge about exact QI values ------------------------------
@pytest.fixture
def generalized_model() -> tuple[MaxEntModel, pd.DataFrame]:
    frame = pd.DataFrame(
        {
            "age": ["20-29"] * 3 + ["[30, 50["] * 3 + [">=50"] * 2,
            "sex": ["*"] * 8,
            "d": ["Flu", "HIV", "Cold", "Flu", "Flu", "Cold", "HIV", "Cold"],
            "g": [1, 1, 1, 2, 2, 2, 3, 3],
        }
    )
    people = pd.DataFrame(
        {
            "age": [21, 24, 29, 30, 41, 49, 50, 66],
            "sex": ["M", "F", "M", "F", "M", "F", "M", "F"],
        },
        index=[f"p{i}" for i in range(8)],
    )
    return MaxEntModel(Generalized(frame, ["age", "sex"], "d", "g"), populations=[people]), people


def test_exact_values_on_a_generalized_model(generalized_model):
    model, people = generalized_model
    # the published cells are not values of the records: the people's exact ages are
    assert model.match_values("age", 24) == ([24], "age=24")
    assert model.match_values("age", range(25, 45))[0] == [29, 30, 41]
    with pytest.raises(KnowledgeError, match="value '20-29' is not in column 'age'"):
        model.P("Flu", age="20-29")
    model.add(model.P("Flu", age=24) == 1, name="p1 flu")
    model.add(model.P("HIV", age=between(25, 45), sex="M") == 0.5, name="men 25-45")
    model.add(model.P("Cold", age=between(None, 50, include_high=False), sex="F") == 0)
    result = model.solve()
    post = result.person_posterior()
    assert post.loc["p1", "Flu"] == pytest.approx(1, abs=1e-7)
    men = people.index[(people["sex"] == "M") & people["age"].between(25, 45)]  # p2, p4
    assert post.loc[men, "HIV"].mean() == pytest.approx(0.5, abs=1e-7)
    women = people.index[(people["sex"] == "F") & (people["age"] < 50)]
    assert post.loc[women, "Cold"].max() == pytest.approx(0, abs=1e-7)
    # numerator: value cells of the matching people; denominator: their number
    expr = model.P("Flu", age=range(20, 42))  # p0..p4: five people
    assert value(model, expr, result) == pytest.approx(
        post.loc[["p0", "p1", "p2", "p3", "p4"], "Flu"].mean(), abs=1e-9
    )
    assert result.posterior().index.get_level_values("age").tolist() == [
        21,
        24,
        29,
        30,
        41,
        49,
        50,
        66,
    ]


def test_person_by_exact_qi_on_a_generalized_model(generalized_model):
    model, _ = generalized_model
    assert model.person("p6", age=50, sex="M").q == (50, "M")
    with pytest.raises(KnowledgeError, match="person 'p7' has QI"):
        model.person("p7", age=50, sex="F")


# -- the knowledge file -------------------------------------------------------------------
FORMS = [
    ("age in 18..29", dict(age=between(18, 29))),
    ("age in 18..29", dict(age=range(18, 30))),
    ("age < 30", dict(age=between(None, 30, include_high=False))),
    ("age <= 29", dict(age=between(None, 29))),
    ("age >= 60", dict(age=between(60, None))),
    ("age > 17", dict(age=between(17, None, include_low=False))),
    ("age > 17", dict(age=range(18, 100))),
    ('age in 18..40, sex = "M"', dict(age=between(18, 40), sex="M")),
    ("age in -5..29.5", dict(age=[17, 22, 25, 29])),
]


@pytest.mark.parametrize("text, kwargs", FORMS)
def test_file_forms_give_the_python_facts(text, kwargs):
    from_file, by_hand = numeric_model(), numeric_model()
    names = apply_knowledge(from_file, parse_knowledge(f'P(d = "Flu" | {text}) <= 0.4'))
    assert names == [f'P(d = "Flu" | {text}) <= 0.4']
    by_hand.add(by_hand.P("Flu", **kwargs) <= 0.4)
    f, h = from_file.facts[0], by_hand.facts[0]
    assert (f.A != h.A).nnz == 0 and f.b == pytest.approx(h.b)


def test_parsed_conditions():
    [st] = parse_knowledge('P(d = "Flu" | age in 18..29, sex = "M") = 0.3')
    age, sex = st.left.conditions
    assert age.values == (Between(18.0, 29.0),) and sex.values == ("M",)
    [st] = parse_knowledge('P(d = "Flu" | age < 30) = 0.3')
    assert st.left.conditions[0].values == (between(None, 30, include_high=False),)
    [st] = parse_knowledge('P(d = "Flu" | age in 1.5..2) = 0.3')
    assert st.left.conditions[0].values == (between(1.5, 2),)


@pytest.mark.parametrize(
    "text, column, words",
    [
        ('P(d = "Flu" | age in 29..18) = 0', 22, "empty range: lower bound 29 is above"),
        ('P(d = "Flu" | age in 18) = 0', 24, "expected '..' between the bounds"),
        ('P(d = "Flu" | age in "a"..3) = 0', 22, "{values} or a range lo..hi"),
        ('P(d = "Flu" | age < "30") = 0', 21, "expected a number after '<'"),
        ("P(d < 3 | age < 30) = 0", 5, "'d' must be compared with '=' or 'in {...}'"),
        ("person A: age < 30", 15, "a person's quasi-identifiers are exact values"),
        ("person A: age in 18..29", 15, "expected '='"),
    ],
)
def test_syntax_errors(text, column, words):
    with pytest.raises(KnowledgeFileError) as e:
        parse_knowledge(text, source="k.txt")
    assert (e.value.line, e.value.column) == (1, column), str(e.value)
    assert words in str(e.value)


def test_a_range_matching_nothing_in_a_file_names_line_attribute_and_range():
    model = numeric_model()
    text = 'P(d = "Flu") <= 1\nP(d = "Flu" | age in 80..90) = 0.5\n'
    with pytest.raises(KnowledgeFileError) as e:
        apply_knowledge(model, parse_knowledge(text, source="k.txt"))
    assert str(e.value) == (
        "k.txt:2:22: no value of quasi-identifier 'age' matches age in 80..90 "
        "(its numbers run from 17 to 72) (near '80..90')"
    )
    assert model.facts == []  # all or nothing


def test_file_ranges_on_a_generalized_model(generalized_model):
    model, people = generalized_model
    text = (
        'P(d = "HIV" | age in 25..45, sex = "M") = 0.5\n'
        'P(d = "Flu" | age >= 50) = 0\n'
        'person p1: age = 24, sex = "F"\n'
        'P(p1 has "Flu") = 1\n'
    )
    apply_knowledge(model, parse_knowledge(text))
    post = model.solve().person_posterior()
    assert post.loc[["p2", "p4"], "HIV"].mean() == pytest.approx(0.5, abs=1e-7)
    assert post.loc[["p6", "p7"], "Flu"].max() == pytest.approx(0, abs=1e-7)
    assert post.loc["p1", "Flu"] == pytest.approx(1, abs=1e-7)


def test_readme_ranges_example_runs():
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    block = next(b for b in blocks if "mp.between(" in b)
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    adult = namespace["adult"]
    assert [f.name for f in adult.facts] == [
        "P(Doctorate | age in range(18, 30)) == 0",
        "P(Masters | age >= 60, sex=Female) <= 0.1",
    ]
