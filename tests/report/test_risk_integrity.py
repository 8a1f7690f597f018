"""Issue 22, item 4 and the publisher's list, through the API: the risk table's own columns
never overwrite the release's, ``records`` weighs rows only without person ids, a result
used after its model changed raises :class:`StaleResult` (Du et al.'s Cathy), facts read
in words as written (``>=``), a vague statement is one stated fact, and the rows of a
figure with many attributes stay apart."""

from __future__ import annotations

import matplotlib
import pandas as pd
import pytest

import maxent_privacy
from maxent_privacy import Bucketized, MaxEntError, MaxEntModel, StaleResult, datasets, vague
from maxent_privacy.report import fact_in_words, render_report, risk_summary, risk_table
from maxent_privacy.report.labels import row_labels
from maxent_privacy.report.statements import count_statements, stated_facts

matplotlib.use("Agg")

QI = ["gender", "degree"]


def figure1_model(frame=None, qi=QI, person="name"):
    frame = datasets.du2008_figure1() if frame is None else frame
    return MaxEntModel(Bucketized(frame, qi=qi, sa="disease", group="bucket", person=person))


# ------------------------------------------------------------------ columns
@pytest.mark.parametrize("clash", ["value", "maxent", "lower", "upper", "at_risk"])
@pytest.mark.parametrize("person", ["name", None])
def test_a_qi_named_like_an_own_column_is_renamed_not_overwritten(clash, person):
    frame = datasets.du2008_figure1().rename(columns={"degree": clash})
    table = figure1_model(frame, ["gender", clash], person).solve().risk_table(0.5)
    assert table.attrs["renamed"] == {clash: f"release_{clash}"}
    assert set(table[f"release_{clash}"]) == set(frame[clash])
    assert set(table["value"]) <= set(frame["disease"])
    assert table["maxent"].between(0, 1).all() and table["at_risk"].dtype == bool


def test_a_prefixed_name_that_is_taken_gets_another_prefix():
    frame = datasets.du2008_figure1().rename(columns={"degree": "value", "gender": "release_value"})
    table = figure1_model(frame, ["release_value", "value"]).solve().risk_table(0.5)
    assert table.attrs["renamed"] == {"value": "release_release_value"}
    assert set(table["release_value"]) == {"male", "female"}
    assert set(table["release_release_value"]) == set(frame["value"])


def test_records_is_a_weight_only_without_person_ids():
    """A group column named ``records`` with person ids: 4 people, not 6 of 6."""
    frame = pd.DataFrame(
        {
            "pid": ["a", "b", "c", "d"],
            "q": ["x", "x", "y", "y"],
            "s": ["Flu", "Flu", "HIV", "Flu"],
            "records": [1, 1, 2, 2],
        }
    )
    model = MaxEntModel(Bucketized(frame, qi=["q"], sa="s", group="records", person="pid"))
    result = model.solve()
    table = result.risk_table(0.5)
    summary = risk_summary(result, 0.5, table)
    assert summary["people"] == 4 and summary["per_person"]
    assert summary["people_at_risk"] == 4  # a, b: Flu 1.0; c, d: Flu 0.5
    # a release without person ids: records are the class sizes
    plain = MaxEntModel(Bucketized(frame.drop(columns="pid"), ["q"], "s", "records")).solve()
    assert risk_summary(plain, 0.5)["people"] == 4


def test_risk_table_docstring_is_current():
    doc = " ".join(risk_table.__doc__.split())
    assert "not part of this version" not in doc
    assert "``lower``, ``upper``" in doc and "release_<name>" in doc


# ------------------------------------------------------------------ stale results
def test_cathy_after_model_add_is_a_stale_result(tmp_path):
    """Du et al. Figure 1: solved without knowledge, then men are known not to have breast
    cancer. The old result must not pair its estimate (Cathy Flu 0.5) with the new model's
    bounds or facts (Cathy certain of Breast Cancer)."""
    model = figure1_model()
    old = model.solve()
    before = old.risk_table(0.99)
    assert not before.set_index("name").loc["Cathy", "at_risk"]
    model.add(model.P("Breast Cancer", gender="male") == 0)
    for call in (
        lambda: old.risk_table(0.99),
        lambda: old.bounds(by="person"),
        lambda: old.report(tmp_path / "r.html"),
        lambda: risk_table(old, 0.99),
        lambda: render_report(old, 0.99),
    ):
        with pytest.raises(StaleResult, match="model changed after this result was solved"):
            call()
    assert not (tmp_path / "r.html").exists()
    # the old estimate itself is still the old model's answer
    assert old.posterior().loc[("female", "college"), "Breast Cancer"] < 1
    new = model.solve().risk_table(0.99).set_index("name")
    assert new.loc["Cathy", "value"] == "Breast Cancer" and new.loc["Cathy", "at_risk"]
    assert new.loc["Cathy", "lower"] == 1.0


