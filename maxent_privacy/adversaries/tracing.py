"""The record-tracing attack on generalized releases (Byun et al. 2008, Section 4.5).

Matching records across versions by sensitive value and compatible QI narrows the persons
a record can belong to (Example 3). :func:`record_tracing` builds, for every pair of
releases, the bipartite graph of Figure 10 between their rows, removes its infeasible
edges (Remove_Infeasible_Edges of Figure 10 plus the Figure 9(ii) rule) and reports the
rows left with fewer candidate persons; :func:`trace` does this for one ordered pair, so
that the history table (:class:`~maxent_privacy.adversaries.attacks.History`, Section 5.1)
can check each new release against the earlier ones.

>>> from maxent_privacy.datasets_byun import byun2008_tables
>>> t = byun2008_tables()
>>> record_tracing(t["releases"], t["populations"])["inferred"].tolist()
['Bob', 'Eve']
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import sparse

from ..errors import ReleaseError
from ..releases.checks import check_k
from ..releases.generalized import Generalized
from .matching import MatchedRelease, frame, match_releases, person_column

__all__ = ["record_tracing", "trace"]

_TRACING_COLUMNS = [
    "release",
    "against",
    "row",
    "group",
    "value",
    "matched",
    "matched_groups",
    "persons",
    "before",
    "inferred",
]


def trace(ra: MatchedRelease, rb: MatchedRelease, k: int | None) -> list[dict]:
    """Record tracing of release a's rows into the later release b (Section 4.5)."""
    people_a = ra.type_people()
    a_persons, a_types = ra.held()
    b_persons, b_types = rb.held()
    to_b = np.array([rb.pos[pid] for pid in ra.ids], dtype=np.int64)
    # (type of a, type of b) pairs that some person can hold both of: a sparse product
    n_people = len(rb.ids)
    held_a = sparse.csr_matrix(
        (np.ones(len(a_types)), (a_types, to_b[a_persons])),
        shape=(int(ra.row_type.max()) + 1, n_people),
    )
    held_b = sparse.csr_matrix(
        (np.ones(len(b_types)), (b_persons, b_types)),
        shape=(n_people, int(rb.row_type.max()) + 1),
    )
    both = (held_a @ held_b).tocoo()
    types_b_of: dict[int, set] = defaultdict(set)  # person position in b -> row types
    for p, t in zip(b_persons.tolist(), b_types.tolist(), strict=True):
        types_b_of[p].add(t)
    rows_a: dict = defaultdict(list)  # (type, value) -> rows of a
    for r, (t, v) in enumerate(zip(ra.row_type.tolist(), ra.row_sa, strict=True)):
        rows_a[(t, v)].append(r)
    rows_b: dict = defaultdict(list)
    for r, (t, v) in enumerate(zip(rb.row_type.tolist(), rb.row_sa, strict=True)):
        rows_b[(t, v)].append(r)
    values_of_type: dict = defaultdict(set)
    for t, v in rows_a:
        values_of_type[t].add(v)
    targets_of: dict = defaultdict(set)  # (type of a, value) -> rows of b
    for ta, tb in zip(both.row.tolist(), both.col.tolist(), strict=True):
        for v in values_of_type[ta]:
            targets = rows_b.get((tb, v))
            if targets:
                targets_of[(ta, v)].update(targets)
    edges: dict[int, set] = {
        r: set(targets_of.get((t, v), ()))
        for r, (t, v) in enumerate(zip(ra.row_type.tolist(), ra.row_sa, strict=True))
    }
    _remove_infeasible(ra, rb, edges)

    out = []
    found: dict = {}  # (type of a, types of b reached) -> candidate persons
    for r, matched in edges.items():
        ta = int(ra.row_type[r])
        mine = people_a[ta]
        reach = frozenset(int(rb.row_type[x]) for x in matched)
        if (ta, reach) not in found:
            found[(ta, reach)] = sorted(
                (pid for pid in mine if not types_b_of[rb.pos[pid]].isdisjoint(reach)),
                key=lambda pid: ra.pos[pid],
            )
        persons = found[(ta, reach)]
        before = len(mine)
        if len(persons) >= before or (k is not None and len(persons) >= k):
            continue
        out.append(
            {
                "release": ra.index,
                "against": rb.index,
                "row": ra.row_labels[r],
                "group": ra.label(int(ra.row_group[r])),
                "value": ra.row_sa[r],
                "matched": tuple(rb.row_labels[x] for x in sorted(matched)),
                "matched_groups": tuple(
                    dict.fromkeys(rb.label(int(rb.row_group[x])) for x in sorted(matched))
                ),
                "persons": tuple(persons),
                "before": before,
                "inferred": persons[0] if len(persons) == 1 else None,
            }
        )
    return out


