"""The deFinetti attack (Kifer, SIGMOD 2009): an adversary that learns from the release.

Maximum entropy is the least committed belief. Kifer's adversary instead *learns* the
correlation between quasi-identifiers and the sensitive value from the anonymized table
itself, and reasons about each group's possible assignments with it:

1. start from the maximum-entropy table (``model.solve()``);
2. fit a classifier (:mod:`.learners`) to the current expected table: each class's QI,
   each value, weight x[c, s];
3. take its P(s | QI) as a prior and project it onto the tables the release and the hard
   facts allow (``model.solve(prior=...)``: minimum cross-entropy, the I-projection);
4. repeat from 2 until no class's posterior moves more than ``tol``.

The rounds are accelerated by SQUAREM (Varadhan and Roland 2008): two rounds, a step
along their extrapolation, one more round. For naive Bayes the extrapolation is of the
learner's log-parameters (any of them is a prior; fewer rounds than on the tables), for
other learners of the tables (cut back until they are >= 0). A parameters' step whose
prior underflows to 0 or cannot be projected is cut back, and one that raises the
objective both steps of a plain round decrease is dropped (SQUAREM's safeguard). Where
the loop has several fixed points the path decides which it reaches. Rounds and times:
``python -m benchmarks adversaries`` (its latest table in ``benchmarks/RESULTS.md``).

Every iterate is a table the release allows (its certificate is checked each round), so
the learned posterior lies inside the certified bounds of :meth:`MaxEntModel.bounds`.

>>> import pandas as pd
>>> from maxent_privacy import Bucketized, MaxEntModel
>>> rows = pd.DataFrame({"sex": list("FFM" "FM" "FMM"), "g": [1, 1, 1, 2, 2, 3, 3, 3],
...                      "s": ["flu", "flu", "hiv", "flu", "hiv", "flu", "hiv", "hiv"]})
>>> model = MaxEntModel(Bucketized(rows, qi=["sex"], sa="s", group="g"))
>>> round(float(model.solve().posterior(by="group").loc[("F", 2), "flu"]), 3)
0.5
>>> learned = definetti(model)       # F goes with flu in buckets 1 and 3: learned
>>> round(float(learned.posterior(by="group").loc[("F", 2), "flu"]), 3)
0.565
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np
import pandas as pd

from .._validation import ArgumentError, check_integer, check_number, check_progress, check_seed
from ..errors import InfeasibleKnowledge, SolverFailed
from .learners import (
    LEARNERS,
    Entries,
    encode,
    naive_bayes,
    naive_bayes_objective,
    naive_bayes_params,
    naive_bayes_predict,
)
from .learners import learner as _learner
from .projection import Support, check, projector

__all__ = ["definetti"]

#: how far an extrapolated round may raise the objective J (nats, summed over records)
#: and still be kept: SQUAREM's ``objfn.inc`` (Varadhan and Roland's default, 1). Steps
#: that raise it more are dropped for the plain double round.
OBJECTIVE_SLACK = 1.0


def _arguments(max_iter, tol, seed) -> tuple[int, float]:
    max_iter = check_integer(max_iter, "max_iter", minimum=1)
    if check_number(tol, "tol") <= 0:
        raise ArgumentError(f"tol must be a finite number > 0, got {tol!r}")
    check_seed(seed)
    return max_iter, float(tol)


def _step_length(r, v) -> float:
    """SQUAREM's step (its third scheme), at least the plain double round's."""
    return min(-np.sqrt(np.vdot(r, r) / max(np.vdot(v, v), 1e-300)), -1.0)


def _checked_prior(fit, out, shape: tuple) -> np.ndarray:
    """A callable learner's answer as an array of ``shape`` (classes x values) whose rows
    are non-negative, finite and not all zero, or an ArgumentError naming the learner."""
    name = getattr(fit, "__name__", type(fit).__name__)
    if out is None:
        raise ArgumentError(f"learner {name!r} returned None, not P(s | QI) per class")
    try:
        arr = np.asarray(out.to_numpy() if hasattr(out, "to_numpy") else out, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError(
            f"learner {name!r} returned a {type(out).__name__}, not an array of numbers"
        ) from None
    if arr.shape != tuple(shape):
        raise ArgumentError(
            f"learner {name!r} returned shape {arr.shape}; it must give one row per class "
            f"and one column per sensitive value, {tuple(shape)}"
        )
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        c, s = np.argwhere(bad)[0]
        raise ArgumentError(
            f"learner {name!r} returned {arr[c, s]} for class {c}, value {s}; each entry "
            "must be a finite number >= 0"
        )
    empty = arr.sum(axis=1) <= 0
    if empty.any():
        raise ArgumentError(
            f"learner {name!r} returned a row of zeros for class {int(np.argmax(empty))}; "
            "each class needs some probability"
        )
    return arr


class _Rounds:
    """The attack's rounds: a prior projected onto the tables the model allows (checked),
    the history, and the learner (its fit of a table, a vector over ``support``)."""

    def __init__(self, model, learner, seed, project, support, progress):
        self.model, self.project, self.support, self.progress = model, project, support, progress
        self.fit = _learner(learner)
        self.real = ~model.structure.phantom
        # counterfeit records (phantom classes) have no QI: the learner sees real people's
        # classes only, and the phantoms keep a flat prior (their maximum-entropy share)
        self.everyone = bool(self.real.all())
        self.qi = model.classes.loc[self.real, list(model.qi)].reset_index(drop=True)
        ours = self.ours = self.fit in LEARNERS.values()  # (they read the encoded QI)
        self.encoded = encode(self.qi) if ours else None
        self.kwargs = {"encoded": self.encoded} if ours else {}
        if learner == "logistic_regression":
            self.kwargs["seed"] = seed
        self.parametric = self.fit is naive_bayes  # extrapolated in its log-parameters
        if self.parametric:  # the real people's entries of the support, as NB reads them
            at_real = np.cumsum(self.real) - 1
            cls, col = support.cls[support.real], support.col[support.real]
            self.entries = Entries(self.encoded, at_real[cls], col, support.shape[1])
        self.rows: list[dict] = []
        self.prior = None  # the last round's
        self.seconds = {"projection": 0.0, "learner": 0.0}  # where the rounds' time goes

    @contextmanager
    def _timing(self, part):
        """Adds the seconds of the block to ``part`` (those of a failed round too)."""
        t = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[part] += time.perf_counter() - t

    def _seen(self, v):
        """The real people's entries of the vector ``v`` (``v`` itself when everyone is
        real: the same array, so naive Bayes' counts of it are not computed twice)."""
        return v if self.everyone else v[self.support.real]

    def _real(self, v):
        table = self.support.dense(v)
        return table if self.everyone else table[self.real]

    def _embed(self, p):
        if self.everyone:
            return p
        out = np.full((len(self.real), p.shape[1]), 1.0 / max(p.shape[1], 1))
        out[self.real] = p
        return out

    def fitted(self, v):
        """The learner's prior fitted to the table ``v``."""
        with self._timing("learner"):
            table = self._real(v)
            out = self.fit(self.qi, table, **self.kwargs)
            if not self.ours:
                out = _checked_prior(self.fit, out, table.shape)
            return self._embed(out)

    def params(self, v):
        """Naive Bayes' log-parameters fitted to the table ``v``."""
        with self._timing("learner"):
            return naive_bayes_params(self.entries.at(self._seen(v)), self.encoded)

    def objective(self, v, theta) -> float:
        """The objective both steps of a plain round decrease: ``J = sum v log v`` + naive
        Bayes' negative log-likelihood of ``v`` under ``theta`` (alternating minimisation:
        the projection minimises J over the tables, the fit over the parameters)."""
        seen = self._seen(v)
        logs = np.log(seen, out=np.zeros_like(seen), where=seen > 0)
        return float(np.vdot(seen, logs)) + naive_bayes_objective(self.entries.at(seen), theta)

    def predicted(self, theta):
        with self._timing("learner"):
            return self._embed(naive_bayes_predict(theta, self.encoded))

    def positive(self, p) -> bool:
        """``p`` is > 0 on every entry of the support (a prior may rule nothing out)."""
        return bool(self.support.of(p).min(initial=1.0) > 0)

    def __call__(self, p, v):
        """One round: ``p`` projected; ``v``: the table it was fitted to (or the last
        table), on which the learner's log-likelihood and the change are measured."""
        t = time.perf_counter()
        seen = self._seen(v)
        logp = np.log(np.maximum(self._seen(self.support.of(p)), 1e-300))
        loglik = float(np.vdot(seen, logp) / seen.sum())
        with self._timing("projection"):
            new = self.project(p)
        change = float(np.max(np.abs(new - v) / self.support.n, initial=0.0))
        self.prior = p
        self.rows.append(
            {"iteration": len(self.rows) + 1, "log_likelihood": loglik, "change": change,
             "seconds": time.perf_counter() - t}
        )  # fmt: skip
        if self.progress is not None:
            n = len(self.rows)
            self.progress(f"deFinetti {n:3d}: log-likelihood {loglik:.6f}  change {change:.2e}")
        return new, change