def test_removing_a_fact_or_singling_out_a_person_makes_it_stale():
    model = figure1_model(person=None)
    model.add(model.P("Breast Cancer", gender="male") == 0, name="no BC for men")
    result = model.solve()
    result.bounds()  # current: fine
    model.remove("no BC for men")
    with pytest.raises(StaleResult, match="removed"):
        result.bounds()
    result = model.solve()
    before = result.person_posterior()
    model.person("Bob", gender="male", degree="college")
    # the old answer's own people, unchanged (it reads its snapshot, not the model)
    pd.testing.assert_frame_equal(result.person_posterior(), before)
    assert "Bob" not in result.person_posterior().index
    with pytest.raises(StaleResult, match="model.person"):
        result.risk_table()


def test_a_failed_add_leaves_the_result_current():
    model = figure1_model()
    result = model.solve()
    with pytest.raises(MaxEntError):
        model.add([model.P("Flu") == 0.3, model.P("Flu") == 2.0])
    result.risk_table(0.5)  # nothing was added: still current


def test_the_summary_speaks_of_the_model_as_solved():
    model = figure1_model(person=None)
    result = model.solve()
    model.add(model.P("Breast Cancer", gender="male") == 0)
    assert "0 facts" in result.summary().splitlines()[0]
    assert "<th style='text-align:left'>facts</th><td>0</td>" in result._repr_html_()


def test_stale_result_is_exported_like_the_other_errors():
    assert "StaleResult" in maxent_privacy.__all__
    assert issubclass(StaleResult, MaxEntError)
    from maxent_privacy.errors import StaleResult as direct

    assert direct is StaleResult


# ------------------------------------------------------------------ words
def test_at_least_is_written_as_one_operator():
    frame = pd.DataFrame({"age": [30, 55, 60, 70], "s": ["a", "b", "a", "b"], "g": [1, 1, 2, 2]})
    model = MaxEntModel(Bucketized(frame, ["age"], "s", "g"))
    model.add(model.P("a", age=maxent_privacy.between(55)) <= 0.9)
    words = fact_in_words(model.facts[0])
    assert "age >= 55" in words and "> =" not in words


def test_a_vague_fact_is_one_stated_fact():
    model = figure1_model()
    model.add(vague(model.P("Flu", gender="male"), 0.4, 0.1), name="flu")
    model.add(model.P("HIV") <= 0.9, name="hiv")
    names = [f.name for f in model.facts]
    assert names == ["flu (low)", "flu (high)", "hiv"]
    assert count_statements(names) == 2
    shown = stated_facts(model.facts, fact_in_words)
    assert [s["name"] for s in shown] == ["flu", "hiv"]
    assert "is between 30% and 50%" in shown[0]["words"]
    page = " ".join(render_report(model.solve(), 0.5).split())
    assert "2 stated facts" in page and "3 stated facts" not in page


# ------------------------------------------------------------------ figure labels
def test_eight_attribute_rows_keep_distinct_labels():
    base = ("39", "State-gov", "Bachelors", "Never-married", "Adm-clerical", "White", "Male")
    rows = [(*base, "United-States"), (*base, "Cuba"), (*base[:-1], "Female", "Cuba")]
    names = ["age", "work", "edu", "marital", "occupation", "race", "sex", "country"]
    labels, title = row_labels(rows, names)
    assert len(set(labels)) == 3
    assert title.startswith("sex, country (every row: age 39")
    # long values that differ at their end only: kept whole rather than merged
    long = [("a" * 50 + "x", "b" * 50), ("a" * 50 + "y", "b" * 50)]
    labels, _ = row_labels(long, ["p", "q"])
    assert len(set(labels)) == 2


def test_result_plot_labels_tell_rows_apart():
    """Eight attributes, rows that differ in the last one only: the labels cut at 40
    characters all looked alike."""
    n = 60
    frame = pd.DataFrame({f"attribute{k}": ["a long common value"] * n for k in range(7)})
    frame["country"] = [f"country {i % 30}" for i in range(n)]
    frame["s"] = ["Flu", "HIV", "Cold"] * (n // 3)
    frame["g"] = [i // 6 for i in range(n)]
    release = Bucketized(frame, qi=[*frame.columns[:8]], sa="s", group="g")
    ax = MaxEntModel(release).solve().plot(top=30)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 30 and len(set(labels)) == 30
    assert "every row: attribute0 a long common value" in ax.get_ylabel()


def test_risk_table_progress_is_the_one_progress(capsys):
    """progress: None/False silent, True one line per step on stderr, a function each step."""
    steps: list[str] = []
    risk_table(figure1_model().solve(), 0.5, progress=steps.append)
    assert steps and all(isinstance(s, str) and "\n" not in s for s in steps)
    risk_table(figure1_model().solve(), 0.5, progress=True)
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [f"risk table: {s}" for s in steps]
    risk_table(figure1_model().solve(), 0.5, progress=False)
    assert capsys.readouterr() == ("", "")
    with pytest.raises(MaxEntError, match="^progress must be None, True/False or a function"):
        risk_table(figure1_model().solve(), 0.5, progress="yes")
