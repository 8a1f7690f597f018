"""Person-level bounds mean the individual (issue 21, item 1) and the time limit bounds the
whole call (item 5): ``bounds(by="person")`` against brute-force enumeration of possible
worlds and an independent per-person LP written here, ``by="class"`` against the class
shares of the same worlds, the seven-person example of the issue, and the time limit
cutting the LP phase soundly."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog
from test_bounds import one_bucket_model

import maxent_privacy.bounds.targets as targets_module
from maxent_privacy import Bucketized, MaxEntModel
from maxent_privacy.bounds import worlds as worlds_module


# ----------------------------------------------------------------- seven people
def seven_people() -> MaxEntModel:
    """Three releases, each one bucket of six {s1, s2, s2, s3, s3, s3}: people 3-6 in
    every release, 0, 1 and 2 in two each (issue 21, "Why" 1)."""
    members = ([3, 4, 5, 6, 0, 1], [3, 4, 5, 6, 1, 2], [3, 4, 5, 6, 0, 2])
    return one_bucket_model(members, ["s1", "s2", "s2", "s3", "s3", "s3"])


def test_seven_people_of_the_issue():
    model = seven_people()
    # s1 counts: a (people 3-6) + b_i + b_j = 1 in each release, so b_0 = b_1 = b_2 = b
    # and a + 2b = 1: integral worlds have a = 1, b = 0; fractional tables reach b = 1/2
    exact = model.bounds(by="person", exact=True).xs("s1", level="s")
    relaxed = model.bounds(by="person").xs("s1", level="s")
    share = model.bounds(by="class", exact=True).xs("s1", level="s")
    share_lp = model.bounds(by="class").xs("s1", level="s")
    for p in (0, 1, 2):
        assert exact.loc[p, "upper"] == 0 and exact.loc[p, "lower"] == 0
        assert exact.loc[p, "upper_exact"] and not exact.loc[p, "possible"]
        assert relaxed.loc[p, "upper"] == pytest.approx(1 / 2, abs=1e-9)
        assert exact.loc[p, "lp_upper"] == pytest.approx(1 / 2, abs=1e-9)
    for p in (3, 4, 5, 6):
        # some world gives p s1, some does not: possible, not certain
        assert (exact.loc[p, "lower"], exact.loc[p, "upper"]) == (0.0, 1.0)
        assert exact.loc[p, "possible"] and not exact.loc[p, "certain"]
        assert exact.loc[p, "exact"]
        # a fractional table may give all of s1 to p
        assert relaxed.loc[p, "upper"] == pytest.approx(1.0, abs=1e-9)
        # the class's share: one of four in every world; [0, 1/4] over fractional tables
        assert tuple(share.loc[p, ["lower", "upper"]]) == pytest.approx((1 / 4, 1 / 4))
        assert tuple(share_lp.loc[p, ["lower", "upper"]]) == pytest.approx((0, 1 / 4))
    assert exact["certified"].all() and relaxed["certified"].all()
    # the maximum-entropy estimate (a class share) lies inside the individual's LP bounds
    with_maxent = model.solve().bounds(by="person")
    assert (with_maxent["lower"] <= with_maxent["maxent"] + 1e-7).all()
    assert (with_maxent["maxent"] <= with_maxent["upper"] + 1e-7).all()


# --------------------------------------------------------- random pooled instances
def random_instance(rng):
    """People (4-7, QI u/v, 2-3 values), 2-3 bucketized releases with 1-2 groups each,
    and 0-2 random linear facts true of the original table. A core of people is in every
    release (people whom nothing tells apart: classes of several), the others in each
    release with probability 1/2."""
    n = int(rng.integers(4, 8))
    values = ["a", "b", "c"][: int(rng.integers(2, 4))]
    people = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(n)],
            "q": rng.choice(["u", "v"], n),
            "s": rng.choice(values, n),
        }
    )
    core = rng.random(n) < rng.uniform(0.4, 0.8)
    releases = []
    for _ in range(int(rng.integers(2, 4))):
        keep = core | (rng.random(n) < 0.5)
        if keep.sum() < 2:
            keep[rng.choice(n, 2, replace=False)] = True
        sub = people[keep]
        groups = 1 if rng.random() < 0.7 else 2
        releases.append(sub.assign(g=rng.integers(1, groups + 1, len(sub))))
    present = sorted(set().union(*(set(r["pid"]) for r in releases)), key=lambda p: int(p[1:]))
    people = people.set_index("pid").loc[present].reset_index()
    values = sorted(set(people["s"]))  # those the releases publish
    facts = []
    for _ in range(int(rng.integers(0, 3))):
        terms = []
        for _ in range(int(rng.integers(1, 3))):
            cond = rng.choice([None, "u", "v"])
            if cond is not None and not (people["q"] == cond).any():
                cond = None
            terms.append((float(rng.choice([1, -1, 2])), str(rng.choice(values)), cond))
        sense = str(rng.choice(["==", "<=", ">=", "<=", ">="]))
        truth = fact_value(terms, people["s"].to_numpy()[None, :], people["q"].to_numpy())[0]
        slack = float(rng.choice([0.0, 0.1, 0.2, 0.4]))
        rhs = truth if sense == "==" else truth + slack if sense == "<=" else truth - slack
        facts.append((terms, sense, rhs))
    return people, releases, facts


def fact_value(terms, S, q):
    """sum of coef * P(value | q = cond) per assignment (rows of S), computed by hand: the
    people holding the value among those with the QI value, over how many they are."""
    total = np.zeros(S.shape[0])
    for coef, v, cond in terms:
        who = np.ones(len(q), dtype=bool) if cond is None else q == cond
        total += coef * (S[:, who] == v).sum(axis=1) / who.sum()
    return total


def build(people, releases, facts) -> MaxEntModel:
    model = MaxEntModel(
        [Bucketized(r, qi=["q"], sa="s", group="g", person="pid") for r in releases]
    )
    for i, (terms, sense, rhs) in enumerate(facts):
        expr = None
        for coef, v, cond in terms:
            term = model.P(v) if cond is None else model.P(v, q=cond)
            expr = coef * term if expr is None else expr + coef * term
        if expr is None:
            continue
        fact = expr == rhs if sense == "==" else expr <= rhs if sense == "<=" else expr >= rhs
        model.add(fact, name=f"fact {i}")
    return model


def enumerate_worlds(people, releases, facts, values):
    """Every assignment of values to people (rows) that gives every release group its
    published multiset of values and satisfies every fact."""
    ids = people["pid"].tolist()
    col = {p: j for j, p in enumerate(ids)}
    S = np.array(list(itertools.product(values, repeat=len(ids))), dtype=object)
    ok = np.ones(len(S), dtype=bool)
    for rel in releases:
        for _, grp in rel.groupby("g"):
            cols = [col[p] for p in grp["pid"]]
            for v in values:
                ok &= (S[:, cols] == v).sum(axis=1) == (grp["s"] == v).sum()
    q = people["q"].to_numpy()
    for terms, sense, rhs in facts:
        got = fact_value(terms, S, q)
        if sense == "==":
            ok &= np.abs(got - rhs) <= 1e-9
        elif sense == "<=":
            ok &= got <= rhs + 1e-9
        else:
            ok &= got >= rhs - 1e-9
    return S[ok]


def person_lp(people, releases, facts, values):
    """Per (person, value): min and max of x[p, s] over fractional tables, each person
    their own variable (x >= 0, one unit per person, every release group's counts, the
    facts), by scipy's HiGHS on a dense program written here."""
    ids = people["pid"].tolist()
    nv = len(values)
    var = {(p, v): i for i, (p, v) in enumerate(itertools.product(ids, values))}
    A_eq, b_eq, A_ub, b_ub = [], [], [], []
    for p in ids:
        row = np.zeros(len(var))
        row[[var[(p, v)] for v in values]] = 1.0
        A_eq.append(row)
        b_eq.append(1.0)
    for rel in releases:
        for _, grp in rel.groupby("g"):
            for v in values:
                row = np.zeros(len(var))
                row[[var[(p, v)] for p in grp["pid"]]] = 1.0
                A_eq.append(row)
                b_eq.append(float((grp["s"] == v).sum()))
    q = dict(zip(people["pid"], people["q"], strict=True))
    for terms, sense, rhs in facts:
        row = np.zeros(len(var))
        for coef, v, cond in terms:
            who = [p for p in ids if cond is None or q[p] == cond]
            for p in who:
                row[var[(p, v)]] += coef / len(who)
        if sense == "==":
            A_eq.append(row)
            b_eq.append(rhs)
        else:
            A_ub.append(row if sense == "<=" else -row)
            b_ub.append(rhs if sense == "<=" else -rhs)
    kw = dict(
        A_eq=np.array(A_eq),
        b_eq=np.array(b_eq),
        A_ub=np.array(A_ub) if A_ub else None,
        b_ub=np.array(b_ub) if b_ub else None,
        bounds=(0, 1),
        method="highs",
    )
    out = {}
    for (p, v), i in var.items():
        c = np.zeros(len(var))
        c[i] = 1.0
        lo, hi = linprog(c, **kw), linprog(-c, **kw)
        assert lo.status == 0 and hi.status == 0
        out[(p, v)] = (lo.fun, -hi.fun)
    assert len(out) == len(ids) * nv
    return out


