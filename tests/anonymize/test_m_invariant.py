"""m-invariant re-publication (Xiao and Tao, SIGMOD 2007): ``anonymize.m_invariant``.

The paper's running example (its Tables 1-3) could not be found in text form (only its
abstract, the authors' page and slides without the tables), so it is not reproduced
here; ``test_hand_example`` is a small example worked out by hand instead, labelled as
such.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, ReleaseError
from maxent_privacy._validation import ArgumentError
from maxent_privacy.anonymize import m_invariant
from maxent_privacy.datasets import ADULT_QI, ADULT_SA, du2008_adult

QI = ["age", "zip"]
SA = "disease"
PID = "pid"


# -- checks ---------------------------------------------------------------------------


def groups_of(release: Bucketized) -> dict:
    """Group id -> list of (person or None for a counterfeit, value)."""
    out: dict = {}
    fake = release.is_counterfeit
    frame = release.frame
    rows = frame[[release.group, release.person, release.sa]].itertuples(index=False)
    for (g, p, v), f in zip(rows, fake, strict=True):
        out.setdefault(g, []).append((None if f else p, v))
    return out


def signatures_of(release: Bucketized) -> dict:
    """Person -> the set of values of their group."""
    sig = {}
    for members in groups_of(release).values():
        K = frozenset(v for _, v in members)
        for p, _ in members:
            if p is not None:
                sig[p] = K
    return sig


def assert_release(release: Bucketized, frame: pd.DataFrame, m: int, qi=QI, sa=SA):
    """m-unique groups, every person once with their own values, counterfeits as the
    format says, and per bucket (signature) the paper's count of counterfeits."""
    assert isinstance(release, Bucketized)
    assert release.counterfeits == "counterfeit" and release.person == PID
    out = release.frame
    assert list(out.columns) == list(qi) + [sa, "group", PID, "counterfeit"]
    fake = release.is_counterfeit
    assert out.loc[fake, list(qi) + [PID]].isna().all().all()
    groups = groups_of(release)
    for members in groups.values():
        values = [v for _, v in members]
        assert len(values) >= m and len(set(values)) == len(values)  # m-unique
        assert any(p is not None for p, _ in members)
    # every person of the input exactly once, with their own QI and value
    people = release.people
    assert sorted(people[PID].tolist()) == sorted(frame[PID].tolist())
    mine = people.set_index(PID).loc[frame[PID], list(qi) + [sa]]
    theirs = frame.set_index(PID)[list(qi) + [sa]]
    for col in list(qi) + [sa]:
        assert mine[col].tolist() == theirs[col].tolist(), col
    counts = release.counterfeit_counts()
    assert counts.to_dict() == {g: sum(p is None for p, _ in mem) for g, mem in groups.items()}
    # balancing: a bucket (all groups of one signature) has k = max count of a value
    # among its people groups and k - count(v) counterfeits of each value v
    buckets: dict = {}
    for members in groups.values():
        K = frozenset(v for _, v in members)
        buckets.setdefault(K, []).append(members)
    for K, bucket in buckets.items():
        real = Counter(v for mem in bucket for p, v in mem if p is not None)
        fakes = Counter(v for mem in bucket for p, v in mem if p is None)
        k = max(real.values())
        assert len(bucket) == k
        assert sum(fakes.values()) == sum(k - real[v] for v in K)
        assert all(fakes[v] == k - real[v] for v in K)


def assert_sequence(releases, frames, m, qi=QI, sa=SA):
    seen: dict = {}
    for rel, frame in zip(releases, frames, strict=True):
        assert_release(rel, frame, m, qi, sa)
        for p, K in signatures_of(rel).items():
            assert seen.setdefault(p, K) == K, f"person {p} changed signature"


def random_case(rng, pool: int, start: tuple, max_releases: int, max_values: int):
    """Tables of a random sequence and an m (2 or 3) that its first table allows."""
    while True:
        n_values = int(rng.integers(3, max_values + 1))
        frames = random_frames(rng, pool, start, int(rng.integers(2, max_releases + 1)), n_values)
        distinct = frames[0][SA].nunique()
        if distinct >= 2:
            return frames, int(rng.integers(2, min(distinct, 3) + 1))


