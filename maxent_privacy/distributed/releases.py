"""Bucketized releases held as Dask DataFrames: checked partition by partition.

:class:`DaskBucketized` is :class:`~maxent_privacy.releases.bucketized.Bucketized` for a
table that does not fit one process: a Dask DataFrame (``dd.read_parquet``,
``dd.read_csv``, ``dd.from_pandas``) with the QI columns, the sensitive column, the group
column and a person id column. The checks are the in-memory ones
(:func:`~maxent_privacy.releases.bucketized.validate_release`), run on every partition
where it lies; a mistake is one :class:`~maxent_privacy.errors.ReleaseError` line naming
the release, the partition and the row (the row label inside its partition: files read
by Dask number the rows of each partition from 0). Only these messages and the partition
lengths come back to the client; person ids repeated across partitions are found by a
group-by on the cluster.

>>> import pandas as pd, dask.dataframe as dd
>>> frame = pd.DataFrame({"id": [1, 2, 3, 4], "age": [30, 30, 41, 41],
...                       "disease": ["flu", "hiv", "flu", "flu"], "bucket": [1, 1, 2, 2]})
>>> release = DaskBucketized(dd.from_pandas(frame, npartitions=2), qi=["age"],
...                          sa="disease", group="bucket", person="id")
>>> release
DaskBucketized(4 records in 2 partitions, qi=['age'], sa='disease', group='bucket', person='id')
>>> frame.loc[3, "age"] = None
>>> DaskBucketized(dd.from_pandas(frame, npartitions=2), ["age"], "disease", "bucket", "id")
Traceback (most recent call last):
...
maxent_privacy.errors.ReleaseError: release partition 1: quasi-identifier column 'age' \
has a missing value (row 3); drop or fill such rows first
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import ReleaseError
from ..releases.bucketized import validate_release
from ..releases.checks import check_cells, check_label, check_missing, check_roles, qi_list, shorten

__all__ = ["DaskBucketized", "compute", "persist"]


def compute(client, *collections):
    """``dask.compute`` on ``client`` (None: Dask's default scheduler); a tuple."""
    import dask

    if client is None:
        return dask.compute(*collections)
    return tuple(client.gather(client.compute(list(collections))))


def persist(client, collection):
    """The collection computed and kept on the cluster (as partitions)."""
    if client is None:
        return collection.persist()
    return client.persist(collection)


def _check_partition(part: pd.DataFrame, qi, sa, group, person) -> str | None:
    """The first problem of one partition (the in-memory checks), or None."""
    if len(part) == 0:
        return None
    roles = [*qi, sa, group, person]
    kinds = ["quasi-identifier"] * len(qi) + ["sensitive", "group", "person"]
    try:
        check_cells(part, roles, kinds)
        check_missing(part, roles, [f"{k} " for k in kinds])
        validate_release(part, qi, sa, group, person)
    except ReleaseError as err:
        return str(err)
    return None


def _rows_of(part: pd.DataFrame, column, value) -> list:
    """Row labels of ``part`` whose ``column`` holds ``value`` (at most two)."""
    at = np.flatnonzero((part[column] == value).to_numpy())[:2]
    return [part.index[i].item() if hasattr(part.index[i], "item") else part.index[i] for i in at]


class DaskBucketized:
    """One bucketized release with person ids, as a Dask DataFrame (see the module).

    Parameters
    ----------
    frame : dask DataFrame with the QI, sensitive, group and person columns (other
        columns are dropped unread).
    qi, sa, group, person : column names, as for :class:`~maxent_privacy.Bucketized`;
        ``person`` is required (releases are linked through it).
    name : how messages name the release (default ``"release"``; pooled releases are
        named ``"release 1"``, ``"release 2"``... by :func:`~.build.build_distributed`).
    client : a ``dask.distributed.Client`` to run the checks on (None: Dask's default).

    ``n_records`` and ``n_partitions`` are known after the checks; ``frame`` keeps the
    role columns only (lazy: nothing is held in memory).
    """

    def __init__(
        self,
        frame,
        qi: Sequence[str],
        sa: str,
        group: str,
        person: str | None = None,
        *,
        name: str = "release",
        client=None,
    ):
        import dask
        import dask.dataframe as dd

        if not isinstance(frame, dd.DataFrame):
            raise ReleaseError(
                f"{name}: DaskBucketized needs a dask DataFrame (dd.read_parquet, "
                f"dd.read_csv, dd.from_pandas), got {type(frame).__name__}; for a pandas "
                "DataFrame use Bucketized"
            )
        if person is None:
            raise ReleaseError(
                f"{name}: a distributed release needs person ids to be linked (person=...)"
            )
        qi = qi_list(qi)
        if not qi:
            raise ReleaseError(f"{name}: a release needs at least one quasi-identifier (qi=[...])")
        for what, label in (("sa", sa), ("group", group), ("person", person)):
            check_label(label, f"{name}: {what}")
        roles = qi + [sa, group, person]
        check_roles(roles)
        columns = list(frame.columns)
        kinds = ["quasi-identifier"] * len(qi) + ["sensitive", "group", "person"]
        for col, kind in zip(roles, kinds, strict=True):
            n = columns.count(col)
            if n == 0:
                have = ", ".join(map(str, columns))
                raise ReleaseError(
                    f"{name}: {kind} column {col!r} is not in the table (columns: {have})"
                )
            if n > 1:
                raise ReleaseError(f"{name}: column {col!r} occurs {n} times in the table")
        data = frame[roles]
        checks = [
            dask.delayed(_check_partition)(part, qi, sa, group, person)
            for part in data.to_delayed()
        ]
        lengths = [dask.delayed(len)(part) for part in data.to_delayed()]
        found = compute(client, *checks, *lengths)
        problems, sizes = found[: len(checks)], found[len(checks) :]
        for p, message in enumerate(problems):
            if message is not None:
                raise ReleaseError(f"{name} partition {p}: {message}")
        if sum(sizes) == 0:
            raise ReleaseError(f"{name}: the release has no rows")
        self.frame = data
        self.qi, self.sa, self.group, self.person = qi, sa, group, person
        self.name = name
        self.partition_sizes = [int(s) for s in sizes]
        self._check_person_ids(client)

    def _check_person_ids(self, client) -> None:
        """A person id in two rows (of two partitions: one partition was checked
        already): one line naming both places."""
        import dask

        counts = self.frame[self.person].value_counts(split_out=self.frame.npartitions)
        repeated = counts[counts > 1]
        (dup,) = compute(client, repeated.head(1, npartitions=-1, compute=False))
        if not len(dup):
            return
        pid = dup.index[0]
        pid = pid.item() if isinstance(pid, np.generic) else pid
        where = [dask.delayed(_rows_of)(part, self.person, pid) for part in self.frame.to_delayed()]
        found = compute(client, *where)
        places = [f"partition {p} row {row!r}" for p, rows in enumerate(found) for row in rows]
        raise ReleaseError(
            f"{self.name}: person id {shorten(pid)} occurs in more than one row of column "
            f"{self.person!r} ({' and '.join(places[:2])})"
        )

    @property
    def n_records(self) -> int:
        """Number of rows (records)."""
        return sum(self.partition_sizes)

    @property
    def n_partitions(self) -> int:
        return len(self.partition_sizes)

    def __repr__(self) -> str:
        return (
            f"DaskBucketized({self.n_records} records in {self.n_partitions} partitions, "
            f"qi={self.qi}, sa={self.sa!r}, group={self.group!r}, person={self.person!r})"
        )
