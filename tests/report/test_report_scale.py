"""The report at scale and what a publisher needs to act (issue 22, items 7 and 8).

Each defect of the issue in these items, replayed: bounds computed for every (person,
value) and twice (``result.report()`` after ``result.risk_table()``); rows x every value
in memory (10,000 SA values: MemoryError; tested on 2,000); ``maxent`` written
0.4999999999999999 while ``at_risk`` True; ties hidden; non-sensitive values counted as
risk; the worst-case card unexplained; no per-fact, per-release or identity risk.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest
from paper_models import figure1_result

import maxent_privacy.bounds.intervals as intervals
from maxent_privacy import Bucketized, MaxEntModel, datasets
from maxent_privacy.cli import main
from maxent_privacy.report import render_report, risk_summary, risk_table, write_risk_table
from maxent_privacy.report import row_bounds as rb
from maxent_privacy.results import Result

ROLES = ["--qi", "gender", "degree", "--sa", "disease", "--group", "bucket"]


@pytest.fixture
def count_bounds(monkeypatch):
    """Count the calls of ``bounds`` and the (row, value) pairs each asks for."""
    calls = []
    real = intervals.bounds

    def counted(model, by=None, values=None, **options):
        calls.append(None if values is None else len(values))
        return real(model, by=by, values=values, **options)

    monkeypatch.setattr(intervals, "bounds", counted)
    return calls


# ------------------------------------------------------------------------ sparse, once
def test_bounds_are_asked_for_each_rows_value_only(count_bounds):
    table = figure1_result().risk_table(0.99)
    # 10 people, one value each (not 10 x 6 values); Cathy and Grace, whom the fact fixes
    # to Breast Cancer, need no LP
    assert count_bounds == [8]
    assert len(table) == 10


def test_report_after_risk_table_does_not_bound_again(count_bounds, tmp_path):
    result = figure1_result()
    result.risk_table(0.99)
    result.risk_table(0.5)  # another threshold: the same bounds
    result.report(tmp_path / "r.html", threshold=0.99)
    assert count_bounds == [8]
    result.risk_table(0.5, nonsensitive=["Flu"])  # other values: bounded again
    assert len(count_bounds) == 2


def test_the_cached_table_is_not_shared_with_the_caller():
    result = figure1_result()
    first = result.risk_table(0.99)
    first.loc[:, "maxent"] = -1.0
    assert (result.risk_table(0.99)["maxent"] >= 0).all()


def many_values_result(n=2_000):
    """``n`` people, each with their own sensitive value, in buckets of 5."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(n)],
            "age": rng.integers(20, 60, n).astype(str),
            "sex": rng.choice(["F", "M"], n),
            "code": [f"v{i:04d}" for i in range(n)],
            "group": np.arange(n) // 5,
        }
    )
    release = Bucketized(frame, qi=["age", "sex"], sa="code", group="group", person="pid")
    return MaxEntModel(release).solve()


def test_many_values_grow_with_the_values_in_each_group(monkeypatch):
    result = many_values_result()
    # rows x every value would be 2,000 x 2,000 doubles: 32 MB for the table alone
    dense = 2_000 * 2_000 * 8

    def refuse(*args, **kwargs):
        raise AssertionError("a dense rows x every value table was made")

    monkeypatch.setattr(Result, "person_posterior", refuse)
    monkeypatch.setattr(Result, "posterior", refuse)
    tracemalloc.start()
    try:
        table = risk_table(result, 0.5)
        summary = risk_summary(result, 0.5, table)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < dense / 2, f"peak {peak / 1e6:.1f} MB"
    assert len(table) == 2_000 and summary["people"] == 2_000
    assert (table["maxent"] == 0.2).all() and table["tied"].all()  # 5 values, 1/5 each
    assert "<html" in render_report(result, 0.5, table=table)  # no dense table there either


