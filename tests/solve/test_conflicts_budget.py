"""Contradictory knowledge found in seconds, explained within a time budget (issue 21,
item 3): the explanation's LPs, its ``time_limit`` and what the message says when it is
cut short."""

import time

import numpy as np
import pytest
from paper_models import benchmark

from maxent_privacy import Bucketized, InfeasibleKnowledge, MaxEntModel, datasets
from maxent_privacy.solve import conflicts
from maxent_privacy.solve.conflicts import conflict_moves, explain_infeasibility, explained


@pytest.fixture
def contradiction():
    m = MaxEntModel(
        Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"], sa="disease", group="bucket")
    )
    m.add(m.P("Flu", gender="male") == 0.3, name="a")
    m.add(m.P("Flu", gender="male") == 0.5, name="b")
    m.add(m.P("HIV", gender="female") <= 0.9, name="c")
    return m


def test_the_whole_explanation_without_a_limit(contradiction):
    table = explain_infeasibility(contradiction)
    assert table["fact"].tolist() == ["a", "b"]
    assert table.attrs == {"cut_short": False, "irreducible": True}
    moves = conflict_moves(contradiction, table)
    assert moves.attrs["cut_short"] is False and moves.attrs["moves_left"] == 0
    np.testing.assert_allclose(moves["move"], [0.2, 0.2])


def test_no_time_left_keeps_what_is_proved(contradiction):
    table = explain_infeasibility(contradiction, time_limit=0)
    assert table.empty and table.attrs["cut_short"]
    full = explain_infeasibility(contradiction)
    moves = conflict_moves(contradiction, full, time_limit=0)
    assert moves.attrs["cut_short"] and moves.attrs["moves_left"] == 2
    assert moves["move"].isna().all() and moves["fact"].tolist() == ["a", "b"]


def test_a_filter_cut_short_returns_a_set_that_still_conflicts(contradiction, monkeypatch):
    calls = []
    real = conflicts._feasible

    def slow(*args, **kw):  # the piece's own check, then out of time
        calls.append(1)
        return real(*args, **kw) if len(calls) == 1 else None

    monkeypatch.setattr(conflicts, "_feasible", slow)
    table = explain_infeasibility(contradiction, time_limit=60)
    assert table["fact"].tolist() == ["a", "b", "c"]  # all of the piece: still infeasible
    assert table.attrs == {"cut_short": True, "irreducible": False}


def test_the_message_says_what_was_cut_short(contradiction):
    err = InfeasibleKnowledge("no table")
    out = explained(contradiction, err, time_limit=0)
    assert str(out).startswith("no table; the explanation was cut short at its 0 s limit")
    assert "no conflicting set of facts found yet" in str(out)
    with pytest.raises(InfeasibleKnowledge) as info:
        contradiction.solve(time_limit=1e-9)  # the solve's own budget bounds it too
    assert "cut short" in str(info.value)
    with pytest.raises(InfeasibleKnowledge) as info:
        contradiction.solve()
    assert str(info.value) == ("2 facts cannot hold together with the data: a; b (see .conflicts)")


def test_moves_cut_short_are_named(contradiction, monkeypatch):
    real = conflicts._move
    monkeypatch.setattr(
        conflicts, "_move", lambda m, f, *a, **k: None if f.name == "b" else real(m, f, *a, **k)
    )
    with pytest.raises(InfeasibleKnowledge) as info:
        contradiction.solve()
    msg = str(info.value)
    assert msg.startswith("2 facts cannot hold together with the data: a; b (see .conflicts)")
    assert "how far to move 1 of them not computed" in msg and "not be needed" not in msg
    assert info.value.conflicts["move"].isna().tolist() == [False, True]


@pytest.mark.parametrize("style", ["ARX", "sdcMicro"])
def test_hospital_contradiction_in_seconds(style):
    """benchmarks/infeasible.py at 2,000 patients: 67 s (ARX) and 14 s (sdcMicro)
    before issue 21, nearly all in HiGHS's search for dependent equations."""
    infeasible = benchmark("infeasible")

    t0 = time.perf_counter()
    out = infeasible.child(style, 2_000)
    assert time.perf_counter() - t0 < 30
    assert out["named"] and out["move"] > 0
    assert out["message"].startswith("1 fact cannot hold together with the data")
    assert "cut short" not in out["message"]
