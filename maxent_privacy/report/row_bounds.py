"""The risk table's intervals: certified bounds of each row's likeliest value only.

The report says, per row, the likeliest value and how sure an adversary can be of it;
the worst case is the interval of *that* value over every table the release and the
knowledge allow. :func:`row_bounds` asks :func:`~maxent_privacy.bounds.bounds` for those
(row, value) pairs only (its ``values=`` given a ``pd.MultiIndex`` of pairs), never for
rows x every value. ``mode``:

* ``"all"``: every pair certified, however long it takes;
* ``"auto"`` (default): up to :data:`AUTO_ROWS` rows, certified within
  :data:`AUTO_SECONDS` seconds; pairs the time limit cut, and every pair past
  :data:`AUTO_ROWS` rows, get *outer* bounds instead: the closed form of the release
  alone, the facts left out (sound, since facts only narrow what is possible, but
  wider). The table's ``.attrs["bounds"]`` and the HTML say how many rows got which;
* ``"none"``: no interval (no ``lower``/``upper`` columns).

A row without person ids is a (QI value, group) class of n records: its share's bounds
``n * lower <= count <= n * upper`` give each of its people ``max(0, count_lo - (n - 1))``
and ``min(1, count_hi)``.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from .._validation import check_choice

__all__ = ["AUTO_ROWS", "AUTO_SECONDS", "MODES", "check_mode", "row_bounds"]

MODES = ("auto", "all", "none")
#: ``mode="auto"``: past this many rows, outer bounds only (no LP)
AUTO_ROWS = 50_000
#: ``mode="auto"``: the certified bounds' time limit (seconds)
AUTO_SECONDS = 20.0
#: ``mode="all"``: no practical limit
ALL_SECONDS = 7 * 24 * 3600.0


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


def row_bounds(result, by: str, pairs: pd.MultiIndex, mode: str = "auto", rows=None):
    """``(lower, upper, info)`` for one person of each pair's row (aligned with
    ``pairs``), or None in mode "none". ``info``: the mode, how many rows got certified
    and outer bounds, the seconds, and a sentence for the report."""
    from ..bounds.intervals import bounds

    mode = check_mode(mode)
    if mode == "none":
        return None
    model = result.model
    n_rows = len(pairs) if rows is None else int(rows)
    t0 = time.perf_counter()
    certified = np.zeros(len(pairs), dtype=bool)
    lo = np.zeros(len(pairs))
    hi = np.ones(len(pairs))
    if len(pairs) and (mode == "all" or n_rows <= AUTO_ROWS):
        limit = ALL_SECONDS if mode == "all" else AUTO_SECONDS
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the cut rows are said below
            found = bounds(model, by=by, values=pairs, time_limit=limit, start=result.table)
        lo, hi = _to_person(found)
        certified = (found["method"] != "time limit").to_numpy()
    if len(pairs) and not certified.all():
        todo = np.flatnonzero(~certified)
        outer = outer_bounds(model, by, pairs[todo])
        olo, ohi = _to_person(outer)
        lo[todo], hi[todo] = olo, ohi
    n_outer = int((~certified).sum())
    info = {
        "mode": mode,
        "certified": int(certified.sum()),
        "outer": n_outer,
        "seconds": time.perf_counter() - t0,
    }
    if n_outer == 0:
        info["note"] = (
            "Every interval is certified over every table the release and the facts allow."
        )
    elif certified.any():
        info["note"] = (
            f"{info['certified']:,} intervals are certified within the {AUTO_SECONDS:g} s time "
            f"box; the other {n_outer:,} are outer bounds from the release alone (facts left "
            "out: sound but wider). Use --bounds all (bounds='all') to certify every one."
        )
    else:
        reason = (
            f"{n_rows:,} rows are more than the {AUTO_ROWS:,} certified in auto mode"
            if n_rows > AUTO_ROWS and mode == "auto"
            else f"the {AUTO_SECONDS:g} s time box ran out"
        )
        info["note"] = (
            f"The intervals are outer bounds from the release alone (facts left out: sound "
            f"but wider), since {reason}. Use --bounds all (bounds='all') to certify them "
            "with the facts."
        )
    return lo, hi, info
