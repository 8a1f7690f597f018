"""Data never becomes markup or code (issue 22, item 3): matplotlib draws labels from the data
as plain text (a ``$...$`` that is not valid math used to stop the figure), and the risk
table neutralizes the cells a spreadsheet would run as formulas (OWASP), unless
``csv_safe=False``.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from maxent_privacy import Bucketized, MaxEntModel, datasets  # noqa: E402
from maxent_privacy.report import render_report, risk_table, write_risk_table  # noqa: E402
from maxent_privacy.report.plots import plot_posterior, plot_privacy_curve  # noqa: E402
from maxent_privacy.report.safety import neutralize, spreadsheet_safe  # noqa: E402

MATH_VALUE = r"$\undefinedcmd$"  # a sensitive value
MATH_ID = r"$\sqrt{$"  # a person id


def solved(**replace):
    frame = datasets.du2008_figure1()
    for column, mapping in replace.items():
        frame[column] = frame[column].replace(mapping)
    release = Bucketized(
        frame, qi=["gender", "degree"], sa="disease", group="bucket", person="name"
    )
    return MaxEntModel(release).solve()


def draw(ax) -> list[str]:
    """Draw the figure (where mathtext would fail) and return every tick label."""
    ax.figure.canvas.draw()
    return [t.get_text() for t in [*ax.get_xticklabels(), *ax.get_yticklabels()]]


@pytest.fixture
def hostile():
    return solved(disease={"Flu": MATH_VALUE}, name={"Allen": MATH_ID})


def test_result_plot_draws_a_math_like_value_as_text(hostile):
    labels = draw(hostile.plot())
    assert MATH_VALUE in labels


def test_result_plot_by_person_draws_a_math_like_id_as_text(hostile):
    labels = draw(hostile.plot(by="person"))
    assert MATH_ID in labels and MATH_VALUE in labels


def test_plot_posterior_with_a_math_like_column_name():
    post = pd.DataFrame([[0.5, 0.5]], index=[MATH_ID], columns=pd.Index(["a", "b"], name="$x"))
    ax = plot_posterior(post)
    draw(ax)
    assert ax.get_xlabel() == "$x"


def test_report_figures_with_math_like_data(hostile):
    page = render_report(hostile, threshold=0.3)  # draws the report's figures
    assert "data:image/png;base64," in page
    assert "\\undefinedcmd" in page  # the value is in the page's text, escaped for HTML


def test_privacy_curve_legend_from_data_is_text():
    table = pd.DataFrame(
        {"K": [0, 1, 0, 1], "kl": [0.1, 0.2, 0.3, 0.4], "by": [MATH_ID] * 2 + ["$"] * 2}
    )
    ax = plot_privacy_curve(table, x="K", y="kl", by="by")
    ax.figure.canvas.draw()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [r"\$\sqrt{\$", r"\$"]
    # a label the caller writes may still use mathematical notation
    ax = plot_privacy_curve(table, x="K", y="kl", by="by", xlabel=r"$\epsilon$")
    ax.figure.canvas.draw()
    assert ax.xaxis.label.get_parse_math()


FORMULAS = [
    "=cmd|' /C calc'!A0",
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)",
    '=HYPERLINK("http://evil.example","click")',
    "\t=1+2",
    "\r=1+2",
]


@pytest.mark.parametrize("cell", FORMULAS)
def test_neutralize_prefixes_formula_cells(cell):
    assert neutralize(cell) == "'" + cell


@pytest.mark.parametrize("cell", ["-3", "+1.5", "-0.25e-3", "Flu", "a=b", "", 3, -2.5, None])
def test_neutralize_leaves_the_rest(cell):
    assert neutralize(cell) == cell


def test_spreadsheet_safe_touches_text_cells_only():
    frame = pd.DataFrame(
        {
            "name": ["=1+1", "-4", "Ann"],
            "maxent": [-0.5, 0.5, 1.0],
            "n": [-1, 2, 3],
            "=x": [1, 2, 3],
        }
    )
    safe = spreadsheet_safe(frame)
    assert safe["name"].tolist() == ["'=1+1", "-4", "Ann"]
    assert safe["maxent"].tolist() == [-0.5, 0.5, 1.0] and safe["maxent"].dtype == float
    assert safe["n"].tolist() == [-1, 2, 3]
    assert list(safe.columns) == ["name", "maxent", "n", "'=x"]
    assert frame["name"].tolist() == ["=1+1", "-4", "Ann"]  # a copy


@pytest.fixture
def formulas():
    names = dict(zip(["Allen", "Brian", "Cathy", "David", "Ethan"], FORMULAS[:5], strict=True))
    return solved(name=names, disease={"Flu": "=1+2"})


def test_risk_table_is_csv_safe_by_default(formulas):
    table = risk_table(formulas)
    assert {"'" + f for f in FORMULAS[:5]} <= set(table["name"])
    assert not set(FORMULAS) & set(table["name"])
    assert "'=1+2" in set(table["value"])
    assert table["maxent"].dtype == float
    assert table.equals(formulas.risk_table())


def test_risk_table_csv_safe_false_keeps_the_data(formulas):
    table = risk_table(formulas, csv_safe=False)
    assert set(FORMULAS[:5]) <= set(table["name"])
    assert "=1+2" in set(table["value"])
    assert table.equals(formulas.risk_table(csv_safe=False))


def test_write_risk_table_neutralizes_unless_asked(formulas, tmp_path):
    write_risk_table(formulas, tmp_path / "safe.csv")
    write_risk_table(formulas, tmp_path / "raw.csv", csv_safe=False)
    safe = pd.read_csv(tmp_path / "safe.csv", dtype=str)
    raw = pd.read_csv(tmp_path / "raw.csv", dtype=str)
    assert "'" + FORMULAS[0] in set(safe["name"]) and FORMULAS[0] not in set(safe["name"])
    assert FORMULAS[0] in set(raw["name"])
    assert '=HYPERLINK("http://evil.example","click")' in set(raw["name"])
    assert "'=HYPERLINK(" in (tmp_path / "safe.csv").read_text()


def test_the_report_page_shows_the_data_as_it_is(formulas):
    page = render_report(formulas, threshold=0.3)
    assert "&#39;=1+2" not in page and "=1+2" in page
