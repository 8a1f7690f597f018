"""Generalized releases: k-anonymity-style tables whose QI cells hold generalized values.

A :class:`Generalized` release is what a k-anonymizing publisher (Samarati and Sweeney;
Mondrian; Byun et al. 2008) puts out: one row per record, the sensitive value exact, and
every quasi-identifier (QI) cell replaced by a *generalized value*, read as the set of
exact values it stands for (the syntax, ours and ARX's and sdcMicro's, is in
:mod:`.cells`: ``[21-25]``, ``{a, b}``, ``*``, ``20-29``, ``021**``, ``[20, 30[``,
``>=60``, ...). Rows sharing a group id and their cells form an equivalence class: each
row's cells belong to that row's sensitive value, so a group whose rows carry different
cells is several classes (or refused, ``mixed_groups="refuse"``). A table of exact QI
values and group ids is an Anatomy-style release, whose groups are buckets.

>>> import pandas as pd
>>> from maxent_privacy.releases.generalized import Generalized, covers
>>> covers("[21 - 25]", 23), covers("021**", "02139"), covers("[20, 30[", 30)
(True, True, False)
>>> frame = pd.DataFrame({"age": ["[21-25]", "[21-25]", "[50-60]", "[50-60]"],
...                       "gender": ["Male", "Male", "Person", "Person"],
...                       "diagnosis": ["Asthma", "Flu", "Alzheimer", "Diabetes"],
...                       "group": [1, 1, 2, 2]})
>>> release = Generalized(frame, qi=["age", "gender"], sa="diagnosis", group="group",
...                       any_values=("*", "Person"))
>>> release.n_records, release.n_groups
(4, 2)
>>> people = pd.DataFrame({"name": ["Tom", "Eve"], "age": [21, 57],
...                        "gender": ["Male", "Female"]})
>>> release.compatible(people, "name").values.tolist()
[['Tom', 1], ['Eve', 2]]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .._validation import aliased
from ..errors import ReleaseError
from .bucketized import ReleaseBase, validate_release
from .cells import (
    FORMATS,
    Cell,
    any_value_words,
    covers,
    find_generalized,
    formats_by_column,
    parse_cell,
    value_arrays,
)
from .checks import (
    check_cells,
    check_columns,
    check_frame,
    check_label,
    check_missing,
    check_unique,
    shorten,
)

__all__ = [
    "FORMATS",
    "MIXED_GROUPS",
    "Cell",
    "Generalized",
    "check_population",
    "covers",
    "find_generalized",
    "parse_cell",
]

MIXED_GROUPS = ("auto", "split", "refuse", "bucket")
"""What rows of one group with different QI cells mean (see :class:`Generalized`)."""


class Generalized(ReleaseBase):
    """One generalized release, one row per record.

    Parameters
    ----------
    frame : DataFrame with the QI columns (generalized cells), the sensitive column
        (exact values) and the group column (equivalence class id).
    qi : names of the quasi-identifier columns.
    sa : name of the sensitive column.
    group : name of the group (equivalence class) column.
    person : optional pseudonym column (one distinct id per row), e.g. for tests that
        know the truth; the attacks never read it.
    any_values : words that stand for "any value" in a QI cell (``*`` by default).
    formats : how QI cells are read: ``"auto"`` (default: our syntax and the ARX and
        sdcMicro forms ``021**``, ``20-29``, ``[20, 30[``, ``<30``, ``>=60``, ``*``),
        ``"ours"`` (``[lo-hi]``, ``{a, b}`` and ``any_values`` only) or None (every cell
        an exact value); or a dict by column (columns not named: ``"auto"``). See
        :mod:`.cells`.
    mixed_groups : what rows of one group with different QI cells mean.
        ``"split"``: each row's cells belong to that row's value, as in ARX and sdcMicro
        output, so the group is one equivalence class per distinct cells, labelled
        ``"<group>/1"``, ``"<group>/2"``, ... in order of first row (once a group is
        split, every group label is text: ``1`` reads ``"1"``). ``"refuse"``: such a group
        is a ``ReleaseError`` naming it and two of its rows. ``"bucket"``: the group is
        an Anatomy bucket, its values pooled over its rows, as in a
        :class:`~maxent_privacy.releases.bucketized.Bucketized` release. ``"auto"``
        (default): ``"split"`` when some QI cell is generalized, ``"bucket"`` when every
        cell is an exact value (``generalized`` is empty, e.g. ``formats=None``): exact QI
        with group ids is how Anatomy publishes. Cells are compared by what they cover
        (``[20-29]`` and ``20-29`` are one cell).

    Attributes ``formats`` (the format of each QI column) and ``generalized`` (the QI
    columns where some cell is not a plain exact value) say how the cells were read;
    ``mixed_groups`` is the reading used (``"auto"`` resolved) and ``split_groups`` maps
    each group that was split to the labels of its classes (empty when none was). A split
    label such as ``"g1/2"`` keeps the publisher's ``"g1"`` in sight wherever groups are
    shown (the model's ``groups`` column, the attacks' findings) and is one plain value,
    so every reader of ``frame[group]`` (group sizes, matching, the pooled model, the
    attacks, ``n_groups``) sees the classes as any other groups.

    Rows with a missing value, duplicate column roles or names, duplicate person ids,
    cells that are not single values (lists, tuples, ...) and malformed cells are errors
    naming the column and value. Matched against its population (:meth:`match`: the
    pooled model, the attacks), a row whose cells cover no one is an error naming the
    row and its cells.

    >>> rows = pd.DataFrame({"age": ["20-29", "30-39"], "d": ["Flu", "HIV"], "g": ["g1", "g1"]})
    >>> release = Generalized(rows, qi=["age"], sa="d", group="g")
    >>> release.frame["g"].tolist(), release.n_groups, release.split_groups
    (['g1/1', 'g1/2'], 2, {'g1': ['g1/1', 'g1/2']})
    >>> Generalized(rows.assign(age=[25, 35]), qi=["age"], sa="d", group="g").mixed_groups
    'bucket'
    >>> Generalized(rows, qi=["age"], sa="d", group="g", mixed_groups="refuse")
    Traceback (most recent call last):
    ...
    maxent_privacy.errors.ReleaseError: group 'g1' has rows with different quasi-identifier \
cells: row 0 (age='20-29') and row 1 (age='30-39'); ...
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        qi: Sequence[str],
        sa: str,
        group: str,
        person: str | None = None,
        any_values: Iterable[str] = ("*",),
        formats="auto",
        mixed_groups: str = "auto",
    ):
        if not (isinstance(mixed_groups, str) and mixed_groups in MIXED_GROUPS):
            raise ReleaseError(
                "mixed_groups must be 'auto', 'split', 'refuse' or 'bucket', got "
                f"{shorten(mixed_groups, 60)}"
            )
        data, qi = validate_release(frame, qi, sa, group, person)
        anys = any_value_words(any_values)
        self.formats = formats_by_column(formats, qi)
        self._cells: dict[str, dict] = {}
        for col in qi:
            self._cells[col] = {
                raw: parse_cell(raw, column=col, any_values=anys, formats=self.formats[col])
                for raw in data[col].drop_duplicates().tolist()
            }
        self.generalized = [
            col for col in qi if any(c.kind != "exact" for c in self._cells[col].values())
        ]
        if mixed_groups == "auto":
            mixed_groups = "split" if self.generalized else "bucket"
        self.mixed_groups = mixed_groups
        self.split_groups: dict = {}
        if mixed_groups != "bucket":
            data, self.split_groups = _equivalence_classes(
                data, qi, group, self._cells, mixed_groups
            )
        self.frame = data
        self.qi = qi
        self.sa = sa
        self.group = group
        self.person = person
        self.any_values = tuple(sorted(anys))
        self._type_cache: tuple[list[tuple], np.ndarray] | None = None

    def cell(self, column: str, raw) -> Cell:
        """The parsed form of a cell ``raw`` that occurs in QI ``column``."""
        return self._cells[column][raw]

    # -- equivalence classes ----------------------------------------------------
    def classes(self) -> pd.DataFrame:
        """One row per group: its size, its QI cells and its multiset of sensitive values.

        A QI column holds the group's cell, or a tuple of its distinct cells when the
        group's rows do not share one (one cell spelled two ways, ``[20-29]`` and
        ``20-29``, or the rows of a bucket, ``mixed_groups="bucket"``). The sensitive
        column holds the sorted list of the group's values (with repeats).

        >>> from maxent_privacy.datasets.byun import byun2008_tables
        >>> byun2008_tables()["figure2"].classes().to_dict("index")
        {1: {'size': 2, 'age': '[21 - 25]', 'gender': 'Male', 'diagnosis': ['Asthma', 'Flu']}, \
2: {'size': 2, 'age': '[50 - 60]', 'gender': 'Person', 'diagnosis': ['Alzheimer', 'Diabetes']}}
        """
        g = self.frame.groupby(self.group, sort=True)
        out = pd.DataFrame({"size": g.size()})

        def cells(series: pd.Series):
            distinct = list(dict.fromkeys(series.tolist()))
            return distinct[0] if len(distinct) == 1 else tuple(sorted(distinct, key=str))

        for col in self.qi:
            out[col] = g[col].agg(cells)
        out[self.sa] = g[self.sa].agg(lambda s: sorted(s.tolist(), key=str))
        return out

    # -- matching a population --------------------------------------------------
    def _types(self) -> tuple[list[tuple], np.ndarray]:
        """Distinct (group, QI cells) tuples and each row's tuple number (cached)."""
        if self._type_cache is None:
            columns = [self.frame[col].tolist() for col in [self.group, *self.qi]]
            index: dict = {}
            row_type = np.fromiter(
                (index.setdefault(key, len(index)) for key in zip(*columns, strict=True)),
                dtype=np.int64,
                count=len(self.frame),
            )
            self._type_cache = (list(index), row_type)
        return self._type_cache

    def match(
        self, population: pd.DataFrame, person: str, every_row: bool = True, where: str = ""
    ) -> tuple[np.ndarray, list[tuple], np.ndarray, np.ndarray, np.ndarray]:
        """Match a population against the row types.

        Returns the person ids (population order), the types (tuples of group and QI
        cells), each row's type number, and the matching pairs as two aligned arrays
        (person position, type). With ``every_row`` (the default: the population lists
        the release's people), a row whose cells cover no one is a ``ReleaseError``
        naming the row, its group and cells; ``where`` starts the message
        (``"release 2: "``).

        >>> rows = pd.DataFrame({"age": ["20-29", "30-39"], "zip": ["021**", "021**"],
        ...                      "d": ["Flu", "HIV"], "g": [1, 2]})
        >>> people = pd.DataFrame({"id": ["Ann", "Bo"], "age": [25, 35],
        ...                        "zip": ["02139", "10001"]})
        >>> Generalized(rows, ["age", "zip"], "d", "g").match(people, "id", where="release 1: ")
        Traceback (most recent call last):
        ...
        maxent_privacy.errors.ReleaseError: release 1: row 1 (group 2: age='30-39', \
zip='021**') fits no one in the population: no one has all of these values
        """
        ids = check_population(population, self.qi, person)
        types, row_type = self._types()
        n = len(population)
        allowed: dict[str, dict] = {}
        codes_of: dict[str, np.ndarray] = {}
        people_of: dict[str, list[np.ndarray]] = {}
        count_of: dict[str, np.ndarray] = {}
        for col in self.qi:
            codes, uniques = pd.factorize(population[col], sort=False)
            uniques = list(uniques)
            strings, numbers = value_arrays(uniques)
            allowed[col] = {
                raw: cell.mask(strings, numbers) for raw, cell in self._cells[col].items()
            }
            order = np.argsort(codes, kind="stable")
            counts = np.bincount(codes, minlength=len(uniques))
            people_of[col] = np.split(order, np.cumsum(counts)[:-1])
            count_of[col] = counts
            codes_of[col] = codes
        persons: list[np.ndarray] = []
        kinds: list[np.ndarray] = []
        for t, key in enumerate(types):
            masks = [allowed[col][key[j + 1]] for j, col in enumerate(self.qi)]
            sizes = [int(count_of[col][m].sum()) for col, m in zip(self.qi, masks, strict=True)]
            best = int(np.argmin(sizes))
            if sizes[best] == 0:
                continue
            if sizes[best] == n:
                idx = np.arange(n)
            else:
                col = self.qi[best]
                idx = np.concatenate([people_of[col][c] for c in np.flatnonzero(masks[best])])
            for j, col in enumerate(self.qi):
                if j != best and len(idx):
                    idx = idx[masks[j][codes_of[col][idx]]]
            if len(idx):
                persons.append(np.sort(idx))
                kinds.append(np.full(len(idx), t))
        if persons:
            person_pos = np.concatenate(persons)
            type_no = np.concatenate(kinds)
        else:
            person_pos = np.zeros(0, dtype=np.int64)
            type_no = np.zeros(0, dtype=np.int64)
        if every_row:
            self._check_rows_fit(population, row_type, type_no, where)
        return ids, types, row_type, person_pos, type_no

    def _check_rows_fit(self, population, row_type, type_no, where: str) -> None:
        """A ``ReleaseError`` for the first row whose type no one in ``population`` fits
        (``type_no``: the types of the matching pairs), naming it, its group and cells."""
        fit = np.zeros(int(row_type.max()) + 1, dtype=bool)
        fit[type_no] = True
        if fit[row_type].all():
            return
        f, i = self.frame, int(np.argmax(~fit[row_type]))
        why = "no one has all of these values"
        for col in self.qi:
            strings, numbers = value_arrays(list(pd.unique(population[col])))
            if not self._cells[col][f[col].iloc[i]].mask(strings, numbers).any():
                why = f"no one's {col} is in {_cell_of(f, col, i)}"
                break
        cells = ", ".join(f"{col}={_cell_of(f, col, i)}" for col in self.qi)
        raise ReleaseError(
            f"{where}row {_row_name(f, i)!r} (group {_cell_of(f, self.group, i)}: {cells}) "
            f"fits no one in the population: {why}"
        )

    def _check_people_fit(self, population, ids, person_pos, where: str) -> None:
        """A ``ReleaseError`` for the first person of ``population`` who fits no row."""
        fit = np.zeros(len(ids), dtype=bool)
        fit[person_pos] = True
        if fit.all():
            return
        p = int(np.argmax(~fit))
        values = {col: _plain(population[col].iloc[p]) for col in self.qi}
        raise ReleaseError(
            f"{where}person {_plain(ids[p])!r} of the population fits no group of the "
            f"release: {self.unfit_reason(values)}"
        )

    def check_covered(
        self, people: pd.DataFrame, person: str | None = None, where: str = "", **old
    ) -> None:
        """Check that each row's cells cover its person's exact QI; else a ``ReleaseError``
        naming the person, the column, the value and the cell.

        For a release with a ``person`` column: ``people`` holds the person ids
        (column ``person``; ``id_column`` is its deprecated name) and their exact QI (a
        population table, or another release's exact values); rows whose person is not in
        it are not checked. ``where`` starts the message (``"release 2: "``).

        >>> frame = pd.DataFrame({"pid": ["a", "b"], "age": ["20-29", "30-39"],
        ...                       "d": ["Flu", "HIV"], "g": [1, 1]})
        >>> release = Generalized(frame, ["age"], "d", "g", person="pid")
        >>> release.check_covered(pd.DataFrame({"pid": ["a", "b"], "age": [25, 41]}), "pid")
        Traceback (most recent call last):
        ...
        maxent_privacy.errors.ReleaseError: person 'b' has age 41, which their cell '30-39' ...
        """
        people_id = aliased(person, old, "id_column", "person", "check_covered()")
        if self.person is None:
            raise ReleaseError("check_covered() needs a release with a person column")
        exact = people.drop_duplicates(people_id).set_index(people_id)
        rows = self.frame[self.frame[self.person].isin(exact.index)]
        pids = rows[self.person].to_numpy()
        for col in self.qi:
            values = exact[col].reindex(pids).tolist()
            codes, uniques = pd.factorize(pd.Series(values, dtype=object), sort=False)
            strings, numbers = value_arrays(list(uniques))
            cell_codes, cell_raws = pd.factorize(rows[col], sort=False)
            ok = np.ones(len(rows), dtype=bool)
            for k, raw in enumerate(cell_raws):
                sel = cell_codes == k
                ok[sel] = self._cells[col][raw].mask(strings, numbers)[codes[sel]]
            if not ok.all():
                i = int(np.argmax(~ok))
                raise ReleaseError(
                    f"{where}person {pids[i]!r} has {col} {values[i]!r}, which their cell "
                    f"{rows[col].iloc[i]!r} in column {col!r} does not cover"
                )

    def unfit_reason(self, values: dict) -> str:
        """Why exact QI ``values`` (column -> value) fit no row: a column none of whose
        cells covers its value, else the combination."""
        for col in self.qi:
            strings, numbers = value_arrays([values[col]])
            if not any(c.mask(strings, numbers)[0] for c in self._cells[col].values()):
                cells = ", ".join(map(repr, list(self._cells[col])[:3]))
                more = ", ..." if len(self._cells[col]) > 3 else ""
                return (
                    f"no cell of column {col!r} covers {col} {values[col]!r} (cells: {cells}{more})"
                )
        shown = ", ".join(f"{c}={values[c]!r}" for c in self.qi)
        return f"no row's cells cover {shown} together"

    def compatible(
        self,
        population: pd.DataFrame,
        person: str | None = None,
        every_row: bool = False,
        where: str = "",
        **old,
    ) -> pd.DataFrame:
        """The (person, group) pairs such that one of the group's rows covers the person.

        ``population`` has the person id column ``person`` (``id_column`` is its deprecated
        name) and the exact values of every QI column (further columns are ignored). A
        person matches a row when each of the row's QI cells covers the person's value;
        the result lists each matching (person, group) pair once, in population order and
        then in order of the group's first row.
        The work is vectorized: one boolean mask per distinct cell over the distinct
        values of its column, then per distinct row (group and cells) an index join.
        ``population`` may be anyone (a few people asked about); with ``every_row`` it
        lists the release's people: a person who fits no row, then a row that fits no one,
        is a ``ReleaseError`` (``where`` starts it, ``"release 2: "``).
        """
        person = aliased(person, old, "id_column", "person", "compatible()")
        ids, types, row_type, person_pos, type_no = self.match(population, person, False)
        if every_row:
            self._check_people_fit(population, ids, person_pos, where)
            self._check_rows_fit(population, row_type, type_no, where)
        group_codes, group_labels = pd.factorize(
            pd.Series([key[0] for key in types], dtype=self.frame[self.group].dtype), sort=False
        )
        pairs = pd.DataFrame({"p": person_pos, "g": group_codes[type_no]}).drop_duplicates()
        pairs = pairs.sort_values(["p", "g"], kind="stable")
        return pd.DataFrame(
            {
                person: ids[pairs["p"].to_numpy()],
                self.group: pd.Index(group_labels).take(pairs["g"].to_numpy()),
            }
        )

    def __repr__(self) -> str:
        return (
            f"Generalized({self.n_records} records, {self.n_groups} groups, qi={self.qi}, "
            f"sa={self.sa!r}, group={self.group!r}"
            + (f", person={self.person!r}" if self.person else "")
            + ")"
        )


def _label_text(label) -> str:
    """A group label as text (``1.0`` reads ``1``, as the pooled model shows it)."""
    return str(int(label)) if isinstance(label, float) and label.is_integer() else str(label)


def _plain(value):
    """A numpy scalar as the Python value (``1``, not ``np.int64(1)``, in messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _row_name(data: pd.DataFrame, i: int):
    return _plain(data.index[i])


def _cell_of(data: pd.DataFrame, column, i: int) -> str:
    """Row ``i``'s cell in ``column``, shortened for a message."""
    return shorten(_plain(data[column].iloc[i]), 30)


def _equivalence_classes(data, qi, group, cells, mixed_groups) -> tuple[pd.DataFrame, dict]:
    """The release's rows with one group per equivalence class (group and cells).

    A group whose rows carry different cells (compared by :meth:`Cell.key`) is split into
    one class per distinct cells, labelled ``"<group>/<k>"`` in order of first row, or
    refused (``mixed_groups="refuse"``). Returns the frame (the same when no group is
    mixed) and the split groups (original label -> the labels of its classes).
    """
    group_code, labels = pd.factorize(data[group], sort=False)
    labels = pd.Index(labels).tolist()
    codes = [group_code]
    for col in qi:
        raw_code, uniques = pd.factorize(data[col], sort=False)
        keys: dict = {}
        meaning = [keys.setdefault(cells[col][raw].key(), len(keys)) for raw in uniques]
        codes.append(np.asarray(meaning, dtype=np.int64)[raw_code])
    row_kind = pd.factorize(pd.MultiIndex.from_arrays(codes), sort=False)[0]
    firsts = pd.DataFrame({"g": group_code, "t": row_kind}).drop_duplicates()
    n_kinds = np.bincount(firsts["g"].to_numpy(), minlength=len(labels))
    mixed = n_kinds > 1
    if not mixed.any():
        return data, {}
    if mixed_groups == "refuse":
        g = int(np.argmax(mixed))
        rows = np.flatnonzero(group_code == g)
        first = rows[0]
        other = rows[row_kind[rows] != row_kind[first]][0]
        differ = [j for j, col in enumerate(qi) if codes[j + 1][first] != codes[j + 1][other]]

        def shown(i):
            cells_of_row = ", ".join(f"{qi[j]}={_cell_of(data, qi[j], i)}" for j in differ)
            return f"row {_row_name(data, i)!r} ({cells_of_row})"

        raise ReleaseError(
            f"group {shorten(labels[g])} has rows with different quasi-identifier cells: "
            f"{shown(first)} and {shown(other)}; each row's cells belong to its own value, "
            "so the group is several equivalence classes: give each its own group label, "
            "or pass mixed_groups='split'"
        )
    part = np.zeros(len(row_kind), dtype=np.int64)
    part[firsts["t"].to_numpy()] = firsts.groupby("g", sort=False).cumcount().to_numpy() + 1
    text = [_label_text(label) for label in labels]
    new = [
        f"{text[g]}/{part[t]}" if mixed[g] else text[g]
        for g, t in zip(group_code.tolist(), row_kind.tolist(), strict=True)
    ]
    made = pd.DataFrame({"label": new, "g": group_code, "t": row_kind}).drop_duplicates("t")
    named = made.drop_duplicates(["label", "g"])
    clash = named["label"].duplicated(keep=False)
    if clash.any():
        label = named.loc[clash, "label"].iloc[0]
        a, b = named.loc[named["label"] == label, "g"].iloc[:2]
        raise ReleaseError(
            f"groups {shorten(labels[a])} and {shorten(labels[b])} both read {label!r} once "
            "the groups whose rows carry different cells are split; give them other labels"
        )
    split = {labels[g]: [] for g in np.flatnonzero(mixed).tolist()}
    for label, g in made.loc[mixed[made["g"].to_numpy()], ["label", "g"]].itertuples(index=False):
        split[labels[g]].append(label)
    data = data.copy()
    data[group] = pd.Series(new, index=data.index, dtype=object)
    return data, split


def check_population(population: pd.DataFrame, qi: Sequence[str], person: str) -> np.ndarray:
    """Validate a population table (person id column ``person`` and the exact values of
    every QI column); return its person ids as an object array."""
    check_frame(population, "a population")
    check_label(person, "person")
    check_columns(population, [person], "person id")
    check_columns(population, list(qi), "quasi-identifier")
    check_unique(population, [person, *qi])
    check_cells(
        population,
        [person, *qi],
        ["population person id"] + ["population quasi-identifier"] * len(qi),
    )
    check_missing(population, [person, *qi], ["population "] * (len(qi) + 1))
    ids = population[person]
    if ids.duplicated().any():
        dup = ids[ids.duplicated()].tolist()[0]
        raise ReleaseError(
            f"person id {dup!r} occurs more than once in population column {person!r}"
        )
    return np.asarray(ids.tolist(), dtype=object)
