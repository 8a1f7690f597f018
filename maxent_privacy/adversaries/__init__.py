"""Adversaries: what someone holding the releases can infer, by the papers' models.

Each module is one adversary model or a measure of one; it takes releases or a solved
:class:`~maxent_privacy.results.Result` and never produces a release.

**A new adversary is one module and one** ``register`` **call**: a subclass of
:class:`Adversary` with a ``name``, a ``description`` and ``assess(model, by="person" |
"class") -> DataFrame`` of ``lower`` and ``upper`` per (person or class, value) (a point
estimate has ``lower == upper``), put in :data:`ADVERSARY_REGISTRY` by :func:`register`.
From then on :func:`~maxent_privacy.compare_adversaries`, the release planner
(``plan_release(adversary=...)``), the report's scale of adversaries and the command
line's ``--adversary`` take it.

Modules:

- ``registry``: the contract (:class:`Adversary`), the registry and the check of an
  adversary's answer; ``builtin`` registers the package's own: ``maxent``, ``knowledge``,
  ``learned``, ``worst`` (LP bounds) and ``worlds`` (possible worlds)

- ``attacks``: Byun et al.'s cross-version attacks (intersection, difference) and
  (k, c)-anonymity; ``matching`` matches releases to people and holds what the attacker
  knows, ``tracing`` the record-tracing attack
- ``channels``: inference channels between releases (Wang et al.)
- ``robustness``: r-robustness under QI-based priors (Wong et al.): the Delta bound and
  whole-release tables; ``prior`` holds the QI-based prior and its checks, ``worlds`` the
  exact possible-worlds posteriors (permanents) it rests on
- ``metrics``: privacy metrics of a solved model (breaches, estimation accuracy)
- ``definetti``: Kifer's deFinetti attack, an adversary that learns from the release;
  ``learners`` its classifiers (naive Bayes, logistic regression), ``projection`` its
  projections onto the tables a release allows
- ``compare``: a scale of adversaries on one release (maximum entropy, with knowledge,
  learned, LP bounds, possible worlds) side by side, scored against the original table

Old paths stay importable: ``maxent_privacy.attacks``, ``.channels``, ``.robustness`` and
``.metrics`` are these modules.
"""

from .builtin import without_facts
from .registry import (
    ADVERSARY_REGISTRY,
    Adversary,
    AdversaryError,
    adversary_names,
    assessment,
    check_assessment,
    get_adversary,
    register,
    rows,
    unregister,
)

__all__ = [
    "ADVERSARY_REGISTRY",
    "Adversary",
    "AdversaryError",
    "adversary_names",
    "assessment",
    "check_assessment",
    "get_adversary",
    "register",
    "rows",
    "unregister",
    "without_facts",
]
