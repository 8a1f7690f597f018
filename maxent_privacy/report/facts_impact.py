"""What each fact and each release does to the people at risk.

* :func:`facts_impact`: per fact, the model solved again without it: how many people it
  puts at or over the threshold (at risk with every fact, not without this one) and how
  many it takes below (the other way round). Up to :data:`MAX_FACTS` facts (each costs a
  solve); the report's "which facts matter" section.
* :func:`releases_alone`: for pooled releases, the people at risk in each release solved
  alone (without the knowledge), beside the pooled count: what pooling adds.

Both count people as the risk table does (its rounding, its non-sensitive values).

>>> from maxent_privacy import Bucketized, MaxEntModel, datasets
>>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                      sa="disease", group="bucket", person="name")
>>> model = MaxEntModel(release)
>>> model.add(model.P("Breast Cancer", gender="male") == 0)
>>> [(row["puts"], row["takes"]) for row in facts_impact(model.solve(), 0.99)]
[(2, 0)]
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import MaxEntError
from .likeliest import likeliest, rounded

__all__ = ["FACTS_SECONDS", "MAX_FACTS", "facts_impact", "people_at_risk", "releases_alone"]

#: facts whose impact is measured (one solve each); past it the report says so
MAX_FACTS = 20
#: and no more solves once this many seconds went by
FACTS_SECONDS = 30.0


def _weights(result, best) -> np.ndarray:
    if best.by == "person":
        return np.ones(len(best.keys))
    names = list(best.keys.columns)
    import pandas as pd

    sizes = result.structure.records.groupby(names, observed=True).size()
    return sizes.reindex(pd.MultiIndex.from_frame(best.keys)).fillna(0).to_numpy(dtype=float)


def people_at_risk(result, threshold: float, nonsensitive=()) -> tuple[np.ndarray, np.ndarray]:
    """``(at risk, people)`` per row of the risk table, in the model's row order."""
    best = likeliest(result, nonsensitive)
    return rounded(best.maxent) >= threshold, _weights(result, best)


def facts_impact(
    result, threshold: float, nonsensitive=(), limit: int = MAX_FACTS, seconds=None
) -> list:
    """One dict per fact (the first ``limit``, while ``seconds``, default
    :data:`FACTS_SECONDS`, last): ``name``, ``puts`` (people at risk only with it),
    ``takes`` (people at risk only without it), ``without`` (people at risk without it),
    or ``error`` when the model without it could not be solved."""
    model = result.model
    facts = list(model.facts)
    base, weight = people_at_risk(result, threshold, nonsensitive)
    rows = []
    end = time.perf_counter() + (FACTS_SECONDS if seconds is None else seconds)
    for fact in facts[:limit]:
        if time.perf_counter() > end:
            break
        try:
            model.facts[:] = [f for f in facts if f is not fact]
            other = model.solve()
        except MaxEntError as exc:
            rows.append({"name": fact.name, "error": str(exc).splitlines()[0]})
            continue
        finally:
            model.facts[:] = facts
        alone, _ = people_at_risk(other, threshold, nonsensitive)
        rows.append(
            {
                "name": fact.name,
                "puts": int(weight[base & ~alone].sum()),
                "takes": int(weight[~base & alone].sum()),
                "without": int(weight[alone].sum()),
            }
        )
    return rows


def releases_alone(result, threshold: float, nonsensitive=()) -> list:
    """For pooled releases: one dict per release, ``people`` and ``at_risk`` of the
    release solved alone (no knowledge); [] for one release."""
    model = result.model
    make = type(model)  # MaxEntModel (not imported: the model imports the report)
    if len(model.releases) < 2:
        return []
    rows = []
    for k, (release, population) in enumerate(
        zip(model.releases, model.populations, strict=True), start=1
    ):
        try:
            alone = make(release, populations=population).solve()
            at, weight = people_at_risk(alone, threshold, nonsensitive)
        except MaxEntError as exc:
            rows.append({"release": k, "error": str(exc).splitlines()[0]})
            continue
        rows.append({"release": k, "people": int(weight.sum()), "at_risk": int(weight[at].sum())})
    return rows
