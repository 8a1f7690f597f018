"""Du, Teng and Zhu (SIGMOD 2008), Figure 1: the paper's worked examples, exactly."""

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import MaxEntModel


def closed_form(frame):
    """Eq. (9): P(S | Q, b) = (# of S in bucket b) / N_b, for every Q in bucket b."""
    rows = {}
    for b, g in frame.groupby("bucket"):
        share = g["disease"].value_counts() / len(g)
        for key in g[["gender", "degree"]].drop_duplicates().itertuples(index=False):
            rows[(*key, b)] = share
    out = pd.DataFrame(rows).T.fillna(0.0)
    out.index.names = ["gender", "degree", "bucket"]
    return out.sort_index()


def test_no_knowledge_is_eq9_in_every_bucket(model, figure1):
    expected = closed_form(figure1)
    for decompose in (True, False):
        post = model.solve(decompose=decompose).posterior(by="group")
        got = post.reindex(index=expected.index, columns=expected.columns)
        np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), atol=1e-7)
    result = model.solve()
    assert result.solver_stats["closed_form"] == 3
    assert result.solver_stats["solved"] == 0
    # the closed form carries a certificate too: primal = dual bound
    assert abs(result.certificate.gap) < 1e-12


def test_no_knowledge_posterior_by_qi(model):
    post = model.solve().posterior()
    # q1 = (male, college): 2 records in bucket 1, 1 in bucket 2 (Section 3.1 formula)
    b1 = {"Breast Cancer": 1 / 4, "Flu": 2 / 4, "Pneumonia": 1 / 4}
    b2 = {"Breast Cancer": 1 / 3, "HIV": 1 / 3, "Pneumonia": 1 / 3}
    for s in post.columns:
        want = (2 * b1.get(s, 0) + b2.get(s, 0)) / 3
        assert post.loc[("male", "college"), s] == pytest.approx(want, abs=1e-12)
    np.testing.assert_allclose(post.sum(axis=1), 1.0, atol=1e-12)
    assert list(post.index.names) == ["gender", "degree"]


def test_breast_cancer_male_zero_gives_certainty(model):
    model.add(model.P("Breast Cancer", gender="male") == 0)
    result = model.solve()
    post = result.posterior(by="group")
    # Section 1: both females of buckets 1 and 2 have Breast Cancer
    assert post.loc[("female", "college", 1), "Breast Cancer"] == 1.0
    assert post.loc[("female", "junior", 2), "Breast Cancer"] == 1.0
    males = post.xs("male", level="gender")
    assert (males["Breast Cancer"] == 0).all()
    # the rest of bucket 1 spreads uniformly over {Flu, Flu, Pneumonia}
    assert post.loc[("male", "college", 1), "Flu"] == pytest.approx(2 / 3, abs=1e-9)
    assert post.loc[("male", "high school", 2), "HIV"] == pytest.approx(1 / 2, abs=1e-9)
    assert result.certificate.primal_residual <= 1e-9
    for solver in ("ECOS", "SCS"):
        other = model.solve(solver=solver, decompose=False).posterior(by="group")
        np.testing.assert_allclose(other.to_numpy(), post.to_numpy(), atol=1e-6)


def test_same_answer_without_presolve(model):
    model.add(model.P("Breast Cancer", gender="male") == 0)
    exact = model.solve().posterior(by="group")
    rough = model.solve(presolve=False, decompose=False).posterior(by="group")
    np.testing.assert_allclose(rough.to_numpy(), exact.to_numpy(), atol=1e-5)


def test_section_4_1_constraint(model):
    """P(Flu | male) = 0.3 -> sum of P(q, Flu, b) over male cells = 0.3 * 6/10 = 0.18."""
    form = model.terms(model.P("Flu", gender="male") == 0.3)
    assert form.attrs["sense"] == "=="
    assert form.attrs["rhs"] == pytest.approx(0.18, abs=1e-15)
    assert (form["coefficient"] == 1.0).all()
    got = set(map(tuple, form[["gender", "degree", "bucket", "disease"]].to_numpy()))
    # the paper also writes P({male, college}, Flu, 3), a Zero-invariant: bucket 3 holds
    # no (male, college) record, so that term is not a variable
    assert got == {
        ("male", "college", 1, "Flu"),
        ("male", "high school", 1, "Flu"),
        ("male", "graduate", 3, "Flu"),
    }


