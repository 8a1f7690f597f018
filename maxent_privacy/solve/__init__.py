"""Solving a MaxEntModel: a chain of small stages, each with ``apply`` and ``invert``.

``solve(model, options)`` compiles the model, applies the stages, runs a backend per
component (locally or on Dask), inverts the stages and certifies the answer:

1. **compile** (:mod:`.problem`): data rows and fact rows stacked once; a
   :class:`RowMap` records which rows belong to which fact.
2. **presolve** (:mod:`.presolve`, :class:`FixForcedCells`): cells that every feasible
   answer fixes are fixed exactly and moved to the right sides (pooled releases: flow
   arguments per group and per value across releases, :mod:`.flows`; the support of the
   pieces the flows do not decide exactly, :mod:`.support`).
3. **implied rows** (:mod:`.rank`, :class:`DropImpliedRows`): one row per bucket piece
   dropped (Du et al. Theorem 3), or a QR on small pieces for conic solvers.
4. **scaling** (:mod:`.scaling`, :class:`ScaleFactRows`): fact rows to largest |coef| 1.
5. **components** (:mod:`.components`, :class:`SplitComponents`): independent problems.
6. **backends**: the closed form of Eq. (9) (:mod:`.closed_form`; with a prior, matrix
   scaling of every bucket, :mod:`.matrix_scaling`, its small systems
   :mod:`.small_systems`), our Newton solver on
   the dual (:mod:`.newton`, :mod:`.newton_backend`; its Hessian :mod:`.hessian`, factored
   by :mod:`.factor`), a conic solver through cvxpy with
   polish (:mod:`.conic`, :mod:`.polish`), run by :mod:`.dispatch`. Cells proved 0 late
   (:mod:`.forced_zeros`) are fixed and only the components that held them solved again.
7. **invert** the stages in reverse, then the **certificate** (:mod:`.certificate`).

No table: presolve's rules, or Newton's dual bound falling below 0 (confirmed by one
HiGHS LP, :mod:`.highs`, before it is believed: when the LP finds a table the cells it
proves 0 are fixed and the components solved again), raise
:class:`~maxent_privacy.errors.InfeasibleKnowledge` at once; the facts to blame and how
far each must move are then searched for at most
:data:`~.conflicts.EXPLAIN_TIME_LIMIT` seconds (or the solve's
``time_limit``), and the message says when that search was cut short.

For our Newton solver a model with placements (generalized releases whose people may sit
in several groups) is first rewritten on joint cells, an ordinary maximum-entropy problem
(:mod:`.placements`, :class:`~.placements.JointCells`), and mapped back before the
certificate, which checks the model's own rows and objective. The rest:
``prior`` (``model.solve(prior=Q)``: the base measure n_c q_c[s] of a belief, the
I-projection), ``chain`` (:class:`Chain`), ``options`` (:class:`SolveOptions`, the one
solver policy),
``hessian`` (Newton's steps), ``highs`` (one LP through HiGHS, for the forced zeros and
the conflicts), ``conflicts`` (which facts contradict each other and how far each must
move: a deletion filter over HiGHS LPs), ``tight`` (presolve's tight-bound rules on
arrays) and ``tolerances`` (every threshold the solve decides with, named once).

One fact, end to end. ``model.add(model.P("Flu", gender="male") == 0.3, name="flu")``
compiles the constraint to a :class:`~maxent_privacy.knowledge.facts.Fact` named "flu" with one
row over the cells (:func:`~maxent_privacy.knowledge.facts.compile_fact`). ``model.solve()``:
``compile_problem`` stacks it as row ``k`` of ``F_eq`` and the row map records
``"flu" -> F_eq[k]``; ``FixForcedCells`` moves its fixed cells to the right side (if
none is left free, it must already hold, else the error names "flu");
``ScaleFactRows`` divides the row by its largest coefficient and keeps the scale;
``SplitComponents`` puts the row in the component of its cells; the backend returns the
row's multiplier on the scaled row; ``ScaleFactRows.invert`` scales it back;
``RowMap.duals`` divides by the number of records and names it "flu", which is
``result.duals["flu"]``; ``RowMap.residuals`` gives ``result.fact_residuals["flu"]``.

>>> from maxent_privacy import MaxEntModel, Bucketized, datasets
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                                sa="disease", group="bucket"))
>>> model.add(model.P("Flu", gender="male") == 0.3, name="flu")
>>> result = solve(model, SolveOptions())
>>> round(float(result.duals["flu"]), 6)
0.059752
"""

