"""Who is at risk: ``result.risk_table``, ``result.report`` and ``maxent-privacy report``.

The acceptance test of issue 15 is Du et al.'s Figure 1 with the names as person ids and
P(Breast Cancer | male) = 0 at threshold 0.99: exactly Cathy and Grace are at risk, with
Breast Cancer at 1.0. The HTML report is checked in a real browser (headless Chromium)
when one is installed.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd
import pytest
from browser import CHROMIUM, chromium
from paper_models import figure1_result

from maxent_privacy import Bucketized, MaxEntModel, datasets, metrics
from maxent_privacy._validation import ArgumentError
from maxent_privacy.cli import main
from maxent_privacy.report import render_report, risk_summary, risk_table

ROLES = ["--qi", "gender", "degree", "--sa", "disease", "--group", "bucket"]
FACT = 'P(disease = "Breast Cancer" | gender = "male") = 0\n'


@pytest.fixture
def files(tmp_path):
    release = tmp_path / "figure1.csv"
    datasets.du2008_figure1().to_csv(release, index=False)
    facts = tmp_path / "facts.txt"
    facts.write_text(FACT)
    return release, facts


# ------------------------------------------------------------------------ acceptance
def test_figure1_report_from_the_command_line(files, tmp_path, capsys):
    release, facts = files
    out, risk = tmp_path / "report.html", tmp_path / "risk.csv"
    argv = ["report", str(release), *ROLES, "--person", "name", "--knowledge", str(facts)]
    argv += ["--threshold", "0.99", "--out", str(out), "--risk-out", str(risk)]
    assert main(argv) == 0

    table = pd.read_csv(risk)
    assert list(table.columns) == [
        "name", "gender", "degree", "bucket", "value", "maxent", "lower", "upper", "certified",
        "at_risk", "tied", "identity",
    ]  # fmt: skip
    assert len(table) == 10 and table["at_risk"].dtype == bool
    # the certified interval of each person's likeliest value holds the estimate
    assert (table["lower"] <= table["maxent"] + 1e-9).all()
    assert (table["maxent"] <= table["upper"] + 1e-9).all()
    at_risk = table[table["at_risk"]]
    assert sorted(at_risk["name"]) == ["Cathy", "Grace"]
    assert (at_risk["value"] == "Breast Cancer").all()
    assert (at_risk["maxent"] == 1.0).all()
    assert (table.loc[~table["at_risk"], "maxent"] < 0.99).all()

    page = out.read_text(encoding="utf-8")
    top = page[page.index('id="top"') : page.index('id="figures"')]
    assert "Cathy" in top and "Grace" in top and "Allen" not in top
    assert "2 of 10" in page
    printed = capsys.readouterr().out
    assert "2 of 10 people at risk" in printed
    assert "at risk: Cathy (Breast Cancer 1.0000), Grace (Breast Cancer 1.0000)" in printed
    assert f"report written to {out}" in printed and f"risk table written to {risk}" in printed
    assert "maxent-privacy report" in page and "--threshold 0.99" in page  # how to reproduce


def test_figure1_risk_table_from_python():
    table = figure1_result().risk_table(threshold=0.99)
    assert table["name"].head(2).tolist() == ["Cathy", "Grace"]
    assert table.loc[table["at_risk"], "name"].tolist() == ["Cathy", "Grace"]
    assert table["maxent"].is_monotonic_decreasing
    assert table.set_index("name").loc["Allen", "value"] == "Flu"
    assert table.set_index("name").loc["Allen", "maxent"] == 0.6667  # 4 decimals: the rule
    allen = table.set_index("name").loc["Allen"]
    # bucket 1 holds Flu twice for Allen and Brian (the male college graduates): at least
    # one of them has it (their class's share is at least 0.5), and either may be the
    # other: Allen's own probability of Flu ranges over [0, 1] (the table is per person)
    assert (allen["lower"], allen["upper"]) == (0.0, pytest.approx(1.0))
    share = figure1_result().bounds(by="class").loc[("Allen", "Flu")]
    assert (share["lower"], share["upper"]) == (pytest.approx(0.5), pytest.approx(1.0))
    cathy = table.set_index("name").loc["Cathy"]
    assert (cathy["lower"], cathy["upper"]) == (1.0, 1.0)


# ------------------------------------------------------------------------ the table
def test_without_person_ids_rows_are_classes():
    result = figure1_result(person=None, knowledge=False)
    table = result.risk_table()
    assert list(table.columns) == [
        "gender", "degree", "bucket", "records", "value", "maxent", "lower", "upper",
        "certified", "at_risk", "tied", "identity",
    ]  # fmt: skip
    assert table["records"].sum() == 10 and len(table) == 9
    # bucket 1 holds Flu twice among 4 records: its 4 people are at risk at 0.5
    assert table.loc[table["at_risk"], "records"].sum() == 4
    summary = risk_summary(result, 0.5)
    assert summary["people_at_risk"] == 4 and summary["people"] == 10
    assert summary["classes_at_risk"] == 3 and summary["classes"] == 9
    assert not summary["per_person"]


def test_without_person_ids_the_bounds_are_each_persons_own():
    # the row of Allen and Brian (male, college, bucket 1): their class surely holds one
    # Flu (share at least 1/2), but each of them may escape it
    result = figure1_result(person=None)
    table = result.risk_table(threshold=0.99).set_index(["gender", "degree", "bucket"])
    row = table.loc[("male", "college", 1)]
    assert row["value"] == "Flu" and row["records"] == 2
    assert (row["lower"], row["upper"]) == (0.0, 1.0)
    share = result.bounds(by="group").loc[("male", "college", 1, "Flu")]
    assert (share["lower"], share["upper"]) == (pytest.approx(0.5), pytest.approx(1.0))
    summary = risk_summary(result, 0.99)
    assert summary["people_at_risk_worst_case"] == 10  # everyone's likeliest value: upper 1
    assert "per person: each one's own certified upper bound" in render_report(result, 0.99)


def test_pooled_releases_are_per_person():
    d1, d2 = datasets.wang2008_figure1()
    releases = [
        Bucketized(d, qi=["gender", "zip"], sa="disease", group="bucket", person="pseudonym")
        for d in (d1, d2)
    ]
    result = MaxEntModel(releases).solve()
    table = result.risk_table(threshold=0.99)
    assert list(table.columns[:3]) == ["pseudonym", "gender", "zip"]
    assert table.loc[table["pseudonym"] == 10, "value"].item() == "Lung Cancer"  # James
    assert table.loc[table["pseudonym"] == 10, "at_risk"].item()
    assert len(table) == result.person_posterior().shape[0]


def test_bounds_columns_follow_the_bounds_mode():
    result = figure1_result()
    table = risk_table(result, 0.99)
    assert list(table.columns[-7:]) == [
        "maxent", "lower", "upper", "certified", "at_risk", "tied", "identity"
    ]  # fmt: skip
    allen = table.set_index("name").loc["Allen"]
    assert allen["lower"] == 0.0 and allen["upper"] == 1.0
    summary = risk_summary(result, 0.99, table)
    assert summary["people_at_risk_worst_case"] == 10
    assert "at risk in the worst case" in render_report(result, 0.99)
    bare = risk_table(result, 0.99, bounds="none")
    assert "lower" not in bare and "upper" not in bare and "certified" not in bare
    assert "people_at_risk_worst_case" not in risk_summary(result, 0.99, bare)
    with pytest.raises(ArgumentError, match="^bounds must be 'auto', 'all' or 'none', got 'some'$"):
        risk_table(result, 0.99, bounds="some")


@pytest.mark.parametrize("threshold", [0, -0.1, 1.5, float("nan"), "high"])
def test_threshold_out_of_range(threshold):
    with pytest.raises(ValueError, match="threshold"):
        figure1_result().risk_table(threshold=threshold)


def test_breaches_per_person_counts_people():
    result = figure1_result()
    per_person = metrics.breaches(result, 0.99, by="person")
    assert list(per_person.columns) == ["person", "disease", "posterior"]
    assert per_person["person"].tolist() == ["Cathy", "Grace"]
    plain = figure1_result(person=None)
    rows = metrics.breaches(plain, 0.6, by="person")  # records, by their row labels:
    assert sorted(rows["person"]) == [0, 1, 2, 3, 6]  # bucket 1's men, Cathy and Grace
    by_qi = metrics.breaches(plain, 0.6)  # P(S | QI) averages Cathy with Helen, ...
    assert by_qi["records"].sum() == 1  # Grace only


# ------------------------------------------------------------------------ the page
def test_page_is_self_contained_and_escaped(tmp_path):
    release = Bucketized(
        datasets.du2008_figure1(),
        qi=["gender", "degree"],
        sa="disease",
        group="bucket",
        person="name",
    )
    model = MaxEntModel(release)
    model.add(model.P("Breast Cancer", gender="male") == 0, name="<script>alert(1)</script>")
    model.add(model.P("Flu", gender="male") <= 0.6, name="flu")
    result = model.solve()
    path = tmp_path / "r.html"
    result.report(path, threshold=0.99)
    page = path.read_text(encoding="utf-8")
    assert "<script" not in page  # the fact's name is escaped, and the page has no scripts
    assert html.escape("<script>alert(1)</script>") in page
    assert not re.search(r"""(src|href)\s*=\s*["'](?!data:)""", page)  # nothing to fetch
    assert "<link" not in page and "@import" not in page and "http" not in page.lower()
    assert len(re.findall(r'<img src="data:image/png;base64,', page)) == 2
    # the knowledge in words, the influence of each fact, the certificate
    assert "The share of people with gender = male who have Breast Cancer is exactly 0%" in page
    assert "The share of people with gender = male who have Flu is at most 60%" in page
    assert "settles some values exactly" in page and "Checked." in page


