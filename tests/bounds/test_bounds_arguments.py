"""Issue 22, item 5: every argument of ``bounds`` (and of what calls it: ``model.bounds``,
``Result.bounds``) and the risk table's threshold is checked at the boundary, with one
line naming the argument and the values it takes; nothing reaches numpy's SeedSequence,
HiGHS or cvxpy unchecked, and ``time_limit=nan`` is not "no limit"."""

from __future__ import annotations

import math

import cvxpy as cp
import pytest

from maxent_privacy import Bucketized, MaxEntError, MaxEntModel, datasets
from maxent_privacy.bounds import bounds
from maxent_privacy.bounds.arguments import check_bounds_arguments, check_time_limit


@pytest.fixture(scope="module")
def model():
    release = Bucketized(
        datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket"
    )
    m = MaxEntModel(release)
    m.add(m.P("Breast Cancer", gender="male") == 0)
    return m


def refused(call, *words):
    with pytest.raises(MaxEntError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, (word, message)
    return message


@pytest.mark.parametrize("bad", ["abc", None, math.nan, -1, math.inf, True, [5]])
def test_time_limit(model, bad):
    refused(lambda: model.bounds(time_limit=bad), "time_limit", "finite number of seconds >= 0")


def test_time_limit_nan_is_not_no_limit(model):
    refused(lambda: model.bounds(exact=True, time_limit=math.nan), "time_limit", "nan")
    assert check_time_limit(0) == 0.0 and check_time_limit(2.5) == 2.5
    with pytest.warns(UserWarning, match="time limit ran out"):
        model.bounds(time_limit=0)  # zero seconds: trivial, marked bounds, not an error


@pytest.mark.parametrize("bad", ["x", -1, 1.5, math.nan])
def test_seed(model, bad):
    refused(lambda: model.bounds(seed=bad), "seed", "whole number >= 0")


def test_solver_is_checked_before_cvxpy(model):
    """A convex fact sends a component to cvxpy: 'BOGUS' gave cvxpy's SolverError."""
    convex = MaxEntModel(model.release)
    convex.add(cp.square(convex.P("Flu", gender="male")) <= 0.25)
    message = refused(lambda: convex.bounds(solver="BOGUS"), "solver", "CLARABEL")
    assert "BOGUS" in message
    refused(lambda: convex.bounds(solver=3), "solver")


@pytest.mark.parametrize("bad", ["people", "GROUP", 1, ["group"]])
def test_by(model, bad):
    refused(lambda: model.bounds(by=bad), "by must be None, 'group', 'person' or 'class'")


@pytest.mark.parametrize("bad", [[], set(), [None], [["Flu"]], {"Flu": 1}, object()])
def test_values(model, bad):
    refused(lambda: model.bounds(values=bad), "values")


def test_unknown_value_is_named(model):
    refused(lambda: model.bounds(values="Measles"), "'Measles'", "Flu")


def test_exact_must_be_a_bool(model):
    refused(lambda: model.bounds(exact="yes"), "exact must be True or False")


def test_result_bounds_and_bounds_check_too(model):
    result = model.solve()
    refused(lambda: result.bounds(time_limit="abc"), "time_limit")
    refused(lambda: result.bounds(by="people"), "by must be")
    refused(lambda: bounds(model, seed="x"), "seed")


def test_good_arguments_pass():
    check_bounds_arguments(None, "person", ["Flu"], True, 0, "clarabel", 7)
    check_bounds_arguments(None, None, "Flu", False, 60.0, "SCS", None)


@pytest.mark.parametrize("bad", ["x", None, math.nan, 0, -0.1, 1.5])
def test_risk_table_threshold(model, bad):
    result = model.solve()
    with pytest.raises(ValueError, match=r"threshold must be (a number )?in \(0, 1\]"):
        result.risk_table(bad)
