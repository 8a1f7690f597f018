"""Published tables, acceptance (issue 40): everything a table can hold that is wrong gets
a one-line error naming the table, the row and the column (``ReleaseError``); tables that
no microdata table satisfies at once are an ``InconsistentTables`` error (a
``ReleaseError``) whose one-line message names the rows in conflict and how far apart
they are."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import maxent_privacy
from maxent_privacy import MaxEntModel, Tabulated
from maxent_privacy.errors import InconsistentTables, ReleaseError

REGIONS = ["north", "south", "east", "west", "centre"]


def by_region(counts) -> pd.DataFrame:
    return pd.DataFrame({"region": REGIONS[: len(counts)], "count": counts})


def one_line(err) -> str:
    message = str(err.value)
    assert "\n" not in message, message
    assert message.strip(), "an empty message"
    return message


def names_fourth_row(message: str) -> bool:
    """The bad count sits in the fourth row (index label 3): the message may count rows
    from 1 (row 4) or name the frame's index label (row 3); any other row is wrong."""
    rows = {int(n) for n in re.findall(r"\brows? (\d+)", message)}
    return bool(rows) and rows <= {3, 4}


def test_release_error_is_exported_at_the_top():
    assert maxent_privacy.ReleaseError is ReleaseError
    assert issubclass(InconsistentTables, ReleaseError)


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (-2, "negative"),
        (2.5, "fractional"),
        ("abc", "unparseable"),
        ("-1", "negative text"),
        ("2.5", "fractional text"),
        ("[1.5-3]", "fractional interval"),
    ],
)
def test_bad_count_names_table_row_and_column(bad, why):
    counts = [1, 2, 3, bad, 5]
    with pytest.raises(ReleaseError) as err:
        Tabulated(by_region(counts), qi=["region"], count="count", name="by region")
    message = one_line(err)
    assert "by region" in message, (why, message)
    assert "count" in message, (why, message)
    assert names_fourth_row(message), (why, message)
    assert str(bad) in message, (why, message)


def test_unparseable_mean_names_table_row_and_column():
    frame = pd.DataFrame({"sex": ["F", "M", "F", "M"], "race": ["B", "B", "W", "W"]})
    frame["age"] = [30.5, 41.0, 22.0, "abc"]
    with pytest.raises(ReleaseError) as err:
        Tabulated(frame, qi=["sex", "race"], stat="mean", of="age", name="mean age")
    message = one_line(err)
    assert "mean age" in message and "'age'" in message and "abc" in message, message
    assert names_fourth_row(message), message


def test_bad_count_in_an_unnamed_table_names_its_position():
    """A table without a name is named by its position: 'table 1' (the only table)."""
    frame = by_region([1, 2, 3, "abc", 5]).rename(columns={"count": "n"})
    with pytest.raises(ReleaseError) as err:
        MaxEntModel([Tabulated(frame, qi=["region"], count="n")])
    message = one_line(err)
    assert "table 1" in message
    assert "'n'" in message or '"n"' in message or " n " in message
    assert names_fourth_row(message)


def test_bad_count_in_a_two_way_table():
    """The row and column of a bad count in a crosstab (the fourth row, its count)."""
    frame = pd.DataFrame(
        {
            "region": ["north", "north", "south", "south"],
            "sex": ["F", "M", "F", "M"],
            "count": [1, 0, 1, -1],
        }
    )
    with pytest.raises(ReleaseError) as err:
        Tabulated(frame, qi=["region", "sex"], name="region by sex")
    message = one_line(err)
    assert "region by sex" in message and "count" in message, message
    assert names_fourth_row(message), message


@pytest.mark.parametrize(
    ("kwargs", "missing"),
    [
        ({"qi": ["region", "sex"]}, "sex"),
        ({"qi": ["region"], "count": "n"}, "n"),
        ({"qi": ["region"], "sa": "disease"}, "disease"),
    ],
)
def test_missing_column_names_table_and_column(kwargs, missing):
    with pytest.raises(ReleaseError) as err:
        Tabulated(by_region([1, 2, 3]), name="by region", **kwargs)
    message = one_line(err)
    assert "by region" in message
    assert re.search(rf"\b{missing}\b", message), message


