"""The arguments of :func:`~maxent_privacy.bounds.bounds`, checked before any work.

Each bad argument is one ``ValueError`` (``TypeError`` for a wrong kind, both
:class:`~maxent_privacy.errors.MaxEntError`) whose message names the argument and the values
it takes; nothing reaches numpy, HiGHS or cvxpy unchecked.

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

from .._validation import ArgumentError

__all__ = ["BY", "BoundsArgumentError", "check_bounds_arguments", "check_time_limit"]

#: what a row of a bounds frame is about
BY = (None, "group", "person", "class")


class BoundsArgumentError(ArgumentError):
    """An argument of ``bounds`` that is not one of the values it takes."""


def _shown(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}..."


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def check_time_limit(time_limit, name: str = "time_limit") -> float:
    """``time_limit`` as a float: a finite number of seconds, at least 0."""
    if not _real(time_limit) or not math.isfinite(float(time_limit)) or time_limit < 0:
        raise BoundsArgumentError(
            f"{name} must be a finite number of seconds >= 0, got {_shown(time_limit)}"
        )
    return float(time_limit)


def _check_seed(seed) -> None:
    if seed is None or isinstance(seed, (np.random.Generator, np.random.SeedSequence)):
        return
    if isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_)):
        if seed >= 0:
            return
    raise BoundsArgumentError(
        f"seed must be a whole number >= 0, None or a numpy Generator, got {_shown(seed)}"
    )


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
    if not any(by is b or (isinstance(by, str) and by == b) for b in BY):
        raise BoundsArgumentError(
            f"by must be None, 'group', 'person' or 'class', got {_shown(by)}"
        )
    if not isinstance(exact, (bool, np.bool_)):
        raise BoundsArgumentError(f"exact must be True or False, got {_shown(exact)}")
    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        raise BoundsArgumentError(f"progress must be True, False or None, got {_shown(progress)}")
    check_time_limit(time_limit)
    _check_seed(seed)
    _check_solver(solver)
    _check_values(values)
    _check_start(start, model)
