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

import numpy as np
import pandas as pd
from scipy import sparse

from .checks import check_k, resolve_c
from .errors import ReleaseError
from .generalized import Generalized

__all__ = [
    "History",
    "check_kc",
    "difference",
    "findings",
    "intersection",
    "kc_violations",
    "placement",
    "record_tracing",
]

_EPS = 1e-12


# -- (k, c)-anonymity -------------------------------------------------------------------


def _violation(counts: Counter | dict, size: int, k: int, c: float) -> str:
    reasons = []
    if size < k:
        reasons.append(f"fewer than k={k} records")
    if counts and max(counts.values()) > c * size + _EPS:
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


# -- one release matched against its population -------------------------------------------


def _id_column(population: pd.DataFrame, qi: Sequence[str], id_column: str | None) -> str:
    if id_column is not None:
        return id_column
    if not isinstance(population, pd.DataFrame):
        raise ReleaseError(
            f"a population needs a pandas DataFrame, got {type(population).__name__}"
        )
    others = [col for col in population.columns if col not in qi]
    if len(others) != 1:
        raise ReleaseError(
            "cannot tell the person id column of the population (columns: "
            f"{', '.join(map(str, population.columns))}); name it with id_column=..."
        )
    return others[0]


class _Release:
    """A release matched against its population: who can be in which group."""

    def __init__(self, index: int, release, population, id_column: str | None):
        if not isinstance(release, Generalized):
            raise ReleaseError(
                f"release {index} is a {type(release).__name__}, not a Generalized release"
            )
        idc = _id_column(population, release.qi, id_column)
        ids, types, row_type, person_pos, type_no = release.match(population, idc)
        n = release.n_records
        if len(ids) != n:
            raise ReleaseError(
                f"population {index} lists {len(ids)} persons but release {index} has {n} "
                "records; a population must list exactly the release's individuals"
            )
        frame = release.frame
        row_group, labels = pd.factorize(frame[release.group], sort=False)
        self.index = index
        self.release = release
        self.ids = ids.tolist()
        self.pos = {pid: p for p, pid in enumerate(self.ids)}
        self.labels = list(labels)
        self.row_labels = frame.index.tolist()
        self.row_group = row_group
        self.row_type = row_type
        self.row_sa = frame[release.sa].tolist()
        self.type_group = pd.Index(labels).get_indexer(
            pd.Series([key[0] for key in types], dtype=frame[release.group].dtype)
        )
        self.size = np.bincount(row_group, minlength=len(labels))
        self.sa_count = [Counter() for _ in labels]
        for g, v in zip(row_group.tolist(), self.row_sa, strict=True):
            self.sa_count[g][v] += 1
        self.pair_person = person_pos
        self.pair_type = type_no
        cand: list[set] = [set() for _ in self.ids]
        for p, g in zip(person_pos.tolist(), self.type_group[type_no].tolist(), strict=True):
            cand[p].add(g)
        self.cand = self._propagate(cand)
        self.loc = np.array([next(iter(cs)) if len(cs) == 1 else -1 for cs in self.cand])
        self.members: list[set] = [set() for _ in labels]
        for p, g in enumerate(self.loc.tolist()):
            if g >= 0:
                self.members[g].add(p)

    def label(self, g: int):
        return self.labels[g]

    def _propagate(self, cand: list[set]) -> list[frozenset]:
        """Narrow each person's possible groups by group sizes until nothing changes.

        A group holding as many surely-placed persons as records is closed to the
        others; a group that exactly as many persons can fit takes all of them.
        """
        n_groups = len(self.labels)
        while True:
            fixed = np.zeros(n_groups, dtype=np.int64)
            possible = np.zeros(n_groups, dtype=np.int64)
            for p, cs in enumerate(cand):
                if not cs:
                    raise ReleaseError(
                        f"person {self.ids[p]!r} fits no group of release {self.index} "
                        "(or none that has room); the population does not match the release"
                    )
                for g in cs:
                    possible[g] += 1
                if len(cs) == 1:
                    fixed[next(iter(cs))] += 1
            for g in range(n_groups):
                if possible[g] < self.size[g] or fixed[g] > self.size[g]:
                    have = possible[g] if possible[g] < self.size[g] else fixed[g]
                    word = "only" if possible[g] < self.size[g] else "surely"
                    raise ReleaseError(
                        f"group {self.labels[g]!r} of release {self.index} has "
                        f"{self.size[g]} records but {word} {have} persons of the "
                        "population fit it; the population does not match the release"
                    )
            if all(len(cs) == 1 for cs in cand):
                break
            full = {g for g in range(n_groups) if fixed[g] == self.size[g]}
            tight = {g for g in range(n_groups) if possible[g] == self.size[g]}
            changed = False
            for p, cs in enumerate(cand):
                if len(cs) < 2:
                    continue
                hit = cs & tight
                if len(hit) > 1:
                    raise ReleaseError(
                        f"person {self.ids[p]!r} is needed by two groups of release "
                        f"{self.index}; the population does not match the release"
                    )
                new = hit if hit else cs - full
                if new != cs:
                    cand[p] = new
                    changed = True
            if not changed:
                break
        return [frozenset(cs) for cs in cand]

    def held(self) -> tuple[np.ndarray, np.ndarray]:
        """(person position, row type) pairs: who can hold a row of which type."""
        if not hasattr(self, "_held"):
            groups = self.type_group
            keep = np.array(
                [
                    groups[t] in self.cand[p]
                    for p, t in zip(self.pair_person.tolist(), self.pair_type.tolist(), strict=True)
                ],
                dtype=bool,
            )
            self._held = (self.pair_person[keep], self.pair_type[keep])
        return self._held

    def type_people(self) -> dict[int, set]:
        """Row type -> the person ids that can hold a row of that type."""
        out: dict[int, set] = defaultdict(set)
        persons, types = self.held()
        for p, t in zip(persons.tolist(), types.tolist(), strict=True):
            out[t].add(self.ids[p])
        return out


