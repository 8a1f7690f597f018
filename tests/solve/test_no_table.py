"""When the solve says "no table" (issue 21): Newton's verdict is checked by an LP before
it is believed, presolve sees rows no table can meet, and HiGHS's LPs run without the
presolve rule that made them slow."""

import numpy as np
import pytest
import scipy.sparse as sp
from test_pooled_feasible import REPRO, add_facts, model_of

from maxent_privacy import Bucketized, InfeasibleKnowledge, MaxEntModel, datasets
from maxent_privacy.solve import newton
from maxent_privacy.solve.forced_zeros import lp_forced_zeros, lp_status
from maxent_privacy.solve.highs import run_lp
from maxent_privacy.solve.presolve import FixForcedCells


def test_run_lp_statuses():
    A = sp.csr_array(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]))
    status, x = run_lp(np.array([1.0, 0.0, 0.0]), A, np.array([1.0, 1.0]))
    assert status == "optimal" and x.tolist() == [0.0, 1.0, 0.0]
    assert run_lp(np.zeros(3), A, np.array([1.0, -1.0]))[0] == "infeasible"
    G = sp.csr_array(np.array([[0.0, -1.0, 0.0]]))  # x1 >= 0.25
    status, x = run_lp(np.array([-1.0, 0.0, 0.0]), A, np.array([1.0, 1.0]), G, [-0.25])
    assert status == "optimal" and x[0] == pytest.approx(0.75)
    assert lp_status(A, np.array([1.0, 1.0]), G, np.array([-2.0])) == "infeasible"
    assert lp_forced_zeros(A, np.array([1.0, 1.0]), -G, np.array([0.0]), [0, 1, 2]).tolist() == [1]


def _false_verdict_once(monkeypatch):
    """Newton's first dual check says "no table" on every component, whatever phi is."""
    real = newton._below_zero
    calls = []

    def once(phi, rlog, rsum, lam, b, logW, K, comps, n_signed):
        calls.append(1)
        if len(calls) == 1:
            raise newton.DualUnbounded("test", np.arange(comps[2]), comps[1][K.cls])
        return real(phi, rlog, rsum, lam, b, logW, K, comps, n_signed)

    monkeypatch.setattr(newton, "_below_zero", once)
    return calls


def test_a_false_no_table_is_caught_and_its_zeros_fixed(monkeypatch):
    """The LP finds a table; the cells it proves 0 are fixed and the model solved
    again: the reproducer's answer, equal to Clarabel's."""
    model = model_of(REPRO)
    add_facts(model, REPRO)
    ref = model.solve(solver="CLARABEL")
    calls = _false_verdict_once(monkeypatch)
    ours = model.solve()
    assert calls and ours.solver_stats["forced_zeros"]["LP"] > 0
    assert ours.solver_stats["passes"] >= 2
    np.testing.assert_allclose(ours.person_posterior(), ref.person_posterior(), atol=1e-6)


def test_a_false_no_table_without_zeros_falls_back(monkeypatch):
    m = MaxEntModel(
        Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket")
    )
    m.add(m.P("Flu", gender="male") == 0.3, name="flu")
    _false_verdict_once(monkeypatch)
    with pytest.warns(UserWarning, match="dual bound fell below 0 but an LP says 'optimal'"):
        result = m.solve()
    assert result.solver_stats["solver"] == "CLARABEL"


def test_presolve_sees_a_class_asked_for_more_than_it_holds():
    """Found by tests/solve/test_pooled_feasible.py: presolve fixed 1.3 records in a class
    of one, which no table can hold; the reduced problem reached Newton with a class
    total of -0.3 (an answer failing our certificate, not InfeasibleKnowledge)."""
    people = {"p0": ("F", 20), "p1": ("M", 20), "p2": ("F", 20), "p3": ("F", 20)}
    case = (
        people,
        {"p0": "b", "p1": "b", "p2": "a", "p3": "a"},
        [
            ("bucket", ["p0", "p1", "p2"], [1, 1, 1], False),
            ("placed", ["p0", "p1", "p2", "p3"], [1, 1, 1, 2], False),
            ("bucket", ["p2", "p3"], [1, 1], False),
        ],
        [("b", {"sex": "F"}, "==+", 0.1)],
    )
    model = model_of(case)
    add_facts(model, case)
    from maxent_privacy.solve.placements import JointCells

    joint, _ = JointCells().apply(model.compile())
    with pytest.raises(InfeasibleKnowledge, match="more than a row's total"):
        FixForcedCells().apply(joint)
    with pytest.raises(InfeasibleKnowledge, match="f0"):
        model.solve()


def _presolve_outcome(p, zeros, start=None):
    """(fixed cells, rules) of FixForcedCells, or the error it raises."""
    fix = FixForcedCells(zeros, start=start)
    try:
        red, _ = fix.apply(p)
    except InfeasibleKnowledge as err:
        return type(err).__name__
    return red.fixed.tolist(), red.rules


def test_a_later_pass_starting_from_the_last_presolve_fixes_the_same_cells():
    """The solve's second pass starts presolve where the first stopped (only more zeros
    are known then): for every extra zero, the same cells and rule counts as from scratch."""
    model = model_of(REPRO)
    add_facts(model, REPRO)
    p = model.compile()
    first = FixForcedCells()
    first.apply(p)
    free = np.flatnonzero(np.isnan(first.presolved[0]))
    assert len(free) >= 4
    for j in free:
        scratch = _presolve_outcome(p, [j])
        assert _presolve_outcome(p, [j], start=first.presolved) == scratch, j
    # and it does start there: a cell fixed in ``start`` stays fixed
    fake = first.presolved[0].copy()
    fake[free[0]] = 0.0
    fixed, _ = _presolve_outcome(p, [], start=(fake, first.presolved[1]))
    assert fixed[free[0]] == 0.0 and np.isnan(first.presolved[0][free[0]])
