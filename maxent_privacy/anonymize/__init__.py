"""Anonymizers: how a publisher makes a release (the other side of the adversaries).

Each anonymizer takes the original table and returns a release
(:class:`~maxent_privacy.Bucketized` or :class:`~maxent_privacy.Generalized`), and every
one is called the same way: ``anonymizer(frame, qi, sa, *, <its privacy parameter>,
group="group", person=None, seed=0, nonsensitive=None, ...)``, keyword-only after ``sa``
(``history=`` for those that make the next release of a sequence). :data:`ANONYMIZERS`
lists them by name with their privacy parameter and the package's check of it. A new
anonymizer (a new partitioning, a re-publishing rule) is one new module here and one
:func:`register` call (ours are in ``registry``).

Modules:

- ``anatomy``: Anatomy, l-diverse buckets (Xiao and Tao) and the l-diversity check
- ``contract``: the one signature, ``ANONYMIZERS`` and ``register``, the shared contract
  (``check_anonymizer``) and the shim for old positional calls
- ``history``: re-bucketization guided by earlier releases (Wang et al.)
- ``m_invariant``: the next release of an m-invariant sequence, with counterfeits (Xiao and
  Tao), and the m-invariance check
- ``mondrian``: Mondrian multidimensional partitioning, (k, c)-anonymous (LeFevre et al.);
  ``anonymize.mondrian`` is the function, the module is ``maxent_privacy.mondrian``
- ``planner``: the release planner: the next release checked pooled with the earlier ones
  (maximum entropy, learned or worst-case adversary; possible worlds) and repaired
- ``plan_checks``: the planner's checks: pooled model, witness worlds, components
- ``plan_repairs``: the planner's repairs: counterfeits and merges of failing groups
- ``plan_report``: what the planner checked and changed (``PlanReport``)
- ``registry``: the package's anonymizers registered, each with its checker
- ``robust``: the r-robust anonymizer (Wong et al.)
- ``utility``: what a release keeps: the error of count queries, counterfeits, group sizes

>>> from maxent_privacy import anonymize, datasets
>>> release = anonymize.anatomize(datasets.du2008_adult(n=300), datasets.ADULT_QI,
...                               "education", l=3)
>>> release.n_groups >= 100
True
>>> sorted(anonymize.ANONYMIZERS)
['anatomize', 'history_guided', 'm_invariant', 'mondrian', 'rebucketize', 'robust_anonymize']
"""

from . import registry as _registry  # noqa: F401  (registers ours in ANONYMIZERS)
from .anatomy import anatomize, check_l_diversity
from .contract import ANONYMIZERS, Anonymizer, check_anonymizer, register
from .history import history_guided, rebucketize
from .m_invariant import check_m_invariance, m_invariant

# the function; importing it binds ``anonymize.mondrian`` to it, over the submodule of the
# same name (the module stays ``maxent_privacy.mondrian`` and ``sys.modules``'s entry)
from .mondrian import mondrian
from .planner import PlanReport, plan_release
from .robust import robust_anonymize
from .utility import count_query_error

__all__ = [
    "ANONYMIZERS",
    "Anonymizer",
    "PlanReport",
    "anatomize",
    "check_anonymizer",
    "check_l_diversity",
    "check_m_invariance",
    "count_query_error",
    "history_guided",
    "m_invariant",
    "mondrian",
    "plan_release",
    "rebucketize",
    "register",
    "robust_anonymize",
]
