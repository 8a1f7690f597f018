"""The model's structure (maxent_privacy.structure): classes, cells, data rows, persons
singled out, facts carried over, and all-or-nothing changes of a model."""

import numpy as np
import pandas as pd
import pytest
from test_pooled_bruteforce import releases_of

from maxent_privacy import Bucketized, KnowledgeError, MaxEntModel, ReleaseError, datasets
from maxent_privacy.structure import build_single, remap_matrix

QI = ["gender", "degree"]


@pytest.fixture
def frame():
    return datasets.du2008_figure1()


@pytest.fixture
def fig1(frame):
    return Bucketized(frame, qi=QI, sa="disease", group="bucket")


# ------------------------------------------------------------------ Figure 1
def test_structure_of_figure1(fig1, frame):
    s = build_single(fig1)
    assert s.kind == "single"
    # a class per (QI value, bucket): 3 per bucket; a cell per class and value of its
    # bucket: 3 x 3 per bucket
    pairs = frame.groupby(QI + ["bucket"]).size()
    values = frame.groupby("bucket")["disease"].nunique()
    assert len(s.classes) == len(pairs) == 9
    want_cells = sum(values[b] for *_, b in pairs.index)
    assert s.n_cells == want_cells == 27
    assert s.n_records == 10
    assert s.class_n.tolist() == s.classes["n"].tolist()
    assert sorted(s.class_n.tolist()) == sorted(pairs.tolist())
    assert s.class_n.sum() == 10 and s.sa_n.sum() == 10
    assert not s.class_member.any() and s.shared_n.size == 0
    assert (s.placement_of == -1).all() and s.value_cell.all()
    assert s.cell_n.tolist() == s.class_n[s.cell_class].tolist()
    # every cell's SA row is its own (bucket, value)
    gv = s.group_values
    assert (gv.loc[s.cell_sa, "disease"].to_numpy() == s.cells["disease"].to_numpy()).all()
    assert (gv.loc[s.cell_sa, "bucket"].to_numpy() == s.cells["bucket"].to_numpy()).all()
    # data rows: 9 class rows + 9 SA rows; g + h - 1 = 5 per bucket without the implied
    A, b, rows = s.data_rows()
    assert A.shape == (18, 27) and rows["kind"].value_counts().to_dict() == {"QI": 9, "SA": 9}
    A2, b2, rows2 = s.data_rows(drop_redundant=True)
    assert A2.shape == (15, 27)
    assert rows2["kind"].value_counts().to_dict() == {"QI": 9, "SA": 6}
    assert np.linalg.matrix_rank(A.toarray()) == np.linalg.matrix_rank(A2.toarray()) == 15
    # the original table satisfies them (Theorem 1)
    x = MaxEntModel(fig1).true_assignment(frame)
    np.testing.assert_array_equal(A @ x, b)
    np.testing.assert_array_equal(A2 @ x, b2)


def test_cell_keys_name_cells(fig1):
    s = build_single(fig1)
    keys = s.cell_keys()
    assert len(keys) == len(set(keys)) == 27
    assert keys[0] == ("", "fixed", "female", "college", 1, "Breast Cancer")


