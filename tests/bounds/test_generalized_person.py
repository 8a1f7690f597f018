"""Individuals' bounds on generalized releases with a population (issue 21, item 4).

An individual's bound needs less than their record class's: a table (or a possible world)
that gives the class one s makes s possible for each of them, one that leaves one of them
without it makes it not certain (``lp.Open``'s ``enough_hi``/``enough_lo``, the same in
``worlds.integral``). Those shortcuts must give the frame that the class's own bounds give
through the formula (upper = min(1, U), lower = max(0, L - (n - 1)); over worlds:
possible iff max count >= 1, certain iff min count = n), and the class's LP bounds must be
an independent LP's (scipy's HiGHS on the model's data rows, written here).
"""

from __future__ import annotations

import numpy as np
import pytest
from paper_models import mondrian_pair
from scipy.optimize import linprog

import maxent_privacy.bounds.targets as targets_module
from maxent_privacy.bounds.closed_form import Pieces
from maxent_privacy.bounds.lp import Open


def class_counts(model, frame) -> tuple[np.ndarray, np.ndarray]:
    """Per row of a ``by="class"`` frame: its class's size and person index."""
    cls = targets_module._person_class(model)
    c = cls.reindex(frame.index.get_level_values(0)).to_numpy()
    return model.classes["n"].to_numpy(dtype=float)[c], c


@pytest.mark.parametrize(("seed", "relaxed"), [(0, True), (1, True), (2, False), (3, False)])
def test_individuals_follow_from_their_class(seed, relaxed):
    model = mondrian_pair(60, seed, relaxed)
    person = model.bounds(by="person", exact=True, time_limit=300)
    person_lp = model.bounds(by="person", time_limit=300)
    share = model.bounds(by="class", exact=True, time_limit=300)
    n, _ = class_counts(model, share)
    assert (n >= 2).any()  # classes of several people: the shortcuts are used
    assert person["exact"].all() and share["exact"].all()
    assert person["certified"].all() and person_lp["certified"].all()
    lo, hi = share["lower"].to_numpy() * n, share["upper"].to_numpy() * n
    lp_lo, lp_hi = share["lp_lower"].to_numpy() * n, share["lp_upper"].to_numpy() * n
    # over possible worlds: possible iff some world gives the class one s, certain iff
    # every world gives it to all of them
    assert np.array_equal(person["upper"].to_numpy(), (hi >= 0.5).astype(float))
    assert np.array_equal(person["lower"].to_numpy(), (lo >= n - 0.5).astype(float))
    # over fractional tables: the formula on the class's LP counts
    want_lo, want_hi = np.maximum(0.0, lp_lo - (n - 1)), np.minimum(1.0, lp_hi)
    for frame, low, high in ((person, "lp_lower", "lp_upper"), (person_lp, "lower", "upper")):
        np.testing.assert_allclose(frame[low].to_numpy(), want_lo, atol=1e-7)
        np.testing.assert_allclose(frame[high].to_numpy(), want_hi, atol=1e-7)


@pytest.mark.parametrize("relaxed", [True, False])
def test_class_lp_counts_against_an_independent_lp(relaxed):
    model = mondrian_pair(50, 4, relaxed)
    share = model.bounds(by="class", time_limit=300)
    n, c = class_counts(model, share)
    A, b, _ = targets_module.data_rows(model)
    cells = model.cells
    z = targets_module._person_mask(model)
    rng = np.random.default_rng(0)
    several = np.flatnonzero(n >= 2)
    pick = np.concatenate([rng.choice(several, min(6, len(several)), replace=False),
                           rng.choice(len(share), 6, replace=False)])  # fmt: skip
    for i in pick:
        s = share.index[i][-1]
        obj = z & (cells["cls"].to_numpy() == c[i]) & (cells[model.sa] == s).to_numpy()
        obj = obj.astype(float)
        kw = dict(A_eq=A, b_eq=b, bounds=(0, None), method="highs")
        low, high = linprog(obj, **kw), linprog(-obj, **kw)
        assert low.status == 0 and high.status == 0
        got = share.iloc[i][["lower", "upper"]].to_numpy(dtype=float) * n[i]
        assert got == pytest.approx((low.fun, -high.fun), abs=1e-7), share.index[i]


def test_a_table_that_goes_far_enough_settles_an_individual():
    """A class of 3 whose cover allows 3: a table with 1 of them holding s settles their
    upper bound (at the cover, the gap what is left), one with 2 their lower bound 0;
    with the defaults (the class's own bounds) the same table settles neither."""

    class Tables:  # what lp.Seen offers Open.settle
        best_hi = np.array([1.0])
        best_lo = np.array([2.0])

    class Stats:
        pool_hits = 0

    pieces = Pieces(np.zeros(1, dtype=int), np.zeros(1, dtype=int), None)
    assert np.isinf(pieces.enough_hi).all() and (pieces.enough_lo == 0).all()
    person = Open(1, np.array([1.0]), np.array([2.0]))
    share = Open(1, pieces.enough_hi, pieces.enough_lo)
    for op in (person, share):
        op.U[:] = 3.0
    assert person.settle(Tables(), Stats()) == 2
    assert (person.hi_val[0], person.hi_gap[0]) == (3.0, 2.0)
    assert (person.lo_val[0], person.lo_gap[0]) == (0.0, 2.0)
    assert share.settle(Tables(), Stats()) == 0
    assert np.isnan(share.hi_val[0]) and np.isnan(share.lo_val[0])
