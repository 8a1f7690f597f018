"""Compiling parsed knowledge statements onto a model.

:func:`apply_knowledge` turns each :class:`~maxent_privacy.knowledge.syntax.Statement` into
what ``model.add`` takes (a cvxpy constraint, a vague or a soft fact) or a person singled
out by ``model.person``, checking every name and value against the model first; errors are
:class:`~maxent_privacy.knowledge.syntax.KnowledgeFileError` at the statement's
``source:line:column``. It is re-exported by :mod:`maxent_privacy.knowledge.parser`.
"""

from __future__ import annotations

import math

from .._validation import ArgumentTypeError, shown
from ..errors import MaxEntError
from ..releases.ranges import is_range
from .syntax import (
    BinOp,
    Count,
    Expr,
    KnowledgeFileError,
    Neg,
    Prob,
    Statement,
    constant,
    constants,
)

__all__ = ["apply_knowledge"]


# ------------------------------------------------------------------------ compile
class _Compiler:
    """Turns statements into what ``model.add`` takes, checking names against the model."""

    def __init__(self, model, statement: Statement, persons: dict):
        self.model, self.st, self.persons = model, statement, persons

    def error(self, reason: str, span=None) -> KnowledgeFileError:
        st = self.st
        if span is None or span == (0, 0) or not st.text:
            col, near = st.column, st.body or None
        else:
            col, near = span[0], st.text[span[0] - 1 : span[1] - 1]
        return KnowledgeFileError(reason, source=st.source, line=st.line, column=col, near=near)

    def check_value(self, column: str, value, role: str, span) -> None:
        from ..errors import KnowledgeError

        try:
            self.model.match_value(column, value, role)
        except KnowledgeError as exc:
            raise self.error(str(exc), span) from exc

    def check_range_values(self, column: str, spec, span) -> None:
        from ..errors import KnowledgeError

        try:
            self.model.match_values(column, spec)
        except KnowledgeError as exc:
            raise self.error(str(exc), span) from exc

    def check_conditions(self, conditions) -> dict:
        m = self.model
        kwargs = {}
        for c in conditions:
            if c.attribute not in m.qi:
                if c.attribute == m.sa:
                    raise self.error(
                        f"{c.attribute!r} is the sensitive attribute; it goes left of '|' "
                        "(conditions name quasi-identifiers only)",
                        c.span,
                    )
                raise self.error(
                    f"unknown quasi-identifier {c.attribute!r} "
                    f"(the release's QI: {', '.join(map(str, m.qi))})",
                    c.span,
                )
            for v, s in zip(c.values, _spans(c.value_spans, len(c.values)), strict=True):
                if is_range(v):
                    self.check_range_values(c.attribute, v, s)
                else:
                    self.check_value(c.attribute, v, "quasi-identifier", s)
            kwargs[c.attribute] = c.values[0] if len(c.values) == 1 else list(c.values)
        return kwargs

    def check_sensitive(self, values, spans) -> object:
        for v, s in zip(values, _spans(spans, len(values)), strict=True):
            self.check_value(self.model.sa, v, "sensitive", s)
        return values[0] if len(values) == 1 else list(values)

    def person(self, name: str, span=None):
        if name not in self.persons:
            raise self.error(f"person {name!r} is not defined before this statement", span)
        return self.persons[name]

    def leaf(self, node: Prob | Count):
        """The cvxpy expression of one ``P(...)`` or ``count(...)``."""
        from ..errors import KnowledgeError
        from .vague import count_having

        if isinstance(node, Prob):
            if node.person is None and node.attribute != self.model.sa:
                raise self.error(
                    f"P(...) must name the sensitive attribute {self.model.sa!r} left of '|', "
                    f"not {node.attribute!r}",
                    node.attribute_span,
                )
            s = self.check_sensitive(node.values, node.value_spans)
            if node.person is not None:
                try:
                    return self.person(node.person, node.span).P(s)
                except KnowledgeError as exc:
                    raise self.error(str(exc), node.span) from exc
            kwargs = self.check_conditions(node.conditions)
            try:
                return self.model.P(s, **kwargs)
            except KnowledgeError as exc:
                raise self.error(str(exc), node.span) from exc
        self.check_sensitive((node.value,), (node.value_span,))
        people = [
            self.person(n, s)
            for n, s in zip(node.persons, _spans(node.person_spans, len(node.persons)), strict=True)
        ]
        try:
            return count_having(node.value, people)
        except KnowledgeError as exc:
            raise self.error(str(exc), node.span) from exc

    def expr(self, root: Expr):
        """The cvxpy expression of a side: ``sum(coefficient * leaf) + constant``.

        The tree is walked top-down with a stack, each ``P(...)``/``count(...)`` leaf
        taking the product of the factors above it, so the expression is flat however
        deep the tree (cvxpy's own trees are walked recursively). A leaf written more than
        once is one term with the coefficients added (cvxpy's cost is per term). A lone
        leaf is returned as it is (the model knows it by its identity).
        """
        if isinstance(root, (Prob, Count)):
            return self.leaf(root)
        consts = constants(root)
        constant, terms = 0.0, {}  # leaf (or its id if unhashable) -> [coefficient, cvxpy]
        stack = [(root, 1.0)]  # left-most on top: leaves are checked in reading order
        while stack:
            node, factor = stack.pop()
            value = consts[id(node)][1]
            if value is not None:
                constant += factor * value
            elif isinstance(node, Neg):
                stack.append((node.operand, -factor))
            elif isinstance(node, BinOp):
                a, b = consts[id(node.left)][1], consts[id(node.right)][1]
                if node.op in ("+", "-"):
                    stack.append((node.right, factor if node.op == "+" else -factor))
                    stack.append((node.left, factor))
                elif node.op == "*" and (a is not None or b is not None):
                    if a is not None:
                        stack.append((node.right, factor * a))
                    else:
                        stack.append((node.left, factor * b))
                elif node.op == "/" and b is not None and b != 0:
                    stack.append((node.left, factor / b))
                elif node.op == "*":
                    raise self.error(
                        "a product of two probabilities is not linear; multiply by numbers only",
                        node.span,
                    )
                elif node.op == "/":
                    raise self.error(
                        "divide by nonzero numbers only (the fact must stay linear)", node.span
                    )
                else:
                    raise ArgumentTypeError(f"not a knowledge operator: {shown(node.op)}")
            elif isinstance(node, (Prob, Count)):
                key = node
                try:
                    hash(node)
                except TypeError:  # a hand-made leaf holding a list
                    key = id(node)
                if key in terms:
                    terms[key][0] += factor
                else:
                    terms[key] = [factor, self.leaf(node)]
            else:
                raise ArgumentTypeError(f"not a knowledge expression: {shown(node)}")
        if not all(math.isfinite(c) for c in [constant, *(f for f, _ in terms.values())]):
            raise self.error("a coefficient is out of range (the arithmetic overflows)")
        out = None
        for factor, term in terms.values():
            part = term if factor == 1 else (-term if factor == -1 else factor * term)
            out = part if out is None else out + part
        if out is None:
            return constant
        return out + constant if constant else out

    def fact(self):
        from .vague import soft, vague

        st = self.st
        if st.kind == "vague":
            return vague(self.expr(st.left), constant(st.right), st.eps)
        left, right = self.expr(st.left), self.expr(st.right)
        if st.op == "==":
            constraint = left == right
        elif st.op == "<=":
            constraint = left <= right
        elif st.op == ">=":
            constraint = left >= right
        else:
            raise self.error(f"unknown comparison {st.op!r}")
        return soft(constraint, st.weight) if st.kind == "soft" else constraint


