"""Certified posterior intervals (issue 13): maxent_privacy.bounds against references that
do not use the package's code (a dense LP written here, brute-force enumeration of possible
worlds), the paper's Figure 1 by hand, and the six-person example of the issue."""

from __future__ import annotations

import doctest
import itertools

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import maxent_privacy.bounds.intervals as bounds_module
import maxent_privacy.bounds.targets as targets_module
from maxent_privacy import Bucketized, InfeasibleKnowledge, MaxEntModel, datasets, metrics, soft
from maxent_privacy.bounds import relaxation_gap
from maxent_privacy.generalized import Generalized

FIG1 = dict(qi=["gender", "degree"], sa="disease", group="bucket")


def test_docstring_examples():
    failures, _ = doctest.testmod(bounds_module, optionflags=doctest.ELLIPSIS)
    assert failures == 0


# --------------------------------------------------------------------- Figure 1
# Du et al. Figure 1 with P(Breast Cancer | male) = 0, by hand:
# bucket 1 = Allen, Brian (male, college), Cathy (female, college), David (male, high
#   school) with {Flu, Flu, Pneumonia, Breast Cancer}: Cathy has Breast Cancer, the three
#   men share {Flu, Flu, Pneumonia};
# bucket 2 = Ethan (male, college), Frank (male, high school), Grace (female, junior) with
#   {HIV, Pneumonia, Breast Cancer}: Grace has Breast Cancer, the men share {HIV, Pneumonia};
# bucket 3 = Helen (female, college), Iris (female, graduate), James (male, graduate) with
#   {HIV, Lung Cancer, Flu}, untouched.
HAND = {
    # female college: Cathy (bucket 1, Breast Cancer) and Helen (bucket 3, any of its 3)
    ("female", "college"): {
        "Breast Cancer": (1 / 2, 1 / 2),
        "Flu": (0, 1 / 2),
        "HIV": (0, 1 / 2),
        "Lung Cancer": (0, 1 / 2),
        "Pneumonia": (0, 0),
    },
    # Iris: any value of bucket 3
    ("female", "graduate"): {"Flu": (0, 1), "HIV": (0, 1), "Lung Cancer": (0, 1)},
    ("female", "junior"): {"Breast Cancer": (1, 1)},  # Grace
    # Allen, Brian (bucket 1: at least one of them has Flu, at most both; at most one has
    # Pneumonia) and Ethan (bucket 2: HIV or Pneumonia)
    ("male", "college"): {"Flu": (1 / 3, 2 / 3), "HIV": (0, 1 / 3), "Pneumonia": (0, 2 / 3)},
    ("male", "graduate"): {"Flu": (0, 1), "HIV": (0, 1), "Lung Cancer": (0, 1)},  # James
    # David (bucket 1: Flu or Pneumonia) and Frank (bucket 2: HIV or Pneumonia); both may
    # avoid Pneumonia (David Flu, Frank HIV) or both have it
    ("male", "high school"): {"Flu": (0, 1 / 2), "HIV": (0, 1 / 2), "Pneumonia": (0, 1)},
}
VALUES = ["Breast Cancer", "Flu", "HIV", "Lung Cancer", "Pneumonia"]


@pytest.fixture
def fig1_model():
    model = MaxEntModel(Bucketized(datasets.du2008_figure1(), **FIG1))
    model.add(model.P("Breast Cancer", gender="male") == 0)
    return model


@pytest.mark.parametrize("exact", [False, True])
def test_figure1_every_bound_by_hand(fig1_model, exact):
    frame = fig1_model.bounds(exact=exact)
    assert len(frame) == len(HAND) * len(VALUES)  # every (row, value), impossible ones 0/0
    for q, row in HAND.items():
        for s in VALUES:
            lo, hi = row.get(s, (0, 0))
            got = frame.loc[(*q, s)]
            assert got["lower"] == pytest.approx(lo, abs=1e-9), (q, s)
            assert got["upper"] == pytest.approx(hi, abs=1e-9), (q, s)
    assert frame["certified"].all()
    assert frame.attrs["certificate"]["max_gap"] <= 1e-9
    assert frame.attrs["certificate"]["max_dual_violation"] <= 1e-9
    if exact:
        assert frame["exact"].all()  # one bucketized release: every LP vertex is a world


