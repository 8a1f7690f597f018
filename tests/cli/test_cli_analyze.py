"""``maxent-privacy analyze``: CSV in, knowledge file, posterior out (CSV or JSON)."""

import json

import pandas as pd
import pytest

from maxent_privacy import datasets
from maxent_privacy.cli import main

KNOWLEDGE = (
    "# Du et al. Figure 1\n"
    'P(disease = "Breast Cancer" | gender = "male") = 0\n'
    'name "flu": P(disease = "Flu" | gender = "male") <= 0.6\n'
)


@pytest.fixture
def release_csv(tmp_path):
    path = tmp_path / "release.csv"
    datasets.du2008_figure1().to_csv(path, index=False)
    return path


def run(release_csv, *extra):
    argv = ["analyze", str(release_csv), "--qi", "gender", "degree", "--sa", "disease"]
    return main(argv + ["--group", "bucket", *extra])


def test_csv_output(release_csv, tmp_path, capsys):
    facts = tmp_path / "facts.txt"
    facts.write_text(KNOWLEDGE)
    out = tmp_path / "posterior.csv"
    assert run(release_csv, "--knowledge", str(facts), "--out", str(out)) == 0
    text = capsys.readouterr().out
    lines = text.strip().splitlines()
    assert lines[-1] == f"posterior written to {out}"
    assert "10 records, 3 groups; 2 facts from" in lines[0]
    [cert] = [line for line in lines if line.startswith("certificate: residual ")]
    assert "entropy 0.659167 nats/record" in cert
    assert '  P(disease = "Breast Cancer" | gender = "male") = 0: nan' in lines
    assert "  flu: 0" in lines

    table = pd.read_csv(out, dtype={"gender": str, "degree": str})
    assert list(table.columns) == [
        "gender",
        "degree",
        "Breast Cancer",
        "Flu",
        "HIV",
        "Lung Cancer",
        "Pneumonia",
    ]
    assert len(table) == 6
    table = table.set_index(["gender", "degree"])
    assert table.loc[("female", "junior"), "Breast Cancer"] == 1.0
    assert table.loc[("female", "college"), "Breast Cancer"] == pytest.approx(0.5, abs=1e-12)
    assert table.loc[("male", "college"), "Flu"] == pytest.approx(4 / 9, abs=1e-9)
    assert table.sum(axis=1).to_numpy() == pytest.approx(1.0, abs=1e-12)


def test_json_output_by_group(release_csv, tmp_path, capsys):
    facts = tmp_path / "facts.txt"
    facts.write_text(KNOWLEDGE)
    out = tmp_path / "posterior.json"
    code = run(release_csv, "--knowledge", str(facts), "--out", str(out), "--by", "group")
    assert code == 0
    records = json.loads(out.read_text())
    assert len(records) == 9
    assert list(records[0]) == [
        "gender",
        "degree",
        "bucket",
        "Breast Cancer",
        "Flu",
        "HIV",
        "Lung Cancer",
        "Pneumonia",
    ]
    by_key = {(r["gender"], r["degree"], r["bucket"]): r for r in records}
    assert by_key[("female", "junior", "2")]["Breast Cancer"] == 1.0
    assert by_key[("female", "college", "1")]["Breast Cancer"] == 1.0
    assert by_key[("male", "college", "1")]["Flu"] == pytest.approx(2 / 3, abs=1e-9)
    assert capsys.readouterr().out.strip().endswith(f"posterior written to {out}")


def test_without_out_prints_the_posterior(release_csv, capsys):
    assert run(release_csv) == 0
    text = capsys.readouterr().out
    assert "no knowledge file" in text
    assert "closed form" in text and "certificate: residual" in text
    assert "posterior P(disease | QI):" in text
    assert "junior" in text and "written" not in text


def test_persons_from_the_pseudonym_column(release_csv, tmp_path, capsys):
    facts = tmp_path / "facts.txt"
    facts.write_text(
        'person Ethan\nperson Grace\nP(Ethan has "HIV") = 1\n'
        'count("Breast Cancer" among Ethan, Grace) = 1\n'
    )
    assert run(release_csv, "--person", "name", "--knowledge", str(facts)) == 0
    text = capsys.readouterr().out
    assert "P(disease | person):" in text
    assert 'count("Breast Cancer" among Ethan, Grace) = 1: ' in text


