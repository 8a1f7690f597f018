"""Issue 39: the terminal summary of ``maxent-privacy report`` omitted the worst-case count
and the learned adversary's count. It prints every count the page shows: people, classes
and QI values at risk, the worst case, the certain among the certified and those not
checked, and each adversary of the scale (``--adversary learned``), the page's own
numbers."""

from __future__ import annotations

import re

import pytest

from maxent_privacy import datasets
from maxent_privacy.cli import main
from maxent_privacy.report import row_bounds as rb

ROLES = ["--qi", "gender", "degree", "--sa", "disease", "--group", "bucket", "--person", "name"]


@pytest.fixture
def figure1(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    datasets.du2008_figure1().to_csv("in.csv", index=False)
    (tmp_path / "facts.txt").write_text('P(disease = "Breast Cancer" | gender = "male") = 0\n')
    return ["report", "in.csv", *ROLES, "--knowledge", "facts.txt", "--threshold", "0.99"]


def adversary_counts(page: str) -> dict:
    section = page[page.index('id="adversaries"') :].split("</table>")[0]
    rows = re.findall(r"<tr><td>([^<]+)</td><td>[^<]*</td><td class=\"num\">([\d,]+)</td>", section)
    return {name: int(n.replace(",", "")) for name, n in rows}


def test_the_summary_prints_every_count_of_the_page(figure1, tmp_path, capsys):
    assert main([*figure1, "--adversary", "learned", "--out", "r.html"]) == 0
    printed = capsys.readouterr().out
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "2 of 10 people at risk under the maximum-entropy estimate" in printed
    assert "2 of 9 (QI value, group) classes; 1 of 6 QI values" in printed
    # Cathy and Grace hold Breast Cancer in every table; the 8 others may hold theirs
    assert "worst case: 10 of 10 people at risk in the worst case" in printed
    assert (
        "certain: 2 certain among the 10 people certified (the same value in every possible "
        "table), 8 for whom it is merely possible"
    ) in printed
    assert "not checked" not in printed  # every row certified: nothing left out
    for card, n in [("people-at-risk", "2 of 10"), ("classes-at-risk", "2 of 9"),
                    ("qi-at-risk", "1 of 6"), ("worst-case", "10")]:  # fmt: skip
        assert page[page.index(f'id="{card}"') :].split("</div>")[0].endswith(f'"n">{n}')
    assert re.search(r'id="certain"><b>2</b> certain among the\s+<b>10</b> people', page)
    counts = adversary_counts(page)
    assert set(counts) == {
        "maximum entropy, releases alone",
        "maximum entropy",
        "learned (deFinetti)",
        "worst case",
    }
    for name, n in counts.items():  # the page's numbers, not computed again
        assert f"adversary {name}: {n:,} of 10 people at risk" in printed
    assert counts["maximum entropy"] == 2 and counts["worst case"] == 10


def test_rows_not_checked_are_said_with_the_certain(figure1, capsys, monkeypatch):
    monkeypatch.setattr(rb, "AUTO_SECONDS", 0.0)
    assert main([*figure1, "--out", "r.html"]) == 0
    printed = capsys.readouterr().out
    # Cathy and Grace are certain without an LP; the 8 others are not checked
    assert "certain: 2 certain among the 2 people certified" in printed
    assert "; 8 not checked (use --bounds all)" in printed
    assert "adversary" not in printed  # no scale asked for


def test_without_bounds_no_worst_case_line(figure1, capsys):
    assert main([*figure1, "--bounds", "none", "--out", "r.html"]) == 0
    printed = capsys.readouterr().out
    assert "worst case" not in printed and "certain:" not in printed
    assert "2 of 10 people at risk" in printed


def test_no_bar_on_a_file_or_a_pipe(figure1, capsys, monkeypatch):
    """Issue 39: the solve's and the bounds' own bars were drawn on standard error when
    it was a file or a pipe, against --progress's help ('default: when it is a
    terminal'). With the thresholds at 0 every inner bar would show; none may."""
    from maxent_privacy.bounds import progress as bounds_progress
    from maxent_privacy.solve import tolerances as tl

    monkeypatch.setattr(tl, "PROGRESS_NEWTON_CELLS", 0)
    monkeypatch.setattr(tl, "PROGRESS_CELLS", 0)
    monkeypatch.setattr(tl, "PROGRESS_COMPONENTS", 0)
    monkeypatch.setattr(bounds_progress, "PROGRESS_LP_CELLS", 0)
    assert main([*figure1, "--out", "r.html"]) == 0
    err = capsys.readouterr().err
    assert "|" not in err and "it/s" not in err and "maxent" not in err, err
