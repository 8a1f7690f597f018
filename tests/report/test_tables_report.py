"""Issue 40, item 5: the page of published counts tables
(:mod:`maxent_privacy.report.tables`): what was published, the suppressed cells recovered
(exact ones first, then by width, flagged when narrower than the protection), how much of
the microdata is pinned ("not proved" when a time limit cut it), the maximum-entropy
table's certificate, a figure; every value from the data escaped, never markup.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import re  # noqa: E402

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from maxent_privacy import MaxEntModel, Tabulated  # noqa: E402
from maxent_privacy.report.tables import (  # noqa: E402
    audit_frame,
    audit_summary,
    plot_cell_intervals,
    recovered,
    render_tables_report,
)

HOSTILE = "<script>alert(1)</script>"


def two_by_two(region_s: str = "S"):
    """Sex by region, F/S suppressed, with the sex margin: F/S = 8 - 3 = 5."""
    cross = Tabulated(
        pd.DataFrame({"sex": ["F", "F", "M", "M"], "region": ["N", region_s] * 2,
                      "count": ["3", "x", "2", "4"]}),
        qi=["sex", "region"], name="cross.csv",
    )  # fmt: skip
    sex = Tabulated(pd.DataFrame({"sex": ["F", "M"], "count": ["8", "6"]}), qi=["sex"],
                    name="sex.csv")  # fmt: skip
    return MaxEntModel([cross, sex])


def two_by_three():
    """A: 5, x, x; B: 2, 3, 1; rows A 12, B 6; columns 1: 7, 2: [6-10], 3: x."""
    t = Tabulated(
        pd.DataFrame({"row": list("AAABBB"), "col": ["1", "2", "3"] * 2,
                      "count": ["5", "x", "x", "2", "3", "1"]}),
        qi=["row", "col"], name="t23.csv",
    )  # fmt: skip
    rows = Tabulated(pd.DataFrame({"row": ["A", "B"], "count": ["12", "6"]}), qi=["row"],
                     name="rows.csv")  # fmt: skip
    cols = Tabulated(pd.DataFrame({"col": ["1", "2", "3"], "count": ["7", "[6-10]", "x"]}),
                     qi=["col"], name="cols.csv")  # fmt: skip
    return MaxEntModel([t, rows, cols])


def text_of(page: str) -> str:
    """The page's text: no style, no figures, tags removed."""
    page = re.sub(r"<style>.*?</style>", "", page, flags=re.S)
    page = re.sub(r"base64,[A-Za-z0-9+/=]+", "", page)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


# ------------------------------------------------------------------ the audit frame
def test_the_audit_of_a_2x2_table():
    model = two_by_two()
    audit = audit_frame(model, model.solve())
    assert list(audit.columns[:3]) == ["table", "sex", "region"]
    assert audit.attrs["keys"] == ["sex", "region"]
    hidden = audit[audit["suppressed"]]
    assert len(hidden) == 1
    row = hidden.iloc[0]
    assert (row["lower"], row["upper"], row["width"]) == (5.0, 5.0, 0.0)
    assert row["recovered"] and row["exposed"]
    assert row["estimate"] == pytest.approx(5.0, abs=1e-6)
    assert audit_summary(audit)["sentence"] == (
        "1 of 1 suppressed cell recovered exactly; 1 narrower than the protection"
    )


def test_the_audit_of_two_cells_in_a_row():
    model = two_by_three()
    audit = audit_frame(model, model.solve(), exact=True, protection=5)
    hidden = audit[audit["suppressed"]]
    got = {
        (r["table"], r["col"]): (r["lower"], r["upper"]) for _, r in hidden.iterrows()
    }  # by hand: A2 in [10 - 7, 10 - 3], A3 = 7 - A2, col 3 = A3 + 1
    assert got == {
        ("t23.csv", "2"): (3.0, 7.0),
        ("t23.csv", "3"): (0.0, 4.0),
        ("cols.csv", "3"): (1.0, 5.0),
    }
    assert hidden["exposed"].all() and not hidden["recovered"].any()
    assert hidden["lower_exact"].all() and hidden["upper_exact"].all()


def test_lp_bounds_rounded_inward_recover_a_cell():
    """Counts are whole: bounds 2.5 ... 3.2 say the cell is 3; 2 ... 3 leave two counts."""
    assert recovered([2.5, 2.0, 0.0], [3.2, 3.0, 1e-9]).tolist() == [True, False, True]


