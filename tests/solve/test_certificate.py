"""The certificate (maxent_privacy.solve.certificate) and the duals named by the row map."""

from dataclasses import asdict

import cvxpy as cp
import numpy as np
import pytest
from scipy.stats import entropy as shannon

from maxent_privacy import Bucketized, InaccurateSolution, MaxEntModel, datasets
from maxent_privacy.numerics import entropy_terms
from maxent_privacy.solve import dispatch
from maxent_privacy.solve.certificate import certify, dual_bound
from maxent_privacy.solve.closed_form import ClosedForm
from maxent_privacy.solve.components import Solution
from maxent_privacy.solve.problem import RowMap

QI = ["gender", "degree"]


@pytest.fixture
def frame():
    return datasets.du2008_figure1()


@pytest.fixture
def fig1(frame):
    return Bucketized(frame, qi=QI, sa="disease", group="bucket")


def cell(model, gender, degree, bucket, disease) -> int:
    c = model.cells
    hit = (
        (c["gender"] == gender)
        & (c["degree"] == degree)
        & (c["bucket"] == bucket)
        & (c["disease"] == disease)
    )
    return int(np.flatnonzero(hit)[0])


def closed_form_entropy(frame) -> float:
    """H(S | Q, B) of Eq. (9): each bucket's value distribution, weighted by its size."""
    total = 0.0
    for _, g in frame.groupby("bucket"):
        total += len(g) * shannon(g["disease"].value_counts().to_numpy())
    return total / len(frame)


def solution_of(x, bound) -> Solution:
    return Solution(
        x=x, nu_d=np.zeros(0), nu_eq=np.zeros(0), mu_in=np.zeros(0), bound=bound,
        records=[], statuses=[], suspects=np.zeros(0, dtype=int),
    )  # fmt: skip


# ------------------------------------------------------------------ Figure 1
def test_certificate_of_figure1_is_the_closed_form(fig1, frame):
    result = MaxEntModel(fig1).solve()
    cert = result.certificate
    want = closed_form_entropy(frame)  # (4 H(1/4, 1/2, 1/4) + 6 log 3) / 10
    assert want == pytest.approx((4 * 1.5 * np.log(2) + 6 * np.log(3)) / 10, rel=1e-15)
    assert cert.entropy == pytest.approx(want, rel=1e-14)
    assert cert.dual_bound >= cert.entropy - 1e-14
    assert cert.gap == pytest.approx(0.0, abs=1e-14)
    assert cert.n_records == 10 and cert.tolerance == 1e-6
    assert cert.data_residual <= 1e-15 and cert.knowledge_residual == 0.0
    assert cert.ok and result.entropy == pytest.approx(want, rel=1e-14)


@pytest.mark.parametrize("solver", ["maxent", "CLARABEL"])
def test_certificate_with_facts(fig1, solver):
    m = MaxEntModel(fig1)
    m.add(m.P("Flu", gender="male") == 0.3, name="flu")
    m.add(m.P("HIV", gender="female") <= 0.2, name="hiv")
    result = m.solve(solver=solver)
    cert = result.certificate
    # the entropy is the answer's own, recomputed here
    H = entropy_terms(result.x, m.cells["n"].to_numpy(float)).sum() / 10
    assert cert.entropy == pytest.approx(H, rel=1e-14)
    assert cert.entropy < closed_form_entropy(datasets.du2008_figure1())
    assert cert.dual_bound >= cert.entropy - 1e-12
    assert abs(cert.gap) <= 1e-9
    assert set(result.fact_residuals.index) == {"flu", "hiv"}
    assert result.fact_residuals.max() <= 1e-9


def test_dual_bound_is_an_upper_bound_everywhere():
    """Weak duality: any multipliers (mu >= 0) bound max H(x) s.t. x1 + x2 = 1, x1 <= 0.2
    from above; the optimum (0.2, 0.8) is reached at the optimal multipliers."""
    import scipy.sparse as sp

    A, b = sp.csr_array(np.ones((1, 2))), np.array([1.0])
    G, h = sp.csr_array(np.array([[1.0, 0.0]])), np.array([0.2])
    n = np.ones(2)
    best = float(entropy_terms(np.array([0.2, 0.8]), n).sum())
    rng = np.random.default_rng(0)
    for _ in range(200):
        nu, mu = rng.normal(size=1) * 3, np.abs(rng.normal(size=1)) * 3
        assert dual_bound(A, b, nu, G, h, mu, n) >= best - 1e-12
    # optimal: x_j = exp(-1 - nu - G'mu): 0.8 = exp(-1 - nu), 0.2 = 0.8 exp(-mu)
    nu = np.array([-1 - np.log(0.8)])
    mu = np.array([np.log(4.0)])
    assert dual_bound(A, b, nu, G, h, mu, n) == pytest.approx(best, rel=1e-14)
    # negative mu is clipped to 0 (the bound of the problem without the inequality)
    assert dual_bound(A, b, nu, G, h, -mu, n) == dual_bound(A, b, nu, None, None, None, n)


