"""r-robustness under QI-based priors (Wong et al., ICDM 2010): possible worlds, the Delta
bound, the anonymizer and the comparison with the maximum-entropy model."""

from __future__ import annotations

import doctest
import itertools
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import maxent_privacy.adversaries.prior as prior_module
import maxent_privacy.adversaries.worlds as worlds
import maxent_privacy.anonymize.robust as robust_module
import maxent_privacy.robustness as robustness
from maxent_privacy import (
    Bucketized,
    InfeasibleKnowledge,
    KnowledgeError,
    MaxEntModel,
    ReleaseError,
)
from maxent_privacy.anonymize import anatomize, robust_anonymize
from maxent_privacy.datasets import ADULT_QI, ADULT_SA, du2008_adult
from maxent_privacy.robustness import (
    Prior,
    compare_posteriors,
    delta_ceil,
    delta_max,
    delta_report,
    exact_posterior,
    permanent,
    query_error,
    robustness_table,
    satisfies_delta_bound,
    wong2010_example,
)

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
F = Fraction


def brute_force(weights: list[dict], values: list) -> dict:
    """p(t_i : x) by enumerating the N!/prod(f!) possible worlds (Eq. 1-3), exactly."""
    total, hits = F(0), {}
    for world in set(itertools.permutations(values)):
        p = F(1)
        for i, x in enumerate(world):
            p *= weights[i][x]
        total += p
        for i, x in enumerate(world):
            hits[(i, x)] = hits.get((i, x), F(0)) + p
    if total == 0:
        return {}, total
    return {k: v / total for k, v in hits.items()}, total


def whole(table: pd.DataFrame, sa: str = "disease") -> Prior:
    """A prior from rows that list the group's values only: the rest of each row's mass
    goes to a column 'rest' (``other``), as a prior's rows are whole distributions. Values
    with a column of their own never read it, so the posteriors are those of the rows."""
    rest = [max(1 - sum(row), 0) for row in table.itertuples(index=False)]
    return Prior(table.assign(rest=rest), sa, other="rest")


def one_signature_each(rows: list[list], values: list, sa: str = "disease"):
    """A group whose tuple i has its own signature s<i> with prior row ``rows[i]``."""
    n = len(rows)
    columns = sorted(set(values), key=str) if values else []
    table = pd.DataFrame(
        {x: [rows[i][j] for i in range(n)] for j, x in enumerate(columns)},
        index=pd.Index([f"s{i}" for i in range(n)], name="sig"),
    )
    group = pd.DataFrame({"sig": [f"s{i}" for i in range(n)], sa: values})
    return group, whole(table, sa)


def test_module_docstring_examples_run():
    failures, tried = doctest.testmod(robustness, optionflags=doctest.ELLIPSIS)
    assert tried > 20 and failures == 0
    # the examples of the parts split off the module (the prior, possible worlds, anonymizer)
    total = tried
    for module in (prior_module, worlds, robust_module):
        failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert tried > 0 and failures == 0, module.__name__
        total += tried
    assert total > 58  # the old module's 58 examples, and the new modules' own


# -- Table V, Examples 1 and 2, Definition 7 ----------------------------------------------

TABLE_V = [
    (3, 2, 0.1, 0.0474),
    (3, 2, 0.3, 0.1235),
    (3, 2, 0.5, 0.1667),
    (3, 2, 0.9, 0.0818),
    (4, 2, 0.3, 0.1750),
    (6, 2, 0.3, 0.2211),
    (6, 3, 0.3, 0.1537),
    (6, 4, 0.3, 0.0955),
]


@pytest.mark.parametrize("N, r, f_max, expected", TABLE_V)
def test_table_v_reproduced_to_four_decimals(N, r, f_max, expected):
    assert round(delta_ceil(N, r, f_max), 4) == expected


def test_delta_ceil_special_cases():
    assert delta_ceil(3, 3, 0.4) == 0  # N = r: the priors must be equal
    assert delta_ceil(5, 2, 0.0) == 0 and delta_ceil(5, 2, 1.0) == 0
    exact = delta_ceil(3, F(2), F(1, 10))
    assert exact == F(9, 190) and isinstance(exact, Fraction)  # Example 2: 0.0474
    assert delta_ceil(10**9, 2, 0.3) == pytest.approx(0.3, rel=1e-6)  # N -> oo: f_max