def test_section_5_5_example_links_buckets(model):
    """P(s3 | q3) = 0.5 ties buckets 1 and 2 (q3 = male, high school; s3 = Pneumonia)."""
    expr = model.P("Pneumonia", gender="male", degree="high school")
    form = model.terms(expr == 0.5)
    assert sorted(form["bucket"]) == [1, 2]
    assert form.attrs["rhs"] == pytest.approx(0.1)
    model.add(expr == 0.5)
    result = model.solve()
    assert result.solver_stats["closed_form"] == 1  # bucket 3 is irrelevant
    assert result.posterior().loc[("male", "high school"), "Pneumonia"] == pytest.approx(
        0.5, abs=1e-7
    )


def test_invariant_rank_theorem_3(model, release):
    A, b, rows = model.invariant_matrix(drop_redundant=False)
    A2, b2, rows2 = model.invariant_matrix()
    dense = A.toarray()
    for bucket, g in release.frame.groupby("bucket"):
        n_q = g[["gender", "degree"]].drop_duplicates().shape[0]
        n_s = g["disease"].nunique()
        cols = np.flatnonzero((model.cells["bucket"] == bucket).to_numpy())
        r_full = rows.index[rows["bucket"] == bucket]
        r_kept = rows2.index[rows2["bucket"] == bucket]
        assert len(r_full) == n_q + n_s
        assert np.linalg.matrix_rank(dense[np.ix_(r_full, cols)]) == n_q + n_s - 1
        assert len(r_kept) == n_q + n_s - 1
        kept = A2.toarray()[np.ix_(r_kept, cols)]
        assert np.linalg.matrix_rank(kept) == n_q + n_s - 1


def test_true_assignment_satisfies_invariants(model, figure1):
    x = model.true_assignment(figure1)
    A, b, _ = model.invariant_matrix(drop_redundant=False)
    np.testing.assert_array_equal(A @ x, b)


def test_dual_is_derivative_of_max_entropy(release):
    def solve(p):
        m = MaxEntModel(release)
        m.add(m.P("Flu", gender="male") == p, name="flu")
        return m.solve()

    d = 1e-4
    res = solve(0.3)
    fd = (solve(0.3 + d).entropy - solve(0.3 - d).entropy) / (2 * d)
    assert res.duals["flu"] == pytest.approx(fd, rel=1e-3)
    assert res.duals["flu"] > 0  # 0.3 is below the no-knowledge value (0.333)


def test_inequality_duals_sign_and_slackness(release):
    m = MaxEntModel(release)
    m.add(m.P("Flu", gender="male") <= 0.9, name="slack")
    m.add(m.P("Flu", gender="male") >= 0.4, name="tight")
    res = m.solve()
    assert res.duals["slack"] == pytest.approx(0.0, abs=1e-7)
    assert res.duals["tight"] > 1e-3
    # relaxing the lower bound from 0.4 raises the entropy at that rate (= -dH/dp)
    d = 1e-4
    m2 = MaxEntModel(release)
    m2.add(m2.P("Flu", gender="male") >= 0.4 - d)
    m3 = MaxEntModel(release)
    m3.add(m3.P("Flu", gender="male") >= 0.4 + d)
    fd = (m2.solve().entropy - m3.solve().entropy) / (2 * d)
    assert res.duals["tight"] == pytest.approx(fd, rel=1e-3)
    assert res.posterior().loc[("male", "college"), "Flu"] >= 0


def test_dual_bound_and_gap(release):
    m = MaxEntModel(release)
    m.add(m.P("Flu", gender="male") == 0.3)
    m.add(m.P(["HIV", "Lung Cancer"], gender="female") <= 0.3)
    cert = m.solve().certificate
    assert cert.dual_bound >= cert.entropy - 1e-9
    assert abs(cert.gap) < 1e-7


def test_summary_and_repr(model):
    model.add(model.P("Flu", gender="male") == 0.3)
    result = model.solve()
    text = result.summary()
    assert "P(Flu | gender=male) == 0.3" in text
    assert "certificate" in text
    assert "<table>" in result._repr_html_()
    assert result.status == "optimal"
    assert result.solver_stats["solver"] == "MAXENT"  # linear facts: our own solver
