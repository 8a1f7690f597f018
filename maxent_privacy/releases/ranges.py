"""Ranges of quasi-identifier values in knowledge: ``age=range(18, 30)``, ``age=between(18, 29)``.

A range in a condition of ``model.P`` stands for the exact values of the column that lie
in it (those present in the data: the release's values, or the population's exact values
of a generalized release). A Python ``range`` holds the integers in it (``range(18, 30)``
is 18, ..., 29); :func:`between` holds the numbers between its bounds, both included
(either may be None: no bound). Knowledge files write ``age in 18..29``, ``age < 30``,
``age >= 60`` (:mod:`maxent_privacy.knowledge.parser`). Values that are not numbers (or text that
does not spell one) are never in a range.

>>> from maxent_privacy.releases.ranges import between, select
>>> select([17, 18, "25", 29.5, 30, "x"], between(18, 29))
[18, '25']
>>> select([17, 18, 29.5, 30], range(18, 30)), str(between(None, 30, include_high=False))
([18], '< 30')
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["Between", "between", "describe", "is_range", "select"]

_NUMBER = re.compile(r"^\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$")


def _number(value) -> float | None:
    """``value`` as a finite float if it is a number or text spelling one, else None."""
    if type(value).__name__ in ("bool", "bool_"):  # Python's and numpy's booleans
        return None
    if isinstance(value, str):
        if not _NUMBER.match(value):
            return None
        out = float(value)
    else:
        try:
            out = float(value)
        except (TypeError, ValueError, OverflowError):
            return None
        if not isinstance(value, (int, float)) and not hasattr(value, "dtype"):
            return None  # a Decimal, Fraction, ...: only plain and numpy numbers
    return out if math.isfinite(out) else None


def _shown(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 2**53 else repr(float(x))


@dataclass(frozen=True)
class Between:
    """The numbers from ``low`` to ``high`` (None: unbounded); ``include_low`` and
    ``include_high`` say whether the bounds themselves are in. Made by :func:`between`."""

    low: float | None = None
    high: float | None = None
    include_low: bool = True
    include_high: bool = True

    def __contains__(self, value) -> bool:
        x = _number(value)
        if x is None:
            return False
        if self.low is not None and (x < self.low or (x == self.low and not self.include_low)):
            return False
        return not (
            self.high is not None and (x > self.high or (x == self.high and not self.include_high))
        )

    def __str__(self) -> str:
        lo, hi = self.low, self.high
        if lo is None and hi is None:
            return "any number"
        if lo is None:
            return f"{'<=' if self.include_high else '<'} {_shown(hi)}"
        if hi is None:
            return f"{'>=' if self.include_low else '>'} {_shown(lo)}"
        if self.include_low and self.include_high:
            return f"{_shown(lo)}..{_shown(hi)}"
        left = "[" if self.include_low else "("
        right = "]" if self.include_high else ")"
        return f"{left}{_shown(lo)}, {_shown(hi)}{right}"


def between(low=None, high=None, *, include_low: bool = True, include_high: bool = True):
    """The numbers from ``low`` to ``high``, both included (None: no bound on that side).

    ``model.P("Flu", age=between(18, 29))`` is P(Flu | 18 <= age <= 29) over the ages
    present in the data; ``include_low=False`` / ``include_high=False`` leave a bound out
    (``age > 17`` is ``between(17, None, include_low=False)``).

    >>> from maxent_privacy import between
    >>> 29 in between(18, 29), 30 in between(18, 29), 5 in between(None, 29)
    (True, False, True)
    >>> between(30, 20)
    Traceback (most recent call last):
    ...
    maxent_privacy.errors.KnowledgeError: between(30, 20) is empty: the lower bound is above \
the upper bound
    """
    from ..errors import KnowledgeError

    bounds = []
    for name, b in (("low", low), ("high", high)):
        if b is None:
            bounds.append(None)
            continue
        x = _number(b) if not isinstance(b, str) else None
        if x is None:
            raise KnowledgeError(f"between(): {name} must be a finite number or None, got {b!r}")
        bounds.append(x)
    lo, hi = bounds
    if lo is not None and hi is not None:
        if lo > hi or (lo == hi and not (include_low and include_high)):
            raise KnowledgeError(
                f"between({low!r}, {high!r}) is empty: the lower bound is above the upper bound"
                if lo > hi
                else f"between({low!r}, {high!r}) with a bound left out is empty"
            )
    return Between(lo, hi, bool(include_low), bool(include_high))


def is_range(spec) -> bool:
    """Whether ``spec`` is a range of values (a ``range`` or a :class:`Between`)."""
    return isinstance(spec, (range, Between))


def select(values, spec) -> list:
    """The members of ``values`` that lie in the range ``spec``, in their order."""
    if isinstance(spec, Between):
        return [v for v in values if v in spec]
    out = []
    for v in values:
        x = _number(v)
        if x is not None and x.is_integer() and int(x) in spec:
            out.append(v)
    return out


def describe(attribute: str, spec) -> str:
    """A condition as text: ``age in 18..29``, ``age < 30``, ``age in range(18, 30)``."""
    if isinstance(spec, Between) and (spec.low is None) != (spec.high is None):
        return f"{attribute} {spec}"
    return f"{attribute} in {spec}"
