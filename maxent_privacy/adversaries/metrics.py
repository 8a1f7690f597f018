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

from .._frames import reindex_keys
from .._validation import check_choice, check_flag, check_threshold, reaches
from ..errors import ReleaseError

__all__ = [
    "breaches",
    "estimation_accuracy",
    "max_posterior",
    "person_risk",
    "true_posterior",
]


def true_posterior(result, original: pd.DataFrame) -> pd.DataFrame:
    """P(S | QI) computed from the original data, aligned with ``result.posterior()``."""
    m = result.model
    for col in m.qi + [m.sa]:
        if col not in original.columns:
            raise ReleaseError(f"column {col!r} is not in the original table")
    counts = original.groupby(m.qi + [m.sa], sort=True, observed=True).size()
    table = counts.unstack(m.sa, fill_value=0)
    est = result.posterior()
    table = reindex_keys(table, est.index, fill_value=0)
    table = table.reindex(columns=est.columns, fill_value=0)
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
    weight = reindex_keys(weight, truth.index).to_numpy(dtype=float)
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
            "records": reindex_keys(sizes, post.index).to_numpy(),
        },
        index=post.index,
    )
    return out.sort_values("posterior", ascending=False, kind="stable")


def breaches(
    result, threshold: float, by: str | None = None, worst_case: bool = False, **options
) -> pd.DataFrame:
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

    ``worst_case=True`` counts by the *upper bound* over every table the model allows
    (:meth:`Result.bounds`; ``options`` go there, e.g. ``exact=True``) instead of the
    maximum-entropy estimate, and adds ``lower`` and ``upper`` columns. Which quantity is
    bounded follows ``by``: with None or "group" the posterior of the row (a share of its
    records); with ``by="person"`` **the individual**: one row per person and value whose
    own probability of holding it can reach ``threshold`` (``upper`` = min(1, the most
    records of their class that can hold it); with ``exact=True``, 1 when some possible
    world gives it to them); ``by="class"`` gives, per person, their record class's share
    instead. At most one of bucket 1's three men has Pneumonia, so at most half of
    Allen and Brian's class does; but Allen himself may be the one:

    >>> result = model.solve()
    >>> worst = breaches(result, 0.99, by="person", worst_case=True)
    >>> worst[worst["person"] == "Allen"][["disease", "lower", "upper"]]
         disease  lower  upper
    2        Flu    0.0    1.0
    9  Pneumonia    0.0    1.0
    >>> share = breaches(result, 0.99, by="class", worst_case=True)
    >>> share[share["person"] == "Allen"][["disease", "lower", "upper"]]
      disease  lower  upper
    2     Flu    0.5    1.0
    """
    threshold = check_threshold(threshold)
    by = check_choice(by, "by", (None, "group", "person", "class"))
    worst_case = check_flag(worst_case, "worst_case")
    if worst_case:
        return _worst_case_breaches(result, threshold, by, options)
    if by == "person":
        return _person_breaches(result, threshold)
    m = result.model
    post = result.posterior(by=by)
    keys = list(post.index.names)
    long = post.stack().rename("posterior").reset_index()
    long = long[reaches(long["posterior"], threshold)]
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
    long = long[reaches(long["posterior"], threshold)]
    return long.sort_values("posterior", ascending=False, kind="stable").reset_index(drop=True)


def _worst_case_breaches(result, threshold: float, by, options) -> pd.DataFrame:
    frame = result.bounds(by=by, **options)
    keep = ["maxent", "lower", "upper"] + (["records"] if "records" in frame else [])
    keep += ["exact"] if "exact" in frame else []
    long = frame[keep].rename(columns={"maxent": "posterior"}).reset_index()
    long = long[reaches(long["upper"], threshold)]
    return long.sort_values(["upper", "posterior"], ascending=False, kind="stable").reset_index(
        drop=True
    )


def person_risk(result, values=None, exact: bool = False, **options) -> pd.DataFrame:
    """Per person: the maximum-entropy estimate beside the worst and best case.

    One row per person (``result.person_posterior()``'s people): ``value``, the sensitive
    value whose upper bound is highest (ties: the likelier under maximum entropy), and for
    it ``maxent``, ``lower`` and ``upper``: the bounds of the person's own probability
    of holding it (:meth:`Result.bounds` with ``by="person"``, the individual; ``exact=True``
    over possible worlds, adding ``exact``), then ``max_maxent``, the largest
    maximum-entropy posterior of the person. Worst first (``upper``, then ``maxent``).

    Allen and Brian below are the two male college graduates of bucket 1, which holds
    Flu twice among its three men: at least one of them has it (their class's share is at
    least 0.5: ``by="class"``), but each of them may escape it (lower 0).

    >>> from maxent_privacy import Bucketized, MaxEntModel, datasets, metrics
    >>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
    ...                      sa="disease", group="bucket", person="name")
    >>> model = MaxEntModel(release)
    >>> model.add(model.P("Breast Cancer", gender="male") == 0)
    >>> risk = metrics.person_risk(model.solve()).round(3).reset_index()
    >>> print(risk.head(4).to_string(index=False))
    person         value  maxent  lower  upper  max_maxent
     Cathy Breast Cancer   1.000    1.0    1.0       1.000
     Grace Breast Cancer   1.000    1.0    1.0       1.000
     Allen           Flu   0.667    0.0    1.0       0.667
     Brian           Flu   0.667    0.0    1.0       0.667
    """
    frame = result.bounds(by="person", values=values, exact=exact, **options)
    if frame.empty:
        return pd.DataFrame(columns=["value", "maxent", "lower", "upper", "max_maxent"])
    sa = frame.index.names[-1]
    long = frame.reset_index()
    long = long.sort_values(["person", "upper", "maxent"], ascending=[True, False, False])
    top = long.groupby("person", sort=False).head(1).set_index("person")
    cols = ["maxent", "lower", "upper"] + (["exact"] if "exact" in top else [])
    out = top[[sa] + cols].rename(columns={sa: "value"})
    out["max_maxent"] = frame["maxent"].groupby(level="person").max().reindex(out.index)
    return out.sort_values(["upper", "maxent"], ascending=False, kind="stable")
