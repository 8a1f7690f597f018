"""Counterfeit records (m-invariance, issue 25 item 1): the release, the model, the people.

A counterfeit record adds its value to its group's published multiset and belongs to no
one; the model holds the counterfeits of a group as one phantom record class (see
``maxent_privacy/releases/counterfeits.py``). The brute-force test enumerates the possible
worlds of tiny random instances (every assignment of values to people, and to counterfeits
per release, consistent with every published multiset) and compares them with the model's
possible and certain values per person.
"""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel, ReleaseError


def _group(values, people, fake, pid=None, qi=None):
    """One group's rows: ``people`` (names) then ``fake`` counterfeits, with ``values``."""
    n = len(people)
    return pd.DataFrame(
        {
            "name": list(people) + [None] * fake,
            "pid": (list(pid) if pid is not None else list(people)) + [None] * fake,
            "s": list(values),
            "fake": [False] * n + [True] * fake,
        }
    )


def alice_bob():
    """One group {Alice, Bob} publishing {flu, flu, gastritis}, one of them counterfeit."""
    frame = _group(["flu", "flu", "gastritis"], ["Alice", "Bob"], 1).assign(g=1)
    return Bucketized(frame, qi=["name"], sa="s", group="g", person="pid", counterfeits="fake")


# ---------------------------------------------------------------- the release
def test_constructor_and_published_views():
    rel = alice_bob()
    assert rel.counterfeits == "fake"
    assert (rel.n_records, rel.n_people, rel.n_groups) == (3, 2, 1)
    counts = rel.counterfeit_counts()
    assert counts.name == "counterfeits" and counts.to_dict() == {1: 1}
    assert rel.sa_table()["count"].tolist() == [2, 1]  # as published: counterfeits too
    b = rel.buckets()
    assert b.loc[1, "s"] == ["flu", "flu", "gastritis"]
    assert b.loc[1, "qi"] == [("Alice",), ("Bob",)] and b.loc[1, "counterfeits"] == 1
    assert rel.people["pid"].tolist() == ["Alice", "Bob"]
    assert rel.qi_table()["name"].tolist() == ["Alice", "Bob"]
    assert rel.domain("name") == ["Alice", "Bob"]
    assert rel.domain("s") == ["flu", "gastritis"]
    assert rel.is_counterfeit.tolist() == [False, False, True]


def test_flags_as_bool_zero_one_and_objects():
    base = _group(["a", "b", "c"], ["x", "y"], 1).assign(g=1)
    for flags in ([0, 0, 1], [False, False, True], np.array([0.0, 0.0, 1.0])):
        rel = Bucketized(base.assign(fake=flags), ["name"], "s", "g", counterfeits="fake")
        assert rel.counterfeit_counts().tolist() == [1]
        assert rel.frame["fake"].dtype == bool
    objects = pd.Series([False, np.False_, True], dtype=object)
    rel = Bucketized(base.assign(fake=objects), ["name"], "s", "g", counterfeits="fake")
    assert rel.n_people == 2


def test_groups_without_counterfeits_count_zero():
    frame = pd.concat(
        [_group(["a", "b", "c"], ["x", "y"], 1).assign(g=1), _group(["a", "b"], ["z", "w"], 0)]
    ).fillna({"g": 2})
    rel = Bucketized(frame, ["name"], "s", "g", counterfeits="fake")
    assert rel.counterfeit_counts().to_dict() == {1: 1, 2: 0}


def test_integer_ids_read_back_as_integers():
    frame = _group(["a", "b", "c"], ["x", "y"], 1, pid=[7, 9]).assign(g=1)
    rel = Bucketized(frame, ["name"], "s", "g", person="pid", counterfeits="fake")
    assert rel.frame["pid"].dtype.kind == "f"  # the missing counterfeit cell
    assert rel.people["pid"].dtype == np.int64 and rel.people["pid"].tolist() == [7, 9]


def test_without_counterfeits_nothing_changes():
    frame = pd.DataFrame({"q": [1, 2], "s": ["a", "b"], "g": [1, 1]})
    rel = Bucketized(frame, ["q"], "s", "g")
    assert rel.counterfeits is None and rel.n_people == rel.n_records == 2
    assert repr(rel) == "Bucketized(2 records, 1 groups, qi=['q'], sa='s', group='g')"
    assert list(rel.buckets().columns) == ["size", "qi", "s"]
    assert rel.people is rel.frame
    s = MaxEntModel(rel).structure
    assert s.class_phantom is None and "phantom" not in s.classes.columns


