"""The anonymizers' one signature and shared contract (issue 38, item 2).

Every anonymizer of ``anonymize.ANONYMIZERS`` passes ``check_anonymizer`` (a valid release
of the same people, deterministic by seed, person ids kept when asked, its own privacy
parameter met by the package's checker, bad parameters refused with an ArgumentError);
the old positional calls still work, with a DeprecationWarning; a toy anonymizer
registered here shows up in ANONYMIZERS and passes the contract too.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import maxent_privacy
from maxent_privacy import Bucketized, anonymize, datasets
from maxent_privacy._validation import ArgumentError
from maxent_privacy.adversaries.prior import Prior
from maxent_privacy.anonymize import ANONYMIZERS, check_anonymizer, register

QI, SA, PID = ["sex"], "occupation", "pid"


@pytest.fixture(scope="module")
def adult():
    frame = datasets.du2008_adult(n=120).reset_index(drop=True)
    frame[PID] = np.arange(len(frame)) + 1000
    return frame


@pytest.fixture()
def no_deprecation():
    """Our own calls must not use the old positional form."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        yield


@pytest.mark.parametrize("name", sorted(ANONYMIZERS))
def test_every_anonymizer_meets_the_contract(name, adult, no_deprecation):
    check_anonymizer(ANONYMIZERS[name], adult, QI, SA, PID)


@pytest.mark.parametrize("name", sorted(ANONYMIZERS))
def test_every_anonymizer_has_the_one_signature(name):
    entry = ANONYMIZERS[name]
    params = inspect.signature(entry.function).parameters
    assert list(params)[:3] == ["frame", "qi", "sa"]
    rest = [p for p in list(params.values())[3:]]
    assert all(p.kind == p.KEYWORD_ONLY for p in rest), name
    assert {entry.parameter, "group", "person", "seed", "nonsensitive"} <= set(params)
    assert ("history" in params) == entry.history
    assert params["group"].default == "group" and params["person"].default is None
    assert params["seed"].default == 0 and params["nonsensitive"].default is None
    assert getattr(anonymize, name) is entry.function  # exported from the wing


def test_the_registry_lists_ours():
    assert sorted(ANONYMIZERS) == [
        "anatomize",
        "history_guided",
        "m_invariant",
        "mondrian",
        "rebucketize",
        "robust_anonymize",
    ]
    assert {n: e.parameter for n, e in ANONYMIZERS.items()} == {
        "anatomize": "l",
        "rebucketize": "l",
        "history_guided": "l",
        "m_invariant": "m",
        "mondrian": "k",
        "robust_anonymize": "r",
    }
    assert [n for n, e in ANONYMIZERS.items() if e.history] == ["history_guided", "m_invariant"]


# -- a new anonymizer: one function, one register call ----------------------------------


