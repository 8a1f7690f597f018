"""The maximum-entropy model of one or several releases, and the knowledge added to it.

Count scale (DESIGN.md): a *record class* c is a set of records that nothing published
tells apart (same exact QI value, same bucket); the variable ``x[c, s] >= 0`` is the
expected number of records of class c with sensitive value s, for every s present in c's
bucket (Zero-invariants are omitted variables). The data give

* the QI-invariant of every class: ``sum_s x[c, s] = n_c`` (Du et al. Eq. 4),
* the SA-invariant of every bucket b and value s: ``sum_c x[c, s] = n(s, b)`` (Eq. 5),

and the objective is ``sum -x log(x / n_c)`` = N * H(S | Q, B), the conditional entropy of
Du et al. Eq. (2) on the count scale. The classes, cells and rows are one documented
object, :class:`~maxent_privacy.releases.structure.Structure` (``model.structure``). Knowledge is
any cvxpy constraint on the model's variable; ``model.P(s, **qi)`` builds the
probabilities it speaks of (Section 4.1), and ``model.add`` compiles each constraint to a
named :class:`~maxent_privacy.knowledge.facts.Fact`.

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

from contextlib import contextmanager
from functools import cached_property

import cvxpy as cp
import numpy as np
import pandas as pd
import scipy.sparse as sp

from .errors import KnowledgeError, ReleaseError
from .knowledge.facts import (
    Fact,
    check_range,
    compile_fact,
    compile_soft,
    default_name,
    linearize,
    tag,
)
from .knowledge.vague import Grouped, Soft
from .releases.bucketized import Bucketized, counterfeit_flags
from .releases.kinds import check_releases, tables_only
from .releases.pooled import build_pooled
from .releases.ranges import between, describe, is_range, select
from .releases.structure import build_single, remap_matrix
from .solve import SolveOptions
from .solve import solve as solve_model
from .solve.problem import compile_problem

__all__ = ["Fact", "MaxEntModel", "Person"]


class Person:
    """One individual singled out in a model (a pseudonym, Du et al. Section 6).

    Made by :meth:`MaxEntModel.person`. ``alice.P("HIV")`` is the probability that this
    person has the value (a list of values: any of them), a cvxpy expression.
    """

    def __init__(self, model: MaxEntModel, name: str, q: tuple, group=None):
        self.model = model
        self.name = name
        self.q = q
        self.group = group

    @property
    def qi(self) -> dict:
        """The person's quasi-identifier values."""
        return dict(zip(self.model.qi, self.q, strict=True))

    def P(self, s) -> cp.Expression:
        """P(this person has s), or P(has any of the values) for a list."""
        m = self.model
        values = [m.match_value(m.sa, v, "sensitive") for v in _as_list(s)]
        if not values:
            raise KnowledgeError("P() needs at least one sensitive value")
        cells = m.cells
        mask = (cells["person"] == self.name).to_numpy() & cells[m.sa].isin(values).to_numpy()
        idx = np.flatnonzero(mask & m.structure.value_cell)
        expr = cp.sum(m.x[idx]) if idx.size else cp.Constant(0.0)
        shown = " or ".join(map(str, values))
        return tag(expr, f"P({self.name} has {shown})")

    def __repr__(self) -> str:
        shown = ", ".join(f"{a}={v}" for a, v in self.qi.items())
        where = f", group {self.group!r}" if self.group is not None else ""
        return f"Person({self.name!r}: {shown}{where})"


def _as_list(value) -> list:
    if isinstance(value, (list, tuple, set, frozenset, np.ndarray, pd.Index, pd.Series)):
        return list(value)
    return [value]


