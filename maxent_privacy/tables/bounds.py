"""Bounds on counts over every table of records the published tables allow.

For targets ``T y`` (single combinations, or the cells of a published table) the lowest
and highest value over ``y >= 0`` meeting every row (LP, HiGHS warm between objectives),
and with ``exact=True`` over whole-number tables (integer programs). Every answer is a
*valid* bound: a side a time limit cut is the bound proved so far (0 and the smallest
published count covering it for the LP; the LP bound rounded inward for the integer
programs) and its flag says it is not tight.

Shortcuts that settle many sides without a program of their own: a combination a zero
row forces is 0/0; any table a program returns settles every target it puts at 0 (lower)
or at its cap (upper: the smallest published upper bound of a row covering it, or the
total); one program minimizing the sum of the unsettled targets settles many lower
bounds at once.

>>> import pandas as pd
>>> from maxent_privacy import Tabulated, MaxEntModel
>>> a = Tabulated(pd.DataFrame({"a": [0, 1], "count": [2, 1]}), qi=["a"])
>>> b = Tabulated(pd.DataFrame({"b": ["u", "v"], "count": [1, 2]}), qi=["b"])
>>> MaxEntModel([a, b]).bounds(by="cell")[["lower", "upper"]].to_numpy().tolist()
[[0.0, 1.0], [1.0, 2.0], [0.0, 1.0], [0.0, 1.0]]
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validation import progress_bar
from ..errors import InconsistentTables
from .rows import Rows, explain, highs_run

__all__ = ["Bounds", "target_bounds"]

#: a target counts as at its bound within this (records)
ATTAIN = 1e-7
#: a rounded table is a possible world when it meets every row within this (records; the
#: rows' right sides are whole or, for means, exact in the data's own units)
WORLD = 1e-6


@dataclass
class Bounds:
    """Per target: ``lower``, ``upper`` and whether each is tight (``lower_tight``,
    ``upper_tight``: the optimum of its program, not a bound cut short by time)."""

    lower: np.ndarray
    upper: np.ndarray
    lower_tight: np.ndarray
    upper_tight: np.ndarray

    @property
    def complete(self) -> bool:
        return bool(self.lower_tight.all() and self.upper_tight.all())


class _Programs:
    """One HiGHS model of the rows, run for many objectives until a deadline."""

    def __init__(self, rows: Rows, zero, integral: bool, deadline: float):
        import highspy

        self.highspy = highspy
        self.n = rows.n
        col_upper = np.where(zero, 0.0, np.inf)
        self.h = highs_run(
            rows.M, np.zeros(self.n), rows.lower, rows.upper, col_upper, integral=integral
        )
        if integral:  # counts are whole: a gap under 1 proves the incumbent optimal
            self.h.setOptionValue("mip_rel_gap", 0.0)
            self.h.setOptionValue("mip_abs_gap", 0.5)
        self.deadline = deadline
        self.integral = integral
        self.runs = 0

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def run(self, cost: np.ndarray):
        """(status, y): "optimal" with the table, "time", or "infeasible"."""
        if self.left() <= 0:
            return "time", None
        h = self.h
        h.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), cost.astype(float))
        h.setOptionValue("time_limit", max(self.left(), 1e-3))
        h.run()
        self.runs += 1
        S = self.highspy.HighsModelStatus
        status = h.getModelStatus()
        if status == S.kOptimal:
            return "optimal", np.asarray(h.getSolution().col_value)
        if status in (S.kInfeasible, S.kUnboundedOrInfeasible):
            return "infeasible", None
        if status == S.kTimeLimit:
            sol = h.getSolution()
            if self.integral and sol.value_valid:  # an incumbent: a whole table, not the optimum
                return "time", np.asarray(sol.col_value)
            return "time", None
        return h.modelStatusToString(status), None


class _Sides:
    """The state of every target's two sides while programs settle them."""

    def __init__(self, rows: Rows, T: sp.csr_array, lower, upper):
        self.rows = rows
        self.T = T
        self.lower, self.upper = lower, upper
        self.low_done = np.zeros(T.shape[0], dtype=bool)
        self.up_done = np.zeros(T.shape[0], dtype=bool)
        #: the lowest and highest value of each target in the whole-number tables seen
        self.int_min = np.full(T.shape[0], np.inf)
        self.int_max = np.full(T.shape[0], -np.inf)

    def seen(self, y: np.ndarray, integral: bool) -> None:
        """A feasible table ``y`` settles targets at their proved bounds (a vertex of the
        LP that is whole is a possible world too: it is kept for the integer programs)."""
        whole = bool(np.abs(y - np.round(y)).max(initial=0.0) <= 1e-6)
        if whole:  # a world only when the rounded table meets every row (our check)
            Mz = self.rows.M @ np.round(y)
            whole = bool(
                np.all(Mz >= self.rows.lower - WORLD) and np.all(Mz <= self.rows.upper + WORLD)
            )
        if integral and not whole:
            return  # an incumbent we cannot confirm settles nothing
        v = self.T @ (np.round(y) if whole else y)
        self.low_done |= v <= self.lower + ATTAIN
        self.up_done |= v >= self.upper - ATTAIN
        if whole:
            np.minimum(self.int_min, v, out=self.int_min)
            np.maximum(self.int_max, v, out=self.int_max)

    def start(self, earlier: _Sides) -> None:
        """Settle what the whole tables seen by ``earlier`` programs prove."""
        self.seen_whole(earlier.int_min, earlier.int_max)

    def seen_whole(self, low: np.ndarray, high: np.ndarray) -> None:
        self.low_done |= low <= self.lower + ATTAIN
        self.up_done |= high >= self.upper - ATTAIN
        np.minimum(self.int_min, low, out=self.int_min)
        np.maximum(self.int_max, high, out=self.int_max)