@pytest.mark.parametrize(
    ("flags", "bad"),
    [([0, 0, 2], "2 in row 2"), ([0, "maybe", 1], "'maybe' in row 1"), ([0, 0, None], "in row 2")],
)
def test_bad_flag_names_column_and_row(flags, bad):
    frame = _group(["a", "b", "c"], ["x", "y"], 1).assign(g=1, fake=pd.Series(flags, dtype=object))
    with pytest.raises(ReleaseError, match=r"counterfeits column 'fake' holds .*" + bad) as err:
        Bucketized(frame, ["name"], "s", "g", counterfeits="fake")
    assert "\n" not in str(err.value)


def test_missing_counterfeits_column():
    frame = _group(["a", "b"], ["x", "y"], 0).assign(g=1)
    with pytest.raises(ReleaseError, match="counterfeits column 'fakes' is not in the table"):
        Bucketized(frame, ["name"], "s", "g", counterfeits="fakes")


def test_counterfeits_column_with_another_role():
    frame = _group(["a", "b"], ["x", "y"], 0).assign(g=1)
    with pytest.raises(ReleaseError, match="column 's' is given more than one role"):
        Bucketized(frame, ["name"], "s", "g", counterfeits="s")


def test_counterfeit_with_a_person_id_names_the_row():
    frame = _group(["a", "b", "c"], ["x", "y"], 1).assign(g=1)
    frame.loc[2, "pid"] = "z"
    with pytest.raises(ReleaseError, match=r"row 2 is a counterfeit record .* person id 'z'"):
        Bucketized(frame, ["name"], "s", "g", person="pid", counterfeits="fake")


def test_group_of_counterfeits_only_names_the_group():
    frame = _group(["a", "b", "c"], ["x", "y"], 1).assign(g=[1, 1, 5])
    with pytest.raises(ReleaseError, match="group 5 holds only counterfeit records"):
        Bucketized(frame, ["name"], "s", "g", counterfeits="fake")


def test_real_record_still_needs_its_qi():
    frame = _group(["a", "b", "c"], ["x", None], 1).assign(g=1)
    with pytest.raises(ReleaseError, match=r"column 'name' has a missing value \(row 1\)"):
        Bucketized(frame, ["name"], "s", "g", counterfeits="fake")


def test_counterfeit_still_needs_value_and_group():
    frame = _group(["a", "b", None], ["x", "y"], 1).assign(g=1)
    with pytest.raises(ReleaseError, match=r"column 's' has a missing value \(row 2\)"):
        Bucketized(frame, ["name"], "s", "g", counterfeits="fake")
    frame = _group(["a", "b", "c"], ["x", "y"], 1).assign(g=[1, 1, None])
    with pytest.raises(ReleaseError, match=r"column 'g' has a missing value \(row 2\)"):
        Bucketized(frame, ["name"], "s", "g", counterfeits="fake")


def test_counterfeit_qi_cells_are_ignored():
    frame = _group(["flu", "flu", "gastritis"], ["Alice", "Bob"], 1).assign(g=1)
    frame.loc[2, "name"] = "Alice"  # a counterfeit is no one, whatever its QI cell says
    rel = Bucketized(frame, ["name"], "s", "g", counterfeits="fake")
    post = MaxEntModel(rel).solve().posterior()
    assert post.loc[("Alice",), "flu"] == pytest.approx(2 / 3, abs=1e-9)


def test_repr_and_round_trip():
    rel = alice_bob()
    assert repr(rel) == (
        "Bucketized(3 records, 1 groups, qi=['name'], sa='s', group='g', person='pid', "
        "counterfeits='fake' (1 counterfeit))"
    )
    again = Bucketized(rel.frame, rel.qi, rel.sa, rel.group, rel.person, rel.counterfeits)
    pd.testing.assert_frame_equal(again.frame, rel.frame)
    pd.testing.assert_series_equal(again.counterfeit_counts(), rel.counterfeit_counts())
    # through CSV: the flags come back as True/False, the missing cells as NaN
    text = rel.frame.to_csv(index=False)
    from io import StringIO

    read = pd.read_csv(StringIO(text), dtype={"name": str, "pid": str, "s": str})
    back = Bucketized(read, ["name"], "s", "g", person="pid", counterfeits="fake")
    assert back.counterfeit_counts().tolist() == [1] and back.n_people == 2


