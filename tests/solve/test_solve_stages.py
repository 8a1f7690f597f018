"""The stages of the solve path (maxent_privacy.solve), one at a time, on small problems
whose answers are known by hand (Du et al. Figure 1) or by an LP written here."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from maxent_privacy import Bucketized, MaxEntModel, datasets
from maxent_privacy.numerics import entropy_terms
from maxent_privacy.solve import dispatch
from maxent_privacy.solve.chain import Chain
from maxent_privacy.solve.closed_form import ClosedForm
from maxent_privacy.solve.components import PartSolution, Solution, SplitComponents
from maxent_privacy.solve.dispatch import Memo, solve_parts
from maxent_privacy.solve.newton_backend import Newton
from maxent_privacy.solve.presolve import (
    FixForcedCells,
    TightRule,
    _flow_zeros,
    _rect_tight,
    _tight_rows,
    presolve_cells,
)
from maxent_privacy.solve.rank import DropImpliedRows
from maxent_privacy.solve.scaling import ScaleFactRows, row_max_abs

QI = ["gender", "degree"]


@pytest.fixture
def fig1():
    return Bucketized(datasets.du2008_figure1(), qi=QI, sa="disease", group="bucket")


def cell(model, gender, degree, bucket, disease) -> int:
    """Index of the cell of (QI value, bucket, value) in a model without persons."""
    c = model.cells
    hit = np.flatnonzero(
        (c["gender"] == gender)
        & (c["degree"] == degree)
        & (c["bucket"] == bucket)
        & (c["disease"] == disease)
    )
    assert len(hit) == 1
    return int(hit[0])


def presolved(model):
    red, _ = FixForcedCells().apply(model.compile())
    return red


def chain_of(qr=False, decompose=True):
    return Chain([FixForcedCells(), DropImpliedRows(qr=qr), ScaleFactRows(),
                  SplitComponents(decompose)])  # fmt: skip


# ------------------------------------------------------------------ presolve rules
def test_zero_rows_fix_the_women_to_breast_cancer_exactly(fig1):
    """P(Breast Cancer | male) = 0: the male BC cells are 0 (zero rule), the SA rows of
    BC in buckets 1 and 2 then have one free cell (single-cell rule): the women's."""
    m = MaxEntModel(fig1)
    m.add(m.P("Breast Cancer", gender="male") == 0)
    red = presolved(m)
    fixed = red.fixed
    assert fixed[cell(m, "female", "college", 1, "Breast Cancer")] == 1.0
    assert fixed[cell(m, "female", "junior", 2, "Breast Cancer")] == 1.0
    for s in ("Flu", "Pneumonia"):
        assert fixed[cell(m, "female", "college", 1, s)] == 0.0
    for s in ("HIV", "Pneumonia"):
        assert fixed[cell(m, "female", "junior", 2, s)] == 0.0
    male_bc = (m.cells["gender"] == "male") & (m.cells["disease"] == "Breast Cancer")
    assert (fixed[male_bc.to_numpy()] == 0.0).all()
    # nothing else: 6 + 4 cells fixed, 17 free; bucket 3 untouched
    assert np.isnan(fixed).sum() == 17 and red.n_free == 17
    assert np.isnan(fixed[(m.cells["bucket"] == 3).to_numpy()]).all()
    # the fixed values moved to the right sides: class (male, college, 1) has 2 records
    # left for Flu and Pneumonia, bucket 1's Flu row still 2 records
    assert red.r[0][m.cells.loc[cell(m, "male", "college", 1, "Flu"), "cls"]] == 2.0
    assert red.feq.tolist() == [0.0] and red.Feq.nnz == 0  # the fact is resolved


def test_single_free_cell_rule():
    E = sp.csr_array(np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 2.0]]))
    fixed = presolve_cells(E, np.array([3.0, 1.0]), sp.csr_array((0, 3)), 3)
    assert np.isnan(fixed[:2]).all() and fixed[2] == 0.5


def test_single_free_cell_on_figure1(fig1):
    """P(HIV | female, graduate) = 0.5: one cell (n(q) = 1) is exactly 0.5, and the
    rest of its class (2 cells, 0.5 record) stays free."""
    m = MaxEntModel(fig1)
    m.add(m.P("HIV", gender="female", degree="graduate") == 0.5)
    fixed = presolved(m).fixed
    j = cell(m, "female", "graduate", 3, "HIV")
    assert fixed[j] == 0.5
    assert np.isnan(np.delete(fixed, j)).all()


