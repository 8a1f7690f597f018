"""Identity risk for every release kind (issue 39, item 6): 1 / |equivalence class| for a
generalized release, journalist risk (1 / the people of the population who fit the
class's cells) with a population, and k, l and the largest identity risk on the page.

Every expected number is counted by hand from the tables below.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from paper_models import ARX
from paper_models import ARX_PEOPLE as PEOPLE

from maxent_privacy import Bucketized, Generalized, MaxEntModel, datasets
from maxent_privacy.report.html import render_report
from maxent_privacy.report.identity import identity_risk, k_and_l

# the ARX-style release of paper_models, its third class written as an interval
ARX = ARX.assign(age=[*ARX["age"][:5], "[40, 50[", "[40, 50["])


def test_arx_release_with_a_population_has_identity_risk():
    """Was NaN for every person (issue 39): A, B, C share class 1 (3 people fit
    20-29/021**), D, E class 2 (2 people), F, G class 3 (2 people)."""
    release = Generalized(ARX, qi=["age", "zip"], sa="d", group="g")
    result = MaxEntModel(release, populations=[PEOPLE]).solve()
    table = result.risk_table(0.5).set_index("name")
    expected = {"A": 1 / 3, "B": 1 / 3, "C": 1 / 3, "D": 1 / 2, "E": 1 / 2, "F": 1 / 2, "G": 1 / 2}
    got = table["identity"].to_dict()
    assert got == pytest.approx({k: round(v, 4) for k, v in expected.items()})
    assert k_and_l(release) == {"k": 2, "l": 1}  # class 2 holds Cold only


def test_journalist_risk_counts_the_people_who_fit_overlapping_cells():
    """Class 3's cells (*, *) fit all 7 people: its records' journalist risk is 1/7,
    though the class has 2 records (prosecutor 1/2). F and G fit class 3 only: 1/7;
    A, B, C fit class 1 too: their risk is the larger, 1/3; D, E: 1/2."""
    rows = ARX.assign(age=ARX["age"].where(ARX["g"] != 3, "*"))
    rows["zip"] = rows["zip"].where(rows["g"] != 3, "*")
    people = PEOPLE.assign(age=[21, 25, 28, 33, 37, 45, 52])
    people.loc["G", "zip"] = "10001"
    release = Generalized(rows, qi=["age", "zip"], sa="d", group="g")
    model = MaxEntModel(release, populations=[people])
    got = identity_risk(model, pd.DataFrame({"person": list("ABCDEFG")}))
    np.testing.assert_allclose(got, [1 / 3] * 3 + [1 / 2] * 2 + [1 / 7] * 2)
    # without the population, the prosecutor risk per QI-cell row: 1 / the class's records
    alone = SimpleNamespace(releases=[release], populations=[None])
    keys = pd.DataFrame({"age": ["20-29", "30-39", "*"], "zip": ["021**", "021**", "*"]})
    np.testing.assert_allclose(identity_risk(alone, keys), [1 / 3, 1 / 2, 1 / 2])


def test_generalized_release_with_person_ids_is_prosecutor_risk():
    release = Generalized(ARX.assign(pid=list("ABCDEFG")), ["age", "zip"], "d", "g", person="pid")
    model = SimpleNamespace(releases=[release], populations=[None])
    got = identity_risk(model, pd.DataFrame({"person": ["A", "D", "G"]}))
    np.testing.assert_allclose(got, [1 / 3, 1 / 2, 1 / 2])


def test_bucketized_k_and_l():
    """Figure 1 of Du et al.: Grace is the only female junior (k = 1); each bucket holds
    three distinct diseases (bucket 1: Flu, Pneumonia, Breast Cancer, Flu: l = 3)."""
    release = Bucketized(datasets.du2008_figure1(), ["gender", "degree"], "disease", "bucket")
    assert k_and_l(release) == {"k": 1, "l": 3}


def _text(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page))


def test_page_shows_k_l_and_the_largest_identity_risk():
    release = Generalized(ARX, qi=["age", "zip"], sa="d", group="g")
    page = _text(render_report(MaxEntModel(release, populations=[PEOPLE]).solve(), 0.5))
    assert "k = 2, l = 1" in page
    assert "largest identity risk 0.5000" in page
    assert "journalist" in page and "nan" not in page.lower().split("identity")[1][:300]
