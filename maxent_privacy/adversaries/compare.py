"""A scale of adversaries on one release: maximum entropy, with knowledge, learned, the
worst case, side by side, and (with the original table) how right each of them is.

:func:`compare_adversaries` puts, per person (or record class) and sensitive value:

* ``maxent``: the maximum-entropy estimate of the releases alone (no facts);
* ``knowledge``: maximum entropy with the stated knowledge (the model's own facts and
  ``knowledge``); left out when there is none;
* ``learned``: Kifer's deFinetti adversary (:func:`~maxent_privacy.adversaries.definetti.
  definetti`), which learns the QI -> SA correlation from the release itself, on the same
  model as ``knowledge`` (the releases and every hard fact);
* ``lower``, ``upper``: the LP bounds over every table that model allows
  (:meth:`MaxEntModel.bounds`); every estimate above it lies between them;
* ``certain``, ``possible`` (``exact=True``): the lowest and highest value over possible
  worlds (integral tables); for a person (``by="person"``) 1 or 0: the value is certain
  for them, or possible.

Every estimate is the same for all people of a record class (nothing published tells
them apart), so the scores below are computed per class, weighted by its size, and are
exact per person. With ``truth`` (the original table, which the publisher has), per
adversary:

* ``accuracy``: the share of people whose most likely value (argmax) is their own; a tie
  between k values counts 1/k (a guess among them at random);
* ``truth>=t``: the share of people whose own value gets probability at least t;
* ``mean_p_truth``: the mean probability given to people's own values;
* ``kl``: Du et al. Section 7.1, sum_q P(q) KL(P(S|q) || P*(S|q)) in nats, by QI value
  (:func:`~maxent_privacy.adversaries.metrics.estimation_accuracy`), for the estimates.

Without ``truth`` the summary still counts, per adversary, the people some value of whom
reaches each threshold (``people>=t``).

>>> import pandas as pd
>>> from maxent_privacy import Bucketized, MaxEntModel
>>> rows = pd.DataFrame({"sex": list("FFM" "FM" "FMM"), "g": [1, 1, 1, 2, 2, 3, 3, 3],
...                      "s": ["flu", "flu", "hiv", "flu", "hiv", "flu", "hiv", "hiv"]})
>>> release = Bucketized(rows, qi=["sex"], sa="s", group="g")
>>> scale = compare_adversaries(MaxEntModel(release), truth=rows, by="class")
>>> summary = scale.summary.rename_axis(None)
>>> summary.loc[["maxent", "learned", "upper"], ["accuracy", "truth>=0.5"]]
         accuracy  truth>=0.5
maxent      0.625        0.75
learned     0.750        0.75
upper         NaN        1.00

Maximum entropy gives each bucket's frequencies to everyone in it: it guesses flu for
bucket 1's man (wrong) and tosses a coin in bucket 2 (5 of 8 right). The learned
adversary sees that women go with flu in buckets 1 and 3 and men with hiv, and guesses
bucket 2 right (6 of 8); in buckets 1 and 3 the counts still outvote it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import KnowledgeError, ReleaseError
from .definetti import definetti
from .metrics import estimation_accuracy
from .projection import expected_table

__all__ = ["ADVERSARIES", "Comparison", "compare_adversaries", "without_facts"]

#: the adversaries of a comparison, in order, and what each is
ADVERSARIES = {
    "maxent": "maximum entropy, the releases alone",
    "knowledge": "maximum entropy with the stated knowledge",
    "learned": "deFinetti: learned from the release",
    "lower": "LP lower bound (every table)",
    "upper": "LP upper bound (worst case)",
    "certain": "lowest over possible worlds",
    "possible": "highest over possible worlds",
}
#: the adversaries that are estimates (a Result each): accuracy and KL apply to them
ESTIMATES = ("maxent", "knowledge", "learned")
#: a probability this close below a threshold reaches it; ties of the argmax this close
CLOSE = 1e-9


@dataclass
class Comparison:
    """What :func:`compare_adversaries` returns.

    Attributes
    ----------
    table : DataFrame
        One row per (person, value) (``by="person"``) or (class, value) (``by="class"``,
        with ``records``, the class's size): one column per adversary, and ``truth``
        with the original table (a person: 1 on their own value; a class: the share of it
        that holds the value).
    summary : DataFrame
        One row per adversary: ``people>=t`` per threshold, and with the truth
        ``accuracy``, ``truth>=t``, ``mean_p_truth``, ``kl`` (see the module docstring).
    results : dict
        The :class:`~maxent_privacy.results.Result` of each estimate (``maxent``,
        ``knowledge``, ``learned``).
    classes : DataFrame
        The record classes (``model.classes``): the ``class`` level of ``table``.
    """

    table: pd.DataFrame
    summary: pd.DataFrame
    results: dict
    classes: pd.DataFrame
    by: str
    thresholds: tuple
    people: int
    has_truth: bool = field(default=False)

    def plot(self, axes=None):
        """The people each adversary puts at risk (the share of people whose own value,
        with the truth, else some value, reaches each threshold) and, with the truth, how
        often each guesses right. Returns the axes (matplotlib)."""
        import matplotlib.pyplot as plt

        from ..report.safety import PLAIN, plain_label

        panels = 2 if self.has_truth else 1
        if axes is None:
            _, axes = plt.subplots(1, panels, figsize=(6.5 * panels, 4), layout="constrained")
        axes = np.atleast_1d(axes)
        s = self.summary
        names = list(s.index)
        x = np.arange(len(names))
        width = 0.8 / len(self.thresholds)
        ax = axes[0]
        for j, t in enumerate(self.thresholds):
            if self.has_truth:
                share = s[f"truth>={t:g}"].to_numpy(dtype=float)
            else:
                share = s[f"people>={t:g}"].to_numpy(dtype=float) / max(self.people, 1)
            ax.bar(x + (j - (len(self.thresholds) - 1) / 2) * width, share, width,
                   label=plain_label(f"P >= {t:g}"))  # fmt: skip
        ax.set_xticks(x, names, rotation=30, ha="right", **PLAIN)
        what = "own value" if self.has_truth else "some value"
        ax.set_ylabel(f"share of people whose {what} reaches P", **PLAIN)
        ax.set_ylim(0, 1.05)
        ax.set_title(f"People at risk, by adversary ({self.people:,} people)", **PLAIN)
        ax.legend(fontsize=8)
        if self.has_truth:
            ax = axes[1]
            est = [n for n in names if n in ESTIMATES]
            xe = np.arange(len(est))
            ax.bar(xe - 0.2, s.loc[est, "accuracy"], 0.4, label="accuracy of the argmax")
            ax.bar(xe + 0.2, s.loc[est, "mean_p_truth"], 0.4, label="mean P(own value)")
            ax.set_xticks(xe, est, **PLAIN)
            ax.set_ylim(0, 1.05)
            ax.set_title("How right each estimate is", **PLAIN)
            ax.legend(fontsize=8)
        return axes


# ------------------------------------------------------------------ arguments
def _check_arguments(model, by, threshold, exact) -> tuple:
    if by not in ("person", "class"):
        raise ValueError(f"by must be 'person' or 'class', got {by!r}")
    ts = (threshold,) if np.isscalar(threshold) else tuple(threshold)
    for t in ts:
        ok = isinstance(t, (int, float, np.integer, np.floating)) and not isinstance(t, bool)
        if not ok or not 0 < t <= 1:  # NaN too
            raise ValueError(f"every threshold must be a number in (0, 1], got {t!r}")
    if not ts:
        raise ValueError("give at least one threshold")
    if not isinstance(exact, (bool, np.bool_)):
        raise ValueError(f"exact must be True or False, got {exact!r}")
    if model.persons:
        raise KnowledgeError(
            "compare_adversaries compares the releases' own people; build the model "
            "without model.person(...) (individuals singled out are not supported)"
        )
    return tuple(float(t) for t in ts)


# ------------------------------------------------------------------ the models
def without_facts(model):
    """A model of the same releases (and populations), without facts: the same classes
    and cells in the same order."""
    twin = type(model)(model.releases, populations=model.populations)
    if twin.n_cells != model.n_cells or len(twin.classes) != len(model.classes):
        raise ReleaseError("the model could not be rebuilt from its releases")
    return twin


def _add_knowledge(model, knowledge) -> None:
    """Add ``knowledge`` to ``model``: a callable of the model, (name, constraint) pairs,
    or anything ``model.add`` takes."""
    if callable(knowledge) and not hasattr(knowledge, "_maxent_facts_"):
        knowledge = knowledge(model)
    items = knowledge if isinstance(knowledge, list) else [knowledge]
    for item in items:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            model.add(item[1], name=item[0])
        else:
            model.add(item)


def _models(model, knowledge):
    """(the releases alone, the releases with every fact or None)."""
    if knowledge is None:
        if not model.facts:
            return model, None
        return without_facts(model), model
    stated = without_facts(model)
    same = sp.identity(model.n_cells, format="csr")
    stated.facts = [f.remapped(same, model.x, stated.x) for f in model.facts]
    try:
        _add_knowledge(stated, knowledge)
    except KnowledgeError as err:
        if "is not this model's" in str(err):
            raise KnowledgeError(
                f"{err}. Constraints built with model.P(...) belong to that model: add "
                "them to the model (model.add) or give knowledge as a function "
                "lambda m: [m.P(...) == ...]"
            ) from None
        raise
    return (model if not model.facts else without_facts(model)), stated


# ------------------------------------------------------------------ per class
def _class_estimate(result, values) -> np.ndarray:
    """P[c, s]: the share of class c that holds s, by ``result``."""
    n = np.asarray(result.structure.class_n, dtype=float)[:, None]
    return expected_table(result, values) / n


def _class_keys(model) -> pd.MultiIndex:
    """The (QI, group) key of each class of a single release without people."""
    return pd.MultiIndex.from_frame(model.classes[list(model.qi) + [model.group]])


def _record_class(model) -> pd.Series:
    """Class of every record of a single release (people: the records, by row label)."""
    records = model.structure.records
    keys = list(model.qi) + [model.group]
    index = _class_keys(model)
    cls = index.get_indexer(pd.MultiIndex.from_frame(records[keys]))
    if (cls < 0).any():
        raise ReleaseError("a record of the release is in no record class")
    return pd.Series(cls, index=records.index, name="class")


def _people(model) -> pd.Series:
    """Person (id, or a record's row label) -> class."""
    pc = model.structure.person_class
    if pc is not None:
        return pd.Series(np.asarray(pc, dtype=np.int64), index=pc.index, name="class")
    return _record_class(model)


def _grid(frame, column, keys, values) -> np.ndarray:
    """``frame[column]`` (indexed by (key..., value)) as a [len(keys), len(values)] array,
    0 where the frame has no row."""
    col = frame[column].astype(float)
    names = list(frame.index.names)
    if isinstance(keys, pd.MultiIndex):
        tuples = [(*k, v) for k in keys for v in values]
    else:
        tuples = [(k, v) for k in keys for v in values]
    full = pd.MultiIndex.from_tuples(tuples, names=names)
    return col.reindex(full).fillna(0.0).to_numpy().reshape(len(keys), len(values))


def _class_bounds(model, by, values, exact, options) -> dict:
    """Per class and value: ``lower``, ``upper`` (and ``certain``, ``possible``), of the
    person's own probability (``by="person"``) or of the class's share (``"class"``)."""
    n = np.asarray(model.structure.class_n, dtype=float)[:, None]
    pc = model.structure.person_class
    if pc is not None:  # people known: the library's own rows, one person per class
        frame = model.bounds(by=by, exact=exact, **options)
        first = pd.Series(pc.index, index=np.asarray(pc, dtype=np.int64))
        first = first.groupby(level=0).first()
        reps = first.reindex(np.arange(len(n))).to_numpy()
        out = {}
        for name, col in (("lower", "lower"), ("upper", "upper")):
            src = ("lp_" + col) if exact else col
            out[name] = _grid(frame, src, reps, values)
        if exact:
            out["certain"] = _grid(frame, "lower", reps, values)
            out["possible"] = _grid(frame, "upper", reps, values)
        return out
    # one release without people: a class is a (QI value, group) row
    from ..bounds.frame import person_bounds

    frame = model.bounds(by="group", exact=exact, **options)
    keys = _class_keys(model)

    def share(col):
        return _grid(frame, col, keys, values)

    lo, hi = (share("lp_lower"), share("lp_upper")) if exact else (share("lower"), share("upper"))
    if by == "class":
        out = {"lower": lo, "upper": hi}
        if exact:
            out["certain"], out["possible"] = share("lower"), share("upper")
        return out
    lower, upper = person_bounds(lo * n, hi * n, n)  # an individual of the class
    out = {"lower": lower, "upper": upper}
    if exact:
        lo_x = _grid(frame, "lower_exact", keys, values).astype(bool)
        hi_x = _grid(frame, "upper_exact", keys, values).astype(bool)
        out["certain"] = np.where(lo_x, (share("lower") * n >= n - 0.5).astype(float), lower)
        out["possible"] = np.where(hi_x, (share("upper") * n >= 0.5).astype(float), upper)
    return out


# ------------------------------------------------------------------ the truth
def _truth_counts(model, truth, people, values) -> tuple[np.ndarray, pd.Series | None]:
    """T[c, s] (people of class c whose true value is s) and, where people can be
    named in ``truth``, each person's true value."""
    sa = model.sa
    if not isinstance(truth, pd.DataFrame):
        raise ReleaseError(f"truth must be a DataFrame, not a {type(truth).__name__}")
    missing = [c for c in [*model.qi, sa] if c not in truth.columns]
    if missing:
        raise ReleaseError(f"column {missing[0]!r} is not in the truth table")
    k = len(model.classes)
    col = pd.Index(values)
    if model.structure.person_class is not None:  # by person id
        pid = model.release.person
        ids = truth[pid] if pid is not None and pid in truth.columns else truth.index
        own = pd.Series(truth[sa].to_numpy(), index=pd.Index(ids))
        if own.index.has_duplicates:
            raise ReleaseError("the truth table names a person twice")
        lost = people.index.difference(own.index)
        if len(lost):
            raise ReleaseError(
                f"{len(lost)} people of the releases are not in the truth table (such as "
                f"{lost[0]!r}); give their person ids as its index or person column"
            )
        own = own.reindex(people.index)
    else:
        records = model.structure.records
        table = truth
        if model.group not in table.columns:  # the original table, by row label
            if not records.index.isin(table.index).all():
                raise ReleaseError(
                    f"the truth table has no column {model.group!r} and its row labels are "
                    "not the release's: give the release's frame, or the original table "
                    "with the row labels the release kept"
                )
            table = table.loc[records.index].assign(**{model.group: records[model.group]})
        cells = model.cells[model.structure.value_cell].reset_index(drop=True)
        x = model.true_assignment(table)[model.structure.value_cell]
        counts = np.zeros((k, len(values)))
        np.add.at(counts, (cells["cls"].to_numpy(), col.get_indexer(cells[sa])), x)
        own = None
        if records.index.isin(table.index).all() and not table.index.has_duplicates:
            own = table.loc[records.index, sa]
        return counts, own
    codes = col.get_indexer(own.to_numpy())
    if (codes < 0).any():
        bad = own[codes < 0].iloc[0]
        raise ReleaseError(f"the truth holds the value {bad!r}, which no release publishes")
    counts = np.zeros((k, len(values)))
    np.add.at(counts, (people.to_numpy(), codes), 1.0)
    return counts, own


def _scores(est, truth_counts, thresholds) -> dict:
    """The truth metrics of one adversary's per-class table ``est``."""
    N = truth_counts.sum()
    top = est.max(axis=1, keepdims=True)
    tied = est >= top - CLOSE
    hit = (truth_counts * tied).sum(axis=1) / tied.sum(axis=1)
    out = {"accuracy": float(hit.sum() / N)}
    for t in thresholds:
        out[f"truth>={t:g}"] = float((truth_counts * (est >= t - CLOSE)).sum() / N)
    out["mean_p_truth"] = float((truth_counts * est).sum() / N)
    return out


# ------------------------------------------------------------------ the comparison
def _table(per_class: dict, people: pd.Series, n, values, by: str, sa: str) -> pd.DataFrame:
    """One row per (person or class, value), one column per adversary."""
    if by == "person":
        rows = people.to_numpy()
        keys = people.index.rename("person")
    else:
        rows = np.arange(len(n))
        keys = pd.RangeIndex(len(n), name="class")
    index = pd.MultiIndex.from_product([keys, pd.Index(values, name=sa)])
    table = pd.DataFrame(
        {name: per_class[name][rows].ravel() for name in ADVERSARIES if name in per_class},
        index=index,
    )
    if by == "class":
        table.insert(0, "records", np.repeat(n.astype(int), len(values)))
    return table


def _summary(per_class: dict, n, thresholds) -> pd.DataFrame:
    """Per adversary: the people some value of whom reaches each threshold."""
    summary = pd.DataFrame(index=[a for a in ADVERSARIES if a in per_class])
    summary.index.name = "adversary"
    for t in thresholds:
        summary[f"people>={t:g}"] = [
            int((n * (per_class[a].max(axis=1) >= t - CLOSE)).sum()) for a in summary.index
        ]
    return summary


def _score_truth(table, summary, data, estimates, thresholds, by: str) -> None:
    """With the original table: the ``truth`` column and each adversary's scores."""
    full, truth, people = data
    per_class, results = estimates
    values = table.index.get_level_values(-1).unique()
    real = ~full.structure.phantom  # counterfeit records are no one
    n = np.asarray(full.structure.class_n, dtype=float)[real]
    counts, own = _truth_counts(full, truth, people, list(values))
    counts = counts[real]
    if by == "class":
        table["truth"] = (counts / n[:, None]).ravel()
    elif own is not None:
        own = own.reindex(people.index).to_numpy()[:, None]
        table["truth"] = (own == np.asarray(values)[None, :]).astype(float).ravel()
    scores = {a: _scores(per_class[a], counts, thresholds) for a in summary.index}
    for col in next(iter(scores.values())):
        summary[col] = [scores[a][col] for a in summary.index]
    summary.loc[~summary.index.isin(ESTIMATES), "accuracy"] = np.nan
    summary["kl"] = [
        estimation_accuracy(results[a], truth) if a in ESTIMATES else np.nan for a in summary.index
    ]


def compare_adversaries(
    model,
    truth: pd.DataFrame | None = None,
    knowledge=None,
    *,
    by: str = "person",
    threshold=(0.5, 0.8, 1.0),
    learner="naive_bayes",
    max_iter: int = 100,
    tol: float = 1e-6,
    seed: int = 0,
    exact: bool = False,
    bounds: bool = True,
    solver: str | None = None,
    **bounds_options,
) -> Comparison:
    """A scale of adversaries on one model, per person (or class) and value.

    Parameters
    ----------
    model : MaxEntModel
        The releases, and the knowledge stated as its facts (``model.add``). Without
        facts and ``knowledge``, the ``knowledge`` adversary is left out.
    truth : DataFrame, optional
        The original table with the QI and sensitive columns. People are matched by
        person id when the releases have them (the ``person`` column or the index, as
        in the population), else by the release's group column (the release's own frame
        holds the true values) or, without it, by row label (the table the release was
        made from: anonymizers keep its row labels).
    knowledge : optional
        More knowledge for the ``knowledge`` (and learned, and bounds) adversary, added
        to a copy of the model (the model is not changed): what ``model.add`` takes that
        is not built on one model's variable (``rules.top(k, k)``, vague or soft
        knowledge), (name, constraint) pairs, or a function ``f(m)`` returning them
        built with ``m.P(...)``.
    by : "person" (default) or "class"
        Rows per person (a release without person ids: per record, by row label) with
        each individual's bounds, or per record class with its share's bounds
        (:meth:`MaxEntModel.bounds`).
    threshold : float or tuple
        The probabilities at which a person counts as at risk.
    learner, max_iter, tol, seed : the deFinetti attack's
        (:func:`~maxent_privacy.adversaries.definetti.definetti`).
    exact : bool
        Also the bounds over possible worlds (``certain``, ``possible``): integer
        programs, slower.
    bounds : bool
        False leaves the bounds out (``lower``, ``upper``): on generalized releases with a
        population they are many LPs (minutes for thousands of people).
    solver : str, optional
        The solver of every estimate.
    bounds_options : passed to :meth:`MaxEntModel.bounds` (``time_limit``, ...).

    Returns
    -------
    Comparison
        ``.table``, ``.summary``, ``.results``, ``.plot()``.
    """
    thresholds = _check_arguments(model, by, threshold, exact)
    if exact and not bounds:
        raise ValueError("exact=True needs bounds=True")
    base, stated = _models(model, knowledge)
    full = stated if stated is not None else base
    results = {"maxent": base.solve(solver=solver)}
    if stated is not None:
        results["knowledge"] = stated.solve(solver=solver)
    results["learned"] = definetti(
        full, learner=learner, max_iter=max_iter, tol=tol, seed=seed, solver=solver
    )
    values = sorted(results["maxent"].cell_table()[model.sa].unique().tolist(), key=str)
    per_class = {name: _class_estimate(r, values) for name, r in results.items()}
    if bounds:
        per_class.update(_class_bounds(full, by, values, exact, bounds_options))

    # counterfeit records (phantom classes, the last ones) are no one: no row, no count
    real = ~full.structure.phantom
    per_class = {name: table[real] for name, table in per_class.items()}
    n = np.asarray(full.structure.class_n, dtype=float)[real]
    people = _people(full)
    table = _table(per_class, people, n, values, by, model.sa)
    summary = _summary(per_class, n, thresholds)
    if truth is not None:
        _score_truth(table, summary, (full, truth, people), (per_class, results), thresholds, by)
    return Comparison(
        table=table,
        summary=summary,
        results=results,
        classes=full.classes[real] if not real.all() else full.classes,
        by=by,
        thresholds=thresholds,
        people=int(n.sum()),
        has_truth=truth is not None,
    )
