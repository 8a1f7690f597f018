"""The maximum-entropy model of one bucketized release.

Count scale (DESIGN.md): a *record class* c is a set of records that nothing published
tells apart (same exact QI value, same bucket); the variable ``x[c, s] >= 0`` is the
expected number of records of class c with sensitive value s, for every s present in c's
bucket (Zero-invariants are omitted variables). The data give

* the QI-invariant of every class: ``sum_s x[c, s] = n_c`` (Du et al. Eq. 4),
* the SA-invariant of every bucket b and value s: ``sum_c x[c, s] = n(s, b)`` (Eq. 5),

and the objective is ``sum -x log(x / n_c)`` = N * H(S | Q, B), the conditional entropy of
Du et al. Eq. (2) on the count scale. Knowledge is any cvxpy constraint on the model's
variable; ``model.P(s, **qi)`` builds the probabilities it speaks of (Section 4.1).

>>> from maxent_privacy import MaxEntModel, Bucketized, datasets
>>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                      sa="disease", group="bucket")
>>> model = MaxEntModel(release)
>>> model.add(model.P("Breast Cancer", gender="male") == 0)
>>> result = model.solve()
>>> float(result.posterior().loc[("female", "junior"), "Breast Cancer"])
1.0
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
import pandas as pd
import scipy.sparse as sp

from .data import Bucketized
from .errors import KnowledgeError, ReleaseError

__all__ = ["Fact", "MaxEntModel"]


@dataclass
class Fact:
    """A compiled fact: the user's constraint and, when it is linear, its rows.

    ``A @ x (sense) b`` on the probability scale of the user's own expression, where
    ``sense`` is ``"=="`` or ``"<="`` (cvxpy's ``lhs - rhs`` form, so ``expr >= p``
    is stored as ``p - expr <= 0``). ``cells`` are the variable indices the fact touches.
    """

    name: str
    constraint: cp.Constraint
    sense: str  # "==", "<=" or "convex"
    A: sp.csr_array | None
    b: np.ndarray | None
    cells: np.ndarray
    shape: tuple = field(default=())
    weight: float | None = None  # soft facts: penalty per unit of violation
    soft_sense: str | None = None  # soft facts: "==" or "<="

    @property
    def size(self) -> int:
        return 1 if self.A is None else self.A.shape[0]


def _as_list(value) -> list:
    if isinstance(value, (list, tuple, set, frozenset, np.ndarray, pd.Index, pd.Series)):
        return list(value)
    return [value]


def _fmt(value) -> str:
    return str(value)


class MaxEntModel:
    """Maximum-entropy model of what a release (plus knowledge) says about P(S | QI).

    Parameters
    ----------
    release : Bucketized
        The published release.

    Attributes
    ----------
    x : cvxpy.Variable
        One variable per cell (record class, sensitive value) on the count scale.
    cells : DataFrame
        One row per variable: QI columns, group, sensitive value, ``cls`` (class
        index) and ``n`` (class size).
    classes : DataFrame
        One row per record class: QI columns, group and ``n``.
    facts : list of Fact
        The knowledge added so far, in order.
    """

    def __init__(self, release: Bucketized):
        if not isinstance(release, Bucketized):
            raise ReleaseError(
                f"MaxEntModel needs a Bucketized release, got {type(release).__name__}"
            )
        self.release = release
        self.qi = list(release.qi)
        self.sa = release.sa
        self.group = release.group
        frame = release.frame
        self.n_records = len(frame)
        keys = self.qi + [self.group]

        classes = frame.groupby(keys, sort=True, dropna=False).size().rename("n").reset_index()
        classes["cls"] = np.arange(len(classes))
        counts = frame.groupby([self.group, self.sa], sort=True).size().rename("count")
        counts = counts.reset_index()
        counts["gs"] = np.arange(len(counts))
        cells = classes.merge(counts, on=self.group, how="inner", sort=False)
        cells = cells.sort_values(["cls", "gs"], kind="stable").reset_index(drop=True)
        self.classes = classes.drop(columns="cls")
        self.group_values = counts.rename(columns={"count": "n"}).drop(columns="gs")
        self.cells = cells[self.qi + [self.group, self.sa, "cls", "gs", "n"]]
        self.n_cells = len(cells)
        self._cls = cells["cls"].to_numpy()
        self._gs = cells["gs"].to_numpy()
        self._n = cells["n"].to_numpy(dtype=float)
        self._class_n = classes["n"].to_numpy(dtype=float)
        self._gs_n = counts["count"].to_numpy(dtype=float)
        self._gs_group = counts[self.group].to_numpy()
        self._class_group = classes[self.group].to_numpy()

        self.x = cp.Variable(self.n_cells, name="x")
        self.facts: list[Fact] = []
        self._labels: dict[int, tuple[cp.Expression, str]] = {}
        self._domains = {c: set(frame[c].unique().tolist()) for c in self.qi + [self.sa]}

    # ------------------------------------------------------------------ data
    def invariant_matrix(self, drop_redundant: bool = True):
        """The data constraints as ``(A, b, rows)``: ``A @ x == b`` on the count scale.

        ``rows`` is a DataFrame naming each row (``kind`` is ``"QI"`` or ``"SA"``, with
        its group and value). With ``drop_redundant`` one SA-invariant per bucket is left
        out, so every bucket has g + h - 1 independent rows (Du et al. Theorem 3).
        """
        n_cls, n_gs = len(self._class_n), len(self._gs_n)
        cols = np.arange(self.n_cells)
        ones = np.ones(self.n_cells)
        A_cls = sp.csr_array((ones, (self._cls, cols)), shape=(n_cls, self.n_cells))
        A_gs = sp.csr_array((ones, (self._gs, cols)), shape=(n_gs, self.n_cells))
        keep_gs = np.ones(n_gs, dtype=bool)
        if drop_redundant:
            # the last sensitive value of every group (its row is implied by the others)
            last = pd.Series(np.arange(n_gs)).groupby(self._gs_group).max().to_numpy()
            keep_gs[last] = False
        A = sp.vstack([A_cls, A_gs[keep_gs]], format="csr")
        b = np.concatenate([self._class_n, self._gs_n[keep_gs]])
        rows_cls = self.classes.assign(kind="QI")
        rows_gs = self.group_values.loc[keep_gs].assign(kind="SA")
        rows = pd.concat([rows_cls, rows_gs], ignore_index=True)
        return A, b, rows

    def true_assignment(self, original: pd.DataFrame) -> np.ndarray:
        """Cell values of the original data (counts of each class with each value).

        ``original`` must carry the release's QI, group and sensitive columns, for example
        the release's own frame (the sensitive value on each row is the true one).
        """
        keys = self.qi + [self.group, self.sa]
        for c in keys:
            if c not in original.columns:
                raise ReleaseError(f"column {c!r} is not in the original table")
        counts = original.groupby(keys, sort=False).size().rename("true").reset_index()
        merged = self.cells[keys].merge(counts, on=keys, how="left")
        if counts["true"].sum() != merged["true"].sum():
            raise ReleaseError("the original table has records that the release does not hold")
        return merged["true"].fillna(0).to_numpy(dtype=float)

    # -------------------------------------------------------------- knowledge
    def _match_value(self, column: str, value, role: str):
        domain = self._domains[column]
        if value in domain:
            return value
        by_str = [v for v in domain if str(v) == str(value)]
        if len(by_str) == 1:
            return by_str[0]
        shown = ", ".join(sorted(map(str, domain))[:12])
        more = ", ..." if len(domain) > 12 else ""
        raise KnowledgeError(
            f"{role} value {value!r} is not in column {column!r} (values: {shown}{more})"
        )

    def _mask(self, s, conditions: dict) -> tuple[np.ndarray, int, str]:
        for attr in conditions:
            if attr not in self.qi:
                if attr == self.sa:
                    raise KnowledgeError(
                        f"{attr!r} is the sensitive attribute; give its value as P's first "
                        "argument, and only quasi-identifiers as conditions"
                    )
                raise KnowledgeError(
                    f"unknown quasi-identifier {attr!r} (the release's QI: {', '.join(self.qi)})"
                )
        values = [self._match_value(self.sa, v, "sensitive") for v in _as_list(s)]
        if not values:
            raise KnowledgeError("P() needs at least one sensitive value")
        mask = self.cells[self.sa].isin(values).to_numpy()
        rec = np.ones(self.n_records, dtype=bool)
        parts = []
        for attr, val in conditions.items():
            vals = [self._match_value(attr, v, "quasi-identifier") for v in _as_list(val)]
            mask = mask & self.cells[attr].isin(vals).to_numpy()
            rec = rec & self.release.frame[attr].isin(vals).to_numpy()
            shown = vals[0] if len(vals) == 1 else "{" + ", ".join(map(_fmt, vals)) + "}"
            parts.append(f"{attr}={_fmt(shown)}")
        n_q = int(rec.sum())
        if n_q == 0:
            raise KnowledgeError(
                "no record of the release matches "
                + ", ".join(parts)
                + "; P(. | that) is undefined"
            )
        lhs = values[0] if len(values) == 1 else " or ".join(map(_fmt, values))
        label = f"P({lhs}" + (" | " + ", ".join(parts) if parts else "") + ")"
        return mask, n_q, label

    def P(self, s, **conditions) -> cp.Expression:
        """P(S = s | the given QI attributes), a cvxpy expression on the model's variable.

        ``s`` is a sensitive value, or a list of values for P(S in {...} | ...).
        Conditions name QI attributes (a list of values means "any of them"); attributes
        left out are marginalized (Du et al. Section 4.1), so the expression is
        ``sum of x over cells with s and matching QI / n(matching records)``.

        >>> from maxent_privacy import MaxEntModel, Bucketized, datasets
        >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(),
        ...     qi=["gender", "degree"], sa="disease", group="bucket"))
        >>> flu = model.P("Flu", gender="male")    # 6 men in the release
        >>> model.add(flu == 0.3)                  # sum of 4 cells == 1.8 records
        """
        mask, n_q, label = self._mask(s, conditions)
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            expr = cp.Constant(0.0)
        else:
            expr = cp.sum(self.x[idx]) / n_q
        self._labels[id(expr)] = (expr, label)
        return expr

    def terms(self, item) -> pd.DataFrame:
        """The probability terms P(q, s, b) of an affine expression or linear constraint.

        Returns one row per term (QI values, group, sensitive value, ``coefficient``) on
        Du et al.'s joint-probability scale, P(q, s, b) = x / N. For a constraint the row
        is divided by its largest coefficient, as the paper writes them, and
        ``.attrs["sense"]`` and ``.attrs["rhs"]`` complete it; for an expression
        ``.attrs["constant"]`` is its constant part.

        >>> from maxent_privacy import MaxEntModel, Bucketized, datasets
        >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(),
        ...     qi=["gender", "degree"], sa="disease", group="bucket"))
        >>> form = model.terms(model.P("Flu", gender="male") == 0.3)
        >>> len(form), round(form.attrs["rhs"], 12)   # Section 4.1: ... = 0.3 * 6/10
        (3, 0.18)
        """
        if isinstance(item, cp.constraints.constraint.Constraint):
            kind = type(item).__name__
            if kind not in ("Equality", "Inequality") or not all(a.is_affine() for a in item.args):
                raise KnowledgeError(f"terms() needs a linear fact, got {kind}")
            A, const = self._linearize(item.args[0] - item.args[1])
            sense = "==" if kind == "Equality" else "<="
        else:
            A, const = self._linearize(item)
            sense = None
        if A.shape[0] != 1:
            raise KnowledgeError("terms() takes a scalar expression or constraint")
        row = sp.csr_array(A)
        coef = row.data * self.n_records
        out = self.cells.iloc[row.indices][self.qi + [self.group, self.sa]].copy()
        if sense is None:
            out["coefficient"] = coef
            out.attrs["constant"] = float(const[0])
        else:
            scale = np.max(np.abs(coef)) / self.n_records if coef.size else 1.0
            out["coefficient"] = coef / (scale * self.n_records)
            out.attrs["sense"] = sense
            out.attrs["rhs"] = float(-const[0] / (scale * self.n_records))
        return out.reset_index(drop=True)

    def _linearize(self, expr: cp.Expression) -> tuple[sp.csr_array, np.ndarray]:
        """``expr == A @ x + c`` for an affine expression (A has one row per entry)."""
        size = int(np.prod(expr.shape)) if expr.shape else 1
        old = self.x.value
        try:
            self.x.value = np.zeros(self.n_cells)
            const = np.atleast_1d(np.asarray(expr.value, dtype=float)).ravel(order="F")
            grad = expr.grad.get(self.x) if expr.variables() else None
        finally:
            self.x.value = old
        if grad is None or (not sp.issparse(grad) and np.isscalar(grad) and grad == 0):
            A = sp.csr_array((size, self.n_cells))
        else:
            A = (
                sp.csr_array(sp.csc_array(grad).T)
                if sp.issparse(grad)
                else sp.csr_array(np.atleast_2d(np.asarray(grad)).T)
            )
        A.eliminate_zeros()
        return A, const

    def _footprint(self, expr: cp.Expression) -> np.ndarray:
        """Indices of the cells an expression depends on (exact for any DCP tree)."""
        if not expr.variables():
            return np.empty(0, dtype=int)
        if expr.is_affine():
            A, _ = self._linearize(expr)
            return np.unique(A.indices)
        parts = [self._footprint(a) for a in expr.args]
        return np.unique(np.concatenate(parts)) if parts else np.empty(0, dtype=int)

    def _label_of(self, expr) -> str | None:
        hit = self._labels.get(id(expr))
        if hit is not None and hit[0] is expr:
            return hit[1]
        if isinstance(expr, cp.Constant) or (not expr.variables() and expr.is_constant()):
            value = np.asarray(expr.value)
            if value.size == 1:
                return f"{float(value):g}"
        return None

    def _default_name(self, constraint: cp.Constraint) -> str:
        op = {"Equality": "==", "Inequality": "<="}.get(type(constraint).__name__)
        if op is not None and len(constraint.args) == 2:
            left, right = (self._label_of(a) for a in constraint.args)
            if left is not None and right is not None:
                if (
                    op == "<="
                    and self._labels.get(id(constraint.args[1])) is not None
                    and self._labels.get(id(constraint.args[0])) is None
                ):
                    return f"{right} >= {left}"
                return f"{left} {op} {right}"
        return f"fact {len(self.facts) + 1}"

    def _check_range(self, constraint: cp.Constraint, name: str) -> None:
        """A constant compared with a P(...) expression must lie in [0, 1]."""
        if len(constraint.args) != 2:
            return
        left, right = constraint.args
        for p_side, c_side in ((left, right), (right, left)):
            hit = self._labels.get(id(p_side))
            if hit is None or hit[0] is not p_side or c_side.variables():
                continue
            value = np.asarray(c_side.value, dtype=float)
            bad = value[(value < 0) | (value > 1) | ~np.isfinite(value)]
            if bad.size:
                raise KnowledgeError(
                    f"probability {bad.ravel()[0]:g} is outside [0, 1] in fact {name!r}"
                )

    def add(self, constraint, name: str | None = None) -> None:
        """Record a fact: a cvxpy constraint on the model's probabilities.

        ``name`` keys the fact's dual value in ``result.duals``; without one, simple facts
        are named by their text (``"P(Flu | gender=male) == 0.3"``), others ``"fact k"``.
        A list of constraints adds each (names get a ``[i]`` suffix).

        >>> from maxent_privacy import MaxEntModel, Bucketized, datasets
        >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(),
        ...     qi=["gender", "degree"], sa="disease", group="bucket"))
        >>> model.add(model.P("Flu", gender="male") <= 0.5, name="flu")
        >>> [f.name for f in model.facts]
        ['flu']
        """
        from .knowledge import Soft

        if isinstance(constraint, Soft):
            inner = constraint.fact
            kind = type(inner).__name__
            if kind not in ("Equality", "Inequality") or not all(
                a.is_affine() for a in inner.args
            ):
                raise KnowledgeError(
                    f"soft fact {name!r} must be a linear ==, <= or >= fact, got {kind}"
                )
            if name is None:
                name = f"soft {constraint.weight:g}: {self._default_name(inner)}"
            if any(f.name == name for f in self.facts):
                raise KnowledgeError(f"a fact named {name!r} is already in the model")
            self._check_range(inner, name)
            sense = "==" if kind == "Equality" else "<="
            cells = self._footprint_constraint(inner)
            self.facts.append(
                Fact(name, inner, "soft", None, None, cells, (), constraint.weight, sense)
            )
            return
        if hasattr(constraint, "_maxent_facts_"):
            pairs = list(constraint._maxent_facts_(self, name))
            known = {f.name for f in self.facts}
            for fact_name, _ in pairs:
                if fact_name in known:
                    raise KnowledgeError(f"a fact named {fact_name!r} is already in the model")
            before = len(self.facts)
            try:
                for fact_name, c in pairs:
                    self.add(c, name=fact_name)
            except Exception:
                del self.facts[before:]  # nothing half-added
                raise
            return
        if isinstance(constraint, (list, tuple)):
            for i, c in enumerate(constraint):
                self.add(c, name=None if name is None else f"{name}[{i}]")
            return
        if isinstance(constraint, (bool, np.bool_)):
            raise KnowledgeError(
                f"fact {name or len(self.facts) + 1!r} is a plain boolean, not a constraint "
                "(compare model.P(...) expressions, not numbers)"
            )
        if not isinstance(constraint, cp.constraints.constraint.Constraint):
            raise KnowledgeError(
                f"fact {name!r} is a {type(constraint).__name__}, not a cvxpy constraint "
                "(write e.g. model.P('Flu', gender='male') == 0.3)"
            )
        if name is None:
            name = self._default_name(constraint)
        name = str(name)
        if any(f.name == name for f in self.facts):
            raise KnowledgeError(f"a fact named {name!r} is already in the model")
        foreign = [v for v in constraint.variables() if v is not self.x]
        if foreign:
            raise KnowledgeError(
                f"fact {name!r} uses variable {foreign[0].name()!r} that is not this model's"
            )
        if constraint.parameters():
            raise KnowledgeError(f"fact {name!r} uses cvxpy parameters; give numbers instead")
        if not constraint.is_dcp():
            raise KnowledgeError(
                f"fact {name!r} is not DCP (a convex set in cvxpy's rules): {constraint}"
            )
        self._check_range(constraint, name)
        kind = type(constraint).__name__
        linear = kind in ("Equality", "Inequality", "Zero", "NonPos") and all(
            a.is_affine() for a in constraint.args
        )
        if linear:
            if kind in ("Equality", "Zero"):
                expr, sense = (
                    constraint.expr if kind == "Zero" else constraint.args[0] - constraint.args[1],
                    "==",
                )
            else:
                expr = (
                    constraint.expr if kind == "NonPos" else constraint.args[0] - constraint.args[1]
                )
                sense = "<="
            A, const = self._linearize(expr)
            fact = Fact(name, constraint, sense, A, -const, np.unique(A.indices), expr.shape)
        else:
            fact = Fact(
                name, constraint, "convex", None, None, self._footprint_constraint(constraint)
            )
        self.facts.append(fact)

    def _footprint_constraint(self, constraint) -> np.ndarray:
        parts = [self._footprint(a) for a in constraint.args]
        return np.unique(np.concatenate(parts)) if parts else np.empty(0, dtype=int)

    def remove(self, name: str) -> None:
        """Drop the fact with this name."""
        for i, f in enumerate(self.facts):
            if f.name == name:
                del self.facts[i]
                return
        raise KnowledgeError(f"no fact named {name!r} in the model")

    def fact_table(self) -> pd.DataFrame:
        """One row per fact: name, sense, number of rows and cells touched."""
        return pd.DataFrame(
            {
                "fact": [f.name for f in self.facts],
                "sense": [f.sense for f in self.facts],
                "rows": [f.size for f in self.facts],
                "cells": [len(f.cells) for f in self.facts],
            }
        )

    # ------------------------------------------------------------------ solve
    def solve(
        self,
        solver: str | None = None,
        *,
        decompose: bool = True,
        presolve: bool = True,
        polish: bool = True,
        tol: float = 1e-6,
        verbose: bool = False,
        **options,
    ):
        """Maximize the entropy subject to the data and the facts; return a Result.

        ``solver`` is a cvxpy solver name that handles the exponential cone (default
        Clarabel). Buckets no fact touches use the closed form of Du et al. Eq. (9)
        (Theorem 5); the rest is split into connected components, each solved alone
        (``decompose=False`` solves one problem). ``presolve`` fixes the cells that
        equality facts and the data force (zeros of ``P(...) == 0`` and what follows
        from them), which keeps interior-point solvers accurate. The answer is checked
        by our own certificate (residuals at most ``tol``, duality gap) before it is
        returned; extra keyword arguments go to the solver. ``polish`` refines a linear
        component's answer by Newton steps on the Lagrange dual started from the solver's
        multipliers (quadratic convergence to floating-point residuals); when a step fails
        the solver's own answer is kept (``result.components["polished"]`` says which).
        """
        from .solve import solve_model

        return solve_model(
            self,
            solver=solver,
            decompose=decompose,
            presolve=presolve,
            tol=tol,
            verbose=verbose,
            options=options,
            polish=polish,
        )

    def __repr__(self) -> str:
        return (
            f"MaxEntModel({self.n_records} records, {len(self._class_n)} classes, "
            f"{self.n_cells} cells, {len(self.facts)} facts)"
        )
