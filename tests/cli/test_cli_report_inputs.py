"""Issue 22, items 4 and 6 and the publisher's list, from the command line: ``report`` reads
every release kind as ``analyze`` does (``--population``, ``--population-id``,
``--formats``), refuses a Mondrian file without its population, derives the equivalence
classes of an ARX file without a group column, reads CSV cells as written (``NA`` is
Namibia), names a repeated header by its name, counts stated facts, keeps the release's
columns apart from its own, and suggests the option meant."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import datasets
from maxent_privacy.anonymize.mondrian import mondrian
from maxent_privacy.cli import main
from maxent_privacy.cli.inputs import read_release_csv

ROLES = ["--qi", "age", "zip", "--sa", "disease"]


@pytest.fixture(scope="module")
def mondrian_files(tmp_path_factory):
    """60 people, Mondrian on (age, zip): our file (cells ``[42-55]``, ``{02181, 02420}``,
    with its group column), the same release ARX-style (no group column) and the
    population."""
    folder = tmp_path_factory.mktemp("mondrian")
    rng = np.random.default_rng(1)
    n = 60
    people = pd.DataFrame(
        {
            "pid": [f"p{i:02d}" for i in range(n)],
            "age": rng.integers(18, 70, n),
            "zip": rng.choice(["02181", "02420", "02139", "02141"], n),
        }
    )
    table = people.assign(disease=rng.choice(["Flu", "HIV", "Cold", "Asthma"], n))
    frame = mondrian(table, ["age", "zip"], "disease", k=4, c=0.6).frame
    paths = {name: folder / f"{name}.csv" for name in ("mondrian", "arx", "people")}
    frame[["age", "zip", "disease", "group"]].to_csv(paths["mondrian"], index=False)
    frame[["age", "zip", "disease"]].to_csv(paths["arx"], index=False)
    people.to_csv(paths["people"], index=False)
    return paths


def test_report_refuses_a_mondrian_file_without_its_population(mondrian_files, tmp_path, capsys):
    out = tmp_path / "r.html"
    argv = ["report", str(mondrian_files["mondrian"]), *ROLES, "--group", "group"]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "holds generalized cells such as" in err and "needs its population" in err
    assert "--population FILE" in err and not out.exists()
    # analyze says the same
    assert main(["analyze", str(mondrian_files["mondrian"]), *ROLES, "--group", "group"]) == 2
    assert "needs its population" in capsys.readouterr().err


def test_report_a_mondrian_release_with_its_population(mondrian_files, tmp_path, capsys):
    out, risk = tmp_path / "r.html", tmp_path / "r.csv"
    argv = ["report", str(mondrian_files["mondrian"]), *ROLES, "--group", "group"]
    argv += ["--population", str(mondrian_files["people"]), "--population-id", "pid"]
    assert main([*argv, "--out", str(out), "--risk-out", str(risk)]) == 0
    assert "60 people, 1 release" in capsys.readouterr().out
    table = pd.read_csv(risk, dtype={"zip": str})
    assert len(table) == 60 and table["pid"].is_unique
    assert {"value", "maxent", "lower", "upper", "at_risk"} <= set(table.columns)
    assert table["zip"].str.len().eq(5).all()  # exact zip codes from the population
    assert "generalized" in out.read_text()


def test_report_an_arx_file_without_group_column(mondrian_files, tmp_path, capsys):
    """ARX writes no group column: the classes are the rows with identical QI cells; the
    answer is the one of the file with Mondrian's own groups."""
    risks = {}
    for name, extra in (("arx", []), ("mondrian", ["--group", "group"])):
        risk = tmp_path / f"{name}.csv"
        argv = ["report", str(mondrian_files[name]), *ROLES, *extra]
        argv += ["--population", str(mondrian_files["people"]), "--risk-out", str(risk)]
        assert main(argv) == 0, capsys.readouterr().err
        risks[name] = pd.read_csv(risk).set_index("pid").sort_index()
        err = capsys.readouterr().err
        if name == "arx":
            assert "no --group given" in err and "rows with identical QI cells" in err
        else:
            assert "no --group" not in err
    cols = ["value", "maxent", "lower", "upper"]
    pd.testing.assert_frame_equal(risks["arx"][cols], risks["mondrian"][cols])


