"""Degenerate releases are answers, not crashes (issue 39, item 4): one bucket, one QI
value, one sensitive value, one person, through the risk table, the page (with the
learned adversary's scale) and the command line."""

from __future__ import annotations

import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel
from maxent_privacy.cli import main
from maxent_privacy.report.html import render_report
from maxent_privacy.report.risk import risk_table

CASES = {
    "one bucket": (
        pd.DataFrame({"id": [1, 2, 3, 4, 5], "age": [30, 31, 32, 33, 34],
                      "d": ["flu", "flu", "flu", "hiv", "cold"], "g": [1] * 5}),
        [0.6] * 5,
    ),
    "one QI value": (
        pd.DataFrame({"id": [1, 2, 3, 4], "age": [30] * 4, "d": ["flu", "hiv", "flu", "cold"],
                      "g": [1, 1, 2, 2]}),
        [0.5] * 4,
    ),
    "one sensitive value": (
        pd.DataFrame({"id": [1, 2, 3], "age": [30, 40, 50], "d": ["flu"] * 3, "g": [1, 1, 2]}),
        [1.0] * 3,
    ),
    "one person": (pd.DataFrame({"id": [1], "age": [30], "d": ["flu"], "g": [1]}), [1.0]),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_the_risk_table_and_the_page(case):
    frame, maxent = CASES[case]
    result = MaxEntModel(Bucketized(frame, ["age"], "d", "g", person="id")).solve()
    table = risk_table(result, 0.5)
    assert table["maxent"].tolist() == pytest.approx(maxent)
    assert (table["lower"] <= table["maxent"] + 1e-9).all()
    assert (table["maxent"] <= table["upper"] + 1e-9).all()
    page = render_report(result, 0.5, adversary="learned")
    assert "learned (deFinetti)" in page[page.index('id="adversaries"') :]


@pytest.mark.parametrize("case", list(CASES))
def test_the_command(case, tmp_path, monkeypatch, capsys):
    frame, _ = CASES[case]
    monkeypatch.chdir(tmp_path)
    frame.to_csv("r.csv", index=False)
    args = ["report", "r.csv", "--qi", "age", "--sa", "d", "--group", "g", "--person", "id",
            "--adversary", "learned", "--out", "r.html", "--risk-out", "risk.csv"]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    risk = pd.read_csv("risk.csv")
    assert len(risk) == len(frame)
    assert "adversary learned (deFinetti)" in capsys.readouterr().out
