"""Matching releases to people, and what the attacker knows (Byun et al. 2008).

The attacker of Byun, Li, Bertino, Li and Sohn ("Privacy-preserving incremental data
dissemination") holds, for each release, a population table: the person id and exact QI of
exactly the individuals in that release (Section 4.1). :class:`MatchedRelease` matches one
release (:class:`~maxent_privacy.generalized.Generalized`) against its population: which
groups each person can be in, narrowed by group sizes; :func:`placement` reports it.
:class:`Knowledge` keeps the sensitive values each person can still have given every
release added so far, with elimination of the values of persons already found (Section
4.4, Example 2), as the history table of Section 5.1 does. The attacks of
:mod:`~maxent_privacy.adversaries.attacks` and :mod:`~maxent_privacy.adversaries.tracing`
are built on these.

>>> from maxent_privacy.datasets_byun import byun2008_tables
>>> t = byun2008_tables()
>>> placement(t["figure4"], t["populations"][1])["groups"].tolist()[:3]
[(1,), (1,), (2,)]
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._validation import aliased
from ..errors import ReleaseError
from ..releases.generalized import Generalized

__all__ = [
    "EPS",
    "Knowledge",
    "MatchedRelease",
    "frame",
    "match_releases",
    "person_column",
    "placement",
    "sorted_values",
]

#: slack of the confidence bound ``c`` (a frequency above ``c + EPS`` breaks it)
EPS = 1e-12


# -- one release matched against its population -------------------------------------------


def person_column(person: str | None, old: dict, where: str) -> str | None:
    """``person``, or the column named by ``id_column=`` (its deprecated name, with a
    ``DeprecationWarning``) among ``old``, the other keywords a public function got; any
    other keyword is an :class:`~maxent_privacy._validation.ArgumentTypeError`."""
    return aliased(person, old, "id_column", "person", where, stacklevel=5)


def _person_column(population: pd.DataFrame, qi: Sequence[str], person: str | None) -> str:
    if person is not None:
        return person
    if not isinstance(population, pd.DataFrame):
        raise ReleaseError(
            f"a population needs a pandas DataFrame, got {type(population).__name__}"
        )
    others = [col for col in population.columns if col not in qi]
    if len(others) != 1:
        raise ReleaseError(
            "cannot tell the person id column of the population (columns: "
            f"{', '.join(map(str, population.columns))}); name it with person=..."
        )
    return others[0]


class MatchedRelease:
    """A release matched against its population: who can be in which group."""

    def __init__(self, index: int, release, population, person: str | None):
        if not isinstance(release, Generalized):
            raise ReleaseError(
                f"release {index} is a {type(release).__name__}, not a Generalized release"
            )
        idc = _person_column(population, release.qi, person)
        ids, types, row_type, person_pos, type_no = release.match(
            population, idc, where=f"release {index}: "
        )
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


def match_releases(releases, populations, person) -> list[MatchedRelease]:
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
        MatchedRelease(i, r, u, person)
        for i, (r, u) in enumerate(zip(releases, populations, strict=True))
    ]


def placement(
    release: Generalized, population: pd.DataFrame, person: str | None = None, **old
) -> pd.DataFrame:
    """Which groups each person of ``population`` can be in, and the group if forced.

    A person can be in a group when one of its rows covers their QI; then group sizes
    narrow this (a group that as many surely-placed persons as records fill is closed to
    the others; a group that exactly as many persons fit takes them all). Columns:
    ``person``, ``groups`` (tuple of labels) and ``group`` (the label if only one is
    left, else ``None``). ``person`` (the population's person id column; ``id_column`` is
    its deprecated name) defaults to the population's only non-QI column.

    >>> from maxent_privacy.datasets_byun import byun2008_tables
    >>> t = byun2008_tables()
    >>> placement(t["figure2"], t["populations"][0])["group"].tolist()
    [1, 1, 2, 2]
    """
    person = person_column(person, old, "placement()")
    rel = MatchedRelease(0, release, population, person)
    rows = [
        {
            "person": pid,
            "groups": tuple(rel.label(g) for g in sorted(cs)),
            "group": rel.label(g) if g >= 0 else None,
        }
        for pid, cs, g in zip(rel.ids, rel.cand, rel.loc.tolist(), strict=True)
    ]
    return frame(rows, ["person", "groups", "group"], ("person", "group"))


def frame(rows: list[dict], columns: list[str], objects: Sequence[str] = ()) -> pd.DataFrame:
    """A DataFrame of ``rows``; the ``objects`` columns keep Python objects (``None``)."""
    out = pd.DataFrame(rows, columns=columns)
    for col in objects:
        out[col] = pd.Series([row[col] for row in rows], index=out.index, dtype=object)
    return out


def sorted_values(values) -> tuple:
    """``values`` as a tuple in a fixed order (by ``str``), as the findings list them."""
    return tuple(sorted(values, key=str))


# -- what the attacker knows (the intersection attack's state) -----------------------------

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


class Knowledge:
    """Sensitive values each person can have, given every release added so far."""

    def __init__(self):
        self.rels: list[MatchedRelease] = []
        self.where: dict = {}  # person -> [(release index, position)]
        self.order: list = []  # persons, first seen first
        self.known: dict = {}  # person -> value
        self.known_in: dict = {}  # (release, group) -> Counter of known located values
        self.watch: dict = defaultdict(list)  # (release, group) -> persons it may hold
        self.touched: list[set] = []  # per release, the groups with known located values
        self._unions: dict = {}

    def add(self, rel: MatchedRelease) -> None:
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
            keep = confidence > c + EPS and single <= c + EPS
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
        candidates = sorted_values(combined)
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
        return frame(rows, _INTERSECTION_COLUMNS, ("person", "inferred"))
