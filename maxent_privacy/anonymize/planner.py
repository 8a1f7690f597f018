"""The release planner: the next release, checked against everything published before it.

:func:`plan_release` makes a candidate next release (m-invariant, history-guided or
Anatomy), pools it with the earlier releases in one maximum-entropy model (with the stated
knowledge), checks every person (:mod:`.plan_checks`) and repairs only the groups of the
people who fail, re-checking the components a repair touched, until every check passes
or no repair is left. It returns the release and a :class:`PlanReport`.

**The candidate**: with ``m``, :func:`~.m_invariant.m_invariant` with
``max(m, l)`` (else ``m`` when the history is not that unique), where ``l`` is the
fewest distinct values per group with 1/l below ``tau`` (``floor(1/tau) + 1``, at
most the number of values: ``ceil(1/tau)`` groups would reach ``tau`` when 1/tau is
whole); without ``m``, the history-guided release (:func:`~.history.history_guided`
from the last earlier release) or, for a first release, Anatomy with ``l`` (padded
with counterfeits by the m-unique rule where Anatomy cannot be l-diverse).

**Repairs**, once per round for every person who fails (never one person at a time):

* people who fail on ``history`` alone are not repaired (possible worlds only shrink
  as releases are added; the report names them), nor worst-case failures (a merge or
  a counterfeit only adds tables: an upper bound never goes down);
* a failing person's group (for someone who left, the groups of their old group-mates)
  first gets *counterfeits* of the values of their earlier signature it lacks (the
  values every earlier group of theirs published; once per group), else is *merged*
  with a neighbour group: the one adding most of the values wanted, then one whose
  members keep their signature (a compatible signature), then the nearest in the
  quasi-identifiers.

Both repairs only add possible worlds (no one's possible values shrink). After each
round the components the repairs touched are checked again, the others keep their
answers (with knowledge or the learned adversary the whole model is checked again).
The loop ends when everyone passes, after ``max_rounds`` rounds or when no repair is
left; the release returned is the one with the fewest failing people, then failed
checks (the earliest of them). Nothing is raised when no release passes:
``report.passed`` is False and ``report.reasons`` says why (for example ``tau`` at
most 1/d with d distinct values: every posterior of d values or fewer has a value at
1/d or more).

**Utility** (:mod:`.utility`): the mean relative error of ``queries`` random count
queries over QI and sensitive value answered under the uniform-within-group
assumption, the share of counterfeit records and the mean group size, of the
candidate and of the returned release.

>>> import pandas as pd
>>> from maxent_privacy.anonymize import plan_release
>>> t1 = pd.DataFrame({"id": range(1, 7), "age": [21, 23, 30, 50, 52, 60],
...                    "disease": ["flu", "hiv", "cold", "flu", "hiv", "cold"]})
>>> first, report = plan_release([], t1, ["age"], "disease", tau=0.5, person="id")
>>> report.passed, first.n_groups
(True, 2)
>>> t2 = t1[t1["id"] != 4]                                      # person 4 leaves
>>> second, report = plan_release([first], t2, ["age"], "disease", tau=0.5, person="id")
>>> report.passed, report.repaired          # 4 was certain of flu, 5 and 6 at 1/2 ...
(True, [4, 5, 6])
>>> report.repairs["action"].iloc[0]        # ... until a counterfeit flu joined them
"counterfeit 'flu' added to group 2"
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from .._validation import (
    ArgumentError,
    check_integer,
    check_progress,
    check_seconds,
    check_threshold,
)
from ..errors import MaxEntError, ReleaseError
from ..knowledge.normalise import as_knowledge
from ..releases.bucketized import Bucketized
from ..releases.checks import shorten
from .anatomy import anatomize
from .history import history_guided
from .m_invariant import check_next_table, history_releases, m_invariant
from .plan_checks import TOL, Checker, Records, failures, planning_adversary
from .plan_repairs import Repairs, mates, plain, renumber, spans
from .plan_report import PlanReport
from .utility import release_utility

__all__ = ["PlanOptions", "PlanReport", "Roles", "plan_release"]


# ------------------------------------------------------------------ records
@dataclass(frozen=True)
class Roles:
    """The columns of a plan's working table: ``qi``, ``sa``, ``group``, ``person`` and
    ``counterfeits`` (the flag of a counterfeit record)."""

    qi: list
    sa: str
    group: str
    person: str
    counterfeits: str


@dataclass(frozen=True)
class PlanOptions:
    """The planner's settings beyond what it checks (:func:`plan_release`'s keyword options).

    seed : seed of the candidate's random choices and of the utility's queries.
    group, counterfeits : names of the group and counterfeit columns of the release.
    progress : None/False (silent), True (a line per step on standard error) or a function
        of one line of text.
    max_rounds : rounds of repairs at most.
    time_limit : seconds of each call of ``model.bounds`` (integer programs).
    queries : count queries of the utility measure.
    """

    seed: object = 0
    group: str = "group"
    counterfeits: str = "counterfeit"
    progress: object = None
    max_rounds: int = 10
    time_limit: float = 60.0
    queries: int = 1000

    @classmethod
    def of(cls, options: dict) -> PlanOptions:
        """The options given to :func:`plan_release` (an ``options=PlanOptions(...)`` and/or
        its fields as keywords), checked."""
        base = options.pop("options", None) or cls()
        if not isinstance(base, cls):
            raise ArgumentError(f"options must be a PlanOptions, got {type(base).__name__}")
        names = [f.name for f in fields(cls)]
        unknown = [k for k in options if k not in names]
        if unknown:
            raise ArgumentError(
                f"plan_release() got an unexpected keyword {unknown[0]!r}; its options are "
                f"{', '.join(names)}"
            )
        got = {f: options.get(f, getattr(base, f)) for f in names}
        got["max_rounds"] = check_integer(got["max_rounds"], "max_rounds", minimum=0)
        got["queries"] = check_integer(got["queries"], "queries", minimum=1)
        got["time_limit"] = check_seconds(got["time_limit"], none=False)
        check_progress(got["progress"])
        return cls(**got)


@dataclass
class Round:
    """One round of checks: how many people and checks fail, its working table, the
    people's answers and every certificate so far."""

    people_failing: int
    checks_failing: int
    number: int
    work: pd.DataFrame
    table: pd.DataFrame
    checks: list

    def better_than(self, other: Round | None) -> bool:
        """Fewer failing people, then fewer failed checks (the earlier round on a tie)."""
        if other is None:
            return True
        mine = (self.people_failing, self.checks_failing)
        return mine < (other.people_failing, other.checks_failing)


