"""The solver policy: fallback, failures, infeasibility, inaccuracy warnings, Newton's
active set, conflicts with convex facts, and solver options checked by name."""

import warnings

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest

from maxent_privacy import (
    Bucketized,
    InaccuracyWarning,
    InfeasibleKnowledge,
    MaxEntModel,
    SolverFailed,
    SolverNotInstalled,
    datasets,
    exp_cone_solvers,
)
from maxent_privacy.errors import SolverOptionError
from maxent_privacy.solve import dispatch, newton
from maxent_privacy.solve.closed_form import ClosedForm
from maxent_privacy.solve.conflicts import explain_infeasibility
from maxent_privacy.solve.presolve import FixForcedCells

QI = ["gender", "degree"]


@pytest.fixture
def fig1():
    return Bucketized(datasets.du2008_figure1(), qi=QI, sa="disease", group="bucket")


@pytest.fixture
def flu(fig1):
    """Figure 1 with P(Flu | male) = 0.3 (named "flu"): one component for a backend."""
    m = MaxEntModel(fig1)
    m.add(m.P("Flu", gender="male") == 0.3, name="flu")
    return m


def newton_capped(monkeypatch, max_iter=1):
    """Our Newton solver genuinely fails: every batch runs with ``max_iter`` iterations."""
    real = dispatch.run_job

    def capped(args, kw):
        return real(args, {**kw, "max_iter": max_iter})

    monkeypatch.setattr(dispatch, "run_job", capped)


# ------------------------------------------------------------- (a) fallback
def test_default_falls_back_on_clarabel_when_newton_fails(flu, monkeypatch):
    want = flu.solve()
    assert want.solver_stats["solver"] == "MAXENT"
    assert "fallback_from" not in want.solver_stats
    newton_capped(monkeypatch)
    with pytest.warns(UserWarning, match="solved with CLARABEL instead") as record:
        got = flu.solve()
    message = str(record[0].message)
    assert message.startswith("solver 'maxent': ") and "stopped" in message
    stats = got.solver_stats
    assert stats["solver"] == "CLARABEL"
    assert stats["fallback_from"] == f"maxent: {message.split('; solved with')[0]}"
    assert stats["options"] == {"max_iter": 400}  # Clarabel's defaults
    assert got.status == "optimal" and got.certificate.primal_residual <= 1e-9
    np.testing.assert_allclose(got.x, want.x, atol=1e-7)


def test_fallback_leaves_out_options_clarabel_does_not_take(flu, monkeypatch):
    newton_capped(monkeypatch)
    with pytest.warns(UserWarning, match="solved with CLARABEL instead"):
        got = flu.solve(newton_tol=1e-12)
    assert got.solver_stats["solver"] == "CLARABEL"
    assert "newton_tol" not in got.solver_stats["options"]