# ---------------------------------------------------------------- the model, by hand
def test_alice_flu_two_thirds():
    model = MaxEntModel(alice_bob())
    s = model.structure
    assert s.class_phantom.tolist() == [False, False, True]
    assert s.n_records == model.n_records == 2  # people
    result = model.solve()
    post = result.person_posterior()
    assert list(post.index) == ["Alice", "Bob"]  # the counterfeit is no one
    assert Fraction(float(post.loc["Alice", "flu"])).limit_denominator(100) == Fraction(2, 3)
    assert post.loc["Alice", "flu"] == pytest.approx(2 / 3, abs=1e-9)
    assert result.posterior().loc[("Alice",), "gastritis"] == pytest.approx(1 / 3, abs=1e-9)
    b = model.bounds(by="person", exact=True)
    alice = b.xs("Alice", level="person")
    assert alice["possible"].tolist() == [True, True] and not alice["certain"].any()
    assert set(b.index.get_level_values("person")) == {"Alice", "Bob"}
    # P(flu) over people: 4/3 of 2 people's records
    model.add(model.P("flu") >= 0.6)
    assert model.solve().person_posterior().loc["Alice", "flu"] == pytest.approx(2 / 3, 1e-6)


def test_without_the_counterfeit_alice_would_be_certain():
    """Dropping the counterfeit row (what only the publisher could do) forces flu."""
    rel = alice_bob()
    plain = _group(["flu", "flu"], ["Alice", "Bob"], 0).assign(g=1)
    plain = Bucketized(plain, ["name"], "s", "g", person="pid")
    certain = MaxEntModel(plain).bounds(by="person", exact=True)["certain"]
    assert certain.xs("flu", level="s").all()
    assert not MaxEntModel(rel).bounds(by="person", exact=True)["certain"].any()


def _two(frames_fake):
    return [
        Bucketized(f, ["name"], "s", "g", person="pid", counterfeits="fake") for f in frames_fake
    ]


def possible_sets(model, b=None) -> dict:
    """Person -> the values some possible world gives them (``model.bounds``)."""
    b = model.bounds(by="person", exact=True) if b is None else b
    assert b["upper_exact"].all() and b["lower_exact"].all()
    out = {}
    for (p, v), row in b.iterrows():
        if row["possible"]:
            out.setdefault(p, set()).add(v)
    return out


def test_second_release_makes_alice_certain():
    """Release 1 alone leaves Alice flu or gastritis; release 2 (no counterfeits) puts her
    with Carl under {gastritis, hiv}: she has gastritis, Bob flu, the counterfeit flu."""
    r1 = _group(["flu", "flu", "gastritis"], ["Alice", "Bob"], 1).assign(g=1)
    r2 = _group(["gastritis", "hiv"], ["Alice", "Carl"], 0).assign(g=1)
    r2 = pd.concat([r2, _group(["flu"], ["Bob"], 0).assign(g=2)], ignore_index=True)
    model = MaxEntModel(_two([r1, r2]))
    assert possible_sets(model) == {"Alice": {"gastritis"}, "Bob": {"flu"}, "Carl": {"hiv"}}
    post = model.solve().person_posterior()
    assert post.loc["Alice", "gastritis"] == pytest.approx(1.0, abs=1e-9)


def test_counterfeits_of_two_releases_are_not_linked():
    """Counterfeits have no person id: those of release 1 and of release 2 are different
    records. Linked (as one entity with a missing id), they would need a value common to
    both groups' multisets, none of which is left: the releases would look contradictory."""
    r1 = _group(["flu", "gastritis", "hiv"], ["Alice", "Bob"], 1).assign(g=1)
    r2 = _group(["flu", "gastritis", "cold"], ["Alice", "Bob"], 1).assign(g=1)
    model = MaxEntModel(_two([r1, r2]))
    assert possible_sets(model) == {"Alice": {"flu", "gastritis"}, "Bob": {"flu", "gastritis"}}
    phantom = model.structure.classes[model.structure.phantom]
    assert phantom["groups"].tolist() == ["r1:1", "r2:1"]
    result = model.solve()
    # hiv and cold are the counterfeits' (no one may hold them): no column of people's
    assert result.person_posterior().loc["Alice"].to_dict() == pytest.approx(
        {"flu": 0.5, "gastritis": 0.5}, abs=1e-8
    )