def publish(frames, m, qi=QI, sa=SA, seed=0):
    releases = []
    for frame in frames:
        releases.append(m_invariant(frame, qi, sa, m=m, history=releases, person=PID, seed=seed))
    return releases


def random_frames(rng, pool: int, start: tuple, n_releases: int, n_values: int) -> list:
    """A sequence of tables: ~10% of the people leave and ~10% arrive per release (and
    now and then someone comes back); a person's QI and value never change."""
    values = [f"v{j}" for j in range(n_values)]
    weights = rng.dirichlet(np.ones(n_values) * 2)
    people = pd.DataFrame(
        {
            PID: np.arange(pool),
            "age": rng.integers(18, 80, pool),
            "zip": rng.choice([100, 200, 300, 400], pool),
            SA: rng.choice(values, pool, p=weights),
        }
    )
    present = set(rng.choice(pool, size=int(rng.integers(*start)), replace=False).tolist())
    gone: set = set()
    frames = [people[people[PID].isin(present)]]
    for _ in range(n_releases - 1):
        leave = {p for p in present if rng.random() < 0.1}
        unused = [p for p in range(pool) if p not in present and p not in gone]
        arrive = {p for p in unused if rng.random() < 0.1 * len(present) / max(len(unused), 1)}
        back = {p for p in gone if rng.random() < 0.05}
        present = (present - leave) | arrive | back
        gone = (gone | leave) - back
        if not present:
            present = {unused[0] if unused else 0}
        frames.append(people[people[PID].isin(present)])
    return frames


# -- the hand example -------------------------------------------------------------------


def hand_tables():
    """A HAND EXAMPLE (not the paper's tables): release 1 given as four groups of two,
    then p2, p5 and p8 leave and p9 (b), p10 (c) and p11 (e) arrive; then p10 leaves and
    p12 (c) arrives."""
    rows = [
        ("p1", 20, "a", 1), ("p2", 25, "b", 1), ("p3", 60, "a", 2), ("p4", 61, "b", 2),
        ("p5", 40, "c", 3), ("p6", 42, "d", 3), ("p7", 30, "a", 4), ("p8", 33, "c", 4),
        ("p9", 22, "b", 0), ("p10", 45, "c", 0), ("p11", 70, "e", 0), ("p12", 35, "c", 0),
    ]  # fmt: skip
    table = pd.DataFrame(rows, columns=[PID, "age", SA, "group"])
    release1 = Bucketized(table[table["group"] > 0], ["age"], SA, "group", person=PID)
    keep2 = ["p1", "p3", "p4", "p6", "p7", "p9", "p10", "p11"]
    keep3 = ["p1", "p3", "p4", "p6", "p7", "p9", "p11", "p12"]
    t2 = table[table[PID].isin(keep2)].drop(columns="group")
    t3 = table[table[PID].isin(keep3)].drop(columns="group")
    return release1, t2, t3


