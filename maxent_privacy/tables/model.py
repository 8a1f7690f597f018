"""The model of published tables without a population: reconstruction.

``MaxEntModel([tables...])`` with no populations is a :class:`TableModel`: the unknown is
the microdata contingency table ``y`` (records per combination of the attributes the
tables name), see ``docs/tables.md``.

>>> import pandas as pd
>>> from maxent_privacy import Tabulated, MaxEntModel
>>> sex = Tabulated(pd.DataFrame({"sex": ["F", "M"], "count": [2, 1]}), qi=["sex"])
>>> flu = Tabulated(pd.DataFrame({"d": ["flu", "ok"], "count": [1, 2]}), qi=[], sa="d")
>>> model = MaxEntModel([sex, flu])
>>> model.add(model.P("flu", sex="M") == 0)          # the man does not have the flu
>>> model.bounds(by="cell")["lower"].tolist()         # so one woman has it, one not
[1.0, 1.0, 0.0, 1.0]
>>> model.reconstruction()["certain_records"]
3.0
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import cvxpy as cp
import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._validation import check_choice, check_seconds
from ..errors import KnowledgeError, ReleaseError
from ..knowledge.facts import compile_fact
from ..releases.cells import parse_cell, value_arrays
from ..releases.tabulated import Tabulated
from .bounds import target_bounds
from .rows import all_rows
from .solve import solve_table
from .system import build_system

__all__ = ["Share", "TableModel"]


class Share:
    """``P(s | conditions)`` of a model of tables: the share of the matching records that
    hold ``s``. Compared with a number it is a linear constraint on the counts
    (``count(s, conditions) - p * count(conditions)``)."""

    #: what :func:`~maxent_privacy.knowledge.vague.vague` reads to accept it
    maxent_share = True

    def __init__(self, part: cp.Expression, whole: cp.Expression, label: str):
        self.part, self.whole, self.label = part, whole, label

    def _side(self, p, op: str):
        expr = self.part - _share(p, self.label) * self.whole
        made = {"<=": expr <= 0, ">=": expr >= 0, "==": expr == 0}[op]
        made.maxent_label = f"{self.label} {op} {float(p):g}"
        return made

    def __le__(self, p):
        return self._side(p, "<=")

    def __ge__(self, p):
        return self._side(p, ">=")

    def __eq__(self, p):  # noqa: D105 - a constraint, as cvxpy's ==
        return self._side(p, "==")

    __hash__ = None

    def _arithmetic(self, *_):
        raise KnowledgeError(
            f"{self.label} is a share of records: compare it with one number; for sums of "
            "records write model.count(...) expressions"
        )

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __neg__ = _arithmetic
    __truediv__ = _arithmetic

    def __repr__(self) -> str:
        return self.label


def _share(p, label: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise KnowledgeError(f"{label} is compared with numbers only, got {p!r}")
    if not 0 <= float(p) <= 1:
        raise KnowledgeError(f"{label} is a share: compare it with a number in [0, 1], got {p}")
    return float(p)


class TableModel:
    """Published tables and knowledge about the unknown table of records.

    Made by ``MaxEntModel(tables, domains=..., total=...)``; see ``docs/tables.md``.
    """

    def __init__(self, tables, domains=None, total=None):
        tables = [tables] if isinstance(tables, Tabulated) else list(tables)
        self.tables = tables
        self.system = build_system(tables, domains=domains, total=total)
        self.y = cp.Variable(self.system.n, name="y", nonneg=True)
        self.facts = []
        self._result = None
        self._rows = (None, None)  # (the facts they were made for, the rows): rows()

    # ------------------------------------------------------------- structure
    @property
    def attributes(self) -> list:
        return list(self.system.attributes)

    @property
    def qi(self) -> list:
        return [a for a in self.system.attributes if a != self.system.sa]

    @property
    def sa(self) -> str | None:
        return self.system.sa

    @property
    def domain(self) -> dict:
        return {a: list(v) for a, v in self.system.domain.items()}

    @property
    def total(self) -> float:
        return self.system.total

    @property
    def n_combinations(self) -> int:
        return self.system.n

    @property
    def combinations(self) -> pd.DataFrame:
        return self.system.combinations()

    def __repr__(self) -> str:
        return (
            f"MaxEntModel({len(self.tables)} tables, {self.total:g} records, "
            f"{self.n_combinations:,} combinations of {', '.join(self.attributes)}, "
            f"{len(self.facts)} facts)"
        )

    def rows(self):
        """Every row: published cells, the total, the statistics and the hard facts (made
        once per set of facts: solve, bounds and reconstruction share them)."""
        made_for, rows = self._rows
        if (
            rows is None
            or len(made_for) != len(self.facts)
            or any(a is not b for a, b in zip(made_for, self.facts, strict=True))
        ):
            rows = all_rows(self.system, self.facts)
            self._rows = (list(self.facts), rows)
        return rows

    # ------------------------------------------------------------- knowledge
    def _mask(self, conditions: dict) -> np.ndarray:
        """Which combinations match every condition (a value, a list, or a cell text)."""
        mask = np.ones(self.system.n, dtype=bool)
        for column, spec in conditions.items():
            if column not in self.system.attributes:
                raise KnowledgeError(
                    f"unknown attribute {column!r} (the tables': {', '.join(self.attributes)})"
                )
            values = self.system.domain[column]
            mask &= self._covering(column, spec, values)[self.system.codes(column)]
        return mask

    def _covering(self, column: str, spec, values: list) -> np.ndarray:
        specs = spec if isinstance(spec, (list, tuple, set)) else [spec]
        strings, numbers = value_arrays(values)
        out = np.zeros(len(values), dtype=bool)
        for one in specs:
            hit = np.array([v == one or str(v) == str(one) for v in values])
            if not hit.any():
                try:
                    hit = parse_cell(one, column).mask(strings, numbers)
                except ReleaseError:
                    hit = np.zeros(len(values), dtype=bool)
            if not hit.any():
                shown = ", ".join(map(str, values[:12]))
                raise KnowledgeError(
                    f"{column!r} has no value {one!r} (its values: {shown}"
                    + (", ..." if len(values) > 12 else "")
                    + ")"
                )
            out |= hit
        return out

    def match_value(self, column: str, value, role: str = "quasi-identifier"):
        """``value`` as the domain of ``column`` spells it (knowledge files), or a one-line
        :class:`KnowledgeError`."""
        if column not in self.system.domain:
            raise KnowledgeError(f"unknown {role} attribute {column!r}")
        hit = self._covering(column, [value], self.system.domain[column])
        return self.system.domain[column][int(np.flatnonzero(hit)[0])]

    def match_values(self, column: str, spec) -> tuple[list, str]:
        """The domain values of ``column`` that ``spec`` names, and how to show them."""
        if column not in self.system.domain:
            raise KnowledgeError(f"unknown attribute {column!r}")
        values = self.system.domain[column]
        hit = self._covering(column, spec, values)
        return [v for v, h in zip(values, hit, strict=True) if h], f"{column}={spec}"

    @contextmanager
    def transaction(self):
        """All or nothing: facts added in the block are dropped when it raises."""
        saved = list(self.facts)
        try:
            yield self
        except BaseException:
            self.facts = saved
            raise

    def person(self, name, **qi):
        """A model of tables has no people: give the population (see ``docs/tables.md``)."""
        raise KnowledgeError(
            f"person {name!r}: a model of tables without a population has no people; "
            "give populations=[...] to reason about individuals"
        )

    def count(self, **conditions) -> cp.Expression:
        """The number of records matching ``conditions``: a cvxpy expression on ``y``.

        >>> model.count(sex="F") >= 1              # doctest: +SKIP
        """
        idx = np.flatnonzero(self._mask(conditions))
        return cp.sum(self.y[idx]) if idx.size else cp.Constant(0.0)

    def P(self, s, **conditions) -> Share:
        """The share of the records matching ``conditions`` that hold ``s`` (a value or a
        list of values of the sensitive attribute): compare it with a number."""
        if self.sa is None:
            raise KnowledgeError("the tables name no sensitive attribute; use count(...)")
        if self.sa in conditions:
            raise KnowledgeError(
                f"{self.sa!r} is the sensitive attribute; give its value as P's first argument"
            )
        whole = self._mask(conditions)
        part = whole & self._mask({self.sa: s})
        label = f"P({s}" + (" | " + ", ".join(f"{k}={v}" for k, v in conditions.items())
                            if conditions else "") + ")"  # fmt: skip
        expr = lambda m: cp.sum(self.y[np.flatnonzero(m)]) if m.any() else cp.Constant(0.0)  # noqa: E731
        return Share(expr(part), expr(whole), label)

    def add(self, constraint, name: str | None = None) -> None:
        """Add a hard fact: a linear cvxpy constraint on ``y`` (``count(...)`` and
        ``P(...)`` comparisons, ``vague(model.P(...), p, eps)``); a list adds each, all
        or nothing. Soft facts are for models of people."""
        items = constraint if isinstance(constraint, (list, tuple)) else [constraint]
        named = []
        for i, c in enumerate(items):
            label = name if len(items) == 1 else (None if name is None else f"{name}[{i}]")
            if hasattr(c, "_maxent_facts_"):  # vague(...): its sides
                named.extend(c._maxent_facts_(self, label))
            else:
                named.append((label, c))
        new = []
        for label, c in named:
            label = label or getattr(c, "maxent_label", None)
            label = label or f"fact {len(self.facts) + len(new) + 1}"
            if not isinstance(c, cp.constraints.constraint.Constraint):
                raise KnowledgeError(f"{label!r} is a {type(c).__name__}, not a constraint")
            foreign = [v for v in c.variables() if v is not self.y]
            if foreign:
                raise KnowledgeError(f"{label!r} uses a variable that is not this model's")
            fact = compile_fact(c, str(label), self.y, self.system.n)
            if fact.A is None:
                raise KnowledgeError(f"{label!r} is not linear in the counts")
            new.append(fact)
        names = [f.name for f in self.facts] + [f.name for f in new]
        twice = next((n for n in names if names.count(n) > 1), None)
        if twice is not None:
            raise KnowledgeError(f"a fact named {twice!r} is already in the model")
        self.facts = self.facts + new
        self._result = None

    # ------------------------------------------------------------- answers
    def solve(self, tol: float = 1e-6, progress=None, **options):
        """The maximum-entropy table, checked by our own certificate (a
        :class:`~maxent_privacy.tables.solve.TableResult`: ``table()``, ``certificate``,
        ``summary``). ``progress``: None (a bar on stderr when more than 10^5
        combinations are free), True / False, or a function given one line of text."""
        if options:
            raise KnowledgeError(
                f"solve() of a model of tables takes tol= and progress= only, got "
                f"{', '.join(options)}"
            )
        self._result = solve_table(self.system, self.rows(), tol=tol, progress=progress)
        self._result.model = self
        return self._result

    def bounds(
        self, by: str = "cell", values=None, exact: bool = False, *, table=None,
        protection=None, time_limit=60.0, progress=None,
    ) -> pd.DataFrame:  # fmt: skip
        """Counts over every table of records the releases and hard facts allow.

        ``by="cell"``: one row per combination (indexed by the attributes), ``lower``
        and ``upper`` and, with ``exact=True``, whole-number bounds; ``lower_exact`` /
        ``upper_exact`` (``tight`` for the LP) say which sides were proved optimal within
        ``time_limit`` seconds (the others are the bound proved so far). ``table``: the
        cells of that published table instead (a :class:`Tabulated` of the model, or its
        position), with ``published``, ``suppressed``, ``width`` and, with
        ``protection``, ``exposed``.
        """
        check_choice(by, "by", ("cell",))
        if values is not None:
            raise KnowledgeError("values= is for models of people; tables bound every cell")
        time_limit = check_seconds(time_limit, none=False)
        if table is not None:
            return self._audit(table, exact, protection, time_limit, progress)
        T = sp.identity(self.system.n, format="csr")
        b = target_bounds(self.rows(), T, self.total, exact=exact, time_limit=time_limit,
                          progress=progress, desc="cell bounds")  # fmt: skip
        out = pd.DataFrame({"lower": b.lower, "upper": b.upper}, index=self.system.index())
        return _flags(out, b, exact)

    def published(self, table):
        """The rows of a counts table of the model (a :class:`Tabulated` or its position):
        a :class:`~maxent_privacy.tables.system.TableRows`, its cells in the order of the
        audit view."""
        counts = list(self.system.tables)
        if isinstance(table, (int, np.integer)) and not isinstance(table, bool):
            if not -len(self.tables) <= int(table) < len(self.tables):
                raise KnowledgeError(f"table={int(table)}: the model has {len(self.tables)}")
            pick = [t for t in counts if t.table is self.tables[int(table)]]
        else:
            pick = [t for t in counts if t.table is table]
        if not pick:
            raise KnowledgeError(f"table= names no counts table of this model: {table!r}")
        return pick[0]

    def _audit(self, table, exact, protection, time_limit, progress) -> pd.DataFrame:
        t = self.published(table)
        b = target_bounds(self.rows(), t.A, self.total, exact=exact, time_limit=time_limit,
                          progress=progress, desc=f"audit of {t.table.label}")  # fmt: skip
        out = pd.DataFrame(
            {
                "published": t.published,
                "suppressed": t.suppressed,
                "lower": b.lower,
                "upper": b.upper,
                "width": b.upper - b.lower,
            },
            index=t.index(),
        )
        out = _flags(out, b, exact)
        if protection is not None:
            out["exposed"] = _exposed(out, protection, t)
        return out

    def reconstruction(self, time_limit: float = 60.0, progress=None) -> dict:
        """How much of the microdata every consistent whole-number table shares (see
        ``docs/tables.md``)."""
        time_limit = check_seconds(time_limit, none=False)
        deadline = time.perf_counter() + time_limit
        rows = self.rows()
        T = sp.identity(self.system.n, format="csr")
        b = target_bounds(rows, T, self.total, exact=True, time_limit=time_limit,
                          progress=progress, desc="reconstruction")  # fmt: skip
        pinned = b.lower == b.upper
        left = max(deadline - time.perf_counter(), 0.0)
        unique, unique_proved = _unique_pinned(self, rows, b, left)
        out = {
            "records": self.total,
            "certain_records": float(b.lower.sum()),
            "combinations": self.system.n,
            "pinned": int(pinned.sum()),
            "pinned_positive": int((pinned & (b.lower >= 1)).sum()),
            "unique_pinned": unique,
            "proved": bool(b.complete and unique_proved),
        }
        if self._result is not None:
            self._result.summary["reconstruction"] = out
        return out


def _flags(out: pd.DataFrame, b, exact: bool) -> pd.DataFrame:
    if exact:
        out["lower_exact"] = b.lower_tight
        out["upper_exact"] = b.upper_tight
    else:
        out["tight"] = b.lower_tight & b.upper_tight
    return out


def _exposed(out: pd.DataFrame, protection, t) -> np.ndarray:
    """A suppressed cell whose interval is narrower than the protection: ``p`` in (0, 1)
    is a share of the cell's count (the middle of its interval), ``p >= 1`` a width."""
    if (
        isinstance(protection, bool)
        or not isinstance(protection, (int, float))
        or not (protection > 0 and np.isfinite(protection))
    ):
        raise KnowledgeError(f"protection must be a number > 0, got {protection!r}")
    width = out["width"].to_numpy()
    if protection < 1:
        need = protection * (out["lower"].to_numpy() + out["upper"].to_numpy()) / 2
    else:
        need = np.full(len(out), float(protection))
    return t.suppressed & (width < need - 1e-9)


def _unique_pinned(model: TableModel, rows, b, time_limit: float) -> tuple[int, bool]:
    """Combinations pinned at 1 whose QI part is pinned at 1 too (proved: the count is
    of valid bounds either way), and whether every bound of the QI parts is tight."""
    system = model.system
    ones = np.flatnonzero((b.lower == 1) & (b.upper == 1))
    if not len(ones):
        return 0, True
    if system.sa is None:
        return len(ones), True
    k = system.attributes.index(system.sa)
    stride = system.strides[k]
    size = system.sizes[k]
    base = ones - ((ones // stride) % size) * stride  # the combination with value index 0
    cols = base[:, None] + np.arange(size)[None, :] * stride
    T = sp.csr_array(
        (np.ones(cols.size), (np.repeat(np.arange(len(ones)), size), cols.ravel())),
        shape=(len(ones), system.n),
    )
    qb = target_bounds(rows, T, system.total, exact=True, time_limit=time_limit)
    return int(((qb.lower == 1) & (qb.upper == 1)).sum()), qb.complete
