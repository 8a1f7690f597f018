"""The report's scale of adversaries (issue 23, item 3): ``report --adversary learned``."""

import re

import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel, datasets
from maxent_privacy.cli import EXIT_OK, main
from maxent_privacy.report.adversary_scale import adversary_scale
from maxent_privacy.report.html import render_report

ROLES = ["--qi", "gender", "degree", "--sa", "disease", "--group", "bucket"]


def three_buckets():
    rows = pd.DataFrame(
        {
            "sex": list("FFMFMFMM"),
            "g": [1, 1, 1, 2, 2, 3, 3, 3],
            "s": ["flu", "flu", "hiv", "flu", "hiv", "flu", "hiv", "hiv"],
        }
    )
    return MaxEntModel(Bucketized(rows, qi=["sex"], sa="s", group="g"))


def test_counts_per_adversary_by_the_reports_rule():
    result = three_buckets().solve()
    rows = {r["adversary"]: r["at_risk"] for r in adversary_scale(result, 0.6)}
    # maximum entropy: 2/3 in buckets 1 and 3 for all six people there; learned: women go
    # with flu and men with hiv (0.706 for the majority, 0.588 for the minority)
    assert rows == {"maximum entropy": 6, "learned (deFinetti)": 4}
    rows = {r["adversary"]: r["at_risk"] for r in adversary_scale(result, 0.55)}
    assert rows == {"maximum entropy": 6, "learned (deFinetti)": 8}


def test_with_knowledge_the_releases_alone_come_first():
    model = three_buckets()
    model.add(model.P("flu", sex="F") >= 0.75, name="women")
    result = model.solve()
    rows = adversary_scale(result, 0.6, worst_case=7)
    assert [r["adversary"] for r in rows] == [
        "maximum entropy, releases alone",
        "maximum entropy",
        "learned (deFinetti)",
        "worst case",
    ]
    assert rows[0]["at_risk"] == 6 and rows[-1]["at_risk"] == 7
    assert rows[1]["at_risk"] >= rows[0]["at_risk"]


def test_the_page_has_the_section_only_when_asked():
    result = three_buckets().solve()
    assert 'id="adversaries"' not in render_report(result, 0.6)
    page = render_report(result, 0.6, adversary="learned")
    section = page[page.index('id="adversaries"') :]
    assert "learned (deFinetti)" in section
    with pytest.raises(ValueError, match=r"adversary must be 'maxent', .*, got 'bogus'"):
        render_report(result, 0.6, adversary="bogus")


def test_the_command_reports_the_learned_adversary(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    datasets.du2008_figure1().to_csv("in.csv", index=False)
    assert main(["report", "in.csv", *ROLES, "--adversary", "learned", "--out", "r.html"]) == (
        EXIT_OK
    )
    page = (tmp_path / "r.html").read_text()
    section = page[page.index('id="adversaries"') :]
    counts = re.findall(r'<td class="num">([\d,]+)</td>', section.split("</table>")[0])
    assert len(counts) == 3  # maximum entropy, learned, worst case
    assert all(0 <= int(c.replace(",", "")) <= 10 for c in counts)
    with pytest.raises(SystemExit) as caught:
        main(["report", "in.csv", *ROLES, "--adversary", "clever", "--out", "r.html"])
    assert caught.value.code == 2


def test_the_knowledge_file_s_name_has_one_keyword():
    """``knowledge`` means knowledge everywhere; the report's file name is knowledge_file
    (the old keyword still works, with a DeprecationWarning)."""
    model = three_buckets()
    model.add(model.P("hiv", sex="F") <= 0.9)
    result = model.solve()
    page = render_report(result, 0.6, knowledge_file="facts.txt")
    assert "facts.txt" in page
    with pytest.warns(DeprecationWarning, match="knowledge= is deprecated; use knowledge_file="):
        old = render_report(result, 0.6, knowledge="facts.txt")
    assert "facts.txt" in old
