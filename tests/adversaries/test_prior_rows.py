"""A QI-based prior's rows are whole distributions (issue 39, item 2): a row summing below
1 was accepted silently and changed the possible-world posteriors (Eq. 2 weighs each
signature's row as it is); it is now one line naming the row, with or without ``other``."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
import pytest

from maxent_privacy import KnowledgeError
from maxent_privacy.robustness import Prior, exact_posterior

SEX = pd.Index(["m", "f"], name="sex")


@pytest.mark.parametrize(
    "table, culprit",
    [
        ({"flu": [0.5, 0.2], "hiv": [0.5, 0.3]}, "'f' sums to 0.5, not 1"),
        ({"flu": [0.1, 0.3], "hiv": [0.2, 0.7]}, "'m' sums to 0.3, not 1"),
        ({"flu": [Fraction(1, 2), Fraction(1, 3)], "hiv": [Fraction(1, 2), Fraction(1, 3)]},
         "'f' sums to 0.666667, not 1"),
    ],
)  # fmt: skip
def test_a_row_below_one_is_refused_naming_it(table, culprit):
    with pytest.raises(KnowledgeError) as err:
        Prior(pd.DataFrame(table, index=SEX), "disease")
    message = str(err.value)
    assert message.startswith(f"the prior of signature {culprit}: each row is a whole distrib")
    assert "other='rest'" in message and "\n" not in message


def test_a_row_within_float_rounding_of_one_is_whole():
    third = 1 / 3
    prior = Prior(pd.DataFrame({"a": [third] * 2, "b": [third] * 2, "c": [third] * 2}, SEX), "d")
    assert prior.p({"sex": "m"}, "b") == third


def test_the_rest_in_a_column_of_its_own_gives_the_rows_posterior():
    # what the message asks for: the rest of each row in 'rest', named by other=
    table = pd.DataFrame({"flu": [0.5, 0.2], "hiv": [0.25, 0.3]}, index=SEX)
    prior = Prior(table.assign(rest=1 - table.sum(axis=1)), "disease", other="rest")
    group = pd.DataFrame({"sex": ["m", "f"], "disease": ["flu", "hiv"]})
    post = exact_posterior(group, prior)
    # worlds: m flu & f hiv (0.5 * 0.3 = 0.15), m hiv & f flu (0.25 * 0.2 = 0.05)
    assert post.loc[0, "flu"] == pytest.approx(0.75) and post.loc[1, "hiv"] == pytest.approx(0.75)
