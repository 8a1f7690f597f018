"""Every argument of a public function checked in one place, with one error.

A public function checks its arguments here, before any work, and a bad one is one
:class:`ArgumentError` (a :class:`~maxent_privacy.errors.MaxEntError` and a ``ValueError``)
whose one-line message names the argument, what it takes and what it got. The names that
mean the same thing everywhere (the glossary in ``docs/glossary.md``) are read here too:
``progress`` (None, True/False or a callable; messages go to stderr), the threshold a
posterior *reaches* (:data:`REACHES`), text flags (``"True"``, ``"yes"``, ``1``).

>>> check_threshold(0.5)
0.5
>>> check_threshold(float("nan"))
Traceback (most recent call last):
...
maxent_privacy._validation.ArgumentError: threshold must be a number in (0, 1], got nan
>>> check_integer(3, "l", minimum=2)
3
>>> check_choice("upper", "by", ("person", "class"))
Traceback (most recent call last):
...
maxent_privacy._validation.ArgumentError: by must be 'person' or 'class', got 'upper'
>>> reaches(0.4 - 1e-12, 0.4)
True
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from collections.abc import Callable, Iterable

from .errors import KnowledgeError, MaxEntError, ReleaseError


def _is_bool(value) -> bool:
    """A Python or numpy bool (numpy is not imported here: the command line's parser, which
    reads these checks, starts without it)."""
    return isinstance(value, bool) or type(value).__name__ == "bool"


__all__ = [
    "REACHES",
    "ArgumentError",
    "ArgumentTypeError",
    "KnowledgeArgumentError",
    "ReleaseArgumentError",
    "aliased",
    "check_choice",
    "check_columns",
    "check_flag",
    "check_integer",
    "check_keywords",
    "check_number",
    "check_probability",
    "check_progress",
    "progress_bar",
    "check_seconds",
    "check_seed",
    "check_threshold",
    "deprecated_alias",
    "listed",
    "reaches",
    "shown",
]

#: a posterior within this of a threshold counts as reaching it (our certified answers are
#: accurate to about 1e-9 of a probability); the one tolerance every "at risk" reads
REACHES = 1e-9

#: how many allowed values a message lists before it says "..."
LISTED = 10


class ArgumentError(MaxEntError, ValueError):
    """An argument of a public function is not one of the values it takes.

    The message is one line naming the argument, the values it takes and what it got.
    """


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of the wrong kind where Python (or an earlier version of ours) raised a
    ``TypeError``: an unknown keyword, text where a table is needed. Still an
    :class:`ArgumentError`."""


class ReleaseArgumentError(ArgumentError, ReleaseError):
    """An argument about a release (a group size, a number of queries, ``r``) where an
    earlier version raised a ``ReleaseError``: an :class:`ArgumentError`, and still a
    ``ReleaseError`` for the code that catches one."""


class KnowledgeArgumentError(ArgumentError, KnowledgeError):
    """An argument about knowledge (``knowledge`` itself, a prior's ``alpha``, ``f_max``)
    where an earlier version raised a ``KnowledgeError``: an :class:`ArgumentError`, and
    still a ``KnowledgeError``."""


def shown(value, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}..."


def listed(values: Iterable, limit: int = LISTED, quote: bool = True) -> str:
    """``'a', 'b' or 'c'``: values for a message, the first ``limit`` then '...'.

    >>> listed(range(12), quote=False)
    '0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... (12 in all)'
    """
    items = [repr(v) if quote else str(v) for v in values]
    if len(items) > limit:
        return ", ".join(items[:limit]) + f", ... ({len(items)} in all)"
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not _is_bool(value)


def check_number(
    value,
    name: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    error: type[ArgumentError] = ArgumentError,
) -> float:
    """``value`` as a finite float within ``[minimum, maximum]`` (either may be None).

    Every check takes ``error``, the :class:`ArgumentError` subclass to raise (say
    :class:`ReleaseArgumentError` where a ``ReleaseError`` was raised before)."""
    ok = _real(value) and math.isfinite(float(value))
    ok = ok and (minimum is None or value >= minimum) and (maximum is None or value <= maximum)
    if not ok:
        span = (
            f" >= {minimum:g}"
            if maximum is None and minimum is not None
            else f" <= {maximum:g}"
            if minimum is None and maximum is not None
            else f" in [{minimum:g}, {maximum:g}]"
            if minimum is not None
            else ""
        )
        raise error(f"{name} must be a finite number{span}, got {shown(value)}")
    return float(value)


def check_probability(
    value, name: str = "p", *, error: type[ArgumentError] = ArgumentError
) -> float:
    """``value`` as a float in [0, 1]."""
    if not _real(value) or not 0.0 <= float(value) <= 1.0:  # NaN fails both comparisons
        raise error(f"{name} must be a probability in [0, 1], got {shown(value)}")
    return float(value)