INSTANCES = 200


def test_person_bounds_against_enumeration_and_a_per_person_lp():
    rng = np.random.default_rng(21)
    t0 = time.perf_counter()
    checked = pairs = gaps = 0
    for _ in range(INSTANCES):
        people, releases, facts = random_instance(rng)
        model = build(people, releases, facts)
        values = sorted(set().union(*(set(r["s"]) for r in releases)))
        worlds = enumerate_worlds(people, releases, facts, values)
        assert len(worlds), "the original table is a world"
        ids = people["pid"].tolist()
        exact = model.bounds(by="person", exact=True)
        relaxed = model.bounds(by="person")
        share = model.bounds(by="class", exact=True)
        reference = person_lp(people, releases, facts, values)
        assert exact["exact"].all() and exact["certified"].all()
        assert relaxed["certified"].all() and share["exact"].all()
        cls = targets_module._person_class(model)
        members = {c: [ids.index(p) for p in ps] for c, ps in cls.groupby(cls).groups.items()}
        for j, p in enumerate(ids):
            for v in values:
                holds = worlds[:, j] == v
                row = exact.loc[(p, v)]
                # the individual: possible in some world, certain in every one
                assert row["upper"] == float(holds.any()), (p, v)
                assert row["lower"] == float(holds.all()), (p, v)
                assert bool(row["possible"]) == holds.any() and bool(row["certain"]) == holds.all()
                # the LP's individual bounds hold them, and are the per-person LP's
                lp = relaxed.loc[(p, v)]
                assert lp["lower"] <= row["lower"] + 1e-9 and row["upper"] <= lp["upper"] + 1e-9
                lo, hi = reference[(p, v)]
                assert lp["lower"] == pytest.approx(lo, abs=1e-7), (p, v)
                assert lp["upper"] == pytest.approx(hi, abs=1e-7), (p, v)
                assert (row["lp_lower"], row["lp_upper"]) == pytest.approx((lo, hi), abs=1e-7)
                gaps += int(lp["upper"] > 1e-7 and not holds.any())
                # the class's share: its min and max count over the worlds, over its size
                ms = members[cls[p]]
                count = (worlds[:, ms] == v).sum(axis=1)
                want = (count.min() / len(ms), count.max() / len(ms))
                got = tuple(share.loc[(p, v), ["lower", "upper"]])
                assert got == pytest.approx(want, abs=1e-9), (p, v)
                pairs += 1
        checked += 1
    seconds = time.perf_counter() - t0
    assert checked == INSTANCES
    assert pairs > 1000 and gaps > 0  # some pairs the LP allows and no world does
    assert seconds < 120, seconds


