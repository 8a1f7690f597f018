"""Text flags in a counterfeit column read as everywhere else (issue 39, item 2).

The command line reads "True"/"False" from a CSV; the API refused the same text
("column 'cf' holds 'False'; it must be True/False"). Both now read a flag as
:func:`~maxent_privacy._validation.check_flag` does: true/false, yes/no, 1/0, any case.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel, ReleaseError
from maxent_privacy._validation import check_flag
from maxent_privacy.cli.inputs import InputError
from maxent_privacy.cli.inputs import counterfeit_flags as cli_flags
from maxent_privacy.releases.bucketized import counterfeit_flags


def release(flags) -> Bucketized:
    """Two groups; the third row of each is counterfeit when its flag says so."""
    frame = pd.DataFrame(
        {
            "name": ["x", "y", None, "z", "w", None],
            "s": ["flu", "hiv", "flu", "flu", "cold", "cold"],
            "g": [1, 1, 1, 2, 2, 2],
            "cf": flags,
        }
    )
    return Bucketized(frame, ["name"], "s", "g", counterfeits="cf")


TEXTS = [
    ["False", "False", "True", "False", "False", "True"],
    ["false", "no", "YES", "0", "No", " true "],
    ["0", "0", "1", "0", "0", "1"],
]


@pytest.mark.parametrize("flags", TEXTS)
def test_text_flags_give_the_same_release_and_posterior(flags):
    plain = release([False, False, True, False, False, True])
    text = release(flags)
    assert text.frame["cf"].tolist() == [False, False, True, False, False, True]
    assert text.counterfeit_counts().tolist() == [1, 1]
    got = MaxEntModel(text).solve().posterior()
    want = MaxEntModel(plain).solve().posterior()
    pd.testing.assert_frame_equal(got, want)
    # group 1 publishes {flu, flu, hiv} for x, y and one counterfeit (which value is not
    # said): by symmetry each of the three holds hiv with probability 1/3
    assert got.loc[("x",), "hiv"] == pytest.approx(1 / 3)


@pytest.mark.parametrize("cell", ["True", "false", "yes", "NO", "1", "0", " Yes "])
def test_the_api_the_command_line_and_check_flag_agree(cell):
    want = check_flag(cell, "flag")
    assert counterfeit_flags(pd.Series([cell])).tolist() == [want]
    assert cli_flags(pd.DataFrame({"cf": [cell]}), "cf", "r.csv").tolist() == [want]


@pytest.mark.parametrize("cell", ["maybe", "", "2", None, np.nan])
def test_a_cell_that_is_no_flag_is_refused_by_both(cell):
    series = pd.Series(["True", cell], dtype=object, name="cf")
    with pytest.raises(ReleaseError, match=r"^counterfeits column 'cf' holds .* in row 1; it must"):
        counterfeit_flags(series)
    frame = pd.DataFrame({"cf": series})
    with pytest.raises(InputError, match=r"^r.csv: column 'cf' holds .* on line 3; a counterfeit"):
        cli_flags(frame, "cf", "r.csv")
