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

import warnings
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
    #: rows with the same id share their condition (rules P(s | Qv) of one Qv): presolve
    #: adds up such rows, whose sum may pin records (confidences adding up to 1)
    row_groups: np.ndarray | None = None

    @property
    def size(self) -> int:
        return 1 if self.A is None else self.A.shape[0]


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
        values = [m._match_value(m.sa, v, "sensitive") for v in _as_list(s)]
        if not values:
            raise KnowledgeError("P() needs at least one sensitive value")
        mask = (m.cells["person"] == self.name).to_numpy() & m.cells[m.sa].isin(values).to_numpy()
        mask = mask & m._z
        idx = np.flatnonzero(mask)
        expr = _refuse_strict(cp.sum(m.x[idx]) if idx.size else cp.Constant(0.0))
        shown = " or ".join(map(str, values))
        m._labels[id(expr)] = (expr, f"P({self.name} has {shown})")
        return expr

    def __repr__(self) -> str:
        shown = ", ".join(f"{a}={v}" for a, v in self.qi.items())
        where = f", group {self.group!r}" if self.group is not None else ""
        return f"Person({self.name!r}: {shown}{where})"


def _strict(self, other):
    raise KnowledgeError(
        "strict inequalities (<, >) are not allowed: the maximum entropy over an open set "
        "need not be attained (no maximizer exists when the bound is active); write <= or >="
    )


_STRICT_CLASSES: dict[type, type] = {}


