"""Presolve's flow rules on pooled releases (solve/flows.py): every cell they fix is fixed
in every feasible table (checked by LPs), and they find the zeros an LP finds."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paper_models import benchmark
from scipy.optimize import linprog

from maxent_privacy import Bucketized, MaxEntModel
from maxent_privacy.solve.flows import settled_flows
from maxent_privacy.solve.forced_zeros import lp_forced_zeros
from maxent_privacy.solve.presolve import FixForcedCells

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def pooled_releases(draw):
    """2 or 3 bucketized releases of overlapping people (buckets of 2 to 4)."""
    n = draw(st.integers(4, 18))
    ages = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    sa = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    people = pd.DataFrame({"pid": np.arange(n), "age": ages, "s": [f"s{v}" for v in sa]})
    n_rel = draw(st.integers(2, 3))
    out = []
    for _ in range(n_rel):
        keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        d = people[np.asarray(keep) | (people["pid"] < 2)].reset_index(drop=True)
        order = draw(st.permutations(range(len(d))))
        size = draw(st.integers(2, 4))
        bucket = np.empty(len(d), dtype=int)
        bucket[list(order)] = np.minimum(np.arange(len(d)) // size, max(0, len(d) // size - 1))
        out.append(d.assign(b=bucket))
    return out


def _model(frames):
    rels = [Bucketized(f, qi=["age"], sa="s", group="b", person="pid") for f in frames]
    return MaxEntModel(rels)


def _feasible_set(model):
    A, b, _ = model.invariant_matrix(drop_redundant=False)
    return sp.csr_array(A), np.asarray(b, dtype=float)


def _lp_range(A, b, j):
    """(min, max) of cell j over every feasible table (HiGHS)."""
    c = np.zeros(A.shape[1])
    c[j] = 1.0
    lo = linprog(c, A_eq=A, b_eq=b, bounds=(0, None), method="highs")
    hi = linprog(-c, A_eq=A, b_eq=b, bounds=(0, None), method="highs")
    assert lo.status == 0 and hi.status == 0
    return lo.fun, -hi.fun


@settings(max_examples=60, **SETTINGS)
@given(pooled_releases())
def test_pooled_presolve_fixes_only_what_every_table_fixes(frames):
    """Sound: every cell presolve fixes takes that value in every feasible table (LPs
    minimizing and maximizing it). Not complete: the flows relax the rows one release
    pair or one group at a time (see ``test_what_presolve_leaves_the_solve_proves``)."""
    model = _model(frames)
    red, _ = FixForcedCells().apply(model.compile())
    A, b = _feasible_set(model)
    for j in np.flatnonzero(~np.isnan(red.fixed)):
        lo, hi = _lp_range(A, b, j)
        assert abs(lo - red.fixed[j]) <= 1e-9 and abs(hi - red.fixed[j]) <= 1e-9


# a case no relaxation by one release pair or one group decides: the two people of class
# {0, 1} hold s0 and s1 (release 1 holds s0 once, release 2 holds s1 once, and the class
# must hold two of them), so persons 5, 6 cannot hold s0 and persons 3, 4 cannot hold s1
CROSS_VALUE = [
    pd.DataFrame({"pid": [0, 1, 5, 6], "age": [0, 0, 0, 1], "s": ["s0", "s1", "s1", "s3"]}),
    pd.DataFrame({"pid": [0, 1, 3, 4], "age": [0, 0, 0, 1], "s": ["s0", "s1", "s0", "s2"]}),
]


def test_what_presolve_leaves_the_solve_proves(monkeypatch):
    """The flows leave CROSS_VALUE's zeros; the support LP of presolve (solve/support.py)
    finds them, and without it the solve proves them (the dual certificate)."""
    from maxent_privacy.solve import support

    model = _model([f.assign(b=0) for f in CROSS_VALUE])
    A, b = _feasible_set(model)
    lp = set(lp_forced_zeros(A, b, None, None, np.arange(model.n_cells)).tolist())
    red, _ = FixForcedCells().apply(model.compile())
    assert set(np.flatnonzero(red.fixed == 0).tolist()) == lp and red.rules["support LP"] == 4
    monkeypatch.setattr(support, "LP_MAX_CELLS", 0)  # the support LP stands aside
    red, _ = FixForcedCells().apply(model.compile())
    assert len(lp) == 4 and not lp & set(np.flatnonzero(red.fixed == 0).tolist())
    result = model.solve()
    assert set(np.flatnonzero(result.x == 0).tolist()) == lp
    assert result.solver_stats["forced_zeros"]["dual certificate"] == 4


def _adult_instance(seed):
    """The benchmark's random instances (benchmarks/random_instances.py), 200 to 500
    people per release."""
    instance = benchmark("random_instances").instance

    return instance(seed, (200, 500))[0]


@pytest.mark.parametrize("seed", [100, 101, 102, 105, 107])
def test_pooled_presolve_finds_the_lp_zeros_of_adult_instances(seed):
    """Complete on these instances (as on the benchmark's seeds 1-40, where no zero is
    left for the certificate or an LP): every zero an LP finds, presolve finds."""
    model = MaxEntModel(_adult_instance(seed))
    red, _ = FixForcedCells().apply(model.compile())
    A, b = _feasible_set(model)
    lp = lp_forced_zeros(A, b, None, None, np.arange(model.n_cells))
    assert len(lp) > 50
    assert set(lp.tolist()) == set(np.flatnonzero(red.fixed == 0).tolist())


def test_flows_pin_a_person_seen_once():
    """Group 0 of release 1 holds s1 twice; its two people also in release 2 share a group
    that holds s1 once: the third person (only in release 1) has s1, and person 4 (only
    in release 2) has s2."""
    r1 = pd.DataFrame({"pid": [0, 1, 2], "age": [0, 1, 2], "s": ["s1", "s1", "s2"], "b": 0})
    r2 = pd.DataFrame({"pid": [0, 1, 4], "age": [0, 1, 2], "s": ["s1", "s2", "s2"], "b": 0})
    model = _model([r1, r2])
    red, _ = FixForcedCells().apply(model.compile())
    A, b = _feasible_set(model)
    for j in range(model.n_cells):
        lo, hi = _lp_range(A, b, j)
        if hi - lo <= 1e-9:  # every cell the LPs pin, presolve pins to the same value
            assert abs(red.fixed[j] - lo) <= 1e-9
        else:
            assert np.isnan(red.fixed[j])
    s = model.structure
    cls = s.person_class
    value = s.cells["s"].to_numpy()
    assert red.fixed[(s.cell_class == cls[2]) & (value == "s1")].tolist() == [1.0]
    assert red.fixed[(s.cell_class == cls[4]) & (value == "s2")].tolist() == [1.0]


def test_settled_flows_against_the_lp():
    """settled_flows: the flow of every settled edge is its only feasible value, and an
    edge at one of its bounds is settled when the LP finds no other value."""
    rng = np.random.default_rng(3)
    for _ in range(30):
        n = 7
        upper = np.triu(rng.random((n, n)) < 0.4, 1)
        upper[0, n - 1] = False  # no edge in both directions with the closing one
        tail, head = np.nonzero(upper)
        tail, head = np.concatenate([tail, [n - 1]]), np.concatenate([head, [0]])
        lo = np.where(rng.random(len(tail)) < 0.3, rng.integers(0, 3, len(tail)), 0)
        hi = lo + rng.integers(0, 4, len(tail))
        hi[-1] = 100
        out = settled_flows(n, tail, head, lo, hi)
        m = len(tail)
        bounds = list(zip(lo, hi, strict=True))
        N = sp.csr_array((np.r_[np.ones(m), -np.ones(m)], (np.r_[head, tail], np.r_[0:m, 0:m])))
        N = sp.csr_array(N, shape=(n, m))
        ok = linprog(np.zeros(m), A_eq=N, b_eq=np.zeros(n), bounds=bounds)
        assert (out is None) == (ok.status == 2)
        if out is None:
            continue
        f, settled = out
        assert np.abs(N @ f).max(initial=0) == 0 and (f >= lo).all() and (f <= hi).all()
        for e in range(m):
            c = np.zeros(m)
            c[e] = 1.0
            low = linprog(c, A_eq=N, b_eq=np.zeros(n), bounds=bounds).fun
            high = -linprog(-c, A_eq=N, b_eq=np.zeros(n), bounds=bounds).fun
            if settled[e]:
                assert abs(high - f[e]) <= 1e-9 and abs(low - f[e]) <= 1e-9
            elif f[e] in (lo[e], hi[e]):
                assert high - low > 1e-9


def test_fractional_totals_skip_the_flows_soundly():
    """A fact pins a cell at 0.5: the flows need integer totals and stand aside; what
    presolve fixes still holds in every table that meets the fact."""
    model = _model([f.assign(b=0) for f in CROSS_VALUE])
    model.add(model.P("s3", age=1) == 0.25, name="half")
    problem = model.compile()
    red, _ = FixForcedCells().apply(problem)
    A, b = _feasible_set(model)
    A = sp.csr_array(sp.vstack([A, problem.F_eq]))
    b = np.concatenate([b, problem.f_eq])
    assert 0.5 in red.fixed.tolist()
    for j in np.flatnonzero(~np.isnan(red.fixed)):
        lo, hi = _lp_range(A, b, j)
        assert abs(lo - red.fixed[j]) <= 1e-9 and abs(hi - red.fixed[j]) <= 1e-9
    result = model.solve()
    assert result.certificate.primal_residual <= 1e-9
    assert abs(result.fact_residuals["half"]) <= 1e-9


@pytest.mark.parametrize("seed", [101, 108, 117, 123])
def test_later_flow_calls_on_touched_components_fix_what_full_calls_fix(seed, monkeypatch):
    """PooledFlows: a call after the first builds its networks only on the components
    touched since the last call; on every call, it fixes exactly the cells (and values)
    that the full call (every free cell) fixes. Seeds 108, 117 and 123 have restricted
    calls that fix cells, 101 only a restricted confirming call."""
    from maxent_privacy.solve import presolve
    from maxent_privacy.solve.flows import PooledFlows, pooled_flow_zeros

    calls = []

    class Checked(PooledFlows):
        def __call__(self, fixed):
            full = fixed.copy()
            want = pooled_flow_zeros(self.rows, full)
            restricted = self.free_before is not None
            free = int(np.isnan(fixed).sum())
            got = super().__call__(fixed)
            assert got == want
            np.testing.assert_array_equal(fixed, full)  # NaN where both left a cell free
            calls.append((restricted, free - int(np.isnan(fixed).sum())))
            return got

    monkeypatch.setattr(presolve, "PooledFlows", Checked)
    model = MaxEntModel(_adult_instance(seed))
    FixForcedCells().apply(model.compile())
    assert calls[0][0] is False and all(r for r, _ in calls[1:]) and len(calls) >= 2
    assert calls[-1][1] == 0 and calls[0][1] > 0
    if seed != 101:
        assert any(r and k > 0 for r, k in calls)


def test_touched_components_leave_out_the_untouched():
    """PooledRows.near: a cell fixed in one bucket's component marks that component only
    (two buckets of two people, the same in both releases)."""
    from maxent_privacy.solve.flows import PooledRows

    r1 = pd.DataFrame({"pid": [0, 1, 2, 3], "age": [0, 1, 2, 3], "s": ["a", "b", "c", "d"]})
    model = _model([r1.assign(b=[0, 0, 1, 1]), r1.assign(b=[0, 0, 1, 1])])
    rows = PooledRows.of(model.structure)
    cls = model.structure.cell_class
    person = model.structure.person_class
    idx = np.arange(model.n_cells)
    assert len(idx) == 8
    touched = idx[cls == person[0]][:1]
    near = rows.near(idx, rows.rows_of(idx), touched)
    assert near.tolist() == np.isin(cls, [person[0], person[1]]).tolist()
    assert near.sum() == 4


def test_two_cells_of_a_class_on_one_row_share_their_edge():
    """Joint cells (placements rewritten) may put two cells of one class on one Relation
    row: cells 0 and 1 of class 0 are both on row 0. Every table is x = (t, 2 - t, 2 - t,
    t - 1) for t in [1, 2], so nothing is fixed; a network with two parallel edges for
    the two cells would wrongly settle them."""
    from maxent_privacy.solve.flows import PooledRows, pooled_flow_zeros

    sa = sp.csc_array(np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1.0]]))
    rows = PooledRows(
        cls=np.array([0, 0, 1, 1]),
        class_n=np.array([2.0, 1.0]),
        row_n=np.array([2.0, 1.0, 2.0, 1.0]),
        row_release=np.array([0, 0, 1, 1]),
        cells=sa,
    )
    fixed = np.full(4, np.nan)
    assert pooled_flow_zeros(rows, fixed) is False
    assert np.isnan(fixed).all()
    fixed[3] = 1.0  # t = 2: the rest follows
    assert pooled_flow_zeros(rows, fixed) is True
    assert fixed.tolist() == [2.0, 0.0, 0.0, 1.0]