def test_no_fallback_when_maxent_is_asked_for(flu, monkeypatch):
    newton_capped(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback warning either
        with pytest.raises(SolverFailed, match="solver 'maxent'.*try solver='CLARABEL'"):
            flu.solve(solver="maxent")


@pytest.mark.parametrize("options", [{"max_iter": 1}, {"time_limit": 1e-9}])
def test_fallback_after_a_small_budget_succeeds(flu, options):
    with pytest.warns(UserWarning, match="solved with CLARABEL instead"):
        result = flu.solve(**options)
    assert result.solver_stats["solver"] == "CLARABEL"
    assert result.certificate.primal_residual <= 1e-6


# ------------------------------------------------------------- (b) conic failure
def test_conic_solver_error_names_the_component(flu, monkeypatch):
    def broken(self, *args, **kwargs):
        raise cp.error.SolverError("boom")

    monkeypatch.setattr(cp.Problem, "solve", broken)
    with pytest.raises(SolverFailed, match=r"CLARABEL failed on component 0 \(18 cells\): boom"):
        flu.solve(solver="CLARABEL")


def test_conic_bad_status_names_the_component_and_facts(flu, monkeypatch):
    def status_only(self, *args, **kwargs):
        self._status = cp.SOLVER_ERROR

    monkeypatch.setattr(cp.Problem, "solve", status_only)
    with pytest.raises(
        SolverFailed,
        match=r"ECOS returned status 'solver_error' on component 0 \(18 cells, facts: flu\)",
    ):
        flu.solve(solver="ECOS")


def test_conic_failure_under_the_default_solver_is_not_hidden(flu, monkeypatch):
    """A convex fact sends the default to Clarabel; its failure is raised as is."""
    flu.add(cp.square(flu.P("HIV", gender="female")) <= 0.25, name="square")

    def status_only(self, *args, **kwargs):
        self._status = cp.SOLVER_ERROR

    monkeypatch.setattr(cp.Problem, "solve", status_only)
    with pytest.raises(SolverFailed, match="CLARABEL returned status 'solver_error'"):
        flu.solve()


# ------------------------------------------------------------- (c) conic infeasible
@pytest.mark.parametrize("solver", ["CLARABEL", "ECOS"])
def test_conic_infeasible_names_the_facts(fig1, solver):
    m = MaxEntModel(fig1)
    m.add(m.P("Flu", gender="male") == 0.3, name="a")
    m.add(m.P("Flu", gender="male") == 0.5, name="b")
    m.add(m.P("HIV", gender="female") <= 0.9, name="c")  # innocent, same component
    with pytest.raises(InfeasibleKnowledge) as info:
        m.solve(solver=solver, presolve=False)
    err = info.value
    assert str(err) == "2 facts cannot hold together with the data: a; b (see .conflicts)"
    assert err.conflicts["fact"].tolist() == ["a", "b"]
    # the solver's own diagnosis names the facts of the infeasible component
    cause = err.__cause__
    assert isinstance(cause, InfeasibleKnowledge)
    assert "3 facts share the infeasible part (a, b, c)" in str(cause)
    assert cause.conflicts["fact"].tolist() == ["a", "b", "c"]


# ------------------------------------------------------------- (d) duality gap
def test_large_duality_gap_warns_and_marks_inaccurate(fig1, monkeypatch):
    """A backend whose dual bound is off by one nat (0.1 nat per record on Figure 1)."""

    class OffBound(ClosedForm):
        def solve(self, red, part):
            sol = super().solve(red, part)
            sol.bound += 1.0
            return sol

    monkeypatch.setattr(dispatch, "ClosedForm", OffBound)
    m = MaxEntModel(fig1)
    with pytest.warns(InaccuracyWarning, match=r"MAXENT: duality gap 1\.00e-01 nats/record"):
        result = m.solve()
    assert result.status == "optimal_inaccurate"
    assert result.certificate.gap == pytest.approx(0.1, abs=1e-12)
    assert result.certificate.primal_residual == 0.0  # the answer itself is exact


def test_small_gap_does_not_warn(fig1):
    with warnings.catch_warnings():
        warnings.simplefilter("error", InaccuracyWarning)
        result = MaxEntModel(fig1).solve()
    assert result.status == "optimal"


# ------------------------------------------------------------- (e) presolve conflict
def test_fact_violated_after_presolve_is_named(fig1):
    """P(BC | male) = 0 puts both women of buckets 1 and 2 on Breast Cancer: 2 of the 4
    women, so P(BC | female) = 0.4 cannot hold once presolve has fixed them."""
    m = MaxEntModel(fig1)
    m.add(m.P("Breast Cancer", gender="male") == 0, name="a")
    m.add(m.P("Breast Cancer", gender="female") == 0.4, name="b")
    forced = r"1 fact\(s\) cannot hold once the data's forced values are in \(b\)"
    with pytest.raises(InfeasibleKnowledge, match=forced) as info:
        FixForcedCells().apply(m.compile())
    assert info.value.conflicts["fact"].tolist() == ["b"]
    with pytest.raises(InfeasibleKnowledge) as info:
        m.solve()
    assert info.value.conflicts["fact"].tolist() == ["a", "b"]
    assert "(b)" in str(info.value.__cause__)
    m.remove("b")
    m.add(m.P("Breast Cancer", gender="female") == 0.5, name="b")  # what presolve fixed
    assert m.solve().certificate.knowledge_residual == 0.0


# ------------------------------------------------------------- (f) active set
def test_inequalities_active_and_slack_match_clarabel(fig1):
    m = MaxEntModel(fig1)
    m.add(m.P("Flu", gender="male") <= 0.25, name="active")  # 1/3 without it
    m.add(m.P("Flu", gender="male") >= 0.1, name="slack low")
    m.add(m.P("HIV", gender="female") <= 0.9, name="slack high")
    ours, ref = m.solve(solver="maxent"), m.solve(solver="CLARABEL")
    assert np.abs(ours.x - ref.x).max() <= 1e-6
    np.testing.assert_allclose(ours.duals.to_numpy(), ref.duals.to_numpy(), atol=1e-6)
    assert ours.duals["active"] > 1e-3
    assert ours.duals["slack low"] == 0.0 and ours.duals["slack high"] == 0.0
    assert ours.posterior(by="group").loc[("male", "college", 1), "Flu"] < 0.5
    male_flu = ours.x[((m.cells["gender"] == "male") & (m.cells["disease"] == "Flu")).to_numpy()]
    assert male_flu.sum() / 6 == pytest.approx(0.25, abs=1e-9)


def _random_release(seed, n=40):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.choice(["a0", "a1", "a2"], n),
            "sex": rng.choice(["F", "M"], n),
            "disease": rng.choice(["s0", "s1", "s2", "s3"], n),
            "bucket": rng.integers(1, 6, n),
        }
    )


