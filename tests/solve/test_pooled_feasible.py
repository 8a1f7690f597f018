"""The solve never calls a consistent model infeasible (issue 21, item 2).

Random small pooled instances: bucketized releases and generalized releases with a
population (with or without person ids: without them people are placed by their cells),
each over some of the people, built from a true table (person -> value); random linear
facts ``P(v | cond) ==, <=, >= p`` with ``p`` read off the true table (the truth satisfies
them, some tight), or moved away from it (the model may then have no table). HiGHS
(``scipy.optimize.linprog``) on the model's own rows decides which:

* a table exists: ``model.solve()`` succeeds and its answer satisfies every fact;
* none: ``model.solve()`` raises ``InfeasibleKnowledge`` and Clarabel, on the same rows,
  finds no table either.

The ``@example`` is the reproducer of the issue: its only table sits on the boundary
(entropy 0), where Newton's dual bound tends to 0 from above and its rounding once took
it below 0, which read as "no table".
"""

import sys
from pathlib import Path

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from maxent_privacy import Bucketized, Generalized, InfeasibleKnowledge, MaxEntModel
from maxent_privacy.releases.ranges import between

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "releases"))
from test_pooled_bruteforce import instances, releases_of  # noqa: E402

AGES = (20, 30, 40, 50)
VALUES = ("a", "b", "c")


@st.composite
def releases(draw, people):
    """(kind, members, groups) per release: kind "bucket", "general" (person ids and a
    population) or "placed" (a population, no ids); groups 1 or 2 per member."""
    ids = sorted(people)
    out = []
    for _ in range(draw(st.integers(2, 4))):
        kind = draw(st.sampled_from(["bucket", "general", "placed"]))
        members = draw(st.lists(st.sampled_from(ids), min_size=2, max_size=len(ids), unique=True))
        groups = draw(st.lists(st.integers(1, 2), min_size=len(members), max_size=len(members)))
        wide = draw(st.booleans())  # generalized cells cover every age and sex
        out.append((kind, members, groups, wide))
    return out


@st.composite
def facts(draw, people, truth):
    """(value, condition, sense, shift): ``shift`` 0 is the truth's own value (tight);
    > 0 loosens an inequality; "==+"/"<=-"/">=+" move the value away from the truth."""
    ids = sorted(people)
    out = []
    for _ in range(draw(st.integers(1, 6))):
        sex, age = people[draw(st.sampled_from(ids))]
        cond = draw(
            st.sampled_from(
                [{"sex": sex}, {"age": age}, {"sex": sex, "age": age}, {"age": (20, age)}]
            )
        )
        value = draw(st.sampled_from(sorted(set(truth.values()))))
        # mostly inequalities, mostly tight: the truth often the only table
        sense = draw(st.sampled_from(["<=", ">="] * 3 + ["==", "==+", "<=-", ">=+"]))
        shift = draw(st.sampled_from([0.0, 0.0, 0.0, 0.1, 0.25, 0.5]))
        out.append((value, cond, sense, shift))
    return out


@st.composite
def cases(draw):
    n = draw(st.integers(4, 8))
    people = {f"p{i}": (draw(st.sampled_from("FM")), draw(st.sampled_from(AGES))) for i in range(n)}
    k = draw(st.integers(2, 3))
    truth = {p: draw(st.sampled_from(VALUES[:k])) for p in people}
    rels = draw(releases(people))
    return people, truth, rels, draw(facts(people, truth))


def _frame(people, truth, members, groups):
    rows = [
        {"pid": p, "sex": people[p][0], "age": people[p][1], "s": truth[p], "g": g}
        for p, g in zip(members, groups, strict=True)
    ]
    return pd.DataFrame(rows)


def _general(frame, wide, ids):
    rows = []
    for g, grp in frame.groupby("g"):
        lo, hi = (min(AGES), max(AGES)) if wide else (grp["age"].min(), grp["age"].max())
        sexes = sorted(grp["sex"].unique())
        sex = sexes[0] if len(sexes) == 1 and not wide else "*"
        for r in grp.itertuples():
            rows.append({"pid": r.pid, "sex": sex, "age": f"[{lo}-{hi}]", "s": r.s, "g": g})
    pub = pd.DataFrame(rows)
    if not ids:
        pub = pub.drop(columns="pid")
    return Generalized(pub, qi=["sex", "age"], sa="s", group="g", person="pid" if ids else None)


def model_of(case):
    people, truth, rels, _ = case
    out, pops = [], []
    for kind, members, groups, wide in rels:
        frame = _frame(people, truth, members, groups)
        if kind == "bucket":
            out.append(Bucketized(frame, qi=["sex", "age"], sa="s", group="g", person="pid"))
            pops.append(None)
            continue
        out.append(_general(frame, wide, ids=kind == "general"))
        pops.append(frame.set_index("pid")[["sex", "age"]])
    return MaxEntModel(out, populations=pops)


