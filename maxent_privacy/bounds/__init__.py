"""Bounds: the worst case beside the maximum-entropy estimate.

Over every table the model allows, how low and how high can each posterior go, and what is
possible or certain for each person in every possible world? One module per method,
composed by the public :func:`bounds`. A new way of bounding posteriors goes here as a new
method module.

Modules:

- ``targets``: what is bounded (classes, groups, people) and the model's rows
- ``closed_form``: components, pieces, and the pieces whose bounds follow from counts,
  with no program
- ``lp``: linear programs with certificates (HiGHS), the time budget, the run's stats and
  the steps of a component's LP work
- ``worlds``: possible worlds by mixed-integer programs (``exact=True``)
- ``frame``: the frame's rows read off the count bounds: shares (``by=None``, ``"group"``,
  ``"class"``) or individuals (``by="person"``), with their certificates
- ``arguments``: the arguments of :func:`bounds` checked before any work (one line naming
  the argument and the values it takes)
- ``progress``: the progress bar of a long call (components done, programs run, seconds
  of the time limit used)
- ``intervals``: the public :func:`bounds`, :func:`relaxation_gap`, :func:`maxent_column`;
  the order of a component's steps, the conic pieces and the assembly of the frame
"""

from .intervals import (
    ATTAIN,
    BATCH,
    CERTIFIED,
    INTEGRAL,
    METHODS,
    POSITIVE,
    bounds,
    maxent_column,
    relaxation_gap,
)

__all__ = [
    "ATTAIN",
    "BATCH",
    "CERTIFIED",
    "INTEGRAL",
    "METHODS",
    "POSITIVE",
    "bounds",
    "maxent_column",
    "relaxation_gap",
]
