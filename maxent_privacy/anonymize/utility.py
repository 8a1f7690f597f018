"""What a release keeps for its users: the error of count queries answered from it.

:func:`count_query_error` is the utility measure of the release planner
(:mod:`.planner`) and of the re-publishing benchmark: the relative error of random count
queries over quasi-identifiers and the sensitive value (Xiao and Tao, Anatomy, VLDB 2006,
Section 6), answered from a bucketized release under the *uniform-within-group*
assumption (each record of a group equally likely to hold each of the group's published
values). :func:`release_utility` adds the share of counterfeit records and the group
sizes.

>>> import pandas as pd
>>> from maxent_privacy import Bucketized
>>> truth = pd.DataFrame({"age": [20, 30, 40, 50], "d": ["flu", "hiv", "flu", "hiv"]})
>>> exact = Bucketized(truth.assign(g=[1, 2, 3, 4]), ["age"], "d", "g")
>>> count_query_error(exact, truth, queries=50)       # one record a group: exact answers
0.0
>>> mixed = Bucketized(truth.assign(g=[1, 1, 2, 2]), ["age"], "d", "g")
>>> round(count_query_error(mixed, truth, queries=50), 3)
0.5
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import ReleaseArgumentError, check_integer
from ..errors import ReleaseError
from ..releases.bucketized import Bucketized
from ..releases.checks import check_frame, rng_of

__all__ = ["SELECTIVITY", "count_query_error", "release_utility"]

#: expected share of the table a random query selects (under independent attributes)
SELECTIVITY = 0.05
#: draws per query asked before giving up on finding queries with a non-zero answer
_TRIES = 20


def _check(release, truth, queries) -> int:
    if not isinstance(release, Bucketized):
        raise ReleaseError(
            f"count_query_error needs a Bucketized release, got {type(release).__name__}"
        )
    check_frame(truth, "count_query_error: truth")
    missing = [c for c in [*release.qi, release.sa] if c not in truth.columns]
    if missing:
        raise ReleaseError(
            f"count_query_error: column {missing[0]!r} of the release is not in the truth table"
        )
    if len(truth) == 0:
        raise ReleaseError("count_query_error: the truth table has no rows")
    return check_integer(queries, "queries", minimum=1, error=ReleaseArgumentError)


def _numeric(series: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(series.dtype)) and not pd.api.types.is_bool_dtype(
        series.dtype
    )


class _Column:
    """One column's distinct values (sorted), the truth's codes and the release's."""

    def __init__(self, truth: pd.Series, published: pd.Series):
        numeric = _numeric(truth)
        codes, uniques = pd.factorize(truth, sort=numeric)
        if not numeric:  # text order: a stable, documented order (unused by subsets)
            order = np.argsort(np.asarray(uniques.astype(str)), kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(len(order))
            codes, uniques = rank[codes], uniques[order]
        self.numeric = numeric
        self.n = len(uniques)
        self.truth = codes
        index = pd.Index(uniques)
        try:
            self.published = index.get_indexer(published)
        except (TypeError, ValueError):  # values of other types: none of them match
            self.published = np.full(len(published), -1)

    def predicate(self, fraction: float, rng: np.random.Generator) -> np.ndarray:
        """A random predicate covering ``fraction`` of the values: a lookup table."""
        k = max(1, int(round(fraction * self.n)))
        table = np.zeros(self.n + 1, dtype=bool)  # last entry: code -1 (not in the truth)
        if self.numeric:
            start = int(rng.integers(0, self.n - k + 1))
            table[start : start + k] = True
        else:
            table[rng.choice(self.n, size=k, replace=False)] = True
        return table


def count_query_error(release, truth, queries: int = 1000, seed=0) -> float:
    """The mean relative error of random count queries answered from ``release``.

    A query counts the records with given quasi-identifier values and sensitive value:
    ``COUNT(*) WHERE A1 in V1 AND ... AND Ad in Vd AND S in Vs``. Its dimension d is
    drawn uniformly from 1 to the number of QI columns, the d columns at random; each
    predicate (and the sensitive one) covers a fraction ``SELECTIVITY ** (1 / (d + 1))``
    of its column's distinct values in ``truth`` (at least one): a random range of a
    numeric column (its values sorted), a random subset of another, so that a query
    selects about 5 % of the table when attributes are independent. A query whose true
    count is 0 is drawn again (relative error is undefined there), at most 20 draws per
    query asked; the error is averaged over the queries found.

    The release answers under the *uniform-within-group* assumption: group g holds
    ``n_q(g)`` real people matching the QI predicates (their QI values are published
    exactly) and each of its records holds each published value equally likely, so
    ``estimate = sum_g n_q(g) * c_S(g) / size(g)``, with ``c_S(g)`` the published values
    of g in ``Vs`` and ``size(g)`` its published records (counterfeits included: their
    values are published, and an analyst knows only how many there are). The relative
    error of a query is ``|estimate - true| / true``.

    Parameters
    ----------
    release : Bucketized (possibly with counterfeits).
    truth : the original table: the release's QI and sensitive columns, one row per
        person (its rows are the true counts; they should be the release's people).
    queries : how many queries (an integer of at least 1).
    seed : seed of ``numpy.random.default_rng`` (which queries).

    Returns
    -------
    float: the mean relative error (0 when every query is answered exactly).
    """
    queries = _check(release, truth, queries)
    rng = rng_of(seed)
    people = release.people
    qi, sa = list(release.qi), release.sa
    cols = {c: _Column(truth[c], people[c]) for c in qi}
    s_col = _Column(truth[release.sa], release.frame[sa])
    # the release: group of each real person, published counts per group and value
    g_people, groups = pd.factorize(people[release.group])
    g_all = pd.Index(groups).get_indexer(release.frame[release.group])
    sizes = np.bincount(g_all, minlength=len(groups)).astype(float)
    counts = np.zeros((len(groups), s_col.n + 1))
    np.add.at(counts, (g_all, s_col.published), 1.0)  # -1: a value the truth never has
    share = counts / sizes[:, None]
    errors: list[float] = []
    tries = 0
    while len(errors) < queries and tries < _TRIES * queries:
        tries += 1
        d = int(rng.integers(1, len(qi) + 1))
        chosen = rng.choice(len(qi), size=d, replace=False)
        fraction = SELECTIVITY ** (1.0 / (d + 1))
        s_table = s_col.predicate(fraction, rng)
        hit = s_table[s_col.truth]
        seen = np.ones(len(g_people), dtype=bool)
        for j in np.sort(chosen):
            col = cols[qi[j]]
            table = col.predicate(fraction, rng)
            hit &= table[col.truth]
            seen &= table[col.published]
        true = int(hit.sum())
        if true == 0:
            continue
        per_group = share[:, s_table].sum(axis=1)  # expected share of Vs in each group
        estimate = float(per_group[g_people[seen]].sum())
        errors.append(abs(estimate - true) / true)
    if not errors:
        raise ReleaseError(
            f"count_query_error: no query with a non-zero answer in {tries} draws; the truth "
            "table is too small or holds other values than the release"
        )
    return float(np.mean(errors))


def release_utility(release, truth, queries: int = 1000, seed=0) -> dict:
    """What a release keeps: ``query_error`` (:func:`count_query_error`),
    ``counterfeit_share`` (counterfeit records / published records), ``mean_group_size``
    (published records per group), ``groups`` and ``records``.

    >>> truth = pd.DataFrame({"age": [20, 30, 40, 50], "d": ["flu", "hiv", "flu", "hiv"]})
    >>> r = Bucketized(truth.assign(g=[1, 1, 2, 2]), ["age"], "d", "g")
    >>> release_utility(r, truth, queries=10)["mean_group_size"]
    2.0
    """
    error = count_query_error(release, truth, queries=queries, seed=seed)
    fake = int(release.is_counterfeit.sum())
    return {
        "query_error": error,
        "counterfeit_share": fake / release.n_records,
        "mean_group_size": release.n_records / release.n_groups,
        "groups": int(release.n_groups),
        "records": int(release.n_records),
    }
