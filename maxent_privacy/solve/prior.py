"""Maximum entropy relative to a prior (minimum cross-entropy, the I-projection).

``model.solve(prior=Q)`` maximizes ``-sum x log(x / (n_c q_c[s]))`` instead of
``-sum x log(x / n_c)``: the table the release and the facts allow that is closest, in
Kullback-Leibler divergence, to the belief ``Q`` (a distribution over sensitive values per
record class). Only the base measure of each cell changes, from the class size ``n_c`` to
``n_c q_c[s]``; the rows, the presolve, the components, our Newton solver, the conic
path (``-cp.sum(cp.rel_entr(x, n * q))``) and the certificate read the base measure from
``structure.cell_n`` and so take the prior as they are. Two things do change:

* the closed form of Du et al. Eq. (9) holds for a uniform base only: a problem with a
  prior (:attr:`~.problem.MaxEntProblem.weighted`) solves every component numerically;
* a cell whose prior is 0 can hold no record: it is fixed at 0 before the solve, and when
  the release (with the hard facts) needs it, the error names its class and value.

Each row of ``Q`` is scaled to sum 1 (only its shape matters: a constant factor per class
shifts the objective by a constant). A uniform ``Q`` gives ``solve()``'s answer.

>>> import pandas as pd
>>> from maxent_privacy import Bucketized, MaxEntModel, datasets
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                                sa="disease", group="bucket"))
>>> flat = model.solve().posterior()
>>> q = pd.DataFrame(1.0, index=flat.index, columns=flat.columns)
>>> bool(((model.solve(prior=q).posterior() - flat).abs().max().max() < 1e-8))
True
"""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pandas as pd

from ..errors import InfeasibleKnowledge, KnowledgeError
from .highs import run_lp

__all__ = ["cell_prior", "with_prior", "check_zero_prior"]


def _table(model, prior) -> pd.DataFrame:
    """The prior as a frame with one row per record class (columns: values).

    Counterfeit records (the phantom classes of
    :mod:`~maxent_privacy.releases.counterfeits`) have no QI value and no one's belief
    speaks of them: ``prior`` covers the real classes, the phantoms get a flat row."""
    phantom = model.structure.phantom
    if phantom.any():
        real = model.classes.index[~phantom]
        table = _real_table(model, prior, model.classes[~phantom])
        full = pd.DataFrame(1.0, index=model.classes.index, columns=table.columns)
        full.loc[real] = table.to_numpy()
        return full.reset_index(drop=True)
    return _real_table(model, prior, model.classes)


def _real_table(model, prior, classes) -> pd.DataFrame:
    """:func:`_table` for ``classes`` (those of real people)."""
    qi = list(model.qi)
    if callable(prior) and not isinstance(prior, pd.DataFrame):
        out = prior(classes[qi].reset_index(drop=True))
        if not isinstance(out, pd.DataFrame):
            raise KnowledgeError(
                "prior: the callable must return a DataFrame with one row per record class "
                f"and the sensitive values as columns, got {type(out).__name__}"
            )
        if len(out) != len(classes):
            raise KnowledgeError(
                f"prior: the callable returned {len(out)} rows for {len(classes)} record classes"
            )
        return out.reset_index(drop=True)
    if not isinstance(prior, pd.DataFrame):
        raise KnowledgeError(
            "prior must be a DataFrame indexed like posterior() (the QI values; columns: "
            f"the sensitive values) or a callable of the classes' QI frame, got "
            f"{type(prior).__name__}"
        )
    names = list(prior.index.names)
    if sorted(map(str, names)) != sorted(map(str, qi)):
        raise KnowledgeError(
            f"prior: its index names {names} are not the quasi-identifiers {qi} "
            "(index it like result.posterior())"
        )
    if prior.index.has_duplicates:
        dup = prior.index[prior.index.duplicated()][0]
        raise KnowledgeError(f"prior: the QI value {dup!r} has several rows")
    keys = pd.MultiIndex.from_frame(classes[names].astype(object))
    where = (
        prior.index.get_indexer(keys)
        if isinstance(prior.index, pd.MultiIndex)
        else (prior.index.get_indexer(keys.get_level_values(0)))
    )
    if (where < 0).any():
        miss = keys[int(np.flatnonzero(where < 0)[0])]
        raise KnowledgeError(f"prior: no row for the QI value {miss!r} (a record class has it)")
    return prior.iloc[where].reset_index(drop=True)


def cell_prior(model, prior) -> np.ndarray:
    """q per cell of ``model``: the prior's probability of the cell's value for the cell's
    class, each class's row scaled to sum 1. Errors name the QI value or sensitive value."""
    table = _table(model, prior)
    sa = model.sa
    values = model.cells[sa].to_numpy()
    columns = pd.Index(table.columns)
    col = columns.get_indexer(pd.Index(values, dtype=object))
    if (col < 0).any():
        miss = values[int(np.flatnonzero(col < 0)[0])]
        raise KnowledgeError(f"prior: no column for the sensitive value {miss!r}")
    try:
        Q = table.to_numpy(dtype=float)
    except (TypeError, ValueError) as exc:
        raise KnowledgeError(f"prior: its entries must be numbers ({exc})") from None
    bad = ~np.isfinite(Q) | (Q < 0)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise KnowledgeError(
            f"prior: entry {float(Q[r, c])!r} for value {columns[c]!r} is not a probability (>= 0)"
        )
    total = Q.sum(axis=1)
    empty = np.flatnonzero(total <= 0)
    if len(empty):
        key = tuple(model.classes[list(model.qi)].iloc[int(empty[0])])
        raise KnowledgeError(f"prior: the row of the QI value {key!r} is all 0")
    cls = model.structure.cell_class
    return Q[cls, col] / total[cls]


def with_prior(problem, q: np.ndarray):
    """``problem`` with base measure ``n_c q`` per cell (a copy; the model's own structure
    is untouched), marked :attr:`~.problem.MaxEntProblem.weighted`."""
    s = copy.copy(problem.structure)
    s.cell_n = problem.structure.cell_n * q
    return replace(problem, structure=s, weighted=True)


def check_zero_prior(model, problem, q: np.ndarray) -> np.ndarray:
    """The cells the prior gives 0 (fixed at 0 by the solve). Raises
    :class:`~maxent_privacy.errors.InfeasibleKnowledge` naming a class and value when every
    table the release and the hard linear facts allow puts records there (one LP:
    minimize their sum)."""
    zero = np.flatnonzero(q <= 0)
    if not len(zero):
        return zero
    A, b = problem.equalities()
    G = problem.F_in if problem.F_in.shape[0] else None
    h = problem.f_in if problem.F_in.shape[0] else None
    c = np.zeros(problem.n_cells)
    c[zero] = 1.0
    status, x = run_lp(c, A, b, G, h)
    if status != "optimal" or x is None:
        return zero  # no table at all: the solve says so (and explains it)
    need = zero[x[zero] > 1e-7]
    if len(need):
        j = int(need[np.argmax(x[need])])
        cells = model.cells
        who = {a: cells[a].iloc[j] for a in model.qi}
        raise InfeasibleKnowledge(
            f"the prior gives {model.sa} = {cells[model.sa].iloc[j]!r} probability 0 for the "
            f"record class {who}, but every table the release allows puts records there "
            f"(at least {x[need].sum():.6g} records in the cells the prior rules out)"
        )
    return zero