# ------------------------------------------------------------------ the page
def test_the_page_says_what_was_published_and_recovered():
    model = two_by_three()
    result = model.solve()
    audit = audit_frame(model, result)
    rec = model.reconstruction()
    page = render_tables_report(model, result, audit, rec, sources=["t23.csv", "rows.csv"])
    text = text_of(page)
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    # what was published: name, columns, cells, suppressed, rounding, total
    assert "t23.csv row, col counts 6 2 none -" in text
    assert "rows.csv row counts 2 0 none 18" in text
    assert "cols.csv col counts 3 1 none -" in text
    # the suppressed cells, by width; the maxent estimates 3.5, 3.5, 4.5
    assert "t23.csv row = A, col = 2 3 7 4 3.50" in text
    assert "cols.csv col = 3 1 5 4 4.50" in text
    assert "0 of 3 suppressed cells recovered exactly; 0 narrower than the protection" in text
    # reconstruction: A1, B1, B2, B3 pinned (5 + 2 + 3 + 1 = 11), A2 at least 3, A3 at
    # least 0: 14 records in every consistent table
    assert rec["certain_records"] == 14
    assert "14 of the 18 records (77.8%)" in text
    assert "4 of the 6 combinations are pinned exactly" in text
    assert "Verified." in text and "iterative scaling" in text
    assert "data:image/png;base64," in page
    assert "not proved" not in text.replace('"not proved"', "")


def test_exact_cells_come_first_and_are_flagged():
    model = two_by_two()
    result = model.solve()
    page = render_tables_report(model, result, audit_frame(model, result), None)
    text = text_of(page)
    assert "cross.csv sex = F, region = S 5 5 0 5.00 exactly exposed proved" in text
    assert '<tr class="bad">' in page
    assert "Not computed." in text  # no reconstruction given


def test_not_proved_is_said():
    model = two_by_two()
    result = model.solve()
    rec = dict(model.reconstruction(), proved=False)
    text = text_of(render_tables_report(model, result, audit_frame(model, result), rec))
    assert "Not proved: a time limit cut an integer program" in text


def test_nothing_from_the_data_becomes_markup():
    model = two_by_two(region_s=HOSTILE)
    result = model.solve()
    audit = audit_frame(model, result)
    page = render_tables_report(
        model, result, audit, model.reconstruction(), sources=[HOSTILE + ".csv"],
        command=f"maxent-privacy audit '{HOSTILE}.csv'",
    )  # fmt: skip
    assert HOSTILE not in page and "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "5.00" in page  # the hostile cell is still recovered and shown


def test_a_math_like_label_is_drawn_as_text():
    model = two_by_two(region_s=r"$\sqrt{$")
    audit = audit_frame(model, model.solve())
    hidden = audit[audit["suppressed"]]
    ax = plot_cell_intervals(hidden, ["sex", "region"], Figure().subplots())
    ax.figure.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [r"cross.csv: sex = F, region = $\sqrt{$"]


def test_many_cells_add_a_histogram_of_widths():
    """Over 40 suppressed cells: the narrowest drawn, and the widths of all."""
    n = 45
    t = Tabulated(
        pd.DataFrame({"k": [str(i) for i in range(n)], "count": ["x"] * n}), qi=["k"],
        name="wide.csv",
    )  # fmt: skip
    total = Tabulated(pd.DataFrame({"count": [str(2 * n)]}), name="total.csv")
    model = MaxEntModel([t, total])
    result = model.solve()
    page = render_tables_report(model, result, audit_frame(model, result), None)
    assert page.count("data:image/png;base64,") == 2
    assert "the 40 narrowest of 45" in page


def test_columns_named_like_the_audit_s_own():
    """A table column named ``lower`` or ``table`` is kept apart (`` (cell)``), and an
    attribute named ``count`` leaves the maximum-entropy table's counts in ``records``."""
    t = Tabulated(
        pd.DataFrame({"lower": ["a", "a"], "table": ["b", "c"], "n": ["x", "3"]}),
        qi=["lower", "table"], count="n", name="odd.csv",
    )  # fmt: skip
    total = Tabulated(pd.DataFrame({"lower": ["a"], "n": ["5"]}), qi=["lower"], count="n")
    model = MaxEntModel([t, total])
    result = model.solve()
    audit = audit_frame(model, result)
    assert list(audit.columns[:3]) == ["table", "lower (cell)", "table (cell)"]
    row = audit[audit["suppressed"]].iloc[0]
    assert (row["table"], row["table (cell)"], row["lower"], row["upper"]) == ("odd.csv", "b", 2, 2)
    text = text_of(render_tables_report(model, result, audit, None))
    assert "odd.csv lower (cell) = a, table (cell) = b 2 2 0 2.00 exactly" in text

    t = Tabulated(pd.DataFrame({"count": ["1", "2"], "n": ["x", "4"]}), qi=["count"], count="n")
    total = Tabulated(pd.DataFrame({"n": ["6"]}), count="n")
    model = MaxEntModel([t, total])
    result = model.solve()
    text = text_of(render_tables_report(model, result, audit_frame(model, result), None))
    assert "count = 1 2 2 0 2.00 exactly" in text
    assert "count records 2 4.00 1 2.00" in text  # the largest expected counts