def test_figure1_maxent_inside(fig1_model):
    frame = fig1_model.solve().bounds()
    assert list(frame.columns[:3]) == ["lower", "maxent", "upper"]
    row = frame.loc[("male", "college", "Flu")]
    assert row["maxent"] == pytest.approx(4 / 9, abs=1e-7)
    assert (row["lower"], row["upper"]) == pytest.approx((1 / 3, 2 / 3), abs=1e-9)
    assert (frame["lower"] <= frame["maxent"] + 1e-7).all()
    assert (frame["maxent"] <= frame["upper"] + 1e-7).all()
    post = fig1_model.solve().posterior().stack()
    assert frame.index.equals(post.index)


def test_figure1_without_knowledge_is_closed_form():
    model = MaxEntModel(Bucketized(datasets.du2008_figure1(), **FIG1))
    frame = model.bounds()
    assert (frame["method"].isin(["closed form", "impossible"])).all()
    assert frame.attrs["certificate"]["lps"] == 0
    # male college: 2 of bucket 1 (2 Flu, 1 Pneumonia, 1 Breast Cancer among 4), 1 of
    # bucket 2: min(n_qb, n_bs) and max(0, n_qb + n_bs - |b|) added over the buckets
    assert frame.loc[("male", "college", "Flu"), "upper"] == pytest.approx(2 / 3)
    assert frame.loc[("male", "college", "Flu"), "lower"] == 0
    assert frame.loc[("male", "college", "Breast Cancer"), "upper"] == pytest.approx(2 / 3)
    assert frame.loc[("male", "college", "Lung Cancer"), "method"] == "impossible"


def test_figure1_by_group_and_values(fig1_model):
    frame = fig1_model.bounds(by="group", values=["Flu", "HIV"])
    assert frame.index.names == ["gender", "degree", "bucket", "disease"]
    assert set(frame.index.get_level_values("disease")) == {"Flu", "HIV"}
    assert tuple(frame.loc[("male", "college", 1, "Flu"), ["lower", "upper"]]) == (0.5, 1.0)
    assert tuple(frame.loc[("male", "college", 2, "HIV"), ["lower", "upper"]]) == (0.0, 1.0)
    assert frame.loc[("male", "college", 1, "Flu"), "records"] == 2


def test_soft_facts_are_not_walls():
    plain = MaxEntModel(Bucketized(datasets.du2008_figure1(), **FIG1))
    model = MaxEntModel(Bucketized(datasets.du2008_figure1(), **FIG1))
    model.add(soft(model.P("Breast Cancer", gender="male") == 0, 10.0))
    a, b = plain.bounds(), model.bounds()
    pd.testing.assert_frame_equal(a[["lower", "upper"]], b[["lower", "upper"]])


def test_convex_fact_matches_its_linear_twin():
    linear = MaxEntModel(Bucketized(datasets.du2008_figure1(), **FIG1))
    linear.add(linear.P("Flu", gender="male") <= 0.25)
    conic = MaxEntModel(Bucketized(datasets.du2008_figure1(), **FIG1))
    conic.add(cp.square(conic.P("Flu", gender="male")) <= 0.0625)
    a, b = linear.bounds(), conic.bounds()
    np.testing.assert_allclose(b["lower"], a["lower"], atol=1e-5)
    np.testing.assert_allclose(b["upper"], a["upper"], atol=1e-5)
    assert (b.loc[b["method"] == "conic", "certified"] == False).all()  # noqa: E712
    assert (b["method"] == "conic").any()


def test_contradictory_facts_raise():
    model = MaxEntModel(Bucketized(datasets.du2008_figure1(), **FIG1))
    model.add(model.P("Breast Cancer", gender="male") == 0)
    model.add(model.P("Breast Cancer", gender="female") == 0)
    with pytest.raises(InfeasibleKnowledge):
        model.bounds()


