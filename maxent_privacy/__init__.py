"""maxent_privacy: what can an adversary infer from a published anonymized table?

The package follows the data flow, one wing (subpackage) per part of the papers; each
wing's ``__init__`` says what lives there:

- ``releases/``: what a publisher puts out (:class:`Bucketized`, :class:`Generalized`),
  checked, and turned into the model's :class:`Structure` (one release or pooled ones)
- ``knowledge/``: what the adversary knows: facts, vague and soft knowledge, the text
  format and its parser, Top-(K+, K-) rules, conflicting facts explained
- ``model.py``: :class:`MaxEntModel`, the model and its cvxpy expressions ``model.P``
- ``solve/``: the solve as a chain of stages, each applied and inverted, with our dual
  Newton solver and the conic solvers as backends, and a certificate checked by our code
- ``results.py``: :class:`Result`, posteriors, duals and the :class:`Certificate`
- ``bounds/``: the worst case: LP bounds, possible and certain values, one module a method
- ``adversaries/``: what someone holding the releases can infer: cross-version attacks,
  inference channels, r-robustness, privacy metrics, the learned adversary; the adversary
  contract and its registry. **A new adversary model goes here.**
- ``anonymize/``: how a publisher makes a release: Anatomy, Mondrian, history-guided,
  r-robust. **A new anonymizer (or re-publishing rule, or planner) goes here.**
- ``report/``: what a person reads: the risk table, the HTML report, plots
- ``datasets/``: the papers' examples and the UCI Adult data; ``cli/``: the
  ``maxent-privacy`` command; ``errors.py``, ``files.py`` (atomic writes), ``numerics.py``,
  ``_validation.py`` (every argument checked in one place: ``ArgumentError``) and
  ``safety.py`` (data made inert in spreadsheet cells and figure labels)

Extension points, one contract and one registry each: adversaries
(``adversaries.register``, ``ADVERSARY_REGISTRY``), anonymizers (``anonymize.ANONYMIZERS``)
and release kinds (``releases.RELEASE_KINDS``).

Names are imported on first use, so ``import maxent_privacy`` itself is quick. Module
paths from before the wings (``maxent_privacy.parser``, ``.data``, ...) still import:
the table ``_MOVED`` below.

>>> from maxent_privacy import Bucketized, MaxEntModel, datasets
>>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                      sa="disease", group="bucket")
>>> model = MaxEntModel(release)
>>> model.add(model.P("Breast Cancer", gender="male") == 0)
>>> float(model.solve().posterior().loc[("female", "junior"), "Breast Cancer"])
1.0
"""

from __future__ import annotations

import importlib
import sys
from importlib.machinery import ModuleSpec
from typing import TYPE_CHECKING

__version__ = "0.1.0"

# Old module paths, kept importable: before the package had wings its modules lay side by
# side, and code written then imports, say, ``maxent_privacy.parser`` or
# ``from maxent_privacy.data import Bucketized``. A finder on ``sys.meta_path`` answers each
# old name in _MOVED with the module that now holds its code, so both names are one module
# object (same functions and globals; monkeypatching either patches both). Nothing is
# imported until an old name is asked for; the finder lives here, not in a module of its
# own, so that ``import maxent_privacy`` loads one file. Old dotted name -> new module:
_MOVED = {
    "maxent_privacy.data": "maxent_privacy.releases.bucketized",
    "maxent_privacy.generalized": "maxent_privacy.releases.generalized",
    "maxent_privacy.pooled": "maxent_privacy.releases.pooled",
    "maxent_privacy.structure": "maxent_privacy.releases.structure",
    "maxent_privacy.ranges": "maxent_privacy.releases.ranges",
    "maxent_privacy.checks": "maxent_privacy.releases.checks",
    "maxent_privacy.facts": "maxent_privacy.knowledge.facts",
    "maxent_privacy.parser": "maxent_privacy.knowledge.parser",
    "maxent_privacy.rules": "maxent_privacy.knowledge.rules",
    "maxent_privacy.conflicts": "maxent_privacy.solve.conflicts",
    "maxent_privacy.knowledge.conflicts": "maxent_privacy.solve.conflicts",
    "maxent_privacy.attacks": "maxent_privacy.adversaries.attacks",
    "maxent_privacy.channels": "maxent_privacy.adversaries.channels",
    "maxent_privacy.robustness": "maxent_privacy.adversaries.robustness",
    "maxent_privacy.metrics": "maxent_privacy.adversaries.metrics",
    "maxent_privacy.mondrian": "maxent_privacy.anonymize.mondrian",
    "maxent_privacy.plotting": "maxent_privacy.report.plots",
    "maxent_privacy.datasets_byun": "maxent_privacy.datasets.byun",
    "maxent_privacy.dual": "maxent_privacy.solve",
    "maxent_privacy._io": "maxent_privacy.files",
    "maxent_privacy.distributed.cli": "maxent_privacy.cli.distributed",
}


