"""maxent_privacy: what can an adversary infer from a published anonymized table?

The data flow, one module each: releases (``data``, ``generalized``) -> the model's
structure (``structure``, ``pooled``) -> model and knowledge (``model``, ``facts``,
``knowledge``, ``rules``, ``parser``) -> solve with a certificate (the ``solve`` package:
a chain of stages; our own dual Newton solver in ``solve.newton``) ->
posteriors and duals (``results``) -> privacy metrics (``metrics``), plots
(``plotting``) and who is at risk (``report``: a risk table and an HTML report);
``anonymize`` produces releases, ``datasets`` ships the papers' examples and the UCI Adult
data, ``cli`` is the ``maxent-privacy`` command. The names below are imported on first
use, so ``import maxent_privacy`` itself is quick.

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
from typing import TYPE_CHECKING

__version__ = "0.1.0"

# Names are imported on first use (PEP 562), so that ``import maxent_privacy`` and the
# ``maxent-privacy`` command's ``--help`` do not pay for cvxpy, scipy and pandas.
# name -> the submodule that defines it (the submodule itself when the name is one)
_LAZY = {
    "anonymize": ".anonymize",
    "attacks": ".attacks",
    "datasets": ".datasets",
    "metrics": ".metrics",
    "mondrian": ".mondrian",
    "robustness": ".robustness",
    "rules": ".rules",
    "check_kc": ".attacks",
    "inference_channels": ".channels",
    "explain_infeasibility": ".conflicts",
    "Bucketized": ".data",
    "InaccurateSolution": ".errors",
    "InfeasibleKnowledge": ".errors",
    "KnowledgeError": ".errors",
    "MaxEntError": ".errors",
    "OutputError": ".errors",
    "ReleaseError": ".errors",
    "SolverFailed": ".errors",
    "SolverNotInstalled": ".errors",
    "SolverOptionError": ".errors",
    "UnsupportedModel": ".errors",
    "Generalized": ".generalized",
    "count_having": ".knowledge",
    "soft": ".knowledge",
    "vague": ".knowledge",
    "MaxEntModel": ".model",
    "Person": ".model",
    "KnowledgeFileError": ".parser",
    "plot_privacy_curve": ".plotting",
    "plot_risk": ".plotting",
    "Certificate": ".results",
    "Result": ".results",
    "Rules": ".rules",
    "mine_rules": ".rules",
    "InaccuracyWarning": ".solve",
    "SolveOptions": ".solve",
    "exp_cone_solvers": ".solve",
    "Structure": ".structure",
    "between": ".ranges",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    mod = importlib.import_module(module, __name__)
    value = mod if module == "." + name else getattr(mod, name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # what static analysers and IDEs see
    from . import anonymize, attacks, datasets, metrics, mondrian, robustness, rules
    from .attacks import check_kc
    from .channels import inference_channels
    from .conflicts import explain_infeasibility
    from .data import Bucketized
    from .errors import (
        InaccurateSolution,
        InfeasibleKnowledge,
        KnowledgeError,
        MaxEntError,
        OutputError,
        ReleaseError,
        SolverFailed,
        SolverNotInstalled,
        SolverOptionError,
        UnsupportedModel,
    )
    from .generalized import Generalized
    from .knowledge import count_having, soft, vague
    from .model import MaxEntModel, Person
    from .parser import KnowledgeFileError
    from .plotting import plot_privacy_curve, plot_risk
    from .ranges import between
    from .results import Certificate, Result
    from .rules import Rules, mine_rules
    from .solve import InaccuracyWarning, SolveOptions, exp_cone_solvers
    from .structure import Structure

__all__ = [
    "Bucketized",
    "Certificate",
    "Generalized",
    "InaccuracyWarning",
    "InaccurateSolution",
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
    "Structure",
    "UnsupportedModel",
    "between",
    "anonymize",
    "attacks",
    "check_kc",
    "mondrian",
    "robustness",
    "datasets",
    "exp_cone_solvers",
    "metrics",
]
