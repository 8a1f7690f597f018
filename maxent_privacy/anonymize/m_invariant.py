"""m-invariant re-publication (Xiao and Tao, SIGMOD 2007): the next release of a sequence.

A sequence of releases is *m-invariant* when every group of every release is *m-unique*
(at least m records, all sensitive values distinct) and every person keeps the same
*signature* (the set of sensitive values of their group) in every release they appear
in. Where people who left would change a signature, *counterfeit* records (no one's, a
sensitive value of the group) fill the gap; how many each group holds is published.

:func:`m_invariant` makes the next release from the earlier ones and the current table.

The release is built in the paper's four phases. (The paper's own text was not at
hand: the phases follow its outline as secondary sources give it; the rules below
are this implementation's reading, its extensions are said so.)

1. *division*: people of ``frame`` with a signature go to the bucket of their
   signature; the others (insertions) wait in one pile per sensitive value. People
   of the history who are not in ``frame`` (deletions) simply drop out. A person
   coming back after a gap keeps the signature they had (the paper's lifespans have
   no gaps: this is the safe reading).
2. *balancing*: a bucket whose signature has λ values must hold the same number k of
   records per value, k the largest count of a value among its people. Each missing
   record of value v (buckets in the order of their sorted values, values in turn)
   is taken from the pile of v while the piles stay m-eligible (no value in more
   than 1/m of them; once the piles are not m-eligible, while taking does not add
   to the counterfeits they will need), else it is a counterfeit of value v. A
   bucket's counterfeits are then ``sum(k - count(v))`` over its signature, at least
   one value having none: the fewest that keep every signature.
3. *assignment*: the remaining insertions get new signatures. While some remain,
   with counts c1 >= c2 >= ... of their values, the β >= m most frequent values
   (smallest β first) give α people each (largest α first, chosen at random), such
   that the rest stays m-eligible: ``(c1 - α) * m <= N - αβ`` and
   ``c(β+1) * m <= N - αβ``; they form a bucket of signature those β values (joining
   an existing bucket of the same signature). Insertions that are not m-eligible to
   begin with (one newcomer, or one value in too many of them) are first padded with
   ``m * c1 - N`` counterfeits of the least frequent values of the data (the fewest
   that make them m-eligible; an extension: the rule above needs m-eligible
   insertions).
4. *split*: a bucket with k records per value becomes k groups of one record per
   value. The paper splits to keep groups compact in the quasi-identifiers; here,
   recursively, a bucket of k is cut into k // 2 and k - k // 2 along the QI column
   most spread out in it (numbers by value, other columns by their text, each
   relative to its spread over ``frame``): every value's people sorted on that
   column, the lower ones go to the first part as far as the counterfeits allow.

The first release (no history) is the same with every person an insertion: an
m-unique Anatomy-style release with QI-compact groups, padded with counterfeits
only if ``frame`` is not m-eligible.

>>> import pandas as pd
>>> from maxent_privacy.anonymize import m_invariant
>>> t1 = pd.DataFrame({"id": [1, 2, 3, 4], "age": [21, 23, 50, 52],
...                    "disease": ["flu", "hiv", "flu", "hiv"]})
>>> r1 = m_invariant(t1, ["age"], "disease", m=2, person="id")
>>> t2 = t1[t1["id"] != 4]                            # person 4 left
>>> r2 = m_invariant(t2, ["age"], "disease", m=2, history=[r1], person="id")
>>> r2.counterfeit_counts().tolist()                  # person 3 keeps {flu, hiv}
[0, 1]
>>> check_m_invariance([r1, r2], 2)
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._validation import check_integer, check_seed
from ..errors import ReleaseError
from ..releases.bucketized import Bucketized, check_input_table
from ..releases.checks import check_label, rng_of
from ..releases.checks import shorten as _shorten
from .contract import keyword_only, no_exemptions, release_arguments

__all__ = ["check_m_invariance", "check_next_table", "history_releases", "m_invariant"]


@keyword_only("history", "frame", "qi", "sa", "m", "person", "seed", "group", "counterfeits")
def m_invariant(
    frame: pd.DataFrame,
    qi: Sequence[str],
    sa: str,
    *,
    m: int,
    history: Sequence[Bucketized] | None = None,
    group: str = "group",
    person: str | None = None,
    seed=0,
    nonsensitive=None,
    counterfeits: str = "counterfeit",
) -> Bucketized:
    """The next release of an m-invariant sequence (Xiao and Tao, SIGMOD 2007).

    ``history`` is the list of earlier releases, oldest first (``None`` or ``[]`` for
    the first release; one release alone is read as ``[it]``), each a
    :class:`~maxent_privacy.Bucketized` with person ids, possibly with counterfeits;
    ``frame`` is the current table (``qi`` columns, ``sa`` and the ``person`` pseudonym
    column). A person's *signature* is the set of sensitive values (counterfeits
    included) of their group; every earlier release must already be m-unique and give
    each person one signature, or a one-line :class:`~maxent_privacy.ReleaseError`
    names the group or the person.

    The release is built in the paper's four phases (division, balancing, assignment,
    split), as the module docstring describes.

    Parameters
    ----------
    history : earlier releases (list of Bucketized with person ids), oldest first.
    frame : the current table, one row per person.
    qi : quasi-identifier columns (published exactly).
    sa : the sensitive column.
    m : the m of m-uniqueness, an integer of at least 2.
    person : the pseudonym column linking a person across releases (required).
    seed : seed of ``numpy.random.default_rng`` (which insertions fill which bucket).
    group : name of the group column (ints 1, 2, ... per release).
    counterfeits : name of the boolean counterfeit column.
    nonsensitive : must be None (every group holds m distinct values, none exempt).

    Everything after ``sa`` is keyword-only; the old form ``m_invariant(history, frame,
    qi, sa, m, person, seed, group, counterfeits)`` still works, with a
    ``DeprecationWarning``.

    Returns
    -------
    Bucketized with columns ``qi + [sa, group, person, counterfeits]``: one row per
    person of ``frame`` (nobody is dropped), then the counterfeit rows (``True`` in
    ``counterfeits``, missing QI and person cells), sorted by group; rows numbered
    0, 1, ...; ``counterfeit_counts()`` is the published count per group.
    """
    with release_arguments():
        m = check_integer(m, "m", minimum=2)
        seed = check_seed(seed)
    no_exemptions(nonsensitive, "m_invariant", "every group holds m distinct values")
    qi = check_next_table(frame, qi, sa, group, person, counterfeits, "m_invariant")
    people, values, sig, domain = _people_and_signatures(frame, sa, person, m, history)
    rng = rng_of(seed)
    buckets, piles = _division(people, values, sig, rng)
    _balancing(buckets, piles, m)
    _assignment(buckets, piles, m, domain, rng)
    keys, span = _qi_keys(frame, qi)
    groups = [g for K in sorted(buckets, key=_sig_key) for g in _split(buckets[K], keys, span)]
    return _release(frame, qi, sa, person, group, counterfeits, groups)


def check_m_invariance(releases, m: int) -> bool:
    """Whether a sequence of releases (oldest first, Bucketized with person ids) is
    m-invariant: every group m-unique (at least ``m`` records, all sensitive values
    distinct, counterfeits included) and every person one signature throughout.

    >>> from maxent_privacy import Bucketized, datasets
    >>> release = Bucketized(datasets.du2008_figure1(), ["gender", "degree"], "disease",
    ...                      "bucket", person="name")
    >>> check_m_invariance([release], 2)
    False
    """
    with release_arguments():
        m = check_integer(m, "m", minimum=2)
    releases = history_releases(releases, "m-invariance follows each person")
    if not releases:
        return True
    last = releases[-1]
    try:
        _signatures(releases, last.sa, m, last.people[last.person])
    except ReleaseError:
        return False
    return True


# -- input --------------------------------------------------------------------------


def _people_and_signatures(frame: pd.DataFrame, sa: str, person: str, m: int, history):
    """The people of ``frame`` and their sensitive values (arrays), their signatures in
    ``history`` and the domain of sensitive values; an error for a person whose value
    left their signature or an ``m`` above the number of values."""
    ids = frame[person]
    releases = history_releases(history, "m-invariance follows each person from release to release")
    sig, seen_values = _signatures(releases, sa, m, ids)
    values = frame[sa].to_numpy(dtype=object)
    domain = sorted(set(values.tolist()) | seen_values, key=str)
    if m > len(domain):
        shown = ", ".join(_short(v, 20) for v in domain[:6]) + (", ..." if len(domain) > 6 else "")
        raise ReleaseError(
            f"m={m} exceeds the {len(domain)} distinct sensitive values of column {sa!r} "
            f"({shown}); an m-unique group needs m different values"
        )
    people = ids.to_numpy(dtype=object)
    for p, v in zip(people, values, strict=True):
        if p in sig and v not in sig[p]:
            raise ReleaseError(
                f"person {_short(p)} has sensitive value {_short(v)} but signature "
                f"{_show(sig[p])} in the earlier releases; m-invariance keeps a person's "
                "value (give a changed person a new id: a deletion and an insertion)"
            )
    return people, values, sig, domain


def check_next_table(frame, qi, sa, group, person, counterfeits, name: str) -> list:
    """The checks of a table to publish next with person ids and counterfeits (``name``:
    the function, for the messages); the QI columns as a list.

    >>> check_next_table(pd.DataFrame({"a": [1], "s": ["x"], "id": [7]}), ["a"], "s",
    ...                  "group", "id", "counterfeit", "f")
    ['a']
    """
    if person is None:
        raise ReleaseError(
            f"{name} needs person=...: the pseudonym column that links a person across releases"
        )
    qi = check_input_table(frame, qi, sa, group, person, name)
    check_label(counterfeits, f"{name}: counterfeits")
    if counterfeits in [*qi, sa, group, person]:
        raise ReleaseError(
            f"counterfeits column name {counterfeits!r} is already used by another role; "
            "pass another name with counterfeits=..."
        )
    if len(frame) == 0:
        raise ReleaseError(f"{name} needs at least one person, the table has no rows")
    ids = frame[person]
    if ids.duplicated().any():
        dup = ids[ids.duplicated()].iloc[0]
        raise ReleaseError(
            f"person id {_short(dup)} occurs in more than one row of column {person!r}"
        )
    return qi


def history_releases(history, why: str) -> list[Bucketized]:
    """``history`` (None, one release or a sequence of them) as a list of Bucketized
    releases with person ids; ``why`` ends the error of a release without them (what the
    ids are needed for).

    >>> history_releases(None, "")
    []
    """
    if history is None:
        return []
    if isinstance(history, Bucketized):
        history = [history]
    if isinstance(history, (str, dict, pd.DataFrame)) or not hasattr(history, "__iter__"):
        raise ReleaseError(
            f"history must be a list of earlier Bucketized releases (or None), got "
            f"{type(history).__name__}"
        )
    releases = list(history)
    for r, rel in enumerate(releases, start=1):
        if not isinstance(rel, Bucketized):
            raise ReleaseError(
                f"release {r} of the history is a {type(rel).__name__}, not a Bucketized release"
            )
        if rel.person is None:
            raise ReleaseError(f"release {r} of the history has no person ids (person=...); {why}")
    return releases


def _signatures(releases: list[Bucketized], sa: str, m: int, ids: pd.Series):
    """Each person's signature in the history (one per person, or an error naming them),
    and the sensitive values the history published."""
    sig: dict = {}
    first: dict = {}
    values: set = set()
    for r, rel in enumerate(releases, start=1):
        if rel.sa != sa:
            raise ReleaseError(
                f"release {r} of the history has sensitive column {rel.sa!r}, the table {sa!r}"
            )
        people = rel.people[rel.person]
        if len(people) and len(ids) and _numeric(people) != _numeric(ids):
            kinds = ("numbers", "text") if _numeric(ids) else ("text", "numbers")
            raise ReleaseError(
                f"person ids are {kinds[0]} in the table (e.g. {_short(ids.iloc[0])}) but "
                f"{kinds[1]} in release {r} of the history (e.g. {_short(people.iloc[0])}); "
                "convert one of them"
            )
        data = rel.frame
        by_group = data.groupby(rel.group, sort=True)[sa]
        sets = {}
        for g, col in by_group:
            vals = col.tolist()
            distinct = frozenset(vals)
            if len(vals) < m or len(distinct) < len(vals):
                what = (
                    f"{len(vals)} records"
                    if len(distinct) == len(vals)
                    else "a sensitive value more than once"
                )
                raise ReleaseError(
                    f"release {r} of the history is not {m}-unique: group {_short(g)} holds "
                    f"{what} ({_show(vals)}); every group needs at least {m} records, all "
                    "values distinct"
                )
            sets[g] = distinct
            values |= distinct
        for p, g in zip(people.tolist(), rel.people[rel.group].tolist(), strict=True):
            K = sets[g]
            if p in sig and sig[p] != K:
                raise ReleaseError(
                    f"the history is not m-invariant: person {_short(p)} has signature "
                    f"{_show(sig[p])} in release {first[p]} and {_show(K)} in release {r}"
                )
            sig.setdefault(p, K)
            first.setdefault(p, r)
    return sig, values


def _numeric(series: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(series.dtype)) and not pd.api.types.is_bool_dtype(
        series.dtype
    )


def _show(values) -> str:
    shown = sorted(values, key=str)
    text = ", ".join(_short(v, 20) for v in shown[:6])
    return "{" + text + (", ..." if len(shown) > 6 else "") + "}"


def _short(value, limit: int = 40) -> str:
    """``checks.shorten`` of the value as Python has it (``1``, not ``np.int64(1)``)."""
    return _shorten(value.item() if isinstance(value, np.generic) else value, limit)


def _sig_key(K) -> tuple:
    return tuple(sorted(map(str, K)))


# -- the four phases ---------------------------------------------------------------


def _division(people, values, sig: dict, rng: np.random.Generator):
    """Buckets (signature -> value -> positions) of the people with a signature, and the
    piles (value -> positions, in a seeded random order) of the insertions."""
    buckets: dict[frozenset, dict] = {}
    piles: dict = {}
    for i, (p, v) in enumerate(zip(people, values, strict=True)):
        if p in sig:
            K = sig[p]
            buckets.setdefault(K, {u: [] for u in K})[v].append(i)
        else:
            piles.setdefault(v, []).append(i)
    for v in piles:
        piles[v] = [piles[v][j] for j in rng.permutation(len(piles[v]))]
    return buckets, piles


def _needed(counts: Counter, m: int) -> int:
    """Counterfeits that make the piles m-eligible: ``max(0, m * c1 - N)``."""
    n = sum(counts.values())
    return max(0, m * max(counts.values(), default=0) - n)


def _balancing(buckets: dict, piles: dict, m: int) -> None:
    """Fill each bucket's missing records from the piles (in place); the rest are the
    counterfeits implied by the bucket (``k - count(v)`` of each value v)."""
    counts = Counter({v: len(rows) for v, rows in piles.items()})
    for K in sorted(buckets, key=_sig_key):
        bucket = buckets[K]
        k = max(len(rows) for rows in bucket.values())
        for v in sorted(K, key=str):
            while len(bucket[v]) < k and counts[v] > 0:
                before = _needed(counts, m)
                counts[v] -= 1
                if _needed(counts, m) > before:  # leaves the piles worse off: counterfeit
                    counts[v] += 1
                    break
                bucket[v].append(piles[v].pop())


def _assignment(buckets: dict, piles: dict, m: int, domain: list, rng) -> None:
    """Give the insertions left in the piles new signatures (in place)."""
    slots = {v: list(rows) for v, rows in piles.items() if rows}
    if not slots:
        return
    counts = Counter({v: len(rows) for v, rows in slots.items()})
    for _ in range(_needed(counts, m)):  # pad: counterfeits of the least frequent values
        v = min(domain, key=lambda u: (counts[u], str(u)))
        counts[v] += 1
        slots.setdefault(v, []).append(None)
    while slots:
        order = sorted(slots, key=lambda v: (-len(slots[v]), str(v)))
        c = [len(slots[v]) for v in order] + [0]
        n = sum(c)
        alpha, beta = _alpha_beta(c, n, m)
        K = frozenset(order[:beta])
        bucket = buckets.setdefault(K, {u: [] for u in K})
        for v in order[:beta]:
            real = [i for i in slots[v] if i is not None]
            fake = len(slots[v]) - len(real)
            chosen = set(rng.permutation(len(real))[:alpha].tolist())
            bucket[v].extend(real[j] for j in sorted(chosen))
            left = [i for j, i in enumerate(real) if j not in chosen]
            slots[v] = left + [None] * (fake - max(0, alpha - len(chosen)))
            if not slots[v]:
                del slots[v]
    for K in [K for K, b in buckets.items() if not any(b.values())]:
        del buckets[K]  # counterfeits only: no one to protect


def _alpha_beta(c: list[int], n: int, m: int) -> tuple[int, int]:
    """The paper's choice: smallest β >= m, then largest α <= c[β-1], keeping the rest
    m-eligible. (α = 1 with β = max(m, number of values tied at the top) always works.)"""
    for beta in range(m, len(c)):
        for alpha in range(c[beta - 1], 0, -1):
            rest = n - alpha * beta
            if (c[0] - alpha) * m <= rest and c[beta] * m <= rest:
                return alpha, beta
    raise ReleaseError(  # pragma: no cover - excluded by the padding (m-eligible piles)
        "internal error: the insertions are not m-eligible after padding"
    )


def _qi_keys(frame: pd.DataFrame, qi: list) -> tuple[np.ndarray, np.ndarray]:
    """One sortable float per row and QI column (numbers as such, others by their text
    order) and each column's spread over ``frame`` (0 for a constant column)."""
    keys = np.empty((len(frame), len(qi)), dtype=float)
    for j, col in enumerate(qi):
        series = frame[col]
        if _numeric(series):
            keys[:, j] = series.to_numpy(dtype=float)
        else:
            text = series.astype(str).to_numpy()
            uniques = np.unique(text)
            keys[:, j] = np.searchsorted(uniques, text)
    span = keys.max(axis=0) - keys.min(axis=0) if len(frame) else np.zeros(len(qi))
    return keys, span


