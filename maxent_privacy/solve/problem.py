"""The compiled problem: data rows, fact rows, and the row map that keeps facts' names.

``compile_problem(model)`` is the only place the solve path reads the model: it stacks the
structure's data rows (class, shared and SA rows) and the facts' rows (equalities in
``F_eq``, inequalities in ``F_in``) once, and records in a :class:`RowMap` which rows
belong to which fact. Every later stage works on arrays; duals, residuals and conflict
messages come back by name through the row map.

>>> from maxent_privacy import MaxEntModel, Bucketized, datasets
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                                sa="disease", group="bucket"))
>>> model.add(model.P("Flu", gender="male") == 0.3, name="flu")
>>> model.add(model.P("HIV") <= 0.5, name="hiv")
>>> problem = model.compile()
>>> problem.F_eq.shape, problem.F_in.shape
((1, 27), (1, 27))
>>> problem.rows.facts_of("<=", [0])
['hiv']
"""

from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..knowledge.facts import Fact
from ..releases.structure import Structure

__all__ = ["MaxEntProblem", "RowMap", "compile_problem"]


@dataclass(frozen=True)
class RowMap:
    """Which stacked fact rows belong to which fact; built once by :func:`compile_problem`.

    ``names``, ``senses`` and ``scalar`` have one entry per fact, in the model's order;
    ``start`` and ``size`` place a linear fact's rows in ``F_eq`` (sense ``"=="``) or
    ``F_in`` (``"<="``); convex and soft facts have ``start = -1``.
    """

    names: tuple[str, ...]
    senses: tuple[str, ...]
    start: np.ndarray
    size: np.ndarray
    scalar: tuple[bool, ...]

    @classmethod
    def of(cls, facts: list[Fact]) -> RowMap:
        start, pos = [], {"==": 0, "<=": 0}
        for f in facts:
            if f.sense in pos:
                start.append(pos[f.sense])
                pos[f.sense] += f.size
            else:
                start.append(-1)
        return cls(
            names=tuple(f.name for f in facts),
            senses=tuple(f.sense for f in facts),
            start=np.array(start, dtype=int),
            size=np.array([f.size for f in facts], dtype=int),
            scalar=tuple(f.size == 1 and not f.shape for f in facts),
        )

    def _of_sense(self, sense: str) -> np.ndarray:
        return np.array([i for i, s in enumerate(self.senses) if s == sense], dtype=int)

    def facts_of(self, sense: str, rows) -> list[str]:
        """Names of the facts that own ``rows`` of ``F_eq`` (``"=="``) or ``F_in``."""
        which = self._of_sense(sense)
        if not len(which):
            return []
        starts = self.start[which]
        at = np.searchsorted(starts, np.asarray(rows, dtype=int), side="right") - 1
        return [self.names[which[j]] for j in at]

    def duals(self, nu_eq: np.ndarray, mu_in: np.ndarray, n_records: int) -> pd.Series:
        """One dual per fact row, nats per record (``name`` or ``name[i]``); NaN for
        convex and soft facts."""
        index, values = [], []
        for i, name in enumerate(self.names):
            sense, s, k = self.senses[i], self.start[i], self.size[i]
            if sense == "==":
                v = nu_eq[s : s + k] / n_records
            elif sense == "<=":
                v = mu_in[s : s + k] / n_records
            else:
                v = np.array([np.nan])
            if self.scalar[i]:
                index.append(name)
                values.append(float(v[0]))
            else:
                index.extend(f"{name}[{j}]" for j in range(len(v)))
                values.extend(float(vj) for vj in v)
        return pd.Series(values, index=pd.Index(index, name="fact"), name="dual", dtype=float)

    def residuals(self, problem: MaxEntProblem, x: np.ndarray) -> dict[str, float]:
        """Largest violation of each linear fact at ``x``, in the fact's own units."""
        r_eq = np.abs(problem.F_eq @ x - problem.f_eq)
        r_in = np.maximum(problem.F_in @ x - problem.f_in, 0.0)
        out = {}
        for i, name in enumerate(self.names):
            sense, s, k = self.senses[i], self.start[i], self.size[i]
            if sense in ("==", "<="):
                r = r_eq if sense == "==" else r_in
                out[name] = float(np.max(r[s : s + k], initial=0.0))
        return out


