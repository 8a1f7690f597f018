"""Issue 40, item 5, from the command line: ``maxent-privacy audit`` of published counts
tables (each suppressed cell's interval, computed here by hand from the published cells
and margins), its CSV and page written as one unit and never over an input, one-line
errors naming the table, row and column; ``report --tables`` (the page of the tables) and
``report --tables --population`` (the people's report, once the population mode lands).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from maxent_privacy.cli import EXIT_INPUT, EXIT_OK, EXIT_OUTPUT, main


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text)
    return str(path)


@pytest.fixture
def two_by_two(tmp_path):
    """A 2x2 table of sex by region with F/S suppressed, and the sex margin: F/S is
    8 - 3 = 5."""
    cross = write(tmp_path, "cross.csv", "sex,region,count\nF,N,3\nF,S,x\nM,N,2\nM,S,4\n")
    sex = write(tmp_path, "sex.csv", "sex,count\nF,8\nM,6\n")
    return cross, sex


@pytest.fixture
def two_by_three(tmp_path):
    """A 2x3 table with two suppressed cells in row A (A: 5, x, x; B: 2, 3, 1), the row
    margin (A 12, B 6) and a column margin (1: 7, 2: [6-10], 3: x)."""
    t = write(tmp_path, "t23.csv", "row,col,count\nA,1,5\nA,2,x\nA,3,x\nB,1,2\nB,2,3\nB,3,1\n")
    rows = write(tmp_path, "rows.csv", "row,count\nA,12\nB,6\n")
    cols = write(tmp_path, "cols.csv", "col,count\n1,7\n2,[6-10]\n3,x\n")
    return t, rows, cols


def one_line_error(capsys, *words) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    for word in words:
        assert word in err, (word, err)
    return err


# ------------------------------------------------------------------ the audit's numbers
def test_a_suppressed_cell_of_a_2x2_table_is_recovered_exactly(two_by_two, tmp_path, capsys):
    out = tmp_path / "audit.csv"
    argv = ["audit", *two_by_two, "--qi", "sex", "region", "--count", "count"]
    assert main([*argv, "--out", str(out)]) == EXIT_OK
    printed = capsys.readouterr().out
    assert "sex = F, region = S: lower 5, upper 5, width 0 (recovered exactly, EXPOSED)" in printed
    assert "1 of 1 suppressed cell recovered exactly; 1 narrower than the protection" in printed
    audit = pd.read_csv(out, dtype={"published": str})
    assert list(audit.columns[:3]) == ["table", "sex", "region"]
    assert set(audit["table"]) == {"cross.csv", "sex.csv"}
    cell = audit[audit["suppressed"]]
    assert len(cell) == 1
    row = cell.iloc[0]
    assert (row["table"], row["sex"], row["region"]) == ("cross.csv", "F", "S")
    assert (row["lower"], row["upper"], row["width"]) == (5.0, 5.0, 0.0)
    assert row["published"] == "x" and bool(row["recovered"]) and bool(row["exposed"])
    assert row["estimate"] == pytest.approx(5.0, abs=1e-6)


@pytest.mark.parametrize("exact", [False, True])
def test_two_suppressed_cells_in_a_row(two_by_three, tmp_path, capsys, exact):
    """With the row margin only: A2 + A3 = 12 - 5 = 7, each in [0, 7]. With the column
    margin too: A2 = col 2 - B2 in [6 - 3, 10 - 3] = [3, 7], A3 = 7 - A2 in [0, 4], and
    the suppressed col 3 = A3 + 1 in [1, 5]."""
    t, rows, cols = two_by_three
    base = ["--qi", "row", "col", "--count", "count"] + (["--exact"] if exact else [])
    out = tmp_path / "a.csv"
    assert main(["audit", t, rows, *base, "--out", str(out)]) == EXIT_OK
    printed = capsys.readouterr().out
    assert "row = A, col = 2: lower 0, upper 7, width 7" in printed
    assert "row = A, col = 3: lower 0, upper 7, width 7" in printed
    assert "0 of 2 suppressed cells recovered exactly; 0 narrower than the protection" in printed

    assert main(["audit", t, rows, cols, *base, "--out", str(out)]) == EXIT_OK
    printed = capsys.readouterr().out
    audit = pd.read_csv(out)
    hidden = audit[audit["suppressed"]].set_index("table")
    a = hidden.loc["t23.csv"].set_index("col")
    assert a.loc[2, ["lower", "upper"]].tolist() == [3.0, 7.0]
    assert a.loc[3, ["lower", "upper"]].tolist() == [0.0, 4.0]
    assert hidden.loc["cols.csv", ["lower", "upper"]].tolist() == [1.0, 5.0]
    assert "col = 3: lower 1, upper 5, width 4" in printed
    assert "0 of 3 suppressed cells recovered exactly" in printed
    if exact:
        assert {"lower_exact", "upper_exact"} <= set(audit.columns)


def test_protection_as_a_share_and_as_a_width(two_by_three, capsys):
    t, rows, cols = two_by_three
    argv = ["audit", t, rows, cols, "--qi", "row", "col", "--count", "count"]
    assert main([*argv, "--protection", "5"]) == EXIT_OK  # every width 4 < 5
    assert "3 narrower than the protection" in capsys.readouterr().out
    # a share: width 4 against 0.9 x the middle (5, 2, 3): only col 2 (4 < 4.5) is exposed
    assert main([*argv, "--protection", "0.9"]) == EXIT_OK
    printed = capsys.readouterr().out
    assert "row = A, col = 2: lower 3, upper 7, width 4 (EXPOSED)" in printed
    assert "1 narrower than the protection" in printed


def test_suppression_marks_and_rounding(tmp_path, capsys):
    """``--suppressed ..``: the mark of another office; ``--rounding 3``: counts of a
    rounded table stand for c-2 ... c+2 (a 0 too), so nothing is recovered."""
    cross = write(tmp_path, "c.csv", "sex,region,n\nF,N,3\nF,S,..\nM,N,3\nM,S,3\n")
    sex = write(tmp_path, "s.csv", "sex,n\nF,9\nM,6\n")
    argv = ["audit", cross, sex, "--qi", "sex", "region", "--count", "n"]
    assert main([*argv, "--suppressed", ".."]) == EXIT_OK
    assert "sex = F, region = S: lower 6, upper 6" in capsys.readouterr().out
    assert main([*argv, "--suppressed", "..", "--rounding", "3"]) == EXIT_INPUT
    one_line_error(capsys, "number of records is not known", "--total")
    assert main([*argv, "--suppressed", "..", "--rounding", "3", "--total", "15"]) == EXIT_OK
    printed = capsys.readouterr().out
    assert "0 of 1 suppressed cell recovered exactly" in printed
    # by hand: F = 9 +- 2 and F/N = 3 +- 2, so F/S is in [7 - 5, 11 - 1] = [2, 10]
    assert "sex = F, region = S: lower 2, upper 10, width 8" in printed


def test_a_table_with_the_sensitive_column(tmp_path, capsys):
    """``--sa``: in the tables that have it. Region N has 5 people, 2 with the flu; the
    cross table suppresses N/flu, the flu table gives 2 in all, of whom 0 in S."""
    cross = write(tmp_path, "cross.csv", "region,disease,count\nN,flu,x\nN,ok,3\nS,ok,4\n")
    flu = write(tmp_path, "flu.csv", "disease,count\nflu,2\nok,7\n")
    argv = ["audit", cross, flu, "--qi", "region", "--sa", "disease", "--count", "count"]
    assert main(argv) == EXIT_OK
    assert "region = N, disease = flu: lower 2, upper 2" in capsys.readouterr().out


def test_knowledge_unlocks_the_cells(tmp_path, capsys):
    """Region by disease, every cell suppressed; margins N 5, S 4 and flu 2, ok 7. Alone
    N/flu is in [0, 2] (Frechet: max(0, 5 + 2 - 9), min(5, 2)); knowing that no one in S
    has the flu pins every cell: N/flu 2, N/ok 3, S/ok 4."""
    cross = write(tmp_path, "rd.csv", "region,disease,count\nN,flu,x\nN,ok,x\nS,flu,x\nS,ok,x\n")
    flu = write(tmp_path, "d.csv", "disease,count\nflu,2\nok,7\n")
    region = write(tmp_path, "r.csv", "region,count\nN,5\nS,4\n")
    facts = write(tmp_path, "facts.txt", 'P(disease = "flu" | region = "S") = 0\n')
    argv = ["audit", cross, flu, region, "--qi", "region", "--sa", "disease", "--count", "count"]
    assert main(argv) == EXIT_OK
    printed = capsys.readouterr().out
    assert "region = N, disease = flu: lower 0, upper 2, width 2" in printed
    assert "region = S, disease = ok: lower 2, upper 4, width 2" in printed
    assert "0 of 4 suppressed cells recovered exactly" in printed
    page = tmp_path / "k.html"
    assert main([*argv, "--knowledge", facts, "--html", str(page)]) == EXIT_OK
    printed = capsys.readouterr().out
    assert "region = N, disease = flu: lower 2, upper 2, width 0" in printed
    assert "region = N, disease = ok: lower 3, upper 3, width 0" in printed
    assert "4 of 4 suppressed cells recovered exactly" in printed
    assert "P(disease = &#34;flu&#34; | region = &#34;S&#34;) = 0" in page.read_text()
    assert main([*argv, "--knowledge", facts, "--html", facts]) == EXIT_INPUT
    one_line_error(capsys, "--html")


# ------------------------------------------------------------------ errors, one line each
def test_a_bad_count_names_the_file_and_the_row(tmp_path, capsys):
    bad = write(tmp_path, "bad.csv", "sex,region,count\nF,N,3\nF,S,2.5\nM,N,-1\n")
    assert main(["audit", bad, "--qi", "sex", "region", "--count", "count"]) == EXIT_INPUT
    one_line_error(capsys, "table 'bad.csv', row 2, column 'count'", "2.5", "not a whole", bad)


@pytest.mark.parametrize(
    "text, words",
    [
        ("sex,count\nF,three\n", ["row 1", "'three' is not a count"]),
        ("sex,count\nF,-2\n", ["row 1", "negative"]),
        ("sex,count\nF,1\nF,2\n", ["row 2", "listed twice"]),
        ("sex,n\nF,1\n", ["column 'count' is not in the table"]),
    ],
)
def test_bad_tables_are_one_line(tmp_path, capsys, text, words):
    path = write(tmp_path, "t.csv", text)
    assert main(["audit", path, "--qi", "sex", "--count", "count"]) == EXIT_INPUT
    one_line_error(capsys, "'t.csv'", *words)


def test_inconsistent_tables_are_one_line(tmp_path, capsys):
    cross = write(tmp_path, "cross.csv", "sex,region,count\nF,N,3\nF,S,x\nM,N,2\nM,S,x\n")
    sex = write(tmp_path, "sex.csv", "sex,count\nF,2\nM,12\n")  # F >= 3 in the cross table
    assert main(["audit", cross, sex, "--qi", "sex", "region", "--count", "count"]) == EXIT_INPUT
    one_line_error(capsys, "disagree", "'cross.csv' row 1", "cross.csv, ")


def test_tables_that_disagree_on_the_total(two_by_two, tmp_path, capsys):
    other = write(tmp_path, "other.csv", "sex,count\nF,9\nM,6\n")
    argv = ["audit", two_by_two[0], two_by_two[1], other, "--qi", "sex", "region"]
    assert main([*argv, "--count", "count"]) == EXIT_INPUT
    one_line_error(capsys, "number of records", "'sex.csv' counts 14", "'other.csv' counts 15")


def test_a_qi_in_no_table(two_by_two, capsys):
    assert main(["audit", *two_by_two, "--qi", "sex", "zone", "--count", "count"]) == EXIT_INPUT
    one_line_error(capsys, "'zone'", "in none of the tables")
    # region left out of --qi: the cross table lists F twice; the message says why
    assert main(["audit", *two_by_two, "--qi", "sex", "--count", "count"]) == EXIT_INPUT
    one_line_error(capsys, "'cross.csv', row 2", "listed twice", "columns region are not read")


# ------------------------------------------------------------------ outputs
def test_outputs_are_never_an_input_nor_each_other(two_by_two, tmp_path, capsys):
    cross, sex = two_by_two
    before = Path(cross).read_bytes()
    argv = ["audit", cross, sex, "--qi", "sex", "region", "--count", "count"]
    assert main([*argv, "--out", cross]) == EXIT_INPUT
    one_line_error(capsys, "--out", "never overwrites an input")
    assert Path(cross).read_bytes() == before
    page = str(tmp_path / "same.html")
    assert main([*argv, "--html", page, "--out", str(tmp_path / "a.txt")]) == EXIT_INPUT
    one_line_error(capsys, "give a .csv file name")
    assert main([*argv, "--html", str(tmp_path / "a.csv")]) == EXIT_INPUT
    one_line_error(capsys, "give an .html file name")


def test_csv_and_page_are_one_unit(two_by_two, tmp_path, capsys):
    """The page's folder does not exist: exit 4, and the CSV is not written either."""
    out = tmp_path / "audit.csv"
    argv = ["audit", *two_by_two, "--qi", "sex", "region", "--count", "count"]
    page = tmp_path / "no" / "such" / "page.html"
    code = main([*argv, "--out", str(out), "--html", str(page)])
    assert code in (EXIT_INPUT, EXIT_OUTPUT)
    capsys.readouterr()
    assert not out.exists() and not page.exists()
    page = tmp_path / "page.html"
    assert main([*argv, "--out", str(out), "--html", str(page)]) == EXIT_OK
    text = page.read_text()
    assert "cross.csv" in text and "sex = F, region = S" in text
    assert out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_the_csv_is_spreadsheet_safe(tmp_path):
    cross = write(tmp_path, "c.csv", "who,count\n=cmd(),x\nB,2\n")
    total = write(tmp_path, "t.csv", "who,count\n=cmd(),3\nB,2\n")
    out = tmp_path / "a.csv"
    assert main(["audit", cross, total, "--qi", "who", "--count", "count", "--out", str(out)]) == 0
    assert "'=cmd()" in out.read_text()