@dataclass
class RepairLog:
    """The rounds of a plan: one row per round, the repairs made, why a failing check was
    not repaired, and the best round."""

    rounds: list = field(default_factory=list)
    repairs: list = field(default_factory=list)
    why: dict = field(default_factory=dict)
    best: Round | None = None


# ------------------------------------------------------------------ arguments
def _check_m(m) -> int | None:
    if m is None:
        return None
    return check_integer(m, "m", minimum=2)


def _history(history, qi: list, sa: str) -> list[Bucketized]:
    out = history_releases(history, "the planner pools the releases through them")
    for r, rel in enumerate(out, start=1):
        if list(rel.qi) != qi:
            raise ReleaseError(
                f"release {r} of the history has quasi-identifiers {list(rel.qi)}, the table "
                f"{qi}; give the same columns in the same order"
            )
        if rel.sa != sa:
            raise ReleaseError(
                f"release {r} of the history has sensitive column {rel.sa!r}, the table {sa!r}"
            )
    return out


def _same_values(history: list[Bucketized], frame: pd.DataFrame, sa: str, person: str) -> None:
    """One sensitive value per person across the releases and the table (the pooled
    model's premise), or an error naming the person and where the values differ."""
    parts = [
        pd.DataFrame({"p": r.people[r.person].to_numpy(), "v": r.people[sa].to_numpy(), "r": k})
        for k, r in enumerate(history, start=1)
    ]
    parts.append(pd.DataFrame({"p": frame[person].to_numpy(), "v": frame[sa].to_numpy(), "r": 0}))
    rows = pd.concat(parts, ignore_index=True)
    first = rows.groupby("p", sort=False)["v"].transform("first")
    clash = rows[rows["v"] != first]
    if len(clash):
        p, v, r = clash.iloc[0]
        was = rows[rows["p"] == p].iloc[0]

        def where(k) -> str:
            return "the table" if k == 0 else f"release {k} of the history"

        raise ReleaseError(
            f"person {shorten(plain(p))} has sensitive value {shorten(plain(was['v']))} in "
            f"{where(was['r'])} and {shorten(plain(v))} in {where(r)}; pooled releases follow "
            "one value per person (give a changed person a new id)"
        )


