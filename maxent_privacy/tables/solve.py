"""The maximum-entropy table: the best estimate of the microdata contingency table.

Maximize ``-sum y log y`` over ``y >= 0`` with ``sum y = N`` and every row of
:func:`~maxent_privacy.tables.rows.all_rows`. Combinations a zero row forces are fixed
first. Then, in turn, until one answer passes our check:

* iterative scaling (:mod:`.scaling`) when every row is a published count: on margins
  alone it is iterative proportional fitting; zeros the tables imply together are proved
  by an LP (:mod:`.zeros`) and fixed;
* past :data:`CONIC_CELLS` free combinations, when rows are intervals (rounded counts) or
  other than counts, or scaling does not converge: L-BFGS-B on the dual (:mod:`.dual`);
* up to :data:`CONIC_CELLS` free combinations, cvxpy's entropy program (Clarabel) and its
  duals;
* up to :data:`NEWTON_CELLS` free combinations,
  :func:`~maxent_privacy.solve.newton.newton_maxent` with one record class of ``N``
  records, fixing the cells its dual proves 0 (a recession certificate, or an LP); past
  it, an error saying how far the others got.

Our own code checks the answer: the largest row violation and the duality gap,
recomputed from the multipliers.

>>> import pandas as pd
>>> from maxent_privacy import Tabulated, MaxEntModel
>>> a = Tabulated(pd.DataFrame({"a": [0, 1], "count": [2, 1]}), qi=["a"])
>>> b = Tabulated(pd.DataFrame({"b": ["u", "v"], "count": [1, 2]}), qi=["b"])
>>> r = MaxEntModel([a, b]).solve()
>>> r.table()["count"].round(6).tolist()          # r_i c_j / N
[0.666667, 1.333333, 0.333333, 0.666667]
>>> r.certificate["verified"]
True
"""

from __future__ import annotations

import time
import warnings

import cvxpy as cp
import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._validation import progress_bar
from ..errors import MaxEntError
from ..solve.forced_zeros import lp_forced_zeros
from ..solve.newton import DualUnbounded, NotConverged, newton_maxent
from ..solve.tolerances import GAP_RELATIVE
from .dual import lbfgs_maxent
from .rows import Rows, explain
from .scaling import DIVERGED, Family, iterative_scaling
from .system import TableSystem
from .zeros import implied_zeros

__all__ = ["TableResult", "solve_table"]

#: passes of fixing proved zeros and solving again
PASSES = 6
#: seconds iterative scaling may take before Newton's method takes over: this much per
#: combination left free, at least half a second, at most SCALING_SECONDS (Newton's
#: method is quick on small tables and slow on large ones)
SCALING_PER_CELL = 5e-4
SCALING_SECONDS = 60.0
#: past this many free combinations Newton's method is not tried after scaling (its
#: factorizations take minutes and gigabytes there): scaling may take up to
#: SCALING_SECONDS_LARGE, and what it cannot verify is an error
NEWTON_CELLS = 50_000
SCALING_SECONDS_LARGE = 600.0
#: cycles of scaling at most
MAX_CYCLES = 100_000
#: up to this many combinations left free, rows other than published counts (or scaling
#: that does not converge) go to cvxpy's entropy program (Clarabel) before Newton's method
CONIC_CELLS = 20_000
#: Clarabel's stopping rules (its defaults, 1e-8, leave counts about 1e-5 off)
CLARABEL_TOLERANCES = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11}
#: a part of the table whose rows are still off by more than this share of the
#: tolerance after 140 cycles of scaling gets an LP for the zeros its tables imply
SLOW = 1e-3


