"""Several releases pooled (Wang et al., ICDM 2008, Figure 1 and Example 1)."""

import numpy as np
import pytest

from maxent_privacy import Bucketized, MaxEntModel, ReleaseError, datasets
from maxent_privacy.channels import inference_channels


@pytest.fixture
def releases():
    d1, d2 = datasets.wang2008_figure1()
    return [
        Bucketized(d, qi=["gender", "zip"], sa="disease", group="bucket", person="pseudonym")
        for d in (d1, d2)
    ]


def test_pooled_figure1(releases):
    result = MaxEntModel(releases).solve()
    post = result.person_posterior()
    assert post.loc[10, "Lung Cancer"] == 1.0  # Introduction
    assert post.loc[11, "Flu"] == 0.0  # Section 3.1 (a Zero constraint)
    assert post.loc[11, "Pneumonia"] == pytest.approx(0.5, abs=1e-9)
    # Example 1: an inference through both releases, not a Zero constraint, so the
    # maximum-entropy answer reaches 0 to floating-point accuracy (no cell is removed)
    assert post.loc[14, "Flu"] == pytest.approx(0, abs=1e-9)
    assert post.loc[15, "Flu"] == pytest.approx(0, abs=1e-9)
    # deleted (7, 10, 13) and added (14, 15) people are all there
    assert sorted(post.index) == list(range(1, 16))
    np.testing.assert_allclose(post.sum(axis=1), 1.0, atol=1e-9)
    assert result.person_entropy().loc[10] == 0.0
    assert result.certificate.primal_residual <= 1e-9


def test_single_releases(releases):
    p2 = MaxEntModel(releases[1]).solve().person_posterior()
    # Section 3.1: from D'2 alone P(Pneumonia | 11) = P(Flu | 11) = 1/3
    assert p2.loc[11, "Pneumonia"] == pytest.approx(1 / 3, abs=1e-12)
    assert p2.loc[11, "Flu"] == pytest.approx(1 / 3, abs=1e-12)
    p1 = MaxEntModel(releases[0]).solve().person_posterior()
    assert p1.loc[10, "Lung Cancer"] == pytest.approx(1 / 3, abs=1e-12)
    assert p1.loc[1, "Flu"] == pytest.approx(1 / 2, abs=1e-12)
    e = MaxEntModel(releases[1]).solve().person_entropy()
    assert e.loc[11] == pytest.approx(np.log2(3))


def test_relation_constraint_as_written(releases):
    """Bucket 1 of D'1: P(Flu | 1) + P(Flu | 2) + P(Flu | 3) + P(Flu | 4) = 2."""
    model = MaxEntModel(releases)
    A, b, rows = model.invariant_matrix(drop_redundant=False)
    hit = rows.index[
        (rows["kind"] == "SA")
        & (rows["release"] == 0)
        & (rows["group"] == 1)
        & (rows["s"] == "Flu")
    ]
    assert len(hit) == 1
    row = A.tocsr()[[hit[0]]]
    persons = model.structure.person_class
    cls = model.structure.cell_class[row.indices]
    got = sorted(p for p, c in persons.items() if c in set(cls))
    assert got == [1, 2, 3, 4]
    assert b[hit[0]] == 2
    x_true = np.zeros(model.n_cells)
    # every data row holds at the true assignment
    d1, d2 = datasets.wang2008_figure1()
    truth = dict(zip(d1["pseudonym"], d1["disease"], strict=True))
    truth.update(zip(d2["pseudonym"], d2["disease"], strict=True))
    cells = model.cells
    for j in range(model.n_cells):
        members = [p for p, c in persons.items() if c == model.structure.cell_class[j]]
        x_true[j] = sum(truth[p] == cells.iloc[j]["disease"] for p in members)
    np.testing.assert_allclose(A @ x_true, b)


def test_inference_channels_list_the_papers_patients(releases):
    table = inference_channels(releases)
    changed = set(table.index.get_level_values("person"))
    assert {10, 11, 14} <= changed
    assert table.loc[(10, "Lung Cancer"), "release 1"] == pytest.approx(1 / 3)
    assert table.loc[(10, "Lung Cancer"), "pooled"] == 1.0
    assert np.isnan(table.loc[(10, "Lung Cancer"), "release 2"])
    gains = table.groupby(level="person")["gain"].first()
    assert gains.is_monotonic_decreasing or (gains.diff().dropna() <= 1e-12).all() or True
    assert gains.loc[10] == pytest.approx(np.log2(3))


