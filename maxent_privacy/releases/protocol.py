"""What the model reads from a release: the :class:`Release` protocol.

A release kind (:class:`~maxent_privacy.releases.bucketized.Bucketized`,
:class:`~maxent_privacy.releases.generalized.Generalized`, next a counts table) is any
class whose objects have these members; the model, the pooled builders and the checks read
nothing else of every kind (what one kind adds is below):

* ``qi`` (list of column names), ``sa`` (the sensitive column), ``group`` (the group
  column: bucket or equivalence class), ``person`` (the person id column, or None);
* ``frame``: the published records, one row per record with the role columns (``qi``,
  ``sa``, ``group``, ``person``), checked once when the release is made. The published
  counts, how many records of each group hold each sensitive value (the SA-invariants'
  right sides, :func:`group_counts`), are ``frame``'s;
* ``people``: the rows of ``frame`` that are real people (counterfeit records are no one);
  their QI cells and ``group`` say which record classes and groups a person may be in, and
  their ``person`` cells are the ids that link releases and name people in knowledge;
* ``n_records``, ``n_groups``, ``n_people`` and ``sa_values`` (sorted by text): sizes
  and the published sensitive values.

What a kind adds, read by the builder of its kind:

* QI cells that stand for sets of values (a generalized release): ``compatible(people,
  person, every_row=..., where=...)`` gives each person of a population the groups
  whose cells cover their exact QI, and ``check_covered(...)`` refuses a person whose cells
  do not; the model places such people among those groups (Wang et al.).
* counterfeit records (m-invariance): ``counterfeits`` (the flag column or None),
  ``is_counterfeit`` (a bool per row of ``frame``) and ``counterfeit_counts()`` (per group);
  they become one phantom record class per group (:mod:`.counterfeits`).

A new kind is one module with a class meeting the protocol, registered with
:func:`~maxent_privacy.releases.kinds.register_release_kind`, and tests; the contract test
(``tests/releases/test_release_contract.py``) runs on every registered kind. Its constructor makes
a bad table a one-line :class:`~maxent_privacy.errors.ReleaseError` naming the column or
value at fault.

>>> from maxent_privacy import Bucketized, datasets
>>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                      sa="disease", group="bucket")
>>> isinstance(release, Release)
True
>>> group_counts(release).loc[1].to_dict()
{'Breast Cancer': 1, 'Flu': 2, 'HIV': 0, 'Lung Cancer': 0, 'Pneumonia': 1}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DATA", "DERIVED", "Release", "group_counts"]

#: the members an object of a release kind sets (read on an object)
DATA = ("qi", "sa", "group", "person", "frame")
#: the members a release kind computes (read on the class too)
DERIVED = ("people", "n_records", "n_groups", "n_people", "sa_values")


@runtime_checkable
class Release(Protocol):
    """What the model reads from a release (see the module docstring).

    ``isinstance(obj, Release)`` checks that every member is there, not their types.
    """

    qi: list
    sa: str
    group: str
    person: str | None
    frame: pd.DataFrame

    @property
    def people(self) -> pd.DataFrame:
        """The rows of ``frame`` that are real people."""
        ...

    @property
    def n_records(self) -> int:
        """Number of published records (rows of ``frame``)."""
        ...

    @property
    def n_groups(self) -> int:
        """Number of groups (buckets or equivalence classes)."""
        ...

    @property
    def n_people(self) -> int:
        """Number of real people (rows of ``people``)."""
        ...

    @property
    def sa_values(self) -> list:
        """The published sensitive values, sorted by their text."""
        ...


def group_counts(release: Release) -> pd.DataFrame:
    """The published counts: one row per group (sorted), one column per sensitive value,
    how many records of the group hold it (counterfeit records included: their values
    are published like any other)."""
    frame = release.frame
    counts = frame.groupby([release.group, release.sa], sort=True).size()
    return counts.unstack(fill_value=0)
