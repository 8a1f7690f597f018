"""Who is at risk after a release: a risk table, one row per person, worst first.

:func:`risk_table` lists, for each person (for each QI value and group when the release
has no person ids), the sensitive value an adversary would most likely guess, its
maximum-entropy probability, the certified bounds of that person's own probability of
holding it (the individual, ``bounds(by="person")``: Allen below may escape the Flu that
his record class surely has) and whether the estimate reaches a threshold.
``result.risk_table(...)`` and the command ``maxent-privacy report`` call it; the HTML
report (:mod:`maxent_privacy.report.html`) is made from the same table.

>>> from maxent_privacy import Bucketized, MaxEntModel, datasets
>>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                      sa="disease", group="bucket", person="name")
>>> model = MaxEntModel(release)
>>> model.add(model.P("Breast Cancer", gender="male") == 0)
>>> table = risk_table(model.solve(), threshold=0.99)
>>> print(table.head(3).to_string(index=False))
 name gender  degree  bucket         value  maxent  lower  upper  certified  at_risk  tied  identity
Cathy female college       1 Breast Cancer  1.0000    1.0    1.0       True     True False    0.5000
Grace female  junior       2 Breast Cancer  1.0000    1.0    1.0       True     True False    1.0000
Allen   male college       1           Flu  0.6667    0.0    1.0       True    False False    0.3333
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import REACHES, check_progress, reaches
from .._validation import check_threshold as _check_threshold
from ..files import check_outputs, write_frame
from .nonsensitive import check_nonsensitive
from .safety import spreadsheet_safe

__all__ = ["per_person", "risk_summary", "risk_table", "table_column", "write_risk_table"]

#: rounding noise of a probability: the one 'reaches the threshold' tolerance (the table
#: itself decides on values rounded to 4 decimals:
#: :data:`~maxent_privacy.report.likeliest.DIGITS`)
TOL = REACHES
#: the table's own columns (every column :func:`risk_table` adds must be here): a
#: release's column of the same name is shown with the prefix ``release_`` instead
_RESERVED = {
    "value", "maxent", "lower", "upper", "certified", "at_risk", "records", "tied", "identity"
}  # fmt: skip
#: the prefix of a release's column named like one of the table's own
PREFIX = "release_"


def check_threshold(threshold, name: str = "threshold") -> float:
    """``threshold`` as a float in (0, 1] (:func:`maxent_privacy._validation.check_threshold`,
    kept here for the report's callers)."""
    return _check_threshold(threshold, name)


def table_column(table: pd.DataFrame, name) -> str:
    """The risk table's column holding the release's column ``name``: ``name`` itself, or
    ``release_<name>`` when the release's column is named like one of the table's own
    (``.attrs["renamed"]``). Whatever reads the QI or group columns back from the table
    reads them through this, never the table's own ``value`` or ``maxent``.

    >>> table = pd.DataFrame({"release_value": ["college"], "value": ["Flu"]})
    >>> table.attrs["renamed"] = {"value": "release_value"}
    >>> table_column(table, "value"), table_column(table, "gender")
    ('release_value', 'gender')
    """
    return table.attrs.get("renamed", {}).get(name, name)


def per_person(result) -> bool:
    """Whether the result knows people by id (a person column, pooled releases)."""
    return result.structure.person_class is not None


def _person_column(model) -> str:
    """The name of the person-id column: the release's own, else ``"person"``."""
    names = [r.person for r in model.releases if getattr(r, "person", None) is not None]
    names += [p.index.name for p in model.populations if p is not None and p.index.name]
    name = str(names[0]) if names else "person"
    if name in _RESERVED or name in model.qi or name == model.sa:
        return "person"
    return name


def _person_keys(result, ids: pd.Index) -> pd.DataFrame:
    """The QI values (and group, for one release) of each person id, in ``ids`` order."""
    m = result.model
    records = result.structure.records
    cols = list(m.qi) + ([m.group] if m.group in records and not m.pooled else [])
    # pooled releases: the records' own person ids; one release: its person column (a
    # QI or group column may be named "pid")
    pid = "pid" if m.pooled else getattr(m.release, "person", None)
    if pid is not None and pid in records:
        known = records.drop_duplicates(pid).set_index(pid)[cols]
    else:
        known = pd.DataFrame(columns=cols)
    for p in m.persons:  # individuals singled out with model.person(...)
        if p.name not in known.index:
            row = dict(p.qi)
            if m.group in cols:
                row[m.group] = p.group
            known.loc[p.name] = pd.Series(row)
    return known.reindex(ids).reset_index(drop=True)


def _own_names(keys: pd.DataFrame, also=()) -> pd.DataFrame:
    """``keys`` with every column named like one of the table's own (``_RESERVED``:
    ``value``, ``maxent``, ...) renamed ``release_<name>`` (more prefixes while taken, or
    named in ``also``: the person column), so that no column of the release is overwritten
    or read as the table's; the renames are in ``.attrs["renamed"]`` (old -> new)."""
    taken = set(map(str, keys.columns)) | _RESERVED | set(map(str, also))
    renamed = {}
    for col in keys.columns:
        if str(col) in _RESERVED:
            new = PREFIX + str(col)
            while new in taken:
                new = PREFIX + new
            taken.add(new)
            renamed[col] = new
    out = keys.rename(columns=renamed)
    out.attrs["renamed"] = renamed
    return out


def _core(result, nonsensitive: tuple, bounds: str, progress) -> pd.DataFrame:
    """The risk table's columns but ``at_risk`` (threshold-free), cached on the result
    per (nonsensitive values, bounds mode): the bounds are the costly part."""
    from .identity import identity_risk
    from .likeliest import likeliest, rounded
    from .row_bounds import check_mode, row_bounds

    check_mode(bounds)
    cache = result.__dict__.setdefault("_risk_cores", {}) if hasattr(result, "__dict__") else {}
    key = (tuple(sorted(map(str, nonsensitive))), bounds)
    if key in cache:
        return cache[key]
    step = progress if progress is not None else (lambda name: None)
    step("likeliest values")
    m = result.model
    best = likeliest(result, nonsensitive)
    ids = best.keys.iloc[:, 0].to_numpy() if best.by == "person" else None
    if best.by == "person":
        person = _person_column(m)
        keys = _own_names(_person_keys(result, pd.Index(ids)), also=[person])
        keys.insert(0, person, ids)
    else:
        keys = _own_names(best.keys)
        names = list(best.keys.columns)
        sizes = result.structure.records.groupby(names, observed=True).size()
        keys["records"] = (
            sizes.reindex(pd.MultiIndex.from_frame(best.keys)).fillna(0).to_numpy(dtype=int)
        )
    table = keys
    table.attrs["renamed"] = dict(keys.attrs.get("renamed", {}))
    table["value"] = best.value
    table["maxent"] = rounded(best.maxent)
    table["tied"] = best.ties > 1
    table.attrs["nonsensitive"] = tuple(nonsensitive)
    table["identity"] = rounded(identity_risk(m, best.keys))
    mode = bounds if hasattr(result, "bounds") else "none"
    if mode != "none":
        step("certified bounds")
    on = best.has_value
    got = row_bounds(result, best.by, best.pairs(), mode, risk=best.maxent[on])
    if got is not None:
        lower, upper = np.zeros(len(table)), np.zeros(len(table))
        certified = np.ones(len(table), dtype=bool)  # no sensitive value: nothing to bound
        lower[on], upper[on], certified[on] = got.lower, got.upper, got.certified
        table["lower"], table["upper"] = rounded(lower), rounded(upper)
        table["certified"] = certified
        table.attrs["bounds"] = got.info
    order = np.argsort(-table["maxent"].to_numpy(dtype=float), kind="stable")
    table = table.iloc[order].reset_index(drop=True)
    cache[key] = table
    return table


def risk_table(
    result,
    threshold: float = 0.5,
    *,
    csv_safe: bool = True,
    nonsensitive=(),
    bounds: str = "auto",
    progress=None,
) -> pd.DataFrame:
    """One row per person, worst first: who could be found out, and how surely.

    With person ids (a release's person column, pooled releases) the rows are people:
    the id column (named as in the release, else ``person``), the QI columns (and the
    group column for one release). Without them the rows are the (QI value, group)
    classes of the release, with ``records``, the number of people in each. A column of
    the release named like one of the table's own (``value``, ``maxent``, ``lower``,
    ``upper``, ``at_risk``, ``records``, ... every column below) is shown as
    ``release_<name>`` (``.attrs["renamed"]`` maps old names to new), never overwritten.
    Then:

    * ``value``: the sensitive value most likely under the maximum-entropy estimate
      (ties: the first in sorted order; values in ``nonsensitive`` never count, and a row
      holding only those has none);
    * ``maxent``: its maximum-entropy posterior (the same for each person of a class);
    * ``tied``: True when another value is as likely (the guess is a coin toss among
      them);
    * ``lower``, ``upper``: the interval, over every table the release and the knowledge
      allow, of **the person's own** probability of holding that value (for a row of a
      class without person ids, of each of its people, from the class's count bounds):
      certified bounds (:func:`~maxent_privacy.bounds.bounds` on each row's value only),
      or outer bounds from the release alone where ``bounds="auto"`` cut them (past a
      size or a time box, :mod:`~maxent_privacy.report.row_bounds`; ``.attrs["bounds"]``
      says how many); none with ``bounds="none"``. ``upper`` 1 says the person may hold
      it for sure in some table, ``lower`` 1 that they do in every one;
    * ``certified``: True when the row's ``lower`` and ``upper`` are proved over every
      table the release and the facts allow; False when the row was not checked (its
      interval is the outer one, from the release alone). Rows are certified in order of
      risk: first those whose value the facts already fix (the solve's presolve: exact,
      no LP; such a row with ``maxent`` 1 has ``lower`` 1 whatever the time box), then
      ``maxent`` highest first (none with ``bounds="none"``);
    * ``at_risk``: ``maxent >= threshold``, on ``maxent`` rounded to 4 decimals;
    * ``identity``: the row's identity (re-identification) risk, 1 / the records sharing
      its QI cells (prosecutor; with a population, journalist: 1 / the people who fit),
      :mod:`~maxent_privacy.report.identity`.

    **Rounding rule**: ``maxent``, ``lower`` and ``upper`` are rounded to 4 decimals
    (:data:`~maxent_privacy.report.likeliest.DIGITS`) and ``at_risk`` is decided on that
    rounded ``maxent``, so every number printed (CSV, HTML, terminal) agrees with it.
    Sorted by ``maxent``, largest first (ties in table order). The result caches the
    table per arguments (``result.report()`` after ``result.risk_table()`` reuses its
    bounds). ``progress``: None/False (silent), True (the name of each long step on
    standard error) or a function called with it (a progress bar).

    ``csv_safe`` (default True): text cells that a spreadsheet would run as a formula
    (starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return, such as
    ``=HYPERLINK(...)``) are prefixed with ``'`` (the OWASP rule; numeric columns and
    plain numbers like ``-3`` are untouched), so that the table can be saved as CSV and
    opened safely; ``csv_safe=False`` keeps every cell as in the data.
    """
    threshold = check_threshold(threshold)
    progress = check_progress(progress, "risk table")
    if hasattr(result, "check_current"):  # a Result solved from the model as it is now
        result.check_current("risk_table()")
    nonsensitive = check_nonsensitive(nonsensitive, result.model)
    table = _core(result, nonsensitive, bounds, progress).copy()
    table.attrs = {k: type(v)(v) for k, v in table.attrs.items()}
    table["at_risk"] = reaches(table["maxent"].to_numpy(dtype=float), threshold)
    for col in ("tied", "identity"):  # after at_risk: the columns before it as they were
        table[col] = table.pop(col)
    order = np.argsort(-table["maxent"].to_numpy(dtype=float), kind="stable")
    table = table.iloc[order].reset_index(drop=True)
    return spreadsheet_safe(table) if csv_safe else table


def write_risk_table(
    result, path, threshold: float = 0.5, *, inputs=(), csv_safe: bool = True
) -> pd.DataFrame:
    """Write :func:`risk_table` to ``path``, whole or not at all: CSV, or Parquet for
    ``.parquet``/``.pq`` (needs pyarrow; without it an OutputError says so). Returns the
    table as written.

    ``inputs``: the files the release and knowledge were read from (paths, or ``{label:
    path}``); a ``path`` that is one of them (through a link too) is refused with
    :class:`~maxent_privacy.errors.SameFileError` before anything is computed.
    ``csv_safe`` (default True): formula-like text cells are neutralized in a CSV (see
    :func:`risk_table`); ``csv_safe=False`` writes them raw. Parquet keeps them raw.
    """
    check_outputs({"the risk table": path}, inputs)
    csv = str(path).lower().endswith(".csv")
    table = risk_table(result, threshold, csv_safe=csv_safe and csv)
    write_frame(path, table, index=False)
    return table


def risk_summary(result, threshold: float = 0.5, table: pd.DataFrame | None = None) -> dict:
    """Counts at ``threshold``: people at risk (of how many), (QI value, group) classes
    (None for pooled releases) and QI values whose largest posterior reaches it, and,
    when the table has ``upper``, the people at risk in the worst case: per person, those
    whose own upper bound (the individual's, see :func:`risk_table`) for their likeliest
    value reaches it; when it has ``certified``, the people whose value is ``certain``
    (``lower`` 1: in every table), ``possible`` (certified ``upper`` 1, not certain),
    those ``certified`` and those ``not_checked`` (outer
    bounds): "N certain among the M certified; K not checked", never a bare count of the
    certain when rows were left out."""
    threshold = check_threshold(threshold)
    table = risk_table(result, threshold, csv_safe=False) if table is None else table
    # ``records`` weighs a row of a (QI value, group) class; with person ids a row is one
    # person, whatever the release's columns are called
    weighted = "records" in table and not per_person(result)
    weight = table["records"].to_numpy(dtype=float) if weighted else None
    at = table["at_risk"].to_numpy(dtype=bool)
    people = float(weight.sum()) if weight is not None else float(len(table))
    people_at = float(weight[at].sum()) if weight is not None else float(at.sum())
    # pooled releases have no single group per record: no (QI value, group) classes;
    # the largest posteriors read sparsely, rounded as the table's (see risk_table)
    from .likeliest import largest_share, rounded

    skip = table.attrs.get("nonsensitive", ())
    by_group = None if result.model.pooled else rounded(largest_share(result, "group", skip))
    by_qi = rounded(largest_share(result, None, skip))
    out = {
        "threshold": threshold,
        "people": int(people),
        "people_at_risk": int(people_at),
        "classes": None if by_group is None else len(by_group),
        "classes_at_risk": None if by_group is None else int(reaches(by_group, threshold).sum()),
        "qi_values": len(by_qi),
        "qi_values_at_risk": int(reaches(by_qi, threshold).sum()),
        "per_person": weight is None,
    }

    def count(mask) -> int:
        return int(weight[mask].sum() if weight is not None else mask.sum())

    if "upper" in table:
        out["people_at_risk_worst_case"] = count(
            reaches(table["upper"].to_numpy(dtype=float), threshold)
        )
    if "certified" in table:  # the worst case's own counts (see risk_table)
        certified = table["certified"].to_numpy(dtype=bool)
        lower = table["lower"].to_numpy(dtype=float)
        upper = table["upper"].to_numpy(dtype=float)
        out["certain"] = count(lower >= 1.0)
        out["possible"] = count(certified & (upper >= 1.0) & (lower < 1.0))
        out["certified"] = count(certified)
        out["not_checked"] = count(~certified)
    return out
