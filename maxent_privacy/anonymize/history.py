"""Re-publishing a bucketized table as it is updated (Wang et al., ICDM 2008, Section 4.1).

:func:`rebucketize` bucketizes the updated table afresh (independent re-publishing);
:func:`history_guided` keeps the buckets of the previous release and fills the slots of
people who left with new people of the same sensitive value.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

import pandas as pd

from ..errors import ReleaseError
from ..releases.bucketized import Bucketized
from ..releases.checks import check_cells, check_frame, check_l, check_missing, check_unique, rng_of
from .anatomy import anatomize

__all__ = ["history_guided", "rebucketize"]


def rebucketize(
    frame: pd.DataFrame,
    qi: Sequence[str],
    sa: str,
    l: int,  # noqa: E741
    person: str,
    seed=0,
    nonsensitive: Iterable | None = None,
    group: str = "group",
) -> Bucketized:
    """Independent re-publishing (Wang et al. Section 4.1 (1)): bucketize the updated
    table afresh, ignoring earlier releases (the riskiest way to re-publish).

    >>> from maxent_privacy import datasets
    >>> d1, d2 = datasets.wang2008_figure1()
    >>> rebucketize(d2, ["gender", "zip"], "disease", 3, person="pseudonym").n_groups
    4
    """
    return anatomize(
        frame, qi, sa, l, seed=seed, nonsensitive=nonsensitive, group=group, person=person
    )


def history_guided(
    previous: Bucketized,
    frame: pd.DataFrame,
    l: int,  # noqa: E741
    seed=0,
    nonsensitive: Iterable | None = None,
) -> Bucketized:
    """History-guided re-publishing (Wang et al. Section 4.1 (2)).

    Keeps the buckets of ``previous``: people still in ``frame`` stay in their bucket; the
    slot of each deleted person is filled with a randomly chosen new person with the same
    sensitive value, or left empty when there is none; the remaining new people are
    bucketized independently (Anatomy, ``l``) into new buckets. ``frame`` is the updated
    table with the same QI, sensitive and person columns as ``previous``.

    >>> from maxent_privacy import Bucketized, datasets
    >>> d1, d2 = datasets.wang2008_figure1()
    >>> old = Bucketized(d1, ["gender", "zip"], "disease", "bucket", person="pseudonym")
    >>> new = history_guided(old, d2.drop(columns="bucket"), l=2)
    >>> new.frame.set_index("pseudonym").loc[[1, 2, 3, 4], "bucket"].tolist()
    [1, 1, 1, 1]
    """
    l = check_l(l)  # noqa: E741
    if not isinstance(previous, Bucketized):
        raise ReleaseError(
            f"history_guided needs the old release as a Bucketized, got {type(previous).__name__}"
        )
    if previous.person is None:
        raise ReleaseError("history-guided re-publishing needs person ids in the old release")
    pid, qi, sa, grp = previous.person, list(previous.qi), previous.sa, previous.group
    check_frame(frame, "history_guided")
    for col in qi + [sa, pid]:
        if col not in frame.columns:
            raise ReleaseError(f"column {col!r} of the old release is not in the new table")
    columns = qi + [sa, pid]
    roles = ["quasi-identifier"] * len(qi) + ["sensitive", "person"]
    check_unique(frame, columns)
    check_cells(frame, columns, roles)
    check_missing(frame, columns, [f"{r} " for r in roles])
    rng = rng_of(seed)
    frame = frame.reset_index(drop=True)  # (labels are looked up below: make them unique)
    old = previous.people  # counterfeit records (m-invariance) are no one's slot
    new_ids = pd.Index(frame[pid])
    stay = old[old[pid].isin(new_ids)]
    gone = old[~old[pid].isin(new_ids)]
    fresh = frame[~frame[pid].isin(pd.Index(old[pid]))]
    assigned = dict(zip(stay[pid], stay[grp], strict=True))
    pool = {v: list(rng.permutation(g.index.to_numpy())) for v, g in fresh.groupby(sa)}
    for _, row in gone.iloc[rng.permutation(len(gone))].iterrows():
        candidates = pool.get(row[sa])
        if candidates:
            assigned[frame.loc[candidates.pop(), pid]] = row[grp]
    rest = frame[~frame[pid].isin(pd.Index(list(assigned)))]
    out = frame[qi + [sa, pid]].copy()
    out[grp] = out[pid].map(assigned)
    if len(rest):
        first = int(pd.to_numeric(old[grp]).max()) + 1
        if len(rest) >= l:
            exempt = list(nonsensitive or [])
            counts = rest[sa].value_counts()
            over = [v for v, c in counts.items() if c * l > len(rest) and v not in exempt]
            if over:  # the leftover new records cannot be l-diverse: exempt the excess
                warnings.warn(
                    f"history_guided: the {len(rest)} new records left over cannot be "
                    f"{l}-diverse; values {over} are left out of the requirement for them",
                    stacklevel=2,
                )
                exempt += over
            extra = anatomize(
                rest, qi, sa, l, seed=seed, nonsensitive=exempt or None, group="__g", person=pid
            ).frame
            out.loc[out[pid].isin(extra[pid]), grp] = out[pid].map(
                dict(zip(extra[pid], extra["__g"] + first - 1, strict=True))
            )
        else:  # too few to make an l-diverse bucket of their own: one small bucket
            out.loc[out[pid].isin(rest[pid]), grp] = first
    out[grp] = out[grp].astype(int)
    out = out.sort_values([grp, pid], kind="stable")
    sizes = out.groupby(grp).size()
    short = int((sizes < l).sum())
    if short:
        warnings.warn(
            f"history_guided: {short} bucket(s) have fewer than {l} records (deleted people's "
            "slots that no new record with the same value could fill, as Wang et al. "
            "prescribe); a one-record bucket publishes that person's value",
            stacklevel=2,
        )
    return Bucketized(out, qi=qi, sa=sa, group=grp, person=pid)
