"""The page of published counts tables: what was published, which suppressed cells are
recovered and how tightly, how much of the microdata is pinned, and the
maximum-entropy table's certificate (``maxent-privacy audit --html`` and
``maxent-privacy report --tables``; see ``docs/tables.md`` for the model).

:func:`audit_frame` stacks the audit of every published table of a
:class:`~maxent_privacy.tables.TableModel` (``model.bounds(by="cell", table=t, ...)``) into
one frame, a ``table`` column first, with each cell's maximum-entropy estimate and whether
it is recovered exactly (counts are whole numbers: a cell whose bounds, rounded inward,
meet is known); :func:`render_tables_report` makes the self-contained HTML page (the
report's style, figures embedded as PNG, every value from the data escaped).

>>> import pandas as pd
>>> from maxent_privacy import MaxEntModel, Tabulated
>>> cross = Tabulated(pd.DataFrame({"sex": ["F", "F", "M", "M"], "region": ["N", "S"] * 2,
...                                 "count": [3, "x", 2, 4]}), qi=["sex", "region"],
...                   name="cross.csv")
>>> by_sex = Tabulated(pd.DataFrame({"sex": ["F", "M"], "count": [8, 6]}), qi=["sex"],
...                    name="sex.csv")
>>> model = MaxEntModel([cross, by_sex])
>>> audit = audit_frame(model, model.solve())
>>> audit[audit["suppressed"]][["table", "sex", "region", "lower", "upper", "exposed"]]
       table sex region  lower  upper  exposed
1  cross.csv   F      S    5.0    5.0     True
>>> "<html" in render_tables_report(model, model.solve(), audit)
True
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from .html import _png, environment
from .safety import PLAIN

__all__ = [
    "DEFAULT_PROTECTION",
    "MAX_CELLS_SHOWN",
    "audit_frame",
    "audit_summary",
    "cell_words",
    "plot_cell_intervals",
    "recovered",
    "render_tables_report",
]

#: the protection when none is given: an interval narrower than one record (the cell is
#: known to within less than one count) exposes it
DEFAULT_PROTECTION = 1.0
#: suppressed cells listed on the page (the narrowest first); the CSV has every one
MAX_CELLS_SHOWN = 200
#: cells drawn in the figure of intervals (the narrowest first)
MAX_CELLS_DRAWN = 40
#: the columns the audit adds besides the bounds' own
_OURS = ("table", "estimate", "recovered")
#: a bound counts as whole within this (records)
_WHOLE = 1e-7
_LABEL_CHARS = 48


# ------------------------------------------------------------------------ the audit
def _one_audit(model, result, table, options: dict) -> pd.DataFrame:
    frame = model.bounds(by="cell", table=table, **options)
    if table.columns:  # a column named like ours (lower, table, ...) gets " (cell)"
        ours = {*frame.columns, *_OURS}
        frame = frame.rename_axis([f"{k} (cell)" if k in ours else k for k in frame.index.names])
    keys = list(frame.index.names) if table.columns else []
    frame = frame.reset_index(drop=not table.columns)
    frame.insert(0, "table", str(table.name if table.name is not None else table.label))
    if result is not None:
        estimate = result.cells(table)
        frame["estimate"] = estimate[result.count_column].to_numpy()
    frame["recovered"] = recovered(frame["lower"], frame["upper"])
    frame.attrs["keys"] = keys
    return frame


def recovered(lower, upper) -> np.ndarray:
    """Whether each cell is known exactly: counts are whole numbers, so bounds that meet
    once rounded inward (2.5 ... 3.2 is 3) leave one count.

    >>> recovered([2.5, 2.0, 4.0], [3.2, 3.0, 4.0]).tolist()
    [True, False, True]
    """
    low = np.ceil(np.asarray(lower, dtype=float) - _WHOLE)
    high = np.floor(np.asarray(upper, dtype=float) + _WHOLE)
    return low >= high


def audit_frame(
    model,
    result=None,
    *,
    exact: bool = False,
    protection: float | None = DEFAULT_PROTECTION,
    time_limit: float = 60.0,
    progress=None,
) -> pd.DataFrame:
    """The audit of every counts table of ``model`` (a model of tables), stacked.

    One row per cell of each table (listed, then the unlisted combinations, as
    ``model.bounds(by="cell", table=t)`` gives them): ``table`` (its name), the table's
    columns, ``published``, ``suppressed``, ``lower``, ``upper``, ``width``, the flags
    of the bounds (``tight``, or ``lower_exact``/``upper_exact`` with ``exact=True``),
    ``exposed`` (a suppressed cell narrower than ``protection``: a share of the cell
    when below 1, else a width in records), ``estimate`` (the maximum-entropy count,
    when ``result`` is given) and ``recovered`` (the bounds rounded inward to whole
    counts meet: the cell is known exactly). A column the tables do not share is empty
    in the other tables' rows.
    """
    options = {"exact": exact, "protection": protection, "time_limit": time_limit}
    if progress is not None:
        options["progress"] = progress
    parts = [_one_audit(model, result, t, options) for t in model.tables if t.stat is None]
    keys: list = []
    for part in parts:
        keys += [k for k in part.attrs["keys"] if k not in keys]
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    out.attrs["keys"] = keys
    return out


def audit_summary(audit: pd.DataFrame) -> dict:
    """Counts of the suppressed cells: ``suppressed``, ``recovered`` (exactly),
    ``exposed`` (narrower than the protection) and ``sentence``, the one-line summary.

    >>> audit_summary(pd.DataFrame({"suppressed": [True, True, False],
    ...                             "recovered": [True, False, True],
    ...                             "exposed": [True, False, False]}))["sentence"]
    '1 of 2 suppressed cells recovered exactly; 1 narrower than the protection'
    """
    hidden = audit["suppressed"].astype(bool) if len(audit) else pd.Series([], dtype=bool)
    n = int(hidden.sum())
    known = int((hidden & audit["recovered"].astype(bool)).sum()) if n else 0
    exposed = int((hidden & audit["exposed"].astype(bool)).sum()) if n and "exposed" in audit else 0
    cells = "cell" if n == 1 else "cells"
    sentence = f"{known:,} of {n:,} suppressed {cells} recovered exactly"
    if "exposed" in audit:
        sentence += f"; {exposed:,} narrower than the protection"
    return {"suppressed": n, "recovered": known, "exposed": exposed, "sentence": sentence}


def cell_words(row, keys) -> str:
    """A cell of a table in words: ``sex = F, region = S`` (``total`` without columns)."""
    parts = [f"{k} = {row[k]}" for k in keys if k in row and not _missing(row[k])]
    return ", ".join(parts) or "total"


def _missing(value) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


# ------------------------------------------------------------------------ numbers in words
def _count(v) -> str:
    v = float(v)
    if not math.isfinite(v):
        return "unbounded" if v > 0 else "-"
    return f"{v:,.0f}" if abs(v - round(v)) < 1e-9 else f"{v:,.2f}"


def _published_tables(model) -> list[dict]:
    out = []
    for t in model.tables:
        what = "counts" if t.stat is None else f"{t.stat} of {t.of}"
        out.append(
            {
                "name": str(t.name if t.name is not None else t.label),
                "columns": ", ".join(map(str, t.columns)) or "(the total only)",
                "what": what,
                "cells": f"{len(t):,}",
                "suppressed": f"{int(np.sum(t.suppressed)):,}",
                "rounding": "none" if t.rounding is None else f"base {t.rounding}",
                "total": "-" if t.total is None else _count(t.total),
            }
        )
    return out


def _hidden_rows(audit: pd.DataFrame) -> pd.DataFrame:
    """The suppressed cells, recovered ones first, then by width."""
    if not len(audit):
        return audit
    hidden = audit[audit["suppressed"].astype(bool)].copy()
    hidden["_order"] = np.arange(len(hidden))
    return hidden.sort_values(["recovered", "width", "_order"], ascending=[False, True, True])


def _cell_rows(hidden: pd.DataFrame, keys: list, exact: bool) -> list[dict]:
    rows = []
    for _, r in hidden.head(MAX_CELLS_SHOWN).iterrows():
        proved = bool(r["lower_exact"] and r["upper_exact"]) if exact else bool(r["tight"])
        rows.append(
            {
                "table": str(r["table"]),
                "cell": cell_words(r, keys),
                "lower": _count(r["lower"]),
                "upper": _count(r["upper"]),
                "width": _count(r["width"]),
                "estimate": _count(r["estimate"]) if "estimate" in r else "-",
                "recovered": bool(r["recovered"]),
                "exposed": bool(r.get("exposed", False)),
                "proved": proved,
            }
        )
    return rows


def _reconstruction_words(rec: dict | None) -> dict | None:
    if rec is None:
        return None
    records = float(rec["records"])
    share = 100 * float(rec["certain_records"]) / records if records else 0.0
    return {
        "records": _count(records),
        "certain": _count(rec["certain_records"]),
        "share": f"{share:.1f}",
        "combinations": f"{int(rec['combinations']):,}",
        "pinned": f"{int(rec['pinned']):,}",
        "pinned_positive": f"{int(rec['pinned_positive']):,}",
        "unique": f"{int(rec['unique_pinned']):,}",
        "proved": bool(rec["proved"]),
    }


def _certificate(result) -> dict:
    c, s = result.certificate, result.summary
    return {
        "verified": bool(c["verified"]),
        "residual": f"{float(c['residual']):.1e}",
        "gap": f"{float(c['gap']):.1e}",
        "entropy": f"{float(c['entropy']):.6f}",
        "solver": str(s.get("solver", "?")),
        "seconds": f"{float(s.get('seconds', float('nan'))):.2f}",
        "combinations": f"{int(s.get('combinations', 0)):,}",
        "total": _count(s.get("total", float("nan"))),
        "rows": f"{int(s.get('rows', 0)):,}",
    }


def _likeliest(result, top: int = 20) -> tuple[list, list]:
    table = result.table(positive=True)
    count = table.columns[-1]  # "count" ("records" when an attribute is named count)
    table = table.sort_values(count, ascending=False, kind="stable").head(top)
    columns = list(table.columns[:-1])
    rows = [
        [str(v) for v in r[:-1]] + [f"{float(r[-1]):,.2f}"] for r in table.itertuples(index=False)
    ]
    return [*columns, count], rows


# ------------------------------------------------------------------------ figures
def _label(row, keys) -> str:
    text = f"{row['table']}: {cell_words(row, keys)}"
    return text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1] + "\u2026"


def plot_cell_intervals(hidden: pd.DataFrame, keys: list, ax, top: int = MAX_CELLS_DRAWN):
    """Draw the first ``top`` suppressed cells of ``hidden`` (top to bottom): the interval
    ``lower``-``upper`` as a bar (red when exposed), the maximum-entropy estimate as a
    dot; labels plain text."""
    rows = hidden.head(top)
    n = len(rows)
    y = np.arange(n)[::-1]
    lo = rows["lower"].to_numpy(dtype=float)
    hi = rows["upper"].to_numpy(dtype=float)
    exposed = rows["exposed"].to_numpy(dtype=bool) if "exposed" in rows else np.zeros(n, bool)
    colors = np.where(exposed, "#cb181d", "#9ecae1")
    ax.hlines(y, lo, hi, colors=colors, lw=6, label="possible counts (lower-upper)")
    points = lo == hi
    if points.any():  # an exact cell: a bar of no length, shown as a square
        ax.plot(lo[points], y[points], "s", color="#cb181d", ms=6, label="recovered exactly")
    if "estimate" in rows:
        est = rows["estimate"].to_numpy(dtype=float)
        ax.plot(est, y, "o", color="#08306b", ms=4, label="maximum-entropy estimate")
    ax.set_yticks(y)
    ax.set_yticklabels([_label(r, keys) for _, r in rows.iterrows()], fontsize=8, **PLAIN)
    ax.set_ylim(-0.7, max(n, 1) - 0.3)
    ax.set_xlabel("records in the cell")
    ax.grid(alpha=0.3, axis="x")
    if n:
        ax.legend(fontsize="small", loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=3)
    return ax


def _figures(hidden: pd.DataFrame, keys: list) -> list[dict]:
    if not len(hidden):
        return []
    n = min(len(hidden), MAX_CELLS_DRAWN)
    more = f" (the {n:,} narrowest of {len(hidden):,})" if len(hidden) > n else ""
    figures = [
        {
            "alt": "each suppressed cell's possible counts as a bar, with the "
            "maximum-entropy estimate as a dot",
            "caption": f"Suppressed cells{more}: the counts every table consistent with "
            "what was published allows (bar; red when narrower than the protection, a "
            "square when recovered exactly) and the maximum-entropy estimate (dot).",
            "png": _png(
                lambda fig: plot_cell_intervals(hidden, keys, fig.subplots(), top=n),
                (9.0, min(9.0, 1.4 + 0.22 * n)),
            ),
        }
    ]
    if len(hidden) > MAX_CELLS_DRAWN:
        widths = hidden["width"].to_numpy(dtype=float)

        def draw(fig):
            ax = fig.subplots()
            ax.hist(widths[np.isfinite(widths)], bins=30, color="#6baed6")
            ax.set_xlabel("width of the interval (records)")
            ax.set_ylabel("suppressed cells")

        figures.append(
            {
                "alt": "histogram of the widths of every suppressed cell's interval",
                "caption": f"How tightly all {len(hidden):,} suppressed cells are known: "
                "cells per width of their interval (0: recovered exactly).",
                "png": _png(draw, (7.0, 3.4)),
            }
        )
    return figures


# ------------------------------------------------------------------------ the page
_STYLE = re.compile(r"<style>.*?</style>", re.S)


def _style(env) -> str:
    """The report's own style sheet (one look for every page of the package)."""
    from markupsafe import Markup

    source, _, _ = env.loader.get_source(env, "report.html.j2")
    match = _STYLE.search(source)
    return Markup(match.group(0) if match else "")