def as_sets(release):
    """The release as {frozenset of (person or 'counterfeit', value)}: the groups."""
    return {
        frozenset(("counterfeit" if p is None else p, v) for p, v in members)
        for members in groups_of(release).values()
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hand_example(seed):
    """Worked by hand, phase by phase (a hand example, NOT the paper's running example).

    Release 2, m = 2. Division: {a,b} holds p1 (a), p3 (a), p4 (b); {a,c} holds p7 (a);
    {c,d} holds p6 (d); the insertions p9 (b), p10 (c), p11 (e) wait in piles.
    Balancing ({a,b}, {a,c}, {c,d} in that order): {a,b} needs one b: p9 fills it (the
    piles c, e stay 2-eligible); {a,c} needs a c: taking p10 would leave e alone (not
    2-eligible), so a counterfeit c; {c,d} likewise. Assignment: c and e form {c,e}.
    Split: {a,b} (two per value) by age: p1 (20) with p9 (22), p3 (60) with p4 (61).

    Release 3: p10 leaves, p12 (c) arrives. {a,c} (first in order) takes p12 in place of
    its counterfeit; {c,d} keeps its counterfeit; {c,e} lost p10: a counterfeit c.
    """
    release1, t2, t3 = hand_tables()
    r2 = m_invariant(t2, ["age"], SA, m=2, history=[release1], person=PID, seed=seed)
    assert as_sets(r2) == {
        frozenset({("p1", "a"), ("p9", "b")}),
        frozenset({("p3", "a"), ("p4", "b")}),
        frozenset({("p7", "a"), ("counterfeit", "c")}),
        frozenset({("p6", "d"), ("counterfeit", "c")}),
        frozenset({("p10", "c"), ("p11", "e")}),
    }
    assert r2.counterfeit_counts().tolist() == [0, 0, 1, 1, 0]  # groups in signature order
    r3 = m_invariant(t3, ["age"], SA, m=2, history=[release1, r2], person=PID, seed=seed)
    assert as_sets(r3) == {
        frozenset({("p1", "a"), ("p9", "b")}),
        frozenset({("p3", "a"), ("p4", "b")}),
        frozenset({("p7", "a"), ("p12", "c")}),
        frozenset({("p6", "d"), ("counterfeit", "c")}),
        frozenset({("p11", "e"), ("counterfeit", "c")}),
    }
    assert r3.counterfeit_counts().sum() == 2
    assert_sequence([r2, r3], [t2, t3], 2, qi=["age"])


def test_first_release_is_m_unique_and_qi_compact():
    frame = pd.DataFrame(
        {PID: range(6), "age": [20, 21, 22, 60, 61, 62], "zip": [1] * 6,
         SA: ["a", "b", "c", "a", "b", "c"]}
    )  # fmt: skip
    release = m_invariant(frame, QI, SA, m=3, person=PID)
    assert as_sets(release) == {
        frozenset({(0, "a"), (1, "b"), (2, "c")}),
        frozenset({(3, "a"), (4, "b"), (5, "c")}),
    }
    assert release.counterfeit_counts().sum() == 0
    assert m_invariant(frame, QI, SA, m=3, history=[], person=PID).frame.equals(release.frame)


def test_first_release_pads_with_the_fewest_counterfeits():
    """Not m-eligible (one value in more than 1/m of the people): m * c1 - N counterfeits."""
    frame = pd.DataFrame({PID: range(5), "age": range(5), "zip": 1, SA: list("aaabc")})
    release = m_invariant(frame, QI, SA, m=2, person=PID)
    assert_release(release, frame, 2)
    assert release.counterfeit_counts().sum() == 2 * 3 - 5
    assert release.n_groups == 3


# -- m-invariance on random sequences ----------------------------------------------------


def test_random_sequences_are_m_invariant():
    """120 tiny sequences of 2-4 releases: m-unique groups, one signature per person,
    the paper's count of counterfeits per bucket, everyone exactly once."""
    rng = np.random.default_rng(2007)
    for trial in range(120):
        frames, m = random_case(rng, 40, (8, 25), 4, 5)
        releases = publish(frames, m, seed=trial)
        assert_sequence(releases, frames, m)


def test_adult_sequence_is_m_invariant():
    sample = du2008_adult(n=2400, seed=3).reset_index(names=PID)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(sample))
    present = set(order[:1600].tolist())
    spare = list(order[1600:])
    frames = []
    for _ in range(3):
        frames.append(sample[sample.index.isin(present)])
        leave = set(rng.choice(sorted(present), size=160, replace=False).tolist())
        present = (present - leave) | {spare.pop() for _ in range(160)}
    releases = publish(frames, 3, qi=ADULT_QI, sa=ADULT_SA, seed=5)
    assert_sequence(releases, frames, 3, qi=ADULT_QI, sa=ADULT_SA)
    assert releases[0].counterfeit_counts().sum() == 0  # Adult's education is 3-eligible
    assert 0 < releases[2].counterfeit_counts().sum() < 0.05 * releases[2].n_people