def test_report_refuses_a_missing_folder(tmp_path):
    from maxent_privacy.errors import OutputError

    with pytest.raises(OutputError, match="does not exist"):
        figure1_result().report(tmp_path / "no" / "r.html")


# ------------------------------------------------------------------------ the command
def run(release, *extra):
    return main(["report", str(release), *ROLES, *extra])


def test_default_output_is_report_html(files, tmp_path, monkeypatch, capsys):
    release, _ = files
    monkeypatch.chdir(tmp_path)
    assert run(release) == 0
    assert (tmp_path / "report.html").exists()
    assert "4 of 10 people at risk" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "code", "words"),
    [
        (["--out", "r.pdf"], 2, "give an .html file name"),
        (["--risk-out", "risk.xlsx"], 2, "give a .csv, .parquet or .pq file name"),
        (["--out", "missing/r.html"], 4, "does not exist"),
        (["--risk-out", "missing/risk.csv"], 4, "does not exist"),
    ],
)
def test_bad_outputs_fail_before_the_solve(
    files, tmp_path, monkeypatch, capsys, extra, code, words
):
    release, _ = files
    monkeypatch.chdir(tmp_path)

    def boom(*a, **k):  # pragma: no cover - must not be reached
        raise AssertionError("solved although the output cannot be written")

    monkeypatch.setattr(MaxEntModel, "solve", boom)
    assert run(release, *extra) == code
    err = capsys.readouterr().err
    assert err.startswith("error: ") and words in err and err.count("\n") == 1


