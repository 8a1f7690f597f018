"""Who is at risk after a release: a risk table, one row per person, worst first.

:func:`risk_table` lists, for each person (for each QI value and group when the release
has no person ids), the sensitive value an adversary would most likely guess, its
maximum-entropy probability, the certified bounds of that person's own probability of
holding it (the individual, ``bounds(by="person")``: Allen below may escape the Flu that
his record class surely has) and whether the estimate reaches a threshold.
``result.risk_table(...)`` and the command ``maxent-privacy report`` call it; the HTML
report (:mod:`maxent_privacy.report.html`) is made from the same table.

>>> from maxent_privacy import Bucketized, MaxEntModel, datasets
>>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                      sa="disease", group="bucket", person="name")
>>> model = MaxEntModel(release)
>>> model.add(model.P("Breast Cancer", gender="male") == 0)
>>> table = risk_table(model.solve(), threshold=0.99)
>>> print(table.head(3).to_string(index=False))
 name gender  degree  bucket         value   maxent  lower  upper  at_risk
Cathy female college       1 Breast Cancer 1.000000    1.0    1.0     True
Grace female  junior       2 Breast Cancer 1.000000    1.0    1.0     True
Allen   male college       1           Flu 0.666667    0.0    1.0    False
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..files import write_frame

__all__ = ["per_person", "risk_summary", "risk_table", "write_risk_table"]

#: a probability at least ``threshold - TOL`` reaches the threshold (1.0 computed as
#: 0.9999999999 must count)
TOL = 1e-9
_RESERVED = {"value", "maxent", "lower", "upper", "at_risk", "records"}


def check_threshold(threshold) -> float:
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        raise ValueError(f"threshold must be a number in (0, 1], got {threshold!r}") from None
    if not 0 < t <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    return t


def per_person(result) -> bool:
    """Whether the result knows people by id (a person column, pooled releases)."""
    return result.structure.person_class is not None


def _id_column(model) -> str:
    """The name of the person-id column: the release's own, else ``"person"``."""
    names = [r.person for r in model.releases if getattr(r, "person", None) is not None]
    names += [p.index.name for p in model.populations if p is not None and p.index.name]
    name = str(names[0]) if names else "person"
    if name in _RESERVED or name in model.qi or name == model.sa:
        return "person"
    return name


def _person_keys(result, ids: pd.Index) -> pd.DataFrame:
    """The QI values (and group, for one release) of each person id, in ``ids`` order."""
    m = result.model
    records = result.structure.records
    cols = list(m.qi) + ([m.group] if m.group in records and not m.pooled else [])
    pid = "pid" if "pid" in records else getattr(m.release, "person", None)
    if pid is not None and pid in records:
        known = records.drop_duplicates(pid).set_index(pid)[cols]
    else:
        known = pd.DataFrame(columns=cols)
    for p in m.persons:  # individuals singled out with model.person(...)
        if p.name not in known.index:
            row = dict(p.qi)
            if m.group in cols:
                row[m.group] = p.group
            known.loc[p.name] = pd.Series(row)
    return known.reindex(ids).reset_index(drop=True)


def _bounds(result, by: str, keys: list, values: pd.Series) -> pd.DataFrame | None:
    """``lower`` and ``upper`` of each row's value for one person of the row, when the
    result can certify intervals.

    ``result.bounds(by=...)`` (where it exists) returns a frame indexed by the row keys and
    the sensitive value with ``lower`` and ``upper`` columns; rows are matched by position
    of the index levels, not by their names. ``by="person"`` gives the individual's
    bounds; ``by="group"`` the share of a (QI value, group) class of n records, whose count
    bounds n * lower <= count <= n * upper give each of its people
    max(0, count_lo - (n - 1)) and min(1, count_hi).
    """
    if not hasattr(result, "bounds"):
        return None
    frame = result.bounds(by=by)
    wanted = pd.MultiIndex.from_arrays([*keys, values.to_numpy()])
    found = frame[["lower", "upper"] + (["records"] if "records" in frame else [])]
    found = found.reindex(wanted).reset_index(drop=True)
    if "records" in found:  # shares of a class: its people's own bounds
        n = found.pop("records").to_numpy(dtype=float)
        lo = np.maximum(0.0, found["lower"].to_numpy(dtype=float) * n - (n - 1.0))
        hi = np.minimum(1.0, found["upper"].to_numpy(dtype=float) * n)
        found["lower"], found["upper"] = _snap(lo), _snap(hi)
    return found


def _snap(p: np.ndarray) -> np.ndarray:
    """A probability within rounding (1e-9) of 0 or 1 made exactly so."""
    p = np.where(np.abs(p) <= TOL, 0.0, p)
    return np.where(np.abs(p - 1.0) <= TOL, 1.0, p)


