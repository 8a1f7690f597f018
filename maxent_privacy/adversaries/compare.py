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

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._validation import REACHES, ArgumentError, check_choice, check_threshold
from ..errors import KnowledgeError, ReleaseError
from ..knowledge.normalise import as_knowledge
from .builtin import without_facts
from .metrics import estimation_accuracy
from .registry import ADVERSARY_REGISTRY, Adversary, class_of, get_adversary

__all__ = ["Comparison", "columns", "compare_adversaries", "without_facts"]

#: a probability this close below a threshold reaches it; ties of the argmax this close
CLOSE = REACHES
#: the options of the learned adversary (the rest go to the bounds)
LEARNED_OPTIONS = ("learner", "max_iter", "tol", "seed")


def columns(adversaries=None) -> dict:
    """Column of a comparison -> what it is, for ``adversaries`` (default: every registered
    one), in registration order."""
    out = {}
    for adv in adversaries if adversaries is not None else ADVERSARY_REGISTRY.values():
        names = adv.column_names()
        if adv.interval:
            out[names[0]] = f"{adv.description}: lower"
            out[names[1]] = f"{adv.description}: upper"
        else:
            out[names[0]] = adv.description
    return out


def __getattr__(name: str):
    if name == "ADVERSARIES":  # the old name of columns(): the columns of the registry
        return columns()
    if name == "ESTIMATES":
        return tuple(a.name for a in ADVERSARY_REGISTRY.values() if not a.interval)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    #: the columns that are point estimates (accuracy applies to them)
    estimates: tuple = ("maxent", "knowledge", "learned")

    def plot(self, axes=None):
        """The people each adversary puts at risk (the share of people whose own value,
        with the truth, else some value, reaches each threshold) and, with the truth, how
        often each guesses right. Returns the axes (matplotlib)."""
        import matplotlib.pyplot as plt

        from ..safety import PLAIN, plain_label

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
            est = [n for n in names if n in self.estimates]
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
    check_choice(by, "by", ("person", "class"))
    ts = (threshold,) if np.isscalar(threshold) else tuple(threshold)
    if not ts:
        raise ArgumentError("threshold: give at least one threshold")
    for t in ts:
        check_threshold(t, "every threshold")
    if not isinstance(exact, (bool, np.bool_)):
        raise ArgumentError(f"exact must be True or False, got {exact!r:.60}")
    if model.persons:
        raise KnowledgeError(
            "compare_adversaries compares the releases' own people; build the model "
            "without model.person(...) (individuals singled out are not supported)"
        )
    return tuple(float(t) for t in ts)


def _check_bounds(bounds, exact) -> str:
    """``bounds`` in the one vocabulary ("auto", "all", "none"; True/False deprecated)."""
    if isinstance(bounds, (bool, np.bool_)):
        warnings.warn(
            "compare_adversaries: bounds=True/False is deprecated; use bounds='all' or "
            "'none' (the report's vocabulary)",
            DeprecationWarning,
            stacklevel=3,
        )
        bounds = "all" if bounds else "none"
    bounds = check_choice(bounds, "bounds", ("auto", "all", "none"))
    if exact and bounds == "none":
        raise ArgumentError("exact=True needs the bounds (bounds='all'), got bounds='none'")
    return bounds


def _chosen(adversaries, model, bounds: str, exact: bool) -> list[Adversary]:
    """The adversaries of a comparison: those named, or every registered one that applies
    (bounds only unless bounds="none", possible worlds only with exact=True)."""
    if adversaries is not None:
        names = [adversaries] if isinstance(adversaries, (str, Adversary)) else adversaries
        chosen = list(dict.fromkeys(get_adversary(a, what="adversaries") for a in names))
        if not any(a.name == "maxent" for a in chosen):
            chosen.insert(0, get_adversary("maxent"))  # the base every other is read against
        return chosen
    keep = {"estimate": True, "bounds": bounds != "none", "exact": exact}
    return [
        a
        for a in ADVERSARY_REGISTRY.values()
        if keep[a.tier] and not a.requires_truth and a.applies(model)
    ]


# ------------------------------------------------------------------ the models
def _stated(model, knowledge):
    """The model with every fact (its own and ``knowledge``), or the model itself."""
    if knowledge is None:
        return model
    add = as_knowledge(knowledge)
    if add is None:
        return model
    stated = without_facts(model)
    same = sp.identity(model.n_cells, format="csr")
    stated.facts = [f.remapped(same, model.x, stated.x) for f in model.facts]
    try:
        add(stated)
    except KnowledgeError as err:
        if "is not this model's" in str(err):
            raise KnowledgeError(
                f"{err}. Constraints built with model.P(...) belong to that model: add "
                "them to the model (model.add) or give knowledge as a function "
                "lambda m: [m.P(...) == ...]"
            ) from None
        raise
    return stated


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
    """One row per (person or class, value), one column per adversary's column."""
    if by == "person":
        rows = people.to_numpy()
        keys = people.index.rename("person")
    else:
        rows = np.arange(len(n))
        keys = pd.RangeIndex(len(n), name="class")
    index = pd.MultiIndex.from_product([keys, pd.Index(values, name=sa)])
    table = pd.DataFrame({name: arr[rows].ravel() for name, arr in per_class.items()}, index=index)
    if by == "class":
        table.insert(0, "records", np.repeat(n.astype(int), len(values)))
    return table


