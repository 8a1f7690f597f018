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

from .._validation import ArgumentError, check_flag
from ..errors import ReleaseError
from .checks import (
    check_cells,
    check_columns,
    check_frame,
    check_label,
    check_missing,
    check_roles,
    check_unique,
    qi_list,
    shorten,
)

__all__ = [
    "Bucketized",
    "check_input_table",
    "check_same_schema",
    "counterfeit_flags",
    "validate_release",
]

# cells of these types are collections, not values: a QI, sensitive, group or person cell
# holding one is an error (unhashable ones crash pandas; hashable ones such as tuples
# cannot be named in a fact, which reads a tuple as a list of values)


def check_input_table(frame, qi, sa: str, group: str, person: str | None, who: str) -> list:
    """Checks shared by the anonymizers (``who`` names the caller); return the QI list.

    One-line ``ReleaseError`` for: not a DataFrame, MultiIndex columns, no QI, a missing
    or repeated QI, sensitive or person column, a column given two roles, a group column
    name already used by another role, a cell that is not a single value (a list, ...)
    or is missing in a QI, sensitive or person column.
    """
    check_frame(frame, who)
    qi = qi_list(qi, f"{who}: ")
    if not qi:
        raise ReleaseError(f"{who} needs at least one quasi-identifier column (qi=[...])")
    check_label(sa, f"{who}: sa")
    check_label(group, f"{who}: group")
    if person is not None:
        check_label(person, f"{who}: person")
    check_columns(frame, qi, "quasi-identifier")
    check_columns(frame, [sa], "sensitive")
    if person is not None:
        check_columns(frame, [person], "person")
    if group in qi or group == sa or group == person:
        raise ReleaseError(
            f"group column name {group!r} is already used by another role; "
            "pass another name with group=..."
        )
    columns = qi + [sa] + ([person] if person is not None else [])
    check_roles(columns)
    roles = ["quasi-identifier"] * len(qi) + ["sensitive"]
    roles += ["person"] if person is not None else []
    check_unique(frame, columns)
    check_cells(frame, columns, roles)
    check_missing(frame, columns, [f"{r} " for r in roles])
    return qi


def validate_release(
    frame, qi, sa: str, group: str, person: str | None, counterfeits: str | None = None
):
    """Check a release table; return (the role columns, copied; the QI list).

    One-line ``ReleaseError`` naming the column or value at fault: not a DataFrame,
    MultiIndex columns, no QI, missing columns, a role column whose name occurs twice, a
    column with two roles, no rows, a cell that is not a single value (a list, set, dict,
    tuple, array: unhashable, or not nameable in a fact), missing values, duplicate
    person ids. Other columns are dropped unchecked.

    With ``counterfeits`` (a boolean column, see :func:`counterfeit_flags`) the rows
    flagged True are counterfeit records: their QI and person cells may be missing (a
    person cell that is not is an error), and a group of counterfeits only is an error.
    The returned frame then ends with that column, as ``bool``.
    """
    check_frame(frame, "a release")
    qi = qi_list(qi)
    if not qi:
        raise ReleaseError("a release needs at least one quasi-identifier column (qi=[...])")
    check_label(sa, "sa")
    check_label(group, "group")
    if person is not None:
        check_label(person, "person")
    if counterfeits is not None:
        check_label(counterfeits, "counterfeits")
    check_columns(frame, qi, "quasi-identifier")
    check_columns(frame, [sa], "sensitive")
    check_columns(frame, [group], "group")
    if person is not None:
        check_columns(frame, [person], "person")
    if counterfeits is not None:
        check_columns(frame, [counterfeits], "counterfeits")
    roles = qi + [sa, group] + ([person] if person is not None else [])
    check_roles(roles + ([counterfeits] if counterfeits is not None else []))
    check_unique(frame, roles + ([counterfeits] if counterfeits is not None else []))
    if len(frame) == 0:
        raise ReleaseError("the release has no rows")
    role_names = ["quasi-identifier"] * len(qi) + ["sensitive", "group"]
    role_names += ["person"] if person is not None else []
    check_cells(frame, roles, role_names)
    data = frame[roles].copy()
    if counterfeits is None:
        check_missing(data, roles, [""] * len(roles))
        real = data
    else:
        fake = counterfeit_flags(frame[counterfeits])
        check_missing(data, [sa, group], ["", ""])
        real = data.loc[~fake]
        who = qi + ([person] if person is not None else [])
        check_missing(real, who, [""] * len(who))
        if person is not None and data[person].loc[fake].notna().any():
            at = np.flatnonzero(fake & data[person].notna().to_numpy())[0]
            row = _label(data.index[at])
            raise ReleaseError(
                f"row {row!r} is a counterfeit record (column {counterfeits!r}) but has "
                f"person id {shorten(_label(data[person].iloc[at]))}; a counterfeit is no one: "
                "leave its person cell empty"
            )
        alone = ~data[group].loc[fake].isin(real[group]).to_numpy()
        if alone.any():
            g = _label(data[group].loc[fake].iloc[np.argmax(alone)])
            raise ReleaseError(
                f"group {g!r} holds only counterfeit records (column {counterfeits!r}); "
                "every group needs at least one real record"
            )
        data[counterfeits] = fake
    if person is not None and real[person].duplicated().any():
        dup = real.loc[real[person].duplicated(), person].tolist()[0]
        raise ReleaseError(f"person id {dup!r} occurs in more than one row of column {person!r}")
    return data, qi