# --------------------------------------------------------------------- time limit
def test_a_time_limit_of_zero_cuts_the_lp_phase_soundly():
    model = seven_people()
    full = model.bounds(by="person", exact=True)
    with pytest.warns(UserWarning, match=r"time limit ran out .* 21 of 21 rows"):
        cut = model.bounds(by="person", exact=True, time_limit=0)
    assert (cut["method"] == "time limit").all()
    assert not cut["certified"].any() and not cut["exact"].any()
    assert not cut["lower_exact"].any() and not cut["upper_exact"].any()
    assert cut["possible"].isna().all() and cut["certain"].isna().all()
    # sound: the trivial bounds hold the exact ones
    assert (cut["lower"] <= full["lower"]).all() and (full["upper"] <= cut["upper"]).all()
    assert cut.attrs["certificate"]["rows_cut_by_time_limit"] == 21
    assert cut.attrs["certificate"]["time_limit_reached"]
    with pytest.warns(UserWarning, match="time limit ran out"):
        share = model.bounds(by="class", time_limit=0)  # LP only: cut all the same
    assert (share["lower"] == 0).all() and (share["upper"] == 1).all()


def test_closed_forms_need_no_time():
    # one bucketized release, no fact: closed forms, computed whatever the time limit
    frame = pd.DataFrame({"pid": range(6), "q": list("xxyyzz"), "g": [1, 1, 1, 2, 2, 2]})
    rel = Bucketized(frame.assign(s=list("abbcca")), qi=["q"], sa="s", group="g", person="pid")
    model = MaxEntModel(rel)
    cut = model.bounds(by="person", time_limit=0)
    assert (cut["method"].isin(["closed form", "impossible"])).all()
    pd.testing.assert_frame_equal(cut, model.bounds(by="person"), check_like=True)


