"""Knowledge beyond equalities: vague facts, relations, disjunctions (Du et al. 3.1, 4.5)."""

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, InfeasibleKnowledge, KnowledgeError, MaxEntModel
from maxent_privacy.knowledge import vague


def test_section_3_1_example(model):
    """P(s1 | q2) = 0 and P(s1 or s2 | q3) = 0 (q2 = female college, q3 = male high school,
    s1 = Breast Cancer, s2 = Flu): in bucket 1, q3 -> s3, q2 -> s2 and the two q1 records
    split s1 and s2."""
    model.add(model.P("Breast Cancer", gender="female", degree="college") == 0)
    model.add(model.P(["Breast Cancer", "Flu"], gender="male", degree="high school") == 0)
    post = model.solve().posterior(by="group")
    assert post.loc[("male", "high school", 1), "Pneumonia"] == 1.0
    assert post.loc[("female", "college", 1), "Flu"] == 1.0
    q1 = post.loc[("male", "college", 1)]
    assert q1["Breast Cancer"] == pytest.approx(0.5, abs=1e-12)
    assert q1["Flu"] == pytest.approx(0.5, abs=1e-12)
    assert q1.drop(["Breast Cancer", "Flu"]).abs().max() == 0


def test_disjunction_is_the_sum(model):
    both = model.P(["Flu", "HIV"], gender="male")
    flu, hiv = model.P("Flu", gender="male"), model.P("HIV", gender="male")
    a = model.terms(both)
    b = model.terms(flu + hiv)
    key = ["gender", "degree", "bucket", "disease"]
    assert a.sort_values(key).to_numpy().tolist() == b.sort_values(key).to_numpy().tolist()


def test_vague_brackets_the_estimate(model):
    model.add(vague(model.P("Flu", gender="male"), 0.45, 0.02), name="flu")
    result = model.solve()
    value = result.posterior().xs("male", level="gender")
    sizes = model.release.frame.groupby(["gender", "degree"]).size()["male"]
    p_flu = float((value["Flu"] * sizes).sum() / sizes.sum())
    # without knowledge P(Flu | male) = (3 * 2/4 + 2 * 0 + 1/3) / 6 = 0.3056, so the lower
    # bound 0.43 is active
    assert p_flu == pytest.approx(0.43, abs=1e-9)
    assert result.duals["flu (low)"] > 0
    assert result.duals["flu (high)"] == pytest.approx(0.0, abs=1e-9)


def test_vague_with_zero_eps_is_equality(model, release):
    model.add(vague(model.P("Flu", gender="male"), 0.4, 0.0), name="flu")
    other = MaxEntModel(release)
    other.add(other.P("Flu", gender="male") == 0.4, name="flu")
    np.testing.assert_allclose(model.solve().x, other.solve().x, atol=1e-10)
    assert model.solve().duals["flu"] == pytest.approx(other.solve().duals["flu"])


def test_relation_between_probabilities(model):
    flu = model.P("Flu", degree="college")
    hiv = model.P("HIV", degree="college")
    model.add(hiv >= flu + 0.1, name="hiv over flu")
    result = model.solve()
    post = result.posterior()
    n = model.release.frame.groupby(["gender", "degree"]).size()
    college = post.xs("college", level="degree")
    w = n.xs("college", level="degree")
    p = college.mul(w, axis=0).sum() / w.sum()
    assert p["HIV"] >= p["Flu"] + 0.1 - 1e-9
    assert result.duals["hiv over flu"] > 0


def test_vague_bad_input(model):
    with pytest.raises(KnowledgeError, match="eps must be >= 0"):
        vague(model.P("Flu", gender="male"), 0.3, -0.1)
    with pytest.raises(KnowledgeError, match="probability 1.2"):
        vague(model.P("Flu", gender="male"), 1.2, 0.1)


def test_infeasible_vague_names_the_side_at_fault(model):
    model.add(vague(model.P("Flu", gender="male"), 0.6, 0.05), name="flu")
    with pytest.raises(InfeasibleKnowledge, match="1 fact cannot hold") as e:
        model.solve()
    # at most 3 of the 6 men have Flu: the lower side (>= 0.55) alone is the conflict
    assert set(e.value.conflicts["fact"]) == {"flu (low)"}


def test_soft_fact_that_cannot_hold_gives_an_answer(model):
    from maxent_privacy.knowledge import soft

    # as a hard fact this is infeasible (at most 3 of the 6 men can have Flu)
    model.add(soft(model.P("Flu", gender="male") == 0.6, 5.0), name="too much flu")
    result = model.solve()
    # at best 0.5 is reachable, and only at the edge where the entropy's slope is infinite,
    # so the answer stops a little short of it
    assert 0.1 <= result.violations["too much flu"] <= 0.11
    assert result.certificate.primal_residual <= 1e-6
    assert "too much flu" not in result.fact_residuals


def test_soft_weight_trades_entropy_against_violation(model, release):
    from maxent_privacy.knowledge import soft

    strong = MaxEntModel(release)
    strong.add(soft(strong.P("Flu", gender="male") == 0.45, 100.0), name="f")
    weak = MaxEntModel(release)
    weak.add(soft(weak.P("Flu", gender="male") == 0.45, 1e-4), name="f")
    hard = MaxEntModel(release)
    hard.add(hard.P("Flu", gender="male") == 0.45, name="f")
    h = hard.solve()
    assert strong.solve().violations["f"] == pytest.approx(0.0, abs=1e-6)
    np.testing.assert_allclose(strong.solve().x, h.x, atol=1e-4)  # soft solves are not polished
    # a weight below the hard fact's dual lets the fact give way entirely
    assert h.duals["f"] < 0  # pushing P(Flu | male) up costs entropy
    assert weak.solve().violations["f"] == pytest.approx(0.45 - 0.3055556, abs=1e-5)


def test_soft_needs_a_linear_fact(model):
    import cvxpy as cp

    from maxent_privacy.knowledge import soft

    with pytest.raises(KnowledgeError, match="weight must be > 0"):
        soft(model.P("Flu", gender="male") == 0.3, 0)
    with pytest.raises(KnowledgeError, match="'sq' must be a linear"):
        model.add(soft(cp.square(model.P("Flu", gender="male")) <= 0.1, 1.0), name="sq")


def test_sums_with_a_probability_of_no_cells_do_not_recurse():
    """A P(...) with no cell is a constant; ``c * P0 + d * P1`` made Python call the fact
    class's reflected ``+`` first, whose cvxpy body called ``+`` back for ever."""
    frame = pd.DataFrame(
        {
            "pid": [1, 2, 3, 4],
            "q": ["a", "a", "b", "b"],
            "s": ["x", "y", "x", "x"],
            "g": [1, 1, 2, 2],
        }
    )
    model = MaxEntModel(Bucketized(frame, qi=["q"], sa="s", group="g", person="pid"))
    empty, some = model.P("y", q="b"), model.P("x", q="a")
    assert isinstance(empty, cp.Constant)
    for expr in (np.float64(0.5) * empty + np.float64(2.0) * some, (-1) * empty - 2 * some):
        with pytest.raises(KnowledgeError, match="strict"):
            expr < 0.3  # noqa: B015
    model.add((-1) * empty + 2 * some <= 1.5, name="f")
    assert model.solve().certificate.primal_residual <= 1e-9