def _label(value):
    """A numpy scalar as a Python one (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def read_flags(series: pd.Series) -> tuple[np.ndarray, int | None]:
    """A flag column read as booleans, and the position of its first bad cell (or None).

    One reading for every flag column, the API's and the command line's: bool, 0/1, or
    text read as :func:`~maxent_privacy._validation.check_flag` reads it (true/false,
    yes/no, 1/0, any case); a missing or empty cell is no flag (it is bad).

    >>> read_flags(pd.Series(["True", "no", 1]))
    (array([ True, False,  True]), None)
    >>> read_flags(pd.Series([0, "maybe", ""]))[1]
    1
    """
    if pd.api.types.is_bool_dtype(series.dtype) and not series.isna().any():
        return series.to_numpy(dtype=bool), None
    if series.dtype.kind in "iuf":  # numbers: 0 and 1 only (NaN is neither)
        number = series.to_numpy()
        good = (number == 0) | (number == 1)
        return number == 1, (None if good.all() else int(np.argmax(~good)))
    values = series.to_numpy(dtype=object)
    reading = {}  # each distinct cell read once
    flags = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        key = (type(v), v) if _hashable(v) else None
        if key is None or key not in reading:
            flag = _flag(v)
            if key is not None:
                reading[key] = flag
        else:
            flag = reading[key]
        if flag is None:
            return flags, i
        flags[i] = flag
    return flags, None


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _flag(value) -> bool | None:
    """One cell as a flag, or None when it is not one."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return bool(value == 1) if value in (0, 1) else None
    if isinstance(value, str) and value.strip():
        try:
            return check_flag(value, "flag")
        except ArgumentError:
            return None
    return None


