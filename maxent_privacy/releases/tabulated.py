"""Counts tables: :class:`Tabulated`, one published table of a statistics office.

A table lists cells: values of its columns (QI columns, and the sensitive column when it
has one) and a count. What a table says (``docs/tables.md``):

* a listed count ``c`` is the number of records with those values; a combination of the
  table's values it does not list is a count of 0 (a complete crosstab);
* a cell marked suppressed (``"x"``, empty, NaN by default) is any count >= 0;
* ``rounding=b``: every published count ``c``, the unlisted 0 included, stands for a true
  count in ``max(0, c - (b - 1)) ... c + (b - 1)`` (random rounding to base ``b``);
* a count may be an interval ``[3-7]``, both ends included;
* ``stat="mean"`` or ``"median"``, ``of="age"``: the table publishes, per row, the mean or
  the median of the numeric attribute ``of`` (in the column ``of``), not counts.

QI cells may be generalized, in the syntax of
:class:`~maxent_privacy.releases.generalized.Generalized` (``20-29``, ``[50, 55[``,
``021**``, ``*``).

>>> import pandas as pd
>>> t = Tabulated(pd.DataFrame({"sex": ["F", "M"], "count": [3, "x"]}), qi=["sex"],
...               name="by sex")
>>> t.lower.tolist(), t.upper.tolist(), t.suppressed.tolist()
([3.0, 0.0], [3.0, inf], [False, True])
>>> Tabulated(pd.DataFrame({"sex": ["F"], "count": [-1]}), qi=["sex"])
Traceback (most recent call last):
...
maxent_privacy.errors.ReleaseError: table 1, row 1, column 'count': -1 is negative \
(counts are >= 0)
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._validation import ReleaseArgumentError, check_choice, shown
from ..errors import ReleaseError
from .cells import parse_cell

__all__ = ["STATS", "Tabulated"]

#: the statistics a table may publish per row besides counts
STATS = ("mean", "median")


class Tabulated:
    """One published counts table (see the module docstring).

    Parameters
    ----------
    frame : DataFrame
        One row per published cell.
    qi : list of str
        The table's quasi-identifier columns (may be empty).
    sa : str, optional
        The sensitive column, when the table has it.
    count : str
        The column of counts (not read for ``stat`` tables).
    rounding : int, optional
        Random rounding to this base (>= 2).
    suppressed : tuple of str
        Count texts that mean "suppressed" (compared after stripping; NaN is ``""``).
    stat, of : str, optional
        ``"mean"`` or ``"median"`` of the numeric attribute ``of``, in column ``of``.
    name : str, optional
        How errors and the report name the table (default ``"table k"`` by position).

    Attributes
    ----------
    columns : list
        ``qi`` and then ``sa`` (when given).
    keys : DataFrame
        The published cells' values in ``columns``, one row per cell, as given.
    lower, upper : ndarray
        Each cell's count range (``upper`` is ``inf`` for a suppressed cell); for a
        ``stat`` table, the statistic (both equal; NaN when suppressed).
    suppressed : ndarray of bool
        True for a suppressed cell.
    published : list of str
        Each cell's count (or statistic) as published, as text.
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        qi=(),
        sa: str | None = None,
        count: str = "count",
        rounding: int | None = None,
        suppressed=("x", ""),
        stat: str | None = None,
        of: str | None = None,
        name: str | None = None,
    ):
        self.name = name
        self._where_default = name is None
        if not isinstance(frame, pd.DataFrame):
            raise ReleaseError(f"{self.label}: a table is a DataFrame, got {shown(frame)}")
        self.qi = [qi] if isinstance(qi, str) else list(qi)
        self.sa, self.count, self.stat, self.of = sa, count, stat, of
        self.rounding = _check_rounding(rounding, self.label)
        self.suppressed_words = tuple(str(s).strip() for s in suppressed)
        self._check_roles(frame)
        self.columns = self.qi + ([sa] if sa is not None else [])
        self.frame = frame
        self.keys = frame[self.columns].reset_index(drop=True)
        self._check_keys()
        value_column = of if stat is not None else count
        self.lower, self.upper, self.suppressed, self.published = _read_counts(
            frame[value_column].tolist(), self, value_column
        )

    # ------------------------------------------------------------------ naming
    @property
    def label(self) -> str:
        """How messages name the table: its ``name``, or ``table k`` (k set by the model)."""
        if self.name is not None:
            return f"table {self.name!r}"
        return f"table {getattr(self, '_position', 1)}"

    def at(self, position: int) -> None:
        """Number the table ``position`` (1-based) for its messages when it has no name."""
        self._position = position

    def __len__(self) -> int:
        return len(self.keys)

    def __repr__(self) -> str:
        what = f"{self.stat} of {self.of}" if self.stat else "counts"
        by = ", ".join(self.qi + ([self.sa] if self.sa else [])) or "total"
        return f"Tabulated({self.label}: {what} by {by}, {len(self)} cells)"

    @property
    def total(self) -> float | None:
        """The number of records the table counts, when every count is exact (and the table
        is not rounded); None otherwise (and for ``stat`` tables)."""
        if self.stat is not None or self.rounding is not None:
            return None
        if self.suppressed.any() or not np.array_equal(self.lower, self.upper):
            return None
        return float(self.lower.sum())

    @property
    def exact_rows(self) -> np.ndarray:
        """True for a cell whose count is known exactly."""
        return (self.lower == self.upper) & ~self.suppressed

    # ------------------------------------------------------------------ checks
    def _check_roles(self, frame: pd.DataFrame) -> None:
        where = self.label
        for c in self.qi:
            if not isinstance(c, str):
                raise ReleaseError(f"{where}: qi names columns by text, got {shown(c)}")
        if self.sa is not None and not isinstance(self.sa, str):
            raise ReleaseError(f"{where}: sa names a column by text, got {shown(self.sa)}")
        if len(set(self.qi)) != len(self.qi):
            raise ReleaseError(f"{where}: a column is named twice in qi ({self.qi})")
        if self.sa in self.qi:
            raise ReleaseError(f"{where}: column {self.sa!r} is both a QI and the SA")
        if self.stat is not None:
            check_choice(self.stat, "stat", STATS, error=ReleaseArgumentError)
            if self.of is None:
                raise ReleaseError(f"{where}: stat={self.stat!r} needs of= (the attribute)")
            if self.of in self.qi or self.of == self.sa:
                raise ReleaseError(
                    f"{where}: the {self.stat} of {self.of!r} cannot be by {self.of!r} itself"
                )
        elif self.of is not None:
            raise ReleaseError(f"{where}: of= goes with stat='mean' or 'median'")
        needed = self.qi + ([self.sa] if self.sa else [])
        needed.append(self.of if self.stat is not None else self.count)
        for c in needed:
            if c not in frame.columns:
                raise ReleaseError(
                    f"{where}: column {c!r} is not in the table (it has "
                    f"{', '.join(map(str, frame.columns))})"
                )

    def _check_keys(self) -> None:
        keys = self.keys
        for c in self.columns:
            missing = keys[c].isna().to_numpy()
            if missing.any():
                row = int(np.flatnonzero(missing)[0]) + 1
                raise ReleaseError(f"{self.label}, row {row}, column {c!r}: the cell is empty")
        if self.columns:
            dup = keys.duplicated(keep="first").to_numpy()
            if dup.any():
                row = int(np.flatnonzero(dup)[0]) + 1
                first = keys.iloc[row - 1].tolist()
                raise ReleaseError(f"{self.label}, row {row}: the cell {first} is listed twice")
        elif len(keys) != 1:
            raise ReleaseError(
                f"{self.label}: a table without columns is one total, it has {len(keys)} rows"
            )