def _say(progress) -> Callable[[str], None]:
    return check_progress(progress, "plan") or (lambda text: None)


# ------------------------------------------------------------------ the candidate
def _smallest_l(tau: float) -> int:
    """The fewest distinct values per group that keep 1/l below tau (at least 2)."""
    return max(2, int(math.floor(1.0 / max(tau - TOL, 1e-12))) + 1)


def _working(release: Bucketized, roles: Roles) -> pd.DataFrame:
    """A release as the planner's working table: the role columns under the planner's
    names, integer groups, a counterfeit column."""
    qi, sa, group, person = roles.qi, roles.sa, roles.group, roles.person
    counterfeits = roles.counterfeits
    frame = release.frame
    out = pd.DataFrame({c: frame[c].to_numpy() for c in qi})
    out[sa] = frame[release.sa].to_numpy()
    out[group] = pd.factorize(frame[release.group], sort=True)[0] + 1
    out[person] = frame[release.person].to_numpy()
    out[counterfeits] = release.is_counterfeit
    return out


def _candidate(history, frame, roles: Roles, m, l, n_values: int, seed, notes):  # noqa: E741
    """(working table, words) of the starting release."""
    qi, sa, group, person = roles.qi, roles.sa, roles.group, roles.person
    counterfeits = roles.counterfeits

    def invariant(earlier, k):
        return m_invariant(
            frame, qi, sa, m=k, history=earlier, person=person, seed=seed, group=group,
            counterfeits=counterfeits,
        )  # fmt: skip

    if n_values < 2:
        work = frame[[*qi, sa, person]].copy().reset_index(drop=True)
        work.insert(len(qi) + 1, group, 1)
        work[counterfeits] = False
        return work[[*qi, sa, group, person, counterfeits]], "one group of everyone"
    if m is not None:
        tried, error = [], None
        for k in dict.fromkeys([min(max(m, l), n_values), m]):
            try:
                rel = invariant(history, k)
                return _working(rel, roles), f"m-invariant release (Xiao and Tao), m = {k}"
            except ReleaseError as exc:
                tried.append(f"m = {k}: {exc}")
                error = exc
        if not history:
            raise error
        notes.append("m_invariant refused the history (" + "; ".join(tried) + ")")
    l = min(l, n_values)  # noqa: E741
    if history:
        prev = history[-1]
        renamed = frame[[*qi, sa, person]].rename(columns={person: prev.person})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rel = history_guided(
                renamed, list(prev.qi), prev.sa, l=l, history=prev, group=prev.group, seed=seed
            )
        notes += [" ".join(str(w.message).split()) for w in caught]
        return _working(rel, roles), f"history-guided release (Wang et al.), l = {l}"
    try:
        rel = anatomize(frame, qi, sa, l=l, seed=seed, group=group, person=person)
        return _working(rel, roles), f"Anatomy (Xiao and Tao), l = {l}"
    except ReleaseError as exc:
        notes.append(f"Anatomy refused the table ({exc}); counterfeits pad it instead")
        rel = invariant(None, l)
        return _working(rel, roles), f"m-unique release with counterfeits, m = {l}"