def test_parquet_without_pyarrow_is_a_clear_error(files, tmp_path, capsys):
    pytest.importorskip("pandas")
    release, _ = files
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        assert run(release, "--risk-out", str(tmp_path / "risk.parquet")) == 2
        assert "Parquet needs pyarrow" in capsys.readouterr().err
        return
    assert run(release, "--risk-out", str(tmp_path / "risk.parquet")) == 0
    assert len(pd.read_parquet(tmp_path / "risk.parquet")) == 9


@pytest.mark.parametrize("value", ["0", "1.5", "x"])
def test_threshold_is_checked_by_the_parser(files, capsys, value):
    release, _ = files
    with pytest.raises(SystemExit) as caught:
        run(release, "--threshold", value)
    assert caught.value.code == 2
    assert "--threshold" in capsys.readouterr().err


def test_several_releases_need_person_ids(tmp_path, capsys):
    paths = []
    for k, frame in enumerate(datasets.wang2008_figure1(), start=1):
        paths.append(tmp_path / f"r{k}.csv")
        frame.to_csv(paths[-1], index=False)
    roles = ["--qi", "gender", "zip", "--sa", "disease", "--group", "bucket"]
    out = tmp_path / "risk.csv"
    assert main(["report", *map(str, paths), *roles, "--risk-out", str(out)]) == 2
    assert "give --person" in capsys.readouterr().err
    argv = ["report", *map(str, paths), *roles, "--person", "pseudonym"]
    assert main([*argv, "--risk-out", str(out), "--threshold", "0.99"]) == 0
    table = pd.read_csv(out)
    assert table.loc[table["pseudonym"] == 10, "value"].item() == "Lung Cancer"


