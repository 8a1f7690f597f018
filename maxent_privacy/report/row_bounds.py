"""The risk table's intervals: certified bounds of each row's likeliest value only.

The report says, per row, the likeliest value and how sure an adversary can be of it;
the worst case is the interval of *that* value over every table the release and the
knowledge allow. :func:`row_bounds` asks :func:`~maxent_privacy.bounds.bounds` for those
(row, value) pairs only (its ``values=`` given a ``pd.MultiIndex`` of pairs), never for
rows x every value, **in order of risk**:

1. rows whose value the facts or the presolve already fix (every cell of the row's class
   fixed by the solve's presolve or forced zeros, ``Result.fixed``: the same in every
   table, so the bounds are exact without an LP; a person the fact ``P(Dementia | age in
   18..29) = 0`` leaves as the only one who can hold their group's Dementia is certain,
   lower 1, whether or not any LP runs);
2. then the other rows, maximum-entropy probability highest first, in chunks
   (:data:`FIRST_CHUNK` pairs, then :data:`CHUNK_GROWTH` times more each time).

``mode``:

* ``"all"``: every pair certified, however long it takes;
* ``"auto"`` (default): the :data:`AUTO_ROWS` riskiest rows, certified within
  :data:`AUTO_SECONDS` seconds; the rows the time box did not reach, and every row past
  :data:`AUTO_ROWS`, are *not checked*: they get outer bounds, the closed form of the
  release alone, the facts left out (sound, since facts only narrow what is possible,
  but wider);
* ``"none"``: no interval (no ``lower``/``upper`` columns).

The ``certified`` flag of a row (the risk table's column) is True when its bounds are
proved over every table the release and the facts allow (a fixed row, an LP or closed
form, or an outer lower bound of 1: the interval [1, 1] whatever the facts), False for
outer bounds. The table's ``.attrs["bounds"]`` and the HTML say how many rows got which.

A row without person ids is a (QI value, group) class of n records: its share's bounds
``n * lower <= count <= n * upper`` give each of its people ``max(0, count_lo - (n - 1))``
and ``min(1, count_hi)``.
"""

from __future__ import annotations

import time
import warnings
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._validation import check_choice

__all__ = [
    "AUTO_ROWS",
    "AUTO_SECONDS",
    "MODES",
    "RowBounds",
    "check_mode",
    "fixed_rows",
    "row_bounds",
]

MODES = ("auto", "all", "none")
#: ``mode="auto"``: at most this many rows certified (the riskiest); the rest not checked
AUTO_ROWS = 50_000
#: ``mode="auto"``: the certified bounds' time limit (seconds)
AUTO_SECONDS = 20.0
#: ``mode="all"``: no practical limit
ALL_SECONDS = 7 * 24 * 3600.0
#: pairs certified in the first call of the bounds (the riskiest)
FIRST_CHUNK = 1_000
#: each later call takes this many times more pairs than the one before
CHUNK_GROWTH = 8


class RowBounds(NamedTuple):
    """What :func:`row_bounds` found, aligned with its ``pairs``: each row's person-level
    ``lower`` and ``upper``, whether they are ``certified`` (proved with the facts) and
    ``info`` (counts, seconds and the report's sentence)."""

    lower: np.ndarray
    upper: np.ndarray
    certified: np.ndarray
    info: dict


def check_mode(mode) -> str:
    """``mode`` if it is one of :data:`MODES` (the report's ``bounds``), else an
    :class:`~maxent_privacy._validation.ArgumentError`."""
    return check_choice(mode, "bounds", MODES)


