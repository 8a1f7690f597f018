"""Generalized cells: the syntax of a k-anonymity-style QI cell, parsed and matched.

A generalized cell stands for the set of exact values it covers. Our own syntax
(``formats="ours"``):

* ``[21-25]`` or ``[21 - 25]``: the numbers from 21 to 25, bounds included;
* ``{a, b}``: any of the listed values (``{21, 22}`` also matches the numbers);
* ``*``, or any word given in ``any_values`` (Byun et al. write ``Person`` for "male or
  female"): any value at all;
* anything else: exactly that value (``"21"`` matches the number 21).

``formats="auto"`` (the default) also reads the cells ARX and sdcMicro write:

* ranges ``20-29`` (bounds included), ``[20, 29]``, ``[20, 30[`` and ``[20, 30)``
  (30 left out), ``]20, 30]`` and ``(20, 30]`` (20 left out); a bound may be ``inf``;
* inequalities ``<30``, ``<=29``, ``>60``, ``>=60`` (also ``≤``, ``≥``);
* prefix masks ``021**``, ``0213*``: values whose text has as many characters and starts
  with ``021`` (a number is zero-padded first, so the number 2139 matches ``021**``);
* suppression: ``*``, ``**``, ... (only stars): any value.

A plain number is always an exact value, so a column of numbers stays numeric, and text
that is none of these forms (``<=50K``, ``7th-8th``) is an exact value. ``formats=None``
reads every cell as an exact value; a dict by column chooses per column (columns not
named: ``"auto"``). :class:`~maxent_privacy.releases.generalized.Generalized` reads a
release's cells with these.

>>> covers("[21 - 25]", 23), covers("{Male, Female}", "Male"), covers("*", 7)
(True, True, True)
>>> covers("021**", "02139"), covers("[20, 30[", 30), covers(">=60", 75), covers("20-29", 29)
(True, False, True, True)
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import ReleaseError
from .checks import shorten

__all__ = [
    "FORMATS",
    "Cell",
    "any_value_words",
    "covers",
    "find_generalized",
    "formats_by_column",
    "parse_cell",
    "value_arrays",
]

FORMATS = ("auto", "ours", None)
"""The cell formats: ``"auto"`` (ours and ARX/sdcMicro), ``"ours"``, None (exact values)."""

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER = re.compile(rf"^\s*{_NUM}\s*$")
_INTERVAL = re.compile(rf"^\[\s*({_NUM})\s*[-\u2013]\s*({_NUM})\s*\]$")
# ARX and sdcMicro: [a, b], [a, b[, ]a, b], (a, b], [a, b), ... (bounds may be infinite)
_BOUND = rf"(?:{_NUM}|[-+]?(?:inf|Inf|INF|infinity|Infinity|\u221e))"
_BRACKETS = re.compile(rf"^([\[\]\(])\s*({_BOUND})\s*[,;]\s*({_BOUND})\s*([\[\]\)])$")
_DASH = re.compile(rf"^({_NUM})\s*[-\u2013]\s*({_NUM})$")
_INEQUALITY = re.compile(rf"^(<=|>=|<|>|\u2264|\u2265)\s*({_NUM})$")
_MASK = re.compile(r"^([^*]*?)(\*+)$")


def _as_number(value) -> float | None:
    """``value`` as a float if it is a (finite) number or a string spelling one."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        out = float(value)
        return out if math.isfinite(out) else None
    if isinstance(value, str) and _NUMBER.match(value):
        out = float(value)
        return out if math.isfinite(out) else None
    return None


def _where(column: str | None) -> str:
    return f"column {column!r} has" if column is not None else "cell has"


