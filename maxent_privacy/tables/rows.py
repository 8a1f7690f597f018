"""Every row the model of tables holds, stacked: published cells, the total, the
statistics and the hard facts, as ``lower <= M y <= upper`` with a label per row; and
the explanation of tables that no table of records satisfies.

>>> import pandas as pd
>>> from maxent_privacy import Tabulated
>>> from maxent_privacy.tables.system import build_system
>>> a = Tabulated(pd.DataFrame({"a": [0, 1], "count": [2, 1]}), qi=["a"], name="A")
>>> b = Tabulated(pd.DataFrame({"a": [0, 1], "count": [1, 2]}), qi=["a"], name="B")
>>> explain(all_rows(build_system([a, b]), []))
Traceback (most recent call last):
...
maxent_privacy.errors.InconsistentTables: the published rows disagree by 2 records: \
table 'A' row 1 (a=0: 2) moves 1, table 'A' row 2 (a=1: 1) moves 1
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import InconsistentTables
from ..solve.highs import pass_lp, silent_highs
from .system import TableSystem

__all__ = ["Rows", "all_rows", "explain", "highs_run"]


@dataclass
class Rows:
    """``lower <= M y <= upper``; ``labels`` name the rows, ``kind`` says what each is
    ("published", "total", "statistic", "fact")."""

    M: sp.csr_array
    lower: np.ndarray
    upper: np.ndarray
    labels: list
    kind: np.ndarray

    @property
    def n(self) -> int:
        return self.M.shape[1]

    def forced_zeros(self) -> np.ndarray:
        """Combinations a row of nonnegative coefficients with upper bound 0 forces to 0."""
        M = sp.csr_array(self.M)
        hit = (_nonneg_rows(M) & (self.upper <= 0)).astype(float)
        return np.asarray(M.T @ hit) > 0  # one pass over the entries

    def split(self, keep: np.ndarray):
        """The rows over the combinations ``keep`` as ``O y = b``, ``G y <= h`` (rows
        already implied by ``y >= 0`` and the empty rows left out)."""
        M = sp.csr_array(self.M[:, keep])
        nonneg = _nonneg_rows(M)
        empty = np.diff(M.indptr) == 0
        eq = (self.lower == self.upper) & ~empty
        up = ~eq & np.isfinite(self.upper) & ~empty
        low = ~eq & np.isfinite(self.lower) & ~empty & ~(nonneg & (self.lower <= 0))
        E, b = M[np.flatnonzero(eq)], self.lower[eq]
        G = sp.vstack([M[np.flatnonzero(up)], -M[np.flatnonzero(low)]], format="csr")
        h = np.concatenate([self.upper[up], -self.lower[low]])
        return sp.csr_array(E), b, sp.csr_array(G), h


def _nonneg_rows(M: sp.csr_array) -> np.ndarray:
    """True for a row with no negative coefficient."""
    out = np.ones(M.shape[0], dtype=bool)
    out[np.repeat(np.arange(M.shape[0]), np.diff(M.indptr))[M.data < 0]] = False
    return out


def all_rows(system: TableSystem, facts: list) -> Rows:
    """The published rows, the total, the statistics and the hard facts of ``facts``."""
    n = system.n
    parts = [(t.A, t.lower, t.upper, t.labels, "published") for t in system.tables]
    parts.append(
        (
            sp.csr_array((np.ones(n), np.arange(n), [0, n]), shape=(1, n)),
            [system.total],
            [system.total],
            [f"the total ({system.total:g} records)"],
            "total",
        )
    )
    E, e, el = system.stat_eq
    parts.append((E, e, e, el, "statistic"))
    G, g, gl = system.stat_ub
    parts.append((G, np.full(len(g), -np.inf), g, gl, "statistic"))
    for f in facts:
        if f.A is None:
            continue
        low = f.b if f.sense == "==" else np.full(len(f.b), -np.inf)
        parts.append((f.A, low, f.b, [f.name] * len(f.b), "fact"))
    return Rows(
        M=sp.vstack([sp.csr_array(p[0]) for p in parts], format="csr"),
        lower=np.concatenate([np.asarray(p[1], float) for p in parts]),
        upper=np.concatenate([np.asarray(p[2], float) for p in parts]),
        labels=[label for p in parts for label in p[3]],
        kind=np.concatenate([np.full(len(p[3]), p[4], dtype=object) for p in parts]),
    )


def highs_run(M, cost, row_lower, row_upper, col_upper=None, integral=False, time_limit=None):
    """A HiGHS model of ``min cost'y : row_lower <= M y <= row_upper, 0 <= y <= col_upper``,
    made (not run): the caller changes costs and runs it again (warm)."""
    import highspy

    inf = highspy.kHighsInf
    n = M.shape[1]
    cu = np.full(n, inf) if col_upper is None else np.where(np.isfinite(col_upper), col_upper, inf)
    h = silent_highs()
    pass_lp(
        h, M, cost,
        np.where(np.isfinite(row_lower), row_lower, -inf),
        np.where(np.isfinite(row_upper), row_upper, inf),
        np.zeros(n), cu, integral=integral,
    )  # fmt: skip
    if time_limit is not None:
        h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
    return h


def explain(rows: Rows) -> None:
    """Nothing when some ``y >= 0`` meets every row; else :class:`InconsistentTables`
    naming the rows that the smallest change (in records moved) touches, and by how much."""
    import highspy

    m, n = rows.M.shape
    eye = sp.identity(m, format="csr")
    M = sp.hstack([rows.M, eye, -eye], format="csr")
    cost = np.concatenate([np.zeros(n), np.ones(2 * m)])
    h = highs_run(M, cost, rows.lower, rows.upper)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return  # not proved inconsistent here: the solver says what went wrong
    x = np.asarray(h.getSolution().col_value)
    change = x[n : n + m] - x[n + m :]
    moved = float(np.abs(change).sum())
    if moved <= 1e-7:
        return
    hit = np.flatnonzero(np.abs(change) > 1e-7)
    hit = hit[np.argsort(-np.abs(change[hit]), kind="stable")]
    conflicts = pd.DataFrame(
        {
            "row": [rows.labels[i] for i in hit],
            "kind": rows.kind[hit],
            "change": change[hit],
        }
    )
    shown = ", ".join(f"{rows.labels[i]} moves {abs(change[i]):g}" for i in hit[:6])
    more = f" and {len(hit) - 6} more" if len(hit) > 6 else ""
    raise InconsistentTables(
        f"the published rows disagree by {moved:g} records: {shown}{more}", conflicts
    )