def counterfeit_flags(series: pd.Series) -> np.ndarray:
    """A counterfeit column as a boolean array: bool, 0/1, or text flags read as
    everywhere (true/false, yes/no, 1/0, any case; see :func:`read_flags`).

    Anything else (a missing cell, ``"maybe"``, ``2``) is a one-line ``ReleaseError``
    naming the column and the first bad row.

    >>> counterfeit_flags(pd.Series([0, 1, 1])).tolist()
    [False, True, True]
    >>> counterfeit_flags(pd.Series(["True", "false", "YES"])).tolist()
    [True, False, True]
    >>> counterfeit_flags(pd.Series([True, "maybe"], name="fake"))
    Traceback (most recent call last):
    ...
    maxent_privacy.errors.ReleaseError: counterfeits column 'fake' holds 'maybe' in row 1; \
it must be True/False, yes/no or 1/0
    """
    flags, bad = read_flags(series)
    if bad is not None:
        v = series.iloc[bad]
        raise ReleaseError(
            f"counterfeits column {series.name!r} holds {shorten(_label(v))} in row "
            f"{_label(series.index[bad])!r}; it must be True/False, yes/no or 1/0"
        )
    return flags


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
    if isinstance(releases, ReleaseBase):
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
        if not isinstance(rel, ReleaseBase):
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
                f"release {r}: {what} holds {kind} (e.g. {shorten(example)}), in release "
                f"{r0} it holds {kind0} (e.g. {shorten(example0)}); convert one of them"
            )


class ReleaseBase:
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
    def people(self) -> pd.DataFrame:
        """The rows of real people: every row (a :class:`Bucketized` release with
        counterfeit records leaves those out)."""
        return self.frame

    @property
    def n_people(self) -> int:
        """Number of records of real people."""
        return len(self.people)

    @property
    def sa_values(self) -> list:
        """Distinct sensitive values, sorted (as ``str``)."""
        return sorted(self.frame[self.sa].unique().tolist(), key=str)