class _Alias:
    """Finds an old name in ``_MOVED`` and loads it as the module that replaced it (a
    meta path finder and its loader, by protocol: ``importlib.abc`` costs an import)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in _MOVED:
            return None
        return ModuleSpec(fullname, self)

    def create_module(self, spec):
        # the module object of the new name; the import system keeps its __name__ and
        # __file__ (they are set) but writes the old name's spec over its __spec__
        module = importlib.import_module(_MOVED[spec.name])
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module) -> None:
        """Nothing to run (the new module ran when it was imported): its spec goes back."""
        module.__spec__ = module.__spec__.loader_state


if not any(type(f).__name__ == "_Alias" for f in sys.meta_path):  # once, even on reload
    sys.meta_path.append(_Alias())


# Names are imported on first use (PEP 562), so that ``import maxent_privacy`` and the
# ``maxent-privacy`` command's ``--help`` do not pay for cvxpy, scipy and pandas.
# name -> the module that defines it (the module itself when the name is in _MODULES)
_LAZY = {
    "anonymize": ".anonymize",
    "attacks": ".adversaries.attacks",
    "datasets": ".datasets",
    "metrics": ".adversaries.metrics",
    "mondrian": ".anonymize.mondrian",
    "robustness": ".adversaries.robustness",
    "rules": ".knowledge.rules",
    "check_kc": ".adversaries.attacks",
    "compare_adversaries": ".adversaries.compare",
    "definetti": ".adversaries.definetti",
    "inference_channels": ".adversaries.channels",
    "explain_infeasibility": ".solve.conflicts",
    "Bucketized": ".releases.bucketized",
    "InaccurateSolution": ".errors",
    "InfeasibleKnowledge": ".errors",
    "KnowledgeError": ".errors",
    "MaxEntError": ".errors",
    "OutputError": ".errors",
    "ReleaseError": ".errors",
    "SolverFailed": ".errors",
    "SolverNotInstalled": ".errors",
    "SolverOptionError": ".errors",
    "StaleResult": ".errors",
    "UnsupportedModel": ".errors",
    "Generalized": ".releases.generalized",
    "Tabulated": ".releases.tabulated",
    "InconsistentTables": ".errors",
    "count_having": ".knowledge.vague",
    "soft": ".knowledge.vague",
    "vague": ".knowledge.vague",
    "MaxEntModel": ".model",
    "Person": ".model",
    "KnowledgeFileError": ".knowledge.parser",
    "plot_privacy_curve": ".report.plots",
    "plot_risk": ".report.plots",
    "Certificate": ".results",
    "Result": ".results",
    "Rules": ".knowledge.rules",
    "mine_rules": ".knowledge.rules",
    "InaccuracyWarning": ".solve",
    "SolveOptions": ".solve",
    "exp_cone_solvers": ".solve",
    "Structure": ".releases.structure",
    "between": ".releases.ranges",
}
#: the names above that are modules (the rest are attributes of their module)
_MODULES = {"anonymize", "attacks", "datasets", "metrics", "mondrian", "robustness", "rules"}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    mod = importlib.import_module(module, __name__)
    value = mod if name in _MODULES else getattr(mod, name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # what static analysers and IDEs see
    import maxent_privacy.anonymize.mondrian as mondrian

    from . import anonymize, datasets
    from .adversaries import attacks, metrics, robustness
    from .adversaries.attacks import check_kc
    from .adversaries.channels import inference_channels
    from .adversaries.compare import compare_adversaries as compare_adversaries
    from .adversaries.definetti import definetti as definetti
    from .errors import (
        InaccurateSolution,
        InconsistentTables,
        InfeasibleKnowledge,
        KnowledgeError,
        MaxEntError,
        OutputError,
        ReleaseError,
        SolverFailed,
        SolverNotInstalled,
        SolverOptionError,
        StaleResult,
        UnsupportedModel,
    )
    from .knowledge import rules
    from .knowledge.parser import KnowledgeFileError
    from .knowledge.rules import Rules, mine_rules
    from .knowledge.vague import count_having, soft, vague
    from .model import MaxEntModel, Person
    from .releases.bucketized import Bucketized
    from .releases.generalized import Generalized
    from .releases.ranges import between
    from .releases.structure import Structure
    from .releases.tabulated import Tabulated
    from .report.plots import plot_privacy_curve, plot_risk
    from .results import Certificate, Result
    from .solve import InaccuracyWarning, SolveOptions, exp_cone_solvers
    from .solve.conflicts import explain_infeasibility

__all__ = [
    "Bucketized",
    "Certificate",
    "Generalized",
    "InaccuracyWarning",
    "InaccurateSolution",
    "InconsistentTables",
    "InfeasibleKnowledge",
    "KnowledgeError",
    "KnowledgeFileError",
    "MaxEntError",
    "MaxEntModel",
    "OutputError",
    "Person",
    "Rules",
    "count_having",
    "explain_infeasibility",
    "inference_channels",
    "mine_rules",
    "plot_privacy_curve",
    "plot_risk",
    "rules",
    "soft",
    "vague",
    "ReleaseError",
    "Result",
    "SolverFailed",
    "SolverNotInstalled",
    "SolverOptionError",
    "SolveOptions",
    "StaleResult",
    "Tabulated",
    "Structure",
    "UnsupportedModel",
    "between",
    "anonymize",
    "attacks",
    "check_kc",
    "compare_adversaries",
    "definetti",
    "mondrian",
    "robustness",
    "datasets",
    "exp_cone_solvers",
    "metrics",
]