# ------------------------------------------------------------------ the state
class _Planner:
    """The plan's state: the working table, the checks of the pooled releases (whole, or
    the components a repair touched), the history checked alone, the repair targets."""

    def __init__(self, tables: tuple, roles: Roles, checker: Checker, options: PlanOptions, notes):
        """``tables``: (history, the current table, the candidate's working table)."""
        self.history, self.frame, self.work = tables
        self.roles = roles
        self.qi, self.sa, self.group = roles.qi, roles.sa, roles.group
        self.person, self.counterfeits = roles.person, roles.counterfeits
        self.tau, self.m, self.adversary = checker.tau, checker.m, checker.adversary.name
        self.checker, self.options = checker, options
        self.say, self.notes = checker.say, notes
        self.hist_table: pd.DataFrame | None = None
        self.hist_checked: set = set()
        self.floor: str | None = None  # why no posterior can go below tau, if known
        self._mates: dict | None = None

    def release(self, work: pd.DataFrame) -> Bucketized:
        return Bucketized(
            work, self.qi, self.sa, group=self.group, person=self.person,
            counterfeits=self.counterfeits,
        )  # fmt: skip

    def check(self, work, scope_groups=None, rnd: int = 0, old: pd.DataFrame | None = None):
        releases = [*self.history, self.release(work)]
        rec = Records.of(releases)
        scope = None
        if scope_groups is not None and self.checker.incremental:
            _, gcomp = rec.components()
            last = len(releases) - 1
            touched = (rec.group_rel == last) & np.isin(rec.group_label, list(scope_groups))
            scope = np.isin(gcomp, np.unique(gcomp[touched]))
        out = self.checker.check(releases, rec, scope)
        certs = [{"round": rnd, **c} for c in out.certificates]
        table = out.table
        if scope is not None and old is not None:
            table = pd.concat([old.drop(index=table.index, errors="ignore"), table])
            table = table.reindex(old.index)
        return table, certs, rec, len(out.table)

    def exposed_by_history(self, people: list) -> set:
        """The (person, check) pairs that fail on the history alone (no next release
        can lift them: possible worlds only shrink as releases are added)."""
        if not self.history:
            return set()
        todo = [p for p in people if p not in self.hist_checked]
        if todo:
            rec = Records.of(self.history)
            known = rec.persons.get_indexer(todo)
            todo = [p for p, k in zip(todo, known, strict=True) if k >= 0]
        if todo:
            self.say(f"the history alone, for {len(todo):,} failing people")
            scope = None
            if self.checker.incremental:
                pcomp, gcomp = rec.components()
                comps = np.unique(pcomp[rec.persons.get_indexer(todo)])
                scope = np.isin(gcomp, comps)
            try:
                out = self.checker.check(self.history, rec, scope)
            except MaxEntError as exc:  # knowledge about people of the new table only, ...
                self.notes.append(f"the history alone could not be checked: {exc}")
                self.hist_checked.update(todo)
                return self._hist_pairs()
            new = out.table
            self.hist_table = (
                new
                if self.hist_table is None
                else pd.concat([self.hist_table.drop(index=new.index, errors="ignore"), new])
            )
            self.hist_checked.update(todo)
            self.hist_checked.update(new.index.tolist())
        return self._hist_pairs()

    def _hist_pairs(self) -> set:
        if self.hist_table is None:
            return set()
        f = failures(self.hist_table, self.tau, self.m)
        return set(zip(f["person"], f["check"], strict=True))

    def targets(self, fails: pd.DataFrame, blocked: set):
        """Per failing (person, check): the groups of the working table to repair, or
        the reason none can be."""
        work = self.work
        real = ~work[self.counterfeits].to_numpy(dtype=bool)
        where = dict(
            zip(
                work.loc[real, self.person].tolist(),
                work.loc[real, self.group].tolist(),
                strict=True,
            )
        )
        exposed = self.exposed_by_history(fails["person"].unique().tolist())
        if self._mates is None:
            self._mates = mates(self.history)
        old_mates = self._mates
        out, why = {}, {}
        for p, check in zip(fails["person"], fails["check"], strict=True):
            key = (p, check)
            if check == "posterior" and self.floor is not None:
                why[key] = self.floor
                continue
            if key in exposed:
                why[key] = "exposed by the history alone (no next release can lift it)"
                continue
            if check == "posterior" and self.adversary == "worst":
                why[key] = (
                    "a worst-case upper bound never goes down by merging or counterfeits (they "
                    "only add tables)"
                )
                continue
            if p in where:
                groups = {where[p]}
            else:
                groups = {where[q] for q in old_mates.get(p, ()) if q in where}
            groups -= blocked
            if not groups:
                why[key] = (
                    "no group left to merge with"
                    if p in where
                    else "not in the new table, and no one of their groups is"
                )
                continue
            out[key] = groups
        return out, why