def _table_cycle(rounds, v, tol, left):
    """One SQUAREM cycle on the tables: every table returned is a projection; the
    extrapolated one (shortened until it is >= 0) is only fed to the learner."""
    t1, c1 = rounds(rounds.fitted(v), v)
    if c1 <= tol or left < 2:
        return t1, c1 <= tol
    t2, c2 = rounds(rounds.fitted(t1), t1)
    if c2 <= tol or left < 3:
        return t2, c2 <= tol
    r, w = t1 - v, t2 - 2 * t1 + v
    alpha = _step_length(r, w)
    step = t2  # alpha = -1: the plain double round
    for _ in range(12):
        trial = v - 2 * alpha * r + alpha * alpha * w
        if trial.min() >= 0:
            step = trial
            break
        alpha = (alpha - 1.0) / 2  # halfway back towards the plain double round
    t3, c3 = rounds(rounds.fitted(step), step)
    return t3, c3 <= tol


def _params_cycle(rounds, state, tol, left):
    """One SQUAREM cycle on naive Bayes' log-parameters from ``state`` (a table and its
    fit): two rounds, then the prior of the extrapolated parameters
    projected. That round's change is from the last table, not a fixed-point test (the
    next cycle's first round is). The step is cut back towards the plain double round
    (a fit, so positive) while its prior underflows to 0 on the support or cannot be
    projected, and dropped when J rises (SQUAREM's safeguard: plain rounds never raise J)."""
    v, th0 = state
    t1, c1 = rounds(rounds.predicted(th0), v)
    if c1 <= tol or left < 2:
        return (t1, rounds.params(t1)), c1 <= tol
    th1 = rounds.params(t1)
    p2 = rounds.predicted(th1)
    t2, c2 = rounds(p2, t1)
    th2 = rounds.params(t2)
    if c2 <= tol or left < 3:
        return (t2, th2), c2 <= tol
    j2 = rounds.objective(t2, th2)
    r, w = th1 - th0, th2 - 2 * th1 + th0
    alpha = _step_length(r, w)
    for _ in range(12):
        p = rounds.predicted(th0 - 2 * alpha * r + alpha * alpha * w)
        if rounds.positive(p):
            saved = rounds.project.snapshot()
            try:
                t3 = rounds(p, t2)[0]
            except (SolverFailed, InfeasibleKnowledge):
                rounds.project.restore(saved)
            else:
                th3 = rounds.params(t3)
                if rounds.objective(t3, th3) <= j2 + OBJECTIVE_SLACK:
                    return (t3, th3), False
                rounds.prior = p2  # the step made things worse: back to the plain rounds
                return (t2, th2), False
        alpha = (alpha - 1.0) / 2  # halfway back towards the plain double round
    rounds.prior = p2
    return (t2, th2), False


