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

__all__ = ["Bucketized", "check_input_table", "check_same_schema", "validate_release"]

# cells of these types are collections, not values: a QI, sensitive, group or person cell
# holding one is an error (unhashable ones crash pandas; hashable ones such as tuples
# cannot be named in a fact, which reads a tuple as a list of values)
_COLLECTIONS = (list, tuple, set, frozenset, dict, np.ndarray, pd.Series, pd.DataFrame, pd.Index)


def _shorten(value, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check_columns(frame: pd.DataFrame, columns: Sequence[str], role: str) -> None:
    for col in columns:
        if col not in frame.columns:
            have = ", ".join(map(str, frame.columns))
            raise ReleaseError(f"{role} column {col!r} is not in the table (columns: {have})")


def _check_label(label, what: str) -> None:
    """A column name given as an argument: one hashable label, not a collection."""
    bad = isinstance(label, _COLLECTIONS)
    if not bad:
        try:
            hash(label)
        except TypeError:
            bad = True
    if bad:
        raise ReleaseError(
            f"{what} must be one column name, got {type(label).__name__} {_shorten(label)}"
        )


def _qi_list(qi, prefix: str = "") -> list:
    """The ``qi`` argument as a list of column names (one-line ReleaseError otherwise)."""
    if isinstance(qi, str):
        return [qi]
    if qi is None or isinstance(qi, (dict, pd.DataFrame)) or not hasattr(qi, "__iter__"):
        raise ReleaseError(
            f"{prefix}qi must be a column name or a list of column names, got "
            f"{type(qi).__name__} {_shorten(qi)}"
        )
    qi = list(qi)
    for j, col in enumerate(qi, start=1):
        _check_label(col, f"{prefix}quasi-identifier {j} of qi=[...]")
    return qi


def _check_frame(frame, who: str) -> None:
    """A DataFrame with flat column labels."""
    if not isinstance(frame, pd.DataFrame):
        raise ReleaseError(f"{who} needs a pandas DataFrame, got {type(frame).__name__}")
    if isinstance(frame.columns, pd.MultiIndex):
        shown = ", ".join(map(str, frame.columns[:3]))
        raise ReleaseError(
            f"{who} needs one name per column, the table has MultiIndex columns ({shown}, ...); "
            "flatten them first"
        )


def _check_unique(frame: pd.DataFrame, columns: Sequence) -> None:
    """Each of ``columns`` names exactly one column of ``frame``."""
    if frame.columns.is_unique:
        return
    for col in columns:
        n = int((frame.columns == col).sum())
        if n > 1:
            raise ReleaseError(
                f"column {col!r} occurs {n} times in the table; column names must be unique "
                "(rename or drop the copies)"
            )


def _first_bad_cell(values: np.ndarray) -> int | None:
    """Position of the first cell that is not a hashable scalar (None: all are)."""

    def bad(v) -> bool:
        if isinstance(v, _COLLECTIONS):
            return True
        try:
            hash(v)
        except TypeError:
            return True
        return False

    try:
        uniques = pd.unique(values)  # hashes in C: the common, all-scalar case is fast
    except TypeError:
        pass
    else:
        if not any(bad(v) for v in uniques):
            return None
    return next(i for i, v in enumerate(values) if bad(v))


def _check_cells(frame: pd.DataFrame, columns: Sequence, roles: Sequence[str]) -> None:
    """Every cell of ``columns`` (unique labels) is a hashable scalar: str, number, ..."""
    for col, role in zip(columns, roles, strict=True):
        series = frame[col]
        if isinstance(series.dtype, pd.CategoricalDtype):
            values = np.asarray(series.cat.categories, dtype=object)
            pos = _first_bad_cell(values)
            if pos is not None:
                pos = int(np.argmax(series.cat.codes.to_numpy() == pos))
        elif series.dtype == object:
            pos = _first_bad_cell(series.to_numpy())
        else:
            continue
        if pos is not None:
            row = frame.index[pos]
            row = row.item() if hasattr(row, "item") else row
            value = series.iloc[pos]
            raise ReleaseError(
                f"{role} column {col!r} holds {_shorten(value)} (a {type(value).__name__}) "
                f"in row {row!r}; cells must be single values (text, numbers, ...)"
            )


def _check_missing(frame: pd.DataFrame, columns: Sequence, prefix: Sequence[str]) -> None:
    for col, role in zip(columns, prefix, strict=True):
        missing = frame[col].isna().to_numpy()
        if missing.any():
            row = frame.index[np.argmax(missing)]
            row = row.item() if hasattr(row, "item") else row
            raise ReleaseError(
                f"{role}column {col!r} has a missing value (row {row!r}); "
                "drop or fill such rows first"
            )


def _check_roles(columns: Sequence) -> None:
    seen: set = set()
    for col in columns:
        if col in seen:
            raise ReleaseError(
                f"column {col!r} is given more than one role (qi, sa, group, person)"
            )
        seen.add(col)


def check_input_table(frame, qi, sa: str, group: str, person: str | None, who: str) -> list:
    """Checks shared by the anonymizers (``who`` names the caller); return the QI list.

    One-line ``ReleaseError`` for: not a DataFrame, MultiIndex columns, no QI, a missing
    or repeated QI, sensitive or person column, a column given two roles, a group column
    name already used by another role, a cell that is not a single value (a list, ...)
    or is missing in a QI, sensitive or person column.
    """
    _check_frame(frame, who)
    qi = _qi_list(qi, f"{who}: ")
    if not qi:
        raise ReleaseError(f"{who} needs at least one quasi-identifier column (qi=[...])")
    _check_label(sa, f"{who}: sa")
    _check_label(group, f"{who}: group")
    if person is not None:
        _check_label(person, f"{who}: person")
    _check_columns(frame, qi, "quasi-identifier")
    _check_columns(frame, [sa], "sensitive")
    if person is not None:
        _check_columns(frame, [person], "person")
    if group in qi or group == sa or group == person:
        raise ReleaseError(
            f"group column name {group!r} is already used by another role; "
            "pass another name with group=..."
        )
    columns = qi + [sa] + ([person] if person is not None else [])
    _check_roles(columns)
    roles = ["quasi-identifier"] * len(qi) + ["sensitive"]
    roles += ["person"] if person is not None else []
    _check_unique(frame, columns)
    _check_cells(frame, columns, roles)
    _check_missing(frame, columns, [f"{r} " for r in roles])
    return qi


def validate_release(frame, qi, sa: str, group: str, person: str | None):
    """Check a release table; return (the role columns, copied; the QI list).

    One-line ``ReleaseError`` naming the column or value at fault: not a DataFrame,
    MultiIndex columns, no QI, missing columns, a role column whose name occurs twice, a
    column with two roles, no rows, a cell that is not a single value (a list, set, dict,
    tuple, array: unhashable, or not nameable in a fact), missing values, duplicate
    person ids. Other columns are dropped unchecked.
    """
    _check_frame(frame, "a release")
    qi = _qi_list(qi)
    if not qi:
        raise ReleaseError("a release needs at least one quasi-identifier column (qi=[...])")
    _check_label(sa, "sa")
    _check_label(group, "group")
    if person is not None:
        _check_label(person, "person")
    _check_columns(frame, qi, "quasi-identifier")
    _check_columns(frame, [sa], "sensitive")
    _check_columns(frame, [group], "group")
    if person is not None:
        _check_columns(frame, [person], "person")
    roles = qi + [sa, group] + ([person] if person is not None else [])
    _check_roles(roles)
    _check_unique(frame, roles)
    if len(frame) == 0:
        raise ReleaseError("the release has no rows")
    role_names = ["quasi-identifier"] * len(qi) + ["sensitive", "group"]
    role_names += ["person"] if person is not None else []
    _check_cells(frame, roles, role_names)
    data = frame[roles].copy()
    _check_missing(data, roles, [""] * len(roles))
    if person is not None and data[person].duplicated().any():
        dup = data.loc[data[person].duplicated(), person].tolist()[0]
        raise ReleaseError(f"person id {dup!r} occurs in more than one row of column {person!r}")
    return data, qi


def _kind(series: pd.Series) -> str | None:
    """What a column holds, for comparing releases: numbers, text, dates or None (mixed)."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return _kind(pd.Series(dtype.categories))
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
        return "numbers"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "dates"
    inferred = pd.api.types.infer_dtype(series, skipna=True)
    if inferred in ("integer", "floating", "mixed-integer-float", "decimal", "boolean"):
        return "numbers"
    if inferred == "string":
        return "text"
    if inferred in ("datetime", "datetime64", "date"):
        return "dates"
    return None


def check_same_schema(releases) -> None:
    """Check that releases to be pooled describe the same table; ``None`` if they do.

    Compares every release with release 1 (numbered from 1, as in the messages) before
    any table is touched: each must be a Bucketized or Generalized release with the same
    quasi-identifier columns in the same order and the same sensitive column, and a
    column must hold the same kind of values (numbers, text or dates) in every release
    that has it exactly: the sensitive column, the QI columns of bucketized releases
    (generalized ones hold cells such as ``[20-30]``) and the person ids (``1`` and
    ``"1"`` would be two people). The group and person columns may be named differently.
    A one-line ``ReleaseError`` names the release and the columns that differ.

    >>> import pandas as pd
    >>> a = Bucketized(pd.DataFrame({"zip": [1], "d": ["x"], "g": [1]}), ["zip"], "d", "g")
    >>> b = Bucketized(pd.DataFrame({"zip5": [1], "d": ["x"], "g": [1]}), ["zip5"], "d", "g")
    >>> check_same_schema([a, b])
    Traceback (most recent call last):
    ...
    maxent_privacy.errors.ReleaseError: release 2 has other quasi-identifiers than release 1: \
it lacks 'zip' and has 'zip5' in addition (release 1: zip; release 2: zip5)
    """
    if isinstance(releases, _Release):
        releases = [releases]
    elif isinstance(releases, (str, dict, pd.DataFrame)) or not hasattr(releases, "__iter__"):
        raise ReleaseError(
            f"releases must be a list of Bucketized or Generalized releases, got "
            f"{type(releases).__name__}"
        )
    releases = list(releases)
    if not releases:
        raise ReleaseError("there is no release to pool (an empty list)")
    for r, rel in enumerate(releases, start=1):
        if not isinstance(rel, _Release):
            raise ReleaseError(
                f"release {r} is a {type(rel).__name__}, not a Bucketized or Generalized release"
            )
    first = releases[0]
    qi, sa = list(first.qi), first.sa
    for r, rel in enumerate(releases[1:], start=2):
        other = list(rel.qi)
        if other != qi:
            lacks = [c for c in qi if c not in other]
            extra = [c for c in other if c not in qi]
            shown = f"(release 1: {', '.join(map(str, qi))}; release {r}: "
            shown += f"{', '.join(map(str, other))})"
            if not lacks and not extra:
                raise ReleaseError(
                    f"release {r} lists its quasi-identifiers in another order than release 1 "
                    f"{shown}; give them in the same order"
                )
            parts = []
            if lacks:
                parts.append("lacks " + ", ".join(map(repr, lacks)))
            if extra:
                parts.append("has " + ", ".join(map(repr, extra)) + " in addition")
            raise ReleaseError(
                f"release {r} has other quasi-identifiers than release 1: it "
                f"{' and '.join(parts)} {shown}"
            )
        if rel.sa != sa:
            raise ReleaseError(f"release {r} has sensitive column {rel.sa!r}, release 1 has {sa!r}")
    exact = [(r, rel) for r, rel in enumerate(releases, start=1) if isinstance(rel, Bucketized)]
    columns = [(sa, "sensitive", list(enumerate(releases, start=1)))]
    columns += [(c, "quasi-identifier", exact) for c in qi]
    for col, role, holders in columns:
        _same_kind(((r, rel.frame[col]) for r, rel in holders), f"{role} column {col!r}")
    persons = [
        (r, rel.frame[rel.person])
        for r, rel in enumerate(releases, start=1)
        if rel.person is not None
    ]
    _same_kind(persons, "the person id column")


def _same_kind(columns, what: str) -> None:
    """The first two releases whose ``what`` holds different kinds of values: an error."""
    seen = None
    for r, series in columns:
        kind = _kind(series)
        if kind is None:
            continue
        example = series.iloc[0]
        example = example.item() if isinstance(example, np.generic) else example
        if seen is None:
            seen = (r, kind, example)
        elif kind != seen[1]:
            r0, kind0, example0 = seen
            raise ReleaseError(
                f"release {r}: {what} holds {kind} (e.g. {_shorten(example)}), in release "
                f"{r0} it holds {kind0} (e.g. {_shorten(example0)}); convert one of them"
            )


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
    the first offending row, as are cells that are not single values (a list, set, dict,
    tuple or array), duplicate column roles, role columns whose name occurs twice in
    ``frame`` and duplicate person ids.
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
