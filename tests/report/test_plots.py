"""Plots that scale (issue 15): the riskiest rows by default, a risk histogram, a bounded
figure size whatever the number of rows.

Times are measured by ``benchmarks/plots.py`` (not asserted here); this file checks what
is drawn and the pixel size of the saved figures.
"""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from PIL import Image  # noqa: E402

import maxent_privacy as mp  # noqa: E402
from maxent_privacy import Bucketized, MaxEntModel, anonymize, datasets  # noqa: E402
from maxent_privacy.plotting import MAX_LABELS, plot_posterior, riskiest  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def pixels(ax) -> tuple[int, int]:
    buf = io.BytesIO()
    ax.figure.savefig(buf, format="png")
    buf.seek(0)
    return Image.open(buf).size


def labels(ax) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels()]


@pytest.fixture(scope="module")
def adult():
    """The README tour's release: Du Adult anatomized (7,826 QI values, 14,210 people)."""
    frame = datasets.du2008_adult()
    release = anonymize.anatomize(
        frame, datasets.ADULT_QI, "education", l=5, nonsensitive=["HS-grad", "Some-college"]
    )
    return MaxEntModel(release).solve()


@pytest.fixture
def figure1():
    release = Bucketized(
        datasets.du2008_figure1(),
        qi=["gender", "degree"],
        sa="disease",
        group="bucket",
        person="name",
    )
    model = MaxEntModel(release)
    model.add(model.P("Breast Cancer", gender="male") == 0)
    return model.solve()


def test_large_tables_stay_readable(adult):
    n = len(adult.posterior())
    assert n > 2_500
    for ax in (adult.plot(), adult.plot(by="group"), adult.plot(top=None), mp.plot_risk(adult)):
        width, height = pixels(ax)
        assert width < 2_000 and height < 2_000, (width, height)
        assert len(labels(ax)) <= MAX_LABELS
        plt.close(ax.figure)


def test_default_shows_the_30_riskiest(adult):
    ax = adult.plot()
    assert ax.get_title() == f"the 30 riskiest of {len(adult.posterior()):,} QI values"
    image = ax.get_images()[0].get_array()
    assert image.shape == (30, 16)
    rows = image.max(axis=1)
    assert (np.diff(rows) <= 1e-12).all()  # worst first
    assert rows[0] == pytest.approx(adult.posterior().to_numpy().max())


def test_small_tables_keep_their_order(figure1):
    ax = figure1.plot(by="group")
    assert ax.get_title() == ""
    assert labels(ax)[0] == "female, college, 1"
    ax = figure1.plot(by="person", top=2)
    assert labels(ax) == ["Cathy", "Grace"]
    assert ax.get_title() == "the 2 riskiest of 10 people"


def test_riskiest_is_stable_and_checked():
    post = pd.DataFrame({"a": [0.2, 0.9, 0.5, 0.9], "b": [0.8, 0.1, 0.5, 0.1]}, index=list("wxyz"))
    assert riskiest(post, 2).index.tolist() == ["x", "z"]
    assert riskiest(post, 10).index.tolist() == list("wxyz")
    assert riskiest(post, None).index.tolist() == list("wxyz")
    with pytest.raises(ValueError, match="top"):
        riskiest(post, 0)


def test_every_kth_label_on_a_long_table():
    post = pd.DataFrame(np.eye(500, 3), index=[f"row {i}" for i in range(500)])
    ax = plot_posterior(post)
    shown = labels(ax)
    assert len(shown) <= MAX_LABELS and shown[0] == "row 0"
    assert max(pixels(ax)) < 2_000


def test_plot_risk_counts_people(figure1):
    ax = mp.plot_risk(figure1, threshold=0.99)
    assert ax.get_title() == "2 of 10 people (20%) at risk >= 0.99"
    heights = [p.get_height() for p in ax.patches]
    assert sum(heights) == 10  # one count per person
    plain = Bucketized(
        datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket"
    )
    ax = mp.plot_risk(MaxEntModel(plain).solve())  # no ids: records weigh their classes
    assert sum(p.get_height() for p in ax.patches) == 10
    assert ax.get_title() == "4 of 10 people (40%) at risk >= 0.5"


def test_plot_risk_takes_a_risk_table(figure1):
    table = figure1.risk_table(threshold=0.99)
    ax = mp.plot_risk(table, threshold=None, title="Figure 1")
    assert ax.get_title() == "Figure 1"
    assert not [line for line in ax.get_lines() if line.get_linestyle() == "--"]
