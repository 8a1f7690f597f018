"""Cells that no table makes positive (bounds step 1): the one-LP support against an LP per
cell, on generalized releases with a population whose people may sit in several groups."""

from __future__ import annotations

import numpy as np
import pytest
from paper_models import mondrian_pair
from scipy.optimize import linprog

from maxent_privacy.bounds.targets import data_rows
from maxent_privacy.solve.forced_zeros import max_support


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_max_support_is_every_cell_some_table_makes_positive(seed):
    model = mondrian_pair(40, seed)
    A, b, _ = data_rows(model)
    n = A.shape[1]
    support = max_support(A, b, None, None, np.ones(n, dtype=bool))
    assert support is not None
    best = np.array(
        [-linprog(-np.eye(1, n, i).ravel(), A_eq=A, b_eq=b, method="highs").fun for i in range(n)]
    )
    assert np.array_equal(support, best > 1e-7), (n, int(support.sum()), int((best > 1e-7).sum()))
    assert (~support).any()  # cells that no table fills (the test would be weaker without)


def test_bounds_agree_with_and_without_the_support_lp(monkeypatch):
    """The same bounds whether the zero cells come from rounds alone or from the one LP."""
    import maxent_privacy.bounds.lp as lp_module

    model = mondrian_pair(60, 3)
    fast = model.bounds(by="class", time_limit=120)
    monkeypatch.setattr(lp_module, "ZERO_ROUNDS", 10**6)
    slow = model.bounds(by="class", time_limit=120)
    np.testing.assert_allclose(fast["lower"], slow["lower"], atol=1e-7)
    np.testing.assert_allclose(fast["upper"], slow["upper"], atol=1e-7)
    assert fast["certified"].all() and slow["certified"].all()
