"""Make a bucketized release: Anatomy (Xiao and Tao, VLDB 2006).

:func:`anatomize` partitions a table into groups in which every sensitive value occurs
at most once (l-diversity with groups of l or l + 1 records) and returns the
:class:`~maxent_privacy.Bucketized` release. :func:`check_l_diversity` checks a release.

>>> import pandas as pd
>>> from maxent_privacy.anonymize import anatomize, check_l_diversity
>>> frame = pd.DataFrame({"zip": [1, 2, 3, 4, 5, 6],
...                       "disease": ["Flu", "Flu", "HIV", "HIV", "Cold", "Cold"]})
>>> release = anatomize(frame, qi=["zip"], sa="disease", l=2)
>>> release.n_groups, bool(check_l_diversity(release, 2).all())
(3, True)
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .._validation import check_integer, check_seed
from ..errors import ReleaseError
from ..releases.bucketized import Bucketized, ReleaseBase, check_input_table
from ..releases.checks import rng_of
from .contract import keyword_only, release_arguments

__all__ = ["anatomize", "check_l_diversity"]


def _as_values(values) -> list:
    if values is None:
        return []
    if isinstance(values, str) or not isinstance(values, Iterable):
        values = [values]
    values = list(values)
    for v in values:
        try:
            hash(v)
        except TypeError:
            raise ReleaseError(
                f"nonsensitive values must be single values, got {type(v).__name__} {v!r:.40}"
            ) from None
    return values


@keyword_only("frame", "qi", "sa", "l", "seed", "nonsensitive", "group", "person")
def anatomize(
    frame: pd.DataFrame,
    qi: Sequence[str],
    sa: str,
    *,
    l: int,  # noqa: E741
    group: str = "group",
    person: str | None = None,
    seed=0,
    nonsensitive: Iterable | None = None,
) -> Bucketized:
    """Bucketize ``frame`` with Anatomy so that every group is l-diverse.

    ``person`` names a pseudonym column to keep in the release (to pool re-releases).

    The records are hashed into one pile per sensitive value, each pile shuffled with
    ``numpy.random.default_rng(seed)``. While at least ``l`` piles are non-empty, a new
    group takes one record from each of the ``l`` largest piles (ties broken by the
    value, compared as ``str``). The at most ``l - 1`` leftover records each join an
    existing group that does not hold their sensitive value (the first such group in a
    seeded order, preferring groups that have not received a leftover yet). Every group
    thus has ``l`` to ``2l - 1`` records (``l`` or ``l + 1`` unless there are fewer
    groups than leftovers) and holds each sensitive value at most once.

    This is possible only when no sensitive value occurs in more than ``N / l`` of the
    ``N`` records; otherwise :class:`~maxent_privacy.ReleaseError` names the value.

    ``nonsensitive`` lists values left out of the diversity requirement (as in Du, Teng
    and Zhu 2008, Sect. 7, after Machanavajjhala et al.): their records are wildcards,
    dealt round-robin into ``l`` extra piles, so a group may hold several of them while
    each remaining (sensitive) value still occurs at most once per group. The
    ``N / l`` bound is then checked on the sensitive values only.

    Parameters
    ----------
    frame : the microdata, one row per record.
    qi : quasi-identifier columns (published exactly).
    sa : the sensitive column.
    l : diversity parameter, an integer of at least 2.
    seed : seed of ``numpy.random.default_rng``; the release is a function of it.
    nonsensitive : values of ``sa`` exempt from the requirement (each must occur).
    group : name of the new group column (ints 1..m, in order of creation).
    person : a pseudonym column to keep (None: none).

    Everything after ``sa`` is keyword-only (the old positional order
    ``(frame, qi, sa, l, seed, nonsensitive, group, person)`` still works, with a
    ``DeprecationWarning``); a bad ``l`` or ``seed`` is an
    :class:`~maxent_privacy._validation.ArgumentError`.

    Returns
    -------
    Bucketized over the rows of ``frame`` (original index kept, rows sorted by group
    and then by their position in ``frame``), with columns ``qi + [sa, group]``.
    """
    with release_arguments():
        l = check_integer(l, "l", minimum=2)  # noqa: E741
        seed = check_seed(seed)
    qi = check_input_table(frame, qi, sa, group, person, "anatomize")
    _check_anatomy_table(frame, sa, l)
    codes, uniques = pd.factorize(frame[sa], sort=False)
    uniques = list(uniques)
    counts = np.bincount(codes, minlength=len(uniques))
    # rank of each distinct value in str order: the deterministic tie-breaker
    order = sorted(range(len(uniques)), key=lambda i: (str(uniques[i]), i))
    exempt = _exempt_codes(nonsensitive, uniques, sa)
    _check_eligible(counts, uniques, order, exempt, l)

    rng = rng_of(seed)
    piles, pile_value = _make_piles(codes, counts, order, exempt, l, rng)
    group_of, taken, m = _deal_groups(piles, l, len(frame))
    _place_leftovers(piles, pile_value, taken, group_of, m, rng, uniques)
    return _bucketized(frame, group_of, qi, sa, group, person)


def _check_anatomy_table(frame: pd.DataFrame, sa: str, l: int) -> None:  # noqa: E741
    """Raise unless ``frame`` has at least ``l`` records and no missing sensitive value."""
    n = len(frame)
    if n < l:
        raise ReleaseError(f"{l}-diversity needs at least {l} records, the table has {n}")
    missing = frame[sa].isna().to_numpy()
    if missing.any():
        row = frame.index[int(np.argmax(missing))]
        raise ReleaseError(
            f"sensitive column {sa!r} has a missing value (row {row!r}); "
            "drop or fill such rows first"
        )


def _exempt_codes(nonsensitive, uniques: list, sa: str) -> set[int]:
    """Codes of the ``nonsensitive`` values; each must occur in the sensitive column."""
    present = {v: i for i, v in enumerate(uniques)}
    exempt: set[int] = set()
    for v in _as_values(nonsensitive):
        if v not in present:
            raise ReleaseError(
                f"nonsensitive value {v!r} does not occur in sensitive column {sa!r}"
            )
        exempt.add(present[v])
    return exempt


def _check_eligible(
    counts: np.ndarray,
    uniques: list,
    order: list[int],
    exempt: set[int],
    l: int,  # noqa: E741
) -> None:
    """Raise, naming the values, if a sensitive value occurs in more than n / l records."""
    n = int(counts.sum())
    rank_of = {i: r for r, i in enumerate(order)}
    worst = max(
        (i for i in range(len(uniques)) if i not in exempt),
        key=lambda i: (counts[i], -rank_of[i]),
        default=None,
    )
    if worst is None or counts[worst] * l <= n:
        return
    c = int(counts[worst])
    others = sorted(
        (i for i in range(len(uniques)) if i not in exempt and i != worst and counts[i] * l > n),
        key=lambda i: (-counts[i], rank_of[i]),
    )
    also, pronoun = "", "it"
    if others:
        shown = ", ".join(repr(uniques[i]) for i in others[:3])
        rest = f" and {len(others) - 3} more" if len(others) > 3 else ""
        also = f" (so {'does' if len(others) == 1 else 'do'} {shown}{rest})"
        pronoun = "them"
    raise ReleaseError(
        f"{l}-diversity is unattainable: sensitive value {uniques[worst]!r} occurs in "
        f"{c:,} of {n:,} records ({100 * c / n:.1f}%), more than 1/{l}{also}; "
        f"name {pronoun} in nonsensitive=[...] to leave {pronoun} out of the requirement"
    )


def _make_piles(
    codes: np.ndarray,
    counts: np.ndarray,
    order: list[int],
    exempt: set[int],
    l: int,  # noqa: E741
    rng: np.random.Generator,
) -> tuple[list[np.ndarray], list[int | None]]:
    """Shuffled piles of positions: one per sensitive value, then ``l`` wildcard piles."""
    by_code = np.argsort(codes, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)])
    piles: list[np.ndarray] = []
    pile_value: list[int | None] = []  # code of the pile's sensitive value, None = wildcard
    wildcard_parts = []
    for i in order:
        pos = rng.permutation(by_code[starts[i] : starts[i + 1]])
        if i in exempt:
            wildcard_parts.append(pos)
        else:
            piles.append(pos)
            pile_value.append(i)
    if wildcard_parts:
        pool = rng.permutation(np.concatenate(wildcard_parts))
        for j in range(l):
            if len(pool[j::l]):
                piles.append(pool[j::l])
                pile_value.append(None)
    return piles, pile_value


def _deal_groups(
    piles: list[np.ndarray],
    l: int,  # noqa: E741
    n: int,
) -> tuple[np.ndarray, list[int], int]:
    """Greedy groups of one record from each of the ``l`` largest piles: (group_of, taken, m)."""
    group_of = np.zeros(n, dtype=np.int64)
    taken = [0] * len(piles)
    heap = [(-len(p), k) for k, p in enumerate(piles)]  # ties: value in str order
    heapq.heapify(heap)
    m = 0
    while len(heap) >= l:
        picked = [heapq.heappop(heap) for _ in range(l)]
        m += 1
        for neg, k in picked:
            group_of[piles[k][taken[k]]] = m
            taken[k] += 1
            if neg + 1 < 0:
                heapq.heappush(heap, (neg + 1, k))
    return group_of, taken, m


def _place_leftovers(
    piles: list[np.ndarray],
    pile_value: list[int | None],
    taken: list[int],
    group_of: np.ndarray,
    m: int,
    rng: np.random.Generator,
    uniques: list,
) -> None:
    """Put each record left in a pile into a group without its sensitive value (in place)."""
    leftovers = [
        (k, int(piles[k][t])) for k in range(len(piles)) for t in range(taken[k], len(piles[k]))
    ]
    if not leftovers:
        return
    seeded = rng.permutation(np.arange(1, m + 1)).tolist()
    received: set[int] = set()
    for k, pos in leftovers:
        v = pile_value[k]
        if v is None:
            forbidden: set[int] = set()
        else:
            members = piles[k]
            forbidden = set(group_of[members[group_of[members] > 0]].tolist())
        choice = next((g for g in seeded if g not in forbidden and g not in received), None)
        if choice is None:
            choice = next((g for g in seeded if g not in forbidden), None)
        if choice is None:  # pragma: no cover - excluded by the eligibility check
            raise ReleaseError(
                f"internal error: no group can take a leftover record with value {uniques[v]!r}"
            )
        group_of[pos] = choice
        received.add(choice)


def _bucketized(
    frame: pd.DataFrame,
    group_of: np.ndarray,
    qi: list[str],
    sa: str,
    group: str,
    person: str | None,
) -> Bucketized:
    """The release: rows sorted by group, then position in ``frame``, with the group column."""
    rows = np.lexsort((np.arange(len(frame)), group_of))
    keep = qi + [sa] + ([person] if person is not None else [])
    out = frame.iloc[rows][keep].copy()
    out[group] = group_of[rows]
    return Bucketized(out, qi=qi, sa=sa, group=group, person=person)


def check_l_diversity(release: Bucketized, l: int, nonsensitive: Iterable = ()) -> pd.Series:  # noqa: E741
    """Per group, whether it is l-diverse: no sensitive value in more than 1/l of it.

    A group of ``size`` records passes when every value of the sensitive column that is
    not listed in ``nonsensitive`` occurs at most ``size / l`` times in it (for the
    group sizes :func:`anatomize` makes, ``l`` to ``2l - 1``, that is at most once).
    Returns a boolean Series indexed by group id, named ``"l_diverse"``.

    >>> from maxent_privacy import Bucketized
    >>> from maxent_privacy.datasets import du2008_figure1
    >>> release = Bucketized(du2008_figure1(), ["gender", "degree"], "disease", "bucket")
    >>> check_l_diversity(release, 3).tolist()
    [False, True, True]
    """
    with release_arguments():
        l = check_integer(l, "l", minimum=2)  # noqa: E741
    if not isinstance(release, ReleaseBase):
        raise ReleaseError(
            f"check_l_diversity needs a Bucketized or Generalized release, got "
            f"{type(release).__name__}"
        )
    frame = release.frame
    sizes = frame.groupby(release.group, sort=True).size()
    exempt = set(_as_values(nonsensitive))
    sensitive = frame.loc[~frame[release.sa].isin(list(exempt)), [release.group, release.sa]]
    worst = (
        sensitive.groupby([release.group, release.sa], sort=False)
        .size()
        .groupby(level=0)
        .max()
        .reindex(sizes.index, fill_value=0)
    )
    return (worst * l <= sizes).rename("l_diverse")
