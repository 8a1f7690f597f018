"""Knowledge about individuals (Du et al. Section 6, Figure 4) and conflicts."""

import numpy as np
import pytest

from maxent_privacy import InfeasibleKnowledge, KnowledgeError, MaxEntModel
from maxent_privacy.knowledge import count_having, soft, vague


def test_person_without_facts_changes_nothing(model, release):
    plain = MaxEntModel(release).solve()
    bob = model.person("Bob", gender="male", degree="college")
    result = model.solve()
    np.testing.assert_allclose(
        result.posterior().to_numpy(), plain.posterior().to_numpy(), atol=1e-9
    )
    np.testing.assert_allclose(
        result.posterior(by="group").to_numpy(), plain.posterior(by="group").to_numpy(), atol=1e-9
    )
    # Bob is one of the three (male, college) records: his posterior is theirs
    np.testing.assert_allclose(
        result.person_posterior().loc["Bob"].to_numpy(),
        plain.posterior().loc[("male", "college")].to_numpy(),
        atol=1e-9,
    )
    groups = result.person_groups().loc["Bob"]
    assert groups[1] == pytest.approx(2 / 3) and groups[2] == pytest.approx(1 / 3)
    assert bob.qi == {"gender": "male", "degree": "college"}


def test_section_6_fact_1(model):
    """P(i1, q1, s1, 1) + P(i1, q1, s1, 2) = 0.2 * 1/N."""
    alice = model.person("Alice", gender="male", degree="college")
    form = model.terms(alice.P("Breast Cancer") == 0.2)
    assert sorted(form["bucket"]) == [1, 2]
    assert set(form["disease"]) == {"Breast Cancer"}
    assert (form["person"] == "Alice").all()
    assert form.attrs["rhs"] == pytest.approx(0.2 / 10)


def test_section_6_fact_2(model):
    """P(i1, q1, s1, 1) + P(i1, q1, s1, 2) + P(i1, q1, s4, 2) = 1/N."""
    alice = model.person("Alice", gender="male", degree="college")
    form = model.terms(alice.P(["Breast Cancer", "HIV"]) == 1)
    got = set(map(tuple, form[["disease", "bucket"]].to_numpy()))
    assert got == {("Breast Cancer", 1), ("Breast Cancer", 2), ("HIV", 2)}
    assert form.attrs["rhs"] == pytest.approx(1 / 10)


def test_section_6_fact_3(model):
    """P(i1, q1, s4, 2) + P(i4, q2, s4, 3) + P(i9, q5, s4, 3) = 2/N."""
    alice = model.person("Alice", gender="male", degree="college")  # q1
    bob = model.person("Bob", gender="female", degree="college")  # q2
    charlie = model.person("Charlie", gender="female", degree="graduate")  # q5
    form = model.terms(count_having("HIV", [alice, bob, charlie]) == 2)
    got = set(map(tuple, form[["person", "disease", "bucket"]].to_numpy()))
    assert got == {("Alice", "HIV", 2), ("Bob", "HIV", 3), ("Charlie", "HIV", 3)}
    assert form.attrs["rhs"] == pytest.approx(2 / 10)
    model.add(count_having("HIV", [alice, bob, charlie]) == 2)
    post = model.solve().person_posterior()
    assert post.loc[["Alice", "Bob", "Charlie"], "HIV"].sum() == pytest.approx(2, abs=1e-8)
    model.add(count_having("HIV", [alice, bob, charlie]) >= 2, name="at least")
    model.add(count_having("HIV", [alice]) <= 1, name="at most")
    assert model.solve().certificate.primal_residual <= 1e-8


def test_person_fact_pins_the_bucket(model):
    bob = model.person("Bob", gender="male", degree="college")
    model.add(bob.P("HIV") == 1)  # only bucket 2 holds HIV
    result = model.solve()
    assert result.person_groups().loc["Bob", 2] == pytest.approx(1, abs=1e-9)
    # the other two (male, college) records are then both in bucket 1
    post = result.posterior(by="group")
    assert post.loc[("male", "college", 2), "HIV"] == pytest.approx(1, abs=1e-9)


def test_facts_survive_a_later_person(model, release):
    model.add(model.P("Breast Cancer", gender="male") == 0)
    model.add(vague(model.P("Flu", gender="male"), 0.45, 0.05), name="flu")
    model.add(soft(model.P("HIV", gender="female") == 0.2, 1.0), name="soft hiv")
    before = model.solve()
    alice = model.person("Alice", gender="female", degree="college")
    after = model.solve()
    np.testing.assert_allclose(
        after.posterior().to_numpy(), before.posterior().to_numpy(), atol=1e-4
    )
    # (soft facts are not polished: solver accuracy)
    assert after.person_posterior().loc["Alice", "Breast Cancer"] == pytest.approx(0.5, abs=1e-5)
    assert alice.name == "Alice"


