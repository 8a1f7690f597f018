"""Re-publishing a bucketized table as it is updated (Wang et al., ICDM 2008, Section 4.1).

:func:`rebucketize` bucketizes the updated table afresh (independent re-publishing);
:func:`history_guided` keeps the buckets of the previous release and fills the slots of
people who left with new people of the same sensitive value.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

import pandas as pd

from .._validation import check_integer, check_seed
from ..errors import ReleaseError
from ..releases.bucketized import Bucketized, check_input_table
from ..releases.checks import rng_of
from .anatomy import anatomize
from .contract import keyword_only, release_arguments
from .m_invariant import history_releases

__all__ = ["history_guided", "rebucketize"]


@keyword_only("frame", "qi", "sa", "l", "person", "seed", "nonsensitive", "group")
def rebucketize(
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
    """Independent re-publishing (Wang et al. Section 4.1 (1)): bucketize the updated
    table afresh, ignoring earlier releases (the riskiest way to re-publish): Anatomy,
    :func:`~maxent_privacy.anonymize.anatomize`, with the same arguments.

    >>> from maxent_privacy import datasets
    >>> d1, d2 = datasets.wang2008_figure1()
    >>> rebucketize(d2, ["gender", "zip"], "disease", l=3, person="pseudonym").n_groups
    4
    """
    return anatomize(
        frame, qi, sa, l=l, group=group, person=person, seed=seed, nonsensitive=nonsensitive
    )


def _previous_roles(keywords: dict) -> dict:
    """An old positional call's qi, sa, group and person: those of the previous release."""
    previous = keywords.get("history")
    if not isinstance(previous, Bucketized):
        return {}
    return {
        "qi": list(previous.qi),
        "sa": previous.sa,
        "group": previous.group,
        "person": previous.person,
    }


@keyword_only(
    "history", "frame", "l", "seed", "nonsensitive", fill=_previous_roles,
    renamed={"previous": "history"},
)  # fmt: skip
def history_guided(
    frame: pd.DataFrame,
    qi: Sequence[str],
    sa: str,
    *,
    l: int,  # noqa: E741
    history: Bucketized | Sequence[Bucketized] | None = None,
    group: str = "group",
    person: str | None = None,
    seed=0,
    nonsensitive: Iterable | None = None,
) -> Bucketized:
    """History-guided re-publishing (Wang et al. Section 4.1 (2)).

    Keeps the buckets of the last release of ``history`` (one Bucketized, or the earlier
    releases oldest first, with person ids): people still in ``frame`` stay in their
    bucket; the slot of each deleted person is filled with a randomly chosen new person
    with the same sensitive value, or left empty when there is none; the remaining new
    people are bucketized independently (Anatomy, ``l``) into new buckets. ``frame`` is
    the updated table, with the same sensitive column as the history; ``person`` is its
    pseudonym column (default: the one of the last release). With no history, the
    release is Anatomy's (:func:`~maxent_privacy.anonymize.anatomize`).

    Everything after ``sa`` is keyword-only; the old form ``history_guided(previous,
    frame, l, seed, nonsensitive)`` (the previous release's QI, sensitive, group and
    person columns) still works, with a ``DeprecationWarning``.

    >>> from maxent_privacy import Bucketized, datasets
    >>> d1, d2 = datasets.wang2008_figure1()
    >>> old = Bucketized(d1, ["gender", "zip"], "disease", "bucket", person="pseudonym")
    >>> new = history_guided(d2.drop(columns="bucket"), ["gender", "zip"], "disease", l=2,
    ...                      history=old, group="bucket")
    >>> new.frame.set_index("pseudonym").loc[[1, 2, 3, 4], "bucket"].tolist()
    [1, 1, 1, 1]
    """
    with release_arguments():
        l = check_integer(l, "l", minimum=2)  # noqa: E741
        seed = check_seed(seed)
    releases = history_releases(history, "history-guided re-publishing follows each person")
    if not releases:
        return anatomize(
            frame, qi, sa, l=l, group=group, person=person, seed=seed, nonsensitive=nonsensitive
        )
    previous = releases[-1]
    pid = previous.person if person is None else person
    qi = check_input_table(frame, qi, sa, group, pid, "history_guided")
    if sa != previous.sa:
        raise ReleaseError(
            f"history_guided: the table's sensitive column is {sa!r}, the last release's "
            f"{previous.sa!r}"
        )
    rng = rng_of(seed)
    frame = frame.reset_index(drop=True)  # (labels are looked up below: make them unique)
    # counterfeit records (m-invariance) are no one's slot
    old = previous.people.rename(columns={previous.person: pid, previous.group: "__old"})
    out, rest = _keep_buckets(frame, old, qi, sa, pid, group, rng)
    if len(rest):
        first = int(pd.to_numeric(old["__old"]).max()) + 1
        _new_buckets(out, rest, qi, sa, pid, group, l, first, seed, nonsensitive)
    out[group] = out[group].astype(int)
    out = out.sort_values([group, pid], kind="stable")
    sizes = out.groupby(group).size()
    short = int((sizes < l).sum())
    if short:
        warnings.warn(
            f"history_guided: {short} bucket(s) have fewer than {l} records (deleted people's "
            "slots that no new record with the same value could fill, as Wang et al. "
            "prescribe); a one-record bucket publishes that person's value",
            stacklevel=3,
        )
    return Bucketized(out, qi=qi, sa=sa, group=group, person=pid)


def _keep_buckets(frame, old, qi, sa, pid, group, rng) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The new table with the old bucket (``group``) of everyone who stays and of the new
    people filling a deleted person's slot, and the new people left over."""
    new_ids = pd.Index(frame[pid])
    stay = old[old[pid].isin(new_ids)]
    gone = old[~old[pid].isin(new_ids)]
    fresh = frame[~frame[pid].isin(pd.Index(old[pid]))]
    assigned = dict(zip(stay[pid], stay["__old"], strict=True))
    pool = {v: list(rng.permutation(g.index.to_numpy())) for v, g in fresh.groupby(sa)}
    for _, row in gone.iloc[rng.permutation(len(gone))].iterrows():
        candidates = pool.get(row[sa])
        if candidates:
            assigned[frame.loc[candidates.pop(), pid]] = row["__old"]
    rest = frame[~frame[pid].isin(pd.Index(list(assigned)))]
    out = frame[qi + [sa, pid]].copy()
    out[group] = out[pid].map(assigned)
    return out, rest


def _new_buckets(out, rest, qi, sa, pid, group, l, first, seed, nonsensitive) -> None:  # noqa: E741
    """Bucketize the new people left over (Anatomy) into buckets ``first``, ... (in place)."""
    if len(rest) < l:  # too few to make an l-diverse bucket of their own: one small bucket
        out.loc[out[pid].isin(rest[pid]), group] = first
        return
    exempt = list(nonsensitive or [])
    counts = rest[sa].value_counts()
    over = [v for v, c in counts.items() if c * l > len(rest) and v not in exempt]
    if over:  # the leftover new records cannot be l-diverse: exempt the excess
        warnings.warn(
            f"history_guided: the {len(rest)} new records left over cannot be "
            f"{l}-diverse; values {over} are left out of the requirement for them",
            stacklevel=4,
        )
        exempt += over
    extra = anatomize(
        rest, qi, sa, l=l, group="__g", person=pid, seed=seed, nonsensitive=exempt or None
    ).frame
    out.loc[out[pid].isin(extra[pid]), group] = out[pid].map(
        dict(zip(extra[pid], extra["__g"] + first - 1, strict=True))
    )
