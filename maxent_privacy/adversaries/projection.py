"""The projections of the deFinetti attack (:mod:`.definetti`): a learner's P(s | QI)
onto the tables a model allows.

* :class:`Solves`: each round one certified ``model.solve(prior=...)`` (any model: pooled
  and generalized releases, hard facts);
* :class:`Scaling`: one release whose components all have the closed form (no facts):
  the I-projection of each bucket
  (:func:`~maxent_privacy.solve.matrix_scaling.bucket_scaling`, warm-started from the
  previous round's factors), the class and value totals checked by our own arithmetic
  each round; the last prior is then solved and certified once by ``model.solve(prior=...)``.

Both return the expected table ``counts[c, s]`` (record classes x values) as a vector
over the entries a table can make positive (:class:`Support`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import SolverFailed
from ..solve.matrix_scaling import bucket_scaling

__all__ = ["Solves", "Scaling", "Support", "expected_table", "projector"]

#: the largest relative miss of a class or value total a scaling round may leave
TOTALS_TOL = 1e-9
#: each round's matrix scaling stops when every total is met to this (relative): a tenth
#: of what the round's check allows, and saves Newton steps against the solve's own 1e-12
#: (``python -m benchmarks adversaries``, ``benchmarks/RESULTS.md``)
ROUND_TOL = 1e-10


def value_index(column: pd.Series, values: list) -> np.ndarray:
    """The position of each entry of ``column`` in ``values`` (by its distinct entries,
    faster than looking up every one)."""
    codes, distinct = pd.factorize(column)
    return pd.Index(values).get_indexer(distinct)[codes]


def _cell_entries(result, values: list) -> tuple[np.ndarray, tuple[int, int]]:
    """Each cell's (class, value) entry, flat in the dense classes x ``values`` table,
    and that table's shape."""
    model = result.model
    cells = result.cell_table()
    flat = cells["cls"].to_numpy() * len(values) + value_index(cells[model.sa], values)
    return flat, (len(model.classes), len(values))


def expected_table(result, values: list) -> np.ndarray:
    """counts[c, s] of ``result``'s table (classes of the model x ``values``)."""
    flat, shape = _cell_entries(result, values)
    return np.bincount(flat, weights=result.x, minlength=shape[0] * shape[1]).reshape(shape)


class Support:
    """The (class, value) entries that some table the release allows makes positive
    (those with a cell): the attack's tables as vectors over them, a fifth of the dense
    classes x values table on Anatomy releases of Adult.

    ``of(table)``: a dense table's vector; ``dense(v)``: back; ``table(result)``: the
    vector of a result of the model; ``cls``, ``col``: each entry's class and value;
    ``n``: each entry's class size; ``real``: the positions of real people's entries (not
    counterfeit records'); ``entry``: each value cell's entry."""

    def __init__(self, result, values: list, real: np.ndarray):
        flat, self.shape = _cell_entries(result, values)
        mark = np.zeros(self.shape[0] * self.shape[1], dtype=bool)
        mark[flat] = True
        self.idx = np.flatnonzero(mark)
        self.entry = np.searchsorted(self.idx, flat)
        self.cls, self.col = np.divmod(self.idx, len(values))
        self.n = np.asarray(result.model.classes["n"], dtype=float)[self.cls]
        self.real = np.flatnonzero(real[self.cls])

    def of(self, table: np.ndarray) -> np.ndarray:
        return np.asarray(table).take(self.idx)

    def dense(self, v: np.ndarray) -> np.ndarray:
        out = np.zeros(self.shape[0] * self.shape[1])
        out.put(self.idx, v)
        return out.reshape(self.shape)

    def table(self, result) -> np.ndarray:
        """The vector of ``result``'s table (a result of the same model)."""
        return np.bincount(self.entry, weights=result.x, minlength=len(self.idx))


def check(result, it: int) -> None:
    """Every iterate is a table the release and the facts allow (certificate checked)."""
    if not result.certificate.ok:
        raise SolverFailed(
            f"deFinetti round {it}: the projected table misses the release's rows "
            f"(residual {result.certificate.primal_residual:.1e}): {result.certificate}"
        )


