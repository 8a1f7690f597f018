"""Hostile input, generated: malformed releases, pooled schemas, knowledge arguments,
robustness and anonymizer parameters (issue 12).

Every generated input either gives an answer or a MaxEntError subclass with a short
one-line message naming the culprit; never a pandas, numpy or cvxpy exception.
"""

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from maxent_privacy import (
    Bucketized,
    KnowledgeError,
    MaxEntError,
    MaxEntModel,
    ReleaseError,
    datasets,
)
from maxent_privacy.anonymize import anatomize
from maxent_privacy.data import check_same_schema
from maxent_privacy.generalized import Generalized
from maxent_privacy.knowledge import soft, vague
from maxent_privacy.mondrian import mondrian
from maxent_privacy.robustness import (
    Prior,
    delta_report,
    exact_posterior,
    satisfies_delta_bound,
    wong2010_example,
)

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def check_clear(error: BaseException, *culprits) -> None:
    msg = str(error)
    assert isinstance(error, MaxEntError), f"{type(error).__name__}: {msg}"
    assert "\n" not in msg and 0 < len(msg) < 400, msg
    assert any(str(c) in msg for c in culprits), (culprits, msg)


# ------------------------------------------------------------------ valid releases
names = st.sampled_from(["age", "zip", "sex", "job", 0, 1, "Gender Code"])
scalars = st.one_of(
    st.integers(-5, 5),
    st.sampled_from(["a", "b", "Flu", "HIV", "", " x "]),
    st.floats(-3, 3, allow_nan=False),
)


@st.composite
def releases(draw):
    """A valid release table: (frame, qi, sa, group, person)."""
    n = draw(st.integers(1, 8))
    qi = draw(st.lists(names, min_size=1, max_size=3, unique=True))
    frame = pd.DataFrame({c: draw(st.lists(scalars, min_size=n, max_size=n)) for c in qi})
    frame["disease"] = draw(
        st.lists(st.sampled_from(["Flu", "HIV", "Cold"]), min_size=n, max_size=n)
    )
    frame["bucket"] = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    frame["pid"] = draw(st.permutations(list(range(100, 100 + n))))
    frame.index = draw(st.sampled_from([pd.RangeIndex(n), pd.Index([f"r{i}" for i in range(n)])]))
    return frame, qi, "disease", "bucket", draw(st.sampled_from([None, "pid"]))


NOT_SINGLE = st.sampled_from(
    [[1, 2], ["a"], {"a": 1}, {"a"}, ("a", 1), frozenset({1}), np.array([1, 2])]
)
MISSING = st.sampled_from([None, np.nan, pd.NA, pd.NaT])


