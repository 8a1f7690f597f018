"""Anonymizers: how a publisher makes a release (the other side of the adversaries).

Each function takes the original table and returns a release
(:class:`~maxent_privacy.Bucketized` or :class:`~maxent_privacy.Generalized`). A new
anonymizer (a new partitioning, a re-publishing rule, a planner) goes here as a new module.

Modules:

- ``anatomy``: Anatomy, l-diverse buckets (Xiao and Tao) and the l-diversity check
- ``history``: re-bucketization guided by earlier releases (Wang et al.)
- ``m_invariant``: the next release of an m-invariant sequence, with counterfeits (Xiao and Tao)
- ``mondrian``: Mondrian multidimensional partitioning, (k, c)-anonymous (LeFevre et al.)
- ``robust``: the r-robust anonymizer (Wong et al.)

>>> from maxent_privacy import anonymize, datasets
>>> release = anonymize.anatomize(datasets.du2008_adult(n=300), datasets.ADULT_QI,
...                               "education", l=3)
>>> release.n_groups >= 100
True
"""

from .anatomy import anatomize, check_l_diversity
from .history import history_guided, rebucketize
from .m_invariant import m_invariant
from .robust import robust_anonymize

__all__ = [
    "anatomize",
    "check_l_diversity",
    "history_guided",
    "m_invariant",
    "rebucketize",
    "robust_anonymize",
]