# ------------------------------------------------------------------ the planner
def plan_release(
    history: Sequence[Bucketized] | Bucketized | None,
    frame: pd.DataFrame,
    qi: Sequence[str],
    sa: str,
    tau: float = 0.5,
    m: int | None = None,
    knowledge=None,
    adversary: str = "maxent",
    person: str | None = None,
    **options,
) -> tuple[Bucketized, PlanReport]:
    """Choose the next release so that, pooled with ``history``, nobody is exposed.

    The checks, on the pooled model of ``history`` and the candidate, with ``knowledge``:

    (a) no person's probability of a value under ``adversary`` reaches ``tau`` (within
        1e-9): ``"maxent"`` the maximum-entropy ``result.person_posterior()``,
        ``"learned"`` the deFinetti adversary (:func:`~maxent_privacy.definetti`, its
        default learner), ``"worst"`` the certified LP upper bound of
        ``model.bounds(by="person")``;
    (b) no person holds a value in every possible world (integral assignments the
        releases and facts allow);
    (c) with ``m``, every person keeps at least ``m`` possible values.

    Every person of the pooled releases is checked, those who left too. How the
    candidate is made, how failing people are repaired and how utility is measured: see
    the module.

    Parameters
    ----------
    history : earlier releases (Bucketized with person ids), oldest first; None or [].
    frame : the current table: ``qi``, ``sa`` and ``person`` columns, one row per person.
    qi, sa : quasi-identifier columns (published exactly) and the sensitive column.
    tau : the threshold in (0, 1].
    m : None, or the number of possible values every person keeps (at least 2; more
        than the distinct sensitive values is a ``ReleaseError``: no release can pass).
    knowledge : None; anything :func:`~maxent_privacy.knowledge.normalise.as_knowledge`
        reads: knowledge-file text or a Path, parsed Statements, facts, or a function of
        the model that adds facts to it (called on every model built).
    adversary : a registered adversary that plans
        (:data:`~maxent_privacy.adversaries.ADVERSARY_REGISTRY`): "maxent" (default),
        "learned", "worst" or one registered by the user (its ``upper`` reading is checked).
    person : the pseudonym column linking people across releases (required).
    options : :class:`PlanOptions`, as ``options=PlanOptions(...)`` or its fields as
        keywords: ``seed``, ``group``, ``counterfeits``, ``progress``, ``max_rounds``,
        ``time_limit``, ``queries``.

    Returns
    -------
    (Bucketized, PlanReport): the release (columns ``qi + [sa, group, person,
    counterfeits]``, groups 1, 2, ..., counterfeits after each group's people) and
    what was checked and changed.
    """
    t0 = time.perf_counter()
    opts = PlanOptions.of(options)
    tau, m, roles, adversary = _check_arguments(frame, qi, sa, tau, m, adversary, person, opts)
    history = _history(history, roles.qi, sa)
    _same_values(history, frame, sa, person)
    checker = Checker(
        tau, m, adversary, as_knowledge(knowledge), time_limit=opts.time_limit,
        progress=_say(opts.progress),
    )  # fmt: skip
    seen = pd.concat([frame[sa], *(r.frame[r.sa] for r in history)]).unique().tolist()
    n_values = len(seen)
    reasons = _data_limits(tau, m, checker.adversary, n_values, sa)
    checker.say("candidate")
    notes: list[str] = []
    work, words = _candidate(history, frame, roles, m, _smallest_l(tau), n_values, opts.seed, notes)
    planner = _Planner((history, frame, work), roles, checker, opts, notes)
    if reasons and not checker.adversary.interval:
        planner.floor = f"tau is at most 1/{n_values}: below what the data allows"
    checker.say("utility of the candidate")
    before = release_utility(planner.release(work), frame, queries=opts.queries, seed=opts.seed)
    log = _repair_rounds(planner, frame, history)
    return _finish(planner, log, reasons, (words, before), t0)


def _finish(planner, log: RepairLog, reasons: list, start: tuple, t0: float):
    """The best round's release, its groups numbered 1, 2, ..., and the PlanReport;
    ``start``: how the candidate was made and its utility."""
    words, before = start
    best, rounds, repairs, why = log.best, log.rounds, log.repairs, log.why
    n_fail, best_round, work = best.people_failing, best.number, best.work
    fails = failures(best.table, planner.tau, planner.m)
    if n_fail and best_round < len(rounds) - 1:
        planner.notes.append(
            f"round {best_round} had the fewest failing people ({n_fail}, then failed checks); "
            "its release is returned"
        )
        repairs = [r for r in repairs if r["round"] <= best_round]
    work, mapping = renumber(work, planner.group, planner.counterfeits)
    release = planner.release(work)
    planner.say("utility of the release")
    opts = planner.options
    after = release_utility(release, planner.frame, queries=opts.queries, seed=opts.seed)
    repairs_frame = pd.DataFrame(
        repairs, columns=["round", "person", "check", "value", "number", "action", "group"]
    )
    if len(repairs_frame):
        repairs_frame["group"] = repairs_frame["group"].map(lambda g: mapping.get(g, g))
    default = f"still fails after {max(0, len(rounds) - 1)} round(s) of repairs"
    failing = fails.assign(
        why=[why.get((p, c), default) for p, c in zip(fails["person"], fails["check"], strict=True)]
    )
    if len(failing):
        reasons.append(_failing_words(failing))
    report = PlanReport(
        passed=len(failing) == 0,
        adversary=planner.adversary,
        tau=planner.tau,
        m=planner.m,
        candidate=words,
        checks=pd.DataFrame(best.checks),
        repairs=repairs_frame,
        failing=failing.reset_index(drop=True),
        utility_before=before,
        utility_after=after,
        rounds=pd.DataFrame(rounds),
        reasons=list(dict.fromkeys(reasons)),
        notes=list(dict.fromkeys(planner.notes + planner.checker.notes)),
        seconds=time.perf_counter() - t0,
    )
    return release, report


