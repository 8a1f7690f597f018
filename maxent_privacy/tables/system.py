"""Published tables as linear rows on the unknown microdata contingency table.

The unknown is ``y``: how many records hold each *combination* of the attributes the
tables name (the product of their domains, coded in mixed radix, the last attribute
fastest). Every published cell is a row ``lower <= A y <= upper``: the combinations whose
values fall in the cell. :func:`build_system` reads the tables into a :class:`TableSystem`:
the domains, one :class:`TableRows` per table (listed cells and the unlisted 0s), the
statistics' rows, and the total.

>>> import pandas as pd
>>> from maxent_privacy import Tabulated
>>> a = Tabulated(pd.DataFrame({"a": [0, 1], "count": [2, 1]}), qi=["a"])
>>> b = Tabulated(pd.DataFrame({"b": ["u", "v"], "count": [1, 2]}), qi=["b"])
>>> s = build_system([a, b])
>>> s.attributes, s.n, s.total
(['a', 'b'], 4, 3.0)
>>> s.tables[1].A.toarray().tolist()        # b = u: combinations (0, u) and (1, u)
[[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._validation import shown
from ..errors import InconsistentTables, ReleaseError
from ..releases.cells import parse_cell, value_arrays
from ..releases.tabulated import Tabulated

__all__ = ["TableRows", "TableSystem", "build_system"]

#: combinations above this are refused (the unknown table would not fit in memory)
MAX_COMBINATIONS = 50_000_000


@dataclass
class TableRows:
    """One table's rows: ``lower <= A y <= upper`` per cell of the table.

    ``keys``: the table's cells (listed ones first, in the table's order, then the
    unlisted combinations of its values), one column per table column; ``listed``: True
    for a published cell; ``published`` its text ("0" for an unlisted one);
    ``suppressed``; ``row``: 1-based row in the table (0 for unlisted).
    """

    table: Tabulated
    A: sp.csr_array
    lower: np.ndarray
    upper: np.ndarray
    keys: pd.DataFrame
    listed: np.ndarray
    published: list
    suppressed: np.ndarray
    row: np.ndarray

    @cached_property
    def labels(self) -> list[str]:
        """How messages name each row (made once: every ``rows()`` reads them)."""
        return _labels(self)

    def index(self) -> pd.Index:
        """The cells as an index: the table's columns as levels (``"total"`` without)."""
        keys = self.keys
        if keys.shape[1] > 1:
            return pd.MultiIndex.from_frame(keys)
        if keys.shape[1]:
            return pd.Index(keys.iloc[:, 0], name=keys.columns[0])
        return pd.Index(["total"])


