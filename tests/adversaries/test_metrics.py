import numpy as np
import pytest

from maxent_privacy import MaxEntModel, metrics


def test_estimation_accuracy_is_weighted_kl(model, figure1):
    result = model.solve()
    est = result.posterior()
    truth = metrics.true_posterior(result, figure1)
    w = figure1.groupby(["gender", "degree"]).size() / len(figure1)
    want = 0.0
    for q in truth.index:
        for s in truth.columns:
            p = truth.loc[q, s]
            if p > 0:
                want += w[q] * p * np.log(p / est.loc[q, s])
    assert metrics.estimation_accuracy(result, figure1) == pytest.approx(want, rel=1e-12)


def test_knowledge_improves_accuracy(release, figure1):
    plain = MaxEntModel(release)
    informed = MaxEntModel(release)
    informed.add(informed.P("Breast Cancer", gender="male") == 0)
    a0 = metrics.estimation_accuracy(plain.solve(), figure1)
    a1 = metrics.estimation_accuracy(informed.solve(), figure1)
    assert a1 < a0


def test_max_posterior_and_breaches(model):
    model.add(model.P("Breast Cancer", gender="male") == 0)
    result = model.solve()
    top = metrics.max_posterior(result, by="group")
    assert top.iloc[0]["posterior"] == 1.0
    assert top.iloc[0]["value"] == "Breast Cancer"
    table = metrics.breaches(result, 0.99, by="group")
    assert len(table) == 2
    assert set(table["degree"]) == {"college", "junior"}
    assert (table["records"] == 1).all()
    with pytest.raises(ValueError, match="threshold"):
        metrics.breaches(result, 1.5)


def test_worst_case_breaches_per_person_are_about_the_individual():
    # Figure 1 with person ids and men known not to have breast cancer: bucket 1's three
    # men (Allen, Brian, David) share {Flu, Flu, Pneumonia}. At most one of Allen and Brian
    # (one record class) has Pneumonia, so their class's share stays at or below 1/2; but
    # each of them may be the one: the individual's upper bound is 1
    from maxent_privacy import Bucketized, datasets

    release = Bucketized(
        datasets.du2008_figure1(),
        qi=["gender", "degree"],
        sa="disease",
        group="bucket",
        person="name",
    )
    model = MaxEntModel(release)
    model.add(model.P("Breast Cancer", gender="male") == 0)
    result = model.solve()
    person = metrics.breaches(result, 0.99, by="person", worst_case=True)
    share = metrics.breaches(result, 0.99, by="class", worst_case=True)
    allen = person[person["person"] == "Allen"].set_index("disease")
    assert set(allen.index) == {"Flu", "Pneumonia"}
    assert (allen["upper"] == 1.0).all() and (allen["lower"] == 0.0).all()
    allen_share = share[share["person"] == "Allen"].set_index("disease")
    assert set(allen_share.index) == {"Flu"}  # Pneumonia: share at most 1/2
    assert allen_share.loc["Flu", "lower"] == pytest.approx(0.5)
    # one person can hold all their class can: never fewer breaches per person
    assert len(person) > len(share)
    exact = metrics.breaches(result, 0.99, by="person", worst_case=True, exact=True)
    assert exact["exact"].all() and (exact["upper"] == 1.0).all()
    assert metrics.person_risk(result).loc["Allen", "lower"] == 0.0
