"""Small matplotlib helpers shared by the notebooks and benchmarks.

>>> import pandas as pd
>>> from maxent_privacy.report.plots import plot_privacy_curve
>>> table = pd.DataFrame({"K": [0, 50, 100] * 2, "kl": [0.89, 0.88, 0.87, 0.89, 0.87, 0.86],
...                       "rules": ["K+"] * 3 + ["mixed"] * 3})
>>> ax = plot_privacy_curve(table, x="K", y="kl", by="rules")
>>> [line.get_label() for line in ax.get_lines()]
['K+', 'mixed']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import ArgumentTypeError, check_columns, check_integer
from .labels import row_labels
from .safety import PLAIN, plain_label

__all__ = ["plot_posterior", "plot_privacy_curve", "plot_risk", "riskiest"]


def _axes(ax, figsize=(5.5, 3.6)):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


@dataclass(frozen=True)
class _CurveStyle:
    """The styling keywords of :func:`plot_privacy_curve`: log scales and our points'
    marker."""

    logx: bool = False
    logy: bool = False
    marker: str = "o"


def _style_of(given: dict) -> _CurveStyle:
    """:func:`plot_privacy_curve`'s styling keywords; any other keyword raises TypeError
    (as a parameter list would)."""
    unknown = [k for k in given if k not in _CurveStyle.__dataclass_fields__]
    if unknown:
        raise ArgumentTypeError(
            f"plot_privacy_curve() got an unexpected keyword argument {unknown[0]!r}"
        )
    return _CurveStyle(**given)


def plot_privacy_curve(
    data,
    x: str,
    y: str,
    by: str | None = None,
    *,
    ax=None,
    paper=None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    title: str | None = None,
    **style,
):
    """A privacy (or cost) measure ``y`` against a parameter ``x``, one line per ``by``.

    ``data`` is a long DataFrame (one row per point). ``paper``, when given, is what the
    paper reports, drawn dashed in grey next to our measurement: a DataFrame with the
    same ``x``, ``y`` (and ``by``) columns, or a dict ``{label: (xs, ys)}``. ``style``:
    ``logx``, ``logy`` (log scales, default False) and ``marker`` (of our points, default
    ``"o"``); any other keyword is a TypeError. Returns the matplotlib axes.
    """
    look = _style_of(style)
    logx, logy, marker = look.logx, look.logy, look.marker
    data = pd.DataFrame(data)
    check_columns(data, [x, y] + ([by] if by else []), "plot_privacy_curve")
    ax = _axes(ax)
    groups = data.groupby(by, sort=False) if by else [(None, data)]
    for label, part in groups:
        part = part.sort_values(x)
        shown = None if label is None else plain_label(label)  # data: `$` is not math
        ax.plot(part[x], part[y], marker=marker, label=shown)
    if paper is not None:
        if isinstance(paper, dict):
            items = [(k, np.asarray(v[0]), np.asarray(v[1])) for k, v in paper.items()]
        else:
            paper = pd.DataFrame(paper)
            pg = paper.groupby(by, sort=False) if by and by in paper else [("paper", paper)]
            items = [(k, p[x].to_numpy(), p[y].to_numpy()) for k, p in pg]
        for label, xs, ys in items:
            ax.plot(xs, ys, ls="--", color="0.55", marker="x", label=f"paper: {label}")
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel or str(x), **({} if xlabel else PLAIN))  # a column name: plain
    ax.set_ylabel(ylabel or str(y), **({} if ylabel else PLAIN))
    if title:
        ax.set_title(title)
    if by or paper is not None:
        ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return ax


#: the largest figure any helper here makes by itself, inches (at 100 dpi: 1,400 x 1,100 px)
MAX_WIDTH, MAX_HEIGHT = 14.0, 11.0
#: at most this many tick labels per axis (a table with more rows labels every k-th)
MAX_LABELS = 60
_MAX_LABEL_CHARS = 40


def _label(item) -> str:
    text = ", ".join(map(str, item)) if isinstance(item, tuple) else str(item)
    return text if len(text) <= _MAX_LABEL_CHARS else text[: _MAX_LABEL_CHARS - 1] + "\u2026"


def _ticks(n: int) -> np.ndarray:
    """Positions of the labelled ticks among ``n``: all, or every k-th up to MAX_LABELS."""
    step = max(1, -(-n // MAX_LABELS))
    return np.arange(0, n, step)


def riskiest(post: pd.DataFrame, top: int | None) -> pd.DataFrame:
    """The ``top`` rows of a posterior table with the largest maximum, worst first (ties
    in table order); the whole table, in its own order, when it has at most ``top`` rows
    or ``top`` is None."""
    if top is not None:
        check_integer(top, "top (a number of rows, or None)", minimum=1)
    if top is None or len(post) <= top:
        return post
    order = np.argsort(-post.to_numpy(dtype=float).max(axis=1, initial=0.0), kind="stable")
    return post.iloc[order[:top]]


def plot_posterior(
    post: pd.DataFrame,
    ax=None,
    cmap: str = "viridis",
    annotate: bool | None = None,
    top: int | None = None,
    title: str | None = None,
    what: str = "rows",
):
    """Heatmap of a posterior table (rows: QI values, persons or groups; columns: SA values).

    ``top`` keeps the rows with the largest maximum posterior (:func:`riskiest`); the
    title then says how many of how many ``what`` are shown. Whatever the table's size, the
    figure this makes stays within ``MAX_WIDTH`` x ``MAX_HEIGHT`` inches and labels at most
    ``MAX_LABELS`` rows and columns (every k-th beyond). Cells are annotated with their
    value when the table is small (``annotate=None``).
    """
    total = len(post)
    post = riskiest(post, top)
    if title is None and len(post) < total:
        title = f"the {len(post):,} riskiest of {total:,} {what}"
    rows, cols = post.shape
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(
            figsize=(min(MAX_WIDTH, 1.5 + 0.7 * cols), min(MAX_HEIGHT, 1 + 0.35 * rows)),
            layout="constrained",
        )
    values = post.to_numpy(dtype=float)
    im = ax.imshow(values, aspect="auto", vmin=0, vmax=1, cmap=cmap, interpolation="nearest")
    xt, yt = _ticks(cols), _ticks(rows)
    ax.set_xticks(xt)
    # labels from the data are plain text: `$\sqrt{$` is not (broken) math
    ax.set_xticklabels([_label(post.columns[j]) for j in xt], rotation=45, ha="right", **PLAIN)
    ax.set_yticks(yt)
    # rows apart however many attributes they have (the common ones go in the axis title)
    labels, common = row_labels([post.index[i] for i in yt], list(post.index.names))
    ax.set_yticklabels(labels, **PLAIN)
    if common:
        ax.set_ylabel(common, **PLAIN)
    if post.columns.name:
        ax.set_xlabel(str(post.columns.name), **PLAIN)
    if title:
        ax.set_title(title, fontsize="medium")
    if annotate is None:
        annotate = values.size <= 120
    if annotate:
        for (i, j), v in np.ndenumerate(values):
            ax.text(
                j,
                i,
                f"{v:.2f}",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if v < 0.5 else "black",
            )
    ax.figure.colorbar(im, ax=ax, label="posterior")
    return ax


def plot_risk(
    result,
    threshold: float | None = 0.5,
    ax=None,
    bins: int = 20,
    title: str | None = None,
):
    """How many people are how exposed: a histogram of each person's risk and the share of
    people at or above each risk level.

    A person's *risk* is the largest maximum-entropy posterior of their sensitive value
    (the ``maxent`` column of :func:`maxent_privacy.report.risk_table`): one value per
    person id when the release has them, else one per record (each record's (QI value,
    group) class). ``result`` is a :class:`~maxent_privacy.results.Result` or such a risk
    table. Bars (left axis): people per risk bin; line (right axis): the share of people
    whose risk is at least x. ``threshold`` draws a dashed line with the count at or
    above it (None: no line). The figure has a fixed size, whatever the number of people.

    >>> from maxent_privacy import Bucketized, MaxEntModel, datasets
    >>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
    ...                      sa="disease", group="bucket", person="name")
    >>> model = MaxEntModel(release)
    >>> model.add(model.P("Breast Cancer", gender="male") == 0)
    >>> ax = plot_risk(model.solve(), threshold=0.99)
    >>> ax.get_title()
    '2 of 10 people (20%) at risk >= 0.99'
    """
    import matplotlib.pyplot as plt

    from .risk import risk_table

    if isinstance(result, pd.DataFrame):
        table = result
    else:
        table = risk_table(result, csv_safe=False)
    risk = table["maxent"].to_numpy(dtype=float)
    weight = (
        table["records"].to_numpy(dtype=float)
        if "records" in table
        else np.ones(len(risk), dtype=float)
    )
    people = float(weight.sum())
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
    edges = np.linspace(0.0, 1.0, bins + 1)
    ax.hist(np.clip(risk, 0, 1), bins=edges, weights=weight, color="#6baed6", edgecolor="white")
    ax.set_xlim(0, 1)
    ax.set_xlabel("risk: largest posterior of a person's sensitive value")
    ax.set_ylabel("people")
    ax.yaxis.get_major_locator().set_params(integer=True)
    share = ax.twinx()
    order = np.sort(np.clip(risk, 0, 1))
    w = weight[np.argsort(np.clip(risk, 0, 1), kind="stable")]
    at_least = (w[::-1].cumsum()[::-1] / people) if people else np.zeros(0)
    if len(order):
        xs = np.concatenate([[0.0], order, [1.0]])
        ys = np.concatenate([[1.0], at_least, [0.0]])
        share.step(xs, 100 * ys, where="pre", color="#08306b", lw=1.5)
    share.set_ylim(0, 105)
    share.set_ylabel("% of people at or above", color="#08306b")
    if threshold is not None:
        n_at = float(weight[risk >= threshold - 1e-9].sum())
        ax.axvline(threshold, color="#cb181d", ls="--", lw=1.2)
        pct = 100 * n_at / people if people else 0.0
        if title is None:
            title = f"{n_at:,.0f} of {people:,.0f} people ({pct:.0f}%) at risk >= {threshold:g}"
    if title:
        ax.set_title(title, fontsize="medium")
    ax.grid(alpha=0.3, axis="y")
    return ax