def _check_arguments(frame, qi, sa, tau, m, adversary, person, opts: PlanOptions):
    """The arguments of :func:`plan_release` checked: (tau, m, roles, adversary name)."""
    tau = check_threshold(tau, "tau")
    m = _check_m(m)
    adversary = planning_adversary(adversary).name
    qi = check_next_table(frame, qi, sa, opts.group, person, opts.counterfeits, "plan_release")
    return tau, m, Roles(qi, sa, opts.group, person, opts.counterfeits), adversary


def _data_limits(tau, m, adversary, n_values: int, sa) -> list[str]:
    """Why no release can pass with so few sensitive values (empty: nothing stops it); an
    ``m`` above their number is an error."""
    reasons = []
    if not adversary.interval and tau <= 1.0 / n_values + TOL:
        reasons.append(
            f"tau = {tau:g} is at most 1/{n_values}: with {n_values} distinct sensitive "
            f"values every person's likeliest value has probability 1/{n_values} or more"
        )
    if n_values < 2:
        reasons.append("every person has the same sensitive value: any release tells it")
    if m is not None and m > n_values:
        raise ReleaseError(
            f"m={m} exceeds the {n_values} distinct sensitive values of column {sa!r}: no "
            "release gives anyone m possible values"
        )
    return reasons


def _repair_rounds(planner, frame, history) -> RepairLog:
    """Check the candidate, then repair the failing people round after round; the log
    keeps the round with the fewest failures."""
    roles, say = planner.roles, planner.say
    tau, m = planner.tau, planner.m
    say("round 0: checking the candidate")
    t_round = time.perf_counter()
    table, certs, rec, n_checked = planner.check(planner.work, rnd=0)
    values = rec.values
    counts = frame[roles.sa].value_counts(sort=False)
    common = sorted(
        range(len(values)), key=lambda v: (-int(counts.get(values[v], 0)), str(values[v]))
    )
    repairs_of = Repairs(roles, values, common, history, spans(frame, roles.qi))
    all_checks = list(certs)
    log = RepairLog()
    for rnd in range(planner.options.max_rounds + 1):
        fails = failures(table, tau, m)
        n_fail = fails["person"].nunique()
        log.rounds.append(
            {
                "round": rnd,
                "people_failing": int(n_fail),
                "checks_failing": len(fails),
                "people_checked": int(n_checked),
                "seconds": time.perf_counter() - t_round,
            }
        )
        now = Round(int(n_fail), len(fails), rnd, planner.work, table, list(all_checks))
        if now.better_than(log.best):
            now.work = planner.work.copy()
            log.best = now
        if n_fail == 0 or rnd == planner.options.max_rounds:
            break
        targets, why_now = planner.targets(fails, repairs_of.blocked)
        log.why.update(why_now)
        if not targets:
            break
        say(f"round {rnd + 1}: repairing {len(targets):,} failed checks")
        t_round = time.perf_counter()
        planner.work, rows, touched = repairs_of.apply(planner.work, rnd + 1, fails, targets)
        if not touched:
            break
        log.repairs += rows
        table, certs, _, n_checked = planner.check(planner.work, touched, rnd + 1, old=table)
        all_checks += certs
    return log


def _failing_words(failing: pd.DataFrame) -> str:
    people = failing["person"].nunique()
    parts = []
    for why, rows in failing.groupby("why", sort=False):
        checks = ", ".join(sorted(rows["check"].unique()))
        parts.append(f"{rows['person'].nunique():,} {why} ({checks})")
    return f"{people:,} people still fail: " + "; ".join(parts)