def test_person_bounds_need_persons():
    model = MaxEntModel(Bucketized(datasets.du2008_figure1(), **FIG1))
    with pytest.raises(ValueError, match="persons"):
        model.bounds(by="person")


def test_singled_out_person(fig1_model):
    bob = fig1_model.person("Bob", gender="male", degree="college")  # bucket 1 or 2
    fig1_model.add(bob.P("HIV") == 1)  # then he is Ethan's record (bucket 2)
    frame = fig1_model.bounds(by="person")
    assert tuple(frame.loc[("Bob", "HIV"), ["lower", "upper"]]) == pytest.approx((1, 1))
    assert frame.loc[("Bob", "Flu"), "upper"] == pytest.approx(0, abs=1e-9)
    assert frame["certified"].all()


# ----------------------------------------------------------------- six people
def one_bucket_model(members, values) -> MaxEntModel:
    """Pooled releases of one bucket each: release ``r`` holds the people ``members[r]``
    (ids) and the multiset ``values``."""
    return MaxEntModel(
        [
            Bucketized(
                pd.DataFrame({"pid": m, "q": "x", "g": 1, "s": values}),
                qi=["q"],
                sa="s",
                group="g",
                person="pid",
            )
            for m in members
        ]
    )


def six_people():
    members = ([3, 4, 5, 0, 1], [3, 4, 5, 1, 2], [3, 4, 5, 0, 2])
    return one_bucket_model(members, ["s1", "s2", "s2", "s3", "s3"])


def test_six_people_of_the_issue():
    model = six_people()
    exact = model.bounds(by="person", exact=True)
    relaxed = model.solve().bounds(by="person")
    for p in (0, 1, 2):
        # 3a + 2b = 3 counts s1: every possible world gives it to one of 3, 4, 5
        assert exact.loc[(p, "s1"), "upper"] == 0
        assert exact.loc[(p, "s1"), "exact"]
        assert relaxed.loc[(p, "s1"), "upper"] == pytest.approx(1 / 2, abs=1e-9)
        row = relaxed.loc[(p, "s1")]
        assert row["lower"] - 1e-9 <= row["maxent"] <= row["upper"] + 1e-9
        assert row["maxent"] == pytest.approx(0.226, abs=1e-3)
    # 3, 4 and 5 are one class of three: exactly one of them holds s1 in every world, so
    # each of them may hold it, none surely; the class's share is 1/3 in every world
    assert tuple(exact.loc[(3, "s1"), ["lower", "upper"]]) == (0.0, 1.0)
    assert exact.loc[(3, "s1"), "possible"] and not exact.loc[(3, "s1"), "certain"]
    share = model.bounds(by="class", exact=True)
    assert tuple(share.loc[(3, "s1"), ["lower", "upper"]]) == pytest.approx((1 / 3, 1 / 3))
    gap = relaxation_gap(model)
    assert sorted(gap.index) == [(0, "s1"), (1, "s1"), (2, "s1")]
    assert gap.attrs["undecided"] == 0


def test_time_limit_falls_back_on_the_relaxation(monkeypatch):
    # every integer program runs out of time (the LP phase does not): the LP vertices are
    # not integral here, so some bounds stay the relaxation's, not exact
    from maxent_privacy.bounds import worlds as worlds_module

    monkeypatch.setattr(worlds_module.MILP, "run", lambda self, *a, **k: ("time", None))
    frame = six_people().bounds(by="class", exact=True)
    open_ = frame[~frame["exact"]]
    assert len(open_)
    np.testing.assert_allclose(open_["upper"], open_["lp_upper"])
    np.testing.assert_allclose(open_["lower"], open_["lp_lower"])
    assert frame.attrs["certificate"]["time_limit_reached"]
    assert frame["certified"].all()  # the LP bounds are all there, with certificates


def test_exact_without_any_integral_table_keeps_the_lp_bounds():
    release = Bucketized(datasets.du2008_figure1(), person="name", **FIG1)
    model = MaxEntModel(release)
    model.add(model.P("Flu", gender="male") == 0.3)  # 1.8 of the 6 men: no integral table
    with pytest.warns(UserWarning, match="no integral table"):
        frame = model.bounds(by="person", exact=True)
    assert frame.attrs["certificate"]["no_integral_world"]
    assert not frame["exact"].any()  # no possible world at all: nothing is exact
    np.testing.assert_allclose(frame["upper"], frame["lp_upper"])
    np.testing.assert_allclose(frame["lower"], frame["lp_lower"])


