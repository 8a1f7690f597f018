"""Data sets: the papers' worked examples and the real UCI Adult data.

>>> from maxent_privacy import datasets
>>> datasets.du2008_figure1().shape
(10, 5)
>>> datasets.load_adult().shape
(45222, 13)
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

import numpy as np
import pandas as pd

from .._validation import check_integer, check_seed

__all__ = [
    "byun2008_tables",
    "wang2008_figure1",
    "ADULT_COLUMNS",
    "ADULT_QI",
    "ADULT_SA",
    "du2008_adult",
    "du2008_figure1",
    "load_adult",
]

#: Columns of :func:`load_adult`, in order.
ADULT_COLUMNS = [
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
#: The eight quasi-identifiers of the Privacy-MaxEnt experiments on Adult (Du et al. 2008).
ADULT_QI = [
    "age",
    "workclass",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native_country",
]
#: The sensitive attribute of the Privacy-MaxEnt experiments (16 values).
ADULT_SA = "education"

_ADULT_INT = ["age", "capital_gain", "capital_loss", "hours_per_week"]
_ADULT_ROWS = 45_222
_ADULT_FILE = "adult.csv.gz"


def du2008_figure1() -> pd.DataFrame:
    """Figure 1 of Du, Teng and Zhu (SIGMOD 2008): ten patients in three buckets.

    Columns ``name, gender, degree, disease, bucket``. The original table (a) is the
    rows; the bucketized release (b) is ``Bucketized(frame, qi=["gender", "degree"],
    sa="disease", group="bucket")``. In the paper's abstract form (c), q1 = (male,
    college), q2 = (female, college), q3 = (male, high school), q4 = (female, junior),
    q5 = (female, graduate), q6 = (male, graduate); s1 = Breast Cancer, s2 = Flu,
    s3 = Pneumonia, s4 = HIV, s5 = Lung Cancer.
    """
    rows = [
        ("Allen", "male", "college", "Flu", 1),
        ("Brian", "male", "college", "Pneumonia", 1),
        ("Cathy", "female", "college", "Breast Cancer", 1),
        ("David", "male", "high school", "Flu", 1),
        ("Ethan", "male", "college", "HIV", 2),
        ("Frank", "male", "high school", "Pneumonia", 2),
        ("Grace", "female", "junior", "Breast Cancer", 2),
        ("Helen", "female", "college", "HIV", 3),
        ("Iris", "female", "graduate", "Lung Cancer", 3),
        ("James", "male", "graduate", "Flu", 3),
    ]
    return pd.DataFrame(rows, columns=["name", "gender", "degree", "disease", "bucket"])


@lru_cache(maxsize=1)
def _read_adult() -> pd.DataFrame:
    ref = resources.files("maxent_privacy.datasets") / "_data" / _ADULT_FILE
    dtypes = {c: ("int64" if c in _ADULT_INT else object) for c in ADULT_COLUMNS}
    with ref.open("rb") as fh:
        frame = pd.read_csv(fh, compression="gzip", dtype=dtypes, keep_default_na=False)
    if list(frame.columns) != ADULT_COLUMNS or len(frame) != _ADULT_ROWS:
        raise RuntimeError(f"the shipped {_ADULT_FILE} is damaged; reinstall maxent_privacy")
    return frame


def load_adult() -> pd.DataFrame:
    """The UCI Adult (Census Income) data: 45,222 complete records, 13 columns.

    Source: UCI Machine Learning Repository, Barry Becker and Ronny Kohavi (1996),
    "Adult" data set, https://doi.org/10.24432/C5XW20, licensed CC BY 4.0. Changes made
    for this package: the columns ``fnlwgt`` and ``education-num`` were dropped, the
    others renamed to snake_case; every record with a missing value (``?``) was
    dropped; the training file (30,162 complete records) and the test file (15,060)
    were concatenated in that order and the test file's income labels lost their
    trailing period. ``benchmarks/make_adult_data.py`` rebuilds the shipped file.

    Columns: ``age, capital_gain, capital_loss, hours_per_week`` are ``int64``; the
    others (``workclass, education, marital_status, occupation, relationship, race,
    sex, native_country, income``) hold Python ``str`` objects (``object`` dtype).
    ``income`` is ``"<=50K"`` or ``">50K"``. The index is a RangeIndex 0..45,221 in file
    order. Each call returns a fresh copy.

    The Privacy-MaxEnt experiments use :data:`ADULT_SA` (``education``, 16 values) as
    the sensitive attribute and the eight :data:`ADULT_QI` as quasi-identifiers.

    >>> from maxent_privacy.datasets import load_adult
    >>> adult = load_adult()
    >>> adult.shape
    (45222, 13)
    >>> int((adult["education"] == "HS-grad").sum())
    14783
    >>> adult["income"].value_counts().to_dict()
    {'<=50K': 34014, '>50K': 11208}
    """
    return _read_adult().copy()


def du2008_adult(n: int = 14_210, seed: int = 0) -> pd.DataFrame:
    """A deterministic random sample of ``n`` records of :func:`load_adult`.

    Du, Teng and Zhu (SIGMOD 2008, Section 7) evaluate Privacy-MaxEnt on 14,210 Adult
    records bucketized into 2,842 buckets of five; which records they drew is not
    published, so this draws ``n`` of the 45,222 complete records without replacement
    with ``numpy.random.default_rng(seed)``. The rows keep their :func:`load_adult`
    index labels (so the sample can be joined back) and are sorted by them.

    >>> from maxent_privacy.datasets import du2008_adult
    >>> sample = du2008_adult()
    >>> len(sample), sample.index.is_monotonic_increasing
    (14210, True)
    """
    n = check_integer(n, "n", minimum=1, maximum=_ADULT_ROWS)
    check_seed(seed)
    frame = _read_adult()
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(len(frame), size=int(n), replace=False))
    return frame.iloc[rows].copy()


def wang2008_figure1() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 1 of Wang, Zhu, Du and Teng (ICDM 2008): two releases of an updated table.

    Returns the original tables D1 (13 patients) and D2 (12 patients: 7, 10 and 13
    deleted, 14 and 15 added) with columns ``pseudonym, name, gender, zip, disease,
    bucket``; the bucket column is the disguised releases D'1 and D'2 (Figure 1(b), (d)).
    Release with ``Bucketized(d, qi=["gender", "zip"], sa="disease", group="bucket",
    person="pseudonym")``. The paper prints D1 only in part; the diseases of patients 1-9
    come from D2 (a patient's disease does not change) and patient 7's (Diabetes) is the
    one left in D'1's second bucket. Patient 7's name is not given (None).

    >>> d1, d2 = wang2008_figure1()
    >>> len(d1), len(d2)
    (13, 12)
    """
    d1 = [
        (1, "Allen", "male", 13115, "Flu", 1),
        (2, "Brian", "male", 13120, "Pneumonia", 1),
        (3, "Cathy", "female", 13210, "Diabetes", 1),
        (4, "Daily", "female", 13228, "Flu", 1),
        (5, "Ethan", "male", 13315, "Flu", 2),
        (6, "Frank", "male", 13471, "Pneumonia", 2),
        (7, None, "female", 13520, "Diabetes", 2),
        (8, "Helen", "female", 13347, "HIV", 3),
        (9, "Irwan", "male", 13428, "Flu", 3),
        (10, "James", "male", 13451, "Lung Cancer", 3),
        (11, "Katey", "female", 13359, "Pneumonia", 4),
        (12, "Liman", "male", 13427, "HIV", 4),
        (13, "Milin", "female", 13530, "Diabetes", 4),
    ]
    d2 = [
        (1, "Allen", "male", 13115, "Flu", 1),
        (2, "Brian", "male", 13120, "Pneumonia", 1),
        (14, "Nikon", "male", 13119, "Diabetes", 1),
        (3, "Cathy", "female", 13210, "Diabetes", 2),
        (4, "Daily", "female", 13228, "Flu", 2),
        (15, "Olice", "female", 13244, "Pneumonia", 2),
        (5, "Ethan", "male", 13315, "Flu", 3),
        (8, "Helen", "female", 13347, "HIV", 3),
        (11, "Katey", "female", 13359, "Pneumonia", 3),
        (6, "Frank", "male", 13471, "Pneumonia", 4),
        (9, "Irwan", "male", 13428, "Flu", 4),
        (12, "Liman", "male", 13427, "HIV", 4),
    ]
    cols = ["pseudonym", "name", "gender", "zip", "disease", "bucket"]
    return pd.DataFrame(d1, columns=cols), pd.DataFrame(d2, columns=cols)


from .byun import byun2008_tables  # noqa: E402  (kept in its own module)
