"""Iterative scaling: the maximum-entropy table when every row is a published count.

Each published table's rows are disjoint sets of combinations with coefficient 1, so the
dual's coordinate ascent over one table's rows is one vectorized step: scale the records
of each row so that its sum lands in ``[lower, upper]``, after undoing the row's own
earlier scaling (Hildreth's method, with Bregman projections for the entropy). On exact
counts this is iterative proportional fitting (Deming and Stephan); intervals (rounded
counts) keep their multiplier's sign, suppressed cells are no row. The multipliers are the
dual point whose bound :func:`~maxent_privacy.tables.solve.check` recomputes.

>>> import numpy as np
>>> fam = [Family(np.array([0, 0, 1, 1]), np.array([2.0, 1.0]), np.array([2.0, 1.0])),
...        Family(np.array([0, 1, 0, 1]), np.array([1.0, 2.0]), np.array([1.0, 2.0]))]
>>> y, nu, ok = iterative_scaling(fam, 3.0, 4)
>>> np.round(y, 6).tolist(), ok
([0.666667, 1.333333, 0.333333, 0.666667], True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

__all__ = ["Family", "iterative_scaling"]

#: a multiplier past this (a factor of e^40) means the scaling is running off to a
#: boundary: rows that disagree, or combinations they force to 0 (Newton's method and
#: its certificates take over)
DIVERGED = 40.0


@dataclass
class Family:
    """Disjoint rows over the combinations: ``row[z]`` (-1: in none), each row's
    ``lower`` and ``upper``."""

    row: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def __post_init__(self):
        inside = self.row >= 0
        #: the combinations in some row (None: all of them) and their rows
        self.at = None if inside.all() else np.flatnonzero(inside)
        self.rows = self.row if self.at is None else self.row[self.at]


def iterative_scaling(
    families: list, total: float, n: int, tol: float = 1e-9, max_cycles: int = 5000,
    seconds: float = 20.0, start=None,
):  # fmt: skip
    """``(y, nu, converged)``: the table, each family's row multipliers (log factors:
    > 0 where a lower bound holds, < 0 an upper bound) and whether every row is met
    within ``tol * total`` records. ``start``: a ``(y, nu)`` to go on from."""
    if start is None:
        y = np.full(n, total / max(n, 1))
        nu = [np.zeros(len(f.lower)) for f in families]
    else:
        y, nu = start[0].copy(), [v.copy() for v in start[1]]
    deadline = time.perf_counter() + seconds
    limit = tol * max(total, 1.0)
    for _ in range(max_cycles):
        worst = 0.0
        for k, f in enumerate(families):
            rows = f.rows
            s = np.bincount(rows, weights=y if f.at is None else y[f.at], minlength=len(f.lower))
            worst = max(worst, float(np.max(np.maximum(f.lower - s, s - f.upper), initial=0)))
            with np.errstate(divide="ignore", invalid="ignore"):
                s0 = s * np.exp(-nu[k])  # the row's sum without its own scaling
                target = np.clip(s0, f.lower, f.upper)
                new = np.where(s0 > 0, np.log(target / s0), 0.0)
            new = np.where(np.isfinite(new), new, 0.0)
            delta = new - nu[k]
            if np.abs(new).max(initial=0.0) > DIVERGED:
                return y, nu, False  # rows no table meets together, or zeros they force
            if np.any(delta):
                if f.at is None:
                    y *= np.exp(delta)[rows]
                else:
                    y[f.at] *= np.exp(delta)[rows]
                nu[k] = new
        if worst <= limit:
            return y, nu, True
        if time.perf_counter() > deadline:
            break
    return y, nu, False