def check_threshold(
    value, name: str = "threshold", *, error: type[ArgumentError] = ArgumentError
) -> float:
    """``value`` as a float in (0, 1]: the posterior at which a person is at risk."""
    if not _real(value) or not 0.0 < float(value) <= 1.0:
        raise error(f"{name} must be a number in (0, 1], got {shown(value)}")
    return float(value)


def reaches(p, threshold: float):
    """Whether posterior(s) ``p`` reach ``threshold``, within :data:`REACHES`."""
    import numpy as np

    return np.asarray(p) >= threshold - REACHES if np.ndim(p) else p >= threshold - REACHES


def check_integer(
    value,
    name: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    error: type[ArgumentError] = ArgumentError,
) -> int:
    """``value`` as an int (a whole number, not a bool), at least ``minimum`` and at most
    ``maximum`` (either may be None).

    >>> check_integer(3, "qd", minimum=1, maximum=2)
    Traceback (most recent call last):
    ...
    maxent_privacy._validation.ArgumentError: qd must be a whole number in [1, 2], got 3
    """
    given = value  # as shown in a message (1.0, not 1)
    whole = isinstance(value, numbers.Integral) and not _is_bool(value)
    if not whole and _real(value) and float(value).is_integer() and abs(value) <= 2**53:
        whole, value = True, int(value)  # a float that is exactly a whole number
    low = whole and minimum is not None and value < minimum
    if not whole or low or (maximum is not None and value > maximum):
        span = (
            f" in [{minimum}, {maximum}]"
            if minimum is not None and maximum is not None
            else f" >= {minimum}"
            if minimum is not None
            else f" <= {maximum}"
            if maximum is not None
            else ""
        )
        raise error(f"{name} must be a whole number{span}, got {shown(given)}")
    return int(value)


def check_seconds(
    value,
    name: str = "time_limit",
    *,
    none: bool = True,
    positive: bool = False,
    error: type[ArgumentError] = ArgumentError,
) -> float | None:
    """``value`` as a finite number of seconds, >= 0 (> 0 when ``positive``); None passes
    when ``none``."""
    if value is None and none:
        return None
    ok = _real(value) and math.isfinite(float(value))
    ok = ok and (value > 0 if positive else value >= 0)
    if not ok:
        sign = "> 0" if positive else ">= 0"
        also = ", or None" if none else ""
        raise error(f"{name} must be a finite number of seconds {sign}{also}, got {shown(value)}")
    return float(value)


def check_choice(
    value, name: str, choices: Iterable, *, error: type[ArgumentError] = ArgumentError
):
    """``value`` if it is one of ``choices`` (compared with ``==``), else an error listing
    them (the first ten)."""
    choices = list(choices)
    for c in choices:
        if value is c or (type(value) is type(c) and value == c):
            return c
    raise error(f"{name} must be {listed(choices)}, got {shown(value)}")


_TRUE = {"true", "yes", "y", "1", "t"}
_FALSE = {"false", "no", "n", "0", "f", ""}


def check_flag(value, name: str, *, error: type[ArgumentError] = ArgumentError) -> bool:
    """``value`` as a bool: True/False, 1/0, or the text ``true/false``, ``yes/no``,
    ``1/0`` (any case), the same reading everywhere."""
    if _is_bool(value):
        return bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise error(f"{name} must be True or False, got {shown(value)}")


def check_seed(value, name: str = "seed", *, error: type[ArgumentError] = ArgumentError):
    """``value`` if it is a whole number >= 0, None or a numpy Generator."""
    if value is None or type(value).__name__ in ("Generator", "SeedSequence"):
        return value
    if isinstance(value, numbers.Integral) and not _is_bool(value):
        if value >= 0:
            return int(value)
    raise error(
        f"{name} must be a whole number >= 0, None or a numpy Generator, got {shown(value)}"
    )


def check_columns(frame, columns, name: str) -> list:
    """``columns`` (one name or several) as a list, each a column of ``frame``."""
    items = (
        [columns]
        if isinstance(columns, str) or not isinstance(columns, Iterable)
        else (list(columns))
    )
    for c in items:
        if c not in frame.columns:
            raise ArgumentError(f"{name}: no column {c!r}; the columns are {listed(frame.columns)}")
    return items


def check_progress(
    progress, prefix: str = "", *, error: type = ArgumentError
) -> Callable[[str], None] | None:
    """The one reading of ``progress``: None or False -> None (say nothing), True -> a
    function printing each message to stderr (after ``prefix``), a callable -> itself (it
    receives each message as one line of text)."""
    if progress is None or (_is_bool(progress) and not progress):
        return None
    if _is_bool(progress) and progress:
        head = f"{prefix}: " if prefix else ""
        return lambda text: print(f"{head}{text}", file=sys.stderr, flush=True)
    if callable(progress):
        return progress
    raise error(f"progress must be None, True/False or a function, got {shown(progress)}")


