"""``bounds(progress=...)``: a bar on standard error over the components whose bounds need
LPs (and, with ``exact``, integer programs), with the programs run and the seconds used."""

from __future__ import annotations

import pytest
from paper_models import mondrian_pair, two_box_model

from maxent_privacy.bounds import progress as progress_module
from maxent_privacy.bounds.arguments import BoundsArgumentError


def _model():
    model = two_box_model()
    model.add(model.P("c", sex="F") <= 0.5)
    return model


def test_the_bar_counts_each_phase_and_names_the_programs(capsys):
    frame = _model().bounds(by="person", exact=True, progress=True)
    err = capsys.readouterr().err
    assert "bounds" in err and "2/2" in err, err  # one batch: its LPs, its integer programs
    assert "LPs" in err and "integer programs" in err and "of 60 s" in err, err
    assert frame["exact"].all()


def test_no_bar_when_asked_or_when_small(capsys):
    _model().bounds(by="person", progress=False)
    _model().bounds(by="person")  # a few cells: below PROGRESS_LP_CELLS
    assert capsys.readouterr().err == ""


def test_large_lp_work_shows_it_by_default(capsys, monkeypatch):
    model = mondrian_pair(100, 0)
    monkeypatch.setattr(progress_module, "PROGRESS_LP_CELLS", model.n_cells)
    model.bounds(by="person")
    assert "bounds" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["yes", 1, 0.5])
def test_progress_is_none_true_false_or_a_function(bad):
    with pytest.raises(BoundsArgumentError, match="progress must be None, True/False or a func"):
        _model().bounds(progress=bad)


def test_a_function_gets_the_bar_s_lines(capsys):
    """``progress`` means one thing everywhere: a function gets one line of text per step."""
    lines = []
    frame = _model().bounds(by="person", exact=True, progress=lines.append)
    assert capsys.readouterr().err == ""
    assert lines and all(isinstance(t, str) and "\n" not in t for t in lines)
    assert lines[-1].startswith("bounds: 2 of 2 components"), lines
    assert frame["exact"].all()


def test_solve_takes_the_same_progress(capsys):
    lines = []
    _model().solve(progress=lines.append)
    assert capsys.readouterr().err == ""
    assert lines == ["maxent: 1 of 1 batches"]
    lines.clear()
    _model().solve(progress=lines.append, solver="CLARABEL")
    assert lines[-1].startswith("CLARABEL: 22 of 22 cells, largest 22 cells"), lines
    with pytest.raises(ValueError, match="progress must be None, True/False or a function"):
        _model().solve(progress="yes")