@pytest.mark.parametrize("seed", [1, 3])
def test_active_set_adds_and_drops_rows_and_matches_clarabel(seed, monkeypatch):
    """Upper bounds P(s | q) <= (true share) + 0.02 for every (q, s): more than 8 violated
    at the start (added a quarter at a time), and rows added that turn out slack (their
    multiplier goes negative: dropped)."""
    calls = []
    real = newton._next_active

    def spy(active, bad_mu, bad_slack, violation):
        calls.append((int(bad_mu.sum()), int(bad_slack.sum())))
        return real(active, bad_mu, bad_slack, violation)

    monkeypatch.setattr(newton, "_next_active", spy)
    frame = _random_release(seed)
    m = MaxEntModel(Bucketized(frame, qi=["age", "sex"], sa="disease", group="bucket"))
    for (a, s), g in frame.groupby(["age", "sex"]):
        for d in sorted(frame["disease"].unique()):
            p = min(1.0, float((g["disease"] == d).mean()) + 0.02)
            m.add(m.P(d, age=a, sex=s) <= p, name=f"{a} {s} {d}")
    ours = m.solve(solver="maxent")
    assert any(slack > 8 for _, slack in calls)  # many violated rows at once
    assert any(mu > 0 for mu, _ in calls)  # a row dropped from the active set
    ref = m.solve(solver="CLARABEL")
    assert np.abs(ours.x - ref.x).max() <= 1e-6
    np.testing.assert_allclose(ours.duals.to_numpy(), ref.duals.to_numpy(), atol=1e-6)
    assert (ours.duals >= 0).all()
    res = ours.fact_residuals
    slack = [name for name in ours.duals.index if ours.duals[name] == 0]
    assert slack and all(res[name] == 0 for name in slack)
    assert ours.certificate.primal_residual <= 1e-9 and abs(ours.certificate.gap) <= 1e-9


# ------------------------------------------------------------- (g) convex conflicts
def test_conflict_with_a_convex_fact_is_explained(fig1):
    """P(Flu | male)^2 <= 0.04 (so at most 0.2) against P(Flu | male) = 0.3; both are
    feasible alone (P(Flu | male) ranges over [1/6, 1/2])."""
    m = MaxEntModel(fig1)
    m.add(cp.square(m.P("Flu", gender="male")) <= 0.04, name="square")
    m.add(m.P("HIV", gender="female") <= 0.9, name="innocent")
    m.add(m.P("Flu", gender="male") == 0.3, name="linear")
    table = explain_infeasibility(m)
    assert table["fact"].tolist() == ["square", "linear"]
    assert table["sense"].tolist() == ["convex", "=="]
    with pytest.raises(InfeasibleKnowledge, match="square; linear") as info:
        m.solve()
    assert info.value.conflicts["fact"].tolist() == ["square", "linear"]
    m.remove("linear")
    m.add(m.P("Flu", gender="male") == 0.2, name="linear")  # the boundary: feasible
    assert explain_infeasibility(m).empty
    assert m.solve().certificate.primal_residual <= 1e-6


