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
