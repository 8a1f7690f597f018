"""Presolve's support-LP gate on a large piece (:mod:`maxent_privacy.solve.support`).

Two overlapping (relaxed) Mondrian releases of 80 % samples of 2,000 Adult people with their
populations (``paper_models.mondrian_pair(2000, 0)``) make one piece of 59,297 cells.
Fitting converges on it slowly but linearly (no cell is forced to 0 beyond presolve's rows
and flows): the first reading of the gate (20 -> 40 sweeps) misses that, the longer one
sees it in its first span (40 -> 80). Without the longer reading the piece's support LP
runs: on the benchmark's 78,395-cell instance of the same kind it ran into its 60 s limit
and found nothing, so ``solve()`` took 62 s instead of 2 s.
"""

from __future__ import annotations

import numpy as np
import pytest
from paper_models import mondrian_pair

from maxent_privacy.solve import support


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
        result = mondrian_pair(2_000, 0).solve()
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


def _spans():
    """The gate's readings as sweeps from the start: the first, then each doubling span of
    the longer reading (40 -> 80, ..., 320 -> 640)."""
    out, (start, end) = [support.GATE_SWEEPS], support.GATE_SWEEPS_LARGE
    while end <= support.GATE_LAST_SWEEP:
        out.append((start, end))
        start, end = end, 2 * end
    return out


def test_forced_zero_fails_every_reading():
    """Sinkhorn's pattern [[1, 1], [0, 1]]: person 0 may hold a or b, person 1 only b,
    one group publishing a once and b once. Person 0 holds a in every table (their b cell
    is forced to 0) and fitting's residual decays like 1 / sweeps: no span of the longer
    reading may pass it. With person 1 free to hold a as well, every reading passes."""
    R, C = np.array([1.0, 1.0]), np.array([1.0, 1.0])
    forced = (np.array([0, 0, 1]), np.array([[0, 1, 1]]))  # cells (0, a), (0, b), (1, b)
    free = (np.array([0, 0, 1, 1]), np.array([[0, 1, 0, 1]]))
    assert len(_spans()) == 5  # 20 -> 40, then 40 -> 80 up to 320 -> 640
    for (cls, row_of), want in ((forced, False), (free, True)):
        piece, row_piece = np.zeros(len(cls), dtype=int), np.zeros(2, dtype=int)
        for sweeps in _spans():
            got = support.scaling_converges(cls, row_of, R, C, piece, row_piece, 1, sweeps)
            assert got.tolist() == [want], (want, sweeps)


def test_the_second_reading_goes_on_from_the_first(monkeypatch):
    """The gate reads a large failing piece again by fitting on from the first reading's
    table, span after span: the forced zero fails them all, the free pattern passes at the
    first reading."""
    monkeypatch.setattr(support, "GATE_LARGE_CELLS", 1)
    calls = []
    original = support.scaling_converges

    def spy(*args, **kwargs):
        calls.append(args[7] if len(args) > 7 else kwargs.get("sweeps", support.GATE_SWEEPS))
        return original(*args, **kwargs)

    monkeypatch.setattr(support, "scaling_converges", spy)
    R, C = np.array([1.0, 1.0]), np.array([1.0, 1.0])
    one = np.ones(1, dtype=bool)
    forced = support._gate(
        np.array([0, 0, 1]), np.array([[0, 1, 1]]), (R, C), np.zeros(3, dtype=int),
        np.zeros(2, dtype=int), one, np.array([3]),
    )  # fmt: skip
    assert forced.tolist() == [False]
    # each span goes on from the last: 40, 80, 160, 320 more sweeps, not from the start
    assert calls == [support.GATE_SWEEPS, (1, 41), (1, 81), (1, 161), (1, 321)]
    calls.clear()
    free = support._gate(
        np.array([0, 0, 1, 1]), np.array([[0, 1, 0, 1]]), (R, C), np.zeros(4, dtype=int),
        np.zeros(2, dtype=int), one, np.array([4]),
    )  # fmt: skip
    assert free.tolist() == [True] and calls == [support.GATE_SWEEPS]


def _chain(n: int):
    """A piece whose only table is positive but far from the fitting's start: classes
    c0 .. c(n-1) of 10 records, values a and b; release 1 groups {c0, c1}, {c2, c3}, ...
    and release 2 groups {c1, c2}, {c3, c4}, ..., each publishing a and b 10 times; c0 and
    c(n-1) sit alone in release 2, with a 6 and 4 times. So c0 holds a 6 times, c1 4 times,
    c2 6 times, and so on. Fitting starts at 5 and 5 everywhere, and the news of the ends
    travels one class per sweep or so: linear convergence, slow for long chains."""
    cls = np.repeat(np.arange(n), 2)
    val = np.tile([0, 1], n)
    row_a = 2 * (cls // 2) + val
    row_b = n + 2 * ((cls + 1) // 2) + val
    C = np.full(n + 2 * (n // 2 + 1), 10.0)
    C[n : n + 2] = 6, 4
    C[-2:] = 4, 6
    return cls, np.vstack([row_a, row_b]), np.full(n, 10.0), C


def test_slow_linear_convergence_passes_a_later_span(monkeypatch):
    """The 40-class chain fails the first reading and the spans from 40 and 80 sweeps,
    and passes the span from 160 (as the 9,336-cell piece of ``benchmarks/solvers.py
    --sequences`` seed 8 passes the span from 320). It has no forced zero (its LP finds
    none), so the longer reading saves an LP; read over one span only (the gate before),
    it goes to the LP."""
    cls, row_of, R, C = _chain(40)
    piece, row_piece = np.zeros(len(cls), dtype=int), np.zeros(len(C), dtype=int)
    passed = [
        support.scaling_converges(cls, row_of, R, C, piece, row_piece, 1, sweeps).tolist()[0]
        for sweeps in _spans()
    ]
    assert passed == [False, False, False, True, True]
    cells = np.arange(len(cls))
    assert not support.support_zeros(cls, row_of, R, C, cells).any()
    monkeypatch.setattr(support, "GATE_LARGE_CELLS", 1)
    one, size = np.ones(1, dtype=bool), np.array([len(cls)])
    assert support._gate(cls, row_of, (R, C), piece, row_piece, one, size).tolist() == [True]
    monkeypatch.setattr(support, "GATE_LAST_SWEEP", support.GATE_SWEEPS_LARGE[1])
    assert support._gate(cls, row_of, (R, C), piece, row_piece, one, size).tolist() == [False]
