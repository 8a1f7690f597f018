"""One 2-worker LocalCluster (processes, one thread each, 1.5 GB per worker) and three
pooled releases of 50,000 people written as Parquet partitions, shared by the module
tests here; the in-memory model of the same files is the reference."""

import logging
import warnings

import pandas as pd
import pytest

distributed = pytest.importorskip("dask.distributed")
pytest.importorskip("pyarrow")

from maxent_privacy import Bucketized, MaxEntModel  # noqa: E402
from maxent_privacy.distributed.synthetic import QI, SA, write_synthetic  # noqa: E402

N = 50_000


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "heavy: a distributed test that starts a Dask cluster (tens of seconds)"
    )


@pytest.fixture(scope="session")
def client():
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with (
            distributed.LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                memory_limit="1.5GB",
                dashboard_address=None,
            ) as cluster,
            distributed.Client(cluster) as c,
        ):
            c.wait_for_workers(2)
            yield c


@pytest.fixture(scope="session")
def parquet_releases(tmp_path_factory):
    """Folders of three releases of 50,000 people (50 regions: 50 components), five
    Parquet files each."""
    folder = tmp_path_factory.mktemp("releases")
    return write_synthetic(folder, N, releases=3, regions=50, chunk=10_000, seed=1)


@pytest.fixture(scope="session")
def in_memory_model(parquet_releases):
    """The in-memory model of the same files."""
    rels = [Bucketized(pd.read_parquet(p), QI, SA, "group", person="pid") for p in parquet_releases]
    return MaxEntModel(rels)


@pytest.fixture(scope="session")
def in_memory(in_memory_model):
    """The in-memory model and its answer."""
    return in_memory_model, in_memory_model.solve(progress=False)