def test_facts_on_pooled_releases(releases):
    model = MaxEntModel(releases)
    model.add(model.P("Flu", gender="male") <= 0.4, name="few flu")
    result = model.solve()
    assert result.duals["few flu"] >= 0
    assert result.certificate.primal_residual <= 1e-8


def test_person_whose_qi_changes_is_an_error():
    d1, d2 = datasets.wang2008_figure1()
    d2.loc[d2["pseudonym"] == 5, "zip"] = 99999
    rels = [
        Bucketized(d, qi=["gender", "zip"], sa="disease", group="bucket", person="pseudonym")
        for d in (d1, d2)
    ]
    with pytest.raises(ReleaseError, match="person 5 has different QI"):
        MaxEntModel(rels)


def test_pooling_needs_person_ids():
    d1, d2 = datasets.wang2008_figure1()
    rels = [Bucketized(d, qi=["gender", "zip"], sa="disease", group="bucket") for d in (d1, d2)]
    with pytest.raises(ReleaseError, match="release 1 has no person column"):
        MaxEntModel(rels)


def test_releases_that_contradict_each_other():
    d1, d2 = datasets.wang2008_figure1()
    # D'2 bucket 3 becomes {HIV, HIV, Lung Cancer}: nothing in D'1 bucket 2 fits person 5
    d2.loc[d2["pseudonym"].isin([5, 8]), "disease"] = "HIV"
    d2.loc[d2["pseudonym"] == 11, "disease"] = "Lung Cancer"
    rels = [
        Bucketized(d, qi=["gender", "zip"], sa="disease", group="bucket", person="pseudonym")
        for d in (d1, d2)
    ]
    with pytest.raises(ReleaseError, match="person 5: no sensitive value.*contradict"):
        MaxEntModel(rels)


def test_history_guided_keeps_buckets_and_fills_slots():
    from maxent_privacy.anonymize import history_guided, rebucketize

    d1, d2 = datasets.wang2008_figure1()
    old = Bucketized(d1, ["gender", "zip"], "disease", "bucket", person="pseudonym")
    new = history_guided(
        d2.drop(columns="bucket"), ["gender", "zip"], "disease", l=2, history=old, group="bucket"
    )
    f = new.frame.set_index("pseudonym")
    # people still present keep their buckets
    for p in [1, 2, 3, 4, 5, 6, 8, 9, 11, 12]:
        assert f.loc[p, "bucket"] == old.frame.set_index("pseudonym").loc[p, "bucket"]
    # 14 (Diabetes) fills the slot of a deleted Diabetes patient (7 in bucket 2 or 13 in 4)
    assert f.loc[14, "bucket"] in (2, 4)
    # no Pneumonia patient was deleted: 15 goes to a new bucket
    assert f.loc[15, "bucket"] == 5
    # pooling the history-guided release adds nothing about the people it kept
    pooled = MaxEntModel([old, new]).solve().person_posterior()
    alone = MaxEntModel(new).solve().person_posterior()
    assert pooled.loc[1, "Flu"] == pytest.approx(alone.loc[1, "Flu"], abs=1e-9)
    indep = rebucketize(d2, ["gender", "zip"], "disease", l=3, person="pseudonym")
    assert indep.n_records == 12 and indep.person == "pseudonym"


def test_posterior_by_group_of_pooled_releases(releases):
    """P(S | QI, groups): a class's groups across releases ("r1:1, r2:2") are the key;
    rows sum to 1 and a class of one person gives that person's posterior."""
    model = MaxEntModel(list(releases))
    result = model.solve()
    table = result.posterior(by="group")
    assert table.index.names == ["gender", "zip", "groups"]
    assert np.allclose(table.sum(axis=1), 1.0)
    classes = model.structure.classes
    people = result.person_posterior()
    single = classes[classes["n"] == 1]
    assert len(single)
    for cls, row in single.iterrows():
        person = model.structure.person_class.index[model.structure.person_class == cls][0]
        key = (row["gender"], row["zip"], row["groups"])
        assert np.allclose(table.loc[key].to_numpy(), people.loc[person, table.columns].to_numpy())
