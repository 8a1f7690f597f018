"""One QI column: its keys are a flat index from ``groupby([qi])`` and a one-level
MultiIndex from ``MultiIndex.from_frame``. pandas 3 aligns the two in ``reindex``, pandas 2
matched nothing: every bound's record count was the int64 minimum (a NaN cast), the
metrics said "the original table and the release hold different QI values" and identity
risk was NaN. These replay that on whichever pandas is installed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel, metrics
from maxent_privacy._frames import flat_keys, reindex_keys
from maxent_privacy.report.identity import identity_risk

FRAME = pd.DataFrame(
    {
        "sex": ["F", "F", "M", "M", "F", "M"],
        "s": ["flu", "hiv", "flu", "cold", "hiv", "cold"],
        "g": [1, 1, 1, 2, 2, 2],
    }
)


def test_reindex_keys_aligns_one_level_multiindex_and_flat_index():
    flat = pd.Series([3, 4], index=pd.Index(["F", "M"], name="sex"))
    multi = pd.MultiIndex.from_frame(pd.DataFrame({"sex": ["M", "F", "X"]}))
    got = reindex_keys(flat, multi)
    assert got.index.equals(multi)
    assert got.iloc[:2].tolist() == [4.0, 3.0] and np.isnan(got.iloc[2])
    back = reindex_keys(got, pd.Index(["F", "Y"], name="sex"), fill_value=0)
    assert back.tolist() == [3.0, 0.0]
    assert flat_keys(multi).tolist() == ["M", "F", "X"]
    two = pd.Series([1, 2], index=pd.MultiIndex.from_tuples([("F", 1), ("M", 1)]))
    assert reindex_keys(two, pd.MultiIndex.from_tuples([("M", 1)])).tolist() == [2]


def test_bounds_count_the_records_of_a_single_qi_value():
    result = MaxEntModel(Bucketized(FRAME, ["sex"], "s", "g")).solve()
    b = result.bounds()
    records = b["records"].groupby(level="sex").first()
    assert records.to_dict() == {"F": 3, "M": 3}
    assert np.isfinite(b["lower"]).all() and np.isfinite(b["upper"]).all()
    assert b.loc[("F", "hiv"), "upper"] == pytest.approx(2 / 3, abs=1e-6)
    by_group = result.bounds(by="group")["records"]
    assert by_group.loc[("F", 1, "flu")] == 2 and by_group.loc[("M", 2, "cold")] == 2


def test_metrics_and_identity_risk_with_a_single_qi_column():
    result = MaxEntModel(Bucketized(FRAME, ["sex"], "s", "g")).solve()
    truth = metrics.true_posterior(result, FRAME)
    assert flat_keys(truth.index).tolist() == ["F", "M"]
    assert truth.iloc[0].to_dict() == pytest.approx({"cold": 0, "flu": 1 / 3, "hiv": 2 / 3})
    assert np.isfinite(metrics.estimation_accuracy(result, FRAME))
    assert metrics.max_posterior(result)["records"].tolist() == [3, 3]
    keys = pd.DataFrame({"sex": ["F", "M"]})
    assert identity_risk(result.model, keys).tolist() == [pytest.approx(1 / 3)] * 2


def test_largest_share_and_risk_summary_per_qi_value():
    from maxent_privacy.report.likeliest import largest_share
    from maxent_privacy.report.risk import risk_summary

    result = MaxEntModel(Bucketized(FRAME, ["sex"], "s", "g")).solve()
    best = result.posterior().max(axis=1).to_numpy()
    assert best == pytest.approx([4 / 9, 4 / 9])  # pandas 2 read 4/3: share of NaN records
    assert largest_share(result, None) == pytest.approx(best)
    summary = risk_summary(result, threshold=0.5)
    assert (summary["qi_values"], summary["qi_values_at_risk"]) == (2, 0)
