"""Inference channels between releases (Wang et al., ICDM 2008, Definition 2.2).

There is an inference channel for a person when the posterior P(S | person) derived from
all releases together differs from the one derived from a release alone.

>>> from maxent_privacy import Bucketized, datasets
>>> d1, d2 = datasets.wang2008_figure1()
>>> releases = [Bucketized(d, qi=["gender", "zip"], sa="disease", group="bucket",
...                        person="pseudonym") for d in (d1, d2)]
>>> table = inference_channels(releases)
>>> table.loc[(10, "Lung Cancer"), ["release 1", "pooled"]].round(4).tolist()
[0.3333, 1.0]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import check_number
from ..errors import ReleaseError
from ..numerics import entropy_terms

__all__ = ["inference_channels"]


def _entropy(table: pd.DataFrame) -> pd.Series:
    h = entropy_terms(table.to_numpy(dtype=float), 1.0).sum(axis=1) / np.log(2.0)
    return pd.Series(h, index=table.index)


def inference_channels(releases, tol: float = 1e-6, **solve_options) -> pd.DataFrame:
    """Per person, the single-release and pooled posteriors where they differ.

    Solves each release alone and all together (``MaxEntModel`` with default options, or
    ``solve_options``) and returns a long table indexed by (person, sensitive value) with
    one column per release (NaN where the person is absent), ``pooled``, and per person
    ``entropy single`` (the lowest single-release entropy, bits), ``entropy pooled`` and
    ``gain`` (how much certainty the pooling adds, bits). Only persons whose pooled
    posterior differs by more than ``tol`` from a single-release one are listed, those
    with the largest gain first.
    """
    from ..model import MaxEntModel

    tol = check_number(tol, "tol", minimum=0)
    releases = list(releases)
    if len(releases) < 2:
        raise ReleaseError("inference_channels needs at least two releases")
    pooled = MaxEntModel(releases).solve(**solve_options).person_posterior()
    values = list(pooled.columns)
    singles = []
    for rel in releases:
        post = MaxEntModel(rel).solve(**solve_options).person_posterior()
        singles.append(post.reindex(columns=values, fill_value=0.0))
    changed = pd.Series(False, index=pooled.index)
    best = pd.Series(np.inf, index=pooled.index)
    for post in singles:
        common = pooled.index.intersection(post.index)
        diff = (pooled.loc[common] - post.loc[common]).abs().max(axis=1) > tol
        changed.loc[common] |= diff
        best.loc[common] = np.minimum(best.loc[common], _entropy(post.loc[common]))
    h_pooled = _entropy(pooled)
    gain = best - h_pooled
    persons = changed.index[changed.to_numpy()]
    order = sorted(persons, key=lambda p: (-gain[p], str(p)))
    rows = []
    for p in order:
        for v in values:
            row = {"person": p, pooled.columns.name or "value": v}
            for r, post in enumerate(singles, start=1):
                row[f"release {r}"] = post.loc[p, v] if p in post.index else np.nan
            row["pooled"] = pooled.loc[p, v]
            row["entropy single"] = best[p]
            row["entropy pooled"] = h_pooled[p]
            row["gain"] = gain[p]
            rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    return out.set_index(["person", pooled.columns.name or "value"])