# ------------------------------------------------------ independent LP reference
@st.composite
def releases_with_facts(draw):
    n = draw(st.integers(4, 10))
    a = draw(st.lists(st.sampled_from(["a0", "a1"]), min_size=n, max_size=n))
    c = draw(st.lists(st.sampled_from(["c0", "c1", "c2"]), min_size=n, max_size=n))
    s = draw(st.lists(st.sampled_from(["x", "y", "z"]), min_size=n, max_size=n))
    g = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    frame = pd.DataFrame({"a": a, "c": c, "s": s, "g": g})
    facts = []
    for _ in range(draw(st.integers(0, 3))):
        attr = draw(st.sampled_from(["a", "c"]))
        val = draw(st.sampled_from(sorted(frame[attr].unique())))
        v = draw(st.sampled_from(sorted(frame["s"].unique())))
        sense = draw(st.sampled_from(["==", "<=", ">="]))
        slack = draw(st.sampled_from([0.0, 0.1, 0.25]))
        sub = frame[frame[attr] == val]
        p = float((sub["s"] == v).mean())  # true in the original table: feasible
        p = min(1.0, p + slack) if sense == "<=" else max(0.0, p - slack) if sense == ">=" else p
        facts.append((attr, val, v, sense, p))
    return frame, facts


def reference_lp(frame, facts, by_group=False):
    """min/max of P(s | q) (or P(s | q, g)) over x[q, g, s] >= 0 with the QI- and
    SA-invariants and the facts, as a dense LP solved by scipy.optimize.linprog."""
    cells = [
        (q, g, s)
        for (q, g), _ in frame.groupby([frame["a"] + "|" + frame["c"], "g"])
        for s in sorted(frame.loc[frame["g"] == g, "s"].unique())
    ]
    A, b = [], []
    qi = frame["a"] + "|" + frame["c"]
    for (q, g), n in frame.groupby([qi, "g"]).size().items():
        A.append([1.0 if (k[0], k[1]) == (q, g) else 0.0 for k in cells])
        b.append(n)
    for (g, s), n in frame.groupby(["g", "s"]).size().items():
        A.append([1.0 if (k[1], k[2]) == (g, s) else 0.0 for k in cells])
        b.append(n)
    A_eq, b_eq, A_ub, b_ub = list(A), list(b), [], []
    for attr, val, v, sense, p in facts:
        pos = 0 if attr == "a" else 1
        n_q = int((frame[attr] == val).sum())
        row = [1.0 / n_q if k[0].split("|")[pos] == val and k[2] == v else 0.0 for k in cells]
        if sense == "==":
            A_eq.append(row)
            b_eq.append(p)
        elif sense == "<=":
            A_ub.append(row)
            b_ub.append(p)
        else:
            A_ub.append([-r for r in row])
            b_ub.append(-p)
    keys = [qi, frame["g"]] if by_group else [qi]
    out = {}
    for key, sub in frame.groupby(keys):
        key = key if isinstance(key, tuple) else (key,)
        for v in sorted(frame["s"].unique()):
            c = np.array(
                [
                    1.0 / len(sub)
                    if k[0] == key[0] and (not by_group or k[1] == key[1]) and k[2] == v
                    else 0.0
                    for k in cells
                ]
            )
            kw = dict(
                A_eq=np.array(A_eq),
                b_eq=np.array(b_eq),
                A_ub=np.array(A_ub) if A_ub else None,
                b_ub=np.array(b_ub) if b_ub else None,
                bounds=(0, None),
                method="highs",
            )
            lo, hi = linprog(c, **kw), linprog(-c, **kw)
            assert lo.status == 0 and hi.status == 0
            out[(*key, v)] = (lo.fun, -hi.fun)
    return out