def test_bad_knowledge_file(release_csv, tmp_path, capsys):
    facts = tmp_path / "facts.txt"
    facts.write_text(KNOWLEDGE + 'P(disease = "Flu" | gender = "male" = 0.3\n')
    out = tmp_path / "posterior.csv"
    assert run(release_csv, "--knowledge", str(facts), "--out", str(out)) == 2
    captured = capsys.readouterr()
    assert captured.err == f"error: {facts}:4:37: expected ')' to close P( (near '=')\n"
    assert captured.out == ""
    assert not out.exists()


def test_knowledge_that_does_not_fit_the_release(release_csv, tmp_path, capsys):
    facts = tmp_path / "facts.txt"
    facts.write_text('P(disease = "Flu" | sex = "male") = 0.3\n')
    out = tmp_path / "posterior.json"
    assert run(release_csv, "--knowledge", str(facts), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {facts}:1:21: unknown quasi-identifier 'sex'")
    assert err.count("\n") == 1
    assert not out.exists()


def test_infeasible_knowledge(release_csv, tmp_path, capsys):
    facts = tmp_path / "facts.txt"
    facts.write_text(
        'P(disease = "Flu" | gender = "male") = 0.3\n'
        'name "more flu": P(disease = "Flu" | gender = "male") = 0.5\n'
    )
    out = tmp_path / "posterior.csv"
    assert run(release_csv, "--knowledge", str(facts), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "cannot hold together" in err and "more flu" in err
    # the error line, then a table: each conflicting fact and how far it must move
    lines = err.splitlines()
    assert len(lines) == 4 and lines[1].split() == ["fact", "move", "by", "nearest", "value",
                                                    "that", "holds"]  # fmt: skip
    assert lines[2].split()[-2:] == ["0.2", "0.5"] and lines[3].split()[-2:] == ["0.2", "0.3"]
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--solver", "NO_SUCH_SOLVER"], "solver 'NO_SUCH_SOLVER' is not installed"),
        (["--out", "posterior.xlsx"], "give a .csv or .json file name"),
        (["--knowledge", "missing-facts.txt"], "No such file"),
    ],
)
def test_usage_errors(release_csv, tmp_path, capsys, monkeypatch, extra, words):
    monkeypatch.chdir(tmp_path)
    assert run(release_csv, *extra) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: ") and words in captured.err
    assert captured.err.count("\n") == 1 and captured.out == ""
    assert not (tmp_path / "posterior.xlsx").exists()


def test_bad_column_and_missing_file(release_csv, tmp_path, capsys):
    code = main(
        ["analyze", str(release_csv), "--qi", "gender", "degre", "--sa", "disease",
         "--group", "bucket"]
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: quasi-identifier column 'degre' is not in the table")
    assert run(tmp_path / "nope.csv") == 2
    assert "nope.csv" in capsys.readouterr().err


def test_numeric_qi_read_as_text(tmp_path, capsys):
    path = tmp_path / "ages.csv"
    path.write_text("age,disease,bucket\n30,Flu,1\n30,HIV,1\n40,Flu,1\n40,HIV,1\n")
    facts = tmp_path / "facts.txt"
    facts.write_text('P(disease = "Flu" | age = 30) = 1\n')
    out = tmp_path / "p.json"
    argv = ["analyze", str(path), "--qi", "age", "--sa", "disease", "--group", "bucket"]
    assert main(argv + ["--knowledge", str(facts), "--out", str(out)]) == 0
    records = json.loads(out.read_text())
    assert records == [
        {"age": "30", "Flu": pytest.approx(1.0, abs=1e-9), "HIV": pytest.approx(0, abs=1e-9)},
        {"age": "40", "Flu": pytest.approx(0, abs=1e-9), "HIV": pytest.approx(1.0, abs=1e-9)},
    ]
