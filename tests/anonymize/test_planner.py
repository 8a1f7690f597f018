"""The release planner (issue 25, item 3): ``anonymize.plan_release`` and its checks.

Every claim is verified independently: the possible worlds by brute-force enumeration
written here (every assignment of values to the people of the pooled releases whose
values fit every group's published multiset, counterfeits taking the rest), the
maximum-entropy posterior by a fresh pooled :class:`MaxEntModel`.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel, definetti
from maxent_privacy._validation import ArgumentError
from maxent_privacy.anonymize import (
    PlanReport,
    count_query_error,
    history_guided,
    m_invariant,
    plan_release,
)
from maxent_privacy.anonymize.plan_checks import Checker
from maxent_privacy.errors import KnowledgeError, ReleaseError
from maxent_privacy.knowledge.parser import KnowledgeFileError, parse_knowledge

QUERIES = 100  # count queries of the utility measure (speed)


# ------------------------------------------------------------------ brute force
def possible_values(releases, exclude=()) -> dict:
    """Person -> the values some possible world gives them (enumerated). ``exclude``:
    (person ids, value) pairs that knowledge forbids."""
    people = sorted({p for r in releases for p in r.people[r.person].tolist()})
    values = sorted({v for r in releases for v in r.frame[r.sa].tolist()})
    groups = []
    for r in releases:
        published = r.frame.groupby(r.group)[r.sa].agg(Counter)
        members = r.people.groupby(r.group)[r.person].agg(list)
        groups += [(members.get(g, []), published[g]) for g in published.index]
    banned = {(p, v) for ids, v in exclude for p in ids}
    seen: dict = {p: set() for p in people}
    for assignment in itertools.product(values, repeat=len(people)):
        world = dict(zip(people, assignment, strict=True))
        if any((p, v) in banned for p, v in world.items()):
            continue
        if all(Counter(world[p] for p in m) <= pub for m, pub in groups):
            for p, v in world.items():
                seen[p].add(v)
    return seen


def assert_passes(history, release, tau, m=None, exclude=(), knowledge=None):
    """The planner's three checks, verified independently."""
    pooled = [*history, release]
    worlds = possible_values(pooled, exclude)
    for p, vals in worlds.items():
        assert len(vals) >= 2, f"person {p} is certain of {vals}"
        if m is not None:
            assert len(vals) >= m, f"person {p} has only {sorted(vals)}"
    model = MaxEntModel(pooled if len(pooled) > 1 else release)
    for statement in knowledge or []:
        from maxent_privacy.knowledge.parser import apply_knowledge

        apply_knowledge(model, parse_knowledge(statement))
    top = model.solve().person_posterior().max(axis=1)
    assert (top < tau).all(), top[top >= tau]


def table(ids, ages, values):
    return pd.DataFrame({"id": ids, "age": ages, "d": values})