def test_tight_upper_bound_rule_by_itself():
    """Two classes of one record; the row 0.5 x0 + 0.5 x2 reaches its bound 0.5 + 0.5 only
    when every record sits on its top coefficient: the other cells are 0."""
    cls, class_n = np.array([0, 0, 1, 1]), np.array([1.0, 1.0])
    row = sp.csr_array(np.array([[0.5, 0.0, 0.5, 0.0]]))
    fixed = np.full(4, np.nan)
    assert _tight_rows(row, np.array([1.0]), None, None, fixed, cls, class_n)
    assert np.isnan(fixed[[0, 2]]).all() and (fixed[[1, 3]] == 0).all()
    # below the bound: nothing
    fixed = np.full(4, np.nan)
    assert not _tight_rows(row, np.array([0.9]), None, None, fixed, cls, class_n)
    assert np.isnan(fixed).all()
    # the same row as G x >= g (P(s | q) >= 1)
    fixed = np.full(4, np.nan)
    empty = sp.csr_array((0, 4))
    assert _tight_rows(empty, np.zeros(0), row, np.array([1.0]), fixed, cls, class_n)
    assert (fixed[[1, 3]] == 0).all()


@pytest.mark.parametrize("sense", ["==", ">="])
def test_tight_upper_bound_on_figure1(fig1, sense):
    """P(Pneumonia | male, high school) = 1 (or >= 1) puts both such records on
    Pneumonia, in buckets 1 and 2, and the other Pneumonia cells of those buckets at 0."""
    m = MaxEntModel(fig1)
    expr = m.P("Pneumonia", gender="male", degree="high school")
    m.add(expr == 1 if sense == "==" else expr >= 1)
    fixed = presolved(m).fixed
    for b, others in ((1, ["Breast Cancer", "Flu"]), (2, ["Breast Cancer", "HIV"])):
        assert fixed[cell(m, "male", "high school", b, "Pneumonia")] == 1.0
        for s in others:
            assert fixed[cell(m, "male", "high school", b, s)] == 0.0
    assert fixed[cell(m, "female", "college", 1, "Pneumonia")] == 0.0
    assert fixed[cell(m, "male", "college", 1, "Pneumonia")] == 0.0
    assert fixed[cell(m, "male", "college", 2, "Pneumonia")] == 0.0
    assert fixed[cell(m, "female", "junior", 2, "Pneumonia")] == 0.0
    assert np.isnan(fixed[(m.cells["bucket"] == 3).to_numpy()]).all()


def test_bucket_flow_bound_rule_by_itself(fig1):
    """P(Flu | male) = 0.5 = 3 of 6 men: at most min(3 men, 2 Flu) = 2 in bucket 1 and
    min(1, 1) = 1 in bucket 3, so both buckets reach their bound. Bucket 1: every Flu is a
    man's (the woman's Flu cell is 0); bucket 3: the man has Flu and nobody else does."""
    m = MaxEntModel(fig1)
    m.add(m.P("Flu", gender="male") == 0.5)
    p = m.compile()
    s = p.structure
    # the plain tight rule does not see it: 4 men could reach 4/6 > 0.5
    fixed = np.full(p.n_cells, np.nan)
    assert not _tight_rows(p.F_eq, p.f_eq, None, None, fixed, s.cell_class, s.class_n)
    args = (p.F_eq, p.f_eq, s.cell_sa, s.sa_n, s.sa_bucket)
    assert _rect_tight(*args, fixed, s.cell_class, s.class_n)
    want = {
        cell(m, "female", "college", 1, "Flu"),
        cell(m, "female", "college", 3, "Flu"),
        cell(m, "female", "graduate", 3, "Flu"),
        cell(m, "male", "graduate", 3, "HIV"),
        cell(m, "male", "graduate", 3, "Lung Cancer"),
    }
    assert set(np.flatnonzero(fixed == 0).tolist()) == want
    assert np.isnan(np.delete(fixed, list(want))).all()
    # a target below the bound: nothing
    fixed = np.full(p.n_cells, np.nan)
    below = (p.F_eq, p.f_eq * 0.9, s.cell_sa, s.sa_n, s.sa_bucket)
    assert not _rect_tight(*below, fixed, s.cell_class, s.class_n)
    assert np.isnan(fixed).all()
    # the whole presolve: the man of bucket 3 then has Flu, exactly
    assert presolved(m).fixed[cell(m, "male", "graduate", 3, "Flu")] == 1.0


