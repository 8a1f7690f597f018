"""Cross-version inference attacks on generalized releases (Byun et al. 2008).

A publisher that re-anonymizes a growing table and publishes every version lets an
attacker combine the versions. Byun, Li, Bertino, Li and Sohn ("Privacy-preserving
incremental data dissemination", Sections 3-5) name three attacks; each function here
takes the releases (:class:`~maxent_privacy.generalized.Generalized`, oldest first) and
the attacker's population tables (person id and exact QI of exactly the individuals in
each release, Section 4.1) and returns what the attacker learns, with the evidence:

* :func:`intersection`: a person in several releases has a sensitive value present in
  each of the classes that can hold them (Figure 7), and values of persons so found are
  removed from their classes for their class-mates;
* :func:`difference`: subtracting the records of old classes from the new classes that
  hold them leaves the new records' values (Figure 5, DirectedCheck with GetMinSet and
  Observations 1-3);
* :func:`record_tracing`: matching records across versions by sensitive value and
  compatible QI narrows the persons a record can belong to (bipartite graph, Figure 10).

:func:`check_kc` checks (k, c)-anonymity (Definition 1) and :class:`History` keeps the
attacker's accumulated knowledge (Section 5.1) so that each new release is checked
against it. Every finding is sound: it is true of any original data that is consistent
with the releases and populations (placements of persons into groups are only used when
forced).

Matching the releases to their populations (:func:`placement`) and the attacker's
knowledge live in :mod:`~maxent_privacy.adversaries.matching`, the record-tracing attack
in :mod:`~maxent_privacy.adversaries.tracing`; their public functions are importable from
here too.

>>> from maxent_privacy.datasets_byun import byun2008_tables
>>> from maxent_privacy import attacks
>>> t = byun2008_tables()
>>> found = attacks.intersection(t["releases"], t["populations"])
>>> found[["person", "inferred", "via"]].values.tolist()
[['Bob', 'Alzheimer', 'intersection'], ['Eve', 'Diabetes', 'intersection'], \
['Hank', 'Hepatitis', 'elimination'], ['Sal', 'Flu', 'elimination']]
>>> attacks.difference(t["releases"], t["populations"], k=2, c=2)[["person", "inferred"]]
  person inferred
0  Alice   Cancer
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict, deque
from collections.abc import Sequence

import pandas as pd

from .._validation import check_integer
from ..errors import ReleaseError
from ..releases.checks import check_k, resolve_c
from ..releases.generalized import Generalized
from .matching import (
    EPS,
    Knowledge,
    MatchedRelease,
    frame,
    match_releases,
    person_column,
    placement,
    sorted_values,
)
from .tracing import record_tracing, trace

__all__ = [
    "FINDING_COLUMNS",
    "History",
    "check_kc",
    "difference",
    "findings",
    "intersection",
    "kc_violations",
    "placement",
    "record_tracing",
]


# -- (k, c)-anonymity -------------------------------------------------------------------


def _violation(counts: Counter | dict, size: int, k: int, c: float) -> str:
    reasons = []
    if size < k:
        reasons.append(f"fewer than k={k} records")
    if counts and max(counts.values()) > c * size + EPS:
        reasons.append(f"a value above c={c:g}")
    return " and ".join(reasons)


def kc_violations(release, k: int, c: float) -> pd.DataFrame:
    """The groups of ``release`` that break (k, c)-anonymity, one row each.

    Columns: ``group``, ``size``, ``value`` (the most frequent sensitive value, ties by
    ``str``), ``count``, ``confidence`` (= count / size) and ``reason``. ``release`` is a
    :class:`~maxent_privacy.generalized.Generalized` or a
    :class:`~maxent_privacy.Bucketized` release; groups are its equivalence classes. See
    :func:`check_kc` for the definition and for how ``c`` is read.

    >>> from maxent_privacy.datasets_byun import byun2008_tables
    >>> kc_violations(byun2008_tables()["figure4"], k=3, c=0.5)[["group", "reason"]]
       group                  reason
    0      2  fewer than k=3 records
    1      3  fewer than k=3 records
    """
    k = check_k(k)
    c = resolve_c(c)
    rows = []
    frame = release.frame
    for g, part in frame.groupby(release.group, sort=True):
        counts = Counter(part[release.sa].tolist())
        size = len(part)
        value, count = min(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
        reason = _violation(counts, size, k, c)
        if reason:
            rows.append((g, size, value, count, count / size, reason))
    return pd.DataFrame(rows, columns=["group", "size", "value", "count", "confidence", "reason"])


def check_kc(release, k: int, c: float) -> bool:
    """Whether ``release`` is (k, c)-anonymous (Byun et al., Definition 1).

    Every equivalence class ``e`` (group) must have (1) ``|e| >= k`` and (2) for every
    sensitive value ``s``, ``|{r in e : r[S] = s}| / |e| <= c``, where ``0 < c <= 1``:
    ``c`` bounds the confidence of linking a QI value to a sensitive value (a frequency
    bound, not "c distinct values"). The paper's running example calls Figures 2 and 4
    "(2, 2)-anonymous" in the (k, l) wording of Section 3.1, where l = 2 keeps that
    confidence "under 1/2"; so a ``c`` above 1 is read as that l and stands for the bound
    ``1 / c`` (``c = 2`` is ``c = 0.5``; at ``c = 1`` both readings agree).
    :func:`kc_violations` lists the failing groups.

    >>> from maxent_privacy.datasets_byun import byun2008_tables
    >>> t = byun2008_tables()
    >>> check_kc(t["figure2"], k=2, c=2), check_kc(t["figure4"], 2, 0.5)
    (True, True)
    >>> check_kc(t["figure4"], 2, 0.4)
    False
    """
    return kc_violations(release, k, c).empty


# -- intersection attack -------------------------------------------------------------------


def intersection(
    releases: Sequence[Generalized],
    populations: Sequence[pd.DataFrame],
    c: float | None = None,
    person: str | None = None,
    **old,
) -> pd.DataFrame:
    """The intersection attack (Byun et al., Section 4.4, Figure 7), with elimination.

    A person listed in several populations has their record in each release; in each,
    it sits in one of the groups that can hold them (:func:`placement`), so their
    sensitive value is in the multiset of that group (of the union of those groups when
    the placement is not forced). Intersecting these over the releases (as multisets,
    the paper's ``SI_A``) narrows the value down. A person whose value is thereby known
    is removed from the groups they surely sit in, which may in turn narrow their
    class-mates (Example 2: Bob's Alzheimer leaves Hank's class-mate value Hepatitis),
    repeated until nothing changes.

    Reported persons: with ``c=None``, those left with fewer candidate values than the
    most telling single release gives them; with ``c``, those whose most frequent
    remaining value exceeds the confidence bound ``c`` although no single release's
    class does (read as in :func:`check_kc`; ``c=2`` is 1/2). ``person`` names the
    populations' person id column (``id_column`` is its deprecated name; default: the one
    column that is not a QI).

    Columns: ``person``, ``release`` (their last release), ``classes`` (tuple of
    ``(release, group)``), ``candidates`` (remaining values), ``counts`` (their multiset),
    ``confidence`` (top count / total), ``inferred`` (the value if one remains, else
    ``None``), ``via`` (``"intersection"``, ``"elimination"`` for persons in one release,
    ``"intersection+elimination"``) and ``eliminated`` (class-mates whose inferred
    values were removed, when that mattered).

    >>> from maxent_privacy.datasets_byun import byun2008_tables
    >>> t = byun2008_tables()
    >>> intersection(t["releases"], t["populations"]).loc[0, ["classes", "candidates"]]
    classes       ((0, 2), (1, 2))
    candidates        (Alzheimer,)
    Name: 0, dtype: object
    """
    person = person_column(person, old, "intersection()")
    c = None if c is None else resolve_c(c)
    knowledge = Knowledge()
    for rel in match_releases(releases, populations, person):
        knowledge.add(rel)
    return knowledge.report(c)


# -- difference attack ---------------------------------------------------------------------

_DIFFERENCE_COLUMNS = [
    "person",
    "release",
    "against",
    "classes",
    "against_classes",
    "size",
    "candidates",
    "counts",
    "confidence",
    "inferred",
    "reason",
]


def _directed(
    ra: MatchedRelease, rb: MatchedRelease, k: int, c: float, max_sets: int
) -> tuple[list[dict], bool]:
    """DirectedCheck(T_a, T_b) of Figure 5, reporting the persons of T_b it exposes.

    For a set E of classes of T_a, GetMinSet gives the classes E' of T_b holding E's
    persons; the records of E' not in E are the persons D, whose values are
    ``E'<S> - E<S>``. Observation 3: a class of T_a with a person not (surely placed) in
    T_b is never used. Observation 1: only sets E whose covering sets chain together
    need checking (a set splitting into parts with disjoint covers is vulnerable only if
    a part is). Observation 2: of the sets with the same covering set E', only the
    largest (every class of T_a whose persons all lie in E') is checked, as its D is the
    smallest. So the search walks these closed, connected sets breadth first from each
    single class, each once: every single class and at most ``max_sets`` larger sets.
    """
    cover: dict[int, frozenset] = {}
    for g in range(len(ra.labels)):
        members = ra.members[g]
        if len(members) != ra.size[g]:
            continue
        cov = set()
        for p in members:
            q = rb.pos.get(ra.ids[p])
            if q is None or rb.loc[q] < 0:
                break
            cov.add(int(rb.loc[q]))
        else:
            cover[g] = frozenset(cov)
    holders: dict[int, list[int]] = defaultdict(list)  # class of T_b -> classes of T_a
    for g in sorted(cover):
        for h in cover[g]:
            holders[h].append(g)

    def closure(cov: frozenset) -> list[int]:
        out = {g for h in cov for g in holders[h] if cover[g] <= cov}
        return sorted(out)

    rows: list[dict] = []
    seen: set[frozenset] = set()
    queue: deque = deque()
    truncated = False
    grown = 0
    for g in sorted(cover):
        if cover[g] not in seen:
            seen.add(cover[g])
            queue.append(cover[g])
    while queue:
        cov = queue.popleft()
        chosen = closure(cov)
        rows.extend(_difference_rows(ra, rb, cov, chosen, k, c))
        for g in sorted({g for h in cov for g in holders[h]} - set(chosen)):
            bigger = cov | cover[g]
            if bigger in seen:
                continue
            if grown >= max_sets:
                truncated = True
                continue
            grown += 1
            seen.add(bigger)
            queue.append(bigger)
    return rows, truncated


def _difference_rows(
    ra: MatchedRelease, rb: MatchedRelease, cov: frozenset, chosen: list[int], k: int, c: float
) -> list[dict]:
    size = int(sum(rb.size[h] for h in cov) - sum(ra.size[g] for g in chosen))
    left: Counter = Counter()
    for h in cov:
        left.update(rb.sa_count[h])
    for g in chosen:
        left.subtract(ra.sa_count[g])
    if any(n < 0 for n in left.values()) or sum(left.values()) != size:
        raise ReleaseError(
            f"releases {ra.index} and {rb.index} disagree on the sensitive values of the "
            "same persons; records must keep their sensitive value across releases"
        )
    if size == 0:
        return []
    left = Counter({v: n for v, n in left.items() if n > 0})
    reason = _violation(left, size, k, c)
    if not reason:
        return []
    inside = {ra.ids[p] for g in chosen for p in ra.members[g]}
    values = sorted_values(left)
    rows = []
    for h in sorted(cov):
        for q in sorted(rb.members[h]):
            pid = rb.ids[q]
            if pid in inside:
                continue
            cands = tuple(v for v in values if rb.sa_count[h][v] > 0)
            rows.append(
                {
                    "person": pid,
                    "release": rb.index,
                    "against": ra.index,
                    "classes": tuple(rb.label(x) for x in sorted(cov)),
                    "against_classes": tuple(ra.label(g) for g in chosen),
                    "size": size,
                    "candidates": cands,
                    "counts": {v: left[v] for v in values},
                    "confidence": max(left.values()) / size,
                    "inferred": cands[0] if len(cands) == 1 else None,
                    "reason": reason,
                }
            )
    return rows


def _best_difference(rows: list[dict]) -> list[dict]:
    """One row per (person, release, against): the fewest candidates, then the smallest D."""
    best: dict = {}
    for row in rows:
        key = (row["person"], row["release"], row["against"])
        rank = (len(row["candidates"]), row["size"], -row["confidence"])
        if key not in best or rank < best[key][0]:
            best[key] = (rank, row)
    return [row for _, row in best.values()]


def difference(
    releases: Sequence[Generalized],
    populations: Sequence[pd.DataFrame],
    k: int,
    c: float,
    person: str | None = None,
    max_sets: int = 10_000,
    **old,
) -> pd.DataFrame:
    """The difference attack (Byun et al., Section 4.3, Figures 5 and 6).

    For every ordered pair of releases (a, b), a set E of classes of release a whose
    persons all sit (surely) in release b lies within the classes E' of release b that
    hold them (GetMinSet); the persons D of E' outside E then have the values
    ``E'<S> - E<S>``. A pair is vulnerable when D is non-empty and has fewer than ``k``
    persons or a value above the confidence bound ``c`` (read as in :func:`check_kc`).
    Example 1: Tom and Mike's class of Figure 2 lies in the class [21-30] of Figure 4,
    which leaves Alice with Cancer.

    Reported: each person of such a D (surely placed in b), once per pair, with the most
    telling D found. ``candidates`` are the values of ``E'<S> - E<S>`` that the person's
    own class in b holds; ``inferred`` is the value when one is left. Other columns:
    ``release`` (b), ``against`` (a), ``classes`` (E', labels in b),
    ``against_classes`` (E, labels in a), ``size`` (|D|), ``counts`` (the multiset of
    D's values), ``confidence`` (its top count / |D|) and ``reason``.

    The search is exponential in the worst case; Observations 1-3 of the paper prune it
    (see ``_directed``) and it stops after ``max_sets`` sets of two or more classes per
    pair with a
    ``RuntimeWarning`` (``result.attrs["truncated"]`` is then ``True``), so that findings
    may be missing but none is wrong. ``person`` as in :func:`intersection`.

    >>> from maxent_privacy.datasets_byun import byun2008_tables
    >>> t = byun2008_tables()
    >>> found = difference(t["releases"], t["populations"], k=2, c=0.5)
    >>> found.loc[0, ["person", "classes", "against_classes", "candidates"]].tolist()
    ['Alice', (1,), (1,), ('Cancer',)]
    """
    person = person_column(person, old, "difference()")
    k = check_k(k)
    c = resolve_c(c)
    max_sets = check_integer(max_sets, "max_sets", minimum=1)
    rels = match_releases(releases, populations, person)
    rows: list[dict] = []
    truncated = False
    for a in range(len(rels)):
        for b in range(len(rels)):
            if a == b:
                continue
            found, cut = _directed(rels[a], rels[b], k, c, int(max_sets))
            rows.extend(_best_difference(found))
            if cut:
                truncated = True
                warnings.warn(
                    f"difference attack: stopped after {max_sets} class sets of release "
                    f"{a} against release {b}; findings may be incomplete",
                    RuntimeWarning,
                    stacklevel=2,
                )
    out = frame(rows, _DIFFERENCE_COLUMNS, ("person", "inferred"))
    out.attrs["truncated"] = truncated
    return out


# -- all attacks, and the history table ----------------------------------------------------

FINDING_COLUMNS = [
    "attack",
    "release",
    "against",
    "subject",
    "candidates",
    "inferred",
    "evidence",
]


def _records(rows) -> list[dict]:
    return rows.to_dict("records") if isinstance(rows, pd.DataFrame) else list(rows)


def _normal_intersection(rows) -> list[dict]:
    out = []
    for row in _records(rows):
        others = tuple(sorted({r for r, _ in row["classes"]} - {row["release"]}))
        evidence = "classes " + ", ".join(f"{g!r} of release {r}" for r, g in row["classes"])
        if row["eliminated"]:
            evidence += "; removed the values of " + ", ".join(map(repr, row["eliminated"]))
        out.append(
            {
                "attack": "intersection",
                "release": row["release"],
                "against": others,
                "subject": row["person"],
                "candidates": row["candidates"],
                "inferred": row["inferred"],
                "evidence": evidence,
            }
        )
    return out


def _normal_difference(rows) -> list[dict]:
    return [
        {
            "attack": "difference",
            "release": row["release"],
            "against": (row["against"],),
            "subject": row["person"],
            "candidates": row["candidates"],
            "inferred": row["inferred"],
            "evidence": (
                f"classes {row['classes']!r} of release {row['release']} minus classes "
                f"{row['against_classes']!r} of release {row['against']} leave "
                f"{row['size']} record(s) with {row['counts']!r} ({row['reason']})"
            ),
        }
        for row in _records(rows)
    ]


def _normal_tracing(rows) -> list[dict]:
    return [
        {
            "attack": "record_tracing",
            "release": row["release"],
            "against": (row["against"],),
            "subject": row["row"],
            "candidates": row["persons"],
            "inferred": row["inferred"],
            "evidence": (
                f"row {row['row']!r} ({row['value']!r}, group {row['group']!r}) matches rows "
                f"{row['matched']!r} of release {row['against']}; {len(row['persons'])} of "
                f"{row['before']} persons left"
            ),
        }
        for row in _records(rows)
    ]


def findings(
    releases: Sequence[Generalized],
    populations: Sequence[pd.DataFrame],
    k: int,
    c: float,
    person: str | None = None,
    max_sets: int = 10_000,
    **old,
) -> pd.DataFrame:
    """All three attacks on a sequence of releases, in one table.

    Runs :func:`intersection` (with ``c``), :func:`difference` (``k``, ``c``) and
    :func:`record_tracing` (``k``) and lists their findings with columns ``attack``,
    ``release``, ``against`` (tuple of the other releases used), ``subject`` (a person
    id, or for record tracing the row's index label in ``release``), ``candidates``
    (values, or persons for record tracing), ``inferred`` and ``evidence`` (a sentence).
    ``person`` as in :func:`intersection`.

    >>> from maxent_privacy.datasets_byun import byun2008_tables
    >>> t = byun2008_tables()
    >>> findings(t["releases"], t["populations"], k=2, c=2)[["attack", "subject", "inferred"]]
               attack subject   inferred
    0    intersection     Bob  Alzheimer
    1    intersection     Eve   Diabetes
    2    intersection    Hank  Hepatitis
    3    intersection     Sal        Flu
    4      difference   Alice     Cancer
    5  record_tracing       2        Bob
    6  record_tracing       3        Eve
    """
    person = person_column(person, old, "findings()")
    rows = (
        _normal_intersection(intersection(releases, populations, c, person))
        + _normal_difference(difference(releases, populations, k, c, person, max_sets))
        + _normal_tracing(record_tracing(releases, populations, k, person))
    )
    return frame(rows, FINDING_COLUMNS, ("subject", "inferred"))


class History:
    """The history table of Section 5.1: the attacker's knowledge, release by release.

    ``add(release, population)`` checks a new release against everything published so
    far and returns the new findings (columns as in :func:`findings`). It keeps, per
    person, the time stamp of their first release and the set of sensitive values they
    can still have (the paper's TS and IS), updated incrementally with each release's
    classes and the values eliminated so far, so that the intersection attack never
    re-reads old tables. As in the paper's own implementation (its footnote 4), the
    difference attack is checked against every earlier release; record tracing is too
    (pairwise, in place of the IQ field, which needs the record ids only the publisher
    has). The findings after the last release are those of :func:`findings` on the
    whole sequence: the same difference and record-tracing rows, and for each person
    the latest intersection row. ``person`` as in :func:`intersection`.

    >>> from maxent_privacy.datasets_byun import byun2008_tables
    >>> t = byun2008_tables()
    >>> history = History(k=2, c=2)
    >>> history.add(t["figure2"], t["populations"][0]).empty
    True
    >>> history.add(t["figure4"], t["populations"][1])["subject"].tolist()
    ['Bob', 'Eve', 'Hank', 'Sal', 'Alice', 2, 3]
    >>> history.table().loc[["Bob", "Alice"], ["ts", "candidates", "inferred"]].values.tolist()
    [[0, ('Alzheimer',), 'Alzheimer'], [1, ('Asthma', 'Cancer', 'Flu'), None]]
    """

    def __init__(
        self,
        k: int,
        c: float,
        person: str | None = None,
        max_sets: int = 10_000,
        **old,
    ):
        self.person = person_column(person, old, "History()")
        self.k = check_k(k)
        self.c = resolve_c(c)
        self.max_sets = check_integer(max_sets, "max_sets", minimum=1)
        self._rels: list[MatchedRelease] = []
        self._knowledge = Knowledge()
        self._reported: dict = {}
        self.findings = frame([], FINDING_COLUMNS, ("subject", "inferred"))

    @property
    def n_releases(self) -> int:
        """Number of releases added so far."""
        return len(self._rels)

    def add(self, release: Generalized, population: pd.DataFrame) -> pd.DataFrame:
        """Check ``release`` (with its population) against the history, then add it."""
        rel = MatchedRelease(len(self._rels), release, population, self.person)
        knowledge = self._knowledge
        knowledge.add(rel)
        rows: list[dict] = []
        fresh = []
        for pid in knowledge.order:
            row = knowledge.row(pid, self.c)
            if row is None:
                continue
            signature = (row["candidates"], row["inferred"], row["release"])
            if self._reported.get(pid) != signature:
                self._reported[pid] = signature
                fresh.append(row)
        rows.extend(_normal_intersection(fresh))
        found: list[dict] = []
        for old in self._rels:
            for ra, rb in ((old, rel), (rel, old)):
                part, cut = _directed(ra, rb, self.k, self.c, self.max_sets)
                found.extend(_best_difference(part))
                if cut:
                    warnings.warn(
                        f"difference attack: stopped after {self.max_sets} class sets of "
                        f"release {ra.index} against release {rb.index}; findings may be "
                        "incomplete",
                        RuntimeWarning,
                        stacklevel=2,
                    )
        found.sort(key=lambda row: (row["against"], row["release"]))
        rows.extend(_normal_difference(found))
        traced: list[dict] = []
        for old in self._rels:
            if set(old.ids) <= set(rel.pos):
                traced.extend(trace(old, rel, self.k))
        rows.extend(_normal_tracing(traced))
        self._rels.append(rel)
        new = frame(rows, FINDING_COLUMNS, ("subject", "inferred"))
        if len(new):
            self.findings = pd.concat([self.findings, new], ignore_index=True)
        return new

    def table(self) -> pd.DataFrame:
        """The history table: per person (index), ``ts`` (first release), ``candidates``
        (the sensitive values they can still have), ``inferred`` and ``classes``."""
        knowledge = self._knowledge
        rows = []
        for pid in knowledge.order:
            combined = knowledge.combine(knowledge.per_release(pid))
            cands = sorted_values(combined)
            rows.append(
                {
                    "person": pid,
                    "ts": knowledge.where[pid][0][0],
                    "candidates": cands,
                    "inferred": cands[0] if len(cands) == 1 else None,
                    "classes": tuple(
                        (r, knowledge.rels[r].label(g))
                        for r, pos in knowledge.where[pid]
                        for g in sorted(knowledge.rels[r].cand[pos])
                    ),
                }
            )
        columns = ["person", "ts", "candidates", "inferred", "classes"]
        return frame(rows, columns, ("person", "inferred")).set_index("person")