class _LineBar:
    """A progress bar whose updates call ``say`` with one line of text (the first and the
    last, and at most one every half second between), for ``progress=function``."""

    def __init__(self, say: Callable[[str], None], total: int, desc: str, unit: str):
        self.say, self.total, self.desc, self.unit = say, int(total), desc, unit
        self.n, self.postfix, self.last = 0, "", None

    def _line(self) -> str:
        plural = self.unit + ("es" if self.unit.endswith(("s", "ch", "x")) else "s")
        text = f"{self.desc}: {self.n:,} of {self.total:,} {plural}"
        return f"{text}, {self.postfix}" if self.postfix else text

    def _maybe(self, force: bool = False) -> None:
        import time

        now = time.monotonic()
        if force or self.last is None or now - self.last >= 0.5:
            self.last = now
            self.say(self._line())

    def update(self, n: int = 1) -> None:
        self.n += n
        self._maybe(self.n >= self.total)

    def set_postfix_str(self, text: str) -> None:
        self.postfix = text
        self._maybe()

    def close(self) -> None:
        if self.last is None or self.n < self.total:
            self._maybe(force=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress_bar(progress, *, total: int, desc: str, unit: str, auto: bool = False):
    """The one reading of ``progress`` for long work counted in steps: None -> a tqdm bar
    on stderr when ``auto`` (the work is large); True / False -> a tqdm bar on stderr or
    none; a function -> it is called with one line of text as the work goes
    (``"bounds: 3 of 10 components, ..."``, at most every half second, and at the end).
    The bar has ``update(n)``, ``set_postfix_str(text)``, ``close()`` and is a context
    manager.

    >>> lines = []
    >>> with progress_bar(lines.append, total=2, desc="solve", unit="part") as bar:
    ...     bar.update()
    ...     bar.update()
    >>> lines
    ['solve: 1 of 2 parts', 'solve: 2 of 2 parts']
    """
    say = check_progress(progress) if not _is_bool(progress) else None
    if say is not None:
        return _LineBar(say, total, desc, unit)
    from tqdm import tqdm  # the text bar: tqdm.auto wants ipywidgets in notebooks

    show = auto if progress is None else bool(progress)
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not (show and total))


def deprecated_alias(kwargs: dict, old: str, new: str, where: str, *, stacklevel: int = 3) -> None:
    """Move ``kwargs[old]`` to ``kwargs[new]`` with a DeprecationWarning (both given: an
    error). ``stacklevel`` as for :func:`warnings.warn`, counted from here: the default 3
    names the caller of the function that calls this one.

    >>> given = {"person": None, "id_column": "name"}
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     deprecated_alias(given, "id_column", "person", "placement()")
    >>> given, str(caught[0].message)
    ({'person': 'name'}, 'placement(): id_column= is deprecated; use person=')
    """
    if old not in kwargs:
        return
    if new in kwargs and kwargs[new] is not None:
        raise ArgumentError(f"{where}: give {new}= only ({old}= is its old name)")
    warnings.warn(
        f"{where}: {old}= is deprecated; use {new}=", DeprecationWarning, stacklevel=stacklevel
    )
    kwargs[new] = kwargs.pop(old)


def check_keywords(kwargs: dict, where: str) -> None:
    """An :class:`ArgumentTypeError` (a ``TypeError`` too, as Python's own) for the first
    keyword left in ``kwargs``: a function that takes ``**kwargs`` only for an old name
    calls this after :func:`deprecated_alias` so that a misspelt keyword is not ignored.

    >>> check_keywords({"persno": "name"}, "placement()")
    Traceback (most recent call last):
    ...
    maxent_privacy._validation.ArgumentTypeError: placement() got an unexpected keyword \
argument 'persno'
    """
    for name in kwargs:
        raise ArgumentTypeError(f"{where} got an unexpected keyword argument {name!r}")


def aliased(value, kwargs: dict, old: str, new: str, where: str, *, stacklevel: int = 4):
    """The argument ``new`` (given as ``value``), or ``kwargs[old]``, its deprecated name,
    with a DeprecationWarning naming the caller's line; ``kwargs`` are the other keywords a
    function took (``**old``) only for that name, and any other one is an
    :class:`ArgumentTypeError`. ``stacklevel`` as in :func:`deprecated_alias`: 4 names the
    line that called the function calling this one.

    >>> def placement(release, person=None, **old):
    ...     return aliased(person, old, "id_column", "person", "placement()")
    >>> placement(None, "name")
    'name'
    >>> with warnings.catch_warnings(record=True):
    ...     warnings.simplefilter("always")
    ...     placement(None, id_column="name")
    'name'
    """
    if not kwargs:
        return value
    given = {new: value, **kwargs}
    deprecated_alias(given, old, new, where, stacklevel=stacklevel)
    value = given.pop(new)
    check_keywords(given, where)
    return value
