"""The release planner's repairs: counterfeits and merges of the groups of failing people.

:class:`Repairs` changes the planner's working table (the candidate release, one row per
record, a counterfeit column) once per round, for every failing person at once:

1. a group that lacks records of the last earlier group of a failing member (or of
   someone who left, whose old group-mates it holds) gets counterfeits of them, so that
   it publishes at least that group's multiset again (Xiao and Tao's repair, which
   keeps a person's signature; once per group);
2. else a group gets one counterfeit, while it holds fewer counterfeits than real
   people: for members an adversary is too sure of, of another value of their last
   earlier group (evidence multiplies over releases where both groups publish a value),
   else of the commonest value the group lacks, else of any other value; for people who
   left, of the value an adversary gives them (their old group-mates then hold it
   likelier, and they less);
3. else the group merges with a neighbour (:meth:`Groups.neighbour`).

Both kinds only add possible worlds: every assignment the old release allowed, the new
one allows too (a counterfeit takes its own value; a merged group's multiset is the union),
so nobody's possible values shrink.

>>> import pandas as pd
>>> work = pd.DataFrame({"age": [20, 30, 40, 50], "d": ["a", "b", "a", "c"],
...                      "group": [1, 1, 2, 2], "id": [1, 2, 3, 4], "fake": False})
>>> renumber(work.assign(group=[5, 5, 9, 9]), "group", "fake")[1]
{5: 1, 9: 2}
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from ..releases.bucketized import Bucketized
from ..releases.checks import shorten

__all__ = ["Groups", "Repairs", "mates", "plain", "renumber", "signatures", "spans"]


class Groups:
    """The working table's groups: value sets, QI centroids and history signatures, for
    choosing the neighbour a failing group merges with."""

    def __init__(self, work, roles, values: pd.Index, sig_of: dict, span):
        qi, sa, group = roles.qi, roles.sa, roles.group
        person, counterfeits = roles.person, roles.counterfeits
        self.labels, codes = np.unique(work[group].to_numpy(), return_inverse=True)
        n, nv = len(self.labels), len(values)
        vcode = values.get_indexer(work[sa])
        self.count = np.zeros((n, nv), dtype=np.int64)  # published records per value
        np.add.at(self.count, (codes, vcode), 1)
        self.has = self.count > 0
        real = ~work[counterfeits].to_numpy(dtype=bool)
        self.reals = np.bincount(codes[real], minlength=n)
        self.fakes = np.bincount(codes[~real], minlength=n)
        keys = qi_keys(work.loc[real, qi], span)
        sums = np.zeros((n, len(qi)))
        np.add.at(sums, codes[real], keys)
        self.centroid = sums / np.maximum(np.bincount(codes[real], minlength=n), 1)[:, None]
        # the history signature all members share (free: no member has one; mixed: differ)
        ids = work[person].to_numpy(dtype=object)
        kinds: dict = {}
        sig_id = np.array(
            [kinds.setdefault(sig_of[p], len(kinds)) if p in sig_of else -1 for p in ids]
        )
        has = real & (sig_id >= 0)
        lo = np.full(n, np.iinfo(np.int64).max)
        hi = np.full(n, -1)
        np.minimum.at(lo, codes[has], sig_id[has])
        np.maximum.at(hi, codes[has], sig_id[has])
        self.free = hi < 0
        self.mixed = ~self.free & (lo != hi)
        table = np.zeros((len(kinds) + 1, nv), dtype=bool)
        for s, k in kinds.items():
            table[k, list(s)] = True
        self.sig = table[np.where(self.free, len(kinds), hi)]
        self.index = {lab: k for k, lab in enumerate(self.labels.tolist())}

    def neighbour(self, label, wanted: np.ndarray, taken: set, risky=()):
        """The group to merge ``label`` with: with ``risky`` values (an adversary's
        likeliest), the lowest share of them in the merged group; then the most wanted
        values added by a group of new people (a group of people with a signature holds
        its own values: it adds no freedom); then a compatible signature (every member
        keeps theirs); then the nearest in the quasi-identifiers."""
        k = self.index[label]
        union = self.has[k] | self.has
        gain = (self.has & ~self.has[k] & wanted).sum(axis=1) * self.free
        size = self.count.sum(axis=1)
        risky = list(risky)
        share = (
            (self.count[k, risky].sum() + self.count[:, risky].sum(axis=1)) / (size[k] + size)
            if risky
            else np.zeros(len(size))
        )
        own = self.free[k] | (~self.mixed[k] & (self.sig[k] == union).all(axis=1))
        other = self.free | (~self.mixed & (self.sig == union).all(axis=1))
        compatible = own & other
        dist = np.abs(self.centroid - self.centroid[k]).sum(axis=1)
        blocked = np.array([lab in taken for lab in self.labels.tolist()])
        blocked[k] = True
        if blocked.all():
            return None, False
        order = np.lexsort((dist, ~compatible, -gain, np.round(share, 12)))
        best = next(j for j in order if not blocked[j])
        return self.labels[best], bool(compatible[best])


def qi_keys(qi_frame: pd.DataFrame, span: dict) -> np.ndarray:
    """QI values as numbers in [0, 1] (numbers scaled by their range, text by its rank)."""
    out = np.zeros((len(qi_frame), qi_frame.shape[1]))
    for j, col in enumerate(qi_frame.columns):
        kind, a, b = span[col]
        values = qi_frame[col]
        if kind == "number":
            out[:, j] = (values.to_numpy(dtype=float) - a) / b
        else:
            out[:, j] = a.get_indexer(values.astype(str)) / b
    return out


def spans(frame: pd.DataFrame, qi: list) -> dict:
    out = {}
    for col in qi:
        s = frame[col]
        if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
            lo, hi = float(s.min()), float(s.max())
            out[col] = ("number", lo, max(hi - lo, 1.0))
        else:
            uniq = pd.Index(np.unique(s.astype(str).to_numpy()))
            out[col] = ("text", uniq, max(len(uniq) - 1, 1))
    return out


def signatures(history: list[Bucketized], values: pd.Index) -> tuple[dict, dict]:
    """Per person of the history: their *signature*, the value codes every one of their
    groups published (the intersection of the groups' value sets), and the multiset of
    value codes of their last group (a Counter)."""
    sig: dict = {}
    last: dict = {}
    for rel in history:
        g, labels = pd.factorize(rel.frame[rel.group])
        v = values.get_indexer(rel.frame[rel.sa])
        cells, n = np.unique(np.stack([g, v]), axis=1, return_counts=True)
        cuts = np.flatnonzero(np.diff(cells[0])) + 1
        bags = [
            Counter(dict(zip(vs.tolist(), ns.tolist(), strict=True)))
            for vs, ns in zip(np.split(cells[1], cuts), np.split(n, cuts), strict=True)
        ]
        sets = [frozenset(b) for b in bags]
        people = rel.people
        where = pd.Index(labels).get_indexer(people[rel.group])
        for p, k in zip(people[rel.person].tolist(), where.tolist(), strict=True):
            sig[p] = sets[k] if p not in sig else sig[p] & sets[k]
            last[p] = bags[k]
    return sig, last


def mates(history: list[Bucketized]) -> dict:
    """Per person of the history, the people who shared a group with them."""
    mates: dict = {}
    for rel in history:
        people = rel.people
        for _, ids in people.groupby(rel.group, sort=False)[rel.person]:
            members = ids.tolist()
            for p in members:
                mates.setdefault(p, set()).update(members)
    return mates


class Repairs:
    """The repairs of one plan: the roles, the values (codes of the checks), the values
    by frequency in the table, each person's earlier signature, and what it remembers
    across rounds (groups given their signature's counterfeits; groups with no neighbour
    left to merge with, ``blocked``)."""

    def __init__(self, roles, values: pd.Index, common: list, history: list, span: dict):
        self.qi, self.sa, self.group = roles.qi, roles.sa, roles.group
        self.person, self.counterfeits = roles.person, roles.counterfeits
        self.roles = roles
        self.values, self.common, self.span = values, common, span
        self.sig, self.last = signatures(history, values)
        self.counterfeited: set = set()
        self.blocked: set = set()

    def apply(self, work: pd.DataFrame, rnd: int, fails: pd.DataFrame, targets: dict):
        """Repair the target groups (``{(person, check): groups}``), all changes of the
        round at once; (the new working table, the rows of the repairs table, the groups
        touched)."""
        values = self.values
        groups = Groups(work, self.roles, values, self.sig, self.span)
        work = work.copy()
        by_group: dict = {}
        for key, gs in targets.items():
            for g in gs:
                by_group.setdefault(g, []).append(key)
        info = {
            (p, c): (v, n)
            for p, c, v, n in zip(
                fails["person"], fails["check"], fails["value"], fails["number"], strict=True
            )
        }
        real = ~work[self.counterfeits].to_numpy(dtype=bool)
        here = set(work.loc[real, self.person].tolist())
        rows, touched, taken, merge, fakes, adding = [], set(), set(), {}, [], {}
        for g in sorted(by_group, key=str):
            if g in taken:
                continue
            keys = by_group[g]
            k = groups.index[g]
            missing, wanted, risky, dilute = self._needs(groups, k, keys, info, here)
            if missing and g not in self.counterfeited:
                add = sorted(missing.elements())
                self.counterfeited.add(g)
            elif dilute and groups.fakes[k] + len(adding.get(g, ())) < groups.reals[k]:
                add = dilute[:1]  # one more record, of the commonest value that helps
            else:
                add = []
            if add:
                shown = ", ".join(shorten(plain(values[v]), 20) for v in add)
                action = f"counterfeit {shown} added to group {g}"
                fakes += [(values[v], g) for v in add]
                adding.setdefault(g, []).extend(add)
                touched.add(g)
                taken.add(g)
            else:
                other, compatible = groups.neighbour(g, wanted, taken, sorted(risky))
                if other is None:
                    self.blocked.add(g)
                    continue
                kind = "same signature" if compatible else "other signature"
                action = f"group {g} merged with group {other} ({kind})"
                merge[other] = g
                touched.update({g, other})
                taken.update({g, other})
            rows += _repair_rows(rnd, keys, info, action, g)
        return self._changed(work, merge, fakes), rows, touched

    def _needs(self, groups: Groups, k: int, keys: list, info: dict, here: set):
        """What group ``k`` (failing for ``keys``) needs: the values its members' earlier
        groups had and it lacks (``missing``), the values a merge partner may bring
        (``wanted``), the values an adversary is too sure of (``risky``) and the values
        that dilute them, best first (``dilute``)."""
        values, sig = self.values, self.sig
        have = groups.has[k]
        bag = Counter({v: int(c) for v, c in enumerate(groups.count[k]) if c})
        missing: Counter = Counter()
        wanted = np.zeros(len(values), dtype=bool)
        all_history = True
        for p, _ in keys:
            s = sig.get(p)
            if s is None:
                all_history = False
                continue
            wanted[list(s)] = True
            missing |= self.last[p] - bag  # what their last group had and this lacks
        if not all_history or not wanted.any():
            wanted[:] = True
        risky = {
            values.get_loc(info[key][0]) for key in keys if key[1] == "posterior"
        }  # the values an adversary is too sure of
        # which value dilutes: for an adversary too sure of some values, the other
        # values of the members' last groups (evidence multiplies over releases: only
        # values both groups publish count), fewest here first; then values the group
        # lacks; then, too sure, any other value (commonest first)
        earlier: Counter = Counter()
        for p, _ in keys:
            earlier |= self.last.get(p, Counter())
        dilute = sorted(
            (v for v in earlier if risky and v not in risky),
            key=lambda v: (bag[v] / earlier[v], self.common.index(v)),
        )
        dilute += [v for v in self.common if not have[v] and v not in dilute]
        dilute += [v for v in self.common if risky and v not in risky and v not in dilute]
        if risky and all(p not in here for p, c in keys if c == "posterior"):
            # people who left, too likely to hold a value: more of it here makes their
            # old group-mates likelier to hold it, and them less
            dilute = sorted(risky, key=self.common.index)
        return missing, wanted, risky, dilute

    def _changed(self, work: pd.DataFrame, merge: dict, fakes: list) -> pd.DataFrame:
        """``work`` with the groups of ``merge`` relabelled and the counterfeits added."""
        if merge:
            labels = work[self.group]
            work[self.group] = labels.map(merge).fillna(labels).astype(labels.dtype)
        if fakes:
            fake = pd.DataFrame(
                {
                    **{c: [np.nan] * len(fakes) for c in self.qi},
                    self.sa: [v for v, _ in fakes],
                    self.group: [g for _, g in fakes],
                    self.person: [np.nan] * len(fakes),
                    self.counterfeits: [True] * len(fakes),
                }
            )
            work = pd.concat([work, fake], ignore_index=True)
        return work


def _repair_rows(rnd: int, keys: list, info: dict, action: str, g) -> list[dict]:
    """The rows of the repairs table for group ``g``'s failures ``keys``."""
    rows = []
    for p, check in keys:
        value, number = info[(p, check)]
        rows.append(
            {
                "round": rnd,
                "person": p,
                "check": check,
                "value": value,
                "number": float(number),
                "action": action,
                "group": g,
            }
        )
    return rows


def plain(value):
    """A numpy scalar as the Python value (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def renumber(work: pd.DataFrame, group: str, counterfeits: str) -> tuple[pd.DataFrame, dict]:
    """Groups numbered 1, 2, ... (in order of their old labels), each group's people
    first, then its counterfeits; the old -> new map."""
    labels = sorted(work[group].unique().tolist())
    new = {old: k for k, old in enumerate(labels, start=1)}
    out = work.copy()
    out[group] = out[group].map(new).astype(np.int64)
    out = out.sort_values([group, counterfeits], kind="stable").reset_index(drop=True)
    return out, new
