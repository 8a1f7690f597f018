"""The report of tables and a population says how to reproduce it in Python: tables read
as ``Tabulated`` (not as releases), and the snippet runs to the same posteriors."""

from __future__ import annotations

import html
import re

import pandas as pd
import pytest

from maxent_privacy import datasets
from maxent_privacy.cli import main


def test_the_python_snippet_reads_tables_and_runs(tmp_path, monkeypatch):
    frame = datasets.du2008_figure1()
    counts = frame.groupby(["gender", "disease"]).size().rename("count").reset_index()
    counts.to_csv(tmp_path / "g.csv", index=False)
    frame[["name", "gender", "degree"]].to_csv(tmp_path / "pop.csv", index=False)
    monkeypatch.chdir(tmp_path)
    code = main(["report", "g.csv", "--tables", "--qi", "gender", "--sa", "disease",
                 "--count", "count", "--population", "pop.csv", "--person", "name",
                 "--out", "page.html"])  # fmt: skip
    assert code == 0
    page = html.unescape(re.sub(r"<[^>]+>", "", (tmp_path / "page.html").read_text()))
    snippet = page.split("From Python:", 1)[1].strip().split("\n\n")[0]
    assert "mp.Tabulated(" in snippet and "mp.Generalized(" not in snippet
    snippet = snippet.replace("report.html", "again.html").replace("risk.csv", "again.csv")
    namespace: dict = {}
    exec(compile(snippet, "snippet", "exec"), namespace)  # noqa: S102
    posterior = namespace["result"].person_posterior()
    women = frame.loc[frame["gender"] == "female", "disease"].value_counts(normalize=True)
    for value, share in women.items():
        assert posterior.loc["Cathy", value] == pytest.approx(share, abs=1e-6)
    assert isinstance(posterior, pd.DataFrame)
