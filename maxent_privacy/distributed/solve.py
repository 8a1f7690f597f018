"""The distributed solve: every component where it fits, results written by the workers.

:func:`solve_distributed` takes a :class:`~.build.DistributedStructure` and a results
folder:

* components that fit one worker (at most ``max_worker_cells`` cells; by default what a
  worker's memory limit holds, :func:`worker_cells`) are gathered by a shuffle of the
  release rows by component; on the worker, each component's rows become ordinary
  :class:`~maxent_privacy.Bucketized` releases and a :class:`~maxent_privacy.MaxEntModel`
  of them is solved by the in-memory solver (presolve, Newton, certificate:
  :func:`solve_component`);
* a component too big for one worker is solved by Newton's method on the dual with
  conjugate-gradient steps computed partition by partition (:mod:`.cg`);
* each worker writes its people's posteriors (``posterior/``), risk rows (``risk/``)
  and per-component certificates (``components/``) as Parquet parts into the results
  folder under construction (:mod:`.output`); the client adds up the certificates (the
  largest residual, the entropies and dual bounds) and renames the folder into place.

A worker lost during the solve is replaced by Dask and its tasks run again (a part is
rewritten whole); a cluster restart (``client.restart()``) cancels everything: the solve
then raises :class:`~maxent_privacy.errors.SolverFailed` naming it, and no folder is
written. Never a partial answer: the folder is renamed only when every part is there.

>>> rows = pd.DataFrame({"person": [1, 2, 1, 2], "age": [30, 30, 30, 30],
...                      "__group__": [1, 1, 5, 6], "s": [0, 1, 0, 1], "release": [0, 0, 1, 1]})
>>> post, risk, summary = solve_component(rows, ["age"], "d", ["flu", "hiv"])
>>> post["person"].tolist(), post["flu"].tolist(), risk["value"].tolist(), summary["persons"]
([1, 2], [1.0, 0.0], ['flu', 'hiv'], 2)
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from .._validation import check_threshold
from ..errors import SolverFailed
from ..results import Certificate
from .build import LONG_GROUP, PERSON, RELEASE, DistributedStructure, S, popcount
from .output import ResultFolder, risk_rows, write_part
from .releases import compute

__all__ = ["DistributedResult", "solve_component", "solve_distributed", "worker_cells"]

#: bytes of worker memory a cell of an in-memory solve needs (build and Newton, with the
#: pandas frames of the sub-model): the solve of 10M records over 5 releases took 12.1 GB
#: for ~25M cells; taken twice over, and half a worker's memory kept free
BYTES_PER_CELL = 1000


def worker_cells(client) -> int:
    """The most cells one in-memory component solve takes on the smallest worker."""
    if client is None:
        return 2_000_000
    limits = [w.get("memory_limit") or 0 for w in client.scheduler_info()["workers"].values()]
    limit = min(limits) if limits and min(limits) > 0 else 4 * 2**30
    return int(limit / 2 / BYTES_PER_CELL)


#: the sensitive column of a component's in-memory releases
VALUE = "__value__"


def solve_component(rows: pd.DataFrame, qi: list, sa: str, values: list, tol: float = 1e-6,
                    threshold: float = 0.5):  # fmt: skip
    """Posteriors, risk rows and certificate of one component from its release rows
    (``person``, QI, ``__group__``, ``s``, ``release``), by the in-memory solver."""
    from ..model import MaxEntModel
    from ..releases.bucketized import Bucketized

    t0 = time.perf_counter()
    names = pd.Series(values, dtype=object)
    releases = []
    for _, part in rows.groupby(RELEASE, sort=True):
        frame = part[[PERSON, *qi, LONG_GROUP]].copy()
        # the values under a name of ours: the user's may be one the model's tables use
        frame[VALUE] = names.take(part[S].to_numpy()).to_numpy()
        releases.append(Bucketized(frame, qi, VALUE, LONG_GROUP, person=PERSON))
    model = MaxEntModel(releases if len(releases) > 1 else releases[0])
    result = model.solve(progress=False, tol=tol)
    table = result.person_posterior().reindex(columns=values, fill_value=0.0)
    post = pd.DataFrame({PERSON: table.index.to_numpy()})
    for v in values:
        post[str(v)] = table[v].to_numpy(dtype=float)
    people = rows.drop_duplicates(PERSON).set_index(PERSON)[qi].reindex(post[PERSON].to_numpy())
    cert = result.certificate
    n = cert.n_records
    summary = {
        "persons": n,
        "cells": result.structure.n_cells,
        "method": "in memory (" + result.solver_stats["solver"] + ")",
        "status": result.status,
        "residual": cert.data_residual,
        "entropy": cert.entropy * n,
        "dual_bound": cert.dual_bound * n,
        "seconds": time.perf_counter() - t0,
    }
    return post, risk_rows(post, people, values, threshold), summary


def _solve_partition(part, k: int, qi, sa, values, tol, threshold, folder) -> dict:
    """Solve every component of one partition (on a worker), write its parts."""
    posts, risks, rows = [], [], []
    for comp, group in part.groupby("comp", sort=True):
        post, risk, summary = solve_component(group, qi, sa, values, tol, threshold)
        posts.append(post)
        risks.append(risk)
        rows.append({"comp": int(comp), **summary})
    if not rows:
        return {"parts": 0, "components": pd.DataFrame()}
    name = f"memory-{k:05d}"
    write_part(folder / "posterior", name, pd.concat(posts, ignore_index=True))
    write_part(folder / "risk", name, pd.concat(risks, ignore_index=True))
    table = pd.DataFrame(rows)
    write_part(folder / "components", name, table)
    kept = ["persons", "residual", "entropy", "dual_bound", "status"]
    return {"parts": 1, "components": table[kept]}


def _rows_with_comp(part: pd.DataFrame, labels: np.ndarray) -> pd.DataFrame:
    out = part.copy()
    out["comp"] = labels[part["bucket"].to_numpy(dtype=np.int64)] if len(part) else 0
    return out


def _class_cells(part: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "comp": part["comp"].to_numpy(),
            "cells": popcount(part["mask"].to_numpy(dtype=np.int64)),
            "persons": part["n"].to_numpy(dtype=np.int64),
        }
    )


class DistributedResult:
    """What :func:`solve_distributed` wrote: the folder, the combined certificate and
    the count of components by method. ``person_posterior()`` and ``risk_table()`` read
    the Parquet parts back as Dask DataFrames (nothing is loaded)."""

    def __init__(self, path, certificate: Certificate, stats: dict):
        self.path = path
        self.certificate = certificate
        self.solver_stats = stats

    def person_posterior(self):
        """P(S | person): ``person`` and one column per sensitive value (``str``)."""
        import dask.dataframe as dd

        return dd.read_parquet(self.path / "posterior")

    def risk_table(self):
        """One row per person: QI, likeliest value, ``maxent``, ``tied``, ``entropy``
        (bits), ``at_risk``."""
        import dask.dataframe as dd

        return dd.read_parquet(self.path / "risk")

    def __repr__(self) -> str:
        return f"DistributedResult({str(self.path)!r}, {self.certificate})"


def _lost(err: BaseException) -> bool:
    """Whether ``err`` says the cluster lost our work (restart, killed workers)."""
    from concurrent.futures import CancelledError

    name = type(err).__name__
    return isinstance(err, CancelledError) or name in ("KilledWorker", "FutureCancelledError")


def solve_distributed(
    structure: DistributedStructure,
    out,
    *,
    client=None,
    tol: float = 1e-6,
    threshold: float = 0.5,
    max_worker_cells: int | None = None,
    cg_partitions: int | None = None,
    cg_options: dict | None = None,
    inputs=(),
    overwrite: bool = False,
) -> DistributedResult:
    """Solve every component (see the module) and write the results folder ``out``.

    ``out`` never replaces anything of the user's: it is refused when it is, contains or
    is inside one of ``inputs`` (the releases' paths), and when it exists without the
    marker of a results folder of ours unless ``overwrite``
    (:func:`~.output.check_out_folder`). ``threshold`` is in (0, 1].

    ``max_worker_cells``: components with more cells are solved by the distributed
    Newton-CG (:mod:`.cg`; 0 forces it on every component), over ``cg_partitions``
    partitions of their classes (default: as the classes are partitioned).
    ``cg_options``: passed to :func:`~.cg.newton_cg` (``tol``, ``max_iter``...).
    """
    threshold = check_threshold(threshold)
    client = structure.client if client is None else client
    limit = worker_cells(client) if max_worker_cells is None else int(max_worker_cells)
    folder = ResultFolder(out, inputs, overwrite)
    try:
        return _solve(structure, folder, client, tol, threshold, limit, cg_partitions,
                      cg_options or {})  # fmt: skip
    except BaseException as err:
        folder.discard()
        if _lost(err):
            raise SolverFailed(
                f"the Dask cluster lost the solve's data ({type(err).__name__}: a restart or "
                f"workers lost for good); nothing was written to {out}: run it again"
            ) from err
        raise


def _solve(s, folder: ResultFolder, client, tol, threshold, limit, cg_partitions, cg_options):
    import dask

    from .cg import solve_giant

    t0 = time.perf_counter()
    meta = _class_cells(s.classes._meta)
    sizes = s.classes.map_partitions(_class_cells, meta=meta).groupby("comp").sum()
    big = sizes[sizes["cells"] > limit]
    (big, n_comp) = compute(client, big, sizes.shape[0])
    big_ids = np.sort(big.index.to_numpy(dtype=np.int64))
    rows = s.long.map_partitions(
        _rows_with_comp, s.labels, meta=_rows_with_comp(s.long._meta, s.labels)
    )
    rows = rows[~rows["comp"].isin(big_ids.tolist())] if len(big_ids) else rows
    rows = rows.shuffle(on="comp", npartitions=s.long.npartitions)
    tasks = [
        dask.delayed(_solve_partition)(part, k, s.qi, s.sa, s.values, tol, threshold, folder.temp)
        for k, part in enumerate(rows.to_delayed())
    ]
    done = list(compute(client, *tasks)) if len(big_ids) < n_comp else []
    parts = sum(d["parts"] for d in done)
    summaries = parts  # one components part per partition with components, one per giant
    tables = [d["components"] for d in done if len(d["components"])]
    for comp in big_ids:
        outcome = solve_giant(s, int(comp), folder.temp, client, tol, threshold,
                              cg_partitions, cg_options)  # fmt: skip
        tables.append(pd.DataFrame([outcome["summary"]]))
        parts += outcome["parts"]
        summaries += 1
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    N = s.n_persons
    entropy = float(table["entropy"].sum())
    bound = float(table["dual_bound"].sum())
    cert = Certificate(
        data_residual=float(table["residual"].max()),
        knowledge_residual=0.0,
        entropy=entropy / N,
        dual_bound=bound / N,
        gap=(bound - entropy) / N,
        tolerance=tol,
        n_records=N,
    )
    stats = {
        "components": int(n_comp),
        "in_memory": int(n_comp - len(big_ids)),
        "newton_cg": len(big_ids),
        "not_optimal": int((table["status"] != "optimal").sum()),
        "persons": N,
        "seconds": time.perf_counter() - t0,
    }
    if cert.primal_residual > tol:
        raise SolverFailed(f"the distributed answer fails our check: {cert}; tolerance {tol:g}")
    if int(table["persons"].sum()) != N or len(table) != n_comp:
        raise SolverFailed(
            f"the distributed answer covers {int(table['persons'].sum()):,} of {N:,} people "
            f"in {len(table):,} of {int(n_comp):,} components; nothing was written"
        )
    folder.commit(
        {"posterior": parts, "risk": parts, "components": summaries},
        {**{k: getattr(cert, k) for k in ("data_residual", "entropy", "dual_bound", "gap")},
         "tolerance": tol, "n_records": N, **stats},
    )  # fmt: skip
    return DistributedResult(folder.target, cert, stats)