@given(releases_with_facts(), st.booleans())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_against_an_independent_lp(case, by_group):
    frame, facts = case
    model = MaxEntModel(Bucketized(frame, qi=["a", "c"], sa="s", group="g"))
    for i, (attr, val, v, sense, p) in enumerate(facts):
        expr = model.P(v, **{attr: val})
        fact = expr == p if sense == "==" else expr <= p if sense == "<=" else expr >= p
        model.add(fact, name=f"fact {i}")
    got = model.solve().bounds(by="group" if by_group else None)
    want = reference_lp(frame, facts, by_group)
    for key, (lo, hi) in want.items():
        a, c = key[0].split("|")
        idx = (a, c, *key[1:])
        assert got.loc[idx, "lower"] == pytest.approx(lo, abs=1e-7), idx
        assert got.loc[idx, "upper"] == pytest.approx(hi, abs=1e-7), idx
    assert len(got) == len(want)
    assert got["certified"].all()
    assert (got["lower"] <= got["maxent"] + 1e-6).all()
    assert (got["maxent"] <= got["upper"] + 1e-6).all()


# ------------------------------------------------------- possible worlds, by brute force
@st.composite
def pooled_instances(draw):
    """2-3 bucketized releases of overlapping people (known groups), or a bucketized and
    a generalized release whose groups an adversary must guess (placement cells)."""
    n = draw(st.integers(3, 7))
    q = draw(st.lists(st.sampled_from(["u", "v"]), min_size=n, max_size=n))
    s = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    people = pd.DataFrame({"pid": [f"p{i}" for i in range(n)], "q": q, "s": s})
    generalized = draw(st.booleans())
    k = 2 if generalized else draw(st.integers(2, 4))
    releases = []
    for _ in range(k):
        keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        sub = people[np.array(keep)] if sum(keep) >= 2 else people
        g = draw(st.lists(st.integers(1, 2), min_size=len(sub), max_size=len(sub)))
        releases.append(sub.assign(g=g))
    return people, releases, generalized


@st.composite
def ring_instances(draw):
    """Releases in a cycle, as in the six-person example: a core of people in every
    release, the others in two consecutive ones (one bucket each). Such odd cycles are
    where the LP relaxation may allow values that no possible world gives."""
    core = draw(st.integers(1, 3))
    k = draw(st.sampled_from([3, 5]))
    n = core + k
    s = draw(st.lists(st.sampled_from(["s1", "s2", "s3"]), min_size=n, max_size=n))
    people = pd.DataFrame({"pid": [f"p{i}" for i in range(n)], "q": "x", "s": s})
    ring = [people.iloc[list(range(core)) + [core + r, core + (r + 1) % k]] for r in range(k)]
    return people, [r.assign(g=1) for r in ring], False


SIX = (
    pd.DataFrame(
        {"pid": [f"p{i}" for i in range(6)], "q": "x", "s": ["s3"] * 3 + ["s1", "s2", "s2"]}
    ),
)
SIX = (
    SIX[0],
    [SIX[0].iloc[ids].assign(g=1) for ids in ([3, 4, 5, 0, 1], [3, 4, 5, 1, 2], [3, 4, 5, 0, 2])],
    False,
)


def build(people, releases, generalized):
    rels = [Bucketized(r, qi=["q"], sa="s", group="g", person="pid") for r in releases]
    if not generalized:
        return MaxEntModel(rels), None
    # the second release published with generalized QI and no person ids
    second = releases[1]
    rows = []
    for g, grp in second.groupby("g"):
        cell = grp["q"].iloc[0] if grp["q"].nunique() == 1 else "*"
        rows += [{"q": cell, "s": v, "g": g} for v in grp["s"]]
    general = Generalized(pd.DataFrame(rows), qi=["q"], sa="s", group="g")
    population = second.set_index("pid")[["q"]]
    covers = {
        g: set(second.loc[second["g"] == g, "q"])
        if second.loc[second["g"] == g, "q"].nunique() == 1
        else {"u", "v"}
        for g in second["g"].unique()
    }
    return MaxEntModel([rels[0], general], populations=[None, population]), covers


