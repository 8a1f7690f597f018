"""Components that fit a worker, solved there by the in-memory solver: the people's
posteriors equal the in-memory answer to 1e-9, the certificate adds up to the in-memory
one, and the results folder appears whole (written by the workers)."""

import json

import numpy as np
import pandas as pd
import pytest

from maxent_privacy.distributed import DaskBucketized, build_distributed, solve_distributed
from maxent_privacy.distributed.synthetic import QI, SA

dd = pytest.importorskip("dask.dataframe")

pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def structure(client, parquet_releases):
    rels = [
        DaskBucketized(dd.read_parquet(p), QI, SA, "group", "pid", name=f"release {r + 1}",
                       client=client)
        for r, p in enumerate(parquet_releases)
    ]  # fmt: skip
    return build_distributed(rels, client)


def test_posteriors_equal_the_in_memory_answer(client, structure, in_memory, tmp_path):
    model, reference = in_memory
    target = tmp_path / "answer"
    result = solve_distributed(structure, target, client=client)

    assert result.solver_stats["components"] == 50
    assert result.solver_stats["in_memory"] == 50 and result.solver_stats["newton_cg"] == 0
    post = pd.read_parquet(target / "posterior").set_index("person").sort_index()
    ref = reference.person_posterior().sort_index()
    ref.columns = [str(c) for c in ref.columns]
    assert post.index.equals(ref.index)  # every person, once
    assert np.abs(post[ref.columns].to_numpy() - ref.to_numpy()).max() <= 1e-9

    # the certificate: the largest residual, entropies and dual bounds added up
    cert, theirs = result.certificate, reference.certificate
    assert cert.primal_residual <= 1e-6 and cert.n_records == theirs.n_records
    assert abs(cert.entropy - theirs.entropy) <= 1e-9
    assert abs(cert.dual_bound - theirs.dual_bound) <= 1e-9
    assert abs(cert.gap) <= 1e-9
    written = json.loads((target / "certificate.json").read_text())
    assert written["entropy"] == pytest.approx(cert.entropy, abs=1e-12)
    comps = pd.read_parquet(target / "components")
    assert len(comps) == 50 and (comps["status"] == "optimal").all()
    assert comps["persons"].sum() == model.structure.n_records

    # the risk table: each person's likeliest value and its posterior
    risk = pd.read_parquet(target / "risk").set_index("person").sort_index()
    best = ref.to_numpy().max(axis=1)
    assert np.abs(risk["maxent"].to_numpy() - best).max() <= 1e-9
    untied = ~risk["tied"].to_numpy()
    assert (risk["value"].to_numpy()[untied] == ref.idxmax(axis=1).to_numpy()[untied]).all()
    assert list(risk.columns[:3]) == QI

    # whole or nothing: no temporary folder is left, and a second run replaces the first
    assert [p.name for p in tmp_path.iterdir()] == ["answer"]
    again = solve_distributed(structure, target, client=client)
    assert again.certificate.entropy == pytest.approx(cert.entropy, abs=1e-12)
    assert [p.name for p in tmp_path.iterdir()] == ["answer"]
    lazy = again.person_posterior()
    assert isinstance(lazy, dd.DataFrame) and len(lazy.columns) == 6