@dataclass(frozen=True)
class Cell:
    """A parsed generalized value.

    ``kind`` is ``"any"``, ``"interval"`` (``lo <= x <= hi``; ``<`` where ``lo_open`` or
    ``hi_open``; a bound may be infinite), ``"set"`` (``values``, as strings), ``"mask"``
    (values whose text is ``values[0]`` followed by any characters, ``width`` in all) or
    ``"exact"`` (``values[0]``, kept as given); ``raw`` is the cell as published.
    """

    kind: str
    raw: object
    lo: float | None = None
    hi: float | None = None
    values: tuple = ()
    lo_open: bool = False
    hi_open: bool = False
    width: int | None = None

    def mask(self, strings: np.ndarray, numbers: np.ndarray) -> np.ndarray:
        """Which exact values this cell covers, given them as ``str`` and as floats.

        ``strings`` holds ``str(value).strip()`` of each value, ``numbers`` its float (NaN
        when it is not a number); both 1-d arrays of the same length.
        """
        n = len(strings)
        if self.kind == "any":
            return np.ones(n, dtype=bool)
        if self.kind == "interval":
            with np.errstate(invalid="ignore"):
                low = numbers > self.lo if self.lo_open else numbers >= self.lo
                high = numbers < self.hi if self.hi_open else numbers <= self.hi
                return low & high & np.isfinite(numbers)
        if self.kind == "set":
            out = np.isin(strings, np.array(self.values, dtype=object))
            nums = [x for x in (_as_number(v) for v in self.values) if x is not None]
            if nums:
                out |= np.isin(numbers, np.array(nums, dtype=float))
            return out
        if self.kind == "mask":
            prefix, width = self.values[0], self.width
            return np.fromiter(
                (
                    _fits_mask(s, x, prefix, width)
                    for s, x in zip(strings.tolist(), numbers.tolist(), strict=True)
                ),
                dtype=bool,
                count=n,
            )
        value = self.values[0]
        out = strings == str(value).strip()
        num = _as_number(value)
        if num is not None:
            out |= numbers == num
        return out

    def key(self) -> tuple:
        """What the cell covers, as a tuple: equal for the same cell written differently
        (``[20-29]``, ``20-29``, ``[20, 29]``; ``{a,b}``, ``{b, a}``; ``*``, ``Person``).

        >>> parse_cell("[20-29]").key() == parse_cell("[20, 29]").key()
        True
        """
        if self.kind == "exact":
            value = self.values[0]
            number = _as_number(value)
            return ("exact", str(value).strip() if number is None else number)
        if self.kind == "any":
            return ("any",)
        if self.kind == "interval" and self.lo == self.hi:  # [25-25] is the value 25
            return ("exact", self.lo)
        return (self.kind, self.lo, self.hi, self.values, self.lo_open, self.hi_open, self.width)

    def __contains__(self, value) -> bool:
        strings = np.array([str(value).strip()], dtype=object)
        num = _as_number(value)
        numbers = np.array([np.nan if num is None else num])
        return bool(self.mask(strings, numbers)[0])


def _fits_mask(text: str, number: float, prefix: str, width: int) -> bool:
    """``text`` (or the integer ``number`` zero-padded to ``width``) fits the mask."""
    if len(text) == width and text.startswith(prefix):
        return True
    if math.isfinite(number) and number >= 0 and number.is_integer():
        padded = str(int(number)).zfill(width)
        return len(padded) == width and padded.startswith(prefix)
    return False


def _check_formats(formats) -> None:
    if not (formats is None or (isinstance(formats, str) and formats in FORMATS)):
        raise ReleaseError(
            f"formats must be 'auto', 'ours' or None (or a dict of them by column), "
            f"got {shorten(formats, 60)}"
        )


def _bound(text: str) -> float:
    low = text.lower().lstrip("+")
    if low in ("inf", "infinity", "\u221e"):
        return math.inf
    if low in ("-inf", "-infinity", "-\u221e"):
        return -math.inf
    return float(text)


def _interval(cell, column, lo: float, hi: float, lo_open=False, hi_open=False) -> Cell:
    """An interval cell, or a ``ReleaseError`` when it holds no number."""
    if math.isnan(lo) or math.isnan(hi) or lo == math.inf or hi == -math.inf:
        raise ReleaseError(f"{_where(column)} an interval with a bad bound {shorten(cell, 60)}")
    if lo > hi or (lo == hi and (lo_open or hi_open)):
        raise ReleaseError(
            f"{_where(column)} an empty interval {shorten(cell, 60)}: "
            f"lower bound {lo:g} is above upper bound {hi:g}"
            if lo > hi
            else f"{_where(column)} an empty interval {shorten(cell, 60)}"
        )
    return Cell("interval", cell, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open)


