"""Identity (re-identification) risk per row, beside the attribute disclosure; k and l.

As ARX and sdcMicro report it: an adversary who knows a person is in the release and
knows their QI values finds them among the records whose published QI cells match:
**prosecutor risk** 1 / |equivalence class|, the class being the records of the release
with the same QI cells. A bucketized release publishes the QI values exactly, so a
person whose QI values are unique in it is found for sure (risk 1) even when their
sensitive value stays hidden in the bucket. With several releases, a person's risk is
the largest over the releases that hold them. With a population (a generalized release
read with ``--population``), **journalist risk**: 1 / (the people of the population whose
exact QI values fit the record's cells); a person of the population has the risk of the
class whose cells cover them (the largest, when the cells of several classes do).

:func:`k_and_l` gives each release's k (its smallest equivalence class) and l (the fewest
distinct sensitive values in one of its groups), as pycanon counts them.

>>> import pandas as pd
>>> from maxent_privacy import Bucketized, MaxEntModel, datasets
>>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                      sa="disease", group="bucket", person="name")
>>> risk = identity_risk(MaxEntModel(release), pd.DataFrame({"person": ["Cathy", "Allen"]}))
>>> risk.tolist()  # Cathy: the only female college graduate but Helen; Allen: 1 of 3
[0.5, 0.3333333333333333]
>>> k_and_l(release)  # Grace is the only female junior; each bucket has 3 diseases
{'k': 1, 'l': 3}
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._frames import reindex_keys

__all__ = ["identity_risk", "k_and_l", "kind_of_identity_risk"]


def kind_of_identity_risk(model) -> str:
    """``"journalist"`` with a population, else ``"prosecutor"``."""
    return "journalist" if any(p is not None for p in model.populations) else "prosecutor"


def _class_sizes(release) -> pd.Series:
    """Per record of ``release``: how many records share its published QI cells (records
    of real people: counterfeit records have none)."""
    frame = release.people
    qi = list(release.qi)
    return frame.groupby(qi, observed=True, dropna=False)[qi[0]].transform("size")


def k_and_l(release) -> dict:
    """``{"k": the smallest number of records sharing their QI cells, "l": the fewest
    distinct sensitive values in one group}`` of ``release`` (its real people)."""
    frame = release.people
    if not len(frame):
        return {"k": 0, "l": 0}
    k = int(_class_sizes(release).min())
    distinct = frame.groupby(release.group, observed=True, dropna=False)[release.sa].nunique()
    return {"k": k, "l": int(distinct.min())}


#: journalist risk by the cell-by-cell matching (a release kind without ``match``) is
#: computed when (distinct QI-cell rows) x (population) is at most this
MAX_MATCHES = 50_000_000


def _matches(release, population: pd.DataFrame):
    """``(person position, type, type of each record)`` of the people of ``population``
    whose exact QI fit a row type (group and cells) of ``release``, or None when the
    release kind cannot match (no ``match``)."""
    if not hasattr(release, "match"):
        return None
    qi = list(release.qi)
    people = population[qi].reset_index(drop=True)
    people["__pid"] = np.arange(len(people))
    _, types, row_type, person_pos, type_no = release.match(people, "__pid", every_row=False)
    return person_pos, type_no, np.asarray(row_type), len(types)


def _journalist_by_cells(release, population: pd.DataFrame) -> pd.Series:
    """Per record: people of the population whose exact QI values fit its cells, at
    least 1 (the equivalence class's size when the matching would be too large)."""
    from ..releases.cells import covers

    frame = release.people
    qi = list(release.qi)
    combos = frame[qi].astype(str).drop_duplicates()
    if len(combos) * len(population) > MAX_MATCHES:
        return _class_sizes(release)
    masks: dict = {}
    coded = {col: pd.factorize(population[col]) for col in qi}  # each distinct value once

    def fits(col, cell):
        if (col, cell) not in masks:
            codes, uniques = coded[col]
            on = np.fromiter((covers(cell, v) for v in uniques), bool, len(uniques))
            masks[col, cell] = on[codes] & (codes >= 0)
        return masks[col, cell]

    count = {}
    for row in combos.itertuples(index=False):
        hit = np.ones(len(population), dtype=bool)
        for col, cell in zip(qi, row, strict=True):
            hit &= fits(col, cell)
        count[tuple(row)] = max(int(hit.sum()), 1)
    keys = frame[qi].astype(str).itertuples(index=False)
    return pd.Series([count[tuple(k)] for k in keys], index=frame.index)


def _journalist(release, population: pd.DataFrame):
    """``(per record: the people who fit its cells, at least 1; per person of the
    population: 1 / that count for the class that covers them, the largest when several
    do, or None)``."""
    found = _matches(release, population)
    if found is None:
        return _journalist_by_cells(release, population), None
    person_pos, type_no, row_type, n_types = found
    count = np.maximum(np.bincount(type_no, minlength=n_types), 1).astype(float)
    per_record = pd.Series(count[row_type], index=release.frame.index)
    per_record = per_record.reindex(release.people.index)
    per_person = np.zeros(len(population))
    np.maximum.at(per_person, person_pos, 1.0 / count[type_no])
    return per_record, pd.Series(per_person, index=population.index)


def _release_risk(release, population, keys: pd.DataFrame, person: bool) -> np.ndarray:
    """One release's identity risk of each row of ``keys`` (0 where it holds no one)."""
    by_person = None
    if population is not None:
        size, by_person = _journalist(release, population)
    else:
        size = _class_sizes(release)
    frame = release.people
    if person and getattr(release, "person", None) is None:
        if by_person is None:  # no ids and no population: which record is whose is unknown
            return np.full(len(keys), np.nan)
        got = by_person.groupby(level=0).max().reindex(keys["person"].to_numpy())
        return got.to_numpy(dtype=float)
    if person:
        per = pd.Series(1.0 / size.to_numpy(dtype=float), index=frame[release.person])
        per = per.groupby(level=0).max()
        return per.reindex(keys["person"].to_numpy()).to_numpy(dtype=float)
    qi = list(release.qi)
    per = pd.Series(1.0 / size.to_numpy(dtype=float))
    per.index = pd.MultiIndex.from_frame(frame[qi].astype(str))
    per = per.groupby(level=list(range(len(qi)))).max()
    want = pd.MultiIndex.from_frame(keys[qi].astype(str))
    return reindex_keys(per, want).to_numpy(dtype=float)


def identity_risk(model, keys: pd.DataFrame) -> np.ndarray:
    """Identity risk of each row of a risk table's ``keys``: person ids in the first
    column (``"person"``) when the model has them, else the QI columns (and group)."""
    risk = np.zeros(len(keys))
    person = "person" in keys.columns
    for release, population in zip(model.releases, model.populations, strict=True):
        got = _release_risk(release, population, keys, person)
        if np.isnan(got).all() and len(got):
            return got
        risk = np.fmax(risk, np.nan_to_num(got, nan=0.0))
    return risk
