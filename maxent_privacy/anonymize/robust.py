"""The r-robust anonymizer of Wong et al. (ICDM 2010, Section IV, bottom-up).

:func:`robust_anonymize` bucketizes a table into m-unique groups of at least r records
that meet the Delta bounding condition (Definitions 7-8, Corollary 1) for every QI-based
prior given, and by default (``verify=True``) also have exact possible-world posteriors of
at most 1/r. The priors and the bound are :mod:`~maxent_privacy.adversaries.prior` and
:mod:`~maxent_privacy.adversaries.robustness`; the exact posteriors
:mod:`~maxent_privacy.adversaries.worlds`.

>>> import pandas as pd
>>> from maxent_privacy.robustness import Prior
>>> frame = pd.DataFrame({"sex": list("MMFF"), "disease": ["Flu", "HIV", "Flu", "HIV"]})
>>> prior = Prior.estimate(frame, ["sex"], "disease")
>>> robust_anonymize(frame, ["sex"], "disease", r=2, prior=prior).n_groups
2
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._validation import ArgumentError, check_integer, check_number, check_seed, shown
from ..adversaries.prior import Prior, as_priors
from ..adversaries.worlds import MAX_STATES, exact_probs, monte_carlo, states
from ..errors import KnowledgeError, ReleaseError
from ..releases.bucketized import Bucketized, check_input_table
from .contract import keyword_only, no_exemptions, release_arguments

__all__ = ["robust_anonymize"]


def _ceil_array(n, r, f) -> np.ndarray:
    """Vectorized Delta_ceil (any N; -inf where N < r)."""
    n = np.asarray(n, dtype=float)
    f = np.asarray(f, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (n - r) * f / (f * (r - 1) / (1 - f) + (n - 1))
    out = np.where(f >= 1, 0.0, out)
    out = np.where(f <= 0, 0.0, out)
    return np.where(n < r, -np.inf, out)


def _merged_ratio(size, lo, hi, mask, r) -> np.ndarray:
    """Largest Delta_max / Delta_ceil over values present and priors (<= 1: passes)."""
    ceil = _ceil_array(np.maximum(size, r)[None, :, None], r, hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(hi - lo > 0, (hi - lo) / ceil, 0.0)
    return np.where(mask[None], ratio, 0.0).max(axis=(0, 2))


def _merged_slack(size, lo, hi, mask, r) -> np.ndarray:
    """Largest Delta_max - Delta_ceil over values present and priors (<= 0: passes)."""
    ceil = _ceil_array(size[None, :, None], r, hi)
    gap = np.where(mask[None], hi - lo - ceil, -np.inf)
    return gap.max(axis=(0, 2))


def _fold_max_states(keywords: dict, max_states) -> None:
    """The deprecated ``max_states=n``: ``verify=n`` (unless ``verify=False``)."""
    with release_arguments():
        max_states = check_integer(max_states, "max_states", minimum=0)
    if keywords.get("verify", True) is not False:
        keywords["verify"] = max_states


@keyword_only(
    "frame", "qi", "sa", "prior", "r",
    folded={"max_states": ("give the number of states as verify=n", _fold_max_states)},
)  # fmt: skip
def robust_anonymize(
    frame: pd.DataFrame,
    qi: Sequence[str],
    sa: str,
    *,
    r,
    prior=None,
    group: str = "group",
    person: str | None = None,
    seed=0,
    nonsensitive=None,
    verify: bool | int = True,
) -> Bucketized:
    """Bucketize ``frame`` so that every group meets the Delta bounding condition.

    The bottom-up approach of Section IV, for ``prior`` (a Prior or a list, one per
    attribute set; their attributes must be quasi-identifiers):

    1. Records with the same signature in every attribute set have equal priors, so any
       m-unique group of at least r of them has Delta_max = 0 and passes. Within each
       such class the records are dealt Anatomy-style (one from each of the ceil(r)
       largest piles of a sensitive value, piles shuffled with ``seed``) into groups of
       ceil(r); the rest start as groups of one.
    2. While a group violates the condition it is merged with another group holding none
       of its values: the smallest merged group that passes (ties: a violating partner,
       then the most slack). A group with no such partner waits while other merges go
       on; after a round with no passing merge, one waiting group takes the merge with
       the least ratio Delta_max / Delta_ceil. A violating group that no group
       can take is dissolved, its records joining passing groups that stay passing; a
       record no group can take is an error naming it. This is a heuristic: an error
       does not prove that no r-robust grouping exists.
    3. With ``verify=True`` (the default) each group's exact posteriors under every prior
       (the joint prior, not per-value; see the module note on Theorem 1) are computed and
       groups above 1/r are merged further the same way (exactly for groups of at most
       ``MAX_STATES`` possible-world states, by a Monte-Carlo estimate above; a whole
       number ``verify=n`` sets that limit to ``n``). ``verify=False`` stops after
       step 2: the paper's method, guaranteed only against the per-value adversary.

    Every group is m-unique (each sensitive value at most once, as in Anatomy) and has
    at least r records, so no value may occur in more than N / ceil(r) of the N records.
    Returns a Bucketized release with columns ``qi + [sa, group]`` (and ``person`` if
    given; groups numbered 1..m by their first record; rows sorted by group, then
    position in ``frame``).

    ``prior`` defaults to the empirical prior over all of ``qi``
    (``Prior.estimate(frame, qi, sa)``); ``nonsensitive`` must be None (every group is
    m-unique). Everything after ``sa`` is keyword-only; the old positional
    ``(frame, qi, sa, prior, r)`` still works, with a ``DeprecationWarning``.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"sex": list("MMMMFFFF"), "disease": ["Flu", "HIV", "Cold",
    ...                       "Flu", "Flu", "HIV", "Cold", "HIV"]})
    >>> prior = Prior.estimate(frame, ["sex"], "disease")
    >>> release = robust_anonymize(frame, ["sex"], "disease", r=2, prior=prior)
    >>> from maxent_privacy.robustness import robustness_table
    >>> bool(robustness_table(release, prior, 2)["delta_bound"].all())
    True
    """
    with release_arguments():
        qi, priors = _check_robust_input(frame, qi, sa, group, person, prior, r)
        verify, max_states = _check_verify(verify)
        seed = check_seed(seed)
    no_exemptions(nonsensitive, "robust_anonymize", "every group holds each value once")
    n = len(frame)
    q = math.ceil(float(r))
    codes, uniques = pd.factorize(frame[sa], sort=False)
    uniques = list(uniques)
    _check_m_unique_possible(codes, uniques, q, r)
    weights = np.stack([pr.weights(frame, uniques, fractions=False) for pr in priors])  # K n D
    rng = np.random.default_rng(seed)

    # 1. Anatomy-style groups of ceil(r) inside each class of equal signatures
    members = _signature_groups(frame, priors, codes, q, rng)

    # 2. merge violating groups
    groups = _Groups(members, codes, weights, uniques, r)
    order = rng.permutation(len(members))
    groups.settle([int(g) for g in order if not groups.passing[g]][::-1], lambda g: True)

    # 3. merge further the groups whose exact posteriors exceed 1/r
    if verify:
        _merge_until_exact(groups, _exact_check(groups, weights, codes, r, max_states, seed))

    # number groups by their first record; rows sorted by group, then position
    group_of = groups.numbered(n)
    rows = np.lexsort((np.arange(n), group_of))
    out = frame.iloc[rows][qi + [sa] + ([person] if person is not None else [])].copy()
    out[group] = group_of[rows]
    return Bucketized(out, qi=qi, sa=sa, group=group, person=person)


def _check_verify(verify) -> tuple[bool, int]:
    """``verify`` (True/False or a number of states) as ``(verify, max_states)``."""
    if isinstance(verify, (bool, np.bool_)):
        return bool(verify), MAX_STATES
    try:
        return True, check_integer(verify, "verify", minimum=0)
    except ArgumentError:
        raise ArgumentError(
            f"verify must be True, False or a whole number of states >= 0, got {shown(verify)}"
        ) from None


def _check_robust_input(frame, qi, sa, group, person, prior, r) -> tuple:
    """Check the arguments of :func:`robust_anonymize`: ``(qi, priors)``."""
    try:
        above = check_number(r, "r") > 1
    except ArgumentError:
        above = False
    if not above:
        raise ArgumentError(f"r must be a number above 1, got {shown(r)}")
    qi = check_input_table(frame, qi, sa, group, person, "robust_anonymize")
    if len(frame) == 0:
        raise ReleaseError("robust_anonymize: the table has no rows")
    priors = as_priors(Prior.estimate(frame, qi, sa) if prior is None else prior)
    for pr in priors:
        if pr.sa != sa:
            raise KnowledgeError(f"a prior speaks of {pr.sa!r}, not of the sensitive {sa!r}")
        for a in pr.attributes:
            if a not in qi:
                raise KnowledgeError(f"prior attribute {a!r} is not a quasi-identifier")
    return qi, priors


def _check_m_unique_possible(codes: np.ndarray, uniques: list, q: int, r) -> None:
    """Raise if a sensitive value occurs in more than n / ceil(r) of the n records."""
    n = len(codes)
    counts = np.bincount(codes, minlength=len(uniques))
    worst = int(np.argmax(counts))
    if counts[worst] * q > n:
        raise ReleaseError(
            f"{r}-robust m-unique groups are impossible: sensitive value {uniques[worst]!r} "
            f"occurs in {counts[worst]:,} of {n:,} records, more than 1/{q}"
        )


def _signature_groups(
    frame: pd.DataFrame, priors: list[Prior], codes: np.ndarray, q: int, rng
) -> list[list[int]]:
    """Step 1: m-unique groups of ``q`` records of equal signatures, the rest alone."""
    attrs = list(dict.fromkeys(a for pr in priors for a in pr.attributes))
    cls = frame.groupby(attrs, sort=True, dropna=False).ngroup().to_numpy()
    members: list[list[int]] = []
    by_class = np.argsort(cls, kind="stable")
    for rows in np.split(by_class, np.flatnonzero(np.diff(cls[by_class])) + 1):
        piles = {}
        for v in np.unique(codes[rows]):
            piles[int(v)] = list(rng.permutation(rows[codes[rows] == v]))
        while sum(1 for p in piles.values() if p) >= q:
            top = sorted((v for v in piles if piles[v]), key=lambda v: (-len(piles[v]), v))[:q]
            members.append([int(piles[v].pop()) for v in top])
        for p in piles.values():
            members.extend([[int(t)] for t in p])
    return members


class _Groups:
    """The groups of :func:`robust_anonymize` while they are merged (step 2).

    Group ``g`` holds the records ``members[g]``; ``size[g]`` is their number,
    ``mask[g, v]`` whether value ``v`` occurs in it, and ``lo[:, g, v]`` / ``hi[:, g, v]``
    the smallest / largest prior weight of ``v`` over its records (one row per prior).
    A group merged into another or dissolved is not ``alive`` and has no members.
    ``passing[g]``: the group has at least r records and meets the Delta bound.
    Groups only grow, and every alive group stays m-unique.
    """

    def __init__(self, members: list[list[int]], codes, weights, uniques: list, r):
        self.members = members
        self.codes, self.weights, self.uniques, self.r = codes, weights, uniques, r
        n_g, n_d = len(members), len(uniques)
        self.size = np.array([len(m) for m in members], dtype=float)
        self.mask = np.zeros((n_g, n_d), dtype=bool)
        self.lo = np.full((len(weights), n_g, n_d), np.inf)
        self.hi = np.full((len(weights), n_g, n_d), -np.inf)
        for g, mem in enumerate(members):
            self.mask[g, codes[mem]] = True
            self.lo[:, g] = weights[:, mem].min(axis=1)
            self.hi[:, g] = weights[:, mem].max(axis=1)
        self.alive = np.ones(n_g, dtype=bool)
        slack = _merged_slack(self.size, self.lo, self.hi, self.mask, r)
        self.passing = (self.size >= r) & (slack <= 0)

    def merge_into(self, g: int, h: int) -> None:
        """Move the records of group ``h`` into group ``g``; ``h`` dies."""
        self.members[g] = self.members[g] + self.members[h]
        self.members[h] = []
        self.size[g] += self.size[h]
        self.mask[g] |= self.mask[h]
        self.lo[:, g] = np.minimum(self.lo[:, g], self.lo[:, h])
        self.hi[:, g] = np.maximum(self.hi[:, g], self.hi[:, h])
        self.alive[h] = False
        one = slice(g, g + 1)
        s = _merged_slack(self.size[one], self.lo[:, one], self.hi[:, one], self.mask[one], self.r)
        self.passing[g] = self.size[g] >= self.r and s[0] <= 0
        self.passing[h] = False

    def dissolve(self, g: int) -> None:
        """Move each record of group ``g`` into a passing group that stays passing; ``g`` dies."""
        for t in self.members[g]:
            v = self.codes[t]
            h, lo, hi = self._home(t, g)
            self.members[h].append(t)
            self.size[h] += 1
            self.mask[h, v] = True
            self.lo[:, h], self.hi[:, h] = lo, hi
        self.members[g] = []
        self.alive[g] = False
        self.passing[g] = False

    def _home(self, t: int, g: int) -> tuple[int, np.ndarray, np.ndarray]:
        """The passing group (not ``g``) record ``t`` joins, and its lo and hi with ``t``."""
        v = self.codes[t]
        cand = np.flatnonzero(self.alive & self.passing & ~self.mask[:, v])
        cand = cand[cand != g]
        m_size = self.size[cand] + 1
        w_t = self.weights[:, t][:, None, :]
        m_lo = np.minimum(self.lo[:, cand], w_t)
        m_hi = np.maximum(self.hi[:, cand], w_t)
        m_mask = self.mask[cand].copy()
        m_mask[:, v] = True
        m_slack = _merged_slack(m_size, m_lo, m_hi, m_mask, self.r)
        ok = np.flatnonzero(m_slack <= 0)
        if len(ok) == 0:
            raise ReleaseError(
                f"no {self.r}-robust group can take the record at position {t} "
                f"(sensitive value {self.uniques[v]!r}); try a smaller r, coarser or smoothed "
                "priors"
            )
        j = int(ok[np.lexsort((m_slack[ok], m_size[ok]))[0]])
        return int(cand[j]), m_lo[:, j], m_hi[:, j]

    def settle(self, queue: list[int], extra_ok) -> None:
        """Merge the groups of ``queue`` (last first) until each passes and ``extra_ok``."""
        deferred: list[int] = []
        progress, force = False, False
        while queue or deferred:
            if not queue:
                force = not progress  # a full round without a passing merge
                queue, deferred, progress = deferred[::-1], [], False
            g = queue.pop()
            if not self.alive[g] or (self.passing[g] and extra_ok(g)):
                continue
            cand = np.flatnonzero(self.alive & ~(self.mask & self.mask[g]).any(axis=1))
            cand = cand[cand != g]
            if len(cand) == 0:
                self.dissolve(g)
                progress = True
                continue
            best, forced = self._partner(g, cand, force)
            if best is None:
                deferred.append(g)  # other merges may make a partner for it
                continue
            if forced:
                force = False
            self.merge_into(g, best)
            progress = True
            queue.append(g)

    def _partner(self, g: int, cand: np.ndarray, force: bool) -> tuple[int | None, bool]:
        """The group of ``cand`` to merge ``g`` with (None: wait), and whether it is forced."""
        r = self.r
        m_size = self.size[g] + self.size[cand]
        m_lo = np.minimum(self.lo[:, g : g + 1], self.lo[:, cand])
        m_hi = np.maximum(self.hi[:, g : g + 1], self.hi[:, cand])
        m_mask = self.mask[g] | self.mask[cand]
        m_slack = _merged_slack(m_size, m_lo, m_hi, m_mask, r)
        ok = (m_size >= r) & (m_slack <= 0)
        # lexsort: the last key is the primary one
        if ok.any():  # the smallest that passes; ties: a violating partner, most slack
            keys = (m_slack, self.passing[cand], m_size, ~ok)
        elif not force:
            return None, False
        else:  # forced: the least Delta_max / Delta_ceil
            ratio = _merged_ratio(m_size, m_lo, m_hi, m_mask, r)
            keys = (m_size, self.passing[cand], ratio)
        return int(cand[np.lexsort(keys)[0]]), not ok.any()

    def numbered(self, n: int) -> np.ndarray:
        """Group of each of the ``n`` records, groups numbered 1.. by their first record."""
        group_of = np.zeros(n, dtype=np.int64)
        firsts = sorted((min(m), g) for g, m in enumerate(self.members) if self.alive[g] and m)
        for k, (_, g) in enumerate(firsts, start=1):
            group_of[self.members[g]] = k
        return group_of


def _merge_until_exact(groups: _Groups, exact_ok) -> None:
    """Step 3: merge the groups failing ``exact_ok`` further until every alive one passes."""
    while True:
        bad = [g for g in np.flatnonzero(groups.alive) if not exact_ok(int(g))]
        if not bad:
            break
        for g in bad:
            groups.passing[g] = False
        groups.settle([int(g) for g in bad][::-1], exact_ok)


def _exact_check(groups: _Groups, weights, codes, r, max_states: int, seed):
    """Step 3's test: ``exact_ok(g)``, whether group g's exact posteriors are <= 1/r (cached)."""
    limit = 1 / float(r)
    checked: dict[tuple[int, int], bool] = {}

    def exact_ok(g: int) -> bool:
        key = (g, len(groups.members[g]))
        if key not in checked:
            mem = np.asarray(groups.members[g])
            ones = np.ones(len(mem), dtype=np.int64)  # m-unique: each value once
            worst = 0.0
            for w_all in weights:
                w = w_all[np.ix_(mem, codes[mem])]
                if states(w, ones) <= max_states:
                    probs = exact_probs(w, ones, exact=False, max_states=max_states)
                else:  # pragma: no cover - groups this large need > 22 values
                    probs = monte_carlo(w, ones, 20_000, seed)[0]
                worst = max(worst, float(probs.max()))
            checked[key] = worst <= limit + 1e-12
        return checked[key]

    return exact_ok