from __future__ import annotations

import time
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd

from ..errors import InfeasibleKnowledge, SolverFailed
from ..results import Result
from .certificate import InaccuracyWarning, certify, gap_ok
from .chain import Chain
from .components import SplitComponents
from .conflicts import EXPLAIN_TIME_LIMIT, explained
from .conic import Conic
from .dispatch import Memo, runner, solve_parts
from .forced_zeros import ForcedZeros, ZeroLog, lp_forced_zeros, lp_zeros_of_problem
from .newton import DualResult, NotConverged, newton_maxent
from .newton_backend import Newton
from .options import MAXENT, SolveOptions, choose, exp_cone_solvers, solver_options
from .placements import JointCells
from .presolve import FixForcedCells
from .prior import cell_prior, check_zero_prior, with_prior
from .problem import MaxEntProblem, RowMap
from .rank import DropImpliedRows
from .scaling import ScaleFactRows

__all__ = [
    "DualResult",
    "NotConverged",
    "lp_forced_zeros",
    "newton_maxent",
    "InaccuracyWarning",
    "MaxEntProblem",
    "RowMap",
    "SolveOptions",
    "exp_cone_solvers",
    "solve",
    "solver_options",
]


def solve(model, options: SolveOptions, prior=None) -> Result:
    """The maximum-entropy estimate of ``model``, certified (see the module docstring).
    ``prior``: a belief over sensitive values per record class (:mod:`.prior`); the
    answer is then the table closest to it in KL divergence."""
    options = options.checked()
    problem = model.compile()
    fixed = np.zeros(0, dtype=int)  # cells the prior gives 0
    if prior is not None:
        q = cell_prior(model, prior)
        fixed = check_zero_prior(model, problem, q)
        problem = with_prior(problem, q)
    try:
        try:
            return _solve(model, problem, options, zeros=_prior_log(fixed))
        except SolverFailed as err:
            if options.solver is not None or choose(options, problem) != MAXENT:
                raise
            # the default falls back on the reference path (Clarabel), and says so
            warnings.warn(f"{err}; solved with CLARABEL instead", stacklevel=3)
            clarabel = replace(options, solver="CLARABEL", client=None)
            fallback = f"maxent: {err}"
            return _solve(model, problem, clarabel, fallback, zeros=_prior_log(fixed))
    except InfeasibleKnowledge as err:
        named = explained(model, err, time_limit=_explain_budget(options))
        if named is err:
            raise
        raise named from err


def _explain_budget(options: SolveOptions) -> float:
    """Seconds to explain a contradiction: :data:`EXPLAIN_TIME_LIMIT`, or the solve's own
    ``time_limit`` when it is smaller."""
    given = options.solver_options.get("time_limit")
    return EXPLAIN_TIME_LIMIT if given is None else min(EXPLAIN_TIME_LIMIT, float(given))


def _backend(name: str, options: SolveOptions, fallback: bool):
    opts = options.for_solver(name, fallback=fallback)
    if name == MAXENT:
        return Newton(
            opts["newton_tol"], opts["max_iter"], opts.get("time_limit"), options.verbose
        ), opts
    return Conic(name, opts, options.polish, options.presolve, options.verbose), opts


def _prior_log(cells: np.ndarray) -> ZeroLog:
    """A log of forced zeros that starts with the cells a prior gives 0."""
    out = ZeroLog()
    if len(cells):
        out.cells = np.unique(cells)
        out.counts["prior"] = len(out.cells)
    return out