def test_adult_first_release_not_m_eligible():
    frame = du2008_adult(n=1000, seed=1).reset_index(names=PID)
    top = frame[ADULT_SA].value_counts().max()
    assert 4 * top > len(frame)  # HS-grad is about a third: not 4-eligible
    release = m_invariant(frame, ADULT_QI, ADULT_SA, m=4, person=PID)
    assert_release(release, frame, 4, qi=ADULT_QI, sa=ADULT_SA)
    assert release.counterfeit_counts().sum() == 4 * top - len(frame)


# -- possible worlds ---------------------------------------------------------------------


def possible_values(releases) -> dict:
    """Brute force: every assignment of one value per person (a person's value does not
    change) and of the rest of each group's published multiset to its counterfeits,
    consistent with all releases; per person, the values some consistent world gives."""
    groups = []  # (members, published multiset)
    for rel in releases:
        for members in groups_of(rel).values():
            groups.append(
                ([p for p, _ in members if p is not None], Counter(v for _, v in members))
            )
    people = sorted({p for mem, _ in groups for p in mem})
    domain = sorted({v for _, ms in groups for v in ms})
    of = {p: [j for j, (mem, _) in enumerate(groups) if p in mem] for p in people}
    found = {p: set() for p in people}
    used = [Counter() for _ in groups]
    value: dict = {}

    def search(t):
        if t == len(people):
            for p in people:
                found[p].add(value[p])
            return
        p = people[t]
        for v in domain:
            if all(used[j][v] < groups[j][1][v] for j in of[p]):
                for j in of[p]:
                    used[j][v] += 1
                value[p] = v
                search(t + 1)
                for j in of[p]:
                    used[j][v] -= 1

    search(0)
    return found


def test_possible_worlds_give_every_person_m_values():
    """The paper's guarantee, by enumeration on tiny sequences (<= 7 people, 2-3
    releases): every person has at least m possible values, in fact exactly their
    signature (counterfeits and all)."""
    rng = np.random.default_rng(7)
    checked = 0
    for trial in range(100):
        frames, m = random_case(rng, 7, (3, 7), 3, 4)
        releases = publish(frames, m, seed=trial)
        possible = possible_values(releases)
        signature: dict = {}
        for rel in releases:
            signature.update(signatures_of(rel))
        for p, values in possible.items():
            assert len(values) >= m, (trial, p, values)
            assert values == set(signature[p])
            checked += 1
    assert checked > 300


# -- errors ------------------------------------------------------------------------------


def one_line(excinfo, *words):
    text = str(excinfo.value)
    assert "\n" not in text
    for w in words:
        assert w in text, (w, text)


def small():
    return pd.DataFrame(
        {PID: [1, 2, 3, 4], "age": [20, 30, 40, 50], "zip": 1, SA: ["a", "b", "a", "b"]}
    )


def test_error_m_not_an_integer():
    with pytest.raises(ArgumentError) as e:
        m_invariant(small(), QI, SA, m=1.5, person=PID)
    one_line(e, "m must be a whole number", "1.5")


def test_error_m_below_two():
    with pytest.raises(ArgumentError) as e:
        m_invariant(small(), QI, SA, m=1, person=PID)
    one_line(e, "m must be a whole number >= 2")


def test_error_m_exceeds_distinct_values():
    with pytest.raises(ReleaseError) as e:
        m_invariant(small(), QI, SA, m=3, person=PID)
    one_line(e, "m=3", "2 distinct sensitive values", repr(SA))


def test_error_no_person_argument():
    with pytest.raises(ReleaseError) as e:
        m_invariant(small(), QI, SA, m=2)
    one_line(e, "person=")


def test_error_person_column_missing():
    with pytest.raises(ReleaseError) as e:
        m_invariant(small(), QI, SA, m=2, person="name")
    one_line(e, "person column 'name'")


def test_error_duplicate_person():
    frame = small()
    frame.loc[3, PID] = 1
    with pytest.raises(ReleaseError) as e:
        m_invariant(frame, QI, SA, m=2, person=PID)
    one_line(e, "person id 1", repr(PID))


