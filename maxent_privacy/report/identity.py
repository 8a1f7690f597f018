"""Identity (re-identification) risk per row, beside the attribute disclosure.

As ARX and sdcMicro report it: an adversary who knows a person is in the release and
knows their QI values finds them among the records whose published QI cells match:
**prosecutor risk** 1 / |equivalence class|, the class being the records of the release
with the same QI cells. A bucketized release publishes the QI values exactly, so a
person whose QI values are unique in it is found for sure (risk 1) even when their
sensitive value stays hidden in the bucket. With several releases, a person's risk is
the largest over the releases that hold them. With a population (a generalized release
read with ``--population``), **journalist risk**: 1 / (the people of the population whose
exact QI values fit the record's cells).

>>> import pandas as pd
>>> from maxent_privacy import Bucketized, MaxEntModel, datasets
>>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                      sa="disease", group="bucket", person="name")
>>> risk = identity_risk(MaxEntModel(release), pd.DataFrame({"person": ["Cathy", "Allen"]}))
>>> risk.tolist()  # Cathy: the only female college graduate but Helen; Allen: 1 of 3
[0.5, 0.3333333333333333]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["identity_risk", "kind_of_identity_risk"]


def kind_of_identity_risk(model) -> str:
    """``"journalist"`` with a population, else ``"prosecutor"``."""
    return "journalist" if any(p is not None for p in model.populations) else "prosecutor"


def _class_sizes(release) -> pd.Series:
    """Per record of ``release``: how many records share its published QI cells (records
    of real people: counterfeit records have none)."""
    frame = release.people
    qi = list(release.qi)
    return frame.groupby(qi, observed=True, dropna=False)[qi[0]].transform("size")


#: journalist risk is computed when (distinct QI-cell rows) x (population) is at most this
MAX_MATCHES = 50_000_000


def _journalist(release, population: pd.DataFrame) -> pd.Series:
    """Per record: people of the population whose exact QI values fit its cells, at
    least 1 (the equivalence class's size when the matching would be too large)."""
    from ..releases.cells import covers

    frame = release.people
    qi = list(release.qi)
    combos = frame[qi].astype(str).drop_duplicates()
    if len(combos) * len(population) > MAX_MATCHES:
        return _class_sizes(release)
    masks: dict = {}

    def fits(col, cell):
        if (col, cell) not in masks:
            masks[col, cell] = np.fromiter(
                (covers(cell, v) for v in population[col].to_numpy()), bool, len(population)
            )
        return masks[col, cell]

    count = {}
    for row in combos.itertuples(index=False):
        hit = np.ones(len(population), dtype=bool)
        for col, cell in zip(qi, row, strict=True):
            hit &= fits(col, cell)
        count[tuple(row)] = max(int(hit.sum()), 1)
    keys = frame[qi].astype(str).itertuples(index=False)
    return pd.Series([count[tuple(k)] for k in keys], index=frame.index)


def identity_risk(model, keys: pd.DataFrame) -> np.ndarray:
    """Identity risk of each row of a risk table's ``keys``: person ids in the first
    column (``"person"``) when the model has them, else the QI columns (and group)."""
    rows = len(keys)
    risk = np.zeros(rows)
    person = "person" in keys.columns
    for release, population in zip(model.releases, model.populations, strict=True):
        if population is not None:
            size = _journalist(release, population)
        else:
            size = _class_sizes(release)
        frame = release.people
        if person and getattr(release, "person", None) is None:
            # people of a population placed in a release without ids: which record is
            # theirs is what the model estimates; no identity risk per person here
            return np.full(rows, np.nan)
        if person:
            per = pd.Series(1.0 / size.to_numpy(dtype=float), index=frame[release.person])
            per = per.groupby(level=0).max()
            got = per.reindex(keys["person"].to_numpy()).to_numpy(dtype=float)
        else:
            qi = list(release.qi)
            per = pd.Series(1.0 / size.to_numpy(dtype=float))
            per.index = pd.MultiIndex.from_frame(frame[qi].astype(str))
            per = per.groupby(level=list(range(len(qi)))).max()
            want = pd.MultiIndex.from_frame(keys[qi].astype(str))
            got = per.reindex(want).to_numpy(dtype=float)
        risk = np.fmax(risk, np.nan_to_num(got, nan=0.0))
    return risk
