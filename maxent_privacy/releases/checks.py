"""Input checks shared by the releases, the anonymizers, the attacks and the metrics.

Each raises :class:`~maxent_privacy.errors.ReleaseError` with one line naming the
column, row or argument at fault, before pandas or numpy can fail on it.

>>> import pandas as pd
>>> check_unique(pd.DataFrame([[1, 2]], columns=["a", "a"]), ["a"])
Traceback (most recent call last):
...
maxent_privacy.errors.ReleaseError: ...
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._validation import ReleaseArgumentError, check_integer
from ..errors import ReleaseError

#: values that are not a single cell value
COLLECTIONS = (list, tuple, set, frozenset, dict, np.ndarray, pd.Series, pd.DataFrame, pd.Index)

__all__ = [
    "shorten",
    "check_columns",
    "check_label",
    "qi_list",
    "check_frame",
    "check_unique",
    "first_bad_cell",
    "check_cells",
    "check_missing",
    "check_roles",
    "check_k",
    "resolve_c",
]


def shorten(value, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_columns(frame: pd.DataFrame, columns: Sequence[str], role: str) -> None:
    for col in columns:
        if col not in frame.columns:
            have = ", ".join(map(str, frame.columns))
            raise ReleaseError(f"{role} column {col!r} is not in the table (columns: {have})")


def check_label(label, what: str) -> None:
    """A column name given as an argument: one hashable label, not a collection."""
    bad = isinstance(label, COLLECTIONS)
    if not bad:
        try:
            hash(label)
        except TypeError:
            bad = True
    if bad:
        raise ReleaseError(
            f"{what} must be one column name, got {type(label).__name__} {shorten(label)}"
        )


def qi_list(qi, prefix: str = "") -> list:
    """The ``qi`` argument as a list of column names (one-line ReleaseError otherwise)."""
    if isinstance(qi, str):
        return [qi]
    if qi is None or isinstance(qi, (dict, pd.DataFrame)) or not hasattr(qi, "__iter__"):
        raise ReleaseError(
            f"{prefix}qi must be a column name or a list of column names, got "
            f"{type(qi).__name__} {shorten(qi)}"
        )
    qi = list(qi)
    for j, col in enumerate(qi, start=1):
        check_label(col, f"{prefix}quasi-identifier {j} of qi=[...]")
    return qi


def check_frame(frame, who: str) -> None:
    """A DataFrame with flat column labels."""
    if not isinstance(frame, pd.DataFrame):
        raise ReleaseError(f"{who} needs a pandas DataFrame, got {type(frame).__name__}")
    if isinstance(frame.columns, pd.MultiIndex):
        shown = ", ".join(map(str, frame.columns[:3]))
        raise ReleaseError(
            f"{who} needs one name per column, the table has MultiIndex columns ({shown}, ...); "
            "flatten them first"
        )


def check_unique(frame: pd.DataFrame, columns: Sequence) -> None:
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


def first_bad_cell(values: np.ndarray) -> int | None:
    """Position of the first cell that is not a hashable scalar (None: all are)."""

    def bad(v) -> bool:
        if isinstance(v, COLLECTIONS):
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


def check_cells(frame: pd.DataFrame, columns: Sequence, roles: Sequence[str]) -> None:
    """Every cell of ``columns`` (unique labels) is a hashable scalar: str, number, ..."""
    for col, role in zip(columns, roles, strict=True):
        series = frame[col]
        if isinstance(series.dtype, pd.CategoricalDtype):
            values = np.asarray(series.cat.categories, dtype=object)
            pos = first_bad_cell(values)
            if pos is not None:
                pos = int(np.argmax(series.cat.codes.to_numpy() == pos))
        elif series.dtype == object:
            pos = first_bad_cell(series.to_numpy())
        else:
            continue
        if pos is not None:
            row = frame.index[pos]
            row = row.item() if hasattr(row, "item") else row
            value = series.iloc[pos]
            raise ReleaseError(
                f"{role} column {col!r} holds {shorten(value)} (a {type(value).__name__}) "
                f"in row {row!r}; cells must be single values (text, numbers, ...)"
            )


def check_missing(frame: pd.DataFrame, columns: Sequence, prefix: Sequence[str]) -> None:
    for col, role in zip(columns, prefix, strict=True):
        missing = frame[col].isna().to_numpy()
        if missing.any():
            row = frame.index[np.argmax(missing)]
            row = row.item() if hasattr(row, "item") else row
            raise ReleaseError(
                f"{role}column {col!r} has a missing value (row {row!r}); "
                "drop or fill such rows first"
            )


def check_roles(columns: Sequence) -> None:
    seen: set = set()
    for col in columns:
        if col in seen:
            raise ReleaseError(
                f"column {col!r} is given more than one role (qi, sa, group, person)"
            )
        seen.add(col)


def check_k(k) -> int:
    """``k`` of k-anonymity: a whole number of at least 1."""
    return check_integer(k, "k", minimum=1, error=ReleaseArgumentError)


def resolve_c(c) -> float:
    """Definition 1's confidence bound: ``c`` in (0, 1]; a ``c`` above 1 is l, bound 1/l."""
    if (
        isinstance(c, bool)
        or not isinstance(c, (int, float, np.integer, np.floating))
        or not math.isfinite(c)
        or c <= 0
    ):
        raise ReleaseError(
            f"c must be a number in (0, 1] (a confidence bound) or above 1 (read as l, "
            f"for the bound 1/l), got {c!r}"
        )
    return float(c) if c <= 1 else 1.0 / float(c)


def check_l(l) -> int:  # noqa: E741
    """``l`` of l-diversity: an integer of at least 2."""
    return check_integer(l, "l", minimum=2, error=ReleaseArgumentError)


def rng_of(seed) -> np.random.Generator:
    """``numpy.random.default_rng(seed)``, with a one-line error for a bad seed."""
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError):
        raise ReleaseError(
            f"seed must be an integer (or None, a SeedSequence or a Generator), got {seed!r:.40}"
        ) from None