@st.composite
def malformed(draw):
    """A release table with one fault; returns (frame, kwargs, culprits)."""
    frame, qi, sa, group, person = draw(releases())
    frame = frame.copy()
    kwargs = dict(qi=list(qi), sa=sa, group=group, person=person)
    roles = list(qi) + [sa, group] + ([person] if person is not None else [])
    col = draw(st.sampled_from(roles))
    row = draw(st.integers(0, len(frame) - 1))
    fault = draw(
        st.sampled_from(
            [
                "duplicate column",
                "not a single value",
                "missing value",
                "missing column",
                "no rows",
                "multiindex",
                "not a frame",
                "bad qi argument",
                "bad label argument",
                "two roles",
                "duplicate person",
            ]
        )
    )
    label = repr(frame.index[row])
    if fault == "duplicate column":
        frame = pd.concat([frame, frame[[col]]], axis=1)
        return frame, kwargs, [f"{col!r} occurs 2 times"]
    if fault == "not a single value":
        frame[col] = frame[col].astype(object)
        frame.iat[row, frame.columns.get_loc(col)] = draw(NOT_SINGLE)
        return frame, kwargs, [f"column {col!r} holds"]
    if fault == "missing value":
        frame[col] = frame[col].astype(object)
        frame.iat[row, frame.columns.get_loc(col)] = draw(MISSING)
        return frame, kwargs, [f"column {col!r} has a missing value (row {label})"]
    if fault == "missing column":
        return frame.drop(columns=col), kwargs, [f"column {col!r} is not in the table"]
    if fault == "no rows":
        return frame.iloc[:0], kwargs, ["no rows"]
    if fault == "multiindex":
        frame.columns = pd.MultiIndex.from_product([["t"], frame.columns])
        return frame, kwargs, ["MultiIndex columns"]
    if fault == "not a frame":
        other = draw(
            st.sampled_from(["dict", "records", "array", "series", "path", "none", "list"])
        )
        value = {
            "dict": frame.to_dict(),
            "records": frame.to_dict("records"),
            "array": frame.to_numpy(),
            "series": frame[col],
            "path": "release.csv",
            "none": None,
            "list": [frame],
        }[other]
        return value, kwargs, ["needs a pandas DataFrame"]
    if fault == "bad qi argument":
        kwargs["qi"] = draw(st.sampled_from([None, 3, 2.5, [list(qi)], [{"a"}], {"x": 1}]))
        return frame, kwargs, ["qi must be", "quasi-identifier 1 of qi"]
    if fault == "bad label argument":
        arg = draw(st.sampled_from(["sa", "group", "person"]))
        kwargs[arg] = draw(st.sampled_from([[col], {col}, {col: 1}, (col,), np.array([col])]))
        return frame, kwargs, [f"{arg} must be one column name"]
    if fault == "two roles":
        arg = draw(st.sampled_from(["sa", "group", "person"]))
        kwargs[arg] = qi[0]
        return frame, kwargs, [f"{qi[0]!r} is given more than one role"]
    # duplicate person
    assume(len(frame) > 1)
    pid = int(frame["pid"].iloc[0])
    frame["pid"] = pid
    kwargs["person"] = "pid"
    return frame, kwargs, [f"person id {pid!r} occurs in more than one row"]


@SETTINGS
@given(case=releases(), cls=st.sampled_from([Bucketized, Generalized]))
def test_valid_releases_are_accepted(case, cls):
    frame, qi, sa, group, person = case
    before = frame.copy()
    try:
        release = cls(frame, qi=qi, sa=sa, group=group, person=person)
    except ReleaseError as e:
        # a generalized release may refuse a cell it cannot read (an empty string, ...)
        assert cls is Generalized, e
        check_clear(e, "column")
        return
    assert release.n_records == len(frame)
    pd.testing.assert_frame_equal(frame, before)


@settings(max_examples=25, deadline=None)
@given(case=releases())
def test_valid_bucketized_releases_solve(case):
    frame, qi, sa, group, person = case
    result = MaxEntModel(Bucketized(frame, qi=qi, sa=sa, group=group)).solve()
    assert np.allclose(result.posterior().sum(axis=1), 1, atol=1e-6)


@SETTINGS
@given(case=malformed(), cls=st.sampled_from([Bucketized, Generalized]))
def test_malformed_releases_get_a_clear_error(case, cls):
    frame, kwargs, culprits = case
    with pytest.raises(Exception) as e:
        cls(frame, **kwargs)
    check_clear(e.value, *culprits)


@SETTINGS
@given(
    cell=st.one_of(
        st.text(max_size=12),
        st.from_regex(r"\[\s*-?\d{1,3}\s*-\s*-?\d{1,3}\s*\]", fullmatch=True),
        st.from_regex(r"\{[a-c, ]{0,6}\}?", fullmatch=True),
        st.sampled_from(["[1e999-2]", "[5-1]", "[a-b]", "{a,,b}", "{a", "a}", "[1-", "*"]),
    )
)
def test_generalized_cells(cell):
    frame = pd.DataFrame({"age": [cell, "*"], "d": ["Flu", "HIV"], "g": [1, 1]})
    try:
        Generalized(frame, qi=["age"], sa="d", group="g")
    except Exception as e:  # noqa: BLE001 - the test is that it is a MaxEntError
        check_clear(e, "column 'age'")