# ------------------------------------------------------------------------ modes
def test_auto_past_its_size_gives_outer_bounds_and_says_so(monkeypatch, count_bounds):
    result = figure1_result()
    certified = result.risk_table(0.99, bounds="all").set_index("name")
    monkeypatch.setattr(rb, "AUTO_ROWS", 5)
    outer = figure1_result().risk_table(0.99).set_index("name")
    # the 2 people the fact fixes without an LP, then the 5 riskiest of the 8 others
    assert count_bounds == [8, 5]
    assert outer.attrs["bounds"]["outer"] == 3 and outer["certified"].sum() == 7
    assert not outer.loc[["Helen", "Iris", "James"], "certified"].any()  # 1/3: the least
    assert "outer bounds from the release alone" in outer.attrs["bounds"]["note"]
    # sound: the outer interval holds the certified one
    assert (outer["lower"] <= certified.loc[outer.index, "lower"]).all()
    assert (outer["upper"] >= certified.loc[outer.index, "upper"]).all()
    page = render_report(figure1_result(), 0.99)
    assert "outer bounds from the release alone" in page and "--bounds all" in page


def test_the_time_box_falls_back_to_outer_bounds(monkeypatch):
    monkeypatch.setattr(rb, "AUTO_SECONDS", 0.0)
    table = figure1_result().risk_table(0.99)
    info = table.attrs["bounds"]
    assert info["outer"] > 0 and "time box" in info["note"]
    assert table.set_index("name").loc["Cathy", "upper"] == 1.0


def test_outer_bounds_of_a_fact_free_release_are_the_certified_ones():
    result = figure1_result(knowledge=False)
    pairs = pd.MultiIndex.from_arrays([["Allen", "Cathy"], ["Flu", "Breast Cancer"]])
    outer = rb.outer_bounds(result.model, "person", pairs)
    full = result.bounds(by="person").loc[pairs]
    np.testing.assert_allclose(outer[["lower", "upper"]], full[["lower", "upper"]])


# ------------------------------------------------------------------------ rounding
def rounding_result(share):
    """Figure 1 without ids or facts, Flu's share of (male, college, bucket 1) set."""
    result = figure1_result(person=None, knowledge=False)
    cells = result.value_cells
    row = (
        (cells["gender"] == "male")
        & (cells["degree"] == "college")
        & (cells["bucket"] == 1)
        & (cells["disease"] == "Flu")
    ).to_numpy()
    result.x = result.x.copy()
    result.x[row] = 2 * share  # the class has 2 records
    return result


def test_at_risk_follows_the_printed_rounded_value(tmp_path):
    result = rounding_result(0.4999999999999999)
    table = result.risk_table(0.5)
    row = table[(table["gender"] == "male") & (table["degree"] == "college")]
    row = row[row["bucket"] == 1].iloc[0]
    assert row["maxent"] == 0.5 and row["at_risk"]
    path = tmp_path / "risk.csv"
    write_risk_table(result, path, 0.5)
    written = pd.read_csv(path)
    assert "0.4999999999999999" not in path.read_text()
    assert (written.loc[written["at_risk"], "maxent"] >= 0.5).all()
    assert (written.loc[~written["at_risk"], "maxent"] < 0.5).all()
    assert "0.5000" in render_report(result, 0.5, table=table)


def test_just_below_the_threshold_is_printed_below_it():
    result = rounding_result(0.49994)
    table = result.risk_table(0.5)
    hit = table[(table["maxent"] == 0.4999)]
    assert len(hit) and not hit["at_risk"].any()


# ------------------------------------------------------------------------ ties, values
def test_ties_are_flagged_and_counted():
    result = figure1_result(knowledge=False)
    table = result.risk_table(0.5).set_index("name")
    # bucket 2 holds Breast Cancer and HIV once each for Ethan: a tie; bucket 1 holds Flu
    # twice (Allen: Flu 1/2, alone at the top)
    assert table.loc["Ethan", "tied"] and table.loc["Ethan", "maxent"] < 0.5
    assert not table.loc["Allen", "tied"] and table.loc["Allen", "value"] == "Flu"
    page = render_report(result, 0.5)
    n = int(table["tied"].sum())
    assert f"{n:,}\npeople have a tie for their likeliest value" in page


