"""Anonymizers: how a publisher makes a release (the other side of the adversaries).

Each function takes the original table and returns a release
(:class:`~maxent_privacy.Bucketized` or :class:`~maxent_privacy.Generalized`). A new
anonymizer (a new partitioning, a re-publishing rule, a planner) goes here as a new module.

Modules:

- ``anatomy``: Anatomy, l-diverse buckets (Xiao and Tao) and the l-diversity check
- ``history``: re-bucketization guided by earlier releases (Wang et al.)
- ``m_invariant``: the next release of an m-invariant sequence, with counterfeits (Xiao and Tao)
- ``mondrian``: Mondrian multidimensional partitioning, (k, c)-anonymous (LeFevre et al.)
- ``planner``: the release planner: the next release checked pooled with the earlier ones
  (maximum entropy, learned or worst-case adversary; possible worlds) and repaired
- ``plan_checks``: the planner's checks: pooled model, witness worlds, components
- ``plan_repairs``: the planner's repairs: counterfeits and merges of failing groups
- ``plan_report``: what the planner checked and changed (``PlanReport``)
- ``robust``: the r-robust anonymizer (Wong et al.)
- ``utility``: what a release keeps: the error of count queries, counterfeits, group sizes

>>> from maxent_privacy import anonymize, datasets
>>> release = anonymize.anatomize(datasets.du2008_adult(n=300), datasets.ADULT_QI,
...                               "education", l=3)
>>> release.n_groups >= 100
True
"""

from .anatomy import anatomize, check_l_diversity
from .history import history_guided, rebucketize
from .m_invariant import m_invariant
from .planner import PlanReport, plan_release
from .robust import robust_anonymize
from .utility import count_query_error

__all__ = [
    "PlanReport",
    "anatomize",
    "check_l_diversity",
    "count_query_error",
    "history_guided",
    "m_invariant",
    "plan_release",
    "rebucketize",
    "robust_anonymize",
]
