"""The report a publisher acts on (issue 39, item 7): a "what to do" section naming the
groups whose members are certain or most exposed (cells, size) and the fact that exposes
most people; the worst-case card in the release kind's words; ``result.report()``
reusing a risk table already computed; ``top`` checked; a runnable "Reproduce it";
headers that wrap at word boundaries and cards that keep their own height."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from paper_models import ARX
from paper_models import ARX_PEOPLE as PEOPLE

from maxent_privacy import Bucketized, Generalized, MaxEntModel, datasets
from maxent_privacy._validation import ArgumentError
from maxent_privacy.report.html import render_report


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&nbsp;", " ")


def _section(page: str, name: str) -> str:
    start = page.index(f'<section id="{name}">')
    return _text(page[start : page.index("</section>", start)])


def figure1():
    release = Bucketized(
        datasets.du2008_figure1(), ["gender", "degree"], "disease", "bucket", person="name"
    )
    model = MaxEntModel(release)
    model.add(model.P("Breast Cancer", gender="male") == 0)
    return model.solve()


def test_what_to_do_names_the_certain_class_with_its_cells_and_size():
    """Class 2 (30-39, 021**) holds Cold only (l = 1): its 2 people are certain."""
    release = Generalized(ARX, qi=["age", "zip"], sa="d", group="g")
    page = render_report(MaxEntModel(release, populations=[PEOPLE]).solve(), 0.9)
    what = _section(page, "what-to-do")
    assert " 2 age 30-39; zip 021** 2 1 Cold 2 2" in what
    assert "age 20-29" not in what  # class 1 (Flu 2 of 3): no one certain or at risk


def test_what_to_do_names_the_fact_that_exposes_most_people():
    """At 0.6, no one is at risk without 'no man has breast cancer'; with it, Cathy and
    Grace hold it for sure (each the only woman of her bucket) and Allen, Brian, David
    (bucket 1's men, Flu 2 of 3): 5 people; the page names the fact and the buckets."""
    result = figure1()
    page = render_report(result, 0.6)
    what = _section(page, "what-to-do")
    assert "The fact that exposes most people: P(Breast Cancer | gender=male) == 0" in what
    assert "puts 5 people at risk who would not be without it (0 are at risk" in what
    # bucket 1: Allen, Brian, Cathy, David: Cathy certain, all 4 at risk; bucket 2: Grace
    assert " 1 gender female/male; degree college/high school 4 3 Breast Cancer, Flu, " in what
    assert "Pneumonia 1 4 2 gender female/male; degree college/high school/junior 3 3 " in what


def test_worst_case_card_speaks_of_the_release_kind():
    release = Generalized(ARX, qi=["age", "zip"], sa="d", group="g")
    page = _text(render_report(MaxEntModel(release, populations=[PEOPLE]).solve(), 0.5))
    card = page[page.index("in the worst case") :][:900]
    assert "in a generalized release any person of a equivalence class" not in card
    assert "in a generalized release any person of an equivalence class" in card
    assert "bucketized" not in card and "pooled releases" not in card
    assert "people placed among the classes their QI values fit" in card
    bucket = _text(render_report(figure1(), 0.5))
    assert "in a bucketized release any person of a bucket" in bucket


@pytest.mark.parametrize("top", [-1, 0, 2.5, "5"])
def test_report_refuses_a_top_that_is_not_a_positive_whole_number(tmp_path, top):
    """``result.report(top=-1)`` listed everyone but the last person (the CLI refuses
    ``--top 0``): a one-line ArgumentError, and no file."""
    with pytest.raises(ArgumentError) as err:
        figure1().report(tmp_path / "r.html", top=top)
    assert str(err.value) == f"top must be a whole number >= 1, got {top!r}"
    assert not (tmp_path / "r.html").exists()


def test_report_reuses_the_risk_table_already_computed(tmp_path, monkeypatch):
    """The bounds are computed once: by ``risk_table()``, then never again by
    ``report()``, given the table or not (the result caches it)."""
    import maxent_privacy.bounds.intervals as intervals

    calls = []
    real = intervals.bounds

    def counted(*args, **kwargs):
        calls.append(kwargs.get("by"))
        return real(*args, **kwargs)

    monkeypatch.setattr(intervals, "bounds", counted)
    result = figure1()
    table = result.risk_table(0.5)
    assert calls == ["person"]
    result.report(tmp_path / "a.html", 0.5, table=table)
    result.report(tmp_path / "b.html", 0.5)
    result.report(tmp_path / "c.html", 0.8)  # another threshold: the same bounds
    assert calls == ["person"]
    assert (tmp_path / "c.html").stat().st_size > 0


def _python(page: str) -> str:
    import html

    start = page.index('<section id="reproduce">')
    blocks = re.findall(r"<pre>(.*?)</pre>", page[start:], flags=re.S)
    return html.unescape(blocks[-1])


def test_reproduce_snippet_runs_for_a_generalized_release_with_a_population(tmp_path, monkeypatch):
    """Was ``mp.MaxEntModel(...)  # the releases and populations, as before``: the
    snippet reads the files the report names and makes the same risk table."""
    ARX.to_csv(tmp_path / "arx.csv", index=False)
    PEOPLE.reset_index().to_csv(tmp_path / "people.csv", index=False)
    release = Generalized(ARX, qi=["age", "zip"], sa="d", group="g")
    model = MaxEntModel(release, populations=[PEOPLE])
    model.add(model.P("HIV", age=25) == 0)
    (tmp_path / "facts.txt").write_text('P(d = "HIV" | age = 25) = 0\n')
    result = model.solve()
    page = render_report(
        result, 0.5, sources=["arx.csv"], populations="people.csv", knowledge_file="facts.txt"
    )
    code = _python(page)
    assert "..." not in code and "as before" not in code
    assert "mp.Generalized(frame1, qi=['age', 'zip'], sa='d', group='g')" in code
    assert "pop1 = pd.read_csv('people.csv', dtype=str).set_index('name')" in code
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code, "reproduce", "exec"), scope)  # the page's own snippet
    assert (tmp_path / "report.html").exists()
    again = pd.read_csv(tmp_path / "risk.csv", dtype={"zip": str})
    first = result.risk_table(0.5)
    assert again["name"].tolist() == first["name"].tolist()
    assert again["maxent"].tolist() == first["maxent"].tolist()
    assert again["identity"].tolist() == first["identity"].tolist()