def test_nonsensitive_values_never_count():
    result = figure1_result(knowledge=False)
    plain = result.risk_table(0.5)
    assert (plain["value"] == "Flu").any()
    table = result.risk_table(0.5, nonsensitive=["Flu"])
    assert not (table["value"] == "Flu").any()
    assert table["at_risk"].sum() < plain["at_risk"].sum()
    assert result.risk_table(0.5, nonsensitive="Flu")["value"].ne("Flu").all()  # one value
    page = render_report(result, 0.5, nonsensitive=["Flu"])
    assert "Not sensitive" in page and "Flu." in page


def test_the_cli_takes_nonsensitive_values_and_bounds(tmp_path, capsys):
    release = tmp_path / "figure1.csv"
    datasets.du2008_figure1().to_csv(release, index=False)
    risk = tmp_path / "risk.csv"
    argv = ["report", str(release), *ROLES, "--person", "name", "--risk-out", str(risk)]
    assert main([*argv, "--nonsensitive", "Flu", "Pneumonia", "--bounds", "none"]) == 0
    table = pd.read_csv(risk)
    assert not table["value"].isin(["Flu", "Pneumonia"]).any()
    assert "lower" not in table
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--bounds", "sometimes"])
    assert exc.value.code == 2
    assert "choose from 'auto', 'all', 'none'" in capsys.readouterr().err


def test_the_progress_bar_goes_to_standard_error(tmp_path, capsys):
    release = tmp_path / "figure1.csv"
    datasets.du2008_figure1().to_csv(release, index=False)
    argv = ["report", str(release), *ROLES, "--risk-out", str(tmp_path / "r.csv")]
    assert main([*argv, "--progress"]) == 0
    out, err = capsys.readouterr()
    assert "report: 5/5 steps" in err and "steps" not in out
    assert main(argv) == 0  # standard error is not a terminal here: no bar
    assert "steps" not in capsys.readouterr().err


# ------------------------------------------------------------------------ the page
def test_the_worst_case_card_explains_itself():
    page = render_report(figure1_result(), 0.99)
    assert "In the worst case, some table consistent with the release" in page
    # Cathy and Grace hold Breast Cancer in every table; the 8 others' value is possible
    assert "<b>2</b> certain among the\n    <b>10</b> people certified" in page
    assert "<b>8</b> for whom it is merely possible" in page


def test_which_facts_matter_in_people():
    page = render_report(figure1_result(), 0.99)
    assert "Which facts matter" in page
    assert '<td class="num">2</td><td class="num">0</td><td class="num">0</td>' in page


def test_each_pooled_release_alone_beside_the_pool():
    d1, d2 = datasets.wang2008_figure1()
    releases = [
        Bucketized(d, qi=["gender", "zip"], sa="disease", group="bucket", person="pseudonym")
        for d in (d1, d2)
    ]
    result = MaxEntModel(releases).solve()
    page = render_report(result, 0.99)
    assert "Each release alone" in page
    assert "beside the pooled releases with the knowledge: 3." in page


def test_identity_risk_is_prosecutor_risk():
    table = figure1_result().risk_table(0.99).set_index("name")
    # Iris is the only female graduate: found for sure; Allen is one of 3 male graduates
    # of college (Allen, Brian, Ethan)
    assert table.loc["Iris", "identity"] == 1.0
    assert table.loc["Allen", "identity"] == pytest.approx(0.3333)
    assert "Identity risk (prosecutor" in render_report(figure1_result(), 0.99)


def test_the_people_table_is_capped_and_points_to_the_csv():
    page = render_report(figure1_result(knowledge=False), 0.3, top=3)
    body = page.split('<table class="people">')[1].split("</table>")[0]
    assert body.count("<tr>") == 1 + 3
    assert "the full list is the risk table" in page


def test_the_riskiest_are_drawn_as_intervals_not_a_heat_map():
    page = render_report(figure1_result(), 0.99)
    assert "worst-case interval as a bar" in page and "heatmap" not in page