# ------------------------------------------------------------------------ a real browser

CHECK_IMAGES = """<script>
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  var mark = document.createElement("div");
  mark.id = "image-check";
  mark.textContent = "images " + ok + " of " + imgs.length + " loaded";
  document.body.appendChild(mark);
});
</script>"""


def rendered(page: Path, tmp_path: Path) -> tuple[str, str]:
    """(visible text, image check) of ``page`` as Chromium renders it."""
    probe = tmp_path / f"probe-{page.name}"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", CHECK_IMAGES + "</body>"))
    dom = chromium(probe, tmp_path, "--dump-dom")
    mark = re.search(r'<div id="image-check">(.*?)</div>', dom)
    text = html.unescape(
        re.sub(r"<[^>]+>", " ", re.sub(r"<(style|script)>.*?</\1>", "", dom, flags=re.S))
    )
    return " ".join(text.split()), mark.group(1) if mark else "no image check"


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_report_renders_in_a_browser(files, tmp_path):
    release, facts = files
    out = tmp_path / "report.html"
    argv = ["report", str(release), *ROLES, "--person", "name", "--knowledge", str(facts)]
    assert main([*argv, "--threshold", "0.99", "--out", str(out)]) == 0
    text, images = rendered(out, tmp_path)
    assert images == "images 2 of 2 loaded"
    assert "Who is at risk" in text and "2 of 10 people (20.0%)" in text
    assert "Cathy female college 1 Breast Cancer 1.000" in text
    assert "Grace female junior 2 Breast Cancer 1.000" in text
    assert "exactly 0%" in text and "Checked." in text
    shot = tmp_path / "shot.png"
    chromium(out, tmp_path, f"--screenshot={shot}", "--window-size=1000,1400", "--hide-scrollbars")
    assert shot.stat().st_size > 10_000  # something was drawn


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_the_browser_check_sees_a_broken_image(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text(
        '<!DOCTYPE html><html><body><p>x</p><img src="data:image/png;base64,AAAA" alt="">'
        "</body></html>"
    )
    assert rendered(page, tmp_path)[1] == "images 0 of 1 loaded"


def test_the_python_to_reproduce_it_runs(files, tmp_path, monkeypatch):
    release, facts = files
    out = tmp_path / "report.html"
    argv = ["report", str(release), *ROLES, "--person", "name", "--knowledge", str(facts)]
    assert main([*argv, "--threshold", "0.99", "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    command, python = (html.unescape(p) for p in re.findall(r"<pre>(.*?)</pre>", page, re.S))
    assert command.startswith("maxent-privacy report ") and "--threshold 0.99" in command
    again = tmp_path / "again"
    again.mkdir()
    monkeypatch.chdir(again)
    exec(compile(python, "report.html", "exec"), {})  # noqa: S102
    table = pd.read_csv(again / "risk.csv")
    assert table.loc[table["at_risk"], "name"].tolist() == ["Cathy", "Grace"]
    assert "Cathy" in (again / "report.html").read_text(encoding="utf-8")


def test_readme_who_is_at_risk_runs(tmp_path, monkeypatch):
    """The README tour, then its 'who is at risk' block, as written (in a scratch folder)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    block = next(b for b in blocks if "risk_table" in b and "report(" in b)
    assert len(block.strip().splitlines()) <= 5
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)  # noqa: S102
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    plt.close("all")
    result, risk = namespace["result"], namespace["risk"]
    # the numbers the README quotes
    assert metrics.breaches(result, 0.5, by="person")["person"].nunique() == 5_015
    assert metrics.breaches(result, 0.5)["records"].sum() == 2_981
    assert risk.loc[risk["at_risk"], "records"].sum() == 5_015
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "5,015 of 14,210" in page
