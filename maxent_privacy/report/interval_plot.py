"""Each at-risk person's interval at a glance: a bar from ``lower`` to ``upper`` of their
likeliest value, with the maximum-entropy estimate as a dot (the report's figure of the
riskiest people, in place of a heat map of every value).

>>> import pandas as pd
>>> from matplotlib.figure import Figure
>>> table = pd.DataFrame({"name": ["Cathy", "Allen"], "value": ["Breast Cancer", "Flu"],
...                       "maxent": [1.0, 0.6667], "lower": [1.0, 0.0], "upper": [1.0, 1.0]})
>>> ax = plot_intervals(table, ["name"], 0.5, ax=Figure().subplots())
>>> [t.get_text() for t in ax.get_yticklabels()]
['Cathy: Breast Cancer', 'Allen: Flu']
"""

from __future__ import annotations

import numpy as np

from .safety import PLAIN

__all__ = ["MAX_ROWS", "plot_intervals"]

#: at most this many people drawn (the worst first)
MAX_ROWS = 40
_LABEL_CHARS = 48


def _label(row, keys) -> str:
    text = ", ".join(str(row[k]) for k in keys) + f": {row['value']}"
    return text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1] + "\u2026"


def plot_intervals(table, keys, threshold: float, ax, top: int = MAX_ROWS):
    """Draw the first ``top`` rows of a risk table (worst first, top to bottom): a bar
    from ``lower`` to ``upper`` (when the table has them), the ``maxent`` dot, and the
    threshold as a dashed line; rows labelled by ``keys`` and the value (plain text)."""
    rows = table.head(top)
    n = len(rows)
    y = np.arange(n)[::-1]
    maxent = rows["maxent"].to_numpy(dtype=float)
    if "lower" in rows and "upper" in rows and n:
        lo = rows["lower"].to_numpy(dtype=float)
        hi = rows["upper"].to_numpy(dtype=float)
        ax.hlines(y, lo, hi, color="#9ecae1", lw=6, label="worst-case interval (lower-upper)")
    ax.plot(maxent, y, "o", color="#08306b", ms=5, label="maximum-entropy estimate")
    ax.axvline(threshold, color="#cb181d", ls="--", lw=1.2, label=f"threshold {threshold:g}")
    ax.set_yticks(y)
    ax.set_yticklabels([_label(r, keys) for _, r in rows.iterrows()], fontsize=8, **PLAIN)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.7, max(n, 1) - 0.3)
    ax.set_xlabel("probability of the likeliest value")
    ax.grid(alpha=0.3, axis="x")
    if n:
        ax.legend(fontsize="small", loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=3)
    return ax