def test_reproduce_snippet_derives_classes_and_placeholds_unknown_files(tmp_path):
    """An ARX file read with ``--group auto`` (a column ``class`` the file lacks): the
    snippet derives it; without file names, RELEASE.csv and POPULATION.csv."""
    release = Generalized(ARX.rename(columns={"g": "class"}), ["age", "zip"], "d", "class")
    page = render_report(MaxEntModel(release, populations=[PEOPLE]).solve(), 0.5)
    code = _python(page)
    assert "frame1 = pd.read_csv('RELEASE.csv', dtype=str)" in code
    assert "frame1['class'] = frame1.groupby(['age', 'zip']).ngroup() + 1" in code
    assert "pop1 = pd.read_csv('POPULATION.csv', dtype=str).set_index('name')" in code
    assert "pop1['age'] = pop1['age'].astype('int64')" in code
    assert "model = mp.MaxEntModel(rel1, populations=[pop1])" in code


def test_page_css_keeps_words_and_cards_whole():
    """Headers wrap between words (not "ag/e"), "--bounds all" never splits, a short
    card keeps its own height."""
    page = render_report(figure1(), 0.5)
    css = page[page.index("<style>") : page.index("</style>")]
    assert ".people th { overflow-wrap: anywhere; }" not in css  # was: "ag/e", "maxen/t"
    assert "th, .people th { overflow-wrap: normal; word-break: normal;" in css
    assert "align-items: flex-start" in css.split(".headline")[1].split("}")[0]
    assert ".nowrap { white-space: nowrap; }" in css


def test_bounds_note_keeps_the_option_on_one_line():
    from maxent_privacy.report.act import _options_unbroken

    got = _options_unbroken("Rows <b> past it are outer. Use --bounds all (bounds='all').")
    assert str(got) == (
        'Rows &lt;b&gt; past it are outer. Use <span class="nowrap">--bounds all</span> '
        "(bounds=&#39;all&#39;)."
    )


def test_what_to_do_without_person_ids_and_a_group_named_like_a_column_of_ours():
    """Rows are (QI value, group) classes weighted by ``records``; the group column named
    ``value`` is shown as ``release_value``. At 0.5 only bucket 1 (Flu 2 of 4) puts its
    4 people at risk; buckets 2 and 3 hold three values once each (1/3)."""
    from maxent_privacy.report.act import exposed_groups

    frame = datasets.du2008_figure1().rename(columns={"bucket": "value"})
    result = MaxEntModel(Bucketized(frame, ["gender", "degree"], "disease", "value")).solve()
    groups, more = exposed_groups(result, result.risk_table(0.5))
    assert more == 0 and [(g["group"], g["size"], g["certain"], g["at_risk"]) for g in groups] == [
        ("1", 4, 0, 4)
    ]
