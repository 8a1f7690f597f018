"""Small matplotlib helpers shared by the notebooks and benchmarks.

>>> import pandas as pd
>>> from maxent_privacy.plotting import plot_privacy_curve
>>> table = pd.DataFrame({"K": [0, 50, 100] * 2, "kl": [0.89, 0.88, 0.87, 0.89, 0.87, 0.86],
...                       "rules": ["K+"] * 3 + ["mixed"] * 3})
>>> ax = plot_privacy_curve(table, x="K", y="kl", by="rules")
>>> [line.get_label() for line in ax.get_lines()]
['K+', 'mixed']
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["plot_privacy_curve", "plot_posterior"]


def _axes(ax, figsize=(5.5, 3.6)):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


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
    logx: bool = False,
    logy: bool = False,
    marker: str = "o",
):
    """A privacy (or cost) measure ``y`` against a parameter ``x``, one line per ``by``.

    ``data`` is a long DataFrame (one row per point). ``paper``, when given, is what the
    paper reports, drawn dashed in grey next to our measurement: a DataFrame with the
    same ``x``, ``y`` (and ``by``) columns, or a dict ``{label: (xs, ys)}``. Returns the
    matplotlib axes.
    """
    data = pd.DataFrame(data)
    for col in [x, y] + ([by] if by else []):
        if col not in data.columns:
            raise KeyError(f"plot_privacy_curve: no column {col!r} in the data")
    ax = _axes(ax)
    groups = data.groupby(by, sort=False) if by else [(None, data)]
    for label, part in groups:
        part = part.sort_values(x)
        ax.plot(part[x], part[y], marker=marker, label=None if label is None else str(label))
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
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    if title:
        ax.set_title(title)
    if by or paper is not None:
        ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return ax


def plot_posterior(
    post: pd.DataFrame, ax=None, cmap: str = "viridis", annotate: bool | None = None
):
    """Heatmap of a posterior table (rows: QI values, persons or groups; columns: SA values).

    Cells are annotated with their value when the table is small (``annotate=None``).
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(
            figsize=(1.5 + 0.7 * post.shape[1], 1 + 0.35 * post.shape[0]), layout="constrained"
        )
    values = post.to_numpy(dtype=float)
    im = ax.imshow(values, aspect="auto", vmin=0, vmax=1, cmap=cmap)
    ax.set_xticks(np.arange(post.shape[1]))
    ax.set_xticklabels([str(c) for c in post.columns], rotation=45, ha="right")
    ax.set_yticks(np.arange(post.shape[0]))
    labels = [", ".join(map(str, i)) if isinstance(i, tuple) else str(i) for i in post.index]
    ax.set_yticklabels(labels)
    if post.columns.name:
        ax.set_xlabel(str(post.columns.name))
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
    plt.colorbar(im, ax=ax, label="posterior")
    return ax
