"""maxent_privacy: what can an adversary infer from a published anonymized table?

The data flow, one module each: releases (``data``, ``generalized``) -> the model's
structure (``structure``, ``pooled``) -> model and knowledge (``model``, ``facts``,
``knowledge``, ``rules``, ``parser``) -> solve with a certificate (the ``solve`` package:
a chain of stages; our own dual Newton solver in ``solve.newton``) ->
posteriors and duals (``results``) -> privacy metrics (``metrics``) and plots
(``plotting``); ``anonymize`` produces releases, ``datasets`` ships the papers' examples
and the UCI Adult data, ``cli`` is the ``maxent-privacy`` command.

>>> from maxent_privacy import Bucketized, MaxEntModel, datasets
>>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                      sa="disease", group="bucket")
>>> model = MaxEntModel(release)
>>> model.add(model.P("Breast Cancer", gender="male") == 0)
>>> float(model.solve().posterior().loc[("female", "junior"), "Breast Cancer"])
1.0
"""

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
from .plotting import plot_privacy_curve
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
__version__ = "0.1.0"