def _caps(rows: Rows, T: sp.csr_array, total: float) -> np.ndarray:
    """A proved upper bound per target: the smallest upper bound of a published row (all
    coefficients 1) covering all of it, or the total."""
    M = sp.csr_array(rows.M)
    plain = (rows.kind == "published") & np.isfinite(rows.upper)
    M = M[np.flatnonzero(plain)]
    up = rows.upper[plain]
    n = rows.n
    best = np.full(n, float(total))
    if M.nnz:
        row_of = np.repeat(np.arange(M.shape[0]), np.diff(M.indptr))
        np.minimum.at(best, M.indices, up[row_of])
    # a target's cap: the sum of its combinations' caps, at most the total
    return np.minimum(np.asarray(T @ best).ravel(), float(total))


def target_bounds(
    rows: Rows, T, total: float, *, exact=False, time_limit=60.0, progress=None, desc="bounds"
) -> Bounds:
    """Bounds of ``T y`` (see the module docstring); ``T`` is a sparse matrix of 0/1
    rows over the combinations."""
    T = sp.csr_array(T)
    deadline = time.perf_counter() + float(time_limit)
    zero = rows.forced_zeros()
    k = T.shape[0]
    cap = _caps(rows, T, total)
    reach = np.asarray(T @ (~zero).astype(float)).ravel() > 0
    lp, seen = _side_bounds(rows, T, zero, np.zeros(k), np.where(reach, cap, 0.0), False,
                            deadline, progress, desc)  # fmt: skip
    if not exact:
        return lp
    lower = np.ceil(lp.lower - 1e-6)
    upper = np.floor(lp.upper + 1e-6)
    if (lower > upper).any():
        explain(rows)
        raise InconsistentTables("no table of whole counts meets every published row")
    out, _ = _side_bounds(rows, T, zero, lower, upper, True, deadline, progress,
                          desc + " (exact)", seen)  # fmt: skip
    return out


def _side_bounds(rows, T, zero, lower, upper, integral, deadline, progress, desc, seen=None):
    """Settle every side between the proved ``lower`` and ``upper`` by programs: the
    :class:`Bounds` and the sides' record (whole tables seen)."""
    k = T.shape[0]
    sides = _Sides(rows, T, lower.astype(float).copy(), upper.astype(float).copy())
    sides.low_done |= sides.lower >= sides.upper - ATTAIN
    sides.up_done |= sides.lower >= sides.upper - ATTAIN
    if seen is not None:
        sides.start(seen)
    if sides.low_done.all() and sides.up_done.all():
        done = np.ones(k, bool)
        return Bounds(sides.lower + 0.0, sides.upper + 0.0, done, done.copy()), sides
    programs = _Programs(rows, zero, integral, deadline)
    status, y = programs.run(np.zeros(rows.n))
    if status == "infeasible":
        explain(rows)
        what = "whole-number table" if integral else "table"
        raise InconsistentTables(f"no {what} meets every published row")
    if y is not None:
        sides.seen(y, integral)
    todo = int((~sides.low_done).sum() + (~sides.up_done).sum())
    with progress_bar(progress, total=todo, desc=desc, unit="bound", auto=todo > 2000) as bar:
        done = 0

        def tick():
            nonlocal done
            now = int(sides.low_done.sum() + sides.up_done.sum()) - (2 * k - todo)
            bar.update(max(now - done, 0))
            done = max(now, done)

        _aggregate_lower(programs, sides, integral)
        tick()
        for side in ("lower", "upper"):
            for i in range(k):
                done_mask = sides.low_done if side == "lower" else sides.up_done
                if done_mask[i]:
                    continue
                sign = 1.0 if side == "lower" else -1.0
                status, y = programs.run(sign * (T[[i], :].toarray().ravel()))
                if status == "optimal":
                    value = sign * float(sign * (T[[i], :] @ y)[0])
                    value = round(value) if integral else value
                    if side == "lower":
                        sides.lower[i] = max(sides.lower[i], value)
                    else:
                        sides.upper[i] = min(sides.upper[i], value)
                    done_mask[i] = True
                if y is not None:
                    sides.seen(y, integral)
                tick()
                if programs.left() <= 0:
                    break
    # + 0.0: no "-0.0" from a minimized count
    out = Bounds(sides.lower + 0.0, sides.upper + 0.0, sides.low_done.copy(), sides.up_done.copy())
    return out, sides


def _aggregate_lower(programs: _Programs, sides: _Sides, integral: bool) -> None:
    """Minimize the sum of the targets whose lower side is open while that settles
    some: each target the optimum puts at its proved lower bound is settled."""
    for _ in range(3):
        open_ = np.flatnonzero(~sides.low_done)
        if len(open_) < 2:
            return
        before = len(open_)
        cost = np.asarray(sides.T[open_].sum(axis=0)).ravel()
        status, y = programs.run(cost)
        if y is None:
            return
        sides.seen(y, integral)
        if (~sides.low_done).sum() > 0.9 * before:
            return
