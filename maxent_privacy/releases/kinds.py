"""The release kinds: one registry, name -> class, that the contract test runs over.

:data:`RELEASE_KINDS` holds ``"bucketized"`` and ``"generalized"``;
:func:`register_release_kind` adds a class that meets the
:class:`~maxent_privacy.releases.protocol.Release` protocol (its computed members are
checked on the class; the data members are set by its constructor).

>>> sorted(RELEASE_KINDS)
['bucketized', 'generalized']
>>> register_release_kind("bucketized", RELEASE_KINDS["generalized"])
Traceback (most recent call last):
...
maxent_privacy._validation.ArgumentError: a release kind named 'bucketized' is registered; \
pass replace=True
"""

from __future__ import annotations

import pandas as pd

from .._validation import ArgumentError, shown
from ..errors import ReleaseError
from .bucketized import Bucketized, check_same_schema
from .generalized import Generalized
from .protocol import DERIVED
from .table_people import split_tables
from .tabulated import Tabulated

__all__ = [
    "RELEASE_KINDS",
    "check_releases",
    "register_release_kind",
    "tables_only",
    "unregister_release_kind",
]

#: name -> class of every release kind (the package's and those registered)
RELEASE_KINDS: dict[str, type] = {"bucketized": Bucketized, "generalized": Generalized}


def register_release_kind(name: str, kind: type, *, replace: bool = False) -> type:
    """Add the class ``kind`` to :data:`RELEASE_KINDS` under ``name``; return it.

    A one-line :class:`~maxent_privacy._validation.ArgumentError` when ``name`` is not a
    non-empty text or is taken (unless ``replace``), or ``kind`` is not a class with the
    protocol's computed members (``people``, ``n_records``, ``n_groups``, ``n_people``,
    ``sa_values``).
    """
    if not isinstance(name, str) or not name.strip():
        raise ArgumentError(f"name must be a non-empty text, got {shown(name)}")
    if name in RELEASE_KINDS and not replace:
        raise ArgumentError(f"a release kind named {name!r} is registered; pass replace=True")
    if not isinstance(kind, type):
        raise ArgumentError(f"kind must be a class, got {shown(kind)}")
    missing = [m for m in DERIVED if not hasattr(kind, m)]
    if missing:
        raise ArgumentError(
            f"release kind {kind.__name__} lacks {', '.join(missing)} (the Release protocol, "
            "maxent_privacy.releases.protocol)"
        )
    RELEASE_KINDS[name] = kind
    return kind


def unregister_release_kind(name: str) -> None:
    """Take the release kind ``name`` out of :data:`RELEASE_KINDS`."""
    if name not in RELEASE_KINDS:
        raise ArgumentError(f"no release kind named {name!r} is registered")
    del RELEASE_KINDS[name]


def tables_only(release) -> bool:
    """Whether ``release`` is published tables (one or a list), none of them records."""
    items = list(release) if isinstance(release, (list, tuple)) else [release]
    return bool(items) and all(isinstance(r, Tabulated) for r in items)


def check_releases(release, populations) -> tuple[list, list, list]:
    """The model's releases and populations as lists, checked, and the counts tables
    among them (each read as a generalized release of its population)."""
    releases = list(release) if isinstance(release, (list, tuple)) else [release]
    if not releases:
        raise ReleaseError("MaxEntModel needs at least one release")
    if populations is None:
        populations = [None] * len(releases)
    elif isinstance(populations, pd.DataFrame):
        populations = [populations] + [None] * (len(releases) - 1)
    populations = list(populations)
    if len(populations) != len(releases):
        raise ReleaseError(
            f"{len(populations)} populations for {len(releases)} releases (use None for "
            "releases that need none)"
        )
    releases, populations, tables = split_tables(releases, populations)
    for r, rel in enumerate(releases, start=1):
        if not isinstance(rel, tuple(RELEASE_KINDS.values())):
            names = ", ".join(k.__name__ for k in RELEASE_KINDS.values())
            raise ReleaseError(
                f"MaxEntModel needs releases of a registered kind ({names}); release {r} "
                f"is a {type(rel).__name__}"
            )
    if len(releases) > 1:
        check_same_schema(releases)
    return releases, populations, tables
