"""The package's anonymizers in :data:`~.contract.ANONYMIZERS`, each with its checker.

One :func:`~.contract.register` call per anonymizer: its privacy parameter, the
package's own check that a release meets it, whether it takes a history and a small
value of the parameter for tests.

>>> from maxent_privacy.anonymize import ANONYMIZERS
>>> sorted(ANONYMIZERS)[:3]
['anatomize', 'history_guided', 'm_invariant']
"""

from __future__ import annotations

from ..adversaries.attacks import check_kc
from ..adversaries.prior import Prior
from ..adversaries.robustness import robustness_table
from .anatomy import anatomize, check_l_diversity
from .contract import register
from .history import history_guided, rebucketize
from .m_invariant import check_m_invariance, history_releases, m_invariant
from .mondrian import mondrian
from .robust import robust_anonymize

__all__: list[str] = []


def l_diverse(release, *, l, nonsensitive=None, **_) -> bool:  # noqa: E741
    """Every group l-diverse (:func:`~.anatomy.check_l_diversity`)."""
    return bool(check_l_diversity(release, l, nonsensitive or ()).all())


def kc_anonymous(release, *, k, c=1.0, **_) -> bool:
    """(k, c)-anonymous (:func:`~maxent_privacy.adversaries.attacks.check_kc`)."""
    return check_kc(release, k, c)


def m_invariant_sequence(release, *, m, history=None, **_) -> bool:
    """The history and the release m-invariant (:func:`~.m_invariant.check_m_invariance`)."""
    return check_m_invariance([*history_releases(history, ""), release], m)


def r_robust(release, *, frame, qi, sa, r, prior=None, verify=True, **_) -> bool:
    """Every group within the Delta bound for r, and (``verify``) exact posteriors of at
    most 1/r (:func:`~maxent_privacy.adversaries.robustness.robustness_table`)."""
    prior = Prior.estimate(frame, qi, sa) if prior is None else prior
    table = robustness_table(release, prior, r, exact=bool(verify))
    ok = bool(table["delta_bound"].all())
    if verify:
        ok = ok and bool((table["max_posterior"] <= 1 / float(r) + 1e-9).all())
    return ok


register("anatomize", anatomize, parameter="l", check=l_diverse, default=3)
register("rebucketize", rebucketize, parameter="l", check=l_diverse, default=3)
register("history_guided", history_guided, parameter="l", check=l_diverse, default=3, history=True)
register(
    "m_invariant", m_invariant, parameter="m", check=m_invariant_sequence, default=3,
    history=True, requires=("person",),
)  # fmt: skip
register("mondrian", mondrian, parameter="k", check=kc_anonymous, default=4)
register("robust_anonymize", robust_anonymize, parameter="r", check=r_robust, default=2)
