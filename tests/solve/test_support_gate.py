"""Presolve's support-LP gate on a large piece (:mod:`maxent_privacy.solve.support`).

Two overlapping (relaxed) Mondrian releases of 80 % samples of 2,000 Adult people with their
populations make one piece of 78,395 cells. Fitting converges on it slowly but linearly
(no cell is forced to 0 beyond presolve's rows and flows). The first reading of the gate
(20 -> 40 sweeps) misses that; before the second reading its support LP ran into its 60 s
limit and found nothing, so ``solve()`` took 62 s instead of 3 s.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import MaxEntModel, datasets
from maxent_privacy.mondrian import mondrian
from maxent_privacy.solve import support


def overlapping_model(n=2_000, releases=2, seed=0) -> MaxEntModel:
    """``benchmarks/bounds.py --generalized n --releases r --boxes overlapping``, seed 0."""
    adult = datasets.load_adult().reset_index(drop=True)
    qi = list(datasets.ADULT_QI)
    rng = np.random.default_rng(n * 10 + releases + 100_000 * seed)
    people = adult.iloc[rng.choice(len(adult), n, replace=False)]
    people = people.set_index(pd.Index([f"p{i}" for i in range(n)], name="pid"))
    rels, pops = [], []
    for j in range(releases):
        sub = people.iloc[np.sort(rng.choice(n, int(0.8 * n), replace=False))]
        frame = sub[qi + ["education"]].reset_index(drop=True)
        rels.append(mondrian(frame, qi, "education", k=5 + j, c=0.5, relaxed=True))
        pops.append(sub[qi])
    return MaxEntModel(rels, populations=pops)


@pytest.fixture(scope="module")
def gate_log():
    """What rule 4 did on the instance, and the solve's result."""
    seen = []
    orig = support.PieceSupport.__call__

    def spy(self, fixed):
        out = orig(self, fixed)
        seen.append(dict(self.pieces))
        return out

    support.PieceSupport.__call__ = spy
    try:
        result = overlapping_model().solve()
    finally:
        support.PieceSupport.__call__ = orig
    return seen, result


def test_large_piece_passes_the_second_reading(gate_log):
    seen, result = gate_log
    assert seen, "rule 4 did not run"
    assert sum(s["LP"] for s in seen) == 0
    assert sum(s["scaling converges"] for s in seen) >= 1
    stats = result.solver_stats
    # nothing was left for the later proofs either: the gate was right
    assert stats["forced_zeros"] == {"dual certificate": 0, "LP": 0}
    assert stats["presolve_zeros"]["support LP"] == 0
    assert result.certificate.ok and result.certificate.data_residual < 1e-9


def test_forced_zero_fails_both_readings():
    """Sinkhorn's pattern [[1, 1], [0, 1]]: person 0 may hold a or b, person 1 only b,
    one group publishing a once and b once. Person 0 holds a in every table (their b cell
    is forced to 0) and fitting's residual decays like 1 / sweeps: the longer reading
    must not pass it. With person 1 free to hold a as well, both readings pass at once."""
    R, C = np.array([1.0, 1.0]), np.array([1.0, 1.0])
    forced = (np.array([0, 0, 1]), np.array([[0, 1, 1]]))  # cells (0, a), (0, b), (1, b)
    free = (np.array([0, 0, 1, 1]), np.array([[0, 1, 0, 1]]))
    for (cls, row_of), want in ((forced, False), (free, True)):
        piece, row_piece = np.zeros(len(cls), dtype=int), np.zeros(2, dtype=int)
        for sweeps in (support.GATE_SWEEPS, support.GATE_SWEEPS_LARGE):
            got = support.scaling_converges(cls, row_of, R, C, piece, row_piece, 1, sweeps)
            assert got.tolist() == [want], (want, sweeps)
