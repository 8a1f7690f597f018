"""``maxent-privacy distributed``: pooled releases built and solved on a Dask cluster.

``maxent-privacy distributed RELEASE [RELEASE ...] --qi A B --sa S --group G --person P
--out FOLDER [--scheduler ADDRESS [--connect-timeout SECONDS]] [--workers N]
[--memory-limit 3GB] [--threshold P] [--max-worker-cells N]`` reads each release (a
Parquet file, folder or glob, read by ``dd.read_parquet``; a ``.csv`` file or glob read
by ``dd.read_csv`` with every cell as text and only the empty cell missing), links them by
``--person``, builds and solves the model on the cluster (:mod:`maxent_privacy.distributed`)
and has the workers write ``FOLDER``: ``posterior/`` (P(S | person)), ``risk/`` (one row
per person: QI, likeliest value, its posterior, entropy, at risk), ``components/`` and
``certificate.json``. ``--scheduler ADDRESS`` (``tcp://host:8786``) uses a running
cluster, tried for ``--connect-timeout`` seconds (10 by default); without it a LocalCluster
of ``--workers`` processes is started and closed.

The parser imports nothing heavy (:func:`add_distributed_parser`); Dask is imported when
the command runs.

>>> import argparse
>>> parser = argparse.ArgumentParser(prog="maxent-privacy")
>>> add_distributed_parser(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["distributed", "r1.parquet", "r2.parquet", "--qi", "age",
...                           "--sa", "d", "--group", "g", "--person", "id", "--out", "res"])
>>> args.release, args.scheduler, args.workers
(['r1.parquet', 'r2.parquet'], None, 2)
"""

from __future__ import annotations

import time

from ..errors import MaxEntError
from .argtypes import memory_size, probability, seconds, whole

__all__ = ["SchedulerError", "add_distributed_parser", "run_distributed"]


def add_distributed_parser(sub, epilog: str | None = None, formatter=None) -> None:
    """The ``distributed`` subcommand's arguments (on ``sub``, an argparse subparsers)."""
    kw = {"epilog": epilog} if epilog else {}
    if formatter is not None:
        kw["formatter_class"] = formatter
    p = sub.add_parser(
        "distributed",
        help="pooled releases too big for one machine, built and solved on a Dask cluster",
        description="Link bucketized releases (Parquet or CSV) by person id, build and "
        "solve the maximum-entropy model on a Dask cluster, and write P(sensitive | person) "
        "and a risk table as Parquet folders (written by the workers).",
        **kw,
    )
    p.add_argument("release", nargs="+", help="Parquet file, folder or glob, or CSV file/glob")
    p.add_argument("--qi", nargs="+", required=True, metavar="COL", help="quasi-identifiers")
    p.add_argument("--sa", required=True, metavar="COL", help="sensitive column")
    p.add_argument("--group", required=True, metavar="COL", help="group (bucket) column")
    p.add_argument("--person", required=True, metavar="COL", help="person id column")
    p.add_argument(
        "--out", required=True, metavar="FOLDER",
        help="results folder (never an input, nor inside or around one; an existing folder "
        "is replaced only when this command wrote it, or with --overwrite)",
    )  # fmt: skip
    p.add_argument(
        "--overwrite", action="store_true",
        help="replace --out even when it holds files this command did not write",
    )  # fmt: skip
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="address of a running Dask scheduler (tcp://host:8786); default: a local "
        "cluster started for this run",
    )
    p.add_argument(
        "--connect-timeout", type=seconds, default=10.0, metavar="SECONDS",
        help="with --scheduler: how long to try to reach it (default 10)",
    )  # fmt: skip
    p.add_argument(
        "--workers", type=whole(1), default=2, metavar="N", help="local cluster: workers"
    )
    p.add_argument(
        "--memory-limit",
        type=memory_size,
        default="auto",
        metavar="SIZE",
        help="local cluster: per worker (auto, a share such as 0.5, or 1.5GB, 800MiB)",
    )
    p.add_argument(
        "--threshold", type=probability, default=0.5, metavar="P",
        help="at risk: likeliest value's posterior at least P (default 0.5)",
    )  # fmt: skip
    p.add_argument(
        "--max-worker-cells", type=whole(0), metavar="N",
        help="components with more cells are solved by the distributed Newton-CG "
        "(default: what a worker's memory limit holds)",
    )  # fmt: skip


