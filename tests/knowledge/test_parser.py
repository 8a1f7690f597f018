"""The knowledge file format: tokenizer, parser, errors and apply_knowledge on Figure 1."""

import os

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntError, MaxEntModel, datasets
from maxent_privacy._validation import ArgumentError, ArgumentTypeError
from maxent_privacy.parser import (
    BinOp,
    Condition,
    Count,
    KnowledgeFileError,
    Neg,
    Num,
    Prob,
    Statement,
    apply_knowledge,
    load_knowledge,
    parse_knowledge,
)

MALE = (Condition("gender", ("male",)),)
FEMALE = (Condition("gender", ("female",)),)
COLLEGE = (Condition("degree", ("college",)),)

PERSONS = (
    'person Alice: gender = "female", degree = "junior"\n'
    'person Bob: gender = "male", degree = "high school"\n'
    'person Carol: gender = "female", degree = "graduate"\n'
)


def flu(conditions=MALE):
    return Prob(("Flu",), attribute="disease", conditions=conditions)


EXAMPLES = [
    (
        'P(disease = "Breast Cancer" | gender = "male") = 0',
        Statement(
            "fact",
            1,
            left=Prob(("Breast Cancer",), attribute="disease", conditions=MALE),
            op="==",
            right=Num(0),
        ),
    ),
    (
        'P(disease = "Flu" | gender = "male") = 0.3 +- 0.05',
        Statement("vague", 1, left=flu(), op="==", right=Num(0.3), eps=0.05),
    ),
    (
        'P(disease = "Flu" | degree = "college") >= P(disease = "HIV" | degree = "college")',
        Statement(
            "fact",
            1,
            left=flu(COLLEGE),
            op=">=",
            right=Prob(("HIV",), attribute="disease", conditions=COLLEGE),
        ),
    ),
    (
        'P(disease = "Flu" | gender = "male", degree = "college") <= 0.4',
        Statement("fact", 1, left=flu(MALE + COLLEGE), op="<=", right=Num(0.4)),
    ),
    (
        'P(disease in {"Flu", "HIV"} | gender = "female") >= 0.2',
        Statement(
            "fact",
            1,
            left=Prob(("Flu", "HIV"), attribute="disease", conditions=FEMALE),
            op=">=",
            right=Num(0.2),
        ),
    ),
    (
        'P(disease = "Flu") = 0.3                       # no condition: all records',
        Statement("fact", 1, left=flu(()), op="==", right=Num(0.3)),
    ),
    (
        'person Alice: gender = "female", degree = "junior"',
        Statement(
            "person",
            1,
            person="Alice",
            conditions=FEMALE + (Condition("degree", ("junior",)),),
        ),
    ),
    (
        'soft 2.0: P(disease = "HIV" | gender = "female") = 0.1',
        Statement(
            "soft",
            1,
            left=Prob(("HIV",), attribute="disease", conditions=FEMALE),
            op="==",
            right=Num(0.1),
            weight=2.0,
        ),
    ),
    (
        'name "my fact": P(disease = "Flu" | gender = "male") <= 0.6     # keys the dual',
        Statement("fact", 1, name="my fact", left=flu(), op="<=", right=Num(0.6)),
    ),
    (
        'P(disease == "Flu" | degree = "college") >= 0.5 * P(disease = "HIV" | degree = '
        '"college") + 0.1',
        Statement(
            "fact",
            1,
            left=flu(COLLEGE),
            op=">=",
            right=BinOp(
                "+",
                BinOp("*", Num(0.5), Prob(("HIV",), attribute="disease", conditions=COLLEGE)),
                Num(0.1),
            ),
        ),
    ),
]


@pytest.fixture
def fig1_model():
    frame = datasets.du2008_figure1()
    return MaxEntModel(Bucketized(frame, qi=["gender", "degree"], sa="disease", group="bucket"))