def test_exact_is_per_side(monkeypatch):
    # integer programs that all run out of time: the sides that a world seen (or the
    # LP's own integrality) settles are exact, the others keep the LP's bound
    monkeypatch.setattr(worlds_module.MILP, "run", lambda self, *a, **k: ("time", None))
    frame = seven_people().bounds(by="class", exact=True)
    assert (frame["exact"] == (frame["lower_exact"] & frame["upper_exact"])).all()
    assert (frame["lower_exact"] != frame["upper_exact"]).any()
    open_hi = frame[~frame["upper_exact"]]
    np.testing.assert_allclose(open_hi["upper"], open_hi["lp_upper"])
    open_lo = frame[~frame["lower_exact"]]
    np.testing.assert_allclose(open_lo["lower"], open_lo["lp_lower"])


def big_linked_model(n=200, seed=0) -> MaxEntModel:
    """Three random bucketized releases (groups of ten) of ``n`` people, with every
    P(value | QI value) known: one large component whose bounds take some 500 LPs
    (about 6 s)."""
    rng = np.random.default_rng(seed)
    people = pd.DataFrame(
        {"pid": range(n), "q": rng.choice(list("uvwxyz"), n), "s": rng.choice(list("abcde"), n)}
    )
    rels = []
    for _ in range(3):
        sub = people.iloc[np.sort(rng.choice(n, int(0.8 * n), replace=False))]
        sub = sub.assign(g=rng.permutation(len(sub)) // 10)
        rels.append(Bucketized(sub, qi=["q"], sa="s", group="g", person="pid"))
    model = MaxEntModel(rels)
    present = people[people["pid"].isin(set().union(*(set(r.frame["pid"]) for r in rels)))]
    for q, grp in present.groupby("q"):
        for v in "abcde":
            model.add(model.P(v, q=q) == float((grp["s"] == v).mean()))
    return model


def test_the_time_limit_bounds_the_lp_phase():
    model = big_linked_model()
    t0 = time.perf_counter()
    with pytest.warns(UserWarning, match="time limit ran out"):
        cut = model.bounds(by="person", time_limit=0.5)
    seconds = time.perf_counter() - t0
    assert seconds < 3.0, seconds  # the setup (targets, rows, components) is not budgeted
    hit = cut["method"] == "time limit"
    assert hit.any() and not cut.loc[hit, "certified"].any()
    assert cut.attrs["certificate"]["rows_cut_by_time_limit"] == int(hit.sum())
    # sound: the rows cut hold the bounds of a run with time enough
    full = model.bounds(by="person", time_limit=600)
    assert (full["method"] != "time limit").all() and full["certified"].all()
    assert (cut["lower"] <= full["lower"] + 1e-9).all()
    assert (full["upper"] <= cut["upper"] + 1e-9).all()
