"""What every anonymizer promises: one signature, a registry, and the contract checked.

Every anonymizer is called the same way::

    anonymizer(frame, qi, sa, *, <its privacy parameter>, group="group", person=None,
               seed=0, nonsensitive=None, ...)

with everything after ``sa`` keyword-only (and ``history=`` for those that make the next
release of a sequence). :data:`ANONYMIZERS` lists them by name, each an
:class:`Anonymizer` (the function, its privacy parameter, the package's checker of that
parameter, whether it takes a history, a small value for tests); :func:`register` adds
one. A new anonymizer is one module (its function, decorated with :func:`keyword_only`
if it had an older positional form) and one :func:`register` call.

:func:`check_anonymizer` is the shared contract (in the spirit of scikit-learn's
``check_estimator``): the result is a valid release of the same people, deterministic
by seed, keeps person ids when asked, meets its own privacy parameter by the package's
checker and refuses bad parameters with an :class:`~maxent_privacy._validation.ArgumentError`.

>>> from maxent_privacy import anonymize
>>> entry = anonymize.ANONYMIZERS["anatomize"]
>>> entry.parameter, entry.history
('l', False)
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import ArgumentError, ReleaseArgumentError, deprecated_alias, listed, shown
from ..errors import ReleaseError

__all__ = [
    "ANONYMIZERS",
    "SIGNATURE",
    "Anonymizer",
    "check_anonymizer",
    "keyword_only",
    "no_exemptions",
    "register",
    "release_arguments",
]

#: the keyword-only parameters every anonymizer takes (besides its privacy parameter)
SIGNATURE = ("group", "person", "seed", "nonsensitive")


def keyword_only(*old: str, fill: Callable[[dict], dict] | None = None, renamed=None, folded=None):
    """Decorator: an anonymizer's old positional calls keep working for one release.

    ``old`` names the old positional parameters in order. A call in the old form (more
    than ``frame, qi, sa`` positionally; for an ``old`` starting with ``"history"``, a
    history before the table) is turned into the new keyword call, with a
    ``DeprecationWarning`` saying how to write it; ``fill`` gives keyword defaults for old
    calls only (from the keywords they gave). ``renamed`` maps old keyword names to new
    ones, ``folded`` a keyword no longer taken to ``(advice, fold)``: ``fold(keywords,
    value)`` puts its value into the other keywords (each a ``DeprecationWarning``).
    """
    history_first = bool(old) and old[0] == "history"
    renamed = dict(renamed or {})
    folded = dict(folded or {})

    def wrap(function):
        where = function.__name__

        @functools.wraps(function)
        def shim(*args, **kwargs):
            for before, now in renamed.items():
                deprecated_alias(kwargs, before, now, where)
            if _old_form(args, history_first):
                kwargs = _from_old(where, old, args, kwargs, fill)
                args = ()
            for name, (advice, fold) in folded.items():
                if name in kwargs:
                    warnings.warn(
                        f"{where}: {name}= is deprecated; {advice}",
                        DeprecationWarning,
                        stacklevel=2,
                    )
                    kwargs.update(zip(("frame", "qi", "sa"), args, strict=False))
                    args = ()
                    fold(kwargs, kwargs.pop(name))
            return function(*args, **kwargs)

        shim.old_positional = old
        return shim

    return wrap


@contextmanager
def release_arguments() -> Iterator[None]:
    """Checks of an anonymizer's arguments: an ArgumentError in the block is raised as a
    :class:`~maxent_privacy._validation.ReleaseArgumentError` (an ArgumentError and, as
    before the checks moved to ``_validation``, a ``ReleaseError``)."""
    try:
        yield
    except ArgumentError as exc:
        if isinstance(exc, ReleaseError):
            raise
        raise ReleaseArgumentError(str(exc)) from None


def no_exemptions(nonsensitive, where: str, why: str) -> None:
    """An anonymizer that exempts no value: ``nonsensitive`` must be None (or empty)."""
    if nonsensitive is None:
        return
    try:
        empty = not isinstance(nonsensitive, str) and len(list(nonsensitive)) == 0
    except TypeError:  # not a collection
        empty = False
    if not empty:
        raise ReleaseArgumentError(
            f"{where}: nonsensitive must be None ({why}), got {shown(nonsensitive)}"
        )


def _old_form(args: tuple, history_first: bool) -> bool:
    """Whether positional ``args`` are in the old form."""
    if not history_first:
        return len(args) > 3
    # (history, frame, ...): a history first, then (usually) the table
    if not args or isinstance(args[0], pd.DataFrame):
        return False
    if len(args) >= 2 and isinstance(args[1], pd.DataFrame):
        return True
    return _releases(args[0])


def _releases(value) -> bool:
    """Whether ``value`` is a release or a non-empty list of them."""
    from ..releases.bucketized import ReleaseBase

    if isinstance(value, ReleaseBase):
        return True
    return (
        isinstance(value, (list, tuple))
        and len(value) > 0
        and all(isinstance(v, ReleaseBase) for v in value)
    )


def _from_old(where: str, old: tuple, args: tuple, kwargs: dict, fill) -> dict:
    """The keywords of an old positional call, with its DeprecationWarning."""
    if len(args) > len(old):
        raise TypeError(f"{where}() takes at most {len(old)} positional arguments, got {len(args)}")
    moved = dict(zip(old, args, strict=False))
    for name in moved:
        if name in kwargs:
            raise TypeError(f"{where}() got multiple values for argument {name!r}")
    kwargs = {**kwargs, **moved}
    if fill is not None:
        for name, value in fill(kwargs).items():
            kwargs.setdefault(name, value)
    keywords = [n for n in moved if n not in ("frame", "qi", "sa")]
    advice = ", ".join(f"{n}=..." for n in keywords)
    warnings.warn(
        f"{where}: passing {listed(keywords, quote=False)} by position is deprecated; call "
        f"{where}(frame, qi, sa, {advice})",
        DeprecationWarning,
        stacklevel=3,
    )
    return kwargs


@dataclass(frozen=True)
class Anonymizer:
    """One anonymizer of :data:`ANONYMIZERS`.

    ``function(frame, qi, sa, *, <parameter>=..., ...)`` makes the release;
    ``check(release, **arguments)`` says whether a release meets the privacy parameter
    by the package's own checker (``arguments``: every keyword the anonymizer was called
    with, and ``frame``, ``qi``, ``sa``); ``default`` is a small value of the parameter
    for tests; ``history`` whether it takes ``history=`` (earlier releases, with person
    ids); ``requires`` keywords it cannot run without (such as ``person`` for a sequence).
    """

    name: str
    function: Callable[..., Any]
    parameter: str
    check: Callable[..., bool]
    default: Any
    history: bool = False
    requires: tuple[str, ...] = field(default_factory=tuple)

    def __call__(self, frame, qi, sa, **keywords):
        """The release: ``function(frame, qi, sa, **keywords)``."""
        return self.function(frame, qi, sa, **keywords)

    def meets(self, release, frame, qi, sa, **keywords) -> bool:
        """Whether ``release`` (made with ``keywords``) meets its privacy parameter."""
        return bool(self.check(release, frame=frame, qi=qi, sa=sa, **keywords))


#: name -> :class:`Anonymizer`: every anonymizer of the package (and those registered)
ANONYMIZERS: dict[str, Anonymizer] = {}


def register(
    name: str,
    function: Callable[..., Any],
    *,
    parameter: str,
    check: Callable[..., bool],
    default: Any,
    history: bool = False,
    requires: tuple[str, ...] = (),
    replace: bool = False,
) -> Anonymizer:
    """Add an anonymizer to :data:`ANONYMIZERS` (its signature checked) and return its entry.

    >>> def everyone(frame, qi, sa, *, k, group="group", person=None, seed=0,
    ...              nonsensitive=None): ...
    >>> register("everyone", everyone, parameter="k", check=lambda release, **a: True,
    ...          default=2).parameter
    'k'
    >>> _ = ANONYMIZERS.pop("everyone")
    """
    if not isinstance(name, str) or not name:
        raise ArgumentError(f"name must be a non-empty text, got {shown(name)}")
    if name in ANONYMIZERS and not replace:
        raise ArgumentError(f"an anonymizer named {name!r} is registered; pass replace=True")
    for what, value in (("function", function), ("check", check)):
        if not callable(value):
            raise ArgumentError(f"{what} must be callable, got {shown(value)}")
    history = bool(history)
    _check_signature(name, function, parameter, history)
    entry = Anonymizer(name, function, parameter, check, default, history, tuple(requires))
    ANONYMIZERS[name] = entry
    return entry


def _check_signature(name: str, function, parameter: str, history: bool) -> None:
    """Raise unless ``function`` takes ``(frame, qi, sa, *, parameter, group, person, seed,
    nonsensitive)`` (and ``history`` when ``history``)."""
    params = inspect.signature(function).parameters
    first = [p.name for p in params.values() if p.kind == p.POSITIONAL_OR_KEYWORD]
    keyword = {p.name for p in params.values() if p.kind == p.KEYWORD_ONLY}
    if first != ["frame", "qi", "sa"]:
        raise ArgumentError(
            f"anonymizer {name!r} must take (frame, qi, sa, *, ...) with the rest keyword-only, "
            f"takes ({', '.join(first)}, ...)"
        )
    needed = [parameter, *SIGNATURE] + (["history"] if history else [])
    missing = [p for p in needed if p not in keyword]
    if missing:
        raise ArgumentError(
            f"anonymizer {name!r} must take the keyword-only {listed(missing)}"
            + (" (its privacy parameter)" if parameter in missing else "")
        )


# -- the contract --------------------------------------------------------------------


#: values no privacy parameter takes
BAD = (0, -1, True, "3", float("nan"), None)


def check_anonymizer(
    entry: Anonymizer | str,
    frame: pd.DataFrame,
    qi,
    sa: str,
    person: str,
    *,
    history_frame: pd.DataFrame | None = None,
) -> None:
    """Check the contract of an anonymizer on ``frame`` (AssertionError naming what fails).

    ``person`` is a column of unique ids in ``frame``. The anonymizer is run with its
    ``default`` parameter: the result must be a release of the same people (their
    sensitive values, and their ids when ``person=`` is given), the same for the same
    seed, meet its parameter by its checker, and refuse bad parameters (and a bad seed)
    with an ArgumentError. One that takes a history is also run with the release it makes
    of ``history_frame`` (earlier people; default: the first two thirds of ``frame``) as
    the history.
    """
    from ..releases.bucketized import ReleaseBase

    if isinstance(entry, str):
        entry = ANONYMIZERS[entry]
    name = entry.name
    base = {entry.parameter: entry.default}
    plain = frame.drop(columns=[person])
    runs = []
    if "person" not in entry.requires:
        runs.append((plain, {**base, "seed": 0}))
    runs.append((frame, {**base, "seed": 0, "person": person}))
    if entry.history:
        earlier = frame.iloc[: 2 * len(frame) // 3] if history_frame is None else history_frame
        old = entry(earlier, qi, sa, **base, person=person, seed=1)
        runs.append((frame, {**base, "seed": 0, "person": person, "history": [old]}))
    for table, keywords in runs:
        release = entry(table, qi, sa, **keywords)
        said = f"{name}({', '.join(f'{k}=' for k in keywords)})"
        assert isinstance(release, ReleaseBase), f"{said} returned {type(release).__name__}"
        _same_people(release, table, sa, keywords.get("person"), said)
        again = entry(table, qi, sa, **keywords)
        pd.testing.assert_frame_equal(release.frame, again.frame, obj=f"{said}, run twice")
        assert entry.meets(release, table, qi, sa, **keywords), (
            f"{said} does not meet {entry.parameter}={entry.default!r} by its checker"
        )
    for bad in BAD:
        _refuses(entry, frame, qi, sa, person, bad)
    try:
        entry(frame, qi, sa, **base, person=person, seed=-1)
    except ArgumentError as exc:
        assert "seed" in str(exc), f"{name}(seed=-1): {exc}"
    else:
        raise AssertionError(f"{name}(seed=-1) did not raise ArgumentError")


def _same_people(release, table: pd.DataFrame, sa: str, person, said: str) -> None:
    people = release.people
    assert len(people) == len(table), f"{said}: {len(people)} people, the table has {len(table)}"
    mine = people[release.sa].astype(str).value_counts().sort_index()
    theirs = table[sa].astype(str).value_counts().sort_index()
    assert mine.to_dict() == theirs.to_dict(), f"{said}: not the table's sensitive values"
    if person is None:
        return
    assert release.person == person, f"{said}: person ids not kept (person={release.person!r})"
    pairs = set(zip(people[person].tolist(), people[release.sa].tolist(), strict=True))
    want = set(zip(table[person].tolist(), table[sa].tolist(), strict=True))
    assert pairs == want, f"{said}: not the same people with their sensitive values"


def _refuses(entry: Anonymizer, frame, qi, sa, person, bad) -> None:
    keywords = {entry.parameter: bad}
    if "person" in entry.requires:
        keywords["person"] = person
    try:
        entry(frame, qi, sa, **keywords)
    except ArgumentError as exc:
        assert entry.parameter in str(exc), f"{entry.name}: the error does not name it: {exc}"
        return
    raise AssertionError(
        f"{entry.name}({entry.parameter}={bad!r}) did not raise ArgumentError"
        + (" (nan)" if isinstance(bad, float) and np.isnan(bad) else "")
    )