# ------------------------------------------------------------------ persons
def test_person_with_unknown_bucket(fig1, frame):
    """Du et al. Section 6 (Figure 4): Bob is one of the 3 (male, college) records, 2 in
    bucket 1 and 1 in bucket 2. Bob and the other two become classes with cells in both
    buckets, tied per bucket by a shared QI-invariant."""
    m = MaxEntModel(fig1)
    bob = m.person("Bob", gender="male", degree="college")
    s = build_single(fig1, [bob])
    assert s.cell_keys() == m.structure.cell_keys()
    c = s.classes
    assert len(c) == 9  # (male, college, 1) and (male, college, 2) became Bob and the rest
    members = c[s.class_member]
    assert members["person"].iloc[0] == "Bob" and pd.isna(members["person"].iloc[1])
    assert members["n"].tolist() == [1, 2]
    assert members["bucket"].isna().all()
    assert s.n_cells == 27 - 6 + 12
    for k in np.flatnonzero(s.class_member):
        cells = s.cells[s.cell_class == k]
        assert sorted(set(cells["bucket"])) == [1, 2]
        assert len(cells) == 6
        assert (s.cell_shared[s.cell_class == k] >= 0).all()
    # shared rows: (male, college) has 2 records in bucket 1 and 1 in bucket 2
    assert s.shared_table[["bucket", "n"]].values.tolist() == [[1, 2], [2, 1]]
    assert s.shared_n.tolist() == [2.0, 1.0]
    A, b, rows = s.data_rows()
    assert rows["kind"].value_counts().to_dict() == {"QI": 9, "SA": 9, "QI (shared)": 2}
    # the original table, with Bob as Allen (bucket 1), satisfies every row
    x = np.zeros(s.n_cells)
    for rec in frame.itertuples():
        if (rec.gender, rec.degree) == ("male", "college"):
            who = "Bob" if rec.name == "Allen" else None
        else:
            who = None
        hit = (
            (s.cells["gender"] == rec.gender)
            & (s.cells["degree"] == rec.degree)
            & (s.cells["bucket"] == rec.bucket)
            & (s.cells["disease"] == rec.disease)
            & (s.cells["person"].isna() if who is None else s.cells["person"] == who)
        )
        x[np.flatnonzero(hit)[0]] += 1
    np.testing.assert_array_equal(A @ x, b)


def test_person_with_a_known_bucket_is_a_plain_class(frame):
    release = Bucketized(frame, qi=QI, sa="disease", group="bucket", person="name")
    m = MaxEntModel(release)
    m.person("Frank")  # male, high school, bucket 2 (the other one is in bucket 1)
    s = m.structure
    assert not s.class_member.any() and s.shared_n.size == 0
    frank = s.classes[s.classes["person"] == "Frank"]
    assert frank[["bucket", "n"]].values.tolist() == [[2, 1]]
    rest = s.classes[(s.classes["degree"] == "high school") & s.classes["person"].isna()]
    assert rest[["bucket", "n"]].values.tolist() == [[1, 1]]
    assert s.n_cells == 27


def test_remap_matrix_carries_a_fact_over(fig1):
    m = MaxEntModel(fig1)
    m.add(m.P("Flu", gender="male") == 0.4, name="flu")
    before = m.solve()
    old = m.structure
    m.person("Bob", gender="male", degree="college")
    new = m.structure
    T = remap_matrix(old, new, set())
    assert T.shape == (27, 33)
    # every new cell refines exactly one old cell
    assert (np.asarray(T.sum(axis=0)).ravel() == 1).all()
    assert set(T.data.tolist()) == {1.0}
    after = m.solve()
    assert after.certificate.primal_residual <= 1e-9
    assert m.facts[0].A.shape == (1, 33)
    np.testing.assert_allclose(m.facts[0].A @ after.x, [0.4], atol=1e-12)
    # summed back over the old cells, the answer is the same: the person adds nothing
    np.testing.assert_allclose(T @ after.x, before.x, atol=1e-8)
    np.testing.assert_allclose(
        after.posterior().to_numpy(), before.posterior().to_numpy(), atol=1e-8
    )
    np.testing.assert_allclose(
        after.person_posterior().loc["Bob"].to_numpy(),
        before.posterior().loc[("male", "college")].to_numpy(),
        atol=1e-8,
    )


def test_remap_matrix_for_a_second_person(frame):
    release = Bucketized(frame, qi=QI, sa="disease", group="bucket", person="name")
    m = MaxEntModel(release)
    m.person("Frank")
    m.add(m.P("Pneumonia", gender="male") == 0.25, name="pn")
    before = m.solve()
    old = m.structure
    m.person("David")  # the other (male, high school): bucket 1
    T = remap_matrix(old, m.structure, {"Frank"})
    assert (np.asarray(T.sum(axis=0)).ravel() == 1).all()
    after = m.solve()
    np.testing.assert_allclose(T @ after.x, before.x, atol=1e-8)
    post = after.person_posterior()
    np.testing.assert_allclose(post.loc["Frank"], before.person_posterior().loc["Frank"], atol=1e-8)


