"""Mondrian multidimensional partitioning (LeFevre, DeWitt and Ramakrishnan, ICDE 2006).

:func:`mondrian` makes a :class:`~maxent_privacy.releases.generalized.Generalized` release that
is (k, c)-anonymous in the sense of Byun et al. (see
:func:`~maxent_privacy.attacks.check_kc`): it splits the table top-down at medians
while both halves keep at least ``k`` records and no sensitive value above the share
``c``, then publishes each final partition with its QI values generalized to the
partition's extent.

>>> import pandas as pd
>>> from maxent_privacy.anonymize import mondrian
>>> frame = pd.DataFrame({"age": [21, 23, 27, 52, 53, 57, 59],
...                       "sex": ["M", "M", "F", "M", "M", "F", "F"],
...                       "disease": ["Asthma", "Flu", "Cancer", "Alzheimer",
...                                   "Hepatitis", "Flu", "Diabetes"]})
>>> release = mondrian(frame, qi=["age", "sex"], sa="disease", k=2, c=0.5)
>>> release.frame[["age", "sex", "group"]].drop_duplicates().values.tolist()
[['[21-23]', 'M', 1], ['[27-52]', '*', 2], ['[53-59]', '*', 3]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NoReturn

import numpy as np
import pandas as pd

from .._validation import ArgumentError, check_flag, check_integer, check_seed, shown
from ..errors import ReleaseError
from ..releases.bucketized import check_input_table
from ..releases.checks import resolve_c
from ..releases.generalized import Generalized
from .contract import keyword_only, no_exemptions, release_arguments

__all__ = ["mondrian"]

_EPS = 1e-12


def _number(value: float) -> str:
    """A number as written in a cell: integers without a decimal point."""
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def _check_categorical(column: str, values: Sequence) -> None:
    for v in values:
        text = str(v)
        if text != text.strip() or not text:
            raise ReleaseError(
                f"column {column!r} has value {v!r} with surrounding spaces or empty; "
                "it cannot be written in a generalized cell"
            )
        if any(ch in text for ch in ",{}") or text == "*" or text.startswith("["):
            raise ReleaseError(
                f"column {column!r} has value {v!r}, which cannot be written in a "
                "generalized cell (it holds ',', '{' or '}', starts with '[' or is '*')"
            )


def _fold_numeric(keywords: dict, numeric) -> None:
    """The deprecated ``numeric=[...]``: the QI columns it lists become numbers, the others
    of a numeric dtype plain values (categorical), in a copy of ``frame``."""
    frame, qi = keywords.get("frame"), keywords.get("qi")
    if numeric is None or not isinstance(frame, pd.DataFrame) or qi is None:
        return
    qi = [qi] if isinstance(qi, str) else list(qi)
    numeric = [numeric] if isinstance(numeric, str) else list(numeric)
    for col in numeric:
        if col not in qi:
            raise ReleaseError(f"numeric column {col!r} is not a quasi-identifier ({qi})")
    frame = frame.copy()
    for col in qi:
        if col not in frame.columns or frame[col].ndim != 1:
            continue
        if col in numeric:
            try:
                frame[col] = pd.to_numeric(frame[col])
            except (ValueError, TypeError):
                bad = next(v for v in frame[col].tolist() if _not_number(v))
                raise ReleaseError(
                    f"numeric column {col!r} has a value that is not a number: {bad!r}"
                ) from None
        elif _numeric_dtype(frame[col]):
            frame[col] = frame[col].astype(object)
    keywords["frame"] = frame


@keyword_only(
    "frame", "qi", "sa", "k", "c", "group", "numeric", "relaxed", "person",
    folded={"numeric": ("the QI of a numeric dtype are numeric: cast the others (astype)",
                        _fold_numeric)},
)  # fmt: skip
def mondrian(
    frame: pd.DataFrame,
    qi: Sequence[str],
    sa: str,
    *,
    k: int,
    c: float = 1.0,
    group: str = "group",
    person: str | None = None,
    seed=0,
    nonsensitive=None,
    relaxed: bool = False,
) -> Generalized:
    """Partition ``frame`` with Mondrian under (k, c)-anonymity; return the release.

    Starting from the whole table, a partition is split on the QI attribute with the
    widest normalized range (numeric: value range over the table's range; categorical:
    span of the values' positions in sorted order over the domain's), falling back to
    the next widest when that split is not allowed, and is final when no attribute can
    be split. A split is allowed only if both halves have at least ``k`` records and no
    sensitive value in more than the share ``c`` of them (``c`` above 1 is read as
    l, bound 1/l, as in :func:`~maxent_privacy.attacks.check_kc`).

    * Strict splitting (default): at the median ``m`` of the attribute (in sorted value
      order), ``<= m`` goes left and ``> m`` right (or ``< m`` and ``>= m`` when the
      former leaves one side empty or is not allowed); classes never overlap.
    * Relaxed (``relaxed=True``): the records sorted by the attribute (ties in row
      order) are cut in two halves of ``n // 2`` and ``n - n // 2``; records with the
      median value may fall on both sides, so the cells of two classes may overlap.

    The release has one row per record of ``frame`` (same index and order) with the
    columns ``qi``, ``sa``, ``group`` (1, 2, ... in depth-first, lower-half-first order
    of the partitions) and ``person`` if given. Numeric QI cells are ``[lo-hi]``
    (the class's smallest and largest value) or the value itself; categorical cells are
    the set of the class's values ``{a, b}``, the value itself, or ``*`` when the class
    holds every value of the column. The numeric QI columns are those of a numeric
    dtype (``numeric=[...]`` is deprecated: cast a column with ``astype(str)`` to make it
    categorical, ``pd.to_numeric`` to make it numeric). The result is deterministic.

    The whole table must itself satisfy k and c, else ``ReleaseError`` names the value.

    ``c`` defaults to 1 (no bound on a value's share: k-anonymity). ``seed`` is taken for
    the one signature of the anonymizers and not used (Mondrian is deterministic);
    ``nonsensitive`` must be None. Everything after ``sa`` is keyword-only; the old
    positional order ``(frame, qi, sa, k, c, group, numeric, relaxed, person)`` still
    works, with a ``DeprecationWarning``.
    """
    with release_arguments():
        k = check_integer(k, "k", minimum=1)
        c = _check_c(c)
        check_seed(seed)
        relaxed = check_flag(relaxed, "relaxed")
    no_exemptions(nonsensitive, "mondrian", "c bounds every value")
    qi = check_input_table(frame, qi, sa, group, person, "mondrian")
    n = len(frame)
    if n == 0:
        raise ReleaseError("the table has no rows")
    _check_no_missing(frame, [*qi, sa])
    numeric = [col for col in qi if _numeric_dtype(frame[col])]
    codes, values_of, spans = _encode_qi(frame, qi, numeric)
    sa_codes, sa_uniques = pd.factorize(frame[sa], sort=False)
    n_sa = len(sa_uniques)
    is_numeric = np.array([col in numeric for col in qi])

    def allowed(rows: np.ndarray) -> bool:
        size = len(rows)
        if size < k:
            return False
        return np.bincount(sa_codes[rows], minlength=n_sa).max() <= c * size + _EPS

    everything = np.arange(n)
    if not allowed(everything):
        _raise_not_anonymous(sa_codes, sa_uniques, k, c)
    final = _partition(everything, codes, values_of, spans, is_numeric, relaxed, allowed)

    group_of = np.empty(n, dtype=np.int64)
    for g, part in enumerate(final, start=1):
        group_of[part] = g
    out_cols = qi + [sa] + ([person] if person is not None else [])
    out = frame[out_cols].copy()
    for j, col in enumerate(qi):
        cell_of = np.array(_cells(codes[:, j], values_of[j], is_numeric[j], final), dtype=object)
        out[col] = pd.Series(cell_of[group_of - 1], index=frame.index, dtype=object)
    out[group] = group_of
    # cells in our own syntax: a categorical value such as 'A*' stays exact
    return Generalized(out, qi=qi, sa=sa, group=group, person=person, formats="ours")


def _check_c(c) -> float:
    """Definition 1's confidence bound (a ``c`` above 1 is l, bound 1/l), as an ArgumentError."""
    try:
        return resolve_c(c)
    except ReleaseError:
        raise ArgumentError(
            f"c must be a number in (0, 1] (a confidence bound) or above 1 (read as l, for the "
            f"bound 1/l), got {shown(c)}"
        ) from None


def _check_no_missing(frame: pd.DataFrame, columns: list[str]) -> None:
    """Raise naming the first missing value of ``columns``, if any."""
    for col in columns:
        missing = frame[col].isna().to_numpy()
        if missing.any():
            row = frame.index[int(np.argmax(missing))]
            raise ReleaseError(
                f"column {col!r} has a missing value (row {row!r}); drop or fill such rows first"
            )


def _numeric_dtype(column: pd.Series) -> bool:
    """A numeric QI column: a numeric dtype, not bool."""
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def _encode_qi(
    frame: pd.DataFrame, qi: list[str], numeric: list[str]
) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """Per QI column: codes in sorted value order, the sorted values, and the width scale."""
    codes = np.empty((len(frame), len(qi)), dtype=np.int64)
    values_of: list[np.ndarray] = []
    spans = np.zeros(len(qi))
    for j, col in enumerate(qi):
        if col in numeric:
            try:
                vals = pd.to_numeric(frame[col]).to_numpy(dtype=float)
            except (ValueError, TypeError):
                bad = next(v for v in frame[col].tolist() if _not_number(v))
                raise ReleaseError(
                    f"numeric column {col!r} has a value that is not a number: {bad!r}"
                ) from None
            if not np.isfinite(vals).all():
                raise ReleaseError(f"numeric column {col!r} has an infinite value")
            uniq = np.unique(vals)
            codes[:, j] = np.searchsorted(uniq, vals)
            values_of.append(uniq)
            spans[j] = uniq[-1] - uniq[0]
        else:
            raw = frame[col].tolist()
            uniq = sorted(set(raw), key=lambda v: (str(v), repr(v)))
            _check_categorical(col, uniq)
            index = {v: i for i, v in enumerate(uniq)}
            codes[:, j] = [index[v] for v in raw]
            values_of.append(np.array(uniq, dtype=object))
            spans[j] = len(uniq) - 1
    return codes, values_of, spans


def _raise_not_anonymous(sa_codes: np.ndarray, sa_uniques, k: int, c: float) -> NoReturn:
    """Raise the error for a table that is not (k, c)-anonymous as a whole."""
    n = len(sa_codes)
    counts = np.bincount(sa_codes, minlength=len(sa_uniques))
    top = int(np.argmax(counts))
    if n < k:
        raise ReleaseError(f"the table has {n} records, fewer than k={k}")
    raise ReleaseError(
        f"the table is not (k, c)-anonymous as a whole: sensitive value "
        f"{sa_uniques[top]!r} is {counts[top]} of {n} records, more than c={c:g}"
    )


def _partition(
    everything: np.ndarray,
    codes: np.ndarray,
    values_of: list[np.ndarray],
    spans: np.ndarray,
    is_numeric: np.ndarray,
    relaxed: bool,
    allowed,
) -> list[np.ndarray]:
    """The final partitions, split top-down depth-first (lower half first)."""
    final: list[np.ndarray] = []
    stack = [everything]
    while stack:
        part = stack.pop()
        sub = codes[part]
        widths = _widths(sub, values_of, spans, is_numeric)
        order = sorted(
            (j for j in range(len(widths)) if widths[j] > 0), key=lambda j: (-widths[j], j)
        )
        halves = None
        for j in order:
            halves = _split(part, sub[:, j], relaxed, allowed)
            if halves is not None:
                break
        if halves is None:
            final.append(part)
        else:
            stack.append(halves[1])
            stack.append(halves[0])
    return final


def _widths(
    sub: np.ndarray, values_of: list[np.ndarray], spans: np.ndarray, is_numeric: np.ndarray
) -> np.ndarray:
    """Normalized range of each QI attribute over a partition's codes ``sub``."""
    lo = sub.min(axis=0)
    hi = sub.max(axis=0)
    widths = np.zeros(len(spans))
    for j in range(len(spans)):
        if spans[j] > 0 and hi[j] > lo[j]:
            if is_numeric[j]:
                widths[j] = (values_of[j][hi[j]] - values_of[j][lo[j]]) / spans[j]
            else:
                widths[j] = (hi[j] - lo[j]) / spans[j]
    return widths


def _cells(
    column: np.ndarray, values: np.ndarray, is_numeric: bool, final: list[np.ndarray]
) -> list[str]:
    """One generalized cell per final partition for a QI column (codes ``column``)."""
    cells = []
    for part in final:
        present = np.unique(column[part])
        if is_numeric:
            lo_v, hi_v = values[present[0]], values[present[-1]]
            cells.append(_number(lo_v) if lo_v == hi_v else f"[{_number(lo_v)}-{_number(hi_v)}]")
        elif len(present) == len(values):
            cells.append("*")
        elif len(present) == 1:
            cells.append(str(values[present[0]]))
        else:
            cells.append("{" + ", ".join(str(values[i]) for i in present) + "}")
    return cells


def _not_number(value) -> bool:
    try:
        return not math.isfinite(float(value))
    except (TypeError, ValueError):
        return True


def _split(part: np.ndarray, column: np.ndarray, relaxed: bool, allowed):
    """The two halves of ``part`` split on ``column`` (codes), or None if not allowed."""
    if relaxed:
        order = np.argsort(column, kind="stable")
        half = len(part) // 2
        left, right = part[np.sort(order[:half])], part[np.sort(order[half:])]
        if allowed(left) and allowed(right):
            return left, right
        return None
    median = np.sort(column)[(len(column) - 1) // 2]
    for below in (column <= median, column < median):
        if below.all() or not below.any():
            continue
        left, right = part[below], part[~below]
        if allowed(left) and allowed(right):
            return left, right
    return None
