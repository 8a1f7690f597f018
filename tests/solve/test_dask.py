"""Dask: components shipped to separate worker processes give the local answer.

One 2-worker ``LocalCluster`` (processes, one thread each) serves every test of the module.
The model: three regions of Adult records side by side in one release (no bucket mixes
regions), with rules that each name their region, so there are many independent Newton
components with facts. The references are the local solve and cvxpy + Clarabel on the
same model.
"""

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel, SolverOptionError, anonymize, datasets, soft
from maxent_privacy.rules import mine_rules

distributed = pytest.importorskip("dask.distributed")

SA = "education"
QI = list(datasets.ADULT_QI) + ["region"]


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        c.wait_for_workers(2)
        yield c


def regions_model(n_regions: int = 3, n: int = 3000, k: int = 40) -> MaxEntModel:
    frame = datasets.du2008_adult(n=n).reset_index(drop=True)
    frame["region"] = np.arange(n) % n_regions
    parts = []
    for g in range(n_regions):
        rel = anonymize.anatomize(
            frame[frame.region == g], QI, SA, l=4, seed=g, nonsensitive=["HS-grad", "Some-college"]
        )
        parts.append(rel.frame.assign(group=rel.frame["group"] + 1000 * g))
    model = MaxEntModel(Bucketized(pd.concat(parts), QI, SA, "group"))
    rules = mine_rules(frame, qi=["region", "age", "sex"], sa=SA, min_support=3)
    model.add(rules.top(k, k), name="rule")
    return model


def test_newton_components_on_two_worker_processes(client):
    model = regions_model()
    local = model.solve(progress=False)
    with distributed.get_task_stream(client) as ts:
        remote = model.solve(client=client, progress=False)
    reference = model.solve(solver="CLARABEL", progress=False)  # cvxpy + Clarabel, polished

    assert local.solver_stats["solved"] >= 20  # many Newton components, not closed form
    assert remote.solver_stats["solver"] == "MAXENT"
    assert (remote.components["method"] == "maxent (dual Newton)").sum() >= 2  # batches
    post = remote.posterior()
    assert (local.posterior() - post).abs().to_numpy().max() <= 1e-9
    assert (reference.posterior() - post).abs().to_numpy().max() <= 1e-6
    assert remote.certificate.primal_residual <= 1e-9
    assert abs(remote.certificate.gap) <= 1e-9
    assert remote.status == "optimal"

    # a dual for every rule: NaN where presolve fixed all its cells (P(s | q) = 0 rules),
    # else the local solve's and Clarabel's
    duals = remote.duals
    assert len(duals) == 80 and duals.notna().sum() >= 30
    np.testing.assert_allclose(duals, local.duals, rtol=0, atol=1e-9)
    np.testing.assert_allclose(duals, reference.duals, rtol=0, atol=1e-6)

    # every worker process solved batches of components
    done = [t for t in ts.data if str(t["key"]).startswith("run_job")]
    assert len(done) == (remote.components["method"] == "maxent (dual Newton)").sum()
    assert {t["worker"] for t in done} == set(client.scheduler_info()["workers"])


def test_conic_models_are_solved_locally_with_a_client(client):
    """A soft fact takes the model to Clarabel, which Dask does not run: the client is
    not used, and the answer is the local one."""
    model = regions_model(n_regions=2, n=1200, k=10)
    model.add(soft(model.P("Bachelors", region=0) <= 0.05, weight=0.5), name="cap")
    local = model.solve(progress=False)
    with distributed.get_task_stream(client) as ts:
        remote = model.solve(client=client, progress=False)
    assert remote.solver_stats["solver"] == "CLARABEL"
    assert not [t for t in ts.data if str(t["key"]).startswith("run_job")]
    assert (local.posterior() - remote.posterior()).abs().to_numpy().max() <= 1e-9
    np.testing.assert_allclose(remote.duals, local.duals, rtol=0, atol=1e-9)
    with pytest.raises(SolverOptionError, match="maxent"):
        model.solve(solver="CLARABEL", client=client)
