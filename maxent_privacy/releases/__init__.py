"""Releases: what a publisher puts out, checked, and turned into the model's structure.

A release is read once, validated with one-line errors, and every model is built from the
:class:`~maxent_privacy.releases.structure.Structure` made of it. A new release format
(a new cell syntax, a new kind of published table) goes here.

The contract of a release kind, the :class:`~.protocol.Release` protocol: what the model
reads from a release, and nothing else of every kind:

- its **records**: ``frame``, one row per published record with the role columns
  ``qi`` (list), ``sa``, ``group`` and ``person`` (a column name or None), checked when
  the release is made (a bad table is a one-line ``ReleaseError``); ``n_records``;
- its **groups**: ``group`` and ``n_groups`` (buckets, equivalence classes);
- its **cells**: the QI cells of ``people``, the rows of real people; exact values, or
  (a generalized kind) sets of values matched against a population with ``compatible``
  and ``check_covered``;
- its **person ids**: the ``person`` cells of ``people`` (``n_people``), which link
  releases and name people in knowledge;
- its **counts**: how many records of each group hold each sensitive value
  (:func:`~.protocol.group_counts` of ``frame``; ``sa_values``), counterfeit records
  included (a bucketized kind: ``counterfeits``, ``is_counterfeit``,
  ``counterfeit_counts()``).

The kinds are registered in :data:`~.kinds.RELEASE_KINDS` (name -> class);
``tests/releases/test_release_contract.py`` runs one contract on every registered kind (it meets the
protocol, the model builds from it, the original data meets every data constraint, person
ids round-trip, bad input is one line). A new kind is one module, its
registration and its tests.

Modules:

- ``bucketized``: :class:`Bucketized` (Anatomy-style: exact QI, group id, sensitive values;
  with counterfeit records, m-invariance-style)
- ``counterfeits``: counterfeit records in the model: one phantom record class per group
- ``generalized``: :class:`Generalized` (k-anonymity-style releases: equivalence classes,
  matched against a population)
- ``tabulated``: :class:`Tabulated`, a published counts table (crosstabs, margins,
  suppressed, rounded or interval counts, means and medians per row); read by the model of
  tables (:mod:`maxent_privacy.tables`), not a records kind of the protocol
- ``table_people``: counts tables of a known population, read as generalized releases of
  it (person-level answers, pooling with other releases)
- ``cells``: the generalized cell syntax (ours, ARX's, sdcMicro's), parsed and matched
- ``ranges``: QI ranges in knowledge (``age=range(18, 30)``, :func:`between`)
- ``checks``: input checks shared by releases, anonymizers, attacks and metrics
- ``structure``: :class:`Structure` and the builder for one bucketized release
- ``pooled``: the builder for several releases or generalized ones (Wang et al.)
- ``pooled_arrays``: the same for bucketized releases, with array operations at scale
- ``pooled_structure``: the pooled :class:`Structure` every pooled construction ends in
- ``protocol``: :class:`~.protocol.Release`, what the model reads from a release
- ``kinds``: :data:`~.kinds.RELEASE_KINDS` and :func:`~.kinds.register_release_kind`
"""

import importlib

__all__ = ["RELEASE_KINDS", "Release", "register_release_kind"]

# imported on first use: ``import maxent_privacy.releases.checks`` loads no release class
_WHERE = {"RELEASE_KINDS": "kinds", "register_release_kind": "kinds", "Release": "protocol"}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