def _parse_foreign(cell, text: str, column) -> Cell | None:
    """The ARX and sdcMicro forms (``formats="auto"``); None if ``text`` is none of them."""
    if set(text) == {"*"}:
        return Cell("any", cell)
    if "," in text or ";" in text:
        m = _BRACKETS.match(text)
        if m:
            left, lo, hi, right = m.groups()
            return _interval(cell, column, _bound(lo), _bound(hi), left in "](", right in "[)")
        if text[:1] in "[]" or text[-1:] in "[]" or (text[:1] == "(" and text[-1:] == ")"):
            raise ReleaseError(
                f"{_where(column)} a malformed interval {shorten(cell, 60)}: expected "
                "[lo, hi], [lo, hi[, (lo, hi] or [lo-hi] with numbers lo <= hi"
            )
        return None
    m = _DASH.match(text)
    if m:
        lo, hi = float(m.group(1)), float(m.group(2))
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ReleaseError(
                f"{_where(column)} a range with an infinite bound {shorten(cell, 60)}"
            )
        return _interval(cell, column, lo, hi)
    m = _INEQUALITY.match(text)
    if m:
        op, x = m.group(1), float(m.group(2))
        if not math.isfinite(x):
            raise ReleaseError(f"{_where(column)} an infinite bound {shorten(cell, 60)}")
        if op in ("<", "<=", "\u2264"):
            return _interval(cell, column, -math.inf, x, hi_open=op == "<")
        return _interval(cell, column, x, math.inf, lo_open=op == ">")
    m = _MASK.match(text)
    if m and not text.startswith(("[", "{")):
        return Cell("mask", cell, values=(m.group(1),), width=len(text))
    return None


def parse_cell(
    cell, column: str | None = None, any_values: Iterable[str] = ("*",), formats="auto"
) -> Cell:
    """Parse one generalized cell; a malformed one is a ``ReleaseError`` naming it.

    ``formats`` is ``"auto"`` (our syntax and ARX/sdcMicro's, see the module docstring),
    ``"ours"`` (``[lo-hi]``, ``{a, b}`` and ``any_values`` only) or None (the cell is an
    exact value).

    >>> parse_cell("[21 - 25]")
    Cell(kind='interval', raw='[21 - 25]', lo=21.0, hi=25.0, values=(), lo_open=False, \
hi_open=False, width=None)
    >>> parse_cell("{b, a}").values
    ('a', 'b')
    >>> c = parse_cell("[20, 30[")
    >>> (c.lo, c.hi, c.hi_open), parse_cell("021**").kind, parse_cell("<30").hi
    ((20.0, 30.0, True), 'mask', 30.0)
    >>> parse_cell("20-29", formats=None).kind
    'exact'
    >>> parse_cell("[25-21]", column="age")
    Traceback (most recent call last):
    ...
    maxent_privacy.errors.ReleaseError: column 'age' has an empty interval '[25-21]': \
lower bound 25 is above upper bound 21
    """
    _check_formats(formats)
    anys = any_value_words(any_values)
    if not isinstance(cell, str):
        if _is_missing(cell):
            raise ReleaseError(f"{_where(column)} a missing generalized value")
        return Cell("exact", cell, values=(cell,))
    text = cell.strip()
    if formats is None:
        if not text:
            raise ReleaseError(f"{_where(column)} an empty value {shorten(cell, 60)}")
        return Cell("exact", cell, values=(text,))
    if text in anys:
        return Cell("any", cell)
    if formats == "auto" and _NUMBER.match(text):
        return Cell("exact", cell, values=(text,))
    if formats == "auto":
        found = _parse_foreign(cell, text, column)
        if found is not None:
            return found
    if text.startswith("[") or text.endswith("]"):
        m = _INTERVAL.match(text)
        if not m:
            raise ReleaseError(
                f"{_where(column)} a malformed interval {shorten(cell, 60)}: "
                "expected [lo-hi] with numbers lo <= hi"
            )
        lo, hi = float(m.group(1)), float(m.group(2))
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ReleaseError(
                f"{_where(column)} an interval with an infinite bound {shorten(cell, 60)}"
            )
        return _interval(cell, column, lo, hi)
    if text.startswith("{") or text.endswith("}"):
        if not (text.startswith("{") and text.endswith("}")):
            raise ReleaseError(
                f"{_where(column)} a malformed set {shorten(cell, 60)}: expected {{a, b, ...}}"
            )
        parts = [p.strip() for p in text[1:-1].split(",")]
        if any(not p for p in parts):
            raise ReleaseError(
                f"{_where(column)} a set with an empty member {shorten(cell, 60)}: "
                "expected {a, b, ...} with non-empty members"
            )
        return Cell("set", cell, values=tuple(sorted(set(parts))))
    if not text:
        raise ReleaseError(f"{_where(column)} an empty generalized value {shorten(cell, 60)}")
    return Cell("exact", cell, values=(text,))