def risk_table(result, threshold: float = 0.5) -> pd.DataFrame:
    """One row per person, worst first: who could be found out, and how surely.

    With person ids (a release's person column, pooled releases) the rows are people:
    the id column (named as in the release, else ``person``), the QI columns (and the
    group column for one release). Without them the rows are the (QI value, group)
    classes of the release, with ``records``, the number of people in each. Then:

    * ``value``: the sensitive value most likely under the maximum-entropy estimate
      (ties: the first in sorted order);
    * ``maxent``: its maximum-entropy posterior (the same for each person of a class);
    * ``lower``, ``upper``: the certified interval, over every table the release and the
      knowledge allow, of **the person's own** probability of holding that value
      (``result.bounds(by="person")``; for a row of a class without person ids, of each
      of its people, from the class's count bounds), when the result has a ``bounds``
      method. ``upper`` 1 says the person may hold it for sure in some table, ``lower``
      1 that they do in every one; the share of a record class is ``by="class"`` (a
      class of two that surely has one Flu: share at least 1/2, each person's lower 0);
    * ``at_risk``: ``maxent >= threshold``.

    Sorted by ``maxent``, largest first (ties in table order).
    """
    threshold = check_threshold(threshold)
    m = result.model
    if per_person(result):
        post = result.person_posterior()
        keys = _person_keys(result, post.index)
        ident = _id_column(m)
        keys.insert(0, ident, post.index.to_numpy())
        by, key_arrays = "person", [post.index.to_numpy()]
    else:
        post = result.posterior(by="group")
        keys = post.index.to_frame(index=False)
        sizes = result.structure.records.groupby(list(post.index.names), observed=True).size()
        keys["records"] = sizes.reindex(post.index).fillna(0).to_numpy(dtype=int)
        by = "group"
        key_arrays = [post.index.get_level_values(i).to_numpy() for i in range(post.index.nlevels)]
    probs = post.to_numpy(dtype=float)
    best = np.argmax(np.nan_to_num(probs, nan=-1.0), axis=1) if probs.shape[1] else []
    values = pd.Series(np.asarray(post.columns)[best], dtype=object)
    maxent = probs[np.arange(len(post)), best] if probs.shape[1] else np.zeros(len(post))
    table = keys.copy()
    table["value"] = values.to_numpy()
    table["maxent"] = maxent
    bounds = _bounds(result, by, key_arrays, values)
    if bounds is not None:
        table["lower"] = bounds["lower"].to_numpy(dtype=float)
        table["upper"] = bounds["upper"].to_numpy(dtype=float)
    table["at_risk"] = table["maxent"].to_numpy() >= threshold - TOL
    order = np.argsort(-table["maxent"].to_numpy(dtype=float), kind="stable")
    return table.iloc[order].reset_index(drop=True)


def write_risk_table(result, path, threshold: float = 0.5) -> pd.DataFrame:
    """Write :func:`risk_table` to ``path``, whole or not at all: CSV, or Parquet for
    ``.parquet``/``.pq`` (needs pyarrow; without it an OutputError says so). Returns the
    table."""
    table = risk_table(result, threshold)
    write_frame(path, table, index=False)
    return table


def risk_summary(result, threshold: float = 0.5, table: pd.DataFrame | None = None) -> dict:
    """Counts at ``threshold``: people at risk (of how many), (QI value, group) classes
    (None for pooled releases) and QI values whose largest posterior reaches it, and,
    when the table has ``upper``, the people at risk in the worst case: per person, those
    whose own upper bound (the individual's, see :func:`risk_table`) for their likeliest
    value reaches it."""
    threshold = check_threshold(threshold)
    table = risk_table(result, threshold) if table is None else table
    weight = table["records"].to_numpy(dtype=float) if "records" in table else None
    at = table["at_risk"].to_numpy(dtype=bool)
    people = float(weight.sum()) if weight is not None else float(len(table))
    people_at = float(weight[at].sum()) if weight is not None else float(at.sum())
    # pooled releases have no single group per record: no (QI value, group) classes
    by_group = None if result.model.pooled else result.posterior(by="group").max(axis=1)
    by_qi = result.posterior().max(axis=1)
    out = {
        "threshold": threshold,
        "people": int(people),
        "people_at_risk": int(people_at),
        "classes": None if by_group is None else len(by_group),
        "classes_at_risk": None if by_group is None else int((by_group >= threshold - TOL).sum()),
        "qi_values": len(by_qi),
        "qi_values_at_risk": int((by_qi >= threshold - TOL).sum()),
        "per_person": weight is None,
    }
    if "upper" in table:
        worst = table["upper"].to_numpy(dtype=float) >= threshold - TOL
        out["people_at_risk_worst_case"] = int(
            weight[worst].sum() if weight is not None else worst.sum()
        )
    return out