# ------------------------------------------------------------------ (i) property
def sequences():
    """Tiny sequences of three tables: 6 or 7 people, 3 values; two people leave and one
    arrives, then one leaves and one arrives."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        n = 6 + seed % 2
        values = (["flu", "hiv", "cold"] * 3)[:n]
        rng.shuffle(values)
        first = table(list(range(1, n + 1)), rng.integers(20, 80, n).tolist(), values)
        tables = [first]
        for new, leaving in ((n + 1, 2), (n + 2, 1)):
            last = tables[-1]
            left = rng.choice(last["id"].to_numpy(), size=leaving, replace=False)
            value = last.set_index("id").loc[left[0], "d"]  # keeps the values balanced
            arrive = table([new], [int(rng.integers(20, 80))], [value])
            tables.append(pd.concat([last[~last["id"].isin(left)], arrive]))
        yield seed, tables


@pytest.mark.parametrize("seed, tables", list(sequences()))
@pytest.mark.parametrize("tau, m", [(0.5, None), (0.6, 2)])
def test_planned_sequences_pass_their_checks_by_enumeration(seed, tables, tau, m):
    history = []
    for frame in tables:
        release, report = plan_release(
            history, frame, ["age"], "d", tau=tau, m=m, person="id", seed=seed, queries=QUERIES
        )
        assert report.passed, report.summary()
        assert set(release.people["id"]) == set(frame["id"])
        assert_passes(history, release, tau, m)
        history.append(release)


def test_the_checker_agrees_with_enumeration():
    """Witness worlds never claim a value that no world gives; the integer programs
    settle the rest exactly (plain history-guided releases, which expose people)."""
    rng = np.random.default_rng(7)
    for _ in range(3):
        values = rng.choice(["a", "b", "c"], 7).tolist()
        t1 = table(list(range(1, 8)), list(range(20, 27)), values)
        r1 = Bucketized(t1.assign(g=[1, 1, 2, 2, 3, 3, 3]), ["age"], "d", "g", "id")
        t2 = pd.concat([t1.iloc[2:], table([8], [30], [values[0]])])
        with _quiet():
            r2 = history_guided(t2, ["age"], "d", l=2, history=r1, group="g", seed=1)
        out = Checker(tau=0.5, m=3, adversary="maxent").check([r1, r2])
        truth = possible_values([r1, r2])
        for p, row in out.table.iterrows():
            assert set(row["possible_values"]) <= truth[p]
            if row["settled_by"] != "witness":
                assert set(row["possible_values"]) == truth[p]
                assert (row["certain"] is not None and not pd.isna(row["certain"])) == (
                    len(truth[p]) == 1
                )
            else:
                assert row["possible"] >= 3


def _quiet():
    """history_guided warns about its short buckets: expected here."""
    return warnings.catch_warnings(action="ignore")


# ------------------------------------------------------------------ (ii) repairs
@pytest.fixture(scope="module")
def leaving():
    """Six people, three values; person 4 (flu) leaves."""
    t1 = table(list(range(1, 7)), [21, 23, 30, 50, 52, 60], ["flu", "hiv", "cold"] * 2)
    first, report = plan_release([], t1, ["age"], "d", tau=0.5, person="id", queries=QUERIES)
    assert report.passed and first.n_groups == 2
    return first, t1[t1["id"] != 4]


def test_the_history_guided_candidate_fails_and_is_repaired(leaving):
    first, t2 = leaving
    with _quiet():
        plain = history_guided(t2, first.qi, first.sa, l=3, history=first, group=first.group)
    worlds = possible_values([first, plain])
    assert worlds[4] == {"flu"}  # the candidate tells 4's value: its group lost a flu
    release, report = plan_release([first], t2, ["age"], "d", tau=0.5, person="id")
    assert report.passed
    assert report.candidate.startswith("history-guided")
    assert report.repaired == [4, 5, 6]
    repaired = report.repairs.set_index(["person", "check"])
    assert repaired.loc[(4, "certain"), "action"] == "counterfeit 'flu' added to group 2"
    assert repaired.loc[(5, "posterior"), "number"] == pytest.approx(0.5)
    assert release.counterfeit_counts().tolist() == [0, 1]
    assert_passes([first], release, 0.5)
    frame = report.to_frame()
    assert (frame["status"] == "repaired").all() and set(frame["person"]) == {4, 5, 6}


def test_the_m_invariant_candidate_fails_under_knowledge_and_is_repaired():
    """Newcomers 7 (hiv) and 8 (flu) form an m-invariant group {flu, hiv}; knowing that
    7 (age 80) has no flu tells both values. A counterfeit cold repairs them."""
    t1 = table([1, 2, 3, 4, 5, 6], [20, 30, 40, 50, 60, 70], ["flu", "hiv", "cold"] * 2)
    r1 = m_invariant(t1, ["age"], "d", m=2, person="id")
    t2 = pd.concat([t1, table([7, 8], [80, 90], ["hiv", "flu"])])
    fact = 'P(d = "flu" | age = 80) = 0'
    plain = m_invariant(t2, ["age"], "d", m=2, history=[r1], person="id")
    assert possible_values([r1, plain], exclude=[([7], "flu")])[8] == {"flu"}
    release, report = plan_release(
        [r1], t2, ["age"], "d", tau=0.6, m=2, knowledge=[fact], person="id", queries=QUERIES
    )
    assert report.passed, report.summary()
    assert report.candidate.startswith("m-invariant")
    assert report.repaired == [7, 8]
    assert set(report.repairs["check"]) == {"posterior", "certain", "possible"}
    assert report.repairs["action"].str.startswith("counterfeit").all()
    assert_passes([r1], release, 0.6, m=2, exclude=[([7], "flu")], knowledge=[fact])
    # the people of the first release keep their signatures (nobody else was touched)
    groups = release.people.set_index("id")["group"]
    assert groups.loc[[7, 8]].nunique() == 1 and groups.loc[[1, 2, 3, 4, 5, 6]].nunique() == 3


def test_knowledge_as_text_statements_or_a_function_gives_the_same_plan():
    t1 = table([1, 2, 3, 4, 5, 6], [20, 30, 40, 50, 60, 70], ["flu", "hiv", "cold"] * 2)
    fact = 'P(d = "flu" | age = 20) <= 0.5'
    results = []
    for knowledge in (
        fact,
        [fact],
        parse_knowledge(fact),
        lambda model: model.add(model.P("flu", age=20) <= 0.5),
    ):
        release, report = plan_release(
            None, t1, ["age"], "d", tau=0.5, knowledge=knowledge, person="id", queries=QUERIES
        )
        results.append((report.passed, release.frame["group"].tolist()))
    assert all(r == results[0] for r in results)


def test_learned_adversary_is_checked_and_holds():
    t1 = table(list(range(1, 7)), [21, 23, 30, 50, 52, 60], ["flu", "hiv", "cold"] * 2)
    release, report = plan_release(
        [], t1, ["age"], "d", tau=0.5, adversary="learned", person="id", queries=QUERIES
    )
    assert report.passed
    assert report.checks.loc[0, "by"].startswith("learned")
    learned = definetti(MaxEntModel(release)).person_posterior()
    assert (learned.max(axis=1) < 0.5).all()


def test_the_report_says_what_was_checked_and_its_certificates(leaving):
    first, t2 = leaving
    _, report = plan_release([first], t2, ["age"], "d", tau=0.5, person="id")
    assert isinstance(report, PlanReport)
    checks = report.checks
    assert list(checks["check"].unique()) == ["posterior", "worlds"]
    solves = checks[checks["check"] == "posterior"]
    assert (solves["by"] == "maxent").all() and solves["ok"].all()
    assert (solves["data_residual"] <= 1e-6).all() and solves["gap"].notna().all()
    assert set(report.rounds["round"]) == {0, 1}
    assert report.rounds["people_checked"].tolist()[1] < 6  # round 1: the touched component
    text = repr(report)
    assert "PASSED" in text and "repaired: 3 people" in text and "query error" in text
    assert set(report.utility_after) >= {"query_error", "counterfeit_share", "mean_group_size"}
    assert report.utility_after["counterfeit_share"] == pytest.approx(1 / 6)
    html = report._repr_html_()
    assert "<table" in html and "repaired" in html


def test_with_m_a_history_that_is_not_m_invariant_starts_history_guided():
    t1 = table(list(range(1, 7)), [21, 23, 30, 50, 52, 60], ["flu", "hiv", "cold"] * 2)
    old = Bucketized(t1.assign(g=[1, 1, 1, 1, 2, 2]), ["age"], "d", "g", "id")  # flu twice
    release, report = plan_release(
        [old], t1, ["age"], "d", tau=0.6, m=2, person="id", queries=QUERIES
    )
    assert report.candidate.startswith("history-guided")
    assert any(n.startswith("m_invariant refused the history") for n in report.notes)
    assert report.passed
    assert_passes([old], release, 0.6, m=2)


# ------------------------------------------------------------------ (iii) infeasible
def test_tau_below_what_the_data_allows_returns_the_best_and_says_why():
    t1 = table(list(range(1, 7)), [21, 23, 30, 50, 52, 60], ["flu", "hiv", "cold"] * 2)
    release, report = plan_release([], t1, ["age"], "d", tau=0.3, person="id", queries=QUERIES)
    assert isinstance(release, Bucketized) and release.n_people == 6
    assert not report.passed
    assert any("1/3" in r for r in report.reasons)
    assert set(report.failing["check"]) == {"posterior"}
    assert report.failing["why"].str.contains("1/3").all()
    assert len(report.repairs) == 0  # no repair can lift a posterior floor
    assert "NOT PASSED" in report.summary()


def test_the_worst_case_adversary_cannot_be_repaired():
    t1 = table(list(range(1, 7)), [21, 23, 30, 50, 52, 60], ["flu", "hiv", "cold"] * 2)
    _, report = plan_release(
        [], t1, ["age"], "d", tau=0.5, adversary="worst", person="id", queries=QUERIES
    )
    assert not report.passed
    assert report.checks.loc[0, "all_certified"]
    assert report.failing["why"].str.contains("upper bound never goes down").all()


def test_people_exposed_by_the_history_alone_are_named():
    t1 = table([1, 2, 3, 4], [20, 30, 40, 50], ["flu", "hiv", "flu", "hiv"])
    old = Bucketized(t1.assign(g=[1, 1, 2, 3]), ["age"], "d", "g", "id")  # 3 and 4 alone
    release, report = plan_release([old], t1, ["age"], "d", tau=0.6, person="id")
    assert not report.passed
    exposed = report.failing[report.failing["why"].str.startswith("exposed by the history")]
    assert set(exposed["person"]) == {3, 4}
    assert any("exposed by the history" in r for r in report.reasons)


# ------------------------------------------------------------------ (iv) arguments
T1 = table([1, 2, 3, 4], [20, 30, 40, 50], ["flu", "hiv", "cold", "flu"])


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"tau": 0}, ArgumentError, r"tau must be a number in \(0, 1\], got 0"),
        ({"tau": 1.5}, ArgumentError, "tau must be"),
        ({"tau": "0.5"}, ArgumentError, "tau must be"),
        ({"tau": float("nan")}, ArgumentError, "tau must be"),
        ({"m": 1}, ArgumentError, "m must be a whole number >= 2, got 1"),
        ({"m": 2.5}, ArgumentError, "m must be"),
        ({"m": 4}, ReleaseError, "m=4 exceeds the 3 distinct sensitive values of column 'd'"),
        ({"adversary": "bayes"}, ArgumentError, "adversary must be 'maxent', 'knowledge'"),
        ({"person": None}, ReleaseError, "plan_release needs person="),
        ({"person": "pid"}, ReleaseError, "person column 'pid' is not in the table"),
        ({"counterfeits": "age"}, ReleaseError, "counterfeits column name 'age' is already"),
        ({"group": "d"}, ReleaseError, "group column name 'd' is already used"),
        ({"max_rounds": -1}, ArgumentError, "max_rounds must be a whole number >= 0"),
        ({"queries": 0}, ArgumentError, "queries must be a whole number >= 1"),
        ({"time_limit": -1}, ArgumentError, "time_limit must be a finite number of seconds >= 0"),
        ({"progress": "yes"}, ArgumentError, "progress must be None"),
        ({"knowledge": 3}, KnowledgeError, "knowledge must be None"),
        ({"knowledge": [3]}, KnowledgeError, r"knowledge\[0\] is a int"),
        ({"knowledge": ["P(d = "]}, KnowledgeFileError, r"knowledge\[0\]:1:6: expected a value"),
        ({"history": "r1.csv"}, ReleaseError, "history must be a list"),
        ({"history": [T1]}, ReleaseError, "release 1 of the history is a DataFrame"),
        ({"time_limit": float("nan")}, ArgumentError, "time_limit must be a finite number"),
        ({"tau": float("inf")}, ArgumentError, "tau must be"),
        ({"colour": "red"}, ArgumentError, "unexpected keyword 'colour'"),
        ({"adversary": "worlds"}, ArgumentError, "adversary must be"),
    ],
)
def test_argument_errors_are_one_line(kwargs, error, match):
    args = {"history": None, "frame": T1, "qi": ["age"], "sa": "d", "person": "id"}
    args.update(kwargs)
    with pytest.raises(error, match=match) as caught:
        plan_release(**args)
    assert "\n" not in str(caught.value)


def test_history_errors_name_the_release_and_person():
    old = Bucketized(T1.assign(g=[1, 1, 2, 2]), ["age"], "d", "g")  # no person ids
    with pytest.raises(ReleaseError, match="release 1 of the history has no person ids"):
        plan_release([old], T1, ["age"], "d", person="id")
    other = Bucketized(T1.assign(g=[1, 1, 2, 2], zip=1), ["age", "zip"], "d", "g", "id")
    with pytest.raises(ReleaseError, match=r"quasi-identifiers \['age', 'zip'\], the table"):
        plan_release([other], T1, ["age"], "d", person="id")
    changed = Bucketized(
        T1.assign(g=[1, 1, 2, 2], d=["hiv", "hiv", "cold", "flu"]), ["age"], "d", "g", "id"
    )
    with pytest.raises(
        ReleaseError,
        match="person 1 has sensitive value 'hiv' in release 1 of the history and 'flu' in the",
    ):
        plan_release([changed], T1, ["age"], "d", person="id", queries=QUERIES)
    twice = pd.concat([T1, T1.iloc[:1]])
    with pytest.raises(ReleaseError, match="person id 1 occurs in more than one row"):
        plan_release(None, twice, ["age"], "d", person="id")


# ------------------------------------------------------------------ utility
def test_count_query_error():
    truth = table([1, 2, 3, 4, 5, 6], [20, 30, 40, 50, 60, 70], ["flu", "hiv", "cold"] * 2)
    exact = Bucketized(truth.assign(g=range(6)), ["age"], "d", "g", "id")
    assert count_query_error(exact, truth, queries=50) == 0.0
    mixed = Bucketized(truth.assign(g=[1, 1, 1, 2, 2, 2]), ["age"], "d", "g", "id")
    error = count_query_error(mixed, truth, queries=200, seed=3)
    assert 0 < error < 2
    assert error == count_query_error(mixed, truth, queries=200, seed=3)  # seeded
    fake = pd.concat([mixed.frame, pd.DataFrame({"d": ["flu"], "g": [1], "c": [True]})])
    padded = Bucketized(fake.fillna({"c": False}), ["age"], "d", "g", "id", counterfeits="c")
    assert not math.isclose(count_query_error(padded, truth, queries=200, seed=3), error)
    with pytest.raises(ReleaseError, match="queries must be a whole number >= 1"):
        count_query_error(mixed, truth, queries=0)
    with pytest.raises(ReleaseError, match="column 'age' of the release is not in the truth"):
        count_query_error(mixed, truth.drop(columns="age"))
    with pytest.raises(ReleaseError, match="needs a Bucketized release"):
        count_query_error(truth, truth)
