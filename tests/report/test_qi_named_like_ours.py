"""Issue 39: QI columns named ``value`` or ``maxent`` were overwritten by the likeliest value
and its probability (the QI values lost). The risk table keeps them as ``release_value``
and ``release_maxent`` (the CSV, the HTML table); what reads the QI columns back (the
command's "at risk:" line, the figure's row labels) reads those, never the table's own
``value`` or ``maxent`` ("0.5 Flu 1 (Flu 0.5000)" before)."""

from __future__ import annotations

import pandas as pd
import pytest

import maxent_privacy.report.interval_plot as interval_plot
from maxent_privacy import Bucketized, MaxEntModel, datasets
from maxent_privacy.cli import main
from maxent_privacy.report import render_report
from maxent_privacy.report.risk import table_column

CLASH = {"gender": "maxent", "degree": "value"}


@pytest.fixture
def release_csv(tmp_path):
    path = tmp_path / "figure1.csv"
    datasets.du2008_figure1().drop(columns="name").rename(columns=CLASH).to_csv(path, index=False)
    return path


def test_the_command_keeps_and_prints_the_qi_values(release_csv, tmp_path, capsys):
    risk, page = tmp_path / "risk.csv", tmp_path / "r.html"
    argv = ["report", str(release_csv), "--qi", "maxent", "value", "--sa", "disease"]
    assert main([*argv, "--group", "bucket", "--risk-out", str(risk), "--out", str(page)]) == 0
    printed = capsys.readouterr().out
    assert (
        "at risk: female college 1 (Flu 0.5000), male college 1 (Flu 0.5000), "
        "male high school 1 (Flu 0.5000)"
    ) in printed
    table = pd.read_csv(risk)
    assert list(table.columns[:4]) == ["release_maxent", "release_value", "bucket", "records"]
    assert set(table["release_maxent"]) == {"male", "female"}
    assert set(table["release_value"]) == {"college", "high school", "junior", "graduate"}
    assert set(table["value"]) <= {"Flu", "HIV", "Pneumonia", "Breast Cancer", "Bronchitis"}
    html = page.read_text(encoding="utf-8")
    assert "<th>release_<wbr>maxent</th><th>release_<wbr>value</th>" in html
    assert "<td>female</td><td>college</td>" in html


def test_the_figure_labels_its_rows_by_the_qi_values(monkeypatch):
    frame = datasets.du2008_figure1().drop(columns="name").rename(columns=CLASH)
    result = MaxEntModel(Bucketized(frame, qi=["maxent", "value"], sa="disease", group="bucket"))
    labels = []
    real = interval_plot.plot_intervals

    def record(table, keys, threshold, ax, top=interval_plot.MAX_ROWS):
        labels.extend(interval_plot._label(row, keys) for _, row in table.head(top).iterrows())
        return real(table, keys, threshold, ax, top)

    monkeypatch.setattr(interval_plot, "plot_intervals", record)
    render_report(result.solve(), 0.5)
    assert labels == [
        "female, college: Flu",
        "male, college: Flu",
        "male, high school: Flu",
    ]  # was "0.5, Flu: Flu"


def test_table_column_names_the_release_s_column():
    frame = datasets.du2008_figure1().rename(columns=CLASH)
    model = MaxEntModel(Bucketized(frame, ["maxent", "value"], "disease", "bucket", "name"))
    table = model.solve().risk_table(0.5)
    assert [table_column(table, q) for q in ("maxent", "value", "bucket")] == [
        "release_maxent",
        "release_value",
        "bucket",
    ]
    assert table.set_index("name").loc["Cathy", "release_value"] == "college"