def _matches(person, cond) -> bool:
    sex, age = person
    if "sex" in cond and sex != cond["sex"]:
        return False
    want = cond.get("age")
    if isinstance(want, tuple):
        return want[0] <= age <= want[1]
    return want is None or age == want


def add_facts(model, case) -> None:
    people, truth, rels, fs = case
    present = sorted({p for _, members, _, _ in rels for p in members})
    for i, (value, cond, sense, shift) in enumerate(fs):
        who = [p for p in present if _matches(people[p], cond)]
        if not who or value not in {truth[p] for p in present}:
            continue
        p = float(np.mean([truth[q] == value for q in who]))
        kw = {k: between(*v) if isinstance(v, tuple) else v for k, v in cond.items()}
        expr = model.P(value, **kw)
        fact = {
            "==": expr == p,
            "<=": expr <= min(1.0, p + shift),
            ">=": expr >= max(0.0, p - shift),
            "==+": expr == min(1.0, p + shift),
            "<=-": expr <= max(0.0, p - shift),
            ">=+": expr >= min(1.0, p + shift),
        }[sense]
        model.add(fact, name=f"f{i}")


def rows_of(model):
    """The model's data rows and facts: (A_eq, b_eq, A_ub, b_ub) on its cells."""
    A, b, _ = model.invariant_matrix(drop_redundant=False)
    eq = [(f.A, f.b) for f in model.facts if f.sense == "=="]
    ub = [(f.A, f.b) for f in model.facts if f.sense == "<="]
    A_eq = sp.vstack([sp.csr_array(A)] + [a for a, _ in eq], format="csr")
    b_eq = np.concatenate([b] + [v for _, v in eq])
    A_ub = sp.vstack([a for a, _ in ub], format="csr") if ub else None
    b_ub = np.concatenate([v for _, v in ub]) if ub else None
    return A_eq, b_eq, A_ub, b_ub


def lp_feasible(model) -> bool:
    A_eq, b_eq, A_ub, b_ub = rows_of(model)
    res = linprog(
        np.zeros(A_eq.shape[1]), A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, method="highs"
    )
    assert res.status in (0, 2), res.message
    return res.status == 0


def clarabel_feasible(model) -> bool:
    A_eq, b_eq, A_ub, b_ub = rows_of(model)
    x = cp.Variable(A_eq.shape[1], nonneg=True)
    cons = [A_eq @ x == b_eq] + ([A_ub @ x <= b_ub] if A_ub is not None else [])
    prob = cp.Problem(cp.Minimize(0), cons)
    prob.solve(solver="CLARABEL")
    return prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)


def check(case) -> None:
    model = model_of(case)
    add_facts(model, case)
    moved = any(sense in ("==+", "<=-", ">=+") and s > 0 for _, _, sense, s in case[3])
    if lp_feasible(model):
        event("a table exists")
        result = model.solve()  # never InfeasibleKnowledge
        assert result.certificate.primal_residual <= 1e-6
        assert (result.fact_residuals <= 1e-6).all()
        x = np.zeros(model.n_cells)  # the answer's value cells (facts hold no placement)
        x[model.structure.value_cell] = result.x
        for f in model.facts:
            r = f.A @ x - f.b
            worst = np.abs(r).max() if f.sense == "==" else max(0.0, r.max())
            assert worst <= 1e-6, (f.name, worst)
        return
    event("no table")
    assert moved, "a fact read off the true table has no table"
    assert not clarabel_feasible(model)
    with pytest.raises(InfeasibleKnowledge):
        model.solve()


REPRO_PEOPLE = {
    "p1": ("F", 20), "p3": ("M", 40), "p4": ("F", 50), "p5": ("M", 50), "p6": ("M", 20),
    "p7": ("F", 20), "p9": ("M", 40),
}  # fmt: skip
REPRO_TRUTH = {"p1": "b", "p3": "a", "p4": "b", "p5": "a", "p6": "a", "p7": "b", "p9": "a"}
REPRO = (
    REPRO_PEOPLE,
    REPRO_TRUTH,
    [
        ("bucket", ["p1", "p6", "p5", "p3", "p7", "p9"], [1, 1, 1, 2, 2, 2], False),
        ("general", ["p7", "p4", "p6", "p3", "p5"], [1, 1, 1, 2, 2], False),
        ("bucket", ["p1", "p5", "p6", "p4", "p3", "p9"], [1, 1, 1, 2, 2, 2], False),
    ],
    # P(b | M) <= 0.1 (the truth: 0) and P(a | age 50) <= 0.5 (the truth: 0.5, tight)
    [("b", {"sex": "M"}, "<=", 0.1), ("a", {"age": 50}, "<=", 0.0)],
)


def _people(spec: str) -> dict:
    """``"F20 M30"`` -> {"p0": ("F", 20), "p1": ("M", 30)}."""
    return {f"p{i}": (w[0], int(w[1:])) for i, w in enumerate(spec.split())}