# ------------------------------------------------------------------ pooled schemas
@st.composite
def pooled(draw):
    """Wang et al.'s two releases, the second maybe changed; (releases, culprits)."""
    d1, d2 = datasets.wang2008_figure1()
    change = draw(
        st.sampled_from(
            ["none", "drop qi", "rename qi", "order", "rename sa", "text zip", "text ids", "frame"]
        )
    )
    qi, sa, frame = ["gender", "zip"], "disease", d2.copy()
    culprits = []
    if change == "drop qi":
        qi, culprits = ["gender"], ["lacks 'zip'"]
    elif change == "rename qi":
        frame, qi = frame.rename(columns={"zip": "zip5"}), ["gender", "zip5"]
        culprits = ["'zip5'"]
    elif change == "order":
        qi, culprits = ["zip", "gender"], ["another order"]
    elif change == "rename sa":
        frame, sa, culprits = frame.rename(columns={"disease": "dx"}), "dx", ["'dx'"]
    elif change == "text zip":
        frame, culprits = frame.astype({"zip": str}), ["'zip' holds"]
    elif change == "text ids":
        frame, culprits = frame.astype({"pseudonym": str}), ["person id column"]
    first = Bucketized(d1, ["gender", "zip"], "disease", "bucket", person="pseudonym")
    second = Bucketized(frame, qi, sa, "bucket", person="pseudonym")
    if change == "frame":
        second, culprits = frame, ["is a DataFrame"]
    repeat = draw(st.integers(0, 2))  # more copies of the first release in front
    releases = [first] * repeat + draw(st.permutations([first, second]))
    if change == "drop qi" and releases[0] is second:
        culprits = ["has 'zip' in addition"]
    return releases, culprits, change


@SETTINGS
@given(case=pooled())
def test_pooled_schemas(case):
    releases, culprits, change = case
    if change == "none":
        assert check_same_schema(releases) is None
        return
    with pytest.raises(Exception) as e:
        check_same_schema(releases)
    check_clear(e.value, *culprits)
    assert "release " in str(e.value)


# ------------------------------------------------------------------ knowledge numbers
anything = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-3, 3),
    st.fractions(max_denominator=10),
    st.booleans(),
    st.none(),
    st.text(max_size=4),
    st.lists(st.floats(0, 1), max_size=2),
    st.sampled_from([np.float32(0.5), np.int64(1), np.bool_(True), np.array(0.2), 1j]),
)


def finite(value) -> float | None:
    if isinstance(value, (bool, np.bool_, str, list, complex)) or value is None:
        return None
    if isinstance(value, np.ndarray):
        value = value.item()
    out = float(value)
    return out if math.isfinite(out) else None


@pytest.fixture(scope="module")
def model():
    release = Bucketized(datasets.du2008_figure1(), ["gender", "degree"], "disease", "bucket")
    return MaxEntModel(release)


@SETTINGS
@given(p=anything, eps=anything)
def test_vague_numbers(model, p, eps):
    fp, feps = finite(p), finite(eps)
    expr = model.P("Flu", gender="male")
    if fp is not None and feps is not None and 0 <= fp <= 1 and feps >= 0:
        fact = vague(expr, p, eps)
        assert (fact.p, fact.eps) == (fp, feps)
        return
    with pytest.raises(Exception) as e:
        vague(expr, p, eps)
    bad = "p" if fp is None else "eps" if feps is None else None
    culprits = [f"{bad} must be"] if bad else ["eps must be >= 0", "probability"]
    check_clear(e.value, *culprits)


@SETTINGS
@given(weight=anything)
def test_soft_numbers(model, weight):
    fact = model.P("Flu", gender="male") == 0.3
    fw = finite(weight)
    if fw is not None and fw > 0:
        assert soft(fact, weight).weight == fw
        return
    with pytest.raises(KnowledgeError) as e:
        soft(fact, weight)
    check_clear(e.value, "weight must be")


