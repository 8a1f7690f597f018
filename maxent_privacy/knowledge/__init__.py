"""Knowledge: what the adversary knows, written declaratively and compiled to rows.

A new kind of background knowledge (a new statement in the text format, a new soft or
vague form) goes here; it compiles to cvxpy constraints on ``model.P(...)`` expressions
and never touches the solver.

Modules:

- ``facts``: :class:`~maxent_privacy.knowledge.facts.Fact`, what ``model.add`` compiles
- ``vague``: vague (``p +- eps``), soft (penalized) and ``count_having`` knowledge
- ``syntax``, ``lexer``, ``parser``, ``compiler``: the knowledge text format, parsed
  (never evaluated) into statements and applied to a model
- ``rules``: Top-(K+, K-) association rules mined from the original data (Du et al.)
- ``normalise``: :func:`~maxent_privacy.knowledge.normalise.as_knowledge`, the one reading
  of a ``knowledge`` argument (text, a file, statements, facts, a function of the model,
  or a list of these) as one function adding it to a model

>>> from maxent_privacy.knowledge import vague
>>> vague.__name__
'vague'
"""

from .normalise import as_knowledge
from .vague import Grouped, Soft, Vague, count_having, soft, vague

__all__ = ["Grouped", "Soft", "Vague", "as_knowledge", "count_having", "soft", "vague"]