def covers(cell, value, any_values: Iterable[str] = ("*",), formats="auto") -> bool:
    """Whether generalized ``cell`` covers the exact ``value`` (``value <= cell``).

    >>> covers("[21-25]", 25), covers("[21-25]", 26), covers("{a, b}", "c")
    (True, False, False)
    >>> covers("Person", "Female", any_values=("*", "Person"))
    True
    >>> covers("021**", 2139), covers("021**", "0213"), covers("<30", 30)
    (True, False, False)
    """
    parsed = (
        cell if isinstance(cell, Cell) else parse_cell(cell, any_values=any_values, formats=formats)
    )
    return value in parsed


def find_generalized(
    frame: pd.DataFrame, columns: Sequence, any_values: Iterable[str] = ("*",), formats="auto"
) -> dict:
    """Column -> its first generalized cell (one that is not a plain exact value), for
    each of ``columns`` that has one; a malformed cell is a ``ReleaseError``.

    ``formats``: one of :data:`FORMATS`, or a dict of them by column.

    >>> frame = pd.DataFrame({"age": ["44", "[44-47]"], "sex": ["M", "F"]})
    >>> find_generalized(frame, ["age", "sex"])
    {'age': '[44-47]'}
    """
    per_column = formats_by_column(formats, list(columns))
    anys = any_value_words(any_values)
    out = {}
    for col in columns:
        for raw in frame[col].drop_duplicates().tolist():
            if parse_cell(raw, col, anys, per_column[col]).kind != "exact":
                out[col] = raw
                break
    return out


def formats_by_column(formats, columns: list) -> dict:
    """``formats`` (one value, or a dict by column) as a dict over ``columns``."""
    if isinstance(formats, dict):
        unknown = [c for c in formats if c not in columns]
        if unknown:
            raise ReleaseError(
                f"formats names column {unknown[0]!r}, which is not a quasi-identifier "
                f"({', '.join(map(str, columns))})"
            )
        for f in formats.values():
            _check_formats(f)
        return {c: formats.get(c, "auto") for c in columns}
    _check_formats(formats)
    return dict.fromkeys(columns, formats)


def any_value_words(any_values) -> frozenset:
    if isinstance(any_values, str):
        any_values = (any_values,)
    out = set()
    for word in any_values:
        if not isinstance(word, str) or not word.strip():
            raise ReleaseError(f"any_values must be non-empty strings, got {word!r}")
        out.add(word.strip())
    return frozenset(out)


def _is_missing(value) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def value_arrays(uniques: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """``str(v).strip()`` and float (NaN if not a number) of each distinct value."""
    strings = np.array([str(v).strip() for v in uniques], dtype=object)
    numbers = np.array(
        [np.nan if (x := _as_number(v)) is None else x for v in uniques], dtype=float
    )
    return strings, numbers