def _solve(
    model, problem: MaxEntProblem, options: SolveOptions, fallback_from=None, zeros=None
) -> Result:
    t_start = time.perf_counter()
    name = choose(options, problem)
    backend, opts = _backend(name, options, fallback_from is not None)
    zeros, memo = zeros if zeros is not None else ZeroLog(), Memo()
    # our Newton solver takes placements on joint cells (conic solvers: the model's form)
    work, joint = JointCells().apply(problem) if name == MAXENT else (problem, None)
    presolved = None  # what presolve fixed in the last pass: the next one starts there
    with runner(options.client if name == MAXENT else None) as client:
        while True:
            fix = FixForcedCells(zeros.cells, options.presolve, options.tol, presolved)
            chain = Chain([
                fix,
                DropImpliedRows(qr=name != MAXENT),
                ScaleFactRows(),
                SplitComponents(options.decompose),
            ])  # fmt: skip
            parts, inverse = chain.apply(work)
            presolved = fix.presolved
            t_setup = time.perf_counter() - t_start
            try:
                solutions = solve_parts(parts, backend, memo, client, options.progress)
                _check_suspects(work, parts.red, solutions, zeros)
            except ForcedZeros as found:
                zeros.add(found)
                memo.keep(parts.red, found.kept)
                continue
            solution = chain.invert(solutions, inverse)
            break
    free = parts.red.free
    if joint is not None:
        solution, free = joint.invert(solution, free)
    stats = {"solver": name, "setup_time": t_setup, "options": opts, "fallback_from": fallback_from}
    return _result(model, problem, parts, free, solution, zeros, stats, options.tol, t_start)


def _check_suspects(problem, red, solutions, zeros: ZeroLog) -> None:
    """Cells a conic solver left near 0 unpolished: an LP decides which are forced."""
    suspects = np.unique(np.concatenate([np.zeros(0, int)] + [s.suspects for s in solutions]))
    if not len(suspects) or problem.convex or len(zeros.cells):
        return
    found = lp_zeros_of_problem(problem, red.fixed, suspects)
    if len(found):
        kept = [s for s in solutions if not np.isin(red.free[s.part.cells], found).any()]
        raise ForcedZeros(found, "LP", kept)


def _result(model, problem, parts, free, solution, zeros, stats, tol, t_start) -> Result:
    """The certified :class:`Result` with its solver statistics (``free``: the model's
    cells presolve left free)."""
    name = stats["solver"]
    cert, fact_res, violations = certify(problem, solution, free, tol, name)
    comps = pd.DataFrame(solution.records)
    n_closed = int(parts.closed.sum())
    stats = {
        "solver": name,
        "components": parts.n_comp,
        "closed_form": n_closed,
        "solved": parts.n_comp - n_closed,
        "fixed_by_presolve": problem.n_cells - len(free),
        "presolve_zeros": dict(parts.red.rules or {}),  # cells presolve's rules fixed at 0
        # cells proved 0 after presolve: by the dual's recession certificate or an LP
        "forced_zeros": dict(zeros.counts),
        "passes": zeros.passes,
        "cells": problem.n_cells,
        "setup_time": stats["setup_time"],
        "solve_time": float(comps["solve_time"].sum()) if len(comps) else 0.0,
        "iterations": int(comps["iterations"].fillna(0).sum()) if len(comps) else 0,
        "total_time": time.perf_counter() - t_start,
        "options": stats["options"],
        **({"fallback_from": stats["fallback_from"]} if stats["fallback_from"] else {}),
    }
    small_gap = gap_ok(cert, name)  # warns when it is not
    ok = small_gap and all(s == "optimal" for s in solution.statuses)
    status = "optimal" if ok else "optimal_inaccurate"
    fixed = np.ones(problem.n_cells, dtype=bool)
    fixed[free] = False
    return Result(
        model=model,
        x=solution.x,
        status=status,
        certificate=cert,
        duals=problem.rows.duals(solution.nu_eq, solution.mu_in, problem.n_records),
        solver_stats=stats,
        components=comps,
        fact_residuals=fact_res,
        violations=violations,
        fixed=fixed,
    )
