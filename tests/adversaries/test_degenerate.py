"""Degenerate releases are answers, not crashes (issue 39): one bucket and one QI value,
one sensitive value, for the learned adversary, the comparison and the planner."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel, compare_adversaries, definetti
from maxent_privacy.anonymize import plan_release

ONE_BUCKET = pd.DataFrame(
    {"age": [30] * 5, "d": ["flu", "flu", "flu", "hiv", "cold"], "g": [1] * 5}
)
ONE_VALUE = pd.DataFrame({"age": [30, 40, 50], "d": ["flu"] * 3, "g": [1, 1, 2]})


@pytest.mark.parametrize("learner", ["naive_bayes", "logistic_regression"])
def test_one_bucket_one_qi_value_gives_the_bucket_s_frequencies(learner):
    model = MaxEntModel(Bucketized(ONE_BUCKET, ["age"], "d", "g"))
    post = definetti(model, learner=learner).posterior()
    np.testing.assert_allclose(
        post[["cold", "flu", "hiv"]].to_numpy(), [[0.2, 0.6, 0.2]], atol=1e-9
    )


@pytest.mark.parametrize("learner", ["naive_bayes", "logistic_regression"])
def test_one_sensitive_value_is_certain(learner):
    model = MaxEntModel(Bucketized(ONE_VALUE, ["age"], "d", "g"))
    post = definetti(model, learner=learner).posterior()
    assert (post["flu"] == 1.0).all()


def test_the_comparison_and_the_planner_on_one_qi_value():
    model = MaxEntModel(Bucketized(ONE_BUCKET, ["age"], "d", "g"))
    scale = compare_adversaries(model, truth=ONE_BUCKET, by="class")
    assert scale.table["learned"].tolist() == pytest.approx([0.2, 0.6, 0.2])
    table = ONE_BUCKET.drop(columns="g").assign(id=range(5))
    release, report = plan_release(
        [], table, ["age"], "d", tau=0.7, adversary="learned", person="id", queries=20
    )
    assert report.passed and release.n_people == 5


ROWS = pd.DataFrame(
    {"sex": list("FFMFMFMM"), "g": [1, 1, 1, 2, 2, 3, 3, 3],
     "s": ["flu", "flu", "hiv", "flu", "hiv", "flu", "hiv", "hiv"]}
)  # fmt: skip


@pytest.mark.parametrize(
    "answer, match",
    [
        (lambda qi, c: np.ones((len(qi), 3)), r"returned shape \(6, 3\); it must give"),
        (lambda qi, c: np.ones((len(qi) + 1, c.shape[1])), r"returned shape \(7, 2\)"),
        (lambda qi, c: None, "returned None"),
        (lambda qi, c: np.full(c.shape, np.nan), "returned nan for class 0"),
        (lambda qi, c: -np.ones(c.shape), "returned -1.0 for class 0, value 0"),
        (lambda qi, c: np.zeros(c.shape), "returned a row of zeros for class 0"),
        (lambda qi, c: "many", "returned a str, not an array of numbers"),
    ],
)
def test_a_callable_learner_s_output_is_checked(answer, match):
    """Issue 39: wrong shapes, None, NaN, negative or all-zero rows were pandas/numpy
    errors or 'scaling missed a total by nan', never naming the learner."""

    def mine(qi, counts):
        return answer(qi, counts)

    model = MaxEntModel(Bucketized(ROWS, qi=["sex"], sa="s", group="g"))
    with pytest.raises(ValueError, match=f"learner 'mine' {match}") as caught:
        definetti(model, learner=mine)
    assert "\n" not in str(caught.value)
    ok = definetti(model, learner=lambda qi, counts: pd.DataFrame(counts + 1))
    assert ok.posterior().shape == (2, 2)
