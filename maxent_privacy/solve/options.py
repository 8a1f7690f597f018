"""One solver policy: the options of a solve, checked, and the backend they choose.

:class:`SolveOptions` holds what ``model.solve(...)`` takes. ``tol`` is the
*certificate's* tolerance (largest residual accepted, in records or in the fact's units);
each solver's own stopping tolerance has its own name among the solver options
(``newton_tol`` for ours, ``eps_abs``/``eps_rel`` for SCS, ``tol_gap_abs``... for
Clarabel). :func:`solver_options` lists the options each solver takes; an unknown,
ill-typed or out-of-range option raises :class:`~maxent_privacy.errors.SolverOptionError`
naming it and listing the valid ones.

>>> from maxent_privacy.solve import SolveOptions
>>> SolveOptions(solver="maxent", solver_options={"maxiter": 5}).checked()
Traceback (most recent call last):
...
maxent_privacy.errors.SolverOptionError: unknown option 'maxiter' for solver 'MAXENT'; ...
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import cvxpy as cp

from .._validation import LISTED, check_progress, listed
from ..errors import SolverNotInstalled, SolverOptionError, UnsupportedModel
from . import placements
from . import tolerances as tl

__all__ = ["DEFAULT_OPTIONS", "MAXENT", "SolveOptions", "exp_cone_solvers", "solver_options"]

#: our own solver (Newton on the dual, :mod:`.newton`)
MAXENT = "MAXENT"

#: solver options used unless the caller gives their own. SCS (first order) stops at
#: 1e-6 and our polish (Newton on the dual) takes its answer to floating point (on Du
#: Adult with Top-(250, 250) rules: ``python -m benchmarks scs_defaults``,
#: ``benchmarks/RESULTS.md``). Asking SCS itself for 1e-9 buys nothing after the polish.
#: What makes SCS slow is a cell forced to 0 left in a component (``presolve=False``),
#: not eps
DEFAULT_OPTIONS = {
    "SCS": {"eps_abs": 1e-6, "eps_rel": 1e-6, "max_iters": 100_000},
    "ECOS": {"max_iters": 200},
    "CLARABEL": {"max_iter": 400},
    MAXENT: {"newton_tol": tl.NEWTON_TOL, "max_iter": tl.NEWTON_MAX_ITER},
}

# kinds: "int+" positive integer, "tol" a positive finite number, "time" positive number,
# "bool", "any" (passed on unchecked)
_MAXENT = {"newton_tol": "tol", "max_iter": "int+", "time_limit": "time"}
_ECOS = {
    "max_iters": "int+", "abstol": "tol", "reltol": "tol", "feastol": "tol",
    "abstol_inacc": "tol", "reltol_inacc": "tol", "feastol_inacc": "tol",
}  # fmt: skip
_SCS = {
    "max_iters": "int+", "eps_abs": "tol", "eps_rel": "tol", "eps_infeas": "tol",
    "alpha": "tol", "scale": "tol", "adaptive_scale": "bool", "normalize": "bool",
    "rho_x": "tol", "acceleration_lookback": "any", "acceleration_interval": "int+",
    "time_limit_secs": "time", "write_data_filename": "any", "log_csv_filename": "any",
}  # fmt: skip
_CVXPY = {"warm_start": "bool", "canon_backend": "any", "ignore_dpp": "bool"}


def _clarabel_options() -> dict:
    try:
        import clarabel
    except ImportError:  # pragma: no cover - clarabel is a dependency
        return {}
    settings = clarabel.DefaultSettings()
    out = {}
    for name in dir(settings):
        if name.startswith("_") or name in ("default", "verbose"):
            continue
        value = getattr(settings, name)
        if isinstance(value, bool):
            out[name] = "bool"
        elif isinstance(value, int):
            out[name] = "int+"
        elif isinstance(value, float):
            out[name] = "time" if name == "time_limit" else "tol"
        else:
            out[name] = "any"
    return out


def solver_options(solver: str) -> dict[str, str]:
    """The options a solver takes, with their kind; None for a solver we pass through."""
    name = str(solver).upper()
    table = {MAXENT: _MAXENT, "ECOS": _ECOS, "SCS": _SCS}.get(name)
    if name == "CLARABEL":
        table = _clarabel_options()
    if table is None:
        return None
    return table if name == MAXENT else {**table, **_CVXPY}


def _check_value(solver: str, key: str, kind: str, value) -> None:
    ok = True
    if kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "int+":
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
    elif kind in ("tol", "time"):
        ok = (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value)
            and value > 0
        )
    if not ok:
        want = {"bool": "True or False", "int+": "an integer >= 1"}.get(kind, "a number > 0")
        raise SolverOptionError(f"option {key}={value!r} for solver {solver!r} must be {want}")


def _unknown(key, solver: str, valid) -> str:
    """The message for an unknown option: the nearest valid ones first, ten at most.

    >>> _unknown("max_iters", "CLARABEL", ["max_iter", "tol_gap_abs", "verbose"])
    "unknown option 'max_iters' for solver 'CLARABEL'; did you mean 'max_iter'? valid \
options: max_iter, tol_gap_abs or verbose"
    """
    names = sorted(valid)
    near = difflib.get_close_matches(str(key), names, n=LISTED, cutoff=0.6)
    hint = f"; did you mean {near[0]!r}?" if near else ";"
    ordered = near + [v for v in names if v not in near]
    return (
        f"unknown option {key!r} for solver {solver!r}{hint} valid options: "
        f"{listed(ordered, quote=False)}"
    )


def exp_cone_solvers() -> list[str]:
    """Installed cvxpy solvers that handle the exponential cone (entropy)."""
    from cvxpy.constraints import ExpCone
    from cvxpy.reductions.solvers.defines import SOLVER_MAP_CONIC

    installed = set(cp.installed_solvers())
    out = []
    for name, solver in SOLVER_MAP_CONIC.items():
        if name not in installed or name.endswith("_BB"):
            continue
        if name == "MOSEK" or ExpCone in getattr(solver, "SUPPORTED_CONSTRAINTS", []):
            out.append(name)
    return out


@dataclass(frozen=True, kw_only=True)
class SolveOptions:
    """What a solve is asked to do (the arguments of :meth:`MaxEntModel.solve`)."""

    solver: str | None = None
    decompose: bool = True
    presolve: bool = True
    polish: bool = True
    tol: float = 1e-6  #: the certificate's residual tolerance
    verbose: bool = False
    client: object = None  #: a dask Client or "local"
    progress: object = None  #: None (a bar for large solves), True/False, or a function
    solver_options: Mapping = field(default_factory=dict)

    def checked(self) -> SolveOptions:
        """These options with the solver's name normalized, every value checked."""
        if not (isinstance(self.tol, (int, float)) and math.isfinite(self.tol) and self.tol > 0):
            raise SolverOptionError(
                f"tol={self.tol!r} must be a number > 0 (the certificate's tolerance)"
            )
        for key in ("decompose", "presolve", "polish", "verbose"):
            if not isinstance(getattr(self, key), (bool, int)):
                raise SolverOptionError(f"{key}={getattr(self, key)!r} must be True or False")
        check_progress(self.progress)  # None, True/False or a function (one line each)
        if (
            self.client is not None
            and self.solver is not None
            and str(self.solver).upper() != MAXENT
        ):
            raise SolverOptionError("client= (Dask) works with solver='maxent' only")
        if isinstance(self.client, str) and self.client != "local":
            raise SolverOptionError(f"client must be a dask Client or 'local', got {self.client!r}")
        name = None if self.solver is None else self._installed(str(self.solver).upper())
        if name is not None:
            self.for_solver(name)
        return replace(self, solver=name)

    def _installed(self, name: str) -> str:
        if name == MAXENT:
            return name
        available = exp_cone_solvers()
        if name not in available:
            known = name in cp.installed_solvers()
            why = (
                "is installed but cannot handle the exponential cone (entropy)"
                if known
                else "is not installed"
            )
            raise SolverNotInstalled(
                f"solver {self.solver!r} {why}; installed solvers that can: "
                f"{', '.join(available + ['maxent'])}"
            )
        return name

    def for_solver(self, name: str, fallback: bool = False) -> dict:
        """The caller's options checked for solver ``name``, merged over its defaults.

        ``fallback``: the options were given for our solver, which failed; they are left
        out (an iteration or time budget meant for Newton must not stop the fallback).
        """
        valid = solver_options(name)
        given = {} if fallback else dict(self.solver_options)
        if valid is not None:
            for key, value in given.items():
                if key not in valid:
                    raise SolverOptionError(_unknown(key, name, valid))
                _check_value(name, key, valid[key], value)
        return {**DEFAULT_OPTIONS.get(name, {}), **given}


def refusal(problem) -> str | None:
    """Why our Newton solver cannot solve ``problem`` (None when it can)."""
    for f in problem.convex:
        what = "a soft penalty" if f.sense == "soft" else "not linear in the model's variable"
        return (
            f"fact {f.name!r} is {what}; solver 'maxent' takes linear equalities and "
            "inequalities only: use a conic solver (solver='CLARABEL')"
        )
    s = problem.structure
    if (s.placement_of >= 0).any():
        joint, factor = placements.joint_cell_count(s), placements.JOINT_MAX_FACTOR
        if joint > factor * max(s.n_cells, 1):
            return (
                f"the model places persons of a generalized release in so many groups of "
                f"several releases that solver 'maxent' would need {joint:,} joint cells "
                f"(more than {factor} times its {s.n_cells:,} cells): use a conic "
                "solver (solver='CLARABEL')"
            )
    return None


def choose(options: SolveOptions, problem) -> str:
    """The solver for this problem: the asked one, or maxent when it can, else Clarabel."""
    why = refusal(problem)
    if options.solver is None:
        return MAXENT if why is None else "CLARABEL"
    if options.solver == MAXENT and why is not None:
        raise UnsupportedModel(why)
    return options.solver
