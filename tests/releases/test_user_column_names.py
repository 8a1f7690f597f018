"""A user's column may be named like one of ours (issue 39, item 3).

The release's columns are drawn from names the package uses inside (``s``, ``count``,
``group``, ``value``, ``maxent``...) and the answers (``posterior``,
``person_posterior``, ``risk_table``) compared, columns renamed back, with those of the
same release under plain names. The columns the structure uses only while it is built
(``gs``, ``member``, ``qg``, ``qg_row``, the pooled construction's ``g0``, ``split``,
``__pid``) are namespaced, so those names work. The documented columns of
``model.cells`` / ``model.classes`` and the results' tables
(:data:`~maxent_privacy.releases.structure.RESERVED`: ``n``, ``cls``, ``person``,
``kind``, ``groups``, ``x``), read by those names across the package, cannot share a
frame with a user's column of the same name: such a QI, sensitive or group column is
refused in one line (it crashed with a ``KeyError`` or, for pooled releases, replaced the
sensitive values by the class sizes without a word).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from maxent_privacy import Bucketized, Generalized, MaxEntModel, ReleaseError
from maxent_privacy.releases.structure import RESERVED

ROLES = ("age", "zip", "disease", "bucket", "pid")  # the plain names, by role
POOL = ("s", "count", "group", "value", "person", "n", "cls", "maxent", "lower", "upper",
        "kind", "row", "__pid", "_p", "_c", "records", "at_risk", "certified",
        "release_value", "gs", "member", "qg", "qg_row", "split", "g0", "groups", "x",
        *ROLES)  # fmt: skip


def base() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 24
    return pd.DataFrame(
        {
            "age": rng.integers(20, 24, n),
            "zip": rng.choice(["a", "b"], n),
            "disease": rng.choice(["flu", "hiv", "cold"], n),
            "bucket": np.repeat(np.arange(6), 4),
            "pid": [f"p{i}" for i in range(n)],
        }
    )


def answers(names: dict, pooled: bool = False, risk: bool = True):
    """posterior, person_posterior and risk table of the release with columns ``names``
    (role -> name), every user column named back by its role."""
    back = {v: k for k, v in names.items()}
    frame = base().rename(columns=names)
    qi, sa, grp, pid = [names["age"], names["zip"]], names["disease"], names["bucket"], names["pid"]
    rels = [Bucketized(frame, qi, sa, grp, person=pid)]
    if pooled:  # a second release of the same people, in pairs of buckets
        again = frame.assign(**{grp: frame[grp] // 2})
        rels.append(Bucketized(again, qi, sa, grp, person=pid))
    result = MaxEntModel(rels if pooled else rels[0]).solve(progress=False)
    post = result.posterior()
    post.index = post.index.set_names([back.get(x, x) for x in post.index.names])
    post.columns.name = back[post.columns.name]
    people = result.person_posterior()
    people.columns.name = back[people.columns.name]
    if pooled or not risk:
        return post, people, None
    risk = result.risk_table(bounds="all")
    renamed = risk.attrs.get("renamed", {})
    own = {renamed.get(names[r], names[r]): r for r in ("age", "zip", "bucket")}
    risk = risk.rename(columns={risk.columns[0]: "pid", **own})  # the id column is first
    return post, people, risk.sort_values("pid").reset_index(drop=True)


@functools.cache
def plain(pooled: bool):
    return answers({r: r for r in ROLES}, pooled)


def assert_same(got, want) -> None:
    for a, b in zip(got, want, strict=True):
        if a is not None and b is not None:
            pd.testing.assert_frame_equal(a, b, check_dtype=False, atol=1e-9)


@given(names=st.permutations(POOL).map(lambda p: dict(zip(ROLES, p[:5], strict=True))))
# the person column named like a QI the risk table renames (release_value): one column
@example(names={"age": "s", "zip": "count", "disease": "group", "bucket": "value",
                "pid": "release_value"})  # fmt: skip
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_names_give_the_same_answers(names):
    used = [names[r] for r in ("age", "zip", "disease", "bucket")]
    if set(used) & set(RESERVED):
        with pytest.raises(ReleaseError, match=r"^the .* column is named '.*', a name the model"):
            answers(names)
        return
    assert_same(answers(names), plain(False))


@pytest.mark.parametrize("role", ["age", "bucket"])
def test_a_qi_named_pid_in_the_risk_table(role):
    names = {**{r: r for r in ROLES}, role: "pid", "pid": "person"}
    assert_same(answers(names), plain(False))


@pytest.mark.parametrize("name", ["s", "count", "group", "value", "maxent", "row", "_p"])
@pytest.mark.parametrize("role", ["age", "disease", "bucket"])
def test_pooled_releases_too(role, name):
    assert_same(answers({**{r: r for r in ROLES}, role: name}, pooled=True), plain(True))


@pytest.mark.parametrize("name", ["value", "maxent", "lower", "upper", "records", "person"])
def test_risk_table_keeps_a_qi_or_id_named_like_its_own_columns(name):
    role = "pid" if name == "person" else "age"
    post, people, risk = answers({**{r: r for r in ROLES}, role: name})
    assert_same((post, people, risk), plain(False))
    assert risk["age"].tolist() == plain(False)[2]["age"].tolist()  # the QI values kept


@pytest.mark.parametrize("name", ["gs", "member", "qg", "qg_row"])
@pytest.mark.parametrize("role", ["age", "disease", "bucket"])
def test_names_the_build_used_work_now(role, name):
    # were refused: build_single kept its own columns under these names next to the
    # user's (a group named "gs" was overwritten by the SA row numbers)
    assert_same(answers({**{r: r for r in ROLES}, role: name}), plain(False))


def general(names: dict):
    """posterior and person_posterior of a bucketized release pooled with a generalized
    one (zip published as "*", no person ids, a population): the construction from tables
    whose people may sit in several groups, named back by role."""
    back = {v: k for k, v in names.items()}
    frame = base().rename(columns=names)
    qi, sa, grp, pid = [names["age"], names["zip"]], names["disease"], names["bucket"], names["pid"]
    first = Bucketized(frame, qi, sa, grp, person=pid)
    second = Generalized(frame.assign(**{names["zip"]: "*", grp: frame[grp] // 2}).drop(
        columns=pid), qi, sa, grp)  # fmt: skip
    population = frame.set_index(pid)[qi]
    model = MaxEntModel([first, second], populations=[None, population])
    assert (model.cells["kind"] != "z").any()  # placement cells: the general construction
    result = model.solve(progress=False)
    post, people = result.posterior(), result.person_posterior()
    post.index = post.index.set_names([back.get(x, x) for x in post.index.names])
    post.columns.name = people.columns.name = back[post.columns.name]
    return post, people


@pytest.mark.parametrize("name", ["g0", "g1", "split", "__pid"])
def test_pooled_names_of_the_build_work(name, role="age"):
    # the construction from tables kept each release's candidate groups ("g0", "g1") and
    # the people singled out ("split") next to the QI columns, and the population's ids
    # as "__pid"
    want = general({r: r for r in ROLES})
    assert_same(general({**{r: r for r in ROLES}, role: name}), want)


def test_a_pooled_qi_named_pid_is_refused():
    # the pooled records hold the person ids as "pid" (model.person reads them)
    names = {**{r: r for r in ROLES}, "age": "pid", "pid": "person"}
    with pytest.raises(ReleaseError, match=r"^the quasi-identifier column is named 'pid', "):
        answers(names, pooled=True)


@pytest.mark.parametrize("name", ["n", "kind", "cls"])
def test_a_reserved_sensitive_name_is_refused_not_misread(name):
    # pooled releases read the class sizes as the sensitive values (every person's
    # posterior 0 or 1) when the sensitive column was named "n"
    with pytest.raises(ReleaseError) as err:
        answers({**{r: r for r in ROLES}, "disease": name}, pooled=True)
    assert str(err.value).startswith(f"the sensitive column is named {name!r}, a name the model")
    assert f"rename it (frame.rename(columns={{{name!r}: {name + '_'!r}}}))" in str(err.value)