def test_value_held_by_counterfeits_alone():
    """A value no real person of the group may hold is the counterfeit's (release 2 leaves
    Alice and Bob only flu and gastritis): allowed, not 'contradictory releases'."""
    r1 = _group(["flu", "gastritis", "hiv"], ["Alice", "Bob"], 1).assign(g=1)
    r2 = _group(["flu", "gastritis"], ["Alice", "Bob"], 0).assign(g=1)
    model = MaxEntModel(_two([r1, r2]))
    cells = model.structure.cells
    hiv = cells[cells["s"] == "hiv"]
    assert hiv["phantom"].all()
    assert possible_sets(model) == {"Alice": {"flu", "gastritis"}, "Bob": {"flu", "gastritis"}}


def test_model_outputs_are_about_people():
    r1 = _group(["flu", "flu", "gastritis"], ["Alice", "Bob"], 1).assign(g=1)
    r1 = pd.concat([r1, _group(["hiv", "flu", "cold"], ["Carl", "Dan"], 1).assign(g=2)])
    rel = Bucketized(r1.reset_index(drop=True), ["name"], "s", "g", counterfeits="fake")
    model = MaxEntModel(rel)
    result = model.solve()
    people = {"Alice", "Bob", "Carl", "Dan"}
    assert set(result.posterior().index.get_level_values(0)) == people
    assert set(result.posterior(by="group").index.get_level_values(0)) == people
    risk = result.risk_table()
    assert set(risk["name"]) == people and len(risk) == 4
    for by in (None, "group"):
        b = result.bounds(by=by)
        assert set(b.index.get_level_values("name")) == people
        assert (b["records"] == 1).all()
    # the true table: the phantom cells hold the publisher's counterfeit values
    truth = model.true_assignment(rel.frame)
    A, b, _ = model.invariant_matrix(drop_redundant=False)
    assert np.abs(A @ truth - b).max() == 0
    from maxent_privacy import metrics

    assert set(metrics.max_posterior(result).index.get_level_values(0)) == people
    assert metrics.estimation_accuracy(result, rel.people) >= 0


# ---------------------------------------------------------------- brute force
def _instance(rng):
    """Tiny releases with counterfeits, made from true data (so they are consistent)."""
    letters = list("abcd"[: rng.integers(3, 5)])
    n = int(rng.integers(2, 7))
    people = [f"p{i}" for i in range(n)]
    truth = {p: letters[rng.integers(len(letters))] for p in people}
    qi = {p: "xy"[rng.integers(2)] for p in people}  # classes of several people too
    releases, published = [], []
    for _ in range(int(rng.integers(1, 4))):
        who = [p for p in people if rng.random() < 0.85]
        if len(who) < 2:
            who = list(people)
        who = [who[i] for i in rng.permutation(len(who))]
        sizes = []
        while sum(sizes) < len(who):
            sizes.append(min(int(rng.integers(2, 4)), len(who) - sum(sizes)))
        if sizes[-1] == 1:
            sizes[-2:] = [sizes[-2] + 1]
        rows, groups, start = [], [], 0
        for g, k in enumerate(sizes, start=1):
            members = who[start : start + k]
            start += k
            fake = [letters[rng.integers(len(letters))] for _ in range(rng.integers(0, 3))]
            for p in members:
                rows.append({"pid": p, "q": qi[p], "s": truth[p], "g": g, "fake": False})
            for v in fake:
                rows.append({"pid": None, "q": None, "s": v, "g": g, "fake": True})
            groups.append((members, Counter([truth[p] for p in members] + fake)))
        frame = pd.DataFrame(rows).sample(frac=1.0, random_state=int(rng.integers(1 << 30)))
        releases.append(Bucketized(frame, ["q"], "s", "g", person="pid", counterfeits="fake"))
        published.append(groups)
    present = sorted({p for groups in published for members, _ in groups for p in members})
    return releases, published, present, letters, truth


def _worlds(published, present, letters):
    """Every assignment of values to people that leaves, in every group, a sub-multiset
    of its published values for its counterfeits (which may hold any of them)."""
    out = []
    for values in itertools.product(letters, repeat=len(present)):
        world = dict(zip(present, values, strict=True))
        ok = all(
            not (Counter(world[p] for p in members) - counts)
            for groups in published
            for members, counts in groups
        )
        if ok:
            out.append(world)
    return out