def _refuse_strict(expr: cp.Expression) -> cp.Expression:
    """Give a P(...) expression a clear error for ``<`` and ``>`` (cvxpy's says only 'no')."""
    base = type(expr)
    cls = _STRICT_CLASSES.get(base)
    if cls is None:
        cls = type(base.__name__, (base,), {"__lt__": _strict, "__gt__": _strict})
        _STRICT_CLASSES[base] = cls
    expr.__class__ = cls
    return expr


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

    def __init__(self, release, populations=None):
        from .generalized import Generalized

        releases = list(release) if isinstance(release, (list, tuple)) else [release]
        if not releases:
            raise ReleaseError("MaxEntModel needs at least one release")
        for r, rel in enumerate(releases, start=1):
            if not isinstance(rel, (Bucketized, Generalized)):
                raise ReleaseError(
                    f"MaxEntModel needs Bucketized or Generalized releases; release {r} is a "
                    f"{type(rel).__name__}"
                )
        if populations is None:
            populations = [None] * len(releases)
        elif isinstance(populations, pd.DataFrame):
            populations = [populations]
        populations = list(populations)
        if len(populations) != len(releases):
            raise ReleaseError(
                f"{len(populations)} populations for {len(releases)} releases (use None for "
                "releases that need none)"
            )
        self.releases = releases
        self.populations = populations
        self.release = releases[0]
        self.pooled = len(releases) > 1 or isinstance(releases[0], Generalized)
        self.qi = list(self.release.qi)
        self.sa = self.release.sa
        self.group = self.release.group
        self.facts: list[Fact] = []
        self._labels: dict[int, tuple[cp.Expression, str]] = {}
        self._rows: dict[int, tuple] = {}
        self._domains = {
            c: set(pd.concat([r.frame[c] for r in releases]).unique().tolist())
            for c in self.qi + [self.sa]
        }
        self._persons: list[Person] = []
        self._split: list = []
        self._old_x: list[cp.Variable] = []
        self.x = None
        if self.pooled:
            from .pooled import build_pooled

            build_pooled(self)
            self.x = cp.Variable(self.n_cells, name="x")
        else:
            self.n_records = len(self.release.frame)
            self._qi_frame = self.release.frame
            self._build()

    def _build(self) -> None:
        """Record classes, cells and the index arrays the solver uses.

        Records nothing tells apart form a class: by default those with the same QI value
        in the same bucket. A person singled out by :meth:`person` is a class of one; when
        their QI value occurs in several buckets, which one is theirs is unknown, so their
        class (and the rest of the records with that QI value) has cells in every such
        bucket, and per bucket a QI-invariant ties the classes together (Du et al. Fig. 4).
        """
        frame = self.release.frame
        qi, grp = self.qi, self.group
        qg = frame.groupby(qi + [grp], sort=True).size().rename("n").reset_index()
        qg["qg"] = np.arange(len(qg))
        counts = frame.groupby([grp, self.sa], sort=True).size().rename("count").reset_index()
        counts["gs"] = np.arange(len(counts))

        classes = qg.assign(person=None, member=False)
        if self._persons:
            classes = self._person_classes(qg)
        classes = classes.reset_index(drop=True)
        classes["cls"] = np.arange(len(classes))
        fixed = classes[~classes["member"].to_numpy(dtype=bool)].copy()
        fixed[grp] = fixed[grp].astype(qg[grp].dtype)
        member = classes[classes["member"].to_numpy(dtype=bool)]
        parts = [
            fixed.drop(columns=["qg"])
            .merge(qg[qi + [grp, "qg"]], on=qi + [grp], how="left")
            .merge(counts, on=grp)
        ]
        parts[0]["qg_row"] = -1
        if len(member):
            m = member.drop(columns=[grp, "qg"]).merge(qg[qi + [grp, "qg"]], on=qi)
            m = m.merge(counts, on=grp)
            m["qg_row"] = m["qg"]
            parts.append(m)
            # a person placed in a known bucket shares that (QI value, bucket) row too
            shared = parts[0]["qg"].isin(m["qg"]).to_numpy()
            parts[0].loc[shared, "qg_row"] = parts[0].loc[shared, "qg"]
        cells = pd.concat(parts, ignore_index=True)
        cells = cells.sort_values(["cls", "gs"], kind="stable").reset_index(drop=True)
        self.classes = classes[qi + [grp, "n", "person"]].copy()
        self.group_values = counts.rename(columns={"count": "n"}).drop(columns="gs")
        self.cells = cells[qi + [grp, self.sa, "cls", "gs", "n", "person"]].copy()
        self.n_cells = len(cells)
        self._cls = cells["cls"].to_numpy()
        self._gs = cells["gs"].to_numpy()
        self._n = cells["n"].to_numpy(dtype=float)
        self._class_n = classes["n"].to_numpy(dtype=float)
        self._class_member = classes["member"].to_numpy(dtype=bool)
        self._gs_n = counts["count"].to_numpy(dtype=float)
        self._gs_group = counts[grp].to_numpy()
        # QI-invariants of the (q, g) pairs shared by classes with membership
        used = np.unique(cells["qg_row"].to_numpy()[cells["qg_row"].to_numpy() >= 0])
        remap = np.full(len(qg), -1)
        remap[used] = np.arange(len(used))
        qg_row = cells["qg_row"].to_numpy()
        self._qg = np.where(qg_row >= 0, remap[np.maximum(qg_row, 0)], -1)
        self._qg_n = qg["n"].to_numpy(dtype=float)[used]
        self._qg_table = qg.iloc[used][qi + [grp, "n"]].reset_index(drop=True)
        member = self._class_member

        def cell_key():
            kind = np.where(member[cells["cls"].to_numpy()], "member", "fixed")
            return list(
                zip(
                    cells["person"].fillna("").astype(str),
                    kind,
                    *(cells[c] for c in qi),
                    cells[grp],
                    cells[self.sa],
                    strict=False,
                )
            )

        self._cell_key_fn, self._cell_key_cache = cell_key, None
        self._A_sa = None
        self._sa_bucket = None
        self._A_link = sp.csr_array((0, self.n_cells))
        self._ref = np.full(self.n_cells, -1)
        self._z = np.ones(self.n_cells, dtype=bool)
        self._sa_has_y = np.zeros(len(counts), dtype=bool)
        if self.release.person is not None:
            pid = frame[self.release.person].to_numpy()
            key = classes.set_index(qi + [grp])["cls"]
            idx = pd.MultiIndex.from_frame(frame[qi + [grp]])
            base = key[
                ~classes["member"].to_numpy(dtype=bool) & classes["person"].isna().to_numpy()
            ]
            cls_of = base.reindex(idx).to_numpy()
            own = classes.dropna(subset=["person"]).set_index("person")["cls"]
            cls_of = np.where(
                pd.Series(pid).astype(str).isin(own.index.astype(str)),
                pd.Series(pid).astype(str).map(own.rename(index=str)),
                cls_of,
            )
            self._person_class = pd.Series(cls_of, index=pid)
        else:
            self._person_class = None
        if self.x is not None:
            self._old_x.append(self.x)
        self.x = cp.Variable(self.n_cells, name="x")

    @property
    def _cell_key(self) -> list[tuple]:
        """One key per cell (who, kind, QI..., group, value), to carry facts over when
        :meth:`person` rebuilds the cells; computed on first use."""
        if self.__dict__.get("_cell_key_cache") is None:
            self._cell_key_cache = self._cell_key_fn()
        return self._cell_key_cache

    def _person_classes(self, qg: pd.DataFrame) -> pd.DataFrame:
        qi, grp = self.qi, self.group
        keys = list(zip(*(qg[c] for c in qi), strict=True))
        by_q: dict[tuple, list[int]] = {}
        for i, k in enumerate(keys):
            by_q.setdefault(k, []).append(i)
        singled = {p.q for p in self._persons}
        keep = [i for i, k in enumerate(keys) if k not in singled]
        out = [qg.iloc[keep].assign(person=None, member=False)]
        rows = []
        for q in sorted(singled, key=str):
            idx = by_q[q]
            groups = qg[grp].to_numpy()[idx].tolist()
            sizes = qg["n"].to_numpy()[idx].tolist()
            ps = [p for p in self._persons if p.q == q]
            n_q = sum(sizes)
            qd = dict(zip(qi, q, strict=True))
            if len(ps) > n_q:
                shown = ", ".join(f"{a}={v}" for a, v in qd.items())
                raise KnowledgeError(
                    f"{len(ps)} persons have {shown} but the release holds {n_q} such records"
                )
            member = len(groups) > 1 and any(p.group is None for p in ps)
            if member:
                for p in ps:
                    rows.append(
                        {
                            **qd,
                            grp: p.group,
                            "n": 1,
                            "person": p.name,
                            "member": p.group is None,
                            "qg": -1,
                        }
                    )
                if n_q > len(ps):
                    rows.append(
                        {
                            **qd,
                            grp: None,
                            "n": n_q - len(ps),
                            "person": None,
                            "member": True,
                            "qg": -1,
                        }
                    )
            else:
                taken = dict.fromkeys(groups, 0)
                for p in ps:
                    g = groups[0] if p.group is None else p.group
                    taken[g] += 1
                    rows.append({**qd, grp: g, "n": 1, "person": p.name, "member": False, "qg": -1})
                for g, n in zip(groups, sizes, strict=True):
                    if n - taken[g] < 0:
                        raise KnowledgeError(f"more persons than records in group {g!r}")
                    if n - taken[g] > 0:
                        rows.append(
                            {
                                **qd,
                                grp: g,
                                "n": n - taken[g],
                                "person": None,
                                "member": False,
                                "qg": -1,
                            }
                        )
        extra = pd.DataFrame(rows, columns=list(qg.columns) + ["person", "member"])
        return pd.concat([out[0], extra], ignore_index=True)

    # ------------------------------------------------------------------ data
    def invariant_matrix(self, drop_redundant: bool = True):
        """The data constraints as ``(A, b, rows)``: ``A @ x == b`` on the count scale.

        ``rows`` is a DataFrame naming each row: ``kind`` is ``"QI"`` for a class's own row
        (its QI-invariant; with a person singled out, its One constraint), ``"QI (shared)"``
        for the QI-invariant of a (QI value, group) pair whose bucket is unknown for some
        class, and ``"SA"`` for an SA-invariant. With ``drop_redundant`` one SA-invariant
        per bucket is left out, so every bucket has g + h - 1 independent rows (Du et al.
        Theorem 3); with persons the solver also drops one row per shared QI value.
        """
        n_cls, n_gs, n_qg = len(self._class_n), len(self._gs_n), len(self._qg_n)
        cols = np.arange(self.n_cells)
        ones = np.ones(self.n_cells)
        A_cls = sp.csr_array((ones, (self._cls, cols)), shape=(n_cls, self.n_cells))
        if self._gs is not None:
            A_gs = sp.csr_array((ones, (self._gs, cols)), shape=(n_gs, self.n_cells))
        else:  # pooled releases: Relation rows per release, bucket and value
            A_gs = sp.csr_array(self._A_sa)
        has = self._qg >= 0
        A_qg = sp.csr_array((ones[has], (self._qg[has], cols[has])), shape=(n_qg, self.n_cells))
        keep_gs = np.ones(n_gs, dtype=bool)
        if drop_redundant:
            # the last sensitive value of every group (its row is implied by the others)
            last = pd.Series(np.arange(n_gs)).groupby(self._gs_group).max().to_numpy()
            keep_gs[last] = False
        A = sp.vstack([A_cls, A_qg, A_gs[keep_gs]], format="csr")
        b = np.concatenate([self._class_n, self._qg_n, self._gs_n[keep_gs]])
        rows_cls = self.classes.assign(kind="QI")
        rows_qg = self._qg_table.assign(kind="QI (shared)")
        rows_gs = self.group_values.loc[keep_gs].assign(kind="SA")
        rows = pd.concat([rows_cls, rows_qg, rows_gs], ignore_index=True)
        return A, b, rows

    def true_assignment(self, original: pd.DataFrame) -> np.ndarray:
        """Cell values of the original data (counts of each class with each value).

        ``original`` must carry the release's QI, group and sensitive columns, for example
        the release's own frame (the sensitive value on each row is the true one).
        """
        if self._persons:
            raise ReleaseError("true_assignment() is for models without persons singled out")
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
        mask = self.cells[self.sa].isin(values).to_numpy() & self._z
        rec = np.ones(len(self._qi_frame), dtype=bool)
        parts = []
        for attr, val in conditions.items():
            vals = [self._match_value(attr, v, "quasi-identifier") for v in _as_list(val)]
            mask = mask & self.cells[attr].isin(vals).to_numpy()
            rec = rec & self._qi_frame[attr].isin(vals).to_numpy()
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
        expr = _refuse_strict(expr)
        self._labels[id(expr)] = (expr, label)
        row = sp.csr_array(
            (np.full(idx.size, 1.0 / n_q), (np.zeros(idx.size, dtype=int), idx)),
            shape=(1, self.n_cells),
        )
        self._rows[id(expr)] = (expr, row)
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

    def _fast_rows(self, constraint):
        """``lhs - rhs`` as (A, const) without cvxpy's gradient when both sides are
        P(...) expressions or constants (the common case; ``grad`` costs ~15 ms)."""
        parts = []
        for arg in constraint.args:
            hit = self._rows.get(id(arg))
            if hit is not None and hit[0] is arg:
                parts.append((hit[1], 0.0))
            elif not arg.variables() and np.asarray(arg.value).size == 1:
                parts.append((None, float(np.asarray(arg.value))))
            else:
                return None
        (ra, ca), (rb, cb) = parts
        zero = sp.csr_array((1, self.n_cells))
        A = sp.csr_array((ra if ra is not None else zero) - (rb if rb is not None else zero))
        A.eliminate_zeros()
        return A, np.array([ca - cb])

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
            top = hit[2] if len(hit) > 2 else 1  # count_having: a count of persons
            bad = value[(value < 0) | (value > top) | ~np.isfinite(value)]
            if bad.size:
                what = "probability" if len(hit) <= 2 else "count"
                raise KnowledgeError(
                    f"{what} {bad.ravel()[0]:g} is outside [0, {top}] in fact {name!r}"
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
            if kind not in ("Equality", "Inequality") or not all(a.is_affine() for a in inner.args):
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
            fast = self._fast_rows(constraint) if kind in ("Equality", "Inequality") else None
            A, const = fast if fast is not None else self._linearize(expr)
            fact = Fact(name, constraint, sense, A, -const, np.unique(A.indices), expr.shape)
            fact.row_groups = getattr(constraint, "_row_groups", None)
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

    def person(self, name, **qi) -> Person:
        """Single out one individual: a record with these QI values (a pseudonym).

        Give every QI attribute. When that QI value occurs in several buckets, which one
        holds this person is unknown: their class (and the rest of the records with that
        QI value) gets cells in every such bucket, tied by per-bucket QI-invariants (Du et
        al. Section 6, Figure 4). With a ``person`` column in the release, ``person(pid)``
        with no QI refers to that row's person (bucket known). Facts added before are
        carried over to the new cells; build new ``P(...)`` expressions after this call.

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
        group = None
        frame = self.release.frame
        if not qi and self.release.person is not None:
            pid_col = self.release.person
            hit = frame.index[(frame[pid_col].astype(str) == name).to_numpy()]
            if len(hit) == 0:
                raise KnowledgeError(f"person id {name!r} is not in column {pid_col!r}")
            row = frame.loc[hit[0]]
            q = tuple(row[c] for c in self.qi)
            group = row[self.group]
        else:
            missing = [a for a in self.qi if a not in qi]
            unknown = [a for a in qi if a not in self.qi]
            if unknown:
                raise KnowledgeError(
                    f"unknown quasi-identifier {unknown[0]!r} for person {name!r} "
                    f"(the release's QI: {', '.join(self.qi)})"
                )
            if missing:
                raise KnowledgeError(
                    f"person {name!r} needs every QI attribute; missing {', '.join(missing)}"
                )
            q = tuple(self._match_value(a, qi[a], "quasi-identifier") for a in self.qi)
            sel = np.ones(len(frame), dtype=bool)
            for a, v in zip(self.qi, q, strict=True):
                sel &= (frame[a] == v).to_numpy()
            if not sel.any():
                shown = ", ".join(f"{a}={v}" for a, v in zip(self.qi, q, strict=True))
                raise KnowledgeError(f"no record of the release has {shown} (person {name!r})")
        person = Person(self, name, q, group)
        saved = dict(self.__dict__)
        old_keys = self._cell_key
        old_member_q = {k[2 : 2 + len(self.qi)] for k in old_keys if k[1] == "member"}
        old_persons = {p.name for p in self._persons}
        self._persons.append(person)
        try:
            self._build()
            self._remap_facts(old_keys, old_member_q, old_persons, saved["x"])
        except Exception:
            self.__dict__.clear()
            self.__dict__.update(saved)
            self._persons = [p for p in saved["_persons"] if p is not person]
            raise
        return person

    def _remap_facts(self, old_keys, old_member_q, old_persons, old_x) -> None:
        """Carry facts over to the cells of a rebuilt model (old cell = sum of new ones)."""
        index = {k: i for i, k in enumerate(old_keys)}
        # a person's old cell, by (person, QI..., group, value): one lookup, not a scan
        person_index = {(k[0], *k[2:]): i for i, k in enumerate(old_keys) if k[0]}
        k_q = len(self.qi)
        rows, cols = [], []
        for j, key in enumerate(self._cell_key):
            who, _, rest = key[0], key[1], key[2:]
            q = rest[:k_q]
            if who in old_persons:
                i = person_index.get((who, *rest))
            else:
                i = index.get(("", "member" if q in old_member_q else "fixed", *rest))
            # no old cell: every record of that (QI value, bucket) was a person placed there,
            # so this new cell is 0 in every feasible answer and old facts ignore it
            if i is not None:
                rows.append(i)
                cols.append(j)
        T = sp.csr_array(
            (np.ones(len(rows)), (np.array(rows, dtype=int), np.array(cols, dtype=int))),
            shape=(len(old_keys), self.n_cells),
        )
        from .solve import _substitute

        for f in self.facts:
            if f.A is not None:
                f.A = sp.csr_array(f.A @ T)
                f.cells = np.unique(f.A.indices)
            else:
                f.constraint = _substitute(f.constraint, old_x, T @ self.x)
                f.cells = self._footprint_constraint(f.constraint)

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
        progress: bool | None = None,
        **options,
    ):
        """Maximize the entropy subject to the data and the facts; return a Result.

        ``solver`` is ``"maxent"`` (our own: Newton on the dual with the record classes
        eliminated, :mod:`maxent_privacy.dual`) or a cvxpy solver name that handles the
        exponential cone ("CLARABEL", "ECOS", "SCS", "MOSEK"). The default picks
        "maxent" when every fact is a linear equality or inequality, Clarabel otherwise
        (soft penalties, general convex expressions, placements in generalized releases).
        ``client`` (a ``dask.distributed.Client``, or ``"local"`` for a local cluster
        started and closed for this solve) spreads the components over Dask workers
        ("maxent" only); ``progress`` shows a tqdm bar (default: for large solves).

        Buckets no fact touches use the closed form of Du et al. Eq. (9)
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
        from .conflicts import explain_infeasibility
        from .errors import InfeasibleKnowledge
        from .solve import solve_model

        own_client = None
        if isinstance(client, str):
            if client != "local":
                raise ValueError(f"client must be a dask Client or 'local', got {client!r}")
            from dask.distributed import Client, LocalCluster

            own_client = Client(LocalCluster(processes=True, threads_per_worker=1))
            client = own_client
        try:
            return self._solve(
                solve_model,
                solver,
                decompose,
                presolve,
                tol,
                verbose,
                options,
                polish,
                client=client,
                progress=progress,
            )
        except InfeasibleKnowledge as err:
            table = explain_infeasibility(self)
            if table.empty:
                raise
            names = table["fact"].tolist()
            shown = "; ".join(names[:6]) + ("; ..." if len(names) > 6 else "")
            raise InfeasibleKnowledge(
                f"{len(names)} fact{'s' if len(names) != 1 else ''} cannot hold together with "
                f"the data: {shown} (see .conflicts)",
                conflicts=table,
            ) from err
        finally:
            if own_client is not None:
                cluster = own_client.cluster
                own_client.close()
                cluster.close()

    def _solve(
        self,
        solve_model,
        solver,
        decompose,
        presolve,
        tol,
        verbose,
        options,
        polish,
        client=None,
        progress=None,
    ):
        if client is not None and solver is not None and str(solver).upper() != "MAXENT":
            raise ValueError("client= (Dask) works with solver='maxent' only")

        def run(name, **extra):
            return solve_model(
                self,
                solver=name,
                decompose=decompose,
                presolve=presolve,
                tol=tol,
                verbose=verbose,
                options=options,
                polish=polish,
                **extra,
            )

        from .errors import SolverFailed
        from .solve import MAXENT, pick_solver

        if solver is not None or pick_solver(None, self) != MAXENT:
            return run(solver, client=client, progress=progress)
        try:
            return run(MAXENT, client=client, progress=progress)
        except SolverFailed as err:
            # the default falls back on the reference path (Clarabel), and says so
            warnings.warn(f"{err}; solved with CLARABEL instead", stacklevel=3)
            result = run("CLARABEL")
            result.solver_stats["fallback_from"] = f"maxent: {err}"
            return result

    def __repr__(self) -> str:
        return (
            f"MaxEntModel({self.n_records} records, {len(self._class_n)} classes, "
            f"{self.n_cells} cells, {len(self.facts)} facts)"
        )

    # ------------------------------------------------------------------ bounds
    def bounds(
        self, by: str | None = None, values=None, exact: bool = False, **options
    ) -> pd.DataFrame:
        """The lowest and highest value of every posterior over all tables the model
        allows (data and hard facts; soft facts are left out), each with a dual
        certificate; ``exact=True`` over possible worlds (integral tables). Impossible
        values are shown as 0/0. See :func:`maxent_privacy.bounds.bounds`.

        >>> from maxent_privacy import MaxEntModel, Bucketized, datasets
        >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(),
        ...     qi=["gender", "degree"], sa="disease", group="bucket"))
        >>> model.bounds().loc[("male", "college", "Flu"), ["lower", "upper"]].tolist()
        [0.0, 0.6666666666666666]
        """
        from .bounds import bounds

        return bounds(self, by=by, values=values, exact=exact, **options)
