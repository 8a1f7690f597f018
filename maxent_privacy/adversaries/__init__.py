"""Adversaries: what someone holding the releases can infer, by the papers' models.

Each module is one adversary model or a measure of one; it takes releases or a solved
:class:`~maxent_privacy.results.Result` and never produces a release. A new adversary
model (a new attack, a learning adversary, a new privacy measure) goes here as a new module.

Modules:

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
