"""Published releases.

A :class:`Bucketized` release is what an Anatomy-style publisher puts out: every record's
exact quasi-identifier (QI) values and a group (bucket) id, and per group the multiset of
sensitive values, whose link to the individual rows is broken. We keep it as one row per
record (QI columns, group, sensitive value); the model never uses which row of a group a
sensitive value sits on.

>>> import pandas as pd
>>> from maxent_privacy import Bucketized
>>> frame = pd.DataFrame({"gender": ["m", "f", "m"], "disease": ["Flu", "HIV", "Flu"],
...                       "bucket": [1, 1, 1]})
>>> release = Bucketized(frame, qi=["gender"], sa="disease", group="bucket")
>>> release.n_records, release.n_groups
(3, 1)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .errors import ReleaseError

__all__ = ["Bucketized", "check_input_table", "validate_release"]


def _check_columns(frame: pd.DataFrame, columns: Sequence[str], role: str) -> None:
    for col in columns:
        if col not in frame.columns:
            have = ", ".join(map(str, frame.columns))
            raise ReleaseError(f"{role} column {col!r} is not in the table (columns: {have})")


def check_input_table(frame, qi, sa: str, group: str, person: str | None, who: str) -> list:
    """Checks shared by the anonymizers (``who`` names the caller); return the QI list.

    One-line ``ReleaseError`` for: not a DataFrame, no QI, a missing QI, sensitive or
    person column, a group column name already used by another role.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ReleaseError(f"{who} needs a pandas DataFrame, got {type(frame).__name__}")
    qi = [qi] if isinstance(qi, str) else list(qi)
    if not qi:
        raise ReleaseError(f"{who} needs at least one quasi-identifier column (qi=[...])")
    _check_columns(frame, qi, "quasi-identifier")
    _check_columns(frame, [sa], "sensitive")
    if person is not None:
        _check_columns(frame, [person], "person")
    if group in qi or group == sa or group == person:
        raise ReleaseError(
            f"group column name {group!r} is already used by another role; "
            "pass another name with group=..."
        )
    return qi


def validate_release(frame, qi, sa: str, group: str, person: str | None):
    """Check a release table; return (the role columns, copied; the QI list).

    One-line ``ReleaseError`` naming the column or value at fault: not a DataFrame, no QI,
    missing columns, a column with two roles, no rows, missing values, duplicate person ids.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ReleaseError(f"a release needs a pandas DataFrame, got {type(frame).__name__}")
    if isinstance(qi, str):
        qi = [qi]
    qi = list(qi)
    if not qi:
        raise ReleaseError("a release needs at least one quasi-identifier column (qi=[...])")
    _check_columns(frame, qi, "quasi-identifier")
    _check_columns(frame, [sa], "sensitive")
    _check_columns(frame, [group], "group")
    if person is not None:
        _check_columns(frame, [person], "person")
    roles = qi + [sa, group] + ([person] if person is not None else [])
    seen: set[str] = set()
    for col in roles:
        if col in seen:
            raise ReleaseError(
                f"column {col!r} is given more than one role (qi, sa, group, person)"
            )
        seen.add(col)
    if len(frame) == 0:
        raise ReleaseError("the release has no rows")
    data = frame[roles].copy()
    for col in roles:
        missing = data[col].isna().to_numpy()
        if missing.any():
            row = data.index[np.argmax(missing)]
            row = row.item() if hasattr(row, "item") else row
            raise ReleaseError(
                f"column {col!r} has a missing value (row {row!r}); drop or fill such rows first"
            )
    if person is not None and data[person].duplicated().any():
        dup = data.loc[data[person].duplicated(), person].tolist()[0]
        raise ReleaseError(f"person id {dup!r} occurs in more than one row of column {person!r}")
    return data, qi


class _Release:
    """Sizes shared by every kind of release (``frame``, ``group`` and ``sa`` set)."""

    @property
    def n_records(self) -> int:
        """Number of records (rows)."""
        return len(self.frame)

    @property
    def n_groups(self) -> int:
        """Number of groups (buckets or equivalence classes)."""
        return int(self.frame[self.group].nunique())

    @property
    def sa_values(self) -> list:
        """Distinct sensitive values, sorted (as ``str``)."""
        return sorted(self.frame[self.sa].unique().tolist(), key=str)


class Bucketized(_Release):
    """One bucketized release, one row per record.

    Parameters
    ----------
    frame : DataFrame with the QI columns, the sensitive column and the group column.
    qi : names of the quasi-identifier columns (published exactly).
    sa : name of the sensitive column.
    group : name of the group (bucket) column.
    person : optional pseudonym column (one distinct id per row), used to link releases.

    Rows with a missing value in any of these columns are an error naming the column and
    the first offending row, as are duplicate column roles and duplicate person ids.
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        qi: Sequence[str],
        sa: str,
        group: str,
        person: str | None = None,
    ):
        data, qi = validate_release(frame, qi, sa, group, person)
        self.frame = data
        self.qi = qi
        self.sa = sa
        self.group = group
        self.person = person

    def domain(self, column: str) -> list:
        """Distinct values of a QI or sensitive column, sorted."""
        return sorted(self.frame[column].unique().tolist(), key=str)

    # -- published views --------------------------------------------------------
    def qi_table(self) -> pd.DataFrame:
        """The QI table as published (QI values and group, in row order)."""
        return self.frame[self.qi + [self.group]]

    def sa_table(self) -> pd.DataFrame:
        """The sensitive table as published: count of each sensitive value per group."""
        counts = self.frame.groupby([self.group, self.sa], sort=True).size()
        return counts.rename("count").reset_index()

    def buckets(self) -> pd.DataFrame:
        """One row per group: its QI values (list) and multiset of sensitive values."""
        g = self.frame.groupby(self.group, sort=True)
        out = pd.DataFrame(
            {
                "size": g.size(),
                "qi": g[self.qi].apply(lambda d: [tuple(r) for r in d.itertuples(index=False)]),
                self.sa: g[self.sa].apply(lambda s: sorted(s.tolist(), key=str)),
            }
        )
        return out

    def __repr__(self) -> str:
        return (
            f"Bucketized({self.n_records} records, {self.n_groups} groups, qi={self.qi}, "
            f"sa={self.sa!r}, group={self.group!r}"
            + (f", person={self.person!r}" if self.person else "")
            + ")"
        )