def render_tables_report(
    model,
    result,
    audit: pd.DataFrame | None = None,
    reconstruction: dict | None = None,
    *,
    protection: float | None = DEFAULT_PROTECTION,
    exact: bool = False,
    sources=None,
    command: str | None = None,
    title: str | None = None,
) -> str:
    """The HTML page of a model of published tables (see the module docstring).

    ``audit``: :func:`audit_frame` of ``model`` (computed when None, with ``exact``,
    ``protection``); ``reconstruction``: ``model.reconstruction()`` (the section says
    it was not computed when None); ``sources``: the tables' file names; ``command``:
    the command line that made the page.
    """

    from .. import __version__

    if audit is None:
        audit = audit_frame(model, result, exact=exact, protection=protection)
    keys = list(audit.attrs.get("keys", []))
    hidden = _hidden_rows(audit)
    summary = audit_summary(audit)
    env = environment()
    columns, likeliest = _likeliest(result)
    if protection is None:
        protection_words = None
    elif protection < 1:
        protection_words = f"{100 * protection:g}% of the cell's count"
    else:
        protection_words = f"a width of {protection:g} record{'s' if protection != 1 else ''}"
    context = {
        "title": title or "Published tables: what they reveal",
        "version": __version__,
        "style": _style(env),
        "sources": [str(s) for s in sources] if sources else [],
        "tables": _published_tables(model),
        "facts": [str(f.name) for f in getattr(model, "facts", [])],
        "attributes": ", ".join(map(str, model.attributes)),
        "sa": None if model.sa is None else str(model.sa),
        "records": _count(model.total),
        "combinations": f"{model.n_combinations:,}",
        "summary": summary,
        "protection": protection_words,
        "exact": exact,
        "cells": _cell_rows(hidden, keys, exact),
        "more_cells": max(0, len(hidden) - MAX_CELLS_SHOWN),
        "figures": _figures(hidden, keys),
        "reconstruction": _reconstruction_words(reconstruction),
        "certificate": _certificate(result),
        "likeliest_columns": columns,
        "likeliest": likeliest,
        "command": command,
    }
    return env.get_template("tables.html.j2").render(**context)