def _check_rounding(rounding, where: str) -> int | None:
    if rounding is None:
        return None
    if isinstance(rounding, bool) or not isinstance(rounding, (int, np.integer)):
        raise ReleaseError(f"{where}: rounding is a whole base >= 2, got {shown(rounding)}")
    if rounding < 2:
        raise ReleaseError(f"{where}: rounding is a whole base >= 2, got {int(rounding)}")
    return int(rounding)


def _read_counts(values: list, table: Tabulated, column: str):
    """Per published value: (lower, upper, suppressed, text), checked."""
    n = len(values)
    lower, upper = np.zeros(n), np.zeros(n)
    hidden = np.zeros(n, dtype=bool)
    texts = []
    stat = table.stat is not None
    for i, raw in enumerate(values):
        where = f"{table.label}, row {i + 1}, column {column!r}"
        text = "" if _is_missing(raw) else str(raw).strip()
        texts.append(text)
        if text in table.suppressed_words:
            hidden[i] = True
            lower[i], upper[i] = (np.nan, np.nan) if stat else (0.0, np.inf)
            continue
        if stat:
            lower[i] = upper[i] = _statistic(raw, text, where)
            continue
        lo, hi = _count_range(raw, text, where)
        if table.rounding is not None:
            b = table.rounding
            if lo != hi:
                raise ReleaseError(f"{where}: {text!r} is an interval in a rounded table")
            if lo % b:
                raise ReleaseError(f"{where}: {text} is not a multiple of the base {b}")
            lo, hi = max(0.0, lo - (b - 1)), hi + (b - 1)
        lower[i], upper[i] = lo, hi
    return lower, upper, hidden, texts


def _is_missing(raw) -> bool:
    try:
        return bool(pd.isna(raw))
    except (TypeError, ValueError):
        return False


def _whole(value: float, text: str, where: str) -> float:
    if not math.isfinite(value):
        raise ReleaseError(f"{where}: {text!r} is not a finite count")
    if value < 0:
        raise ReleaseError(f"{where}: {text} is negative (counts are >= 0)")
    if value != int(value):
        raise ReleaseError(f"{where}: {text} is not a whole count")
    return float(value)


def _count_range(raw, text: str, where: str) -> tuple[float, float]:
    """A published count or interval ``[lo-hi]`` as (lo, hi)."""
    if isinstance(raw, (bool, np.bool_)):
        raise ReleaseError(f"{where}: {raw!r} is not a count")
    if isinstance(raw, (int, float, np.integer, np.floating)):
        value = _whole(float(raw), text, where)
        return value, value
    try:
        value = float(text)
    except ValueError:
        pass
    else:
        value = _whole(value, text, where)
        return value, value
    if text.startswith("[") and text.endswith("]"):
        try:
            cell = parse_cell(text, formats="ours")
        except ReleaseError:
            cell = None
        if cell is not None and cell.kind == "interval" and not (cell.lo_open or cell.hi_open):
            lo = _whole(cell.lo, text, where)
            hi = _whole(cell.hi, text, where)
            if lo > hi:
                raise ReleaseError(f"{where}: the interval {text} is empty")
            return lo, hi
    raise ReleaseError(
        f"{where}: {text!r} is not a count (a whole number, an interval [lo-hi], or a "
        f"suppression mark)"
    )


def _statistic(raw, text: str, where: str) -> float:
    try:
        value = float(raw) if not isinstance(raw, str) else float(text)
    except (TypeError, ValueError):
        raise ReleaseError(f"{where}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ReleaseError(f"{where}: {text!r} is not a finite number")
    return value
