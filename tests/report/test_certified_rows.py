"""Issue 39, item 5: no number claimed that was not checked.

The report at scale said "0 whose value is certain in every possible table" while thousands
were: 40k patients with ``P(Dementia | age in 18..29) = 0``, 1,360 people with maxent 1 and
lower 0, all among the rows the time box did not certify (their outer bounds leave the fact
out). Replayed on a hospital of 2,000 in groups of 4 with the row limit and the time box
monkeypatched low: a person the fact forces is certain whether or not their LP ran, the rows
are certified in order of risk, a ``certified`` column says which, and the page says "N
certain among the M certified; K not checked" with the risk CSV's own counts.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from paper_models import figure1_result

from maxent_privacy import MaxEntModel, anonymize
from maxent_privacy.cli import main
from maxent_privacy.report import render_report, risk_summary
from maxent_privacy.report import row_bounds as rb

DIAGNOSES = ("Flu", "Asthma", "Diabetes", "Hypertension", "Cancer", "Fracture", "Depression")
FACT = 'P(diagnosis = "Dementia" | age in 18..29) = 0'


def hospital(n: int = 2_000, seed: int = 0) -> pd.DataFrame:
    """``n`` patients, half aged 18-29; Dementia only among the older ones (a quarter of
    them), so that the fact is true."""
    rng = np.random.default_rng(seed)
    age = np.where(rng.random(n) < 0.5, rng.integers(18, 30, n), rng.integers(30, 91, n))
    old = age >= 30
    diagnosis = np.where(old & (rng.random(n) < 0.25), "Dementia", rng.choice(DIAGNOSES, n))
    return pd.DataFrame(
        {
            "pid": [f"P{i:05d}" for i in range(n)],
            "age": age.astype(str),
            "sex": rng.choice(["F", "M"], n),
            "diagnosis": diagnosis,
        }
    )


@pytest.fixture(scope="module")
def release():
    return anonymize.anatomize(hospital(), ["age", "sex"], "diagnosis", l=4, seed=0, person="pid")


def forced_people(release) -> set:
    """By hand: the only person over 29 in a group holding Dementia (the fact leaves
    nobody else to hold it)."""
    frame = release.frame
    old = frame["age"].astype(int) >= 30
    forced = set()
    for _, group in frame.groupby(release.group):
        older = group[old[group.index]]
        if (group[release.sa] == "Dementia").any() and len(older) == 1:
            forced.add(older[release.person].iloc[0])
    return forced


def solved(release):
    from maxent_privacy.parser import apply_knowledge, parse_knowledge

    model = MaxEntModel(release)
    apply_knowledge(model, parse_knowledge(FACT))
    return model.solve()


@pytest.fixture(scope="module")
def everything(release):
    """The table with every row certified: the reference."""
    return solved(release).risk_table(0.5, bounds="all").set_index("pid")


def test_the_case_has_people_the_fact_forces(release, everything):
    forced = forced_people(release)
    assert len(forced) == 42  # counted by hand above, not by the package
    certain = set(everything.index[everything["lower"] == 1.0])
    assert certain == forced
    assert (everything.loc[list(forced), "value"] == "Dementia").all()
    assert everything["certified"].all()


@pytest.mark.parametrize(("rows", "seconds"), [(100, 20.0), (0, 20.0), (50_000, 0.0)])
def test_a_person_the_fact_forces_is_certain_whether_or_not_their_lp_ran(
    monkeypatch, release, everything, rows, seconds
):
    monkeypatch.setattr(rb, "AUTO_ROWS", rows)
    monkeypatch.setattr(rb, "AUTO_SECONDS", seconds)
    table = solved(release).risk_table(0.5).set_index("pid")
    forced = sorted(forced_people(release))
    assert (table.loc[forced, "lower"] == 1.0).all()  # was 0: outer bounds, facts left out
    assert table.loc[forced, "certified"].all()
    info = table.attrs["bounds"]
    assert info["fixed"] == 42  # found without an LP: every cell of their class fixed
    assert info["outer"] == 2_000 - 42 - (rows if seconds else 0) > 0
    assert (~table["certified"]).sum() == info["outer"]
    # certified rows are exact; the others' outer intervals hold the exact ones
    cert = table.index[table["certified"]]
    ref = everything.loc[table.index]
    pd.testing.assert_frame_equal(
        table.loc[cert, ["lower", "upper"]], ref.loc[cert, ["lower", "upper"]]
    )
    assert (table["lower"] <= ref["lower"]).all() and (table["upper"] >= ref["upper"]).all()


def test_rows_are_certified_in_order_of_risk(monkeypatch, release):
    monkeypatch.setattr(rb, "AUTO_ROWS", 300)
    table = solved(release).risk_table(0.5)
    lp_rows = table[table["certified"] & (table["lower"] < 1.0)]
    left = table[~table["certified"]]
    assert len(lp_rows) == 300
    assert lp_rows["maxent"].min() >= left["maxent"].max()


def test_fixed_rows_without_person_ids_are_classes():
    """Figure 1 without ids: the (female, college, 1) and (female, junior, 2) classes are
    fixed to Breast Cancer by P(Breast Cancer | male) = 0, without an LP."""
    result = figure1_result(person=None)
    pairs = pd.MultiIndex.from_arrays(
        [["female", "female", "male"], ["college", "junior", "college"], [1, 2, 1],
         ["Breast Cancer", "Breast Cancer", "Flu"]]
    )  # fmt: skip
    fixed, lower, upper = rb.fixed_rows(result, "group", pairs)
    assert fixed.tolist() == [True, True, False]
    assert lower.tolist() == [1.0, 1.0, 0.0] and upper.tolist() == [1.0, 1.0, 1.0]


def test_fixed_rows_of_pooled_releases_are_the_lp_s():
    """Wang et al.'s two releases: the 3 people the pooled presolve fixes get, without an
    LP, the bounds the LPs give."""
    from maxent_privacy import Bucketized, datasets
    from maxent_privacy.report.likeliest import likeliest

    releases = [
        Bucketized(d, qi=["gender", "zip"], sa="disease", group="bucket", person="pseudonym")
        for d in datasets.wang2008_figure1()
    ]
    model = MaxEntModel(releases)
    result = model.solve()
    pairs = likeliest(result).pairs()
    fixed, lower, upper = rb.fixed_rows(result, "person", pairs)
    assert fixed.sum() == 3
    lp = model.bounds(by="person").reindex(pairs)
    np.testing.assert_allclose(lower[fixed], lp["lower"].to_numpy()[fixed], atol=1e-9)
    np.testing.assert_allclose(upper[fixed], lp["upper"].to_numpy()[fixed], atol=1e-9)


def test_a_prior_s_zeros_fix_nothing():
    """Cells a prior gives 0 are a belief, not a fact about every table."""
    result = figure1_result()
    result.solver_stats = {**result.solver_stats, "forced_zeros": {"prior": 3}}
    pairs = pd.MultiIndex.from_arrays([["Cathy"], ["Breast Cancer"]])
    assert rb.fixed_rows(result, "person", pairs)[0].tolist() == [False]


# ------------------------------------------------------------------ the page and the CSV
def numbers(page: str, anchor: str) -> list[int]:
    part = page[page.index(f'id="{anchor}"') :].split("</p>")[0]
    return [int(n.replace(",", "")) for n in re.findall(r"<b>([\d,]+)</b>", part)]


def test_the_page_counts_are_the_csv_s_and_never_a_bare_zero_certain(
    monkeypatch, tmp_path, release, capsys
):
    monkeypatch.setattr(rb, "AUTO_ROWS", 100)
    path = tmp_path / "hospital.csv"
    release.frame.to_csv(path, index=False)
    (tmp_path / "facts.txt").write_text(FACT + "\n")
    out, risk = tmp_path / "report.html", tmp_path / "risk.csv"
    argv = ["report", str(path), "--qi", "age", "sex", "--sa", "diagnosis", "--group", "group"]
    argv += ["--person", "pid", "--knowledge", str(tmp_path / "facts.txt")]
    assert main([*argv, "--out", str(out), "--risk-out", str(risk)]) == 0
    table = pd.read_csv(risk)
    page = out.read_text(encoding="utf-8")
    certain = int((table["lower"] == 1.0).sum())
    certified = int(table["certified"].sum())
    possible = int((table["certified"] & (table["upper"] == 1.0) & (table["lower"] < 1)).sum())
    assert (certain, certified) == (42, 142)
    assert numbers(page, "certain") == [certain, certified, possible, 2_000 - certified]
    assert "use --bounds all" in page and not re.search(r"<b>0</b> whose value is", page)
    worst = int((table["upper"] >= 0.5).sum())
    card = page[page.index('id="worst-case"') :]
    assert card.split("</div>")[0].endswith(f'<div class="n">{worst:,}')
    printed = capsys.readouterr().out
    assert f"{certain:,} certain among the {certified:,} people certified" in printed
    assert f"{2_000 - certified:,} not checked (use --bounds all)" in printed
    assert f"{worst:,} of 2,000 people at risk in the worst case" in printed


def test_the_summary_counts_certain_certified_and_not_checked(monkeypatch, release):
    monkeypatch.setattr(rb, "AUTO_SECONDS", 0.0)
    result = solved(release)
    summary = risk_summary(result, 0.5, result.risk_table(0.5))
    assert summary["certain"] == 42 and summary["certified"] == 42
    assert summary["not_checked"] == 1_958
    page = render_report(result, 0.5)
    assert numbers(page, "certain")[:2] == [42, 42] and "1,958" in page
