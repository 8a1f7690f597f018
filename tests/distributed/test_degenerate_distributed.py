"""Degenerate releases on the distributed path (issue 39, item 4): one bucket, one QI
value, one sensitive value, one person; the same posteriors as the in-memory model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel
from maxent_privacy.distributed import DaskBucketized, build_distributed, solve_distributed

dd = pytest.importorskip("dask.dataframe")

pytestmark = pytest.mark.heavy

CASES = {
    "one bucket": pd.DataFrame({"id": [1, 2, 3, 4, 5], "age": [30, 31, 32, 33, 34],
                                "d": ["flu", "flu", "flu", "hiv", "cold"], "g": [1] * 5}),
    "one QI value": pd.DataFrame({"id": [1, 2, 3, 4], "age": [30] * 4,
                                  "d": ["flu", "hiv", "flu", "cold"], "g": [1, 1, 2, 2]}),
    "one sensitive value": pd.DataFrame({"id": [1, 2, 3], "age": [30, 40, 50],
                                         "d": ["flu"] * 3, "g": [1, 1, 2]}),
    "one person": pd.DataFrame({"id": [1], "age": [30], "d": ["flu"], "g": [1]}),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_the_distributed_answer_is_the_in_memory_one(case, client, tmp_path):
    frame = CASES[case]
    rel = DaskBucketized(dd.from_pandas(frame, npartitions=1), ["age"], "d", "g", "id",
                         client=client)  # fmt: skip
    structure = build_distributed([rel], client)
    result = solve_distributed(structure, tmp_path / "out", client=client)
    got = result.person_posterior().compute().set_index("person").sort_index()
    want = MaxEntModel(Bucketized(frame, ["age"], "d", "g", person="id")).solve()
    want = want.person_posterior().sort_index()
    want.columns = [str(c) for c in want.columns]
    assert got.index.tolist() == want.index.tolist()
    np.testing.assert_allclose(got[want.columns].to_numpy(), want.to_numpy(), atol=1e-9)


def test_issue_39_refusals_on_a_cluster(client, tmp_path):
    """The NaN threshold and the two deletions of issue 39, replayed on a LocalCluster:
    refused before anything is written, the user's files untouched."""
    from maxent_privacy._validation import ArgumentError
    from maxent_privacy.distributed.output import ForeignFolder
    from maxent_privacy.errors import SameFileError

    frame = CASES["one QI value"]
    release = tmp_path / "rel1"
    release.mkdir()
    frame.to_parquet(release / "part-0.parquet")
    rel = DaskBucketized(dd.read_parquet(release), ["age"], "d", "g", "id", client=client)
    structure = build_distributed([rel], client)
    with pytest.raises(ArgumentError, match="threshold must be a number in"):
        solve_distributed(structure, tmp_path / "out", client=client, threshold=float("nan"))
    with pytest.raises(SameFileError, match="is the input"):
        solve_distributed(structure, release, client=client, inputs=[str(release)])
    notes = tmp_path / "ans"
    notes.mkdir()
    (notes / "notes.txt").write_text("mine")
    with pytest.raises(ForeignFolder, match="was not written by maxent-privacy"):
        solve_distributed(structure, notes, client=client)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ans", "rel1"]
    assert (notes / "notes.txt").read_text() == "mine"
    assert [p.name for p in release.iterdir()] == ["part-0.parquet"]
    result = solve_distributed(structure, notes, client=client, overwrite=True)
    assert result.person_posterior().compute()["person"].tolist() == [1, 2, 3, 4]
