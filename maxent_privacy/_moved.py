"""Old module paths, kept importable: each is the new module itself, not a copy.

Before the package was arranged in wings (``releases/``, ``knowledge/``, ``bounds/``,
``adversaries/``, ``anonymize/``, ``report/``, ``datasets/``) its modules lay side by
side; code written then imports, for example, ``maxent_privacy.parser`` or
``from maxent_privacy.data import Bucketized``. A finder on ``sys.meta_path`` answers
each old name in :data:`MOVED` with the module that now holds its code, so both names
are one module object (same functions, same globals, monkeypatching either patches
both). Nothing is imported until an old name is asked for.

>>> import maxent_privacy.parser as old
>>> import maxent_privacy.knowledge.parser as new
>>> old is new
True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

# old dotted name -> the module that holds its code now
MOVED = {
    "maxent_privacy.data": "maxent_privacy.releases.bucketized",
    "maxent_privacy.generalized": "maxent_privacy.releases.generalized",
    "maxent_privacy.pooled": "maxent_privacy.releases.pooled",
    "maxent_privacy.structure": "maxent_privacy.releases.structure",
    "maxent_privacy.ranges": "maxent_privacy.releases.ranges",
    "maxent_privacy.checks": "maxent_privacy.releases.checks",
    "maxent_privacy.facts": "maxent_privacy.knowledge.facts",
    "maxent_privacy.parser": "maxent_privacy.knowledge.parser",
    "maxent_privacy.rules": "maxent_privacy.knowledge.rules",
    "maxent_privacy.conflicts": "maxent_privacy.knowledge.conflicts",
    "maxent_privacy.attacks": "maxent_privacy.adversaries.attacks",
    "maxent_privacy.channels": "maxent_privacy.adversaries.channels",
    "maxent_privacy.robustness": "maxent_privacy.adversaries.robustness",
    "maxent_privacy.metrics": "maxent_privacy.adversaries.metrics",
    "maxent_privacy.mondrian": "maxent_privacy.anonymize.mondrian",
    "maxent_privacy.plotting": "maxent_privacy.report.plots",
    "maxent_privacy.datasets_byun": "maxent_privacy.datasets.byun",
    "maxent_privacy.dual": "maxent_privacy.solve",
    "maxent_privacy._io": "maxent_privacy.files",
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old name in :data:`MOVED` and loads it as the module that replaced it."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        # the module object of the new name; the import system keeps its __name__ and
        # __file__ (they are set) but writes the old name's spec over its __spec__
        module = importlib.import_module(MOVED[spec.name])
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module) -> None:
        """Nothing to run (the new module ran when it was imported): its spec goes back."""
        module.__spec__ = module.__spec__.loader_state


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (``import maxent_privacy`` does this)."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.append(_Alias())
