"""r-robustness under QI-based prior knowledge (Wong et al., ICDM 2010).

An adversary knows a QI-based prior ``p(s : x)``: for every *signature* s (values of an
attribute set such as ``{Gender}``) the probability that a person with it has sensitive
value x (Table IV). In an A-group of N tuples the possible worlds are the assignments of
the group's multiset of values to its tuples, each weighted by the product of the tuples'
priors (Eq. 1-2); ``p(t : x)`` sums the worlds giving t the value x (Eq. 3). A release is
*r-robust* when no ``p(t : x)`` exceeds ``1/r``.

* :class:`Prior` holds one attribute set's distribution (a table, or estimated from data).
* :func:`exact_posterior` computes every ``p(t : x)`` of a group exactly.
* :func:`delta_ceil`, :func:`delta_max`, :func:`satisfies_delta_bound` are the Delta bounding
  condition (Definitions 7-8, Theorem 1, Corollary 1) with m-uniqueness checked.
* :func:`robust_anonymize` makes a release whose groups all meet it (Section IV, bottom-up)
  and :func:`query_error` measures its information loss as count-query error.
* :func:`compare_posteriors` puts the possible-world posterior next to the maximum-entropy
  one of the same release with the prior as (soft) knowledge.

This module holds the Delta bound, the paper's example, :func:`robustness_table` and
:func:`query_error`. The prior and its input checks are in
:mod:`~maxent_privacy.adversaries.prior`, the possible-world posteriors (:func:`permanent`,
:func:`exact_posterior`, :func:`compare_posteriors`) in
:mod:`~maxent_privacy.adversaries.worlds` and the anonymizer in
:mod:`~maxent_privacy.anonymize.robust`; every public name but the anonymizer is
re-exported here (``robust_anonymize`` still imports from here, deprecated).

What Theorem 1 guarantees (checked, see ``tests/test_robustness.py``): for an adversary who
knows, for the value x, only ``p(s : x)`` and ``1 - p(s : x)`` (Table IV's form,
:meth:`Prior.binary`), an m-unique group with ``Delta_max <= Delta_ceil`` has
``p(t : x) <= 1/r``, and the bound is tight. For a prior that names several values at once
it can fail: a 3-tuple group meeting the bound for all its values at r = 2 has a posterior of
0.604 (``test_theorem1_fails_for_a_joint_prior``), and on Adult a few groups of three do
(0.517). :func:`robust_anonymize` therefore also checks every group's exact posteriors by
default (``verify=True``); ``verify=False`` is the paper's Delta-only method.

>>> from maxent_privacy.robustness import exact_posterior, wong2010_example
>>> frame, prior = wong2010_example()
>>> l1 = frame[frame["GID"] == "L1"].set_index("Name")
>>> round(float(exact_posterior(l1, prior).loc["Alan", "Lung Cancer"]), 4)   # Example 1
0.9736
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from .._validation import (
    KnowledgeArgumentError,
    ReleaseArgumentError,
    check_integer,
    check_probability,
    check_threshold,
)
from ..errors import KnowledgeError, ReleaseError
from ..releases.bucketized import Bucketized
from .prior import Prior, as_priors, check_group, check_int, check_r, scalar
from .worlds import (
    MAX_STATES,
    compare_posteriors,
    exact_posterior,
    exact_probs,
    match_marginals,
    monte_carlo,
    permanent,
    states,
)

__all__ = [
    "MAX_STATES",
    "Prior",
    "compare_posteriors",
    "delta_ceil",
    "delta_max",
    "delta_report",
    "exact_posterior",
    "permanent",
    "query_error",
    "robustness_table",
    "satisfies_delta_bound",
    "wong2010_example",
]


# --------------------------------------------------------------------- the Delta bound
def delta_ceil(N: int, r, f_max):
    """Delta_ceil of Definition 8: ``(N - r) f / (f (r - 1) / (1 - f) + N - 1)``.

    The largest deviation of the priors of x in a group of N tuples that keeps every
    ``p(t : x) <= 1/r`` (Theorem 1). Needs ``r > 1`` and ``N >= r``; 0 when ``f_max`` is
    0 or 1. Fractions in, Fraction out. Increasing in N (Theorem 2).

    >>> round(delta_ceil(3, 2, 0.1), 4)      # Example 2 / Table V
    0.0474
    """
    check_r(r)
    N = check_integer(N, "the group size N", minimum=1, error=ReleaseArgumentError)
    if N < r:
        raise ReleaseArgumentError(f"group size N={N} is below r={r} (Definition 7 needs N >= r)")
    check_probability(f_max, "f_max", error=KnowledgeArgumentError)  # a Fraction stays one
    if f_max == 1:
        return f_max * 0
    return (N - r) * f_max / (f_max * (r - 1) / (1 - f_max) + (N - 1))


def delta_max(group: pd.DataFrame, prior: Prior, x):
    """Delta_max of Definition 8 for value x: ``max_v f_v - min_v f_v``, f_v = p(t_v.s : x).

    >>> frame, prior = wong2010_example()
    >>> round(delta_max(frame[frame["GID"] == "L1"], prior, "Lung Cancer"), 4)
    0.097
    """
    if not isinstance(prior, Prior):
        raise KnowledgeError(f"delta_max needs a Prior, got {type(prior).__name__}")
    check_group(group, [prior], "delta_max")
    try:
        hash(x)
    except TypeError:
        raise KnowledgeError(f"x must be one sensitive value, got {type(x).__name__}") from None
    if x not in set(group[prior.sa]):
        raise ReleaseError(f"value {x!r} does not occur in the group")
    f = prior.weights(group, [x])[:, 0]
    return scalar(max(f) - min(f))


def delta_report(group: pd.DataFrame, prior, r) -> pd.DataFrame:
    """Per attribute set and value of the group: f_max, Delta_max, Delta_ceil and whether
    the Delta bounding condition holds (``ok``).

    A value passes when it occurs once (m-uniqueness), ``N >= r`` and
    ``Delta_max <= Delta_ceil(N, r, f_max)``; ``delta_ceil`` is NaN when ``N < r``.
    A group without rows is not an A-group (Definition 5: N tuples, Definition 7: N >= r):
    ReleaseError, as for a missing sensitive value in it.

    >>> frame, prior = wong2010_example()
    >>> delta_report(frame[frame["GID"] == "L1"], prior, 2)["ok"].tolist()
    [False, False]
    """
    check_r(r)
    priors = as_priors(prior)
    check_group(group, priors, "delta_report")
    n = len(group)
    rows = []
    for pr in priors:
        counts = group[pr.sa].value_counts(sort=False)
        values = sorted(counts.index.tolist(), key=str)
        w = pr.weights(group, values)
        for j, x in enumerate(values):
            fm, dm = max(w[:, j]), max(w[:, j]) - min(w[:, j])
            ceil = delta_ceil(n, r, fm) if n >= r else float("nan")
            ok = bool(counts[x] == 1 and n >= r and dm <= ceil)
            rows.append((", ".join(pr.attributes), x, int(counts[x]), fm, dm, ceil, ok))
    return pd.DataFrame(
        rows, columns=["attributes", "value", "count", "f_max", "delta_max", "delta_ceil", "ok"]
    )


def satisfies_delta_bound(group: pd.DataFrame, prior, r) -> bool:
    """Whether the group meets the Delta bounding condition for every attribute set of
    ``prior`` (a Prior or a list): m-unique, ``N >= r`` and Corollary 1 for each value.
    An empty group is a ReleaseError (it has no tuple to bound), not a vacuous True.

    >>> frame, prior = wong2010_example()
    >>> satisfies_delta_bound(frame[frame["GID"] == "L1"], prior, 1.5)   # Alan vs Betty
    False
    >>> satisfies_delta_bound(frame[frame["GID"] == "L2"], prior, 2)     # two women
    True
    """
    return bool(delta_report(group, prior, r)["ok"].all())


# ------------------------------------------------------------------- the paper's example
def wong2010_example() -> tuple[pd.DataFrame, Prior]:
    """Tables I/III and IV of Wong et al. (ICDM 2010): four patients, two A-groups, and
    the prior on Gender (Lung Cancer vs the rest).

    Columns ``Name, Gender, Age, Disease, GID``; the release is
    ``Bucketized(frame, qi=["Gender", "Age"], sa="Disease", group="GID")``.

    >>> frame, prior = wong2010_example()
    >>> frame["GID"].tolist(), prior
    (['L1', 'L1', 'L2', 'L2'], Prior(Gender -> Disease: 2 signatures, 2 values, \
other='Not Lung Cancer'))
    """
    frame = pd.DataFrame(
        [
            ("Alan", "Male", 41, "Lung Cancer", "L1"),
            ("Betty", "Female", 42, "Hypertension", "L1"),
            ("Catherine", "Female", 63, "Flu", "L2"),
            ("Diana", "Female", 64, "HIV", "L2"),
        ],
        columns=["Name", "Gender", "Age", "Disease", "GID"],
    )
    table = pd.DataFrame(
        {"Lung Cancer": [0.1, 0.003], "Not Lung Cancer": [0.9, 0.997]},
        index=pd.Index(["Male", "Female"], name="Gender"),
    )
    return frame, Prior(table, sa="Disease", other="Not Lung Cancer")


# ----------------------------------------------------------------------- whole releases
def _binary_max(w_col: np.ndarray, count: int) -> float:
    """max_t p(t : x) when the adversary knows only p(s : x) (x occurs ``count`` times)."""
    w_col = np.asarray(w_col, dtype=float)
    n = len(w_col)
    if count == n:
        return 1.0
    if count == 1 and (w_col < 1).all():
        odds = w_col / (1 - w_col)
        total = odds.sum()
        if total > 0:
            return float(odds.max() / total)
    items = np.column_stack([w_col, 1 - w_col])
    marg = match_marginals(items, np.array([count, n - count]), exact=False)
    return float(marg[:, 0].max())


def robustness_table(
    release: Bucketized,
    prior,
    r,
    *,
    exact: bool = True,
    sample: int | None = None,
    seed=0,
    max_states: int = MAX_STATES,
) -> pd.DataFrame:
    """Per group of a release: size, whether it meets the Delta bound, and its worst
    exact posteriors.

    ``max_posterior`` is the largest ``p(t : x)`` of the group under the full prior (the
    maximum over the priors when several are given; a Monte-Carlo estimate for groups too
    large for the exact program); ``max_posterior_binary`` is the largest under the
    per-value priors of :meth:`Prior.binary` (what Theorem 1 bounds). ``exact=False``
    leaves both out. ``sample`` checks that many groups drawn with ``seed``. Groups above
    ``max_states`` states get a Monte-Carlo estimate (20,000 worlds) of the former.

    >>> from maxent_privacy import Bucketized
    >>> frame, prior = wong2010_example()
    >>> release = Bucketized(frame, qi=["Gender", "Age"], sa="Disease", group="GID")
    >>> table = robustness_table(release, prior, 2)
    >>> table["delta_bound"].to_dict(), table["max_posterior"].round(4).to_dict()
    ({'L1': False, 'L2': True}, {'L1': 0.9736, 'L2': 0.5})
    """
    if not isinstance(release, Bucketized):
        raise ReleaseError(
            f"robustness_table needs a Bucketized release, got {type(release).__name__}"
        )
    if release.counterfeits is not None and release.n_people < release.n_records:
        raise ReleaseError(
            f"robustness_table does not handle counterfeit records (column "
            f"{release.counterfeits!r}): the Delta bound of Wong et al. speaks of groups of "
            "real tuples; compare_posteriors and exact_posterior(counterfeits=...) do"
        )
    check_r(r)
    priors = as_priors(prior)
    for pr in priors:
        if pr.sa != release.sa:
            raise KnowledgeError(
                f"a prior speaks of {pr.sa!r}, the release's sensitive column is {release.sa!r}"
            )
    if sample is not None:
        sample = check_int(sample, "sample", 1)
    max_states = check_int(max_states, "max_states", 0)
    frame = release.frame
    ids = sorted(frame[release.group].unique().tolist(), key=str)
    if sample is not None and sample < len(ids):
        rng = np.random.default_rng(seed)
        pick = np.sort(rng.choice(len(ids), size=int(sample), replace=False))
        ids = [ids[i] for i in pick]
    positions = frame.groupby(release.group, sort=False).indices
    codes, domain = pd.factorize(frame[release.sa], sort=False)
    weights = [pr.weights(frame, list(domain), fractions=False) for pr in priors]
    rows = []
    for gid in ids:
        pos = positions[gid]
        present, counts = np.unique(codes[pos], return_counts=True)
        n = len(pos)
        ok = n >= r and bool((counts == 1).all())
        for w_all in weights:
            w = w_all[np.ix_(pos, present)]
            for j in range(len(present)):
                if not ok:
                    break
                f_max = float(w[:, j].max())
                ok = float(w[:, j].max() - w[:, j].min()) <= delta_ceil(n, r, f_max)
        row = {"size": n, "delta_bound": ok}
        if exact:
            full, binary = 0.0, 0.0
            for w_all in weights:
                w = w_all[np.ix_(pos, present)]
                if states(w, counts) <= max_states:
                    probs = exact_probs(w, counts, exact=False, max_states=max_states)
                else:
                    probs = monte_carlo(w, counts, 20_000, seed)[0]
                full = max(full, float(probs.max()))
                for j in range(len(present)):
                    binary = max(binary, _binary_max(w[:, j], int(counts[j])))
            row["max_posterior"] = full
            row["max_posterior_binary"] = binary
        rows.append(row)
    out = pd.DataFrame(rows, index=pd.Index(ids, name=release.group))
    return out


# ------------------------------------------------------------------- information loss
def query_error(
    release: Bucketized,
    *,
    queries: int = 1000,
    qd: int | None = None,
    selectivity: float = 0.05,
    seed=0,
) -> float:
    """Average relative error of random count queries answered from the release.

    The workload of Anatomy (Xiao and Tao, VLDB 2006), the information loss Wong et al.
    adopt: ``COUNT(*) WHERE A_1 in b_1 AND ... AND A_qd in b_qd AND S in b_s`` over ``qd``
    quasi-identifiers drawn at random (default ``min(3, len(qi))``) and the sensitive
    column; each ``b`` covers ``ceil(|domain| * selectivity ** (1 / (qd + 1)))`` values,
    a run of consecutive values for a numeric column and a random set otherwise. The
    release answers with ``sum over groups of count_QI(g) * count_S(g) / |g|``; the
    actual count comes from the release's rows, which hold each record's true value (as
    :func:`robust_anonymize` and :func:`~maxent_privacy.anonymize.anatomize` make them).
    Queries with actual count 0 are skipped. The same ``seed`` gives the same workload
    on releases of the same records. Counterfeit records (``Bucketized(...,
    counterfeits=...)``) count in ``count_S(g)`` and ``|g|`` (they are published) but in
    no actual count (they are no one).

    >>> from maxent_privacy import Bucketized
    >>> frame, _ = wong2010_example()
    >>> release = Bucketized(frame, qi=["Gender", "Age"], sa="Disease", group="GID")
    >>> query_error(release, queries=200, qd=1, selectivity=0.5) > 0
    True
    """
    if not isinstance(release, Bucketized):
        raise ReleaseError(f"query_error needs a Bucketized release, got {type(release).__name__}")
    queries = check_int(queries, "queries", 1)
    check_threshold(selectivity, "selectivity", error=ReleaseArgumentError)
    frame = release.frame
    real = ~release.is_counterfeit  # counterfeit records: published values, no one's QI
    people = release.people
    if qd is None:
        qd = min(3, len(release.qi))
    qd = check_integer(qd, "qd", minimum=1, maximum=len(release.qi), error=ReleaseArgumentError)
    rng = np.random.default_rng(seed)
    cols = release.qi + [release.sa]
    codes, sizes, numeric = {}, {}, {}
    for c in cols:
        column = frame[c] if c == release.sa else people[c]
        codes[c], uniq = pd.factorize(column, sort=True)
        sizes[c] = len(uniq)
        numeric[c] = pd.api.types.is_numeric_dtype(column)
    gid_all = pd.factorize(frame[release.group])[0]
    gid = gid_all[real]
    n_g = np.bincount(gid_all).astype(float)
    share = selectivity ** (1 / (qd + 1))
    errors = []
    for _ in range(queries):
        attrs = [release.qi[i] for i in rng.choice(len(release.qi), size=qd, replace=False)]
        hit = {}
        for c in attrs + [release.sa]:
            k = min(sizes[c], math.ceil(sizes[c] * share))
            if numeric[c]:
                start = int(rng.integers(0, sizes[c] - k + 1))
                chosen = np.zeros(sizes[c], dtype=bool)
                chosen[start : start + k] = True
            else:
                chosen = np.zeros(sizes[c], dtype=bool)
                chosen[rng.choice(sizes[c], size=k, replace=False)] = True
            hit[c] = chosen[codes[c]]
        q_hit = np.logical_and.reduce([hit[c] for c in attrs])
        s_all = hit[release.sa]  # published values (counterfeits too)
        s_hit = s_all[real]
        actual = int((q_hit & s_hit).sum())
        if actual == 0:
            continue
        q_g, s_g = np.bincount(gid, q_hit, len(n_g)), np.bincount(gid_all, s_all, len(n_g))
        est = (q_g * s_g / n_g).sum()
        errors.append(abs(est - actual) / actual)
    if not errors:
        raise ReleaseArgumentError(
            f"every query had an actual count of 0 at selectivity={selectivity!r}; raise it"
        )
    return float(np.mean(errors))


def __getattr__(name: str):
    """``robust_anonymize``, the anonymizer, is :func:`maxent_privacy.anonymize.robust_anonymize`
    (a publisher's tool, in the wing after this one); the old name still imports here, with a
    ``DeprecationWarning``, and is imported only when asked for."""
    if name != "robust_anonymize":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ..anonymize.robust import robust_anonymize

    warnings.warn(
        "maxent_privacy.robustness.robust_anonymize is deprecated: "
        "import it from maxent_privacy.anonymize",
        DeprecationWarning,
        stacklevel=2,
    )
    return robust_anonymize
