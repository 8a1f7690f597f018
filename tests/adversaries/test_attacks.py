"""Cross-version inference attacks (Byun et al. 2008): the paper's example and soundness."""

from __future__ import annotations

import doctest
import itertools
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from maxent_privacy import ReleaseError, attacks
from maxent_privacy._validation import ArgumentError, ArgumentTypeError
from maxent_privacy.adversaries import matching, tracing
from maxent_privacy.adversaries.matching import match_releases
from maxent_privacy.attacks import (
    History,
    check_kc,
    difference,
    findings,
    intersection,
    kc_violations,
    placement,
    record_tracing,
)
from maxent_privacy.datasets_byun import byun2008_tables
from maxent_privacy.generalized import Generalized
from maxent_privacy.mondrian import mondrian


@pytest.mark.parametrize("module", [attacks, matching, tracing], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0


@pytest.fixture
def byun():
    return byun2008_tables()


# -- Byun et al.'s Figures 1-4 -----------------------------------------------------------


def test_byun_tables_are_as_printed(byun):
    assert byun["figure1"]["name"].tolist() == ["Tom", "Mike", "Bob", "Eve"]
    assert byun["figure3"]["name"].tolist()[4:] == ["Alice", "Hank", "Sal"]
    assert byun["figure3"]["diagnosis"].tolist()[4:] == ["Cancer", "Hepatitis", "Flu"]
    assert byun["figure2"].frame["age"].tolist() == ["[21 - 25]"] * 2 + ["[50 - 60]"] * 2
    assert (
        byun["figure4"].frame["gender"].tolist() == ["Person"] * 3 + ["Male"] * 2 + ["Female"] * 2
    )
    assert [len(p) for p in byun["populations"]] == [4, 7]
    assert list(byun["populations"][1].columns) == ["name", "age", "gender"]


def test_byun_releases_are_2_2_anonymous(byun):
    """Section 3.1 calls Figures 2 and 4 (2, 2)-anonymous: k = 2, confidence <= 1/2."""
    for release in (byun["figure2"], byun["figure4"]):
        assert check_kc(release, 2, 2)
        assert check_kc(release, 2, 0.5)
        assert kc_violations(release, 2, 2).empty
    assert not check_kc(byun["figure2"], 3, 2)
    bad = kc_violations(byun["figure4"], 2, 0.4)
    assert bad["group"].tolist() == [2, 3]
    assert bad["confidence"].tolist() == [0.5, 0.5]
    assert bad["reason"].tolist() == ["a value above c=0.4"] * 2


def test_intersection_example_2(byun):
    """Example 2: Bob has Alzheimer; "three other records in the new dataset are also
    vulnerable to similar inferences": they are Eve (Diabetes, found like Bob: her old
    class {Alzheimer, Diabetes} meets her new one {Flu, Diabetes}), and then Hank
    (Hepatitis: his class {Alzheimer, Hepatitis} minus Bob's Alzheimer) and Sal (Flu:
    her class {Flu, Diabetes} minus Eve's Diabetes). Tom and Mike stay protected
    ({Asthma, Flu} both times), and so does Alice ({Asthma, Flu, Cancer})."""
    found = intersection(byun["releases"], byun["populations"])
    assert found["person"].tolist() == ["Bob", "Eve", "Hank", "Sal"]
    assert found["inferred"].tolist() == ["Alzheimer", "Diabetes", "Hepatitis", "Flu"]
    assert found["via"].tolist() == ["intersection", "intersection", "elimination", "elimination"]
    bob = found.iloc[0]
    assert bob["classes"] == ((0, 2), (1, 2))
    assert bob["release"] == 1 and bob["eliminated"] == () and bob["confidence"] == 1.0
    assert found.set_index("person").loc["Hank", "eliminated"] == ("Bob",)
    assert found.set_index("person").loc["Sal", "eliminated"] == ("Eve",)
    # with the paper's confidence bound: the same four
    assert intersection(byun["releases"], byun["populations"], c=2)["person"].tolist() == [
        "Bob",
        "Eve",
        "Hank",
        "Sal",
    ]
    # the old release alone reveals nothing
    assert intersection(byun["releases"][:1], byun["populations"][:1]).empty


def test_difference_example_1(byun):
    """Example 1: Alice has cancer (Tom and Mike's class minus their Asthma and Flu)."""
    for c in (2, 0.5):
        found = difference(byun["releases"], byun["populations"], k=2, c=c)
        assert found["person"].tolist() == ["Alice"]
        alice = found.iloc[0]
        assert alice["inferred"] == "Cancer"
        assert alice["release"] == 1 and alice["against"] == 0
        assert alice["classes"] == (1,) and alice["against_classes"] == (1,)
        assert alice["size"] == 1 and alice["counts"] == {"Cancer": 1}
        assert alice["reason"].startswith("fewer than k=2")
    # with k = 3, Hank and Sal ({Hepatitis, Flu} left of Bob and Eve's classes) show too
    found = difference(byun["releases"], byun["populations"], k=3, c=2)
    rows = found.set_index("person")
    assert sorted(rows.index) == ["Alice", "Hank", "Sal"]
    assert rows.loc["Hank", "counts"] == {"Flu": 1, "Hepatitis": 1}
    assert rows.loc["Hank", "candidates"] == ("Hepatitis",)  # and his class {Alz, Hep}
    assert rows.loc["Sal", "candidates"] == ("Flu",)
    assert rows.loc["Hank", "against_classes"] == (2,)
    assert rows.loc["Hank", "classes"] == (2, 3)


def test_record_tracing_example(byun):
    """Bob's and Eve's records of Figure 2 each match one record of Figure 4, whose
    class holds only one of the two: the records are traced to Bob and Eve."""
    found = record_tracing(byun["releases"], byun["populations"])
    assert found["row"].tolist() == [2, 3]
    assert found["inferred"].tolist() == ["Bob", "Eve"]
    assert found["matched"].tolist() == [(3,), (6,)]
    assert found["matched_groups"].tolist() == [(2,), (3,)]
    assert found["before"].tolist() == [2, 2]
    assert record_tracing(byun["releases"], byun["populations"], k=2)["row"].tolist() == [2, 3]


def test_history_matches_pairwise_checks(byun):
    history = History(k=2, c=2)
    assert history.add(byun["figure2"], byun["populations"][0]).empty
    new = history.add(byun["figure4"], byun["populations"][1])
    batch = findings(byun["releases"], byun["populations"], k=2, c=2)
    cols = ["attack", "release", "against", "subject", "candidates", "inferred"]
    assert new[cols].values.tolist() == batch[cols].values.tolist()
    assert history.n_releases == 2 and len(history.findings) == len(new)
    table = history.table()
    assert table.loc["Alice", "ts"] == 1 and table.loc["Tom", "ts"] == 0
    assert table.loc["Tom", "candidates"] == ("Asthma", "Flu")
    assert table.loc["Sal", "inferred"] == "Flu"
    assert table.loc["Bob", "classes"] == ((0, 2), (1, 2))


def test_findings_evidence_is_a_sentence(byun):
    table = findings(byun["releases"], byun["populations"], k=2, c=2)
    assert table["attack"].tolist().count("intersection") == 4
    alice = table[table["subject"] == "Alice"].iloc[0]
    assert "leave 1 record(s) with {'Cancer': 1}" in alice["evidence"]
    assert all("\n" not in text for text in table["evidence"])


# -- placements, Figure 9 cases, errors ------------------------------------------------


def _release(rows, qi=("age",)):
    columns = [*qi, "s", "g", "pid"]
    return Generalized(pd.DataFrame(rows, columns=columns), list(qi), "s", "g", person="pid")


def test_placement_by_group_sizes():
    # g1 holds one record and only P fits nothing else: Q must be in g2
    release = _release(
        [("[20-30]", "a", 1, "P"), ("[25-35]", "b", 2, "Q"), ("[25-35]", "c", 2, "R")]
    )
    people = pd.DataFrame({"pid": ["P", "Q", "R"], "age": [22, 27, 33]})
    assert placement(release, people)["group"].tolist() == [1, 2, 2]
    # g1 can only be filled by P: P is in g1 although "*" fits him too
    release = _release([("[20-30]", "a", 1, "P"), ("*", "b", 2, "Q"), ("*", "c", 2, "R")])
    people = pd.DataFrame({"pid": ["P", "Q", "R"], "age": [22, 50, 60]})
    out = placement(release, people)
    assert out["group"].tolist() == [1, 2, 2]
    # truly ambiguous: Q and R could swap
    release = _release(
        [
            ("[20-30]", "a", 1, "P"),
            ("[20-30]", "b", 1, "Q"),
            ("[25-40]", "c", 2, "R"),
            ("[25-40]", "d", 2, "S"),
        ]
    )
    people = pd.DataFrame({"pid": ["P", "Q", "R", "S"], "age": [22, 27, 28, 35]})
    out = placement(release, people)
    assert out["group"].tolist() == [1, None, None, 2]
    assert out["groups"].tolist() == [(1,), (1, 2), (1, 2), (2,)]


def test_record_tracing_figure_9_i():
    """r2 could be in either new class, but the s record of the first is r1's."""
    old = _release(
        [
            ("[10-19]", "s", 1, "A"),
            ("[10-19]", "x", 1, "B"),
            ("[20-29]", "s", 2, "C"),
            ("[20-29]", "y", 2, "D"),
        ]
    )
    new = _release(
        [
            ("[10-22]", "s", 1, "A"),
            ("[10-22]", "x", 1, "B"),
            ("[10-22]", "y", 1, "D"),
            ("[23-29]", "s", 2, "C"),
            ("[23-29]", "z", 2, "E"),
        ]
    )
    people = pd.DataFrame({"pid": list("ABCDE"), "age": [12, 15, 25, 22, 27]})
    found = record_tracing([old, new], [people.iloc[:4], people])
    row = found.set_index("row").loc[2]
    assert row["persons"] == ("C",) and row["matched"] == (3,)


def test_record_tracing_figure_9_ii():
    """Two s records of one old class, one s record in each of two new classes: one
    goes to each, so one old record is traced to A (an arbitrary but valid choice)."""
    old = _release([("[10-19]", "s", 1, "A"), ("[10-19]", "s", 1, "B"), ("[10-19]", "x", 1, "F")])
    new = _release(
        [
            ("[10-14]", "s", 1, "A"),
            ("[10-14]", "y", 1, "G"),
            ("[15-19]", "s", 2, "B"),
            ("[15-19]", "x", 2, "F"),
        ]
    )
    people = pd.DataFrame({"pid": ["A", "B", "F", "G"], "age": [12, 18, 15, 13]})
    found = record_tracing([old, new], [people.iloc[:3], people])
    assert found["persons"].tolist() == [("A",), ("B", "F"), ("B", "F")]
    assert found["matched"].tolist() == [(0,), (2,), (3,)]  # F's x record: one x row
    # without the Figure 9(ii) rule both s records would keep {A, B, F}
    assert found["value"].tolist() == ["s", "s", "x"]


def test_errors(byun):
    releases, populations = byun["releases"], byun["populations"]
    with pytest.raises(ReleaseError, match="2 releases but 1 populations"):
        intersection(releases, populations[:1])
    with pytest.raises(ReleaseError, match="no releases"):
        intersection([], [])
    with pytest.raises(ReleaseError, match="population 1 lists 4 persons but release 1 has 7"):
        difference(releases, [populations[0], populations[0]], 2, 2)
    with pytest.raises(ReleaseError, match="release 0 is a DataFrame"):
        record_tracing([byun["figure1"]], [populations[0]])
    with pytest.raises(ReleaseError, match="cannot tell the person id column"):
        intersection(releases, [byun["figure1"], byun["figure3"]])
    assert len(intersection(releases, [byun["figure1"], byun["figure3"]], person="name")) == 4
    with pytest.raises(ReleaseError, match="k must be a whole number >= 1"):
        difference(releases, populations, 0, 2)
    with pytest.raises(ReleaseError, match=r"c must be a number in \(0, 1\]"):
        check_kc(byun["figure2"], 2, 0)
    with pytest.raises(ArgumentError, match="max_sets must be a whole number >= 1, got 0"):
        difference(releases, populations, 2, 2, max_sets=0)
    wrong = populations[0].assign(age=[21, 23, 52, 40])  # Eve at 40 fits no class
    with pytest.raises(ReleaseError, match="person 'Eve' fits no group of release 0") as e:
        intersection(releases[:1], [wrong])
    assert "\n" not in str(e.value)
    young = populations[0].assign(age=[21, 23, 24, 57])  # Bob at 24 fits only class 1
    with pytest.raises(ReleaseError, match="group 1 of release 0 has 2 records but surely 3"):
        intersection(releases[:1], [young])
    few = populations[0].assign(gender=["Male", "Male", "Male", "Male"], age=[21, 52, 53, 54])
    with pytest.raises(ReleaseError, match="group 1 of release 0 has 2 records but only 1"):
        intersection(releases[:1], [few])


def test_contradicting_releases():
    one = _release([("*", "a", 1, "P"), ("*", "b", 1, "Q")])
    two = _release([("*", "c", 1, "P"), ("*", "d", 1, "Q")])
    people = pd.DataFrame({"pid": ["P", "Q"], "age": [1, 2]})
    with pytest.raises(ReleaseError, match="contradict"):
        intersection([one, two], [people, people])
    with pytest.raises(ReleaseError, match="disagree on the sensitive values"):
        difference([one, two], [people, people], 2, 0.5)


def test_difference_stops_at_max_sets():
    # old classes {P1, P2}, {P3, P4}, {P5, P6}, {P7, P8}; new {P8, P1}, {P2, P3},
    # {P4, P5}, {P6, P7}: the classes chain in a ring, so the search grows many sets
    old = _release(
        [
            (f"[{i - (i + 1) % 2}-{i + i % 2}]", "abcdefgh"[i - 1], (i + 1) // 2, f"P{i}")
            for i in range(1, 9)
        ]
    )
    new = _release([(str(i), "abcdefgh"[i - 1], (i % 8) // 2 + 1, f"P{i}") for i in range(1, 9)])
    people = pd.DataFrame({"pid": [f"P{i}" for i in range(1, 9)], "age": range(1, 9)})
    releases, populations = [old, new], [people, people]
    assert placement(old, people)["group"].tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    assert placement(new, people)["group"].tolist() == [1, 2, 2, 3, 3, 4, 4, 1]
    with pytest.warns(RuntimeWarning, match="stopped after 1 class sets"):
        out = difference(releases, populations, 2, 0.5, max_sets=1)
    assert out.attrs["truncated"]
    assert not difference(releases, populations, 2, 0.5).attrs["truncated"]


# -- soundness on random data ------------------------------------------------------------


def _scenario(rng, sizes, groups=(1, 4), spread=2):
    """A growing table and one random generalized release of each prefix."""
    n = sizes[-1]
    people = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(n)],
            "age": rng.integers(20, 28, n),
            "sex": rng.choice(["F", "M"], n),
            "s": rng.choice(["a", "b", "c", "d"], n, p=[0.4, 0.3, 0.2, 0.1]),
        }
    )
    releases, populations = [], []
    for size in sizes:
        part = people.iloc[:size]
        order = rng.permutation(size)
        rows = []
        start, g = 0, 1
        while start < size:
            idx = order[start : start + int(rng.integers(groups[0], groups[1] + 1))]
            start += len(idx)
            members = part.iloc[idx]
            lo, hi = int(members["age"].min()), int(members["age"].max())
            kind = rng.integers(0, 4)
            if kind == 0:
                age = f"[{lo - rng.integers(0, spread + 1)}-{hi + rng.integers(0, spread + 1)}]"
            elif kind == 1:
                extra = set(rng.integers(20, 28, rng.integers(0, spread + 1)).tolist())
                age = "{" + ", ".join(map(str, sorted(set(members["age"]) | extra))) + "}"
            elif kind == 2 and spread:
                age = "*"
            else:
                age = str(lo) if lo == hi else f"[{lo}-{hi}]"
            sexes = sorted(set(members["sex"]))
            if len(sexes) > 1:
                sex = "*" if rng.random() < 0.5 else "{F, M}"
            else:
                sex = sexes[0] if rng.random() < 0.7 else "*"
            for _, m in members.iterrows():
                rows.append((age, sex, m["s"], g, m["pid"]))
            g += 1
        frame = pd.DataFrame(rows, columns=["age", "sex", "s", "g", "pid"])
        frame = frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)
        releases.append(Generalized(frame, ["age", "sex"], "s", "g", person="pid"))
        populations.append(part[["pid", "age", "sex"]].reset_index(drop=True))
    return people, releases, populations


def _has_matching(options: list[set], people: list) -> bool:
    """Whether each options set can get a distinct person from ``people``."""
    match: dict = {}

    def augment(i, seen):
        for p in options[i]:
            if p in people and p not in seen:
                seen.add(p)
                if p not in match or augment(match[p], seen):
                    match[p] = i
                    return True
        return False

    return all(augment(i, set()) for i in range(len(options)))


def assert_sound(people, releases, populations, k, c):
    truth = dict(zip(people["pid"], people["s"], strict=True))
    for frame in (
        intersection(releases, populations),
        intersection(releases, populations, c=c),
        difference(releases, populations, k, c),
    ):
        for pid, cands, inferred in frame[["person", "candidates", "inferred"]].values:
            assert truth[pid] in cands, (pid, cands)
            assert inferred is None or inferred == truth[pid]
    traced = record_tracing(releases, populations)
    for (a, _b), part in traced.groupby(["release", "against"]):
        rel = releases[a].frame
        rows = part.set_index("row")
        key = rel.loc[rows.index, ["g", "age", "sex", "s"]].apply(tuple, axis=1)
        for typ, labels in rows.groupby(key).groups.items():
            same = rel[(rel[["g", "age", "sex", "s"]].apply(tuple, axis=1) == typ).to_numpy()]
            options = [set(rows.loc[label, "persons"]) for label in labels]
            assert _has_matching(options, same["pid"].tolist()), (typ, options)
    return traced


def assert_history_agrees(releases, populations, k, c):
    history = History(k, c)
    for release, population in zip(releases, populations, strict=True):
        history.add(release, population)
    batch = findings(releases, populations, k, c)
    cols = ["attack", "release", "against", "subject", "candidates", "inferred"]

    def keys(frame, attack):
        part = frame[frame["attack"] == attack]
        return sorted(map(repr, part[cols].values.tolist()))

    for attack in ("difference", "record_tracing"):
        assert keys(history.findings, attack) == keys(batch, attack)
    latest = history.findings[history.findings["attack"] == "intersection"].drop_duplicates(
        "subject", keep="last"
    )
    latest = latest.set_index("subject")
    for row in batch[batch["attack"] == "intersection"].to_dict("records"):
        got = latest.loc[row["subject"]]
        assert (got["release"], got["candidates"], got["inferred"]) == (
            row["release"],
            row["candidates"],
            row["inferred"],
        )
    # and the history table holds the batch attack's candidate sets
    table = history.table()
    plain = intersection(releases, populations)
    for row in plain.to_dict("records"):
        assert table.loc[row["person"], "candidates"] == row["candidates"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    sizes=st.lists(st.integers(0, 4), min_size=1, max_size=2),
    start=st.integers(2, 7),
    spread=st.integers(0, 2),
    k=st.integers(1, 3),
    c=st.sampled_from([0.5, 2 / 3, 1.0]),
)
def test_attacks_never_name_a_wrong_value(seed, sizes, start, spread, k, c):
    rng = np.random.default_rng(seed)
    prefix = list(itertools.accumulate([start, *sizes]))
    people, releases, populations = _scenario(rng, prefix, spread=spread)
    assert_sound(people, releases, populations, k, c)
    assert_history_agrees(releases, populations, k, c)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(8, 40),
    steps=st.lists(st.integers(1, 12), min_size=1, max_size=2),
    k=st.integers(2, 3),
    relaxed=st.booleans(),
)
def test_attacks_on_mondrian_releases_are_sound(seed, n, steps, k, relaxed):
    rng = np.random.default_rng(seed)
    total = n + sum(steps)
    people = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(total)],
            "age": rng.integers(20, 45, total),
            "sex": rng.choice(["F", "M"], total),
            "race": rng.choice(["r1", "r2", "r3"], total),
            "s": rng.choice(["a", "b", "c", "d", "e"], total),
        }
    )
    qi = ["age", "sex", "race"]
    releases, populations = [], []
    for size in itertools.accumulate([n, *steps]):
        part = people.iloc[:size]
        try:
            release = mondrian(part, qi, "s", k=k, c=0.75, relaxed=relaxed, person="pid")
        except ReleaseError:
            assume(False)
        releases.append(release)
        populations.append(part[["pid", *qi]])
    truth = dict(zip(people["pid"], people["s"], strict=True))
    for frame in (intersection(releases, populations), difference(releases, populations, k, 0.75)):
        for pid, cands, inferred in frame[["person", "candidates", "inferred"]].values:
            assert truth[pid] in cands
            assert inferred is None or inferred == truth[pid]
    traced = record_tracing(releases, populations)
    for a, label, persons in traced[["release", "row", "persons"]].values:
        # Mondrian rows of one class and value are interchangeable; some row of this
        # class and value belongs to each traced candidate set's true owner
        rel = releases[a].frame
        same = rel[(rel["group"] == rel.loc[label, "group"]) & (rel["s"] == rel.loc[label, "s"])]
        assert set(persons) & set(same["pid"])