def _split(bucket: dict, keys: np.ndarray, span: np.ndarray) -> list[dict]:
    """The groups of one bucket: k = the largest count of a value; each group one record
    per value (a position, or None for a counterfeit)."""
    k = max(len(rows) for rows in bucket.values())
    out: list[dict] = []
    stack = [({v: list(rows) for v, rows in bucket.items()}, k)]
    while stack:
        part, k = stack.pop()
        if k == 1:
            out.append({v: (rows[0] if rows else None) for v, rows in part.items()})
            continue
        rows = np.array([i for r in part.values() for i in r], dtype=np.int64)
        spread = np.where(span > 0, np.ptp(keys[rows], axis=0) / np.where(span > 0, span, 1), 0)
        col = int(np.argmax(spread))
        half = k // 2
        ranked = rows[np.argsort(keys[rows, col], kind="stable")]
        low = set(ranked[: round(len(rows) * half / k)].tolist())
        left, right = {}, {}
        for v, members in part.items():
            members = sorted(members, key=lambda i: (keys[i, col], i))
            r = len(members)
            lo, hi = max(0, half - (k - r)), min(half, r)
            n_left = min(max(sum(i in low for i in members), lo), hi)
            left[v], right[v] = members[:n_left], members[n_left:]
        stack.append((right, k - half))
        stack.append((left, half))
    return out