class TableResult:
    """The maximum-entropy table of a model of published tables.

    ``y``: the expected count of every combination; ``certificate``: our check
    (``residual``: the largest violation of a row, records; ``gap``: the duality gap,
    nats per record; ``verified``: the residual at most ``tol`` times the records, the
    gap at most ``tol`` or a millionth of the entropy per record, as for people);
    ``summary``: sizes and time; ``zeros``: combinations proved 0.
    """

    def __init__(self, system: TableSystem, y, certificate: dict, summary: dict, zeros):
        self.system = system
        self.y = y
        self.certificate = certificate
        self.summary = summary
        self.zeros = zeros
        self.model = None  # the model that made it (set by TableModel.solve)

    def reconstruction(self, time_limit: float = 60.0, progress=None) -> dict:
        """The model's :meth:`~maxent_privacy.tables.model.TableModel.reconstruction`
        (records in every consistent table, combinations pinned, uniques rebuilt), kept in
        ``summary["reconstruction"]``. Not computed unless asked: it runs integer
        programs."""
        out = self.model.reconstruction(time_limit=time_limit, progress=progress)
        self.summary["reconstruction"] = out
        return out

    def table(self, positive: bool = False) -> pd.DataFrame:
        """One row per combination: the attributes and ``count`` (the expected count;
        :attr:`count_column` names it);
        ``positive`` keeps only combinations with a count above 1e-9."""
        which = np.flatnonzero(self.y > 1e-9) if positive else None
        frame = self.system.combinations(which)
        frame[self.count_column] = self.y if which is None else self.y[which]
        return frame

    def cells(self, table) -> pd.DataFrame:
        """The expected count of every cell of a published counts table (a
        :class:`~maxent_privacy.releases.tabulated.Tabulated` of the model, or its
        position), indexed as its audit view (``model.bounds(by="cell", table=...)``):
        ``published``, ``suppressed`` and the count."""
        t = self.model.published(table)
        return pd.DataFrame(
            {"published": t.published, "suppressed": t.suppressed, self.count_column: t.A @ self.y},
            index=t.index(),
        )

    @property
    def count_column(self) -> str:
        """``"count"``, or ``"records"`` when an attribute is named ``count``."""
        taken = set(self.system.attributes)
        return next(c for c in ("count", "records", "records_") if c not in taken)

    def __repr__(self) -> str:
        s = self.summary
        ok = "verified" if self.certificate["verified"] else "NOT verified"
        return (
            f"TableResult({s['combinations']:,} combinations, {s['total']:g} records, "
            f"{s['rows']} rows, {ok})"
        )


def solve_table(system: TableSystem, rows: Rows, tol: float = 1e-6, progress=None) -> TableResult:
    """The maximum-entropy table (see the module docstring); ``progress`` as for
    :func:`~maxent_privacy._validation.progress_bar` (the scaling's cycles, shown by
    default past 10^5 free combinations)."""
    start = time.perf_counter()
    N, n = system.total, rows.n
    zero = rows.forced_zeros()
    how = {"zero rows": int(zero.sum()), "dual certificate": 0, "LP": 0}
    y, dual, solver = np.zeros(n), None, "iterative scaling"
    if N > 0 and (~zero).any():
        (y, dual), solver = _answer(system, rows, zero, tol, how, progress)
    certificate = check(rows, y, N, tol, *(dual or (None, 0.0)))
    summary = {
        "combinations": n,
        "total": N,
        "rows": int(rows.M.shape[0]),
        "zeros": how,
        "solver": solver,
        "seconds": time.perf_counter() - start,
        "reconstruction": None,
    }
    return TableResult(system, y, certificate, summary, np.flatnonzero(y == 0))


def _answer(system: TableSystem, rows: Rows, zero, tol: float, how: dict, progress):
    """((y, (theta, lin)), the solver's name) by the methods of the module docstring, in
    turn; ``zero`` and ``how`` gain the zeros they prove."""
    N = system.total
    log: dict = {}
    with progress_bar(
        progress, total=MAX_CYCLES, desc="maximum-entropy table", unit="step",
        auto=(~zero).sum() > 100_000,
    ) as bar:  # fmt: skip
        if _plain(rows) and not (_intervals(rows) and (~zero).sum() > CONIC_CELLS):
            answer = _scaled(system, rows, zero, tol, how, bar, log)
            if answer is not None:
                return answer, "iterative scaling"
        if (~zero).sum() > CONIC_CELLS:
            answer = _quasi_newton(rows, zero, N, tol, bar, log)
            if answer is not None:
                return answer, "maxent (L-BFGS-B on the dual)"
    free = int((~zero).sum())
    if free <= CONIC_CELLS:
        answer = _conic(rows, zero, N, tol)
        if answer is not None:
            return answer, "maxent (Clarabel, exponential cone)"
    if free > NEWTON_CELLS:
        raise MaxEntError(
            f"the maximum-entropy table was not found: {log['method']} did not meet "
            f"the rows ({log['why']}; residual {log['residual']:.2g} records after "
            f"{log['steps']:,} steps, {log['seconds']:.0f} s) and {free:,} free "
            f"combinations are too many for Newton's method; try solve(tol=...) above "
            f"{tol:g}, or fewer combinations"
        )
    return _newton(rows, zero, N, how), "maxent (Newton on the dual)"


