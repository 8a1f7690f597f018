"""The release planner's checks: what the pooled releases tell about each person.

:class:`Checker` pools releases (the history and a candidate) in one
:class:`~maxent_privacy.MaxEntModel`, adds the stated knowledge, and reads per person

* the adversary's likeliest value and its probability, for any registered adversary
  (:data:`~maxent_privacy.adversaries.ADVERSARY_REGISTRY`; its ``upper`` reading):
  ``"maxent"``: ``result.person_posterior()`` of the model with the stated knowledge (the
  planner's knowledge is the adversary's); ``"learned"``: :func:`~maxent_privacy.definetti`;
  ``"worst"``: the certified LP upper bound of ``model.bounds(by="person")``;
* over the possible worlds (integral assignments of values to people that every release
  and fact allow): how many values the person may hold, and a value they hold in every
  world (``certain``).

Possible worlds are settled first by *witness worlds*, without a solver: the true table
is one world, and for a connected component of the releases (people linked by sharing a
group in some release) and two values a and b that every group of the component holds
equally often (counterfeits included), swapping a and b for everyone of the component
(counterfeits too) leaves every published multiset as it was: another world. Values with
the same counts in every group of the component form a class; a person with true value a
may hold every value of a's class. Each class is checked exactly (the counts compared),
so every witness is a world. A person whose class is too small to settle the checks (one
value: maybe certain; fewer than m) gets the exact answer from the HiGHS integer programs
of ``model.bounds(by="person", exact=True)`` on their components alone. With knowledge
the worlds must satisfy the facts too: the whole pooled model is then bounded exactly.

Connected components are independent problems (no fact links them when there is no
knowledge), so a re-check after a repair solves only the components it touched
(:meth:`Checker.check` with ``scope``) and keeps the others' answers; the learned adversary
(its learner is fitted to the whole table) and knowledge (facts span components) re-check
the whole model.

>>> import pandas as pd
>>> from maxent_privacy import Bucketized
>>> r = Bucketized(pd.DataFrame({"id": [1, 2, 3, 4], "age": [20, 30, 40, 50], "g": [1, 1, 2, 2],
...                              "d": ["flu", "hiv", "flu", "flu"]}), ["age"], "d", "g", "id")
>>> out = Checker(tau=0.6, m=None, adversary="maxent").check([r])
>>> out.table[["value", "risk", "possible"]]
       value  risk  possible
person...
1        flu   0.5         2
2        flu   0.5         2
3        flu   1.0         1
4        flu   1.0         1
>>> out.table["certain"].fillna("-").tolist()  # missing: NaN on pandas 3, None on 2
['-', '-', 'flu', 'flu']
>>> failures(out.table, tau=0.6, m=None)["check"].tolist()
['posterior', 'certain', 'posterior', 'certain']
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .._validation import REACHES
from ..adversaries.registry import (
    ADVERSARY_REGISTRY,
    Adversary,
    assessment,
    get_adversary,
    plannable,
)
from ..errors import ReleaseError
from ..releases.bucketized import Bucketized
from ..releases.checks import shorten

__all__ = ["TOL", "Checker", "Outcome", "Records", "failures", "planning_adversary", "restrict"]

#: a posterior within this of tau counts as reaching it (the package's one tolerance)
TOL = REACHES


def __getattr__(name: str):
    if name == "ADVERSARIES":  # the old constant: the registry's adversaries that plan
        from ..adversaries.registry import adversary_names

        return tuple(adversary_names(where=plannable))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def planning_adversary(adversary) -> Adversary:
    """The registered adversary a plan can be checked against (``plans``), by name."""
    return get_adversary(adversary, where=plannable)


def _label(value):
    return value.item() if isinstance(value, np.generic) else value


# ------------------------------------------------------------------ the records
@dataclass
class Records:
    """Every published record of a list of releases, as codes.

    ``rel``, ``group``, ``person``, ``value``: per record its release (0, 1, ...), its
    group (a code unique across releases), its person (code; -1 for a counterfeit) and
    its sensitive value (code). ``persons``, ``values``: the ids and values by code;
    ``group_rel``, ``group_label``: per group code its release and its label there;
    ``truth``: each person's value code; ``start``: each release's first record.
    """

    rel: np.ndarray
    group: np.ndarray
    person: np.ndarray
    value: np.ndarray
    persons: pd.Index
    values: pd.Index
    group_rel: np.ndarray
    group_label: np.ndarray
    truth: np.ndarray
    start: np.ndarray

    @classmethod
    def of(cls, releases: list[Bucketized]) -> Records:
        """The records of ``releases``; a person with two values is an error naming them."""
        rel, grp, pid, val, real = [], [], [], [], []
        group_rel, group_label, start = [], [], [0]
        offset = 0
        for r, release in enumerate(releases):
            frame = release.frame
            fake = release.is_counterfeit
            codes, labels = pd.factorize(frame[release.group], sort=True)
            grp.append(codes + offset)
            offset += len(labels)
            group_rel.append(np.full(len(labels), r))
            group_label.append(np.asarray(labels, dtype=object))
            ids = np.full(len(frame), None, dtype=object)
            ids[~fake] = release.people[release.person].to_numpy(dtype=object)
            pid.append(ids)
            real.append(~fake)
            val.append(frame[release.sa].to_numpy(dtype=object))
            rel.append(np.full(len(frame), r))
            start.append(start[-1] + len(frame))
        real_all = np.concatenate(real)
        ids_all = np.concatenate(pid)
        person = np.full(len(ids_all), -1, dtype=np.int64)
        codes, persons = pd.factorize(pd.Series(ids_all[real_all], dtype=object))
        person[real_all] = codes
        value, values = pd.factorize(pd.Series(np.concatenate(val), dtype=object))
        rel_all = np.concatenate(rel)
        truth = np.full(len(persons), -1, dtype=np.int64)
        truth[person[real_all][::-1]] = value[real_all][::-1]  # the first record's value
        clash = real_all & (truth[np.maximum(person, 0)] != value)
        if clash.any():
            i = int(np.argmax(clash))
            p = person[i]
            first = int(np.argmax(real_all & (person == p) & (value == truth[p])))
            raise ReleaseError(
                f"person {shorten(_label(persons[p]))} has sensitive value "
                f"{shorten(_label(values[value[first]]))} in release {rel_all[first] + 1} and "
                f"{shorten(_label(values[value[i]]))} in release {rel_all[i] + 1}; pooled "
                "releases follow one value per person (give a changed person a new id)"
            )
        return cls(
            rel=rel_all,
            group=np.concatenate(grp),
            person=person,
            value=value.astype(np.int64),
            persons=pd.Index(persons, dtype=object),
            values=pd.Index(values, dtype=object),
            group_rel=np.concatenate(group_rel),
            group_label=np.concatenate(group_label),
            truth=truth,
            start=np.array(start),
        )

    @property
    def n_groups(self) -> int:
        return len(self.group_rel)

    def components(self) -> tuple[np.ndarray, np.ndarray]:
        """(component of each person, of each group): people linked by shared groups."""
        n_p, n_g = len(self.persons), self.n_groups
        real = self.person >= 0
        rows = self.person[real]
        cols = n_p + self.group[real]
        graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_p + n_g, n_p + n_g))
        _, labels = connected_components(graph, directed=False)
        return labels[:n_p], labels[n_p:]


def restrict(releases: list[Bucketized], rec: Records, keep: np.ndarray) -> list[Bucketized]:
    """The releases cut to the groups ``keep`` (a boolean per group code), each a
    Bucketized of its own (releases left with no group are dropped). ``keep`` should be
    whole components: the cut model then answers for them as the whole model does."""
    out = []
    for r, release in enumerate(releases):
        mask = keep[rec.group[rec.start[r] : rec.start[r + 1]]]
        if not mask.any():
            continue
        out.append(
            Bucketized(
                release.frame.loc[mask],
                release.qi,
                release.sa,
                release.group,
                release.person,
                release.counterfeits,
            )
        )
    return out


# ------------------------------------------------------------------ witness worlds
def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64: a well-spread 64-bit hash of each entry (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def witness_classes(rec: Records, gcomp: np.ndarray) -> tuple[np.ndarray, dict]:
    """Per person, the values that witness worlds prove possible (a list of value
    codes, the true value first), and a summary (classes, worlds). See the module
    docstring: values whose counts agree in every group of the component."""
    nv = len(rec.values)
    key = rec.group.astype(np.int64) * nv + rec.value
    cell, count = np.unique(key, return_counts=True)
    g, v = cell // nv, cell % nv
    c = gcomp[g].astype(np.int64)
    cv = c * nv + v  # one column per (component, value)
    with np.errstate(over="ignore"):
        h = _mix(g.astype(np.uint64) * np.uint64(1_000_003) + count.astype(np.uint64))
    cols, inverse = np.unique(cv, return_inverse=True)
    digest = np.zeros(len(cols), dtype=np.uint64)
    np.add.at(digest, inverse, h)  # order-free: the sum of the entries' hashes
    order = np.argsort(inverse, kind="stable")  # entries of each column, by group
    bounds = np.searchsorted(inverse[order], np.arange(len(cols) + 1))
    col_c, col_v = cols // nv, cols % nv
    # candidate classes: same component and digest; the first column of each is its
    # representative, and every other column is compared with it entry by entry
    _, cand = np.unique(np.stack([col_c.astype(np.uint64), digest]), axis=1, return_inverse=True)
    cand = cand.ravel()
    first = np.full(cand.max() + 1 if len(cand) else 0, len(cand), dtype=np.int64)
    np.minimum.at(first, cand, np.arange(len(cand)))  # the smallest column of each
    rep = first[cand]
    length = np.diff(bounds)
    ok = length == length[rep]
    entries = order  # entries sorted by column (then group)
    col_of = inverse[entries]
    pos = np.arange(len(entries)) - bounds[col_of]
    mine = ok[col_of]
    twin = entries.copy()
    twin[mine] = order[bounds[rep[col_of[mine]]] + pos[mine]]
    same = (g[entries] == g[twin]) & (count[entries] == count[twin])
    bad = np.zeros(len(cols), dtype=bool)
    np.logical_or.at(bad, col_of, ~same)
    ok &= ~bad
    cls = np.where(ok, rep, np.arange(len(cols)))  # a column not proved equal: alone
    worlds = int((ok & (rep != np.arange(len(cols)))).sum())
    members = pd.Series(col_v).groupby(cls).agg(list)
    where = pd.Series(np.arange(len(cols)), index=cols)
    real = rec.person >= 0
    person_comp = np.full(len(rec.persons), -1, dtype=np.int64)
    person_comp[rec.person[real]] = gcomp[rec.group[real]]
    col = where.reindex(person_comp * nv + rec.truth).to_numpy()
    out = np.empty(len(rec.persons), dtype=object)
    lists = members.reindex(cls[col]).to_list()
    for p, (a, vals) in enumerate(zip(rec.truth.tolist(), lists, strict=True)):
        out[p] = [a] + [u for u in vals if u != a]
    summary = {"value_swaps": worlds, "components": int(len(np.unique(gcomp)))}
    return out, summary


# ------------------------------------------------------------------ the checks
@dataclass
class Outcome:
    """One check of pooled releases: ``table`` (one row per person: the adversary's
    likeliest ``value`` and its probability ``risk``; ``possible``, how many values the
    possible worlds allow them (a lower bound where ``settled_by`` is "witness"),
    ``possible_values``; ``certain``, the value every world gives them (missing if none);
    ``proved`` False where an integer program ran out of time) and ``certificates`` (one
    dict per program run)."""

    table: pd.DataFrame
    certificates: list = field(default_factory=list)
    seconds: float = 0.0


def _solve_certificate(result, what: str, scope: int) -> dict:
    c = result.certificate
    out = {
        "check": "posterior",
        "by": what,
        "people": scope,
        "status": str(result.status),
        "ok": bool(c.ok),
        "data_residual": float(c.data_residual),
        "knowledge_residual": float(c.knowledge_residual),
        "entropy": float(c.entropy),
        "dual_bound": float(c.dual_bound),
        "gap": float(c.gap),
        "solver": str(result.solver_stats.get("solver", "?")),
    }
    learned = result.solver_stats.get("definetti")
    if learned:
        out["learned"] = {k: _label(v) for k, v in dict(learned).items()}
    return out


class Checker:
    """Checks of pooled releases against ``tau`` (adversary) and ``m`` (possible values).

    ``apply_knowledge``: None, or a function adding the stated facts to a model (called on
    every model built; the facts make every check run on the whole model).
    ``time_limit``: seconds for each call of ``model.bounds``. ``progress``: a function
    of one line of text, or None.
    """

    def __init__(
        self,
        tau: float,
        m: int | None,
        adversary,
        apply_knowledge: Callable | None = None,
        time_limit: float = 60.0,
        progress: Callable | None = None,
    ):
        self.tau, self.m = tau, m
        self.adversary = planning_adversary(adversary)
        self.apply = apply_knowledge
        self.time_limit = time_limit
        self.say = progress or (lambda text: None)
        self.notes: list[str] = []

    @property
    def incremental(self) -> bool:
        """Whether components can be re-checked alone (no facts, no learner)."""
        return self.apply is None and self.adversary.local

    def model(self, releases):
        from ..model import MaxEntModel

        model = MaxEntModel(releases if len(releases) > 1 else releases[0])
        if self.apply is not None:
            self.apply(model)
        return model

    def _bounds(self, model, exact: bool) -> pd.DataFrame:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            frame = model.bounds(by="person", exact=exact, time_limit=self.time_limit)
        for w in caught:
            self.notes.append(" ".join(str(w.message).split()))
        return frame

    def check(self, releases: list[Bucketized], rec: Records | None = None, scope=None) -> Outcome:
        """Check ``releases`` (pooled), or only the people of ``scope`` (a boolean per
        group code of ``rec``, whole components; ignored unless :attr:`incremental`)."""
        t0 = time.perf_counter()
        rec = rec if rec is not None else Records.of(releases)
        pcomp, gcomp = rec.components()
        if scope is not None and self.incremental:
            keep = np.asarray(scope, dtype=bool)
        else:
            keep = np.ones(rec.n_groups, dtype=bool)
        whole = bool(keep.all())
        people = np.zeros(len(rec.persons), dtype=bool)
        people[np.unique(rec.person[(rec.person >= 0) & keep[rec.group]])] = True
        part = releases if whole else restrict(releases, rec, keep)
        certs: list[dict] = []
        model = self.model(part)
        self.say(f"posterior ({self.adversary.name}) of {int(people.sum()):,} people")
        risk, bounds = self._posterior(model, certs, int(people.sum()))
        table = pd.DataFrame(index=pd.Index(rec.persons[people], name="person", dtype=object))
        top = risk.reindex(table.index)
        if top.isna().any().any():  # pragma: no cover - every person has a row
            missing = top.index[top.isna().any(axis=1)][0]
            raise RuntimeError(f"internal error: no posterior for person {missing!r}")
        values = top.columns.to_numpy(dtype=object)
        arr = top.to_numpy(dtype=float)
        best = np.argmax(arr, axis=1)
        table["value"] = values[best]
        table["risk"] = arr[np.arange(len(arr)), best]
        self.say(f"possible worlds of {int(people.sum()):,} people")
        self._worlds(releases, model, rec, gcomp, keep, table, certs, bounds)
        return Outcome(table, certs, time.perf_counter() - t0)

    def _posterior(self, model, certs: list, scope: int):
        """The adversary's P(value | person) (persons x values; an interval adversary's
        upper reading) and, for "worst" with knowledge, the exact bounds frame (reused by
        the worlds check)."""
        adv = self.adversary
        if adv.name == "worst":
            return self._worst(model, certs, scope)
        if adv.name == "maxent" and model.facts:  # the planner's knowledge is the adversary's
            adv = ADVERSARY_REGISTRY["knowledge"]
        if hasattr(adv, "estimate"):  # a Result, with its certificate
            result = adv.estimate(model)
            label = {"knowledge": "maxent", "learned": "learned (deFinetti)"}.get(adv.name)
            certs.append(_solve_certificate(result, label or adv.name, scope))
            return result.person_posterior(), None
        frame = assessment(adv, model, by="person")
        certs.append({"check": "posterior", "by": adv.name, "people": scope, "proved": False})
        return frame["upper"].unstack(), None

    def _worst(self, model, certs: list, scope: int):
        """The certified LP upper bound per person and value (and the exact frame with
        knowledge: one call for both checks)."""
        exact = self.apply is not None  # one call for both checks
        frame = self._bounds(model, exact=exact)
        column = "lp_upper" if exact else "upper"
        c = frame.attrs.get("certificate", {})
        certs.append(
            {
                "check": "posterior",
                "by": "worst (LP upper bound)",
                "people": scope,
                "all_certified": bool(frame["certified"].all()),
                "max_gap": float(c.get("max_gap", np.nan)),
                "max_dual_violation": float(c.get("max_dual_violation", np.nan)),
                "lps": int(c.get("lps", 0)),
                "time_limit_reached": bool(c.get("time_limit_reached", False)),
            }
        )
        upper = frame[column].unstack()
        return upper, frame if exact else None

    def _worlds(self, releases, model, rec, gcomp, keep, table, certs, frame) -> None:
        need = max(2, self.m or 2)
        possible = np.zeros(len(table), dtype=np.int64)
        listed = np.empty(len(table), dtype=object)
        certain = np.full(len(table), None, dtype=object)
        proved = np.ones(len(table), dtype=bool)
        settled = np.full(len(table), "witness", dtype=object)
        codes = rec.persons.get_indexer(table.index)
        if self.apply is None:
            witness, summary = witness_classes(rec, gcomp)
            sizes = np.array([len(witness[p]) for p in codes], dtype=np.int64)
            possible[:] = sizes
            for i, p in enumerate(codes):
                listed[i] = [_label(rec.values[v]) for v in witness[p]]
            open_ = sizes < need
            certs.append(
                {
                    "check": "worlds",
                    "by": "witness worlds (value swaps)",
                    "people": int(len(table)),
                    "settled": int((~open_).sum()),
                    **summary,
                }
            )
            if not open_.any():
                table["possible"], table["possible_values"] = possible, listed
                table["certain"], table["proved"], table["settled_by"] = certain, proved, settled
                return
            comps = np.unique(
                gcomp[rec.group[np.isin(rec.person, codes[open_]) & (rec.person >= 0)]]
            )
            exact_model = self.model(restrict(releases, rec, np.isin(gcomp, comps) & keep))
            rows = np.flatnonzero(open_)
        else:
            exact_model = model
            rows = np.arange(len(table))
        if frame is None:
            frame = self._bounds(exact_model, exact=True)
        c = frame.attrs.get("certificate", {})
        certs.append(
            {
                "check": "worlds",
                "by": "integer programs (HiGHS)",
                "people": int(len(rows)),
                "milps": int(c.get("milps", 0)),
                "worlds_seen": int(c.get("worlds_seen", 0)),
                "all_exact": bool(frame["exact"].all()),
                "max_gap": float(c.get("max_gap", np.nan)),
                "time_limit_reached": bool(c.get("time_limit_reached", False)),
            }
        )
        poss = frame["possible"]
        cert = frame["certain"]
        who = frame.index.get_level_values(0)
        vals = frame.index.get_level_values(1)
        yes = poss.fillna(False).to_numpy(dtype=bool)
        sure = cert.fillna(False).to_numpy(dtype=bool)
        open_side = (poss.isna() | cert.isna()).to_numpy(dtype=bool)
        per = pd.DataFrame({"who": who, "v": vals, "yes": yes, "sure": sure, "open": open_side})
        grouped = per.groupby("who", sort=False)
        n_yes = grouped["yes"].sum()
        any_open = grouped["open"].any()
        sure_v = per[per["sure"]].groupby("who", sort=False)["v"].first()
        yes_v = per[per["yes"]].groupby("who", sort=False)["v"].agg(list)
        for i in rows:
            p = table.index[i]
            possible[i] = int(n_yes.get(p, 0))
            listed[i] = list(yes_v.get(p, []))
            certain[i] = sure_v.get(p, None)
            proved[i] = not bool(any_open.get(p, False))
            settled[i] = "integer programs"
        table["possible"], table["possible_values"] = possible, listed
        table["certain"], table["proved"], table["settled_by"] = certain, proved, settled


def failures(table: pd.DataFrame, tau: float, m: int | None) -> pd.DataFrame:
    """The failed checks of an outcome's table: one row per person and check, columns
    ``person``, ``check`` ("posterior": the adversary's probability reaches ``tau``;
    "certain": a value in every possible world, or not proved otherwise; "possible":
    fewer than ``m`` possible values), ``value`` and ``number`` (the probability, 1 or
    the count of possible values)."""
    people = table.index.to_numpy(dtype=object)
    risk = table["risk"].to_numpy(dtype=float)
    certain = table["certain"].to_numpy(dtype=object)
    is_certain = pd.notna(certain)
    unproved = ~is_certain & ~table["proved"].to_numpy(dtype=bool)
    few = table["possible"].to_numpy() < m if m is not None else np.zeros(len(table), dtype=bool)
    parts = [
        (risk >= tau - TOL, "posterior", table["value"].to_numpy(dtype=object), risk),
        (is_certain, "certain", certain, np.ones(len(table))),
        (unproved, "certain", np.full(len(table), None, dtype=object), np.full(len(table), np.nan)),
        (
            few,
            "possible",
            np.full(len(table), None, dtype=object),
            table["possible"].to_numpy(float),
        ),
    ]
    frames = [
        pd.DataFrame({"person": people[hit], "check": kind, "value": value[hit], "number": n[hit]})
        for hit, kind, value, n in parts
        if hit.any()
    ]
    if not frames:
        return pd.DataFrame(
            {"person": [], "check": [], "value": [], "number": []}, dtype=object
        ).astype({"number": float})
    order = {"posterior": 0, "certain": 1, "possible": 2}
    out = pd.concat(frames, ignore_index=True)
    out["_p"] = pd.Index(people).get_indexer(out["person"])
    out["_c"] = out["check"].map(order)
    out = out.sort_values(["_p", "_c"], kind="stable").drop(columns=["_p", "_c"])
    return out.reset_index(drop=True)