def test_brute_force_possible_worlds():
    rng = np.random.default_rng(2025)
    checked = with_fakes = pooled = 0
    for _ in range(200):
        releases, published, present, letters, truth = _instance(rng)
        worlds = _worlds(published, present, letters)
        assert {p: truth[p] for p in present} in worlds  # the truth is a possible world
        possible = {p: {w[p] for w in worlds} for p in present}
        model = MaxEntModel(releases if len(releases) > 1 else releases[0])
        frame = model.bounds(by="person", exact=True)
        got = possible_sets(model, frame)
        assert got == possible, (got, possible)
        for (p, v), row in frame.iterrows():
            assert bool(row["certain"]) == (possible[p] == {v})
        result = model.solve()
        post = result.person_posterior()
        assert set(post.index) == set(present)
        p_arr = post.to_numpy(dtype=float)
        assert np.all(p_arr >= -1e-9) and np.all(p_arr <= 1 + 1e-9)
        assert np.allclose(p_arr.sum(axis=1), 1.0, atol=1e-7)
        for p in present:  # every value some world gives keeps a positive posterior
            for v in possible[p]:
                assert post.loc[p, v] > 1e-9
        x = np.zeros(model.n_cells)
        x[model.structure.value_cell] = result.x
        A, b, _ = model.invariant_matrix(drop_redundant=False)
        assert np.abs(A @ x - b).max() <= 1e-6 * max(1.0, np.abs(b).max())
        assert result.certificate.data_residual <= 1e-6
        checked += 1
        with_fakes += any(r.n_people < r.n_records for r in releases)
        pooled += len(releases) > 1
    assert checked == 200 and with_fakes > 150 and pooled > 100


def test_array_and_table_constructions_agree(monkeypatch):
    """Pooled bucketized releases are built with array operations; the construction from
    tables (mixed columns, contradictions) must give the same phantom classes and cells."""
    import maxent_privacy.releases.pooled as pooled

    rng = np.random.default_rng(7)
    seen = 0
    for _ in range(30):
        releases = _instance(rng)[0]
        if len(releases) < 2:
            continue
        fast = pooled.build_pooled(releases, [None] * len(releases))
        with monkeypatch.context() as m:
            m.setattr(pooled, "build_bucketized", lambda *a: None)
            slow = pooled.build_pooled(releases, [None] * len(releases))
        pd.testing.assert_frame_equal(
            fast.classes.astype(str), slow.classes.astype(str), check_dtype=False
        )
        pd.testing.assert_frame_equal(fast.cells.astype(str), slow.cells.astype(str))
        assert (fast.sa_matrix != slow.sa_matrix).nnz == 0
        assert fast.phantom.tolist() == slow.phantom.tolist()
        assert fast.cell_keys() == slow.cell_keys()
        seen += 1
    assert seen >= 10


def test_generalized_release_with_a_population_and_counterfeits():
    """Release 1 (bucketized, a counterfeit in group 1) and release 2 (generalized, every
    person may sit in either group): the general construction, with placements."""
    from maxent_privacy.generalized import Generalized

    r1 = pd.DataFrame(
        {"pid": ["A", "B", None, "C"], "age": [20, 21, None, 30],
         "s": ["flu", "hiv", "cold", "flu"], "g": [1, 1, 1, 2], "fake": [0, 0, 1, 0]}
    )  # fmt: skip
    r1 = Bucketized(r1, ["age"], "s", "g", person="pid", counterfeits="fake")
    r2 = Generalized(
        pd.DataFrame({"age": ["[20-30]"] * 3, "s": ["flu", "cold", "flu"], "g": [1, 1, 2]}),
        ["age"], "s", "g",
    )  # fmt: skip
    population = pd.DataFrame({"age": [20, 21, 30]}, index=pd.Index(["A", "B", "C"]))
    model = MaxEntModel([r1, r2], populations=[None, population])
    assert (model.structure.placement_of >= 0).any()  # placements: the general path
    # C is flu (group 2 of release 1); A and B share flu and cold; the counterfeit is hiv
    assert possible_sets(model) == {"A": {"cold", "flu"}, "B": {"cold", "flu"}, "C": {"flu"}}
    post = model.solve().person_posterior()
    assert post.loc["A", "flu"] == pytest.approx(0.5, abs=1e-7)


def test_person_singled_out_and_facts_carried_over():
    rel = alice_bob()
    model = MaxEntModel(rel)
    model.add(model.P("gastritis") <= 0.1, name="rare")  # of people: counterfeits aside
    alice = model.person("Alice")
    assert model.structure.has_phantoms
    model.add(alice.P("flu") == 1)
    post = model.solve().person_posterior()
    assert post.loc["Alice", "flu"] == pytest.approx(1.0, abs=1e-7)
    # Bob and the counterfeit share flu and gastritis; "rare" caps Bob's gastritis at 0.2
    assert post.loc["Bob", "gastritis"] == pytest.approx(0.2, abs=1e-6)
