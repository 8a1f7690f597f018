"""Every bad input gets a one-line error naming the culprit."""

import cvxpy as cp
import pandas as pd
import pytest

from maxent_privacy import (
    Bucketized,
    InaccurateSolution,
    InfeasibleKnowledge,
    KnowledgeError,
    MaxEntModel,
    ReleaseError,
    SolverNotInstalled,
)


def one_line(excinfo):
    msg = str(excinfo.value)
    assert "\n" not in msg
    return msg


def test_unknown_attribute(model):
    with pytest.raises(KnowledgeError, match="'gendr'") as e:
        model.P("Flu", gendr="male")
    assert "gender, degree" in one_line(e)


def test_sensitive_attribute_as_condition(model):
    with pytest.raises(KnowledgeError, match="'disease' is the sensitive attribute"):
        model.P("Flu", disease="HIV")


def test_unknown_qi_value(model):
    with pytest.raises(KnowledgeError, match="'mal'.*'gender'") as e:
        model.P("Flu", gender="mal")
    assert "female, male" in one_line(e)


def test_unknown_sensitive_value(model):
    with pytest.raises(KnowledgeError, match="sensitive value 'Cancer'.*'disease'"):
        model.P("Cancer", gender="male")


def test_no_matching_record(model):
    with pytest.raises(KnowledgeError, match="gender=male, degree=junior"):
        model.P("Flu", gender="male", degree="junior")


@pytest.mark.parametrize("p", [1.3, -0.1])
def test_probability_outside_unit_interval(model, p):
    with pytest.raises(KnowledgeError, match=f"probability {p:g} is outside \\[0, 1\\]"):
        model.add(model.P("Flu", gender="male") == p)
    with pytest.raises(KnowledgeError, match="'flu'"):
        model.add(p <= model.P("Flu", gender="male"), name="flu")
    assert model.facts == []


def test_non_dcp_fact(model):
    p = model.P("Flu", gender="male")
    with pytest.raises(KnowledgeError, match="'odd'.*not DCP"):
        model.add(cp.square(p) == 0.09, name="odd")
    assert model.facts == []


def test_not_a_constraint(model):
    with pytest.raises(KnowledgeError, match="not a cvxpy constraint"):
        model.add(model.P("Flu", gender="male"), name="expr")
    with pytest.raises(KnowledgeError, match="plain boolean"):
        model.add(0.3 == 0.3)


def test_foreign_variable(model):
    z = cp.Variable(name="z")
    with pytest.raises(KnowledgeError, match="variable 'z'"):
        model.add(model.P("Flu", gender="male") == z, name="f")


def test_duplicate_fact_name(model):
    model.add(model.P("Flu", gender="male") <= 0.9, name="f")
    with pytest.raises(KnowledgeError, match="'f' is already"):
        model.add(model.P("Flu", gender="male") >= 0.1, name="f")


def test_uninstalled_solver_lists_installed(model):
    with pytest.raises(SolverNotInstalled, match="'GUROBI_X' is not installed") as e:
        model.solve(solver="GUROBI_X")
    assert "CLARABEL" in one_line(e) and "ECOS" in one_line(e)


def test_solver_without_exp_cone(model):
    with pytest.raises(SolverNotInstalled, match="exponential cone"):
        model.solve(solver="OSQP")


def test_residual_above_tolerance_raises(model):
    model.add(model.P("Flu", gender="male") == 0.3)
    with pytest.raises(InaccurateSolution, match="fails our check"):
        model.solve(polish=False, tol=1e-15)


def test_contradictory_fact_raises(model):
    # bucket 1 holds two Flu records among three men: P(Flu | male) >= 2/6
    model.add(model.P("Flu", gender="male") == 0.1, name="too few flu")
    with pytest.raises(InfeasibleKnowledge, match="too few flu") as e:
        model.solve()
    assert list(e.value.conflicts["fact"]) == ["too few flu"]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(qi=["gender", "age"], sa="disease", group="bucket"), "quasi-identifier column 'age'"),
        (dict(qi=["gender"], sa="illness", group="bucket"), "sensitive column 'illness'"),
        (dict(qi=["gender"], sa="disease", group="grp"), "group column 'grp'"),
        (dict(qi=["gender"], sa="disease", group="bucket", person="id"), "person column 'id'"),
        (dict(qi=["gender", "disease"], sa="disease", group="bucket"), "'disease' is given more"),
        (dict(qi=[], sa="disease", group="bucket"), "at least one quasi-identifier"),
    ],
)
def test_release_columns(figure1, kwargs, match):
    with pytest.raises(ReleaseError, match=match):
        Bucketized(figure1, **kwargs)


def test_release_missing_value(figure1):
    frame = figure1.copy()
    frame.loc[3, "degree"] = None
    with pytest.raises(ReleaseError, match="'degree' has a missing value \\(row 3\\)"):
        Bucketized(frame, qi=["gender", "degree"], sa="disease", group="bucket")


def test_release_duplicate_person(figure1):
    frame = figure1.assign(pid=[1, 2, 3, 4, 5, 6, 7, 8, 9, 1])
    with pytest.raises(ReleaseError, match="person id 1"):
        Bucketized(frame, qi=["gender"], sa="disease", group="bucket", person="pid")


def test_model_needs_a_release():
    with pytest.raises(ReleaseError, match="DataFrame"):
        MaxEntModel(pd.DataFrame())


def test_strict_inequalities_are_refused_with_the_reason(model):
    p = model.P("Flu", gender="male")
    for attempt in (lambda: p < 0.3, lambda: 0.3 < p, lambda: p > model.P("HIV", gender="male")):
        with pytest.raises(KnowledgeError, match="strict inequalities.*no maximizer.*<= or >="):
            attempt()
    alice = model.person("Alice", gender="female", degree="junior")
    with pytest.raises(KnowledgeError, match="strict inequalities"):
        alice.P("HIV") > 0.5  # noqa: B015