def _remove_infeasible(ra: MatchedRelease, rb: MatchedRelease, edges: dict[int, set]) -> None:
    """Figure 10 (Remove_Infeasible_Edges) plus the Figure 9(ii) rule, in place.

    Edges are definite (a row with one possible match) or plausible. Repeated until
    nothing changes: a row of b with a definite incoming edge loses its plausible ones;
    a row of a left with one edge gets a definite one. Figure 9(ii), generalized: when
    the rows of a with one group and value can reach exactly as many rows of b as there
    are of them, those rows of b are all theirs (other edges into them go), and when
    the rows are indistinguishable (same cells, same edges) they are matched one to one
    in order, which is the paper's "arbitrary choice".
    """
    incoming: dict[int, set] = defaultdict(set)
    for r, xs in edges.items():
        for x in xs:
            incoming[x].add(r)

    def drop(r: int, x: int) -> None:
        edges[r].discard(x)
        incoming[x].discard(r)
        if not edges[r]:
            raise ReleaseError(
                f"row {ra.row_labels[r]!r} of release {ra.index} matches no row of release "
                f"{rb.index}; the releases contradict each other"
            )

    for r, xs in edges.items():
        if not xs:
            raise ReleaseError(
                f"row {ra.row_labels[r]!r} of release {ra.index} matches no row of release "
                f"{rb.index}; the releases contradict each other"
            )
    definite = {r: next(iter(xs)) for r, xs in edges.items() if len(xs) == 1}
    blocks: dict = defaultdict(list)  # (group, value) -> rows of a
    for r in edges:
        blocks[(int(ra.row_group[r]), ra.row_sa[r])].append(r)
    while True:
        changed = False
        for x in list(incoming):
            rs = incoming[x]
            sure = {r for r in rs if definite.get(r) == x}
            if sure and len(rs) > len(sure):
                for r in list(rs - sure):
                    drop(r, x)
                changed = True
        for r, xs in edges.items():
            if len(xs) == 1 and r not in definite:
                definite[r] = next(iter(xs))
                changed = True
        for block in blocks.values():
            reach = set().union(*(edges[r] for r in block))
            if len(reach) != len(block):
                continue
            mine = set(block)
            for x in reach:
                for r in list(incoming[x] - mine):
                    drop(r, x)
                    changed = True
            if len(block) > 1 and any(r not in definite for r in block):
                first = block[0]
                same = all(
                    edges[r] == edges[first] and ra.row_type[r] == ra.row_type[first] for r in block
                )
                if same:
                    for r, x in zip(sorted(block), sorted(reach), strict=True):
                        for y in list(edges[r] - {x}):
                            drop(r, y)
                        definite[r] = x
                    changed = True
        if not changed:
            break


def record_tracing(
    releases: Sequence[Generalized],
    populations: Sequence[pd.DataFrame],
    k: int | None = None,
    person: str | None = None,
    **old,
) -> pd.DataFrame:
    """The record-tracing attack (Byun et al., Section 4.5, Example 3, Figure 10).

    For every pair of releases a < b where b's population contains a's, each row r of
    release a is matched to the rows of release b it may be: same sensitive value and
    some person who can hold both (compatible QI, as placed by
    :func:`~maxent_privacy.adversaries.matching.placement`).
    Infeasible edges of this bipartite graph are removed (Figure 10 and the Figure 9(ii)
    rule, see ``_remove_infeasible``); the persons r can belong to are then those that
    can hold r and one of its remaining matches.

    Reported rows: with ``k=None``, those whose candidate persons shrink below what
    release a alone allows; with ``k``, those also left with fewer than ``k``. Columns:
    ``release`` (a), ``against`` (b), ``row`` (the row's index label in a), ``group``,
    ``value``, ``matched`` and ``matched_groups`` (rows and groups of b left),
    ``persons`` (candidates, population order), ``before`` (how many release a alone
    allows) and ``inferred`` (the person if one is left). ``person`` names the
    populations' person id column (``id_column`` is its deprecated name; default: the
    one column that is not a QI). Rows that no release tells
    apart (same group, cells and value) are interchangeable; as in the paper, they are
    matched in order, so the findings hold for some order of such rows.

    >>> from maxent_privacy.datasets_byun import byun2008_tables
    >>> t = byun2008_tables()
    >>> record_tracing(t["releases"], t["populations"])[["row", "value", "persons"]]
      row      value persons
    0   2  Alzheimer  (Bob,)
    1   3   Diabetes  (Eve,)
    """
    person = person_column(person, old, "record_tracing()")
    if k is not None:
        k = check_k(k)
    rels = match_releases(releases, populations, person)
    rows: list[dict] = []
    for a in range(len(rels)):
        for b in range(a + 1, len(rels)):
            if set(rels[a].ids) <= set(rels[b].pos):
                rows.extend(trace(rels[a], rels[b], k))
    return frame(rows, _TRACING_COLUMNS, ("row", "value", "inferred"))
