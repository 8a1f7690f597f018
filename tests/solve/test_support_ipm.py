"""Large support LPs go to HiGHS's interior point method (``support.LP_IPM_CELLS``); an
answer of it that is not clean (a ``t`` strictly between 0 and 1) goes to the simplex."""

from __future__ import annotations

import numpy as np
from paper_models import three_release_frames

from maxent_privacy import Bucketized, MaxEntModel
from maxent_privacy.solve import forced_zeros, support
from maxent_privacy.solve.presolve import FixForcedCells


def _three_releases() -> MaxEntModel:
    """support.py's example: P0 holds b in no world, which only all three releases show."""
    return MaxEntModel(
        [Bucketized(f, qi=["q"], sa="s", group="g", person="pid") for f in three_release_frames()]
    )


def _presolved(model):
    red, _ = FixForcedCells().apply(model.compile())
    return red


def _spy(monkeypatch, answer=None):
    """Record the solver of every support LP; ``answer``: replace the IPM's table."""
    calls = []
    original = forced_zeros.run_lp

    def run_lp(*args, solver=None, **kw):
        calls.append(solver)
        status, x = original(*args, solver=solver, **kw)
        if solver == "ipm" and answer is not None and x is not None:
            x = answer(x)
        return status, x

    monkeypatch.setattr(forced_zeros, "run_lp", run_lp)
    return calls


def test_a_large_piece_goes_to_the_ipm_with_the_same_zeros(monkeypatch):
    plain = _presolved(_three_releases())
    monkeypatch.setattr(support, "LP_IPM_CELLS", 1)
    calls = _spy(monkeypatch)
    red = _presolved(_three_releases())
    assert calls == ["ipm"]
    assert red.rules == plain.rules == {"rows": 0, "flows": 0, "support LP": 1}
    np.testing.assert_array_equal(red.fixed, plain.fixed)


def test_an_unclean_ipm_answer_goes_to_the_simplex(monkeypatch):
    plain = _presolved(_three_releases())
    monkeypatch.setattr(support, "LP_IPM_CELLS", 1)

    def halfway(x):  # every t at 1/2: no cell's support can be read off it
        out = x.copy()
        n = len(out)
        out[n // 2 : n - 1] = 0.5
        return out

    calls = _spy(monkeypatch, halfway)
    red = _presolved(_three_releases())
    assert calls == ["ipm", None]
    np.testing.assert_array_equal(red.fixed, plain.fixed)