class SchedulerError(MaxEntError, ValueError):
    """The Dask scheduler cannot be reached (bad address, not running)."""


def _read(path: str):
    import dask.dataframe as dd

    from ..errors import ReleaseError

    try:
        if ".csv" in path.lower():
            _same_header(path)
            return dd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        return dd.read_parquet(path)
    except (OSError, ValueError) as err:
        raise ReleaseError(f"{path}: cannot read: {str(err).splitlines()[0]}") from err


def _same_header(path: str) -> None:
    """The CSV files a glob matches have the same columns, or a ReleaseError naming two
    that differ and how."""
    import glob

    import pandas as pd

    from ..errors import ReleaseError

    files = sorted(glob.glob(path)) if glob.has_magic(path) else [path]
    first = None
    for name in files:
        columns = list(pd.read_csv(name, nrows=0).columns)
        if first is None:
            first = (name, columns)
            continue
        if columns != first[1]:
            lost = [c for c in first[1] if c not in columns]
            new = [c for c in columns if c not in first[1]]
            how = (
                f"it lacks {lost[0]!r}" + (f" and has {new[0]!r}" if new else "")
                if lost or new
                else "the same columns in another order"
            )
            raise ReleaseError(
                f"{path}: {name} does not have the columns of {first[0]} ({how}); every "
                "part of a release has the same header"
            )


def _client(args):
    from dask.distributed import Client, LocalCluster

    if args.scheduler:
        try:
            return Client(args.scheduler, timeout=f"{args.connect_timeout}s"), None
        except (OSError, TimeoutError) as err:
            raise SchedulerError(
                f"cannot reach the Dask scheduler at {args.scheduler}: {err}"
            ) from err
    cluster = LocalCluster(
        n_workers=max(1, args.workers),
        threads_per_worker=1,
        processes=True,
        memory_limit=args.memory_limit,
        dashboard_address=None,
    )
    return Client(cluster), cluster


def run_distributed(args, out) -> int:
    """Run the command (``args`` from :func:`add_distributed_parser`); exit code 0."""
    from pathlib import Path

    from ..distributed.build import build_distributed
    from ..distributed.output import check_out_folder
    from ..distributed.releases import DaskBucketized
    from ..distributed.solve import solve_distributed

    t0 = time.perf_counter()
    check_out_folder(Path(args.out), args.release, args.overwrite)  # before any work
    frames = [_read(path) for path in args.release]
    client, cluster = _client(args)
    try:
        rels = [
            DaskBucketized(f, args.qi, args.sa, args.group, args.person,
                           name=f"release {r} ({path})", client=client)
            for r, (f, path) in enumerate(zip(frames, args.release, strict=True), start=1)
        ]  # fmt: skip
        structure = build_distributed(rels, client)
        result = solve_distributed(
            structure, Path(args.out), client=client, threshold=args.threshold,
            max_worker_cells=args.max_worker_cells, inputs=args.release,
            overwrite=args.overwrite,
        )  # fmt: skip
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    stats = result.solver_stats
    print(
        f"{len(rels)} releases, {structure.n_persons:,} people, {structure.n_classes:,} "
        f"classes, {structure.n_rows:,} Relation rows; {stats['components']:,} components "
        f"({stats['in_memory']:,} solved on one worker, {stats['newton_cg']:,} by "
        f"distributed Newton-CG) in {time.perf_counter() - t0:.1f} s",
        file=out,
    )
    print(f"certificate: {result.certificate}", file=out)
    print(f"results written to {args.out}", file=out)
    return 0