# ------------------------------------------------------------------------ parsing
@pytest.mark.parametrize(("text", "expected"), EXAMPLES, ids=[t for t, _ in EXAMPLES])
def test_examples_parse_to_statements(text, expected):
    [statement] = parse_knowledge(text)
    assert statement == expected
    assert statement.text == text
    assert statement.line == 1


def test_person_statements_and_counts():
    text = PERSONS + (
        'P(Alice has "HIV" or "Flu") = 1\n'
        'P(Alice has "HIV") <= 0.5\n'
        'count("HIV" among Alice, Bob, Carol) = 2        # also >=, <=\n'
        'count("HIV" among Alice, Bob) >= 1\n'
        'count("HIV" among Carol) <= 0\n'
    )
    stmts = parse_knowledge(text)
    assert [s.kind for s in stmts] == ["person"] * 3 + ["fact"] * 5
    assert [s.line for s in stmts] == list(range(1, 9))
    assert stmts[3] == Statement(
        "fact", 4, left=Prob(("HIV", "Flu"), person="Alice"), op="==", right=Num(1)
    )
    assert stmts[4].left == Prob(("HIV",), person="Alice") and stmts[4].op == "<="
    assert stmts[5] == Statement(
        "fact", 6, left=Count("HIV", ("Alice", "Bob", "Carol")), op="==", right=Num(2)
    )
    assert (stmts[6].op, stmts[7].op) == (">=", "<=")
    assert stmts[5].label == 'count("HIV" among Alice, Bob, Carol) = 2'


def test_comments_blank_lines_and_line_numbers():
    text = (
        "# background knowledge\n"
        "\n"
        '   P(disease = "Flu" | gender = "male") = 0.3 +- 0.05   # vague\n'
        "\t\n"
        'P(disease = "a # not a comment" | gender = "m\\"x\\\\") <= 1\r\n'
    )
    a, b = parse_knowledge(text)
    assert (a.line, a.column, b.line) == (3, 4, 5)
    assert a.label == 'P(disease = "Flu" | gender = "male") = 0.3 +- 0.05'
    assert b.left.values == ("a # not a comment",)
    assert b.left.conditions == (Condition("gender", ('m"x\\',)),)


def test_names_numbers_and_arithmetic():
    [a, b, c] = parse_knowledge(
        'name "x": P(disease = "Flu" | age = 35, zip-code = -7, w = 1.5e1) = .25\n'
        'soft 3: P(disease = "Flu") <= P(disease = "HIV") - (0.1 - 0.05) / 2\n'
        "-P(disease = 3) + 1 >= 0.2\n"
    )
    assert a.name == "x" and a.label == "x" and a.right == Num(0.25)
    assert [cond.values for cond in a.left.conditions] == [(35,), (-7,), (15.0,)]
    assert type(a.left.conditions[0].values[0]) is int
    assert b.weight == 3.0 and b.label.startswith("soft 3: P(")
    assert b.right == BinOp(
        "-",
        Prob(("HIV",), attribute="disease"),
        BinOp("/", BinOp("-", Num(0.1), Num(0.05)), Num(2)),
    )
    assert c.left == BinOp("+", Neg(Prob((3,), attribute="disease")), Num(1))