# ------------------------------------------------------------------ pooled and generalized
@pytest.fixture
def wang():
    d1, d2 = datasets.wang2008_figure1()
    kw = dict(qi=["gender", "zip"], sa="disease", group="bucket", person="pseudonym")
    return MaxEntModel([Bucketized(d1, **kw), Bucketized(d2, **kw)])


def test_person_of_pooled_releases(wang):
    """Katey (11) is in bucket 4 of D1 {Pneumonia, HIV, Diabetes} and bucket 3 of D2
    {Flu, HIV, Pneumonia}: 1/2 each for HIV and Pneumonia. Knowing she has Pneumonia
    decides, through both releases, 5 (Flu), 8 (HIV), 12 (HIV), 9 (Flu) and 6 (Pneumonia)."""
    before = wang.solve().person_posterior()
    assert before.loc[11, "Pneumonia"] == pytest.approx(0.5, abs=1e-9)
    katey = wang.person(11)
    assert katey.qi == {"gender": "female", "zip": 13359}
    wang.add(katey.P("Pneumonia") == 1, name="katey")
    result = wang.solve()
    assert result.status == "optimal"
    assert result.certificate.primal_residual <= 1e-9 and abs(result.certificate.gap) <= 1e-9
    post = result.person_posterior()
    assert post.loc[11, "Pneumonia"] == pytest.approx(1.0, abs=1e-9)
    for pid, value in ((5, "Flu"), (8, "HIV"), (12, "HIV"), (9, "Flu"), (6, "Pneumonia")):
        assert post.loc[pid, value] == pytest.approx(1.0, abs=1e-9)
    # people the fact does not reach keep their posterior
    for pid in (1, 2, 3, 4, 7, 10, 13, 14, 15):
        np.testing.assert_allclose(post.loc[pid], before.loc[pid], atol=1e-9)
    assert result.duals.index.tolist() == ["katey"]


def test_person_of_pooled_releases_errors(wang):
    with pytest.raises(KnowledgeError, match="person 'Zoe' is not a person id of the pooled"):
        wang.person("Zoe")
    with pytest.raises(KnowledgeError, match="person '11' has QI .* in the releases, not"):
        wang.person(11, gender="male", zip=13359)
    with pytest.raises(KnowledgeError, match="needs every QI attribute; missing zip"):
        wang.person(11, gender="female")
    assert wang.persons == [] and wang.n_cells == MaxEntModel(wang.releases).n_cells


def test_person_of_a_generalized_release_with_population():
    """Byun et al. Figure 4 with its population: group 2 {Alzheimer, Hepatitis} holds Bob
    and Hank; knowing Bob has Hepatitis gives Hank Alzheimer."""
    byun = datasets.byun2008_tables()
    population = byun["populations"][1].set_index("name")
    m = MaxEntModel(byun["figure4"], populations=population)
    assert m.pooled
    bob = m.person("Bob")
    assert bob.qi == {"age": 52, "gender": "Male"}
    m.add(bob.P("Hepatitis") == 1)
    result = m.solve()
    post = result.person_posterior()
    assert post.loc["Bob", "Hepatitis"] == pytest.approx(1.0, abs=1e-9)
    assert post.loc["Hank", "Alzheimer"] == pytest.approx(1.0, abs=1e-9)
    assert post.loc["Tom"].to_dict() == pytest.approx(
        {
            "Alzheimer": 0,
            "Asthma": 1 / 3,
            "Cancer": 1 / 3,
            "Diabetes": 0,
            "Flu": 1 / 3,
            "Hepatitis": 0,
        },  # fmt: skip
        abs=1e-9,
    )
    assert result.certificate.primal_residual <= 1e-9
    with pytest.raises(KnowledgeError, match="'Nobody' is not a person id"):
        m.person("Nobody")
    with pytest.raises(KnowledgeError, match="sensitive value 'Cold' is not in column"):
        bob.P("Cold")


