"""Property tests on random bucketized releases (hypothesis)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxent_privacy import Bucketized, MaxEntModel
from maxent_privacy.errors import InaccurateSolution

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def releases(draw, max_records=24):
    n = draw(st.integers(3, max_records))
    n_groups = draw(st.integers(1, max(1, n // 2)))
    a = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    b = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    s = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    g = draw(st.lists(st.integers(1, n_groups), min_size=n, max_size=n))
    frame = pd.DataFrame(
        {
            "age": [f"a{v}" for v in a],
            "sex": ["F" if v else "M" for v in b],
            "disease": [f"s{v}" for v in s],
            "bucket": pd.factorize(pd.Series(g))[0] + 1,
        }
    )
    return frame


def release_of(frame):
    return Bucketized(frame, qi=["age", "sex"], sa="disease", group="bucket")


@st.composite
def releases_with_true_facts(draw):
    frame = draw(releases())
    k = draw(st.integers(0, 3))
    facts = []
    for _ in range(k):
        row = frame.iloc[draw(st.integers(0, len(frame) - 1))]
        attrs = draw(st.sampled_from([("age",), ("sex",), ("age", "sex")]))
        cond = {a: row[a] for a in attrs}
        sel = np.ones(len(frame), dtype=bool)
        for a, v in cond.items():
            sel &= (frame[a] == v).to_numpy()
        s = draw(st.sampled_from(sorted(frame["disease"].unique())))
        p = float((frame.loc[sel, "disease"] == s).mean())
        kind = draw(st.sampled_from(["==", "<=", ">="]))
        facts.append((s, cond, p, kind))
    return frame, facts


def build(frame, facts):
    model = MaxEntModel(release_of(frame))
    for i, (s, cond, p, kind) in enumerate(facts):
        expr = model.P(s, **cond)
        fact = {"==": expr == p, "<=": expr <= p, ">=": expr >= p}[kind]
        model.add(fact, name=f"f{i}")
    return model


@given(releases())
@settings(max_examples=60, **SETTINGS)
def test_true_assignment_satisfies_every_invariant(frame):
    """Theorem 1 (soundness): the original data is one of the assignments."""
    model = MaxEntModel(release_of(frame))
    x = model.true_assignment(frame)
    assert x.sum() == len(frame)
    for drop in (False, True):
        A, b, _ = model.invariant_matrix(drop_redundant=drop)
        np.testing.assert_array_equal(A @ x, b)


@given(releases())
@settings(max_examples=60, **SETTINGS)
def test_invariant_rank_is_g_plus_h_minus_1(frame):
    """Theorem 3 (conciseness): per bucket g + h - 1 independent rows, all kept."""
    model = MaxEntModel(release_of(frame))
    A, _, rows = model.invariant_matrix()
    dense = A.toarray()
    for bucket, grp in frame.groupby("bucket"):
        g = len(grp[["age", "sex"]].drop_duplicates())
        h = grp["disease"].nunique()
        r = rows.index[rows["bucket"] == bucket]
        c = np.flatnonzero((model.cells["bucket"] == bucket).to_numpy())
        assert len(r) == g + h - 1
        assert np.linalg.matrix_rank(dense[np.ix_(r, c)]) == g + h - 1


# ECOS and SCS (first order) sometimes stop at reduced accuracy on these random facts
# (cvxpy: "Solution may be inaccurate"). The answer is not taken on their word: our
# certificate refuses a residual above tol (InaccurateSolution, below), and what it
# accepts is compared with Clarabel's to 1e-5; the warning says nothing more
@pytest.mark.filterwarnings("ignore:Solution may be inaccurate:UserWarning")
@given(releases_with_true_facts())
@settings(max_examples=25, **SETTINGS)
def test_solvers_and_decomposition_agree(case):
    frame, facts = case
    model = build(frame, facts)
    ref = model.solve(solver="CLARABEL")
    post = ref.posterior(by="group")
    assert ((post >= 0) & (post <= 1 + 1e-9)).all().all()
    np.testing.assert_allclose(post.sum(axis=1), 1.0, atol=1e-8)
    assert ref.certificate.primal_residual <= 1e-6
    runs = [("CLARABEL", False), ("ECOS", True), ("ECOS", False), ("SCS", True)]
    for solver, decompose in runs:
        try:
            other = model.solve(solver=solver, decompose=decompose).posterior(by="group")
        except InaccurateSolution:
            # SCS (first order) sometimes stops at a residual ~1e-6: our certificate
            # refuses the answer instead of showing it, which is the check doing its job
            assert solver == "SCS"
            continue
        np.testing.assert_allclose(
            other.to_numpy(), post.to_numpy(), atol=1e-5, err_msg=f"{solver} decompose={decompose}"
        )


@given(releases_with_true_facts())
@settings(max_examples=25, **SETTINGS)
def test_true_facts_are_feasible_and_certified(case):
    frame, facts = case
    model = build(frame, facts)
    result = model.solve()
    cert = result.certificate
    assert cert.primal_residual <= 1e-6
    # the maximum entropy is at least the entropy of the true assignment (feasible)
    x = model.true_assignment(frame)
    n = model.cells["n"].to_numpy(dtype=float)
    pos = x > 0
    h_true = -(x[pos] * np.log(x[pos] / n[pos])).sum() / len(frame)
    assert cert.entropy >= h_true - 1e-7
    if not np.isnan(cert.dual_bound):
        assert cert.dual_bound >= cert.entropy - 1e-7
    inequality = [f"f{i}" for i, (_, _, _, k) in enumerate(facts) if k != "=="]
    for name in inequality:
        assert result.duals[name] >= -1e-9 or np.isnan(result.duals[name])


TIGHT = {
    "CLARABEL": dict(tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, tol_ktratio=1e-10),
    "ECOS": dict(abstol=1e-10, reltol=1e-10, feastol=1e-10),
    "SCS": {},
}


@pytest.mark.parametrize("solver", ["CLARABEL", "ECOS", "SCS"])
def test_each_solver_on_a_linked_instance(solver, release):
    """The solvers' own answers (no polish), at tight tolerances, agree to 1e-5."""
    model = MaxEntModel(release)
    model.add(model.P("Pneumonia", gender="male", degree="high school") == 0.5)
    model.add(model.P("Flu", gender="male") >= 0.4)
    res = model.solve(solver=solver, polish=False, **TIGHT[solver])
    assert not res.components["polished"].any()
    ref = model.solve(solver="CLARABEL")
    np.testing.assert_allclose(res.posterior().to_numpy(), ref.posterior().to_numpy(), atol=1e-5)