def definetti(
    model,
    learner="naive_bayes",
    max_iter: int = 100,
    tol: float = 1e-6,
    seed: int = 0,
    solver: str | None = None,
    progress=None,
):
    """The learned adversary's estimate: a :class:`~maxent_privacy.results.Result`.

    Parameters
    ----------
    model : MaxEntModel
        Releases (one, pooled or generalized) and hard facts.
    learner : "naive_bayes" (default, Kifer's), "logistic_regression" (scikit-learn) or a
        callable ``f(qi_frame, counts) -> P(s | QI)`` per class.
    max_iter, tol : the loop stops after ``max_iter`` projections or when no class's
        posterior moves more than ``tol``.
    seed : the learner's seed (logistic regression).
    solver : the solver of every projection (default: ``model.solve``'s choice).
    progress : None or False (quiet, the default), True (one line per iteration on
        stderr) or a function called with each line.

    Returns
    -------
    Result
        ``posterior()``, ``person_posterior()``, ``risk_table()``, ``bounds()`` work as for
        ``model.solve()``; ``result.history`` has one row per iteration: the learner's
        log-likelihood per record on the table it was fitted to (``log_likelihood``,
        conditional, nats; a round from extrapolated parameters: on the last table), the
        largest change of a class posterior from that table (``change``) and the seconds;
        ``result.solver_stats["definetti"]`` sums it up, with where the time went
        (``start_seconds``: the maximum-entropy start; ``setup_seconds``;
        ``projection_seconds`` and ``learner_seconds``: the rounds' projections and the
        learner's fits and predictions; ``rounds_other_seconds``: the rest of the rounds;
        ``final_seconds``: the last certified solve).
    """
    max_iter, tol = _arguments(max_iter, tol, seed)
    progress = check_progress(progress)
    _learner(learner)  # a bad name fails before the first solve
    t0 = time.perf_counter()
    result = model.solve(solver=solver)
    t_solved = time.perf_counter()
    check(result, 0)
    values = sorted(result.cell_table()[model.sa].unique(), key=str)
    support = Support(result, values, ~model.structure.phantom)
    project = projector(model, values, result, support, solver)
    rounds = _Rounds(model, learner, seed, project, support, progress)
    t_loop = time.perf_counter()
    v = support.table(result)
    cycle, state = _table_cycle, v
    if rounds.parametric:
        cycle, state = _params_cycle, (v, rounds.params(v))
    converged = False
    while len(rounds.rows) < max_iter and not converged:
        state, converged = cycle(rounds, state, tol, max_iter - len(rounds.rows))
    t_final = time.perf_counter()
    result = project.final(rounds.prior)
    t_end = time.perf_counter()
    result.history = pd.DataFrame(rounds.rows)
    result.solver_stats["definetti"] = {
        "learner": learner if isinstance(learner, str) else getattr(learner, "__name__", "?"),
        "iterations": len(rounds.rows),
        "projection": type(project).__name__,
        "converged": converged,
        "seconds": t_end - t0,
        # where the time went: the maximum-entropy start, the setup of the rounds, the
        # rounds' projections and learner (fits and predictions), the rest of the rounds
        # (the history, SQUAREM's steps and safeguard) and the last certified solve
        "start_seconds": t_solved - t0,
        "setup_seconds": t_loop - t_solved,
        "projection_seconds": rounds.seconds["projection"],
        "learner_seconds": rounds.seconds["learner"],
        "rounds_other_seconds": t_final - t_loop - sum(rounds.seconds.values()),
        "final_seconds": t_end - t_final,
    }
    return result
