"""Maximum entropy relative to a prior (issue 23, item 1): ``model.solve(prior=Q)``.

The reference is an independent cvxpy model written here: the invariant matrix of the
release, the facts' rows and ``maximize -sum rel_entr(x, n * q)``.
"""

import warnings

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from paper_models import two_box_model

from maxent_privacy import Bucketized, MaxEntModel
from maxent_privacy.errors import InfeasibleKnowledge, KnowledgeError

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=15)
CLARABEL_TIGHT = dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)


@st.composite
def cases(draw):
    """A random bucketized release, up to two true linear facts and a random prior."""
    n = draw(st.integers(3, 20))
    n_groups = draw(st.integers(1, max(1, n // 2)))
    ints = lambda hi: st.lists(st.integers(0, hi), min_size=n, max_size=n)  # noqa: E731
    a, b, s, g = draw(ints(2)), draw(ints(1)), draw(ints(3)), draw(ints(n_groups - 1))
    frame = pd.DataFrame(
        {
            "age": [f"a{v}" for v in a],
            "sex": ["F" if v else "M" for v in b],
            "disease": [f"s{v}" for v in s],
            "bucket": pd.factorize(pd.Series(g))[0] + 1,
        }
    )
    facts = []
    for _ in range(draw(st.integers(0, 2))):
        row = frame.iloc[draw(st.integers(0, n - 1))]
        cond = {"sex": row["sex"]} if draw(st.booleans()) else {"age": row["age"]}
        sel = (frame[list(cond)[0]] == list(cond.values())[0]).to_numpy()
        value = draw(st.sampled_from(sorted(frame["disease"].unique())))
        p = float((frame.loc[sel, "disease"] == value).mean())
        facts.append((value, cond, p, draw(st.sampled_from(["==", "<=", ">="]))))
    seed = draw(st.integers(0, 2**31 - 1))
    return frame, facts, seed


def build(frame, facts):
    model = MaxEntModel(Bucketized(frame, qi=["age", "sex"], sa="disease", group="bucket"))
    for i, (value, cond, p, sense) in enumerate(facts):
        e = model.P(value, **cond)
        model.add({"==": e == p, "<=": e <= p, ">=": e >= p}[sense], name=f"fact{i}")
    return model


def random_prior(model, seed, zero_share=0.0):
    """A prior indexed like posterior(): random positive rows (some entries 0)."""
    rng = np.random.default_rng(seed)
    index = pd.MultiIndex.from_frame(model.classes[model.qi].drop_duplicates())
    values = sorted(model.cells[model.sa].unique())
    q = rng.uniform(0.05, 1.0, (len(index), len(values)))
    q[rng.uniform(size=q.shape) < zero_share] = 0.0
    q[q.sum(axis=1) == 0, 0] = 1.0  # (an all-0 row is refused: tested below)
    return pd.DataFrame(q, index=index, columns=values)


def reference(model, prior):
    """The I-projection by an independent cvxpy model (Clarabel, tight tolerances):
    (x, objective value, base measure)."""
    cells = model.cells
    q = prior.reindex(pd.MultiIndex.from_frame(cells[model.qi])).to_numpy()
    q = q / prior.sum(axis=1).reindex(pd.MultiIndex.from_frame(cells[model.qi])).to_numpy()[:, None]
    cols = prior.columns.get_indexer(cells[model.sa])
    base = cells["n"].to_numpy(float) * q[np.arange(len(cells)), cols]
    A, b, _ = model.invariant_matrix(drop_redundant=False)
    x = cp.Variable(model.n_cells, nonneg=True)
    cons = [A @ x == b]
    for f in model.facts:
        cons.append(f.A @ x == f.b if f.sense == "==" else f.A @ x <= f.b)
    zero = base <= 0
    if zero.any():
        cons.append(x[np.flatnonzero(zero)] == 0)
    keep = np.flatnonzero(~zero)
    objective = cp.Maximize(-cp.sum(cp.rel_entr(x[keep], base[keep])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "may be inaccurate": the tolerances are tight
        value = cp.Problem(objective, cons).solve(solver="CLARABEL", **CLARABEL_TIGHT)
    return np.asarray(x.value), value, base


def objective(x, base) -> float:
    pos = x > 0
    return float(-(x[pos] * np.log(x[pos] / base[pos])).sum())


@settings(**SETTINGS)
@given(cases())
def test_prior_equals_an_independent_cvxpy_model(case):
    frame, facts, seed = case
    model = build(frame, facts)
    prior = random_prior(model, seed)
    result = model.solve(prior=prior)
    assert result.certificate.ok
    x_ref, value, base = reference(model, prior)
    n = model.cells["n"].to_numpy(float)
    # the objectives agree to 1e-7 per record; the tables as far as an interior-point
    # reference can tell them (its error in x is about the square root of its gap)
    assert objective(result.x, base) >= value - 1e-7 * model.n_records
    assert abs(objective(result.x, base) - value) < 1e-7 * model.n_records
    assert np.max(np.abs(result.x - x_ref) / n) < 1e-4
    assert np.abs(result.posterior().sum(axis=1) - 1).max() < 1e-9
    clarabel = model.solve(prior=prior, solver="CLARABEL")
    assert np.max(np.abs(clarabel.x - result.x) / n) < 1e-5


@settings(**SETTINGS)
@given(cases())
def test_uniform_prior_is_the_maximum_entropy_answer(case):
    frame, facts, seed = case
    model = build(frame, facts)
    flat = model.solve()
    prior = random_prior(model, seed) * 0 + 1.0
    assert np.abs(model.solve(prior=prior).x - flat.x).max() < 1e-8


#: a bucket whose positive cells fall apart into blocks (its batched Newton's Hessian was
#: singular)
SPLIT_BUCKET = pd.DataFrame(
    {
        "age": ["a1", "a1", "a2", "a2", "a2", "a2", "a2", "a0", "a0", "a0"],
        "sex": list("FMFMFFFFMM"),
        "disease": ["s0", "s0", "s0", "s1", "s1", "s1", "s1", "s2", "s3", "s0"],
        "bucket": 1,
    }
)


@settings(**{**SETTINGS, "max_examples": 25})
@given(cases())
@example((SPLIT_BUCKET, [], 19347001))
def test_zero_prior_cells_hold_no_record(case):
    frame, facts, seed = case
    model = build(frame, facts)
    prior = random_prior(model, seed, zero_share=0.25)
    try:
        result = model.solve(prior=prior)
    except InfeasibleKnowledge as err:
        assert "probability 0 for the record class" in str(err) or "contradict" in str(err)
        return
    q = prior.reindex(pd.MultiIndex.from_frame(model.cells[model.qi]))
    q = q.to_numpy()[np.arange(model.n_cells), prior.columns.get_indexer(model.cells["disease"])]
    assert np.all(result.x[q == 0] == 0)
    x_ref, value, base = reference(model, prior)
    assert abs(objective(result.x, base) - value) < 1e-7 * model.n_records
    np.testing.assert_allclose(result.x, x_ref, atol=1e-4)


def test_a_prior_that_rules_out_a_forced_value_names_the_class_and_value():
    frame = pd.DataFrame(
        {
            "age": ["a0", "a1", "a2", "a2"],
            "sex": "F",
            "disease": ["flu", "flu", "hiv", "flu"],
            "bucket": [1, 1, 2, 2],
        }
    )
    model = build(frame, [])
    prior = random_prior(model, 0)
    prior.loc[("a0", "F"), "flu"] = 0.0  # bucket 1 holds only flu
    with pytest.raises(InfeasibleKnowledge, match=r"disease = 'flu' probability 0.*'a0'"):
        model.solve(prior=prior)


def test_the_prior_moves_the_answer_towards_it():
    frame = pd.DataFrame(
        {
            "age": ["a0", "a1", "a0", "a1"],
            "sex": "F",
            "disease": ["flu", "hiv", "hiv", "flu"],
            "bucket": [1, 1, 2, 2],
        }
    )
    model = build(frame, [])
    prior = pd.DataFrame(
        [[0.9, 0.1], [0.1, 0.9]],
        index=pd.MultiIndex.from_tuples([("a0", "F"), ("a1", "F")], names=["age", "sex"]),
        columns=["flu", "hiv"],
    )
    post = model.solve(prior=prior).posterior()
    # each bucket holds one flu and one hiv: the projection is the 2x2 scaling of the prior
    assert post.loc[("a0", "F"), "flu"] == pytest.approx(0.9, abs=1e-9)
    assert post.loc[("a1", "F"), "hiv"] == pytest.approx(0.9, abs=1e-9)
    assert model.solve().posterior().loc[("a0", "F"), "flu"] == pytest.approx(0.5)


def test_a_callable_prior_gets_the_classes_qi_frame():
    frame = pd.DataFrame(
        {
            "age": ["a0", "a1", "a0", "a1"],
            "sex": "F",
            "disease": ["flu", "hiv", "hiv", "flu"],
            "bucket": [1, 1, 2, 2],
        }
    )
    model = build(frame, [])
    seen = []

    def prior(qi):
        seen.append(list(qi.columns))
        flu = np.where(qi["age"] == "a0", 0.9, 0.1)
        return pd.DataFrame({"flu": flu, "hiv": 1 - flu})

    post = model.solve(prior=prior).posterior()
    assert seen == [["age", "sex"]]
    assert post.loc[("a0", "F"), "flu"] == pytest.approx(0.9, abs=1e-9)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda q: q.drop(index=q.index[0]), r"no row for the QI value \('a0', 'F'\)"),
        (lambda q: q.drop(columns="hiv"), r"no column for the sensitive value 'hiv'"),
        (lambda q: q.assign(flu=-0.5), r"entry -0.5 for value 'flu' is not a probability"),
        (lambda q: q.assign(flu=np.nan), r"entry nan for value 'flu'"),
        (lambda q: q * 0, r"the row of the QI value \('a0', 'F'\) is all 0"),
        (lambda q: q.reset_index(drop=True), r"index names \[None\] are not the quasi"),
        (lambda q: "uniform", r"prior must be a DataFrame indexed like posterior"),
        (lambda q: lambda qi: [0.5, 0.5], r"must return a DataFrame"),
    ],
)
def test_bad_priors_are_refused_with_the_reason(change, message):
    frame = pd.DataFrame(
        {"age": ["a0", "a1"], "sex": "F", "disease": ["flu", "hiv"], "bucket": [1, 1]}
    )
    model = build(frame, [])
    prior = random_prior(model, 0)
    with pytest.raises(KnowledgeError, match=message):
        model.solve(prior=change(prior))


def test_generalized_release_with_population_both_solvers_agree():
    model = two_box_model()
    prior = random_prior(model, 3)
    a = model.solve(prior=prior, solver="maxent")
    b = model.solve(prior=prior, solver="CLARABEL", **CLARABEL_TIGHT)
    assert a.certificate.ok and b.certificate.ok
    assert np.abs(a.x - b.x).max() < 1e-5
    assert a.certificate.entropy == pytest.approx(b.certificate.entropy, abs=1e-9)
    assert np.abs(model.solve(prior=prior * 0 + 1).x - model.solve().x).max() < 1e-7


def test_alternate_scaling_for_large_buckets_gives_the_newton_answer(monkeypatch):
    """Buckets past NEWTON_MAX_DIM classes + values are scaled alternately (Sinkhorn)."""
    import maxent_privacy.solve.matrix_scaling as cf

    frame = pd.DataFrame(
        {
            "age": [f"a{i % 4}" for i in range(12)],
            "sex": "F",
            "disease": [f"s{i % 3}" for i in range(12)],
            "bucket": [1] * 6 + [2] * 6,
        }
    )
    model = build(frame, [])
    prior = random_prior(model, 7)
    newton = model.solve(prior=prior)
    monkeypatch.setattr(cf, "NEWTON_MAX_DIM", 0)
    alternate = model.solve(prior=prior)
    assert alternate.components["method"].str.contains("matrix scaling").any()
    assert alternate.certificate.ok
    assert np.abs(alternate.x - newton.x).max() < 1e-9