# ------------------------------------------------------------- (h) options by name
@pytest.mark.parametrize(
    "solver, listed",
    [
        (None, "valid options: max_iter, newton_tol or time_limit"),
        ("maxent", "valid options: max_iter, newton_tol or time_limit"),
        ("CLARABEL", "max_iter"),
        ("ECOS", "max_iters"),
        ("SCS", "eps_abs"),
    ],
)
def test_unknown_option_lists_the_valid_ones(flu, solver, listed):
    name = "MAXENT" if solver in (None, "maxent") else solver
    unknown = f"unknown option 'maxiter' for solver '{name}'"
    with pytest.raises(SolverOptionError, match=unknown) as e:
        flu.solve(solver=solver, maxiter=5)
    assert listed in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"max_iter": "a"}, "max_iter='a' for solver 'MAXENT' must be an integer >= 1"),
        ({"max_iter": 0}, "max_iter=0 for solver 'MAXENT' must be an integer >= 1"),
        ({"max_iter": True}, "max_iter=True for solver 'MAXENT' must be an integer >= 1"),
        ({"newton_tol": -1}, "newton_tol=-1 for solver 'MAXENT' must be a number > 0"),
        ({"newton_tol": float("nan")}, "newton_tol=nan for solver 'MAXENT' must be a number"),
        ({"time_limit": 0}, "time_limit=0 for solver 'MAXENT' must be a number > 0"),
        ({"solver": "SCS", "eps_abs": "x"}, "eps_abs='x' for solver 'SCS' must be a number"),
        ({"solver": "ECOS", "max_iters": 2.5}, "max_iters=2.5 for solver 'ECOS' must be an"),
        ({"tol": -1}, "tol=-1 must be a number > 0 .the certificate's tolerance."),
        ({"tol": 0}, "tol=0 must be a number > 0"),
    ],
)
def test_ill_typed_options_raise(flu, options, message):
    with pytest.raises(SolverOptionError, match=message):
        flu.solve(**options)


def test_tol_is_not_read_as_contradictory_facts(flu):
    with pytest.raises(SolverOptionError) as info:
        flu.solve(tol=-1)
    assert not isinstance(info.value, InfeasibleKnowledge)
    assert "contradict" not in str(info.value)


@pytest.mark.parametrize("solver", ["CLARABEL", "SCS", "ECOS"])
def test_client_with_a_conic_solver_raises(flu, solver):
    with pytest.raises(SolverOptionError, match="client= .Dask. works with solver='maxent' only"):
        flu.solve(solver=solver, client="local")


def test_bad_client_string_raises(flu):
    with pytest.raises(SolverOptionError, match="client must be a dask Client or 'local'"):
        flu.solve(client="remote")


def test_valid_solver_options_are_used(flu):
    ref = flu.solve()
    scs = flu.solve(solver="SCS", eps_abs=1e-7)
    opts = scs.solver_stats["options"]
    assert opts["eps_abs"] == 1e-7 and opts["eps_rel"] == 1e-6  # ours over the defaults
    assert scs.certificate.ok and scs.certificate.primal_residual <= 1e-6
    assert abs(scs.certificate.gap) <= 1e-6
    np.testing.assert_allclose(scs.x, ref.x, atol=1e-6)
    ours = flu.solve(solver="maxent", newton_tol=1e-12, max_iter=50)
    assert ours.solver_stats["options"] == {"newton_tol": 1e-12, "max_iter": 50}
    np.testing.assert_allclose(ours.x, ref.x, atol=1e-10)
    ecos = flu.solve(solver="ecos", max_iters=100)  # names are not case sensitive
    assert ecos.solver_stats["solver"] == "ECOS"
    assert ecos.solver_stats["options"] == {"max_iters": 100}


# ------------------------------------------------------------- (i) solvers
def test_uninstalled_solver_lists_the_installed_ones(flu):
    installed = exp_cone_solvers()
    assert "CLARABEL" in installed
    with pytest.raises(SolverNotInstalled) as info:
        flu.solve(solver="NO_SUCH_SOLVER")
    msg = str(info.value)
    assert "solver 'NO_SUCH_SOLVER' is not installed" in msg
    assert msg.endswith("installed solvers that can: " + ", ".join(installed + ["maxent"]))


def test_solver_without_the_exponential_cone_is_refused(flu):
    if "OSQP" not in cp.installed_solvers():
        pytest.skip("OSQP is not installed")
    with pytest.raises(SolverNotInstalled, match="'OSQP' is installed but cannot handle"):
        flu.solve(solver="OSQP")