SYNTAX_ERRORS = [
    # (text, line, column, words in the message)
    (
        'P(disease = "Flu") = 0.1\n# ok\nP(disease = "Flu" | gender = "male" = 0.3',
        3,
        37,
        "expected ')' to close P( (near '=')",
    ),
    ('P(disease = "Flu" | gender = "male"', 1, 36, "expected ')' to close P( (at end of line)"),
    ('P(disease = "Flu" gender = "male") = 0', 1, 19, "expected ')'"),
    ("P(disease = Flu) = 0", 1, 13, "expected a value (a double-quoted string or a number)"),
    ('P(disease = "Flu) = 0', 1, 13, "unterminated string"),
    ('P(disease = "F\\lu") = 0', 1, 15, "unknown escape"),
    ('P(disease = "Flu") =', 1, 21, "expected P(...), count(...) or a number"),
    ('P(disease = "Flu") 0.3', 1, 20, "expected a comparison: =, <= or >="),
    ('P(disease = "Flu") = 0.3 0.4', 1, 26, "unexpected '0.4' after the end of the statement"),
    ('P(disease = "Flu") @ 0.3', 1, 20, "unexpected character '@'"),
    ('P(disease = "Flu") != 0.3', 1, 20, "'!=' is not allowed"),
    ('P(disease = "Flu") <= 0.3 +- 0.1', 1, 27, "'+-' (vague knowledge) needs '='"),
    ('P(disease = "Flu") = 1.5', 1, 22, "probability 1.5 is outside [0, 1]"),
    ('P(disease = "Flu") >= -0.1', 1, 23, "probability -0.1 is outside [0, 1]"),
    ("0.3 = 0.3", 1, 1, "compares numbers only"),
    ('P(disease = "Flu") = 1e400', 1, 22, "number out of range"),
    (
        'P(disease = "Flu") * P(disease = "HIV") = 0',
        1,
        1,
        "a product of two probabilities is not linear",
    ),
    ('P(disease = "Flu") / P(disease = "HIV") = 0', 1, 22, "divide by numbers only"),
    ('P(disease = "a" | gender = "m", gender = "f") = 0', 1, 33, "'gender' is given twice"),
    ("P(disease in {} ) = 0", 1, 15, "expected a value"),
    ('soft 0: P(disease = "Flu") = 0.1', 1, 6, "weight must be > 0"),
    ('soft 1: P(disease = "Flu") = 0.1 +- 0.01', 1, 1, "a soft fact cannot be vague"),
    ('name "": P(disease = "Flu") = 0.1', 1, 1, "must not be empty"),
    ('frobnicate P(disease = "Flu") = 0.1', 1, 1, "expected P(...), count(...) or a number"),
    ('P(Dave has "HIV") = 1', 1, 3, "person 'Dave' is not defined"),
    ('person Al: gender = "m"\nperson Al: gender = "f"', 2, 8, "already defined on line 1"),
    ('person Al: gender in {"m", "f"}', 1, 19, "expected '='"),
    ('person Al: gender = "m"\ncount("HIV" among Al, Al) = 1', 2, 23, "named twice"),
    ('person Al: gender = "m"\ncount("HIV" among Al) = 2', 2, 25, "count 2 is outside [0, 1]"),
    ('person Al: gender = "m"\ncount("HIV" with Al) = 1', 2, 13, "expected 'among'"),
]


@pytest.mark.parametrize(("text", "line", "column", "words"), SYNTAX_ERRORS)
def test_syntax_errors_point_at_the_token(text, line, column, words):
    with pytest.raises(KnowledgeFileError) as info:
        parse_knowledge(text, source="facts.txt")
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert str(err).startswith(f"facts.txt:{line}:{column}: ")
    assert words in str(err)
    assert "\n" not in str(err)
    assert isinstance(err, MaxEntError) and isinstance(err, ValueError)


@pytest.mark.parametrize("op", ["<", ">"])
def test_strict_inequalities_are_refused(op):
    text = f'P(disease = "Flu" | gender = "male") {op} 0.3'
    with pytest.raises(KnowledgeFileError) as info:
        parse_knowledge(text, source="k.txt")
    assert str(info.value) == (
        f"k.txt:1:38: strict inequality '{op}' is not allowed: the maximum-entropy problem "
        f"needs a closed feasible set; write '{op}=' instead (near '{op}')"
    )