def worlds(people, releases, covers):
    """Every assignment of values to people consistent with the releases."""
    ids = people["pid"].tolist()
    values = sorted(people["s"].unique())
    for sigma in itertools.product(values, repeat=len(ids)):
        value = dict(zip(ids, sigma, strict=True))
        ok = True
        for r, rel in enumerate(releases):
            if covers is not None and r == 1:
                continue
            for _, grp in rel.groupby("g"):
                if sorted(value[p] for p in grp["pid"]) != sorted(grp["s"]):
                    ok = False
                    break
            if not ok:
                break
        if ok and covers is not None:
            # the generalized release: some placement of its people into its groups that
            # fits their QI and gives every group its published values
            rel = releases[1]
            slots = [(g, v) for g, grp in rel.groupby("g") for v in grp["s"]]
            members = rel["pid"].tolist()
            qi = dict(zip(people["pid"], people["q"], strict=True))
            ok = any(
                all(
                    qi[p] in covers[slots[j][0]] and value[p] == slots[j][1]
                    for p, j in zip(members, perm, strict=True)
                )
                for perm in itertools.permutations(range(len(slots)))
            )
        if ok:
            yield value


@given(st.one_of(pooled_instances(), ring_instances()))
@example(SIX)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_exact_equals_enumeration_and_lp_contains_it(case):
    people, releases, generalized = case
    present = set().union(*(set(r["pid"]) for r in releases))
    people = people[people["pid"].isin(present)].reset_index(drop=True)
    model, covers = build(people, releases, generalized)
    exact = model.bounds(by="class", exact=True)  # the class's share (the individual's:
    assert exact["exact"].all()  # tests/bounds/test_person_worlds.py)
    cls = targets_module._person_class(model)
    members = cls.groupby(cls).groups
    seen = {}
    for value in worlds(people, releases, covers):
        # the class's share: how many of its people hold s, over its size
        for c, ids in members.items():
            for s in exact.index.get_level_values(1).unique():
                share = sum(value[p] == s for p in ids) / len(ids)
                lo, hi = seen.get((c, s), (np.inf, -np.inf))
                seen[(c, s)] = (min(lo, share), max(hi, share))
    assert seen, "the original table is a world"
    for (p, s), row in exact.iterrows():
        lo, hi = seen.get((cls[p], s), (0.0, 0.0))
        assert row["lower"] == pytest.approx(lo, abs=1e-9), (p, s)
        assert row["upper"] == pytest.approx(hi, abs=1e-9), (p, s)
        assert row["lp_lower"] <= lo + 1e-9 and hi <= row["lp_upper"] + 1e-9, (p, s)
    assert exact["certified"].all()


# --------------------------------------------------------------------- metrics
def test_worst_case_breaches(fig1_model):
    result = fig1_model.solve()
    plain = metrics.breaches(result, 0.5)
    worst = metrics.breaches(result, 0.5, worst_case=True)
    assert len(worst) >= len(plain)
    assert (worst["upper"] >= 0.5 - 1e-9).all()
    assert {"posterior", "lower", "upper", "records"} <= set(worst.columns)
    # (male, college, Flu): maxent 4/9 < 0.5 but the worst case reaches 2/3
    hit = worst[(worst["gender"] == "male") & (worst["degree"] == "college")]
    assert "Flu" in set(hit["disease"])
    assert "Flu" not in set(
        plain[(plain["gender"] == "male") & (plain["degree"] == "college")]["disease"]
    )


def test_person_risk_table():
    release = Bucketized(datasets.du2008_figure1(), person="name", **FIG1)
    model = MaxEntModel(release)
    model.add(model.P("Breast Cancer", gender="male") == 0)
    risk = metrics.person_risk(model.solve())
    assert list(risk.columns) == ["value", "maxent", "lower", "upper", "max_maxent"]
    assert len(risk) == 10
    assert risk.loc["Cathy", "value"] == "Breast Cancer" and risk.loc["Cathy", "lower"] == 1
    assert (risk["lower"] <= risk["maxent"] + 1e-7).all()
    assert (risk["maxent"] <= risk["upper"] + 1e-7).all()
    assert risk["upper"].is_monotonic_decreasing