class Solves:
    """Each round a certified ``model.solve(prior=...)``; a round maps a prior to the
    projected table as a vector over ``support`` (a :class:`Support`)."""

    def __init__(self, model, values: list, support: Support, solver=None):
        self.model, self.values, self.solver = model, values, solver
        self.support = support
        self.rounds = 0
        self.last = None  # the Result of the last round

    def solve(self, p: np.ndarray, presolve: bool = True):
        # the prior of real people's classes (counterfeit records' phantoms: flat)
        prior = pd.DataFrame(p[~self.model.structure.phantom], columns=self.values)
        self.rounds += 1
        result = self.model.solve(solver=self.solver, prior=lambda _qi: prior, presolve=presolve)
        check(result, self.rounds)
        return result

    def __call__(self, p: np.ndarray) -> np.ndarray:
        self.last = self.solve(p)
        return self.support.table(self.last)

    def final(self, p: np.ndarray):
        """The certified Result of the round with prior ``p``: the last one solved (each
        round is a full certified solve), else a solve with ``p``."""
        return self.last if self.last is not None else self.solve(p)

    def snapshot(self):
        """What a failed round must not change (here: nothing; each round solves anew)."""
        return None

    def restore(self, saved) -> None:
        """Undo a failed round's changes to the warm start (:meth:`snapshot`)."""


class Scaling(Solves):
    """Warm-started matrix scaling per bucket (one release, every component closed)."""

    def __init__(self, model, values: list, support: Support, result, solver=None):
        super().__init__(model, values, support, solver)
        s = model.structure
        free = ~np.asarray(result.fixed)[s.value_cell]
        self.cls = s.cell_class[s.value_cell][free]
        self.gs = s.cell_sa[s.value_cell][free]
        self.n = s.cell_n[s.value_cell][free]
        # each free cell's entry of the support (where its count goes) and that entry's
        # place in the dense classes x values prior (where its weight is read); the fixed
        # cells' sum is a constant
        self.flat = support.entry[free]
        self.prior_at = support.idx[self.flat]
        keep = ~free
        self.base = np.bincount(
            support.entry[keep], weights=result.x[keep], minlength=len(support.idx)
        )
        x_free = result.x[free]
        self.R = np.bincount(self.cls, weights=x_free, minlength=len(s.class_n))
        self.C = np.bincount(self.gs, weights=x_free, minlength=len(s.sa_n))
        self.scaling = bucket_scaling(self.cls, self.gs, s.sa_bucket[self.gs], self.R, self.C)

    @staticmethod
    def applies(model, result) -> bool:
        stats = result.solver_stats
        return (
            model.structure.kind == "single"
            and not model.facts
            and stats.get("solved", 1) == 0
            and str(stats.get("solver")).upper() == "MAXENT"
        )

    def __call__(self, p: np.ndarray) -> np.ndarray:
        self.rounds += 1
        w = self.n * p.take(self.prior_at)
        cls, gs = self.cls, self.gs
        x = self.scaling(w, ROUND_TOL)
        # our own check of the round: every class and value total of the release
        rows = np.abs(np.bincount(cls, weights=x, minlength=len(self.R)) - self.R)
        cols = np.abs(np.bincount(gs, weights=x, minlength=len(self.C)) - self.C)
        worst = max(rows.max(initial=0.0), cols.max(initial=0.0)) / max(self.R.max(), 1.0)
        if worst > TOTALS_TOL or not np.all(x >= 0):
            raise SolverFailed(
                f"deFinetti round {self.rounds}: scaling missed a total by {worst:.1e}"
            )
        counts = np.bincount(self.flat, weights=x, minlength=len(self.base))
        return counts + self.base

    def final(self, p: np.ndarray):
        # one release, no facts, every cell's prior > 0: a bucket's margins are positive,
        # so no cell is forced to 0 and presolve has nothing to find (it is a third of
        # this solve's time)
        return self.solve(p, presolve=False)

    def snapshot(self):
        return self.scaling.snapshot()

    def restore(self, saved) -> None:
        self.scaling.restore(saved)


def projector(model, values: list, result, support: Support, solver=None) -> Solves:
    """:class:`Scaling` where it applies, else :class:`Solves`."""
    if solver in (None, "maxent") and Scaling.applies(model, result):
        return Scaling(model, values, support, result, solver)
    return Solves(model, values, support, solver)
