"""From the command's files to a model: releases (bucketized, or generalized with their
population), the knowledge file, and the groups of a release that has no group column.

``analyze`` and ``report`` read a release the same way (:func:`read_release`):

* with ``--population FILE``, a generalized release (ARX, sdcMicro, our Mondrian): its QI
  cells are ranges, masks or sets and the population places each person;
* without it, a bucketized release; a QI cell that reads as generalized (``[18-23]``,
  ``{02181, 02420}``, ``021**``, ...) is refused ("needs its population") rather than read
  as a plain label, unless ``--formats none`` says every cell is an exact value;
* ``report --group auto``: the release's equivalence classes are its rows with
  identical QI cells (ARX writes no group column), numbered 1, 2, ... in a column
  ``class`` (``class_2``, ... when the release has one); a note on standard error says
  so. Without ``--group`` the same, unless the file has a column that names groups
  (``group``, ``bucket``, ... :data:`GROUP_NAMES`): an Anatomy file read as classes of
  identical QI rows is a wrong answer, so that is an error naming the column.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..errors import ReleaseError
from .inputs import (
    MAX_MESSAGE,
    InputError,
    UsageError,
    counterfeit_flags,
    one_line,
    read_release_csv,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DECIMAL",
    "FORMATS",
    "GROUP_NAMES",
    "INTEGER",
    "build_model",
    "check_no_group_column",
    "derive_groups",
    "load_statements",
    "report_model",
]

#: ``--formats`` -> the ``formats`` of :class:`~maxent_privacy.releases.generalized.Generalized`
FORMATS = {"auto": "auto", "ours": "ours", "none": None}

# numbers written without leading zeros: 02139 (a zip code) stays text
INTEGER = r"-?(?:0|[1-9]\d{0,17})"
DECIMAL = r"-?(?:0|[1-9]\d*)(?:\.\d*[1-9])?"


def load_statements(args) -> list:
    """The statements of ``--knowledge`` (none without it)."""
    from ..knowledge.parser import load_knowledge

    if not getattr(args, "knowledge", None):
        return []
    try:
        return load_knowledge(args.knowledge)
    except OSError as exc:
        reason = exc.strerror or one_line(exc)
        raise InputError(f"{args.knowledge}: cannot read: {reason}") from exc


#: column names (any case, ``-``/space read as ``_``) that say a file has groups: without
#: ``--group``, ``report`` refuses to derive classes from such a file
GROUP_NAMES = frozenset(
    {"group", "bucket", "group_id", "bucket_id", "groupid", "bucketid", "gid", "bid"}
)
#: the ``--group`` value that derives the equivalence classes explicitly
AUTO = "auto"


def check_no_group_column(frame: pd.DataFrame, args, path) -> None:
    """Without ``--group``: an :class:`UsageError` when ``frame`` has a column named like a
    group (:data:`GROUP_NAMES`) that is not one of its roles."""
    roles = {*map(str, args.qi), str(args.sa), str(args.person)}
    for col in frame.columns:
        key = str(col).strip().lower().replace("-", "_").replace(" ", "_")
        if key in GROUP_NAMES and str(col) not in roles:
            raise UsageError(
                f"{path}: no --group given but the file has a group column {str(col)!r}: "
                f"give --group {str(col)} to read its groups (an Anatomy release), or "
                f"--group {AUTO} to take the rows with identical QI cells as the classes"
            )


def derive_groups(frame: pd.DataFrame, qi, path) -> tuple[pd.DataFrame, str, int]:
    """``frame`` with a group column of its equivalence classes (rows with identical QI
    cells, numbered 1, 2, ... in sorted order), the column's name and the number of
    classes."""
    missing = [c for c in qi if c not in frame.columns]
    if missing:
        have = ", ".join(map(str, frame.columns))
        raise InputError(
            f"{path}: quasi-identifier column {missing[0]!r} is not in the file (columns: "
            f"{have[: MAX_MESSAGE // 4]})"
        )
    name, k = "class", 1
    while name in frame.columns:
        k += 1
        name = f"class_{k}"
    frame = frame.copy()
    codes = frame.groupby(list(qi), sort=True, dropna=False).ngroup()
    frame[name] = (codes + 1).astype("int64")
    return frame, name, int(codes.max()) + 1 if len(codes) else 0


def read_release(args, frame: pd.DataFrame, path, group: str, population: bool):
    """The release in ``frame``: :class:`Generalized` with a population, else
    :class:`Bucketized` (generalized cells refused, see the module docstring)."""
    from ..releases.bucketized import Bucketized
    from ..releases.generalized import Generalized, find_generalized

    formats = FORMATS[getattr(args, "formats", "auto") or "auto"]
    try:
        if population:
            return Generalized(
                frame, qi=args.qi, sa=args.sa, group=group, person=args.person, formats=formats
            )
        fake = getattr(args, "counterfeits", None)
        if fake is not None:
            if fake not in frame.columns:
                raise InputError(f"{path}: no column {fake!r} (--counterfeits)")
            frame = frame.assign(**{fake: counterfeit_flags(frame, fake, path)})
        release = Bucketized(
            frame, qi=args.qi, sa=args.sa, group=group, person=args.person, counterfeits=fake
        )
        try:
            found = find_generalized(release.people, release.qi, formats=formats)
        except ReleaseError as exc:
            raise ReleaseError(f"{exc}; --formats none reads every cell as an exact value") from exc
    except ReleaseError as exc:
        message = one_line(exc, limit=MAX_MESSAGE // 2)
        raise InputError(f"{message} (release file {path})") from exc
    if found:
        col, cell = next(iter(found.items()))
        raise InputError(
            f"{path}: column {col!r} holds generalized cells such as {cell!r}; a generalized "
            "release needs its population (person id and exact quasi-identifiers): give it "
            "with --population FILE (or --formats none to read every cell as an exact value)"
        )
    return release


def _population(args, qi, where: str) -> pd.DataFrame:
    """The ``--population`` file, indexed by person id and checked."""
    people = read_release_csv(args.population, kind="population", na=getattr(args, "na", ()))
    person = population_id(args, people)
    try:
        return population_table(people, person, qi)
    except ReleaseError as exc:
        message = one_line(exc, limit=MAX_MESSAGE // 2)
        raise InputError(f"{message} ({where}, population file {args.population})") from exc


def build_model(args, frame: pd.DataFrame):
    """``analyze``: the model of the release in ``frame`` and the release."""
    from ..model import MaxEntModel

    population = getattr(args, "population", None) is not None
    if population and getattr(args, "by", None) == "group":
        raise UsageError(
            "--by group is for bucketized releases; with --population the posterior "
            "is by exact QI (and per person)"
        )
    release = read_release(args, frame, args.release, args.group, population)
    if not population:
        return MaxEntModel(release), release
    where = f"release file {args.release}"
    people = _population(args, release.qi, where)
    try:
        model = MaxEntModel(release, populations=[people])
    except ReleaseError as exc:
        message = one_line(exc, limit=MAX_MESSAGE // 2)
        raise InputError(f"{message} ({where}, population file {args.population})") from exc
    return model, release


def report_model(args, err=None):
    """``report``: the model of the release files (pooled when several) and the names of
    the facts of ``--knowledge``; notes (groups derived) go to ``err``."""
    from ..knowledge.parser import apply_knowledge
    from ..model import MaxEntModel
    from ..report.nonsensitive import check_nonsensitive

    err = sys.stderr if err is None else err
    statements = load_statements(args)
    population = getattr(args, "population", None) is not None
    releases = []
    for path in args.release:
        frame = read_release_csv(path, na=getattr(args, "na", ()))
        group = args.group
        if group is None:
            check_no_group_column(frame, args, path)
        if group is None or (group == AUTO and AUTO not in frame.columns):
            frame, group, n = derive_groups(frame, args.qi, path)
            print(
                f"note: {path}: {'--group auto' if args.group else 'no --group given'}: its "
                f"equivalence classes are the rows with "
                f"identical QI cells ({n:,} classes, numbered in column {group!r})",
                file=err,
            )
        releases.append(read_release(args, frame, path, group, population))
    if len(releases) > 1 and args.person is None:
        raise UsageError(
            f"{len(releases)} releases are pooled through their person ids: give --person"
        )
    populations = None
    if population:
        people = _population(args, releases[0].qi, f"release file {args.release[0]}")
        populations = [people] * len(releases)
    try:
        model = MaxEntModel(releases if len(releases) > 1 else releases[0], populations)
    except ReleaseError as exc:
        message = one_line(exc, limit=MAX_MESSAGE // 2)
        where = ", ".join(map(str, args.release))
        if population:
            where += f", population file {args.population}"
        raise InputError(f"{message} (release files {where})") from exc
    # before the solve: a typo would exclude nothing, every value would leave no risk
    check_nonsensitive(getattr(args, "nonsensitive", None), model, "--nonsensitive")
    names = apply_knowledge(model, statements)
    return model, names


def population_id(args, people: pd.DataFrame) -> str:
    """``--population-id``, else the release's person column if the population has one,
    else the population's first column."""
    if args.population_id is not None:
        if args.population_id not in people.columns:
            have = ", ".join(map(str, people.columns))
            raise InputError(
                f"{args.population}: --population-id column {args.population_id!r} is not in "
                f"the file (columns: {have})"
            )
        return args.population_id
    if args.person is not None and args.person in people.columns:
        return args.person
    return str(people.columns[0])


def population_table(people: pd.DataFrame, person: str, qi) -> pd.DataFrame:
    """The population indexed by person id (column ``person``), checked (ids unique, QI
    present)."""
    from ..releases.generalized import check_population

    if person in qi:
        raise ReleaseError(
            f"the population's person id column {person!r} is a quasi-identifier; name "
            "the id column with --population-id"
        )
    check_population(people, qi, person)
    people = people.copy()
    for col in qi:  # numbers as numbers (ages sort and compare as numbers), codes as text
        text = people[col].str.strip()
        if text.str.fullmatch(INTEGER).all():
            people[col] = text.astype("int64")
        elif text.str.fullmatch(DECIMAL).all():
            people[col] = text.astype(float)
    return people.set_index(person)