def everyone_in_k_groups(
    frame, qi, sa, *, k, group="group", person=None, seed=0, nonsensitive=None
) -> Bucketized:
    """A toy: the records dealt at random into groups of at least k (no diversity)."""
    from maxent_privacy._validation import check_integer, check_seed

    k = check_integer(k, "k", minimum=1)
    rng = np.random.default_rng(check_seed(seed))
    n_groups = max(1, len(frame) // k)
    out = frame[list(qi) + [sa] + ([person] if person else [])].copy()
    out[group] = rng.permutation(np.arange(len(frame)) % n_groups) + 1
    return Bucketized(out, qi=list(qi), sa=sa, group=group, person=person)


def at_least_k(release, *, k, **_):
    return bool((release.frame.groupby(release.group).size() >= k).all())


@pytest.fixture()
def toy():
    entry = register("toy", everyone_in_k_groups, parameter="k", check=at_least_k, default=5)
    yield entry
    ANONYMIZERS.pop("toy")


def test_a_registered_anonymizer_shows_up_and_passes_the_contract(toy, adult):
    assert ANONYMIZERS["toy"] is toy
    assert toy.parameter == "k" and not toy.history
    check_anonymizer("toy", adult, QI, SA, PID)


def test_the_contract_catches_a_broken_anonymizer(adult):
    def unseeded(frame, qi, sa, *, k, group="group", person=None, seed=0, nonsensitive=None):
        return everyone_in_k_groups(
            frame, qi, sa, k=k, group=group, person=person, seed=None, nonsensitive=None
        )

    register("unseeded", unseeded, parameter="k", check=at_least_k, default=5)
    try:
        with pytest.raises(AssertionError, match="run twice"):
            check_anonymizer("unseeded", adult, QI, SA, PID)
    finally:
        ANONYMIZERS.pop("unseeded")


def test_register_checks_the_signature_and_the_name(toy):
    def positional(frame, qi, sa, k, group="group", person=None, seed=0, nonsensitive=None):
        return None

    def no_person(frame, qi, sa, *, k, group="group", seed=0, nonsensitive=None):
        return None

    with pytest.raises(ArgumentError, match="keyword-only"):
        register("bad", positional, parameter="k", check=at_least_k, default=2)
    with pytest.raises(ArgumentError, match="'person'"):
        register("bad", no_person, parameter="k", check=at_least_k, default=2)
    with pytest.raises(ArgumentError, match="its privacy parameter"):
        register("bad", everyone_in_k_groups, parameter="l", check=at_least_k, default=2)
    with pytest.raises(ArgumentError, match="history"):
        register("bad", everyone_in_k_groups, parameter="k", check=at_least_k, default=2,
                 history=True)  # fmt: skip
    with pytest.raises(ArgumentError, match="replace=True"):
        register("toy", everyone_in_k_groups, parameter="k", check=at_least_k, default=2)
    assert "bad" not in ANONYMIZERS
    again = register(
        "toy", everyone_in_k_groups, parameter="k", check=at_least_k, default=3, replace=True
    )
    assert ANONYMIZERS["toy"] is again


# -- the old positional calls: still working, with a DeprecationWarning -----------------


def _same(old, new):
    pd.testing.assert_frame_equal(old.frame, new.frame)


def test_old_positional_calls_warn_and_give_the_same_release(adult):
    f = adult
    prior = Prior.estimate(f, QI, SA)
    cases = [
        (
            lambda: anonymize.anatomize(f, QI, SA, 3, 1, None, "g", PID),
            lambda: anonymize.anatomize(f, QI, SA, l=3, seed=1, group="g", person=PID),
        ),
        (
            lambda: anonymize.rebucketize(f, QI, SA, 3, PID, 2),
            lambda: anonymize.rebucketize(f, QI, SA, l=3, person=PID, seed=2),
        ),
        (
            lambda: anonymize.mondrian(f, QI, SA, 4, 0.5, "g"),
            lambda: anonymize.mondrian(f, QI, SA, k=4, c=0.5, group="g"),
        ),
        (
            lambda: anonymize.robust_anonymize(f, QI, SA, prior, 2, seed=3),
            lambda: anonymize.robust_anonymize(f, QI, SA, r=2, prior=prior, seed=3),
        ),
        (
            lambda: anonymize.m_invariant(None, f, QI, SA, 3, PID, 4),
            lambda: anonymize.m_invariant(f, QI, SA, m=3, person=PID, seed=4),
        ),
    ]
    for old, new in cases:
        with pytest.warns(DeprecationWarning, match="by position is deprecated") as caught:
            released = old()
        assert caught[0].filename == __file__  # the warning points at the caller
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            _same(released, new())


@pytest.mark.filterwarnings("ignore:history_guided. 2 bucket:UserWarning")
def test_old_history_first_calls_warn_and_give_the_same_release(adult):
    first, now = adult.iloc[:80], adult.iloc[20:]
    r1 = anonymize.anatomize(first, QI, SA, l=3, person=PID, group="bucket")
    with pytest.warns(DeprecationWarning, match="history"):
        old = anonymize.history_guided(r1, now, 3, 5)
    new = anonymize.history_guided(now, QI, SA, l=3, history=r1, group="bucket", seed=5)
    _same(old, new)
    assert old.group == "bucket" and old.person == PID  # the old form: the previous' roles
    with pytest.warns(DeprecationWarning, match="previous= is deprecated"):
        renamed = anonymize.history_guided(now, QI, SA, l=3, previous=r1, group="bucket", seed=5)
    _same(renamed, new)

    m1 = anonymize.m_invariant(first, QI, SA, m=3, person=PID)
    with pytest.warns(DeprecationWarning):
        old = anonymize.m_invariant([m1], now, QI, SA, 3, person=PID)
    _same(old, anonymize.m_invariant(now, QI, SA, m=3, history=[m1], person=PID))
    with pytest.warns(DeprecationWarning):  # a release alone, as the history
        old = anonymize.m_invariant(m1, now, QI, SA, m=3, person=PID)
    _same(old, anonymize.m_invariant(now, QI, SA, m=3, history=m1, person=PID))


def test_keywords_no_longer_taken_warn_and_give_the_same_release(adult):
    part = adult.iloc[:60]
    with pytest.warns(DeprecationWarning, match="numeric= is deprecated"):
        old = anonymize.mondrian(part, ["age", "sex"], SA, k=5, numeric=[])
    _same(old, anonymize.mondrian(part.astype({"age": object}), ["age", "sex"], SA, k=5))
    with pytest.warns(DeprecationWarning, match="numeric= is deprecated"):  # by position too
        old = anonymize.mondrian(part, ["age"], SA, 5, 1.0, "group", ["age"])
    _same(old, anonymize.mondrian(part, ["age"], SA, k=5))
    with pytest.warns(DeprecationWarning, match="max_states= is deprecated"):
        old = anonymize.robust_anonymize(part, QI, SA, r=2, max_states=0)
    _same(old, anonymize.robust_anonymize(part, QI, SA, r=2, verify=0))
    with pytest.warns(DeprecationWarning), pytest.raises(ArgumentError, match="max_states"):
        anonymize.robust_anonymize(part, QI, SA, r=2, max_states=-1)


def test_argument_errors_are_still_release_errors(adult):
    """An anonymizer's ArgumentError is a ReleaseArgumentError: code that caught the
    ReleaseError of a bad l, k, m, r or seed still catches it."""
    from maxent_privacy import ReleaseError

    for call in (
        lambda: anonymize.anatomize(adult, QI, SA, l=1),
        lambda: anonymize.mondrian(adult, QI, SA, k=0),
        lambda: anonymize.m_invariant(adult, QI, SA, m=1, person=PID),
        lambda: anonymize.robust_anonymize(adult, QI, SA, r=1),
        lambda: anonymize.history_guided(adult, QI, SA, l=3, seed=-1),
    ):
        with pytest.raises(ReleaseError) as caught:
            call()
        assert isinstance(caught.value, ArgumentError)


def test_new_calls_take_no_more_positional_arguments(adult):
    with pytest.raises(TypeError, match="positional"):
        anonymize.m_invariant(adult, QI, SA, 3)
    with pytest.raises(TypeError, match="positional"):
        anonymize.anatomize(adult, QI, SA, 3, 0, None, "g", PID, "extra")
    with pytest.raises(TypeError, match="multiple values"):
        anonymize.anatomize(adult, QI, SA, 3, l=3)
    with pytest.raises(ArgumentError, match="history= only"):
        anonymize.history_guided(adult, QI, SA, l=3, history=[], previous=None)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda f: anonymize.anatomize(f, QI, SA, l=1), "l"),
        (lambda f: anonymize.anatomize(f, QI, SA, l=3, seed="x"), "seed"),
        (lambda f: anonymize.mondrian(f, QI, SA, k=3, c=0), "c"),
        (lambda f: anonymize.mondrian(f, QI, SA, k=3, nonsensitive=["Sales"]), "nonsensitive"),
        (lambda f: anonymize.mondrian(f, QI, SA, k=3, relaxed="maybe"), "relaxed"),
        (lambda f: anonymize.robust_anonymize(f, QI, SA, r=1), "r"),
        (lambda f: anonymize.robust_anonymize(f, QI, SA, r=2, verify="yes"), "verify"),
        (lambda f: anonymize.m_invariant(f, QI, SA, m=2, person=PID, nonsensitive=[1]), "nonsens"),
    ],
)
def test_bad_arguments_are_argument_errors(adult, call, name):
    with pytest.raises(ArgumentError, match=name):
        call(adult)


