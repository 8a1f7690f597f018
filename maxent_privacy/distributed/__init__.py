"""Releases, build and solve on a Dask cluster: microdata too big for one process.

Pooled bucketized releases read as Dask DataFrames (``dd.read_parquet``,
``dd.read_csv``) are checked, built and solved on any Dask cluster (a
``dask.distributed.Client``: a LocalCluster, dask-jobqueue, Kubernetes, Coiled); only
small summaries come back to the client, and the workers write the results.

Modules, in the order the data flows:

- ``releases``: :class:`DaskBucketized`, a release as a Dask DataFrame, checked partition
  by partition (errors name the release, partition and row)
- ``build``: :func:`build_distributed`, the :class:`DistributedStructure` (record
  classes, cells, Relation rows, components) kept on the workers as partitions
- ``components``: connected components of the class-bucket graph (a union-find per
  partition, merged pairwise across partitions)
- ``solve``: :func:`solve_distributed`: components that fit a worker solved there by the
  in-memory solver, larger ones by ``cg``; results written as Parquet
- ``cg``: Newton on the dual with conjugate-gradient steps whose products and
  block-Jacobi preconditioner are computed partition by partition
- ``partitions``: a component's partitions on the workers and the sums over them,
  added up on the workers (the client receives one vector per sum)
- ``output``: the results folder, written under a temporary name and renamed
- ``synthetic``: synthetic pooled releases written as Parquet (tests, benchmarks)

The command ``maxent-privacy distributed`` is :mod:`maxent_privacy.cli.distributed`.

Names are imported on first use (``import maxent_privacy.distributed`` loads no Dask).

>>> import pandas as pd, dask.dataframe as dd
>>> from maxent_privacy.distributed import DaskBucketized, build_distributed
>>> frame = pd.DataFrame({"id": [1, 2, 3, 4], "age": [30, 30, 41, 41],
...                       "d": ["flu", "hiv", "flu", "flu"], "g": [1, 1, 2, 2]})
>>> release = DaskBucketized(dd.from_pandas(frame, npartitions=2), ["age"], "d", "g", "id")
>>> build_distributed([release]).n_classes
2
"""

from __future__ import annotations

import importlib

__all__ = [
    "DaskBucketized",
    "DistributedResult",
    "DistributedStructure",
    "build_distributed",
    "solve_distributed",
]

_WHERE = {
    "DaskBucketized": "releases",
    "DistributedStructure": "build",
    "build_distributed": "build",
    "DistributedResult": "solve",
    "solve_distributed": "solve",
}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