def test_error_missing_sensitive_value():
    frame = small()
    frame.loc[2, SA] = None
    with pytest.raises(ReleaseError) as e:
        m_invariant(frame, QI, SA, m=2, person=PID)
    one_line(e, repr(SA), "row 2")


def test_error_empty_table():
    with pytest.raises(ReleaseError) as e:
        m_invariant(small().iloc[:0], QI, SA, m=2, person=PID)
    one_line(e, "no rows")


def test_error_counterfeits_name_taken():
    with pytest.raises(ReleaseError) as e:
        m_invariant(small(), QI, SA, m=2, person=PID, counterfeits="age")
    one_line(e, "counterfeits column name 'age'")


def test_error_history_not_a_list_of_releases():
    with pytest.raises(ReleaseError) as e:
        m_invariant(small(), QI, SA, m=2, history=small(), person=PID)
    one_line(e, "history must be a list", "DataFrame")
    with pytest.raises(ReleaseError) as e:
        m_invariant(small(), QI, SA, m=2, history=[small()], person=PID)
    one_line(e, "release 1 of the history is a DataFrame")


def test_error_history_without_person_ids():
    release = Bucketized(small().assign(group=[1, 1, 2, 2]), QI, SA, "group")
    with pytest.raises(ReleaseError) as e:
        m_invariant(small(), QI, SA, m=2, history=[release], person=PID)
    one_line(e, "release 1 of the history has no person ids")


def test_error_history_other_sensitive_column():
    other = small().rename(columns={SA: "illness"}).assign(group=[1, 1, 2, 2])
    release = Bucketized(other, QI, "illness", "group", person=PID)
    with pytest.raises(ReleaseError) as e:
        m_invariant(small(), QI, SA, m=2, history=[release], person=PID)
    one_line(e, "release 1", "'illness'", repr(SA))


def test_error_history_not_m_unique():
    release = Bucketized(small().assign(group=[1, 2, 1, 2]), QI, SA, "group", person=PID)
    with pytest.raises(ReleaseError) as e:
        m_invariant(small(), QI, SA, m=2, history=[release], person=PID)
    one_line(e, "release 1 of the history is not 2-unique", "group 1")


def test_error_history_groups_smaller_than_m():
    frame = small().assign(**{SA: ["a", "b", "c", "d"]})
    release = Bucketized(frame.assign(group=[1, 1, 2, 2]), QI, SA, "group", person=PID)
    with pytest.raises(ReleaseError) as e:
        m_invariant(frame, QI, SA, m=3, history=[release], person=PID)
    one_line(e, "not 3-unique", "2 records")


def test_error_history_not_m_invariant_names_the_person():
    frame = small().assign(**{SA: ["a", "b", "c", "d"]})
    first = Bucketized(frame.assign(group=[1, 1, 2, 2]), QI, SA, "group", person=PID)
    second = Bucketized(frame.assign(group=[1, 2, 1, 2]), QI, SA, "group", person=PID)
    with pytest.raises(ReleaseError) as e:
        m_invariant(frame, QI, SA, m=2, history=[first, second], person=PID)
    one_line(e, "not m-invariant", "person 1", "release 1", "release 2")


def test_error_value_outside_signature():
    release = m_invariant(small(), QI, SA, m=2, person=PID)
    changed = small().assign(**{SA: ["a", "b", "a", "c"]})
    with pytest.raises(ReleaseError) as e:
        m_invariant(changed, QI, SA, m=2, history=[release], person=PID)
    one_line(e, "person 4", "'c'", "{'a', 'b'}")


def test_error_person_ids_of_another_kind():
    release = m_invariant(small(), QI, SA, m=2, person=PID)
    text = small().assign(**{PID: ["1", "2", "3", "4"]})
    with pytest.raises(ReleaseError) as e:
        m_invariant(text, QI, SA, m=2, history=[release], person=PID)
    one_line(e, "person ids are text in the table", "numbers in release 1")


def test_error_bad_seed():
    with pytest.raises(ArgumentError) as e:
        m_invariant(small(), QI, SA, m=2, person=PID, seed="x")
    one_line(e, "seed")