# ------------------------------------------------------------------ robustness inputs
@st.composite
def groups(draw):
    frame, prior = wong2010_example()
    rows = draw(st.lists(st.integers(0, 3), max_size=4, unique=True))
    group = frame.iloc[rows].copy()
    fault = draw(st.sampled_from(["none", "nan sa", "nan attr", "list sa", "dup sa"]))
    if rows and fault == "nan sa":
        group.iloc[0, group.columns.get_loc("Disease")] = np.nan
        return group, prior, ["'Disease' has a missing value"]
    if rows and fault == "nan attr":
        group.iloc[0, group.columns.get_loc("Gender")] = None
        return group, prior, ["'Gender' has a missing value"]
    if rows and fault == "list sa":
        group["Disease"] = group["Disease"].astype(object)
        group.iat[0, group.columns.get_loc("Disease")] = ["Flu"]
        return group, prior, ["'Disease' holds"]
    if rows and fault == "dup sa":
        return pd.concat([group, group[["Disease"]]], axis=1), prior, ["occurs 2 times"]
    return group, prior, ["the group has no rows"] if not rows else []


r_values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-2, 6),
    st.fractions(min_value=0, max_value=5, max_denominator=4),
    st.sampled_from([None, "2", True, [2]]),
)


@SETTINGS
@given(case=groups(), r=r_values)
def test_delta_bound_inputs(case, r):
    group, prior, culprits = case
    r_ok = (
        not isinstance(r, (bool, str, list)) and r is not None and math.isfinite(float(r)) and r > 1
    )
    try:
        answer = satisfies_delta_bound(group, prior, r)
    except Exception as e:  # noqa: BLE001 - the test is that it is a MaxEntError
        check_clear(e, *(culprits or []), *([] if r_ok else ["r must be a number above 1"]))
        return
    assert r_ok and not culprits and isinstance(answer, bool)
    report = delta_report(group, prior, r)
    assert answer == bool(report["ok"].all()) and len(report) > 0
    if len(group) < r:
        assert answer is False


@SETTINGS
@given(
    table=st.lists(
        st.lists(
            st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.none()),
            min_size=2,
            max_size=2,
        ),
        min_size=2,
        max_size=2,
    ),
    other=st.sampled_from([None, "y"]),
)
def test_prior_tables(table, other):
    frame = pd.DataFrame(table, columns=["x", "y"], index=pd.Index(["m", "f"], name="sex"))
    arr = frame.to_numpy(dtype=float)
    probs = np.isfinite(arr).all() and ((arr >= 0) & (arr <= 1)).all()
    with np.errstate(over="ignore", invalid="ignore"):
        sums = arr.sum(axis=1)
    ok = probs and (sums <= 1 + 1e-9).all() and (sums >= 1 - 1e-9).all()  # whole rows
    if ok:
        prior = Prior(frame, "d", other=other)
        group = pd.DataFrame({"sex": ["m", "f"], "d": ["x", "z" if other else "y"]})
        try:
            post = exact_posterior(group, prior)
        except KnowledgeError as e:  # every world has prior probability 0
            check_clear(e, "prior probability 0")
        else:
            assert np.allclose(post.to_numpy(dtype=float).sum(axis=1), 1)
        return
    with pytest.raises(KnowledgeError) as e:
        Prior(frame, "d", other=other)
    check_clear(e.value, "is not a probability", "sums to")


# ------------------------------------------------------------------ anonymizer params
params = st.one_of(
    st.integers(-2, 14),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([None, "2", True, [2], Fraction(1, 2)]),
)
MICRO = pd.DataFrame({"zip": list(range(12)), "sex": list("MF" * 6), "d": ["a", "b", "c", "d"] * 3})


@SETTINGS
@given(l=params)  # noqa: E741
def test_anatomize_l(l):  # noqa: E741
    try:
        release = anatomize(MICRO, ["zip"], "d", l=l)
    except Exception as e:  # noqa: BLE001 - the test is that it is a MaxEntError
        check_clear(e, "l must be a whole number", "-diversity")
        return
    assert not isinstance(l, bool) and float(l).is_integer() and 2 <= l <= 4
    assert release.n_records == 12


@SETTINGS
@given(k=params, c=params)
def test_mondrian_k_c(k, c):
    try:
        release = mondrian(MICRO, ["zip", "sex"], "d", k=k, c=c)
    except Exception as e:  # noqa: BLE001 - the test is that it is a MaxEntError
        check_clear(e, "k must be", "c must be", "fewer than k", "(k, c)-anonymous")
        return
    assert not isinstance(k, bool) and float(k).is_integer() and 1 <= k <= 12
    assert release.n_records == 12
