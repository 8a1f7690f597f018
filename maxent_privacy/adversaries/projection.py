"""The projections of the deFinetti attack (:mod:`.definetti`): a learner's P(s | QI)
onto the tables a model allows.

* :class:`Solves`: each round one certified ``model.solve(prior=...)`` (any model: pooled
  and generalized releases, hard facts);
* :class:`Scaling`: one release whose components all have the closed form (no facts):
  the I-projection of each bucket
  (:func:`~maxent_privacy.solve.matrix_scaling.bucket_scaling`, warm-started from the
  previous round's factors), the class and value totals checked by our own arithmetic
  each round; the last prior is then solved and certified once by ``model.solve(prior=...)``.

Both return the expected table ``counts[c, s]`` (record classes x values).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import SolverFailed
from ..solve.matrix_scaling import bucket_scaling

__all__ = ["Solves", "Scaling", "expected_table", "projector"]

#: the largest relative miss of a class or value total a scaling round may leave
TOTALS_TOL = 1e-9


def expected_table(result, values: list) -> np.ndarray:
    """counts[c, s] of ``result``'s table (classes of the model x ``values``)."""
    model = result.model
    cells = result.cell_table()
    col = pd.Index(values).get_indexer(cells[model.sa])
    counts = np.zeros((len(model.classes), len(values)))
    np.add.at(counts, (cells["cls"].to_numpy(), col), result.x)
    return counts


def check(result, it: int) -> None:
    """Every iterate is a table the release and the facts allow (certificate checked)."""
    if not result.certificate.ok:
        raise SolverFailed(
            f"deFinetti round {it}: the projected table misses the release's rows "
            f"(residual {result.certificate.primal_residual:.1e}): {result.certificate}"
        )


class Solves:
    """Each round a certified ``model.solve(prior=...)``."""

    def __init__(self, model, values: list, solver=None):
        self.model, self.values, self.solver = model, values, solver
        self.rounds = 0

    def solve(self, p: np.ndarray):
        # the prior of real people's classes (counterfeit records' phantoms: flat)
        prior = pd.DataFrame(p[~self.model.structure.phantom], columns=self.values)
        self.rounds += 1
        result = self.model.solve(solver=self.solver, prior=lambda _qi: prior)
        check(result, self.rounds)
        return result

    def __call__(self, p: np.ndarray) -> np.ndarray:
        self.last = self.solve(p)
        return expected_table(self.last, self.values)

    def final(self, p: np.ndarray):
        """The certified Result of the last round (``p``: its prior)."""
        return self.last


class Scaling(Solves):
    """Warm-started matrix scaling per bucket (one release, every component closed)."""

    def __init__(self, model, values: list, result, solver=None):
        super().__init__(model, values, solver)
        s = model.structure
        cells = result.cell_table()
        free = ~np.asarray(result.fixed)[s.value_cell]
        self.cls = s.cell_class[s.value_cell][free]
        self.gs = s.cell_sa[s.value_cell][free]
        self.col = pd.Index(values).get_indexer(cells[model.sa])[free]
        self.n = s.cell_n[s.value_cell][free]
        self.base = np.zeros((len(model.classes), len(values)))  # the fixed cells
        keep = ~free
        np.add.at(
            self.base,
            (cells["cls"].to_numpy()[keep], pd.Index(values).get_indexer(cells[model.sa][keep])),
            result.x[keep],
        )
        self.flat = self.cls * len(values) + self.col  # cell -> (class, value) entry
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
        w = self.n * p[self.cls, self.col]
        cls, gs = self.cls, self.gs
        x = self.scaling(w)
        # our own check of the round: every class and value total of the release
        rows = np.abs(np.bincount(cls, weights=x, minlength=len(self.R)) - self.R)
        cols = np.abs(np.bincount(gs, weights=x, minlength=len(self.C)) - self.C)
        worst = max(rows.max(initial=0.0), cols.max(initial=0.0)) / max(self.R.max(), 1.0)
        if worst > TOTALS_TOL or not np.all(x >= 0):
            raise SolverFailed(
                f"deFinetti round {self.rounds}: scaling missed a total by {worst:.1e}"
            )
        counts = np.bincount(self.flat, weights=x, minlength=self.base.size)
        return counts.reshape(self.base.shape) + self.base

    def final(self, p: np.ndarray):
        return self.solve(p)


def projector(model, values: list, result, solver=None) -> Solves:
    """:class:`Scaling` where it applies, else :class:`Solves`."""
    if solver in (None, "maxent") and Scaling.applies(model, result):
        return Scaling(model, values, result, solver)
    return Solves(model, values, solver)