# ------------------------------------------------------------------ residuals
@pytest.fixture
def solved(fig1):
    m = MaxEntModel(fig1)
    m.add(m.P("Flu", gender="male") == 0.3, name="flu")
    result = m.solve()
    return m, m.compile(), result


def _certify(problem, x, result, tol=1e-6):
    sol = solution_of(x, result.certificate.dual_bound * problem.n_records)
    return certify(problem, sol, np.arange(problem.n_cells), tol, "TEST")


def test_certify_reproduces_the_result(solved):
    m, p, result = solved
    cert, fact_res, violations = _certify(p, result.x.copy(), result)
    # the same numbers, up to the order of summation (the free cells' bound and the
    # fixed cells' entropy are added up apart in the solve)
    assert asdict(cert) == pytest.approx(asdict(result.certificate), rel=1e-12, abs=1e-15)
    assert fact_res == result.fact_residuals.to_dict()
    assert violations == {}


def test_data_residual_of_a_perturbed_answer(solved):
    m, p, result = solved
    x = result.x.copy()
    j = cell(m, "male", "graduate", 3, "HIV")
    x[j] += 1e-3  # breaks its class row and its SA row by 1e-3 record
    with pytest.raises(InaccurateSolution, match=r"TEST answer fails our check: residual 1\.0e-03"):
        _certify(p, x, result)
    x = result.x.copy()
    x[j] += 1e-8  # below the tolerance: accepted, and reported
    cert, _, _ = _certify(p, x, result)
    assert cert.data_residual == pytest.approx(1e-8, rel=1e-6)
    assert cert.ok and cert.knowledge_residual == result.certificate.knowledge_residual
    with pytest.raises(InaccurateSolution):
        _certify(p, x, result, tol=1e-9)


def test_knowledge_residual_of_a_perturbed_answer(solved):
    """A swap inside bucket 1 keeps every data row and moves d records of Flu from the
    woman to the men: P(Flu | male) is off by d / 6."""
    m, p, result = solved
    swap = {
        cell(m, "male", "college", 1, "Flu"): +1,
        cell(m, "male", "college", 1, "Breast Cancer"): -1,
        cell(m, "female", "college", 1, "Flu"): -1,
        cell(m, "female", "college", 1, "Breast Cancer"): +1,
    }
    for d, raises in ((6e-4, True), (6e-8, False)):
        x = result.x.copy()
        for j, sign in swap.items():
            x[j] += sign * d
        if raises:
            with pytest.raises(InaccurateSolution, match=r"knowledge 1\.0e-04"):
                _certify(p, x, result)
        else:
            cert, fact_res, _ = _certify(p, x, result)
            assert cert.data_residual == result.certificate.data_residual
            assert fact_res["flu"] == pytest.approx(d / 6, abs=1e-11)
            assert cert.knowledge_residual == fact_res["flu"]


def test_a_backend_answer_off_by_more_than_tol_is_refused(fig1, monkeypatch):
    class Off(ClosedForm):
        def solve(self, red, part):
            sol = super().solve(red, part)
            sol.x = sol.x + 1e-3
            return sol

    monkeypatch.setattr(dispatch, "ClosedForm", Off)
    with pytest.raises(InaccurateSolution, match="MAXENT answer fails our check"):
        MaxEntModel(fig1).solve()
    assert MaxEntModel(fig1).solve(tol=1e-2).certificate.data_residual == pytest.approx(3e-3)


def test_negative_cells_count_as_violations(fig1):
    m = MaxEntModel(fig1)
    result = m.solve()
    x = result.x.copy()  # bucket 3: every cell 1/3
    for j, sign in (
        (cell(m, "female", "college", 3, "Flu"), +1),
        (cell(m, "female", "college", 3, "HIV"), -1),
        (cell(m, "female", "graduate", 3, "Flu"), -1),
        (cell(m, "female", "graduate", 3, "HIV"), +1),
    ):
        x[j] += sign * 0.5  # every data row still holds; two cells are -1/6
    assert x.min() == pytest.approx(-1 / 6)
    with pytest.raises(InaccurateSolution):
        _certify(m.compile(), x, result)


# ------------------------------------------------------------------ duals by name
def test_row_map_names_scalar_vector_and_convex_facts(fig1):
    m = MaxEntModel(fig1)
    eq2 = cp.hstack([m.P("Flu", gender="male"), m.P("Breast Cancer", degree="college")])
    le2 = cp.hstack([m.P("Flu", gender="male"), m.P("HIV", gender="female")])
    m.add(eq2 == np.array([0.3, 0.25]), name="v")
    m.add(le2 <= np.array([0.9, 0.2]), name="u")
    m.add(m.P("Lung Cancer", gender="female") <= 0.5, name="s")
    m.add(cp.hstack([m.P("HIV", gender="male")]) == np.array([0.2]), name="w")  # shape (1,)
    m.add(cp.square(m.P("HIV", gender="male")) <= 0.25, name="sq")
    rows = RowMap.of(m.facts)
    assert rows.names == ("v", "u", "s", "w", "sq")
    assert rows.start.tolist() == [0, 0, 2, 2, -1] and rows.size.tolist() == [2, 2, 1, 1, 1]
    assert rows.facts_of("==", [0, 1, 2]) == ["v", "v", "w"]
    assert rows.facts_of("<=", [2, 0]) == ["s", "u"]
    duals = rows.duals(np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0]), 10)
    assert duals.index.tolist() == ["v[0]", "v[1]", "u[0]", "u[1]", "s", "w[0]", "sq"]
    assert duals.index.name == "fact" and duals.name == "dual"
    np.testing.assert_allclose(duals.to_numpy()[:-1], [0.1, 0.2, 0.4, 0.5, 0.6, 0.3])
    assert np.isnan(duals["sq"])