def test_report_formats_none_reads_cells_as_labels(mondrian_files, tmp_path, capsys):
    argv = ["report", str(mondrian_files["mondrian"]), *ROLES, "--group", "group"]
    argv += ["--formats", "none", "--risk-out", str(tmp_path / "r.csv")]
    assert main(argv) == 0
    assert "60 people" in capsys.readouterr().out


def test_report_help_names_its_columns_and_options(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for word in ("lower", "upper", "--population", "--population-id", "--formats", "--na"):
        assert word in text, word


# ------------------------------------------------------------------ did you mean
@pytest.mark.parametrize(
    "typo, meant",
    [("--treshold", "--threshold"), ("--risk-uot", "--risk-out"), ("--knowlege", "--knowledge")],
)
def test_a_typo_gets_a_suggestion(typo, meant, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["report", "r.csv", "--qi", "a", "--sa", "s", typo, "x"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"unrecognized arguments: {typo}" in err and f"did you mean '{meant}'?" in err


def test_a_typo_in_a_choice_or_command_gets_a_suggestion(capsys):
    with pytest.raises(SystemExit):
        main(["reprot", "r.csv"])
    assert "did you mean 'report'?" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["analyze", "r.csv", "--qi", "a", "--sa", "s", "--group", "g", "--formats", "our"])
    assert "did you mean 'ours'?" in capsys.readouterr().err


def test_no_suggestion_when_nothing_is_near(capsys):
    with pytest.raises(SystemExit):
        main(["report", "r.csv", "--qi", "a", "--sa", "s", "--zzzzzzzz"])
    assert "did you mean" not in capsys.readouterr().err


# ------------------------------------------------------------------ reading CSV cells
def test_na_none_null_are_values(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("country,disease,g\nNA,None,1\nnull,Flu,1\nNaN,n/a,2\n,Flu,2\n")
    frame = read_release_csv(path)
    assert frame["country"].tolist()[:3] == ["NA", "null", "NaN"]
    assert frame["disease"].tolist() == ["None", "Flu", "n/a", "Flu"]
    assert pd.isna(frame.loc[3, "country"])  # the empty cell is the only missing marker
    more = read_release_csv(path, na=["null", "n/a"])
    assert pd.isna(more.loc[1, "country"]) and pd.isna(more.loc[2, "disease"])
    assert more.loc[0, "country"] == "NA"


def test_namibia_is_a_country_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "r.csv"
    rows = ["country,disease,g", "NA,Flu,1", "NA,HIV,1", "ZA,Flu,2", "ZA,None,2"]
    path.write_text("\n".join(rows) + "\n")
    argv = ["analyze", str(path), "--qi", "country", "--sa", "disease", "--group", "g"]
    assert main(argv) == 0
    assert "NA" in capsys.readouterr().out
    assert main([*argv, "--na", "NA"]) == 2  # declared missing: refused as missing
    assert "missing" in capsys.readouterr().err


def test_a_repeated_header_is_named_as_written(tmp_path, capsys):
    path = tmp_path / "r.csv"
    path.write_text("q,disease,g,disease\na,Flu,1,x\nb,HIV,1,y\n")
    argv = ["report", str(path), "--qi", "q", "--sa", "disease", "--group", "g"]
    assert main([*argv, "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "column 'disease' twice (fields 2 and 4)" in err
    assert "disease.1" not in err


def test_a_repeated_header_in_a_compressed_file(tmp_path):
    path = tmp_path / "r.csv.gz"
    pd.DataFrame([["a", "Flu", 1, "x"]], columns=["q", "d", "g", "d"]).to_csv(path, index=False)
    with pytest.raises(Exception, match="names column 'd' more than once"):
        read_release_csv(path)


def test_a_semicolon_file_says_what_it_should_be(tmp_path, capsys):
    path = tmp_path / "r.csv"
    path.write_text("q;disease;g\na;Flu;1\n")
    assert main(["report", str(path), "--qi", "q", "--sa", "disease", "--group", "g"]) == 2
    err = capsys.readouterr().err
    assert "looks semicolon-separated; a release is comma-separated" in err
    assert "None" not in err


# ------------------------------------------------------------------ the risk table
def test_records_group_column_with_person_is_not_a_weight(tmp_path, capsys):
    """A group column named ``records`` with ``--person``: 4 people, not '6 of 6'."""
    path = tmp_path / "r.csv"
    frame = pd.DataFrame(
        {
            "pid": ["a", "b", "c", "d"],
            "q": ["x", "x", "y", "y"],
            "disease": ["Flu", "Flu", "HIV", "Flu"],
            "records": [1, 1, 5, 5],
        }
    )
    frame.to_csv(path, index=False)
    risk = tmp_path / "risk.csv"
    argv = ["report", str(path), "--qi", "q", "--sa", "disease", "--group", "records"]
    assert main([*argv, "--person", "pid", "--risk-out", str(risk)]) == 0
    out = capsys.readouterr()
    assert "4 people" in out.out and "of 4 people" in out.out
    assert "of 6 people" not in out.out and "of 12 people" not in out.out
    table = pd.read_csv(risk)
    assert "release_records" in table.columns and "records" not in table.columns
    assert "'records' is shown as 'release_records'" in out.err


@pytest.mark.parametrize("clash", ["value", "maxent"])
def test_qi_named_like_a_risk_column_is_kept(clash, tmp_path, capsys):
    release = datasets.du2008_figure1().rename(columns={"degree": clash})
    path, risk = tmp_path / "r.csv", tmp_path / "risk.csv"
    release.to_csv(path, index=False)
    argv = ["report", str(path), "--qi", "gender", clash, "--sa", "disease", "--group", "bucket"]
    assert main([*argv, "--person", "name", "--risk-out", str(risk)]) == 0
    table = pd.read_csv(risk).set_index("name")
    assert table.loc["Allen", f"release_{clash}"] == "college"  # the QI value, kept
    assert table.loc["Allen", "value"] == "Flu"  # the table's own column
    assert 0 < table.loc["Allen", "maxent"] < 1


def test_a_vague_statement_counts_once(tmp_path, capsys):
    path, facts, out = tmp_path / "r.csv", tmp_path / "facts.txt", tmp_path / "r.html"
    datasets.du2008_figure1().to_csv(path, index=False)
    facts.write_text(
        'P(disease = "Flu" | gender = "male") = 0.4 +- 0.1\n'
        'P(disease = "HIV" | gender = "male") <= 0.5\n'
        'P(disease = "Breast Cancer" | gender = "male") = 0\n'
        'P(disease = "Pneumonia" | gender = "female") <= 0.8\n'
        'P(disease = "HIV") <= 0.9\n'
    )
    argv = ["report", str(path), "--qi", "gender", "degree", "--sa", "disease"]
    argv += ["--group", "bucket", "--knowledge", str(facts), "--out", str(out)]
    assert main(argv) == 0
    assert f"5 facts from {facts}" in capsys.readouterr().out
    page = " ".join(out.read_text().split())
    assert "5 stated facts" in page and "6 stated facts" not in page
    assert "is between 30% and 50%" in page


def test_report_never_writes_over_its_population(mondrian_files, tmp_path, capsys):
    people = tmp_path / "people.csv"
    people.write_bytes(mondrian_files["people"].read_bytes())
    before = people.read_bytes()
    argv = ["report", str(mondrian_files["mondrian"]), *ROLES, "--group", "group"]
    assert main([*argv, "--population", str(people), "--risk-out", str(people)]) == 2
    assert "population" in capsys.readouterr().err
    assert people.read_bytes() == before
