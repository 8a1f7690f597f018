"""Sparse bounds (issue 22, item 7): ``bounds(values=pd.MultiIndex)`` bounds the given
(row, value) pairs only, and gives each exactly what the full frame gives it."""

from __future__ import annotations

import pandas as pd
import pytest
from paper_models import figure1_model

from maxent_privacy.bounds import bounds
from maxent_privacy.errors import KnowledgeError


@pytest.mark.parametrize("by", ["person", "class", None, "group"])
def test_pairs_give_what_the_full_frame_gives(by):
    model = figure1_model()
    full = bounds(model, by=by)
    pick = full.index[::3][::-1]  # any order: the frame keeps it
    part = bounds(model, by=by, values=pick)
    assert part.index.equals(pick)
    cols = ["lower", "upper"] + (["records"] if "records" in full else [])
    pd.testing.assert_frame_equal(part[cols], full.loc[pick, cols])


def test_pairs_over_possible_worlds():
    model = figure1_model()
    full = bounds(model, by="person", exact=True)
    pick = full.index[::2]
    part = bounds(model, by="person", exact=True, values=pick)
    cols = ["lower", "upper", "possible", "certain"]
    pd.testing.assert_frame_equal(part[cols], full.loc[pick, cols])


def test_pairs_bound_only_their_own_targets():
    model = figure1_model()
    pick = pd.MultiIndex.from_tuples([("Allen", "Flu"), ("Cathy", "Breast Cancer")])
    frame = bounds(model, by="person", values=pick)
    assert len(frame) == 2
    assert frame.loc[("Cathy", "Breast Cancer"), "lower"] == pytest.approx(1.0)
    # a value the row's class never holds: the impossible 0/0
    never = bounds(model, by="person", values=pd.MultiIndex.from_tuples([("Cathy", "HIV")]))
    assert never["method"].item() == "impossible" and never["upper"].item() == 0.0


def test_a_pair_of_an_unknown_person_is_refused():
    model = figure1_model()
    with pytest.raises(KnowledgeError, match="no person 'Zoe'"):
        bounds(model, by="person", values=pd.MultiIndex.from_tuples([("Zoe", "Flu")]))