def test_no_eval_of_user_text(monkeypatch):
    def boom(*args):  # pragma: no cover - must not run
        raise AssertionError("user text was executed")

    monkeypatch.setattr(os, "system", boom)
    text = 'P(disease = __import__("os").system("x") | gender = "male") = 0'
    with pytest.raises(KnowledgeFileError) as info:
        parse_knowledge(text)
    assert (info.value.line, info.value.column) == (1, 13)
    assert "near '__import__'" in str(info.value)
    for evil in [
        'P(disease = "Flu" | gender = eval("1")) = 0',
        'P(disease = "Flu") = (lambda: 1)()',
        'P(disease = "Flu") = 0.1; import os',
        'P(disease = "Flu") = 1e400 if 1 else 0',
    ]:
        with pytest.raises(KnowledgeFileError):
            parse_knowledge(evil)


def test_load_knowledge_names_the_file(tmp_path):
    path = tmp_path / "facts.txt"
    path.write_text('\ufeffP(disease = "Flu") = 0.3\nP(disease = "Flu" = 0.3\n', encoding="utf-8")
    with pytest.raises(KnowledgeFileError) as info:
        load_knowledge(path)
    assert str(info.value).startswith(f"{path}:2:19: expected ')'")
    path.write_text('P(disease = "Flu") = 0.3\n')
    [s] = load_knowledge(path)
    assert s.source == str(path) and s.right == Num(0.3)


# -------------------------------------------------------------------- applying
def test_figure1_breast_cancer_fact(fig1_model):
    names = apply_knowledge(
        fig1_model, parse_knowledge('P(disease = "Breast Cancer" | gender = "male") = 0')
    )
    assert names == ['P(disease = "Breast Cancer" | gender = "male") = 0']
    post = fig1_model.solve().posterior(by="group")
    assert post.loc[("female", "junior", 2), "Breast Cancer"] == 1.0
    assert post.loc[("female", "college", 1), "Breast Cancer"] == 1.0
    assert post.loc[("male", "college", 1), "Breast Cancer"] == 0.0
    assert post.loc[("male", "college", 1), "Flu"] == pytest.approx(2 / 3, abs=1e-9)


def test_vague_name_prefix_and_duals(fig1_model):
    text = (
        'P(disease = "Flu" | gender = "male") = 0.45 +- 0.02\n'
        'name "college": P(disease = "Flu" | degree = "college") <= 0.9   # slack\n'
    )
    names = apply_knowledge(fig1_model, parse_knowledge(text))
    label = 'P(disease = "Flu" | gender = "male") = 0.45 +- 0.02'
    assert names == [f"{label} (low)", f"{label} (high)", "college"]
    result = fig1_model.solve()
    post = result.posterior()
    sizes = fig1_model.release.frame.groupby(["gender", "degree"]).size()["male"]
    male = post.xs("male", level="gender")["Flu"]
    assert float((male * sizes).sum() / sizes.sum()) == pytest.approx(0.43, abs=1e-9)
    assert result.duals[f"{label} (low)"] > 0
    assert result.duals[f"{label} (high)"] == pytest.approx(0, abs=1e-8)
    assert result.duals["college"] == pytest.approx(0, abs=1e-8)


def test_relation_and_arithmetic(fig1_model):
    text = (
        'P(disease = "HIV" | degree = "college") >= P(disease = "Flu" | degree = "college") + 0.1\n'
    )
    apply_knowledge(fig1_model, parse_knowledge(text))
    post = fig1_model.solve().posterior()
    sizes = fig1_model.release.frame.groupby("degree").size()["college"]
    college = post.xs("college", level="degree")
    n = fig1_model.release.frame.groupby(["gender", "degree"]).size().xs("college", level=1)
    hiv = float((college["HIV"] * n).sum() / sizes)
    flu_ = float((college["Flu"] * n).sum() / sizes)
    assert hiv - flu_ == pytest.approx(0.1, abs=1e-7)


def test_soft_fact(fig1_model):
    text = (
        'name "a": soft 10: P(disease = "Flu" | gender = "male") = 0.45\n'
        'name "b": soft 1: P(disease = "Flu" | gender = "male") = 0.35\n'
    )
    assert apply_knowledge(fig1_model, parse_knowledge(text)) == ["a", "b"]
    result = fig1_model.solve()
    assert result.violations.round(4).to_dict() == {"a": 0.0, "b": 0.1}


