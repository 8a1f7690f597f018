"""Counts tables of known people: a table read as a generalized release of a population.

When the adversary holds a register of the people's QI (a population), a counts table
with the sensitive variable says, for each of its rows (a QI cell), how many of the
people in that cell hold each value: the published multiset of a group whose people are
those of the population that the cell covers. That is a
:class:`~maxent_privacy.releases.generalized.Generalized` release (Wang et al.'s
placements; QI the table does not name are ``*``), so everything person-level works
unchanged: posteriors, ``bounds(by="person", exact=True)``, the risk table, the report,
pooling with other releases of the same people.

Every count must be exact here (suppressed, rounded or interval cells of a population's
tables are refused, in one line); a table without the sensitive variable only checks
that it counts the population's people as the register does.

>>> import pandas as pd
>>> from maxent_privacy import Tabulated
>>> people = pd.DataFrame({"sex": ["F", "F", "M"]}, index=pd.Index(["a", "b", "c"],
...                       name="id"))
>>> t = Tabulated(pd.DataFrame({"sex": ["F", "F", "M"], "d": ["flu", "ok", "ok"],
...                             "count": [1, 1, 1]}), qi=["sex"], sa="d")
>>> r = people_release(t, ["sex"], people)
>>> r.frame.sort_values("d")[["sex", "d"]].values.tolist()
[['F', 'flu'], ['F', 'ok'], ['M', 'ok']]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InconsistentTables, ReleaseError
from .cells import parse_cell, value_arrays
from .generalized import Generalized
from .tabulated import Tabulated

__all__ = ["people_release", "split_tables"]


def split_tables(releases: list, populations: list) -> tuple[list, list, list]:
    """``(releases, populations, tables)``: the tables of ``releases`` read as releases of
    the population (the first population given beside any table), the rest unchanged."""
    tables = [r for r in releases if isinstance(r, Tabulated)]
    if not tables:
        return releases, populations, []
    given = [p for r, p in zip(releases, populations, strict=True)
             if isinstance(r, Tabulated) and p is not None]  # fmt: skip
    if not given:
        raise ReleaseError(
            "tables of known people need their population (populations=[...] beside the "
            "tables); without one, give only tables: the model then rebuilds the records"
        )
    population = given[0]
    for t in tables:
        t.at(next(k for k, r in enumerate(releases, start=1) if r is t))
    qi = _qi(releases) or [str(c) for c in population.columns]  # no table names a QI
    out_r, out_p = [], []
    for r, p in zip(releases, populations, strict=True):
        if not isinstance(r, Tabulated):
            out_r.append(r)
            out_p.append(p)
        elif r.sa is None:
            _check_counts(r, population)
        else:
            out_r.append(people_release(r, qi, population))
            out_p.append(population)
    if not out_r:
        raise ReleaseError("no table names the sensitive attribute: nothing to estimate")
    return out_r, out_p, tables


def _qi(releases: list) -> list:
    qi = []
    for r in releases:
        for c in r.qi:
            if c not in qi:
                qi.append(c)
    return qi


def _exact(table: Tabulated) -> None:
    bad = np.flatnonzero(~table.exact_rows)
    if table.rounding is not None or len(bad):
        row = int(bad[0]) + 1 if len(bad) else 1
        raise ReleaseError(
            f"{table.label}, row {row}: with a population, every count must be exact "
            "(suppressed, rounded and interval counts are audited without one)"
        )
    if table.stat is not None:
        raise ReleaseError(f"{table.label}: means and medians need the model without people")


def _covered(table: Tabulated, population: pd.DataFrame) -> np.ndarray:
    """Per person, the table row (among the table's distinct QI cells) covering them
    (-1: none), and the QI cells as a frame."""
    if not table.qi:  # a table of the sensitive value alone: one cell, everyone
        return np.zeros(len(population), dtype=np.int64), pd.DataFrame(index=range(1))
    keys = table.keys[table.qi].drop_duplicates().reset_index(drop=True)
    row = np.full(len(population), -1, dtype=np.int64)
    hits = np.ones((len(keys), len(population)), dtype=bool)
    for c in table.qi:
        if c not in population.columns:
            raise ReleaseError(f"{table.label}: column {c!r} is not in the population")
        values = population[c].tolist()
        uniq = list(dict.fromkeys(values))
        strings, numbers = value_arrays(uniq)
        pos = pd.Index(uniq).get_indexer(values)
        for i, raw in enumerate(keys[c].tolist()):
            hits[i] &= parse_cell(raw, c).mask(strings, numbers)[pos]
    many = hits.sum(axis=0)
    if (many > 1).any():
        raise ReleaseError(f"{table.label}: its QI cells overlap (one person fits two)")
    some = many == 1
    row[some] = np.argmax(hits[:, some], axis=0)
    return row, keys


def _check_counts(table: Tabulated, population: pd.DataFrame) -> None:
    """A table of QI only: its counts must be the register's."""
    _exact(table)
    row, keys = _covered(table, population)
    have = np.bincount(row[row >= 0], minlength=len(keys))
    counts = table.lower
    for i in np.flatnonzero(have != counts)[:1]:
        cell = ", ".join(f"{c}={v}" for c, v in keys.iloc[i].items())
        raise InconsistentTables(
            f"{table.label} row {i + 1} ({cell}) counts {counts[i]:g} people, the "
            f"population has {have[i]} ({abs(have[i] - counts[i]):g} apart)"
        )


def people_release(table: Tabulated, qi: list, population: pd.DataFrame) -> Generalized:
    """The table as a generalized release of ``population`` (see the module docstring)."""
    _exact(table)
    row, keys = _covered(table, population)
    missing = np.flatnonzero(row < 0)
    if len(missing):
        who = population.index[missing[0]]
        raise ReleaseError(f"{table.label}: person {who!r} fits none of its cells")
    group = _free_name("group", qi + [table.sa])
    at = _row_of_cells(table, keys)
    published = np.bincount(at, weights=table.lower, minlength=max(len(keys), 1))
    people = np.bincount(row, minlength=len(keys)) if table.qi else np.array([len(population)])
    for i in np.flatnonzero(published != people)[:1]:
        cell = ", ".join(f"{c}={v}" for c, v in keys.iloc[i].items()) if table.qi else "all"
        raise InconsistentTables(
            f"{table.label} ({cell}) counts {published[i]:g} records, the population "
            f"has {people[i]} people there ({abs(published[i] - people[i]):g} apart)"
        )
    record = np.repeat(np.arange(len(table)), table.lower.astype(np.int64))  # its table row
    frame = pd.DataFrame({c: np.full(len(record), "*", dtype=object) for c in qi})
    for c in [*table.qi, table.sa]:
        frame[c] = table.keys[c].to_numpy(dtype=object)[record]
    frame[group] = at[record] + 1
    return Generalized(frame, qi, table.sa, group)


def _row_of_cells(table: Tabulated, keys: pd.DataFrame) -> np.ndarray:
    """Each listed cell's QI row (its position in ``keys``)."""
    if not table.qi:
        return np.zeros(len(table), dtype=np.int64)
    if len(table.qi) == 1:
        return pd.Index(keys.iloc[:, 0]).get_indexer(table.keys[table.qi[0]])
    return pd.MultiIndex.from_frame(keys).get_indexer(
        pd.MultiIndex.from_frame(table.keys[table.qi])
    )


def _free_name(base: str, taken: list) -> str:
    name = base
    while name in taken:
        name = "_" + name
    return name