# ------------------------------------------------------------------ report --tables
def test_report_tables_writes_the_page(two_by_three, tmp_path, capsys):
    out = tmp_path / "report.html"
    argv = ["report", *two_by_three, "--tables", "--qi", "row", "col", "--out", str(out)]
    assert main(argv) == EXIT_OK
    printed = capsys.readouterr().out
    # B/3 is 1 in every table (the B row is published whole): 14 of 18 records certain
    assert "3 tables, 18 records; 14 certain records, 4 of 6 combinations pinned" in printed
    assert f"report written to {out}" in printed
    page = out.read_text()
    assert "How much of the microdata is pinned" in page
    assert "<b>14</b> of the 18 records" in page
    assert "not proved" not in page.replace('"not proved"', "")


def test_report_tables_refuses_what_needs_people(two_by_three, tmp_path, capsys):
    argv = ["report", *two_by_three, "--tables", "--qi", "row", "col"]
    assert main([*argv, "--risk-out", str(tmp_path / "r.csv")]) == EXIT_INPUT
    one_line_error(capsys, "--risk-out needs people")
    assert main(["report", two_by_three[0], "--qi", "row", "col"]) == EXIT_INPUT
    one_line_error(capsys, "--sa", "unless --tables")


def test_report_tables_with_a_population(tmp_path, capsys):
    """Three people, p1 and p2 women, p3 a man; the table by sex and disease says the
    women have a and b, one each, the man b; the table by sex agrees with the register.
    p3 has b for certain; p1 and p2 each a or b, one half each."""
    table = write(tmp_path, "t.csv", "sex,disease,count\nF,a,1\nF,b,1\nM,b,1\n")
    by_sex = write(tmp_path, "s.csv", "sex,count\nF,2\nM,1\n")
    people = write(tmp_path, "people.csv", "pid,sex\np1,F\np2,F\np3,M\n")
    out, risk = tmp_path / "r.html", tmp_path / "r.csv"
    argv = ["report", table, by_sex, "--tables", "--qi", "sex", "--sa", "disease"]
    argv += ["--population", people, "--population-id", "pid", "--threshold", "0.6"]
    code = main([*argv, "--out", str(out), "--risk-out", str(risk)])
    assert code == EXIT_OK, capsys.readouterr().err
    assert "3 people, 2 releases" in capsys.readouterr().out
    frame = pd.read_csv(risk).set_index("pid").sort_index()
    assert frame.loc["p3", "value"] == "b"
    assert frame["maxent"].tolist() == pytest.approx([0.5, 0.5, 1.0])
    assert bool(frame.loc["p3", "at_risk"]) and not frame.loc[["p1", "p2"], "at_risk"].any()
    assert out.exists()
    # the population is an input: never written over
    assert main([*argv, "--risk-out", people]) == EXIT_INPUT
    one_line_error(capsys, "--risk-out", "the population file")