def _releases(releases, populations, id_column) -> list[_Release]:
    releases = list(releases)
    populations = list(populations)
    if len(releases) != len(populations):
        raise ReleaseError(
            f"got {len(releases)} releases but {len(populations)} populations; "
            "give one population table per release"
        )
    if not releases:
        raise ReleaseError("no releases given")
    return [
        _Release(i, r, u, id_column)
        for i, (r, u) in enumerate(zip(releases, populations, strict=True))
    ]


def placement(release: Generalized, population: pd.DataFrame, id_column: str | None = None):
    """Which groups each person of ``population`` can be in, and the group if forced.

    A person can be in a group when one of its rows covers their QI; then group sizes
    narrow this (a group that as many surely-placed persons as records fill is closed to
    the others; a group that exactly as many persons fit takes them all). Columns:
    ``person``, ``groups`` (tuple of labels) and ``group`` (the label if only one is
    left, else ``None``). ``id_column`` defaults to the population's only non-QI column.

    >>> from maxent_privacy.datasets_byun import byun2008_tables
    >>> t = byun2008_tables()
    >>> placement(t["figure2"], t["populations"][0])["group"].tolist()
    [1, 1, 2, 2]
    """
    rel = _Release(0, release, population, id_column)
    rows = [
        {
            "person": pid,
            "groups": tuple(rel.label(g) for g in sorted(cs)),
            "group": rel.label(g) if g >= 0 else None,
        }
        for pid, cs, g in zip(rel.ids, rel.cand, rel.loc.tolist(), strict=True)
    ]
    return _frame(rows, ["person", "groups", "group"], ("person", "group"))