def _truth(values: str) -> dict:
    return {f"p{i}": v for i, v in enumerate(values)}


#: instances a random search found, each a bug fixed with issue 21
FOUND = [
    # only table on the boundary, three bucketized releases (as the reproducer)
    (
        _people("M20 M20 M20 F20 M20"),
        _truth("abaab"),
        [
            ("bucket", ["p0", "p1", "p2", "p3", "p4"], [1, 1, 2, 1, 1], False),
            ("bucket", ["p0", "p1"], [1, 1], False),
            ("bucket", ["p1", "p3"], [1, 1], False),
        ],
        [("a", {"sex": "M"}, "<=", 0.0), ("a", {"sex": "F"}, ">=", 0.1)],
    ),
    # an inequality wrongly held active: its round's multipliers ran off to 4e6 and the
    # next round, started there, crawled (Newton gave up; Clarabel took over)
    (
        _people("F30 F20 F30 F20 F20 F20 F20 F20"),
        _truth("abaaaaaa"),
        [
            ("bucket", ["p0", "p1", "p2"], [1, 1, 1], False),
            ("bucket", ["p0", "p1"], [1, 1], False),
            ("bucket", ["p0", "p1"], [1, 1], False),
        ],
        [("a", {"age": 30}, ">=", 0.1), ("a", {"age": 20}, "<=", 0.1)],
    ),
    # an answer kept from the first pass whose rows changed in the second (a crash)
    (
        _people("F20 M20 F30 M30 M30 F20"),
        _truth("cbaaca"),
        [
            ("bucket", ["p0", "p3", "p1", "p2", "p4"], [2, 1, 2, 2, 1], False),
            ("placed", ["p1", "p2", "p0", "p3", "p4"], [1, 1, 2, 2, 2], False),
            ("bucket", ["p0", "p1"], [1, 1], False),
            ("bucket", ["p0", "p1"], [1, 1], False),
        ],
        [("c", {"sex": "M"}, "<=", 0.0)],
    ),
    # no table: presolve fixed 1.3 records in a class of 1 (InaccurateSolution before)
    (
        _people("F20 M20 F20 F20"),
        _truth("bbaa"),
        [
            ("bucket", ["p0", "p1", "p2"], [1, 1, 1], False),
            ("placed", ["p0", "p1", "p2", "p3"], [1, 1, 1, 2], False),
            ("bucket", ["p2", "p3"], [1, 1], False),
        ],
        [("b", {"sex": "F"}, "==+", 0.1)],
    ),
    # no table, Newton's Hessian singular at once: an LP says so (no conic fallback)
    (
        _people("F20 F20 F20 F20 F20 F20"),
        _truth("aaabab"),
        [
            ("bucket", ["p0", "p1", "p2", "p3"], [1, 1, 1, 1], False),
            ("placed", ["p0", "p1", "p3", "p5"], [1, 1, 1, 2], False),
        ],
        [("b", {"sex": "F"}, "==+", 0.1)],
    ),
]


@given(cases())
@example(REPRO)
@example(FOUND[0])
@example(FOUND[1])
@example(FOUND[2])
@example(FOUND[3])
@example(FOUND[4])
# 200 random instances (the issue asks at least 200) beside the six pinned above
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.filterwarnings("error:solver 'maxent'")  # no conic fallback either
def test_pooled_models_solve_or_have_no_table(case):
    check(case)


@given(instances())
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_bruteforce_instances_with_true_facts_solve(frame):
    """The instances of tests/releases/test_pooled_bruteforce.py (a bucketized and a
    generalized release of the same people), with facts read off the truth."""
    bucket, general, population = releases_of(frame)
    model = MaxEntModel([bucket, general], populations=[None, population])
    row = frame.iloc[0]
    p_sex = float((frame.loc[frame["sex"] == row["sex"], "s"] == row["s"]).mean())
    p_age = float((frame.loc[frame["age"] <= row["age"], "s"] == row["s"]).mean())
    model.add(model.P(row["s"], sex=row["sex"]) <= p_sex, name="tight")
    model.add(model.P(row["s"], age=between(None, row["age"])) >= p_age, name="tight too")
    result = model.solve()
    assert result.certificate.primal_residual <= 1e-6


def test_reproducer_matches_clarabel():
    """Issue 21's reproducer: a single table; ours equals Clarabel's to 1e-6."""
    model = model_of(REPRO)
    add_facts(model, REPRO)
    ours, ref = model.solve(), model.solve(solver="CLARABEL")
    assert ours.certificate.primal_residual <= 1e-9
    for f in ("posterior", "person_posterior"):
        a, b = getattr(ours, f)(), getattr(ref, f)()
        np.testing.assert_allclose(a.to_numpy(), b.loc[a.index, a.columns].to_numpy(), atol=1e-6)
    truth = pd.Series(REPRO_TRUTH)
    post = ours.person_posterior()
    assert all(post.loc[p, v] == pytest.approx(1.0, abs=1e-9) for p, v in truth.items())