def _plain(rows: Rows) -> bool:
    """Whether every row is a published count or the total (coefficients 1)."""
    return bool(np.isin(rows.kind, ["published", "total"]).all())


def _scaled(system: TableSystem, rows: Rows, zero, tol: float, how: dict, bar, log: dict):
    """(y, (theta, lin)) by iterative scaling, or None when no answer it reached within
    the time budget met our certificate (``log`` then says why, the residual, the cycles
    and the seconds; ``bar`` counts the cycles). When it creeps (after 140 cycles), the
    parts of the table still off by more than :data:`SLOW` of the tolerance get one LP for
    the zeros the tables imply (:func:`~.zeros.implied_zeros`); those are fixed (counted
    in ``how["LP"]``) and scaling goes on without them."""
    keep = np.flatnonzero(~zero)
    families = _families(system, rows, keep)
    N = system.total
    large = len(keep) > NEWTON_CELLS
    start = time.perf_counter()
    deadline = start + _budget(len(keep))
    state, cycles, searched, done = None, 20, False, 0
    history = []  # the residual at each check
    log.update(method="iterative scaling", why="out of time", residual=np.inf, steps=0,
               seconds=0.0)  # fmt: skip
    while done == 0 or (time.perf_counter() < deadline and done < MAX_CYCLES):
        left = max(deadline - time.perf_counter(), 0.0)
        y_keep, nu, ok = iterative_scaling(
            families, N, len(keep), tol=tol * 1e-3, max_cycles=cycles, seconds=left, start=state
        )
        done += cycles
        bar.update(cycles)
        if not all(np.isfinite(v).all() for v in nu) or not np.isfinite(y_keep).all():
            log["why"] = "overflow"
            return None
        state = (y_keep, nu)
        answer = _from_scaling(families[:-1], nu[:-1], y_keep, keep, rows.n)
        verdict = check(rows, answer[0], N, tol, *answer[1])
        log.update(residual=verdict["residual"], steps=done, seconds=time.perf_counter() - start)
        bar.set_postfix_str(f"residual {verdict['residual']:.2g} records")
        if verdict["verified"]:
            return answer
        if ok or max(np.abs(v).max(initial=0.0) for v in nu) > DIVERGED:
            log["why"] = "rows met but not verified" if ok else "multipliers running off"
            return None  # Newton's turn
        if cycles >= 80 and not searched:
            searched = True
            # exact rows only: intervals (rounded counts) leave zeros free, and their
            # scaling creeps for other reasons
            slow = violations(rows, answer[0]) > SLOW * tol * max(N, 1.0)
            slow &= rows.lower == rows.upper
            found = implied_zeros(rows, zero, slow, deadline - time.perf_counter())
            if len(found):
                zero[found] = True
                how["LP"] += len(found)
                still = ~zero[keep]
                keep = keep[still]
                families = [Family(f.row[still], f.lower, f.upper) for f in families]
                state, cycles, history = (y_keep[still], nu), 20, []
                continue
        history.append(verdict["residual"])
        if _stalled(history, 25 if large else 1):
            log["why"] = "stalled"
            return None  # rows that disagree, or zeros they force
        cycles = min(2 * cycles, 400)  # our check costs about one cycle per 20
    return None