def _brute_force_difference(releases, populations, k, c):
    """DirectedCheck over every subset of usable classes (the paper's blind 2^n)."""
    rels = match_releases(releases, populations, None)
    flagged, inferred = set(), {}
    for ra, rb in itertools.permutations(rels, 2):
        cover = {}
        for g in range(len(ra.labels)):
            members = ra.members[g]
            located = [rb.pos.get(ra.ids[p]) for p in members]
            if len(members) == ra.size[g] and all(
                q is not None and rb.loc[q] >= 0 for q in located
            ):
                cover[g] = frozenset(int(rb.loc[q]) for q in located)
        usable = sorted(cover)
        for r in range(1, len(usable) + 1):
            for chosen in itertools.combinations(usable, r):
                cov = frozenset().union(*(cover[g] for g in chosen))
                left = Counter()
                for h in cov:
                    left.update(rb.sa_count[h])
                for g in chosen:
                    left.subtract(ra.sa_count[g])
                left = +left
                size = sum(left.values())
                if size == 0 or not attacks._violation(left, size, k, c):
                    continue
                inside = {ra.ids[p] for g in chosen for p in ra.members[g]}
                for h in cov:
                    for q in rb.members[h]:
                        pid = rb.ids[q]
                        if pid not in inside:
                            flagged.add((pid, rb.index, ra.index))
                            if len(left) == 1:
                                inferred[pid] = next(iter(left))
    return flagged, inferred


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    start=st.integers(3, 8),
    more=st.integers(0, 4),
    k=st.integers(1, 3),
)
def test_difference_pruning_loses_nothing(seed, start, more, k):
    """Observations 1-3 prune the subsets, yet every value the blind search infers is
    inferred too (or is given away by a single release's homogeneous class)."""
    c = 0.5
    rng = np.random.default_rng(seed)
    people, releases, populations = _scenario(rng, (start, start + more), spread=1)
    mine = difference(releases, populations, k, c)
    flagged, inferred = _brute_force_difference(releases, populations, k, c)
    got = set(zip(mine["person"], mine["release"], mine["against"], strict=True))
    assert got <= flagged
    found = set(zip(mine["person"], mine["inferred"], strict=True))
    pinned = set()
    for release in releases:
        for _, part in release.frame.groupby("g"):
            if part["s"].nunique() == 1:
                pinned |= set(part["pid"])
    for pid, value in inferred.items():
        assert (pid, value) in found or pid in pinned, (pid, value)