def _spans(spans, n: int) -> tuple:
    """Positions of n parts, or None for each when the statement was built by hand."""
    return tuple(spans) if spans and len(spans) == n else (None,) * n


def apply_knowledge(model, statements) -> list[str]:
    """Add parsed statements to a model; return the names of the facts added, in order.

    Each fact is added with ``model.add`` under its ``name "..."`` prefix or, without one,
    its own text (vague facts become two, ``"<name> (low)"`` and ``"<name> (high)"``).
    ``person`` statements call ``model.person(name, **qi)`` (no QI: the release's person
    column) and add no fact. All or nothing: when a statement fails, the facts this call
    added are removed again (and persons it singled out dropped), and a
    :class:`KnowledgeFileError` says ``source:line:column`` and why.
    """
    import cvxpy as cp

    statements = list(statements)
    for st in statements:
        if not isinstance(st, Statement):
            raise ArgumentTypeError(
                "apply_knowledge() needs Statements (from parse_knowledge), "
                f"got {type(st).__name__}"
            )
    persons: dict = {}
    added: list[str] = []
    with model.transaction():  # all or nothing, persons singled out included
        for st in statements:
            compiler = _Compiler(model, st, persons)
            try:
                if st.kind == "person":
                    kwargs = compiler.check_conditions(st.conditions)
                    persons[st.person] = model.person(st.person, **kwargs)
                    continue
                obj = compiler.fact()
                before = {f.name for f in model.facts}
                model.add(obj, name=st.label or None)  # hand-made: the model's own name
                added.extend(f.name for f in model.facts if f.name not in before)
            except KnowledgeFileError:
                raise
            except (MaxEntError, ValueError, TypeError, cp.error.DCPError) as exc:
                raise compiler.error(str(exc)) from exc
    return added
