"""The shipped data sets: UCI Adult and the worked example of Du et al. (2008)."""

from __future__ import annotations

import gzip
import importlib.util
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized
from maxent_privacy._validation import ArgumentError
from maxent_privacy.datasets import (
    ADULT_COLUMNS,
    ADULT_QI,
    ADULT_SA,
    du2008_adult,
    du2008_figure1,
    load_adult,
)

EXPECTED_COLUMNS = [
    "age",
    "workclass",
    "education",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
    "income",
]
INT_COLUMNS = ["age", "capital_gain", "capital_loss", "hours_per_week"]
SOURCE = Path("/work/shared/data/adult")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return load_adult()


def test_adult_shape_columns_index(adult):
    assert adult.shape == (45_222, 13)
    assert list(adult.columns) == EXPECTED_COLUMNS == ADULT_COLUMNS
    assert isinstance(adult.index, pd.RangeIndex)
    assert adult.index[0] == 0 and adult.index[-1] == 45_221


def test_adult_dtypes(adult):
    for col in EXPECTED_COLUMNS:
        if col in INT_COLUMNS:
            assert adult[col].dtype == np.int64, col
        else:
            assert adult[col].dtype == object, col
            assert all(type(v) is str for v in adult[col].unique()), col


def test_adult_no_missing(adult):
    assert not adult.isna().any().any()
    text = adult.select_dtypes(include=object)
    assert not text.isin(["?", ""]).any().any()
    assert not text.apply(lambda s: s.str.startswith(" ").any() or s.str.endswith(" ").any()).any()


def test_adult_known_values(adult):
    counts = adult["education"].value_counts()
    assert counts["HS-grad"] == 14_783
    assert counts["Some-college"] == 9_899
    assert counts["Bachelors"] == 7_570
    assert counts["Preschool"] == 72
    assert adult["education"].nunique() == 16
    assert adult["income"].value_counts().to_dict() == {"<=50K": 34_014, ">50K": 11_208}
    assert int((adult["sex"] == "Male").sum()) == 30_527
    assert (adult["age"].min(), adult["age"].max()) == (17, 90)
    # first training row and first test row (after the 30,162 complete training rows)
    assert adult.iloc[0].tolist() == [
        39, "State-gov", "Bachelors", "Never-married", "Adm-clerical", "Not-in-family",
        "White", "Male", 2174, 0, 40, "United-States", "<=50K",
    ]  # fmt: skip
    assert adult.iloc[30_162].tolist() == [
        25, "Private", "11th", "Never-married", "Machine-op-inspct", "Own-child",
        "Black", "Male", 0, 0, 40, "United-States", "<=50K",
    ]  # fmt: skip


def test_adult_constants(adult):
    assert ADULT_QI == [
        "age",
        "workclass",
        "marital_status",
        "occupation",
        "relationship",
        "race",
        "sex",
        "native_country",
    ]
    assert ADULT_SA == "education"
    assert set(ADULT_QI + [ADULT_SA]) <= set(adult.columns)
    release = Bucketized(adult.assign(g=1), qi=ADULT_QI, sa=ADULT_SA, group="g")
    assert release.n_records == 45_222


def test_load_adult_returns_fresh_copy():
    first = load_adult()
    first.loc[0, "sex"] = "changed"
    assert load_adult().loc[0, "sex"] == "Male"


def test_shipped_file_is_deterministic_gzip():
    data = (resources.files("maxent_privacy.datasets") / "_data" / "adult.csv.gz").read_bytes()
    assert data[:2] == b"\x1f\x8b"
    assert data[4:8] == b"\x00\x00\x00\x00"  # mtime 0
    assert data[3] & 0x08 == 0  # no file name stored
    lines = gzip.decompress(data).decode("ascii").splitlines()
    assert lines[0] == ",".join(EXPECTED_COLUMNS)
    assert len(lines) == 45_223


@pytest.mark.skipif(not (SOURCE / "adult.data").exists(), reason="original UCI files not here")
def test_shipped_file_rebuilds_byte_for_byte():
    spec = importlib.util.spec_from_file_location(
        "make_adult_data", REPO / "benchmarks" / "make_adult_data.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shipped = (resources.files("maxent_privacy.datasets") / "_data" / "adult.csv.gz").read_bytes()
    assert module.build(SOURCE) == shipped


def test_du2008_adult_sample(adult):
    sample = du2008_adult()
    assert sample.shape == (14_210, 13)
    assert sample.index.is_monotonic_increasing and sample.index.is_unique
    pd.testing.assert_frame_equal(sample, adult.loc[sample.index])
    assert sample["education"].value_counts()["HS-grad"] == 4_600
    assert sample["education"].value_counts()["Some-college"] == 3_142


def test_du2008_adult_deterministic_per_seed():
    a, b, c = du2008_adult(), du2008_adult(seed=0), du2008_adult(seed=1)
    pd.testing.assert_frame_equal(a, b)
    assert not a.index.equals(c.index)
    small = du2008_adult(n=100, seed=3)
    assert len(small) == 100
    assert small.index.equals(du2008_adult(n=100, seed=3).index)


@pytest.mark.parametrize("n", [0, -1, 45_223, 1.5, "10", True])
def test_du2008_adult_bad_n(n):
    with pytest.raises(ArgumentError, match=r"^n must be a whole number in \[1, 45222\], got "):
        du2008_adult(n=n)
    with pytest.raises(ArgumentError, match=r"^seed must be a whole number >= 0"):
        du2008_adult(n=10, seed=-1)


def test_du2008_figure1_shape_and_buckets():
    frame = du2008_figure1()
    assert frame.shape == (10, 5)
    assert list(frame.columns) == ["name", "gender", "degree", "disease", "bucket"]
    release = Bucketized(frame, qi=["gender", "degree"], sa="disease", group="bucket")
    assert (release.n_records, release.n_groups) == (10, 3)
    buckets = release.buckets()
    assert buckets["size"].tolist() == [4, 3, 3]
    assert buckets["disease"].tolist() == [
        ["Breast Cancer", "Flu", "Flu", "Pneumonia"],
        ["Breast Cancer", "HIV", "Pneumonia"],
        ["Flu", "HIV", "Lung Cancer"],
    ]
    assert buckets["qi"].iloc[0] == [
        ("male", "college"),
        ("male", "college"),
        ("female", "college"),
        ("male", "high school"),
    ]
    assert release.sa_values == ["Breast Cancer", "Flu", "HIV", "Lung Cancer", "Pneumonia"]
