"""Releases: what a publisher puts out, checked, and turned into the model's structure.

A release is read once, validated with one-line errors, and every model is built from the
:class:`~maxent_privacy.releases.structure.Structure` made of it. A new release format
(a new cell syntax, a new kind of published table) goes here.

Modules:

- ``bucketized``: :class:`Bucketized` (Anatomy-style: exact QI, group id, sensitive values;
  with counterfeit records, m-invariance-style)
- ``counterfeits``: counterfeit records in the model: one phantom record class per group
- ``generalized``: :class:`Generalized` (k-anonymity-style releases: equivalence classes,
  matched against a population)
- ``cells``: the generalized cell syntax (ours, ARX's, sdcMicro's), parsed and matched
- ``ranges``: QI ranges in knowledge (``age=range(18, 30)``, :func:`between`)
- ``checks``: input checks shared by releases, anonymizers, attacks and metrics
- ``structure``: :class:`Structure` and the builder for one bucketized release
- ``pooled``: the builder for several releases or generalized ones (Wang et al.)
- ``pooled_arrays``: the same for bucketized releases, with array operations at scale
- ``pooled_structure``: the pooled :class:`Structure` every pooled construction ends in
"""