def _release(frame, qi, sa, person, group, counterfeits, groups) -> Bucketized:
    """The published table: per group its people (in ``frame`` order), then its
    counterfeits (NaN in the QI and person columns)."""
    pos, gid, fake_value = [], [], []
    for g, members in enumerate(groups, start=1):
        real = sorted(i for i in members.values() if i is not None)
        fake = sorted((v for v, i in members.items() if i is None), key=str)
        pos += real + [-1] * len(fake)
        gid += [g] * (len(real) + len(fake))
        fake_value += [None] * len(real) + fake
    pos = np.array(pos, dtype=np.int64)
    is_fake = pos < 0
    fake_value = np.array(fake_value, dtype=object)
    out = {}
    for col in qi + [sa, person]:
        series = frame[col]
        values = series.to_numpy()[np.where(is_fake, 0, pos)]
        if is_fake.any():
            values = values.astype(float if col != sa and _numeric(series) else object)
            values[is_fake] = fake_value[is_fake] if col == sa else np.nan
        out[col] = values
    out[group] = np.array(gid, dtype=np.int64)
    out[counterfeits] = is_fake
    table = pd.DataFrame(out)[qi + [sa, group, person, counterfeits]]
    return Bucketized(table, qi=qi, sa=sa, group=group, person=person, counterfeits=counterfeits)
