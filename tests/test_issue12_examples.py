"""Each failure example of the reliability review (issue 12), replayed: a clear error
naming the culprit (a MaxEntError subclass, one line), or the correct answer."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from maxent_privacy import (
    Bucketized,
    KnowledgeError,
    MaxEntError,
    MaxEntModel,
    ReleaseError,
    SolverOptionError,
    datasets,
    soft,
    vague,
)
from maxent_privacy.cli import main
from maxent_privacy.parser import parse_knowledge
from maxent_privacy.robustness import satisfies_delta_bound, wong2010_example

QI = ["gender", "degree"]


@pytest.fixture
def model():
    return MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=QI, sa="disease", group="bucket"))


def clear(err: pytest.ExceptionInfo, *words: str) -> None:
    text = str(err.value)
    assert isinstance(err.value, MaxEntError)
    assert "\n" not in text and len(text) <= 300
    for w in words:
        assert w in text, (w, text)


def test_duplicate_column_names():
    frame = datasets.du2008_figure1()
    frame.insert(0, "gender", frame.pop("gender"), allow_duplicates=True)
    frame.insert(1, "gender", frame["degree"], allow_duplicates=True)
    with pytest.raises(ReleaseError) as e:
        Bucketized(frame, qi=QI, sa="disease", group="bucket")
    clear(e, "gender")


@pytest.mark.parametrize("column", ["degree", "bucket"])
def test_list_values_in_a_qi_or_group_column(column):
    frame = datasets.du2008_figure1().astype({column: object})
    frame.at[3, column] = [1, 2]
    with pytest.raises(ReleaseError) as e:
        Bucketized(frame, qi=QI, sa="disease", group="bucket")
    clear(e, column)


def test_pooled_releases_with_different_qi():
    d1, d2 = datasets.wang2008_figure1()
    r1 = Bucketized(d1, qi=["gender", "zip"], sa="disease", group="bucket", person="pseudonym")
    r2 = Bucketized(d2, qi=["gender"], sa="disease", group="bucket", person="pseudonym")
    with pytest.raises(ReleaseError) as e:
        MaxEntModel([r1, r2])
    clear(e, "release 2", "zip")


@pytest.mark.parametrize(
    "build",
    [
        lambda f, h: f + h < 0.5,
        lambda f, h: 0.5 > f + h,
        lambda f, h: f - h < 0,
        lambda f, h: 2 * f > 1,
        lambda f, h: (f + h) / 2 < 0.3,
        lambda f, h: 1 - f < 0.2,
    ],
)
def test_strict_inequality_on_any_expression_of_P(model, build):
    flu, hiv = model.P("Flu", gender="male"), model.P("HIV", gender="male")
    with pytest.raises(KnowledgeError) as e:
        build(flu, hiv)
    clear(e, "strict inequalities")


def test_sums_of_P_compile_to_the_right_row(model):
    flu, hiv = model.P("Flu", gender="male"), model.P("HIV", gender="male")
    model.add(flu + hiv <= 0.5, name="both")
    A = model.facts[-1].A.toarray().ravel()
    want = (flu.maxent_tag.row + hiv.maxent_tag.row).toarray().ravel()
    np.testing.assert_allclose(A, want)


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda p: vague(p, 0.3, float("nan")), ["eps"]),
        (lambda p: vague(p, float("nan"), 0.1), ["p"]),
        (lambda p: soft(p == 0.3, float("inf")), ["weight"]),
    ],
)
def test_knowledge_helpers_refuse_nan_and_inf(model, make, words):
    with pytest.raises(KnowledgeError) as e:
        make(model.P("Flu", gender="male"))
    clear(e, *words)


def test_unknown_option_to_our_solver(model):
    with pytest.raises(SolverOptionError) as e:
        model.solve(maxiter=5)
    clear(e, "maxiter", "max_iter")


def test_negative_tolerance_is_not_contradictory_knowledge(model):
    with pytest.raises(SolverOptionError) as e:
        model.solve(tol=-1)
    clear(e, "tol")


def test_add_a_list_is_all_or_nothing(model):
    good = model.P("Flu", gender="male") == 0.3
    with pytest.raises(KnowledgeError):
        model.add([good, model.P("Flu", gender="male") == 1.5])
    assert model.facts == []


def test_parser_sums_and_nesting():
    terms = " + ".join(['P(disease = "Flu" | gender = "male")'] * 1000)
    (st,) = parse_knowledge(f"{terms} <= 1000", source="k.txt")
    assert st.kind == "fact"
    nested = "(" * 250 + 'P(disease = "Flu")' + ")" * 250 + " = 0.3"
    assert len(parse_knowledge(nested, source="k.txt")) == 1


def test_cli_names_an_unreadable_release(tmp_path, capsys):
    bad = tmp_path / "release.csv"
    bad.write_bytes(gzip.compress(b"gender,degree,disease,bucket\nm,c,Flu,1\n"))
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    for path in (bad, empty):
        code = main(["analyze", str(path), "--qi", *QI, "--sa", "disease", "--group", "bucket"])
        assert code == 2
        err = capsys.readouterr().err.strip()
        assert path.name in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_delta_bound_of_an_empty_group():
    frame, prior = wong2010_example()
    with pytest.raises(ReleaseError) as e:
        satisfies_delta_bound(frame.iloc[:0], prior, 2)
    clear(e, "no rows")