def test_person_placed_in_overlapping_groups():
    """A generalized release whose groups overlap: p1 (21) and p2 (22) may each sit in
    group 1 [20-22] {a, a} or group 2 [21-23] {b, c}. Knowing p1 has a puts p2 in group 2.
    """
    frame = pd.DataFrame(
        {
            "pid": ["p0", "p1", "p2", "p3"],
            "age": [20, 21, 22, 23],
            "sex": ["F", "F", "M", "M"],
            "s": ["a", "b", "a", "c"],
            "b": [1, 1, 2, 2],
            "g": [1, 2, 1, 2],
        }
    )
    _, general, population = releases_of(frame)
    m = MaxEntModel(general, populations=population)
    assert (m.structure.placement_of >= 0).any()
    before = m.solve().person_posterior()
    assert before.loc["p1"].tolist() == pytest.approx([0.5, 0.25, 0.25], abs=1e-4)
    p1 = m.person("p1")
    m.add(p1.P("a") == 1, name="p1 has a")
    result = m.solve()
    assert result.solver_stats["solver"] == "MAXENT"  # placements on joint cells
    post = result.person_posterior()
    assert post.loc["p1"].tolist() == pytest.approx([1.0, 0.0, 0.0], abs=1e-6)
    assert post.loc["p2"].tolist() == pytest.approx([0.0, 0.5, 0.5], abs=1e-4)
    assert post.loc["p0", "a"] == pytest.approx(1.0, abs=1e-6)
    assert result.certificate.primal_residual <= 1e-6


# ------------------------------------------------------------------ all or nothing
def test_transaction_rolls_back_facts_and_persons(fig1):
    m = MaxEntModel(fig1)
    m.add(m.P("Flu", gender="male") == 0.4, name="kept")
    before = m.solve()
    structure, x, facts = m.structure, m.x, list(m.facts)
    with pytest.raises(RuntimeError, match="changed my mind"):
        with m.transaction():
            bob = m.person("Bob", gender="male", degree="college")
            m.add(bob.P("HIV") == 1, name="bob")
            m.add(m.P("HIV", gender="female") <= 0.2, name="hiv")
            assert m.n_cells == 33 and len(m.facts) == 3
            raise RuntimeError("changed my mind")
    assert m.structure is structure and m.x is x
    assert [f.name for f in m.facts] == ["kept"] and m.facts[0] is facts[0]
    assert m.persons == []
    # the rolled-back model solves as before, and takes the same person again
    np.testing.assert_array_equal(m.solve().x, before.x)
    m.person("Bob", gender="male", degree="college")
    m.add(m.P("HIV", gender="female") <= 0.2, name="hiv")
    assert m.solve().certificate.primal_residual <= 1e-9


def test_transaction_rolls_back_a_failed_person(frame):
    release = Bucketized(frame, qi=QI, sa="disease", group="bucket", person="name")
    m = MaxEntModel(release)
    with pytest.raises(KnowledgeError, match="'Zoe' is not in column 'name'"):
        with m.transaction():
            m.person("Grace")
            m.person("Zoe")
    assert m.persons == [] and m.n_cells == 27


@pytest.mark.parametrize("bad", ["range", "bool"])
def test_add_a_list_is_all_or_nothing(fig1, bad):
    m = MaxEntModel(fig1)
    m.add(m.P("Flu", gender="male") == 0.4, name="first")
    good = m.P("HIV", gender="female") <= 0.3
    item = m.P("Flu") == 2.0 if bad == "range" else True
    with pytest.raises(KnowledgeError):
        m.add([good, item], name="batch")
    assert [f.name for f in m.facts] == ["first"]
    m.add([good], name="batch")
    assert [f.name for f in m.facts] == ["first", "batch[0]"]


