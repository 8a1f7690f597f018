"""The frame of bounds: what each row says, read off the bounds of the base targets.

The programs bound *counts*: per base target (a QI value, a (QI value, group) row, or a
record class of people, times a sensitive value) the fewest and the most records that
can hold the value, ``L`` and ``U``, summed over the target's pieces. A row is then one
of two quantities, never mixed:

* a **share** (``by=None``, ``"group"``, ``"class"``): ``L / n`` and ``U / n`` with ``n``
  the records (people) the row is about, the posterior P(s | QI value), P(s | QI value,
  group) or the fraction of a person's record class that holds s;
* an **individual** (``by="person"``): the probability that this one person holds s. The
  people of a record class (same QI value, same groups in every release) are
  exchangeable, so their bounds follow from the class's counts with no program of their
  own: over fractional tables ``upper = min(1, U)`` (one person can take all of U) and
  ``lower = max(0, L - (n - 1))`` (the other n - 1 people take at most one each); over
  possible worlds (``exact=True``, integral counts) s is *possible* for the person (upper
  1, else 0) when some world gives the class at least one s, and *certain* (lower 1, else
  0) when every world gives it to all n.

The certificate columns of an individual's row come from the class bound's certificate:
the dual point proves the count bound, the person's bound follows by the formula above,
so its ``gap`` and ``dual_violation`` are the class bound's, in records (a record is one
person's unit of probability), or 0 where the formula clamps the bound to the trivial 1
above or 0 below and a table seen reaches it.

>>> import numpy as np
>>> person_bounds(np.array([0.0, 1.0]), np.array([1.0, 2.0]), np.array([4.0, 2.0]))
(array([0., 0.]), array([1., 1.]))
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .lp import ATTAIN

__all__ = ["CERTIFIED", "METHODS", "Totals", "assemble", "person_bounds", "totals"]

#: a bound is ``certified`` when its gap and dual violation are at most this (probability)
CERTIFIED = 1e-6
#: the ``method`` of a row, by the code of its pieces (the largest wins)
METHODS = np.array(["closed form", "LP", "conic", "time limit"], dtype=object)


@dataclass
class Totals:
    """Per base target (count scale): bounds, LP bounds, per-side gaps and dual
    violations, method code, per-side exactness, and the extremes of the worlds seen."""

    lo: np.ndarray
    hi: np.ndarray
    lp_lo: np.ndarray
    lp_hi: np.ndarray
    lo_gap: np.ndarray
    hi_gap: np.ndarray
    lo_viol: np.ndarray
    hi_viol: np.ndarray
    method: np.ndarray
    lo_exact: np.ndarray
    hi_exact: np.ndarray
    world_lo: np.ndarray
    world_hi: np.ndarray


def totals(tg, pieces, no_world: bool) -> Totals:
    """Add the pieces up per base target (gaps add, violations take the largest; a side
    is exact when every piece's is and the model has possible worlds)."""
    nt = tg.T.shape[0]
    t = pieces.target

    def total(v):
        return np.bincount(t, weights=v, minlength=nt)

    def worst(v):
        out = np.zeros(nt)
        np.maximum.at(out, t, np.nan_to_num(v, nan=np.inf))
        return out

    def every(flag):
        return (np.bincount(t, weights=(~flag).astype(float), minlength=nt) == 0) & (not no_world)

    def inf_nan(v):
        return np.where(np.isnan(v), np.inf, v)

    method = np.zeros(nt, dtype=np.int8)
    np.maximum.at(method, t, pieces.method)
    return Totals(
        lo=total(pieces.lo),
        hi=total(pieces.hi),
        lp_lo=total(pieces.lp_lo),
        lp_hi=total(pieces.lp_hi),
        lo_gap=inf_nan(total(pieces.lo_gap)),
        hi_gap=inf_nan(total(pieces.hi_gap)),
        lo_viol=worst(pieces.lo_viol),
        hi_viol=worst(pieces.hi_viol),
        method=method,
        lo_exact=every(pieces.lo_exact),
        hi_exact=every(pieces.hi_exact),
        world_lo=total(pieces.world_lo),
        world_hi=total(pieces.world_hi),
    )


def person_bounds(lo, hi, n):
    """An individual's bounds from their class's count bounds ``lo <= count <= hi`` (class
    of ``n`` exchangeable people): ``(max(0, lo - (n - 1)), min(1, hi))``."""
    return np.maximum(0.0, lo - (n - 1.0)), np.minimum(1.0, hi)


def _person_certificate(tot: Totals, n):
    """Gap and dual violation of an individual's LP bounds (records): the class bound's,
    or 0 where the bound is the trivial 1 above (every table the certificate allows, and
    one seen, reach 1) or 0 below (one seen has at most n - 1)."""
    with np.errstate(invalid="ignore"):  # inf - inf: a bound the time limit cut
        top = tot.lp_hi - tot.hi_gap >= 1.0 - ATTAIN
        bottom = tot.lp_lo + tot.lo_gap <= n - 1.0 + ATTAIN
    gap = np.maximum(np.where(top, 0.0, tot.hi_gap), np.where(bottom, 0.0, tot.lo_gap))
    viol = np.maximum(np.where(top, 0.0, tot.hi_viol), np.where(bottom, 0.0, tot.lo_viol))
    return gap, viol


def _person_worlds(tot: Totals, n, no_world: bool):
    """An individual's bounds over possible worlds, and whether each side is proved: from
    the class's exact counts, else from a world seen (one that gives the class an s proves
    it possible; one that leaves someone of the class without it proves it not certain),
    else the LP's bound (not proved). Without possible worlds nothing is proved."""
    lp_lower, lp_upper = person_bounds(tot.lp_lo, tot.lp_hi, n)
    some = (tot.world_hi >= 0.5) & ~tot.hi_exact
    not_all = (tot.world_lo <= n - 0.5) & ~tot.lo_exact
    upper = np.where(tot.hi_exact, (tot.hi >= 0.5).astype(float), lp_upper)
    upper[some] = 1.0
    lower = np.where(tot.lo_exact, (tot.lo >= n - 0.5).astype(float), lp_lower)
    lower[not_all] = 0.0
    return (
        lower,
        upper,
        (tot.lo_exact | not_all) & (not no_world),
        (tot.hi_exact | some) & (not no_world),
    )


def _share_rows(tot: Totals, den) -> dict:
    """Per base target: the share's bounds and certificate (probability units)."""

    def share(v):
        return np.clip(v / den, 0.0, 1.0)

    return {
        "lower": share(tot.lo),
        "upper": share(tot.hi),
        "gap": np.maximum(tot.lo_gap, tot.hi_gap) / den,
        "dual_violation": np.maximum(tot.lo_viol, tot.hi_viol) / den,
        "lower_exact": tot.lo_exact,
        "upper_exact": tot.hi_exact,
        "lp_lower": share(tot.lp_lo),
        "lp_upper": share(tot.lp_hi),
    }


def _person_rows(tot: Totals, n, exact: bool, no_world: bool) -> dict:
    """Per base target: an individual of the class's bounds and certificate."""
    gap, viol = _person_certificate(tot, n)
    lp_lower, lp_upper = person_bounds(tot.lp_lo, tot.lp_hi, n)
    if exact:
        lower, upper, lo_ex, up_ex = _person_worlds(tot, n, no_world)
    else:
        (lower, upper), lo_ex, up_ex = person_bounds(tot.lo, tot.hi, n), tot.lo_exact, tot.hi_exact
    return {
        "lower": np.clip(lower, 0.0, 1.0),
        "upper": np.clip(upper, 0.0, 1.0),
        "gap": gap,
        "dual_violation": viol,
        "lower_exact": lo_ex,
        "upper_exact": up_ex,
        "lp_lower": np.clip(lp_lower, 0.0, 1.0),
        "lp_upper": np.clip(lp_upper, 0.0, 1.0),
    }


def _rows(tg, tot: Totals, exact: bool, no_world: bool) -> pd.DataFrame:
    """The frame's columns, one row per output row (impossible values: 0/0, exact)."""
    on = tg.base >= 0
    bi = np.where(on, tg.base, 0)
    cols = _person_rows(tot, tg.den, exact, no_world) if tg.person else _share_rows(tot, tg.den)
    fill = {"lower_exact": not no_world, "upper_exact": not no_world}
    got = {  # no base target at all (only impossible pairs asked): every row filled
        k: np.where(on, v[bi] if len(v) else 0.0, fill.get(k, 0.0)) for k, v in cols.items()
    }
    frame = pd.DataFrame({"lower": got["lower"], "upper": got["upper"]}, index=tg.index)
    if tg.classes is None:
        frame["records"] = tg.records
    meth = np.where(on, METHODS[tot.method[bi]] if len(tot.method) else "", "impossible")
    gap, viol = got["gap"], got["dual_violation"]
    frame["method"] = meth
    frame["certified"] = (
        (gap <= CERTIFIED) & (viol <= CERTIFIED) & ~np.isin(meth, ["conic", "time limit"])
    )
    frame["gap"] = np.where(np.isinf(gap), np.nan, gap)
    frame["dual_violation"] = np.where(np.isinf(viol), np.nan, viol)
    if exact:
        lo_ex, up_ex = got["lower_exact"].astype(bool), got["upper_exact"].astype(bool)
        frame["exact"] = lo_ex & up_ex
        frame["lower_exact"] = lo_ex
        frame["upper_exact"] = up_ex
        frame["lp_lower"] = got["lp_lower"]
        frame["lp_upper"] = got["lp_upper"]
        if tg.person:  # in words: NA where that side is not proved
            for name, hit, proved in (
                ("possible", frame["upper"].to_numpy() >= 0.5, up_ex),
                ("certain", frame["lower"].to_numpy() >= 0.5, lo_ex),
            ):
                col = pd.array(hit, dtype="boolean")
                col[~proved] = pd.NA
                frame[name] = col
    return frame


def _largest(col) -> float:
    """The largest known value of a certificate column (NaN: none), 0 for none."""
    v = col.to_numpy(dtype=float)
    return float(v[~np.isnan(v)].max(initial=0.0))


def assemble(model, tg, pieces, stats, budget, exact, seconds) -> pd.DataFrame:
    """The frame of :func:`~maxent_privacy.bounds.intervals.bounds`, its certificate
    summary in ``.attrs["certificate"]``, and the warnings (no possible world, rows the
    time limit cut)."""
    no_world = bool(stats.no_world)
    frame = _rows(tg, totals(tg, pieces, no_world), exact, no_world)
    counts = pd.Series(pieces.method).value_counts()
    cut = int((frame["method"] == "time limit").sum())
    frame.attrs["certificate"] = {
        "max_gap": _largest(frame["gap"]),
        "max_dual_violation": _largest(frame["dual_violation"]),
        "all_certified": bool(frame["certified"].all()),
        "closed_form_pieces": int(counts.get(0, 0)),
        "lp_pieces": int(counts.get(1, 0)),
        "conic_pieces": int(counts.get(2, 0)),
        "lps": stats.lps,
        "settled_without_own_lp": stats.pool_hits,
        "cells_proved_zero": stats.zero_cells,
        "milps": stats.milps,
        "worlds_seen": stats.worlds,
        "tables_given": stats.tables_given,
        "time_limit_reached": bool(budget.ran_out),
        "rows_cut_by_time_limit": cut,
        "no_integral_world": no_world,
        "seconds": seconds,
    }
    if exact and no_world:
        warnings.warn(
            "no integral table satisfies the facts in some components (probability facts "
            "that no count of records meets?): their bounds are the LP relaxation's",
            stacklevel=3,
        )
    if cut:
        warnings.warn(
            f"the time limit ran out before every LP bound was found: {cut} of "
            f"{len(frame)} rows keep sound but loose bounds (method 'time limit': 0 below, "
            "a cover or 1 above; not certified, not exact); raise time_limit for them",
            stacklevel=3,
        )
    return frame