def test_stale_expression_is_explained(model):
    p = model.P("Flu", gender="male")
    model.person("Alice", gender="female", degree="college")
    with pytest.raises(KnowledgeError, match="built before model.person"):
        model.add(p == 0.3)


def test_person_errors(model):
    with pytest.raises(KnowledgeError, match="needs every QI attribute; missing degree"):
        model.person("A", gender="male")
    with pytest.raises(
        KnowledgeError, match="no record of the release has gender=male, degree=junior"
    ):
        model.person("A", gender="male", degree="junior")
    model.person("Grace", gender="female", degree="junior")
    with pytest.raises(KnowledgeError, match="'Grace' is already"):
        model.person("Grace", gender="female", degree="junior")
    with pytest.raises(
        KnowledgeError, match="2 persons have gender=female, degree=junior but the release holds 1"
    ):
        model.person("Grace2", gender="female", degree="junior")
    assert [p.name for p in model.persons] == ["Grace"]
    assert model.solve().certificate.primal_residual <= 1e-9


def test_person_by_pseudonym_column(figure1):
    from maxent_privacy import Bucketized

    release = Bucketized(
        figure1, qi=["gender", "degree"], sa="disease", group="bucket", person="name"
    )
    model = MaxEntModel(release)
    frank = model.person("Frank")  # male, high school, bucket 2
    model.add(frank.P("Pneumonia") == 1)
    result = model.solve()
    assert result.person_groups().loc["Frank"].dropna().to_dict() == {2: 1.0}
    post = result.posterior(by="group")
    assert post.loc[("male", "college", 2), "Pneumonia"] == pytest.approx(0, abs=1e-9)
    with pytest.raises(KnowledgeError, match="'Zoe' is not in column 'name'"):
        model.person("Zoe")


# ---------------------------------------------------------------- acceptance 3 and 4
def test_vague_with_large_eps_is_no_fact(model, release):
    model.add(vague(model.P("Flu", gender="male"), 0.3, 1.0), name="flu")
    np.testing.assert_allclose(model.solve().x, MaxEntModel(release).solve().x, atol=1e-9)


def test_soft_approaches_hard_as_weight_grows(release):
    hard = MaxEntModel(release)
    hard.add(hard.P("Flu", gender="male") == 0.45, name="f")
    solved = hard.solve()
    target = solved.posterior().to_numpy()
    dual = abs(solved.duals["f"])  # the L1 penalty holds the fact once weight > |dual|
    gaps = []
    for w in (0.25 * dual, 0.75 * dual, 2 * dual):
        m = MaxEntModel(release)
        m.add(soft(m.P("Flu", gender="male") == 0.45, w), name="f")
        gaps.append(np.abs(m.solve().posterior().to_numpy() - target).max())
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[2] < 1e-4


def test_conflict_names_exactly_the_two_facts(model, figure1):
    # ten consistent facts, true of the original data
    truth = figure1
    for i, (s, cond) in enumerate(
        [
            ("Flu", {"gender": "male"}),
            ("HIV", {"degree": "college"}),
            ("Pneumonia", {"degree": "high school"}),
            ("Lung Cancer", {"gender": "female"}),
            ("Flu", {"degree": "graduate"}),
            ("HIV", {"gender": "male"}),
            ("Pneumonia", {"gender": "male"}),
            ("Flu", {"degree": "college"}),
            ("HIV", {"gender": "female"}),
            ("Breast Cancer", {"degree": "junior"}),
        ]
    ):
        sel = np.ones(len(truth), dtype=bool)
        for a, v in cond.items():
            sel &= (truth[a] == v).to_numpy()
        p = float((truth.loc[sel, "disease"] == s).mean())
        model.add(model.P(s, **cond) == p, name=f"true {i}")
    model.solve()  # consistent so far
    model.add(model.P("Breast Cancer", gender="male") == 0, name="no male BC")
    model.add(model.P("Breast Cancer", gender="female") == 0, name="no female BC")
    with pytest.raises(InfeasibleKnowledge, match="2 facts cannot hold together") as e:
        model.solve()
    assert sorted(e.value.conflicts["fact"]) == ["no female BC", "no male BC"]
    assert "\n" not in str(e.value)


def test_pseudonym_then_person_by_qi(figure1):
    from maxent_privacy import Bucketized

    release = Bucketized(
        figure1, qi=["gender", "degree"], sa="disease", group="bucket", person="name"
    )
    model = MaxEntModel(release)
    model.add(model.P("Flu", gender="male") >= 0.3, name="flu")
    model.person("Ethan")  # (male, college), bucket 2
    bob = model.person("Bob", gender="male", degree="college")
    result = model.solve()
    # bucket 2 holds one (male, college) record, Ethan: Bob is in bucket 1
    assert result.person_groups().loc["Bob"].fillna(0).to_dict() == pytest.approx({1: 1, 2: 0})
    assert result.person_posterior().loc["Bob", "HIV"] == pytest.approx(0, abs=1e-9)
    assert bob.group is None