def test_missing_column_of_a_mean_table():
    frame = pd.DataFrame({"sex": ["F", "M"], "mean_age": [30.5, 41.0]})
    with pytest.raises(ReleaseError) as err:
        Tabulated(frame, qi=["sex"], stat="mean", of="age", name="mean age by sex")
    message = one_line(err)
    assert "mean age by sex" in message and re.search(r"\bage\b", message), message


def test_duplicated_cell_names_table_and_row():
    frame = pd.DataFrame({"region": ["north", "south", "east", "south"], "count": [1, 2, 3, 4]})
    with pytest.raises(ReleaseError) as err:
        Tabulated(frame, qi=["region"], name="by region")
    message = one_line(err)
    assert "by region" in message and "south" in message, message


# --- inconsistent tables --------------------------------------------------------------------


def test_margins_with_different_totals():
    """Two exact margins of the same records with totals 6 and 7: 1 record apart."""
    ta = Tabulated(by_region([1, 2, 3]), qi=["region"], name="by region")
    tb = Tabulated(pd.DataFrame({"sex": ["F", "M"], "count": [3, 4]}), qi=["sex"], name="by sex")
    with pytest.raises(InconsistentTables) as err:
        MaxEntModel([ta, tb]).solve()
    message = one_line(err)
    assert "by region" in message and "by sex" in message, message
    numbers = {int(n) for n in re.findall(r"\b\d+\b", message)}
    assert {6, 7, 1} <= numbers, message  # the two totals and how far apart they are


def solve_and_bounds_raise(tables):
    """The conflict is found by the model (at the latest when it solves or bounds)."""
    errors = []
    for action in (lambda m: m.solve(), lambda m: m.bounds(by="cell")):
        with pytest.raises(InconsistentTables) as err:
            action(MaxEntModel(tables))
        errors.append(one_line(err))
    return errors


def by_region_and_sex() -> Tabulated:
    """Six records by region and sex: north 2 (F 1, M 1), south 1 (F), east 3 (M)."""
    frame = pd.DataFrame(
        {
            "region": ["north", "north", "south", "east"],
            "sex": ["F", "M", "F", "M"],
            "count": [1, 1, 1, 3],
        }
    )
    return Tabulated(frame, qi=["region", "sex"], name="by region and sex")


def test_two_way_table_contradicting_a_margin():
    """The same total (6), but the two-way table puts 2 records in the north where the
    margin has 1, and 1 in the south where it has 2: the fewest records to move to make
    them agree is 2 (one per row), and the message names the north and the south."""
    margin = Tabulated(by_region([1, 2, 3]), qi=["region"], name="by region")
    crosstab = by_region_and_sex()
    for message in solve_and_bounds_raise([margin, crosstab]):
        assert "north" in message or "south" in message, message
        assert "by region" in message, message
        assert re.search(r"\b(2 records|1 apart|by 1\b|by 2\b)", message), message
        assert "east" not in message and "west" not in message, message


def test_suppressed_cells_cannot_repair_a_known_cell():
    """A published (unsuppressed) cell larger than its row's margin: no value of the
    suppressed cells helps; 3 records in (north, M) where the margin allows 1."""
    margin = Tabulated(by_region([1, 2, 3]), qi=["region"], name="by region")
    crosstab = Tabulated(
        pd.DataFrame(
            {
                "region": ["north", "north", "south", "south", "east", "east"],
                "sex": ["F", "M", "F", "M", "F", "M"],
                "count": ["x", 3, "x", "x", "x", "x"],
            }
        ),
        qi=["region", "sex"],
        name="suppressed by region and sex",
    )
    for message in solve_and_bounds_raise([margin, crosstab]):
        assert "north" in message, message
        assert re.search(r"\b2\b", message), message  # 3 published where 1 fits: 2 apart


def test_consistent_tables_raise_nothing():
    """The control: the same shapes, consistent, solve and bound without error."""
    margin = Tabulated(by_region([2, 1, 3]), qi=["region"], name="by region")
    crosstab = by_region_and_sex()
    model = MaxEntModel([margin, crosstab])
    assert model.total == 6
    table = model.solve().table()
    assert abs(table["count"].sum() - 6) < 1e-6
    bounds = model.bounds(by="cell")
    assert bounds.loc[("north", "F"), "lower"] == pytest.approx(1)