def _to_person(found: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``lower``, ``upper`` of one person of each row (see the module docstring)."""
    lo = found["lower"].to_numpy(dtype=float)
    hi = found["upper"].to_numpy(dtype=float)
    if "records" in found:  # shares of a class: its people's own bounds
        n = found["records"].to_numpy(dtype=float)
        lo = np.maximum(0.0, lo * n - (n - 1.0))
        hi = np.minimum(1.0, hi * n)
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def _fixed_cells(result) -> np.ndarray | None:
    """Per value cell of ``result`` (aligned with ``result.x``): True where the solve
    fixed it in every table (presolve, forced zeros); None when that is not known, or a
    prior's zeros are among them (a belief, not a fact about every table)."""
    fixed = getattr(result, "fixed", None)
    structure = getattr(result, "structure", None)
    stats = getattr(result, "solver_stats", None) or {}
    if fixed is None or structure is None or (stats.get("forced_zeros") or {}).get("prior"):
        return None
    fixed = np.asarray(fixed, dtype=bool)
    if fixed.shape != (structure.n_cells,):
        return None
    return fixed[structure.value_cell]


def _row_counts(result, by: str, pairs: pd.MultiIndex, fixed: np.ndarray):
    """Per pair: (whether every cell of its row is fixed, the row's count of the pair's
    value, the row's records)."""
    m = result.model
    x = np.asarray(result.x, dtype=float)
    s = result.value_cells[m.sa].to_numpy()
    n_pairs = len(pairs)
    if by == "person":
        cls = np.asarray(result.cell_class, dtype=np.int64)
        sizes = np.asarray(result.class_n, dtype=float)
        pc = result.structure.person_class
        row = pc.reindex(pairs.get_level_values(0)).to_numpy(dtype=float)
    else:
        real = ~np.asarray(result.phantom, dtype=bool)  # counterfeit records: in no row
        names = list(m.qi) + [m.group]
        cells = result.value_cells.loc[real, names]
        x, s, fixed = x[real], s[real], fixed[real]
        groups = cells.groupby(names, sort=True, observed=True)
        cls = groups.ngroup().to_numpy().astype(np.int64)
        keys = pd.MultiIndex.from_frame(groups.size().index.to_frame(index=False))
        sizes = result.structure.records_by(names).reindex(keys).to_numpy(dtype=float)
        asked = pd.MultiIndex.from_arrays([pairs.get_level_values(k) for k in range(len(names))])
        row = keys.get_indexer(asked).astype(float)
        row[row < 0] = np.nan
    known = ~np.isnan(row)
    r = np.where(known, row, 0).astype(np.int64)
    free = np.bincount(cls, weights=(~fixed).astype(float), minlength=len(sizes))
    count = pd.Series(x).groupby([cls, s]).sum()
    want = pd.MultiIndex.from_arrays([r, pairs.get_level_values(-1)])
    got = count.reindex(want).fillna(0.0).to_numpy(dtype=float)
    all_fixed = known & (free[r] == 0) if n_pairs else np.zeros(0, dtype=bool)
    return all_fixed, got, sizes[r]


def fixed_rows(result, by: str, pairs: pd.MultiIndex):
    """``(fixed, lower, upper)`` per (row, value) pair: the rows whose every cell the
    solve fixed (presolve, forced zeros: the same count in every table the release and the
    facts allow) and, for those, the exact person-level bounds of the pair's value
    (``max(0, count - (n - 1))`` and ``min(1, count)`` for a row of n records); no LP.

    >>> from maxent_privacy import Bucketized, MaxEntModel, datasets
    >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
    ...                                sa="disease", group="bucket", person="name"))
    >>> model.add(model.P("Breast Cancer", gender="male") == 0)
    >>> pairs = pd.MultiIndex.from_arrays([["Cathy", "Allen"], ["Breast Cancer", "Flu"]])
    >>> [a.tolist() for a in fixed_rows(model.solve(), "person", pairs)]
    [[True, False], [1.0, 0.0], [1.0, 1.0]]
    """
    n = len(pairs)
    lo, hi, none = np.zeros(n), np.ones(n), np.zeros(n, dtype=bool)
    cells = _fixed_cells(result) if n else None
    if cells is None or by not in ("person", "group"):
        return none, lo, hi
    all_fixed, count, size = _row_counts(result, by, pairs, cells)
    lo[all_fixed] = np.clip(count - (size - 1.0), 0.0, 1.0)[all_fixed]
    hi[all_fixed] = np.clip(count, 0.0, 1.0)[all_fixed]
    lo[all_fixed] = np.where(lo[all_fixed] >= 1.0 - 1e-9, 1.0, lo[all_fixed])
    return all_fixed, lo, hi


def outer_bounds(model, by: str, pairs: pd.MultiIndex) -> pd.DataFrame:
    """Bounds of ``pairs`` over every table the *release alone* allows (facts left out):
    the closed form per bucket; pairs of components with no closed form (pooled releases)
    get 0 and 1. Wider than (or equal to) the bounds with the facts."""
    from ..bounds.closed_form import closed_pieces, components, cut_pieces
    from ..bounds.frame import assemble
    from ..bounds.lp import Budget, Stats
    from ..bounds.targets import data_rows, targets

    t0 = time.perf_counter()
    tg = targets(model, by, pairs)
    A, b, kind = data_rows(model)
    lab = components(model.n_cells, A, [])
    pieces = cut_pieces(tg.T, lab)
    ncomp = int(lab.max()) + 1 if len(lab) else 1
    closed = closed_pieces(pieces, np.zeros(ncomp, dtype=bool), A, b, kind, lab)
    rest = np.flatnonzero(~closed)
    pieces.lo[rest] = pieces.lp_lo[rest] = 0.0
    pieces.hi[rest] = pieces.lp_hi[rest] = np.inf
    pieces.method[rest] = 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return assemble(model, tg, pieces, Stats(), Budget(0.0), False, time.perf_counter() - t0)


def _chunks(order: np.ndarray, mode: str) -> list[np.ndarray]:
    """``order`` (pair positions, riskiest first) cut into the bounds' calls."""
    if mode == "all":
        return [order] if len(order) else []
    out, start, size = [], 0, FIRST_CHUNK
    while start < len(order):
        out.append(order[start : start + size])
        start, size = start + size, size * CHUNK_GROWTH
    return out


def _certify(result, by, pairs, todo, mode, got) -> str | None:
    """Certify the pairs ``todo`` (riskiest first) into ``got`` (lower, upper, certified)
    within the mode's time box; the reason it stopped early, or None."""
    from ..bounds.intervals import bounds

    lo, hi, certified = got
    limit = ALL_SECONDS if mode == "all" else AUTO_SECONDS
    t0 = time.perf_counter()
    for chunk in _chunks(todo, mode):
        left = limit - (time.perf_counter() - t0)
        if left <= 0:
            return "time box"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the cut rows are said in the note
            # no bar of its own: the risk table's progress says which step runs
            found = bounds(result.model, by=by, values=pairs[chunk], time_limit=left,
                           start=result.table, progress=False)  # fmt: skip
        clo, chi = _to_person(found)
        ok = (found["method"] != "time limit").to_numpy()
        lo[chunk[ok]], hi[chunk[ok]], certified[chunk[ok]] = clo[ok], chi[ok], True
        if not ok.all():
            return "time box"
    return None


def row_bounds(result, by: str, pairs: pd.MultiIndex, mode: str = "auto", risk=None):
    """:class:`RowBounds` for one person of each pair's row (aligned with ``pairs``), or
    None in mode "none". ``risk``: each pair's maximum-entropy probability (the order in
    which rows are certified, highest first; default: as given). Rows the solve fixed
    first (exact, no LP), then the riskiest (see the module docstring)."""
    mode = check_mode(mode)
    if mode == "none":
        return None
    t0 = time.perf_counter()
    n = len(pairs)
    certified, lo, hi = fixed_rows(result, by, pairs)
    n_fixed = int(certified.sum())
    risk = np.zeros(n) if risk is None else np.asarray(risk, dtype=float)
    rest = np.flatnonzero(~certified)
    rest = rest[np.argsort(-risk[rest], kind="stable")]
    past = max(0, len(rest) - AUTO_ROWS) if mode == "auto" else 0
    stop = _certify(result, by, pairs, rest[: len(rest) - past], mode, (lo, hi, certified))
    todo = np.flatnonzero(~certified)
    if len(todo):
        olo, ohi = _to_person(outer_bounds(result.model, by, pairs[todo]))
        lo[todo], hi[todo] = olo, ohi
    certified |= lo >= 1.0  # a lower bound of 1 is the whole interval, facts or not
    info = {
        "mode": mode,
        "certified": int(certified.sum()),
        "outer": int((~certified).sum()),
        "fixed": n_fixed,
        "seconds": time.perf_counter() - t0,
    }
    info["note"] = _note(info, past, stop)
    return RowBounds(lo, hi, certified, info)


def _note(info: dict, past: int, stop: str | None) -> str:
    """The report's sentence on how the intervals were found."""
    if info["outer"] == 0:
        return "Every interval is certified over every table the release and the facts allow."
    why = []
    if stop:
        why.append(f"the {AUTO_SECONDS:g} s time box ran out")
    if past:
        why.append(f"only the {AUTO_ROWS:,} riskiest rows are certified in auto mode")
    return (
        f"{info['certified']:,} intervals are certified (rows the facts fix first, then "
        f"the riskiest); the other {info['outer']:,} rows are not checked, since "
        + " and ".join(why)
        + ": their intervals are outer bounds from the release alone (facts left out: "
        "sound but wider). Use --bounds all (bounds='all') to certify every one."
    )