def test_disjunction_and_unconditioned(fig1_model):
    text = (
        'P(disease in {"Breast Cancer", "Flu"} | gender = "male", degree = "high school")'
        " = 0\n"
        'P(disease = "Breast Cancer" | gender = "female", degree = "college") = 0\n'
    )
    apply_knowledge(fig1_model, parse_knowledge(text))
    post = fig1_model.solve().posterior(by="group")
    # Du et al. Section 3.1: q3 -> Pneumonia, q2 -> Flu in bucket 1
    assert post.loc[("male", "high school", 1), "Pneumonia"] == 1.0
    assert post.loc[("female", "college", 1), "Flu"] == 1.0


def test_persons_and_counts(fig1_model):
    text = (
        'person Iris: gender = "female", degree = "graduate"\n'
        'person James: gender = "male", degree = "graduate"\n'
        'count("Lung Cancer" among Iris, James) = 1\n'
        'P(James has "Lung Cancer") = 0\n'
    )
    names = apply_knowledge(fig1_model, parse_knowledge(text))
    assert names == ['count("Lung Cancer" among Iris, James) = 1', 'P(James has "Lung Cancer") = 0']
    assert [p.name for p in fig1_model.persons] == ["Iris", "James"]
    post = fig1_model.solve().person_posterior()
    assert post.loc["Iris", "Lung Cancer"] == pytest.approx(1.0, abs=1e-9)


def test_count_above_one(fig1_model):
    # Allen-like male college (buckets 1, 2), David-like male high school (1, 2), Iris
    text = (
        'person A: gender = "male", degree = "college"\n'
        'person D: gender = "male", degree = "high school"\n'
        'person I: gender = "female", degree = "graduate"\n'
        'count("Flu" among A, D, I) = 2\n'
        'P(I has "Flu" or "HIV") <= 0.5\n'
    )
    apply_knowledge(fig1_model, parse_knowledge(text))
    result = fig1_model.solve()
    post = result.person_posterior()
    assert float(post["Flu"].sum()) == pytest.approx(2.0, abs=1e-7)
    assert float(post.loc["I", ["Flu", "HIV"]].sum()) <= 0.5 + 1e-7


@pytest.mark.parametrize(
    ("fact", "column", "words"),
    [
        ('P(disease = "Flu" | sex = "male") = 0', 21, "unknown quasi-identifier 'sex'"),
        ('P(disease = "Flu" | gender = "mle") = 0', 30, "value 'mle' is not in column 'gender'"),
        ('P(disease = "Flux" | gender = "male") = 0', 13, "value 'Flux' is not in column"),
        ('P(gender = "male") = 0', 3, "must name the sensitive attribute 'disease'"),
        ('P(disease = "Flu" | disease = "HIV") = 0', 21, "'disease' is the sensitive attribute"),
        (
            'P(disease = "Flu" | gender = "male", degree = "junior") = 0',
            1,
            "no record of the release matches gender=male, degree=junior",
        ),
    ],
)
def test_model_errors_name_file_line_and_column(fig1_model, fact, column, words):
    stmts = parse_knowledge('P(disease = "Flu") <= 0.9\n' + fact, source="facts.txt")
    with pytest.raises(KnowledgeFileError) as info:
        apply_knowledge(fig1_model, stmts)
    assert str(info.value).startswith(f"facts.txt:2:{column}: ")
    assert words in str(info.value)
    assert fig1_model.facts == []  # the first fact was taken back


def test_duplicate_fact_name_is_an_error_at_its_line(fig1_model):
    stmts = parse_knowledge(
        'name "f": P(disease = "Flu") <= 0.9\nname "f": P(disease = "HIV") <= 0.9', "k.txt"
    )
    with pytest.raises(KnowledgeFileError, match=r"^k\.txt:2:11: .*already in the model"):
        apply_knowledge(fig1_model, stmts)


