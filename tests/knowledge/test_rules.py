"""Association rules as background knowledge: Top-(K+, K-) (Du et al. Sections 4.4, 7.1)."""

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import KnowledgeError, MaxEntModel, datasets
from maxent_privacy.anonymize import anatomize
from maxent_privacy.rules import Rules, mine_rules

QI = ["gender", "degree"]


def rule(rules, kind, sa_value, **qv):
    """The one row of ``rules.frame`` with this Qv (other QI NA), value and kind."""
    f = rules.frame
    mask = (f["kind"] == kind) & (f["sa_value"] == sa_value)
    for c in rules.qi:
        mask &= (f[c] == qv[c]) if c in qv else f[c].isna()
    hits = f[mask.fillna(False).astype(bool)]
    assert len(hits) <= 1
    return None if hits.empty else hits.iloc[0]


@pytest.fixture
def fig1_rules(figure1):
    return mine_rules(figure1, QI, "disease", attributes=[1, 2])


@pytest.fixture(scope="module")
def adult_small():
    frame = datasets.du2008_adult(n=1000)
    release = anatomize(
        frame, datasets.ADULT_QI, "education", l=5, nonsensitive=["HS-grad", "Some-college"]
    )
    return frame, release


# ------------------------------------------------------------------ mining, by hand
def test_figure1_rules_by_hand(fig1_rules):
    r = rule(fig1_rules, "positive", "Flu", gender="male")  # Allen, David, James of 6 men
    assert (r["support"], r["count"], r["confidence"]) == (6, 3, 0.5)
    r = rule(fig1_rules, "negative", "Flu", gender="female")  # 4 women, none with Flu
    assert (r["support"], r["count"], r["confidence"]) == (4, 0, 0.0)
    r = rule(fig1_rules, "negative", "Lung Cancer", degree="college")  # 5 college, no LC
    assert (r["support"], r["count"], r["confidence"]) == (5, 0, 0.0)
    # male & college: Allen (Flu), Brian (Pneumonia), Ethan (HIV)
    r = rule(fig1_rules, "negative", "Breast Cancer", gender="male", degree="college")
    assert (r["support"], r["count"]) == (3, 0)
    # negatives need P(s | Qv) < P(s): 1/6 HIV among men < P(HIV) = 2/10
    r = rule(fig1_rules, "negative", "HIV", gender="male")
    assert r["confidence"] == pytest.approx(1 / 6)
    # college => HIV: 2 of 5 (count < 3, so not positive; 0.4 > 0.2, so not negative)
    assert rule(fig1_rules, "positive", "HIV", degree="college") is None
    assert rule(fig1_rules, "negative", "HIV", degree="college") is None
    # the only rule with 3 supporting records is male => Flu
    assert len(fig1_rules.positive()) == 1
    # negatives need 3 records with Qv: female & college (2 records) gives none
    assert rule(fig1_rules, "negative", "Flu", gender="female", degree="college") is None
    # T = 1: male => not {Breast Cancer, Lung Cancer, HIV}, female => not {Flu, Pneumonia},
    # college => not {Lung Cancer, Flu}; T = 2: (male, college) => not {BC, LC}
    assert len(fig1_rules.negative()) == 9


def test_attributes_select_rule_size(figure1):
    one = mine_rules(figure1, QI, "disease", attributes=1, min_support=1)
    both = mine_rules(figure1, QI, "disease", min_support=1)  # T = all QI
    assert one.frame[QI].notna().sum(axis=1).eq(1).all()
    assert both.frame[QI].notna().sum(axis=1).eq(2).all()
    # 6 distinct (gender, degree) classes; each has its values as positives
    pos = both.positive().frame
    assert len(pos) == len(figure1.groupby(QI + ["disease"]))
    r = rule(both, "positive", "Breast Cancer", gender="female", degree="junior")
    assert (r["support"], r["count"], r["confidence"]) == (1, 1, 1.0)
    with pytest.raises(KnowledgeError, match="attributes=3"):
        mine_rules(figure1, QI, "disease", attributes=3)
    with pytest.raises(KnowledgeError, match="min_support"):
        mine_rules(figure1, QI, "disease", min_support=0)
    with pytest.raises(KnowledgeError, match="'zip'"):
        mine_rules(figure1, ["zip"], "disease")