def _frame(rows: list[dict], columns: list[str], objects: Sequence[str] = ()) -> pd.DataFrame:
    """A DataFrame of ``rows``; the ``objects`` columns keep Python objects (``None``)."""
    out = pd.DataFrame(rows, columns=columns)
    for col in objects:
        out[col] = pd.Series([row[col] for row in rows], index=out.index, dtype=object)
    return out


def _sorted_values(values) -> tuple:
    return tuple(sorted(values, key=str))


# -- intersection attack -------------------------------------------------------------------

_INTERSECTION_COLUMNS = [
    "person",
    "release",
    "classes",
    "candidates",
    "counts",
    "confidence",
    "inferred",
    "via",
    "eliminated",
]


class _Knowledge:
    """Sensitive values each person can have, given every release added so far."""

    def __init__(self):
        self.rels: list[_Release] = []
        self.where: dict = {}  # person -> [(release index, position)]
        self.order: list = []  # persons, first seen first
        self.known: dict = {}  # person -> value
        self.known_in: dict = {}  # (release, group) -> Counter of known located values
        self.watch: dict = defaultdict(list)  # (release, group) -> persons it may hold
        self.touched: list[set] = []  # per release, the groups with known located values
        self._unions: dict = {}

    def add(self, rel: _Release) -> None:
        r = len(self.rels)
        self.rels.append(rel)
        self.touched.append(set())
        for pos, pid in enumerate(rel.ids):
            if pid not in self.where:
                self.where[pid] = []
                self.order.append(pid)
            self.where[pid].append((r, pos))
            for g in rel.cand[pos]:
                self.watch[(r, g)].append(pid)
            g = int(rel.loc[pos])
            if pid in self.known and g >= 0:
                self.known_in.setdefault((r, g), Counter())[self.known[pid]] += 1
                self.touched[r].add(g)
        self._run(rel.ids)

    def _remaining(self, r: int, g: int, pid, here: bool) -> Counter:
        """Group g's values less those of the other surely-placed persons known."""
        known = self.known_in.get((r, g))
        if not known:
            return self.rels[r].sa_count[g]
        rem = Counter(self.rels[r].sa_count[g])
        rem.subtract(known)
        if here and pid in self.known:
            rem[self.known[pid]] += 1
        return Counter({v: n for v, n in rem.items() if n > 0})

    def _union(self, r: int, groups: frozenset) -> Counter:
        """The multiset union (max of counts) of the groups' values, cached."""
        key = (r, groups)
        if key not in self._unions:
            m: Counter = Counter()
            for g in groups:
                for v, n in self.rels[r].sa_count[g].items():
                    if n > m[v]:
                        m[v] = n
            self._unions[key] = m
        return self._unions[key]

    def per_release(self, pid, eliminate: bool = True) -> list[tuple[int, Counter]]:
        out = []
        for r, pos in self.where[pid]:
            rel = self.rels[r]
            groups = rel.cand[pos]
            if not eliminate or groups.isdisjoint(self.touched[r]):
                out.append((r, self._union(r, groups)))
                continue
            m: Counter = Counter()
            for g in groups:
                for v, n in self._remaining(r, g, pid, rel.loc[pos] == g).items():
                    if n > m[v]:
                        m[v] = n
            out.append((r, m))
        return out

    @staticmethod
    def combine(per: list[tuple[int, Counter]]) -> Counter:
        combined = None
        for _, m in per:
            combined = Counter(m) if combined is None else combined & m
        return combined if combined is not None else Counter()

    def _run(self, persons) -> None:
        queue = deque(persons)
        queued = set(queue)
        while queue:
            pid = queue.popleft()
            queued.discard(pid)
            if pid in self.known:
                continue
            combined = self.combine(self.per_release(pid))
            if not combined:
                raise ReleaseError(
                    f"person {pid!r}: no sensitive value fits every class the releases "
                    "allow; the releases or populations contradict each other"
                )
            if len(combined) > 1:
                continue
            value = next(iter(combined))
            self.known[pid] = value
            for r, pos in self.where[pid]:
                g = int(self.rels[r].loc[pos])
                if g < 0:
                    continue
                self.known_in.setdefault((r, g), Counter())[value] += 1
                self.touched[r].add(g)
                for q in self.watch[(r, g)]:
                    if q not in self.known and q not in queued:
                        queue.append(q)
                        queued.add(q)

    def row(self, pid, c: float | None) -> dict | None:
        per = self.per_release(pid)
        combined = self.combine(per)
        plain = self.per_release(pid, eliminate=False)
        base = min(len(m) for _, m in plain)
        confidence = max(combined.values()) / sum(combined.values())
        if c is None:
            keep = len(combined) < base
        else:
            single = max(max(m.values()) / sum(m.values()) for _, m in plain)
            keep = confidence > c + _EPS and single <= c + _EPS
        if not keep:
            return None
        classes = []
        eliminated = []
        for r, pos in self.where[pid]:
            rel = self.rels[r]
            classes.extend((r, rel.label(g)) for g in sorted(rel.cand[pos]))
            g = int(rel.loc[pos])
            if g >= 0:
                eliminated.extend(
                    rel.ids[q]
                    for q in sorted(rel.members[g])
                    if q != pos and rel.ids[q] in self.known
                )
        pure = set(self.combine(plain))
        if pure == set(combined):
            via, eliminated = "intersection", []
        else:
            via = "intersection+elimination" if len(per) > 1 else "elimination"
        candidates = _sorted_values(combined)
        return {
            "person": pid,
            "release": self.where[pid][-1][0],
            "classes": tuple(classes),
            "candidates": candidates,
            "counts": {v: combined[v] for v in candidates},
            "confidence": confidence,
            "inferred": candidates[0] if len(candidates) == 1 else None,
            "via": via,
            "eliminated": tuple(dict.fromkeys(eliminated)),
        }

    def report(self, c: float | None) -> pd.DataFrame:
        rows = [row for pid in self.order if (row := self.row(pid, c)) is not None]
        return _frame(rows, _INTERSECTION_COLUMNS, ("person", "inferred"))