class Bucketized(ReleaseBase):
    """One bucketized release, one row per record.

    Parameters
    ----------
    frame : DataFrame with the QI columns, the sensitive column and the group column.
    qi : names of the quasi-identifier columns (published exactly).
    sa : name of the sensitive column.
    group : name of the group (bucket) column.
    person : optional pseudonym column (one distinct id per row), used to link releases.
    counterfeits : optional boolean column (bool, 0/1 or True/False) flagging counterfeit
        records, as m-invariance publishes them (Xiao and Tao, SIGMOD 2007): each adds its
        sensitive value to its group's published multiset but belongs to no one. Their QI
        and person cells may be missing and are ignored; a counterfeit with a person id
        and a group of counterfeits only are errors. The publisher's second table, how
        many values of each group are counterfeit, is :meth:`counterfeit_counts`.

    Rows with a missing value in any of these columns are an error naming the column and
    the first offending row, as are cells that are not single values (a list, set, dict,
    tuple or array), duplicate column roles, role columns whose name occurs twice in
    ``frame`` and duplicate person ids.

    ``frame`` keeps every published row (counterfeits too, with the ``counterfeits``
    column as ``bool``); :attr:`people` is the rows of real people. ``n_records`` counts
    published records (counterfeits included), ``n_people`` real people only.

    >>> frame = pd.DataFrame({"name": ["Alice", "Bob", None], "bucket": [1, 1, 1],
    ...                       "disease": ["flu", "flu", "gastritis"],
    ...                       "fake": [False, False, True]})
    >>> release = Bucketized(frame, qi=["name"], sa="disease", group="bucket",
    ...                      counterfeits="fake")
    >>> release.n_records, release.n_people, release.counterfeit_counts().tolist()
    (3, 2, [1])
    >>> release
    Bucketized(3 records, 1 groups, qi=['name'], sa='disease', group='bucket', \
counterfeits='fake' (1 counterfeit))
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        qi: Sequence[str],
        sa: str,
        group: str,
        person: str | None = None,
        counterfeits: str | None = None,
    ):
        data, qi = validate_release(frame, qi, sa, group, person, counterfeits)
        self.frame = data
        self.qi = qi
        self.sa = sa
        self.group = group
        self.person = person
        self.counterfeits = counterfeits
        self._people = None

    # -- counterfeits -----------------------------------------------------------
    @property
    def is_counterfeit(self) -> np.ndarray:
        """One bool per row of ``frame``: True for a counterfeit record."""
        if self.counterfeits is None:
            return np.zeros(len(self.frame), dtype=bool)
        return self.frame[self.counterfeits].to_numpy(dtype=bool)

    @property
    def people(self) -> pd.DataFrame:
        """The rows of real people (``frame`` without counterfeits), role columns only.

        A QI or person column that is ``float`` only because counterfeit cells are missing
        is read back as integers (``30.0`` is ``30``, as the publisher wrote it).
        """
        if self.counterfeits is None:
            return self.frame
        if self._people is None:
            cols = self.qi + [self.sa, self.group] + ([self.person] if self.person else [])
            real = self.frame.loc[~self.is_counterfeit, cols].copy()
            for col in self.qi + ([self.person] if self.person else []):
                values = real[col]
                if (
                    pd.api.types.is_float_dtype(values.dtype)
                    and self.frame[col].isna().any()
                    and np.all(np.mod(values.to_numpy(), 1) == 0)
                ):
                    real[col] = values.astype(np.int64)
            self._people = real
        return self._people

    @property
    def n_people(self) -> int:
        """Number of records of real people (``n_records`` less the counterfeits)."""
        return len(self.frame) - int(self.is_counterfeit.sum())

    def counterfeit_counts(self) -> pd.Series:
        """The publisher's auxiliary table: how many records of each group are counterfeit.

        A Series indexed by group (sorted), named ``"counterfeits"``, 0 for groups without.

        >>> frame = pd.DataFrame({"q": [1, 2, 3], "s": ["a", "b", "a"], "g": [1, 1, 2]})
        >>> Bucketized(frame, ["q"], "s", "g").counterfeit_counts().to_dict()
        {1: 0, 2: 0}
        """
        groups = self.frame[self.group]
        counts = pd.Series(self.is_counterfeit.astype(np.int64), index=groups.to_numpy())
        out = counts.groupby(level=0, sort=True, observed=True).sum()
        out.index.name = self.group
        return out.rename("counterfeits")

    def domain(self, column: str) -> list:
        """Distinct values of a QI or sensitive column, sorted (QI: of real people)."""
        frame = self.frame if column == self.sa else self.people
        return sorted(frame[column].unique().tolist(), key=str)

    # -- published views --------------------------------------------------------
    def qi_table(self) -> pd.DataFrame:
        """The QI table as published (QI values and group, in row order; real people)."""
        return self.people[self.qi + [self.group]]

    def sa_table(self) -> pd.DataFrame:
        """The sensitive table as published: count of each sensitive value per group
        (counterfeit records included: their values are published like any other)."""
        counts = self.frame.groupby([self.group, self.sa], sort=True, observed=True).size()
        return counts.rename("count").reset_index()

    def buckets(self) -> pd.DataFrame:
        """One row per group: its QI values (list) and multiset of sensitive values.

        The multiset is the published one (counterfeit values included); with
        ``counterfeits`` a column of that name gives how many of them are counterfeit,
        and ``size`` counts published records.
        """
        g = self.frame.groupby(self.group, sort=True, observed=True)
        people = self.people.groupby(self.group, sort=True, observed=True)
        out = pd.DataFrame(
            {
                "size": g.size(),
                "qi": people[self.qi].apply(
                    lambda d: [tuple(r) for r in d.itertuples(index=False)]
                ),
                self.sa: g[self.sa].apply(lambda s: sorted(s.tolist(), key=str)),
            }
        )
        if self.counterfeits is not None:
            out["counterfeits"] = self.counterfeit_counts()
        return out

    def __repr__(self) -> str:
        return (
            f"Bucketized({self.n_records} records, {self.n_groups} groups, qi={self.qi}, "
            f"sa={self.sa!r}, group={self.group!r}"
            + (f", person={self.person!r}" if self.person else "")
            + (
                f", counterfeits={self.counterfeits!r} "
                f"({self.n_records - self.n_people} counterfeit)"
                if self.counterfeits is not None
                else ""
            )
            + ")"
        )
