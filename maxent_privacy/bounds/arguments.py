"""The arguments of :func:`~maxent_privacy.bounds.bounds`, checked before any work.

Each bad argument is one :class:`BoundsArgumentError` (an
:class:`~maxent_privacy._validation.ArgumentError`: a ``ValueError`` and a
:class:`~maxent_privacy.errors.MaxEntError`) whose message names the argument and the values
it takes, read by the shared checks of :mod:`maxent_privacy._validation`; nothing reaches
numpy, HiGHS or cvxpy unchecked.

>>> check_bounds_arguments(by="people")
Traceback (most recent call last):
...
maxent_privacy.bounds.arguments.BoundsArgumentError: by must be None, 'group', 'person' or \
'class', got 'people'
>>> check_bounds_arguments(time_limit=float("nan"))
Traceback (most recent call last):
...
maxent_privacy.bounds.arguments.BoundsArgumentError: time_limit must be a finite number of \
seconds >= 0, got nan
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._validation import (
    ArgumentError,
    check_choice,
    check_progress,
    check_seconds,
    check_seed,
    shown,
)
from .targets import BY

__all__ = ["BY", "BoundsArgumentError", "check_bounds_arguments", "check_time_limit"]


class BoundsArgumentError(ArgumentError):
    """An argument of ``bounds`` that is not one of the values it takes."""


_shown = shown  # the old private name


def check_time_limit(time_limit, name: str = "time_limit") -> float:
    """``time_limit`` as a float: a finite number of seconds, at least 0."""
    return check_seconds(time_limit, name, none=False, error=BoundsArgumentError)


def _check_solver(solver) -> None:
    import cvxpy as cp

    installed = sorted(cp.installed_solvers())
    if isinstance(solver, str) and solver.upper() in installed:
        return
    raise BoundsArgumentError(
        f"solver must be the name of an installed cvxpy solver ({', '.join(installed)}), "
        f"got {_shown(solver)}"
    )


def _check_values(values) -> None:
    if values is None or type(values).__name__ == "MultiIndex":  # (row, value) pairs
        return
    many = isinstance(values, (list, tuple, set, frozenset)) or (
        hasattr(values, "__array__") and np.ndim(values) == 1
    )
    if many:
        if len(values) == 0:
            raise BoundsArgumentError(
                "values must be a sensitive value or a non-empty list of them, got an empty "
                f"{type(values).__name__}"
            )
        items = list(values)
    elif isinstance(values, (str, numbers.Number)) or np.ndim(values) == 0:
        items = [values]
    else:
        raise BoundsArgumentError(
            f"values must be a sensitive value or a list of them, got a {type(values).__name__}"
        )
    for v in items:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            raise BoundsArgumentError(f"values must name sensitive values, got {_shown(v)}")
        if isinstance(v, (list, tuple, set, dict)):
            raise BoundsArgumentError(
                f"values must be a flat list of sensitive values, got {_shown(v)} in it"
            )


def _check_start(start, model) -> None:
    if start is None:
        return
    n = None if model is None else model.n_cells
    arr = np.asarray(start) if hasattr(start, "__len__") else None
    if (
        arr is None
        or arr.ndim != 1
        or not np.issubdtype(arr.dtype, np.number)
        or (n is not None and len(arr) != n)
    ):
        want = "a table" if n is None else f"a table of the model's {n:,} cells"
        raise BoundsArgumentError(
            f"start must be None or {want} (Result.table), got {_shown(start)}"
        )


def check_bounds_arguments(
    model=None,
    by=None,
    values=None,
    exact=False,
    time_limit=60.0,
    solver="CLARABEL",
    seed=0,
    start=None,
    progress=None,
) -> None:
    """Refuse, with one line naming the argument and what it takes, any argument of
    ``bounds`` that is not one of its values (``model`` is not checked here)."""
    check_choice(by, "by", BY, error=BoundsArgumentError)
    if not isinstance(exact, (bool, np.bool_)):  # (not check_flag: exact="no" is a mistake)
        raise BoundsArgumentError(f"exact must be True or False, got {_shown(exact)}")
    check_progress(progress, error=BoundsArgumentError)  # None, True/False or a function
    check_time_limit(time_limit)
    check_seed(seed, error=BoundsArgumentError)
    _check_solver(solver)
    _check_values(values)
    _check_start(start, model)