@dataclass(frozen=True)
class MaxEntProblem:
    """The maximum-entropy problem of a model, as arrays (count scale).

    maximize ``sum -x log(x / n)`` over ``x >= 0`` (``n = structure.cell_n``; placement
    cells use their value cell instead) subject to the data rows
    ``A_cls x = b_cls``, ``A_sh x = b_sh``, ``A_sa x = b_sa`` (:mod:`..structure`), the
    linear facts ``F_eq x = f_eq`` and ``F_in x <= f_in``, and the ``convex`` facts (convex
    constraints on ``x_var``, and soft penalties).
    """

    structure: Structure
    x_var: cp.Variable
    A_cls: sp.csr_array
    b_cls: np.ndarray
    A_sh: sp.csr_array
    b_sh: np.ndarray
    A_sa: sp.csr_array
    b_sa: np.ndarray
    F_eq: sp.csr_array
    f_eq: np.ndarray
    F_in: sp.csr_array
    f_in: np.ndarray
    eq_groups: tuple  # ((first row in F_eq, row groups) of facts whose rows share a Qv
    convex: tuple[Fact, ...]
    rows: RowMap
    #: the base measure is not the class size (a prior, :mod:`.prior`): matrix scaling
    #: instead of the closed form
    weighted: bool = False

    @property
    def n_cells(self) -> int:
        return self.structure.n_cells

    @property
    def n_records(self) -> int:
        return self.structure.n_records

    @property
    def single(self) -> bool:
        """One release: one SA row per cell (the bucket-flow rules apply)."""
        return self.structure.cell_sa is not None

    def data_blocks(self) -> tuple[tuple[sp.csr_array, np.ndarray], ...]:
        """The three data-row blocks, in order: class, shared, SA."""
        return (self.A_cls, self.b_cls), (self.A_sh, self.b_sh), (self.A_sa, self.b_sa)

    def equalities(self) -> tuple[sp.csr_array, np.ndarray]:
        """Every equality row, stacked: the data blocks, then the linear equality facts."""
        blocks = [*self.data_blocks(), (self.F_eq, self.f_eq)]
        return (
            sp.vstack([a for a, _ in blocks], format="csr"),
            np.concatenate([b for _, b in blocks]),
        )


def _stack(facts: list[Fact], n: int) -> tuple[sp.csr_array, np.ndarray]:
    if not facts:
        return sp.csr_array((0, n)), np.zeros(0)
    return sp.vstack([f.A for f in facts], format="csr"), np.concatenate([f.b for f in facts])


def compile_problem(model) -> MaxEntProblem:
    """Stack the model's data rows and fact rows once, with the row map."""
    s = model.structure
    n = s.n_cells
    facts = list(model.facts)
    eq = [f for f in facts if f.sense == "=="]
    F_eq, f_eq = _stack(eq, n)
    F_in, f_in = _stack([f for f in facts if f.sense == "<="], n)
    rows = RowMap.of(facts)
    groups = []
    for i, f in enumerate(facts):
        g = f.row_groups
        if f.sense == "==" and g is not None and len(np.unique(g)) < len(g):
            groups.append((int(rows.start[i]), np.asarray(g)))
    A_cls, b_cls = s.class_rows()
    A_sh, b_sh = s.shared_rows()
    A_sa, b_sa = s.sa_rows()
    return MaxEntProblem(
        structure=s,
        x_var=model.x,
        A_cls=A_cls,
        b_cls=b_cls,
        A_sh=A_sh,
        b_sh=b_sh,
        A_sa=A_sa,
        b_sa=b_sa,
        F_eq=F_eq,
        f_eq=f_eq,
        F_in=F_in,
        f_in=f_in,
        eq_groups=tuple(groups),
        convex=tuple(f for f in facts if f.sense in ("convex", "soft")),
        rows=rows,
    )