def _budget(free: int) -> float:
    """Seconds for scaling or L-BFGS-B over ``free`` combinations: SCALING_PER_CELL each,
    at least half a second, at most SCALING_SECONDS (SCALING_SECONDS_LARGE past
    NEWTON_CELLS, where no Newton's method comes after)."""
    cap = SCALING_SECONDS_LARGE if free > NEWTON_CELLS else SCALING_SECONDS
    return min(max(SCALING_PER_CELL * free, 0.5), cap)


def _hidden(lower, upper) -> np.ndarray:
    """Rows that say nothing: suppressed cells (any count >= 0)."""
    return (lower <= 0) & ~np.isfinite(upper)


def _intervals(rows: Rows) -> bool:
    """Whether some row is an interval (a rounded count; a suppressed cell is no row)."""
    return bool(((rows.lower < rows.upper) & ~_hidden(rows.lower, rows.upper)).any())


def _quasi_newton(rows: Rows, zero, N: float, tol: float, bar, log: dict):
    """:func:`~.dual.lbfgs_maxent` within the scaling's time budget, our check after
    every round; ``log`` as for :func:`_scaled`."""
    start = time.perf_counter()
    log.update(method="L-BFGS-B on the dual", why="out of time", residual=np.inf, steps=0,
               seconds=0.0)  # fmt: skip

    def verified(y, theta, lin, steps) -> bool:
        verdict = check(rows, y, N, tol, theta, lin)
        log.update(residual=verdict["residual"], steps=steps,
                   seconds=time.perf_counter() - start)  # fmt: skip
        bar.set_postfix_str(f"residual {verdict['residual']:.2g} records")
        return verdict["verified"]

    seconds = _budget(int((~zero).sum()))
    answer = lbfgs_maxent(rows, zero, N, tol, seconds, bar=bar, check=verified)
    if answer is None and log["why"] == "out of time" and time.perf_counter() - start < seconds:
        log["why"] = "stopped short"
    return answer


def _stalled(history: list, window: int) -> bool:
    """Whether the residual, checked every 400 cycles once past 140, has not fallen by 2 %
    over ``window`` checks. Interval rows make it climb and plateau for thousands of cycles
    on the way: a large table, which has no Newton's method after it, is given 25 checks
    (10,000 cycles)."""
    if len(history) < window + 2:
        return False
    return min(history[-window:]) > 0.98 * min(history[:-window])


def _families(system: TableSystem, rows: Rows, keep) -> list:
    """One :class:`~.scaling.Family` per published table (its suppressed cells no row)
    and one for the total, over the combinations ``keep``."""
    families = []
    for t in system.tables:
        coo = sp.coo_array(t.A)
        row = np.full(rows.n, -1, dtype=np.int64)
        row[coo.col] = coo.row
        row = np.where((row >= 0) & _hidden(t.lower, t.upper)[np.maximum(row, 0)], -1, row)
        families.append(Family(row[keep], t.lower, t.upper))
    N = system.total
    families.append(Family(np.zeros(len(keep), dtype=np.int64), np.array([N]), np.array([N])))
    return families


def _from_scaling(families, nu, y_keep, keep, n):
    """The table and the dual point (theta, lin) of the scaling's multipliers."""
    theta = np.zeros(len(keep))
    lin = 0.0
    for f, v in zip(families, nu, strict=True):
        inside = f.row >= 0
        theta[inside] += v[f.row[inside]]
        bound = np.where(v < 0, f.upper, f.lower)
        lin -= float(np.sum(np.where(v != 0, v * bound, 0.0)))
    y = np.zeros(n)
    y[keep] = y_keep
    return y, (_full(theta, keep, n), lin)


def _full(theta, keep, n):
    out = np.full(n, -np.inf)
    out[keep] = theta
    return out


