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

import numpy as np
import pandas as pd

from ..errors import KnowledgeError
from .learners import LEARNERS, encode
from .learners import learner as _learner
from .projection import Support, check, expected_table, projector

__all__ = ["definetti"]


def _arguments(max_iter, tol) -> None:
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise KnowledgeError(f"max_iter={max_iter!r} must be an integer >= 1")
    if not isinstance(tol, (int, float)) or not np.isfinite(tol) or tol <= 0:
        raise KnowledgeError(f"tol={tol!r} must be a finite number > 0")


def _squarem_round(project, table, tol, left):
    """One SQUAREM round (Varadhan and Roland 2008) of the fixed-point map ``project``:
    two rounds, a step along their extrapolation (shortened until the table is >= 0),
    one more round from there. Every table returned is a projection (a table the release
    allows); the extrapolated one is only fed to the learner."""
    t1, c1 = project(table)
    if c1 <= tol or left < 2:
        return t1, c1 <= tol
    t2, c2 = project(t1)
    if c2 <= tol or left < 3:
        return t2, c2 <= tol
    r, v = t1 - table, t2 - 2 * t1 + table
    alpha = -np.sqrt(np.vdot(r, r) / max(np.vdot(v, v), 1e-300))
    alpha = min(alpha, -1.0)
    step = t2  # alpha = -1: the plain double round
    for _ in range(12):
        trial = table - 2 * alpha * r + alpha * alpha * v
        if trial.min() >= 0:
            step = trial
            break
        alpha = (alpha - 1.0) / 2  # halfway back towards the plain double round
    t3, c3 = project(step)
    return t3, c3 <= tol


def definetti(
    model,
    learner="naive_bayes",
    max_iter: int = 100,
    tol: float = 1e-6,
    seed: int = 0,
    solver: str | None = None,
    progress: bool = False,
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
    progress : print one line per iteration.

    Returns
    -------
    Result
        ``posterior()``, ``person_posterior()``, ``risk_table()``, ``bounds()`` work as for
        ``model.solve()``; ``result.history`` has one row per iteration: the learner's
        log-likelihood per record on the table it was fitted to (``log_likelihood``,
        conditional, nats), the largest change of a class posterior (``change``) and the
        seconds; ``result.solver_stats["definetti"]`` sums it up.
    """
    _arguments(max_iter, tol)
    fit = _learner(learner)
    t0 = time.perf_counter()
    result = model.solve(solver=solver)
    check(result, 0)
    values = sorted(result.cell_table()[model.sa].unique(), key=str)
    # counterfeit records (phantom classes) have no QI: the learner sees real people's
    # classes only, and the phantoms keep a flat prior (their maximum-entropy share)
    real = ~model.structure.phantom
    everyone = bool(real.all())
    qi = model.classes.loc[real, list(model.qi)].reset_index(drop=True)
    kwargs = {"encoded": encode(qi)} if fit in LEARNERS.values() else {}
    if learner == "logistic_regression":
        kwargs["seed"] = seed
    support = Support(result, values, real)
    project = projector(model, values, result, support, solver)
    sr, n = (slice(None) if everyone else support.real), support.n
    unit = bool(np.all(n == 1))
    rows: list[dict] = []
    last: dict = {}

    def round_(v):
        """One round: fit the learner to the table ``v`` (a vector over ``support``),
        project its prior (checked)."""
        t = time.perf_counter()
        table = support.dense(v)
        if everyone:
            p = fit(qi, table, **kwargs)
        else:
            p = np.full(table.shape, 1.0 / max(len(values), 1))
            p[real] = fit(qi, table[real], **kwargs)
        # the learner's log-likelihood: 0 outside the support, where the table is 0
        seen = v[sr]
        loglik = float(np.vdot(seen, np.log(np.maximum(support.of(p)[sr], 1e-300))) / seen.sum())
        new = project(p)
        moved = np.abs(new - v)
        change = float(np.max(moved if unit else moved / n, initial=0.0))
        last["prior"] = p
        rows.append(
            {"iteration": len(rows) + 1, "log_likelihood": loglik, "change": change,
             "seconds": time.perf_counter() - t}
        )  # fmt: skip
        if progress:
            print(f"deFinetti {len(rows):3d}: log-likelihood {loglik:.6f}  change {change:.2e}")
        return new, change

    v = support.of(expected_table(result, values))
    converged = False
    while len(rows) < max_iter and not converged:
        v, converged = _squarem_round(round_, v, tol, max_iter - len(rows))
    result = project.final(last["prior"])
    result.history = pd.DataFrame(rows)
    result.solver_stats["definetti"] = {
        "learner": learner if isinstance(learner, str) else getattr(learner, "__name__", "?"),
        "iterations": len(rows),
        "projection": type(project).__name__,
        "converged": converged,
        "seconds": time.perf_counter() - t0,
    }
    return result