def test_check_kc_reads_bucketized_releases_too():
    from maxent_privacy import Bucketized
    from maxent_privacy.datasets import du2008_figure1

    release = Bucketized(du2008_figure1(), ["gender", "degree"], "disease", "bucket")
    # bucket 1 holds Flu twice in four records: confidence 1/2
    assert check_kc(release, 3, 0.5) and not check_kc(release, 4, 0.5)
    assert kc_violations(release, 3, 0.4)[["group", "value", "count"]].values.tolist() == [
        [1, "Flu", 2]
    ]


def test_person_is_the_population_column_and_id_column_its_old_name():
    byun = byun2008_tables()
    releases, populations = byun["releases"], [byun["figure1"], byun["figure3"]]
    assert len(intersection(releases, populations, person="name")) == 4
    calls = [
        lambda **kw: intersection(releases, populations, **kw),
        lambda **kw: difference(releases, populations, 2, 2, **kw),
        lambda **kw: record_tracing(releases, populations, **kw),
        lambda **kw: findings(releases, populations, 2, 2, **kw),
        lambda **kw: History(2, 2, **kw),
        lambda **kw: placement(byun["figure2"], byun["figure1"], **kw),
        lambda **kw: byun["figure2"].compatible(byun["figure1"], **kw),
    ]
    for call in calls:
        with pytest.warns(DeprecationWarning, match="id_column= is deprecated; use person="):
            old = call(id_column="name")
        new = call(person="name")
        if isinstance(new, pd.DataFrame):
            pd.testing.assert_frame_equal(old, new)
        with pytest.raises(ArgumentError, match="give person= only"):
            call(person="name", id_column="name")
        with pytest.raises(ArgumentTypeError, match="unexpected keyword argument 'persn'"):
            call(persn="name")