def _summary(per_class: dict, n, thresholds) -> pd.DataFrame:
    """Per adversary's column: the people some value of whom reaches each threshold."""
    summary = pd.DataFrame(index=list(per_class))
    summary.index.name = "adversary"
    for t in thresholds:
        summary[f"people>={t:g}"] = [
            int((n * (per_class[a].max(axis=1) >= t - CLOSE)).sum()) for a in summary.index
        ]
    return summary


def _score_truth(table, summary, data, estimates, thresholds, by: str) -> None:
    """With the original table: the ``truth`` column and each adversary's scores."""
    full, truth, people = data
    per_class, results, points = estimates
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
    summary.loc[~summary.index.isin(points), "accuracy"] = np.nan
    summary["kl"] = [
        estimation_accuracy(results[a], truth) if a in results else np.nan for a in summary.index
    ]


def _assess_all(chosen, full, values, by, options) -> tuple[dict, dict]:
    """Each adversary's arrays [class, value] (one per column) and the Results of those
    that give one."""
    per_class, results, memo = {}, {}, {}
    for adv in chosen:
        arrays = adv.per_class(full, values, by, options, memo)
        if set(arrays) != set(adv.column_names()):
            raise ReleaseError(
                f"adversary {adv.name!r} gave columns {sorted(arrays)}, not its "
                f"{list(adv.column_names())}"
            )
        for name in adv.column_names():
            if name in per_class:
                raise ArgumentError(f"two adversaries of the comparison have a column {name!r}")
            per_class[name] = np.asarray(arrays[name], dtype=float)
        got = memo.get(("result", adv.name))
        if got is not None:
            results[adv.name] = got
    return per_class, results


def compare_adversaries(
    model,
    truth: pd.DataFrame | None = None,
    knowledge=None,
    *,
    by: str = "person",
    threshold=(0.5, 0.8, 1.0),
    adversaries=None,
    exact: bool = False,
    bounds="all",
    solver: str | None = None,
    **options,
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
        to a copy of the model (the model is not changed), read as everywhere
        (:func:`~maxent_privacy.knowledge.normalise.as_knowledge`): knowledge-file text or
        a Path to a file, Statements, what ``model.add`` takes that is not built on one
        model's variable (``rules.top(k, k)``, vague or soft knowledge), (name, constraint)
        pairs, or a function ``f(m)`` returning them built with ``m.P(...)``.
    by : "person" (default) or "class"
        Rows per person (a release without person ids: per record, by row label) with
        each individual's bounds, or per record class with its share's bounds
        (:meth:`MaxEntModel.bounds`).
    threshold : float or tuple
        The probabilities at which a person counts as at risk.
    adversaries : names or Adversary objects, optional
        The adversaries to compare (``maxent`` is always one). Default: every registered
        adversary (:data:`~maxent_privacy.adversaries.ADVERSARY_REGISTRY`) that applies:
        the bounds unless ``bounds="none"``, the possible worlds with ``exact=True``.
    exact : bool
        Also the bounds over possible worlds (``certain``, ``possible``): integer
        programs, slower.
    bounds : "all" (default), "auto" (the same here) or "none"
        "none" leaves the bounds out (``lower``, ``upper``): on generalized releases with a
        population they are many LPs (minutes for thousands of people).
    solver : str, optional
        The solver of every estimate.
    options : the adversaries' options: ``learner``, ``max_iter``, ``tol``, ``seed`` for the
        deFinetti attack (:func:`~maxent_privacy.adversaries.definetti.definetti`), the
        rest to :meth:`MaxEntModel.bounds` (``time_limit``, ...).

    Returns
    -------
    Comparison
        ``.table``, ``.summary``, ``.results``, ``.plot()``.
    """
    thresholds = _check_arguments(model, by, threshold, exact)
    bounds = _check_bounds(bounds, exact)
    full = _stated(model, knowledge)
    chosen = _chosen(adversaries, full, bounds, exact)
    learned = {k: options.pop(k) for k in LEARNED_OPTIONS if k in options}
    settings = {"solver": solver, **learned, "exact": exact, "bounds_options": options}
    values = sorted(full.cells[full.sa].unique().tolist(), key=str)
    per_class, results = _assess_all(chosen, full, values, by, settings)

    # counterfeit records (phantom classes, the last ones) are no one: no row, no count
    real = ~full.structure.phantom
    per_class = {name: table[real] for name, table in per_class.items()}
    n = np.asarray(full.structure.class_n, dtype=float)[real]
    people = class_of(full)  # person (id, or a record's row label) -> class
    table = _table(per_class, people, n, values, by, model.sa)
    summary = _summary(per_class, n, thresholds)
    points = tuple(a.column_names()[0] for a in chosen if not a.interval)
    if truth is not None:
        data = (per_class, results, points)
        _score_truth(table, summary, (full, truth, people), data, thresholds, by)
    return Comparison(
        table=table,
        summary=summary,
        results=results,
        classes=full.classes[real] if not real.all() else full.classes,
        by=by,
        thresholds=thresholds,
        people=int(n.sum()),
        has_truth=truth is not None,
        estimates=points,
    )