def test_history_guided_without_a_history_is_anatomy(adult):
    plain = anonymize.anatomize(adult, QI, SA, l=3, person=PID, seed=7)
    _same(anonymize.history_guided(adult, QI, SA, l=3, person=PID, seed=7), plain)


def test_robust_anonymize_keeps_person_ids_and_estimates_the_prior(adult):
    release = anonymize.robust_anonymize(adult, QI, SA, r=2, person=PID)
    given = anonymize.robust_anonymize(adult, QI, SA, r=2, prior=Prior.estimate(adult, QI, SA))
    assert release.person == PID
    _same(anonymize.robust_anonymize(adult, QI, SA, r=2), given)


# -- mondrian: the function in the wing, the module under its old name -------------------


def test_mondrian_is_the_function_in_the_wing_and_the_module_by_its_old_name():
    from maxent_privacy.anonymize import mondrian as function
    from maxent_privacy.anonymize.mondrian import mondrian as same

    module = importlib.import_module("maxent_privacy.mondrian")
    assert callable(function) and function is same is module.mondrian
    assert inspect.ismodule(module) and module is sys.modules["maxent_privacy.anonymize.mondrian"]
    assert maxent_privacy.mondrian is module
    namespace: dict = {}
    exec("import maxent_privacy.mondrian as m; from maxent_privacy import mondrian", namespace)  # noqa: S102
    assert namespace["m"] is module and namespace["mondrian"] is module
    assert anonymize.mondrian is function
