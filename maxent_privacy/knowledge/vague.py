"""Knowledge beyond plain equalities: vague facts (Kazama and Tsujii style).

Objects here compile to cvxpy constraints when added to a model: ``model.add`` calls their
``_maxent_facts_(model, name)``, which returns ``(name, constraint)`` pairs.

>>> from maxent_privacy import MaxEntModel, Bucketized, datasets
>>> from maxent_privacy.knowledge import vague
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                                sa="disease", group="bucket"))
>>> model.add(vague(model.P("Flu", gender="male"), 0.3, 0.05), name="flu")
>>> [f.name for f in model.facts]
['flu (low)', 'flu (high)']
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ..errors import KnowledgeError
from .facts import label_of, tag

__all__ = ["Grouped", "Soft", "Vague", "count_having", "soft", "vague"]


class Vague:
    """``p - eps <= expr <= p + eps`` (Du et al. Section 4.5); eps = 0 is ``expr == p``."""

    def __init__(self, expr: cp.Expression, p: float, eps: float):
        share = getattr(expr, "maxent_share", False)  # a share of a model of tables
        if not (isinstance(expr, cp.Expression) or share):
            raise KnowledgeError(
                f"vague() needs a cvxpy expression such as model.P(...), got {type(expr).__name__}"
            )
        if not share and not expr.is_scalar():
            raise KnowledgeError(
                f"vague() needs one probability such as model.P(...), got an expression of "
                f"shape {expr.shape}"
            )
        p = _finite("vague()", "p", p)
        eps = _finite("vague()", "eps", eps)
        if eps < 0:
            raise KnowledgeError(f"vague(): eps must be >= 0, got {eps:g}")
        if not 0 <= p <= 1:
            raise KnowledgeError(f"vague(): probability {p:g} is outside [0, 1]")
        self.expr, self.p, self.eps = expr, p, eps

    def _maxent_facts_(self, model, name: str | None):
        shown = getattr(self.expr, "label", None) or label_of(self.expr) or "fact"
        label = name or f"{shown} = {self.p:g} +- {self.eps:g}"
        if self.eps == 0:
            return [(label, self.expr == self.p)]
        lo, hi = max(0.0, self.p - self.eps), min(1.0, self.p + self.eps)
        return [(f"{label} (low)", self.expr >= lo), (f"{label} (high)", self.expr <= hi)]

    def __repr__(self) -> str:
        return f"vague(p={self.p:g}, eps={self.eps:g})"


def vague(expr: cp.Expression, p: float, eps: float) -> Vague:
    """Vague knowledge: the probability ``expr`` is ``p`` give or take ``eps``.

    The bounds are clipped to [0, 1]; the two sides are separate facts named
    ``"<name> (low)"`` and ``"<name> (high)"`` so that each has its own dual.
    """
    return Vague(expr, p, eps)


class Soft:
    """A fact held as a penalty on its violation instead of a hard constraint."""

    def __init__(self, fact, weight: float):
        if not isinstance(fact, cp.constraints.constraint.Constraint):
            raise KnowledgeError(
                f"soft() needs a fact such as model.P(...) == p, got {type(fact).__name__}"
            )
        weight = _finite("soft()", "weight", weight)
        if not weight > 0:
            raise KnowledgeError(f"soft(): weight must be > 0, got {weight:g}")
        self.fact, self.weight = fact, weight

    def __repr__(self) -> str:
        return f"soft({self.fact}, weight={self.weight:g})"


def soft(fact, weight: float) -> Soft:
    """Soft knowledge: ``fact`` (a linear ``==``, ``<=`` or ``>=``) as a penalty.

    The solve then maximizes (Kazama and Tsujii's regularized inequality model, with an
    L1 penalty)

        H(S | Q, B)  -  sum over soft facts of  weight * violation

    where H is in nats per record and the violation is ``|lhs - rhs|`` for ``==`` and
    ``max(0, lhs - rhs)`` for ``<=`` (``>=`` likewise), in the fact's own units
    (probability for ``P(...)`` facts). A weight above the fact's dual value as a hard fact
    makes it hold exactly; smaller weights let it give way. Mutually inconsistent soft facts
    still give an answer; ``result.violations`` says how far each is off.

    >>> from maxent_privacy import MaxEntModel, Bucketized, datasets
    >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
    ...                                sa="disease", group="bucket"))
    >>> p = model.P("Flu", gender="male")
    >>> model.add(soft(p == 0.45, 10.0), name="a")
    >>> model.add(soft(p == 0.35, 1.0), name="b")      # contradicts "a"
    >>> result = model.solve()
    >>> result.violations.round(4).to_dict()
    {'a': 0.0, 'b': 0.1}
    """
    return Soft(fact, weight)


def count_having(s, persons) -> cp.Expression:
    """Expected number of ``persons`` who have ``s`` (a value or a list of values).

    "Two of Alice, Bob and Carol have HIV" is ``count_having("HIV", [alice, bob, carol]) == 2``
    (Du et al. Section 6 (3)); ``>= 2`` and ``<= 1`` say at least / at most. ``persons``
    lists distinct persons of one model; an item that is not a person, a person listed
    twice or a value that is not a single value is a KnowledgeError naming it.

    >>> from maxent_privacy import MaxEntModel, Bucketized, datasets
    >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
    ...                                sa="disease", group="bucket"))
    >>> iris = model.person("Iris", gender="female", degree="graduate")
    >>> james = model.person("James", gender="male", degree="graduate")
    >>> model.add(count_having("Lung Cancer", [iris, james]) == 1)
    >>> model.add(james.P("Lung Cancer") == 0)
    >>> float(model.solve().person_posterior().loc["Iris", "Lung Cancer"])
    1.0
    """
    if isinstance(persons, (str, bytes, dict)) or not hasattr(persons, "__iter__"):
        raise KnowledgeError(
            "count_having(): persons must be a list of persons made by model.person(...), got "
            f"{type(persons).__name__}" + (" (put it in a list)" if _is_person(persons) else "")
        )
    persons = list(persons)
    if not persons:
        raise KnowledgeError("count_having() needs at least one person")
    for j, p in enumerate(persons, start=1):
        if not _is_person(p):
            raise KnowledgeError(
                f"count_having(): item {j} of persons is a {type(p).__name__}, not a person "
                "made by model.person(...)"
            )
    seen: set = set()
    for p in persons:
        if p.name in seen:
            raise KnowledgeError(f"count_having(): person {p.name!r} is listed twice")
        seen.add(p.name)
    values = list(s) if isinstance(s, (list, tuple, set, frozenset)) else [s]
    if not values:
        raise KnowledgeError("count_having() needs at least one sensitive value")
    for v in values:
        try:
            hash(v)
        except TypeError:
            raise KnowledgeError(
                f"count_having(): a sensitive value must be a single value, got {type(v).__name__}"
            ) from None
    models = {id(p.model) for p in persons}
    if len(models) != 1:
        raise KnowledgeError("count_having(): the persons belong to different models")
    terms = [p.P(s) for p in persons]
    expr = terms[0]
    for t in terms[1:]:
        expr = expr + t
    label = f"count({' or '.join(map(str, values))} among {', '.join(p.name for p in persons)})"
    return tag(expr, label, top=len(persons))


def _finite(who: str, name: str, value) -> float:
    """``value`` as a finite float; a KnowledgeError naming the argument otherwise.

    Numbers (int, float, numpy scalars or 0-d arrays, Fraction, Decimal) pass; booleans,
    strings, None and collections do not, nor do NaN and infinities.
    """
    import numbers
    from decimal import Decimal

    raw = value
    if getattr(value, "shape", None) == () and hasattr(value, "item"):
        value = value.item()  # a numpy scalar or 0-d array
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, Decimal)):
        raise KnowledgeError(
            f"{who}: {name} must be a number, got {type(raw).__name__} {_shown(raw)}"
        )
    out = float(value)
    if out != out or out in (float("inf"), float("-inf")):
        raise KnowledgeError(f"{who}: {name} must be a finite number, got {out!r}")
    return out


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_person(item) -> bool:
    """Made by ``model.person(...)`` (duck-typed: a name, a model and ``P``)."""
    return hasattr(item, "name") and hasattr(item, "model") and callable(getattr(item, "P", None))


class Grouped:
    """A linear equality fact whose rows come in groups that share their condition.

    Rules ``P(s | Qv) == c`` of one condition Qv share the denominator n(Qv); the presolve
    adds up the rows of a group, whose confidences may add up to 1 and so pin the Qv
    records to those values. :class:`~maxent_privacy.rules.Rules` compile to one of these.
    """

    def __init__(self, constraint: cp.Constraint, row_groups):
        self.constraint = constraint
        self.row_groups = np.asarray(row_groups, dtype=int)

    def __repr__(self) -> str:
        return f"Grouped({self.constraint}, {len(np.unique(self.row_groups))} groups)"
