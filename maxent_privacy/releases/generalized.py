"""Generalized releases: k-anonymity-style tables whose QI cells hold generalized values.

A :class:`Generalized` release is what a k-anonymizing publisher (Samarati and Sweeney;
Mondrian; Byun et al. 2008) puts out: one row per record, the sensitive value exact, and
every quasi-identifier (QI) cell replaced by a *generalized value*, read as the set of
exact values it stands for. Rows sharing a group id form an equivalence class.

Cell syntax (parsed, never evaluated). Our own (``formats="ours"``):

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
reads every cell as an exact value. ``Generalized(..., formats={"zip": None})`` chooses
per column (columns not named: ``"auto"``); ``release.generalized`` lists the columns
where some cell is not a plain exact value.
>>> import pandas as pd
>>> from maxent_privacy.releases.generalized import Generalized, covers
>>> covers("[21 - 25]", 23), covers("{Male, Female}", "Male"), covers("*", 7)
(True, True, True)
>>> covers("021**", "02139"), covers("[20, 30[", 30), covers(">=60", 75), covers("20-29", 29)
(True, False, True, True)
>>> frame = pd.DataFrame({"age": ["[21-25]", "[21-25]", "[50-60]", "[50-60]"],
...                       "gender": ["Male", "Male", "Person", "Person"],
...                       "diagnosis": ["Asthma", "Flu", "Alzheimer", "Diabetes"],
...                       "group": [1, 1, 2, 2]})
>>> release = Generalized(frame, qi=["age", "gender"], sa="diagnosis", group="group",
...                       any_values=("*", "Person"))
>>> release.n_records, release.n_groups
(4, 2)
>>> people = pd.DataFrame({"name": ["Tom", "Eve"], "age": [21, 57],
...                        "gender": ["Male", "Female"]})
>>> release.compatible(people, "name").values.tolist()
[['Tom', 1], ['Eve', 2]]
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import ReleaseError
from .bucketized import ReleaseBase, validate_release
from .checks import (
    check_cells,
    check_columns,
    check_frame,
    check_label,
    check_missing,
    check_unique,
    shorten,
)

__all__ = [
    "FORMATS",
    "Cell",
    "Generalized",
    "check_population",
    "covers",
    "find_generalized",
    "parse_cell",
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
    anys = _any_values(any_values)
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

    ``formats`` as in :class:`Generalized` (a value or a dict by column).

    >>> frame = pd.DataFrame({"age": ["44", "[44-47]"], "sex": ["M", "F"]})
    >>> find_generalized(frame, ["age", "sex"])
    {'age': '[44-47]'}
    """
    per_column = _formats_by_column(formats, list(columns))
    anys = _any_values(any_values)
    out = {}
    for col in columns:
        for raw in frame[col].drop_duplicates().tolist():
            if parse_cell(raw, col, anys, per_column[col]).kind != "exact":
                out[col] = raw
                break
    return out


def _formats_by_column(formats, columns: list) -> dict:
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


def _any_values(any_values) -> frozenset:
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


