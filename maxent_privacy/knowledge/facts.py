"""Facts: what ``model.add`` compiles a user's constraint into.

A :class:`Fact` keeps the user's name and constraint and, when the constraint is linear,
its sparse rows ``A @ x (sense) b`` over the model's cells. Expressions made by
``model.P(...)``, ``person.P(...)`` and ``count_having`` carry a :class:`Tag` (their text
and their row), so that facts built from them compile without cvxpy's gradient and get
readable default names; any expression derived from them by arithmetic refuses strict
inequalities with our :class:`~maxent_privacy.errors.KnowledgeError`.

>>> from maxent_privacy import MaxEntModel, Bucketized, datasets
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                                sa="disease", group="bucket"))
>>> flu = model.P("Flu", gender="male")
>>> flu.maxent_tag.label
'P(Flu | gender=male)'
>>> fact = compile_fact(flu == 0.3, "flu", model.x, model.n_cells)
>>> fact.sense, fact.A.shape, float(fact.b[0])
('==', (1, 27), 0.3)
>>> (flu + model.P("HIV", gender="male")) < 0.5
Traceback (most recent call last):
...
maxent_privacy.errors.KnowledgeError: strict inequalities (<, >) are not allowed: ...
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from ..errors import KnowledgeError

__all__ = ["Fact", "Tag", "compile_fact", "refuse_strict", "tag", "label_of", "substitute"]

#: the senses of a compiled fact
LINEAR, CONVEX, SOFT = ("==", "<="), "convex", "soft"


@dataclass
class Fact:
    """A compiled fact: the user's constraint and, when it is linear, its rows.

    ``A @ x (sense) b`` on the probability scale of the user's own expression, where
    ``sense`` is ``"=="`` or ``"<="`` (cvxpy's ``lhs - rhs`` form, so ``expr >= p``
    is stored as ``p - expr <= 0``); ``"convex"`` for other DCP constraints and
    ``"soft"`` for penalties. ``cells`` are the variable indices the fact touches.
    """

    name: str
    constraint: cp.Constraint
    sense: str  # "==", "<=", "convex" or "soft"
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
        """Number of rows (1 for a scalar fact)."""
        return 1 if self.A is None else self.A.shape[0]

    def remapped(self, T: sp.csr_array, old_x, new_x) -> Fact:
        """This fact over new cells, where ``old cell = T @ new cells`` (a new object)."""
        if self.A is not None:
            A = sp.csr_array(self.A @ T)
            return _replace(self, A=A, cells=np.unique(A.indices))
        constraint = substitute(self.constraint, old_x, T @ new_x)
        return _replace(self, constraint=constraint, cells=footprint_constraint(constraint, new_x))


def _replace(fact: Fact, **changes) -> Fact:
    from dataclasses import replace

    return replace(fact, **changes)


# ------------------------------------------------------------------ tags
@dataclass(frozen=True)
class Tag:
    """What a ``P(...)`` expression says: its text, its row over the cells, its range."""

    label: str
    row: sp.csr_array | None = None  # 1 x n_cells; None: compile with cvxpy's gradient
    top: float = 1.0  # largest value a constant compared with it may take


def _strict(self, other):
    raise KnowledgeError(
        "strict inequalities (<, >) are not allowed: the maximum entropy over an open set "
        "need not be attained (no maximizer exists when the bound is active); write <= or >="
    )


#: reflected operators and the forward operator they stand for
_REFLECTED = {"__radd__": "__add__", "__rsub__": "__sub__", "__rmul__": "__mul__"}
_REFLECTED["__rmatmul__"] = "__matmul__"


def _derived(op: str):
    """An arithmetic operator whose result keeps refusing strict inequalities."""
    forward = _REFLECTED.get(op)

    def method(self, *args):
        if forward and args and isinstance(args[0], cp.Expression):
            # Python calls a subclass's reflected operator first (plain ``a + b`` with b of
            # our class); cvxpy's answers ``other + self``, which would come back here
            # for ever: apply the other operand's own forward operator instead
            out = getattr(type(args[0]), forward)(args[0], self)
        else:
            out = getattr(super(type(self), self), op)(*args)
        return refuse_strict(out) if isinstance(out, cp.Expression) else out

    method.__name__ = op
    return method


_ARITHMETIC = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__")
_ARITHMETIC += ("__truediv__", "__neg__", "__matmul__", "__rmatmul__")
_STRICT_CLASSES: dict[type, type] = {}


def refuse_strict(expr: cp.Expression) -> cp.Expression:
    """Make ``expr`` (and what arithmetic derives from it) refuse ``<`` and ``>``.

    cvxpy's own message for a strict inequality says only that it is not allowed; ours
    says why. The expression's class becomes a subclass of its cvxpy class (made once per
    class) whose ``<``/``>`` raise :class:`KnowledgeError` and whose arithmetic operators
    return expressions of the same kind; nothing else changes.
    """
    base = type(expr)
    if base in _STRICT_CLASSES.values():
        return expr
    cls = _STRICT_CLASSES.get(base)
    if cls is None:
        body = {"__lt__": _strict, "__gt__": _strict, "__module__": base.__module__}
        if not issubclass(base, cp.Constant):
            # (a constant's own operators call back into ours: leave them alone)
            body.update({op: _derived(op) for op in _ARITHMETIC})
        cls = type(base.__name__, (base,), body)
        _STRICT_CLASSES[base] = cls
    expr.__class__ = cls
    return expr


def tag(expr: cp.Expression, label: str, row=None, top: float = 1.0) -> cp.Expression:
    """Attach a :class:`Tag` to ``expr`` (and refuse strict inequalities on it)."""
    expr = refuse_strict(expr)
    expr.maxent_tag = Tag(label, row, top)
    return expr


def tag_of(expr) -> Tag | None:
    """The tag of an expression made by ``P(...)`` (None for others)."""
    return getattr(expr, "maxent_tag", None)


def label_of(expr) -> str | None:
    """The text of a tagged expression or a scalar constant (None for others)."""
    t = tag_of(expr)
    if t is not None:
        return t.label
    if isinstance(expr, cp.Constant) or (not expr.variables() and expr.is_constant()):
        value = np.asarray(expr.value)
        if value.size == 1:
            return f"{float(value):g}"
    return None


def default_name(constraint: cp.Constraint, position: int) -> str:
    """``"P(Flu | gender=male) == 0.3"`` for simple facts, else ``"fact <position>"``."""
    op = {"Equality": "==", "Inequality": "<="}.get(type(constraint).__name__)
    if op is not None and len(constraint.args) == 2:
        left, right = (label_of(a) for a in constraint.args)
        if left is not None and right is not None:
            if op == "<=" and tag_of(constraint.args[1]) and not tag_of(constraint.args[0]):
                return f"{right} >= {left}"
            return f"{left} {op} {right}"
    return f"fact {position}"


def check_range(constraint: cp.Constraint, name: str) -> None:
    """A constant compared with a tagged expression must lie in [0, its top]."""
    if len(constraint.args) != 2:
        return
    left, right = constraint.args
    for p_side, c_side in ((left, right), (right, left)):
        t = tag_of(p_side)
        if t is None or c_side.variables():
            continue
        value = np.asarray(c_side.value, dtype=float)
        bad = value[(value < 0) | (value > t.top) | ~np.isfinite(value)]
        if bad.size:
            what = "probability" if t.top == 1.0 else "count"
            top = f"{t.top:g}"
            raise KnowledgeError(
                f"{what} {bad.ravel()[0]:g} is outside [0, {top}] in fact {name!r}"
            )


# ------------------------------------------------------------- compiling
def linearize(expr: cp.Expression, x: cp.Variable, n_cells: int) -> tuple[sp.csr_array, np.ndarray]:
    """``expr == A @ x + c`` for an affine expression (A has one row per entry)."""
    size = int(np.prod(expr.shape)) if expr.shape else 1
    old = x.value
    try:
        x.value = np.zeros(n_cells)
        const = np.atleast_1d(np.asarray(expr.value, dtype=float)).ravel(order="F")
        grad = expr.grad.get(x) if expr.variables() else None
    finally:
        x.value = old
    if grad is None or (not sp.issparse(grad) and np.isscalar(grad) and grad == 0):
        A = sp.csr_array((size, n_cells))
    elif sp.issparse(grad):
        A = sp.csr_array(sp.csc_array(grad).T)
    else:
        A = sp.csr_array(np.atleast_2d(np.asarray(grad)).T)
    A.eliminate_zeros()
    return A, const


def _fast_rows(constraint, n_cells: int):
    """``lhs - rhs`` as (A, const) from the tags' rows, without cvxpy's gradient (which
    costs more), when both sides are tagged expressions with rows (one per entry) or
    constants of the constraint's size (or scalars)."""
    size = int(np.prod(constraint.shape)) if constraint.shape else 1
    parts = []
    for arg in constraint.args:
        t = tag_of(arg)
        if t is not None and t.row is not None and t.row.shape[0] == size:
            parts.append((sp.csr_array(t.row), 0.0))
        elif not arg.variables() and np.asarray(arg.value).size in (1, size):
            parts.append((None, np.asarray(arg.value, dtype=float).ravel(order="F")))
        else:
            return None
    (ra, ca), (rb, cb) = parts
    zero = sp.csr_array((size, n_cells))
    A = sp.csr_array((ra if ra is not None else zero) - (rb if rb is not None else zero))
    A.eliminate_zeros()
    return A, np.broadcast_to(ca - cb, (size,)).astype(float)