def test_mining_matches_groupby_brute_force():
    frame = datasets.du2008_adult(n=600, seed=3)
    qi = ["age", "workclass", "sex", "race"]
    got = mine_rules(frame, qi, "education", attributes=2).frame
    prior = frame["education"].value_counts(normalize=True)
    values = sorted(frame["education"].unique())
    pos, neg = set(), set()
    for sub in combinations(qi, 2):
        sup = frame.groupby(list(sub)).size()
        cnt = frame.groupby(list(sub) + ["education"]).size()
        for qv, n in sup.items():
            for s in values:
                c = int(cnt.get((*qv, s), 0))
                if c >= 3:
                    pos.add((sub, qv, s, int(n), c))
                if n >= 3 and c / n < prior[s]:
                    neg.add((sub, qv, s, int(n), c))

    def as_set(kind):
        out = set()
        for r in got[got["kind"] == kind].itertuples(index=False):
            sub = tuple(c for c in qi if not pd.isna(getattr(r, c)))
            qv = tuple(getattr(r, c) for c in sub)
            out.add((sub, qv, r.sa_value, r.support, r.count))
        return out

    assert as_set("positive") == pos
    assert as_set("negative") == neg
    assert got["age"].dtype == "Int64"  # integer QI stay exact, NA where not in Qv
    # the ranking is a function of the data, not of the row order
    again = mine_rules(frame.sample(frac=1, random_state=7), qi, "education", attributes=2)
    pd.testing.assert_frame_equal(again.frame, got)


def test_top_ordering(adult_small):
    frame, _ = adult_small
    rules = mine_rules(frame, datasets.ADULT_QI, "education", attributes=3)
    pos, neg = rules.positive().frame, rules.negative().frame
    c, n = pos["confidence"].to_numpy(), pos["count"].to_numpy()
    assert (np.diff(c) <= 0).all()
    assert ((np.diff(c) < 0) | (np.diff(n) <= 0)).all()  # ties: larger count first
    c, n = neg["confidence"].to_numpy(), neg["support"].to_numpy()
    assert (np.diff(c) >= 0).all()
    assert ((np.diff(c) > 0) | (np.diff(n) <= 0)).all()  # ties: larger support first
    assert neg["confidence"].iloc[0] == 0 and pos["confidence"].iloc[0] == 1
    top = rules.top(7, 4)
    assert len(top) == 11
    assert top.frame["kind"].tolist() == ["positive"] * 7 + ["negative"] * 4
    pd.testing.assert_frame_equal(top.frame.iloc[:7], pos.iloc[:7].reset_index(drop=True))
    pd.testing.assert_frame_equal(
        top.frame.iloc[7:].reset_index(drop=True), neg.iloc[:4].reset_index(drop=True)
    )
    assert len(rules.top(0, 0)) == 0
    assert len(rules.top(10**9, 0)) == len(pos)
    with pytest.raises(KnowledgeError, match="k_neg"):
        rules.top(1, -1)
    text = repr(top)
    assert text.startswith("Rules(7 positive, 4 negative; sa='education')")
    assert "<table" in top._repr_html_()


# ------------------------------------------------------------------------ compile
def test_compiled_rows_are_the_P_expressions(release, figure1):
    model = MaxEntModel(release)
    rules = mine_rules(figure1, QI, "disease", attributes=[1, 2], min_support=1)
    facts = rules._maxent_facts_(model)
    assert [name for name, _ in facts] == ["rules"]
    A, b = rules.matrix(model)
    assert A.shape == (len(rules), model.n_cells)
    np.testing.assert_array_equal(b, rules.frame["confidence"].to_numpy())
    keys = QI + ["bucket", "disease"]
    for k, r in rules.frame.iterrows():
        qv = {c: r[c] for c in QI if not pd.isna(r[c])}
        want = model.terms(model.P(r["sa_value"], **qv)).drop(columns="person")
        row = A[[k]]
        got = model.cells.iloc[row.indices][keys].assign(coefficient=row.data * model.n_records)
        pd.testing.assert_frame_equal(
            got.sort_values(keys).reset_index(drop=True),
            want.sort_values(keys).reset_index(drop=True),
            check_dtype=False,
        )
    # e.g. male => Flu: Allen, David (bucket 1), James (bucket 3) among 6 men
    k = rules.frame.index[
        (rules.frame["gender"] == "male")
        & rules.frame["degree"].isna()
        & (rules.frame["sa_value"] == "Flu")
    ][0]
    np.testing.assert_allclose(A[[k]].data, 1 / 6)
    # male classes in buckets that hold Flu: (male, college) and (male, high school) in
    # bucket 1, (male, graduate) in bucket 3; bucket 2 has no Flu
    assert A[[k]].nnz == 3
    # the true data satisfy every rule exactly
    x = model.true_assignment(figure1)
    np.testing.assert_allclose(A @ x, b, atol=1e-12)


