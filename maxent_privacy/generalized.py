"""Generalized releases: k-anonymity-style tables whose QI cells hold generalized values.

A :class:`Generalized` release is what a k-anonymizing publisher (Samarati and Sweeney;
Mondrian; Byun et al. 2008) puts out: one row per record, the sensitive value exact, and
every quasi-identifier (QI) cell replaced by a *generalized value*, read as the set of
exact values it stands for. Rows sharing a group id form an equivalence class.

Cell syntax (parsed, never evaluated):

* ``[21-25]`` or ``[21 - 25]``: the numbers from 21 to 25, bounds included;
* ``{a, b}``: any of the listed values (``{21, 22}`` also matches the numbers);
* ``*``, or any word given in ``any_values`` (Byun et al. write ``Person`` for "male or
  female"): any value at all;
* anything else: exactly that value (``"21"`` matches the number 21).

>>> import pandas as pd
>>> from maxent_privacy.generalized import Generalized, covers
>>> covers("[21 - 25]", 23), covers("{Male, Female}", "Male"), covers("*", 7)
(True, True, True)
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

from .checks import check_cells, check_columns, check_frame, check_label, check_unique, shorten
from .data import ReleaseBase, validate_release
from .errors import ReleaseError

__all__ = ["Cell", "Generalized", "covers", "parse_cell"]

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER = re.compile(rf"^\s*{_NUM}\s*$")
_INTERVAL = re.compile(rf"^\[\s*({_NUM})\s*[-\u2013]\s*({_NUM})\s*\]$")


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

    ``kind`` is ``"any"``, ``"interval"`` (``lo <= x <= hi``), ``"set"`` (``values``, as
    strings) or ``"exact"`` (``values[0]``, kept as given); ``raw`` is the cell as
    published.
    """

    kind: str
    raw: object
    lo: float | None = None
    hi: float | None = None
    values: tuple = ()

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
                return (numbers >= self.lo) & (numbers <= self.hi)
        if self.kind == "set":
            out = np.isin(strings, np.array(self.values, dtype=object))
            nums = [x for x in (_as_number(v) for v in self.values) if x is not None]
            if nums:
                out |= np.isin(numbers, np.array(nums, dtype=float))
            return out
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


def parse_cell(cell, column: str | None = None, any_values: Iterable[str] = ("*",)) -> Cell:
    """Parse one generalized cell; a malformed one is a ``ReleaseError`` naming it.

    >>> parse_cell("[21 - 25]")
    Cell(kind='interval', raw='[21 - 25]', lo=21.0, hi=25.0, values=())
    >>> parse_cell("{b, a}").values
    ('a', 'b')
    >>> parse_cell("[25-21]", column="age")
    Traceback (most recent call last):
    ...
    maxent_privacy.errors.ReleaseError: column 'age' has an empty interval '[25-21]': \
lower bound 25 is above upper bound 21
    """
    anys = _any_values(any_values)
    if not isinstance(cell, str):
        if _is_missing(cell):
            raise ReleaseError(f"{_where(column)} a missing generalized value")
        return Cell("exact", cell, values=(cell,))
    text = cell.strip()
    if text in anys:
        return Cell("any", cell)
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
        if lo > hi:
            raise ReleaseError(
                f"{_where(column)} an empty interval {shorten(cell, 60)}: "
                f"lower bound {lo:g} is above upper bound {hi:g}"
            )
        return Cell("interval", cell, lo=lo, hi=hi)
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


def covers(cell, value, any_values: Iterable[str] = ("*",)) -> bool:
    """Whether generalized ``cell`` covers the exact ``value`` (``value <= cell``).

    >>> covers("[21-25]", 25), covers("[21-25]", 26), covers("{a, b}", "c")
    (True, False, False)
    >>> covers("Person", "Female", any_values=("*", "Person"))
    True
    """
    parsed = cell if isinstance(cell, Cell) else parse_cell(cell, any_values=any_values)
    return value in parsed


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
    ):
        data, qi = validate_release(frame, qi, sa, group, person)
        anys = _any_values(any_values)
        self._cells: dict[str, dict] = {}
        for col in qi:
            self._cells[col] = {
                raw: parse_cell(raw, column=col, any_values=anys)
                for raw in data[col].drop_duplicates().tolist()
            }
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

        >>> from maxent_privacy.datasets_byun import byun2008_tables
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
        ids = _check_population(population, self.qi, id_column)
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


def _check_population(population: pd.DataFrame, qi: Sequence[str], id_column: str) -> np.ndarray:
    """Validate a population table; return its person ids as an object array."""
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
    for col in [id_column, *qi]:
        missing = population[col].isna().to_numpy()
        if missing.any():
            row = population.index[np.argmax(missing)]
            row = row.item() if hasattr(row, "item") else row
            raise ReleaseError(
                f"population column {col!r} has a missing value (row {row!r}); "
                "drop or fill such rows first"
            )
    ids = population[id_column]
    if ids.duplicated().any():
        dup = ids[ids.duplicated()].tolist()[0]
        raise ReleaseError(
            f"person id {dup!r} occurs more than once in population column {id_column!r}"
        )
    return np.asarray(ids.tolist(), dtype=object)