def footprint(expr: cp.Expression, x, n_cells: int) -> np.ndarray:
    """Indices of the cells an expression depends on (exact for any DCP tree)."""
    if not expr.variables():
        return np.empty(0, dtype=int)
    if expr.is_affine():
        A, _ = linearize(expr, x, n_cells)
        return np.unique(A.indices)
    parts = [footprint(a, x, n_cells) for a in expr.args]
    return np.unique(np.concatenate(parts)) if parts else np.empty(0, dtype=int)


def footprint_constraint(constraint, x) -> np.ndarray:
    """Indices of the cells a constraint depends on."""
    n_cells = x.shape[0]
    parts = [footprint(a, x, n_cells) for a in constraint.args]
    return np.unique(np.concatenate(parts)) if parts else np.empty(0, dtype=int)


def _is_linear(constraint) -> bool:
    kind = type(constraint).__name__
    return kind in ("Equality", "Inequality", "Zero", "NonPos") and all(
        a.is_affine() for a in constraint.args
    )


def compile_fact(constraint, name: str, x: cp.Variable, n_cells: int, row_groups=None) -> Fact:
    """A checked constraint (on ``x`` alone, DCP, no parameters) as a :class:`Fact`."""
    if not _is_linear(constraint):
        return Fact(name, constraint, CONVEX, None, None, footprint_constraint(constraint, x))
    kind = type(constraint).__name__
    if kind in ("Zero", "NonPos"):
        expr = constraint.expr
    else:
        expr = constraint.args[0] - constraint.args[1]
    sense = "==" if kind in ("Equality", "Zero") else "<="
    fast = _fast_rows(constraint, n_cells) if kind in ("Equality", "Inequality") else None
    A, const = fast if fast is not None else linearize(expr, x, n_cells)
    return Fact(
        name, constraint, sense, A, -const, np.unique(A.indices), expr.shape, row_groups=row_groups
    )


def compile_soft(soft, name: str, x: cp.Variable) -> Fact:
    """A soft fact (a linear ==, <= or >= held as a penalty) as a :class:`Fact`."""
    inner = soft.fact
    kind = type(inner).__name__
    if kind not in ("Equality", "Inequality") or not all(a.is_affine() for a in inner.args):
        raise KnowledgeError(f"soft fact {name!r} must be a linear ==, <= or >= fact, got {kind}")
    sense = "==" if kind == "Equality" else "<="
    cells = footprint_constraint(inner, x)
    return Fact(name, inner, SOFT, None, None, cells, (), soft.weight, sense)


def substitute(node, var, replacement):
    """Copy a cvxpy expression or constraint tree with ``var`` replaced."""
    if node is var:
        return replacement
    args = getattr(node, "args", None)
    if not args:
        return node
    return node.copy([substitute(a, var, replacement) for a in args])