def test_vector_fact_duals_equal_their_scalar_rows(fig1):
    """A vector fact's duals ``name[i]`` are those of its rows added one by one; the
    slack row of a vector inequality has dual 0, the active one > 0."""
    m = MaxEntModel(fig1)
    eq2 = cp.hstack([m.P("Flu", gender="male"), m.P("Breast Cancer", degree="college")])
    le2 = cp.hstack([m.P("Flu", gender="male"), m.P("HIV", gender="female")])
    m.add(eq2 == np.array([0.3, 0.25]), name="v")
    m.add(le2 <= np.array([0.9, 0.2]), name="u")
    vec = m.solve()
    s = MaxEntModel(fig1)
    s.add(s.P("Flu", gender="male") == 0.3, name="a")
    s.add(s.P("Breast Cancer", degree="college") == 0.25, name="b")
    s.add(s.P("Flu", gender="male") <= 0.9, name="c")
    s.add(s.P("HIV", gender="female") <= 0.2, name="d")
    one = s.solve()
    pairs = {"v[0]": "a", "v[1]": "b", "u[0]": "c", "u[1]": "d"}
    for v, name in pairs.items():
        assert vec.duals[v] == pytest.approx(one.duals[name], abs=1e-9)
    assert vec.duals["u[0]"] == 0.0 and vec.duals["u[1]"] > 0.1
    assert set(vec.fact_residuals.index) == {"v", "u"}
    np.testing.assert_allclose(vec.x, one.x, atol=1e-10)


@pytest.mark.parametrize("solver", ["maxent", "CLARABEL"])
def test_dual_of_a_fact_presolve_resolved_is_nan(fig1, solver):
    """P(BC | male) = 0 is resolved by presolve (its derivative is infinite): NaN; the
    other fact's dual is a number, the same with every solver."""
    m = MaxEntModel(fig1)
    m.add(m.P("Breast Cancer", gender="male") == 0, name="zero")
    m.add(m.P("Flu", gender="male") == 0.4, name="flu")
    duals = m.solve(solver=solver).duals
    assert duals.index.tolist() == ["zero", "flu"]
    assert np.isnan(duals["zero"])
    assert duals["flu"] == pytest.approx(-0.2651, abs=1e-4)
    assert duals["flu"] == pytest.approx(ecos_flu_dual(fig1), abs=1e-7)


def ecos_flu_dual(release):
    m = MaxEntModel(release)
    m.add(m.P("Breast Cancer", gender="male") == 0, name="zero")
    m.add(m.P("Flu", gender="male") == 0.4, name="flu")
    return m.solve(solver="ECOS").duals["flu"]


@pytest.mark.parametrize("solver", ["maxent", "CLARABEL"])
def test_upper_bound_dual_is_positive_when_active_and_zero_when_slack(fig1, solver):
    """P(HIV | female) is 1/4 without knowledge: <= 0.2 is active, its dual is dH*/dp
    (> 0: relaxing it raises the entropy); <= 0.3 is slack, its dual 0."""

    def solve(p, slack=0.3):
        m = MaxEntModel(fig1)
        m.add(m.P("HIV", gender="female") <= p, name="active")
        m.add(m.P("Flu", gender="male") <= slack, name="slack")  # 1/3 without it
        m.add(m.P("Pneumonia", gender="male") <= 0.9, name="loose")
        return m.solve(solver=solver)

    res = solve(0.2, slack=0.45)
    assert res.duals["active"] > 1e-3
    assert res.duals["slack"] == pytest.approx(0.0, abs=1e-8)
    assert res.duals["loose"] == pytest.approx(0.0, abs=1e-8)
    assert (res.duals >= -1e-9).all()
    d = 1e-4
    fd = (solve(0.2 + d, 0.45).entropy - solve(0.2 - d, 0.45).entropy) / (2 * d)
    assert res.duals["active"] == pytest.approx(fd, rel=1e-3)
    # the same fact once slack
    slack = solve(0.3, slack=0.45)
    assert slack.duals["active"] == pytest.approx(0.0, abs=1e-8)
    assert slack.entropy == pytest.approx(MaxEntModel(fig1).solve().entropy, abs=1e-8)
    # complementary slackness on every fact: dual * (room left) = 0
    for r in (res, slack, solve(0.2, slack=0.25)):
        m = r.model
        for f in m.facts:
            room = float((f.b - f.A @ r.x)[0])
            assert room >= -1e-9
            assert r.duals[f.name] * room == pytest.approx(0.0, abs=1e-9)
