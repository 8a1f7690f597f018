"""A table given to ``bounds`` (``start``; ``Result.bounds`` passes the estimate) changes
the route, never a bound: the LP phase counts it as a table seen once our check finds
that it satisfies the rows, and a cell it makes positive needs no LP to show it."""

from __future__ import annotations

import numpy as np
import pytest
from paper_models import mondrian_pair, two_box_model

from maxent_privacy.bounds import lp as lp_module
from maxent_privacy.bounds.arguments import BoundsArgumentError


@pytest.fixture(autouse=True)
def small_components_too(monkeypatch):
    """The instances here are small: a given table is used on every component."""
    monkeypatch.setattr(lp_module, "GIVEN_TABLE_CELLS", 1)


@pytest.fixture(scope="module")
def overlapping():
    """Two overlapping Mondrian releases of 80 % of 150 Adult people, with populations:
    one component with placement cells, solved by LPs."""
    model = mondrian_pair(150, 0)
    return model, model.solve()


def _same_bounds(a, b) -> None:
    assert a.index.equals(b.index)
    for col in ("lower", "upper"):
        np.testing.assert_allclose(a[col], b[col], atol=1e-9, rtol=0)


def test_the_estimate_changes_the_route_not_the_bounds(overlapping):
    model, result = overlapping
    assert len(result.table) == model.n_cells > len(result.x)  # placement cells too
    plain = model.bounds(by="person")
    given = result.bounds(by="person")
    _same_bounds(plain, given)
    assert plain.attrs["certificate"]["tables_given"] == 0
    assert given.attrs["certificate"]["tables_given"] >= 1
    assert given["certified"].all() and (given["method"] != "time limit").all()
    assert (
        (given["lower"] <= given["maxent"] + 1e-9) & (given["maxent"] <= given["upper"] + 1e-9)
    ).all()


def test_the_zero_step_asks_an_lp_only_about_cells_the_table_leaves_at_0(overlapping, monkeypatch):
    model, result = overlapping
    calls = []
    original = lp_module.zero_cells

    def spy(lp, solve, w, n, known=None):
        runs = []

        def counted(c, cold=False):
            runs.append(1)
            return solve(c, cold)

        out = original(lp, counted, w, n, known)
        calls.append((known, len(runs), out[0]))
        return out

    monkeypatch.setattr("maxent_privacy.bounds.intervals.zero_cells", spy)
    model.bounds(by="person", start=result.table)
    ((known, runs_given, zeros),) = calls
    np.testing.assert_array_equal(known, result.table > lp_module.POSITIVE)
    assert 0 < zeros.sum() == (~known).sum()  # the table's zeros are forced zeros, proved
    calls.clear()
    model.bounds(by="person")
    ((known, runs_plain, zeros_plain),) = calls
    assert known is None and runs_given <= runs_plain
    np.testing.assert_array_equal(zeros, zeros_plain)


def test_small_components_keep_their_route(overlapping, monkeypatch):
    """Below GIVEN_TABLE_CELLS the zero step's vertices are worth more than the table."""
    model, result = overlapping
    monkeypatch.setattr(lp_module, "GIVEN_TABLE_CELLS", model.n_cells + 1)
    given, plain = result.bounds(by="person"), model.bounds(by="person")
    assert given.attrs["certificate"]["tables_given"] == 0
    assert given.attrs["certificate"]["lps"] == plain.attrs["certificate"]["lps"]
    _same_bounds(given, plain)


def test_a_table_positive_everywhere_needs_no_zero_lp():
    def no_lp(c, cold=False):
        raise AssertionError("no LP should run")

    out = lp_module.zero_cells(None, no_lp, np.ones(4), 4, np.ones(4, dtype=bool))
    assert not out[0].any() and out[1:] == (0.0, 0.0)


def test_a_table_that_misses_a_row_is_not_used(overlapping):
    model, result = overlapping
    wrong = result.table.copy()
    wrong[np.argmax(wrong)] += 0.5  # one record too many somewhere
    frame = model.bounds(by="person", start=wrong)
    assert frame.attrs["certificate"]["tables_given"] == 0
    _same_bounds(frame, model.bounds(by="person"))


def test_a_table_with_a_forced_zero_still_needs_its_proof():
    """Presolve's zeros are 0 in the estimate too: the zero step proves them by LP."""
    model = two_box_model()
    model.add(model.P("c", sex="F") == 0)
    result = model.solve()
    plain, given = model.bounds(by="person"), result.bounds(by="person")
    _same_bounds(plain, given)
    assert given.attrs["certificate"]["tables_given"] >= 1
    assert given["certified"].all()


@pytest.mark.parametrize("start", [[1.0, 2.0], "table", np.zeros((3, 2))])
def test_start_must_be_a_table_of_the_model(overlapping, start):
    model, _ = overlapping
    with pytest.raises(BoundsArgumentError, match="start must be None or a table"):
        model.bounds(by="person", start=start)
