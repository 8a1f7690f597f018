"""maxent_privacy._validation: every argument checked in one place, with one error (issue 38)."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import KnowledgeError, MaxEntError, ReleaseError
from maxent_privacy._validation import (
    REACHES,
    ArgumentError,
    ArgumentTypeError,
    KnowledgeArgumentError,
    ReleaseArgumentError,
    aliased,
    check_choice,
    check_columns,
    check_flag,
    check_integer,
    check_keywords,
    check_number,
    check_probability,
    check_progress,
    check_seconds,
    check_seed,
    check_threshold,
    deprecated_alias,
    listed,
    reaches,
)


def refused(call, message: str, error=ArgumentError):
    with pytest.raises(error, match=message) as err:
        call()
    assert "\n" not in str(err.value)
    return err.value


def test_the_errors_are_one_family():
    for error in (ArgumentError, ArgumentTypeError, ReleaseArgumentError, KnowledgeArgumentError):
        assert issubclass(error, MaxEntError) and issubclass(error, ArgumentError)
        assert issubclass(error, ValueError)
    assert issubclass(ArgumentTypeError, TypeError)
    assert issubclass(ReleaseArgumentError, ReleaseError)
    assert issubclass(KnowledgeArgumentError, KnowledgeError)


@pytest.mark.parametrize("value, want", [(3, 3), (np.int64(3), 3), (3.0, 3), (2**60, 2**60)])
def test_check_integer_takes_whole_numbers(value, want):
    got = check_integer(value, "n")
    assert got == want and type(got) is int


@pytest.mark.parametrize("bad", [True, np.True_, 2.5, "3", None, math.nan, math.inf, 1e300, [3]])
def test_check_integer_refuses_the_rest(bad):
    refused(lambda: check_integer(bad, "n"), r"^n must be a whole number, got ")


def test_check_integer_bounds_and_the_value_as_given():
    refused(lambda: check_integer(1.0, "l", minimum=2), r"^l must be a whole number >= 2, got 1.0$")
    refused(lambda: check_integer(3, "qd", maximum=2), r"^qd must be a whole number <= 2, got 3$")
    refused(
        lambda: check_integer(0, "qd", minimum=1, maximum=2),
        r"^qd must be a whole number in \[1, 2\], got 0$",
    )
    assert check_integer(2, "qd", minimum=1, maximum=2) == 2
    refused(lambda: check_integer(0, "k", minimum=1, error=ReleaseArgumentError), "k", ReleaseError)


def test_check_number_and_probability():
    assert check_number(np.float32(0.5), "x", minimum=0, maximum=1) == 0.5
    refused(lambda: check_number(-1, "alpha", minimum=0), r"^alpha must be a finite number >= 0")
    refused(lambda: check_number(2, "x", maximum=1), r"^x must be a finite number <= 1, got 2$")
    refused(lambda: check_number(math.inf, "x"), r"^x must be a finite number, got inf$")
    refused(lambda: check_number(True, "x"), r"got True$")
    assert check_probability(Fraction(1, 2), "f") == 0.5
    for bad in (-0.1, 1.1, math.nan, "0.5", None):
        refused(lambda b=bad: check_probability(b, "f"), r"^f must be a probability in \[0, 1\]")


@pytest.mark.parametrize("bad", [0, -0.1, 1.5, math.nan, "0.5", None, True])
def test_check_threshold(bad):
    assert check_threshold(1) == 1.0 and check_threshold(np.float64(0.3)) == 0.3
    refused(lambda: check_threshold(bad), r"^threshold must be a number in \(0, 1\], got ")
    refused(lambda: check_threshold(bad, "tau"), r"^tau must be")


def test_reaches_is_the_one_tolerance():
    assert REACHES == 1e-9
    assert reaches(0.5 - 1e-10, 0.5) and not reaches(0.5 - 1e-8, 0.5)
    got = reaches(pd.Series([0.2, 0.5 - 1e-12, 0.9]), 0.5)
    assert isinstance(got, np.ndarray) and got.tolist() == [False, True, True]


def test_check_seconds():
    assert check_seconds(None) is None and check_seconds(0) == 0.0
    refused(lambda: check_seconds(None, none=False), r"seconds >= 0, got None$")
    refused(lambda: check_seconds(0, positive=True), r"^time_limit must be .* > 0, or None, got 0$")
    refused(lambda: check_seconds(math.inf, "budget"), r"^budget must be a finite number")
    refused(lambda: check_seconds(-1, error=ReleaseArgumentError), "got -1", ReleaseError)


def test_check_choice_lists_the_first_ten():
    assert check_choice(None, "by", (None, "group")) is None
    refused(lambda: check_choice(1, "by", (None, True)), r"^by must be None or True, got 1$")
    err = refused(lambda: check_choice("z", "name", [f"n{i}" for i in range(12)]), "^name must be")
    assert "'n9', ... (12 in all), got 'z'" in str(err)
    assert listed(["a"]) == "'a'" and listed([]) == ""


def test_check_flag_reads_text_the_same_everywhere():
    for yes in (True, np.True_, 1, "yes", "True", " y ", "1"):
        assert check_flag(yes, "exact") is True
    for no in (False, 0, "no", "FALSE", "0", ""):
        assert check_flag(no, "exact") is False
    for bad in (2, "maybe", None, 0.5):
        refused(lambda b=bad: check_flag(b, "exact"), r"^exact must be True or False, got ")


def test_check_seed():
    generator = np.random.default_rng(1)
    assert check_seed(None) is None and check_seed(generator) is generator
    assert check_seed(np.int64(7)) == 7
    for bad in (-1, 1.5, True, "1"):
        refused(lambda b=bad: check_seed(b), r"^seed must be a whole number >= 0, None or a numpy")


def test_check_columns():
    frame = pd.DataFrame({"a": [1], "b": [2]})
    assert check_columns(frame, "a", "qi") == ["a"]
    assert check_columns(frame, ("a", "b"), "qi") == ["a", "b"]
    refused(lambda: check_columns(frame, ["a", "z"], "qi"), r"^qi: no column 'z'; the columns")


def test_check_progress_is_one_type(capsys):
    assert check_progress(None) is None and check_progress(False) is None
    assert check_progress(np.False_) is None
    lines: list[str] = []
    assert check_progress(lines.append) == lines.append
    say = check_progress(True, prefix="plan")
    say("round 1")
    assert capsys.readouterr() == ("", "plan: round 1\n")
    check_progress(np.True_)("x")
    assert capsys.readouterr().err == "x\n"
    refused(lambda: check_progress("yes"), r"^progress must be None, True/False or a function")


def test_deprecated_alias_and_aliased():
    given = {"person": None, "id_column": "name"}
    with pytest.warns(DeprecationWarning, match=r"^f\(\): id_column= is deprecated; use person="):
        deprecated_alias(given, "id_column", "person", "f()")
    assert given == {"person": "name"}
    quiet = {"person": "name"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        deprecated_alias(quiet, "id_column", "person", "f()")
        assert aliased("name", {}, "id_column", "person", "f()") == "name"
    refused(
        lambda: deprecated_alias({"person": "a", "id_column": "b"}, "id_column", "person", "f()"),
        r"^f\(\): give person= only \(id_column= is its old name\)$",
    )

    def f(person=None, **old):
        return aliased(person, old, "id_column", "person", "f()")

    with pytest.warns(DeprecationWarning) as caught:
        assert f(id_column="name") == "name"
    assert caught[0].filename == __file__  # the caller's line, not ours
    refused(lambda: f(persn="x"), r"^f\(\) got an unexpected keyword argument 'persn'$", TypeError)
    refused(lambda: check_keywords({"a": 1}, "g()"), "unexpected keyword", ArgumentTypeError)
