"""Counterfeit records in the adversaries, metrics and the report: rows about people only."""

from __future__ import annotations

import html
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel, ReleaseError
from maxent_privacy.adversaries.compare import compare_adversaries
from maxent_privacy.adversaries.definetti import definetti
from maxent_privacy.adversaries.prior import Prior
from maxent_privacy.adversaries.robustness import query_error, robustness_table
from maxent_privacy.adversaries.worlds import compare_posteriors, exact_posterior


def wong_with_counterfeit():
    """Wong et al.'s four patients, group L1 with one counterfeit (Flu)."""
    frame = pd.DataFrame(
        [
            ("Alan", "Male", 41, "Lung Cancer", "L1", False),
            ("Betty", "Female", 42, "Hypertension", "L1", False),
            (None, None, None, "Flu", "L1", True),
            ("Catherine", "Female", 63, "Flu", "L2", False),
            ("Diana", "Female", 64, "HIV", "L2", False),
        ],
        columns=["Name", "Gender", "Age", "Disease", "GID", "fake"],
    ).set_index("Name")
    table = pd.DataFrame(
        {"Lung Cancer": [Fraction(1, 10), Fraction(3, 1000)],
         "Not Lung Cancer": [Fraction(9, 10), Fraction(997, 1000)]},
        index=pd.Index(["Male", "Female"], name="Gender"),
    )  # fmt: skip
    prior = Prior(table, sa="Disease", other="Not Lung Cancer")
    release = Bucketized(frame, ["Gender", "Age"], "Disease", "GID", counterfeits="fake")
    return release, prior


def test_exact_posterior_with_counterfeits_by_hand():
    """Alan (0.1 lung cancer), Betty (0.003) and a counterfeit (1 for every value) share
    {Lung Cancer, Hypertension, Flu}: the worlds giving Alan lung cancer weigh 0.1 * 0.997
    * 1 each (two: Betty Hypertension or Flu), those giving it to Betty 0.9 * 0.003, those
    giving it to the counterfeit 0.9 * 0.997."""
    release, prior = wong_with_counterfeit()
    people = release.people
    l1 = people[people["GID"] == "L1"]
    post = exact_posterior(l1, prior, counterfeits=["Flu"], fractions=True)
    a = Fraction(1, 10) * Fraction(997, 1000)
    b = Fraction(9, 10) * Fraction(3, 1000)
    c = Fraction(9, 10) * Fraction(997, 1000)
    assert post.loc["Alan", "Lung Cancer"] == a / (a + b + c)
    assert list(post.index) == ["Alan", "Betty"]
    assert all(sum(post.loc[name]) == 1 for name in post.index)
    floats = exact_posterior(
        l1, prior, counterfeits=["Flu"], method="monte carlo", seed=1, fractions=False
    )
    assert floats.loc["Alan", "Lung Cancer"] == pytest.approx(float(a / (a + b + c)), abs=0.02)
    with pytest.raises(ReleaseError, match="counterfeits must be a list"):
        exact_posterior(l1, prior, counterfeits="Flu")


def test_compare_posteriors_rows_are_people():
    release, prior = wong_with_counterfeit()
    table = compare_posteriors(release, prior, weight=1.0)
    assert set(table.index) == {"Alan", "Betty", "Catherine", "Diana"}
    sums = table.groupby(level=0)["possible_worlds"].sum()
    assert np.allclose(sums, 1.0)
    assert table["maxent"].notna().all()


def test_robustness_table_says_it_does_not_handle_counterfeits():
    release, prior = wong_with_counterfeit()
    with pytest.raises(ReleaseError, match="column 'fake'"):
        robustness_table(release, prior, 2)


def test_query_error_counts_people_and_published_values():
    release, _ = wong_with_counterfeit()
    plain = release.people.assign(fake=False)
    same = Bucketized(plain, ["Gender", "Age"], "Disease", "GID", counterfeits="fake")
    none = Bucketized(release.people, ["Gender", "Age"], "Disease", "GID")
    kw = {"queries": 300, "qd": 1, "selectivity": 0.5, "seed": 3}
    assert query_error(same, **kw) == query_error(none, **kw)  # no counterfeit: as before
    assert query_error(release, **kw) > 0


def counterfeit_release():
    rows = pd.DataFrame(
        {"sex": list("FFM") + [None] + list("FM") + list("FMM") + [None],
         "g": [1, 1, 1, 1, 2, 2, 3, 3, 3, 3],
         "s": ["flu", "flu", "hiv", "hiv", "flu", "hiv", "flu", "hiv", "hiv", "flu"],
         "fake": [0, 0, 0, 1, 0, 0, 0, 0, 0, 1]}
    )  # fmt: skip
    return rows, Bucketized(rows, qi=["sex"], sa="s", group="g", counterfeits="fake")


def test_compare_adversaries_and_definetti_count_people():
    rows, release = counterfeit_release()
    model = MaxEntModel(release)
    learned = definetti(model)
    assert set(learned.posterior().index.get_level_values(0)) == {"F", "M"}
    assert np.allclose(learned.posterior().sum(axis=1), 1.0)
    scale = compare_adversaries(model, truth=rows, by="class")
    assert scale.people == 8  # ten records, two of them counterfeit
    assert len(scale.classes) == len(scale.table) // 2 and not scale.classes["phantom"].any()
    assert 0 <= scale.summary.loc["maxent", "accuracy"] <= 1
    by_person = compare_adversaries(model, truth=rows, by="person")
    assert len(by_person.table.index.get_level_values(0).unique()) == 8


def test_metrics_and_identity_risk_are_about_people():
    from maxent_privacy import metrics
    from maxent_privacy.report.identity import identity_risk

    rows, release = counterfeit_release()
    result = MaxEntModel(release).solve()
    worst = metrics.max_posterior(result, by="group")
    assert worst["records"].sum() == 8
    breaches = metrics.breaches(result, 0.01, by="person")
    assert set(breaches["person"]) == set(release.people.index)
    keys = pd.DataFrame({"sex": ["F", "M"]})
    assert identity_risk(result.model, keys).tolist() == [pytest.approx(1 / 4)] * 2


def test_report_says_how_many_records_are_counterfeit(tmp_path):
    _, release = counterfeit_release()
    result = MaxEntModel(release).solve()
    path = tmp_path / "report.html"
    result.report(path)
    text = html.unescape(path.read_text(encoding="utf-8"))
    assert "2 of its records are counterfeit" in text
    assert "counterfeits='fake')\n" in text  # the Python that reproduces the report
    table = result.risk_table()
    assert table["records"].sum() == 8


def test_a_prior_speaks_of_people_only():
    """``solve(prior=...)``: a belief per QI value (or per class, from a callable of the
    real classes' QI) leaves the counterfeit records flat."""
    _, release = counterfeit_release()
    model = MaxEntModel(release)
    flat = model.solve().posterior()
    same = model.solve(prior=pd.DataFrame(1.0, index=flat.index, columns=flat.columns))
    assert np.allclose(same.posterior(), flat, atol=1e-8)
    seen = []

    def belief(qi):
        seen.append(len(qi))
        return pd.DataFrame({"flu": np.where(qi["sex"] == "F", 0.9, 0.1), "hiv": 0.5})

    tilted = model.solve(prior=belief).posterior()
    assert seen == [int((~model.structure.phantom).sum())]
    assert tilted.loc[("F",), "flu"] > flat.loc[("F",), "flu"]