def _transport():
    """One bucket, four classes of one record, four values of one record; allowed:
    A: {s, t}, B: {s, t}, C: anything, D: {u, v}. A and B take s and t between them, so
    C's s and t cells are 0 in every answer; no row has a single free cell or a zero
    right side, so only max-flow + strongly connected components can tell."""
    classes, values = "ABCD", "stuv"
    allowed = {"A": "st", "B": "st", "C": "stuv", "D": "uv"}
    cls = np.repeat(np.arange(4), 4)
    gs = np.tile(np.arange(4), 4)
    fixed = np.full(16, np.nan)
    for i, c in enumerate(classes):
        for k, v in enumerate(values):
            if v not in allowed[c]:
                fixed[4 * i + k] = 0.0
    return cls, gs, fixed


def _lp_zeros(A_eq, b_eq, fixed) -> set:
    """Cells whose largest value over {x >= 0, A_eq x = b_eq, fixed cells} is 0."""
    n = A_eq.shape[1]
    bounds = [(v, v) if not np.isnan(v) else (0, None) for v in fixed]
    out = set()
    for j in np.flatnonzero(np.isnan(fixed)):
        c = np.zeros(n)
        c[j] = -1.0
        res = linprog(c, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
        assert res.status == 0
        if -res.fun <= 1e-9:
            out.add(int(j))
    return out


def test_max_flow_scc_rule_matches_an_lp():
    cls, gs, fixed = _transport()
    ones = np.ones(4)
    A = sp.csr_array(
        np.vstack([(cls == c).astype(float) for c in range(4)]
                  + [(gs == s).astype(float) for s in range(4)])
    )  # fmt: skip
    b = np.ones(8)
    pre = np.flatnonzero(fixed == 0)
    zero_rows = sp.csr_array((np.ones(len(pre)), (np.zeros(len(pre), int), pre)), shape=(1, 16))
    before = presolve_cells(A, b, zero_rows, 16)  # the cheap rules find nothing new
    assert set(np.flatnonzero(before == 0).tolist()) == set(pre.tolist())
    assert np.isnan(before[np.isnan(fixed)]).all()
    # the whole presolve with the bucket rules on: max-flow finds them
    rect = (sp.csr_array((0, 16)), np.zeros(0), gs, ones, np.zeros(4, dtype=int))
    after = presolve_cells(A, b, zero_rows, 16, TightRule(cls, ones, tight_from=8), rect=rect)
    # max-flow + SCC: exactly the LP's forced zeros
    work = fixed.copy()
    assert _flow_zeros(gs, ones, work, cls, ones) is True
    new = set(np.flatnonzero((work == 0) & np.isnan(fixed)).tolist())
    assert new == {8, 9}  # C's s and t
    assert new == _lp_zeros(A, b, fixed)
    assert set(np.flatnonzero(after == 0).tolist()) == set(pre.tolist()) | new
    assert _flow_zeros(gs, ones, work, cls, ones) is False  # nothing more to find
    # fractional totals: max-flow needs integers, the rule is skipped
    assert _flow_zeros(gs, ones * 0.5, fixed.copy(), cls, ones * 0.5) is None


def test_presolve_finds_the_transportation_zeros_of_a_model():
    """The same polytope from a release and P(s | q) = 0 facts: the model's presolve
    fixes exactly the cells an LP over the whole model proves 0."""
    frame = pd.DataFrame({"q": list("ABCD"), "disease": list("stuv"), "bucket": [1, 1, 1, 1]})
    m = MaxEntModel(Bucketized(frame, qi=["q"], sa="disease", group="bucket"))
    for q, s in (("A", "u"), ("A", "v"), ("B", "u"), ("B", "v"), ("D", "s"), ("D", "t")):
        m.add(m.P(s, q=q) == 0)
    p = m.compile()
    fixed = FixForcedCells().apply(p)[0].fixed
    A = sp.vstack([a for a, _ in p.data_blocks()] + [p.F_eq], format="csr")
    b = np.concatenate([b for _, b in p.data_blocks()] + [p.f_eq])
    nothing = np.full(p.n_cells, np.nan)
    zeros = set(np.flatnonzero(fixed == 0).tolist())
    assert zeros == _lp_zeros(A, b, nothing)
    c = m.cells
    forced_c = c.index[(c["q"] == "C") & c["disease"].isin(["s", "t"])].tolist()
    assert set(forced_c) <= zeros
    assert np.isnan(fixed[c.index[(c["q"] == "C") & c["disease"].isin(["u", "v"])]]).all()


# ------------------------------------------------------------------ implied rows
def _models(fig1):
    yield MaxEntModel(fig1)
    m = MaxEntModel(fig1)
    m.add(m.P("Breast Cancer", gender="male") == 0)
    yield m
    m = MaxEntModel(fig1)
    m.person("Bob", gender="male", degree="college")  # cells in buckets 1 and 2
    yield m
    d1, d2 = datasets.wang2008_figure1()
    kw = dict(qi=["gender", "zip"], sa="disease", group="bucket", person="pseudonym")
    yield MaxEntModel([Bucketized(d1, **kw), Bucketized(d2, **kw)])


@pytest.mark.parametrize("qr", [False, True])
def test_drop_implied_rows_keeps_the_rank(fig1, qr):
    for m in _models(fig1):
        p = m.compile()
        red = presolved(m)
        out, _ = DropImpliedRows(qr=qr).apply(red)
        A = sp.vstack([a for a, _ in p.data_blocks()], format="csr")[:, red.free].toarray()
        rank_all = np.linalg.matrix_rank(A)
        D = out.D.toarray()
        assert np.linalg.matrix_rank(D) == rank_all
        if qr or not out.in_complex.any():
            assert D.shape[0] == rank_all  # no implied row left


def test_drop_implied_rows_g_plus_h_minus_1_per_bucket(fig1):
    m = MaxEntModel(fig1)
    out, inverse = DropImpliedRows(qr=False).apply(presolved(m))
    s = m.structure
    cls_bucket = pd.factorize(s.classes["bucket"])[0]
    for b in range(3):
        g = int((cls_bucket == b).sum())
        h = int((s.sa_bucket == b).sum())
        kept = int(out.keep[0][cls_bucket == b].sum() + out.keep[2][s.sa_bucket == b].sum())
        assert (g, h, kept) == (3, 3, g + h - 1)
    # invert: the kept rows' multipliers back in place, 0 for the dropped SA rows
    sol = Solution(
        x=np.zeros(0), nu_d=np.arange(1.0, out.D.shape[0] + 1), nu_eq=np.zeros(0),
        mu_in=np.zeros(0), bound=0.0, records=[], statuses=[], suspects=np.zeros(0, int),
    )  # fmt: skip
    nu_cls, nu_sh, nu_sa = DropImpliedRows().invert(sol, inverse).nu_data
    assert nu_cls.tolist() == list(range(1, 10))
    assert len(nu_sh) == 0
    assert (nu_sa[~out.keep[2]] == 0).all() and len(nu_sa) == 9
    assert nu_sa[out.keep[2]].tolist() == list(range(10, 16))


# ------------------------------------------------------------------ scaling
def test_scale_fact_rows_and_back(fig1):
    m = MaxEntModel(fig1)
    m.add(m.P("Flu", gender="male") == 0.3, name="flu")  # coefficients 1/6
    m.add(m.P("HIV") <= 0.5, name="hiv")  # 1/10
    m.add(m.P("Pneumonia", degree="college") >= 0.2, name="pn")  # -1/5 (>= as <=)
    red = presolved(m)
    out, scales = ScaleFactRows().apply(red)
    assert row_max_abs(out.Feq).tolist() == [1.0]
    np.testing.assert_allclose(row_max_abs(out.Fin), [1.0, 1.0], rtol=1e-15)
    np.testing.assert_allclose(out.eq_scale, [1 / 6], rtol=1e-15)
    np.testing.assert_allclose(out.in_scale, [1 / 10, 1 / 5], rtol=1e-15)
    np.testing.assert_allclose(out.feq, [0.3 * 6], rtol=1e-15)
    np.testing.assert_allclose(out.fin, [5.0, -1.0], rtol=1e-14)
    np.testing.assert_allclose((out.Feq * 6 - red.Feq * 36).toarray(), 0, atol=1e-14)
    # invert on a made-up answer: multipliers of the scaled rows -> of the user's rows,
    # with the same Lagrangian terms nu' F x and nu' f
    nu_s, mu_s = np.array([2.0]), np.array([3.0, 5.0])
    sol = Solution(
        x=np.zeros(red.n_free), nu_d=np.zeros(0), nu_eq=nu_s.copy(), mu_in=mu_s.copy(),
        bound=0.0, records=[], statuses=[], suspects=np.zeros(0, int),
    )  # fmt: skip
    back = ScaleFactRows().invert(sol, scales)
    np.testing.assert_allclose(back.nu_eq, [2.0 * 6], rtol=1e-15)
    np.testing.assert_allclose(back.mu_in, [30.0, 25.0], rtol=1e-15)
    np.testing.assert_allclose(back.nu_eq @ red.Feq, nu_s @ out.Feq, rtol=1e-14)
    np.testing.assert_allclose(back.mu_in @ red.Fin, mu_s @ out.Fin, rtol=1e-14)
    assert back.nu_eq @ red.feq == pytest.approx(nu_s @ out.feq, rel=1e-14)


# ------------------------------------------------------------------ components
def test_split_components_on_figure1(fig1):
    m = MaxEntModel(fig1)
    parts, _ = chain_of().apply(m.compile())
    assert parts.n_comp == 3 and parts.closed.all()
    assert sorted(parts.cells_per_component().tolist()) == [9, 9, 9]
    # P(Pneumonia | male, high school) ties buckets 1 and 2 (Section 5.5)
    m.add(m.P("Pneumonia", gender="male", degree="high school") == 0.5)
    parts, _ = chain_of().apply(m.compile())
    assert parts.n_comp == 2
    assert parts.closed.sum() == 1 and parts.has_fact.sum() == 1
    closed = parts.take(np.flatnonzero(parts.closed))
    assert set(m.cells.loc[parts.red.free[closed.cells], "bucket"]) == {3}
    big = parts.take(np.flatnonzero(~parts.closed))
    assert len(big.cells) == 18 and len(big.ek) == 1 and len(big.dk) == 10
    # decompose=False: one component, not a class x value product
    parts, _ = chain_of(decompose=False).apply(m.compile())
    assert parts.n_comp == 1 and not parts.closed.any()


def test_person_with_unknown_bucket_is_not_closed_form(fig1):
    m = MaxEntModel(fig1)
    m.person("Bob", gender="male", degree="college")
    parts, _ = chain_of().apply(m.compile())
    assert parts.n_comp == 2  # buckets 1 and 2 tied by Bob, bucket 3 alone
    assert parts.closed.sum() == 1 and not parts.has_fact.any()


def test_closed_form_is_rc_cs_over_t(fig1):
    m = MaxEntModel(fig1)
    m.add(m.P("Pneumonia", gender="male", degree="high school") == 0.5)
    parts, _ = chain_of().apply(m.compile())
    red = parts.red
    part = parts.take(np.flatnonzero(parts.closed))
    sol = ClosedForm().solve(red, part)
    cells = m.cells.iloc[red.free[part.cells]]
    counts = m.group_values.set_index(["bucket", "disease"])["n"]
    size = m.group_values.groupby("bucket")["n"].sum()
    want = [
        n * counts[(b, s)] / size[b]
        for n, b, s in zip(cells["n"], cells["bucket"], cells["disease"], strict=True)
    ]
    np.testing.assert_allclose(sol.x, want, rtol=1e-15)
    assert np.allclose(sol.x, 1 / 3)  # bucket 3: three classes of one, three values
    # the multipliers in closed form are optimal: dual bound = entropy exactly
    H = entropy_terms(sol.x, cells["n"].to_numpy(float)).sum()
    assert sol.bound == pytest.approx(H, abs=1e-13)
    assert H == pytest.approx(3 * np.log(3), rel=1e-14)


# ------------------------------------------------------------------ chain
def test_chain_applies_in_order_and_inverts_in_reverse():
    log = []

    class Stage:
        def __init__(self, name, k):
            self.name, self.k = name, k

        def apply(self, p):
            log.append(("apply", self.name))
            return p * self.k, f"inv {self.name}"

        def invert(self, s, inv):
            log.append(("invert", self.name, inv))
            return s - self.k

    chain = Chain([Stage("a", 2), Stage("b", 3), Stage("c", 5)])
    p, inverse = chain.apply(1)
    assert p == 30 and inverse == ["inv a", "inv b", "inv c"]
    # inverted c, then b, then a: ((100 - 5) - 3) - 2
    assert chain.invert(100, inverse) == 90
    assert log == [
        ("apply", "a"), ("apply", "b"), ("apply", "c"),
        ("invert", "c", "inv c"), ("invert", "b", "inv b"), ("invert", "a", "inv a"),
    ]  # fmt: skip


# ------------------------------------------------------------------ memo
def _two_newton_components(fig1):
    """Facts inside bucket 2 and inside bucket 3: two Newton components, one closed."""
    m = MaxEntModel(fig1)
    m.add(m.P(["HIV", "Pneumonia"], gender="female", degree="junior") == 0.6, name="b2")
    m.add(m.P("Lung Cancer", degree="graduate") == 0.3, name="b3")
    chain = chain_of()
    parts, inverse = chain.apply(m.compile())
    return m, chain, parts, inverse


def _same(a: Solution, b: Solution):
    for name in ("x", "nu_d", "nu_eq", "mu_in"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.bound == pytest.approx(b.bound, rel=1e-15)


def test_memo_split_retarget_round_trip(fig1, monkeypatch):
    m, chain, parts, inverse = _two_newton_components(fig1)
    assert parts.n_comp == 3 and parts.closed.sum() == 1
    backend = Newton(1e-10, 200, None, False)
    sols = solve_parts(parts, backend, Memo(), None, False)
    newton = [s for s in sols if len(s.part.comps) == 2]
    assert len(newton) == 1  # one batch with both components
    whole = newton[0]
    pieces = whole.split()
    assert [p.part.comps.tolist() for p in pieces] == [[k] for k in whole.part.comps]
    assert sum(p.bound for p in pieces) == pytest.approx(whole.bound, rel=1e-14)
    for p in pieces:
        pos = np.flatnonzero(whole.part.comp == p.part.comps[0])
        np.testing.assert_array_equal(p.x, whole.x[pos])
        assert len(p.nu_e) == 1  # each component holds its fact's row

    memo = Memo()
    memo.keep(parts.red, [whole])
    assert len(memo.store) == 2
    todo = np.flatnonzero(~parts.closed)
    found, rest = memo.lookup(parts.red, parts, todo)
    assert len(found) == 2 and len(rest) == 0
    assert {r["method"] for f in found for r in f.records} == {"kept from an earlier pass"}
    # put together, the kept pieces give the same answer as the batch
    closed = [s for s in sols if s is not whole]
    _same(parts.invert(closed + found), parts.invert(closed + [whole]))

    # a second pass with the memo never calls Newton, and ends at the same answer
    def no_newton(*args):
        raise AssertionError("Newton ran again")

    monkeypatch.setattr(dispatch, "run_job", no_newton)
    again = solve_parts(parts, backend, memo, None, False)
    first = chain.invert(sols, inverse)
    parts2, inverse2 = chain.apply(m.compile())
    second = chain.invert(again, inverse2)
    np.testing.assert_array_equal(first.x, second.x)
    np.testing.assert_allclose(first.nu_eq, second.nu_eq, rtol=1e-15)
    monkeypatch.undo()
    np.testing.assert_allclose(first.x, m.solve().x, atol=1e-12)


def test_a_joint_bound_is_not_split(fig1):
    _, _, parts, _ = _two_newton_components(fig1)
    sols = solve_parts(parts, Newton(1e-10, 200, None, False), Memo(), None, False)
    whole = next(s for s in sols if len(s.part.comps) == 2)
    joint = PartSolution(whole.part, whole.x, whole.nu_d, whole.nu_e, whole.mu_i, whole.bound)
    assert joint.split() == []
    memo = Memo()
    memo.keep(parts.red, [joint])
    assert memo.store == {}
