"""Privacy metrics computed from a Result.

>>> from maxent_privacy import MaxEntModel, Bucketized, datasets, metrics
>>> frame = datasets.du2008_figure1()
>>> model = MaxEntModel(Bucketized(frame, qi=["gender", "degree"], sa="disease",
...                                group="bucket"))
>>> result = model.solve()
>>> round(metrics.estimation_accuracy(result, frame), 4)
0.8294
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .errors import ReleaseError

__all__ = ["breaches", "estimation_accuracy", "max_posterior", "true_posterior"]


def true_posterior(result, original: pd.DataFrame) -> pd.DataFrame:
    """P(S | QI) computed from the original data, aligned with ``result.posterior()``."""
    m = result.model
    for col in m.qi + [m.sa]:
        if col not in original.columns:
            raise ReleaseError(f"column {col!r} is not in the original table")
    counts = original.groupby(m.qi + [m.sa], sort=True, observed=True).size()
    table = counts.unstack(m.sa, fill_value=0)
    est = result.posterior()
    table = table.reindex(index=est.index, columns=est.columns, fill_value=0)
    if table.isna().any().any() or (table.sum(axis=1) == 0).any():
        raise ReleaseError("the original table and the release hold different QI values")
    return table.div(table.sum(axis=1), axis=0)


def estimation_accuracy(result, original: pd.DataFrame) -> float:
    """Du et al. Section 7.1: sum_q P(q) KL(P(S|q) || P*(S|q)), in nats.

    ``original`` holds the true sensitive values with the release's QI columns (the
    table before bucketization). Lower is a better estimate, i.e. less privacy. Infinite
    when the estimate gives probability 0 to a value that a record with that QI has.
    """
    m = result.model
    truth = true_posterior(result, original)
    est = result.posterior()
    p = truth.to_numpy()
    q = est.to_numpy()
    weight = original.groupby(m.qi, sort=True, observed=True).size()
    weight = weight.reindex(truth.index).to_numpy(dtype=float)
    weight = weight / weight.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p / q), 0.0)
    return float(np.sum(weight * terms.sum(axis=1)))


def max_posterior(result, by: str | None = None) -> pd.DataFrame:
    """Per QI value (or QI value and group): the most likely sensitive value and its
    posterior, with the number of records it applies to, worst first."""
    m = result.model
    post = result.posterior(by=by)
    keys = list(post.index.names)
    sizes = m.structure.records.groupby(keys, sort=True, observed=True).size()
    out = pd.DataFrame(
        {
            "value": post.idxmax(axis=1),
            "posterior": post.max(axis=1),
            "records": sizes.reindex(post.index).to_numpy(),
        },
        index=post.index,
    )
    return out.sort_values("posterior", ascending=False, kind="stable")


def breaches(result, threshold: float, by: str | None = None) -> pd.DataFrame:
    """Every (QI value, sensitive value) whose posterior reaches ``threshold``.

    Columns: the QI columns, the sensitive value, ``posterior`` and ``records`` (how many
    records have that QI value), worst first. ``threshold`` must be in (0, 1].

    ``by=None`` uses P(S | QI), which averages over the groups that hold a QI value, and
    so can hide people whom their own group exposes; ``by="group"`` uses
    P(S | QI, group). ``by="person"`` counts people: one row per person and sensitive
    value that reaches the threshold, with columns ``person``, the sensitive value and
    ``posterior``. People are the person ids when the release has them
    (:meth:`Result.person_posterior`), else the records of the release, each named by its
    row label and given its (QI value, group) posterior. ``breaches(r, t, by="person")
    ["person"].nunique()`` is the number of people at risk.

    >>> from maxent_privacy import Bucketized, MaxEntModel, datasets
    >>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
    ...                      sa="disease", group="bucket", person="name")
    >>> model = MaxEntModel(release)
    >>> model.add(model.P("Breast Cancer", gender="male") == 0)
    >>> breaches(model.solve(), 0.99, by="person")["person"].tolist()
    ['Cathy', 'Grace']
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    if by == "person":
        return _person_breaches(result, threshold)
    m = result.model
    post = result.posterior(by=by)
    keys = list(post.index.names)
    long = post.stack().rename("posterior").reset_index()
    long = long[long["posterior"] >= threshold - 1e-9]
    sizes = m.structure.records.groupby(keys, sort=True, observed=True).size().rename("records")
    long = long.merge(sizes.reset_index(), on=keys, how="left")
    return long.sort_values("posterior", ascending=False, kind="stable").reset_index(drop=True)


def _person_breaches(result, threshold: float) -> pd.DataFrame:
    m = result.model
    if result.structure.person_class is not None:
        post = result.person_posterior()
    else:  # every record is a person: its class's P(S | QI, group)
        records = result.structure.records
        by_group = result.posterior(by="group")
        post = by_group.reindex(pd.MultiIndex.from_frame(records[list(by_group.index.names)]))
        post.index = records.index
    post = post.copy()
    post.index.name = "person"
    post.columns.name = m.sa
    long = post.stack().rename("posterior").reset_index()
    long = long[long["posterior"] >= threshold - 1e-9]
    return long.sort_values("posterior", ascending=False, kind="stable").reset_index(drop=True)