@dataclass
class TableSystem:
    """The domains, the combinations and every row the tables and statistics make."""

    attributes: list
    sa: str | None
    domain: dict
    tables: list
    total: float
    stat_eq: tuple = field(default=None)  # (A, b, labels): means
    stat_ub: tuple = field(default=None)  # (G, h, labels): medians
    #: columns whose values are the tables' generalized cells (no exact value shown)
    cell_columns: frozenset = frozenset()

    @property
    def sizes(self) -> np.ndarray:
        return np.array([len(self.domain[a]) for a in self.attributes], dtype=np.int64)

    @property
    def n(self) -> int:
        """Number of combinations."""
        return int(np.prod(self.sizes)) if self.attributes else 1

    @property
    def strides(self) -> np.ndarray:
        return _strides(self.sizes)

    def codes(self, attribute: str, which=None) -> np.ndarray:
        """Each combination's value index in ``attribute`` (of the combinations ``which``,
        all by default)."""
        k = self.attributes.index(attribute)
        z = np.arange(self.n, dtype=np.int64) if which is None else np.asarray(which)
        return (z // self.strides[k]) % self.sizes[k]

    def combinations(self, which=None) -> pd.DataFrame:
        """One row per combination (``which``, all by default), one column per attribute."""
        out = {}
        for a in self.attributes:
            values = np.empty(len(self.domain[a]), dtype=object)
            values[:] = list(self.domain[a])
            # the domain's values typed once, then taken (not a column of objects typed)
            out[a] = pd.Series(_typed(values)).array.take(self.codes(a, which))
        return pd.DataFrame(out)

    def index(self, which=None) -> pd.MultiIndex | pd.Index:
        """The combinations as an index named by the attributes."""
        frame = self.combinations(which)
        if len(self.attributes) == 1:
            return pd.Index(frame.iloc[:, 0], name=self.attributes[0])
        return pd.MultiIndex.from_frame(frame)


def _typed(values: np.ndarray) -> np.ndarray:
    """Object values as a numeric array when they are all numbers."""
    if len(values) and all(
        isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
        for v in values[: min(len(values), 1000)]
    ):
        try:
            return values.astype(float if any(isinstance(v, float) for v in values) else int)
        except (TypeError, ValueError):
            return values
    return values


def _labels(t: TableRows) -> list[str]:
    cols = t.table.columns
    out = []
    for i, key in enumerate(t.keys.itertuples(index=False)):
        cell = ", ".join(f"{c}={v}" for c, v in zip(cols, key, strict=True)) or "total"
        where = f"row {t.row[i]}" if t.listed[i] else "unlisted"
        out.append(f"{t.table.label} {where} ({cell}: {t.published[i]})")
    return out


# --------------------------------------------------------------------- domains
def _parsed(table: Tabulated, column: str) -> list:
    return [parse_cell(v, column) for v in table.keys[column].tolist()]


def _domains(tables: list, given: dict, attributes: list, cells: set) -> dict:
    """column -> list of values (see ``docs/tables.md``); the columns whose values are
    generalized cells are added to ``cells``."""
    out = {}
    for a in attributes:
        if a in given:
            values = list(dict.fromkeys(given[a]))
            if not values:
                raise ReleaseError(f"domains[{a!r}] is empty")
            out[a] = values
            continue
        exact, general = [], []
        for t in tables:
            if a in t.columns:
                for cell, raw in zip(_parsed(t, a), t.keys[a].tolist(), strict=True):
                    (exact if cell.kind == "exact" else general).append(raw)
        if exact:
            out[a] = _sorted(list(dict.fromkeys(exact)))
        elif general:
            named = [g for g in dict.fromkeys(general) if parse_cell(g, a).kind != "any"]
            if not named:
                raise ReleaseError(
                    f"column {a!r} is only ever '*' in the tables; give its values with "
                    f"domains={{{a!r}: [...]}}"
                )
            out[a] = named
            cells.add(a)
        else:
            raise ReleaseError(f"column {a!r} has no values; give them with domains=")
    return out


def _sorted(values: list) -> list:
    if all(isinstance(v, (int, float, np.integer, np.floating)) for v in values):
        return sorted(values)
    return sorted(values, key=lambda v: str(v))


# --------------------------------------------------------------------- one table
def _column_map(table: Tabulated, column: str, values: list, cell_columns=frozenset()):
    """For one column of a table: the table's own values (labels), each domain value's
    label index (-1: no cell of the table covers it), and each listed cell's label."""
    cells = _parsed(table, column)
    raws = table.keys[column].tolist()
    general = any(c.kind != "exact" for c in cells)
    strings, numbers = value_arrays(values)
    only_cells = column in cell_columns  # the domain is the tables' cells themselves
    if not general:
        lookup = {}
        for i, (s, x) in enumerate(zip(strings.tolist(), numbers.tolist(), strict=True)):
            lookup.setdefault(("s", s), i)
            if not np.isnan(x):
                lookup.setdefault(("x", x), i)
        label_of = np.empty(len(cells), dtype=np.int64)
        for r, (cell, raw) in enumerate(zip(cells, raws, strict=True)):
            key = cell.key()
            i = lookup.get(("x", key[1])) if isinstance(key[1], float) else None
            i = lookup.get(("s", str(raw).strip()), i) if i is None else i
            if i is None:
                raise ReleaseError(
                    f"{table.label}, row {r + 1}, column {column!r}: {shown(raw)} is not in "
                    f"the column's domain"
                )
            label_of[r] = i
        return list(values), np.arange(len(values)), label_of
    distinct = list(dict.fromkeys(raws))
    label_index = {raw: k for k, raw in enumerate(distinct)}
    of_value = np.full(len(values), -1, dtype=np.int64)
    for k, raw in enumerate(distinct):
        cell = parse_cell(raw, column)
        if only_cells:  # the domain is the cells themselves
            mask = np.array([cell.kind == "any" or str(v) == str(raw) for v in values])
        else:
            mask = cell.mask(strings, numbers)
        clash = mask & (of_value >= 0)
        if clash.any():
            other = distinct[of_value[np.flatnonzero(clash)[0]]]
            raise ReleaseError(
                f"{table.label}, column {column!r}: cells {shown(other)} and {shown(raw)} "
                f"overlap (both cover {shown(values[np.flatnonzero(clash)[0]])}); publish "
                "totals and overlapping cells as tables of their own"
            )
        of_value[mask] = k
        if not mask.any():
            row = raws.index(raw) + 1
            some = ", ".join(map(str, values[:5])) + (", ..." if len(values) > 5 else "")
            raise ReleaseError(
                f"{table.label}, row {row}, column {column!r}: {shown(raw)} covers no value "
                f"of the column's domain ({some}: the exact values the tables show); give "
                f"them all with domains={{{column!r}: [...]}}"
            )
    label_of = np.array([label_index[raw] for raw in raws], dtype=np.int64)
    return distinct, of_value, label_of


def _table_rows(table: Tabulated, system: TableSystem) -> TableRows:
    """The rows of one table: its cells (listed, then unlisted) over the combinations."""
    labels, maps, label_ofs, sizes = [], [], [], []
    for c in table.columns:
        own, of_value, label_of = _column_map(table, c, system.domain[c], system.cell_columns)
        labels.append(own)
        maps.append(of_value)
        label_ofs.append(label_of)
        sizes.append(len(own))
    tstrides = _strides(np.array(sizes, dtype=np.int64))
    n_t = int(np.prod(sizes)) if sizes else 1
    listed_codes = (
        np.ravel_multi_index(label_ofs, sizes) if sizes else np.zeros(len(table), dtype=np.int64)
    )
    tcode = np.zeros(system.n, dtype=np.int64)
    covered = np.ones(system.n, dtype=bool)
    for k, c in enumerate(table.columns):
        lab = maps[k][system.codes(c)]
        covered &= lab >= 0
        tcode += np.maximum(lab, 0) * tstrides[k]
    stat = table.stat is not None
    order = (
        listed_codes
        if stat
        else np.concatenate(
            [listed_codes, np.setdiff1d(np.arange(n_t, dtype=np.int64), listed_codes)]
        )
    )
    position = np.full(n_t, -1, dtype=np.int64)
    position[order] = np.arange(len(order))
    cols = np.flatnonzero(covered & (position[tcode] >= 0))
    A = sp.csr_array(
        (np.ones(len(cols)), (position[tcode[cols]], cols)), shape=(len(order), system.n)
    )
    n_listed, n_unlisted = len(table), len(order) - len(table)
    zero_lo, zero_hi = (0.0, 0.0) if table.rounding is None else (0.0, table.rounding - 1.0)
    keys = {}
    digits = np.unravel_index(order, sizes) if sizes else ()
    for k, c in enumerate(table.columns):
        own = np.empty(len(labels[k]), dtype=object)
        own[:] = labels[k]
        keys[c] = _typed(own[digits[k]])
    return TableRows(
        table=table,
        A=A,
        lower=np.concatenate([table.lower, np.full(n_unlisted, zero_lo)]),
        upper=np.concatenate([table.upper, np.full(n_unlisted, zero_hi)]),
        keys=pd.DataFrame(keys, columns=table.columns, index=pd.RangeIndex(len(order))),
        listed=np.arange(len(order)) < n_listed,
        published=list(table.published) + ["0"] * n_unlisted,
        suppressed=np.concatenate([table.suppressed, np.zeros(n_unlisted, dtype=bool)]),
        row=np.concatenate([np.arange(1, n_listed + 1), np.zeros(n_unlisted, dtype=np.int64)]),
    )


def _strides(sizes: np.ndarray) -> np.ndarray:
    """Mixed-radix place values, the last attribute fastest (as ``np.ravel_multi_index``)."""
    if not len(sizes):
        return np.ones(0, dtype=np.int64)
    return np.append(np.cumprod(sizes[:0:-1])[::-1], 1).astype(np.int64)


def _stat_rows(t: TableRows, system: TableSystem):
    """The rows of a table of means or medians: (matrix, right side, labels). Means:
    ``sum (v - m) y == 0``, a row per cell; medians: three rows ``<=`` per cell (at most
    (n-1)/2 below, at most (n-1)/2 above, one at the median)."""
    table = t.table
    of = table.of
    values = np.asarray(pd.to_numeric(pd.Series(system.domain[of]), errors="coerce"), float)
    if np.isnan(values).any():
        bad = system.domain[of][int(np.flatnonzero(np.isnan(values))[0])]
        raise ReleaseError(
            f"{table.label}: the {table.stat} of {of!r} needs numbers, and {shown(bad)} is not one"
        )
    v = values[system.codes(of)]
    cells = np.flatnonzero(~table.suppressed[: len(table)])
    A = sp.csr_array(sp.csr_array(t.A)[cells])  # a statistics table lists every cell
    m = np.repeat(table.lower[cells], np.diff(A.indptr))  # each entry's published value
    at = v[A.indices]

    def rows_of(data):
        return sp.csr_array((data, A.indices, A.indptr), shape=A.shape)

    names = [t.labels[r] for r in cells]
    if table.stat == "mean":
        return rows_of(at - m), np.zeros(len(cells)), names
    present = np.isclose(at, m)
    entry_row = np.repeat(np.arange(len(cells)), np.diff(A.indptr))
    lacking = np.flatnonzero(np.bincount(entry_row, weights=present, minlength=len(cells)) == 0)
    if len(lacking):
        r = int(cells[lacking[0]])
        raise ReleaseError(
            f"{table.label}, row {r + 1}, column {of!r}: the median {table.lower[r]:g} is not "
            f"a value of {of!r}'s domain"
        )
    parts = {
        "below": 2.0 * (at < m - 1e-9) - 1.0,
        "above": 2.0 * (at > m + 1e-9) - 1.0,
        "present": -1.0 * present,
    }
    stacked = sp.vstack([rows_of(c) for c in parts.values()], format="csr")
    interleaved = np.arange(3 * len(cells)).reshape(3, -1).T.ravel()  # a cell's 3 together
    labels = [f"{name} [{part}]" for name in names for part in parts]
    return sp.csr_array(stacked[interleaved]), np.full(3 * len(cells), -1.0), labels


def _attributes(tables: list, domains: dict) -> tuple[list, str | None]:
    """The QI (in order of first appearance, ``of`` attributes and ``domains`` too) and
    the one sensitive attribute."""
    sas = [t.sa for t in tables if t.sa is not None]
    if len(set(sas)) > 1:
        raise ReleaseError(
            f"the tables name two sensitive attributes, {sas[0]!r} and "
            f"{next(s for s in sas if s != sas[0])!r}; a model has one"
        )
    sa = sas[0] if sas else None
    qi = []
    for t in tables:
        for c in t.qi + ([t.of] if t.of else []):
            if c not in qi and c != sa:
                qi.append(c)
    for c in domains:
        if c not in qi and c != sa:
            qi.append(c)
    return qi, sa


def build_system(tables, domains=None, total=None) -> TableSystem:
    """Read ``tables`` (a list of :class:`Tabulated`) into a :class:`TableSystem`.

    ``domains``: column -> values, for columns whose values the tables do not show (or
    show only as generalized cells); ``total``: the number of records, when no table
    gives it (every table rounded or with a suppressed cell).
    """
    tables = list(tables)
    for k, t in enumerate(tables, start=1):
        if not isinstance(t, Tabulated):
            raise ReleaseError(f"table {k} is a {type(t).__name__}, not a Tabulated")
        t.at(k)
    domains = dict(domains or {})
    qi, sa = _attributes(tables, domains)
    attributes = qi + ([sa] if sa is not None else [])
    if not attributes:
        raise ReleaseError("the tables name no column: a model needs at least one attribute")
    cell_columns: set = set()
    domain = _domains(tables, domains, attributes, cell_columns)
    n = int(np.prod([len(domain[a]) for a in attributes], dtype=float))
    if n > MAX_COMBINATIONS:
        sizes = ", ".join(f"{a}: {len(domain[a])}" for a in attributes)
        raise ReleaseError(
            f"the tables span {n:,} combinations ({sizes}); at most "
            f"{MAX_COMBINATIONS:,} fit (publish coarser cells or give smaller domains=)"
        )
    system = TableSystem(attributes, sa, domain, [], 0.0, cell_columns=frozenset(cell_columns))
    counts = [t for t in tables if t.stat is None]
    system.total = _total(counts, total)
    system.tables = [_table_rows(t, system) for t in counts]
    stats = [_table_rows(t, system) for t in tables if t.stat is not None]
    eq, ub = [], []
    for t in stats:
        (eq if t.table.stat == "mean" else ub).append(_stat_rows(t, system))
    system.stat_eq = _stacked(eq, system.n)
    system.stat_ub = _stacked(ub, system.n)
    return system


def _stacked(parts: list, n: int) -> tuple:
    if not parts:
        return sp.csr_array((0, n)), np.zeros(0), []
    return (
        sp.vstack([p[0] for p in parts], format="csr"),
        np.concatenate([p[1] for p in parts]),
        [label for p in parts for label in p[2]],
    )


def _total(tables: list, total) -> float:
    """The number of records: from the exact tables (which must agree), or ``total``."""
    known = [(t, t.total) for t in tables if t.total is not None]
    if total is not None:
        if (
            isinstance(total, bool)
            or not isinstance(total, (int, float, np.integer))
            or (total < 0 or total != int(total))
        ):
            raise ReleaseError(f"total must be a whole number >= 0, got {shown(total)}")
        known.insert(0, (None, float(total)))
    if not known:
        raise ReleaseError(
            "the number of records is not known: every table is rounded or has a "
            "suppressed or interval cell; give it with total="
        )
    first, value = known[0]
    for t, other in known[1:]:
        if other != value:
            where = "total=" if first is None else first.label
            raise InconsistentTables(
                f"the tables disagree on the number of records: {where} counts {value:g}, "
                f"{t.label} counts {other:g} ({abs(other - value):g} apart)"
            )
    return float(value)