def _value_arrays(uniques: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """``str(v).strip()`` and float (NaN if not a number) of each distinct value."""
    strings = np.array([str(v).strip() for v in uniques], dtype=object)
    numbers = np.array(
        [np.nan if (x := _as_number(v)) is None else x for v in uniques], dtype=float
    )
    return strings, numbers


class Generalized(ReleaseBase):
    """One generalized release, one row per record.

    Parameters
    ----------
    frame : DataFrame with the QI columns (generalized cells), the sensitive column
        (exact values) and the group column (equivalence class id).
    qi : names of the quasi-identifier columns.
    sa : name of the sensitive column.
    group : name of the group (equivalence class) column.
    person : optional pseudonym column (one distinct id per row), e.g. for tests that
        know the truth; the attacks never read it.
    any_values : words that stand for "any value" in a QI cell (``*`` by default).
    formats : how QI cells are read: ``"auto"`` (default: our syntax and the ARX and
        sdcMicro forms ``021**``, ``20-29``, ``[20, 30[``, ``<30``, ``>=60``, ``*``),
        ``"ours"`` (``[lo-hi]``, ``{a, b}`` and ``any_values`` only) or None (every cell
        an exact value); or a dict by column (columns not named: ``"auto"``). See the
        module docstring.

    Attributes ``formats`` (the format of each QI column) and ``generalized`` (the QI
    columns where some cell is not a plain exact value) say how the cells were read.

    Rows with a missing value, duplicate column roles or names, duplicate person ids,
    cells that are not single values (lists, tuples, ...) and malformed cells are errors
    naming the column and value. The rows of one group usually share
    their QI cells (an equivalence class in the strict sense), but need not: each row is
    matched against the population with its own cells, so an Anatomy-style release with
    exact QI values and bucket ids is a valid ``Generalized`` release too.
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        qi: Sequence[str],
        sa: str,
        group: str,
        person: str | None = None,
        any_values: Iterable[str] = ("*",),
        formats="auto",
    ):
        data, qi = validate_release(frame, qi, sa, group, person)
        anys = _any_values(any_values)
        self.formats = _formats_by_column(formats, qi)
        self._cells: dict[str, dict] = {}
        for col in qi:
            self._cells[col] = {
                raw: parse_cell(raw, column=col, any_values=anys, formats=self.formats[col])
                for raw in data[col].drop_duplicates().tolist()
            }
        self.generalized = [
            col for col in qi if any(c.kind != "exact" for c in self._cells[col].values())
        ]
        self.frame = data
        self.qi = qi
        self.sa = sa
        self.group = group
        self.person = person
        self.any_values = tuple(sorted(anys))
        self._type_cache: tuple[list[tuple], np.ndarray] | None = None

    def cell(self, column: str, raw) -> Cell:
        """The parsed form of a cell ``raw`` that occurs in QI ``column``."""
        return self._cells[column][raw]

    # -- equivalence classes ----------------------------------------------------
    def classes(self) -> pd.DataFrame:
        """One row per group: its size, its QI cells and its multiset of sensitive values.

        A QI column holds the group's cell, or a tuple of its distinct cells when the
        group's rows do not share one. The sensitive column holds the sorted list of the
        group's values (with repeats).

        >>> from maxent_privacy.datasets.byun import byun2008_tables
        >>> byun2008_tables()["figure2"].classes().to_dict("index")
        {1: {'size': 2, 'age': '[21 - 25]', 'gender': 'Male', 'diagnosis': ['Asthma', 'Flu']}, \
2: {'size': 2, 'age': '[50 - 60]', 'gender': 'Person', 'diagnosis': ['Alzheimer', 'Diabetes']}}
        """
        g = self.frame.groupby(self.group, sort=True)
        out = pd.DataFrame({"size": g.size()})

        def cells(series: pd.Series):
            distinct = list(dict.fromkeys(series.tolist()))
            return distinct[0] if len(distinct) == 1 else tuple(sorted(distinct, key=str))

        for col in self.qi:
            out[col] = g[col].agg(cells)
        out[self.sa] = g[self.sa].agg(lambda s: sorted(s.tolist(), key=str))
        return out

    # -- matching a population --------------------------------------------------
    def _types(self) -> tuple[list[tuple], np.ndarray]:
        """Distinct (group, QI cells) tuples and each row's tuple number (cached)."""
        if self._type_cache is None:
            columns = [self.frame[col].tolist() for col in [self.group, *self.qi]]
            index: dict = {}
            row_type = np.fromiter(
                (index.setdefault(key, len(index)) for key in zip(*columns, strict=True)),
                dtype=np.int64,
                count=len(self.frame),
            )
            self._type_cache = (list(index), row_type)
        return self._type_cache

    def match(
        self, population: pd.DataFrame, id_column: str
    ) -> tuple[np.ndarray, list[tuple], np.ndarray, np.ndarray, np.ndarray]:
        """Match a population against the row types.

        Returns the person ids (population order), the types (tuples of group and QI
        cells), each row's type number, and the matching pairs as two aligned arrays
        (person position, type).
        """
        ids = check_population(population, self.qi, id_column)
        types, row_type = self._types()
        n = len(population)
        allowed: dict[str, dict] = {}
        codes_of: dict[str, np.ndarray] = {}
        people_of: dict[str, list[np.ndarray]] = {}
        count_of: dict[str, np.ndarray] = {}
        for col in self.qi:
            codes, uniques = pd.factorize(population[col], sort=False)
            uniques = list(uniques)
            strings, numbers = _value_arrays(uniques)
            allowed[col] = {
                raw: cell.mask(strings, numbers) for raw, cell in self._cells[col].items()
            }
            order = np.argsort(codes, kind="stable")
            counts = np.bincount(codes, minlength=len(uniques))
            people_of[col] = np.split(order, np.cumsum(counts)[:-1])
            count_of[col] = counts
            codes_of[col] = codes
        persons: list[np.ndarray] = []
        kinds: list[np.ndarray] = []
        for t, key in enumerate(types):
            masks = [allowed[col][key[j + 1]] for j, col in enumerate(self.qi)]
            sizes = [int(count_of[col][m].sum()) for col, m in zip(self.qi, masks, strict=True)]
            best = int(np.argmin(sizes))
            if sizes[best] == 0:
                continue
            if sizes[best] == n:
                idx = np.arange(n)
            else:
                col = self.qi[best]
                idx = np.concatenate([people_of[col][c] for c in np.flatnonzero(masks[best])])
            for j, col in enumerate(self.qi):
                if j != best and len(idx):
                    idx = idx[masks[j][codes_of[col][idx]]]
            if len(idx):
                persons.append(np.sort(idx))
                kinds.append(np.full(len(idx), t))
        if persons:
            person_pos = np.concatenate(persons)
            type_no = np.concatenate(kinds)
        else:
            person_pos = np.zeros(0, dtype=np.int64)
            type_no = np.zeros(0, dtype=np.int64)
        return ids, types, row_type, person_pos, type_no

    def check_covered(self, people: pd.DataFrame, id_column: str, where: str = "") -> None:
        """Check that each row's cells cover its person's exact QI; else a ``ReleaseError``
        naming the person, the column, the value and the cell.

        For a release with a ``person`` column: ``people`` holds the person ids
        (``id_column``) and their exact QI (a population table, or another release's
        exact values); rows whose person is not in it are not checked. ``where`` starts
        the message (``"release 2: "``).

        >>> frame = pd.DataFrame({"pid": ["a", "b"], "age": ["20-29", "30-39"],
        ...                       "d": ["Flu", "HIV"], "g": [1, 1]})
        >>> release = Generalized(frame, ["age"], "d", "g", person="pid")
        >>> release.check_covered(pd.DataFrame({"pid": ["a", "b"], "age": [25, 41]}), "pid")
        Traceback (most recent call last):
        ...
        maxent_privacy.errors.ReleaseError: person 'b' has age 41, which their cell '30-39' ...
        """
        if self.person is None:
            raise ReleaseError("check_covered() needs a release with a person column")
        exact = people.drop_duplicates(id_column).set_index(id_column)
        rows = self.frame[self.frame[self.person].isin(exact.index)]
        pids = rows[self.person].to_numpy()
        for col in self.qi:
            values = exact[col].reindex(pids).tolist()
            codes, uniques = pd.factorize(pd.Series(values, dtype=object), sort=False)
            strings, numbers = _value_arrays(list(uniques))
            cell_codes, cell_raws = pd.factorize(rows[col], sort=False)
            ok = np.ones(len(rows), dtype=bool)
            for k, raw in enumerate(cell_raws):
                sel = cell_codes == k
                ok[sel] = self._cells[col][raw].mask(strings, numbers)[codes[sel]]
            if not ok.all():
                i = int(np.argmax(~ok))
                raise ReleaseError(
                    f"{where}person {pids[i]!r} has {col} {values[i]!r}, which their cell "
                    f"{rows[col].iloc[i]!r} in column {col!r} does not cover"
                )

    def unfit_reason(self, values: dict) -> str:
        """Why exact QI ``values`` (column -> value) fit no row: a column none of whose
        cells covers its value, else the combination."""
        for col in self.qi:
            strings, numbers = _value_arrays([values[col]])
            if not any(c.mask(strings, numbers)[0] for c in self._cells[col].values()):
                cells = ", ".join(map(repr, list(self._cells[col])[:3]))
                more = ", ..." if len(self._cells[col]) > 3 else ""
                return (
                    f"no cell of column {col!r} covers {col} {values[col]!r} (cells: {cells}{more})"
                )
        shown = ", ".join(f"{c}={values[c]!r}" for c in self.qi)
        return f"no row's cells cover {shown} together"

    def compatible(self, population: pd.DataFrame, id_column: str) -> pd.DataFrame:
        """The (person, group) pairs such that one of the group's rows covers the person.

        ``population`` has the person id column and the exact values of every QI column
        (further columns are ignored). A person matches a row when each of the row's QI
        cells covers the person's value; the result lists each matching (person, group)
        pair once, in population order and then in order of the group's first row.
        The work is vectorized: one boolean mask per distinct cell over the distinct
        values of its column, then per distinct row (group and cells) an index join.
        """
        ids, types, _, person_pos, type_no = self.match(population, id_column)
        group_codes, group_labels = pd.factorize(
            pd.Series([key[0] for key in types], dtype=self.frame[self.group].dtype), sort=False
        )
        pairs = pd.DataFrame({"p": person_pos, "g": group_codes[type_no]}).drop_duplicates()
        pairs = pairs.sort_values(["p", "g"], kind="stable")
        return pd.DataFrame(
            {
                id_column: ids[pairs["p"].to_numpy()],
                self.group: pd.Index(group_labels).take(pairs["g"].to_numpy()),
            }
        )

    def __repr__(self) -> str:
        return (
            f"Generalized({self.n_records} records, {self.n_groups} groups, qi={self.qi}, "
            f"sa={self.sa!r}, group={self.group!r}"
            + (f", person={self.person!r}" if self.person else "")
            + ")"
        )


def check_population(population: pd.DataFrame, qi: Sequence[str], id_column: str) -> np.ndarray:
    """Validate a population table (person id column ``id_column`` and the exact values
    of every QI column); return its person ids as an object array."""
    check_frame(population, "a population")
    check_label(id_column, "id_column")
    check_columns(population, [id_column], "person id")
    check_columns(population, list(qi), "quasi-identifier")
    check_unique(population, [id_column, *qi])
    check_cells(
        population,
        [id_column, *qi],
        ["population person id"] + ["population quasi-identifier"] * len(qi),
    )
    check_missing(population, [id_column, *qi], ["population "] * (len(qi) + 1))
    ids = population[id_column]
    if ids.duplicated().any():
        dup = ids[ids.duplicated()].tolist()[0]
        raise ReleaseError(
            f"person id {dup!r} occurs more than once in population column {id_column!r}"
        )
    return np.asarray(ids.tolist(), dtype=object)