def intersection(
    releases: Sequence[Generalized],
    populations: Sequence[pd.DataFrame],
    c: float | None = None,
    id_column: str | None = None,
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
    class does (read as in :func:`check_kc`; ``c=2`` is 1/2).

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
    c = None if c is None else resolve_c(c)
    knowledge = _Knowledge()
    for rel in _releases(releases, populations, id_column):
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
    ra: _Release, rb: _Release, k: int, c: float, max_sets: int
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
    ra: _Release, rb: _Release, cov: frozenset, chosen: list[int], k: int, c: float
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
    values = _sorted_values(left)
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
    id_column: str | None = None,
    max_sets: int = 10_000,
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
    may be missing but none is wrong.

    >>> from maxent_privacy.datasets_byun import byun2008_tables
    >>> t = byun2008_tables()
    >>> found = difference(t["releases"], t["populations"], k=2, c=0.5)
    >>> found.loc[0, ["person", "classes", "against_classes", "candidates"]].tolist()
    ['Alice', (1,), (1,), ('Cancer',)]
    """
    k = check_k(k)
    c = resolve_c(c)
    if isinstance(max_sets, bool) or not isinstance(max_sets, (int, np.integer)) or max_sets < 1:
        raise ReleaseError(f"max_sets must be a positive integer, got {max_sets!r}")
    rels = _releases(releases, populations, id_column)
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
    out = _frame(rows, _DIFFERENCE_COLUMNS, ("person", "inferred"))
    out.attrs["truncated"] = truncated
    return out


# -- record-tracing attack -----------------------------------------------------------------

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


def _trace(ra: _Release, rb: _Release, k: int | None) -> list[dict]:
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


def _remove_infeasible(ra: _Release, rb: _Release, edges: dict[int, set]) -> None:
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
    id_column: str | None = None,
) -> pd.DataFrame:
    """The record-tracing attack (Byun et al., Section 4.5, Example 3, Figure 10).

    For every pair of releases a < b where b's population contains a's, each row r of
    release a is matched to the rows of release b it may be: same sensitive value and
    some person who can hold both (compatible QI, as placed by :func:`placement`).
    Infeasible edges of this bipartite graph are removed (Figure 10 and the Figure 9(ii)
    rule, see ``_remove_infeasible``); the persons r can belong to are then those that
    can hold r and one of its remaining matches.

    Reported rows: with ``k=None``, those whose candidate persons shrink below what
    release a alone allows; with ``k``, those also left with fewer than ``k``. Columns:
    ``release`` (a), ``against`` (b), ``row`` (the row's index label in a), ``group``,
    ``value``, ``matched`` and ``matched_groups`` (rows and groups of b left),
    ``persons`` (candidates, population order), ``before`` (how many release a alone
    allows) and ``inferred`` (the person if one is left). Rows that no release tells
    apart (same group, cells and value) are interchangeable; as in the paper, they are
    matched in order, so the findings hold for some order of such rows.

    >>> from maxent_privacy.datasets_byun import byun2008_tables
    >>> t = byun2008_tables()
    >>> record_tracing(t["releases"], t["populations"])[["row", "value", "persons"]]
      row      value persons
    0   2  Alzheimer  (Bob,)
    1   3   Diabetes  (Eve,)
    """
    if k is not None:
        k = check_k(k)
    rels = _releases(releases, populations, id_column)
    rows: list[dict] = []
    for a in range(len(rels)):
        for b in range(a + 1, len(rels)):
            if set(rels[a].ids) <= set(rels[b].pos):
                rows.extend(_trace(rels[a], rels[b], k))
    return _frame(rows, _TRACING_COLUMNS, ("row", "value", "inferred"))


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
    id_column: str | None = None,
    max_sets: int = 10_000,
) -> pd.DataFrame:
    """All three attacks on a sequence of releases, in one table.

    Runs :func:`intersection` (with ``c``), :func:`difference` (``k``, ``c``) and
    :func:`record_tracing` (``k``) and lists their findings with columns ``attack``,
    ``release``, ``against`` (tuple of the other releases used), ``subject`` (a person
    id, or for record tracing the row's index label in ``release``), ``candidates``
    (values, or persons for record tracing), ``inferred`` and ``evidence`` (a sentence).

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
    rows = (
        _normal_intersection(intersection(releases, populations, c, id_column))
        + _normal_difference(difference(releases, populations, k, c, id_column, max_sets))
        + _normal_tracing(record_tracing(releases, populations, k, id_column))
    )
    return _frame(rows, FINDING_COLUMNS, ("subject", "inferred"))


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
    the latest intersection row.

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
        id_column: str | None = None,
        max_sets: int = 10_000,
    ):
        self.k = check_k(k)
        self.c = resolve_c(c)
        self.id_column = id_column
        self.max_sets = int(max_sets)
        self._rels: list[_Release] = []
        self._knowledge = _Knowledge()
        self._reported: dict = {}
        self.findings = _frame([], FINDING_COLUMNS, ("subject", "inferred"))

    @property
    def n_releases(self) -> int:
        """Number of releases added so far."""
        return len(self._rels)

    def add(self, release: Generalized, population: pd.DataFrame) -> pd.DataFrame:
        """Check ``release`` (with its population) against the history, then add it."""
        rel = _Release(len(self._rels), release, population, self.id_column)
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
                traced.extend(_trace(old, rel, self.k))
        rows.extend(_normal_tracing(traced))
        self._rels.append(rel)
        new = _frame(rows, FINDING_COLUMNS, ("subject", "inferred"))
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
            cands = _sorted_values(combined)
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
        return _frame(rows, columns, ("person", "inferred")).set_index("person")
