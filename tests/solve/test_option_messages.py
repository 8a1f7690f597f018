"""An unknown solver option is one short line (issue 39, item 2): the nearest valid options
first, ten at most, then "..." (Clarabel's message listed all 47 in 1,125 characters)."""

from __future__ import annotations

import pytest

from maxent_privacy import Bucketized, MaxEntModel, datasets
from maxent_privacy.errors import SolverOptionError
from maxent_privacy.solve.options import solver_options


@pytest.fixture
def flu():
    fig1 = Bucketized(
        datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket"
    )
    m = MaxEntModel(fig1)
    m.add(m.P("Flu", gender="male") == 0.3, name="flu")
    return m


@pytest.mark.parametrize(
    "solver, typo, nearest",
    [
        ("CLARABEL", "maxiter", "max_iter"),
        ("CLARABEL", "tol_gap_ab", "tol_gap_abs"),
        ("SCS", "eps_absolute", "eps_abs"),
        ("SCS", "maxiter", "max_iters"),
    ],
)
def test_the_nearest_options_come_first_and_ten_at_most(flu, solver, typo, nearest):
    with pytest.raises(SolverOptionError) as err:
        flu.solve(solver=solver, **{typo: 5})
    message = str(err.value)
    assert "\n" not in message and len(message) < 400
    head = f"unknown option {typo!r} for solver {solver!r}; did you mean {nearest!r}? "
    assert message.startswith(head + f"valid options: {nearest}, ")
    shown = message.split("valid options: ")[1].split(", ... (")[0].split(", ")
    assert len(shown) == 10 and set(shown) <= set(solver_options(solver))
    assert message.endswith(f", ... ({len(solver_options(solver))} in all)")


def test_no_near_option_lists_the_first_ten_alphabetically(flu):
    with pytest.raises(SolverOptionError) as err:
        flu.solve(solver="SCS", zzz=1)
    names = sorted(solver_options("SCS"))
    assert str(err.value) == (
        "unknown option 'zzz' for solver 'SCS'; valid options: "
        + ", ".join(names[:10])
        + f", ... ({len(names)} in all)"
    )
