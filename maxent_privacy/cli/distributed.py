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

import logging
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

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
    with _workers_ignore_ctrl_c():
        cluster = LocalCluster(
            n_workers=max(1, args.workers),
            threads_per_worker=1,
            processes=True,
            memory_limit=args.memory_limit,
            dashboard_address=":0",  # (None meant :8787, and a warning when in use)
        )
    return Client(cluster), cluster


#: the loggers of Dask and what it runs on, silenced while the command runs (our own
#: errors say what went wrong, in one line)
DASK_LOGGERS = ("distributed", "tornado", "asyncio")


@contextmanager
def quiet_dask() -> Iterator[None]:
    """Dask's own loggers (and warnings) silenced for the duration, their levels
    restored after.

    A LocalCluster's scheduler runs in this process and logs every shuffle at WARNING;
    on Ctrl-C it and its nannies log the workers going away. Our errors (one line) say
    what went wrong, so nothing of theirs is printed meanwhile.

    >>> import logging
    >>> with quiet_dask():
    ...     logging.getLogger("distributed.scheduler").getEffectiveLevel() > logging.CRITICAL
    True
    >>> logging.getLogger("distributed.scheduler").getEffectiveLevel() > logging.CRITICAL
    False
    """
    try:  # first: importing it sets its loggers' levels (its logging configuration)
        import distributed  # noqa: F401
    except ImportError:  # pragma: no cover - the command needs it anyway
        pass
    manager = logging.Logger.manager
    names = [
        name
        for name in list(manager.loggerDict)
        if name.split(".")[0] in DASK_LOGGERS and name not in DASK_LOGGERS
    ]
    loggers = [logging.getLogger(name) for name in (*DASK_LOGGERS, *names)]
    saved = [(logger, logger.level, logger.disabled) for logger in loggers]
    try:
        for logger in loggers:
            logger.setLevel(logging.CRITICAL + 1)
        with warnings.catch_warnings():  # its warnings too ("port 8787 is in use"...)
            warnings.filterwarnings("ignore", module=r"(distributed|tornado)(\.|$)")
            yield
    finally:
        for logger, level, disabled in saved:
            logger.setLevel(level)
            logger.disabled = disabled


@contextmanager
def _workers_ignore_ctrl_c() -> Iterator[None]:
    """SIGINT ignored while the local worker processes start: they inherit that (a
    process started with SIGINT ignored keeps ignoring it, asyncio included), so Ctrl-C
    at the terminal, sent to every process of the group, reaches this process only,
    which stops the cluster itself; without it every worker printed its traceback. A
    Ctrl-C in the second the workers take to start is ignored as well. Outside the main
    thread (no signals there) SIGINT is left as it is. The workers also start with their
    loggers at CRITICAL (they logged every task cancelled on the way out)."""
    import os
    import signal
    import threading

    # the workers' own loggers too: read from the environment when they start
    saved = os.environ.get(_WORKER_LOGGING)
    os.environ[_WORKER_LOGGING] = "critical"
    main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        yield
    finally:
        if main:
            signal.signal(signal.SIGINT, before)
        if saved is None:
            os.environ.pop(_WORKER_LOGGING, None)
        else:
            os.environ[_WORKER_LOGGING] = saved


#: Dask's configuration of the level of its "distributed" logger, from the environment
_WORKER_LOGGING = "DASK_LOGGING__DISTRIBUTED"


def run_distributed(args, out) -> int:
    """Run the command (``args`` from :func:`add_distributed_parser`); exit code 0."""
    from pathlib import Path

    from ..distributed.output import check_out_folder

    t0 = time.perf_counter()
    check_out_folder(Path(args.out), args.release, args.overwrite)  # before any work
    frames = [_read(path) for path in args.release]
    with quiet_dask():
        result, rels, structure = _run(args, frames)
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


def _run(args, frames):
    """The releases built and solved on the cluster (started here, or reached), which is
    closed whatever happens; (result, releases, structure).

    The work runs in a thread of its own while this (main) thread waits: Ctrl-C only
    notes the request here (a handler that raises nothing), so it never lands inside
    Dask's code (it did: in a garbage-collection callback it was printed and lost, and
    the solve went on). The cluster is then closed, which stops the work; its results
    folder under construction is removed, and :class:`KeyboardInterrupt` raised (unless
    the work was done: the results are then complete). A second Ctrl-C interrupts the
    cleanup itself."""
    import signal
    import threading

    from ..distributed.output import sweep_discarded

    stop = threading.Event()

    def on_ctrl_c(*_) -> None:
        if stop.is_set():  # the second: the cleanup itself is interrupted
            raise KeyboardInterrupt
        stop.set()

    client, cluster = _client(args)
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_ctrl_c) if main else None
    box: dict = {}
    worker = threading.Thread(
        target=_work, args=(args, frames, client, box), name="maxent-privacy distributed"
    )
    worker.daemon = True
    try:
        worker.start()
        while worker.is_alive() and not stop.is_set():
            worker.join(0.1)
        client.close()
        if cluster is not None:
            cluster.close()
        worker.join(_STOP_SECONDS)
    finally:
        client.close()  # again when the cleanup was interrupted (a no-op otherwise)
        if cluster is not None:
            cluster.close()
        sweep_discarded()  # a part a worker was writing when the solve stopped
        if main:
            signal.signal(signal.SIGINT, previous)
    if "result" in box:  # done (a Ctrl-C while the cluster closed came too late)
        return box["result"]
    if stop.is_set() or "error" not in box:
        raise KeyboardInterrupt
    raise box["error"]


#: how long the work is given to end once its cluster is closed
_STOP_SECONDS = 30


def _work(args, frames, client, box: dict) -> None:
    """Build and solve (in the work thread): ``box["result"]`` is (result, releases,
    structure), or ``box["error"]`` the exception."""
    from pathlib import Path

    from ..distributed.build import build_distributed
    from ..distributed.releases import DaskBucketized
    from ..distributed.solve import solve_distributed

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
        box["result"] = (result, rels, structure)
    except BaseException as err:  # noqa: BLE001 - handed to the main thread
        box["error"] = err