def _conic(rows: Rows, zero, N: float, tol: float):
    """(y, (theta, lin)) from cvxpy's entropy program (Clarabel) and its duals, or None
    when it fails or our check does not verify it (Newton's method is tried next).
    Tables no table of records meets raise :class:`InconsistentTables` (explained)."""
    keep = np.flatnonzero(~zero)
    E, b, G, h = rows.split(keep)
    y = cp.Variable(len(keep), nonneg=True)
    constraints = [E @ y == b] + ([G @ y <= h] if G.shape[0] else [])
    problem = cp.Problem(cp.Maximize(cp.sum(cp.entr(y))), constraints)
    try:
        with warnings.catch_warnings():  # "may be inaccurate": our check judges below
            warnings.simplefilter("ignore", UserWarning)
            problem.solve(solver=cp.CLARABEL, **CLARABEL_TOLERANCES)
    except cp.error.SolverError:
        return None
    if problem.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        explain(rows)
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or y.value is None:
        return None  # an inaccurate answer is judged by our check below
    lam = np.asarray(constraints[0].dual_value, dtype=float)
    mu = np.maximum(np.asarray(constraints[1].dual_value, dtype=float), 0.0) if len(h) else h
    theta = -(E.T @ lam) - (G.T @ mu if len(h) else 0.0)
    x = np.zeros(rows.n)
    x[keep] = np.maximum(y.value, 0.0)
    answer = x, (_full(theta, keep, rows.n), float(lam @ b + mu @ h))
    return answer if check(rows, answer[0], N, tol, *answer[1])["verified"] else None


def _newton(rows: Rows, zero, N: float, how: dict):
    """(y, (theta, lin)) by Newton's method on the dual, fixing proved zeros."""
    for _ in range(PASSES):
        keep = np.flatnonzero(~zero)
        E, b, G, h = rows.split(keep)
        try:
            out = newton_maxent(
                np.ones(len(keep)), np.zeros(len(keep), dtype=np.int64), np.array([N]),
                E, b, G, h,
            )  # fmt: skip
        except DualUnbounded:
            explain(rows)
            raise
        except NotConverged as exc:
            found = keep[exc.zeros] if len(exc.zeros) else np.zeros(0, dtype=int)
            kind = "dual certificate"
            if not len(found) and len(exc.small):
                found = keep[lp_forced_zeros(E, b, G, h, exc.small)]
                kind = "LP"
            if not len(found):
                explain(rows)
                raise MaxEntError(f"the maximum-entropy table was not found: {exc}") from exc
            zero[found] = True
            how[kind] += len(found)
            continue
        y = np.zeros(rows.n)
        y[keep] = out.x
        theta = -(E.T @ out.lam) - (G.T @ out.mu if G.shape[0] else 0.0)
        lin = float(out.lam @ b + (out.mu @ h if len(h) else 0.0))
        return y, (_full(theta, keep, rows.n), lin)
    raise MaxEntError("the maximum-entropy table was not found: zeros kept appearing")


def violations(rows: Rows, y) -> np.ndarray:
    """How far ``y`` is outside each row's bounds, in records (0 where it is inside)."""
    My = rows.M @ y
    return np.maximum(np.maximum(rows.lower - My, My - rows.upper), 0.0)


def check(rows: Rows, y, N: float, tol: float, theta=None, lin: float = 0.0) -> dict:
    """Our own certificate of ``y``: the largest row violation, and the duality gap
    ``phi - H(y)`` with ``phi = lin + N log sum exp(theta) - N log N`` recomputed from the
    multipliers (``theta``: their log weight per combination, -inf where fixed at 0)."""
    violation = violations(rows, y)
    residual = float(max(violation.max(initial=0.0), abs(y.sum() - N), -y.min(initial=0.0)))
    entropy = float(-np.sum(y[y > 0] * np.log(y[y > 0])))
    gap = 0.0  # nats per record, as the models of people report it
    if theta is not None:
        top = theta[np.isfinite(theta)].max()
        log_w = top + np.log(np.exp(theta - top).sum())
        phi = float(lin + N * log_w - N * np.log(N))
        gap = (phi - entropy) / max(N, 1.0)
    scale = max(1.0, N)
    return {
        "residual": residual,
        "gap": gap,
        "entropy": entropy,
        "verified": bool(
            residual <= tol * scale
            and abs(gap) <= max(tol, GAP_RELATIVE * abs(entropy) / max(N, 1.0))
        ),
    }
