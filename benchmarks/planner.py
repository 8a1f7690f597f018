"""Re-publishing safely (issue 25, item 5): five releases of Adult by four publishers.

Not a test: a by-hand benchmark on the bundled UCI Adult data that writes a report and a
figure.

**The sequence.** ``datasets.load_adult()`` with a person id ``pid`` = row number; as in
``benchmarks/republish.py`` and notebook 03, ``occupation`` is the sensitive attribute (14
values, none above 1/7 of the records, so l = 3 and m = 3 need no exemption) and the other
seven categorical attributes are the quasi-identifiers, published exactly. A seeded
permutation of the 45,222 rows gives release 1's table: its first ``n`` people. Between
two releases 10 % of the current people (``round(0.1 n)``, drawn at random) leave and as
many new people arrive, the next unused rows of the permutation; every table has ``n``
people and five releases use ``n + 4 round(0.1 n)`` rows (at most 45,222: ``n`` up to
32,301).

**The publishers**, each making its own sequence of the same five tables:

* *Anatomy (independent)*: ``anonymize.rebucketize(table, qi, sa, l=3)`` (Anatomy, l = 3),
  each release on its own;
* *history-guided*: Anatomy for release 1, then ``anonymize.history_guided(table, qi,
  sa, l=3, history=previous)`` (Wang et al.: people keep their bucket, a leaver's slot
  goes to a newcomer of the same value);
* *m-invariance (m = 3)*: ``anonymize.m_invariant(table, qi, sa, m=3, history=history)``
  (Xiao and Tao: every person keeps their signature, counterfeits fill the gaps);
* *planner (tau = 0.5, m = 3)* and *planner (tau = 0.8, m = 3)*:
  ``anonymize.plan_release(history, table, qi, sa, tau=tau, m=3)`` with the maximum-
  entropy adversary (its default), which checks every candidate against the pooled
  releases and repairs the people who fail. Until ``plan_release`` is exported by
  ``maxent_privacy.anonymize`` these rows say "pending" and carry no numbers.

Seeds: release t is made with ``seed=t``; the permutation and the leavers with
``--seed`` (default 0).

**What is measured**, per release t and publisher, on the pooled model of releases 1..t
(``MaxEntModel(releases)``, everyone published so far, those who left too; counterfeit
records are no one and are never counted):

* people at risk, the share of people some value of whom reaches tau = 0.5 and 0.8:
  - *maxent*: ``model.solve().person_posterior()``;
  - *learned*: Kifer's deFinetti adversary (``maxent_privacy.definetti``, naive Bayes,
    100 rounds at most, tol 1e-6), on the whole pooled model or a documented sample
    (below);
  - *worst case*: the certified LP upper bound ``model.bounds(by="person")``
    (``lp_upper`` of the call below): some table the releases allow gives the person
    their value with at least that probability;
* *certain*: people who hold their value in every possible world (``certain`` of
  ``model.bounds(by="person", exact=True)``, HiGHS integer programs). Both come from one
  call asked for each person's own value only (``values=`` the (person, value) pairs):
  the true table is a possible world, so no other value can be certain, and in that
  table each person holds their value with probability 1, so the worst case is 100 % for
  every publisher by construction (measured nonetheless, certified). The call has
  ``time_limit=--time-limit`` seconds (default 120): rows the limit cuts keep sound but
  not tight bounds (upper 1, certain not proved; the table says how many). At full
  scale it cuts the people of m-invariance's large components (n = 30,000: 31,287 rows
  still cut after 1,200 s), so a value left unproved is also tested by *witness
  worlds*, with no solver: in a connected component, two values that every group holds
  equally often (counterfeits included) can be swapped for every record of the
  component, which gives another possible world (:func:`witnessed`). A person the
  programs do not prove certain and no witness frees is *unsettled* (shown in the table;
  none means the column is exact);
* utility: ``anonymize.utility.count_query_error(release, table, queries=1000)``, the
  mean relative error of 1,000 random count queries over QI and sensitive value under
  uniform-within-group (the package's measure, the planner's own), and the share of
  counterfeit records among the published ones;
* time: of publishing (the anonymizer's call) and of checking (solve, learned
  adversary, bounds).

**The learned adversary's sample.** A deFinetti round solves the pooled model again with
the learner's prior; what costs is the largest connected component of people who are
not pinned (people with a maximum-entropy posterior of 1 are fixed in every table, the
solver's presolve removes them, and they no longer join groups). Anatomy's and
history-guided pooled releases fall apart into small pieces (full scale: seconds and a
few minutes per release), but m-invariance joins the people of a signature across
releases into components of thousands (n = 30,000: 14,308, 11,394 and 5,585 people),
where one round takes over a minute and the attack about half an hour per release. So:
when no such component holds more than ``--learned-component`` (default 3,000) people,
the learned adversary runs on the whole pooled model; otherwise on a sample: whole
connected components of the releases (a component is never cut, so the sampled people's
releases say exactly what the full ones say about them) holding at most that many
unpinned people, in a seeded random order until they hold ``--learned-sample`` (default
5,000) people. The learner is then fitted on the sample only. The column *learned on*
says which: "all" or the sample's size; the people in larger components are not
represented (m-invariance: the components of the most frequent signatures).

The sample **over-states** the learned adversary's share. Measured on m-invariance at
n = 5,000, where the whole model runs too (component limit 800, sample 1,500), people at
P >= 0.5 on the sample vs the whole model: release 2 32.3 % vs 20.2 %, release 3
28.4 % vs 15.0 %, release 4 36.6 % vs 15.0 %. The people of small components are more
exposed to the learner (the whole model gives the sampled people 27.7 %, 25.1 %, 45.0 %),
so read the sampled rows as an upper estimate, not as the whole sequence's share.

Run from the repository root::

    python benchmarks/planner.py             # n = 30,000 (one to two hours)
    python benchmarks/planner.py --n 10000   # another size
    python benchmarks/planner.py --quick     # n = 1,500 (a few minutes)

Options: ``--out DIR`` (default ``benchmarks/results``), ``--seed``, ``--time-limit``,
``--learned-component``, ``--learned-sample``, ``--publishers`` (a comma list of
``anatomy,history,minvariant,planner``). Writes ``planner.md`` and ``planner.png``
together (``--quick``: ``planner-quick.md`` and ``planner-quick.png``); progress lines
and the table go to the terminal.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")  # the projections' progress bars

import numpy as np
import pandas as pd
import scipy.sparse as sp
from _common import argument_parser, machine_info, md_table
from scipy.sparse.csgraph import connected_components

from maxent_privacy import Bucketized, MaxEntModel, anonymize, datasets
from maxent_privacy.adversaries.definetti import definetti
from maxent_privacy.anonymize import history_guided, m_invariant, rebucketize
from maxent_privacy.anonymize.utility import count_query_error
from maxent_privacy.files import write_together
from maxent_privacy.report.safety import PLAIN, plain_label

DEFAULT_OUT = Path(__file__).resolve().parent / "results"
SA = "occupation"
QI = ["workclass", "education", "marital_status", "relationship", "race", "sex", "native_country"]
PERSON = "pid"
RELEASES = 5
TURNOVER = 0.10
L = M = 3
TAUS = (0.5, 0.8)
QUERIES = 1_000
FULL_N, QUICK_N = 30_000, 1_500
#: the issue's acceptance: planning one release of about 30,000 people
PLAN_TARGET_S = 60.0
#: a probability this close below a threshold reaches it (as compare_adversaries)
CLOSE = 1e-9
PENDING = "pending: maxent_privacy.anonymize.plan_release is not in this checkout yet"


# ------------------------------------------------------------------ the sequence
def sequence(adult: pd.DataFrame, n: int, seed: int = 0) -> list[pd.DataFrame]:
    """The five tables: release 1 = the first ``n`` people of a seeded permutation; then
    ``round(TURNOVER * n)`` people leave (at random) and as many arrive (the next unused
    rows) before each release."""
    k = round(TURNOVER * n)
    need = n + (RELEASES - 1) * k
    if n < 10 or need > len(adult):
        most = int((len(adult)) / (1 + (RELEASES - 1) * TURNOVER))
        raise SystemExit(
            f"--n {n}: five releases with {k:,} leaving and arriving need {need:,} of "
            f"Adult's {len(adult):,} rows; choose n from 10 to about {most:,}"
        )
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(adult))
    current, unused = perm[:n], n
    tables = []
    for t in range(RELEASES):
        if t:
            leave = rng.choice(len(current), size=k, replace=False)
            current = np.concatenate([np.delete(current, leave), perm[unused : unused + k]])
            unused += k
        tables.append(adult.iloc[np.sort(current)][QI + [SA, PERSON]])
    return tables


# ------------------------------------------------------------------ the publishers
@dataclass
class Publisher:
    key: str
    name: str
    tau: float | None = None

    def publish(self, history: list, table: pd.DataFrame, t: int):
        """The release of ``table`` after ``history`` (and the planner's report)."""
        if self.key == "anatomy" or (self.key == "history" and not history):
            return rebucketize(table, QI, SA, l=L, person=PERSON, seed=t), None
        if self.key == "history":
            return history_guided(table, QI, SA, l=L, history=history[-1], seed=t), None
        if self.key == "minvariant":
            return m_invariant(table, QI, SA, m=M, history=history, person=PERSON, seed=t), None
        return plan_release()(history, table, QI, SA, tau=self.tau, m=M, person=PERSON, seed=t)


def plan_release():
    """``maxent_privacy.anonymize.plan_release`` once it is exported, else None."""
    return getattr(anonymize, "plan_release", None)


PUBLISHERS = {
    "anatomy": [Publisher("anatomy", "Anatomy (independent)")],
    "history": [Publisher("history", "history-guided")],
    "minvariant": [Publisher("minvariant", "m-invariance (m = 3)")],
    "planner": [Publisher("planner", f"planner (τ = {t:g}, m = 3)", t) for t in TAUS],
}


# ------------------------------------------------------------------ checking
@dataclass
class Components:
    """The connected components of pooled releases: people joined through the groups they
    share (counterfeit records join nothing). Nodes are the people (``people``, in that
    order), then each release's groups; ``label`` is the component of every node and
    ``layout`` per release (its groups' first node, the group code of each of its rows)."""

    people: pd.Index
    label: np.ndarray
    layout: list

    @classmethod
    def of(cls, releases: list[Bucketized], only: pd.Index | None = None) -> Components:
        """The components; with ``only``, joined through those people alone."""
        people = pd.Index(
            pd.unique(np.concatenate([r.people[PERSON].to_numpy() for r in releases]))
        )
        rows, cols, layout = [], [], []
        offset = len(people)
        for r in releases:
            codes, groups = pd.factorize(r.frame[r.group])
            layout.append((offset, codes))
            ids = r.frame[PERSON].to_numpy()
            real = ~np.asarray(r.is_counterfeit, dtype=bool)
            if only is not None:
                real &= pd.Index(ids).isin(only)
            rows.append(people.get_indexer(ids[real]))
            cols.append(codes[real] + offset)
            offset += len(groups)
        a, b = np.concatenate(rows), np.concatenate(cols)
        graph = sp.coo_array((np.ones(len(a)), (a, b)), shape=(offset, offset))
        _, label = connected_components(graph, directed=False)
        return cls(people, label, layout)

    def of_people(self, ids) -> np.ndarray:
        return self.label[self.people.get_indexer(ids)]


def learned_model(releases, model, comps: Components, free: pd.Index, limit: int, size: int,
                  seed: int):  # fmt: skip
    """The model the learned adversary runs on and what it covers ("all", or the sample's
    people): see the module docstring."""
    # the cost: the largest component once the pinned people (fixed in every table, the
    # presolve removes them) no longer join groups
    loose = Components.of(releases, only=free)
    if np.bincount(loose.of_people(free)).max(initial=0) <= limit:
        return model, "all"
    n = int(comps.label.max()) + 1
    people = np.bincount(comps.of_people(comps.people), minlength=n)
    unpinned = np.bincount(comps.of_people(free), minlength=n)
    keep = np.zeros(n, dtype=bool)
    total = 0
    for c in np.random.default_rng(seed).permutation(n):
        if people[c] == 0 or unpinned[c] > limit:
            continue
        keep[c] = True
        total += int(people[c])
        if total >= size:
            break
    parts = []
    for r, (offset, codes) in zip(releases, comps.layout, strict=True):
        mask = keep[comps.label[codes + offset]]
        if mask.any():
            parts.append(
                Bucketized(r.frame[mask], qi=r.qi, sa=r.sa, group=r.group, person=r.person,
                           counterfeits=r.counterfeits)
            )  # fmt: skip
    return MaxEntModel(parts), f"{total:,} (sample)"


def witnessed(releases: list[Bucketized], comps: Components, own: pd.MultiIndex) -> np.ndarray:
    """Per (person, own value) of ``own``: True when a *witness world* gives the person
    another value, so that their value is not certain (no solver involved).

    In a connected component, two values a and b that every group holds equally often
    (counterfeits included) can be swapped for every record of the component: each group
    keeps its published values, each person keeps one value in every release, so the
    swapped table is another possible world, where the people with value a hold b. Values
    are compared exactly: per component, each value's (group, count) pairs."""
    parts = []
    for r, (offset, codes) in zip(releases, comps.layout, strict=True):
        parts.append(pd.DataFrame({"node": codes + offset, "value": r.frame[r.sa].to_numpy()}))
    cells = pd.concat(parts, ignore_index=True).value_counts().reset_index(name="count")
    cells["comp"] = comps.label[cells["node"].to_numpy()]
    cells = cells.sort_values(["comp", "value", "node"], kind="stable")
    cells["pair"] = list(zip(cells["node"], cells["count"], strict=True))
    key = cells.groupby(["comp", "value"], sort=False)["pair"].agg(tuple).rename("key")
    key = key.reset_index()
    key["class"] = key.groupby(["comp", "key"], sort=False)["value"].transform("size")
    size = key.set_index(["comp", "value"])["class"]
    at = pd.MultiIndex.from_arrays(
        [comps.of_people(own.get_level_values(0)), own.get_level_values(1)]
    )
    return size.reindex(at).fillna(1).to_numpy() > 1


def own_values(releases: list[Bucketized]) -> pd.MultiIndex:
    """(person, their own value) for everyone of the releases: the only value that can be
    certain for a person (the true table is a possible world), and one whose upper bound
    is 1 (that table gives it to them)."""
    own = pd.concat([r.people[[PERSON, SA]] for r in releases]).drop_duplicates(PERSON)
    return pd.MultiIndex.from_frame(own, names=["person", SA])


def at_risk(largest, tau: float) -> int:
    return int((np.asarray(largest, dtype=float) >= tau - CLOSE).sum())


def check(releases: list[Bucketized], args, t: int) -> dict:
    """Every measure of the pooled releases 1..t (see the module docstring)."""
    row: dict = {}
    comps = Components.of(releases)
    own = own_values(releases)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        model = MaxEntModel(releases)
        result = model.solve()
        post = result.person_posterior()
        row["solve s"] = time.perf_counter() - t0
        largest = post.max(axis=1)
        row["people"] = len(post)
        for tau in TAUS:
            row[f"maxent {tau:g}"] = at_risk(largest, tau) / len(post)
        free = largest.index[largest.to_numpy() < 1 - 1e-9]

        t0 = time.perf_counter()
        sub, covers = learned_model(
            releases, model, comps, free, args.learned_component, args.learned_sample,
            args.seed + t,
        )  # fmt: skip
        learned = definetti(sub)
        lpost = learned.person_posterior().max(axis=1)
        stats = learned.solver_stats["definetti"]
        row["learned s"] = time.perf_counter() - t0
        row["learned on"] = covers
        row["learned rounds"] = f"{stats['iterations']}" + (
            "" if stats["converged"] else " (not converged)"
        )
        for tau in TAUS:
            row[f"learned {tau:g}"] = at_risk(lpost, tau) / len(lpost)

        t0 = time.perf_counter()
        bounds = model.bounds(by="person", values=own, exact=True, time_limit=args.time_limit)
        row["bounds s"] = time.perf_counter() - t0
    bounds = bounds.reindex(own)
    for tau in TAUS:
        row[f"worst {tau:g}"] = at_risk(bounds["lp_upper"], tau) / len(bounds)
    # ``certain`` is NA where the integer programs did not prove that side
    certain = bounds["certain"].astype("boolean")
    proved = certain.eq(True).fillna(False).to_numpy(dtype=bool)
    disproved = certain.eq(False).fillna(False).to_numpy(dtype=bool)
    witness = witnessed(releases, comps, own)
    row["certain"] = int(proved.sum())
    row["unsettled"] = int((~proved & ~disproved & ~witness).sum())
    if (proved & witness).any():  # a witness world contradicts a proof: a bug somewhere
        raise AssertionError(f"release {t}: a witness world gives another value to a person "
                             "the integer programs call certain")  # fmt: skip
    cert = bounds.attrs.get("certificate", {})
    row["cut"] = int(cert.get("rows_cut_by_time_limit", 0))
    row["certified"] = bool(cert.get("all_certified", False))
    row["check s"] = row["solve s"] + row["learned s"] + row["bounds s"]
    return row


def utility(release: Bucketized, table: pd.DataFrame) -> dict:
    fake = int(np.asarray(release.is_counterfeit, dtype=bool).sum())
    return {
        "query error": count_query_error(release, table, queries=QUERIES, seed=0),
        "counterfeits": fake / release.n_records,
        "groups": int(release.n_groups),
    }


# ------------------------------------------------------------------ the run
def run(args, say) -> tuple[pd.DataFrame, pd.DataFrame]:
    adult = datasets.load_adult()
    adult[PERSON] = np.arange(len(adult))
    tables = sequence(adult, args.n, args.seed)
    everyone = len(pd.unique(np.concatenate([t[PERSON].to_numpy() for t in tables])))
    say(
        f"{RELEASES} releases of {args.n:,} people ({round(TURNOVER * args.n):,} leave and "
        f"arrive between releases), {everyone:,} people in all"
    )
    rows, plans = [], []
    for key in args.publishers:
        for pub in PUBLISHERS[key]:
            if pub.key == "planner" and plan_release() is None:
                say(f"{pub.name}: {PENDING}")
                rows += [
                    {"release": t, "publisher": pub.name, "pending": True}
                    for t in range(1, RELEASES + 1)
                ]
                continue
            history: list = []
            for t, table in enumerate(tables, start=1):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # history-guided's short buckets
                    t0 = time.perf_counter()
                    release, report = pub.publish(history, table, t)
                    publish_s = time.perf_counter() - t0
                history.append(release)
                row = {
                    "release": t,
                    "publisher": pub.name,
                    "pending": False,
                    "publish s": publish_s,
                    **utility(release, table),
                }
                say(f"{pub.name}, release {t}: published in {publish_s:.1f} s; checking ...")
                row.update(check(history, args, t))
                rows.append(row)
                if report is not None:
                    plans.append(plan_row(pub, t, len(table), report, publish_s))
                say(
                    f"{pub.name}, release {t}: {row['people']:,} people; at risk >= 0.5 "
                    f"maxent {pct(row['maxent 0.5'])}, learned {pct(row['learned 0.5'])} "
                    f"(on {row['learned on']}), worst {pct(row['worst 0.5'])}; certain "
                    f"{row['certain']:,}; query error {row['query error']:.3f}; check "
                    f"{row['check s']:.1f} s (solve {row['solve s']:.1f}, learned "
                    f"{row['learned s']:.1f}, bounds {row['bounds s']:.1f})"
                )
    return pd.DataFrame(rows), pd.DataFrame(plans)


def plan_row(pub: Publisher, t: int, n: int, report, seconds: float) -> dict:
    return {
        "publisher": pub.name,
        "release": t,
        "people": n,
        "passed": bool(report.passed),
        "candidate": str(report.candidate),
        "repaired": len(report.repaired),
        "still failing": int(report.failing["person"].nunique()) if len(report.failing) else 0,
        "rounds": len(report.rounds),
        "planning s": seconds,
        "report s": float(report.seconds),
    }


# ------------------------------------------------------------------ the report
def pct(v) -> str:
    return "-" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{100 * v:.1f} %"


MAIN_HEADER = [
    "release",
    "publisher",
    "people",
    "maxent ≥ 0.5",
    "maxent ≥ 0.8",
    "learned ≥ 0.5",
    "learned ≥ 0.8",
    "learned on",
    "worst ≥ 0.5",
    "worst ≥ 0.8",
    "certain",
    "query error",
    "counterfeits",
    "publish s",
    "check s",
]


def main_rows(table: pd.DataFrame) -> list[list]:
    out = []
    for _, r in table.sort_values(["release"], kind="stable").iterrows():
        if r["pending"]:
            out.append([r["release"], r["publisher"]] + ["pending"] * (len(MAIN_HEADER) - 2))
            continue
        cut = f" ({r['unsettled']:,} unsettled)" if r["unsettled"] else ""
        out.append(
            [
                r["release"],
                r["publisher"],
                f"{r['people']:,}",
                pct(r["maxent 0.5"]),
                pct(r["maxent 0.8"]),
                pct(r["learned 0.5"]),
                pct(r["learned 0.8"]),
                r["learned on"],
                pct(r["worst 0.5"]),
                pct(r["worst 0.8"]),
                f"{r['certain']:,}{cut}",
                f"{r['query error']:.3f}",
                pct(r["counterfeits"]),
                f"{r['publish s']:.1f}",
                f"{r['check s']:.0f}",
            ]
        )
    return out


def report(args, table, plans, total, info) -> str:
    cmd = "python benchmarks/planner.py" + (" --quick" if args.quick else f" --n {args.n}")
    for flag, value, default in [
        ("--seed", args.seed, 0),
        ("--time-limit", args.time_limit, 120.0),
        ("--learned-component", args.learned_component, 3000),
        ("--learned-sample", args.learned_sample, 5000),
    ]:
        if value != default:
            cmd += f" {flag} {value:g}"
    if args.publishers != list(PUBLISHERS):
        cmd += " --publishers " + ",".join(args.publishers)
    done = table[~table["pending"]]
    lines = [
        "# Re-publishing safely: five releases of Adult, four publishers (issue 25)",
        "",
        f"Command: `{cmd}`  ",
        f"Date: {info['date']}; total {total / 60:.1f} min; {info['platform']}, "
        f"{info['nproc']} cores, Python {info['python']}; "
        + ", ".join(f"{k} {v}" for k, v in info["versions"].items())
        + f"; sources {info['maxent_privacy_sources']['sha256']}; load average at start "
        f"{info['loadavg_at_start'][0]:.1f} (other jobs shared the machine: times are "
        "upper bounds).",
        "",
        f"Adult, `{SA}` sensitive, the other seven categorical attributes as QI; each "
        f"release holds {args.n:,} people, {round(TURNOVER * args.n):,} leave and as many "
        "arrive between releases. Per release and publisher, on the pooled model of all "
        "releases so far: the share of people (everyone published so far, leavers too) "
        "some value of whom reaches τ under maximum entropy, the learned deFinetti "
        "adversary and the worst case (LP upper bound); the people holding a value in "
        "every possible world (*certain*); the mean relative error of 1,000 random count "
        "queries over QI and sensitive value (uniform within group) and the share of "
        "counterfeit records; seconds of publishing and of checking. How each is "
        "computed: the docstring of `benchmarks/planner.py`.",
        "",
        md_table(MAIN_HEADER, main_rows(table)),
        "",
    ]
    if done["learned on"].astype(str).str.contains("sample").any():
        lines += [
            "**Learned on a sample** (rows whose *learned on* gives a size): whole components "
            "of at most 3,000 unpinned people (the large components of m-invariance are "
            "too slow for the attack). Such a sample **over-states** the learned adversary's "
            "share: see *The learned adversary's sample* in the docstring (at n = 5,000, "
            "where both run, the sample's share was 1.6 to 2.4 times the whole model's).",
            "",
        ]
    if plan_release() is None and "planner" in args.publishers:
        lines += [f"**Planner**: {PENDING}; its rows are left empty, not estimated.", ""]
    if len(plans):
        lines += [
            "## The planner's own report",
            "",
            md_table(
                [
                    [
                        p["publisher"],
                        p["release"],
                        f"{p['people']:,}",
                        "yes" if p["passed"] else "NO",
                        p["candidate"],
                        p["repaired"],
                        p["still failing"],
                        p["rounds"],
                        f"{p['planning s']:.1f}",
                    ]
                    for _, p in plans.iterrows()
                ],
                [
                    "planner",
                    "release",
                    "people",
                    "passed",
                    "candidate",
                    "repaired",
                    "still failing",
                    "rounds",
                    "planning s",
                ],
            ),
            "",
            timing_line(plans, args.n),
            "",
        ]
    lines += [
        "## Time per release (seconds)",
        "",
        md_table(
            [
                [
                    r["release"],
                    r["publisher"],
                    f"{r['publish s']:.1f}",
                    f"{r['solve s']:.1f}",
                    f"{r['learned s']:.1f}",
                    r["learned rounds"],
                    f"{r['bounds s']:.1f}",
                    "yes" if r["certified"] else "no",
                    f"{r['cut']:,}",
                ]
                for _, r in done.sort_values("release", kind="stable").iterrows()
            ],
            [
                "release",
                "publisher",
                "publish",
                "maxent solve",
                "learned",
                "rounds",
                "bounds (LP + worlds)",
                "bounds certified",
                "rows cut by the time limit",
            ],
        ),
        "",
        "![people at risk and utility per release](planner"
        + ("-quick" if args.quick else "")
        + ".png)",
        "",
    ]
    return "\n".join(lines)


def timing_line(plans: pd.DataFrame, n: int) -> str:
    worst = plans["planning s"].max()
    later = plans[plans["release"] > 1]["planning s"]
    met = "met" if worst < PLAN_TARGET_S else "MISSED"
    scale = "" if n >= 25_000 else f" (this run: {n:,} people, not the issue's size)"
    return (
        f"**Planning one release of {n:,} people**: at most {worst:.1f} s, "
        f"{later.median() if len(later) else float('nan'):.1f} s median over releases 2-5 "
        f"(acceptance: < {PLAN_TARGET_S:g} s for about 30,000 people: {met}{scale})."
    )


MARKERS = ("o", "s", "^", "D", "v", "P")


def figure(table: pd.DataFrame, n: int):
    """Six panels per release: people at risk under maximum entropy, learned, worst case
    (solid tau = 0.5, dashed 0.8), certain values, query error, counterfeits. Each
    publisher is shifted a little along x so that identical lines stay visible."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    done = table[~table["pending"]]
    pending = sorted(set(table.loc[table["pending"], "publisher"]))
    names = list(dict.fromkeys(done["publisher"]))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    style = {
        name: {"color": colors[i % len(colors)], "marker": MARKERS[i % len(MARKERS)]}
        for i, name in enumerate(names)
    }
    shift = {name: 0.06 * (i - (len(names) - 1) / 2) for i, name in enumerate(names)}
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5), layout="constrained")
    panels = [
        (axes[0][0], "maxent", "maximum entropy: people at risk"),
        (axes[0][1], "learned", "learned (deFinetti): people at risk"),
        (axes[0][2], "worst", "worst case (LP upper bound): people at risk"),
    ]
    for ax, key, title in panels:
        for name in names:
            d = done[done["publisher"] == name]
            for tau, line in zip(TAUS, ("-", "--"), strict=True):
                ax.plot(d["release"] + shift[name], 100 * d[f"{key} {tau:g}"], line,
                        ms=5, **style[name])  # fmt: skip
        ax.set_title(title, **PLAIN)
        ax.set_ylabel("% of the people published so far", **PLAIN)
        ax.set_ylim(-3, 103)
    for ax, key, title, scale in [
        (axes[1][0], "certain", "people whose value is certain in every possible world", 1),
        (axes[1][1], "query error", "mean relative error of 1,000 count queries", 1),
        (axes[1][2], "counterfeits", "counterfeit records (% of the published)", 100),
    ]:
        for name in names:
            d = done[done["publisher"] == name]
            ax.plot(d["release"] + shift[name], scale * d[key].astype(float), ms=5, **style[name])
        ax.set_title(title, **PLAIN)
    axes[1][0].set_yscale("symlog", linthresh=10)
    axes[1][0].set_ylabel("people", **PLAIN)
    for ax in axes.ravel():
        ax.set_xlabel("release", **PLAIN)
        ax.set_xticks(range(1, RELEASES + 1))
    handles = [Line2D([], [], **style[name], label=plain_label(name)) for name in names]
    handles += [
        Line2D([], [], color="gray", ls=line, label=plain_label(f"at risk: P ≥ {tau:g}"))
        for tau, line in zip(TAUS, ("-", "--"), strict=True)
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=9)
    note = f" (pending, not drawn: {', '.join(pending)})" if pending else ""
    fig.suptitle(
        plain_label(f"Five releases of Adult, {n:,} people each, by publisher{note}"),
        fontsize=12,
    )
    return fig


# ------------------------------------------------------------------ main
def main(argv=None) -> int:
    ap = argument_parser(__doc__)
    ap.add_argument("--n", type=int, default=None, help=f"people per release (default {FULL_N:,})")
    ap.add_argument("--quick", action="store_true", help=f"a small run: n = {QUICK_N:,}")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--time-limit", type=float, default=120.0, help="seconds of each bounds call (default 120)"
    )
    ap.add_argument("--learned-component", type=int, default=3000)
    ap.add_argument("--learned-sample", type=int, default=5000)
    ap.add_argument(
        "--publishers", default=",".join(PUBLISHERS), help="comma list of " + ", ".join(PUBLISHERS)
    )
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if args.quick and args.n is not None:
        ap.error("--quick picks n; give --n or --quick")
    args.n = QUICK_N if args.quick else (args.n or FULL_N)
    args.publishers = [p.strip() for p in args.publishers.split(",") if p.strip()]
    unknown = [p for p in args.publishers if p not in PUBLISHERS]
    if unknown:
        ap.error(f"unknown publisher {unknown[0]!r}; choose from {', '.join(PUBLISHERS)}")
    stem = "planner-quick" if args.quick else "planner"
    md, png = args.out / f"{stem}.md", args.out / f"{stem}.png"
    args.out.mkdir(parents=True, exist_ok=True)
    info = machine_info()
    start = time.perf_counter()

    def say(text):
        print(f"[{time.perf_counter() - start:7.1f} s] {text}", flush=True)

    table, plans = run(args, say)
    total = time.perf_counter() - start
    text = report(args, table, plans, total, info)
    fig = figure(table, args.n)
    write_together({md: text + "\n", png: lambda fh: fig.savefig(fh, format="png", dpi=110)})
    print(text)
    print(f"wrote {md} and {png} in {total:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
