"""Data never becomes markup or code: spreadsheet cells and figure labels made inert.

A base module (it imports nothing of the package): the report, the command line and the
adversaries' plots use it; :mod:`maxent_privacy.report.safety` re-exports it.

A spreadsheet program reads a CSV cell that starts with ``=``, ``+``, ``-`` or ``@`` (or
a tab or carriage return before one) as a formula, and runs it: ``=cmd|' /C calc'!A0``,
``=HYPERLINK(...)``. :func:`spreadsheet_safe` prefixes such text cells with ``'`` (the
OWASP rule for CSV injection), so that they are shown as the text they are; numeric
columns and text that is a plain number (``-3``, ``+1.5``) are left as they are.

matplotlib reads ``$...$`` in a label as mathematical notation, and an ill-formed one
(``$\\sqrt{$``) stops the figure from being drawn: :data:`PLAIN` (``parse_math=False``)
makes a label drawn from data plain text, and :func:`plain_label` escapes ``$`` where a
text object cannot be reached (legend entries).

>>> import pandas as pd
>>> frame = pd.DataFrame({"name": ["=1+2", "-3", "Ann"], "maxent": [-0.5, 1.0, 0.25]})
>>> spreadsheet_safe(frame)["name"].tolist()
["'=1+2", '-3', 'Ann']
"""

from __future__ import annotations

import re

import pandas as pd

__all__ = ["FORMULA_START", "PLAIN", "neutralize", "plain_label", "spreadsheet_safe"]

#: the first characters that make a spreadsheet cell a formula
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: keyword arguments that make a matplotlib text object plain text
PLAIN = {"parse_math": False}

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def neutralize(value):
    """A text ``value`` that a spreadsheet would read as a formula, prefixed with ``'``;
    any other value as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        if not _NUMBER.fullmatch(value):
            return "'" + value
    return value


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells (and column names) are :func:`neutralize`\\ d;
    numeric and boolean columns are untouched."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object or isinstance(out[col].dtype, pd.StringDtype):
            out[col] = out[col].map(neutralize)
        elif isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].astype(object).map(neutralize)
    return out.rename(columns=neutralize)


def plain_label(text) -> str:
    """``str(text)`` with ``$`` escaped, drawn by matplotlib as written."""
    return str(text).replace("$", r"\$")
