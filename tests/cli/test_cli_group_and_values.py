"""``report``'s inputs checked before anything is solved (issue 39, items 2 and 7): a file
with a group column reported without ``--group`` is an error naming the column (it was
read as ARX classes of identical QI rows: exit 0, a wrong answer), ``--group auto``
derives the classes explicitly; ``--nonsensitive`` names values of the sensitive column
(a typo is an error with "did you mean"), and not all of them."""

from __future__ import annotations

import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel, datasets
from maxent_privacy._validation import ArgumentError
from maxent_privacy.cli import main

ROLES = ["--qi", "gender", "degree", "--sa", "disease"]


@pytest.fixture
def anatomy(tmp_path):
    """Figure 1 of Du et al. as an Anatomy file: exact QI and a ``group`` column."""
    frame = datasets.du2008_figure1().rename(columns={"bucket": "group"})
    path = tmp_path / "anatomy.csv"
    frame.drop(columns="name").to_csv(path, index=False)
    return path


def run(capsys, *argv) -> tuple[int, str]:
    code = main(list(map(str, argv)))
    return code, capsys.readouterr().err


def test_a_group_column_without_group_is_an_error(anatomy, tmp_path, capsys):
    out = tmp_path / "r.html"
    code, err = run(capsys, "report", anatomy, *ROLES, "--out", out)
    assert code == 2 and not out.exists()
    assert err.count("\n") == 1
    assert "no --group given but the file has a group column 'group'" in err
    assert "--group group" in err and "--group auto" in err


def test_bucket_column_any_case_is_named_too(tmp_path, capsys):
    frame = datasets.du2008_figure1().rename(columns={"bucket": "Bucket-ID"})
    path = tmp_path / "b.csv"
    frame.to_csv(path, index=False)
    code, err = run(capsys, "report", path, *ROLES, "--out", tmp_path / "r.html")
    assert code == 2 and "group column 'Bucket-ID'" in err


def test_group_auto_derives_the_classes_explicitly(anatomy, tmp_path, capsys):
    """The 10 rows of Figure 1 have 6 distinct (gender, degree) pairs: 6 classes."""
    out = tmp_path / "r.html"
    code, err = run(capsys, "report", anatomy, *ROLES, "--group", "auto", "--out", out)
    assert code == 0 and out.exists()
    assert "--group auto: its equivalence classes are the rows with identical QI cells " in err
    assert "(6 classes, numbered in column 'class')" in err


def test_group_given_reads_the_buckets(anatomy, tmp_path, capsys):
    out = tmp_path / "r.html"
    code, _ = run(capsys, "report", anatomy, *ROLES, "--group", "group", "--out", out)
    assert code == 0 and out.exists()


def test_nonsensitive_typo_is_an_error_with_did_you_mean(anatomy, tmp_path, capsys):
    """``--nonsensitive Pneumonai`` exited 0 and excluded nothing."""
    out = tmp_path / "r.html"
    argv = ["report", anatomy, *ROLES, "--group", "group", "--out", out]
    code, err = run(capsys, *argv, "--nonsensitive", "Flu", "Pneumonai")
    assert code == 2 and not out.exists()
    assert err == (
        "error: --nonsensitive value 'Pneumonai' is not a value of the sensitive column "
        "'disease' (did you mean 'Pneumonia'?)\n"
    )


def test_nonsensitive_naming_every_value_is_one_line(anatomy, tmp_path, capsys):
    """Was an IndexError (a traceback)."""
    values = ["Breast Cancer", "Flu", "HIV", "Lung Cancer", "Pneumonia"]
    argv = ["report", anatomy, *ROLES, "--group", "group", "--out", tmp_path / "r.html"]
    code, err = run(capsys, *argv, "--nonsensitive", *values)
    assert code == 2
    assert err == (
        "error: --nonsensitive names every value of the sensitive column 'disease' "
        "(5 values): at least one must stay sensitive\n"
    )


def test_risk_table_checks_nonsensitive_in_the_api_too(tmp_path):
    release = Bucketized(datasets.du2008_figure1(), ["gender", "degree"], "disease", "bucket")
    result = MaxEntModel(release).solve()
    with pytest.raises(ArgumentError, match=r"^nonsensitive value 'Influenzza' is not a value"):
        result.risk_table(0.5, nonsensitive=["Influenzza"])
    every = sorted(datasets.du2008_figure1()["disease"].unique())
    with pytest.raises(ArgumentError, match="names every value"):
        result.risk_table(0.5, nonsensitive=every)
    with pytest.raises(ArgumentError, match="names every value"):
        result.report(tmp_path / "r.html", 0.5, nonsensitive=every)
    table = result.risk_table(0.5, nonsensitive="Flu")  # one value, as text
    assert table.attrs["nonsensitive"] == ("Flu",)
    assert "Flu" not in set(table["value"].dropna())
    assert isinstance(table, pd.DataFrame)


def test_reproduce_names_the_population_file_and_runs(tmp_path, capsys, monkeypatch):
    """``report --population``: the page's Python reads the release and the population
    files the command read (it was ``mp.MaxEntModel(...)``, which cannot run)."""
    import html
    import re

    release = pd.DataFrame(
        {
            "age": ["20-29", "20-29", "30-39", "30-39"],
            "zip": ["021**", "021**", "022**", "022**"],
            "d": ["Flu", "HIV", "Cold", "Cold"],
            "g": [1, 1, 2, 2],
        }
    )
    people = pd.DataFrame(
        {"name": list("ABCD"), "age": [21, 25, 33, 37], "zip": ["02139", "02138", "02215", "02216"]}
    )
    release.to_csv(tmp_path / "arx.csv", index=False)
    people.to_csv(tmp_path / "people.csv", index=False)
    monkeypatch.chdir(tmp_path)
    argv = ["report", "arx.csv", "--qi", "age", "zip", "--sa", "d", "--group", "g"]
    code, _ = run(capsys, *argv, "--population", "people.csv", "--out", "page.html")
    assert code == 0
    page = (tmp_path / "page.html").read_text()
    code = html.unescape(re.findall(r"<pre>(.*?)</pre>", page, flags=re.S)[-1])
    assert "pop1 = pd.read_csv('people.csv', dtype=str).set_index('name')" in code
    exec(compile(code, "reproduce", "exec"), {})
    risk = pd.read_csv(tmp_path / "risk.csv")
    assert sorted(risk["name"]) == ["A", "B", "C", "D"]
    assert risk.set_index("name").loc[["C", "D"], "maxent"].tolist() == [1.0, 1.0]  # Cold