def test_add_a_list_with_a_duplicate_name_adds_nothing(fig1):
    m = MaxEntModel(fig1)
    m.add(m.P("Flu", gender="male") == 0.4, name="v[1]")
    with pytest.raises(KnowledgeError, match="'v\\[1\\]' is already in the model"):
        m.add([m.P("HIV", gender="female") <= 0.3, m.P("Flu") <= 0.9], name="v")
    assert [f.name for f in m.facts] == ["v[1]"]
    m.add([m.P("HIV", gender="female") <= 0.3, m.P("Flu") <= 0.9], name="w")
    assert [f.name for f in m.facts] == ["v[1]", "w[0]", "w[1]"]


# ------------------------------------------------------------------ pooled, vectorized
def _random_releases(seed, pid=int, group=int, values=("flu", "hiv", "cold", "acne")):
    """4 bucketized releases of random subsets of 240 people in random groups of ~3."""
    rng = np.random.default_rng(seed)
    n = 240
    frame = pd.DataFrame(
        {
            "pid": [pid(i) for i in range(n)],
            "zip": rng.choice(["z1", "z2", "z3"], n),
            "age": rng.integers(20, 23, n),
            "s": rng.choice(np.array(values), n),
        }
    )
    rels = []
    for _ in range(4):
        sub = frame[rng.random(n) < 0.75]
        g = rng.integers(0, len(sub) // 3, len(sub))
        sub = sub.assign(g=[group(x) for x in g])
        rels.append(Bucketized(sub, qi=["zip", "age"], sa="s", group="g", person="pid"))
    return rels


def _same_structure(a, b) -> None:
    for name in ("records", "classes", "cells", "group_values", "shared_table"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
    for name in (
        "cell_class",
        "cell_n",
        "class_n",
        "sa_n",
        "sa_bucket",
        "sa_release",
        "placement_of",
    ):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert (a.sa_matrix != b.sa_matrix).nnz == 0 and a.sa_matrix.shape == b.sa_matrix.shape
    pd.testing.assert_series_equal(a.person_class, b.person_class, check_exact=True)
    assert a.cell_keys() == b.cell_keys()


@pytest.mark.parametrize(
    "seed, kw",
    [
        (0, {}),
        (1, {"pid": lambda i: f"p{i}", "group": lambda g: f"g{g}"}),
        (2, {"group": float, "values": (2, 10, 33)}),  # str order of values is not theirs
        (4, {"group": lambda g: g - 40}),  # negative group labels
        (5, {"pid": lambda i: f"p{i}", "group": lambda g: f"é,{g}\t"}),  # text printed as is
    ],
)
def test_pooled_bucketized_arrays_match_the_general_construction(monkeypatch, seed, kw):
    """Bucketized releases with person ids are built with array operations; classes, cells
    (in order), rows and keys are those of the construction person by person, with and
    without persons singled out."""
    from maxent_privacy.releases import pooled, pooled_arrays

    rels = _random_releases(seed, **kw)
    built = []
    arrays = pooled_arrays.build_bucketized
    # patched where build_pooled looks it up
    monkeypatch.setattr(
        pooled, "build_bucketized", lambda *args: built.append(arrays(*args)) or built[-1]
    )
    fast = MaxEntModel(rels)
    assert built[-1] is not None  # the array construction ran
    person = fast.structure.records["pid"].iloc[5]
    with monkeypatch.context() as m:
        m.setattr(pooled, "build_bucketized", lambda *args: None)
        slow = MaxEntModel(rels)
        _same_structure(fast.structure, slow.structure)
        slow.person(person)
    fast.person(person)
    assert built[-1] is not None
    _same_structure(fast.structure, slow.structure)
    assert fast.n_cells > len(fast.classes) > 200


def test_pooled_bucketized_text_qi_equal_but_not_the_same_objects(monkeypatch):
    """Text QI values are coded from each person's first row and the other rows compared
    with it: equal text in other string objects is the same value, and a QI column with a
    number among its text goes to the construction for mixed values; both give the
    structure of the general construction."""
    from maxent_privacy.releases import pooled

    rels = _random_releases(6)
    copied = [
        Bucketized(r.frame.assign(zip=[("" + z + ".")[:-1] for z in r.frame["zip"]]), **_kw(r))
        for r in rels
    ]
    assert copied[1].frame["zip"].iloc[0] is not rels[1].frame["zip"].iloc[0]
    who = rels[2].frame["pid"].iloc[0]  # their zip is a number, in every release
    mixed = [
        Bucketized(r.frame.assign(zip=r.frame["zip"].where(r.frame["pid"] != who, 7)), **_kw(r))
        for r in rels
    ]
    assert mixed[2].frame["zip"].iloc[0] == 7
    for case in (copied, mixed):
        fast = MaxEntModel(case).structure
        with monkeypatch.context() as m:
            m.setattr(pooled, "build_bucketized", lambda *args: None)
            _same_structure(fast, MaxEntModel(case).structure)


def test_pooled_group_texts_laid_out_as_bytes_match_joined_texts():
    """The groups column (``r1:3, r2:a``) made from rows of bytes is the text joined class
    by class, for integer, float and text labels (commas, accents, a line break)."""
    from maxent_privacy.releases.pooled_arrays import (
        _sorted_codes,
        _text_joined,
        _text_of_classes,
    )

    rng = np.random.default_rng(7)
    labels = [
        np.array([-12, 0, 7, 1234567]),
        np.array([3, 2**40], dtype=np.uint64),
        np.array([-3.0, 1.0, 2.5]),
        np.array(["", "a,b", "é", "日本"], dtype=object),
        np.array(["x\ny", "z"], dtype=object),  # a line break: joined class by class
    ]
    for _ in range(30):
        groups = [labels[k] for k in rng.choice(len(labels), 3)]
        g_cls = np.stack([rng.integers(-1, len(g), 40) for g in groups], axis=1)
        g_cls[:, 0] = np.maximum(g_cls[:, 0], 0)  # every class is in some release
        fast, slow = _text_of_classes(g_cls, groups), _text_joined(g_cls, groups)
        assert fast.dtype == object and fast.tolist() == slow.tolist()
    for a in (np.array([5, -2, 5, 9]), np.array([2**62, 1]), np.array([3, 1], dtype=np.uint8)):
        for got, want in zip(_sorted_codes(a), pd.factorize(a, sort=True), strict=True):
            assert got.dtype == want.dtype and got.tolist() == want.tolist()


def test_pooled_bucketized_mixed_values_take_the_general_construction():
    """An object column of numbers (pandas infers its dtype case by case) is left to the
    general construction, which gives the published counts their inferred dtype."""
    rels = _random_releases(3, values=(2, 10, 33))
    mixed = [Bucketized(r.frame.assign(s=r.frame["s"].astype(object)), **_kw(r)) for r in rels]
    a, b = MaxEntModel(rels).structure, MaxEntModel(mixed).structure
    assert a.group_values["s"].dtype == b.group_values["s"].dtype == np.int64
    _same_structure(a, b)


def _kw(rel) -> dict:
    return dict(qi=rel.qi, sa=rel.sa, group=rel.group, person=rel.person)


def test_pooled_bucketized_errors_name_the_person():
    d = pd.DataFrame({"pid": [1, 2], "q": ["a", "b"], "s": ["x", "y"], "g": [1, 1]})
    kw = dict(qi=["q"], sa="s", group="g", person="pid")
    other = d.assign(q=["a", "c"])
    with pytest.raises(ReleaseError, match="person 2 has different QI in different releases"):
        MaxEntModel([Bucketized(d, **kw), Bucketized(other, **kw)])
    split = d.assign(g=[1, 2])
    swapped = d.assign(s=["y", "x"], g=[1, 2])
    with pytest.raises(ReleaseError, match="person 1: no sensitive value is in all"):
        MaxEntModel([Bucketized(split, **kw), Bucketized(swapped, **kw)])