def test_example_1_alan_breach():
    frame, prior = wong2010_example()
    l1 = frame[frame["GID"] == "L1"].set_index("Name")
    post = exact_posterior(l1, prior, fractions=True)
    # worlds: Alan LC & Betty Hyp = 0.1 * 0.997; Alan Hyp & Betty LC = 0.9 * 0.003
    assert post.loc["Alan", "Lung Cancer"] == F(997, 1024)  # 0.97363...
    assert post.loc["Betty", "Lung Cancer"] == F(27, 1024)
    assert float(post.loc["Alan", "Lung Cancer"]) > 0.5  # 2-diversity's target broken
    floats = exact_posterior(l1, prior)
    assert floats.loc["Alan", "Lung Cancer"] == pytest.approx(0.9736328125, abs=1e-15)
    assert floats.attrs["method"] == "exact"
    # Definition 7: Delta_1 = 0, Delta_2 = 0.097; with N = r = 2, Delta_ceil = 0: L1 fails
    assert delta_max(l1, prior, "Lung Cancer") == pytest.approx(0.097)
    report = delta_report(l1, prior, 2)
    assert report["delta_ceil"].tolist() == [0.0, 0.0] and not report["ok"].any()
    l2 = frame[frame["GID"] == "L2"].set_index("Name")
    assert (exact_posterior(l2, prior) == 0.5).all().all()  # two women: no breach
    assert satisfies_delta_bound(l2, prior, 2)


def test_example_2():
    group = pd.DataFrame({"sig": ["s0", "s1", "s2"], "disease": ["x", "y", "z"]})
    table = pd.DataFrame({"x": [0.1, 0.08, 0.09]}, index=pd.Index(["s0", "s1", "s2"], name="sig"))
    with pytest.raises(KnowledgeError, match="'s0' sums to 0.1, not 1: each row is a whole"):
        Prior(table, "disease", other=None)
    prior = Prior(table.assign(rest=[0.9, 0.92, 0.91]), "disease", other="rest")
    assert delta_max(group, prior, "x") == pytest.approx(0.02)
    assert round(delta_ceil(3, 2, 0.1), 4) == 0.0474
    report = delta_report(group, prior, 2).set_index("value")
    assert report.loc["x", "ok"]


# -- exact posteriors ------------------------------------------------------------------------


@st.composite
def small_groups(draw, max_n=7):
    n = draw(st.integers(1, max_n))
    n_sig = draw(st.integers(1, 3))
    n_val = draw(st.integers(1, 4))
    prob = st.integers(0, 6).map(lambda k: F(k, 24))
    rows = [[draw(prob) for _ in range(n_val)] for _ in range(n_sig)]
    table = pd.DataFrame(
        {f"v{j}": [rows[i][j] for i in range(n_sig)] for j in range(n_val)},
        index=pd.Index([f"s{i}" for i in range(n_sig)], name="sig"),
    )
    sigs = [f"s{draw(st.integers(0, n_sig - 1))}" for _ in range(n)]
    vals = [f"v{draw(st.integers(0, n_val - 1))}" for _ in range(n)]
    return pd.DataFrame({"sig": sigs, "disease": vals}), whole(table)


@given(small_groups())
@settings(max_examples=150, **SETTINGS)
def test_exact_posterior_equals_brute_force(case):
    """Eq. (1)-(3) by enumeration, N <= 7, exact rationals; both directions; floats."""
    group, prior = case
    weights = [{x: prior.table.loc[s, x] for x in prior.table.columns} for s in group["sig"]]
    assert prior.other == "rest" and "rest" not in set(group["disease"])
    expected, total = brute_force(weights, list(group["disease"]))
    if total == 0:
        with pytest.raises(KnowledgeError, match="prior probability 0"):
            exact_posterior(group, prior)
        return
    post = exact_posterior(group, prior, fractions=True)
    for i, label in enumerate(group.index):
        for x in post.columns:
            assert post.loc[label, x] == expected.get((i, x), 0)
    values = sorted(group["disease"].unique())
    f = group["disease"].value_counts().reindex(values).to_numpy()
    w = prior.weights(group, values, fractions=True)
    for direction in ("tuples", "values"):
        other = worlds.exact_probs(w, f, exact=True, direction=direction)
        assert (other == post.to_numpy()).all(), direction
    floats = exact_posterior(group, prior, fractions=False)
    np.testing.assert_allclose(floats.to_numpy(), post.to_numpy(dtype=float), atol=1e-12)