def test_all_or_nothing(fig1_model):
    fig1_model.add(fig1_model.P("Flu", gender="male") <= 0.9, name="before")
    good = parse_knowledge('P(disease = "Flu") = 0.3 +- 0.1\nname "g": P(disease = "HIV") <= 1')
    bad = parse_knowledge(
        'P(disease = "Breast Cancer" | gender = "male") = 0\n'
        'P(disease = "Flu") = 0.3 +- 0.1\n'
        'P(disease = "Flu" | gender = "robot") = 0\n',
        source="k.txt",
    )
    with pytest.raises(KnowledgeFileError, match=r"^k\.txt:3:30: "):
        apply_knowledge(fig1_model, bad)
    assert [f.name for f in fig1_model.facts] == ["before"]
    # the same model still takes knowledge and solves
    names = apply_knowledge(fig1_model, good)
    assert len(names) == 3
    assert len(fig1_model.facts) == 4
    fig1_model.solve()


def test_all_or_nothing_with_persons(fig1_model):
    fig1_model.add(fig1_model.P("Flu", gender="male") <= 0.9, name="before")
    x, n_cells = fig1_model.x, fig1_model.n_cells
    A = fig1_model.facts[0].A.toarray()
    bad = parse_knowledge(
        'person Bob: gender = "male", degree = "college"\n'
        'P(Bob has "HIV") = 1\n'
        'P(disease = "Flu" | sex = "m") = 0\n',
        source="k.txt",
    )
    with pytest.raises(KnowledgeFileError, match=r"^k\.txt:3:21: unknown quasi-identifier"):
        apply_knowledge(fig1_model, bad)
    assert fig1_model.persons == []
    assert fig1_model.x is x and fig1_model.n_cells == n_cells
    assert [f.name for f in fig1_model.facts] == ["before"]
    np.testing.assert_array_equal(fig1_model.facts[0].A.toarray(), A)
    # the person can be defined again now
    apply_knowledge(fig1_model, bad[:2])
    post = fig1_model.solve().person_posterior()
    assert post.loc["Bob", "HIV"] == pytest.approx(1.0, abs=1e-9)


def test_infeasible_knowledge_is_left_to_the_solve(fig1_model):
    from maxent_privacy import InfeasibleKnowledge

    apply_knowledge(
        fig1_model,
        parse_knowledge(
            'P(disease = "Flu" | gender = "male") = 0.3\n'
            'name "x": P(disease = "Flu" | gender = "male") = 0.5'
        ),
    )
    with pytest.raises(InfeasibleKnowledge):
        fig1_model.solve()


def test_numbers_match_string_values():
    frame = pd.DataFrame(
        {
            "age": ["30", "30", "40", "40"],
            "zip": ["1", "2", "1", "2"],
            "disease": ["Flu", "HIV", "Flu", "HIV"],
            "bucket": ["1", "1", "1", "1"],
        }
    )
    model = MaxEntModel(Bucketized(frame, qi=["age", "zip"], sa="disease", group="bucket"))
    apply_knowledge(model, parse_knowledge('P(disease = "Flu" | age = 30) = 1'))
    post = model.solve().posterior()
    assert post.loc[("30", "1"), "Flu"] == pytest.approx(1.0, abs=1e-9)
    assert post.loc[("40", "2"), "HIV"] == pytest.approx(1.0, abs=1e-9)


def test_apply_needs_statements(fig1_model):
    with pytest.raises(TypeError, match="needs Statements") as err:
        apply_knowledge(fig1_model, ['P(disease = "Flu") = 0'])
    assert isinstance(err.value, ArgumentError)  # a TypeError and an ArgumentError
    with pytest.raises(ArgumentTypeError, match=r"^parse_knowledge\(\) needs a str, got bytes$"):
        parse_knowledge(b"P(disease = 'Flu') = 0")


def test_docstring_examples():
    import doctest

    import maxent_privacy.parser as module

    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried >= 4 and failures == 0
