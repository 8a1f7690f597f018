"""The values declared not sensitive, checked against the release's sensitive values.

``risk_table(nonsensitive=...)``, ``result.report(...)`` and ``maxent-privacy report
--nonsensitive`` never count these values as a risk. A value the releases do not hold
(a typo) would exclude nothing; every value declared non-sensitive would leave no risk to
count: both are a one-line :class:`~maxent_privacy._validation.ArgumentError`, the first
with the nearest value.

>>> from maxent_privacy import Bucketized, MaxEntModel, datasets
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), ["gender", "degree"],
...                                "disease", "bucket"))
>>> check_nonsensitive("Flu", model)
('Flu',)
>>> check_nonsensitive(["Flue"], model)
Traceback (most recent call last):
...
maxent_privacy._validation.ArgumentError: nonsensitive value 'Flue' is not a value of the \
sensitive column 'disease' (did you mean 'Flu'?)
"""

from __future__ import annotations

import difflib

import numpy as np

from .._validation import ArgumentError, listed, shown

__all__ = ["check_nonsensitive"]


def _values(model) -> list[str]:
    """The sensitive values of ``model``'s releases, as text, sorted."""
    found: set[str] = set()
    for release in model.releases:
        found.update(map(str, release.sa_values))
    return sorted(found)


def check_nonsensitive(values, model, name: str = "nonsensitive") -> tuple:
    """``values`` (one value, several, or None) as a tuple, each a sensitive value of
    ``model``'s releases (compared as text), not all of them; else an ArgumentError naming
    ``name``, the value and the nearest one."""
    if values is None:
        return ()
    if isinstance(values, str) or not np.iterable(values):
        values = (values,)
    values = tuple(values)
    if not values:
        return ()
    known = _values(model)
    have = set(known)
    for value in values:
        if str(value) not in have:
            near = difflib.get_close_matches(str(value), known, n=1, cutoff=0.6)
            hint = f"did you mean {near[0]!r}?" if near else f"its values: {listed(known)}"
            raise ArgumentError(
                f"{name} value {shown(value)} is not a value of the sensitive column "
                f"{str(model.sa)!r} ({hint})"
            )
    if have <= {str(v) for v in values}:
        raise ArgumentError(
            f"{name} names every value of the sensitive column {str(model.sa)!r} "
            f"({len(known)} values): at least one must stay sensitive"
        )
    return values