@given(st.integers(1, 6), st.data())
@settings(max_examples=40, **SETTINGS)
def test_ryser_permanent_is_the_normalizer(n, data):
    entries = st.integers(0, 9).map(lambda k: F(k, 10 * n))  # rows sum to < 1
    m = [[data.draw(entries) for _ in range(n)] for _ in range(n)]
    brute = sum(
        np.prod([m[i][p[i]] for i in range(n)], dtype=object)
        for p in itertools.permutations(range(n))
    )
    assert permanent(m) == brute
    # distinct values: p(t_i : x_j) = m_ij perm(minor ij) / perm(m)
    group, prior = one_signature_each(m, [f"v{j}" for j in range(n)])
    prior = whole(pd.DataFrame(m, columns=[f"v{j}" for j in range(n)], index=prior.table.index))
    if brute == 0:
        return
    post = exact_posterior(group, prior, fractions=True)
    for i in range(n):
        for j in range(n):
            minor = [row[:j] + row[j + 1 :] for k, row in enumerate(m) if k != i]
            assert post.iloc[i, j] == m[i][j] * permanent(minor) / brute


def test_sixteen_distinct_tuples_run_exactly():
    """N = 16, all signatures and values distinct: 2^16 states (N = 20 is benchmarked)."""
    rng = np.random.default_rng(0)
    n = 16
    rows = rng.dirichlet(np.ones(n), size=n).tolist()
    group, prior = one_signature_each(rows, [f"v{j:02d}" for j in range(n)])
    post = exact_posterior(group, prior)
    assert post.attrs["method"] == "exact"
    np.testing.assert_allclose(post.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(post.sum(axis=0), 1.0, atol=1e-12)  # one occurrence each


def test_monte_carlo_agrees_within_its_standard_error():
    rng = np.random.default_rng(1)
    n = 9
    rows = rng.dirichlet(np.ones(n), size=n).tolist()
    group, prior = one_signature_each(rows, [f"v{j}" for j in range(n)])
    exact = exact_posterior(group, prior)
    est = exact_posterior(group, prior, method="monte carlo", samples=40_000, seed=3)
    se = est.attrs["standard_error"]
    assert est.attrs["method"] == "monte carlo" and est.attrs["effective_samples"] > 1000
    z = ((est - exact) / se).abs().to_numpy()
    assert z.max() < 5 and np.median(z) < 2
    # auto falls back to Monte Carlo beyond max_states; exact refuses instead
    auto = exact_posterior(group, prior, max_states=100, samples=2000)
    assert auto.attrs["method"] == "monte carlo"
    with pytest.raises(ReleaseError, match="max_states=100"):
        exact_posterior(group, prior, method="exact", max_states=100)


def test_repeated_values_and_signatures_lump():
    """Repeated values: the program runs over value counts, tiny state spaces."""
    rows = [[F(1, 2), F(1, 4), F(1, 8)]] * 6 + [[F(1, 8), F(1, 4), F(1, 2)]] * 6
    group, _ = one_signature_each(rows, ["a"] * 4 + ["b"] * 4 + ["c"] * 4)
    table = pd.DataFrame(
        {"a": [F(1, 2), F(1, 8)], "b": [F(1, 4)] * 2, "c": [F(1, 8), F(1, 2)]},
        index=pd.Index(["s0", "s1"], name="sig"),
    )
    group["sig"] = ["s0"] * 6 + ["s1"] * 6
    prior = whole(table)
    post = exact_posterior(group, prior, fractions=True)
    assert worlds.states(prior.weights(group, ["a", "b", "c"]), np.array([4, 4, 4])) <= 49
    assert post.sum(axis=0).tolist() == [4, 4, 4] and post.sum(axis=1).tolist() == [1] * 12
    # symmetry: the two signatures mirror each other
    assert post.iloc[0]["a"] == post.iloc[6]["c"]


def test_lumped_values_take_the_other_column():
    """A value without a column gets ``other``'s probability; equal shares cancel."""
    frame, prior = wong2010_example()
    l2 = frame[frame["GID"] == "L2"]
    assert prior.p({"Gender": "Female"}, "Flu") == 0.997
    split = Prior(
        pd.DataFrame(
            {"Lung Cancer": [0.1, 0.003], "Flu": [0.3, 0.997 / 3], "HIV": [0.6, 2 * 0.997 / 3]},
            index=pd.Index(["Male", "Female"], name="Gender"),
        ),
        "Disease",
    )  # 'Not Lung Cancer' split 1:2 for both genders: same posterior
    both = frame.assign(Disease=["Lung Cancer", "Flu", "HIV", "Flu"])
    group = both.iloc[:3]
    np.testing.assert_allclose(
        exact_posterior(group, prior).to_numpy(),
        exact_posterior(group, split).to_numpy(),
        rtol=1e-12,
    )
    assert exact_posterior(l2, prior).attrs["method"] == "exact"


# -- Theorem 1 and 2 -------------------------------------------------------------------------


@st.composite
def bounded_groups(draw):
    """An m-unique group, r, and a prior meeting the Delta bound for every value (exact)."""
    n = draw(st.integers(2, 7))
    r = draw(st.fractions(min_value=F(11, 10), max_value=n, max_denominator=10))
    columns = []
    for _ in range(n):  # one column per value of the group
        f_max = draw(st.fractions(min_value=0, max_value=F(19, 20), max_denominator=40))
        ceil = delta_ceil(n, r, f_max)
        top = draw(st.integers(0, n - 1))
        col = []
        for v in range(n):
            u = (
                F(1)
                if v != top and draw(st.booleans())
                else draw(st.fractions(min_value=0, max_value=1, max_denominator=10))
            )
            col.append(f_max if v == top else f_max - u * ceil)
        columns.append(col)
    rows = [[columns[j][i] for j in range(n)] for i in range(n)]
    return rows, r


@given(bounded_groups())
@settings(max_examples=100, **SETTINGS)
def test_theorem_1_delta_bound_caps_the_posterior(case):
    """Theorem 1 / Corollary 1 for the adversary of Table IV's form (x against not-x):
    an m-unique group meeting Delta_max <= Delta_ceil has p(t : x) <= 1/r, exactly."""
    rows, r = case
    n = len(rows)
    values = [f"v{j}" for j in range(n)]
    sigs = pd.Index([f"s{i}" for i in range(n)], name="sig")
    group = pd.DataFrame({"sig": sigs, "disease": values})
    for j, x in enumerate(values):
        col = [rows[i][j] for i in range(n)]
        binary = Prior(
            pd.DataFrame({x: col, "rest": [1 - p for p in col]}, index=sigs), "disease", "rest"
        )
        assert delta_report(group, binary, r).set_index("value").loc[x, "ok"]
        if max(col) == 0:
            continue  # no world gives anyone x
        post = exact_posterior(group, binary, fractions=True)
        assert post[x].max() <= 1 / r


@given(
    st.integers(2, 30),
    st.fractions(min_value=F(1, 100), max_value=F(99, 100), max_denominator=100),
    st.data(),
)
@settings(max_examples=60, **SETTINGS)
def test_theorem_1_is_tight(n, f_max, data):
    """One tuple at f_max and the rest at f_max - Delta_ceil: the posterior is exactly 1/r."""
    r = data.draw(st.fractions(min_value=F(11, 10), max_value=n, max_denominator=10))
    low = f_max - delta_ceil(n, r, f_max)
    col = [f_max] + [low] * (n - 1)
    group, prior = one_signature_each([[p] for p in col], ["x"] * n)
    group["disease"] = ["x"] + [f"y{i}" for i in range(n - 1)]
    prior = prior.binary("x")
    post = exact_posterior(group, prior, fractions=True)
    assert post["x"].iloc[0] == 1 / r
    assert satisfies_delta_bound(group, prior, r)


def test_theorem1_fails_for_a_joint_prior():
    """With a prior that names all the group's values at once (Eq. 1 with p(s : y) for
    every value), the Delta bound does not cap the posterior: two tuples of signature A
    and one of B, values x, y, z, r = 2, the bound holds for x, y and z, yet the B tuple
    has y with probability 0.604 > 1/2."""
    table = pd.DataFrame(
        {
            "x": [F(9, 100), F(5, 100)],
            "y": [F(75, 1000), F(13, 100)],
            "z": [F(95, 1000), F(55, 1000)],
        },
        index=pd.Index(["A", "B"], name="sig"),
    )
    prior = whole(table)
    group = pd.DataFrame({"sig": ["A", "A", "B"], "disease": ["x", "y", "z"]})
    assert satisfies_delta_bound(group, prior, 2)
    post = exact_posterior(group, prior, fractions=True)
    assert post.loc[2, "y"] > F(1, 2)
    assert round(float(post.loc[2, "y"]), 4) == 0.6044
    # the per-value adversary of Theorem 1 stays within 1/2
    assert exact_posterior(group, prior.binary("y"), fractions=True)["y"].max() <= F(1, 2)


@given(
    st.floats(1.01, 20),
    st.one_of(st.just(0.0), st.floats(1e-9, 1)),  # no subnormals: rounding, not Theorem 2
    st.integers(1, 200),
)
@settings(max_examples=200, **SETTINGS)
def test_theorem_2_delta_ceil_increases_with_n(r, f_max, k):
    n = int(np.ceil(r)) + k - 1
    assert delta_ceil(n + 1, r, f_max) >= delta_ceil(n, r, f_max)
    assert delta_ceil(n, r, f_max) <= f_max


def test_m_uniqueness_and_size_are_part_of_the_bound():
    frame, prior = wong2010_example()
    l2 = frame[frame["GID"] == "L2"]
    assert not satisfies_delta_bound(l2, prior, 3)  # N = 2 < r = 3
    assert np.isnan(delta_report(l2, prior, 3)["delta_ceil"]).all()
    twice = l2.assign(Disease="Flu")  # equal priors, but Flu twice
    assert not satisfies_delta_bound(twice, prior, 2)
    assert delta_report(twice, prior, 2)["count"].tolist() == [2]


# -- errors ----------------------------------------------------------------------------------


def test_delta_errors_name_the_culprit():
    with pytest.raises(ReleaseError, match="r must be a number above 1"):
        delta_ceil(3, 1, 0.2)
    with pytest.raises(ReleaseError, match="N=2 is below r=3"):
        delta_ceil(2, 3, 0.2)
    with pytest.raises(KnowledgeError, match="f_max must be a probability"):
        delta_ceil(3, 2, 1.5)
    frame, prior = wong2010_example()
    with pytest.raises(ReleaseError, match="'Flu' does not occur"):
        delta_max(frame[frame["GID"] == "L1"], prior, "Flu")


def test_prior_errors_name_the_culprit():
    ok = pd.Index(["m", "f"], name="sex")
    with pytest.raises(KnowledgeError, match="must name its attributes"):
        Prior(pd.DataFrame({"x": [0.1, 0.2]}), "d")
    with pytest.raises(KnowledgeError, match=r"p\(f : x\) = 1.5"):
        Prior(pd.DataFrame({"x": [0.1, 1.5]}, index=ok), "d")
    with pytest.raises(KnowledgeError, match="'m' sums to 1.2"):
        Prior(pd.DataFrame({"x": [0.6, 0.1], "y": [0.6, 0.1]}, index=ok), "d")
    with pytest.raises(KnowledgeError, match="other='z' is not a column"):
        Prior(pd.DataFrame({"x": [0.1, 0.2]}, index=ok), "d", other="z")
    with pytest.raises(KnowledgeError, match="'m' sums to 0.1, not 1"):
        Prior(pd.DataFrame({"x": [0.1, 0.2]}, index=ok), "d")
    prior = whole(pd.DataFrame({"x": [0.1, 0.2]}, index=ok), "d")
    with pytest.raises(KnowledgeError, match="sex=u .* is not in the prior"):
        exact_posterior(pd.DataFrame({"sex": ["m", "u"], "d": ["x", "x"]}), prior)
    with pytest.raises(ReleaseError, match="prior attribute 'sex' is not a column"):
        exact_posterior(pd.DataFrame({"gender": ["m"], "d": ["x"]}), prior)
    with pytest.raises(KnowledgeError, match="no column of its own"):
        wong2010_example()[1].binary("Flu")


# -- the anonymizer --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def adult_sample() -> pd.DataFrame:
    return du2008_adult(n=2000, seed=1)


@pytest.mark.parametrize(
    "attributes, alpha", [([["sex", "race"]], 0.0), ([["age"]], 1.0), ([["sex"], ["race"]], 0.0)]
)
def test_robust_anonymize_on_adult(adult_sample, attributes, alpha):
    """Every group passes the bound, and its exact posteriors are <= 1/r (acceptance 5)."""
    r = 2
    priors = [Prior.estimate(adult_sample, a, ADULT_SA, alpha=alpha) for a in attributes]
    release = robust_anonymize(adult_sample, ADULT_QI, ADULT_SA, r=r, prior=priors)
    out = release.frame
    assert sorted(out.index) == sorted(adult_sample.index)
    pd.testing.assert_frame_equal(
        out[ADULT_QI + [ADULT_SA]], adult_sample.loc[out.index, ADULT_QI + [ADULT_SA]]
    )
    assert out.groupby(["group", ADULT_SA]).size().max() == 1  # m-unique
    assert out.groupby("group").size().min() >= r
    table = robustness_table(release, priors, r, sample=100, seed=0)
    assert table["delta_bound"].all()
    assert (table["max_posterior_binary"] <= 1 / r + 1e-12).all()
    assert (table["max_posterior"] <= 1 / r + 1e-12).all()
    assert robustness_table(release, priors, r, exact=False)["delta_bound"].all()


@st.composite
def small_tables(draw):
    n = draw(st.integers(4, 40))
    sex = draw(st.lists(st.sampled_from("MF"), min_size=n, max_size=n))
    age = draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
    d = draw(st.lists(st.sampled_from("abcdefgh"), min_size=n, max_size=n))
    r = draw(st.sampled_from([1.5, 2, 2.5]))
    alpha = draw(st.sampled_from([0.0, 1.0, 5.0]))
    return pd.DataFrame({"sex": sex, "age": age, "d": d}), r, alpha


@given(small_tables())
@settings(max_examples=60, **SETTINGS)
def test_robust_anonymize_either_delivers_or_says_why(case):
    """Every record once, m-unique groups of >= r meeting the bound, exact posteriors
    <= 1/r under each prior; or a ReleaseError."""
    frame, r, alpha = case
    priors = [
        Prior.estimate(frame, ["sex"], "d", alpha),
        Prior.estimate(frame, ["age"], "d", alpha),
    ]
    try:
        release = robust_anonymize(frame, ["sex", "age"], "d", r=r, prior=priors)
    except ReleaseError as err:
        assert "robust" in str(err)
        return
    out = release.frame
    assert sorted(out.index) == sorted(frame.index)
    assert out.groupby(["group", "d"]).size().max() == 1
    assert out.groupby("group").size().min() >= r
    table = robustness_table(release, priors, r)
    assert table["delta_bound"].all()
    assert (table["max_posterior"] <= 1 / r + 1e-12).all()
    assert (table["max_posterior_binary"] <= 1 / r + 1e-12).all()


def test_robust_anonymize_merges_across_signatures():
    """A leftover record joins a group of another signature when the bound allows it."""
    frame = pd.DataFrame(
        {
            "sex": ["M", "M", "M", "F", "F"],
            "age": [30, 31, 32, 30, 31],
            "d": ["a", "b", "a", "c", "b"],
        }
    )
    prior = whole(
        pd.DataFrame(
            {"a": [0.30, 0.29], "b": [0.30, 0.31], "c": [0.30, 0.29]},
            index=pd.Index(["M", "F"], name="sex"),
        ),
        "d",
    )
    release = robust_anonymize(frame, ["sex", "age"], "d", r=2, prior=prior)
    table = robustness_table(release, prior, 2)
    assert table["delta_bound"].all() and (table["max_posterior"] <= 0.5 + 1e-12).all()
    assert (release.frame.groupby("group")["sex"].nunique() > 1).any()


def test_verify_catches_the_joint_prior_counterexample():
    table = pd.DataFrame(
        {"x": [0.09, 0.05], "y": [0.075, 0.13], "z": [0.095, 0.055]},
        index=pd.Index(["A", "B"], name="sig"),
    )
    prior = whole(table)
    frame = pd.DataFrame({"sig": ["A", "A", "B"], "disease": ["x", "z", "y"]})
    release = robust_anonymize(
        frame, ["sig"], "disease", r=2, prior=prior, verify=False
    )  # Delta only
    assert release.n_groups == 1
    assert robustness_table(release, prior, 2)["max_posterior"].iloc[0] > 0.6
    with pytest.raises(ReleaseError, match="no 2-robust group can take"):
        robust_anonymize(frame, ["sig"], "disease", r=2, prior=prior)  # verify=True by default


def test_robust_anonymize_errors(adult_sample):
    prior = Prior.estimate(adult_sample, ["sex"], ADULT_SA)
    with pytest.raises(ReleaseError, match="r must be a number above 1"):
        robust_anonymize(adult_sample, ADULT_QI, ADULT_SA, r=1, prior=prior)
    with pytest.raises(ReleaseError, match="'HS-grad' occurs in .* more than 1/4"):
        robust_anonymize(adult_sample, ADULT_QI, ADULT_SA, r=4, prior=prior)
    with pytest.raises(KnowledgeError, match="'income' is not a quasi-identifier"):
        bad = Prior.estimate(adult_sample, ["income"], ADULT_SA)
        robust_anonymize(adult_sample, ADULT_QI, ADULT_SA, r=2, prior=bad)
    with pytest.raises(KnowledgeError, match="speaks of 'income'"):
        bad = Prior.estimate(adult_sample, ["sex"], "income")
        robust_anonymize(adult_sample, ADULT_QI, ADULT_SA, r=2, prior=bad)
    with pytest.raises(ReleaseError, match="quasi-identifier column 'zip'"):
        robust_anonymize(adult_sample, ["zip"], ADULT_SA, r=2, prior=prior)
    one = pd.DataFrame({"age": [87, 30, 31, 32], "d": ["a", "b", "c", "a"]})
    sure = Prior.estimate(one, ["age"], "d")  # age 87 has 'a' with probability 1
    with pytest.raises(ReleaseError, match="no 2-robust group can take the record"):
        robust_anonymize(one, ["age"], "d", r=2, prior=sure)


def test_query_error(adult_sample):
    prior = Prior.estimate(adult_sample, ["sex", "race"], ADULT_SA)
    robust = robust_anonymize(adult_sample, ADULT_QI, ADULT_SA, r=2, prior=prior)
    anatomy = anatomize(adult_sample, ADULT_QI, ADULT_SA, l=2)
    a = query_error(robust, queries=200, seed=4)
    assert a == query_error(robust, queries=200, seed=4)  # seeded
    assert 0 < a < 1 and 0 < query_error(anatomy, queries=200, seed=4) < 1
    # one record per group answers every query exactly
    solo = Bucketized(adult_sample.assign(g=range(len(adult_sample))), ADULT_QI, ADULT_SA, "g")
    assert query_error(solo, queries=50) == 0
    with pytest.raises(ValueError, match="selectivity"):
        query_error(robust, selectivity=0)


# -- the maximum-entropy side ----------------------------------------------------------------


def test_compare_posteriors_on_the_example():
    frame, prior = wong2010_example()
    release = Bucketized(frame.set_index("Name"), qi=["Gender", "Age"], sa="Disease", group="GID")
    table = compare_posteriors(release, prior)
    assert len(table) == 8 and set(table.columns) >= {"possible_worlds", "maxent", "difference"}
    alan = table.loc["Alan"].set_index("value")
    assert alan.loc["Lung Cancer", "possible_worlds"] == pytest.approx(997 / 1024)
    # maximum entropy: P(LC | Male) = 0.1 is met by the one man, Alan
    assert alan.loc["Lung Cancer", "maxent"] == pytest.approx(0.1, abs=1e-6)
    l2 = table[table["GID"] == "L2"]
    np.testing.assert_allclose(l2[["possible_worlds", "maxent"]].to_numpy(), 0.5, atol=1e-4)
    # hard facts: P(LC | Female) = 0.003 and P(LC | Male) = 0.1 cannot both hold
    with pytest.raises(InfeasibleKnowledge):
        compare_posteriors(release, prior, weight=None)


def test_prior_estimated_from_the_release_is_hard_knowledge(release):
    frame = release.frame
    prior = Prior.estimate(frame, ["gender"], "disease")
    model = MaxEntModel(release)
    model.add(prior)
    assert any(f.name.startswith("prior: P(Flu | gender=male)") for f in model.facts)
    post = model.solve().posterior()
    by_gender = frame.groupby("gender")["disease"].value_counts(normalize=True)
    sizes = frame.groupby(["gender", "degree"]).size()
    for gender in ("male", "female"):
        rows = post.xs(gender, level="gender")
        weights = sizes.xs(gender, level="gender").reindex(rows.index).to_numpy()
        mix = (rows.to_numpy() * weights[:, None]).sum(axis=0) / weights.sum()
        expect = by_gender[gender].reindex(rows.columns, fill_value=0).to_numpy()
        np.testing.assert_allclose(mix, expect, atol=1e-6)
    with pytest.raises(KnowledgeError, match="weight must be > 0"):
        prior.knowledge(weight=0)