class MaxEntModel:
    """Maximum-entropy model of what releases (plus knowledge) say about P(S | QI).

    Parameters
    ----------
    release : Bucketized, Generalized, or a list of them
        The published release; several releases of the same people (with person ids)
        are pooled (Wang et al., ICDM 2008); a generalized release without a person
        column needs its population table.
    populations : DataFrame or list, optional
        One per release (None where not needed): person id (index) -> exact QI, the
        adversary's voter list placing the people of a generalized release (or of
        published counts tables, :class:`~maxent_privacy.releases.tabulated.Tabulated`).
    domains, total : optional
        Published tables alone (no populations) make a
        :class:`~maxent_privacy.tables.model.TableModel` instead, the model of the
        unknown microdata table; these are its options (``docs/tables.md``).

    Attributes
    ----------
    x : cvxpy.Variable
        One variable per cell (record class, sensitive value) on the count scale.
    structure : Structure
        Record classes, cells and data rows (:mod:`maxent_privacy.releases.structure`).
    cells, classes : DataFrame
        ``structure.cells`` (one row per variable) and ``structure.classes``.
    facts : list of Fact
        The knowledge added so far, in order.
    """

    def __new__(cls, release=None, populations=None, **options):
        if cls is MaxEntModel and tables_only(release) and populations is None:
            from .tables.model import TableModel  # tables without people: reconstruction

            return TableModel(release, **options)
        if options:
            raise ReleaseError(
                f"{', '.join(sorted(options))}: for published tables without a population "
                "only (MaxEntModel([Tabulated, ...], domains=..., total=...))"
            )
        return super().__new__(cls)

    def __init__(self, release, populations=None, **options):
        releases, populations, tables = check_releases(release, populations)
        #: the counts tables given (read as generalized releases of the population)
        self.tables = tables
        self.releases = releases
        self.populations = populations
        self.release = releases[0]
        self.pooled = len(releases) > 1 or not isinstance(releases[0], Bucketized)
        self.facts: list[Fact] = []
        self._persons: list[Person] = []
        self._old_x: list[cp.Variable] = []
        self.x = None
        self._rebuild()

    @cached_property
    def _domains(self) -> dict:
        """The values knowledge may name: a QI's exact values (those of the records; for
        generalized releases, of the people in the population), the published SA values
        (found on first use: the records of a pooled model are made then)."""
        records = self.structure.records
        domains = {c: set(records[c].unique().tolist()) for c in self.release.qi}
        sa = self.release.sa
        domains[sa] = set(pd.concat([r.frame[sa] for r in self.releases]).unique().tolist())
        return domains

    def _rebuild(self) -> None:
        """Build the structure for the persons singled out so far, and a new variable."""
        if self.pooled:
            names = [p.name for p in self._persons]
            self.structure = build_pooled(self.releases, self.populations, split=names)
        else:
            self.structure = build_single(self.release, self._persons)
        if self.x is not None:
            self._old_x.append(self.x)
        self.x = cp.Variable(self.structure.n_cells, name="x")

    # ------------------------------------------------------- the structure
    @property
    def qi(self) -> list:
        """The quasi-identifier columns."""
        return list(self.structure.qi)

    @property
    def sa(self) -> str:
        """The sensitive column."""
        return self.structure.sa

    @property
    def group(self) -> str:
        """The group column (``"groups"`` for pooled releases)."""
        return self.structure.group

    @property
    def cells(self) -> pd.DataFrame:
        """One row per variable: QI columns, group, sensitive value, ``cls``, ``n``, ..."""
        return self.structure.cells

    @property
    def classes(self) -> pd.DataFrame:
        """One row per record class: QI columns, group, ``n``, ``person``."""
        return self.structure.classes

    @property
    def group_values(self) -> pd.DataFrame:
        """One row per (group, sensitive value) published: its count ``n``."""
        return self.structure.group_values

    @property
    def n_cells(self) -> int:
        """Number of variables."""
        return self.structure.n_cells

    @property
    def n_records(self) -> int:
        """Number of records (pooled releases: people); counterfeit records, which are no
        one's, are not counted (each release's ``n_records`` counts them)."""
        return self.structure.n_records

    def invariant_matrix(self, drop_redundant: bool = True):
        """The data constraints as ``(A, b, rows)``: ``A @ x == b`` on the count scale.

        ``rows`` is a DataFrame naming each row: ``kind`` is ``"QI"`` for a class's own row
        (its QI-invariant; with a person singled out, its One constraint), ``"QI (shared)"``
        for the QI-invariant of a (QI value, group) pair whose bucket is unknown for some
        class, ``"link"`` for a placement link of pooled releases, and ``"SA"`` for an
        SA-invariant (Relation row). With ``drop_redundant`` one SA-invariant per bucket is
        left out, so every bucket has g + h - 1 independent rows (Du et al. Theorem 3).
        """
        return self.structure.data_rows(drop_redundant=drop_redundant)

    def true_assignment(self, original: pd.DataFrame) -> np.ndarray:
        """Cell values of the original data (counts of each class with each value).

        ``original`` must carry the release's QI, group and sensitive columns, for example
        the release's own frame (the sensitive value on each row is the true one). With
        counterfeit records, rows flagged in the release's ``counterfeits`` column (when
        ``original`` has it) are left out: the phantom classes' cells get the values the
        release gives its counterfeit records.
        """
        if self._persons:
            raise ReleaseError("true_assignment() is for models without persons singled out")
        keys = self.qi + [self.group, self.sa]
        for c in keys:
            if c not in original.columns:
                raise ReleaseError(f"column {c!r} is not in the original table")
        phantom = self.structure.phantom_cell
        fake = getattr(self.release, "counterfeits", None)
        if fake is not None and fake in original.columns:  # people only
            original = original.loc[~counterfeit_flags(original[fake])]
        counts = original.groupby(keys, sort=False).size().rename("true").reset_index()
        merged = self.cells.loc[~phantom, keys].merge(counts, on=keys, how="left")
        if counts["true"].sum() != merged["true"].sum():
            raise ReleaseError("the original table has records that the release does not hold")
        out = np.zeros(self.n_cells)
        out[~phantom] = merged["true"].fillna(0).to_numpy(dtype=float)
        if phantom.any():  # counterfeit records: the values the publisher gave them
            rel = self.release
            pair = [rel.group, rel.sa]
            made = rel.frame.loc[rel.is_counterfeit].groupby(pair).size().rename("true")
            cells = self.cells.loc[phantom, pair].merge(made.reset_index(), on=pair, how="left")
            out[phantom] = cells["true"].fillna(0).to_numpy(dtype=float)
        return out

    # -------------------------------------------------------------- knowledge
    def match_value(self, column: str, value, role: str = "quasi-identifier"):
        """``value`` as it is spelled in ``column`` (also matched by its text), or a
        :class:`KnowledgeError` listing the column's values."""
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

    def match_values(self, column: str, spec) -> tuple[list, str]:
        """The exact values of QI ``column`` that ``spec`` names, and the condition as text.

        ``spec`` is a value, a list of values (any of them), a ``range`` (the integers in
        it) or :func:`~maxent_privacy.releases.ranges.between` (the numbers between its bounds); a
        list may mix them. A range selects the column's values present in the data (the
        records; generalized releases: the people's exact values), and one that selects
        none is a :class:`KnowledgeError` naming the column and the range.
        """
        items = [spec] if is_range(spec) else _as_list(spec)
        vals: list = []
        for item in items:
            if is_range(item):
                domain = sorted(self._domains[column], key=str)
                hit = select(domain, item)
                if not hit:
                    numeric = select(domain, between())
                    seen = (
                        f"its numbers run from {min(numeric, key=float)} to "
                        f"{max(numeric, key=float)}"
                        if numeric
                        else "it holds no numbers"
                    )
                    raise KnowledgeError(
                        f"no value of quasi-identifier {column!r} matches "
                        f"{describe(column, item)} ({seen})"
                    )
                vals.extend(hit)
            else:
                vals.append(self.match_value(column, item, "quasi-identifier"))
        vals = list(dict.fromkeys(vals))
        if len(items) == 1 and is_range(items[0]):
            shown = describe(column, items[0])
        elif len(vals) == 1:
            shown = f"{column}={vals[0]}"
        else:
            shown = f"{column}={{" + ", ".join(map(str, vals)) + "}"
        return vals, shown

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
        values = [self.match_value(self.sa, v, "sensitive") for v in _as_list(s)]
        if not values:
            raise KnowledgeError("P() needs at least one sensitive value")
        cells, records = self.cells, self.structure.records
        # counterfeit records (phantom classes) have no QI value: no statement counts them
        mask = cells[self.sa].isin(values).to_numpy() & self.structure.person_cell
        rec = np.ones(len(records), dtype=bool)
        parts = []
        for attr, val in conditions.items():
            vals, shown = self.match_values(attr, val)
            mask = mask & cells[attr].isin(vals).to_numpy()
            rec = rec & records[attr].isin(vals).to_numpy()
            parts.append(shown)
        n_q = int(rec.sum())
        if n_q == 0:
            raise KnowledgeError(
                "no record of the release matches "
                + ", ".join(parts)
                + "; P(. | that) is undefined"
            )
        lhs = values[0] if len(values) == 1 else " or ".join(map(str, values))
        label = f"P({lhs}" + (" | " + ", ".join(parts) if parts else "") + ")"
        return mask, n_q, label

    def P(self, s, **conditions) -> cp.Expression:
        """P(S = s | the given QI attributes), a cvxpy expression on the model's variable.

        ``s`` is a sensitive value, or a list of values for P(S in {...} | ...).
        Conditions name QI attributes (a list of values means "any of them"; a ``range``
        or :func:`~maxent_privacy.releases.ranges.between` the values present in it, see
        :meth:`match_values`); attributes left out are marginalized (Du et al. Section
        4.1), so the expression is ``sum of x over cells with s and matching QI /
        n(matching records)``. In generalized (pooled) releases the records are the
        people, with their exact QI from the population: ``age=27`` or
        ``age=between(20, 29)`` selects people, not published cells.

        >>> from maxent_privacy import MaxEntModel, Bucketized, datasets
        >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(),
        ...     qi=["gender", "degree"], sa="disease", group="bucket"))
        >>> flu = model.P("Flu", gender="male")    # 6 men in the release
        >>> model.add(flu == 0.3)                  # sum of 4 cells == 1.8 records
        >>> import pandas as pd
        >>> from maxent_privacy import between
        >>> ages = MaxEntModel(Bucketized(pd.DataFrame({"age": [17, 25, 29, 40],
        ...     "d": ["a", "b", "a", "b"], "g": [1, 1, 2, 2]}), ["age"], "d", "g"))
        >>> ages.P("a", age=between(18, 29)).maxent_tag.label    # ages 25 and 29
        'P(a | age in 18..29)'
        """
        mask, n_q, label = self._mask(s, conditions)
        idx = np.flatnonzero(mask)
        expr = cp.sum(self.x[idx]) / n_q if idx.size else cp.Constant(0.0)
        row = sp.csr_array(
            (np.full(idx.size, 1.0 / n_q), (np.zeros(idx.size, dtype=int), idx)),
            shape=(1, self.n_cells),
        )
        return tag(expr, label, row)

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
            A, const = linearize(item.args[0] - item.args[1], self.x, self.n_cells)
            sense = "==" if kind == "Equality" else "<="
        else:
            A, const = linearize(item, self.x, self.n_cells)
            sense = None
        if A.shape[0] != 1:
            raise KnowledgeError("terms() takes a scalar expression or constraint")
        row = sp.csr_array(A)
        coef = row.data * self.n_records
        out = self.cells.iloc[row.indices][self.qi + [self.group, self.sa, "person"]].copy()
        if sense is None:
            out["coefficient"] = coef
            out.attrs["constant"] = float(const[0])
        else:
            scale = np.max(np.abs(coef)) / self.n_records if coef.size else 1.0
            out["coefficient"] = coef / (scale * self.n_records)
            out.attrs["sense"] = sense
            out.attrs["rhs"] = float(-const[0] / (scale * self.n_records))
        return out.reset_index(drop=True)

    def add(self, constraint, name: str | None = None) -> None:
        """Record a fact: a cvxpy constraint on the model's probabilities.

        ``name`` keys the fact's dual value in ``result.duals``; without one, simple facts
        are named by their text (``"P(Flu | gender=male) == 0.3"``), others ``"fact k"``.
        A list of constraints adds each (names get a ``[i]`` suffix). All or nothing: when
        one item fails, none is added.

        >>> from maxent_privacy import MaxEntModel, Bucketized, datasets
        >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(),
        ...     qi=["gender", "degree"], sa="disease", group="bucket"))
        >>> model.add(model.P("Flu", gender="male") <= 0.5, name="flu")
        >>> [f.name for f in model.facts]
        ['flu']
        """
        before = len(self.facts)
        try:
            for item_name, item, row_groups in self._expand(constraint, name):
                self.facts.append(self._compile(item, item_name, row_groups))
        except BaseException:
            del self.facts[before:]  # nothing half-added
            raise

    def _expand(self, constraint, name):
        """``(name, constraint, row_groups)`` for every fact in ``constraint``."""
        if isinstance(constraint, Soft):
            yield name, constraint, None
        elif isinstance(constraint, Grouped):
            yield name, constraint.constraint, constraint.row_groups
        elif hasattr(constraint, "_maxent_facts_"):  # a protocol, like _repr_html_
            for fact_name, c in list(constraint._maxent_facts_(self, name)):
                yield from self._expand(c, fact_name)
        elif isinstance(constraint, (list, tuple)):
            for i, c in enumerate(constraint):
                yield from self._expand(c, None if name is None else f"{name}[{i}]")
        else:
            yield name, constraint, None

    def _compile(self, constraint, name, row_groups) -> Fact:
        """Check one constraint and compile it to a :class:`Fact`."""
        position = len(self.facts) + 1
        if isinstance(constraint, Soft):
            if name is None:
                name = f"soft {constraint.weight:g}: {default_name(constraint.fact, position)}"
            self._check_name(str(name))
            fact = compile_soft(constraint, str(name), self.x)
            check_range(constraint.fact, fact.name)
            return fact
        if isinstance(constraint, (bool, np.bool_)):
            raise KnowledgeError(
                f"fact {name or position!r} is a plain boolean, not a constraint "
                "(compare model.P(...) expressions, not numbers)"
            )
        if not isinstance(constraint, cp.constraints.constraint.Constraint):
            raise KnowledgeError(
                f"fact {name!r} is a {type(constraint).__name__}, not a cvxpy constraint "
                "(write e.g. model.P('Flu', gender='male') == 0.3)"
            )
        name = str(default_name(constraint, position) if name is None else name)
        self._check_name(name)
        self._check_variables(constraint, name)
        check_range(constraint, name)
        return compile_fact(constraint, name, self.x, self.n_cells, row_groups)

    def _check_name(self, name: str) -> None:
        if any(f.name == name for f in self.facts):
            raise KnowledgeError(f"a fact named {name!r} is already in the model")

    def _check_variables(self, constraint, name: str) -> None:
        foreign = [v for v in constraint.variables() if v is not self.x]
        if any(any(v is o for o in self._old_x) for v in foreign):
            raise KnowledgeError(
                f"fact {name!r} was built before model.person(...) changed the model's "
                "variables; build it again with model.P(...) or person.P(...)"
            )
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

    def remove(self, name: str) -> None:
        """Drop the fact with this name."""
        for i, f in enumerate(self.facts):
            if f.name == name:
                del self.facts[i]
                return
        raise KnowledgeError(f"no fact named {name!r} in the model")

    @contextmanager
    def transaction(self):
        """All or nothing: facts added and persons singled out in the block are undone
        when it raises.

        >>> from maxent_privacy import MaxEntModel, Bucketized, datasets
        >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(),
        ...     qi=["gender", "degree"], sa="disease", group="bucket"))
        >>> try:
        ...     with model.transaction():
        ...         model.add(model.P("Flu") == 0.3)
        ...         model.add(model.P("Flu") == 2.0)
        ... except Exception:
        ...     pass
        >>> len(model.facts)
        0
        """
        saved = (self.structure, self.x, list(self.facts), list(self._persons))
        saved_old_x = list(self._old_x)
        try:
            yield self
        except BaseException:
            self.structure, self.x, facts, persons = saved
            self.facts[:] = facts
            self._persons[:] = persons
            self._old_x[:] = saved_old_x
            raise

    def person(self, name, **qi) -> Person:
        """Single out one individual: a record with these QI values (a pseudonym).

        Give every QI attribute. When that QI value occurs in several buckets, which one
        holds this person is unknown: their class (and the rest of the records with that
        QI value) gets cells in every such bucket, tied by per-bucket QI-invariants (Du et
        al. Section 6, Figure 4). With a ``person`` column in the release (and in pooled
        releases, whose people all have ids), ``person(pid)`` with no QI refers to that
        person. Facts added before are carried over to the new cells; build new ``P(...)``
        expressions after this call.

        >>> from maxent_privacy import MaxEntModel, Bucketized, datasets
        >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(),
        ...     qi=["gender", "degree"], sa="disease", group="bucket"))
        >>> bob = model.person("Bob", gender="male", degree="college")  # buckets 1 or 2
        >>> model.add(bob.P("HIV") == 1)     # Bob has HIV: he is Ethan's record, bucket 2
        >>> result = model.solve()
        >>> round(float(result.person_posterior().loc["Bob", "HIV"]), 9)
        1.0
        """
        name = str(name)
        if any(p.name == name for p in self._persons):
            raise KnowledgeError(f"person {name!r} is already in the model")
        q, group = self._locate(name, qi)
        person = Person(self, name, q, group)
        old, old_x = self.structure, self.x
        old_persons = {p.name for p in self._persons}
        with self.transaction():
            self._persons.append(person)
            self._rebuild()
            T = remap_matrix(old, self.structure, old_persons)
            self.facts[:] = [f.remapped(T, old_x, self.x) for f in self.facts]
        return person

    def _locate(self, name: str, qi: dict) -> tuple[tuple, object]:
        """(QI values, group or None) of the person to single out."""
        if self.pooled:
            return self._locate_pooled(name, qi)
        frame = self.release.people
        if not qi and self.release.person is not None:
            pid_col = self.release.person
            hit = frame.index[(frame[pid_col].astype(str) == name).to_numpy()]
            if len(hit) == 0:
                raise KnowledgeError(f"person id {name!r} is not in column {pid_col!r}")
            row = frame.loc[hit[0]]
            return tuple(row[c] for c in self.qi), row[self.group]
        self._check_person_qi(name, qi)
        q = tuple(self.match_value(a, qi[a], "quasi-identifier") for a in self.qi)
        sel = np.ones(len(frame), dtype=bool)
        for a, v in zip(self.qi, q, strict=True):
            sel &= (frame[a] == v).to_numpy()
        if not sel.any():
            shown = ", ".join(f"{a}={v}" for a, v in zip(self.qi, q, strict=True))
            raise KnowledgeError(f"no record of the release has {shown} (person {name!r})")
        return q, None

    def _check_person_qi(self, name: str, qi: dict) -> None:
        ranged = [a for a, v in qi.items() if is_range(v)]
        if ranged:
            raise KnowledgeError(
                f"person {name!r}: give {ranged[0]!r} as one exact value, not a range "
                "(a person has one exact value of each quasi-identifier)"
            )
        unknown = [a for a in qi if a not in self.qi]
        if unknown:
            raise KnowledgeError(
                f"unknown quasi-identifier {unknown[0]!r} for person {name!r} "
                f"(the release's QI: {', '.join(self.qi)})"
            )
        missing = [a for a in self.qi if a not in qi]
        if missing:
            raise KnowledgeError(
                f"person {name!r} needs every QI attribute; missing {', '.join(missing)}"
            )

    def _locate_pooled(self, name: str, qi: dict) -> tuple[tuple, None]:
        """A person of pooled (or generalized) releases is named by their id."""
        records = self.structure.records
        hit = records.index[(records["pid"].astype(str) == name).to_numpy()]
        if len(hit) == 0:
            shown = ", ".join(map(str, records["pid"].head(5).tolist()))
            raise KnowledgeError(
                f"person {name!r} is not a person id of the pooled releases (ids such as "
                f"{shown}); in pooled or generalized releases a person is named by their id"
            )
        row = records.loc[hit[0]]
        q = tuple(row[c] for c in self.qi)
        if qi:
            self._check_person_qi(name, qi)
            given = tuple(self.match_value(a, qi[a], "quasi-identifier") for a in self.qi)
            if given != q:
                raise KnowledgeError(
                    f"person {name!r} has QI {dict(zip(self.qi, q, strict=True))} in the "
                    f"releases, not {dict(zip(self.qi, given, strict=True))}"
                )
        return q, None

    @property
    def persons(self) -> list[Person]:
        """The individuals singled out so far."""
        return list(self._persons)

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
    def compile(self):
        """The model as arrays for the solver: a :class:`~maxent_privacy.solve.MaxEntProblem`
        (data rows, fact rows and the row map naming them)."""
        return compile_problem(self)

    def solve(
        self,
        solver: str | None = None,
        *,
        decompose: bool = True,
        presolve: bool = True,
        polish: bool = True,
        tol: float = 1e-6,
        verbose: bool = False,
        client=None,
        progress=None,
        prior=None,
        **options,
    ):
        """Maximize the entropy subject to the data and the facts; return a Result.

        ``solver`` is ``"maxent"`` (our own: Newton on the dual with the record classes
        eliminated, :mod:`maxent_privacy.solve.newton`) or a cvxpy solver name that handles
        the exponential cone ("CLARABEL", "ECOS", "SCS", "MOSEK"). The default picks
        "maxent" when every fact is a linear equality or inequality, Clarabel otherwise
        (soft penalties, general convex expressions). Placements of generalized releases
        are solved by "maxent" on joint cells (:mod:`maxent_privacy.solve.placements`).
        ``client`` (a ``dask.distributed.Client``, or ``"local"`` for a local cluster
        started and closed for this solve) spreads the components over Dask workers
        ("maxent" only); ``progress``: None (a tqdm bar on stderr for large solves),
        True/False, or a function called with one line of text as the solve goes.

        Buckets no fact touches use the closed form of Du et al. Eq. (9)
        (Theorem 5); the rest is split into connected components, each solved alone
        (``decompose=False`` solves one problem). ``presolve`` fixes the cells that
        equality facts and the data force (zeros of ``P(...) == 0`` and what follows
        from them), which keeps interior-point solvers accurate. The answer is checked
        by our own certificate (residuals at most ``tol``, duality gap) before it is
        returned. ``polish`` refines a conic solver's answer on a linear component by
        Newton steps on the Lagrange dual (``result.components["polished"]`` says where).
        ``prior`` (a DataFrame indexed like ``posterior()``, or a callable of the classes'
        QI frame returning one row per class): maximize ``-sum x log(x / (n_c q_c))``
        instead, the table closest to that belief (:mod:`maxent_privacy.solve.prior`);
        counterfeit records' phantom classes are left out of it (they get a flat row).
        Other keyword arguments are the solver's own options, checked by name (see
        :func:`maxent_privacy.solve.solver_options`); an unknown one raises.
        """
        options = SolveOptions(
            solver=solver,
            decompose=decompose,
            presolve=presolve,
            polish=polish,
            tol=tol,
            verbose=verbose,
            client=client,
            progress=progress,
            solver_options=options,
        )
        return solve_model(self, options, prior=prior)

    def __repr__(self) -> str:
        return (
            f"MaxEntModel({self.n_records} records, {len(self.classes)} classes, "
            f"{self.n_cells} cells, {len(self.facts)} facts)"
        )

    # ------------------------------------------------------------------ bounds
    def bounds(
        self, by: str | None = None, values=None, exact: bool = False, **options
    ) -> pd.DataFrame:
        """The lowest and highest value of every posterior over all tables the model
        allows (data and hard facts; soft facts are left out), each with a dual
        certificate; ``exact=True`` over possible worlds (integral tables), per side
        (``lower_exact``, ``upper_exact``). Impossible values are shown as 0/0.
        ``time_limit`` (seconds, default 60) bounds the whole call. See
        :func:`maxent_privacy.bounds.bounds`.

        ``by``: None (P(s | QI value)), "group" (P(s | QI value, group)), "person" (the
        individual: the probability that this person holds s; with ``exact=True`` 1 where
        some world gives it to them, ``possible``, and where every world does,
        ``certain``) or "class" (per person, the share of their record class that holds
        s).

        >>> from maxent_privacy import MaxEntModel, Bucketized, datasets
        >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(),
        ...     qi=["gender", "degree"], sa="disease", group="bucket", person="name"))
        >>> model.bounds().loc[("male", "college", "Flu"), ["lower", "upper"]].tolist()
        [0.0, 0.6666666666666666]

        With men known not to have breast cancer, at least one of Allen and Brian (bucket
        1's two male college graduates, one record class) has one of its two Flu: their
        class's share is at least 1/2, yet each of them may be the one without it.

        >>> model.add(model.P("Breast Cancer", gender="male") == 0)
        >>> model.bounds(by="class").loc[("Allen", "Flu"), ["lower", "upper"]].tolist()
        [0.5, 1.0]
        >>> model.bounds(by="person").loc[("Allen", "Flu"), ["lower", "upper"]].tolist()
        [0.0, 1.0]
        """
        from .bounds.intervals import bounds

        return bounds(self, by=by, values=values, exact=exact, **options)