def test_added_rules_compile_to_the_gradient_of_their_constraint(release, figure1):
    # model.add takes the rows from the rules' tag; cvxpy's gradient gives the same rows
    from maxent_privacy.facts import linearize

    model = MaxEntModel(release)
    rules = mine_rules(figure1, QI, "disease", attributes=[1, 2], min_support=1)
    model.add(rules, name="r")
    fact = model.facts[0]
    (_, grouped) = rules._maxent_facts_(model)[0]
    c = grouped.constraint
    A, const = linearize(c.args[0] - c.args[1], model.x, model.n_cells)
    assert fact.sense == "==" and fact.shape == (len(rules),)
    assert abs(fact.A - A).max() == 0
    np.testing.assert_array_equal(fact.b, -const)
    np.testing.assert_array_equal(fact.b, rules.frame["confidence"].to_numpy())
    # rows of one condition share a group; different conditions do not
    qv = rules.frame[QI].astype(object).fillna("-").astype(str).agg("|".join, axis=1)
    assert pd.crosstab(qv, fact.row_groups).gt(0).sum(axis=1).eq(1).all()
    assert pd.crosstab(fact.row_groups, qv).gt(0).sum(axis=1).eq(1).all()


def test_add_to_model_and_solve_figure1(release, figure1):
    rules = mine_rules(figure1, QI, "disease", attributes=1)
    model = MaxEntModel(release)
    for name, c in rules.top(1, 7)._maxent_facts_(model):
        model.add(c, name=name)
    assert model.fact_table()[["fact", "rows"]].values.tolist() == [["rules", 8]]
    result = model.solve()
    assert result.certificate.knowledge_residual <= 1e-6
    post = result.posterior()
    # male => not Breast Cancer: Cathy's Breast Cancer in bucket 1 is a woman's
    assert post.loc[("male", "college"), "Breast Cancer"] == pytest.approx(0, abs=1e-9)
    assert float(post.loc[("female", "junior"), "Breast Cancer"]) == pytest.approx(1.0)
    # through the model.add hook, with a name
    other = MaxEntModel(release)
    other.add(rules.top(1, 7), name="top")
    assert [f.name for f in other.facts] == ["top"]
    other.add(rules.top(0, 0))  # no rules, no fact
    assert len(other.facts) == 1


def test_top_rules_are_feasible_on_anatomized_adult(adult_small):
    frame, release = adult_small
    for attributes in (None, 2):
        rules = mine_rules(frame, datasets.ADULT_QI, "education", attributes=attributes)
        model = MaxEntModel(release)
        model.add(rules.top(5, 5))
        A, b = rules.top(5, 5).matrix(model)
        np.testing.assert_allclose(A @ model.true_assignment(release.frame), b, atol=1e-12)
        result = model.solve()
        assert result.certificate.knowledge_residual <= 1e-6
        np.testing.assert_allclose(A @ result.x, b, atol=1e-6)


def test_compile_errors_name_the_rule(release, figure1):
    model = MaxEntModel(release)

    def one(**values):
        row = {
            "gender": pd.NA,
            "degree": pd.NA,
            "sa_value": "Flu",
            "support": 3,
            "count": 1,
            "confidence": 0.5,
            "kind": "positive",
        }
        row.update(values)
        return Rules(pd.DataFrame([row]), qi=QI, sa="disease")

    with pytest.raises(KnowledgeError, match=r"rule 0 \(gender=other => Flu\).*no record"):
        model.add(one(gender="other"))
    # both values occur, but no woman has a high-school degree
    with pytest.raises(KnowledgeError, match="gender=female, degree=high school => Flu"):
        one(gender="female", degree="high school").matrix(model)
    with pytest.raises(KnowledgeError, match="'Cold'"):
        one(gender="male", sa_value="Cold").matrix(model)
    wrong_sa = Rules(one(gender="male").frame, qi=QI, sa="illness")
    with pytest.raises(KnowledgeError, match="'illness'"):
        wrong_sa.matrix(model)
    extra = one(gender="male").frame.assign(zip=[12345])
    with pytest.raises(KnowledgeError, match="'zip'"):
        Rules(extra, qi=QI + ["zip"], sa="disease").matrix(model)
    with pytest.raises(KnowledgeError, match="confidence"):
        one(confidence=1.5)
    assert model.facts == []


def test_compile_10000_rules_on_adult():
    """10,000 rules over 250 attribute subsets on the 14,210-record setup (about 0.15 s)."""
    frame = datasets.du2008_adult()
    release = anatomize(
        frame, datasets.ADULT_QI, "education", l=5, nonsensitive=["HS-grad", "Some-college"]
    )
    model = MaxEntModel(release)
    rules = mine_rules(frame, datasets.ADULT_QI, "education", attributes=[1, 2, 3, 8])
    top = rules.top(5000, 5000)
    assert len(top) == 10_000
    A, b = top.matrix(model)
    assert A.shape == (10_000, model.n_cells)
    np.testing.assert_allclose(A @ model.true_assignment(release.frame), b, atol=1e-12)
    model.add(top)
    assert model.fact_table()["rows"].tolist() == [10_000]


def test_docstring_examples():
    import doctest

    import maxent_privacy.rules

    failures, tried = doctest.testmod(maxent_privacy.rules, optionflags=doctest.ELLIPSIS)
    assert tried >= 4 and failures == 0
